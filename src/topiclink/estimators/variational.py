"""What the variational estimators share: inference of new documents from their words.

The LDA E-step with the topics fixed (no links, no labels) gives ``q(theta_d) =
Dir(gamma_d)`` and the mean topic assignments ``phibar_d``; ``transform`` is
``E_q[theta] = gamma / sum gamma`` (the topics contract) and :meth:`topic_features` is
``E_q[zbar] = phibar``, what a link function or a classifier reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.topics.fixed_topics import infer_doc_topics_variational
from topiclink.topics.variational import expected_proportions

__all__ = ["VariationalTopicsMixin", "TRANSFORM_TOL"]

#: convergence of gamma (mean absolute change) when inferring new documents
TRANSFORM_TOL = 1e-6


class VariationalTopicsMixin:
    """Hook: ``_inference_log_topics()`` -> (K, V) log topic weights of the E-step
    (default: the fitted ``log_topics_``, E log beta)."""

    def _inference_log_topics(self) -> np.ndarray:
        return np.asarray(self.log_topics_)

    def _query_topics(self, corpus: Corpus) -> np.ndarray:
        """What a link function reads for new documents (default ``E_q[theta]``)."""
        return self._doc_topics(corpus, self._prediction_generator())

    def _infer(self, corpus: Corpus) -> tuple[np.ndarray, np.ndarray]:
        """Variational (gamma, phibar) of documents from their words, topics fixed."""
        return infer_doc_topics_variational(corpus, self._inference_log_topics(),
                                            np.asarray(self.alpha_, dtype=np.float64),
                                            int(self.transform_iter), TRANSFORM_TOL)

    def _doc_topics(self, corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
        """``E_q[theta] = gamma / sum gamma`` (no words: alpha / sum alpha)."""
        return expected_proportions(self._infer(corpus)[0])

    def topic_features(self, X: Any) -> np.ndarray:
        """``E_q[zbar] = phibar`` (n_docs, K) of documents: what the link function or the
        classifier uses.  The same inference as :meth:`transform`, summarised by the mean
        topic assignments instead of ``E_q[theta_d] = (alpha + N_d phibar_d) / (sum alpha
        + N_d)``; a document without known words gets ``alpha / sum(alpha)``."""
        self._check_fitted()
        return self._infer(self._as_model_corpus(X))[1]
