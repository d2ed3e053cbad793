"""Link prediction verbs shared by the relational estimators (gRTM family, Var-RTM, ...).

A subclass implements ``_query_topics(X_new) -> (n, K)`` and
``_scores_from_topics(zq, targets, direction) -> (n, n_targets)``; this mixin adds
``link_scores``, ``suggest_links`` and ``evaluate_links``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["LinkPredictionMixin", "DIRECTIONS"]

DIRECTIONS = ("out", "in", "either")


def _check_direction(direction: str) -> str:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    return direction


class LinkPredictionMixin:
    """Scores and suggestions of links from new documents to the training documents."""

    def _targets(self, targets: Any) -> np.ndarray:
        n_train = self.train_zbar_.shape[0]
        if targets is None:
            return np.arange(n_train)
        idx = np.asarray(targets, dtype=np.int64).ravel()
        if idx.size and (idx.min() < 0 or idx.max() >= n_train):
            bad = idx[(idx < 0) | (idx >= n_train)][0]
            raise ValueError(f"targets: training document {bad} is not in [0, {n_train})")
        return idx

    def link_scores(self, X_new: Any, targets: Any = None, direction: str = "either"
                    ) -> np.ndarray:
        """Link scores (n_new, n_targets) from new documents (by their words) to training
        documents ``targets`` (positions; default all).

        ``direction``: ``"out"`` new -> training (the new document cites), ``"in"``
        training -> new, ``"either"`` a link in at least one direction.
        """
        self._check_fitted()
        zq = self._query_topics(X_new)
        return self._scores_from_topics(zq, self._targets(targets), _check_direction(direction))

    def suggest_links(self, X_new: Any, top: int = 10, direction: str = "either"
                      ) -> pd.DataFrame:
        """The ``top`` training documents most likely linked to each new document.

        Returns a tidy DataFrame: query, rank (1 = best), target (training position),
        doc_id, title (where the training data had titles) and score.
        """
        scores = self.link_scores(X_new, direction=direction)
        top = int(min(top, scores.shape[1]))
        order = np.argsort(-scores, axis=1, kind="stable")[:, :top]
        rows = []
        ids = self.train_doc_ids_
        titles = getattr(self, "train_titles_", None)
        for q in range(scores.shape[0]):
            for rank, t in enumerate(order[q], start=1):
                rows.append({"query": q, "rank": rank, "target": int(t),
                             "doc_id": ids[t].item() if hasattr(ids[t], "item") else ids[t],
                             "title": str(titles[t]) if titles is not None and len(titles)
                             else "",
                             "score": float(scores[q, t])})
        return pd.DataFrame(rows)
