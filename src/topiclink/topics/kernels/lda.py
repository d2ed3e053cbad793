"""Collapsed Gibbs kernels for LDA: the token loop every Gibbs model reuses.

Full conditional of one token (Griffiths & Steyvers 2004, eq. 5):

    p(z_n = k | z^-n, w) ∝ (C_dk^-n + alpha_k) (C_kw^-n + beta) / (C_k^-n + V beta)

Design (``docs/design/lda.md``): int32 counts, doc-topic D x K and word-topic V x K
row-major so a token touches two contiguous rows; a cached ``inv_k = 1/(C_k + V beta)``
updated in two entries per move; unnormalised probabilities in a loop without
loop-carried dependencies; the cumulative search in blocks of ``BLOCK`` topics so the
dependent add chain is ``K/BLOCK + BLOCK`` long instead of ``K``
(:func:`topiclink.kernels.sampling.draw_blocked`).

``alpha`` is a vector (K,) or, per document, a matrix (1, K) or (D, K) whose row d is
document d's prior (``alpha_dk`` replaces ``alpha_k`` above; see
:mod:`topiclink.kernels.sampling`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.rng import seed_state, splitmix64, uniform
from topiclink.kernels.sampling import (
    BLOCK,
    check_prior,
    draw_blocked,
    n_prior_rows,
    prior_row,
)


@njit(cache=True)
def init_counts(words: np.ndarray, docs: np.ndarray, z: np.ndarray, ndk: np.ndarray,
                nwk: np.ndarray, nk: np.ndarray) -> None:
    """Fill count matrices (zeroed by the caller) from assignments ``z``."""
    for i in range(words.shape[0]):
        k = z[i]
        ndk[docs[i], k] += 1
        nwk[words[i], k] += 1
        nk[k] += 1


#: up to this many topics the probabilities and their block sums are formed in one pass
#: (+8 % tokens/s at K = 10); above it the probability loop stays a separate, vectorised
#: loop.  The same numbers, bit for bit, either way.
FUSE_MAX_TOPICS = 16

# The token update is written out in :func:`sweep_range` and :func:`sweep_block` rather
# than shared through ``@njit(inline="always")`` helpers: Numba's IR-level inlining of the
# conditional and the draw cost 15-25 % of the throughput (measured at K = 10, 50, 100;
# ``benchmarks/lda_throughput.py``).  Both are checked draw for draw against
# ``tests/naive.py`` and against each other.


@njit(cache=True, nogil=True)
def sweep_range(words: np.ndarray, offsets: np.ndarray, d_start: int, d_end: int,
                z: np.ndarray, ndk: np.ndarray, nwk: np.ndarray, nk: np.ndarray,
                alpha: np.ndarray, beta: float, state: np.ndarray) -> None:
    """Sweep documents ``d_start:d_end`` only (arguments as :func:`sweep`); releases the
    GIL (for thread pools)."""
    n_topics = nk.shape[0]
    vbeta = nwk.shape[0] * beta
    kp = ((n_topics + BLOCK - 1) // BLOCK) * BLOCK
    n_blocks = kp // BLOCK
    n_full = n_topics // BLOCK
    fuse = n_topics <= FUSE_MAX_TOPICS
    p = np.zeros(kp)
    block_sums = np.zeros(n_blocks)
    inv = np.empty(n_topics)
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
    check_prior(alpha, offsets.shape[0] - 1, n_topics)
    for d in range(d_start, d_end):
        cd = ndk[d]
        ad = prior_row(alpha, d)
        for i in range(offsets[d], offsets[d + 1]):
            cw = nwk[words[i]]
            old = z[i]
            cd[old] -= 1
            cw[old] -= 1
            nk[old] -= 1
            inv[old] = 1.0 / (nk[old] + vbeta)
            # p_k = (C_dk + alpha_dk) (C_kw + beta) inv_k and the running block totals
            total = 0.0
            if fuse:
                for b in range(n_full):
                    base = b * BLOCK
                    s = 0.0
                    for j in range(BLOCK):
                        v = (cd[base + j] + ad[base + j]) * (cw[base + j] + beta) \
                            * inv[base + j]
                        p[base + j] = v
                        s += v
                    total += s
                    block_sums[b] = total
                if n_full < n_blocks:
                    s = 0.0
                    for k in range(n_full * BLOCK, n_topics):
                        v = (cd[k] + ad[k]) * (cw[k] + beta) * inv[k]
                        p[k] = v
                        s += v
                    total += s
                    block_sums[n_full] = total
            else:
                for k in range(n_topics):
                    p[k] = (cd[k] + ad[k]) * (cw[k] + beta) * inv[k]
                for b in range(n_blocks):
                    s = 0.0
                    base = b * BLOCK
                    for j in range(BLOCK):
                        s += p[base + j]
                    total += s
                    block_sums[b] = total
            # the draw of :func:`~topiclink.kernels.sampling.draw_blocked`
            target = uniform(state) * total
            b = 0
            for c in range(n_blocks - 1):
                b += block_sums[c] <= target
            acc = block_sums[b - 1] if b > 0 else 0.0
            base = b * BLOCK
            j = 0
            for c in range(BLOCK - 1):
                acc += p[base + c]
                j += acc <= target
            new = base + j
            while p[new] <= 0.0 and new > 0:
                new -= 1
            z[i] = new
            cd[new] += 1
            cw[new] += 1
            nk[new] += 1
            inv[new] = 1.0 / (nk[new] + vbeta)


@njit(cache=True)
def sweep(words: np.ndarray, offsets: np.ndarray, z: np.ndarray, ndk: np.ndarray,
          nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray, beta: float,
          state: np.ndarray) -> None:
    """One collapsed Gibbs sweep over every token, documents in order (in place).

    Parameters
    ----------
    words : int32 (N,), tokens sorted by document
    offsets : int64 (D + 1,)
    z : int32 (N,) topic assignments
    ndk : int32 (D, K); nwk : int32 (V, K); nk : int32 (K,)
    alpha : float64 (K,), or (1, K) / (D, K) per-document priors (row d: document d)
    beta : float (symmetric)
    state : uint64 (4,) xoshiro256** state of this stream
    """
    sweep_range(words, offsets, 0, offsets.shape[0] - 1, z, ndk, nwk, nk, alpha, beta,
                state)


@njit(cache=True, nogil=True)
def sweep_block(words: np.ndarray, docs: np.ndarray, index: np.ndarray, lo: int, hi: int,
                z: np.ndarray, ndk: np.ndarray, nwk: np.ndarray, nk: np.ndarray,
                alpha: np.ndarray, beta: float, state: np.ndarray, n_words: int) -> None:
    """Sweep tokens ``lo:hi`` of a permuted token list (the partition scheme's block).

    Token ``j`` of the list has word-topic counts ``nwk[words[j]]``, document ``docs[j]``
    and topic ``z[index[j]]`` (``z`` stays in corpus order).  The tokens of one document
    are consecutive.  ``nwk`` may be a worker's copy of some words' rows only (the hot
    words of :mod:`topiclink.topics.partition`), so the vocabulary size V of the
    conditional's V beta is ``n_words``.  The full conditional is :func:`sweep`'s; ``nk``
    may be a worker's private copy of the topic totals.  Releases the GIL.
    """
    n_topics = nk.shape[0]
    vbeta = n_words * beta
    kp = ((n_topics + BLOCK - 1) // BLOCK) * BLOCK
    n_blocks = kp // BLOCK
    n_full = n_topics // BLOCK
    fuse = n_topics <= FUSE_MAX_TOPICS
    p = np.zeros(kp)
    block_sums = np.zeros(n_blocks)
    inv = np.empty(n_topics)
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
    check_prior(alpha, ndk.shape[0], n_topics)
    i = lo
    while i < hi:
        d = docs[i]
        cd = ndk[d]
        ad = prior_row(alpha, d)
        while i < hi and docs[i] == d:
            t = index[i]
            cw = nwk[words[i]]
            old = z[t]
            cd[old] -= 1
            cw[old] -= 1
            nk[old] -= 1
            inv[old] = 1.0 / (nk[old] + vbeta)
            # p_k = (C_dk + alpha_dk) (C_kw + beta) inv_k and the running block totals
            total = 0.0
            if fuse:
                for b in range(n_full):
                    base = b * BLOCK
                    s = 0.0
                    for j in range(BLOCK):
                        v = (cd[base + j] + ad[base + j]) * (cw[base + j] + beta) \
                            * inv[base + j]
                        p[base + j] = v
                        s += v
                    total += s
                    block_sums[b] = total
                if n_full < n_blocks:
                    s = 0.0
                    for k in range(n_full * BLOCK, n_topics):
                        v = (cd[k] + ad[k]) * (cw[k] + beta) * inv[k]
                        p[k] = v
                        s += v
                    total += s
                    block_sums[n_full] = total
            else:
                for k in range(n_topics):
                    p[k] = (cd[k] + ad[k]) * (cw[k] + beta) * inv[k]
                for b in range(n_blocks):
                    s = 0.0
                    base = b * BLOCK
                    for j in range(BLOCK):
                        s += p[base + j]
                    total += s
                    block_sums[b] = total
            # the draw of :func:`~topiclink.kernels.sampling.draw_blocked`
            target = uniform(state) * total
            b = 0
            for c in range(n_blocks - 1):
                b += block_sums[c] <= target
            acc = block_sums[b - 1] if b > 0 else 0.0
            base = b * BLOCK
            j = 0
            for c in range(BLOCK - 1):
                acc += p[base + c]
                j += acc <= target
            new = base + j
            while p[new] <= 0.0 and new > 0:
                new -= 1
            z[t] = new
            cd[new] += 1
            cw[new] += 1
            nk[new] += 1
            inv[new] = 1.0 / (nk[new] + vbeta)
            i += 1


@njit(cache=True, nogil=True)
def sweep_fixed_topics(words: np.ndarray, offsets: np.ndarray, z: np.ndarray,
                       ndk: np.ndarray, phi_wk: np.ndarray, alpha: np.ndarray,
                       state: np.ndarray) -> None:
    """One Gibbs sweep with the topics fixed: p(z_n = k) ∝ (C_dk^-n + alpha_k) phi_{k w_n}.

    Used to infer topic proportions of new documents.  ``phi_wk`` is the V x K
    transpose of the topic-word matrix (contiguous rows per word); ``alpha`` as
    :func:`sweep`.
    """
    n_topics = phi_wk.shape[1]
    kp = ((n_topics + BLOCK - 1) // BLOCK) * BLOCK
    n_blocks = kp // BLOCK
    p = np.zeros(kp)
    block_sums = np.zeros(n_blocks)
    check_prior(alpha, offsets.shape[0] - 1, n_topics)
    for d in range(offsets.shape[0] - 1):
        cd = ndk[d]
        ad = prior_row(alpha, d)
        for i in range(offsets[d], offsets[d + 1]):
            pw = phi_wk[words[i]]
            old = z[i]
            cd[old] -= 1
            for k in range(n_topics):
                p[k] = (cd[k] + ad[k]) * pw[k]
            new = draw_blocked(p, block_sums, n_blocks, uniform(state))
            z[i] = new
            cd[new] += 1


@njit(cache=True)
def log_joint(ndk: np.ndarray, nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray,
              beta: float) -> float:
    """Collapsed log joint log p(w, z | alpha, beta) (Griffiths & Steyvers 2004, eqs. 2-3).

    Zero counts contribute nothing beyond the constants, so the V x K loop is cheap.  With
    per-document priors (``alpha`` (D, K)) document d's terms use its row ``alpha_d``:
    ``lgamma(sum alpha_d) - lgamma(N_d + sum alpha_d) + sum_k [lgamma(C_dk + alpha_dk)
    - lgamma(alpha_dk)]``.
    """
    n_docs, n_topics = ndk.shape
    n_words = nwk.shape[0]
    lg_beta = math.lgamma(beta)
    ll = n_topics * (math.lgamma(n_words * beta))
    for k in range(n_topics):
        ll -= math.lgamma(nk[k] + n_words * beta)
    for w in range(n_words):
        for k in range(n_topics):
            c = nwk[w, k]
            if c > 0:
                ll += math.lgamma(c + beta) - lg_beta
    check_prior(alpha, n_docs, n_topics)
    per_doc = n_prior_rows(alpha) > 1
    alpha_sum = 0.0
    lg_alpha_sum = 0.0
    lg_alpha = np.empty(n_topics)
    for d in range(n_docs):
        ad = prior_row(alpha, d)
        if d == 0 or per_doc:
            alpha_sum = 0.0
            for k in range(n_topics):
                alpha_sum += ad[k]
                lg_alpha[k] = math.lgamma(ad[k])
            lg_alpha_sum = math.lgamma(alpha_sum)
        nd = 0
        for k in range(n_topics):
            c = ndk[d, k]
            nd += c
            if c > 0:
                ll += math.lgamma(c + ad[k]) - lg_alpha[k]
        ll += lg_alpha_sum - math.lgamma(nd + alpha_sum)
    return ll


@njit(cache=True)
def token_log_likelihood(words: np.ndarray, offsets: np.ndarray, theta: np.ndarray,
                         phi_wk: np.ndarray) -> float:
    """sum_n log sum_k theta_{d_n k} phi_{k w_n} over the given tokens."""
    ll = 0.0
    n_topics = theta.shape[1]
    for d in range(offsets.shape[0] - 1):
        td = theta[d]
        for i in range(offsets[d], offsets[d + 1]):
            pw = phi_wk[words[i]]
            s = 0.0
            for k in range(n_topics):
                s += td[k] * pw[k]
            ll += math.log(s)
    return ll


@njit(cache=True, nogil=True)
def document_keys(words: np.ndarray, offsets: np.ndarray, seed: np.uint64) -> np.ndarray:
    """A 64-bit key per document from ``seed`` and the document's own tokens only (their
    word ids in corpus order), so the key -- and the random stream seeded from it -- does
    not depend on the other documents of a batch."""
    n_docs = offsets.shape[0] - 1
    keys = np.empty(n_docs, dtype=np.uint64)
    for d in range(n_docs):
        h = splitmix64(seed)
        for i in range(offsets[d], offsets[d + 1]):
            h = splitmix64(h ^ np.uint64(words[i]))
        keys[d] = splitmix64(h ^ np.uint64(offsets[d + 1] - offsets[d]))
    return keys


@njit(nogil=True)
def average_counts(acc: np.ndarray, ad: np.ndarray, n_kept: int, smooth: bool) -> None:
    """``acc`` (K,), a document's counts summed over ``n_kept`` sweeps, made its topic
    proportions in place: ``(Cbar_k + alpha_k) / (N_d + sum alpha)`` (``smooth``) or
    ``Cbar_k / N_d``; an empty document gets 1/K unsmoothed."""
    n_topics = acc.shape[0]
    total = 0.0
    for k in range(n_topics):
        acc[k] /= n_kept
        if smooth:
            acc[k] += ad[k]
        total += acc[k]
    if total > 0.0:
        for k in range(n_topics):
            acc[k] /= total
    else:
        for k in range(n_topics):
            acc[k] = 1.0 / n_topics


@njit(cache=True, nogil=True)
def infer_documents(words: np.ndarray, offsets: np.ndarray, d_start: int, d_end: int,
                    phi_wk: np.ndarray, alpha: np.ndarray, keys: np.ndarray, n_iter: int,
                    burn_in: int, smooth: bool, theta: np.ndarray) -> None:
    """Rows ``d_start:d_end`` of ``theta`` (D, K): the topic proportions of those
    documents with the topics fixed, each from its own stream.

    Document d's stream is seeded from ``keys[d]``; its topics start uniformly at random
    and are swept ``n_iter`` times with p(z_n = k) ∝ (C_dk^-n + alpha_dk) phi_{k w_n};
    the counts after ``burn_in`` sweeps are averaged: theta_dk = (Cbar_dk + alpha_dk) /
    (N_d + sum_k alpha_dk) (``smooth``) or Cbar_dk / N_d (empty documents: 1/K).
    """
    n_topics = phi_wk.shape[1]
    kp = ((n_topics + BLOCK - 1) // BLOCK) * BLOCK
    n_blocks = kp // BLOCK
    p = np.zeros(kp)
    block_sums = np.zeros(n_blocks)
    state = np.empty(4, dtype=np.uint64)
    cd = np.zeros(n_topics, dtype=np.int64)
    for d in range(d_start, d_end):
        seed_state(keys[d], state)
        lo, hi = offsets[d], offsets[d + 1]
        z = np.empty(hi - lo, dtype=np.int64)
        cd[:] = 0
        for i in range(hi - lo):
            k = min(int(uniform(state) * n_topics), n_topics - 1)
            z[i] = k
            cd[k] += 1
        ad = prior_row(alpha, d)
        acc = theta[d]
        acc[:] = 0.0
        for it in range(n_iter):
            for i in range(hi - lo):
                pw = phi_wk[words[lo + i]]
                cd[z[i]] -= 1
                for k in range(n_topics):
                    p[k] = (cd[k] + ad[k]) * pw[k]
                new = draw_blocked(p, block_sums, n_blocks, uniform(state))
                z[i] = new
                cd[new] += 1
            if it >= burn_in:
                for k in range(n_topics):
                    acc[k] += cd[k]
        average_counts(acc, ad, n_iter - burn_in, smooth)
