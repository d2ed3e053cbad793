"""The word part of batch LMV's coordinate ascent (Tan, Chan & Zheng 2016, Algorithm 1
steps 2-3), per (document, distinct word) with the word's count ``c``:

    phi_{dw,k} ∝ exp(E log theta_dk + E log beta_{k,w})
    gamma_d    = alpha + offset_d + sum_w c_dw phi_dw

``offset_d`` holds the citation part of gamma (sum of kappa over the pairs d cites and of
nu over the pairs citing d), fixed during this step.  Each update is an exact coordinate
maximisation of L*, so the bound never decreases.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.special import digamma

__all__ = ["word_e_step"]


@njit(cache=True, nogil=True)
def word_e_step(indptr: np.ndarray, indices: np.ndarray, counts: np.ndarray,
                elog_beta_wk: np.ndarray, alpha: np.ndarray, offset: np.ndarray,
                gamma: np.ndarray, stats_wk: np.ndarray, word_terms: np.ndarray,
                max_iter: int, tol: float) -> int:
    """Update every document's (phi, gamma) in place; accumulate ``stats_wk += c phi``.

    ``word_terms[d]`` gets ``sum_w c_dw sum_k phi (E log theta_dk - log phi)`` at the
    final (phi, gamma) (the ``E log beta`` part is ``sum stats_wk E log beta_kw``, which the
    caller evaluates with the topics of the moment).  Returns the total rounds.
    """
    D, K = gamma.shape
    elog = np.empty(K)
    logit = np.empty(K)
    acc = np.empty(K)
    max_nnz = 1
    for d in range(D):
        max_nnz = max(max_nnz, indptr[d + 1] - indptr[d])
    phi = np.empty((max_nnz, K))
    rounds = 0
    for d in range(D):
        lo, hi = indptr[d], indptr[d + 1]
        for _ in range(max_iter):
            rounds += 1
            total = 0.0
            for k in range(K):
                total += gamma[d, k]
            dg = digamma(total)
            for k in range(K):
                elog[k] = digamma(gamma[d, k]) - dg
                acc[k] = alpha[k] + offset[d, k]
            for e in range(lo, hi):
                w = indices[e]
                m = -1e300
                for k in range(K):
                    logit[k] = elog[k] + elog_beta_wk[w, k]
                    m = max(m, logit[k])
                s = 0.0
                for k in range(K):
                    logit[k] = math.exp(logit[k] - m)
                    s += logit[k]
                for k in range(K):
                    phi[e - lo, k] = logit[k] / s
                    acc[k] += counts[e] * phi[e - lo, k]
            change = 0.0
            for k in range(K):
                change += abs(acc[k] - gamma[d, k])
                gamma[d, k] = acc[k]
            if change / K < tol:
                break
        total = 0.0
        for k in range(K):
            total += gamma[d, k]
        dg = digamma(total)
        for k in range(K):
            elog[k] = digamma(gamma[d, k]) - dg
        term = 0.0
        for e in range(lo, hi):
            w = indices[e]
            for k in range(K):
                p = phi[e - lo, k]
                stats_wk[w, k] += counts[e] * p
                if p > 0.0:
                    term += counts[e] * p * (elog[k] - math.log(p))
        word_terms[d] = term
    return rounds
