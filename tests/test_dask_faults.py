"""Dask fault tolerance: a worker process killed mid-fit (SIGKILL; its nanny restarts it
empty) leaves a fit that completes with the chain of an uninterrupted fit, draw for draw
(LDA, gRTM, online BPBFM, LMVS: the driver sends the lost shards again and rebuilds their
state, :class:`topiclink.execution.DaskExecutor`); a lost scheduler ends the fit with a
one-line :class:`~topiclink.distributed.SchedulerLostError` within
:data:`~topiclink.execution.dask.SCHEDULER_TIMEOUT` seconds; the errors'
messages."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from tests.dask_cluster import cluster  # noqa: E402
from topiclink.datasets import make_lda_data, make_rtm_data  # noqa: E402
from topiclink.distributed import (  # noqa: E402
    SchedulerLostError,
    WorkerLostError,  # noqa: E402
)
from topiclink.execution import dask as execution_dask  # noqa: E402
from topiclink.families.lda.estimator import LDA  # noqa: E402
from topiclink.families.rtm.estimator import RelationalTopicModel  # noqa: E402
from topiclink.inference.adlda import ADLDAShards  # noqa: E402
from topiclink.random import generator_state  # noqa: E402

#: generous: a loaded 2-core machine restarts a worker process in seconds
BOUND = 60.0


@pytest.fixture
def processes():
    """A client on 2 single-thread worker processes (with nannies)."""
    with cluster(2, processes=True) as c, distributed.Client(c, set_as_default=False) as cl:
        cl.wait_for_workers(2, timeout=BOUND)
        yield cl


def kill_worker(client, address: str | None = None) -> str:
    """SIGKILL one worker process (the first by address unless named) and wait until the
    scheduler has let it go; returns its address."""
    pids = client.run(os.getpid)
    address = address or sorted(pids)[0]
    os.kill(pids[address], signal.SIGKILL)
    t0 = time.monotonic()
    while address in client.nthreads() and time.monotonic() - t0 < BOUND:
        time.sleep(0.1)
    return address


def kill_at(monkeypatch, cls, method: str, client, when: int, killed: list) -> None:
    """Kill a worker on the ``when``-th call of ``cls.method`` (1-based), before it runs."""
    original = getattr(cls, method)
    calls = [0]

    def wrapped(self, *args, **kwargs):
        calls[0] += 1
        if calls[0] == when:
            killed.append(kill_worker(client))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, method, wrapped)


# ---------------------------------------------------------------------- LDA
LDA_KW = {"n_topics": 5, "max_iter": 14, "n_shards": 3, "random_state": 4}


@pytest.fixture(scope="module")
def corpus():
    corpus, _ = make_lda_data(n_docs=90, n_words=150, n_topics=5, doc_length=40,
                              random_state=1)
    return corpus


def test_lda_worker_killed_same_chain(corpus, processes, monkeypatch, caplog):
    """Killed before sweep 8 (recovery points every 3 sweeps: 1 sweep after the one of
    sweep 6): the lost shards are rebuilt and the chain is the adlda one."""
    ref = LDA(parallel="adlda", **LDA_KW).fit(corpus)
    monkeypatch.setattr(execution_dask, "KEPT_RECOVERY_EVERY", 3)
    killed: list = []
    kill_at(monkeypatch, ADLDAShards, "step", processes, 8, killed)
    t0 = time.monotonic()
    model = LDA(parallel="dask", client=processes, **LDA_KW).fit(corpus)
    assert killed and time.monotonic() - t0 < 3 * BOUND
    assert "redoing the iteration" in caplog.text     # the replay path ran
    for name in ("z", "ndk", "nwk", "nk", "kernel_rng"):
        np.testing.assert_array_equal(getattr(ref.state_, name), getattr(model.state_, name),
                                      err_msg=name)
    np.testing.assert_array_equal(ref.components_, model.components_)
    np.testing.assert_array_equal(ref.trace_["log_likelihood"], model.trace_["log_likelihood"])


# ---------------------------------------------------------------------- gRTM
RTM_KW = {"n_topics": 4, "negative_ratio": 0.05, "max_iter": 6, "n_shards": 3,
          "evaluate_every": 1, "random_state": 2, "loss": "hinge", "augmentation": "numba"}


def test_grtm_worker_killed_same_chain(processes, monkeypatch, caplog):
    """Killed before iteration 5 (recovery points every 3 iterations: one logged chained
    round to replay): the shards are rebuilt and the chain is the uninterrupted one, which
    is also the chain of the same shards on threads (``parallel="shards"``)."""
    from topiclink.execution import DaskExecutor

    (corpus, links), _ = make_rtm_data(n_docs=60, n_topics=4, doc_length=30, random_state=3)
    ref = RelationalTopicModel(parallel="dask", client=processes, **RTM_KW).fit(
        corpus, links=links)
    monkeypatch.setattr(execution_dask, "KEPT_RECOVERY_EVERY", 3)
    killed: list = []
    kill_at(monkeypatch, DaskExecutor, "step_kept_chained", processes, 5, killed)
    model = RelationalTopicModel(parallel="dask", client=processes, **RTM_KW).fit(
        corpus, links=links)
    assert killed and "redoing the iteration" in caplog.text     # the replay path ran
    threads = RelationalTopicModel(parallel="shards", n_jobs=2, **RTM_KW).fit(
        corpus, links=links)
    for other in (model, threads):
        for name in ("z", "ndk", "nwk", "nk", "U", "a", "b", "omega", "kernel_rng"):
            np.testing.assert_array_equal(getattr(ref.state_, name),
                                          getattr(other.state_, name), err_msg=name)
        assert ([generator_state(g) for g in ref.state_.aug_rngs]
                == [generator_state(g) for g in other.state_.aug_rngs])
        np.testing.assert_array_equal(ref.components_, other.components_)
        np.testing.assert_array_equal(ref.trace_["link_loglik"], other.trace_["link_loglik"])


# ---------------------------------------------------------------------- BPBFM
def test_bpbfm_worker_killed_same_chain(processes, monkeypatch):
    from tests.families.bpbfm.test_bpbfm import _planted
    from topiclink.execution import DaskExecutor
    from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel

    data = _planted(model=1)[0]
    kw = {"inference": "online", "batch_size": 300, "max_iter": 2, "burn_in": 1,
          "evaluate_every": 1, "random_state": 3}
    ref = BilinearPoissonFactorModel(3, **kw).fit(data)
    killed: list = []
    kill_at(monkeypatch, DaskExecutor, "map", processes, 4, killed)
    model = BilinearPoissonFactorModel(3, parallel="dask", client=processes, **kw).fit(data)
    assert killed
    for name in ("g", "g_total", "G", "eta", "eta_total", "d", "eps", "stat_entity",
                 "stat_cells", "stat_rm", "kernel_rng"):
        np.testing.assert_array_equal(getattr(ref.state_, name), getattr(model.state_, name),
                                      err_msg=name)


# ---------------------------------------------------------------------- gSLDA
def test_slda_worker_killed_same_chain(processes, monkeypatch, caplog):
    """Killed before iteration 5 (recovery points every 3 iterations): the shards' kept
    states are rebuilt by replaying the logged rounds and the chain is the uninterrupted
    one (which a shard's pure step makes the in-process chain)."""
    from topiclink.datasets import make_slda_data
    from topiclink.execution import DaskExecutor, SerialExecutor
    from topiclink.families.slda.algorithm import SupervisedGibbs
    from topiclink.families.slda.estimator import SupervisedTopicModel

    (corpus, y), _ = make_slda_data(n_docs=60, n_words=80, n_topics=3, doc_length=25,
                                    random_state=2)
    kw = {"n_topics": 3, "c": 4.0, "max_iter": 7, "n_shards": 3, "random_state": 5}
    ref = SupervisedTopicModel(parallel="dask", client=processes, **kw).fit(corpus, y)
    monkeypatch.setattr(execution_dask, "KEPT_RECOVERY_EVERY", 3)
    killed: list = []
    kill_at(monkeypatch, DaskExecutor, "step_kept", processes, 5, killed)
    model = SupervisedTopicModel(parallel="dask", client=processes, **kw).fit(corpus, y)
    assert killed and "redoing the iteration" in caplog.text
    for name in ("eta", "z", "ndk", "nwk", "nk", "a", "b", "kernel_rng"):
        np.testing.assert_array_equal(getattr(ref.state_, name), getattr(model.state_, name),
                                      err_msg=name)
    # the same shards in process (no Dask): the same chain
    monkeypatch.setattr(SupervisedTopicModel, "_algorithm", lambda self: SupervisedGibbs(
        3, np.full(3, 0.1), 0.01, loss="logistic", c=4.0, hinge_cost=1.0,
        weight_prior_var=1.0, n_shards=3, executor=SerialExecutor()))
    local = SupervisedTopicModel(**kw).fit(corpus, y)
    for name in ("eta", "z", "nwk"):
        np.testing.assert_array_equal(getattr(ref.state_, name), getattr(local.state_, name),
                                      err_msg=name)


# ---------------------------------------------------------------------- LMVS
def test_lmvs_worker_killed_same_fit(processes, monkeypatch):
    from tests.families.lmv.test_lmvs_dask import assert_same_fit
    from topiclink.datasets import make_lmv_data
    from topiclink.families.lmv.estimator import VisibilityTopicModel
    from topiclink.families.lmv.stochastic import StochasticLMV

    (corpus, links), _ = make_lmv_data(n_docs=80, n_words=60, n_topics=6, random_state=5)
    kw = {"inference": "stochastic", "max_iter": 2, "tol": 0.0, "batch_size": 30, "n0": 10,
          "random_state": 0, "n_jobs": 1}
    ref = VisibilityTopicModel(6, **kw).fit(corpus, links=links)
    killed: list = []
    kill_at(monkeypatch, StochasticLMV, "pair_statistics", processes, 3, killed)
    model = VisibilityTopicModel(6, parallel="dask", client=processes, **kw).fit(
        corpus, links=links)
    assert killed
    assert_same_fit(ref, model)


# ---------------------------------------------------------------------- the errors
def test_error_messages_are_one_line():
    lost = WorkerLostError("tcp://10.0.0.1:4000", "its data was lost (FutureCancelledError)")
    assert lost.address == "tcp://10.0.0.1:4000" and isinstance(lost, RuntimeError)
    assert str(lost) == ("Dask worker tcp://10.0.0.1:4000 was lost mid-fit: its data was "
                         "lost (FutureCancelledError)")
    assert "\n" not in str(WorkerLostError(None)) and not str(WorkerLostError(None)).endswith(".")
    gone = SchedulerLostError("tcp://10.0.0.1:8786")
    assert str(gone) == "the Dask scheduler at tcp://10.0.0.1:8786 was lost mid-fit"
    assert gone.address == "tcp://10.0.0.1:8786"


def test_worker_lost_for_good_names_it(corpus, processes, monkeypatch):
    """When the redos keep failing the fit stops with the lost worker's address."""
    monkeypatch.setattr(execution_dask, "MAX_RECOVERIES", 0)   # read by DaskConnection
    killed: list = []
    kill_at(monkeypatch, ADLDAShards, "step", processes, 3, killed)
    t0 = time.monotonic()
    with pytest.raises(WorkerLostError) as info:
        LDA(parallel="dask", client=processes, **LDA_KW).fit(corpus)
    assert time.monotonic() - t0 < 2 * BOUND
    assert info.value.address == killed[0]
    assert killed[0] in str(info.value) and "\n" not in str(info.value)


def test_worker_lost_with_a_checkpoint_names_it_and_resumes(corpus, processes, monkeypatch,
                                                           tmp_path):
    """The engine adds the checkpoint to the one-line error; the same fit run again
    continues from it and ends with the uninterrupted chain."""
    monkeypatch.setattr(execution_dask, "MAX_RECOVERIES", 0)   # read by DaskConnection
    killed: list = []
    kill_at(monkeypatch, ADLDAShards, "step", processes, 5, killed)
    path = tmp_path / "lda.npz"
    with pytest.raises(WorkerLostError) as info:
        LDA(parallel="dask", client=processes, **LDA_KW).fit(corpus, checkpoint=path,
                                                             checkpoint_every=1)
    message = str(info.value)
    assert killed[0] in message and f"resume from the last checkpoint, {path}" in message
    assert "\n" not in message
    monkeypatch.undo()
    again = LDA(parallel="dask", client=processes, **LDA_KW).fit(corpus, checkpoint=path)
    whole = LDA(parallel="adlda", **LDA_KW).fit(corpus)
    np.testing.assert_array_equal(again.state_.z, whole.state_.z)
    np.testing.assert_array_equal(again.components_, whole.components_)


def test_task_errors_are_not_worker_losses(processes):
    """An error raised by a task itself passes unchanged (no redo, no WorkerLostError)."""
    conn = execution_dask.DaskConnection()
    conn._init_connection(processes)
    conn._connect()
    future = processes.submit(int, "not a number", pure=False)
    with pytest.raises(ValueError):
        conn._recovering(lambda: conn._gather([future]), lambda: None)


# ---------------------------------------------------------------------- the scheduler
def test_scheduler_lost_one_line_error_in_bounded_time(corpus, tmp_path, monkeypatch):
    """A scheduler process killed mid-fit: SchedulerLostError well within the bound."""
    file = tmp_path / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                                  "--host", "127.0.0.1", "--port", "0",
                                  "--dashboard-address", ":0",
                                  "--scheduler-file", str(file)], **quiet)
    worker = None
    try:
        t0 = time.monotonic()
        while not file.exists() and time.monotonic() - t0 < BOUND:
            time.sleep(0.2)
        time.sleep(0.5)                 # the file is written whole
        # the default connect timeout (30 s): the bound of a send cut off by the loss
        client = distributed.Client(scheduler_file=str(file), set_as_default=False)
        address = client.scheduler.address
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                                   address, "--nthreads", "1", "--no-nanny",
                                   "--no-dashboard"], **quiet)
        client.wait_for_workers(1, timeout=BOUND)
        original = ADLDAShards.step
        calls = [0]
        stopped: list = []

        def sweep(self, *args, **kwargs):
            calls[0] += 1
            if calls[0] == 3:
                scheduler.kill()
                scheduler.wait()
                stopped.append(time.monotonic())
            return original(self, *args, **kwargs)

        monkeypatch.setattr(ADLDAShards, "step", sweep)
        with pytest.raises(SchedulerLostError) as info:
            LDA(parallel="dask", client=client, **LDA_KW).fit(corpus)
        took = time.monotonic() - stopped[0]
        assert took < execution_dask.SCHEDULER_TIMEOUT + 15     # 30 s + slack for a busy machine
        message = str(info.value)
        assert "\n" not in message and address in message and info.value.address == address
        client.close(timeout=5)
    finally:
        for proc in (worker, scheduler):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
