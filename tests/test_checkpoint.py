"""Checkpoints (issue 22): a fit interrupted at any iteration and continued from its
checkpoint equals an uninterrupted fit, draw for draw -- for every registered estimator
(interrupted in process by a callback), and for LDA, gRTM, LMVS, online BPBFM and KTM in
a child process killed with SIGKILL at a random iteration (tests/checkpoint_child.py).

Same machine, same process or same interpreter: exact comparisons are right here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import topiclink
from tests.test_contract import NAMES, assert_same, fit, fitted_arrays, make
from topiclink.callbacks import LambdaCallback, RelativeTolerance
from topiclink.estimators.checkpoint import checkpoint_folder, parse_every

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data():
    """The contract's data (tests/test_contract.py)."""
    from topiclink.datasets import make_bpbfm_data, make_rtm_data

    (corpus, links), _ = make_rtm_data(n_docs=60, n_words=80, n_topics=3, doc_length=30,
                                       random_state=9)
    tensor, _ = make_bpbfm_data(30, 3, 3, random_state=9, density=0.05)
    return {"X": corpus, "links": links, "y": np.arange(corpus.n_docs) % 2,
            "tensor": tensor, "features": np.random.default_rng(9).random((corpus.n_docs, 3))}


class Interrupted(Exception):
    pass


def interrupt_at(k: int) -> LambdaCallback:
    def f(model, iteration, info):
        if iteration + 1 == k:
            raise Interrupted(f"iteration {k}")
    return LambdaCallback(f)


def with_callbacks(est, callbacks):
    if "callbacks" not in est.get_params():
        pytest.skip(f"{type(est).__name__} takes no callbacks")
    return est.set_params(callbacks=callbacks)


def comparable(est) -> dict[str, np.ndarray]:
    out = fitted_arrays(est)
    for key, values in est.trace_.items():
        if not key.startswith("seconds"):   # timings
            out[f"trace_.{key}"] = values
    return out


@pytest.mark.parametrize("every", [1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_interrupted_and_continued_from_the_checkpoint_equals_uninterrupted(
        name, every, data, tmp_path):
    path = tmp_path / "run.npz"
    whole = fit(make(name, max_iter=6), data)
    with pytest.raises(Interrupted):
        fit(with_callbacks(make(name, max_iter=6), [interrupt_at(5)]), data,
            checkpoint=path, checkpoint_every=every)
    written = topiclink.load(path)
    assert written.n_iter_ == 4                     # every 1 and every 2: iteration 4
    again = fit(make(name, max_iter=6), data, checkpoint=path, checkpoint_every=every)
    assert again.n_iter_ == 6 == len(again.trace_["log_likelihood"])
    assert_same(comparable(whole), comparable(again))
    # the finished checkpoint: the same model again, without iterating
    calls = []
    done = fit(with_callbacks(make(name, max_iter=6),
                              [LambdaCallback(lambda m, i, info: calls.append(i))]),
               data, checkpoint=path)
    assert calls == []
    assert_same(comparable(whole), comparable(done))


@pytest.mark.parametrize(("model", "params"), [
    ("RelationalTopicModel", {"n_average": 4}),
    ("BilinearPoissonFactorModel", {"burn_in": 2, "thinning": 1}),
    ("BilinearPoissonFactorModel", {"burn_in": 1, "thinning": 2, "inference": "online"}),
])
def test_averaging_windows_and_kept_samples_survive_the_checkpoint(model, params, data,
                                                                   tmp_path):
    """Interrupted after the averaging window / the kept samples began: the sums and the
    samples so far come back from the checkpoint."""
    path = tmp_path / "run.npz"
    whole = fit(make(model, max_iter=6, **params), data)
    with pytest.raises(Interrupted):
        fit(make(model, max_iter=6, callbacks=[interrupt_at(6)], **params), data,
            checkpoint=path, checkpoint_every=1)
    again = fit(make(model, max_iter=6, **params), data, checkpoint=path)
    assert_same(comparable(whole), comparable(again))


@pytest.mark.parametrize("name", NAMES)
def test_a_checkpoint_of_another_fit_is_refused(name, data, tmp_path):
    path = tmp_path / "run.npz"
    fit(make(name, max_iter=2), data, checkpoint=path, checkpoint_every=1)
    with pytest.raises(ValueError, match="max_iter=2, this fit has 3") as info:
        fit(make(name, max_iter=3), data, checkpoint=path)
    assert "\n" not in str(info.value) and "delete it" in str(info.value)
    other = {"n_topics": 4}
    with pytest.raises(ValueError, match="this fit has 4"):
        fit(make(name, max_iter=2, **other), data, checkpoint=path)


def test_a_checkpoint_on_other_data_is_refused(data, tmp_path):
    path = tmp_path / "lda.npz"
    fit(make("LDA", max_iter=2), data, checkpoint=path)
    with pytest.raises(ValueError, match="data of the first fit.*delete it"):
        fit(make("LDA", max_iter=2), data, X=data["X"].subset(list(range(30))),
            checkpoint=path)
    with pytest.raises(ValueError, match="holds a LDA, not a RelationalTopicModel"):
        fit(make("RelationalTopicModel", max_iter=2), data, checkpoint=path)
    plain = make("LDA", max_iter=2)
    fit(plain, data)
    plain.save(tmp_path / "plain.npz", full=False)
    with pytest.raises(ValueError, match="without a run in progress"):
        fit(make("LDA", max_iter=2), data, checkpoint=tmp_path / "plain.npz")


def test_resume_with_a_checkpoint_continues_the_continuation(data, tmp_path):
    """fit(3) + fit(resume, 3) checkpointed and interrupted = 6 uninterrupted."""
    whole = fit(make("RelationalTopicModel", max_iter=6), data)
    est = fit(make("RelationalTopicModel", max_iter=3), data)
    path = tmp_path / "more.npz"
    est.set_params(callbacks=[interrupt_at(5)])
    with pytest.raises(Interrupted):
        fit(est, data, resume=True, checkpoint=path, checkpoint_every=1)
    est.set_params(callbacks=None)
    est = topiclink.load(path).set_params(max_iter=3)
    est.n_iter_ = 3                       # the model the continuation started from
    fit(est, data, resume=True, checkpoint=path)
    assert est.n_iter_ == 6
    # (the traces differ: a run evaluates the objective at its own last iteration)
    assert_same(fitted_arrays(whole), fitted_arrays(est))


def test_a_stopping_rule_remembers_across_the_checkpoint(data, tmp_path):
    """The variational bound's stopping rule keeps its last value in the checkpoint, so
    the resumed fit stops at the iteration the uninterrupted one stops at."""
    make_v = lambda **kw: make("VariationalSLDA", max_iter=40, tol=1e-3, **kw)  # noqa: E731
    whole = fit(make_v(), data)
    assert whole.stopped_early_ and 3 < whole.n_iter_ < 40
    path = tmp_path / "v.npz"
    with pytest.raises(Interrupted):
        fit(make_v(callbacks=[interrupt_at(whole.n_iter_)]), data, checkpoint=path,
            checkpoint_every=1)
    again = fit(make_v(), data, checkpoint=path)
    assert again.n_iter_ == whole.n_iter_
    assert_same(comparable(whole), comparable(again))
    rule = RelativeTolerance(0.1)
    rule.restore_checkpoint_state(rule.checkpoint_state() | {"last": -2.5})
    assert rule.last == -2.5


def test_bpbfm_resume_averages_over_the_same_window_as_one_fit(data):
    """The kept samples and the averaged embedding after 5 + 5 iterations equal 10
    (the window runs from burn_in over the whole chain; it used to restart)."""
    t = data["tensor"]
    kw = {"n_topics": 3, "burn_in": 2, "thinning": 1, "random_state": 0}
    whole = topiclink.BilinearPoissonFactorModel(max_iter=10, **kw).fit(t)
    half = topiclink.BilinearPoissonFactorModel(max_iter=5, **kw).fit(t)
    half.fit(t, resume=True)
    assert_same(fitted_arrays(whole), fitted_arrays(half))


def test_checkpoint_folder_names_fits_by_class_and_order(data, tmp_path):
    with checkpoint_folder(tmp_path / "cells", every=1):
        fit(make("LDA", max_iter=2), data)
        fit(make("LDA", max_iter=2, random_state=5), data)
        fit(make("RelationalTopicModel", max_iter=2), data)
    assert sorted(p.name for p in (tmp_path / "cells").iterdir()) == [
        "LDA-0.npz", "LDA-1.npz", "RelationalTopicModel-0.npz"]
    assert topiclink.load(tmp_path / "cells" / "LDA-1.npz").random_state_ == 5


def test_checkpoints_are_stored_uncompressed_and_saves_compressed(data, tmp_path):
    """A checkpoint is rewritten many times in a fit, so it is written without deflate
    (10.5 s against 0.45 s for hep-th Gibbs-gRTM's 358 MB state); ``save`` still
    compresses by default, and both load to the same fitted model."""
    import zipfile

    with checkpoint_folder(tmp_path / "cells", every=1):
        est = fit(make("LDA", max_iter=2), data)
    with zipfile.ZipFile(tmp_path / "cells" / "LDA-0.npz") as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}
    saved = est.save(tmp_path / "model.npz", full=True)
    with zipfile.ZipFile(saved) as zf:
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED}
    assert_same(fitted_arrays(topiclink.load(tmp_path / "cells" / "LDA-0.npz")),
                fitted_arrays(topiclink.load(saved)))


@pytest.mark.parametrize("name", sorted({*NAMES, "DirichletMultinomialMixture"}))
def test_checkpoint_is_declared_where_fit_is(name):
    """``checkpoint`` / ``checkpoint_every`` are keywords of each ``fit`` (and of each
    ``partial_fit``) as written, documented there: no wrapper adds them."""
    import inspect

    import tests.examples.dmm.estimator  # noqa: F401 - the worked example registers
    from topiclink.estimators.base import registered_estimators
    from topiclink.estimators.checkpoint import DEFAULT_EVERY

    cls = registered_estimators()[name]
    for method in ("fit", "partial_fit"):
        function = getattr(cls, method, None)
        if function is None:
            continue
        assert not hasattr(function, "__wrapped__"), f"{name}.{method} is wrapped"
        params = inspect.signature(function).parameters
        for keyword, default in (("checkpoint", None), ("checkpoint_every", DEFAULT_EVERY)):
            assert keyword in params, f"{name}.{method} does not declare {keyword}"
            assert params[keyword].kind is inspect.Parameter.KEYWORD_ONLY
            assert params[keyword].default == default
        assert "checkpoint_every" in (function.__doc__ or ""), \
            f"{name}.{method}'s docstring does not say what checkpoint does"


def test_checkpoint_every_is_checked():
    assert parse_every(3) == (3, None)
    assert parse_every("10min") == (None, 600.0)
    assert parse_every("1.5h") == (None, 5400.0)
    assert parse_every("30s") == (None, 30.0)
    assert parse_every("4") == (4, None)
    for bad in (0, -1, "soon", "0s", float("nan")):
        with pytest.raises(ValueError, match="checkpoint_every"):
            parse_every(bad)
    with pytest.raises(TypeError, match="checkpoint_every"):
        parse_every(True)


def test_seconds_schedule_writes_when_the_time_has_come(data, tmp_path, monkeypatch):
    """checkpoint_every as a duration: a write when that much time has passed."""
    from topiclink.inference import engine

    clock = iter(range(0, 1000, 7))        # 7 "seconds" per reading
    monkeypatch.setattr(engine.time, "monotonic", lambda: float(next(clock)))
    path = tmp_path / "t.npz"
    seen = []
    est = make("LDA", max_iter=6, callbacks=[
        LambdaCallback(lambda m, i, info: seen.append(path.exists()))])
    fit(est, data, checkpoint=path, checkpoint_every="10s")
    assert seen[0] is False and seen[-1] is True


# ---------------------------------------------------------------------- SIGKILL
FAMILIES = ["lda", "grtm", "lmvs", "bpbfm_online", "ktm"]


def _child(family: str, path: Path, out: Path, *, slow: float = 0.0) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.checkpoint_child", family, str(path), str(out),
         str(slow)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_sigkill_at_a_random_iteration_then_resume_equals_uninterrupted(family, tmp_path):
    from tests.checkpoint_child import N_ITER

    rng = np.random.default_rng(abs(hash(family)) % 2**32)
    kill_after = int(rng.integers(2, N_ITER - 1))   # iterations completed before the kill
    reference = _child(family, tmp_path / "ref-ckpt.npz", tmp_path / "ref.npz")
    victim = _child(family, tmp_path / "ckpt.npz", tmp_path / "never.npz", slow=0.05)
    killed_at = None
    deadline = time.monotonic() + 300
    for line in victim.stdout:                       # one line per finished iteration
        if line.startswith("iteration ") and int(line.split()[1]) >= kill_after:
            victim.send_signal(signal.SIGKILL)
            killed_at = int(line.split()[1])
            break
        assert time.monotonic() < deadline, "the child never reached the iteration"
    victim.wait(timeout=60)
    assert victim.returncode == -signal.SIGKILL, victim.stderr.read()[-2000:]
    assert killed_at is not None and not (tmp_path / "never.npz").exists()
    done_before = topiclink.load(tmp_path / "ckpt.npz").n_iter_
    assert 1 <= done_before <= killed_at < N_ITER
    resumed = _child(family, tmp_path / "ckpt.npz", tmp_path / "resumed.npz")
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err[-2000:]
    assert f"iteration {done_before + 1}" in out and f"iteration {done_before}\n" not in out
    ref_out, ref_err = reference.communicate(timeout=300)
    assert reference.returncode == 0, ref_err[-2000:]
    a, b = topiclink.load(tmp_path / "ref.npz"), topiclink.load(tmp_path / "resumed.npz")
    assert a.n_iter_ == b.n_iter_ == N_ITER
    assert_same(comparable(a), comparable(b))


def test_cli_fit_checkpoint(tmp_path):
    """`topiclink fit lda --checkpoint F`: written as the fit goes, a second run of the
    same command continues from it (here: finds it finished) and writes the same model."""
    from typer.testing import CliRunner

    from topiclink.cli.app import app

    runner = CliRunner()
    args = ["fit", "lda", "--dataset", "cora", "--topics", "3", "--iterations", "4",
            "--checkpoint", str(tmp_path / "ck.npz"), "--checkpoint-every", "2", "--quiet"]
    first = runner.invoke(app, [*args, "--out", str(tmp_path / "a.npz")])
    assert first.exit_code == 0, first.output
    assert topiclink.load(tmp_path / "ck.npz").n_iter_ == 4
    second = runner.invoke(app, [*args, "--out", str(tmp_path / "b.npz")])
    assert second.exit_code == 0, second.output
    a, b = topiclink.load(tmp_path / "a.npz"), topiclink.load(tmp_path / "b.npz")
    assert_same({k: getattr(a, k) for k in a._saved_arrays},
                {k: getattr(b, k) for k in b._saved_arrays})
    bad = runner.invoke(app, [*args[:-3], "--checkpoint-every", "soon"])
    assert bad.exit_code == 1 and "--checkpoint-every 'soon'" in bad.output
    other = runner.invoke(app, [*args[:4], "--topics", "4", *args[6:]])
    assert other.exit_code == 1 and "n_topics=3, this fit has 4" in other.output


# ---------------------------------------------------------------------- Dask fits
@pytest.mark.parametrize("model", ["LDA", "RelationalTopicModel", "SupervisedTopicModel"])
def test_dask_fits_checkpoint_their_current_state(model, data, tmp_path, monkeypatch):
    """A Dask executor keeps topics and streams on the workers between syncs; the engine
    syncs before every checkpoint, so a fit interrupted (here: its 5th step raises) and
    continued from its checkpoint equals an uninterrupted Dask fit."""
    distributed = pytest.importorskip("distributed")
    from tests.dask_cluster import cluster

    kw = {"scheme": "adlda" if model == "LDA" else "shards", "max_iter": 7}
    with cluster(2) as c, distributed.Client(c, set_as_default=False) as client:
        whole = fit(make(model, executor=client, **kw), data)
        cls = _algorithm_class(make(model, executor=client, **kw), data, monkeypatch)
        original, calls = cls.step, [0]

        def failing_step(self, state, data_):
            calls[0] += 1
            if calls[0] == 5:
                raise Interrupted("step 5")
            return original(self, state, data_)

        monkeypatch.setattr(cls, "step", failing_step)
        path = tmp_path / "dask.npz"
        with pytest.raises(Interrupted):
            fit(make(model, executor=client, **kw), data, checkpoint=path, checkpoint_every=1)
        monkeypatch.undo()
        assert topiclink.load(path).n_iter_ == 4
        again = fit(make(model, executor=client, **kw), data, checkpoint=path)
        assert_same(fitted_arrays(whole), fitted_arrays(again))


def _algorithm_class(est, data, monkeypatch) -> type:
    """The class of the algorithm ``est.fit`` hands to the engine."""
    import topiclink.estimators.base as base

    seen = []

    def spy(algorithm, *args, **kwargs):
        seen.append(type(algorithm))
        raise Interrupted("spy")

    with monkeypatch.context() as m:
        m.setattr(base, "run", spy)
        with pytest.raises(Interrupted):
            fit(est, data)
    return seen[0]


def test_cpu_time_counts_the_cpu_before_the_checkpoint(data, tmp_path):
    """``CpuTime`` (the hep-th grid's CPU per cell): a fit resumed from a checkpoint
    counts the CPU its checkpoint recorded (up to the checkpointed iteration, not the
    work redone after it); a checkpoint written without a clock, or no resume, adds 0."""
    import time

    from topiclink.callbacks import CpuTime

    def busy(model, iteration, info):        # CPU the clock must see, ~20 ms an iteration
        t0 = time.process_time()
        while time.process_time() - t0 < 0.02:
            pass

    path = tmp_path / "run.npz"
    first = CpuTime()
    with pytest.raises(Interrupted):
        fit(make("LDA", max_iter=6).set_params(
            callbacks=[first, LambdaCallback(busy), interrupt_at(5)]), data,
            checkpoint=path, checkpoint_every=2)
    assert first.seconds >= 5 * 0.02 and not first.resumed
    second = CpuTime()
    fit(make("LDA", max_iter=6).set_params(callbacks=[second, LambdaCallback(busy)]),
        data, checkpoint=path, checkpoint_every=2)
    # the checkpoint of iteration 4 recorded >= 4 busy iterations, <= all of the first run
    assert second.resumed and 4 * 0.02 <= second.restored_seconds <= first.seconds
    assert second.seconds >= second.restored_seconds + 2 * 0.02
    plain = CpuTime()
    fit(make("LDA", max_iter=2).set_params(callbacks=[plain]), data)
    assert not plain.resumed and plain.restored_seconds == 0 and plain.seconds > 0
    other = tmp_path / "noclock.npz"
    with pytest.raises(Interrupted):
        fit(make("LDA", max_iter=6).set_params(callbacks=[interrupt_at(5)]), data,
            checkpoint=other, checkpoint_every=2)
    late = CpuTime()
    fit(make("LDA", max_iter=6).set_params(callbacks=[late]), data, checkpoint=other)
    assert not late.resumed and late.restored_seconds == 0
