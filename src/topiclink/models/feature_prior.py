"""What topic models with feature-dependent priors share (DMR, KTM).

A document's Dirichlet prior alpha_d is a function of its features; the verbs that infer
new documents (``transform``, document-completion ``perplexity`` / ``score``) take the
documents' ``features`` and use each document's own prior (without features: ``alpha_``,
the mean training prior).  Hooks: ``predict_alpha(features) -> (n, K)`` and
``transform_iter``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.inference.fixed_topics import infer_doc_topics
from topiclink.random import RandomState

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

    @contextlib.contextmanager
    def _query_prior(self, X: Any, features: Any, what: str) -> Iterator[Corpus]:
        """The corpus of ``X`` over the model's vocabulary, with ``_doc_topics`` using the
        priors of ``features`` (row i: document i) while the block runs."""
        self._check_fitted()
        corpus = self._as_model_corpus(X)
        if features is None:
            yield corpus
            return
        if _n_rows(features) != corpus.n_docs:
            from topiclink.data.checks import DataError

            raise DataError(f"{what}: features have {_n_rows(features)} rows for "
                            f"{corpus.n_docs} documents")
        self._alpha_rows = self.predict_alpha(features)
        try:
            yield corpus
        finally:
            del self._alpha_rows

    def _doc_topics(self, corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
        alpha = getattr(self, "_alpha_rows", None)
        if alpha is None:
            alpha = np.asarray(self.alpha_, dtype=np.float64)
        return infer_doc_topics(corpus, np.ascontiguousarray(self.components_.T), alpha,
                                rng, n_iter=int(self.transform_iter))

    def transform(self, X: Any, features: Any = None) -> np.ndarray:
        """Expected topic proportions (n_docs, K) of documents, topics fixed, each with the
        prior alpha_d of its ``features`` (without features: ``alpha_``, the mean
        training prior).  A document without known words gets its prior mean."""
        with self._query_prior(X, features, "transform") as corpus:
            return self._doc_topics(corpus, self._prediction_generator())

    def log_likelihood_completion(self, X: Any, fraction: float = 0.5,
                                  random_state: RandomState = None, *,
                                  features: Any = None) -> tuple[float, int]:
        """Held-out log-likelihood by document completion (see
        :meth:`TopicsMixin.log_likelihood_completion`), theta inferred on the observed
        part with each document's prior alpha_d from ``features`` (default ``alpha_``)."""
        with self._query_prior(X, features, "log_likelihood_completion") as corpus:
            return super().log_likelihood_completion(corpus, fraction, random_state)

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
