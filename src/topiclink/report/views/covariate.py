"""The covariate view: topic prevalence over a document covariate (time).

Two curves where they can be had: the *empirical* prevalence (the training documents'
topic mixes averaged in bins of the covariate: KTM's first feature column, or a covariate
attached with the data, e.g. the publication time), and for DMR the *model's* prior
prevalence ``alpha(x) / sum alpha(x)`` over a grid of a numeric feature, the other
features at their training mean (standardised columns at 0, indicators at 0).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["binned_prevalence", "dmr_prior_curve", "covariate_view"]


def binned_prevalence(x: np.ndarray, theta: np.ndarray, max_bins: int = 60
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bin centres, mean topic mix per bin (B, K), documents per bin): every distinct
    value is a bin when there are at most ``max_bins``, else equal-width bins; empty bins
    are dropped."""
    x = np.asarray(x, dtype=np.float64)
    ok = np.isfinite(x)
    x, theta = x[ok], np.asarray(theta, dtype=np.float64)[ok]
    if x.size == 0:
        return np.zeros(0), np.zeros((0, theta.shape[1])), np.zeros(0, dtype=np.int64)
    values = np.unique(x)
    if values.size <= max_bins:
        which = np.searchsorted(values, x)
        centres = values
    else:
        edges = np.linspace(x.min(), x.max(), max_bins + 1)
        which = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, max_bins - 1)
        centres = 0.5 * (edges[:-1] + edges[1:])
    counts = np.bincount(which, minlength=centres.size)
    sums = np.zeros((centres.size, theta.shape[1]))
    np.add.at(sums, which, theta)
    keep = counts > 0
    return centres[keep], sums[keep] / counts[keep, None], counts[keep]


def dmr_prior_curve(model: Any, n_points: int = 50) -> dict[str, Any] | None:
    """The DMR prior's topic prevalence over the first numeric feature (original units
    when the model was fitted on a DataFrame, else the encoded value in [-2, 2])."""
    names = [str(n) for n in np.asarray(getattr(model, "feature_names_", [])).tolist()]
    if not names:
        return None
    encoding = getattr(model, "feature_encoding_", None)
    if encoding:
        spec = json.loads(encoding)
        numeric = [c for c in spec["columns"] if c["kind"] == "numeric"]
        if not numeric:
            return None
        column = numeric[0]
        grid = column["center"] + column["scale"] * np.linspace(-2.0, 2.0, n_points)
        frame = {}
        for c in spec["columns"]:
            if c is column:
                frame[c["name"]] = grid
            elif c["kind"] == "numeric":
                frame[c["name"]] = np.full(n_points, c["center"])
            else:
                unseen = "(none of the levels)"
                while unseen in c["levels"]:
                    unseen += "_"
                frame[c["name"]] = [unseen] * n_points
        features: Any = pd.DataFrame(frame)
        name = column["name"]
    else:
        grid = np.linspace(-2.0, 2.0, n_points)
        features = np.zeros((n_points, len(names)))
        features[:, 0] = grid
        name = names[0]
    prevalence = model.predict_topics(features)
    return {"x": np.round(grid, 5).tolist(), "prevalence": np.round(prevalence, 4).tolist(),
            "name": name,
            "note": (f"DMR prior topic prevalence over {name}, the other features at their "
                     "mean (indicators off)")}


def covariate_view(model: Any, covariate: np.ndarray | None, name: str | None
                   ) -> dict[str, Any] | None:
    """The covariate view's data (JSON-able), or None when there is nothing to draw."""
    x, label = covariate, name
    if x is None and getattr(model, "features_", None) is not None:
        x, label = np.asarray(model.features_)[:, 0], "feature 0 (KTM's first input)"
    view: dict[str, Any] = {"empirical": None, "model": None}
    if x is not None and len(x) == np.shape(model.doc_topic_)[0]:
        centres, mean, counts = binned_prevalence(np.asarray(x), np.asarray(model.doc_topic_))
        if centres.size:
            view["empirical"] = {"x": np.round(centres, 5).tolist(),
                                 "prevalence": np.round(mean, 4).tolist(),
                                 "documents": counts.tolist(), "name": label or "covariate",
                                 "note": f"mean topic mix of the training documents by "
                                         f"{label or 'covariate'}"}
    if hasattr(model, "predict_topics") and hasattr(model, "lambda_"):
        view["model"] = dmr_prior_curve(model)
    if view["empirical"] is None and view["model"] is None:
        return None
    return view
