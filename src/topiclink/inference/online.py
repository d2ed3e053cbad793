"""The online driver: minibatches and Robbins-Monro step sizes behind ``partial_fit``.

Stochastic variational inference (Hoffman et al. 2013) and conditional density filtering
(BPBFM) update global statistics from a minibatch with a decreasing step size
``rho_t = a1 / (t + a2)^v`` (:class:`~topiclink.parameters.RobbinsMonro`);
``0.5 < v <= 1`` gives ``sum rho = inf`` and ``sum rho^2 < inf`` (Robbins &
Monro 1951).  An :class:`OnlineAlgorithm` implements
``minibatch_step(state, data, batch, rho)``; its ``step`` (what the engine runs, so
resuming and callbacks work as for batch algorithms) is one sweep over the items in
minibatches drawn without replacement from the state's own stream, and
``partial_step(state, data, items)`` is one pass over the items of a new chunk of a
stream (``partial_fit``).  The update counter ``t`` lives in the state.

Streams (``partial_fit``) go through the engine
(:func:`~topiclink.inference.engine.run_partial`, called by
``Estimator._run_partial``), the same path for every online family.  The stream seen
so far lives in the state, so it is saved with the model:

- ``OnlineState.chunks``: the boundaries of the stream's chunks in item numbers (chunk c
  holds items ``chunks[c]:chunks[c + 1]``; empty for a state that has not streamed);
  families add their own ``stream_fields`` (LMVS: the documents and citations seen;
  online BPBFM: the triples seen);
- ``start(state, new)``: a state built by ``init`` on the first chunk ``new`` begins its
  stream; ``extend(state, data, new)``: chunk ``new`` is appended to the stream
  ``data = stream_data(state)`` (the state grows the new items' parameters) and the
  data a pass reads is returned; ``chunk_items(state, data)``: the items of the chunk
  just added, in the order the pass visits them;
- ``partial_step(state, data, items)``: Hoffman et al. (2013)'s stochastic update,
  ``lambda <- (1 - rho_t) lambda + rho_t lambda_hat(I_t)`` per minibatch ``I_t`` of
  ``items`` with ``rho_t = step_size(state, data)`` and ``t`` the state's update counter,
  then ``end_pass`` (a family's work after the minibatches of a sweep or of a chunk).

Both passes run through :meth:`OnlineAlgorithm.run_pass`, which a checkpoint may cut at
any minibatch boundary (``step`` and ``partial_step`` take the engine's ``passes=``, a
:class:`~topiclink.inference.engine.Passes`): the pass's items in visiting order (a
sweep's permutation, drawn once from ``batch_rng``; a chunk's items), the minibatches
done and the figures added up so far are the checkpoint's
:class:`~topiclink.inference.engine.PassProgress`, and the state holds everything else
(the update counter, every generator), so a pass continued from its checkpoint makes the
draws the uninterrupted pass makes.  Without ``passes`` the same loop runs unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from topiclink.execution import payload_counters, with_payload
from topiclink.inference.engine import Algorithm, Passes, PassProgress, State
from topiclink.parameters import RobbinsMonro

__all__ = ["minibatches", "OnlineState", "OnlineAlgorithm"]


def minibatches(n_items: int, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    """One sweep: a random permutation of ``range(n_items)`` cut into batches of
    ``batch_size`` (the last may be smaller); every item exactly once."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    order = rng.permutation(n_items)
    return [order[i:i + batch_size] for i in range(0, n_items, batch_size)]


@dataclass(kw_only=True)
class OnlineState(State):
    """What every online state adds: the update counter, the minibatch stream and the
    chunk boundaries of the data stream it has seen (``partial_fit``)."""

    updates: int = 0
    batch_rng: np.random.Generator | None = None
    chunks: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    stream_fields: ClassVar[tuple[str, ...]] = ("chunks",)


class OnlineAlgorithm(Algorithm):
    """Base of online algorithms: ``minibatch_step`` is theirs, the sweep is the driver's.

    ``n_items(data)`` counts what minibatches are drawn from (documents, ones of a
    tensor); ``batch_size`` and ``schedule`` are set by the estimator.
    """

    batch_size: int = 64
    schedule: RobbinsMonro = RobbinsMonro()
    #: where minibatches run (an executor that ships data reports its payload bytes)
    executor: Any = None
    #: per-minibatch figures that a pass adds up (the others are the last minibatch's)
    summed: ClassVar[tuple[str, ...]] = ()
    #: a checkpoint may cut a sweep or a ``partial_fit`` pass at a minibatch boundary
    minibatch_passes: ClassVar[bool] = True

    def n_items(self, data: object) -> int:
        raise NotImplementedError

    def minibatch_step(self, state: OnlineState, data: object, batch: np.ndarray,
                       rho: float) -> dict[str, float]:
        raise NotImplementedError

    def step(self, state: OnlineState, data: object, passes: Passes | None = None
             ) -> dict[str, float]:
        """One sweep over every item in minibatches (without replacement: a permutation
        of the items drawn from ``batch_rng`` at the start of the sweep); ``passes``: the
        engine's, when a checkpoint may cut the sweep."""
        pass_ = self.run_pass(state, data, self.sweep_order(state, data), passes)
        info = dict(pass_.last)
        info["minibatches"] = float(pass_.n_batches)
        info["step_size"] = self.schedule(max(state.updates - 1, 0))
        return info

    def sweep_order(self, state: OnlineState, data: Any) -> Any:
        """The items of a sweep in visiting order, drawn when the sweep begins (a
        callable, so a sweep continued from a checkpoint does not draw it again)."""
        if state.batch_rng is None:
            raise ValueError("online state has no minibatch stream (batch_rng)")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        rng = state.batch_rng
        return lambda: rng.permutation(self.n_items(data))

    def run_pass(self, state: OnlineState, data: Any, items: Any,
                 passes: Passes | None = None, summed: tuple[str, ...] = ()
                 ) -> PassProgress:
        """The minibatches of one pass: ``items`` (an array, or a callable drawing it)
        cut into minibatches of ``batch_size``, each a ``minibatch_step`` with the next
        step size (``step_size``), ``state.updates`` counting them; the figures named in
        ``summed`` are added up over the pass.  With the engine's ``passes`` the pass is
        begun through it (a pass continued from a checkpoint resumes at its next
        minibatch) and every minibatch boundary is reported to it.  Returns the pass
        (``last``: the last minibatch's figures)."""
        if passes is None:
            passes = Passes()
        pass_ = passes.begin(items, self.batch_size, summed)
        for batch in pass_.remaining():
            info = dict(self.minibatch_step(state, data, batch, self.step_size(state, data)))
            for key in pass_.sums:
                pass_.sums[key] += info[key]
            state.updates += 1
            pass_.done += 1
            pass_.last = info
            passes.boundary(pass_)
        return pass_

    def check_pass(self, pass_: PassProgress, data: Any) -> None:
        """A saved pass fits this algorithm and ``data``: its minibatch size, its items in
        ``[0, n_items(data))`` and its count of minibatches done."""
        if pass_.batch_size != self.batch_size:
            raise ValueError(f"the saved pass runs minibatches of {pass_.batch_size}, this "
                             f"fit has batch_size={self.batch_size}")
        n = self.n_items(data)
        items = pass_.items
        if items.size and (int(items.min()) < 0 or int(items.max()) >= n):
            raise ValueError(f"the saved pass visits items outside [0, {n})")
        if not 0 <= pass_.done <= pass_.n_batches:
            raise ValueError(f"the saved pass has {pass_.done} of {pass_.n_batches} "
                             "minibatches done")

    def step_size(self, state: OnlineState, data: Any) -> float:
        """rho_t of the next minibatch: ``schedule(t)``, t = the updates done (Robbins &
        Monro 1951; Hoffman et al. 2013 eq. 26: ``rho_t = (t + tau)^-kappa``)."""
        return self.schedule(state.updates)

    # ------------------------------------------------------------------ streams
    def stream_length(self, state: OnlineState) -> int:
        """Items in the stream ``state`` stands for (documents, entries)."""
        raise NotImplementedError

    def chunk_data(self, new: Any) -> Any:
        """The data of a stream's first chunk ``new`` (what ``init`` is built on); None
        when it holds no item."""
        return new

    def chunk_fingerprint(self, new: Any) -> str:
        """A hash of chunk ``new`` in the family's form (``new.fingerprint()``): what a
        checkpointed ``partial_fit`` matches a killed call's pass file against."""
        return str(new.fingerprint())

    def start(self, state: OnlineState, new: Any = None) -> None:
        """A state built by ``init`` (on the first chunk ``new``, or by a fit) begins its
        stream: what it stands for is the first chunk."""
        state.chunks = np.array([0, self.stream_length(state)], np.int64)

    def stream_data(self, state: OnlineState) -> Any:
        """The data of the stream so far, rebuilt from the state (what ``extend`` appends
        to); None for a family whose passes read the new chunk alone."""
        return None

    def extend(self, state: OnlineState, data: Any, new: Any) -> Any:
        """Append chunk ``new`` to the stream ``data`` held by ``state``: grow the
        parameters of its items, record its boundary in ``state.chunks``; return the data
        the pass over the chunk reads (None: nothing new)."""
        raise NotImplementedError

    def add_chunk(self, state: OnlineState, n_new: int) -> None:
        """Record a chunk of ``n_new`` items at the end of the stream (called by
        ``extend`` before the state grows: a state that has not streamed yet, e.g. a
        fit's, first begins its stream with what it stands for)."""
        if state.chunks.size == 0:
            self.start(state)
        state.chunks = np.append(state.chunks, int(state.chunks[-1]) + int(n_new))

    def chunk_items(self, state: OnlineState, data: Any) -> np.ndarray:
        """The items of the chunk just added, in the order a pass visits them (default:
        in stream order)."""
        return np.arange(int(state.chunks[-2]), int(state.chunks[-1]), dtype=np.int64)

    def end_pass(self, state: OnlineState, data: Any, info: dict[str, float]) -> None:
        """Hook after the minibatches of a pass over a chunk (e.g. recompute running
        sums); may add figures to ``info``."""

    def partial_step(self, state: OnlineState, data: Any,
                     items: np.ndarray | None = None, passes: Passes | None = None
                     ) -> dict[str, float]:
        """One pass over ``items`` of ``data`` (default: all), in order, in minibatches of
        ``batch_size`` with the continuing step sizes (stochastic variational inference,
        Hoffman et al. 2013, Algorithm 1: global statistics
        ``(1 - rho_t) S + rho_t S_hat(I_t)``; the LMV paper's Algorithm 2 steps 4-7 for
        LMVS; conditional density filtering for online BPBFM), then ``end_pass``.  The
        figures in ``summed`` are added up over the minibatches; with an executor that
        ships data, ``info`` has the pass's payload bytes.  ``passes``: the engine's, when
        a checkpoint may cut the pass (:meth:`run_pass`)."""
        items = (np.arange(self.n_items(data), dtype=np.int64) if items is None
                 else np.asarray(items, dtype=np.int64))
        before = payload_counters(self.executor)
        with self.session(state, data):             # one connection for all minibatches
            pass_ = self.run_pass(state, data, items, passes, self.summed)
        info = dict(pass_.last)
        info.update(pass_.sums)
        self.end_pass(state, data, info)
        return with_payload(info, self.executor, before)
