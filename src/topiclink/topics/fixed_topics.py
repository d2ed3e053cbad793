"""Inference of documents' topic proportions with the topics fixed (prediction time).

Collapsed Gibbs, or the O(1)-per-token Metropolis-Hastings of
:mod:`~topiclink.topics.kernels.fixed_mh`, on the documents' z only (the Gibbs models), both
threaded over documents; the variational E-step without links or labels (the variational
models); the held-out split of the document-completion protocol.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.execution.resolve import run_blocks_in_order
from topiclink.topics.kernels import fixed_mh, fixed_sparse
from topiclink.topics.kernels import lda as lda_kernels
from topiclink.topics.kernels import variational as var_kernels

__all__ = ["INFER_SAMPLERS", "infer_doc_topics", "infer_doc_topics_variational",
           "completion_split"]

#: the token samplers of :func:`infer_doc_topics`
INFER_SAMPLERS = ("gibbs", "sparse", "mh")
#: the word alias tables of ``sampler="mh"`` are built for this many (word, topic) entries
#: at a time at most (12 bytes each: ~200 MB); larger batches run in chunks of documents
TABLE_ENTRIES = 1 << 24
#: document-then-word proposal cycles per token and sweep of ``sampler="mh"``
MH_CYCLES = 1
#: documents per threaded task
DOCS_PER_TASK = 64


def infer_doc_topics(corpus: Corpus, phi_wk: np.ndarray, alpha: np.ndarray,
                     rng: np.random.Generator, n_iter: int = 50,
                     burn_in: int | None = None, smooth: bool = True,
                     sampler: str = "gibbs", n_threads: int = 1) -> np.ndarray:
    """Topic proportions of documents with the topics fixed (sweeps on their z only).

    Target p(z_n = k) ∝ (C_dk^-n + alpha_k) phi_{k w_n}; ``sampler="gibbs"`` draws each
    token from it exactly (O(K) per token); ``"sparse"`` too, in O(K_d) per token, K_d the
    topics the document uses (:mod:`~topiclink.topics.kernels.fixed_sparse`; one prior
    vector); ``"mh"`` takes a document and a word proposal per token, each accepted by
    Metropolis-Hastings (O(1) per token, the same target, mixing less per sweep:
    :mod:`~topiclink.topics.kernels.fixed_mh`).  theta_d is estimated from the counts
    averaged over the sweeps after ``burn_in`` (default ``n_iter // 2``):
    theta_dk = (Cbar_dk + alpha_k) / (N_d + sum alpha).  Empty documents get the prior mean.
    With ``smooth=False`` the empirical proportions ``zbar_dk = Cbar_dk / N_d`` are returned
    instead (what the relational models' link scores use; empty documents get 1/K).

    Randomness: one 64-bit seed is drawn from ``rng``; each document's chain runs on its
    own stream, seeded from that seed and the document's own words
    (:func:`topiclink.topics.kernels.lda.document_keys`), so a document gets the same result
    whichever other documents share its batch, in any order and on any of ``n_threads``
    threads.

    Returns
    -------
    theta : ndarray (n_docs, K)
    """
    if n_iter < 1:
        raise ValueError(f"n_iter must be >= 1, got {n_iter}")
    burn = n_iter // 2 if burn_in is None else burn_in
    if not 0 <= burn < n_iter:
        raise ValueError(f"burn_in must be in [0, n_iter), got {burn}")
    if sampler not in INFER_SAMPLERS:
        raise ValueError(f"sampler must be one of {INFER_SAMPLERS}, got {sampler!r}")
    tok = corpus.tokens()
    seed = np.uint64(rng.integers(0, 2**63 - 1))
    keys = lda_kernels.document_keys(tok.words, tok.offsets, seed)
    theta = np.zeros((corpus.n_docs, phi_wk.shape[1]))
    args = (keys, int(n_iter), int(burn), bool(smooth))
    if sampler == "gibbs":
        _threaded(lambda lo, hi: lda_kernels.infer_documents(
            tok.words, tok.offsets, lo, hi, phi_wk, alpha, *args, theta),
            0, corpus.n_docs, n_threads)
        return theta
    alpha = np.asarray(alpha, dtype=np.float64)
    if sampler == "sparse":
        if alpha.ndim == 2 and alpha.shape[0] > 1:
            raise ValueError("sampler='sparse' needs one prior alpha for all documents: "
                             "use sampler='gibbs' or 'mh' with per-document priors")
        alpha = np.ascontiguousarray(alpha.reshape(-1)[:phi_wk.shape[1]])
    weights = alpha if sampler == "sparse" else np.ones(phi_wk.shape[1])
    local = np.empty_like(tok.words)
    for lo, hi in _vocabulary_chunks(tok.words, tok.offsets, phi_wk.shape[1]):
        words = tok.words[tok.offsets[lo]:tok.offsets[hi]]
        vocab, local[tok.offsets[lo]:tok.offsets[hi]] = np.unique(words, return_inverse=True)
        tables = fixed_mh.word_tables(phi_wk, vocab.astype(np.int64), weights)
        if sampler == "sparse":
            _threaded(lambda a, b, tables=tables: fixed_sparse.infer_documents_sparse(
                local, tok.words, tok.offsets, a, b, phi_wk, *tables, alpha, *args, theta),
                lo, hi, n_threads)
        else:
            _threaded(lambda a, b, tables=tables: fixed_mh.infer_documents_mh(
                local, tok.words, tok.offsets, a, b, phi_wk, *tables[:2], alpha, *args,
                MH_CYCLES, theta), lo, hi, n_threads)
    return theta


def _threaded(run, lo: int, hi: int, n_threads: int) -> None:
    """``run(a, b)`` over consecutive ranges of documents ``lo:hi`` on ``n_threads``
    threads (each writes its own rows)."""
    starts = list(range(lo, hi, DOCS_PER_TASK)) or [lo]
    run_blocks_in_order(lambda b: run(starts[b], min(starts[b] + DOCS_PER_TASK, hi)),
                        len(starts), n_threads, lambda _: None)


def _vocabulary_chunks(words: np.ndarray, offsets: np.ndarray,
                       n_topics: int) -> list[tuple[int, int]]:
    """Consecutive ranges of documents whose distinct words times ``n_topics`` stay within
    :data:`TABLE_ENTRIES` (a document alone may exceed it)."""
    most = max(1, TABLE_ENTRIES // max(n_topics, 1))
    bounds, lo = [], 0
    n_docs = offsets.size - 1
    while lo < n_docs:
        hi = lo + 1
        step = 1
        while hi < n_docs:                       # grow by doubling, then keep the last fit
            nxt = min(n_docs, hi + step)
            if np.unique(words[offsets[lo]:offsets[nxt]]).size > most:
                break
            hi, step = nxt, step * 2
        bounds.append((lo, hi))
        lo = hi
    return bounds


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
