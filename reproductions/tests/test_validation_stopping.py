"""topiclink_reproductions.validation_stopping: early stopping on a validation metric, driven
by fake validation curves (no model, no PyKEEN): it stops after ``patience`` evaluations
without improvement, keeps the best evaluation's snapshot, respects the cap and the
evaluation frequency, and ``train_in_steps`` advances a resumable model in chunks."""

from __future__ import annotations

import math

import pytest

from topiclink_reproductions.validation_stopping import ValidationStopper, train_in_steps


def drive(stopper: ValidationStopper, curve, steps_per_eval: int | None = None):
    """Feed ``curve[i]`` as the value of the i-th evaluation through ``observe`` at every
    step, as an SGD loop's per-epoch hook does; returns (steps trained, snapshots taken)."""
    values = iter(curve)
    snaps = []
    step = 0
    while step < stopper.max_steps:
        step += 1

        def snap(step=step):
            snaps.append(step)
            return f"weights@{step}"

        if stopper.observe(step, lambda: next(values), snap):
            break
    else:
        stopper.finish(step, lambda: next(values), lambda s=step: f"weights@{s}")
    return step, snaps


def test_stops_after_patience_and_keeps_the_best():
    s = ValidationStopper(frequency=10, patience=3, max_steps=1000)
    curve = [0.1, 0.3, 0.5, 0.6, 0.55, 0.58, 0.59, 0.2, 0.9]    # best 0.6 at step 40
    step, snaps = drive(s, curve)
    assert step == 70                   # 3 evaluations after the best: 50, 60, 70
    assert s.stopped_by == "patience" and not s.cap_hit
    assert s.best_step == 40 and s.best_value == pytest.approx(0.6)
    assert s.best_snapshot == "weights@40"
    assert snaps == [10, 20, 30, 40]    # a snapshot at every new best only
    assert [p["step"] for p in s.curve] == [10, 20, 30, 40, 50, 60, 70]
    assert s.summary()["steps"] == 70 and s.summary()["n_evaluations"] == 7


def test_patience_counts_evaluations_in_a_row():
    s = ValidationStopper(frequency=1, patience=2, max_steps=100)
    # an improvement between two flat stretches resets the count
    step, _ = drive(s, [0.5, 0.4, 0.6, 0.6, 0.59, 0.1])
    assert step == 5 and s.best_step == 3 and s.stopped_by == "patience"


def test_relative_delta_stops_a_creeping_curve_but_keeps_its_best():
    # +0.1 % per evaluation: below a 1 % threshold, so patience runs out, yet the best
    # (last) evaluation is the one kept
    curve = [0.5 * 1.001 ** i for i in range(50)]
    s = ValidationStopper(frequency=5, patience=4, max_steps=10_000, relative_delta=0.01)
    step, _ = drive(s, curve)
    assert s.stopped_by == "patience" and step == 25
    assert s.best_step == 25 and s.best_snapshot == "weights@25"
    # without the threshold it would have run on
    s0 = ValidationStopper(frequency=5, patience=4, max_steps=100, relative_delta=0.0)
    drive(s0, curve)
    assert s0.stopped_by == "cap"


def test_cap_is_respected_and_evaluated_off_the_frequency():
    s = ValidationStopper(frequency=10, patience=3, max_steps=45)
    step, _ = drive(s, [0.1 * i for i in range(1, 20)])   # always improving
    assert step == 45 and s.cap_hit and s.stopped_by == "cap"
    assert [p["step"] for p in s.curve] == [10, 20, 30, 40, 45]   # the cap evaluated
    assert s.best_step == 45 and s.best_snapshot == "weights@45"


def test_observe_evaluates_only_when_due():
    s = ValidationStopper(frequency=4, patience=2, max_steps=100)
    calls = []

    def evaluate():
        calls.append(1)
        return 0.5

    for step in (1, 2, 3, 5, 6, 7):
        assert s.observe(step, evaluate) is False
    assert not calls
    s.observe(4, evaluate)
    s.observe(4, evaluate)                  # the same step twice: once
    assert len(calls) == 1
    with pytest.raises(ValueError, match="reported after"):
        s.report(3, 0.1)


def test_nan_is_never_best_and_counts_against_patience():
    s = ValidationStopper(frequency=1, patience=2, max_steps=10)
    s.report(1, math.nan)
    assert s.best_step is None
    s.report(2, 0.3)
    assert s.best_step == 2
    assert s.report(3, math.nan) is False and s.report(4, math.nan) is True


@pytest.mark.parametrize("kw", [{"frequency": 0}, {"patience": 0}, {"max_steps": -1},
                                {"frequency": 2.5}, {"relative_delta": -0.1}])
def test_bad_settings_are_refused(kw):
    base = {"frequency": 1, "patience": 1, "max_steps": 1}
    with pytest.raises(ValueError):
        ValidationStopper(**{**base, **kw})


class FakeChain:
    """A resumable 'model': ``fit(n)`` advances n iterations (at most ``stops_at`` in all:
    then it stops by itself, as EM at its tolerance); its validation value follows
    ``value(iteration)``."""

    def __init__(self, value, stops_at=None):
        self.value, self.stops_at, self.n_iter, self.chunks = value, stops_at, 0, []

    def advance(self, step, n):
        assert step == self.n_iter      # the stopper's step is the model's iteration
        take = n if self.stops_at is None else max(0, min(n, self.stops_at - self.n_iter))
        self.chunks.append(n)
        self.n_iter += take
        return take

    def evaluate(self):
        return self.value(self.n_iter)


def test_train_in_steps_chunks_to_the_evaluations_and_keeps_the_best_state():
    # rises to a peak at iteration 300, then falls (overfitting)
    chain = FakeChain(lambda i: 1.0 - abs(i - 300) / 1000)
    s = ValidationStopper(frequency=25, patience=4, max_steps=2000)
    train_in_steps(s, chain.advance, chain.evaluate, lambda: chain.n_iter)
    assert set(chain.chunks) == {25}
    assert s.best_step == 300 and s.best_snapshot == 300
    assert s.stopped_by == "patience" and chain.n_iter == 400
    assert s.train_seconds is not None and s.train_seconds >= 0
    secs = [p["seconds"] for p in s.curve]
    assert secs == sorted(secs)


def test_train_in_steps_cap_not_a_multiple_and_model_stop():
    chain = FakeChain(lambda i: i / 100)
    s = ValidationStopper(frequency=30, patience=3, max_steps=100)
    train_in_steps(s, chain.advance, chain.evaluate, lambda: chain.n_iter)
    assert chain.chunks == [30, 30, 30, 10] and s.cap_hit and s.best_snapshot == 100

    em = FakeChain(lambda i: i / 100, stops_at=47)     # converged by itself at 47
    s = ValidationStopper(frequency=20, patience=3, max_steps=500)
    train_in_steps(s, em.advance, em.evaluate, lambda: em.n_iter)
    assert s.stopped_by == "model" and not s.cap_hit
    assert [p["step"] for p in s.curve] == [20, 40, 47] and s.best_snapshot == 47
