"""Variational E-step kernel for logistic supervised LDA ("vSLDA") with the
Jaakkola-Jordan bound.

Blei & McAuliffe, "Supervised Topic Models" (NIPS 2007) with a logistic response made
tractable by Jaakkola & Jordan, "Bayesian parameter estimation via variational methods"
(Stat. Comput. 2000).  Model of document d with N tokens, label ``ytil_d = 2 y_d - 1``::

    theta_d ~ Dir(alpha),  z_dn ~ Cat(theta_d),  w_dn ~ Cat(beta_{z_dn}),
    p(y_d | z_d) = sigmoid(ytil_d eta^T zbar_d),   zbar_d = (1/N) sum_n e_{z_dn},

the label log-likelihood weighted by a regularisation constant c (c = 1: plain sLDA).
Mean field ``q(theta_d) = Dir(gamma_d)``, ``q(z_dn) = Mult(phi_dn)``, and for
``x = ytil eta^T zbar`` the Jaakkola-Jordan bound

    log sigmoid(x) >= log sigmoid(xi) + (x - xi)/2 - lam(xi) (x^2 - xi^2),
    lam(xi) = tanh(xi/2) / (4 xi)                                     (lam(0) = 1/8)

so that ``E_q[log sigmoid(x)] >= log sigmoid(xi) + (E[x] - xi)/2 - lam(xi)(E[x^2] - xi^2)``
with ``E[x] = ytil eta^T phibar`` and ``E[x^2] = eta^T E[zbar zbar^T] eta``,

    E[zbar zbar^T] = (1/N^2) (sum_n sum_{m != n} phi_n phi_m^T + sum_n diag(phi_n)),
    E[x^2]         = (1/N^2) ((eta^T S)^2 - sum_n (eta^T phi_n)^2 + sum_k eta_k^2 S_k),

``S = sum_n phi_n``.  The bound is linear in each single ``phi_n`` (plus its entropy), so
coordinate ascent on ``phi_n`` is exact:

    log phi_nk = E[log theta_k] + log beta_{k,w_n}
                 + c (ytil eta_k / (2N) - lam(xi) (2 eta_k eta^T phi_{-n} + eta_k^2) / N^2)
                 + const,                          phi_{-n} = S - phi_n,           (1)
    gamma      = alpha + S,                                                       (2)
    xi         = sqrt(E[x^2]),                                                    (3)

(3) being the optimal xi.  The kernel keeps ``S`` and ``eta^T S`` up to date token by
token, so one update (1) costs O(K).  Tokens are updated in turn (Gauss-Seidel), then (2)
and (3); every step maximises the bound in its block, so the bound never decreases.  With
``c = 0`` (prediction: no label) (1) is LDA's update.

Imports only numpy, numba, math and topiclink.kernels (``tests/test_architecture.py``);
``digamma`` and ``jj_lambda`` are those of :mod:`topiclink.kernels.special`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.special import digamma, jj_lambda

__all__ = ["e_step"]


@njit(cache=True)
def e_step(offsets: np.ndarray, words: np.ndarray, log_beta_wk: np.ndarray,
           eta: np.ndarray, ytil: np.ndarray, c: float, alpha: np.ndarray,
           phi: np.ndarray, gamma: np.ndarray, phibar: np.ndarray, xi: np.ndarray,
           stats_wk: np.ndarray, doc_terms: np.ndarray, max_iter: int, tol: float) -> int:
    """One variational E-step over all documents, in place (updates (1)-(3) above).

    Parameters
    ----------
    offsets : int64 (D + 1,)
        Tokens of document d are ``words[offsets[d]:offsets[d + 1]]``.
    words : int32 (n_tokens,)
    log_beta_wk : float64 (V, K)
        log topic-word weights.
    eta : float64 (K,)
        Label weights.
    ytil : float64 (D,)
        Labels in {-1, +1} (ignored when ``c = 0``).
    c : float
        Weight of the label term (0: plain LDA, as for prediction).
    alpha : float64 (K,)
    phi : float64 (n_tokens, K), updated in place
        q(z_dn) of every token: the starting point (warm start) and the result.
    gamma : float64 (D, K), written
        Must equal ``alpha + sum_n phi_dn`` on input (it is the starting point of
        E[log theta]); output ``alpha + S_d``.
    phibar : float64 (D, K), written
        ``S_d / N_d``; a document with no tokens gets ``alpha / sum(alpha)``.
    xi : float64 (D,), written
        The optimal Jaakkola-Jordan parameter (3) at the final phi.
    stats_wk : float64 (V, K), accumulated (not zeroed here)
        ``+= phi_dn`` at ``w_dn``: the topic-word sufficient statistics.
    doc_terms : float64 (D,), written
        ``E[log p(theta|alpha)] + E[log p(z|theta)] - E[log q(theta)] - E[log q(z)]`` at
        the final (phi, gamma): ``lnG(sum a) - sum lnG(a) - lnG(sum g) + sum lnG(g) +
        H(phi)`` since ``gamma = alpha + S``.  Word and label terms are added by the
        caller.
    max_iter : int
        Maximum sweeps ((1) for every token, then (2), (3)) per document.
    tol : float
        A document stops when the mean absolute change of gamma in a sweep is < tol.

    Returns
    -------
    int : total sweeps over all documents.
    """
    D, K = gamma.shape
    alpha_sum = 0.0
    lg_alpha = 0.0
    for k in range(K):
        alpha_sum += alpha[k]
        lg_alpha += math.lgamma(alpha[k])
    lg_alpha_sum = math.lgamma(alpha_sum)
    eta2 = np.empty(K)
    for k in range(K):
        eta2[k] = eta[k] * eta[k]
    S = np.empty(K)
    base = np.empty(K)
    coef = np.empty(K)
    logit = np.empty(K)
    expo = np.empty(K)
    rounds = 0
    for d in range(D):
        start = offsets[d]
        stop = offsets[d + 1]
        n_tok = stop - start
        if n_tok == 0:
            for k in range(K):
                gamma[d, k] = alpha[k]
                phibar[d, k] = alpha[k] / alpha_sum
            xi[d] = 0.0
            doc_terms[d] = 0.0
            continue
        inv_n = 1.0 / n_tok
        inv_n2 = inv_n * inv_n
        # S, eta^T S and sum_n (eta^T phi_n)^2 of the stored phi (warm start)
        for k in range(K):
            S[k] = 0.0
        sq = 0.0
        for i in range(start, stop):
            e = 0.0
            for k in range(K):
                S[k] += phi[i, k]
                e += eta[k] * phi[i, k]
            sq += e * e
        eS = 0.0
        diag = 0.0
        for k in range(K):
            eS += eta[k] * S[k]
            diag += eta2[k] * S[k]
        x = math.sqrt(max((eS * eS - sq + diag) * inv_n2, 0.0))
        half_y = 0.5 * c * ytil[d] * inv_n
        entropy = 0.0
        for _ in range(max_iter):
            rounds += 1
            lam_c = c * jj_lambda(x)
            g_sum = 0.0
            for k in range(K):
                g_sum += gamma[d, k]
            dg_sum = digamma(g_sum)
            for k in range(K):
                base[k] = (digamma(gamma[d, k]) - dg_sum + half_y * eta[k]
                           - lam_c * eta2[k] * inv_n2)
                coef[k] = -2.0 * lam_c * eta[k] * inv_n2
            entropy = 0.0
            sq = 0.0
            for i in range(start, stop):
                w = words[i]
                e_old = 0.0
                for k in range(K):
                    e_old += eta[k] * phi[i, k]
                rest = eS - e_old  # eta^T phi_{-n}
                m = -np.inf
                for k in range(K):
                    v = base[k] + log_beta_wk[w, k] + coef[k] * rest
                    logit[k] = v
                    if v > m:
                        m = v
                s = 0.0
                for k in range(K):
                    v = logit[k] - m
                    logit[k] = v
                    ex = math.exp(v)
                    expo[k] = ex
                    s += ex
                log_s = math.log(s)
                inv_s = 1.0 / s
                e_new = 0.0
                h = 0.0
                for k in range(K):
                    lp = logit[k] - log_s
                    p = expo[k] * inv_s
                    S[k] += p - phi[i, k]
                    phi[i, k] = p
                    e_new += eta[k] * p
                    h -= p * lp
                eS = rest + e_new
                sq += e_new * e_new
                entropy += h
            # recompute S exactly from the new phi (no drift from the running sums)
            for k in range(K):
                S[k] = 0.0
            for i in range(start, stop):
                for k in range(K):
                    S[k] += phi[i, k]
            change = 0.0
            eS = 0.0
            diag = 0.0
            for k in range(K):
                new = alpha[k] + S[k]
                change += abs(new - gamma[d, k])
                gamma[d, k] = new
                eS += eta[k] * S[k]
                diag += eta2[k] * S[k]
            x = math.sqrt(max((eS * eS - sq + diag) * inv_n2, 0.0))
            if change < tol * K:
                break
        g_sum = 0.0
        lg = 0.0
        for k in range(K):
            phibar[d, k] = S[k] * inv_n
            g_sum += gamma[d, k]
            lg += math.lgamma(gamma[d, k])
        xi[d] = x
        for i in range(start, stop):
            w = words[i]
            for k in range(K):
                stats_wk[w, k] += phi[i, k]
        doc_terms[d] = lg_alpha_sum - lg_alpha - math.lgamma(g_sum) + lg + entropy
    return rounds
