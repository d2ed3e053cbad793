"""Topic proportions of new documents with the topics fixed, by exact Metropolis-Hastings:
O(1) per token at any K (the prediction-time counterpart of
:mod:`~topiclink.topics.kernels.lda_warp`).

Target of token i (document d, word w, current topic s), ``C_dk`` the document's counts
without token i::

    pi(k) ∝ (C_dk + alpha_dk) phi_kw.

Each Metropolis-Hastings step of a token cycles two proposals (LightLDA's cycle, Yuan et
al., WWW 2015, section 3):

* a *document proposal* ``q(k | s) ∝ C_dk + [k = s] + alpha_dk`` (the topic of a uniformly
  chosen token of d, token i included, or with probability ``sum(alpha_d) / (N_d +
  sum(alpha_d))`` a draw from alpha_d); its reverse has the same normaliser, so a proposal
  t != s is accepted with probability ``min(1, phi_tw / phi_sw)``;
* a *word proposal* ``q(k) ∝ phi_kw`` from word w's alias table (built once per batch for
  its distinct words), accepted with ``min(1, (C_dt + alpha_dt) / (C_ds + alpha_ds))``.

Both leave pi invariant (checked by enumeration in ``tests/test_fixed_mh.py``).  Each token
starts at a draw from its word proposal (at K = 1000 on 20 Newsgroups a uniform start
left the held-out log-likelihood 0.02 nats a token below Gibbs's after 50 sweeps).  The counts
after ``burn_in`` sweeps are averaged as in
:func:`~topiclink.topics.kernels.lda.infer_documents`.  Document d's chain runs on its own
stream seeded from ``keys[d]``, so its result does not depend on the other documents, their
order, the chunk of documents or the thread that runs it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from topiclink.kernels.rng import seed_state, uniform
from topiclink.kernels.sampling import prior_row
from topiclink.topics.kernels.lda import average_counts
from topiclink.topics.kernels.lda_mh import alias_draw, build_alias

__all__ = ["word_tables", "infer_documents_mh"]


@njit(cache=True, nogil=True)
def word_tables(phi_wk: np.ndarray, vocab: np.ndarray, weights: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Alias tables ``prob`` / ``alias`` (n, K) of ``weights_k phi_kw`` for each word
    ``w = vocab[j]`` (row j draws topic k with probability ``weights_k phi_kw / total_j``)
    and the totals (n,)."""
    n_topics = phi_wk.shape[1]
    prob = np.empty((vocab.shape[0], n_topics))
    alias = np.empty((vocab.shape[0], n_topics), np.int32)
    totals = np.empty(vocab.shape[0])
    row = np.empty(n_topics)
    small = np.empty(n_topics, np.int64)
    large = np.empty(n_topics, np.int64)
    for j in range(vocab.shape[0]):
        pw = phi_wk[vocab[j]]
        for k in range(n_topics):
            row[k] = weights[k] * pw[k]
        totals[j] = build_alias(row, prob[j], alias[j], small, large)
        if totals[j] <= 0.0:
            for k in range(n_topics):       # a word no topic emits: uniform proposals
                prob[j, k] = 1.0
                alias[j, k] = k
    return prob, alias, totals


@njit(cache=True, nogil=True)
def infer_documents_mh(local: np.ndarray, words: np.ndarray, offsets: np.ndarray,
                       d_start: int, d_end: int, phi_wk: np.ndarray, prob: np.ndarray,
                       alias: np.ndarray, alpha: np.ndarray, keys: np.ndarray, n_iter: int,
                       burn_in: int, smooth: bool, n_mh: int, theta: np.ndarray) -> None:
    """Rows ``d_start:d_end`` of ``theta`` (D, K): each document's topic proportions after
    ``n_iter`` sweeps of ``n_mh`` cycles (document then word proposal) per token, the
    counts after ``burn_in`` sweeps averaged (module docstring).

    ``words`` (N,) are the tokens' word ids (rows of ``phi_wk`` (V, K)), ``local`` (N,)
    their rows in the tables of :func:`word_tables`; ``alpha`` (K,), (1, K) or (D, K).
    Smoothed and empty-document results as :func:`~topiclink.topics.kernels.lda.
    infer_documents`.
    """
    n_topics = phi_wk.shape[1]
    state = np.empty(4, dtype=np.uint64)
    cd = np.zeros(n_topics, dtype=np.int64)
    a_prob = np.empty(n_topics)
    a_alias = np.empty(n_topics, np.int64)
    small = np.empty(n_topics, np.int64)
    large = np.empty(n_topics, np.int64)
    a_total = 0.0
    shared_prior = alpha.ndim == 1 or alpha.shape[0] == 1
    if shared_prior:
        a_total = build_alias(prior_row(alpha, 0), a_prob, a_alias, small, large)
    for d in range(d_start, d_end):
        seed_state(keys[d], state)
        lo, hi = offsets[d], offsets[d + 1]
        n_d = hi - lo
        ad = prior_row(alpha, d)
        if not shared_prior:
            a_total = build_alias(ad, a_prob, a_alias, small, large)
        z = np.empty(n_d, dtype=np.int64)
        cd[:] = 0
        for i in range(n_d):            # start from the word proposal: k ∝ phi_kw
            row = local[lo + i]
            k = alias_draw(prob[row], alias[row], 0, n_topics, uniform(state))
            z[i] = k
            cd[k] += 1
        p_doc = n_d / (n_d + a_total)
        acc = theta[d]
        acc[:] = 0.0
        for it in range(n_iter):
            for i in range(n_d):
                pw = phi_wk[words[lo + i]]
                row = local[lo + i]
                s = z[i]
                cd[s] -= 1
                for _ in range(n_mh):
                    # document proposal: accepted with phi_tw / phi_sw
                    u = uniform(state)
                    if u < p_doc:
                        t = z[min(int(u / p_doc * n_d), n_d - 1)]
                    else:
                        t = alias_draw(a_prob, a_alias, 0, n_topics,
                                       (u - p_doc) / (1.0 - p_doc))
                    if t != s and (pw[t] >= pw[s] or uniform(state) * pw[s] < pw[t]):
                        s = t
                        z[i] = s        # the proposal counts token i at its topic
                    # word proposal: accepted with (C_dt + alpha_t) / (C_ds + alpha_s)
                    t = alias_draw(prob[row], alias[row], 0, n_topics, uniform(state))
                    if t != s:
                        num = cd[t] + ad[t]
                        den = cd[s] + ad[s]
                        if num >= den or uniform(state) * den < num:
                            s = t
                            z[i] = s
                cd[s] += 1
            if it >= burn_in:
                for k in range(n_topics):
                    acc[k] += cd[k]
        average_counts(acc, ad, n_iter - burn_in, smooth)
