"""A deterministic spectral start: topics from anchor words of the word co-occurrences.

Arora, Ge, Halpern, Mimno, Moitra, Sontag, Wu & Zhu, "A practical algorithm for topic
modeling with provable guarantees" (ICML 2013), as R's ``stm`` uses it for
``init.type = "Spectral"`` (Roberts, Stewart & Tingley 2016, sec. 3.1):

1. the expected word co-occurrence ``Q = (1/D') sum_d (n_d n_d^T - diag(n_d)) /
   (N_d (N_d - 1))`` over the documents with ``N_d >= 2`` tokens among the
   :data:`MAX_WORDS` most frequent words (Arora et al. eq. 1), and its row-normalised
   ``Qbar`` (row i: ``p(w2 | w1 = i)``);
2. K anchor words by greedy orthogonal projection of the rows of ``Qbar`` (the row
   farthest from the span of those chosen so far; Arora et al. Algorithm 4, without the
   random projection);
3. RecoverL2: each word's row as a convex combination ``C_i`` of the anchors' rows (least
   squares on the simplex, projected gradient), so that ``p(k | w = i) = C_ik``, and by
   Bayes ``p(w = i | k) ∝ C_ik p(w = i)`` (Algorithm 3).

The topics are a function of the counts alone: no seed enters.
:func:`start_assignments` turns them into a first topic per token for a collapsed
sampler: each document's proportions from one E-step under the topics, then each token
to its most probable topic given the word and those proportions.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from numba import njit

__all__ = ["anchor_topics", "start_assignments", "MAX_WORDS"]

logger = logging.getLogger(__name__)

#: the words whose co-occurrences are formed (the most frequent ones; a dense M x M
#: matrix): the others get topics' probabilities from the documents they occur in
MAX_WORDS = 3000
#: accelerated projected-gradient steps of RecoverL2 (the objective is convex and its
#: Gram matrix K x K; a start needs no tighter fit)
RECOVER_STEPS = 150


def _project_rows_to_simplex(C: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row onto the probability simplex (Duchi et al. 2008)."""
    n, K = C.shape
    u = -np.sort(-C, axis=1)
    css = np.cumsum(u, axis=1) - 1.0
    ind = np.arange(1, K + 1)
    cond = u - css / ind > 0
    rho = K - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), rho] / (rho + 1)
    return np.maximum(C - theta[:, None], 0.0)


def cooccurrence(counts: sp.csr_matrix) -> tuple[np.ndarray, int]:
    """``Q`` (M, M) of step 1 for the columns of ``counts``, and the documents used."""
    X = sp.csr_matrix(counts, dtype=np.float64)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    used = lengths >= 2
    X = X[used]
    lengths = lengths[used]
    if X.shape[0] == 0:
        raise ValueError("init='spectral': no document has two tokens among the words "
                         "used for the co-occurrences")
    norm = 1.0 / (lengths * (lengths - 1.0))
    H = sp.diags(np.sqrt(norm)) @ X
    Q = (H.T @ H).toarray()
    Q -= np.diag(np.asarray(X.T @ norm).ravel())
    return Q / X.shape[0], int(X.shape[0])


def find_anchors(Qbar: np.ndarray, n_topics: int) -> np.ndarray:
    """K rows of ``Qbar`` by greedy orthogonal projection (step 2): each time the row
    with the largest residual norm after projecting out the directions of the anchors
    chosen so far (Gram-Schmidt; one matrix-vector product per anchor)."""
    residual = np.einsum("ij,ij->i", Qbar, Qbar)
    basis: list[np.ndarray] = []
    anchors = np.empty(n_topics, dtype=np.int64)
    for k in range(n_topics):
        residual[anchors[:k]] = -np.inf
        a = int(np.argmax(residual))
        anchors[k] = a
        u = Qbar[a].copy()
        for b in basis:
            u -= (u @ b) * b
        norm = float(np.linalg.norm(u))
        if norm <= 1e-300:
            continue
        u /= norm
        basis.append(u)
        residual -= (Qbar @ u) ** 2
    return anchors


def recover_l2(Qbar: np.ndarray, anchors: np.ndarray, steps: int = RECOVER_STEPS
               ) -> np.ndarray:
    """``C`` (M, K): each row of ``Qbar`` as a convex combination of the anchor rows,
    minimising ``|Qbar_i - C_i Qbar_S|^2`` by accelerated projected gradient (FISTA)
    onto the simplex (step 3)."""
    S = Qbar[anchors]                                   # (K, M)
    G = S @ S.T                                         # (K, K)
    B = Qbar @ S.T                                      # (M, K)
    step = 1.0 / (2.0 * max(float(np.linalg.eigvalsh(G)[-1]), 1e-300))
    K = anchors.size
    C = np.full((Qbar.shape[0], K), 1.0 / K)
    Y, t = C, 1.0
    for _ in range(int(steps)):
        C_next = _project_rows_to_simplex(Y - step * 2.0 * (Y @ G - B))
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        Y = C_next + ((t - 1.0) / t_next) * (C_next - C)
        C, t = C_next, t_next
    C[anchors] = np.eye(K)
    return C


def anchor_topics(counts: sp.csr_matrix | np.ndarray, n_topics: int, *,
                  max_words: int = MAX_WORDS) -> tuple[np.ndarray, np.ndarray]:
    """Topics (K, V) from anchor words (module docstring) and the anchors (K,) as word
    indices.  Words outside the ``max_words`` most frequent get probability 0 in every
    topic (a start needs no more).  One-line ValueError when fewer usable words than
    topics."""
    X = sp.csr_matrix(counts)
    V = X.shape[1]
    frequency = np.asarray(X.sum(axis=0)).ravel()
    kept = np.flatnonzero(frequency > 0)
    if kept.size > max_words:
        kept = np.sort(kept[np.argsort(-frequency[kept], kind="stable")[:max_words]])
    Q, n_docs = cooccurrence(X[:, kept])
    marginal = Q.sum(axis=1)
    usable = marginal > 0
    if int(usable.sum()) < n_topics:
        raise ValueError(f"init='spectral': {int(usable.sum())} words co-occur in the "
                         f"documents, fewer than the {n_topics} topics")
    kept, Q, marginal = kept[usable], Q[np.ix_(usable, usable)], marginal[usable]
    Qbar = Q / marginal[:, None]
    anchors = find_anchors(Qbar, n_topics)
    C = recover_l2(Qbar, anchors)
    A = C * marginal[:, None]                           # p(w, k) up to a constant
    A /= np.maximum(A.sum(axis=0, keepdims=True), 1e-300)
    topics = np.zeros((n_topics, V))
    topics[:, kept] = A.T
    logger.info("init='spectral': %d anchor words among %d words from %d documents",
                n_topics, kept.size, n_docs)
    return topics, kept[anchors]


def start_assignments(words: np.ndarray, docs: np.ndarray, counts: sp.csr_matrix,
                      topics: np.ndarray) -> np.ndarray:
    """A topic per token (int32) from ``topics`` (K, V): ``theta_d`` from one E-step
    under the topics with uniform proportions (``counts`` (D, V) times ``p(k | w)``;
    words without topic mass count for nothing), then each token's
    ``argmax_k topics[k, w] theta_dk`` (``argmax_k theta_dk`` for a word without mass)."""
    mass = topics.sum(axis=0)
    resp = np.divide(topics, mass, out=np.zeros_like(topics), where=mass > 0)  # p(k|w)
    theta = np.asarray(sp.csr_matrix(counts, dtype=np.float64) @ resp.T) + 1e-3
    theta /= theta.sum(axis=1, keepdims=True)
    z = np.empty(words.size, dtype=np.int32)
    by_word = np.ascontiguousarray(topics.T)            # (V, K)
    by_word[mass == 0] = 1.0                            # a word without mass: theta alone
    _most_probable(np.asarray(words, dtype=np.int64), np.asarray(docs, dtype=np.int64),
                   by_word, np.ascontiguousarray(theta), z)
    return z


@njit(cache=True)
def _most_probable(words: np.ndarray, docs: np.ndarray, by_word: np.ndarray,
                   theta: np.ndarray, z: np.ndarray) -> None:  # pragma: no cover - numba
    """z[i] = argmax_k by_word[w_i, k] theta[d_i, k] (the first maximum)."""
    K = by_word.shape[1]
    for i in range(words.size):
        w, d = words[i], docs[i]
        best, arg = -1.0, 0
        for k in range(K):
            value = by_word[w, k] * theta[d, k]
            if value > best:
                best, arg = value, k
        z[i] = arg
