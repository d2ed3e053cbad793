"""The online driver: minibatches and Robbins-Monro step sizes behind ``partial_fit``.

Stochastic variational inference (Hoffman et al. 2013) and conditional density filtering
(BPBFM) update global statistics from a minibatch with a decreasing step size
``rho_t = a1 / (t + a2)^v`` (:class:`~topiclink.parameters.RobbinsMonro`, re-exported
here); ``0.5 < v <= 1`` gives ``sum rho = inf`` and ``sum rho^2 < inf`` (Robbins &
Monro 1951).  An :class:`OnlineAlgorithm` implements
``minibatch_step(state, data, batch, rho)``; its ``step`` (what the engine runs, so
resuming and callbacks work as for batch algorithms) is one sweep over the items in
minibatches drawn without replacement from the state's own stream, and
``partial_step(state, data)`` is one update from a new chunk of a stream
(``partial_fit``).  The update counter ``t`` lives in the state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topiclink.inference.engine import Algorithm, State
from topiclink.parameters import RobbinsMonro

__all__ = ["RobbinsMonro", "minibatches", "OnlineState", "OnlineAlgorithm"]


def minibatches(n_items: int, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """One sweep: a random permutation of ``range(n_items)`` cut into batches of
    ``batch_size`` (the last may be smaller); every item exactly once."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = rng.permutation(n_items)
    return [order[i:i + batch_size] for i in range(0, n_items, batch_size)]


@dataclass(kw_only=True)
class OnlineState(State):
    """What every online state adds: the update counter and the minibatch stream."""

    updates: int = 0
    batch_rng: np.random.Generator | None = None


class OnlineAlgorithm(Algorithm):
    """Base of online algorithms: ``minibatch_step`` is theirs, the sweep is the driver's.

    ``n_items(data)`` counts what minibatches are drawn from (documents, ones of a
    tensor); ``batch_size`` and ``schedule`` are set by the estimator.
    """

    batch_size: int = 64
    schedule: RobbinsMonro = RobbinsMonro()

    def n_items(self, data: object) -> int:
        raise NotImplementedError

    def minibatch_step(self, state: OnlineState, data: object, batch: np.ndarray,
                       rho: float) -> dict[str, float]:
        raise NotImplementedError

    def step(self, state: OnlineState, data: object) -> dict[str, float]:
        """One sweep over every item in minibatches (without replacement)."""
        if state.batch_rng is None:
            raise ValueError("online state has no minibatch stream (batch_rng)")
        info: dict[str, float] = {}
        batches = minibatches(self.n_items(data), self.batch_size, state.batch_rng)
        for batch in batches:
            info = dict(self.minibatch_step(state, data, batch, self.schedule(state.updates)))
            state.updates += 1
        info["minibatches"] = float(len(batches))
        info["step_size"] = self.schedule(max(state.updates - 1, 0))
        return info

    def partial_step(self, state: OnlineState, data: object) -> dict[str, float]:
        """One update from all items of ``data`` (a new chunk of a stream)."""
        batch = np.arange(self.n_items(data))
        info = dict(self.minibatch_step(state, data, batch, self.schedule(state.updates)))
        state.updates += 1
        return info
