"""Online Gibbs sampling of BPBFM-1 / BPBFM-2: Bayesian conditional density filtering.

Hu, Rai & Carin (AISTATS 2016), supplement section 2, after Guhaniyogi, Qamar & Dunson
(2014); ``docs/design/bpbfm.md``.  The entries (ones, observed counts and the imputed
held-out cells, as in the batch sampler of :mod:`topiclink.families.bpbfm.algorithm`) are visited
in minibatches ``I_t``.  Each minibatch draws its latent counts and their allocation given
the current parameters (the batch kernel on the minibatch alone) and folds them into
decaying sufficient statistics (supplement eq. 7)::

    S_t = (1 - rho_t) S_{t-1} + rho_t (|I| / |I_t|) s(I_t),     rho_t = (t + t0)^-w,

for ``S`` = the entity-factor counts ``X_ik..``, the cell counts ``X_.k1k2m`` and (BPBFM-2)
the relation-matrix counts ``X^r_...m``; then the global variables are drawn from their
conditionals given ``S_t`` (eqs. 11-20: U's columns, CRT tables and d, eps, Lambda or G,
eta), with the exact conditionals of the batch sampler (U counted as sender *and*
receiver, d with its column terms).

**Per-step cost independent of N and R** (the note's O(|I_t| K^2)):

- the statistics carry one global scale ``c`` (``S = c * stat``): the decay of every row
  is ``c *= 1 - rho`` (O(1)); a minibatch adds ``rho f / c`` times its counts to the rows
  it touches (renormalised in O(N K) only when c underflows, every ~10^2-10^3 steps);
- U's columns are Dirichlet: ``U[:, k] = g[:, k] / sum_i g_ik`` with independent
  ``g_ik ~ Ga(a + S_ik, 1)``.  A step redraws ``g`` only for the entities of the minibatch
  and keeps the column totals up to date (recomputed exactly after every sweep); the
  kernel reads ``g`` with the totals folded into the matrices
  (``u_i^T Lambda u_j = g_i^T (D^-1 Lambda D^-1) g_j``), so U is never materialised;
- BPBFM-1 redraws (d, eps, Lambda) of the relations in the minibatch only; BPBFM-2 the
  M dictionary matrices (O(M K^2)) and eta of the relations in the minibatch.

Parameters of entities and relations outside a minibatch keep their last draw (whose
statistics only decayed since): the filter's usual approximation.  Non-integer
statistics enter the CRT draws by unbiased stochastic rounding; the gamma draws take
them as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from topiclink.execution import payload_counters, with_payload
from topiclink.families.bpbfm.algorithm import BPBFMData, BPBFMGibbs, chunked_counts, n_chunks_for
from topiclink.families.bpbfm.grouping import EntryGroups, group_entries
from topiclink.inference.engine import Passes, fingerprint
from topiclink.inference.online import OnlineAlgorithm, OnlineState
from topiclink.parameters import RobbinsMonro
from topiclink.random import kernel_state, spawn

__all__ = ["BPBFMOnlineState", "BPBFMOnline", "BPBFMChunk"]

_TINY = np.finfo(np.float64).tiny
#: renormalise the statistics when their global scale falls below this
_MIN_SCALE = 1e-150


@dataclass(kw_only=True)
class BPBFMOnlineState(OnlineState):
    """Gamma variables of U (``U = g / g_total``), the matrices, shrinkage, the scaled
    decaying statistics and every stream."""

    g: np.ndarray              # (N, K) > 0
    g_total: np.ndarray        # (K,) column sums of g
    G: np.ndarray              # (M, K, K)
    eta: np.ndarray            # (M, R) or (0, 0)
    eta_total: np.ndarray      # (M,) row sums of eta, or (0,)
    d: np.ndarray              # (M, K)
    eps: np.ndarray            # (M,)
    stat_entity: np.ndarray    # (N, K): S = stat_scale * stat
    stat_cells: np.ndarray     # (M, K, K)
    stat_rm: np.ndarray        # (R, M) or (0, 0)
    stat_scale: float = 1.0
    n_items: int = 0           # |I|: the entries the statistics stand for
    kernel_rng: np.ndarray     # uint64 (n_streams, 4)
    global_rng: np.random.Generator
    # the stream: the triples seen so far, as sorted keys (r * seen_n + h) * seen_n + t
    seen_triples: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    seen_n: int = 0

    stream_fields: ClassVar[tuple[str, ...]] = ("chunks", "seen_triples", "seen_n")

    def seen_keys(self, n_entities: int) -> np.ndarray:
        """The triples seen so far as keys ``(r * N + h) * N + t`` for ``N = n_entities``
        (the entities grow with the stream; the keys are renumbered)."""
        seen = self.seen_triples
        if seen.size == 0:
            return seen
        old_n = int(self.seen_n) or n_entities
        ot, rest = seen % old_n, seen // old_n
        oh, orl = rest % old_n, rest // old_n
        return (orl * n_entities + oh) * n_entities + ot

    @property
    def U(self) -> np.ndarray:  # noqa: N802 (the paper's name)
        """(N, K) with columns summing to 1 (computed: O(N K))."""
        return self.g / self.g_total


@dataclass(frozen=True)
class BPBFMChunk:
    """A chunk of a BPBFM stream in the model's numbering: its data (the triples not seen
    before), and every triple seen with it as sorted keys over ``n_entities``."""

    data: BPBFMData
    seen: np.ndarray
    n_entities: int

    def fingerprint(self) -> str:
        """A hash of the chunk: its entries, the triples seen with it and its entities."""
        return fingerprint(np.frombuffer(self.data.fingerprint().encode(), np.uint8),
                           np.asarray(self.seen, np.int64), np.array([self.n_entities]))


class BPBFMOnline(OnlineAlgorithm, BPBFMGibbs):
    """Online Gibbs (conditional density filtering) of BPBFM-1 or BPBFM-2.

    Parameters as :class:`~topiclink.families.bpbfm.algorithm.BPBFMGibbs`, plus
    ``batch_size`` (entries per minibatch) and ``schedule`` (``rho_t = (t + t0)^-w``).
    One engine ``step`` is a sweep: every entry once, in minibatches.
    """

    state_class = BPBFMOnlineState
    summed = ("latent_count",)

    def __init__(self, n_topics: int, n_dictionary: int | None = None, *,
                 batch_size: int = 4096, schedule: RobbinsMonro | None = None,
                 **priors: float) -> None:
        BPBFMGibbs.__init__(self, n_topics, n_dictionary, **priors)
        schedule = RobbinsMonro(1.0, 1.0, 0.51) if schedule is None else schedule
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.batch_size = int(batch_size)
        self.schedule = schedule
        self.name += "-online"

    @property
    def n_streams(self) -> int:
        """Kernel streams per minibatch (a function of ``batch_size`` only)."""
        return n_chunks_for(self.batch_size)

    def n_items(self, data: BPBFMData) -> int:
        return data.n_entries

    # ------------------------------------------------------------------ set-up
    def init(self, data: BPBFMData, rng: np.random.Generator) -> BPBFMOnlineState:
        init_rng, chain_rng, global_rng, batch_rng = spawn(rng, 4)
        N, R, K = data.n_entities, data.n_relations, self.K
        M = self.n_matrices(data)
        U, G, eta = self.initial_parameters(data, init_rng)
        return BPBFMOnlineState(
            g=U, g_total=U.sum(axis=0), G=G, eta=eta,
            eta_total=eta.sum(axis=1) if self.model2 else np.zeros(0),
            d=np.ones((M, K)), eps=np.ones(M), stat_entity=np.zeros((N, K)),
            stat_cells=np.zeros((M, K, K)),
            stat_rm=np.zeros((R, M)) if self.model2 else np.zeros((0, 0)),
            stat_scale=1.0, n_items=data.n_entries,
            kernel_rng=kernel_state(chain_rng, self.n_streams), global_rng=global_rng,
            batch_rng=batch_rng, data_fingerprint=self.fingerprint(data))

    def check_values(self, state: BPBFMOnlineState, data: BPBFMData) -> None:
        for name in ("g", "g_total", "G", "d", "eps", "eta", "stat_entity", "stat_cells",
                     "stat_rm"):
            if np.any(getattr(state, name) < 0):
                raise ValueError(f"state: {name} holds negative values")
        if not np.allclose(state.g.sum(axis=0), state.g_total, rtol=1e-6):
            raise ValueError("state: g_total must be the column sums of g")
        if not (np.isfinite(state.stat_scale) and state.stat_scale > 0):
            raise ValueError(f"state: stat_scale must be > 0, got {state.stat_scale}")

    def grow(self, state: BPBFMOnlineState, n_entities: int, n_relations: int,
             rng: np.random.Generator) -> None:
        """Add entities and relations that a stream brings (``partial_fit``): a new
        entity's g row is a prior draw ``Ga(a, 1)`` with no statistics; a new relation
        gets a matrix (BPBFM-1: G from the prior mean scale of the others, d = eps = 1) or
        an eta column of ones (BPBFM-2)."""
        N0, K = state.g.shape
        if n_entities > N0:
            extra = np.maximum(rng.standard_gamma(self.a, size=(n_entities - N0, K)), _TINY)
            state.g = np.vstack([state.g, extra])
            state.g_total = state.g.sum(axis=0)
            state.stat_entity = np.vstack([state.stat_entity,
                                           np.zeros((n_entities - N0, K))])
        R0 = state.stat_rm.shape[0] if self.model2 else state.G.shape[0]
        if n_relations <= R0:
            return
        new = n_relations - R0
        if self.model2:
            M = state.G.shape[0]
            state.eta = np.hstack([state.eta, np.ones((M, new))])
            state.eta_total = state.eta.sum(axis=1)
            state.stat_rm = np.vstack([state.stat_rm, np.zeros((new, M))])
        else:
            scale = float(state.G.mean()) if state.G.size else 1.0
            state.G = np.concatenate([state.G, rng.standard_gamma(1.0, size=(new, K, K))
                                      * scale + 1e-12])
            state.d = np.vstack([state.d, np.ones((new, K))])
            state.eps = np.concatenate([state.eps, np.ones(new)])
            state.stat_cells = np.concatenate([state.stat_cells, np.zeros((new, K, K))])

    # ------------------------------------------------------------------ one minibatch
    def minibatch_counts(self, state: BPBFMOnlineState, data: BPBFMData, batch: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                    np.ndarray, int]:
        """Latent counts of the minibatch's entries and their allocation, on local ids.

        Returns (entities, relations, n_ent (|entities|, K), x_cells (M', K, K),
        x_rm (|relations|, M) or (0, 0), total); M' = |relations| (BPBFM-1) or M.
        """
        n = batch.size
        ents, inv = np.unique(np.concatenate([data.heads[batch], data.tails[batch]]),
                              return_inverse=True)
        rels, rinv = np.unique(data.rels[batch], return_inverse=True)
        heads = inv[:n].astype(np.int32)
        tails = inv[n:].astype(np.int32)
        lrels = rinv.astype(np.int32)
        kinds = np.ascontiguousarray(data.kinds[batch])
        values = np.ascontiguousarray(data.values[batch])
        nr = rels.size
        inv_total = 1.0 / state.g_total
        outer = inv_total[:, None] * inv_total[None, :]
        g_local = np.ascontiguousarray(state.g[ents])
        if self.model2:
            M = state.G.shape[0]
            G_local = state.G * outer
            ptr = np.arange(0, (nr + 1) * M, M, dtype=np.int64)
            rm = np.tile(np.arange(M, dtype=np.int64), nr)
            rw = np.ascontiguousarray(state.eta[:, rels].T).ravel()
            rm_shape = (nr, M)
            L_local = np.ascontiguousarray(np.einsum("mr,mkl->rkl", state.eta[:, rels],
                                                     G_local))
        else:
            G_local = state.G[rels] * outer
            ptr = np.arange(nr + 1, dtype=np.int64)
            rm = np.arange(nr, dtype=np.int64)
            rw = np.ones(nr)
            rm_shape = (0, 0)
            L_local = G_local
        groups = group_entries((heads, lrels, tails, kinds, values),
                               state.kernel_rng.shape[0])
        n_ent, x_cells, x_rm, total = self.chunk_counts(
            groups, g_local, L_local, G_local, (ptr, rm, rw), rm_shape, state.kernel_rng)
        return ents, rels, n_ent, x_cells, x_rm, total

    def chunk_counts(self, groups: EntryGroups, g: np.ndarray, L: np.ndarray,
                     G: np.ndarray, terms: tuple[np.ndarray, np.ndarray, np.ndarray],
                     rm_shape: tuple[int, int], streams: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Step 1 on the minibatch's grouped entries (local ids):
        :func:`~topiclink.families.bpbfm.algorithm.chunked_counts` where the algorithm
        runs (threads, or the chunks as tasks of its executor: ``parallel="dask"`` runs
        them on Dask workers)."""
        return chunked_counts(groups, g, L, G, terms, rm_shape, self.u_counts == "sender",
                              streams, self.runs_on)

    def fold_in(self, state: BPBFMOnlineState, rho: float, factor: float,
                ents: np.ndarray, rels: np.ndarray, n_ent: np.ndarray,
                x_cells: np.ndarray, x_rm: np.ndarray) -> None:
        """``S = (1 - rho) S + rho * factor * s`` on the scaled statistics (eq. 7)."""
        if rho >= 1.0:                     # the first step forgets the (empty) past
            state.stat_entity[:] = 0.0
            state.stat_cells[:] = 0.0
            state.stat_rm[:] = 0.0
            state.stat_scale = 1.0
        else:
            state.stat_scale *= 1.0 - rho
        w = rho * factor / state.stat_scale
        state.stat_entity[ents] += w * n_ent
        if self.model2:
            state.stat_cells += w * x_cells
            state.stat_rm[rels] += w * x_rm
        else:
            state.stat_cells[rels] += w * x_cells
        if state.stat_scale < _MIN_SCALE:
            for name in ("stat_entity", "stat_cells", "stat_rm"):
                getattr(state, name)[...] *= state.stat_scale
            state.stat_scale = 1.0

    def stochastic_round(self, rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
        """Whole counts with expectation ``x`` (floor plus a Bernoulli of the fraction)."""
        low = np.floor(x)
        return (low + (rng.random(x.shape) < x - low)).astype(np.int64)

    def minibatch_step(self, state: BPBFMOnlineState, data: BPBFMData, batch: np.ndarray,
                       rho: float) -> dict[str, float]:
        """One filtering update from the entries ``batch`` of ``data``; with an executor
        that ships data, ``info`` adds the minibatch's payload bytes."""
        before = payload_counters(self.executor)
        info = self._minibatch_update(state, data, batch, rho)
        return with_payload(info, self.executor, before)

    def _minibatch_update(self, state: BPBFMOnlineState, data: BPBFMData,
                          batch: np.ndarray, rho: float) -> dict[str, float]:
        rng = state.global_rng
        batch = np.asarray(batch, dtype=np.int64)
        ents, rels, n_ent, x_cells, x_rm, total = self.minibatch_counts(state, data, batch)
        self.fold_in(state, rho, state.n_items / max(batch.size, 1), ents, rels, n_ent,
                     x_cells, x_rm)
        c = state.stat_scale
        # U: the gamma variables of the entities in the minibatch (eq. 11 / 16)
        new = np.maximum(rng.standard_gamma(self.a + c * state.stat_entity[ents]), _TINY)
        state.g_total += new.sum(axis=0) - state.g[ents].sum(axis=0)
        state.g[ents] = new
        np.maximum(state.g_total, _TINY, out=state.g_total)
        # shrinkage and matrices of the touched matrices (eqs. 12-15 / 17-19)
        touched = np.arange(state.G.shape[0]) if self.model2 else rels
        X = c * state.stat_cells[touched]
        theta_eff = state.eta_total.copy() if self.model2 else np.ones(touched.size)
        d, eps = state.d[touched], state.eps[touched]
        self.draw_shrinkage(rng, self.stochastic_round(rng, X), d, eps, theta_eff)
        state.d[touched], state.eps[touched] = d, eps
        shape = self.shapes(d, eps) + X
        state.G[touched] = rng.standard_gamma(shape) / (self.beta + theta_eff)[:, None, None]
        if self.model2:                    # eta of the relations in the minibatch (eq. 20)
            rate = self.q0 + state.G.sum(axis=(1, 2))
            eta_new = rng.standard_gamma(self.h0 + c * state.stat_rm[rels].T) / rate[:, None]
            state.eta_total += eta_new.sum(axis=1) - state.eta[:, rels].sum(axis=1)
            state.eta[:, rels] = eta_new
        return {"latent_count": float(total), "step_size": float(rho),
                "batch_entities": float(ents.size)}

    # ------------------------------------------------------------------ sweeps
    def refresh_totals(self, state: BPBFMOnlineState) -> None:
        """Exact column sums of g and row sums of eta (drift of the running sums)."""
        state.g_total = state.g.sum(axis=0)
        if self.model2:
            state.eta_total = state.eta.sum(axis=1)

    def step(self, state: BPBFMOnlineState, data: BPBFMData, passes: Passes | None = None
             ) -> dict[str, float]:
        """One sweep (``passes``: the engine's, when a checkpoint may cut it at a minibatch
        boundary); with an executor that ships data, ``info`` reports the sweep's payload
        bytes."""
        before = payload_counters(self.executor)
        state.n_items = data.n_entries
        info = OnlineAlgorithm.step(self, state, data, passes)
        self.refresh_totals(state)
        return with_payload(info, self.executor, before)

    def end_pass(self, state: BPBFMOnlineState, data: BPBFMData,
                 info: dict[str, float]) -> None:
        """After a chunk's pass: exact running sums (:meth:`refresh_totals`)."""
        self.refresh_totals(state)

    # ------------------------------------------------------------------ the stream
    def stream_length(self, state: BPBFMOnlineState) -> int:
        return int(state.n_items)

    def chunk_data(self, new: BPBFMChunk) -> BPBFMData:
        return new.data

    def start(self, state: BPBFMOnlineState, new: BPBFMChunk | None = None) -> None:
        super().start(state, new)
        if new is not None:
            state.seen_triples, state.seen_n = new.seen, int(new.n_entities)

    def extend(self, state: BPBFMOnlineState, data: None, new: BPBFMChunk) -> BPBFMData:
        """The chunk's entities and relations join (:meth:`grow`), ``|I|`` counts its
        entries; a pass reads the chunk's data alone (the decaying statistics stand for
        the stream before it)."""
        chunk = new.data
        self.add_chunk(state, chunk.n_entries)
        self.grow(state, chunk.n_entities, chunk.n_relations, state.global_rng)
        state.n_items += chunk.n_entries
        state.seen_triples, state.seen_n = new.seen, int(new.n_entities)
        state.data_fingerprint = self.fingerprint(chunk)
        return chunk

    def chunk_items(self, state: BPBFMOnlineState, data: BPBFMData) -> np.ndarray:
        """The chunk's entries in a random order (the state's minibatch stream)."""
        return state.batch_rng.permutation(data.n_entries)
