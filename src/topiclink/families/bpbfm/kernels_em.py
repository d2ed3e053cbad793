"""Numba kernels of BPBFM-1's MAP-EM (tied factors v = u): the E-step statistics.

The E-step of the latent Poisson counts visits the *nonzero* entries only (a zero's
latent count is 0): entry e = (i, r, j) with rate ``lam = u_i^T Lambda^r u_j`` has the
expected latent count ``E[m_e] = lam w_e``, ``w_e = x_e / (1 - exp(-lam))`` for a one of
binary data (zero-truncated Poisson) and ``w_e = x_e / lam`` for a count, allocated to
(k1, k2) in proportion to ``u_ik1 Lambda^r_k1k2 u_jk2``.  The M-step needs, with the
factor of the block being updated taken out:

- ``s_lam[r, k1, k2] = sum_{e in r} w_e u_ik1 u_jk2`` (times Lambda^r: the expected
  counts of Lambda^r's cells);
- ``s_u[i, k] = sum_{e: head i} w_e (Lambda^r u_j)_k + sum_{e: tail i} w_e
  (Lambda^r^T u_h)_k`` (times u_ik: the expected counts of entity i in factor k, as
  head and as tail).

The exposures (the expected counts' Poisson "time") sum over every observed cell; the
inference module (:mod:`topiclink.families.bpbfm.em`) gets them in closed form over all
N^2 cells and takes out the held-out ones by sparse and dense products.

Imports only numpy, numba, math and topiclink.kernels (``tests/test_architecture.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["em_statistics"]


@njit(cache=True, nogil=True)
def em_statistics(heads: np.ndarray, rels: np.ndarray, tails: np.ndarray,
                  values: np.ndarray, binary: bool, U: np.ndarray, L: np.ndarray,
                  s_lam: np.ndarray, s_u: np.ndarray, want_lam: bool,
                  want_u: bool) -> float:
    """E-step over the nonzero entries (accumulated in place into ``s_lam`` / ``s_u``).

    Parameters
    ----------
    heads, rels, tails : int32 (E,); values : float64 (E,) the observed values (> 0)
    binary : ones of binary data (Bernoulli-Poisson) or counts (Poisson)
    U : float64 (N, K); L : float64 (R, K, K)
    s_lam : float64 (R, K, K); s_u : float64 (N, K)
    want_lam, want_u : which statistic to accumulate

    Returns
    -------
    ``sum_e [log p(x_e | lam_e) + lam_e]`` (as :func:`topiclink.families.bpbfm.kernels.ones_loglik`)
    """
    n = heads.shape[0]
    K = U.shape[1]
    lu = np.empty(K)        # Lambda^r u_j
    ll = 0.0
    for e in range(n):
        i = heads[e]
        j = tails[e]
        r = rels[e]
        Lr = L[r]
        for k1 in range(K):
            acc = 0.0
            for k2 in range(K):
                acc += Lr[k1, k2] * U[j, k2]
            lu[k1] = acc
        lam = 0.0
        for k1 in range(K):
            lam += U[i, k1] * lu[k1]
        x = values[e]
        if binary:
            if lam > 0.0:
                q = -math.expm1(-lam)
                ll += math.log(q) + lam
                w = x / q
            else:
                ll += -745.0
                w = 0.0
        else:
            if lam > 0.0:
                ll += x * math.log(lam) - math.lgamma(x + 1.0)
                w = x / lam
            else:
                ll += x * math.log(1e-300) - math.lgamma(x + 1.0)
                w = 0.0
        if w == 0.0:
            continue
        if want_lam:
            for k1 in range(K):
                a = w * U[i, k1]
                for k2 in range(K):
                    s_lam[r, k1, k2] += a * U[j, k2]
        if want_u:
            for k1 in range(K):
                s_u[i, k1] += w * lu[k1]
            for k2 in range(K):
                acc = 0.0
                for k1 in range(K):
                    acc += U[i, k1] * Lr[k1, k2]
                s_u[j, k2] += w * acc
    return ll
