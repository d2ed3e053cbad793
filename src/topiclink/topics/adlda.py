"""Approximate distributed Gibbs sweeps (AD-LDA, Newman et al. 2009) over fixed document
shards, wherever an executor runs them, as a
:class:`~topiclink.inference.sharded.ShardedAlgorithm` (:class:`ADLDAShards`).

The documents are split into ``n_shards`` fixed shards balanced by token count
(:func:`~topiclink.execution.balanced_chunks`).  One sweep, declared as the pieces the
engine runs (``ShardedAlgorithm.step`` / ``session`` / ``sync``):

- split: each shard's z, ndk and xoshiro row, and its tokens (or, with a
  :class:`~topiclink.data.shards.ShardSet`, its shard file, which the Dask workers read
  and cache per process, so the driver never sends the tokens);
- shared: nwk and nk at the start of the sweep, beta, and whether the shards sweep in
  place; per-shard args: the shard's rows of a per-document alpha (DMR);
- local, written once (:func:`topiclink.topics.chunked.sweep_shard`): the shard sweeps
  its tokens against its own copy of the word-topic counts and reports its count changes;
- merge: the changes added up in shard order (integer sums: exact);
- write back: the shards' z, ndk and RNG rows into the state.

The chain depends on the seed and the number of shards only, never on the executor (the
calling thread, threads, a Dask cluster) or its size.  The shards' z, ndk and RNG rows
stay with them between sweeps (:meth:`~topiclink.execution.Executor.keep`): on an
in-process executor they are views of the state's z and ndk, updated in place (no
copies: nothing is replayed in process), and the merge writes the RNG rows; on Dask each
stays on its worker, only the count changes come back, and ``sync`` writes them into the
state (on leaving, and when something reads them).  A lost worker's shards are rebuilt by
the executor from its recovery point by replaying the logged sweeps.

:class:`CollapsedGibbsLDA <topiclink.topics.lda.CollapsedGibbsLDA>` and
:class:`DMRGibbs <topiclink.families.dmr.algorithm.DMRGibbs>` are :class:`ADLDAShards`
(through :class:`~topiclink.topics.lda.ShardedTokenSampler`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.execution import balanced_chunks
from topiclink.inference.sharded import ShardedAlgorithm
from topiclink.topics.chunked import padded_copy, sweep_shard

__all__ = ["ADLDAShards", "check_shard_set"]

#: the executor key of the shards' kept states
_KEPT = "lda.shards"


def check_shard_set(shards: Any, chunks: np.ndarray, who: str) -> None:
    """One-line ValueError unless the ShardSet ``shards`` (or None) holds the document
    shards ``chunks`` (``balanced_chunks(offsets, n_shards)``)."""
    if shards is None:
        return
    bounds = shards.doc_bounds()
    if bounds.shape != chunks.shape or not np.array_equal(bounds, chunks):
        n = chunks.size - 1
        raise ValueError(f"{who}: the ShardSet has {shards.n_shards} shards over other "
                         f"documents than the {n} sampler shards: write the shards with "
                         f"n_shards={n}")


class ADLDAShards(ShardedAlgorithm):
    """AD-LDA's sweep declared as a :class:`~topiclink.inference.sharded.ShardedAlgorithm`
    (the module docstring), for an algorithm whose state has ``z``, ``ndk``, ``nwk``,
    ``nk`` and ``kernel_rng`` (one row per shard).

    A subclass gives ``beta`` (an attribute), :meth:`adlda_tokens` and
    :meth:`adlda_alpha`; ``ShardedAlgorithm.__init__`` sets the shards and the executor.
    """

    local = staticmethod(sweep_shard)
    kept_key = _KEPT
    beta: float
    #: set by :meth:`split`: the shards' document bounds, whether they sweep the state's
    #: arrays in place (an in-process executor), and then their own RNG rows
    _chunks: np.ndarray
    _in_place: bool
    _rows: list[np.ndarray]

    def adlda_tokens(self, data: Any) -> tuple[np.ndarray | None, np.ndarray, Any]:
        """``(words or None, offsets, ShardSet or None)`` of ``data``."""
        raise NotImplementedError

    def adlda_alpha(self, state: Any, data: Any) -> np.ndarray:
        """The prior of this sweep: (K,), (1, K) or per document (D, K)."""
        raise NotImplementedError

    def split(self, state: Any, data: Any) -> tuple[list, list]:
        """Each shard's ``(z, ndk, RNG row)`` (in process: views of the state's z and ndk
        and a private RNG row; on a shipping executor: copies) and its tokens (or its
        shard file's task arguments)."""
        assert self._ex is not None
        words, offsets, shards = self.adlda_tokens(data)
        chunks = balanced_chunks(offsets, self.n_shards)
        check_shard_set(shards, chunks, type(self).__name__)
        in_place = not self._ex.ships_data
        if shards is not None and in_place:
            raise ValueError("a ShardSet is read by Dask workers: give a Dask executor")
        self._chunks, self._in_place, self._rows = chunks, in_place, []
        states, statics = [], []
        for s in range(self.n_shards):
            d0, d1 = int(chunks[s]), int(chunks[s + 1])
            lo, hi = int(offsets[d0]), int(offsets[d1])
            if shards is not None:
                statics.append(shards.task_arguments(s))
            else:
                w = words[lo:hi] if in_place else np.ascontiguousarray(words[lo:hi])
                statics.append({"words": w,
                                "offsets": np.ascontiguousarray(offsets[d0:d1 + 1] - lo),
                                "vocab": np.unique(w).astype(np.int32)})
            if in_place:
                rng = padded_copy(state.kernel_rng[s])     # its own row: no shared cache line
                self._rows.append(rng)
                states.append((state.z[lo:hi], state.ndk[d0:d1], rng))
            else:
                states.append((state.z[lo:hi].copy(), state.ndk[d0:d1].copy(),
                               state.kernel_rng[s].copy()))
        return states, statics

    def shared(self, state: Any, data: Any) -> tuple:
        # a shipping executor keeps ``shared`` to replay the round: copies; in process
        # the shards read the counts themselves (changed only after the last shard)
        if self._in_place:
            return state.nwk, state.nk, float(self.beta), True
        return state.nwk.copy(), state.nk.copy(), float(self.beta), False

    def args(self, state: Any, data: Any) -> list[np.ndarray]:
        """Each shard's alpha: its rows of a per-document prior, else the prior itself."""
        alpha = np.asarray(self.adlda_alpha(state, data), dtype=np.float64)
        if alpha.ndim == 2 and alpha.shape[0] > 1:
            c = self._chunks
            return [np.ascontiguousarray(alpha[c[s]:c[s + 1]]) for s in range(self.n_shards)]
        return [alpha] * self.n_shards

    def merge(self, state: Any, data: Any, reports: list) -> dict[str, float]:
        """The count changes added in shard order (in process each report is the shard's
        whole tables: the start is subtracted); in process the RNG rows too."""
        nwk, nk = state.nwk, state.nk
        base_w, base_k = (nwk.copy(), nk.copy()) if self._in_place else (None, None)
        for rows, changes, dnk in reports:          # in shard order (exact either way)
            if rows is None:
                nwk += changes - base_w
                nk += dnk - base_k
            else:
                nwk[rows] += changes
                nk += dnk
        for s, rng in enumerate(self._rows):        # in process: swept in place
            state.kernel_rng[s] = rng
        return {}

    def write_back(self, state: Any, data: Any, shard_states: list) -> None:
        """The shards' z, ndk and RNG rows into the state (in process they are there:
        views, and rows written by :meth:`merge`)."""
        if self._in_place:
            return
        offsets = self.adlda_tokens(data)[1]
        c = self._chunks
        for s, (z, ndk, rng) in enumerate(shard_states):
            d0, d1 = int(c[s]), int(c[s + 1])
            state.z[int(offsets[d0]):int(offsets[d1])] = z
            state.ndk[d0:d1] = ndk
            state.kernel_rng[s] = rng
