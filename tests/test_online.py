"""The online driver: Robbins-Monro schedule, minibatches, sweeps run by the engine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from topiclink.inference.engine import run, state_from_saved, state_to_saved
from topiclink.inference.online import OnlineAlgorithm, OnlineState, minibatches
from topiclink.parameters import RobbinsMonro


@dataclass(kw_only=True)
class MeanState(OnlineState):
    mean: np.ndarray


class RunningMean(OnlineAlgorithm):
    """Stochastic approximation of a mean: m <- m + rho (batch mean - m).  With
    rho_t = 1 / (t + 1) (a1 = a2 = v = 1) and equal batches this is the exact mean of the
    items seen, so one sweep must give the data mean."""

    state_class = MeanState
    batch_size = 5
    schedule = RobbinsMonro(1.0, 1.0, 1.0)

    def init(self, data, rng):
        return MeanState(mean=np.zeros(data.shape[1]), batch_rng=rng)

    def n_items(self, data):
        return data.shape[0]

    def minibatch_step(self, state, data, batch, rho):
        state.mean += rho * (data[batch].mean(axis=0) - state.mean)
        return {"rho": rho}


def test_schedule_and_its_validation():
    s = RobbinsMonro(2.0, 4.0, 0.75)
    assert s(0) == pytest.approx(2.0 / 4.0**0.75)
    assert s(10) < s(1) < s(0)
    for bad in ({"v": 0.5}, {"v": 1.2}, {"a1": 0.0}, {"a2": -1.0}):
        with pytest.raises(ValueError, match="step_"):
            RobbinsMonro(**bad)


def test_minibatches_cover_every_item_once():
    rng = np.random.default_rng(0)
    batches = minibatches(23, 5, rng)
    assert [len(b) for b in batches] == [5, 5, 5, 5, 3]
    np.testing.assert_array_equal(np.sort(np.concatenate(batches)), np.arange(23))


def test_one_sweep_of_the_running_mean_is_the_data_mean():
    data = np.random.default_rng(1).normal(size=(40, 3))
    algo = RunningMean()
    state = algo.init(data, np.random.default_rng(2))
    result = run(algo, state, data, 1)
    np.testing.assert_allclose(state.mean, data.mean(axis=0), rtol=1e-12)
    assert state.updates == 8 and result.trace["minibatches"][0] == 8


def test_online_runs_resume_draw_for_draw():
    data = np.random.default_rng(3).normal(size=(37, 2))
    algo = RunningMean()
    algo.schedule = RobbinsMonro(1.0, 2.0, 0.6)
    whole = algo.init(data, np.random.default_rng(4))
    run(algo, whole, data, 4)
    half = algo.init(data, np.random.default_rng(4))
    run(algo, half, data, 2)
    arrays, meta = state_to_saved(half)
    again = state_from_saved(MeanState, arrays, meta)
    run(algo, again, data, 2)
    np.testing.assert_array_equal(whole.mean, again.mean)
    assert whole.updates == again.updates == 32


def test_partial_step_uses_the_next_step_size():
    algo = RunningMean()
    state = algo.init(np.zeros((1, 1)), np.random.default_rng(0))
    for t, value in enumerate([2.0, 4.0, 6.0]):
        info = algo.partial_step(state, np.full((3, 1), value))
        assert info["rho"] == pytest.approx(1.0 / (t + 1))
    np.testing.assert_allclose(state.mean, [4.0])
