"""Inference of documents' topic proportions with the topics fixed (prediction time).

Collapsed Gibbs on the documents' z only (the Gibbs models) and the variational E-step
without links or labels (the variational models); the held-out split of the
document-completion protocol.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.topics.kernels import lda as lda_kernels
from topiclink.topics.kernels import variational as var_kernels

__all__ = ["infer_doc_topics", "infer_doc_topics_variational", "completion_split"]


def infer_doc_topics(corpus: Corpus, phi_wk: np.ndarray, alpha: np.ndarray,
                     rng: np.random.Generator, n_iter: int = 50,
                     burn_in: int | None = None, smooth: bool = True) -> np.ndarray:
    """Topic proportions of documents with the topics fixed (Gibbs on their z only).

    p(z_n = k) ∝ (C_dk^-n + alpha_k) phi_{k w_n}; theta_d is estimated from the counts
    averaged over the sweeps after ``burn_in`` (default ``n_iter // 2``):
    theta_dk = (Cbar_dk + alpha_k) / (N_d + sum alpha).  Empty documents get the prior mean.
    With ``smooth=False`` the empirical proportions ``zbar_dk = Cbar_dk / N_d`` are returned
    instead (what the relational models' link scores use; empty documents get 1/K).

    Randomness: one 64-bit seed is drawn from ``rng``; each document's chain runs on its
    own stream, seeded from that seed and the document's own words
    (:func:`topiclink.topics.kernels.lda.document_keys`), so a document gets the same result
    whichever other documents share its batch, and in any order.

    Returns
    -------
    theta : ndarray (n_docs, K)
    """
    if n_iter < 1:
        raise ValueError(f"n_iter must be >= 1, got {n_iter}")
    burn = n_iter // 2 if burn_in is None else burn_in
    if not 0 <= burn < n_iter:
        raise ValueError(f"burn_in must be in [0, n_iter), got {burn}")
    tok = corpus.tokens()
    seed = np.uint64(rng.integers(0, 2**63 - 1))
    keys = lda_kernels.document_keys(tok.words, tok.offsets, seed)
    return lda_kernels.infer_documents(tok.words, tok.offsets, phi_wk, alpha, keys,
                                       int(n_iter), int(burn), bool(smooth))


def infer_doc_topics_variational(corpus: Corpus, log_topics: np.ndarray, alpha: np.ndarray,
                                 max_iter: int, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Variational (gamma, phibar) of documents from their words, topics fixed.

    The LDA E-step (``q(theta_d) = Dir(gamma_d)``, ``q(z) = Mult(phi)``) run per
    (document, distinct word) with the word's count; ``log_topics`` (K, V) are the log
    topic weights (``log beta`` or ``E_q[log beta]``).  A document without words keeps
    ``gamma = alpha`` and ``phibar = 1/K``.
    """
    K = alpha.size
    counts = corpus.counts
    D = counts.shape[0]
    doc_len = corpus.doc_lengths.astype(np.float64)
    gamma = np.tile(alpha, (D, 1)) + doc_len[:, None] / K
    phibar = np.full((D, K), 1.0 / K)
    var_kernels.e_step(counts.indptr.astype(np.int64), counts.indices.astype(np.int32),
                       counts.data.astype(np.float64), doc_len,
                       np.zeros(D + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                       np.ascontiguousarray(np.asarray(log_topics).T), np.zeros(K),
                       alpha, gamma, phibar, np.zeros((counts.shape[1], K)), np.zeros(D),
                       int(max_iter), float(tol))
    return gamma, phibar


def completion_split(corpus: Corpus, rng: np.random.Generator,
                     fraction: float = 0.5) -> tuple[Corpus, Corpus]:
    """Split every document's tokens at random into an observed and a held-out part.

    The document-completion protocol (Wallach et al. 2009): estimate theta from the
    observed part, score the held-out part.  Each token is held out with probability
    ``fraction`` independently.
    """
    tok = corpus.tokens()
    held = rng.random(tok.words.size) < fraction
    shape = corpus.counts.shape

    def part(mask: np.ndarray) -> Corpus:
        M = sp.csr_matrix((np.ones(int(mask.sum()), np.int32),
                           (tok.docs[mask], tok.words[mask])), shape=shape)
        return Corpus(M, vocabulary=corpus.vocabulary, doc_ids=corpus.doc_ids)

    return part(~held), part(held)
