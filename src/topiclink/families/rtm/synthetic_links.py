"""Links of a gRTM network in O(#candidates), by thinning (make_rtm_data's sparse path).

Row i's link probabilities ``p_ij = sigmoid(w_i . zbar_j)``, ``w_i = U^T zbar_i``, are all
at most ``q_i = sigmoid(max_l w_il)`` (zbar_j lies on the simplex, so ``w_i . zbar_j`` is a
weighted average of the entries of ``w_i``).  Candidates j are the successes of
Bernoulli(q_i) trials over the row's pairs, visited by geometric skips
(``1 + floor(log U / log(1 - q_i))`` positions ahead); candidate j becomes a link with
probability ``p_ij / q_i``.  Each pair is then a link with probability exactly
``q_i * p_ij / q_i = p_ij``, independently (Lewis & Shedler's thinning), at a cost of
O(K) per candidate instead of per pair.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.rng import uniform

__all__ = ["thinned_links", "pair_logit_sample"]


@njit(cache=True)
def _grow(a: np.ndarray, n: int) -> np.ndarray:
    b = np.empty(max(2 * a.shape[0], n), dtype=a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True)
def thinned_links(zbar: np.ndarray, W: np.ndarray, directed: bool,
                  state: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Draw every link ``y_ij ~ Bernoulli(sigmoid(W[i] . zbar[j]))`` over the pairs
    ``i != j`` (directed) or ``i < j`` (undirected), in row-major order.

    Returns sources, targets (int64), the Horvitz-Thompson estimate
    ``sum_candidates p_ij / q_i`` of ``sum_pairs p_ij`` (unbiased) and the number of
    candidates examined.
    """
    D, K = zbar.shape
    cap = 1024
    src = np.empty(cap, dtype=np.int64)
    dst = np.empty(cap, dtype=np.int64)
    n = 0
    expected = 0.0
    n_cand = 0
    for i in range(D):
        w = W[i]
        m = w[0]
        for k in range(1, K):
            m = max(m, w[k])
        q = 1.0 / (1.0 + math.exp(-m))
        if q <= 0.0:
            continue
        start = 0 if directed else i + 1
        log1mq = math.log1p(-q) if q < 1.0 else -np.inf
        j = start - 1
        while True:
            if log1mq == -np.inf:
                j += 1
            else:
                u = 1.0 - uniform(state)
                skip = math.floor(math.log(u) / log1mq)
                if skip >= D - j:
                    break
                j += 1 + int(skip)
            if j >= D:
                break
            if j == i:
                continue
            n_cand += 1
            z = zbar[j]
            acc = 0.0
            for k in range(K):
                acc += w[k] * z[k]
            p = 1.0 / (1.0 + math.exp(-acc))
            expected += p / q
            if uniform(state) * q < p:
                if n == src.shape[0]:
                    src = _grow(src, n + 1)
                    dst = _grow(dst, n + 1)
                src[n] = i
                dst[n] = j
                n += 1
    return src[:n].copy(), dst[:n].copy(), expected, n_cand


@njit(cache=True)
def pair_logit_sample(zbar: np.ndarray, W: np.ndarray, directed: bool, n_samples: int,
                      state: np.ndarray) -> np.ndarray:
    """``omega_ij = W[i] . zbar[j]`` at ``n_samples`` uniform random pairs (i != j; the
    undirected case samples unordered pairs, omega being symmetric there)."""
    D, K = zbar.shape
    out = np.empty(n_samples)
    for s in range(n_samples):
        while True:
            i = int(uniform(state) * D)
            j = int(uniform(state) * D)
            if i != j:
                break
        acc = 0.0
        for k in range(K):
            acc += W[i, k] * zbar[j, k]
        out[s] = acc
    return out
