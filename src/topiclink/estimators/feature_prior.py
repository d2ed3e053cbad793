"""What topic models with feature-dependent priors share (DMR, KTM).

A document's Dirichlet prior alpha_d is a function of its features; the verbs that infer
new documents (``transform``, document-completion ``perplexity`` / ``score``) take the
documents' ``features`` and use each document's own prior (without features: ``alpha_``,
the mean training prior).  Hooks: ``predict_alpha(features) -> (n, K)`` and
``transform_iter``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.random import RandomState
from topiclink.topics.fixed_topics import infer_doc_topics

__all__ = ["FeaturePriorTopicsMixin"]


class FeaturePriorTopicsMixin:
    """Per-document priors from features in the inference of new documents."""

    def predict_alpha(self, features: Any) -> np.ndarray:     # pragma: no cover - hook
        raise NotImplementedError

    def predict_topics(self, features: Any) -> np.ndarray:
        """Prior mean topic proportions alpha_d / sum_k alpha_dk (n, K) at these feature
        values, without words (e.g. the topics expected in a future year)."""
        alpha = self.predict_alpha(features)
        return alpha / alpha.sum(axis=1, keepdims=True)

    def _query_prior(self, X: Any, features: Any, what: str
                     ) -> tuple[Corpus, np.ndarray]:
        """The corpus of ``X`` over the model's vocabulary and its documents' priors (n, K)
        from ``features`` (row i: document i; None: ``alpha_`` for every document)."""
        self._check_fitted()
        corpus = self._as_model_corpus(X)
        if features is None:
            return corpus, np.asarray(self.alpha_, dtype=np.float64)
        if _n_rows(features) != corpus.n_docs:
            from topiclink.data.checks import DataError

            raise DataError(f"{what}: features have {_n_rows(features)} rows for "
                            f"{corpus.n_docs} documents")
        return corpus, self.predict_alpha(features)

    def _topics_under(self, alpha: np.ndarray) -> Any:
        """``doc_topics(corpus, rng)`` inferring proportions under the prior ``alpha``
        ((K,) or one row per document)."""
        def doc_topics(corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
            return infer_doc_topics(corpus, np.ascontiguousarray(self.components_.T),
                                    alpha, rng, n_iter=int(self.transform_iter))
        return doc_topics

    def _doc_topics(self, corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
        return self._topics_under(np.asarray(self.alpha_, dtype=np.float64))(corpus, rng)

    def transform(self, X: Any, features: Any = None) -> np.ndarray:
        """Expected topic proportions (n_docs, K) of documents, topics fixed, each with the
        prior alpha_d of its ``features`` (without features: ``alpha_``, the mean
        training prior).  A document without known words gets its prior mean."""
        from topiclink.data.checks import check_memory
        from topiclink.estimators.capabilities import inference_memory

        corpus, alpha = self._query_prior(X, features, "transform")
        K = int(np.shape(self.components_)[0])
        check_memory(inference_memory(corpus, K) + 8 * np.size(alpha), f"transform: "
                     f"{corpus.n_docs} documents x {K} topics", "transform fewer documents "
                     "at a time")
        return self._topics_under(alpha)(corpus, self._prediction_generator())

    def log_likelihood_completion(self, X: Any, fraction: float = 0.5,
                                  random_state: RandomState = None, *,
                                  features: Any = None) -> tuple[float, int]:
        """Held-out log-likelihood by document completion (see
        :meth:`TopicsMixin.log_likelihood_completion`), theta inferred on the observed
        part with each document's prior alpha_d from ``features`` (default ``alpha_``)."""
        corpus, alpha = self._query_prior(X, features, "log_likelihood_completion")
        return self._completion_loglik(corpus, fraction, random_state,
                                       self._topics_under(alpha))

    def perplexity(self, X: Any, fraction: float = 0.5, random_state: RandomState = None,
                   *, features: Any = None) -> float:
        """Held-out perplexity by document completion, ``exp(-loglik / n_heldout_tokens)``."""
        from topiclink.metrics import perplexity

        ll, n = self.log_likelihood_completion(X, fraction, random_state, features=features)
        return float(perplexity(ll, n))

    def score(self, X: Any, y: Any = None, *, features: Any = None) -> float:
        """Held-out log-likelihood per token by document completion (higher is better)."""
        ll, n = self.log_likelihood_completion(X, features=features)
        return ll / max(n, 1)


def _n_rows(features: Any) -> int:
    shape = getattr(features, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    return int(np.asarray(features).shape[0]) if np.ndim(features) >= 1 else 1
