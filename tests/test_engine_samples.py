"""Kept posterior samples are the engine's (issue 25): ``run(..., keep=Averaging(...))``
copies ``algorithm.retained(state)`` at exactly the iterations the schedule keeps,
counted over the whole chain, the latest ``max_samples``; a resumed run continues them,
and they are in place before the callbacks of their iteration."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from topiclink.estimators.checkpoint import progress_from_saved, progress_to_saved
from topiclink.inference import engine
from topiclink.parameters import Averaging


@dataclass(kw_only=True)
class _State(engine.State):
    x: np.ndarray


class _Counter(engine.Algorithm):
    """A toy chain: ``x`` holds the iteration number after every step."""

    name = "counter"
    state_class = _State

    def __init__(self):
        self.syncs = []

    def init(self, data, rng):
        return _State(x=np.zeros(2))

    def step(self, state, data):
        state.x += 1                      # in place: a kept sample must be a copy
        return {}

    def objective(self, state, data):
        return 0.0

    def retained(self, state):
        return {"x": state.x, "twice": 2 * state.x}

    def sync(self, state):
        self.syncs.append(state.iteration)


def _kept(samples):
    assert all(set(s) == {"x", "twice"} for s in samples)
    assert all(np.array_equal(s["twice"], 2 * s["x"]) for s in samples)
    return [int(s["x"][0]) for s in samples]


@pytest.mark.parametrize(("burn_in", "thinning", "max_samples", "n_iter"), [
    (0, 1, None, 5), (3, 2, None, 12), (3, 2, 2, 12), (4, 3, 1, 20), (10, 1, 3, 6)])
def test_samples_kept_at_the_iterations_the_schedule_keeps(burn_in, thinning, max_samples,
                                                           n_iter):
    keep = Averaging(burn_in, thinning, max_samples)
    algorithm = _Counter()
    result = engine.run(algorithm, algorithm.init(None, None), None, n_iter, keep=keep)
    kept = [i for i in range(1, n_iter + 1) if keep.keeps(i)]
    expected = kept[-max_samples:] if max_samples else kept
    assert _kept(result.samples) == expected
    assert len(expected) == keep.n_kept(n_iter)
    assert algorithm.syncs == kept           # a sharded state is gathered for each


def test_no_schedule_keeps_nothing_and_needs_no_retained():
    class Plain(_Counter):
        def retained(self, state):
            raise AssertionError("not asked")

    algorithm = Plain()
    assert engine.run(algorithm, algorithm.init(None, None), None, 4).samples == []


@pytest.mark.parametrize("first", [1, 5, 7, 12])
def test_a_resumed_chain_continues_its_samples(first):
    """first + rest iterations, the progress's samples carried, keep what one run of 20
    keeps (the schedule counts the chain's iterations, not the run's)."""
    keep = Averaging(burn_in=4, thinning=3, max_samples=3)
    algorithm = _Counter()
    whole = engine.run(algorithm, algorithm.init(None, None), None, 20, keep=keep)
    state = algorithm.init(None, None)
    head = engine.run(algorithm, state, None, first, keep=keep)
    tail = engine.run(algorithm, state, None, 20 - first, keep=keep,
                      progress=engine.RunProgress(n_iter=20 - first, samples=head.samples))
    assert _kept(tail.samples) == _kept(whole.samples) == [13, 16, 19]


def test_the_sample_of_an_iteration_is_kept_before_its_callbacks_run():
    seen = []

    class Look:
        reads_state = False

        def on_iteration(self, model, iteration, info):
            seen.append(_kept(progress.samples))

    algorithm = _Counter()
    progress = engine.RunProgress(n_iter=4)
    engine.run(algorithm, algorithm.init(None, None), None, 4, callbacks=[Look()],
               progress=progress, keep=Averaging(0, 2, None))
    assert seen == [[], [2], [2], [2, 4]]


def test_one_sync_an_iteration_for_a_sample_the_callbacks_and_a_checkpoint():
    from topiclink.callbacks import LambdaCallback

    def syncs(callbacks):
        algorithm = _Counter()
        checkpoint = engine.Checkpointing(lambda state, progress: None, 2, None)
        engine.run(algorithm, algorithm.init(None, None), None, 6,
                   keep=Averaging(0, 3, None), callbacks=callbacks, checkpoint=checkpoint)
        return algorithm.syncs

    assert syncs([]) == [2, 3, 4, 6]       # checkpoints at 2, 4, 6; samples at 3, 6
    assert syncs([LambdaCallback(lambda m, i, info: None)]) == [1, 2, 3, 4, 5, 6]


def test_kept_samples_round_trip_through_a_saved_progress():
    algorithm = _Counter()
    result = engine.run(algorithm, algorithm.init(None, None), None, 6,
                        progress=(progress := engine.RunProgress(n_iter=6)),
                        keep=Averaging(0, 2, None))
    arrays, meta = progress_to_saved(progress, 0)
    assert {k: v.shape for k, v in arrays.items()} == {"run_/samples/twice": (3, 2),
                                                      "run_/samples/x": (3, 2)}
    trace = {"log_likelihood": np.zeros(6)}
    back, _ = progress_from_saved(meta, arrays, trace, "file")
    assert _kept(back.samples) == _kept(result.samples) == [2, 4, 6]
    # stored as the model's published arrays instead: the header points at them
    arrays, meta = progress_to_saved(progress, 0, samples_published=True)
    assert arrays == {} and meta["samples"] == {"n": 3, "keys": ["twice", "x"],
                                                "published": True}
    published = {"x": np.stack([s["x"] for s in result.samples]),
                 "twice": np.stack([s["twice"] for s in result.samples])}
    back, _ = progress_from_saved(meta, arrays, trace, "file", published)
    assert _kept(back.samples) == [2, 4, 6]
    # a file without kept samples (or written before they were saved): none
    arrays, meta = progress_to_saved(engine.RunProgress(n_iter=6, done=6), 0)
    assert "samples" not in meta
    assert progress_from_saved(meta, arrays, trace, "file")[0].samples == []


def test_inconsistent_saved_samples_are_refused_in_one_line():
    algorithm = _Counter()
    progress = engine.RunProgress(n_iter=6)
    engine.run(algorithm, algorithm.init(None, None), None, 6, progress=progress,
               keep=Averaging(0, 2, None))
    arrays, meta = progress_to_saved(progress, 0)
    trace = {"log_likelihood": np.zeros(6)}
    bad = [
        ({**arrays, "run_/samples/x": arrays["run_/samples/x"][:2]}, meta,
         "kept sample 'x' has shape \\(2, 2\\), the run header says 3 samples"),
        ({k: v for k, v in arrays.items() if k.endswith("/x")}, meta,
         "the run's kept samples are \\['x'\\], its header lists"),
        (arrays, {**meta, "samples": {"n": 3}},
         "header member 'run.samples' is incomplete"),
        (arrays, {k: v for k, v in meta.items() if k != "samples"},
         "kept samples without a description"),
        (arrays, {**meta, "samples": {**meta["samples"], "published": True}},
         "kept samples stored twice"),
        ({}, {**meta, "samples": {**meta["samples"], "published": True}},
         "the run's kept sample 'twice' is not among the model's published samples"),
    ]
    for arrays_, meta_, match in bad:
        with pytest.raises(ValueError, match=f"^file: {match}") as info:
            progress_from_saved(meta_, arrays_, trace, "file")
        assert "\n" not in str(info.value)
