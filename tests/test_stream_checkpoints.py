"""Streams and partial fits that survive a kill (issue 40, item 2).

``partial_fit(..., checkpoint=PATH, checkpoint_every=...)`` of LMVS and online BPBFM, and
online ``fit`` checkpointed inside its sweeps, at minibatch boundaries
(:mod:`topiclink.estimators.stream_checkpoint`, the engine's ``Passes``):

- a child process (tests/stream_checkpoint_child.py) killed with SIGKILL at a minibatch
  drawn from a seeded generator, then run again, ends with the model of an uninterrupted
  run: every fitted array, every state array and the state's generators (its
  ``state_key``) equal bit for bit, the trace equal but for its timings; the second child
  computes only the minibatches after the last checkpoint;
- the same in this process, interrupting with an exception at every minibatch of a
  short stream; a checkpointed stream equals an unchecked one; a call that had ended
  returns its model without iterating; an exception leaves the model as it was;
- a checkpoint of another stream, another chunk, another point of the stream, other data
  or of a fit in progress is refused on one line.

Same machine, same interpreter: exact comparisons are right here.  One core, small data
(the configurations of tests/golden/record_stream.py).
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import topiclink
from tests import stream_checkpoint_child as child
from tests.test_contract import assert_same, fitted_arrays
from topiclink.callbacks import LambdaCallback
from topiclink.estimators.stream_checkpoint import pass_path
from topiclink.families.bpbfm.online import BPBFMOnline
from topiclink.families.lmv.stochastic import StochasticLMV
from topiclink.inference.engine import state_key

ROOT = Path(__file__).resolve().parents[1]


def comparable(model: Any) -> dict[str, np.ndarray]:
    """Every fitted array, every state array, the whole state's hash (its generators and
    values included), the trace without timings, the iteration count."""
    out = fitted_arrays(model)
    for key, values in model.trace_.items():
        if not key.startswith("seconds"):
            out[f"trace_.{key}"] = values
    out["state_key"] = np.array(state_key(model.state_))
    out["n_iter_"] = np.array(model.n_iter_)
    return out


@functools.cache
def uninterrupted(scenario: str) -> tuple[dict[str, np.ndarray], int]:
    """(the comparable arrays, the minibatches computed) of the scenario unchecked."""
    model = child.run(scenario, None)
    return comparable(model), int(model.state_.updates)


def algorithm_class(scenario: str) -> type:
    return StochasticLMV if scenario.startswith("lmvs") else BPBFMOnline


class Interrupted(Exception):
    pass


def interrupt_at(monkeypatch: pytest.MonkeyPatch, cls: type, k: int) -> None:
    """The k-th minibatch this process computes from now raises (before computing)."""
    original, count = cls.minibatch_step, [0]

    def step(self: Any, *args: Any, **kwargs: Any) -> dict[str, float]:
        count[0] += 1
        if count[0] == k:
            raise Interrupted(f"minibatch {k}")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "minibatch_step", step)


def count_minibatches(monkeypatch: pytest.MonkeyPatch, cls: type) -> list[int]:
    """A list that gains an item per minibatch this process computes from now."""
    original, counted = cls.minibatch_step, []

    def step(self: Any, *args: Any, **kwargs: Any) -> dict[str, float]:
        counted.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, "minibatch_step", step)
    return counted


# ---------------------------------------------------------------------- in this process
@pytest.mark.parametrize("scenario", child.SCENARIOS)
def test_checkpointed_runs_equal_unchecked_ones(scenario, tmp_path):
    """A checkpoint at every minibatch boundary changes no draw; a stream's PATH then
    holds the model after the last call and no pass file is left."""
    path = tmp_path / "run.npz"
    model = child.run(scenario, path)
    want, _ = uninterrupted(scenario)
    assert_same(want, comparable(model))
    assert_same(want, comparable(topiclink.load(path)))
    assert not pass_path(path).exists()


@pytest.mark.parametrize("scenario", child.SCENARIOS)
def test_interrupted_at_every_minibatch_then_run_again_equals_uninterrupted(
        scenario, tmp_path, monkeypatch):
    """An exception inside the k-th minibatch (the first, the last and two drawn from a
    seeded generator); the scenario run again (a stream: from ``topiclink.load(PATH)``,
    the killed call first) resumes at the last boundary: only the interrupted minibatch
    is computed twice."""
    want, total = uninterrupted(scenario)
    cls = algorithm_class(scenario)
    rng = np.random.default_rng(sum(map(ord, scenario)) + 1)
    for k in sorted({1, total, *rng.choice(np.arange(2, total), 2, replace=False).tolist()}):
        path = tmp_path / f"run{k}.npz"
        with monkeypatch.context() as m:
            interrupt_at(m, cls, k)
            with pytest.raises(Interrupted):
                child.run(scenario, path)
        with monkeypatch.context() as m:
            counted = count_minibatches(m, cls)
            again = child.run(scenario, path)
        assert_same(want, comparable(again))
        assert len(counted) == total - (k - 1), k
        assert not pass_path(path).exists()


def test_a_call_that_ended_returns_its_model_without_iterating(tmp_path, monkeypatch):
    """The same call run twice with its checkpoint (e.g. killed after its last write,
    before removing its pass file): the model of PATH, no minibatch, no callback; the
    left pass file does not stop the next call."""
    path = tmp_path / "s.npz"
    calls = child.chunks("lmvs_stream")
    with monkeypatch.context() as m:               # the pass file is left behind
        m.setattr(Path, "unlink", lambda self, missing_ok=False: None)
        first = child.build("lmvs_stream").partial_fit(*calls[0][0], **calls[0][1],
                                                       checkpoint=path, checkpoint_every=1)
    assert pass_path(path).exists()
    seen: list[int] = []
    again = child.build("lmvs_stream").set_params(
        callbacks=[LambdaCallback(lambda m, i, info: seen.append(i))])
    again.partial_fit(*calls[0][0], **calls[0][1], checkpoint=path)
    assert seen == []
    assert_same(comparable(first), comparable(again))
    for args, kwargs in calls[1:]:
        again.partial_fit(*args, **kwargs, checkpoint=path)
    assert seen == [1, 2] and not pass_path(path).exists()
    assert_same(uninterrupted("lmvs_stream")[0], comparable(again))


def test_an_exception_leaves_the_model_as_it_was_and_the_call_resumes(tmp_path,
                                                                      monkeypatch):
    """In this process: the interrupted call restores the model (its state untouched),
    the pass file holds the minibatches done, and the same call on the same object
    resumes there."""
    path = tmp_path / "s.npz"
    calls = child.chunks("bpbfm_stream")
    model = child.build("bpbfm_stream")
    model.partial_fit(*calls[0][0], checkpoint=path, checkpoint_every=1)
    before = comparable(model)
    with monkeypatch.context() as m:
        interrupt_at(m, BPBFMOnline, 2)
        with pytest.raises(Interrupted):
            model.partial_fit(*calls[1][0], checkpoint=path, checkpoint_every=1)
    assert_same(before, comparable(model))
    assert topiclink.load(pass_path(path))._progress_.pass_.done == 1
    for args, kwargs in calls[1:]:
        model.partial_fit(*args, **kwargs, checkpoint=path, checkpoint_every=1)
    assert_same(uninterrupted("bpbfm_stream")[0], comparable(model))


def test_a_duration_writes_the_pass_when_its_time_has_come(tmp_path, monkeypatch):
    """``checkpoint_every="10s"`` with a clock that moves 7 s a reading: the pass file is
    written inside the call (seen by the next minibatch), the checkpoint at its end."""
    from topiclink.inference import engine

    clock = iter(range(0, 10_000, 7))
    monkeypatch.setattr(engine.time, "monotonic", lambda: float(next(clock)))
    path = tmp_path / "t.npz"
    seen = []
    original = StochasticLMV.minibatch_step

    def looking(self: Any, *args: Any, **kwargs: Any) -> dict[str, float]:
        seen.append(pass_path(path).exists())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(StochasticLMV, "minibatch_step", looking)
    args, kwargs = child.chunks("lmvs_stream")[0]
    child.build("lmvs_stream").partial_fit(*args, **kwargs, checkpoint=path,
                                           checkpoint_every="10s")
    assert seen[0] is False and True in seen and path.exists()
    assert not pass_path(path).exists()


def test_a_fitted_then_streamed_model_saved_with_its_state_loads(tmp_path):
    """partial_fit records its pass as the model's run: a model fitted, then streamed,
    saved with ``save(full=True)`` loads (its run header used to describe the fit, not
    the trace's rows) and continues the stream as the unsaved one does."""
    from tests.golden.record_stream import lmv_data

    calls = child.chunks("lmvs_stream")
    corpus, _, _ = lmv_data()

    def fitted_then_streamed() -> Any:
        model = child.build("lmvs_fit").fit(corpus.subset(np.arange(40)), **calls[0][1])
        model.partial_fit(*calls[1][0], **calls[1][1])
        return model

    loaded = topiclink.load(fitted_then_streamed().save(tmp_path / "m.npz", full=True))
    assert loaded._progress_.done == 1 and loaded.n_iter_ == 4
    whole = fitted_then_streamed()
    for model in (loaded, whole):
        model.partial_fit(*calls[2][0], **calls[2][1])
    assert_same(comparable(whole), comparable(loaded))


# ---------------------------------------------------------------------- refusals
def one_line(info: pytest.ExceptionInfo) -> str:
    text = str(info.value)
    assert "\n" not in text
    return text


def test_checkpoints_of_another_stream_chunk_or_fit_are_refused(tmp_path, monkeypatch):
    calls = child.chunks("lmvs_stream")
    path = tmp_path / "s.npz"
    model = child.build("lmvs_stream")
    model.partial_fit(*calls[0][0], **calls[0][1], checkpoint=path, checkpoint_every=1)
    # another stream: an unfitted model given other first documents
    (docs,), links = calls[0][0], calls[0][1]["links"]
    with pytest.raises(ValueError, match="another stream or another point") as info:
        child.build("lmvs_stream").partial_fit(docs.subset(np.arange(30)),
                                               links=links[(links < 30).all(axis=1)],
                                               checkpoint=path)
    assert "topiclink.load(" in one_line(info)
    # another point of this stream: the model after two calls given PATH of the first
    ahead = child.build("lmvs_stream")
    for args, kwargs in calls[:2]:
        ahead.partial_fit(*args, **kwargs)
    with pytest.raises(ValueError, match="another stream or another point"):
        ahead.partial_fit(*calls[2][0], **calls[2][1], checkpoint=path)
    # another batch: a call on the second chunk killed (here: interrupted), then the
    # stream's model given the third chunk
    with monkeypatch.context() as m:
        interrupt_at(m, StochasticLMV, 2)
        with pytest.raises(Interrupted):
            model.partial_fit(*calls[1][0], **calls[1][1], checkpoint=path,
                              checkpoint_every=1)
    (docs,), links = calls[1][0], calls[1][1]["links"]
    with pytest.raises(ValueError, match="partial_fit of another chunk in progress") as info:
        model.partial_fit(docs.subset(np.arange(20)), links=links[(links < 60).all(axis=1)],
                          checkpoint=path)
    one_line(info)
    # other parameters
    other = child.build("lmvs_stream").set_params(n0=21)
    other.__dict__.update({k: v for k, v in vars(model).items() if k.endswith("_")})
    with pytest.raises(ValueError, match="n0=20, this fit has 21") as info:
        other.partial_fit(*calls[1][0], **calls[1][1], checkpoint=path)
    one_line(info)
    # a stream's checkpoint given to fit, a fit's in progress given to partial_fit
    (corpus,), links = child.fit_data("lmvs_fit")
    with pytest.raises(ValueError, match="written by partial_fit") as info:
        child.build("lmvs_stream").fit(corpus, **links, checkpoint=path)
    one_line(info)
    fit_path = tmp_path / "f.npz"
    with monkeypatch.context() as m:
        interrupt_at(m, StochasticLMV, 9)
        with pytest.raises(Interrupted):
            child.build("lmvs_fit").fit(corpus, **links, checkpoint=fit_path,
                                        checkpoint_every=1)
    fresh = child.build("lmvs_stream")
    with pytest.raises(ValueError, match="holds a fit in progress") as info:
        fresh.partial_fit(*calls[0][0], **calls[0][1], checkpoint=fit_path)
    one_line(info)


def test_a_fit_checkpoint_on_other_data_or_a_damaged_pass_is_refused(tmp_path,
                                                                     monkeypatch):
    (tensor,), _ = child.fit_data("bpbfm_fit")
    path = tmp_path / "f.npz"
    with monkeypatch.context() as m:
        interrupt_at(m, BPBFMOnline, 3)
        with pytest.raises(Interrupted):
            child.build("bpbfm_fit").fit(tensor, checkpoint=path,
                                         checkpoint_every="1 minibatch")
    assert topiclink.load(path)._progress_.pass_.done == 2
    from topiclink.data.tensor import RelationalTensor

    keep = np.arange(tensor.n_entries) % 3 > 0
    other = RelationalTensor(tensor.heads[keep], tensor.relations[keep], tensor.tails[keep],
                             tensor.values[keep], tensor.n_entities, tensor.n_relations)
    with pytest.raises(ValueError, match="data of the first fit") as info:
        child.build("bpbfm_fit").fit(other, checkpoint=path)
    one_line(info)
    # a pass whose items leave the data: refused before any kernel reads them
    saved = topiclink.load(path)
    saved._progress_.pass_.items[0] = 10**6
    saved.save(tmp_path / "bad.npz", full=True)
    with pytest.raises(ValueError, match="saved pass visits items outside") as info:
        child.build("bpbfm_fit").fit(tensor, checkpoint=tmp_path / "bad.npz")
    one_line(info)
    with pytest.raises(ValueError, match="minibatches needs an online fit") as info:
        topiclink.BilinearPoissonFactorModel(3, max_iter=2).fit(
            tensor, checkpoint=tmp_path / "batch.npz", checkpoint_every="2 minibatches")
    one_line(info)


# ---------------------------------------------------------------------- SIGKILL
def _child(scenario: str, path: Path, out: Path, *, slow: float = 0.0) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + str(ROOT),
           "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.stream_checkpoint_child", scenario, str(path),
         str(out), str(slow)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def _minibatches_done(path: Path) -> int:
    """The minibatches a killed run had checkpointed: the pass file's state, else the
    checkpoint's."""
    running = pass_path(path)
    return int(topiclink.load(running if running.exists() else path).state_.updates)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", child.SCENARIOS)
def test_sigkill_at_a_random_minibatch_then_run_again_equals_uninterrupted(scenario,
                                                                          tmp_path):
    want, total = uninterrupted(scenario)
    rng = np.random.default_rng(sum(map(ord, scenario)))
    kill_after = int(rng.integers(2, total - 1))    # minibatches computed before the kill
    path = tmp_path / "ckpt.npz"
    victim = _child(scenario, path, tmp_path / "never.npz", slow=0.1)
    killed_at = None
    deadline = time.monotonic() + 300
    assert victim.stdout is not None
    for line in victim.stdout:                       # one line per minibatch
        if line.startswith("minibatch ") and int(line.split()[1]) >= kill_after:
            victim.send_signal(signal.SIGKILL)
            killed_at = int(line.split()[1])
            break
        assert time.monotonic() < deadline, "the child never reached the minibatch"
    victim.wait(timeout=60)
    assert victim.returncode == -signal.SIGKILL, victim.stderr.read()[-2000:]
    assert killed_at is not None and not (tmp_path / "never.npz").exists()
    done = _minibatches_done(path)
    assert 1 <= done < total
    if scenario.endswith("_stream"):      # these draws kill a call inside its pass
        assert pass_path(path).exists()
    resumed = _child(scenario, path, tmp_path / "resumed.npz")
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err[-2000:]
    assert out.split() == [w for i in range(1, total - done + 1)
                           for w in ("minibatch", str(i))]
    assert not pass_path(path).exists()
    assert_same(want, comparable(topiclink.load(tmp_path / "resumed.npz")))
