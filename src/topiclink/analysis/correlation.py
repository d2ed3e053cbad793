"""Which topics appear together: the correlation of the documents' topic proportions
across documents, thresholded into a graph -- R's ``stm::topicCorr`` with
``method = "simple"`` (Roberts, Stewart & Tingley 2019): two topics are linked when the
correlation of their proportions exceeds ``cutoff`` (stm's default 0.01)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["TopicCorrelation", "topic_correlation"]


@dataclass(frozen=True)
class TopicCorrelation:
    """The correlation matrix of the topic proportions and the graph it gives.

    ``correlation``: (K, K) Pearson correlations across documents (a topic that no
    document uses has no variance: its correlations are 0); ``cutoff``: the threshold of
    an edge; ``labels``: a name per topic (its top words where a model was given)."""

    correlation: np.ndarray
    cutoff: float
    labels: list[str]

    @property
    def adjacency(self) -> np.ndarray:
        """(K, K) bool: topics i != j whose correlation exceeds the cutoff."""
        adj = self.correlation > self.cutoff
        np.fill_diagonal(adj, False)
        return adj

    def edges(self) -> pd.DataFrame:
        """One row per edge (topic_a < topic_b), strongest first: topic_a, topic_b,
        correlation, label_a, label_b."""
        a, b = np.nonzero(np.triu(self.adjacency, k=1))
        corr = self.correlation[a, b]
        order = np.argsort(-corr, kind="stable")
        a, b, corr = a[order], b[order], corr[order]
        return pd.DataFrame({"topic_a": a.astype(np.int64), "topic_b": b.astype(np.int64),
                             "correlation": corr,
                             "label_a": [self.labels[i] for i in a],
                             "label_b": [self.labels[j] for j in b]})

    def to_networkx(self) -> Any:
        """An undirected networkx graph: a node per topic (attribute ``label``), an edge per
        correlated pair (attribute ``weight`` = the correlation)."""
        import networkx as nx

        graph = nx.Graph()
        for k, label in enumerate(self.labels):
            graph.add_node(k, label=label)
        for row in self.edges().itertuples(index=False):
            graph.add_edge(int(row.topic_a), int(row.topic_b), weight=float(row.correlation))
        return graph


def topic_correlation(model_or_proportions: Any, *, cutoff: float = 0.01,
                      n_label_words: int = 3) -> TopicCorrelation:
    """The topics' correlation graph (module docstring).

    Parameters
    ----------
    model_or_proportions : a fitted topic model (its training documents' proportions
        ``doc_topic_``, labels from ``top_words``) or a (D, K) array of proportions.
    cutoff : an edge joins two topics whose correlation is above it (stm: 0.01).
    n_label_words : top words in each topic's label.
    """
    if not np.isfinite(cutoff) or not -1.0 <= float(cutoff) < 1.0:
        raise ValueError(f"topic_correlation: cutoff must be in [-1, 1), got {cutoff!r}")
    theta = getattr(model_or_proportions, "doc_topic_", None)
    if theta is None and hasattr(model_or_proportions, "fit"):
        raise ValueError(f"topic_correlation: {type(model_or_proportions).__name__} has no "
                         "doc_topic_ (fit it first, or pass the (D, K) proportions)")
    theta = np.asarray(model_or_proportions if theta is None else theta, dtype=np.float64)
    if theta.ndim != 2 or theta.shape[0] < 2 or theta.shape[1] < 2:
        raise ValueError(f"topic_correlation: expected (D, K) topic proportions with D >= 2 "
                         f"documents and K >= 2 topics, got shape {theta.shape}")
    if not np.all(np.isfinite(theta)):
        raise ValueError("topic_correlation: the topic proportions must be finite")
    centred = theta - theta.mean(axis=0)
    scale = np.sqrt((centred ** 2).sum(axis=0))
    safe = np.where(scale > 0, scale, 1.0)
    corr = (centred.T @ centred) / np.outer(safe, safe)
    corr[(scale == 0)[:, None] | (scale == 0)[None, :]] = 0.0
    np.fill_diagonal(corr, 1.0)
    if hasattr(model_or_proportions, "top_words"):
        labels = [" ".join(w) for w in model_or_proportions.top_words(n_label_words)]
    else:
        labels = [f"topic {k}" for k in range(theta.shape[1])]
    return TopicCorrelation(np.clip(corr, -1.0, 1.0), float(cutoff), labels)
