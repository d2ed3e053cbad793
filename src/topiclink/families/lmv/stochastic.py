"""Stochastic variational inference for LMV ("LMVS"): Tan, Chan & Zheng (2016), Algorithm 2
and supplement S4 (``docs/design/lmv.md``).

One engine iteration is one sweep: the documents in minibatches S drawn without replacement
from the state's stream.  For each minibatch (step size s_t):

1-3. case-control pairs (d in S or d' in S, inclusion probability pi = 1/l by shortest path
     length, links always) with converged (kappa, nu) and Horvitz-Thompson sums
     (:mod:`topiclink.families.lmv.kernels_sampled`);
4.   phi and gamma-hat of d in S (words plus the weighted pair sums), then
     gamma_d <- (1 - s) gamma_d + s gamma-hat_d;
5.   lambda <- (1 - s) lambda + s (eta + D/|S| sum_{d in S} word statistics);
6.   (a, b) <- (1 - s)(a, b) + s (a^, b^) with the batch NCVMP target evaluated at
     S1 and T scaled by D/|S| (the two-stage cluster estimator, paper eq. 4.3);
7.   (g_d', h_d') for d' in S with the full in-degree and the weighted non-link sum, no
     D/|S| factor;
     s halved for (a, b) and for (g, h) until all parameters are positive.  No nested
     (a, b) <-> (g, h) loop (it would break the step-size conditions; supplement S4).

Step size s = A1 / (s_w + m/M + A2)^v with s_w = 1, 2, ... the sweep, m the minibatch within
the sweep and M the minibatches per sweep (:meth:`StochasticLMV.step_size`).  The stopping
rule (checked by the estimator after each sweep) reads the change
||diag(Bbar_sweep - Bbar_previous)|| / ||diag(Bbar_previous)|| (``stopping`` of
:class:`~topiclink.families.lmv.estimator.VisibilityTopicModel`).  The bound L* would
cost a full O(D^2) pass, so ``objective`` is NaN; the trace records ``blockmodel_change``.

Every random choice comes from the state: the minibatch order from ``batch_rng`` and, per
minibatch, one 64-bit seed from which each minibatch document's Bernoulli trials get their
own stream, so ``n_threads`` never changes the result.  With an executor that ships data
(a :class:`~topiclink.execution.DaskExecutor`, handed over by the estimator) steps 1-3 run as its
tasks, one per block of minibatch sources (:meth:`StochasticLMV.shipped_statistics`),
with the graph and the per-document table replicated on the workers and only the changed
rows sent per minibatch; the driver keeps steps 4-7.  The fit is bit for bit that of
this process for any number of workers or threads, and a lost worker costs a redo
of the minibatch's blocks with the same inputs (the executor's faults handling).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma

from topiclink.execution import Executor, payload_counters, run_blocks_in_order, with_payload
from topiclink.families.lmv.algorithm import BatchLMV, LMVData, expected_log_dirichlet
from topiclink.families.lmv.kernels_sampled import (
    cited_table,
    link_topic_pairs,
    sampled_pair_statistics,
)
from topiclink.families.lmv.updates import blockmodel_target, visibility_target
from topiclink.inference.engine import Passes, fingerprint
from topiclink.inference.online import OnlineAlgorithm, OnlineState
from topiclink.parameters import RobbinsMonro
from topiclink.topics.kernels.word_e_step import word_e_step

__all__ = ["LMVSState", "LMVSChunk", "StochasticLMV", "sampled_statistics", "positive_step",
           "PairMerge", "stream_arrays", "pair_block", "pair_arguments", "graph_arrays",
           "ShippedGraph", "block_edges", "batch_positions"]

#: minibatch documents per thread task (fixed, so the split never depends on n_threads)
_SOURCES_PER_BLOCK = 16
#: documents per thread task of :func:`document_table`
_TABLE_ROWS_PER_BLOCK = 2048
#: the largest per-minibatch document table built (bytes); larger: terms per pair
TABLE_MAX_BYTES = 512 * 2**20


@dataclass(kw_only=True)
class LMVSState(OnlineState):
    """Everything LMVS needs to continue a run."""

    gamma: np.ndarray            # (D, K)
    lam: np.ndarray              # (K, V)
    a: np.ndarray                # (K, K)
    b: np.ndarray
    g: np.ndarray                # (D,)
    h: np.ndarray
    previous_diagonal: np.ndarray  # (K,) diag(Bbar) at the end of the previous sweep
    citation_topics: np.ndarray  # (L, 2) int32
    # the stream: the documents (CSR of the word counts) and citations seen so far
    doc_indptr: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    doc_words: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    doc_counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))
    citations: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    times: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))  # or (0,)

    stream_fields: ClassVar[tuple[str, ...]] = (
        "chunks", "doc_indptr", "doc_words", "doc_counts", "citations", "times")

    @property
    def has_stream(self) -> bool:
        """Whether the state keeps its documents (a model file written before the stream
        was kept in the state has none)."""
        return self.doc_indptr.size == self.gamma.shape[0] + 1


@dataclass(frozen=True)
class LMVSChunk:
    """A chunk of an LMVS stream in the model's numbering: the word counts of every
    document so far (the stream's, then the chunk's), every citation so far (d, d')
    and the publication times of every document (None without times)."""

    counts: sp.csr_matrix
    pairs: np.ndarray
    time: np.ndarray | None = None

    def data(self) -> LMVData:
        return LMVData.build(self.counts, self.pairs, self.time)

    def fingerprint(self) -> str:
        """A hash of the chunk: every document's word counts, the citations, the times."""
        c = self.counts
        return fingerprint(c.indptr, c.indices, c.data, np.array(c.shape),
                           np.asarray(self.pairs, np.int64),
                           np.zeros(0) if self.time is None else np.asarray(self.time))


def stream_arrays(data: LMVData) -> dict[str, np.ndarray]:
    """The stream fields of an :class:`LMVSState` holding ``data``."""
    coo = data.cites.tocoo()
    return {"doc_indptr": data.counts.indptr.astype(np.int64),
            "doc_words": data.counts.indices.astype(np.int32),
            "doc_counts": np.asarray(data.counts.data, dtype=np.float64),
            "citations": np.column_stack([coo.row, coo.col]).astype(np.int64).reshape(-1, 2),
            "times": (np.zeros(0) if data.time is None
                      else np.asarray(data.time, dtype=np.float64))}


#: replica keys of a shipping executor: the citation graph and the per-document table
_GRAPH, _TABLE = "lmvs.graph", "lmvs.table"


def graph_arrays(data: LMVData) -> dict[str, np.ndarray]:
    """What the pair kernel reads of the data (steps 1-3), fixed during a fit: the links'
    CSR by citing (``out_ptr``, ``out_dst``) and by cited document (``in_ptr``,
    ``in_src``), int64, and the publication times (NaN without them)."""
    D = data.n_docs
    cited_by = data.cited_by
    return {"out_ptr": data.cites.indptr.astype(np.int64),
            "out_dst": data.cites.indices.astype(np.int64),
            "in_ptr": cited_by.indptr.astype(np.int64),
            "in_src": cited_by.indices.astype(np.int64),
            "time": np.full(D, np.nan) if data.time is None
            else np.asarray(data.time, np.float64)}


def block_edges(n: int) -> list[int]:
    """The fixed split of a minibatch's ``n`` sources into blocks of ``_SOURCES_PER_BLOCK``
    (never dependent on threads or workers)."""
    return list(range(0, n, _SOURCES_PER_BLOCK)) + [n]


def batch_positions(batch: np.ndarray, D: int) -> np.ndarray:
    """int64 (D,): the position of each document in ``batch``, -1 outside it."""
    pos = np.full(D, -1, np.int64)
    pos[batch] = np.arange(batch.size)
    return pos


def pair_block(batch: np.ndarray, pos: np.ndarray, lo: int, hi: int, args: tuple,
               gout_rows: np.ndarray, gin: np.ndarray, T: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Steps 1-3 for the sources ``batch[lo:hi]`` (one block): rows lo..hi of
    ``gout_rows``, ``gin`` and ``T`` written; returns the block's private
    ``(gout_cols, S1, rounds, n_pairs)`` for :class:`PairMerge`."""
    n, K = batch.size, args[0].shape[1]
    g_cols = np.zeros((n, K))
    s1 = np.zeros((K, K))
    rounds, n_pairs = sampled_pair_statistics(batch, pos, lo, hi, *args, g_cols, gout_rows,
                                              gin, s1, T)
    return g_cols, s1, rounds, n_pairs


class PairMerge:
    """The blocks' results added up in block order (the same code for threads and Dask):
    ``gout_rows``, ``gin`` and ``T`` hold one row per source (written by its block);
    ``merge`` adds a block's private column sums and S1."""

    def __init__(self, n: int, K: int) -> None:
        self.gout_rows = np.zeros((n, K))
        self.gin = np.zeros((n, K))
        self.T = np.zeros((n, K, K))
        self.gout_cols = np.zeros((n, K))
        self.S1 = np.zeros((K, K))
        self.rounds = 0
        self.n_pairs = 0

    def merge(self, result: tuple[np.ndarray, np.ndarray, int, int]) -> None:
        g_cols, s1, rounds, n_pairs = result
        self.gout_cols += g_cols
        self.S1 += s1
        self.rounds += rounds
        self.n_pairs += n_pairs

    def result(self) -> dict:
        return {"gamma_pairs": self.gout_cols + self.gout_rows + self.gin, "S1": self.S1,
                "T": self.T, "rounds": self.rounds, "n_pairs": self.n_pairs}


def sampled_statistics(batch: np.ndarray, elog_theta: np.ndarray, data: LMVData,
                       vs_link: np.ndarray, elog_tau: np.ndarray, taubar: np.ndarray,
                       Bbar: np.ndarray, *, n0: int, seed: int, tol: float = 1e-6,
                       max_inner: int = 100, n_threads: int = 1) -> dict:
    """The case-control pair statistics of minibatch ``batch`` (sorted, distinct).

    Returns ``gamma_pairs`` (|S|, K) the Horvitz-Thompson estimate of
    sum_d' kappa_dd' + sum_d nu_dd' for d in S, ``S1`` (K, K) the links' kappa nu^T of the
    columns in S, ``T`` (|S|, K, K) the weighted non-link kappa nu^T per cited document in S,
    ``rounds`` and ``n_pairs``.
    """
    D, K = elog_theta.shape
    batch = np.ascontiguousarray(batch, dtype=np.int64)
    pos = batch_positions(batch, D)
    graph = graph_arrays(data)
    table = (document_table(elog_theta, taubar, Bbar, n_threads)
             if worth_a_table(batch.size, D, K, n0) else None)
    args = pair_arguments(elog_theta, graph, vs_link, elog_tau, taubar, Bbar, n0=n0,
                          seed=seed, tol=tol, max_inner=max_inner, table=table)
    edges = block_edges(batch.size)
    out = PairMerge(batch.size, K)

    def run_block(i: int) -> tuple[np.ndarray, np.ndarray, int, int]:
        return pair_block(batch, pos, edges[i], edges[i + 1], args, out.gout_rows, out.gin,
                          out.T)

    run_blocks_in_order(run_block, len(edges) - 1, int(n_threads), out.merge)
    return out.result()


def update_rows(replica: tuple, rows: np.ndarray, elog_theta: np.ndarray,
                elog_tau: np.ndarray, taubar: np.ndarray) -> tuple:
    """A worker's replica of (E log theta, E log tau, taubar) with ``rows`` replaced
    (runs on a worker; returns new arrays, the input is not modified)."""
    et, etau, tb = (a.copy() for a in replica)
    et[rows] = elog_theta
    etau[rows] = elog_tau
    tb[rows] = taubar
    return et, etau, tb


def pair_block_task(task: tuple, graph: dict, replica: tuple) -> tuple:
    """Steps 1-3 of Algorithm 2 for the sources ``batch[lo:hi]`` of one shipped block
    ``task = (shared, lo, hi)`` (runs where the executor runs it, e.g. a Dask worker).

    ``graph``: :func:`graph_arrays` of the data; ``replica``: (E log theta (D, K),
    E log tau (D,), taubar (D,)) at the start of the minibatch; ``shared``:
    ``(batch, vs_link, Bbar, n0, seed, tol, max_inner)``.

    Returns ``(col_rows, col_values, S1, rounds, n_pairs, gout_rows, gin, T)``: the
    block's column sums as their nonzero rows (positions in the batch, values), its
    private S1, counts, and its rows lo..hi of gout_rows, gin and T.
    """
    shared, lo, hi = task
    elog_theta, elog_tau, taubar = replica
    batch, vs_link, Bbar, n0, seed, tol, max_inner = shared
    D, K = elog_theta.shape
    n = batch.size
    args = pair_arguments(elog_theta, graph, vs_link, elog_tau, taubar, Bbar, n0=n0,
                          seed=seed, tol=tol, max_inner=max_inner)
    gout_rows, gin, T = np.zeros((n, K)), np.zeros((n, K)), np.zeros((n, K, K))
    g_cols, s1, rounds, n_pairs = pair_block(batch, batch_positions(batch, D), lo, hi, args,
                                             gout_rows, gin, T)
    nonzero = np.flatnonzero(g_cols.any(axis=1))
    return (nonzero, g_cols[nonzero], s1, int(rounds), int(n_pairs),
            gout_rows[lo:hi].copy(), gin[lo:hi].copy(), T[lo:hi].copy())


def document_table(elog_theta: np.ndarray, taubar: np.ndarray, Bbar: np.ndarray,
                   n_threads: Any = 1) -> tuple[np.ndarray, ...]:
    """:func:`~topiclink.families.lmv.kernels_sampled.cited_table` of every document at the
    minibatch's globals (rows split in fixed blocks over ``n_threads``; each row depends
    on its document only).  Memory 8 D (K^2 + 4K + 2) bytes, e.g. 85 MB for hep-th's
    25,224 documents at K = 20, freed with the minibatch."""
    D, K = elog_theta.shape
    table = (np.empty((D, K, K)), np.empty((D, K)), np.empty((D, K)), np.empty((D, K)),
             np.empty(D), np.empty((D, K)), np.empty(D))
    et = np.ascontiguousarray(elog_theta)
    tb = np.ascontiguousarray(taubar)
    bb = np.ascontiguousarray(Bbar)
    edges = list(range(0, D, _TABLE_ROWS_PER_BLOCK)) + [D]

    def run_block(i: int) -> None:
        cited_table(et, tb, bb, edges[i], edges[i + 1], *table)

    run_blocks_in_order(run_block, len(edges) - 1, n_threads, lambda _: None)
    return table


def worth_a_table(n_sources: int, D: int, K: int, n0: int) -> bool:
    """Whether :func:`document_table` pays: a row costs about what one pair's cited
    terms cost, and a cited document is in about ``n_sources / n0`` row-pass pairs or
    more (pi >= 1 / n0), so a table when ``2 n_sources >= n0`` and it stays under
    :data:`TABLE_MAX_BYTES` (hep-th, 2,000 sources, n0 = 100: a minibatch's pair
    statistics 1.3x faster, the same numbers)."""
    return 2 * n_sources >= n0 and 8 * D * (K * K + 4 * K + 2) <= TABLE_MAX_BYTES


def no_table(K: int) -> tuple[np.ndarray, ...]:
    """The table argument that makes the pair kernel compute each pair's terms in place
    (no D-row memory; the same numbers)."""
    return (np.empty((0, K, K)), np.empty((0, K)), np.empty((0, K)), np.empty((0, K)),
            np.empty(0), np.empty((0, K)), np.empty(0))


def pair_arguments(elog_theta: np.ndarray, graph: dict[str, np.ndarray],
                   vs_link: np.ndarray, elog_tau: np.ndarray, taubar: np.ndarray,
                   Bbar: np.ndarray, *, n0: int, seed: int, tol: float, max_inner: int,
                   table: tuple[np.ndarray, ...] | None = None) -> tuple:
    """The arguments of :func:`~topiclink.families.lmv.kernels_sampled.sampled_pair_statistics`
    between ``hi`` and the outputs (``table``: :func:`document_table`, or None for
    :func:`no_table`)."""
    if table is None:
        table = no_table(elog_theta.shape[1])
    return (elog_theta, graph["out_ptr"], graph["out_dst"], graph["in_ptr"],
            graph["in_src"], np.ascontiguousarray(vs_link), np.ascontiguousarray(elog_tau),
            np.ascontiguousarray(taubar), np.ascontiguousarray(Bbar), graph["time"],
            int(n0), np.uint64(seed), float(tol), int(max_inner), *table)


def positive_step(x: np.ndarray, y: np.ndarray, target: tuple[np.ndarray, np.ndarray],
                  s: float, max_halvings: int = 40) -> tuple[np.ndarray, np.ndarray, float]:
    """(1 - s)(x, y) + s target with s halved until every parameter is positive
    (Algorithm 2 steps 7-8); s = 0 (no move) if that never happens."""
    x_hat, y_hat = target
    for _ in range(max_halvings):
        nx, ny = (1 - s) * x + s * x_hat, (1 - s) * y + s * y_hat
        if np.all(nx > 0) and np.all(ny > 0):
            return nx, ny, s
        s *= 0.5
    return x, y, 0.0


def positive_mix(x: np.ndarray, target: np.ndarray, s: float, what: str,
                 max_halvings: int = 60) -> np.ndarray:
    """(1 - s) x + s target with s halved until every entry is finite and > 0.

    With 0 < s <= 1 and positive x and target the first try is kept (the paper's update,
    bit for bit); a step size above 1 (a large ``step_a1``) extrapolates and could leave
    gamma or lambda <= 0, where E[log theta] is undefined.  A target that is not finite
    (or not positive) is a one-line ValueError naming ``what``."""
    if not np.all(np.isfinite(target)) or np.any(target <= 0):
        raise ValueError(f"LMVS: the minibatch estimate of {what} is not finite and > 0 "
                         f"(step size {s:.3g}; lower step_a1 or raise step_a2)")
    for _ in range(max_halvings):
        new = (1 - s) * x + s * target
        if np.all(new > 0) and np.all(np.isfinite(new)):
            return new
        s *= 0.5
    return x


@dataclass
class ShippedGraph:
    """The stochastic LMV's workspace on its state
    (:attr:`~topiclink.inference.engine.State.workspace`): ``data``, whose citation graph
    (:func:`graph_arrays`) the executor's workers hold, replicated by the first shipped
    minibatch of a run; another data object (a grown stream) or an executor without the
    replica sends it again."""

    data: LMVData


class StochasticLMV(OnlineAlgorithm):
    """LMVS / Pairwise-Link-LDA with subsampling; see the module docstring."""

    state_class = LMVSState
    summed = ("pairs",)

    def __init__(self, n_topics: int, *, alpha: float, eta: float,
                 blockmodel_prior: tuple[float, float],
                 visibility_prior: tuple[float, float], visibility: bool = True,
                 batch_size: int = 200, n0: int = 100,
                 schedule: RobbinsMonro | None = None,
                 n_threads: int = 1, e_step_iter: int = 50,
                 e_step_tol: float = 1e-6, executor: Executor | None = None) -> None:
        # the batch algorithm supplies the shared pieces (init, tau, the bound's terms)
        self.batch = BatchLMV(n_topics, alpha=alpha, eta=eta,
                              blockmodel_prior=blockmodel_prior,
                              visibility_prior=visibility_prior, visibility=visibility,
                              n_threads=n_threads, e_step_iter=e_step_iter,
                              e_step_tol=e_step_tol)
        self.n_topics = n_topics
        self.alpha = self.batch.alpha
        self.visibility = bool(visibility)
        self.batch_size = int(batch_size)
        self.n0 = int(n0)
        self.schedule = RobbinsMonro(1.0, 5.0, 0.501) if schedule is None else schedule
        self.n_threads = int(n_threads)
        self.executor = executor
        self.name = "LMVS" if visibility else "PLLDAS"

    def fingerprint(self, data: LMVData) -> str:
        return data.fingerprint()

    def n_items(self, data: LMVData) -> int:
        return data.n_docs

    def n_minibatches(self, data: LMVData) -> int:
        return -(-data.n_docs // self.batch_size)

    def step_size(self, state: LMVSState, data: LMVData) -> float:
        """s = A1 / (s_w + m/M + A2)^v (supplement S4) with the sweep s_w counted from 1.

        The supplement writes this as s_t = w / (t + W)^v with w = A1 M^v and
        W = M (A2 + 1) - 1, i.e. t = (s_w - 1) M + m + 1 = 1, 2, ...: the first step of
        the first sweep (s_w = 1, m = 0) is A1 / (1 + A2)^v, e.g. 1 / 6^0.501 = 0.4075
        for Cora and KDD (A1 = 1, A2 = 5) and 2 / 4^0.501 = 0.9986 for the simulation
        (A1 = 2, A2 = 3): every step is <= 1 there.  ``state.updates`` counts the
        minibatches done (m + (s_w - 1) M), so s_w + m/M = 1 + updates / M.
        """
        return self.schedule(1.0 + state.updates / self.n_minibatches(data))

    @property
    def init_topics(self) -> np.ndarray | None:
        """(K, V) topic-word statistics to start from (``BatchLMV.init_topics``)."""
        return self.batch.init_topics

    @init_topics.setter
    def init_topics(self, value: np.ndarray | None) -> None:
        self.batch.init_topics = value

    def init(self, data: LMVData, rng: np.random.Generator) -> LMVSState:
        b = self.batch.init(data, rng)
        return LMVSState(gamma=b.gamma, lam=b.lam, a=b.a, b=b.b, g=b.g, h=b.h,
                         previous_diagonal=np.diag(b.a / (b.a + b.b)).copy(),
                         citation_topics=np.full((data.cites.nnz, 2), -1, np.int32),
                         batch_rng=np.random.default_rng(int(rng.integers(2**63))),
                         data_fingerprint=self.fingerprint(data), **stream_arrays(data))

    def attach(self, state: LMVSState, data: LMVData) -> None:
        """A state written before the stream was kept in it (an older checkpoint or
        model file, resumed by a fit on its data) takes the data as its stream."""
        if not state.has_stream:
            for name, value in stream_arrays(data).items():
                setattr(state, name, value)

    # ------------------------------------------------------------------ the stream
    def stream_length(self, state: LMVSState) -> int:
        return int(state.gamma.shape[0])

    def chunk_data(self, new: LMVSChunk) -> LMVData:
        return new.data()

    def stream_data(self, state: LMVSState) -> LMVData:
        """The documents and citations seen so far, as the data a sweep reads."""
        if not state.has_stream:
            raise ValueError("this LMVS state keeps no documents (a model file written "
                             "before partial_fit streams were saved); refit to continue")
        D, V = state.gamma.shape[0], state.lam.shape[1]
        counts = sp.csr_matrix((state.doc_counts, state.doc_words, state.doc_indptr),
                               shape=(D, V))
        return LMVData.build(counts, state.citations,
                             state.times if state.times.size else None)

    def extend(self, state: LMVSState, data: LMVData, new: LMVSChunk) -> LMVData:
        """The documents ``D0..D`` of ``new`` join the stream: they start from flat
        proportions (gamma = alpha + length / K) and the visibility prior (their
        minibatches' word E-step, topics as fitted, moves them first); the citations are
        those of ``new``, their topic pairs unknown (-1) until the pass ends."""
        D0, grown = data.n_docs, new.data()
        D, K, b0 = grown.n_docs, self.n_topics, self.batch
        self.add_chunk(state, D - D0)
        lengths = np.asarray(grown.counts[D0:].sum(axis=1)).ravel()
        state.gamma = np.vstack([state.gamma, self.alpha + lengths[:, None] / K
                                 * np.ones((1, K))])
        state.g = np.concatenate([state.g, np.full(D - D0, b0.g0)])
        state.h = np.concatenate([state.h, np.full(D - D0, b0.h0)])
        state.citation_topics = np.full((grown.cites.nnz, 2), -1, np.int32)
        state.data_fingerprint = self.fingerprint(grown)
        for name, value in stream_arrays(grown).items():
            setattr(state, name, value)
        return grown

    def check_values(self, state: LMVSState, data: LMVData) -> None:
        for name in ("gamma", "lam", "a", "b", "g", "h"):
            if np.any(getattr(state, name) <= 0):
                raise ValueError(f"state: {name} must be > 0")
        topics = state.citation_topics
        if topics.size and (topics.min() < -1 or topics.max() >= self.n_topics):
            raise ValueError(f"state: citation topics outside [0, {self.n_topics})")

    def _tau(self, state: LMVSState) -> tuple[np.ndarray, np.ndarray]:
        return self.batch._tau(state)

    # ------------------------------------------------------------------ one minibatch
    @contextlib.contextmanager
    def session(self, state: Any, data: Any) -> Iterator[None]:
        """The executor's resources for one run (a Dask executor connects once; the
        graph is sent by the first minibatch and everything is released on leaving)."""
        if self.executor is None:
            yield
            return
        with self.executor.session():
            yield

    def pair_statistics(self, state: LMVSState, batch: np.ndarray, elog_theta: np.ndarray,
                        data: LMVData, vs_link: np.ndarray, elog_tau: np.ndarray,
                        taubar: np.ndarray, Bbar: np.ndarray, seed: int) -> dict:
        """Steps 1-3: :func:`sampled_statistics` on ``n_threads`` threads, or, with an
        executor that ships data, the blocks as its tasks (:meth:`shipped_statistics`);
        the same statistics bit for bit."""
        if self.executor is None or not self.executor.ships_data:
            return sampled_statistics(batch, elog_theta, data, vs_link, elog_tau, taubar,
                                      Bbar, n0=self.n0, seed=seed, n_threads=self.n_threads)
        with self.executor.session():
            return self.shipped_statistics(state, batch, elog_theta, data, vs_link,
                                           elog_tau, taubar, Bbar, seed)

    def shipped_statistics(self, state: LMVSState, batch: np.ndarray,
                           elog_theta: np.ndarray, data: LMVData, vs_link: np.ndarray,
                           elog_tau: np.ndarray, taubar: np.ndarray, Bbar: np.ndarray,
                           seed: int) -> dict:
        """Steps 1-3 with each block of :func:`block_edges` one task of the executor
        (:func:`pair_block_task`), merged here in block order with :class:`PairMerge`.

        What travels (the executor counts it): the citation graph (:func:`graph_arrays`)
        replicated once per run; the per-document table the kernel reads -- E log theta
        (D, K), E log tau (D,), taubar (D,) -- replicated whole at the first minibatch,
        then per minibatch only the rows whose bits changed since (the previous
        minibatch's documents: steps 4 and 7 touch only those; :func:`update_rows`); per
        block the minibatch, vs_link and Bbar (K x K), the seed, the settings and its
        bounds; back, the block's column sums (their nonzero rows), S1, its rows of
        gout_rows, gin and T, and two counts.
        """
        ex = self.executor
        assert ex is not None
        shipped = state.workspace
        if (not isinstance(shipped, ShippedGraph) or shipped.data is not data
                or ex.replica(_GRAPH) is None):
            ex.replicate(_GRAPH, graph_arrays(data))
            state.workspace = ShippedGraph(data)
        table = (np.ascontiguousarray(elog_theta), np.ascontiguousarray(elog_tau),
                 np.ascontiguousarray(taubar))
        held = ex.replica(_TABLE)
        if held is None or held[0].shape != table[0].shape:
            ex.replicate(_TABLE, tuple(a.copy() for a in table))
        else:
            changed = (table[0].view(np.uint64) != held[0].view(np.uint64)).any(axis=1)
            changed |= table[1].view(np.uint64) != held[1].view(np.uint64)
            changed |= table[2].view(np.uint64) != held[2].view(np.uint64)
            rows = np.flatnonzero(changed)
            if rows.size:
                ex.update_replica(_TABLE, update_rows, rows, *(a[rows] for a in table))
        K = elog_theta.shape[1]
        batch = np.ascontiguousarray(batch, dtype=np.int64)
        shared = (batch, np.ascontiguousarray(vs_link), np.ascontiguousarray(Bbar),
                  int(self.n0), int(seed), 1e-6, 100)   # sampled_statistics' tol, max_inner
        edges = block_edges(batch.size)
        tasks = [(shared, edges[i], edges[i + 1]) for i in range(len(edges) - 1)]
        results = ex.map_with(pair_block_task, tasks, (_GRAPH, _TABLE))
        out = PairMerge(batch.size, K)
        for i, (rows, values, s1, rounds, n_pairs, gout_rows, gin, T) in enumerate(results):
            lo, hi = edges[i], edges[i + 1]
            out.gout_rows[lo:hi] = gout_rows
            out.gin[lo:hi] = gin
            out.T[lo:hi] = T
            g_cols = np.zeros((batch.size, K))
            g_cols[rows] = values
            out.merge((g_cols, s1, rounds, n_pairs))
        return out.result()

    def minibatch_step(self, state: LMVSState, data: LMVData, batch: np.ndarray,
                       rho: float) -> dict[str, float]:
        K, D = self.n_topics, data.n_docs
        S = np.sort(np.asarray(batch, dtype=np.int64))
        seed = int(state.batch_rng.integers(0, 2**63))
        taubar, elog_tau = self._tau(state)
        Bbar = state.a / (state.a + state.b)
        stats = self.pair_statistics(
            state, S, expected_log_dirichlet(state.gamma), data,
            digamma(state.a) - digamma(state.a + state.b), elog_tau, taubar, Bbar, seed)
        # steps 4-5: words of S, gamma, lambda
        counts = data.counts[S]
        gamma_hat = state.gamma[S].copy()
        word_stats = np.zeros((counts.shape[1], K))
        word_e_step(counts.indptr.astype(np.int64), counts.indices.astype(np.int32),
                    counts.data, np.ascontiguousarray(expected_log_dirichlet(state.lam).T),
                    np.full(K, self.batch.alpha), stats["gamma_pairs"], gamma_hat,
                    word_stats, np.zeros(S.size), self.batch.e_step_iter,
                    self.batch.e_step_tol)
        state.gamma[S] = positive_mix(state.gamma[S], gamma_hat, rho, "gamma")
        scale = D / S.size
        state.lam = positive_mix(state.lam, self.batch.eta + scale * word_stats.T, rho,
                                 "lambda")
        # step 6: the blockmodel (global; the D/|S| cluster estimator)
        b0 = self.batch
        state.a, state.b, s_ab = positive_step(state.a, state.b, blockmodel_target(
            state.a, state.b, b0.a0, b0.b0, scale * stats["S1"], scale * stats["T"],
            taubar[S]), rho)
        # step 7: the visibilities of the minibatch (local; full in-degree, no D/|S|)
        s_gh = rho
        if self.visibility:
            Bbar = state.a / (state.a + state.b)
            g, h, s_gh = positive_step(state.g[S], state.h[S], visibility_target(
                state.g[S], state.h[S], b0.g0, b0.h0, data.in_degree[S], stats["T"], Bbar),
                rho)
            state.g[S], state.h[S] = g, h
        return {"pairs": float(stats["n_pairs"]),
                "pair_rounds": stats["rounds"] / max(stats["n_pairs"], 1),
                "step_size": rho, "blockmodel_step": s_ab, "visibility_step": s_gh}

    # ------------------------------------------------------------------ one sweep
    def step(self, state: LMVSState, data: LMVData, passes: Passes | None = None
             ) -> dict[str, float]:
        """One sweep (``passes``: the engine's, when a checkpoint may cut it at a minibatch
        boundary); with an executor that ships data, ``info`` has the sweep's payload
        bytes."""
        before = payload_counters(self.executor)
        with self.session(state, data):
            info = self._sweep_step(state, data, passes)
        return with_payload(info, self.executor, before)

    def _sweep_step(self, state: LMVSState, data: LMVData, passes: Passes | None = None
                    ) -> dict[str, float]:
        pass_ = self.run_pass(state, data, self.sweep_order(state, data), passes,
                              summed=("pairs",))
        info = dict(pass_.last)
        info["pairs"] = pass_.sums["pairs"]
        info["minibatches"] = float(pass_.n_batches)
        self.end_pass(state, data, info)
        return info

    def end_pass(self, state: LMVSState, data: LMVData, info: dict[str, float]) -> None:
        """After a sweep or a chunk's pass: the stopping rule's ``blockmodel_change`` and
        the links' topic pairs at the new globals."""
        info["blockmodel_change"] = self._diagonal_change(state)
        self.refresh_citation_topics(state, data)

    def _diagonal_change(self, state: LMVSState) -> float:
        """||diag(Bbar) - previous|| / ||previous|| (the stopping rule); then remember it."""
        diagonal = np.diag(state.a / (state.a + state.b)).copy()
        previous = state.previous_diagonal
        norm = float(np.linalg.norm(previous))
        change = float(np.linalg.norm(diagonal - previous)) / norm if norm > 0 else np.inf
        state.previous_diagonal = diagonal
        return change

    def refresh_citation_topics(self, state: LMVSState, data: LMVData) -> None:
        """The hard topic pair of every link at the current globals."""
        coo = data.cites.tocoo()
        order = np.lexsort((coo.col, coo.row))
        topics = np.full((coo.nnz, 2), -1, np.int32)
        link_topic_pairs(expected_log_dirichlet(state.gamma),
                         coo.row[order].astype(np.int64), coo.col[order].astype(np.int64),
                         digamma(state.a) - digamma(state.a + state.b), self._tau(state)[1],
                         1e-6, 100, topics)
        state.citation_topics = topics

    def objective(self, state: LMVSState, data: LMVData) -> float:
        """NaN: L* needs every pair (use the batch algorithm's ``bound`` to evaluate it)."""
        return float("nan")
