"""A callback says what it needs of a sharded fit: ``reads_state`` (the sampler state,
gathered from the shards before its call) -- no list of class names decides it, and the
engine, not the family, does the gathering."""

from __future__ import annotations

import topiclink.callbacks as cb
from topiclink.callbacks import reads_state


class _Reads:
    def on_iteration(self, model, iteration, info):
        return model.state_.z is None


class _InfoOnly:
    reads_state = False

    def on_iteration(self, model, iteration, info):
        return info["log_likelihood"] > 0


def test_library_info_only_callbacks_need_no_state():
    assert not reads_state(None) and not reads_state([])
    info_only = [cb.ProgressBar(), cb.EarlyStopping(), cb.RelativeTolerance(1e-3),
                 cb.EvaluateEvery(lambda m: {}, every=5)]
    assert not reads_state(info_only)


def test_an_unknown_callback_is_taken_to_read_the_state():
    assert reads_state([_Reads()])
    assert reads_state([cb.ProgressBar(), cb.LambdaCallback(lambda m, i, info: None)])


def test_a_user_callback_declares_it_needs_no_state():
    assert not reads_state([_InfoOnly(), cb.ProgressBar()])
    declared = _Reads()
    declared.reads_state = False            # an instance may say it too
    assert not reads_state([declared])
    assert reads_state([_InfoOnly(), _Reads()])


class _CountingSync:
    """An algorithm double: one counter per step, and a count of the engine's syncs."""

    name = "counting"

    def __init__(self):
        self.syncs = []

    def step(self, state, data):
        state.x += 1
        return {}

    def objective(self, state, data):
        return 0.0

    def averaged(self, state, data):
        return {}

    def sync(self, state):
        self.syncs.append(state.iteration)


def _run(callbacks, checkpoint_every=0):
    from dataclasses import dataclass

    from topiclink.inference import engine

    @dataclass(kw_only=True)
    class _State(engine.State):
        x: int = 0

    algorithm = _CountingSync()
    checkpoint = (engine.Checkpointing(lambda state, progress: None, checkpoint_every, None)
                  if checkpoint_every else None)
    engine._run(algorithm, _State(), None, engine.RunProgress(n_iter=4), model=None,
                callbacks=callbacks, verbose=False, evaluate_every=0, n_average=0,
                publish=None, checkpoint=checkpoint)
    return algorithm.syncs


def test_the_engine_syncs_the_state_only_for_a_callback_that_reads_it():
    assert _run([_InfoOnly(), cb.EarlyStopping()]) == []
    assert _run([cb.LambdaCallback(lambda m, i, info: None)]) == [1, 2, 3, 4]
    silent = type("Silent", (), {"on_iteration": lambda self, m, i, info: None})()
    assert _run([_InfoOnly(), silent]) == [1, 2, 3, 4]   # no declaration: it may read


def test_a_checkpoint_syncs_once_whoever_asked_first():
    """A checkpoint is written from a current state: synced for it, or already synced for
    a callback that reads the state in the same iteration (not gathered twice)."""
    assert _run([_InfoOnly()], checkpoint_every=2) == [2, 4]
    assert _run([cb.LambdaCallback(lambda m, i, info: None)], checkpoint_every=2) == \
        [1, 2, 3, 4]
