"""Approximate distributed Gibbs sweeps (AD-LDA, Newman et al. 2009) over fixed document
shards, wherever an executor runs them.

The documents are split into ``len(states)`` fixed shards balanced by token count
(:func:`~topiclink.execution.balanced_chunks`).  One sweep, written once
(:func:`sweep_shard`): each shard sweeps its tokens with
:func:`topiclink.kernels.lda.sweep_range` against its own copy of the word-topic counts
taken at the start of the sweep and with its own xoshiro row, and reports its count
changes (:func:`~topiclink.execution.count_delta`); the changes are added up in shard
order (integer sums: exact).  The chain depends on the seed and the number of shards only,
never on the executor (the calling thread, threads, a Dask cluster) or its size.

The shards' z, ndk and RNG rows stay with them between sweeps
(:meth:`~topiclink.execution.Executor.keep`): on an in-process executor they are views of
the caller's z and ndk, updated in place (no copies: nothing is replayed in process); on
Dask each stays on its worker, only the count changes come back, and :meth:`ShardSweeper.
sync` writes them into the caller's arrays (on leaving, and when something reads them).
A lost worker's shards are rebuilt by the executor from its recovery point by replaying
the logged sweeps.  With a :class:`~topiclink.data.shards.ShardSet` the workers read
their shards' tokens from the shard files (cached per worker process), so the driver
never sends them.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from topiclink.execution import (
    DaskExecutor,
    Executor,
    balanced_chunks,
    count_delta,
    resolve_executor,
)
from topiclink.kernels import lda as kernels

__all__ = ["ShardSweeper", "ChunkedSweeper", "DaskSweeper", "sweep_shard", "shard_tokens"]

#: the executor key of the shards' kept states
_KEPT = "lda.shards"
_PARTS = ("z", "ndk", "rng")


@functools.lru_cache(maxsize=64)
def _shard_file(path: str, n_tokens: int, n_docs: int, sha256: str) -> dict:
    """A shard file's tokens (read once per process: the worker keeps them)."""
    from topiclink.data.shards import load_shard

    words, offsets, _ = load_shard(path, n_tokens, n_docs, sha256)
    return {"words": words, "offsets": offsets, "vocab": np.unique(words).astype(np.int32)}


def shard_tokens(static: dict | tuple) -> dict:
    """A shard's ``words``, ``offsets`` (local, from 0) and ``vocab`` (its distinct words,
    int32): the static data itself, or read from its shard file (``static``: the
    :meth:`~topiclink.data.shards.ShardSet.task_arguments` of the shard)."""
    return static if isinstance(static, dict) else _shard_file(*static)


def _private(a: np.ndarray) -> np.ndarray:
    """A copy of the small hot array ``a`` with 64 bytes of padding on both sides, so that
    no other thread's data shares its cache lines (false sharing)."""
    pad = max(1, 64 // a.itemsize)
    buf = np.zeros(a.size + 2 * pad, dtype=a.dtype)
    out = buf[pad:pad + a.size]
    out[:] = a
    return out


def sweep_shard(state: tuple, shared: tuple, alpha: np.ndarray, static: dict | tuple
                ) -> tuple[tuple, tuple]:
    """One AD-LDA sweep of one shard.

    ``state``: the shard's ``(z, ndk, rng row)``; ``shared``: ``(nwk, nk, beta,
    in_place)`` with the counts at the start of the sweep (read only); ``alpha``: (K,),
    (1, K) or the shard's rows (D_s, K).  With ``in_place`` (an in-process executor) the
    state's arrays are updated where they are and the report is the shard's whole count
    tables ``(None, nwk, nk)`` (the driver subtracts the start: cheaper in memory than
    picking rows); otherwise (a shipping executor, which may replay the round) the
    function is pure and the report is ``(word ids, their nwk changes (compact), nk
    change)``.
    """
    nwk0, nk0, beta, in_place = shared
    tokens = shard_tokens(static)
    words, offsets = tokens["words"], tokens["offsets"]
    z, ndk, rng = state if in_place else (state[0].copy(), state[1].copy(), state[2].copy())
    nwk, nk = nwk0.copy(), _private(nk0)
    kernels.sweep_range(words, offsets, 0, offsets.shape[0] - 1, z, ndk, nwk, nk, alpha,
                        float(beta), rng)
    if in_place:
        return (z, ndk, rng), (None, nwk, nk)
    rows, changes = count_delta(nwk, nwk0, tokens["vocab"])
    return (z, ndk, rng), (rows, changes, nk - nk0)


class ShardSweeper:
    """AD-LDA sweeps over ``len(states)`` document shards, run by ``executor``.

    A context manager; ``sweep(words, offsets, z, ndk, nwk, nk, alpha, beta)`` updates
    ``nwk`` and ``nk`` in place (and, in process, ``z``, ``ndk``); :meth:`sync` writes the
    shards' z, ndk and RNG rows into the arrays and ``states`` (it runs on leaving).
    Always pass the same z / ndk arrays within one session.

    Parameters
    ----------
    offsets : int64 (D + 1,) document offsets of the tokens
    states : uint64 (n_shards, 4) xoshiro states, one row per shard (updated by ``sync``)
    executor : None / a thread count (this process), or an
        :class:`~topiclink.execution.Executor` (e.g. a
        :class:`~topiclink.execution.DaskExecutor`; borrowed)
    shards : ShardSet or None; read by the workers (a shipping executor only); its shards
        must be the ``balanced_chunks(offsets, n_shards)`` shards (one-line ValueError
        otherwise)
    """

    def __init__(self, offsets: np.ndarray, states: np.ndarray,
                 executor: Executor | int | None = None, shards: Any = None) -> None:
        self.chunks = balanced_chunks(offsets, states.shape[0])
        if shards is not None:
            bounds = shards.doc_bounds()
            if bounds.shape != self.chunks.shape or not np.array_equal(bounds, self.chunks):
                raise ValueError(f"{type(self).__name__}: the ShardSet has "
                                 f"{shards.n_shards} shards over other documents than the "
                                 f"{self.n_shards} sampler shards: write the shards with "
                                 f"n_shards={self.n_shards}")
        self.shards = shards
        self.states = states
        self.executor = executor
        self.n_sweeps = 0
        self._ex: Executor | None = None
        self._session: Any = None
        self._reset()

    def _reset(self) -> None:
        self._loaded: tuple[np.ndarray, np.ndarray] | None = None     # (z, ndk)
        self._fresh = True
        self._rows: list[np.ndarray] = []       # in process: the shards' own RNG rows
        self._ranges: list[tuple[int, int]] = []    # per shard: its token range

    @property
    def n_shards(self) -> int:
        return int(self.chunks.size - 1)

    @property
    def bytes_sent(self) -> int:
        return int(self._counters()[0])

    @property
    def bytes_received(self) -> int:
        return int(self._counters()[1])

    def _counters(self) -> tuple[int, int]:
        ex = self._ex if self._ex is not None else self.executor
        if isinstance(ex, Executor):
            return ex.bytes_sent, ex.bytes_received
        return 0, 0

    # ------------------------------------------------------------------ session
    def __enter__(self) -> ShardSweeper:
        ex = resolve_executor(self.executor, name="topiclink-adlda")
        if self.shards is not None and not ex.ships_data:
            if ex is not self.executor:
                ex.close()
            raise ValueError("a ShardSet is read by Dask workers: give a Dask executor")
        self._ex = ex
        self._session = ex.session()
        self._session.__enter__()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        ex, session = self._ex, self._session
        try:
            if exc_type is None:
                self.sync()
        finally:
            try:
                if ex is not None:
                    ex.drop(_KEPT)
                if session is not None:
                    session.__exit__(exc_type, *exc)
            finally:
                if ex is not None and ex is not self.executor:
                    ex.close()
                self._ex = self._session = None
                self._reset()

    # ------------------------------------------------------------------ sweeping
    def _load(self, words: np.ndarray | None, offsets: np.ndarray, z: np.ndarray,
              ndk: np.ndarray) -> None:
        assert self._ex is not None
        in_place = not self._ex.ships_data
        states, statics = [], []
        self._rows = []
        self._ranges = []
        for s in range(self.n_shards):
            d0, d1 = int(self.chunks[s]), int(self.chunks[s + 1])
            lo, hi = int(offsets[d0]), int(offsets[d1])
            self._ranges.append((lo, hi))
            if self.shards is not None:
                statics.append(self.shards.task_arguments(s))
            else:
                w = words[lo:hi] if in_place else np.ascontiguousarray(words[lo:hi])
                statics.append({"words": w,
                                "offsets": np.ascontiguousarray(offsets[d0:d1 + 1] - lo),
                                "vocab": np.unique(w).astype(np.int32)})
            rng = _private(self.states[s])      # its own row: no shared cache line
            self._rows.append(rng)
            if in_place:
                states.append((z[lo:hi], ndk[d0:d1], rng))
            else:
                states.append((z[lo:hi].copy(), ndk[d0:d1].copy(), self.states[s].copy()))
        self._ex.keep(_KEPT, states, statics)
        self._loaded = (z, ndk)

    def sweep(self, words: np.ndarray | None, offsets: np.ndarray, z: np.ndarray,
              ndk: np.ndarray, nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray,
              beta: float) -> None:
        """One AD-LDA sweep: ``nwk`` and ``nk`` updated in place; ``z``, ``ndk`` and the
        RNG rows advance with the shards (:meth:`sync` fetches them)."""
        if self._ex is None:
            with self:
                self.sweep(words, offsets, z, ndk, nwk, nk, alpha, beta)
            return
        if self._loaded is None:
            self._load(words, offsets, z, ndk)
        elif z is not self._loaded[0] or ndk is not self._loaded[1]:
            raise ValueError(f"{type(self).__name__}: sweep the same z and ndk arrays "
                             f"within a session")
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.ndim == 2 and alpha.shape[0] > 1:
            args = [np.ascontiguousarray(alpha[self.chunks[s]:self.chunks[s + 1]])
                    for s in range(self.n_shards)]
        else:
            args = [alpha] * self.n_shards
        ships = self._ex.ships_data
        # a shipping executor keeps ``shared`` to replay the round: copies; in process
        # the shards read the counts themselves (changed only after the last shard)
        shared = ((nwk.copy(), nk.copy()) if ships else (nwk, nk)) + (float(beta), not ships)
        reports = self._ex.step_kept(_KEPT, sweep_shard, shared, args)
        base_w, base_k = (None, None) if ships else (nwk.copy(), nk.copy())
        for rows, changes, dnk in reports:          # in shard order (exact either way)
            if rows is None:
                nwk += changes - base_w
                nk += dnk - base_k
            else:
                nwk[rows] += changes
                nk += dnk
        self.n_sweeps += 1
        if self._ex.ships_data:
            self._fresh = False
        else:                               # z, ndk swept in place; the RNG rows here too
            for s, rng in enumerate(self._rows):
                self.states[s] = rng

    def sync(self, parts: tuple[str, ...] = _PARTS) -> None:
        """Write the shards' current z, ndk and RNG rows into the arrays the sweeps were
        given and into ``states`` (a no-op when they are there; ``parts`` is accepted for
        callers that need less: everything is written)."""
        if self._loaded is None or self._ex is None or self._fresh:
            return
        z, ndk = self._loaded
        for s, (zs, ndks, rng) in enumerate(self._ex.fetch(_KEPT)):
            lo, hi = self._ranges[s]
            z[lo:hi] = zs
            ndk[int(self.chunks[s]):int(self.chunks[s + 1])] = ndks
            self.states[s] = rng
        self._fresh = True


class ChunkedSweeper(ShardSweeper):
    """:class:`ShardSweeper` on ``n_threads`` threads of this process (the calling thread
    for one): ``ChunkedSweeper(offsets, states, n_threads)``."""

    def __init__(self, offsets: np.ndarray, states: np.ndarray, n_threads: int) -> None:
        super().__init__(offsets, states, max(1, int(n_threads)))


class DaskSweeper(ShardSweeper):
    """:class:`ShardSweeper` on a Dask cluster: ``DaskSweeper(offsets, states, client,
    shards=None)`` (``client``: a distributed.Client, a scheduler address or None for the
    current client; with ``shards`` the workers read the shard files)."""

    def __init__(self, offsets: np.ndarray, states: np.ndarray, client: Any = None,
                 shards: Any = None) -> None:
        super().__init__(offsets, states, DaskExecutor(client), shards)
