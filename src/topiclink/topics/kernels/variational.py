"""Variational E-step kernels for the relational topic model (Chang & Blei 2009).

Mean field ``q(theta_d) = Dir(gamma_d)``, ``q(z_dn) = Mult(phi_dn)``; exponential link
``psi_e = exp(eta^T (zbar_d o zbar_d') + nu)``, positive links only.  Every token of a
document with the same word has the same optimal ``phi``, so the kernel works per
(document, distinct word) with the word's count ``c``:

    phi_{dw,k} ∝ exp(E[log theta_dk] + log beta_{k,w} + (eta_k / N_d) sum_{d' ~ d} phibar_{d'k})
    gamma_d     = alpha + sum_w c_dw phi_dw
    phibar_d    = sum_w c_dw phi_dw / N_d

(Chang & Blei 2009, eq. for ``psi_e``: the link term of the exponential link is linear in
``phibar``, so the ``phi`` update is exact coordinate ascent.)  Documents are updated in
turn (Gauss-Seidel), each seeing its neighbours' latest ``phibar``; the bound therefore
never decreases during the E-step.

Imports only numpy, numba, math and topiclink.kernels (``tests/test_architecture.py``);
``digamma`` is :func:`topiclink.kernels.special.digamma`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.special import digamma

__all__ = ["e_step"]


@njit(cache=True)
def e_step(indptr: np.ndarray, indices: np.ndarray, counts: np.ndarray,
           doc_len: np.ndarray, adj_indptr: np.ndarray, adj_indices: np.ndarray,
           log_beta_wk: np.ndarray, eta: np.ndarray, alpha: np.ndarray,
           gamma: np.ndarray, phibar: np.ndarray, stats_wk: np.ndarray,
           doc_terms: np.ndarray, max_iter: int, tol: float) -> int:
    """One variational E-step over all documents, in place.

    Parameters
    ----------
    indptr, indices : CSR structure of the document-term matrix (int64 / int32)
    counts : float64 (nnz,)
        Count of each (document, distinct word) entry.
    doc_len : float64 (D,)
        N_d, tokens per document (``sum counts``); a document with N_d = 0 gets
        ``gamma = alpha`` and ``phibar = alpha / sum(alpha)``.
    adj_indptr, adj_indices : CSR structure of the symmetric adjacency (D x D)
        Neighbours of each document (each unordered linked pair listed in both rows).
    log_beta_wk : float64 (V, K)
        log topic-word weights (log beta, or E_q[log beta] for variational topics).
    eta : float64 (K,)
        Link weights (zeros: plain LDA).
    alpha : float64 (K,)
    gamma, phibar : float64 (D, K), updated in place
        Input: the current state (gamma starts the per-document loop; neighbours'
        phibar enter the link term).  Output: the new state.
    stats_wk : float64 (V, K), accumulated (not zeroed here)
        ``+= c_dw phi_dw`` for every entry: the topic-word sufficient statistics.
    doc_terms : float64 (D,), written
        Per document ``E[log p(theta|alpha)] + E[log p(z|theta)] - E[log q(theta)]
        - E[log q(z)]`` at the final (phi, gamma); with ``gamma = alpha + n_d`` this is
        ``lnG(sum a) - sum lnG(a) - lnG(sum g) + sum lnG(g) + H(phi)``.
    max_iter : int
        Maximum phi/gamma rounds per document.
    tol : float
        A document stops early when the mean absolute change of gamma is below ``tol``.

    Returns
    -------
    int : total phi/gamma rounds over all documents.
    """
    D, K = gamma.shape
    alpha_sum = 0.0
    lg_alpha = 0.0
    for k in range(K):
        alpha_sum += alpha[k]
        lg_alpha += math.lgamma(alpha[k])
    lg_alpha_sum = math.lgamma(alpha_sum)
    max_nnz = 0
    for d in range(D):
        n = indptr[d + 1] - indptr[d]
        if n > max_nnz:
            max_nnz = n
    phi = np.empty((max(max_nnz, 1), K))
    link = np.empty(K)
    elog = np.empty(K)
    acc = np.empty(K)
    logit = np.empty(K)
    rounds = 0
    for d in range(D):
        start = indptr[d]
        stop = indptr[d + 1]
        n_d = doc_len[d]
        if n_d <= 0.0:
            for k in range(K):
                gamma[d, k] = alpha[k]
                phibar[d, k] = alpha[k] / alpha_sum
            doc_terms[d] = 0.0
            continue
        for k in range(K):
            link[k] = 0.0
        for p in range(adj_indptr[d], adj_indptr[d + 1]):
            j = adj_indices[p]
            for k in range(K):
                link[k] += phibar[j, k]
        for k in range(K):
            link[k] *= eta[k] / n_d
        entropy = 0.0
        for _ in range(max_iter):
            rounds += 1
            g_sum = 0.0
            for k in range(K):
                g_sum += gamma[d, k]
            dg_sum = digamma(g_sum)
            for k in range(K):
                elog[k] = digamma(gamma[d, k]) - dg_sum + link[k]
                acc[k] = 0.0
            entropy = 0.0
            for i in range(stop - start):
                w = indices[start + i]
                c = counts[start + i]
                m = -np.inf
                for k in range(K):
                    v = elog[k] + log_beta_wk[w, k]
                    logit[k] = v
                    if v > m:
                        m = v
                s = 0.0
                for k in range(K):
                    e = math.exp(logit[k] - m)
                    phi[i, k] = e
                    s += e
                log_s = math.log(s)
                inv = 1.0 / s
                h = 0.0
                for k in range(K):
                    pk = phi[i, k] * inv
                    phi[i, k] = pk
                    h -= pk * (logit[k] - m - log_s)
                    acc[k] += c * pk
                entropy += c * h
            change = 0.0
            for k in range(K):
                new = alpha[k] + acc[k]
                change += abs(new - gamma[d, k])
                gamma[d, k] = new
            if change < tol * K:
                break
        g_sum = 0.0
        lg = 0.0
        for k in range(K):
            phibar[d, k] = acc[k] / n_d
            g_sum += gamma[d, k]
            lg += math.lgamma(gamma[d, k])
        for i in range(stop - start):
            w = indices[start + i]
            c = counts[start + i]
            for k in range(K):
                stats_wk[w, k] += c * phi[i, k]
        doc_terms[d] = lg_alpha_sum - lg_alpha - math.lgamma(g_sum) + lg + entropy
    return rounds
