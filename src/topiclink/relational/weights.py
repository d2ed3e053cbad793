"""Gaussian draws of the bilinear link weights (the U / eta step of the gRTM family).

Given the augmentation, pair (i, j) contributes ``a_ij omega - b_ij omega^2 / 2`` with
``omega_ij = x_ij^T eta``; with the prior eta ~ N(0, nu^2 I) the conditional is Gaussian
(Chen et al. 2015, eqs. 14-15 and their hinge analogue):

    P = I / nu^2 + sum_ij b_ij x_ij x_ij^T,     mu = P^{-1} sum_ij a_ij x_ij.

Full U (x_ij = vec(zbar_i zbar_j^T), K^2 features) uses the Kronecker identity of
``docs/design/grtm.md``: ``sum_ij b_ij x_ij x_ij^T = sum_i (zbar_i zbar_i^T) ⊗ M_i`` with
``M_i = sum_j b_ij zbar_j zbar_j^T``, accumulated on the upper triangles over the nonzero
topics of each zbar (:func:`topiclink.relational.kernels.weights.weight_moments_range`)
and gathered into
P by an index map; nothing of size |pairs| x K^2 is formed.  Diagonal U (x_ij = zbar_i ∘ zbar_j)
uses ``P_data = sum_i (zbar_i zbar_i^T) ∘ M_i``.
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.linalg as la

from topiclink.execution import Executor
from topiclink.relational.kernels.rtm import pair_dots
from topiclink.relational.kernels.weights import weight_moments_range, weight_moments_setup
from topiclink.relational.pairs import PairIndex

__all__ = ["weight_posterior", "draw_weights", "pair_omega"]


@functools.lru_cache(maxsize=2)
def _triangle_maps(K: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Upper-triangle indices and the symmetric index map t(k, l) (O(K^2))."""
    iu, ju = np.triu_indices(K)
    tri = np.empty((K, K), dtype=np.int64)
    tri[iu, ju] = np.arange(iu.size)
    tri[ju, iu] = tri[iu, ju]
    for arr in (iu, ju, tri):
        arr.setflags(write=False)
    return iu, ju, tri


# the gather index is 8 K^4 bytes (100 MiB at K = 60): built for full U only, and only the
# last two K kept, so a grid over K does not hold one per value for the life of the process
@functools.lru_cache(maxsize=2)
def _gather_index(K: int) -> np.ndarray:
    """The flat gather index of P[(k,l),(k',l')] = G[t(k,k'), t(l,l')] (full U)."""
    iu, _, tri = _triangle_maps(K)
    flat = (tri[:, None, :, None] * iu.size + tri[None, :, None, :]).reshape(-1)
    flat.setflags(write=False)
    return flat


# the moments are accumulated in this many parts over the source documents (split where
# the pairs are halved) and added in a fixed order: the same sums with or without threads
_N_PARTS = 2


def weight_posterior(zbar: np.ndarray, source: np.ndarray, target: np.ndarray,
                     a: np.ndarray, b: np.ndarray, prior_var: float, full: bool,
                     by_source: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                     executor: Executor | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Precision P and linear term s (so that mu = P^{-1} s) of the weight conditional.

    ``by_source`` = (ptr, neighbours, order): the pairs' CSR layout by source document
    (pairs unique), precomputed once per fit to skip re-sorting them every iteration.
    ``executor``: an executor (one thread) for all but the first part of the moments, which the
    calling thread computes meanwhile (the result does not depend on it).

    Returns
    -------
    P : (K^2, K^2) for full U (row-major vec: eta[k * K + l] = U[k, l]) or (K, K)
    s : (K^2,) or (K,)
    """
    D, K = zbar.shape
    zbar = np.ascontiguousarray(zbar, dtype=np.float64)
    # zbar_i zbar_i^T and M_i are symmetric: work on their K(K+1)/2 upper-triangle entries
    iu, ju, tri = _triangle_maps(K)
    if by_source is None:
        index = PairIndex.build(np.asarray(source, np.int64), np.asarray(target, np.int64), D)
        by_source = (index.ptr, index.nbr, index.order)
    ptr, nbr, order = by_source
    tri_w = np.array(tri)    # a writable copy compiles leaner
    a_by = np.ascontiguousarray(a[order], dtype=np.float64)
    b_by = np.ascontiguousarray(b[order], dtype=np.float64)
    topics, count, ZZ = weight_moments_setup(zbar, tri_w)
    cuts = np.searchsorted(ptr, ptr[-1] * np.arange(1, _N_PARTS) / _N_PARTS)
    edges = [0, *(int(c) for c in cuts), D]

    def part(p: int) -> tuple[np.ndarray, np.ndarray]:
        return weight_moments_range(zbar, topics, count, ZZ, ptr, nbr, a_by, b_by, tri_w,
                                    full, edges[p], edges[p + 1])

    if executor is None:
        parts = [part(p) for p in range(_N_PARTS)]
    else:   # the caller's thread takes the first part, the pool the others
        later = [executor.submit(part, p) for p in range(1, _N_PARTS)]
        parts = [part(0), *(f.result() for f in later)]
    G, S = parts[0]
    for G_p, S_p in parts[1:]:
        G += G_p
        S += S_p
    if full:
        # P[(k,l),(k',l')] = G[t(k,k'), t(l,l')]  (exactly symmetric, as t is)
        P = np.take(G, _gather_index(K)).reshape(K * K, K * K)
        P[np.diag_indices_from(P)] += 1.0 / prior_var
        return P, S.reshape(K * K)
    # diagonal: P[k, l] = sum_i zbar_ik zbar_il M_i[k, l]
    P = np.take(G[0], tri)
    P[np.diag_indices_from(P)] += 1.0 / prior_var
    return P, np.diag(S).copy()


def draw_weights(rng: np.random.Generator, P: np.ndarray, s: np.ndarray) -> np.ndarray:
    """One draw from N(P^{-1} s, P^{-1}) via the Cholesky factor P = L L^T."""
    L = la.cholesky(P, lower=True, check_finite=False)
    mu = la.cho_solve((L, True), s, check_finite=False)
    eps = rng.standard_normal(s.shape[0])
    return mu + la.solve_triangular(L.T, eps, lower=False, check_finite=False)


def pair_omega(zbar: np.ndarray, U: np.ndarray, source: np.ndarray,
               target: np.ndarray) -> np.ndarray:
    """omega_ij = zbar_i^T U zbar_j = zbar_i . (U zbar_j) for every pair, O(|pairs| K)
    after one (D x K) product (no |pairs| x K arrays)."""
    zbar = np.ascontiguousarray(zbar, dtype=np.float64)
    return pair_dots(zbar, np.ascontiguousarray(zbar @ U.T), np.asarray(source, np.int64),
                     np.asarray(target, np.int64), np.ones(zbar.shape[0]))
