"""The gRTM family's Gibbs sampler over document shards, run by an executor.

:class:`ShardedRelationalGibbs` runs the iteration (``docs/design/grtm.md``) of
:class:`~topiclink.families.rtm.algorithm.RelationalGibbs` (Chen et al. 2015) over
``n_shards`` contiguous document shards, balanced by sweep work (tokens
plus pair visits x topics touched, as the single-machine pipeline blocks).  Training pair
(i, j) is *owned* by the shard of its source i: its augmentation variable and (a_ij, b_ij)
are drawn there.  Where the shards run is an :class:`~topiclink.execution.Executor` (the
calling thread or threads; a Dask cluster: the estimator's ``executor``, resolved into a
:class:`~topiclink.execution.DaskExecutor` once and handed here); it never changes the
chain.  One iteration, in the order of ``RelationalGibbs.step``:

1. the driver draws U from its Gaussian conditional (eq. 13) with the single-machine code
   (:func:`~topiclink.relational.weights.weight_posterior`,
   :func:`~topiclink.relational.weights.draw_weights`): it holds ndk and every pair's a, b;
2. :func:`sweep_step` on every shard, given ``(U, ndk, nwk, nk)`` and the current (a, b)
   of its in-pairs owned by other shards: the shard sweeps its tokens (eq. 14,
   :func:`~topiclink.relational.kernels.rtm.sweep_relational_range`) against private copies of nwk
   and nk (AD-LDA, Newman et al. 2009: the driver adds the count changes afterwards) and
   of ndk, so that neighbours in other shards are seen as they were at the start of the
   iteration and those in its own shard fresh, as the single-machine kernel sees them.
   It returns its nwk row changes (compact), its nk change and its new ndk rows
   (:func:`ndk_rows`, the hand-over);
3. :func:`augment_step` on every shard, given every shard's new ndk rows: the augmentation
   of its owned pairs with both endpoints fresh and this iteration's U (lambda ~ PG(c,
   omega), eq. 12, or the hinge loss's inverse-Gaussian draw: the exact conditional); it
   returns their new (a, b) (a only for the hinge loss: the logistic a = c (y - 1/2) never
   changes) and its part of the pseudo log-likelihood.

Steps 2 and 3 are one :meth:`~topiclink.execution.Executor.step_kept_chained` (on Dask:
both rounds submitted at once, the ndk rows handed from worker to worker); the driver then
merges the counts, ndk rows and (a, b) in shard order.  Topics z, the shards' streams and
the discriminants omega stay with the shards between iterations (kept states of the
executor); :meth:`ShardedRelationalGibbs.sync` fetches them when the state is read (the
end of a run, callbacks that read ``state_``, checkpoints).  ndk, nwk, nk, U, a and b are
current on the driver after every iteration.

Random streams: shard s sweeps with xoshiro row s of ``state.kernel_rng`` (n_shards, 4) and
draws its pairs' augmentation with ``state.aug_rngs[s]`` (``augmentation="reference"``:
the ``polyagamma`` package / NumPy per chunk of at most 8192 pairs) or, for
``augmentation="numba"``, from chunk streams seeded by one 64-bit draw of its sweep
stream per iteration (:func:`topiclink.relational.kernels.augment.augment_pair_chunks`).  The chain
is therefore a function of the seed and ``n_shards`` only, never of the executor or the
number of workers.  With one shard and at most 4096 training pairs (one chunk of pairs) it
is the single-machine chain bit for bit.

Bytes per iteration on Dask (the executor's counters, in the trace as ``bytes_sent``,
``bytes_received``, ``bytes_peer``): sent ``n_workers x (K^2 x 8 + D K x c + (V K + K) x
4)`` for the broadcast (c: 1, 2 or 4 bytes per ndk entry, the narrowest integer type
holding the counts) and 16 bytes per cross-shard in-pair; received the changed nwk rows
(1-4 bytes per entry plus 4 per row id), ``D K x c`` of ndk rows, 8 bytes per pair for b
(16 for the hinge loss) and a few scalars; between workers each shard's ndk rows to every
other worker holding a shard.  A lost worker does not change the chain: the Dask executor
rebuilds the shards from its recovery point by replaying the logged rounds
(:class:`~topiclink.execution.DaskExecutor`).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from topiclink.execution import Executor, compact_dtype
from topiclink.execution.shards import balanced_chunks
from topiclink.families.rtm.algorithm import (
    HINGE_EPS,
    RelationalData,
    RelationalGibbs,
    RelationalState,
)
from topiclink.inference.sharded import kept_shards_run
from topiclink.random import kernel_state, spawn
from topiclink.relational.augment import augment, pseudo_loglik
from topiclink.relational.kernels import augment as augment_kernels
from topiclink.relational.kernels import rtm as rtm_kernels
from topiclink.relational.pairs import PairIndex, PairSet

__all__ = ["ShardedRelationalGibbs", "ShardPlan", "shard_bounds", "sweep_step", "augment_step",
           "ndk_rows"]

logger = logging.getLogger(__name__)

#: pairs per augmentation chunk of a shard (as the single-machine pipeline's chunks)
CHUNK_SIZE = 8192

#: the executor key of the shards' kept states
_KEPT = "grtm-shards"

# a shard's state tuple: z, xoshiro row, augmentation generator, own a, own b, own omega,
# the iteration's augmentation seed
_Z, _RNG, _GEN, _A, _B, _OMEGA, _SEED = range(7)


def shard_bounds(data: RelationalData, src: np.ndarray, dst: np.ndarray, n_topics: int,
                 n_shards: int) -> np.ndarray:
    """Document boundaries of ``n_shards`` contiguous shards of about equal sweep work
    (tokens + pair visits x min(N_d, K), the work measure of the single-machine pipeline
    blocks), by :func:`topiclink.execution.shards.balanced_chunks` on its cumulative sum.  A
    shard may be empty when a few documents carry most of the work (it then does
    nothing)."""
    D = data.tokens.n_docs
    if n_shards > D:
        raise ValueError(f"n_shards ({n_shards}) exceeds the number of documents ({D})")
    lengths = np.diff(data.tokens.offsets)
    visits = np.bincount(src, minlength=D) + np.bincount(dst, minlength=D)
    work = lengths + visits * np.minimum(lengths, n_topics)
    cum = np.concatenate([[0], np.cumsum(work)]).astype(np.int64)
    return balanced_chunks(cum, n_shards)


@njit(cache=True)
def _fresh_rows(ndk: np.ndarray, U: np.ndarray, inv_length: np.ndarray) -> np.ndarray:
    """Rows ``U zbar_d`` computed as the sweep kernel refreshes them after sweeping document
    d (same operations, same rounding), so the pairs' discriminants omega_ij = zbar_i .
    (U zbar_j) match the single-machine draws bit for bit."""
    D, K = ndk.shape
    Uz = np.empty((D, K))
    for d in range(D):
        cd = ndk[d]
        inv_n = inv_length[d]
        for k in range(K):
            su = 0.0
            for l in range(K):
                su += U[k, l] * cd[l]
            Uz[d, k] = su * inv_n
    return Uz


# ---------------------------------------------------------------------- shard steps (pure)
def sweep_step(prev: tuple, shared: tuple, foreign: tuple, static: dict
               ) -> tuple[tuple, tuple]:
    """A shard's Z sweep (eq. 14): ``(new state, (word ids, nwk row changes, nk change,
    ndk rows))`` (changes and rows in the narrowest integer type holding them).

    ``prev``: the shard's state tuple; ``shared``: ``(U, ndk, nwk, nk)`` at the start of
    the iteration (read only; ndk in a compact integer type); ``foreign``: (a, b) of its
    in-pairs owned by other shards; ``static``: its tokens, pair CSRs and settings
    (:meth:`ShardedRelationalGibbs.statics`).  Pure: the inputs are left alone.
    """
    U, ndk_c, base_w, base_k = shared
    z, rng = prev[_Z].copy(), prev[_RNG].copy()
    ndk = ndk_c.astype(np.int32)                       # private copy, every document
    zbar = ndk / static["lengths"][:, None]
    Uz = zbar @ U.T                                    # as RelationalGibbs.step
    Vz = zbar @ U
    nwk, nk = base_w.copy(), base_k.copy()
    vals_a = np.concatenate([prev[_A], foreign[0]])
    vals_b = np.concatenate([prev[_B], foreign[1]])
    out_idx, in_idx = static["out_idx"], static["in_idx"]
    seed = np.uint64(augment_kernels.draw_seed(rng) if static["augmentation"] == "numba"
                     else 0)
    d0, d1 = static["d0"], static["d1"]
    rtm_kernels.sweep_relational_range(
        static["words"], static["offsets"], z, ndk, nwk, nk, static["alpha"],
        static["beta"], rng, U, Uz, Vz, static["out_ptr"], static["out_nbr"],
        np.ascontiguousarray(vals_a[out_idx]), np.ascontiguousarray(vals_b[out_idx]),
        static["in_ptr"], static["in_nbr"], np.ascontiguousarray(vals_a[in_idx]),
        np.ascontiguousarray(vals_b[in_idx]), static["approx"], d0, d1)
    vocab = static["vocab"]
    diff = nwk[vocab] - base_w[vocab]
    changed = np.flatnonzero(diff.any(axis=1))
    rows = np.ascontiguousarray(diff[changed])
    mine = np.ascontiguousarray(ndk[d0:d1])
    out = (vocab[changed], rows.astype(compact_dtype(rows)), nk - base_k,
           mine.astype(compact_dtype(mine)))
    return (z, rng, prev[_GEN], prev[_A], prev[_B], prev[_OMEGA], seed), out


def ndk_rows(out: tuple) -> np.ndarray:
    """A shard's new ndk rows from its :func:`sweep_step` output (what the other shards'
    :func:`augment_step` needs)."""
    return out[3]


def augment_step(prev: tuple, shared: tuple, rows: tuple, static: dict
                 ) -> tuple[tuple, tuple]:
    """A shard's augmentation draws of its owned pairs given the swept topics of both
    endpoints and this iteration's U (eq. 12 and its hinge analogue): ``(new state, (a or
    None, b, summed pseudo log-likelihood))`` (a only for the hinge loss).

    ``prev``: the shard's state after :func:`sweep_step`; ``shared``: as there (U, and ndk
    at the start of the iteration); ``rows``: every shard's new ndk rows (in shard order),
    which replace the old ones.  Pure: the inputs are left alone."""
    U = shared[0]
    loss, hinge = static["loss"], static["hinge_cost"]
    src, dst, y, c = static["src"], static["dst"], static["y"], static["c"]
    n = src.size
    a, b, omega = np.empty(n), np.empty(n), np.empty(n)
    gen = prev[_GEN]
    if n:
        ndk = shared[1].astype(np.int32)
        edges = static["bounds"]
        for t, r in enumerate(rows):
            ndk[edges[t]:edges[t + 1]] = r
        inv_length = static["inv_length"]
        Uz = _fresh_rows(ndk, U, inv_length)
        bounds = static["chunk_bounds"]
        parts = np.zeros(bounds.size - 1)
        if static["augmentation"] == "numba":
            code = (augment_kernels.LOSS_LOGISTIC if loss == "logistic"
                    else augment_kernels.LOSS_HINGE)
            augment_kernels.augment_pair_chunks(
                code, 0, bounds.size - 1, bounds, prev[_SEED], ndk, Uz, src, dst,
                inv_length, y, c, hinge, HINGE_EPS, omega, a, b, parts)
        else:
            gen = copy.deepcopy(gen)                   # the previous state stays intact
            for i in range(bounds.size - 1):
                lo, hi = int(bounds[i]), int(bounds[i + 1])
                w = rtm_kernels.pair_dots(ndk, Uz, src[lo:hi], dst[lo:hi], inv_length)
                omega[lo:hi] = w
                a[lo:hi], b[lo:hi] = augment(gen, loss, w, y[lo:hi], c[lo:hi], hinge)
                parts[i] = (hi - lo) * pseudo_loglik(loss, w, y[lo:hi], c[lo:hi], hinge)
        total = float(parts.sum())
    else:
        total = 0.0
    out = (a if loss == "hinge" else None, b, total)
    return (prev[_Z], prev[_RNG], gen, a, b, omega, prev[_SEED]), out


# ---------------------------------------------------------------------- the algorithm
@dataclass
class ShardPlan:
    """What :meth:`ShardedRelationalGibbs.attach` derives from a state's pairs and the
    data: the state's workspace (:attr:`~topiclink.inference.engine.State.workspace`),
    rebuilt, never saved.

    ``pairs``: the pairs' CSR by source (the U step); ``lengths``: the documents' token
    counts; ``bounds``: the shards' document bounds; per shard, ``own`` (the pairs it
    owns), ``foreign`` (its in-pairs owned by other shards) and ``csr`` (its documents'
    out- and in-pair CSRs, the in-pairs indexing its own (a, b) then the foreign ones).
    """

    pairs: PairSet
    lengths: np.ndarray
    bounds: np.ndarray
    own: list[np.ndarray]
    foreign: list[np.ndarray]
    csr: list[dict[str, np.ndarray]]


class ShardedRelationalGibbs(RelationalGibbs):
    """:class:`~topiclink.families.rtm.algorithm.RelationalGibbs` with its documents in
    ``n_shards`` shards run by an executor (see the module docstring).

    Parameters
    ----------
    n_shards : document shards (each its own sweep and augmentation stream; the chain
        depends on it, never on the executor or the number of workers)
    executor : where the shards run (None: ``min(n_threads, n_shards)`` threads of this
        process, the calling thread for 1; an :class:`~topiclink.execution.Executor`,
        e.g. a :class:`~topiclink.execution.DaskExecutor`, borrowed)
    **kwargs : as :class:`~topiclink.families.rtm.algorithm.RelationalGibbs`
    """

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float, *, n_shards: int = 2,
                 executor: Executor | None = None, **kwargs: Any) -> None:
        super().__init__(n_topics, alpha, beta, **kwargs)
        if int(n_shards) < 1:
            raise ValueError(f"n_shards must be >= 1, got {n_shards}")
        self.n_shards = int(n_shards)
        self.executor = executor
        self._reset()

    def _reset(self) -> None:
        self._ex: Executor | None = None
        self._loaded: tuple[RelationalState, RelationalData] | None = None
        self._fresh = True                  # the state holds the shards' current values

    def _streams(self, data: RelationalData, src: np.ndarray, dst: np.ndarray,
                 chain_rng: np.random.Generator, aug_rng: np.random.Generator
                 ) -> tuple[np.ndarray, list[np.random.Generator]]:
        """One xoshiro row and one augmentation generator per shard."""
        shard_bounds(data, src, dst, self.n_topics, self.n_shards)    # n_shards <= D
        return kernel_state(chain_rng, self.n_shards), spawn(aug_rng, self.n_shards)

    def attach(self, state: RelationalState, data: RelationalData) -> None:
        """The pairs' CSR by source (for the U step) and the shard plan: document bounds,
        each shard's owned pairs, its in-pairs owned elsewhere and its local CSRs: the
        state's :class:`ShardPlan` (built once per state and run)."""
        if isinstance(state.workspace, ShardPlan):
            return
        D = data.tokens.n_docs
        src, dst = state.pair_source, state.pair_target
        pairs = PairSet(src, dst, state.pair_y, state.pair_c, D)
        bounds = shard_bounds(data, src, dst, self.n_topics, self.n_shards)
        shard_of = np.searchsorted(bounds, np.arange(D), side="right") - 1
        owner = shard_of[src]
        own_list, foreign_list, csr_list = [], [], []
        for s in range(self.n_shards):
            own = np.flatnonzero(owner == s)
            out = PairIndex.build(src[own], dst[own], D)
            into_ids = np.flatnonzero(shard_of[dst] == s)
            into = PairIndex.build(dst[into_ids], src[into_ids], D)
            foreign = into_ids[owner[into_ids] != s]
            # position of each in-pair in the shard's values: own pairs, then foreign ones
            pos = np.where(owner[into_ids] == s, np.searchsorted(own, into_ids),
                           own.size + np.searchsorted(foreign, into_ids))
            own_list.append(own)
            foreign_list.append(foreign)
            csr_list.append({"out_ptr": out.ptr, "out_nbr": out.nbr, "out_idx": out.order,
                             "in_ptr": into.ptr, "in_nbr": into.nbr,
                             "in_idx": pos[into.order].astype(np.int64)})
        state.workspace = ShardPlan(pairs=pairs, lengths=data.tokens.lengths,
                                    bounds=bounds, own=own_list, foreign=foreign_list,
                                    csr=csr_list)

    def plan(self, state: RelationalState) -> ShardPlan:
        """The shard plan of ``state`` (:meth:`attach`)."""
        ws = state.workspace
        if not isinstance(ws, ShardPlan):
            raise ValueError(f"{type(self).__name__}: attach the state first")
        return ws

    def statics(self, state: RelationalState, data: RelationalData) -> list[dict]:
        """Per shard, what never changes during a run: its tokens (offsets shifted so that
        the kernel indexes them by global document id), the document lengths, its owned
        pairs and the CSRs of its documents' out-pairs (all owned) and in-pairs (indexes
        into its own (a, b) followed by the foreign ones)."""
        tok, plan = data.tokens, self.plan(state)
        lengths = tok.lengths
        statics = []
        for s in range(self.n_shards):
            d0, d1 = int(plan.bounds[s]), int(plan.bounds[s + 1])
            lo, hi = int(tok.offsets[d0]), int(tok.offsets[d1])
            words = np.ascontiguousarray(tok.words[lo:hi])
            own = plan.own[s]
            statics.append({
                "d0": d0, "d1": d1, "bounds": plan.bounds, "words": words,
                "offsets": np.ascontiguousarray(tok.offsets - lo),
                "vocab": np.unique(words).astype(np.int32),
                "lengths": lengths, "inv_length": 1.0 / lengths,
                "alpha": self.alpha, "beta": self.beta, "approx": self.approx,
                "loss": self.loss, "hinge_cost": self.hinge_cost,
                "augmentation": self.augmentation,
                "src": np.ascontiguousarray(state.pair_source[own]),
                "dst": np.ascontiguousarray(state.pair_target[own]),
                "y": np.ascontiguousarray(state.pair_y[own]),
                "c": np.ascontiguousarray(state.pair_c[own]),
                "chunk_bounds": np.array([*range(0, own.size, CHUNK_SIZE), own.size],
                                         dtype=np.int64),
                **plan.csr[s]})
        return statics

    # ------------------------------------------------------------------ session
    @contextlib.contextmanager
    def session(self, state: RelationalState, data: RelationalData) -> Iterator[None]:
        """The executor for the run (the given one, borrowed; else threads over the
        shards); the shards are handed their part of the state by the first :meth:`step`
        and their z, omega and streams are fetched into ``state`` on leaving (after a
        failure: tried, and the state of the last :meth:`sync` kept should that fail)."""
        self.attach(state, data)
        try:
            with super().session(state, data), kept_shards_run(
                    self, state, self.n_shards, _KEPT, name="topiclink-grtm",
                    sync_after_failure=True):
                yield
        finally:
            self._reset()

    def _load(self, state: RelationalState, data: RelationalData) -> None:
        """Hand every shard its part of the state (topics, streams, owned (a, b, omega))
        and its static data."""
        assert self._ex is not None
        plan, tok = self.plan(state), data.tokens
        states = []
        for s in range(self.n_shards):
            d0, d1 = int(plan.bounds[s]), int(plan.bounds[s + 1])
            lo, hi = int(tok.offsets[d0]), int(tok.offsets[d1])
            own = plan.own[s]
            states.append((state.z[lo:hi].copy(), state.kernel_rng[s].copy(),
                           copy.deepcopy(state.aug_rngs[s]), state.a[own], state.b[own],
                           state.omega[own], np.uint64(0)))
        self._ex.keep(_KEPT, states, self.statics(state, data))
        self._loaded = (state, data)
        self._fresh = True

    # ------------------------------------------------------------------ iterating
    def step(self, state: RelationalState, data: RelationalData) -> dict[str, float]:
        """One iteration: U here, then the sweep and the augmentation on the shards, the
        counts and coefficients merged here in shard order."""
        if self._ex is None:          # outside a session: one iteration, all fetched
            with self.session(state, data):
                return self.step(state, data)
        self.attach(state, data)
        ws = self.plan(state)
        pairs = ws.pairs
        t0 = time.perf_counter()
        self.draw_U(state, pairs, ws.lengths)
        t1 = time.perf_counter()
        ex = self._ex
        before = (ex.bytes_sent, ex.bytes_received, ex.bytes_peer)
        if self._loaded is None:
            self._load(state, data)
        elif self._loaded[0] is not state or self._loaded[1] is not data:
            raise ValueError(f"{type(self).__name__}: step the same state and data within "
                             f"a session")
        # copies: an executor may keep ``shared`` and ``args`` to replay the round
        shared = (state.U, state.ndk.astype(compact_dtype(state.ndk)), state.nwk.copy(),
                  state.nk.copy())
        foreign = [(state.a[ids], state.b[ids]) for ids in ws.foreign]
        swept, drawn = ex.step_kept_chained(_KEPT, sweep_step, augment_step, ndk_rows,
                                            shared, foreign)
        for s, (words, drows, dnk, mine) in enumerate(swept):
            state.nwk[words] += drows
            state.nk += dnk
            state.ndk[ws.bounds[s]:ws.bounds[s + 1]] = mine
        total = 0.0
        for s, (a, b, part) in enumerate(drawn):
            own = ws.own[s]
            if a is not None:
                state.a[own] = a
            state.b[own] = b
            total += part
        self._fresh = False
        seconds_z, seconds_lambda = ex.chained_seconds
        info = {"seconds_weights": t1 - t0, "seconds_z": seconds_z,
                "seconds_lambda": seconds_lambda, "link_loglik": total / pairs.n_pairs}
        if ex.ships_data:
            info.update(bytes_sent=float(ex.bytes_sent - before[0]),
                        bytes_received=float(ex.bytes_received - before[1]),
                        bytes_peer=float(ex.bytes_peer - before[2]))
        return info

    def sync(self, state: RelationalState | None = None) -> None:
        """Fetch z, omega and the streams of every shard into the state (a no-op outside
        a run or when nothing changed since the last sync)."""
        if self._loaded is None or self._fresh or self._ex is None:
            return
        st = self._loaded[0]
        if state is not None and state is not st:
            raise ValueError(f"{type(self).__name__}: sync the state of the running session")
        plan, offsets = self.plan(st), self._loaded[1].tokens.offsets
        for s, (z, rng, gen, _a, _b, omega, _seed) in enumerate(self._ex.fetch(_KEPT)):
            d0, d1 = int(plan.bounds[s]), int(plan.bounds[s + 1])
            lo, hi = int(offsets[d0]), int(offsets[d1])
            st.z[lo:hi] = z
            st.kernel_rng[s] = rng
            st.aug_rngs[s] = copy.deepcopy(gen)
            st.omega[plan.own[s]] = omega
        self._fresh = True
