"""Logistic supervised LDA (gSLDA): a corpus with one binary label per document."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from topiclink.data.checks import check_n_topics
from topiclink.data.corpus import Corpus
from topiclink.datasets.synthetic._common import DocLength
from topiclink.datasets.synthetic.lda import LDATruth, draw_lda
from topiclink.random import RandomState, as_generator

__all__ = ["SLDATruth", "make_slda_data"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False, kw_only=True)
class SLDATruth(LDATruth):
    """The parameters that generated a :func:`make_slda_data` labelled corpus.

    Attributes
    ----------
    eta : ndarray of float64, shape (K,)
        Label weights; ``P(y_d = 1) = sigmoid(eta^T zbar_d)``.
    label_proba : ndarray of float64, shape (D,)
        ``sigmoid(eta^T zbar_d)``.
    """

    eta: np.ndarray
    label_proba: np.ndarray


def make_slda_data(n_docs: int = 300, n_words: int = 500, n_topics: int = 5,
                   doc_length: DocLength = 80, eta: np.ndarray | None = None,
                   doc_topic_prior: float | np.ndarray = 0.1,
                   topic_word_prior: float | np.ndarray = 0.01,
                   random_state: RandomState = None
                   ) -> tuple[tuple[Corpus, np.ndarray], SLDATruth]:
    """Draw a labelled corpus from (logistic) supervised LDA.

    Words as in :func:`make_lda_data`; then one binary label per document::

        y_d ~ Bernoulli(sigmoid(eta^T zbar_d))

    (Zhu et al., gSLDA, ACL 2013; ``docs/design/slda.md``).

    Parameters
    ----------
    n_docs, n_words, n_topics, doc_length : as in :func:`make_lda_data`
    eta : ndarray of shape (K,), optional
        Label weights.  Default ``linspace(-3, 3, K)``: topics range from mostly
        negative (sigmoid(-3) = 0.05) to mostly positive (0.95), labels roughly balanced.
    doc_topic_prior, topic_word_prior : float or array
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    (corpus, y) : (Corpus, ndarray of int64 in {0, 1}, shape (D,))
    truth : SLDATruth
        The LDA parameters plus ``eta`` (K,) and ``label_proba`` (D,).
    """
    K = check_n_topics(n_topics)
    if eta is None:
        eta_ = np.linspace(-3.0, 3.0, K)
    else:
        eta_ = np.asarray(eta, dtype=np.float64)
        if eta_.shape != (K,):
            raise ValueError(f"eta must have shape ({K},), got {eta_.shape}")
        if not np.isfinite(eta_).all():
            raise ValueError("eta must be finite")
        eta_ = eta_.copy()
    rng = as_generator(random_state)
    corpus, lda = draw_lda(rng, n_docs, n_words, K, doc_length, doc_topic_prior,
                           topic_word_prior, name="synthetic-slda")
    proba = expit(lda.zbar @ eta_)
    y = (rng.random(proba.size) < proba).astype(np.int64)
    logger.info("make_slda_data: %d documents, %.3f positive", y.size, y.mean())
    truth = SLDATruth(topic_word=lda.topic_word, doc_topic=lda.doc_topic,
                      assignments=lda.assignments, zbar=lda.zbar,
                      doc_topic_prior=lda.doc_topic_prior,
                      topic_word_prior=lda.topic_word_prior, eta=eta_, label_proba=proba)
    return (corpus, y), truth
