"""Exact Metropolis-Hastings for LDA in WarpLDA's visiting order: O(1) per token, one row
of counts at a time.

Target of token i (document d, word w, current topic s), all counts without token i::

    pi(k) ∝ (C_dk + alpha_k) (C_wk + beta) / (C_k + V beta).

WarpLDA (Chen, Li, Zhu & Chen, VLDB 2016, sections 4-5) alternates two phases, so that each
phase reads one row of counts and the global topic counts only:

* **word phase** (tokens word by word): a *document proposal* ``q(k | s) ∝ C_dk + [k = s]
  + alpha_k`` (the topic of a uniformly chosen token of d, token i included, or with
  probability ``sum(alpha) / (N_d + sum(alpha))`` a draw from alpha).  Its reverse has the
  same normaliser and the document factor cancels: a proposal t != s is accepted with
  probability ``min(1, (C_wt + beta)(C_s + V beta) / ((C_ws + beta)(C_t + V beta)))``,
  which needs word w's counts only;
* **document phase** (tokens document by document): a *word proposal* ``q(k | s) ∝ C_wk +
  [k = s] + beta`` (the topic of a uniformly chosen occurrence of w, token i included, or
  with probability ``K beta / (N_w + K beta)`` a uniform topic); acceptance
  ``min(1, (C_dt + alpha_t)(C_s + V beta) / ((C_ds + alpha_s)(C_t + V beta)))``.

WarpLDA draws each proposal in the phase *before* the one that accepts it, from the counts of
that time ("delayed updates"), so its chain is not exactly the collapsed posterior's.  Here
every proposal is drawn when it is used, from the current assignments, and every count in an
acceptance ratio is current, so each step leaves pi invariant (checked by enumeration in
``tests/test_lda_warp.py``).  What keeps the accesses local is the data layout, not stale
counts: the assignments are held twice, in document order (``z``) and in word order
(``zw``, ``zw[j] = z[pos[j]]``), kept equal move by move, so a proposal is one read of the
other order's array; the phase's own row (``C_w`` or ``C_d``) is counted into a K-vector
from its tokens when the phase reaches it (exact: only this row's loop moves its tokens);
``C_k`` is updated in place.  The count matrices ``ndk`` / ``nwk`` are not read by the
sweep; it moves their entries for each token whose topic changed (four writes per change,
against a rebuild's D K + V K: ~2x the tokens per second at K = 1000).

The prior alpha is a vector (K,): its draws come from one alias table.  A per-document
prior needs one table per document in the word phase and is not supported here.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from topiclink.kernels.rng import uniform
from topiclink.topics.kernels.lda_mh import alias_draw, build_alias, word_index

__all__ = ["word_order", "sweep_warp"]


def word_order(words: np.ndarray, docs: np.ndarray, n_words: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The word order of the tokens: ``ptr`` (V + 1,) and ``pos`` (N,) with word w's
    tokens at ``pos[ptr[w]:ptr[w + 1]]`` (document order within a word), ``slot`` (N,)
    the inverse (``pos[slot[i]] = i``) and ``docs_w`` (N,) the document of each slot."""
    ptr, pos = word_index(words, n_words)
    slot = np.empty_like(pos)
    slot[pos] = np.arange(pos.size, dtype=pos.dtype)
    return ptr, pos, slot, np.ascontiguousarray(docs[pos], dtype=np.int32)


@njit(inline="always")
def _shift(cnt: np.ndarray, nk: np.ndarray, inv: np.ndarray, k: int, delta: int,
           vbeta: float) -> None:
    """Token counts of topic ``k`` in the current row and corpus moved by ``delta``, with
    the cached ``1 / (n_k + V beta)``."""
    cnt[k] += delta
    nk[k] += delta
    inv[k] = 1.0 / (nk[k] + vbeta)


@njit(inline="always")
def _move(doc_row: np.ndarray, word_row: np.ndarray, old: int, new: int) -> None:
    """One token of the document and word moved from topic ``old`` to ``new``."""
    doc_row[old] -= 1
    doc_row[new] += 1
    word_row[old] -= 1
    word_row[new] += 1


@njit(cache=True, nogil=True)
def sweep_warp(words: np.ndarray, offsets: np.ndarray, z: np.ndarray, zw: np.ndarray,
               ndk: np.ndarray, nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray,
               beta: float, state: np.ndarray,
               ptr: np.ndarray, pos: np.ndarray, slot: np.ndarray, docs_w: np.ndarray,
               n_mh: int = 1) -> None:
    """One sweep: the word phase then the document phase, ``n_mh`` Metropolis-Hastings
    steps per token in each (module docstring).

    ``z`` (N,) int32 assignments in document order, ``zw`` (N,) the same in word order
    (``zw[j] == z[pos[j]]``; both updated); ``ndk`` (D, K), ``nwk`` (V, K) and ``nk`` (K,)
    int32 counts (updated);
    ``alpha`` float64 (K,); ``state`` the xoshiro state; ``ptr`` / ``pos`` / ``slot`` /
    ``docs_w`` from :func:`word_order`.
    """
    n_topics = nk.shape[0]
    n_words = ptr.shape[0] - 1
    vbeta = n_words * beta
    kbeta = n_topics * beta
    cnt = np.zeros(n_topics, np.int32)
    inv = np.empty(n_topics)
    for k in range(n_topics):
        inv[k] = 1.0 / (nk[k] + vbeta)
    a_prob = np.empty(n_topics)
    a_alias = np.empty(n_topics, np.int64)
    a_total = build_alias(alpha, a_prob, a_alias, np.empty(n_topics, np.int64),
                          np.empty(n_topics, np.int64))
    # ---- word phase: document proposals, accepted with C_w and C_k
    for w in range(n_words):
        lo, hi = ptr[w], ptr[w + 1]
        for j in range(lo, hi):
            cnt[zw[j]] += 1
        for j in range(lo, hi):
            s = zw[j]
            s0 = s
            lo_d = offsets[docs_w[j]]
            n_d = offsets[docs_w[j] + 1] - lo_d
            p_doc = n_d / (n_d + a_total)
            _shift(cnt, nk, inv, s, -1, vbeta)
            for _ in range(n_mh):
                u = uniform(state)
                if u < p_doc:
                    t = z[lo_d + min(int(u / p_doc * n_d), n_d - 1)]
                else:
                    t = alias_draw(a_prob, a_alias, 0, n_topics, (u - p_doc) / (1.0 - p_doc))
                if t == s:
                    continue
                ratio = ((cnt[t] + beta) * inv[t]) / ((cnt[s] + beta) * inv[s])
                if ratio >= 1.0 or uniform(state) < ratio:
                    s = t
                    z[pos[j]] = s       # the document proposal counts token i at its topic
            _shift(cnt, nk, inv, s, 1, vbeta)
            if s != s0:
                zw[j] = s
                _move(ndk[docs_w[j]], nwk[w], s0, s)
        for j in range(lo, hi):
            cnt[zw[j]] = 0
    # ---- document phase: word proposals, accepted with C_d and C_k
    for d in range(offsets.shape[0] - 1):
        lo_d, hi_d = offsets[d], offsets[d + 1]
        for i in range(lo_d, hi_d):
            cnt[z[i]] += 1
        for i in range(lo_d, hi_d):
            s = z[i]
            s0 = s
            w = words[i]
            lo_w = ptr[w]
            n_w = ptr[w + 1] - lo_w
            p_word = n_w / (n_w + kbeta)
            _shift(cnt, nk, inv, s, -1, vbeta)
            for _ in range(n_mh):
                u = uniform(state)
                if u < p_word:
                    t = zw[lo_w + min(int(u / p_word * n_w), n_w - 1)]
                else:
                    t = min(int((u - p_word) / (1.0 - p_word) * n_topics), n_topics - 1)
                if t == s:
                    continue
                ratio = ((cnt[t] + alpha[t]) * inv[t]) / ((cnt[s] + alpha[s]) * inv[s])
                if ratio >= 1.0 or uniform(state) < ratio:
                    s = t
                    zw[slot[i]] = s     # the word proposal counts token i at its topic
            _shift(cnt, nk, inv, s, 1, vbeta)
            if s != s0:
                z[i] = s
                _move(ndk[d], nwk[w], s0, s)
        for i in range(lo_d, hi_d):
            cnt[z[i]] = 0
