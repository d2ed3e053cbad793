"""Sufficient statistics of the link-weight step (the U / eta conditional), sparse in zbar.

For pairs grouped by source document i (``ptr``, ``nbr``), with a_ij, b_ij:

    M_i = sum_j b_ij zbar_j zbar_j^T                         (upper triangle, T entries)
    G   = sum_i tri(zbar_i zbar_i^T) tri(M_i)^T              (full U: T x T)
    Pd  = sum_i tri(zbar_i zbar_i^T) ∘ tri(M_i)              (diagonal U: T)
    S   = sum_i sum_j a_ij zbar_i zbar_j^T                   (K x K)

with ``tri`` the K(K+1)/2 upper-triangle entries, indexed by ``tri_index[k, l]``
(``inference/weights.py`` turns G into the precision of vec(U)).  Only the nonzero topics
of each zbar are visited: a pair costs O(nnz_j^2), a document O(nnz_i^2 T) (full) instead
of the dense O(K^2) and O(K^2 T); documents of ~20 tokens have a handful of topics.

Imports only numpy and numba (``tests/test_architecture.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["weight_moments_setup", "weight_moments_range", "label_moments"]

# K(K+1)/2 up to which a pair adds its whole (dense) triangle to M_i (K <= 13)
_DENSE_MAX_ENTRIES = 91


@njit(cache=True)
def _nonzero_topics(zbar: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per document, its topics with zbar > 0 (``topics[d, :count[d]]``)."""
    D, K = zbar.shape
    topics = np.empty((D, K), dtype=np.int64)
    count = np.zeros(D, dtype=np.int64)
    for d in range(D):
        n = 0
        for k in range(K):
            if zbar[d, k] != 0.0:
                topics[d, n] = k
                n += 1
        count[d] = n
    return topics, count


@njit(cache=True, nogil=True)
def weight_moments_setup(zbar: np.ndarray, tri_index: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per document its nonzero topics (``topics[d, :count[d]]``) and, when the triangle
    is small (T <= 91), the dense upper triangle of zbar_d zbar_d^T (``ZZ``, else empty)."""
    D, K = zbar.shape
    T = K * (K + 1) // 2
    topics, count = _nonzero_topics(zbar)
    # few topics (T small): adding the dense upper triangle of zbar_j zbar_j^T is faster
    # than visiting the nonzero pairs of topics one by one
    dense = T <= _DENSE_MAX_ENTRIES
    ZZ = np.zeros((D, T)) if dense else np.zeros((0, T))
    if dense:
        for d in range(D):
            for k in range(K):
                for l in range(k, K):
                    ZZ[d, tri_index[k, l]] = zbar[d, k] * zbar[d, l]
    return topics, count, ZZ


@njit(cache=True, nogil=True)
def _diagonal_moments_range(zbar: np.ndarray, topics: np.ndarray, count: np.ndarray,
                            ptr: np.ndarray, nbr: np.ndarray, a: np.ndarray, b: np.ndarray,
                            tri_index: np.ndarray, i_start: int, i_end: int
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Diagonal U's (Pd, S) pair by pair: with x = zbar_i ∘ zbar_j (nonzero on the topics
    both documents use), ``Pd[t(k, l)] += b_ij x_k x_l`` and ``S[k, k] += a_ij x_k`` --
    O(nnz(x)^2) a pair, where summing M_i over the triangle costs O(K^2) a document (the
    diagonal of S is all the diagonal conditional reads)."""
    D, K = zbar.shape
    T = K * (K + 1) // 2
    G = np.zeros((1, T))
    S = np.zeros((K, K))
    idx = np.empty(K, dtype=np.int64)
    x = np.empty(K)
    for i in range(i_start, i_end):
        zi = zbar[i]
        for e in range(ptr[i], ptr[i + 1]):
            j = nbr[e]
            tj = topics[j]
            zj = zbar[j]
            n = 0
            for q in range(count[j]):
                k = tj[q]
                if zi[k] != 0.0:
                    idx[n] = k
                    x[n] = zi[k] * zj[k]
                    n += 1
            if n == 0:
                continue
            bj = b[e]
            aj = a[e]
            for p in range(n):
                k = idx[p]
                S[k, k] += aj * x[p]
                c = bj * x[p]
                for q in range(n):
                    l = idx[q]
                    if l >= k:
                        G[0, tri_index[k, l]] += c * x[q]
    return G, S


@njit(cache=True, nogil=True)
def weight_moments_range(zbar: np.ndarray, topics: np.ndarray, count: np.ndarray,
                         ZZ: np.ndarray, ptr: np.ndarray, nbr: np.ndarray, a: np.ndarray,
                         b: np.ndarray, tri_index: np.ndarray, full: bool, i_start: int,
                         i_end: int) -> tuple[np.ndarray, np.ndarray]:
    """(G, S) for full U or (Pd as a 1 x T array, S) for diagonal U (see the module) from
    the pairs of source documents ``i_start:i_end`` (the moments are sums over source
    documents, so parts add up; releases the GIL).  ``topics``, ``count``, ``ZZ`` from
    :func:`weight_moments_setup`."""
    D, K = zbar.shape
    T = K * (K + 1) // 2
    if not full and ZZ.shape[0] == 0:
        return _diagonal_moments_range(zbar, topics, count, ptr, nbr, a, b, tri_index,
                                       i_start, i_end)
    G = np.zeros((T, T)) if full else np.zeros((1, T))
    S = np.zeros((K, K))
    M = np.zeros(T)
    r = np.zeros(K)
    dense = ZZ.shape[0] > 0
    for i in range(i_start, i_end):
        lo = ptr[i]
        hi = ptr[i + 1]
        if lo == hi:
            continue
        ti = topics[i]
        ni = count[i]
        zi = zbar[i]
        touched = False
        for e in range(lo, hi):
            j = nbr[e]
            tj = topics[j]
            nj = count[j]
            zj = zbar[j]
            bj = b[e]
            aj = a[e]
            if dense:
                zz = ZZ[j]
                for u in range(T):
                    M[u] += bj * zz[u]
            else:
                for p in range(nj):
                    k = tj[p]
                    bk = bj * zj[k]
                    for q in range(p, nj):
                        M[tri_index[k, tj[q]]] += bk * zj[tj[q]]
            touched = True
            for q in range(nj):
                r[tj[q]] += aj * zj[tj[q]]
        if not touched:
            continue
        # S += zbar_i r_i^T with r_i = sum_j a_ij zbar_j
        for p in range(ni):
            k = ti[p]
            for l in range(K):
                S[k, l] += zi[k] * r[l]
        for l in range(K):
            r[l] = 0.0
        for p in range(ni):
            k = ti[p]
            for q in range(p, ni):
                l = ti[q]
                t = tri_index[k, l]
                w = zi[k] * zi[l]
                if full:
                    row = G[t]
                    for u in range(T):
                        row[u] += w * M[u]
                else:
                    G[0, t] += w * M[t]
        for u in range(T):
            M[u] = 0.0
    return G, S


@njit(cache=True)
def label_moments(ndk: np.ndarray, lengths: np.ndarray, a: np.ndarray, b: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """``P = sum_d b_d zbar_d zbar_d^T`` (K x K) and ``s = sum_d a_d zbar_d`` (K,),
    zbar_d = ndk_d / N_d, visiting each document's nonzero topics only: O(K + nnz_d^2)
    a document instead of the dense product's O(K^2)."""
    D, K = ndk.shape
    P = np.zeros((K, K))
    s = np.zeros(K)
    idx = np.empty(K, dtype=np.int64)
    val = np.empty(K)
    for d in range(D):
        n = 0
        inv = 1.0 / lengths[d]
        for k in range(K):
            if ndk[d, k] != 0:
                idx[n] = k
                val[n] = ndk[d, k] * inv
                n += 1
        bd = b[d]
        ad = a[d]
        for i in range(n):
            ki = idx[i]
            vi = val[i]
            s[ki] += ad * vi
            row = P[ki]
            c = bd * vi
            for j in range(n):
                row[idx[j]] += c * val[j]
    return P, s
