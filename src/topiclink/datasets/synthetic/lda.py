"""LDA (Blei, Ng & Jordan 2003): the shared word model of every synthetic generator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import check_n_topics
from topiclink.data.corpus import Corpus
from topiclink.datasets.synthetic._common import DocLength, check_int, check_prior, doc_lengths
from topiclink.random import RandomState, as_generator

__all__ = ["LDATruth", "draw_lda", "make_lda_data"]


@dataclass(frozen=True, eq=False)
class LDATruth:
    """The parameters that generated a :func:`make_lda_data` corpus.

    Attributes
    ----------
    topic_word : ndarray of float64, shape (K, V)
        phi; rows sum to 1.
    doc_topic : ndarray of float64, shape (D, K)
        theta; rows sum to 1.
    assignments : ndarray of int32, shape (n_tokens,)
        z, aligned with ``corpus.tokens()``: token ``n`` of the flat arrays (word
        ``tokens().words[n]`` in document ``tokens().docs[n]``) has topic
        ``assignments[n]``.
    zbar : ndarray of float64, shape (D, K)
        Empirical topic proportions of the drawn z.
    doc_topic_prior, topic_word_prior : ndarray of float64, shapes (K,), (V,)
        alpha and beta.
    """

    topic_word: np.ndarray
    doc_topic: np.ndarray
    assignments: np.ndarray
    zbar: np.ndarray
    doc_topic_prior: np.ndarray
    topic_word_prior: np.ndarray

    @property
    def n_topics(self) -> int:
        return int(self.topic_word.shape[0])


def draw_lda(rng: np.random.Generator, n_docs: int, n_words: int, n_topics: int,
             doc_length: DocLength, doc_topic_prior: object, topic_word_prior: object,
             name: str) -> tuple[Corpus, LDATruth]:
    """Draw a corpus and its :class:`LDATruth` from ``rng`` (the core of every generator).

    The draws, in order: document lengths (if a range), phi, theta, the topic counts per
    document, then the words topic by topic; the same ``rng`` state gives the same data.
    """
    D = check_int(n_docs, "n_docs", 1)
    V = check_int(n_words, "n_words", 2)
    K = check_n_topics(n_topics)
    alpha = check_prior(doc_topic_prior, K, "doc_topic_prior")
    beta = check_prior(topic_word_prior, V, "topic_word_prior")
    lengths = doc_lengths(doc_length, D, rng)

    phi = rng.dirichlet(beta, size=K)
    phi /= phi.sum(axis=1, keepdims=True)
    theta = rng.dirichlet(alpha, size=D)
    theta /= theta.sum(axis=1, keepdims=True)

    # topic counts per document, then one categorical word draw per token and topic
    ndk = rng.multinomial(lengths, theta).astype(np.int64)                # (D, K)
    docs = np.repeat(np.arange(D, dtype=np.int64), lengths)
    z = np.repeat(np.tile(np.arange(K, dtype=np.int64), D), ndk.ravel())  # doc-major
    words = np.empty(z.size, dtype=np.int64)
    for k in range(K):
        mask = z == k
        words[mask] = rng.choice(V, size=int(mask.sum()), p=phi[k])
    # order tokens as Corpus.tokens() does: by document, then word (then topic)
    order = np.lexsort((z, words, docs))
    docs, words, z = docs[order], words[order], z[order]
    counts = sp.csr_matrix((np.ones(z.size, dtype=np.int32), (docs, words)), shape=(D, V))
    corpus = Corpus(counts, name=name)
    if not np.array_equal(corpus.tokens().words, words):  # pragma: no cover - invariant
        raise AssertionError("token order of the synthetic corpus is not Corpus.tokens()")
    zbar = ndk / lengths[:, None]
    truth = LDATruth(topic_word=phi, doc_topic=theta, assignments=z.astype(np.int32),
                     zbar=zbar, doc_topic_prior=alpha, topic_word_prior=beta)
    return corpus, truth


def make_lda_data(n_docs: int = 200, n_words: int = 500, n_topics: int = 5,
                  doc_length: DocLength = 100, doc_topic_prior: float | np.ndarray = 0.1,
                  topic_word_prior: float | np.ndarray = 0.01,
                  random_state: RandomState = None) -> tuple[Corpus, LDATruth]:
    """Draw a corpus from LDA.

    ::

        phi_k ~ Dir(beta), theta_d ~ Dir(alpha), z_dn ~ Mult(theta_d), w_dn ~ Mult(phi_{z_dn})

    Parameters
    ----------
    n_docs, n_words, n_topics : int
        D, V, K (K >= 2).
    doc_length : int or (int, int)
        An int N gives every document exactly N tokens; a pair ``(min, max)`` draws
        ``N_d ~ Uniform{min, ..., max}`` (inclusive).  Must be >= 1, so no document is
        empty.
    doc_topic_prior : float or array of shape (K,)
        alpha (symmetric when a float).
    topic_word_prior : float or array of shape (V,)
        beta.  Smaller values give sparser, better separated topics; 0.01 over 500 words
        gives nearly disjoint topics.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    corpus : Corpus
        D documents over V words ``"w0".."w{V-1}"``.
    truth : LDATruth
        ``topic_word`` (K, V), ``doc_topic`` (D, K), ``assignments`` (n_tokens,) aligned
        with ``corpus.tokens()``, ``zbar`` (D, K).
    """
    rng = as_generator(random_state)
    return draw_lda(rng, n_docs, n_words, n_topics, doc_length, doc_topic_prior,
                    topic_word_prior, name="synthetic-lda")
