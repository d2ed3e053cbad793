"""Exact Metropolis-Hastings Z step of the relational and supervised topic models (gRTM
family, gSLDA / Gibbs MedLDA): O(1) per proposal in the topics, O(deg) in the pairs.

The target of token n (document d, word w, current topic s) is the full conditional of
:func:`topiclink.relational.kernels.rtm.sweep_relational_range` (Chen et al. 2015,
eq. 14), all counts without token n::

    pi(k) ∝ (C_dk + alpha_dk) (C_wk + beta) / (C_k + V beta) * exp(l_d(C_d + e_k)),
    l_d(c) = sum_j a_j (c . w_j) / N_d - b_j (c . w_j)^2 / (2 N_d^2),

the sum over document d's training pairs j with their augmentation coefficients (a_j,
b_j) and pair vectors w_j (``u_j = U zbar_j`` for an out-pair, ``v_j = U^T zbar_j`` for
an in-pair; gSLDA: one pair per document whose vector is eta).  The proposals are
:func:`topiclink.topics.kernels.lda_mh.sweep_mh`'s (LightLDA's document and word
proposals, drawn from the current assignments, alternating), so their LDA factors cancel
as there, and the link factor enters as the *Metropolis-Hastings correction*

    exp(l_d(C + e_t) - l_d(C + e_s)) = exp(sum_j a_j (w_jt - w_js) / N_d
                                           - b_j ((x_j + w_jt)^2 - (x_j + w_js)^2) / (2 N_d^2)),

with ``x_j = C . w_j`` (token n left out), kept per pair and updated when a token moves:
O(deg(d)) per proposal, never O(K).  Other documents' vectors w_j are fixed while d is
swept (documents are visited in order, so each step is a step of the sequential chain);
d's own ``U zbar_d`` / ``U^T zbar_d`` rows are refreshed after its sweep by
:func:`~topiclink.relational.kernels.rtm.refresh_document_rows`, as the Gibbs sweep does
(O(K) for a diagonal U, else O(K^2): full U is bounded to small K by its K^4 precision).
Every step leaves pi invariant (checked by enumeration in ``tests/test_rtm_mh.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.rng import uniform
from topiclink.kernels.sampling import check_prior, n_prior_rows, prior_row
from topiclink.relational.kernels.rtm import gather_pairs, max_degree, refresh_document_rows
from topiclink.topics.kernels.lda_mh import alias_draw, build_alias

__all__ = ["sweep_relational_mh_range", "REFRESH_NONE", "REFRESH_DIAGONAL", "REFRESH_FULL",
           "AUTO_MIN_TOPICS"]

#: ``sampler="auto"`` of gRTM and gSLDA takes this sweep from this many topics on (the
#: exact scheme), chosen by the word log joint after equal CPU time
#: (benchmarks/results/token_family_auto.json, 0.5 M tokens, one thread): at K = 1000 gSLDA
#: reached -10.44 with it after 48 s against Gibbs's -10.81 after 56 s, gRTM -11.30 after
#: 28 s against -11.64 after 65 s; at K = 100 Gibbs was ahead for both (gSLDA -7.99 against
#: -8.14 after ~40 s).  DMR keeps Gibbs: at K = 1000 its Gibbs chain was ahead by time
#: (-10.31 after 30 s against -10.40 after 49 s), its lambda optimisation dominating both.
AUTO_MIN_TOPICS = 1000

#: what the sweep does with a swept document's rows of Uz / Vz: nothing (no later pair reads
#: them, as gSLDA's), ``U[k, k] zbar_dk`` (diagonal U), or ``U zbar_d`` / ``U^T zbar_d``
REFRESH_NONE = 0
REFRESH_DIAGONAL = 1
REFRESH_FULL = 2


@njit(cache=True, nogil=True)
def sweep_relational_mh_range(words: np.ndarray, offsets: np.ndarray, z: np.ndarray,
                              ndk: np.ndarray, nwk: np.ndarray, nk: np.ndarray,
                              alpha: np.ndarray, beta: float, state: np.ndarray,
                              word_ptr: np.ndarray, word_pos: np.ndarray, U: np.ndarray,
                              Uz: np.ndarray, Vz: np.ndarray, out_ptr: np.ndarray,
                              out_nbr: np.ndarray, out_a: np.ndarray, out_b: np.ndarray,
                              in_ptr: np.ndarray, in_nbr: np.ndarray, in_a: np.ndarray,
                              in_b: np.ndarray, n_mh: int, refresh: int, d_start: int,
                              d_end: int) -> None:
    """The Metropolis-Hastings Z sweep of documents ``d_start:d_end`` (in place; module
    docstring), ``n_mh`` steps per token, document proposal first.

    Parameters
    ----------
    words, offsets, z, ndk, nwk, nk, alpha, beta, state : as :func:`kernels.lda.sweep`
        (``alpha`` (K,), (1, K) or (D, K))
    word_ptr, word_pos : :func:`topiclink.topics.kernels.lda_mh.word_index` of ``words``
        (the word proposal reads ``z`` there: the whole corpus's tokens, so one sweep is
        one sequential chain's)
    U, Uz, Vz, out_*, in_* : as :func:`~topiclink.relational.kernels.rtm.
        sweep_relational_range`
    refresh : :data:`REFRESH_NONE`, :data:`REFRESH_DIAGONAL` or :data:`REFRESH_FULL`
    """
    K = nk.shape[0]
    vbeta = nwk.shape[0] * beta
    kbeta = K * beta
    check_prior(alpha, offsets.shape[0] - 1, K)
    small = np.empty(K, np.int64)
    large = np.empty(K, np.int64)
    inv = np.empty(K)
    for k in range(K):
        inv[k] = 1.0 / (nk[k] + vbeta)
    a_prob = np.empty(K)
    a_alias = np.empty(K, np.int64)
    per_doc = n_prior_rows(alpha) > 1
    a_total = build_alias(prior_row(alpha, 0), a_prob, a_alias, small, large)
    max_deg = max_degree(out_ptr, in_ptr)
    W = np.empty((max_deg, K))
    wa = np.empty(max_deg)
    wb = np.empty(max_deg)
    x = np.empty(max_deg)
    for d in range(d_start, d_end):
        lo_d, hi_d = offsets[d], offsets[d + 1]
        n_d = hi_d - lo_d
        if n_d == 0:
            continue
        cd = ndk[d]
        ad = prior_row(alpha, d)
        if per_doc:
            a_total = build_alias(ad, a_prob, a_alias, small, large)
        p_doc = n_d / (n_d + a_total)
        n_pairs = gather_pairs(d, Uz, Vz, out_ptr, out_nbr, out_a, out_b, in_ptr, in_nbr,
                               in_a, in_b, W, wa, wb)
        for j in range(n_pairs):                 # x_j = C_d . w_j, all of d's tokens
            x[j] = 0.0
        for k in range(K):
            c = cd[k]
            if c != 0:
                for j in range(n_pairs):
                    x[j] += c * W[j, k]
        inv_n = 1.0 / n_d
        half_inv_n2 = 0.5 * inv_n * inv_n
        for i in range(lo_d, hi_d):
            w = words[i]
            cw = nwk[w]
            s = z[i]
            cd[s] -= 1
            cw[s] -= 1
            nk[s] -= 1
            inv[s] = 1.0 / (nk[s] + vbeta)
            for j in range(n_pairs):      # (2-D indexing: a row view would cost a
                x[j] -= W[j, s]          # reference count per token)
            lo_w = word_ptr[w]
            n_w = word_ptr[w + 1] - lo_w
            p_word = n_w / (n_w + kbeta)
            for step in range(n_mh):
                u = uniform(state)
                if step % 2 == 0:
                    if u < p_doc:
                        t = z[lo_d + min(int(u / p_doc * n_d), n_d - 1)]
                    else:
                        t = alias_draw(a_prob, a_alias, 0, K, (u - p_doc) / (1.0 - p_doc))
                    if t == s:
                        continue
                    ratio = ((cw[t] + beta) * inv[t]) / ((cw[s] + beta) * inv[s])
                else:
                    if u < p_word:
                        t = z[word_pos[lo_w + min(int(u / p_word * n_w), n_w - 1)]]
                    else:
                        t = min(int((u - p_word) / (1.0 - p_word) * K), K - 1)
                    if t == s:
                        continue
                    ratio = ((cd[t] + ad[t]) * inv[t]) / ((cd[s] + ad[s]) * inv[s])
                if n_pairs > 0:
                    link = 0.0
                    for j in range(n_pairs):
                        wt = W[j, t]
                        ws = W[j, s]
                        xt = x[j] + wt
                        xs = x[j] + ws
                        link += wa[j] * (wt - ws) * inv_n - wb[j] * (xt * xt - xs * xs) \
                            * half_inv_n2
                    ratio *= math.exp(min(link, 700.0))
                if ratio >= 1.0 or uniform(state) < ratio:
                    s = t
                    z[i] = s        # both proposals count token i at its current topic
            cd[s] += 1
            cw[s] += 1
            nk[s] += 1
            inv[s] = 1.0 / (nk[s] + vbeta)
            for j in range(n_pairs):
                x[j] += W[j, s]
        if refresh != REFRESH_NONE:
            refresh_document_rows(d, cd, inv_n, U, Uz, Vz, refresh == REFRESH_DIAGONAL)
