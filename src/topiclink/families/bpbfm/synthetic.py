"""Bilinear Poisson factor models for multi-relational data (BPBFM-1, BPBFM-2).

Hu, Rai & Carin (2016), "Topic-Based Embeddings for Learning from Large Knowledge
Graphs"; ``docs/design/bpbfm.md``.  :func:`make_bpbfm_data` draws a knowledge graph
(an ``N x N x R`` :class:`~topiclink.data.tensor.RelationalTensor` of ones or counts) from
the model with a planted block structure, and :func:`draw_bpbfm_counts` is its sparse
Poisson sampler (never the dense tensor).
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from topiclink.data.checks import check_n_topics
from topiclink.data.tensor import RelationalTensor
from topiclink.datasets.synthetic._common import check_int
from topiclink.random import RandomState, as_generator

__all__ = ["BPBFMTruth", "draw_bpbfm_counts", "make_bpbfm_data", "planted_bpbfm_pattern"]

logger = logging.getLogger(__name__)

#: Up to this many cells ``N * N * R`` the expected number of ones is computed exactly
#: (blockwise, never more than ``_BLOCK_CELLS`` rates at once); beyond, by its series.
_EXACT_CELLS = 20_000_000
_BLOCK_CELLS = 2_000_000

_DEFAULT_DENSITY = 0.03


@dataclass(frozen=True, eq=False, kw_only=True)
class BPBFMTruth:
    """The parameters that generated a :func:`make_bpbfm_data` tensor.

    Attributes
    ----------
    U : ndarray of float64, shape (N, K)
        Entity factors; each column is a distribution over the entities (sums to 1).
    relation_matrices : ndarray of float64, shape (R, K, K)
        Lambda^r; ``Lambda^r[k1, k2]`` is the rate between head factor k1 and tail factor
        k2.  Model 2: ``einsum("mr,mkl->rkl", eta, dictionary)``.
    model : int
        1 (BPBFM-1) or 2 (BPBFM-2).
    binary : bool
        Whether the tensor holds ``1(X >= 1)`` (True) or the counts X.
    clusters : ndarray of int64, shape (N,), or None
        The factor each entity mainly belongs to (None with a symmetric Dirichlet).
    pattern : ndarray of float64, shape (R, K, K) (model 1) or (M, K, K) (model 2)
        The planted relative weights: the prior mean of ``relation_matrices``
        (``dictionary``) before the density scale (see :func:`planted_bpbfm_pattern`).
    dictionary : ndarray of float64, shape (M, K, K), or None
        G^m (model 2).
    eta : ndarray of float64, shape (M, R), or None
        eta_mr (model 2).
    eta_pattern : ndarray of float64, shape (M, R), or None
        The prior mean of eta (model 2).
    dirichlet_a : ndarray of float64, shape (2,)
        (a_in, a_out) of the columns of U (equal for the symmetric prior).
    gamma_shape : float
        g: every gamma draw has shape ``g * mean`` and rate g.
    scale : float
        The factor applied to the drawn matrices to reach the requested density.
    expected_count : float
        ``E[sum X] = sum_r sum_{i,j} u_i^T Lambda^r u_j`` (exact); also the variance of the
        total count.
    expected_n_ones : float
        Expected number of nonzero entries, ``sum (1 - exp(-u_i^T Lambda^r u_j))`` over all
        ``N^2 R`` cells (self-pairs included): the number of ones when binary.
    n_ones_variance : float
        ``sum p (1 - p)`` over the cells, ``p = 1 - exp(-rate)``.
    expected_exact : bool
        Whether ``expected_n_ones`` and ``n_ones_variance`` were summed over every cell
        (``N^2 R <= 2e7``, or rates too large for the series) or from the third-order
        series in the rates (larger sparse tensors; relative error below 1e-6).

    No ``N x N`` quantity is stored; :meth:`rate` and :meth:`proba` give given cells.
    """

    U: np.ndarray
    relation_matrices: np.ndarray
    model: int = 1
    binary: bool = True
    clusters: np.ndarray | None = None
    pattern: np.ndarray
    dictionary: np.ndarray | None = None
    eta: np.ndarray | None = None
    eta_pattern: np.ndarray | None = None
    dirichlet_a: np.ndarray
    gamma_shape: float = 10.0
    scale: float = 1.0
    expected_count: float = 0.0
    expected_n_ones: float = 0.0
    n_ones_variance: float = 0.0
    expected_exact: bool = True

    @property
    def n_entities(self) -> int:
        return int(self.U.shape[0])

    @property
    def n_topics(self) -> int:
        """K, the number of factors."""
        return int(self.U.shape[1])

    @property
    def n_relations(self) -> int:
        return int(self.relation_matrices.shape[0])

    def rate(self, heads: np.ndarray, relations: np.ndarray, tails: np.ndarray) -> np.ndarray:
        """``u_i^T Lambda^r u_j``, the Poisson rate of the cells ``(heads[n], relations[n],
        tails[n])``."""
        h = np.asarray(heads, dtype=np.int64)
        r = np.asarray(relations, dtype=np.int64)
        t = np.asarray(tails, dtype=np.int64)
        return np.einsum("nk,nkl,nl->n", self.U[h], self.relation_matrices[r], self.U[t])

    def proba(self, heads: np.ndarray, relations: np.ndarray, tails: np.ndarray) -> np.ndarray:
        """``P(b = 1) = 1 - exp(-u_i^T Lambda^r u_j)`` for the given cells."""
        return -np.expm1(-self.rate(heads, relations, tails))


# ---------------------------------------------------------------------- checks
def _check_number(value: object, name: str, *, low: float = 0.0, strict: bool = True,
                  high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not np.isfinite(value) or (value <= low if strict else value < low) or \
            (high is not None and value > high):
        bound = f"> {low}" if strict else f">= {low}"
        if high is not None:
            bound += f" and <= {high}"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return float(value)


def _check_dirichlet(value: object) -> np.ndarray:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        a = _check_number(value, "dirichlet_a")
        return np.array([a, a])
    try:
        a_in, a_out = value  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"dirichlet_a must be a number or a pair (a_in, a_out), got "
                         f"{value!r}") from None
    return np.array([_check_number(a_in, "dirichlet_a[0]"),
                     _check_number(a_out, "dirichlet_a[1]")])


# ---------------------------------------------------------------------- planted structure
def planted_bpbfm_pattern(n_matrices: int, n_topics: int, *,
                          active_fraction: float = 0.5,
                          n_off_diagonal: int = 1, off_diagonal_weight: float = 0.5,
                          background: float = 0.01,
                          random_state: RandomState = None) -> np.ndarray:
    """Planted relative weights of ``n_matrices`` K x K interaction matrices.

    In every matrix each factor is active on the diagonal (weight 1: entities of one
    factor relate among themselves) with probability ``active_fraction``, at least one
    factor per matrix; ``n_off_diagonal`` distinct ordered pairs ``k1 != k2`` (drawn
    uniformly) get ``off_diagonal_weight`` (head factor k1 relates to tail factor k2, not
    back); every other entry is ``background``.

    Returns
    -------
    ndarray of float64, shape (n_matrices, K, K)
    """
    n = check_int(n_matrices, "n_matrices", 1)
    K = check_n_topics(n_topics, "n_topics")
    frac = _check_number(active_fraction, "active_fraction", strict=False, high=1.0)
    n_off = check_int(n_off_diagonal, "n_off_diagonal", 0)
    if n_off > K * (K - 1):
        raise ValueError(f"n_off_diagonal must be <= K (K - 1) = {K * (K - 1)}, got {n_off}")
    w_off = _check_number(off_diagonal_weight, "off_diagonal_weight")
    bg = _check_number(background, "background", strict=False)
    rng = as_generator(random_state)
    P = np.full((n, K, K), bg)
    off = np.flatnonzero(~np.eye(K, dtype=bool))
    for m in range(n):
        active = rng.random(K) < frac
        if not active.any():
            active[rng.integers(K)] = True
        P[m][np.diag_indices(K)] = np.where(active, 1.0, bg)
        if n_off:
            P[m].flat[rng.choice(off, size=n_off, replace=False)] = w_off
    return P


def _eta_pattern(rng: np.random.Generator, M: int, R: int, bg: float) -> np.ndarray:
    """Each relation: a home dictionary element (weight 1, spread evenly over the elements),
    with probability 1/2 a second one (weight 0.5), ``bg`` elsewhere."""
    E = np.full((M, R), bg)
    home = rng.permutation(np.arange(R) % M)
    E[home, np.arange(R)] = 1.0
    if M > 1:
        second = (home + rng.integers(1, M, size=R)) % M
        mix = np.flatnonzero(rng.random(R) < 0.5)
        E[second[mix], mix] = 0.5
    return E


def _draw_u(rng: np.random.Generator, N: int, K: int,
            a: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """U with Dirichlet columns over the entities; planted clusters when a_in != a_out."""
    clusters = None if a[0] == a[1] else rng.permutation(np.arange(N) % K)
    U = np.empty((N, K))
    for k in range(K):
        alpha = np.full(N, a[0]) if clusters is None else np.where(clusters == k, a[0], a[1])
        U[:, k] = rng.dirichlet(alpha)
    U /= U.sum(axis=0, keepdims=True)
    return U, clusters


# ---------------------------------------------------------------------- expectations
def _rate_blocks(U: np.ndarray, L: np.ndarray) -> Iterator[np.ndarray]:
    """The rates ``U Lambda^r U^T`` of every cell, in blocks of at most ``_BLOCK_CELLS``."""
    N = U.shape[0]
    rows = max(1, _BLOCK_CELLS // N)
    for r in range(L.shape[0]):
        right = L[r] @ U.T                                                   # (K, N)
        for start in range(0, N, rows):
            yield U[start:start + rows] @ right


def _exact_sums(U: np.ndarray, L: np.ndarray, c: float) -> tuple[float, float, float]:
    """``sum p``, ``d/dc sum p`` and ``sum p (1 - p)`` for rates ``c x``, p = 1 - e^{-cx}."""
    f = df = var = 0.0
    for x in _rate_blocks(U, L):
        p = -np.expm1(-c * x)
        q = 1.0 - p
        f += float(p.sum())
        df += float((x * q).sum())
        var += float((p * q).sum())
    return f, df, var


def _power_sums(U: np.ndarray, L: np.ndarray) -> tuple[float, float, float]:
    """``S_n = sum over all cells of rate^n``, n = 1, 2, 3, in O(N K^3 + R K^4)."""
    s = U.sum(axis=0)
    C = U.T @ U
    S1 = float(np.einsum("k,rkl,l->", s, L, s))
    S2 = float(np.einsum("rab,rab->", L, np.einsum("ac,rcd,db->rab", C, L, C)))
    K = U.shape[1]
    T = np.zeros((K, K, K))
    for start in range(0, U.shape[0], 4096):
        B = U[start:start + 4096]
        T += np.einsum("ia,ib,ic->abc", B, B, B)
    W = np.einsum("ace,rab->rbce", T, L)
    W = np.einsum("rbce,rcd->rbde", W, L)
    W = np.einsum("rbde,ref->rbdf", W, L)
    S3 = float(np.einsum("rbdf,bdf->", W, T))
    return S1, S2, S3


def _max_rate_bound(U: np.ndarray, L: np.ndarray) -> float:
    """An upper bound of every rate: ``max_i |u_i|^2 * max_r ||Lambda^r||_2``."""
    return float((U * U).sum(axis=1).max() * np.linalg.norm(L, ord=2, axis=(1, 2)).max())


def _solve_scale(U: np.ndarray, L: np.ndarray, target: float, binary: bool,
                 exact: bool, sums: tuple[float, float, float]) -> float:
    """The factor c with ``E[#ones](c L) = target`` (binary) or ``E[count] = target``."""
    S1, S2, S3 = sums
    if S1 <= 0:
        raise ValueError("the drawn relation matrices are all zero; raise background or "
                         "active_fraction")
    c = target / S1
    if not binary:
        return c
    cells = U.shape[0] ** 2 * L.shape[0]
    if target >= cells:
        raise ValueError(f"cannot expect {target:g} ones among {cells} cells")
    for _ in range(100):
        if exact:
            f, df, _ = _exact_sums(U, L, c)
        else:
            f = c * S1 - c * c * S2 / 2 + c ** 3 * S3 / 6
            df = S1 - c * S2 + c * c * S3 / 2
        if df <= 0:
            break
        step = (target - f) / df
        c += step
        if abs(step) <= 1e-10 * c:
            return c
    raise ValueError(f"cannot reach {target:g} expected ones with this structure at this "
                     f"size (too dense for the planted blocks); lower density or n_ones, or "
                     f"raise background")


# ---------------------------------------------------------------------- sampling
def draw_bpbfm_counts(U: np.ndarray, relation_matrices: np.ndarray,
                      random_state: RandomState = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Sample ``X^r_ij ~ Poisson(u_i^T Lambda^r u_j)`` for all cells; return the nonzeros.

    Exact and sparse (Poisson superposition and thinning): ``X^r_ij = sum_{k1,k2}
    X^r_ij,k1k2`` with independent ``X^r_ij,k1k2 ~ Poisson(u_ik1 Lambda^r_k1k2 u_jk2)``,
    so the total of factor pair (k1, k2) in relation r is
    ``Poisson(Lambda^r_k1k2 * sum_i u_ik1 * sum_j u_jk2)`` and, given it, each of its
    counts falls on head i with probability ``u_ik1 / sum_i u_ik1`` and independently on
    tail j with ``u_jk2 / sum_j u_jk2``.  Time O(R K^2 + K N + X log N) and memory
    O(X + N K + R K^2) for X drawn counts; the dense tensor is never built.  Every cell is
    drawn, self-pairs ``i == j`` included.

    Parameters
    ----------
    U : ndarray of shape (N, K), entries >= 0, no zero column
    relation_matrices : ndarray of shape (R, K, K), entries >= 0
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    heads, relations, tails : ndarray of int32
        The cells with ``X >= 1``, sorted by (relation, head, tail).
    counts : ndarray of int64
        Their counts X.
    """
    U = np.asarray(U, dtype=np.float64)
    L = np.asarray(relation_matrices, dtype=np.float64)
    if U.ndim != 2 or L.ndim != 3 or L.shape[1:] != (U.shape[1], U.shape[1]):
        raise ValueError(f"U must be (N, K) and relation_matrices (R, K, K), got shapes "
                         f"{U.shape} and {L.shape}")
    if not (np.isfinite(U).all() and (U >= 0).all() and np.isfinite(L).all()
            and (L >= 0).all()):
        raise ValueError("U and relation_matrices must be finite and >= 0")
    s = U.sum(axis=0)
    if (s <= 0).any():
        raise ValueError(f"column {int(np.flatnonzero(s <= 0)[0])} of U is zero")
    rng = as_generator(random_state)
    N, K = U.shape
    R = L.shape[0]
    totals = rng.poisson(L * s[None, :, None] * s[None, None, :]).transpose(1, 2, 0)
    n = int(totals.sum())                                                    # (K1, K2, R)
    rel = np.repeat(np.tile(np.arange(R, dtype=np.int64), K * K), totals.ravel())
    heads = np.empty(n, dtype=np.int64)
    tails = np.empty(n, dtype=np.int64)
    cdf = np.cumsum(U, axis=0)
    cdf /= cdf[-1]
    pos = 0
    for k1 in range(K):
        n1 = int(totals[k1].sum())
        heads[pos:pos + n1] = np.searchsorted(cdf[:, k1], rng.random(n1), side="right")
        for k2 in range(K):
            n12 = int(totals[k1, k2].sum())
            tails[pos:pos + n12] = np.searchsorted(cdf[:, k2], rng.random(n12), side="right")
            pos += n12
    np.minimum(heads, N - 1, out=heads)   # guards rounding of cdf[-1]; never reached
    np.minimum(tails, N - 1, out=tails)
    key = (rel * N + heads) * N + tails
    del rel, heads, tails
    key, counts = np.unique(key, return_counts=True)
    tails_out = (key % N).astype(np.int32)
    key //= N
    heads_out = (key % N).astype(np.int32)
    rel_out = (key // N).astype(np.int32)
    return heads_out, rel_out, tails_out, counts.astype(np.int64)


# ---------------------------------------------------------------------- generator
def make_bpbfm_data(n_entities: int = 100, n_relations: int = 10, n_topics: int = 5, *,
                    model: int = 1, n_dictionary: int | None = None,
                    dirichlet_a: float | tuple[float, float] = (1.0, 0.02),
                    binary: bool = True, density: float | None = None,
                    n_ones: float | None = None, active_fraction: float = 0.5,
                    n_off_diagonal: int = 1, off_diagonal_weight: float = 0.5,
                    background: float = 0.01, gamma_shape: float = 10.0,
                    random_state: RandomState = None
                    ) -> tuple[RelationalTensor, BPBFMTruth]:
    """Draw a multi-relational tensor (a knowledge graph) from BPBFM-1 or BPBFM-2.

    The generative process (``docs/design/bpbfm.md``), entities i, j = 1..N, relations
    r = 1..R, factors k = 1..K::

        U[:, k]  ~ Dir(a_1k, ..., a_Nk)        a_ik = a_in if c_i = k else a_out
        model 1:  Lambda^r_k1k2 ~ Gamma(g P^r_k1k2, rate g)            (mean P^r_k1k2)
        model 2:  G^m_k1k2 ~ Gamma(g P^m_k1k2, rate g),  eta_mr ~ Gamma(g E_mr, rate g),
                  Lambda^r = sum_m eta_mr G^m
        Lambda <- s Lambda  (s sets the density; model 2: G <- s G)
        X^r_ij ~ Poisson(u_i^T Lambda^r u_j),   b^r_ij = 1(X^r_ij >= 1)

    **Planted structure.**  Entities are split evenly at random into K clusters c_i; with
    ``a_in = 1`` and ``a_out = 0.02`` each factor's distribution puts about 93% of its mass
    on its own cluster, whatever N (a scalar ``dirichlet_a`` gives the note's symmetric
    Dir(a) and no clusters).  The matrices' prior means P are
    :func:`planted_bpbfm_pattern`: a few strong diagonal blocks (cluster k relates within
    itself under relation r), ``n_off_diagonal`` directed off-diagonal blocks, a weak
    ``background`` elsewhere; ``g = gamma_shape`` sets the noise (coefficient of variation
    ``1 / sqrt(g P)``: 0.32 on the planted blocks, 3 on the background).  Model 2: M
    dictionary matrices with that pattern; each relation loads on a home element
    (weight 1, the relations spread evenly over the elements) and, with probability 1/2,
    on a second one (weight 0.5), ``background`` elsewhere.  The hierarchical shrinkage
    priors of the note (d, eps, the gamma shapes) are replaced by these fixed shapes.

    **Density.**  After the draw the matrices are scaled so that the expected number of
    ones (``binary``) or the expected total count (counts) is ``n_ones``, by default
    ``density * N^2 R``.  Since the columns of U sum to 1, ``E[total count] = sum of all
    Lambda entries``.  Self-pairs ``i == j`` are cells like any other (the note removes
    them from the exposure only "if they are excluded"; knowledge graphs exclude nothing).

    **Sampling.**  :func:`draw_bpbfm_counts`: time O(R K^2 + N K + X log N), memory
    O(X + N K + R K^2) for X counts, never the N x N x R tensor.  100k entities, 500
    relations and 5 million ones take a few seconds.

    Parameters
    ----------
    n_entities, n_relations, n_topics : int
        N (>= 2), R (>= 1), K (>= 2).
    model : {1, 2}
        BPBFM-1 (a free Lambda^r per relation) or BPBFM-2 (a shared dictionary).
    n_dictionary : int, optional
        M for model 2 (default ``ceil(sqrt(R))``); must be None for model 1.
    dirichlet_a : float or (float, float)
        The Dirichlet parameter of U's columns: ``(a_in, a_out)`` (planted clusters) or one
        value (symmetric, no clusters).
    binary : bool
        True: the tensor holds the ones ``1(X >= 1)`` (value 1); False: the counts X.
    density : float in (0, 1), optional
        Expected ones (or total count) per cell; default 0.03.
    n_ones : float, optional
        Expected number of ones (binary) or total count; instead of ``density``.
    active_fraction, n_off_diagonal, off_diagonal_weight, background : see
        :func:`planted_bpbfm_pattern`
    gamma_shape : float
        g (> 0) above.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    tensor : RelationalTensor
        Fully observed (``missing`` empty); entries sorted by (relation, head, tail);
        entity names ``e0..e{N-1}``, relation names ``r0..r{R-1}``.
    truth : BPBFMTruth
        U, relation matrices, clusters, pattern, model-2 dictionary and eta, the expected
        number of ones and its variance.
    """
    N = check_int(n_entities, "n_entities", 2)
    R = check_int(n_relations, "n_relations", 1)
    K = check_n_topics(n_topics, "n_topics")
    if model not in (1, 2) or isinstance(model, bool):
        raise ValueError(f"model must be 1 (BPBFM-1) or 2 (BPBFM-2), got {model!r}")
    if model == 1 and n_dictionary is not None:
        raise ValueError("n_dictionary is for model=2 only")
    M = int(np.ceil(np.sqrt(R))) if n_dictionary is None else \
        check_int(n_dictionary, "n_dictionary", 1)
    a = _check_dirichlet(dirichlet_a)
    g = _check_number(gamma_shape, "gamma_shape")
    bg = _check_number(background, "background", strict=False)
    cells = N * N * R
    if density is not None and n_ones is not None:
        raise ValueError("give density or n_ones, not both")
    if n_ones is None:
        dens = _DEFAULT_DENSITY if density is None else _check_number(density, "density",
                                                                        high=1.0)
        target = dens * cells
    else:
        target = _check_number(n_ones, "n_ones")
    if binary and target >= cells:
        raise ValueError(f"n_ones / density asks for {target:g} ones among {cells} cells")

    rng = as_generator(random_state)
    U, clusters = _draw_u(rng, N, K, a)
    pattern = planted_bpbfm_pattern(R if model == 1 else M, K, active_fraction=active_fraction,
                                    n_off_diagonal=n_off_diagonal,
                                    off_diagonal_weight=off_diagonal_weight, background=bg,
                                    random_state=rng)
    mats = rng.gamma(g * pattern, 1.0 / g)
    G = eta = E = None
    if model == 1:
        L = mats
    else:
        E = _eta_pattern(rng, M, R, bg)
        eta = rng.gamma(g * E, 1.0 / g)
        G = mats
        L = np.einsum("mr,mkl->rkl", eta, G)
    sums = _power_sums(U, L)
    exact = cells <= _EXACT_CELLS
    if not exact:
        # series: the remainder is below sum rate^4 / 24 <= max rate * S3 / 24
        try:
            c = _solve_scale(U, L, target, bool(binary), False, sums)
            bound = c ** 4 * _max_rate_bound(U, L) * sums[2] / 24
            exact = bound > 1e-6 * target
        except ValueError:
            exact = True
        if exact:
            logger.info("make_bpbfm_data: rates too large for the series; summing all %d "
                        "cells", cells)
    if exact or not binary:
        c = _solve_scale(U, L, target, bool(binary), exact, sums)
    L = L * c
    if G is not None:
        G = G * c
    S1, S2, S3 = (c * sums[0], c * c * sums[1], c ** 3 * sums[2])
    if exact:
        e_ones, _, var = _exact_sums(U, L, 1.0)
    else:
        e_ones = S1 - S2 / 2 + S3 / 6
        var = S1 - 1.5 * S2 + 7.0 / 6.0 * S3

    heads, rels, tails, counts = draw_bpbfm_counts(U, L, rng)
    values = np.ones(heads.size) if binary else counts.astype(np.float64)
    tensor = RelationalTensor(heads, rels, tails, values, N, R,
                              entity_names=np.char.add("e", np.arange(N).astype(str)),
                              relation_names=np.char.add("r", np.arange(R).astype(str)))
    logger.info("make_bpbfm_data: model %d, %d %s over %d entities x %d relations "
                "(expected %.1f, total count %d)", model, tensor.n_entries,
                "ones" if binary else "nonzero counts", N, R, e_ones, int(counts.sum()))
    truth = BPBFMTruth(U=U, relation_matrices=L, model=model, binary=bool(binary),
                       clusters=clusters, pattern=pattern, dictionary=G, eta=eta,
                       eta_pattern=E, dirichlet_a=a, gamma_shape=g, scale=c,
                       expected_count=S1, expected_n_ones=float(e_ones),
                       n_ones_variance=float(var), expected_exact=exact)
    return tensor, truth
