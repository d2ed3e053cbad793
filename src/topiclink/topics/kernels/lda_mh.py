"""Metropolis-Hastings token sampler for LDA with O(1) work per token.

The proposals of LightLDA (Yuan et al., "LightLDA: big topic models on modest computer
clusters", WWW 2015, section 3) drawn from the *current* counts, so that the chain is
exact.  The target of token n in document d with word w is the collapsed conditional of
:func:`topiclink.topics.kernels.lda.sweep` (all counts without token n, current topic s)::

    pi(k) ∝ (C_dk + alpha_dk) (C_kw + beta) inv_k,      inv_k = 1 / (C_k + V beta).

Instead of evaluating pi for all K topics, ``n_mh`` Metropolis-Hastings steps alternate
two proposals, each drawn in O(1) and each depending only on the current state:

* document proposal ``q_d(k | s) ∝ C_dk + [k = s] + alpha_dk``: the topic of a uniformly
  chosen token of d (token n included, at s), or with probability
  ``sum alpha_d / (N_d + sum alpha_d)`` an alias draw from alpha_d.  Both directions have
  the same normaliser, so a proposal t != s is accepted with probability
  ``min(1, (C_tw + beta) inv_t / ((C_sw + beta) inv_s))``;
* word proposal ``q_w(k | s) ∝ C_kw + [k = s] + beta``: the topic of a uniformly chosen
  occurrence of w in the corpus (token n included), or with probability
  ``K beta / (N_w + K beta)`` a uniform topic; acceptance
  ``min(1, (C_td + alpha_dt) inv_t / ((C_sd + alpha_ds) inv_s))``.

LightLDA draws its word proposal from alias tables of counts frozen at the start of a
sweep; a proposal that depends on earlier states is not exact (the enumeration test in
``tests/test_lda_mh.py`` rejects it), so the occurrences of each word are indexed instead
(:func:`word_index`, O(N) memory, built once per fit).  Each step leaves pi invariant;
the chain mixes more slowly per sweep than the dense kernel's exact Gibbs draws.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from topiclink.kernels.rng import uniform
from topiclink.kernels.sampling import check_prior, n_prior_rows, prior_row

__all__ = ["alias_draw", "build_alias", "sweep_mh", "word_index"]


@njit(cache=True)
def build_alias(weights: np.ndarray, prob: np.ndarray, alias: np.ndarray,
                small: np.ndarray, large: np.ndarray) -> float:
    """Vose's alias table of ``weights`` (n,) into ``prob`` / ``alias`` (n,); ``small``
    and ``large`` are int64 scratch of length n.  Returns the total weight."""
    n = weights.shape[0]
    total = 0.0
    for i in range(n):
        total += weights[i]
    if n == 0 or total <= 0.0:
        return 0.0
    ns = 0
    nl = 0
    for i in range(n):
        prob[i] = weights[i] * n / total
        if prob[i] < 1.0:
            small[ns] = i
            ns += 1
        else:
            large[nl] = i
            nl += 1
    while ns > 0 and nl > 0:
        ns -= 1
        s = small[ns]
        g = large[nl - 1]
        alias[s] = g
        prob[g] = (prob[g] + prob[s]) - 1.0
        if prob[g] < 1.0:
            nl -= 1
            small[ns] = g
            ns += 1
    while nl > 0:
        nl -= 1
        prob[large[nl]] = 1.0
        alias[large[nl]] = large[nl]
    while ns > 0:                      # rounding leftovers
        ns -= 1
        prob[small[ns]] = 1.0
        alias[small[ns]] = small[ns]
    return total


@njit(inline="always")
def alias_draw(prob: np.ndarray, alias: np.ndarray, lo: int, n: int, u: float) -> int:
    """One draw from the alias table ``prob[lo:lo + n]`` / ``alias[lo:lo + n]``
    (:func:`build_alias`) given a uniform ``u`` in [0, 1)."""
    x = u * n
    i = min(int(x), n - 1)
    if x - i < prob[lo + i]:
        return i
    return alias[lo + i]


@njit(cache=True)
def word_index(words: np.ndarray, n_words: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of every word's tokens: ``pos[ptr[w]:ptr[w + 1]]`` (counting sort)."""
    ptr = np.zeros(n_words + 1, np.int64)
    for i in range(words.shape[0]):
        ptr[words[i] + 1] += 1
    for w in range(n_words):
        ptr[w + 1] += ptr[w]
    fill = ptr[:-1].copy()
    pos = np.empty(words.shape[0], np.int64)
    for i in range(words.shape[0]):
        w = words[i]
        pos[fill[w]] = i
        fill[w] += 1
    return ptr, pos


@njit(cache=True)
def sweep_mh(words: np.ndarray, offsets: np.ndarray, z: np.ndarray, ndk: np.ndarray,
             nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray, beta: float,
             state: np.ndarray, word_ptr: np.ndarray, word_pos: np.ndarray,
             n_mh: int = 2) -> None:
    """One sweep with ``n_mh`` Metropolis-Hastings steps per token (document proposal
    first, then alternating); ``word_ptr`` / ``word_pos`` from :func:`word_index`; the
    other arguments as :func:`topiclink.topics.kernels.lda.sweep`."""
    n_topics = nk.shape[0]
    vbeta = nwk.shape[0] * beta
    kbeta = n_topics * beta
    check_prior(alpha, offsets.shape[0] - 1, n_topics)
    small = np.empty(n_topics, np.int64)
    large = np.empty(n_topics, np.int64)
    inv = np.empty(n_topics)
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
    a_prob = np.empty(n_topics)
    a_alias = np.empty(n_topics, np.int64)
    per_doc = n_prior_rows(alpha) > 1
    a_total = build_alias(prior_row(alpha, 0), a_prob, a_alias, small, large)
    for d in range(offsets.shape[0] - 1):
        lo_d, hi_d = offsets[d], offsets[d + 1]
        if hi_d == lo_d:
            continue
        cd = ndk[d]
        ad = prior_row(alpha, d)
        if per_doc:
            a_total = build_alias(ad, a_prob, a_alias, small, large)
        n_d = hi_d - lo_d
        p_doc = n_d / (n_d + a_total)
        for i in range(lo_d, hi_d):
            w = words[i]
            cw = nwk[w]
            s = z[i]
            cd[s] -= 1
            cw[s] -= 1
            nk[s] -= 1
            inv[s] = 1.0 / (nk[s] + vbeta)
            lo_w = word_ptr[w]
            n_w = word_ptr[w + 1] - lo_w
            p_word = n_w / (n_w + kbeta)
            for step in range(n_mh):
                u = uniform(state)
                if step % 2 == 0:
                    if u < p_doc:
                        t = z[lo_d + min(int(u / p_doc * n_d), n_d - 1)]
                    else:
                        t = alias_draw(a_prob, a_alias, 0, n_topics,
                                        (u - p_doc) / (1.0 - p_doc))
                    if t == s:
                        continue
                    ratio = ((cw[t] + beta) * inv[t]) / ((cw[s] + beta) * inv[s])
                else:
                    if u < p_word:
                        t = z[word_pos[lo_w + min(int(u / p_word * n_w), n_w - 1)]]
                    else:
                        t = min(int((u - p_word) / (1.0 - p_word) * n_topics),
                                n_topics - 1)
                    if t == s:
                        continue
                    ratio = ((cd[t] + ad[t]) * inv[t]) / ((cd[s] + ad[s]) * inv[s])
                if ratio >= 1.0 or uniform(state) < ratio:
                    s = t
                    z[i] = s        # both proposals count token i at its current topic
            cd[s] += 1
            cw[s] += 1
            nk[s] += 1
            inv[s] = 1.0 / (nk[s] + vbeta)
