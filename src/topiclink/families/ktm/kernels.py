"""Numba kernel of the kernel topic model's word part: semi-collapsed variational LDA.

Hennig et al. (AISTATS 2012); ``docs/design/ktm.md``, inference step 1.  The topic-word
distributions are collapsed (expected counts ``n_kw``, as in CVB0: Asuncion et al. 2009)
and each document keeps its Dirichlet ``q(pi_d) = Dir(alpha_d + nu_d)``.  For every
(document, distinct word) entry with count c the responsibilities are::

    r_dwk ∝ exp(E[log pi_dk]) (n_kw^-dw + beta) / (n_k^-dw + V beta),
    E[log pi_dk] = psi(alpha_dk + nu_dk) - psi(sum_l (alpha_dl + nu_dl)),

where ``^-dw`` removes the entry's own expected counts; then ``nu_d``, ``n_kw``, ``n_k``
are updated in place.  ``E[log pi_d]`` is refreshed at the start of each of
``n_inner`` passes over a document.  O(nnz K) per pass.

Imports only numpy, numba, math and topiclink.kernels (``tests/test_architecture.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.special import digamma

__all__ = ["vb_sweep", "entry_loglik"]


@njit(cache=True, nogil=True)
def vb_sweep(indptr: np.ndarray, indices: np.ndarray, counts: np.ndarray,
             resp: np.ndarray, nkw: np.ndarray, nk: np.ndarray, nu: np.ndarray,
             alpha: np.ndarray, beta: float, n_inner: int) -> None:
    """One pass over every document (in place).

    Parameters
    ----------
    indptr, indices, counts : the CSR document-word matrix (int64, int32, float64)
    resp : float64 (nnz, K) responsibilities of each entry (rows sum to 1)
    nkw : float64 (V, K); nk : float64 (K,); nu : float64 (D, K) expected counts
    alpha : float64 (D, K) the documents' prior Dirichlet parameters
    beta : the topic-word Dirichlet parameter
    n_inner : passes over each document's entries
    """
    D = indptr.shape[0] - 1
    K = nk.shape[0]
    V = nkw.shape[0]
    vbeta = V * beta
    e = np.empty(K)
    p = np.empty(K)
    for d in range(D):
        lo = indptr[d]
        hi = indptr[d + 1]
        for _ in range(n_inner):
            s = 0.0
            for k in range(K):
                s += alpha[d, k] + nu[d, k]
            ps = digamma(s)
            for k in range(K):
                e[k] = math.exp(digamma(alpha[d, k] + nu[d, k]) - ps)
            for j in range(lo, hi):
                w = indices[j]
                c = counts[j]
                tot = 0.0
                for k in range(K):
                    r = resp[j, k] * c
                    a = nkw[w, k] - r
                    b = nk[k] - r
                    nkw[w, k] = a if a > 0.0 else 0.0
                    nk[k] = b if b > 0.0 else 0.0
                    nu[d, k] -= r
                    p[k] = e[k] * (nkw[w, k] + beta) / (nk[k] + vbeta)
                    tot += p[k]
                for k in range(K):
                    q = p[k] / tot
                    resp[j, k] = q
                    r = q * c
                    nkw[w, k] += r
                    nk[k] += r
                    nu[d, k] += r
            for k in range(K):
                if nu[d, k] < 0.0:
                    nu[d, k] = 0.0


@njit(cache=True, nogil=True)
def entry_loglik(indptr: np.ndarray, indices: np.ndarray, counts: np.ndarray,
                 theta: np.ndarray, phi_wk: np.ndarray) -> float:
    """sum_d sum_w c_dw log sum_k theta_dk phi_kw (``phi_wk`` (V, K))."""
    D = indptr.shape[0] - 1
    K = theta.shape[1]
    ll = 0.0
    for d in range(D):
        for j in range(indptr[d], indptr[d + 1]):
            w = indices[j]
            s = 0.0
            for k in range(K):
                s += theta[d, k] * phi_wk[w, k]
            ll += counts[j] * math.log(max(s, 1e-300))
    return ll
