"""The visibility view of LMV / PLLDA: documents ranked by visibility with their citation
counts, and "who cites whom" by topic (the topic pairs of the training citations)."""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.data.links import Links

__all__ = ["citation_topic_counts", "visibility_view"]


def citation_topic_counts(model: Any) -> np.ndarray | None:
    """(K, K) number of training citations whose most probable (citing, cited) topic pair
    is (i, j), from ``citation_topics_``; None when the model has none."""
    pairs = getattr(model, "citation_topics_", None)
    if pairs is None:
        return None
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    K = int(np.shape(model.components_)[0])
    ok = (pairs >= 0).all(axis=1)
    counts = np.zeros((K, K), dtype=np.int64)
    np.add.at(counts, (pairs[ok, 0], pairs[ok, 1]), 1)
    return counts


def visibility_view(model: Any, links: Links | None, *, n_top: int = 50, n_bottom: int = 20,
                    max_points: int = 5000, seed: int = 0) -> dict[str, Any]:
    """The visibility view's data (JSON-able)."""
    tau = np.asarray(model.visibility_, dtype=np.float64)
    D = tau.size
    cited = None
    if links is not None:
        cited = np.bincount(np.asarray(links.target), minlength=D)
        if not links.directed:
            cited = cited + np.bincount(np.asarray(links.source), minlength=D)
    order = np.argsort(-tau, kind="stable")
    top = order[:n_top]
    bottom = order[max(n_top, D - n_bottom):][::-1]
    points = np.arange(D) if D <= max_points else np.sort(
        np.random.default_rng(seed).choice(D, max_points, replace=False))
    counts = citation_topic_counts(model)
    fitted = bool(getattr(model, "visibility", True))
    return {
        "fitted": fitted,
        "note": ("" if fitted else "PLLDA fits no visibility (every document's is 1)"),
        "top": top.tolist(), "bottom": bottom.tolist(),
        "visibility": np.round(tau, 4).tolist(),
        "cited": cited.tolist() if cited is not None else None,
        "cited_note": ("times cited among the training documents" if cited is not None else
                       "attach the citations (--dataset, --data or --documents --edges) for "
                       "citation counts"),
        "points": points.tolist(),
        "points_note": ("" if D <= max_points else
                        f"{max_points} documents drawn at random of {D}"),
        "citation_topics": counts.tolist() if counts is not None else None,
    }
