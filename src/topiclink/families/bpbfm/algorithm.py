"""Batch Gibbs sampling of the bilinear Poisson factor models (BPBFM-1, BPBFM-2) as an
engine algorithm (state + step).

Hu, Rai & Carin, "Topic-Based Embeddings for Learning from Large Knowledge Graphs"
(AISTATS 2016) and its supplement; the model as ``docs/design/bpbfm.md`` states it.
BPBFM-1 is the case M = R, ``G^r = Lambda^r``, ``eta = I``; BPBFM-2 uses a dictionary
``Lambda^r = sum_m eta_mr G^m``.  Shrinkage of matrix m (per relation in BPBFM-1):
``G^m_k1k2 ~ Ga(shape^m_k1k2, rate beta)``, ``shape_kk = eps^m d^m_k``,
``shape_k1k2 = d^m_k1 d^m_k2`` (k1 != k2), ``d^m_k ~ Ga(gamma0/K, rate c0)``,
``eps^m ~ Ga(e0, rate f0)``; ``eta_mr ~ Ga(h0, rate q0)``; ``U[:, k] ~ Dir(a)``.

**Held-out entries are imputed.**  Latent counts live on the ones (binary data: a
zero-truncated Poisson draw), on the observed counts (count data: given), *and* on every
held-out entry of ``tensor.missing``, which gets ``X ~ Poisson(u_i^T Lambda^r u_j)`` (not
truncated) each sweep and is allocated like the ones.  This is exact data augmentation for
missing values (the missing cells are drawn from their predictive given the parameters,
then the parameters are drawn given the completed tensor), and it costs
O(#missing K) a sweep, plus O(K^2) per (relation, entity) group of held-out cells.
With it every one of the N x N cells of every relation is covered by a latent count
(zeros carry count 0 and need no work), self-pairs ``i == j`` included, so the exposure
is exactly

    theta^r_k1k2 = sum_{i,j} u_ik1 u_jk2 = (sum_i u_ik1)(sum_j u_jk2) = 1

(Dirichlet columns), and the Poisson factor ``exp(-sum_k1k2 theta G)`` does not depend on
U: the Dirichlet conditional of U's columns is exact.  Hence
``p_k1k2 = theta / (theta + beta) = 1 / (1 + beta)`` (BPBFM-2:
``theta_eff^m = sum_r eta_mr``, ``p^m = theta_eff / (theta_eff + beta)``).

One iteration (:meth:`BPBFMGibbs.step`):

1. latent counts and their allocation over (m, k1, k2)
   (:func:`topiclink.families.bpbfm.kernels.sweep_groups`: the entries grouped by the
   entity they share on one side of a relation, :mod:`topiclink.families.bpbfm.grouping`,
   so a group costs O(K^2) once and an entry O(K)), in fixed chunks of whole groups with
   their own xoshiro streams and private accumulators merged in chunk order, so
   ``n_jobs`` never changes the chain;
2. ``U[:, k] ~ Dir(a + n_1k, ..., a + n_Nk)``, ``n_ik`` the counts of entity i in factor k
   as sender (k1 = k) *and* receiver (k2 = k) (the supplement's eq. 4 counts senders only,
   which is wrong for the bilinear form; the Geweke test shows it);
3. ``l^m_k1k2 ~ CRT(X^m_k1k2, shape^m_k1k2)``;
4. ``d^m_k`` sequentially from the exact conditional after CRT augmentation
   ``Ga(gamma0/K + sum_k2 l_kk2 + sum_{k1!=k} l_k1k, rate c0 - eps ln(1 - p_kk)
   - sum_{k2!=k} d_k2 ln(1 - p_kk2) - sum_{k1!=k} d_k1 ln(1 - p_k1k))`` (d_k also enters
   column k of a directed matrix; the supplement prints the row terms only);
5. ``eps^m ~ Ga(e0 + sum_k l_kk, rate f0 - sum_k d_k ln(1 - p_kk))``;
6. ``G^m ~ Ga(shape^m + X^m, rate beta + theta_eff^m)`` (BPBFM-1: ``rate beta + 1``);
7. BPBFM-2: ``eta_mr ~ Ga(h0 + X_rm, rate q0 + sum_k1k2 G^m_k1k2)`` (theta = 1).

Steps 3-5 draw (l, d, eps) with G marginalised (X^m_k1k2 ~ NB(shape, p)) and step 6 draws
G from its full conditional right after: a valid partially collapsed Gibbs sampler (the
marginalised variable is drawn immediately after the steps that marginalise it, so every
step is a conditional of the same joint; van Dyk & Park 2008).

The printed variants (``u_counts="sender"``, ``d_conditional="rows"``) exist for the
Geweke test only.

**Self-pairs** (``self_pairs="scaled"``, an option beyond the paper).  Knowledge graphs
rarely hold a triple (i, r, i) (UMLS and Nations hold none), but the bilinear rate
``u_i^T Lambda^r u_i`` of a self-pair is as large as that of two entities of the same
factor, so the paper's model predicts self-loops wherever a relation links entities of one
factor.  The option thins the self-pair's count: ``X_iir ~ Poisson(rho_r u_i^T Lambda^r
u_i)``, ``rho_r ~ Beta(1, 1)`` per relation.  Augmented exactly by Poisson thinning: every
cell keeps its bilinear count ``Y ~ Poisson(rate)`` (so the exposure stays 1 and every
conditional above is unchanged, given Y), and a self-pair's observed count is ``X ~
Binomial(Y, rho_r)``.  Each sweep visits the N R self-pairs that are not held out
(:func:`topiclink.families.bpbfm.kernels.sweep_self_pairs`): X (0 for a zero, zero-truncated
Poisson(rho_r rate) for a one, the value for counts) and ``Y - X ~ Poisson((1 - rho_r)
rate)``, Y allocated like any count; then ``rho_r ~ Beta(1 + sum X, 1 + sum (Y - X))``.
A held-out self-pair is imputed as before (``Y ~ Poisson(rate)``, X marginalised).  Cost:
O(N R K^2) more a sweep.  The default ``"bilinear"`` is the paper's model.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from topiclink.data.tensor import RelationalTensor
from topiclink.distributions.counts import sample_crt
from topiclink.execution import Executor, padded_rows, run_blocks_in_order
from topiclink.families.bpbfm import kernels as kernels
from topiclink.families.bpbfm.grouping import EntryGroups, group_entries, kept_on
from topiclink.inference.engine import Algorithm, State, fingerprint
from topiclink.random import kernel_state, spawn

__all__ = ["BPBFMData", "BPBFMState", "BPBFMGibbs", "n_chunks_for", "chunked_counts",
           "chunk_arguments", "count_chunk"]

#: entries per chunk (the number of chunks is a function of the data only)
CHUNK_ENTRIES = 16384
#: at most this many chunks (streams)
MAX_CHUNKS = 64
_TINY = np.finfo(np.float64).tiny


def n_chunks_for(n_entries: int) -> int:
    """The number of fixed chunks (and streams) for ``n_entries`` entries."""
    return int(min(MAX_CHUNKS, max(1, -(-n_entries // CHUNK_ENTRIES))))


def chunked_counts(groups: EntryGroups, U: np.ndarray, L: np.ndarray, G: np.ndarray,
                   terms: tuple[np.ndarray, np.ndarray, np.ndarray],
                   rm_shape: tuple[int, int], sender_only: bool, streams: np.ndarray,
                   executor: Executor | int = 1
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Latent counts and allocation of the grouped entries ``groups``
    (:func:`~topiclink.families.bpbfm.grouping.group_entries` with ``len(streams)``
    chunks), chunk b on stream b with private accumulators merged in chunk order (the
    result does not depend on where the chunks run).

    ``executor``: a thread count or an :class:`~topiclink.execution.Executor`.  In
    process (serial, threads) each chunk reads the whole arrays; an executor that ships
    data (Dask) gets one self-contained task per non-empty chunk
    (:func:`chunk_arguments`: the chunk's groups on chunk-local ids, :func:`count_chunk`
    runs it), and the chunks' counts are added back in chunk order: the same integer sums
    and advanced streams, bit for bit.

    Returns (n_ent (N, K), x_cells (M, K, K), x_rm ``rm_shape``, total).
    """
    N, K = U.shape
    M = G.shape[0]
    n_chunks = streams.shape[0]
    if groups.n_chunks != n_chunks:
        raise ValueError(f"{groups.n_chunks} chunks of entries for {n_chunks} streams")
    ptr, rm, rw = terms
    arrays = groups.kernel_arrays()
    n_ent = np.zeros((N, K), dtype=np.int64)
    x_cells = np.zeros((M, K, K), dtype=np.int64)
    x_rm = np.zeros(rm_shape, dtype=np.int64)
    if getattr(executor, "ships_data", False):
        where: list[tuple[int, tuple[np.ndarray, np.ndarray, np.ndarray]]] = []
        tasks = []
        for b in range(n_chunks):
            if groups.chunk_ptr[b + 1] == groups.chunk_ptr[b]:
                continue                    # the kernel draws nothing on an empty chunk
            args, ids = chunk_arguments(groups, U, L, G, terms, rm_shape, b)
            tasks.append((args, sender_only, streams[b].copy()))
            where.append((b, ids))
        total = 0
        for (b, (ents, crels, mats)), (ne, xc, xr, tot, row) in zip(
                where, executor.map(_count_task, tasks), strict=True):  # type: ignore[union-attr]
            n_ent[ents] += ne
            x_cells[mats] += xc
            if rm_shape[0] > 0:
                x_rm[np.ix_(crels, mats)] += xr
            total += int(tot)
            streams[b] = row
        return n_ent, x_cells, x_rm, total
    threads = executor.n_workers if isinstance(executor, Executor) else int(executor)
    if threads <= 1:
        # one thread: every chunk adds into the totals directly (integer counts, so the
        # same sums as private accumulators merged in order, without a copy per chunk:
        # 76 MB each at K = 200 with FB15k-237's 237 relations)
        total = 0
        for b in range(n_chunks):
            total += int(kernels.sweep_groups(
                int(groups.chunk_ptr[b]), int(groups.chunk_ptr[b + 1]), *arrays, U, L, G,
                ptr, rm, rw, sender_only, streams[b], n_ent, x_cells, x_rm))
        return n_ent, x_cells, x_rm, total
    totals = [0]

    # each chunk's RNG state on cache lines of its own (adjacent 32-byte rows advanced by
    # two threads would share a line: false sharing)
    rows = padded_rows(streams)

    def run_block(b: int) -> tuple:
        ne, xc, xr = np.zeros_like(n_ent), np.zeros_like(x_cells), np.zeros_like(x_rm)
        tot = kernels.sweep_groups(int(groups.chunk_ptr[b]), int(groups.chunk_ptr[b + 1]),
                                   *arrays, U, L, G, ptr, rm, rw, sender_only, rows[b],
                                   ne, xc, xr)
        return ne, xc, xr, tot

    def merge(part: tuple) -> None:
        np.add(n_ent, part[0], out=n_ent)
        np.add(x_cells, part[1], out=x_cells)
        np.add(x_rm, part[2], out=x_rm)
        totals[0] += int(part[3])

    run_blocks_in_order(run_block, n_chunks, executor, merge)
    streams[:] = rows
    return n_ent, x_cells, x_rm, totals[0]


def _count_task(task: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """:func:`count_chunk` of one shipped task ``(arguments, sender_only, stream)``."""
    args, sender_only, stream = task
    return count_chunk(*args, sender_only, stream)


def count_chunk(arrays: tuple[np.ndarray, ...], g: np.ndarray, L: np.ndarray,
                G: np.ndarray, terms: tuple[np.ndarray, np.ndarray, np.ndarray],
                rm_shape: tuple[int, int], sender_only: bool, stream: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """Gibbs steps 1-2 (latent counts and their allocation) of one chunk (runs on a worker).

    Parameters
    ----------
    arrays : the chunk's groups on chunk-local ids, as
        :meth:`~topiclink.families.bpbfm.grouping.EntryGroups.kernel_arrays` orders them
    g : (n_e, K) the chunk's entity rows; L : (n_r, K, K) its relation matrices;
    G : (n_m, K, K) the matrices its terms name; terms : (rel_ptr, rel_m, rel_w) on
        chunk-local relation and matrix ids; rm_shape : (n_r, n_m) or (0, 0)
    stream : uint64 (4,) the chunk's xoshiro row (copied, not advanced in place)

    Returns
    -------
    (n_ent (n_e, K), x_cells (n_m, K, K), x_rm ``rm_shape``, total, the advanced stream)
    """
    ptr, rm, rw = terms
    K = g.shape[1]
    n_ent = np.zeros((g.shape[0], K), dtype=np.int64)
    x_cells = np.zeros((G.shape[0], K, K), dtype=np.int64)
    x_rm = np.zeros(rm_shape, dtype=np.int64)
    row = np.array(stream, dtype=np.uint64, copy=True)
    total = kernels.sweep_groups(0, int(arrays[1].size), *arrays, g, L, G, ptr, rm, rw,
                                 sender_only, row, n_ent, x_cells, x_rm)
    return n_ent, x_cells, x_rm, int(total), row


def chunk_arguments(groups: EntryGroups, g: np.ndarray, L: np.ndarray, G: np.ndarray,
                    terms: tuple[np.ndarray, np.ndarray, np.ndarray],
                    rm_shape: tuple[int, int], b: int
                    ) -> tuple[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """What chunk ``b`` of ``groups`` reads, on chunk-local ids.

    Returns ``(arguments, (entities, relations, matrices))``: the first five arguments of
    :func:`count_chunk` and the ids the chunk's rows stand for (to add its counts back).
    The kernel reads the same numbers in the same order as on the whole set of entries,
    so its draws are the same.
    """
    ptr, rm, rw = terms
    g_lo, g_hi = int(groups.chunk_ptr[b]), int(groups.chunk_ptr[b + 1])
    p_lo, p_hi = int(groups.group_ptr[g_lo]), int(groups.group_ptr[g_hi])
    n_g = g_hi - g_lo
    ents, inv = np.unique(np.concatenate([groups.group_entity[g_lo:g_hi],
                                          groups.other[p_lo:p_hi]]), return_inverse=True)
    crels, rinv = np.unique(groups.group_rel[g_lo:g_hi], return_inverse=True)
    counts = ptr[crels + 1] - ptr[crels]
    cptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    idx = (np.repeat(ptr[crels] - cptr[:-1], counts) + np.arange(int(cptr[-1]))
           ).astype(np.int64)
    mats, minv = np.unique(rm[idx], return_inverse=True)
    arrays = (groups.group_ptr[g_lo:g_hi + 1] - p_lo, inv[:n_g].astype(np.int32),
              rinv.astype(np.int32), np.ascontiguousarray(groups.group_by_head[g_lo:g_hi]),
              inv[n_g:].astype(np.int32), np.ascontiguousarray(groups.kinds[p_lo:p_hi]),
              np.ascontiguousarray(groups.values[p_lo:p_hi]))
    args = (arrays, np.ascontiguousarray(g[ents]), np.ascontiguousarray(L[crels]),
            np.ascontiguousarray(G[mats]),
            (cptr, minv.astype(np.int64), np.ascontiguousarray(rw[idx])),
            (crels.size, mats.size) if rm_shape[0] > 0 else (0, 0))
    return args, (ents, crels, mats)


@dataclass
class BPBFMData:
    """A relational tensor as the kernel reads it: the nonzero observed entries, then the
    held-out entries, with their kinds (``kernels.KIND_*``)."""

    heads: np.ndarray       # int32 (E,)
    rels: np.ndarray        # int32 (E,)
    tails: np.ndarray       # int32 (E,)
    kinds: np.ndarray       # int8 (E,)
    values: np.ndarray      # float64 (E,): the observed count (1 for a one, 0 held out)
    n_entities: int
    n_relations: int
    binary: bool
    n_observed: int         # entries [0, n_observed) are observed, the rest held out
    # self_pairs="scaled": every observed self-pair (i, r, i), zeros included (a one of
    # the diagonal is listed here, not among the entries above); empty otherwise
    self_entities: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    self_rels: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    self_values: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @classmethod
    def from_tensor(cls, tensor: RelationalTensor, binary: bool,
                    self_pairs: bool = False) -> BPBFMData:
        """Observed nonzero entries (values > 0; listed zeros are zeros like the unlisted),
        then the distinct held-out entries; an observed entry also listed as missing is
        held out.  ``self_pairs``: the observed self-pairs (i, r, i), zeros included, go
        to the ``self_*`` lists (``self_pairs="scaled"``)."""
        N, R = int(tensor.n_entities), int(tensor.n_relations)
        miss = np.asarray(tensor.missing, dtype=np.int64).reshape(-1, 3)
        mkey = np.unique((miss[:, 1] * N + miss[:, 0]) * N + miss[:, 2])
        h = np.asarray(tensor.heads, dtype=np.int64)
        r = np.asarray(tensor.relations, dtype=np.int64)
        t = np.asarray(tensor.tails, dtype=np.int64)
        v = np.asarray(tensor.values, dtype=np.float64)
        keep = (v > 0) & ~np.isin((r * N + h) * N + t, mkey)
        h, r, t, v = h[keep], r[keep], t[keep], v[keep]
        if binary:
            v = np.ones_like(v)
        selfs: dict[str, np.ndarray] = {}
        if self_pairs:
            diag = h == t
            cells = np.arange(N * R, dtype=np.int64)          # r * N + i
            sr, si = np.divmod(cells, N)
            observed = ~np.isin((sr * N + si) * N + si, mkey)
            sv = np.zeros(N * R)
            sv[r[diag] * N + h[diag]] = v[diag]
            selfs = {"self_entities": si[observed].astype(np.int32),
                     "self_rels": sr[observed].astype(np.int32),
                     "self_values": sv[observed]}
            h, r, t, v = h[~diag], r[~diag], t[~diag], v[~diag]
        mt = mkey % N
        mrest = mkey // N
        mh, mr = mrest % N, mrest // N
        n_obs = h.size
        kinds = np.concatenate([
            np.full(n_obs, kernels.KIND_ONE if binary else kernels.KIND_COUNT, np.int8),
            np.full(mkey.size, kernels.KIND_MISSING, np.int8)])
        return cls(np.concatenate([h, mh]).astype(np.int32),
                   np.concatenate([r, mr]).astype(np.int32),
                   np.concatenate([t, mt]).astype(np.int32), kinds,
                   np.concatenate([v, np.zeros(mkey.size)]), N, R, bool(binary), n_obs,
                   **selfs)

    @property
    def n_entries(self) -> int:
        return int(self.heads.size)

    def groups(self, n_chunks: int) -> EntryGroups:
        """Every entry grouped for the sweep, in ``n_chunks`` chunks (built once per chunk
        count, kept on the data)."""
        return kept_on(self, f"_gibbs_groups_{int(n_chunks)}", lambda d: group_entries(
            (d.heads, d.rels, d.tails, d.kinds, d.values), int(n_chunks)))

    @property
    def n_missing(self) -> int:
        return self.n_entries - self.n_observed

    @property
    def n_observed_cells(self) -> int:
        return self.n_entities ** 2 * self.n_relations - self.n_missing

    @property
    def n_self_pairs(self) -> int:
        return int(self.self_entities.size)

    def fingerprint(self) -> str:
        extra = ((self.self_entities, self.self_rels, self.self_values)
                 if self.n_self_pairs else ())
        return fingerprint(self.heads, self.rels, self.tails, self.kinds, self.values,
                           np.array([self.n_entities, self.n_relations]), *extra)


@dataclass(kw_only=True)
class BPBFMState(State):
    """U, the matrices G (BPBFM-1: Lambda), eta (BPBFM-2; (0, 0) for BPBFM-1), the
    shrinkage d and eps per matrix, and every random stream."""

    U: np.ndarray              # (N, K), columns sum to 1
    G: np.ndarray              # (M, K, K)
    eta: np.ndarray            # (M, R) or (0, 0)
    d: np.ndarray              # (M, K)
    eps: np.ndarray            # (M,)
    kernel_rng: np.ndarray     # uint64 (n_chunks, 4)
    global_rng: np.random.Generator
    # self_pairs="scaled": rho_r (R,) and the self-pairs' stream (1, 4); empty otherwise
    rho: np.ndarray = field(default_factory=lambda: np.zeros(0))
    self_rng: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.uint64))


class BPBFMGibbs(Algorithm):
    """Batch Gibbs sampler of BPBFM-1 (``n_dictionary=None``) or BPBFM-2.

    Parameters
    ----------
    n_topics : K
    n_dictionary : M (BPBFM-2) or None (BPBFM-1)
    a : Dirichlet parameter of U's columns
    gamma0, c0, e0, f0, beta, h0, q0 : the priors (module docstring)
    n_threads : threads running the chunks (never changes the chain)
    executor : where the chunks run, when given (an
        :class:`~topiclink.execution.Executor`, e.g. a
        :class:`~topiclink.execution.DaskExecutor`; overrides ``n_threads``; never
        changes the chain)
    u_counts : "both" (exact) or "sender" (the printed statistic; Geweke test only)
    d_conditional : "exact" or "rows" (the printed conditional; Geweke test only)
    self_pairs : "bilinear" (the paper) or "scaled" (a self-pair's rate times rho_r ~
        Beta(``self_prior``); module docstring)
    self_prior : the Beta prior (a, b) of rho_r
    """

    name = "BPBFM"
    state_class = BPBFMState

    def __init__(self, n_topics: int, n_dictionary: int | None = None, *,
                 a: float = 0.1, gamma0: float = 1.0, c0: float = 1.0, e0: float = 1.0,
                 f0: float = 1.0, beta: float = 1.0, h0: float = 1.0, q0: float = 1.0,
                 n_threads: int = 1, executor: Executor | None = None,
                 u_counts: str = "both",
                 d_conditional: str = "exact", self_pairs: str = "bilinear",
                 self_prior: tuple[float, float] = (1.0, 1.0)) -> None:
        if u_counts not in ("both", "sender"):
            raise ValueError(f"u_counts must be 'both' or 'sender', got {u_counts!r}")
        if d_conditional not in ("exact", "rows"):
            raise ValueError(f"d_conditional must be 'exact' or 'rows', got {d_conditional!r}")
        if self_pairs not in ("bilinear", "scaled"):
            raise ValueError(f"self_pairs must be 'bilinear' or 'scaled', got {self_pairs!r}")
        self.self_pairs = self_pairs
        self.self_prior = (float(self_prior[0]), float(self_prior[1]))
        self.K = int(n_topics)
        self.M = None if n_dictionary is None else int(n_dictionary)
        self.a, self.gamma0, self.c0, self.e0, self.f0 = (float(x) for x in
                                                          (a, gamma0, c0, e0, f0))
        self.beta, self.h0, self.q0 = float(beta), float(h0), float(q0)
        self.n_threads = max(1, int(n_threads))
        self.executor = executor
        self.u_counts = u_counts
        self.d_conditional = d_conditional
        self.name = "BPBFM-1" if self.M is None else "BPBFM-2"

    @property
    def model2(self) -> bool:
        return self.M is not None

    # ------------------------------------------------------------------ where it runs
    @property
    def runs_on(self) -> Executor | int:
        """What the chunks of step 1 run on: the executor, else the thread count."""
        return self.n_threads if self.executor is None else self.executor

    @contextlib.contextmanager
    def session(self, state: Any, data: Any) -> Iterator[None]:
        """The executor's resources for one run (a Dask executor connects once)."""
        if self.executor is None:
            yield
            return
        with self.executor.session():
            yield

    @property
    def scaled(self) -> bool:
        """Self-pairs thinned by rho_r (``self_pairs="scaled"``)."""
        return self.self_pairs == "scaled"

    def n_matrices(self, data: BPBFMData) -> int:
        return data.n_relations if self.M is None else self.M

    # ------------------------------------------------------------------ set-up
    def fingerprint(self, data: BPBFMData) -> str:
        return data.fingerprint()

    def initial_parameters(self, data: BPBFMData, rng: np.random.Generator
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(U, G, eta) to start from: random Dirichlet(1) columns of U; G at the scale of
        each relation's count (BPBFM-2: the mean count over M matrices); eta = 1."""
        N, R, K = data.n_entities, data.n_relations, self.K
        M = self.n_matrices(data)
        U = rng.standard_gamma(1.0, size=(N, K)) + 1e-12
        U /= U.sum(axis=0, keepdims=True)
        obs = data.values[:data.n_observed]
        per_rel = np.bincount(data.rels[:data.n_observed], weights=obs, minlength=R) + 1.0
        if self.model2:
            eta = np.ones((M, R))
            mean = np.full(M, per_rel.mean() / (M * K * K))
        else:
            eta = np.zeros((0, 0))
            mean = per_rel / (K * K)
        G = rng.standard_gamma(1.0, size=(M, K, K)) * mean[:, None, None] + 1e-12
        return U, G, eta

    def init(self, data: BPBFMData, rng: np.random.Generator) -> BPBFMState:
        init_rng, chain_rng, global_rng = spawn(rng, 3)
        M, K = self.n_matrices(data), self.K
        U, G, eta = self.initial_parameters(data, init_rng)
        state = BPBFMState(U=U, G=G, eta=eta, d=np.ones((M, K)), eps=np.ones(M),
                           kernel_rng=kernel_state(chain_rng, n_chunks_for(data.n_entries)),
                           global_rng=global_rng, data_fingerprint=self.fingerprint(data))
        if self.scaled:                  # starts at the paper's model (rho = 1)
            state.rho = np.ones(data.n_relations)
            state.self_rng = kernel_state(chain_rng, 1)
        return state

    def check_values(self, state: BPBFMState, data: BPBFMData) -> None:
        for name in ("U", "G", "d", "eps", "eta"):
            if np.any(getattr(state, name) < 0):
                raise ValueError(f"state: {name} holds negative values")
        if not np.allclose(state.U.sum(axis=0), 1.0, atol=1e-6):
            raise ValueError("state: the columns of U must sum to 1")
        if self.scaled and (state.rho.shape != (data.n_relations,)
                            or state.self_rng.shape != (1, 4)):
            raise ValueError("state: self_pairs='scaled' needs rho (one per relation) and "
                             "its stream (a state of a 'bilinear' fit cannot be resumed)")
        if np.any((state.rho < 0) | (state.rho > 1)):
            raise ValueError("state: rho holds values outside [0, 1]")

    # ------------------------------------------------------------------ pieces
    def relation_terms(self, state: BPBFMState, data: BPBFMData
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The CSR list (rel_ptr, rel_m, rel_w) of each relation's (matrix, weight)."""
        R = data.n_relations
        if not self.model2:
            return (np.arange(R + 1, dtype=np.int64), np.arange(R, dtype=np.int64),
                    np.ones(R))
        M = state.G.shape[0]
        return (np.arange(0, (R + 1) * M, M, dtype=np.int64),
                np.tile(np.arange(M, dtype=np.int64), R),
                np.ascontiguousarray(state.eta.T).ravel())

    def relation_matrices(self, state: BPBFMState) -> np.ndarray:
        """Lambda (R, K, K)."""
        if not self.model2:
            return state.G
        return np.einsum("mr,mkl->rkl", state.eta, state.G)

    def shapes(self, d: np.ndarray, eps: np.ndarray) -> np.ndarray:
        """shape^m_k1k2 = d_k1 d_k2 off the diagonal, eps d_k on it: (M, K, K)."""
        S = d[:, :, None] * d[:, None, :]
        idx = np.arange(d.shape[1])
        S[:, idx, idx] = eps[:, None] * d
        return S

    def counts(self, state: BPBFMState, data: BPBFMData
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Step 1: (n_ent (N, K), x_cells (M, K, K), x_rm (R, M) or (0, 0), total)."""
        M, R = state.G.shape[0], data.n_relations
        ptr, rm, rw = self.relation_terms(state, data)
        return chunked_counts(
            data.groups(state.kernel_rng.shape[0]), state.U,
            np.ascontiguousarray(self.relation_matrices(state)), state.G, (ptr, rm, rw),
            (R, M) if self.model2 else (0, 0), self.u_counts == "sender",
            state.kernel_rng, self.runs_on)

    def self_pair_counts(self, state: BPBFMState, data: BPBFMData, n_ent: np.ndarray,
                         x_cells: np.ndarray, x_rm: np.ndarray) -> tuple[int, np.ndarray]:
        """``self_pairs="scaled"``: the observed self-pairs' counts, added in place to the
        allocation counts; returns (total of Y, (R, 2) sums of X and Y - X)."""
        ptr, rm, rw = self.relation_terms(state, data)
        self_counts = np.zeros((data.n_relations, 2), dtype=np.int64)
        total = kernels.sweep_self_pairs(
            data.self_entities, data.self_rels, data.self_values, data.binary, state.U,
            np.ascontiguousarray(self.relation_matrices(state)), state.G, ptr, rm, rw,
            state.rho, state.self_rng[0], n_ent, x_cells, x_rm, self_counts)
        return int(total), self_counts

    def draw_u(self, rng: np.random.Generator, n_ent: np.ndarray) -> np.ndarray:
        """Step 2: every column of U from its Dirichlet conditional."""
        g = rng.standard_gamma(self.a + n_ent)
        s = g.sum(axis=0, keepdims=True)
        bad = s[0] <= 0
        if bad.any():                      # every gamma draw underflowed (tiny a)
            g[:, bad] = 1.0
            s = g.sum(axis=0, keepdims=True)
        return g / s

    def draw_shrinkage(self, rng: np.random.Generator, x_cells: np.ndarray, d: np.ndarray,
                       eps: np.ndarray, theta_eff: np.ndarray) -> None:
        """Steps 3-5 for the matrices given (rows of ``d`` (M', K), ``eps`` (M',),
        ``x_cells`` (M', K, K) whole counts, ``theta_eff`` (M',)), in place: l ~ CRT, then
        d (sequentially) and eps, with G marginalised."""
        K = self.K
        log1p_ratio = np.log1p(theta_eff / self.beta)       # -ln(1 - p^m), (M',)
        l = sample_crt(x_cells, self.shapes(d, eps), random_state=rng)
        diag = l[:, np.arange(K), np.arange(K)]              # (M', K)
        rows = l.sum(axis=2)                                 # sum_k2 l_kk2 (M', K)
        cols = l.sum(axis=1)                                 # sum_k1 l_k1k (M', K)
        for k in range(K):
            others = d.sum(axis=1) - d[:, k]
            if self.d_conditional == "exact":
                shape = self.gamma0 / K + rows[:, k] + cols[:, k] - diag[:, k]
                rate = self.c0 + log1p_ratio * (eps + 2.0 * others)
            else:
                shape = self.gamma0 / K + rows[:, k]
                rate = self.c0 + log1p_ratio * (eps + others)
            d[:, k] = np.maximum(rng.standard_gamma(shape) / rate, _TINY)
        shape = self.e0 + diag.sum(axis=1)
        rate = self.f0 + log1p_ratio * d.sum(axis=1)
        eps[:] = np.maximum(rng.standard_gamma(shape) / rate, _TINY)

    # ------------------------------------------------------------------ one iteration
    def step(self, state: BPBFMState, data: BPBFMData) -> dict[str, float]:
        rng = state.global_rng
        n_ent, x_cells, x_rm, total = self.counts(state, data)
        if self.scaled:
            extra, self_counts = self.self_pair_counts(state, data, n_ent, x_cells, x_rm)
            total += extra
        state.U = self.draw_u(rng, n_ent)
        M = state.G.shape[0]
        theta_eff = state.eta.sum(axis=1) if self.model2 else np.ones(M)
        self.draw_shrinkage(rng, x_cells, state.d, state.eps, theta_eff)
        shape = self.shapes(state.d, state.eps) + x_cells
        state.G = rng.standard_gamma(shape) / (self.beta + theta_eff)[:, None, None]
        if self.model2:
            rate = self.q0 + state.G.sum(axis=(1, 2))                       # (M,)
            state.eta = rng.standard_gamma(self.h0 + x_rm.T) / rate[:, None]
        if self.scaled:
            a, b = self.self_prior
            state.rho = rng.beta(a + self_counts[:, 0], b + self_counts[:, 1])
        return {"latent_count": float(total)}

    def objective(self, state: BPBFMState, data: BPBFMData) -> float:
        """Training log-likelihood per observed cell.

        Binary: ``sum_ones log(1 - e^{-rate}) - sum_{observed zeros} rate``; counts:
        ``sum_nonzero [x log rate - lgamma(x + 1)] - sum_{observed zeros} rate``.  The
        zeros are never visited: the sum of the rates over *all* N^2 R cells is
        ``sum_r sum_k1k2 Lambda^r_k1k2 theta_k1k2 = sum Lambda`` (theta = 1), so
        ``sum_{observed zeros} rate = sum Lambda - sum_{nonzero} rate - sum_{held out}
        rate``, and the total is ``sum_nonzero [log p(x | rate) + rate] + sum_{held out}
        rate - sum Lambda``: the rates grouped as the sweep groups them, O(#groups K^2 +
        (#nonzero + #held out) K).  ``self_pairs="scaled"``: an
        observed self-pair's rate is ``rho_r rate``, so its terms use that rate and
        ``(1 - rho_r) rate`` is added back for each.
        """
        L = np.ascontiguousarray(self.relation_matrices(state))
        groups = data.groups(n_chunks_for(data.n_entries))
        rates = kernels.group_rates(*groups.kernel_arrays()[:5], state.U, L)
        held_out = groups.kinds == kernels.KIND_MISSING
        ll = kernels.ones_loglik(rates[~held_out], groups.values[~held_out], data.binary)
        ll += float(rates[held_out].sum()) - float(L.sum())
        if self.scaled and data.n_self_pairs:
            e = data.self_entities
            bilinear = kernels.entry_rates(e, data.self_rels, e, state.U, L)
            rho = state.rho[data.self_rels]
            nz = data.self_values > 0
            ll += kernels.ones_loglik(rho[nz] * bilinear[nz], data.self_values[nz],
                                      data.binary)
            ll += float(((1.0 - rho) * bilinear).sum())
        return ll / max(data.n_observed_cells, 1)

    def retained(self, state: BPBFMState) -> dict[str, np.ndarray]:
        """A posterior sample as the estimator keeps it (the engine copies it): U,
        Lambda (R, K, K) and, with ``self_pairs="scaled"``, the self-pair scales rho."""
        out = {"U": state.U, "relation_matrices": self.relation_matrices(state)}
        if self.scaled:
            out["rho"] = state.rho
        return out

    def averaged(self, state: BPBFMState, data: BPBFMData) -> dict[str, np.ndarray]:
        out = {"U": state.U, "relation_matrices": self.relation_matrices(state),
               "d": state.d}
        if self.model2:
            out["G"] = state.G
            out["eta"] = state.eta
        if self.scaled:
            out["rho"] = state.rho
        return out
