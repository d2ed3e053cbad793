"""Shared estimator machinery: fitted checks, top words, summaries, save/load."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from topiclink.data.corpus import Corpus, as_corpus
from topiclink.persistence import save_model

__all__ = ["TopicModelBase"]

logger = logging.getLogger(__name__)


class TopicModelBase(BaseEstimator):
    """Base class for topic-model estimators (scikit-learn conventions).

    Subclasses list the fitted arrays in ``_saved_arrays`` and fitted scalars in
    ``_saved_scalars``; :meth:`save` and :func:`topiclink.load` use them.
    """

    _saved_arrays: ClassVar[tuple[str, ...]] = ("components_", "vocabulary_")
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_",)
    _saved_optional: ClassVar[tuple[str, ...]] = ()

    # ------------------------------------------------------------------ checks
    def _check_fitted(self) -> None:
        if not hasattr(self, "components_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    @property
    def n_topics_(self) -> int:
        self._check_fitted()
        return int(self.components_.shape[0])

    def _as_model_corpus(self, X: Any) -> Corpus:
        """New documents over the fitted vocabulary: a Corpus is mapped word by word
        (unknown words dropped, their token count logged); a matrix must have V columns."""
        corpus = as_corpus(X)
        if isinstance(X, Corpus):
            corpus, dropped = corpus.with_vocabulary(self.vocabulary_)
            if dropped:
                logger.info("dropped %d tokens of words outside the model's vocabulary",
                            dropped)
        elif corpus.n_words != self.components_.shape[1]:
            raise ValueError(f"X has {corpus.n_words} columns but the model was fitted on "
                             f"{self.components_.shape[1]} words")
        return corpus

    # ------------------------------------------------------------------ reading
    def top_words(self, n: int = 10) -> list[list[str]]:
        """The ``n`` most probable words of every topic, most probable first."""
        self._check_fitted()
        order = np.argsort(-self.components_, axis=1, kind="stable")[:, :n]
        return [[str(self.vocabulary_[j]) for j in row] for row in order]

    def summary(self, n_words: int = 8) -> str:
        """A readable multi-line description of the fitted model."""
        self._check_fitted()
        lines = [f"{type(self).__name__}: {self.n_topics_} topics, "
                 f"{self.components_.shape[1]} words, {getattr(self, 'n_iter_', '?')} iterations"]
        trace = getattr(self, "trace_", None)
        if trace is not None and "log_likelihood" in trace:
            ll = trace["log_likelihood"]
            ll = ll[np.isfinite(ll)]
            if ll.size:
                lines.append(f"log-likelihood per token: first {ll[0]:.4f}, last {ll[-1]:.4f}")
        weight = getattr(self, "topic_weights_", None)
        for k, words in enumerate(self.top_words(n_words)):
            share = f" ({100 * weight[k]:4.1f}%)" if weight is not None else ""
            lines.append(f"  topic {k:2d}{share}: {' '.join(words)}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save to a ``.npz`` model file (atomic; no pickle).  Returns the path written."""
        self._check_fitted()
        arrays = {name: getattr(self, name) for name in self._saved_arrays}
        for name in self._saved_optional:
            value = getattr(self, name, None)
            if value is not None:
                arrays[name] = value
        trace = getattr(self, "trace_", None) or {}
        for key, values in trace.items():
            arrays[f"trace_/{key}"] = values
        attributes = {name: getattr(self, name) for name in self._saved_scalars}
        params = self.get_params(deep=False)
        params = {k: v for k, v in params.items() if k not in ("callbacks",)}
        if not isinstance(params.get("random_state"), int | type(None)):
            params["random_state"] = None
        return save_model(path, type(self).__name__, params, arrays, attributes)

    @classmethod
    def _from_saved(cls, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:
        params = dict(header["params"])
        valid = cls._get_param_names()
        model = cls(**{k: v for k, v in params.items() if k in valid})
        trace: dict[str, np.ndarray] = {}
        for name, value in arrays.items():
            if name.startswith("trace_/"):
                trace[name.split("/", 1)[1]] = value
            else:
                setattr(model, name, value)
        model.trace_ = trace
        for name, value in header.get("attributes", {}).items():
            setattr(model, name, value)
        return model

    def _header_json(self) -> str:
        return json.dumps(self.get_params(deep=False), default=str)
