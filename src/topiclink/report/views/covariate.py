"""The covariate view: topic prevalence over a document covariate (time).

Two curves where they can be had: the *empirical* prevalence (the training documents'
topic mixes averaged in bins of the covariate: KTM's first feature column, or a covariate
attached with the data, e.g. the publication time), and for DMR the *model's* prior
prevalence ``alpha(x) / sum alpha(x)`` over a grid of a numeric feature, the other
features at their training mean (standardised columns at 0, indicators at 0).

With a categorical grouping of the documents (a metadata column such as the State of the
Union's ``president``; :func:`group_view`), each group's mean topic mix (its documents
averaged) and, when the groups run along the covariate, the covariate's axis cut into
bands, one per run of consecutive documents of one group (the sitting president).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["binned_prevalence", "dmr_prior_curve", "group_bands", "group_view",
           "covariate_view"]

#: most bands drawn: a grouping with more runs along the covariate is not banded
MAX_BANDS = 300


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


def _group_labels(groups: Any) -> tuple[np.ndarray, np.ndarray]:
    """(labels as str, which are present): None, NaN and "" are missing."""
    values = np.asarray(groups, dtype=object).ravel()
    present = np.array([not (v is None or (isinstance(v, float) and v != v) or str(v) == "")
                        for v in values.tolist()], dtype=bool)
    return np.array([str(v) for v in values.tolist()], dtype=object), present


def group_bands(x: np.ndarray, labels: np.ndarray) -> dict[str, list[Any]]:
    """The covariate's axis cut at every change of group along it.

    ``x`` and ``labels`` are the documents' covariate and group, already in the order
    along the covariate (:func:`group_view` puts ties in the order of the groups' first
    documents).  A band is one run of consecutive
    documents of one group: it spans from half-way between the previous run's last value
    and its first value to half-way between its last value and the next run's first (the
    outer bands end at the smallest and largest value).  Returns ``start``, ``end``,
    ``first``, ``last`` (its documents' smallest and largest covariate), ``label`` and
    ``documents`` per band, in order.
    """
    x = np.asarray(x, dtype=np.float64)
    labels = np.asarray(labels, dtype=object)
    if x.size == 0:
        return {"start": [], "end": [], "first": [], "last": [], "label": [],
                "documents": []}
    change = np.flatnonzero(labels[1:] != labels[:-1]) + 1
    begin = np.concatenate([[0], change])
    stop = np.concatenate([change, [x.size]])          # exclusive
    first, last = x[begin], x[stop - 1]
    cuts = 0.5 * (last[:-1] + first[1:])
    start = np.concatenate([[x[0]], cuts])
    end = np.concatenate([cuts, [x[-1]]])
    return {"start": start.tolist(), "end": end.tolist(), "first": first.tolist(),
            "last": last.tolist(), "label": [str(v) for v in labels[begin].tolist()],
            "documents": (stop - begin).tolist()}


def group_view(theta: np.ndarray, groups: Any, x: np.ndarray | None = None,
               name: str | None = None, covariate_name: str | None = None,
               max_bands: int = MAX_BANDS) -> dict[str, Any] | None:
    """Each group's mean topic mix, the groups in order along the covariate, and the
    bands of the covariate's axis by group (JSON-able; None without a grouped document).

    theta : (D, K) the training documents' topic mixes
    groups : (D,) each document's group (None, NaN or "" for none)
    x : (D,) the covariate (e.g. the year), optional: the groups in the order of their
        first document along it (ties in document order), and within a tie the documents
        in group order; without it the groups keep the order of their first document and
        there are no bands
    max_bands : a grouping with more runs along the covariate is not banded (it does not
        run along it: e.g. a document type that alternates)

    ``groups`` (names), ``shares`` (G, K: the mean of the group's documents' mixes, each
    row summing to 1), ``documents`` (G), ``first`` / ``last`` (the group's smallest and
    largest covariate, or None), ``bands`` (:func:`group_bands`, with ``group``: the index
    of the band's group; or None) and ``note``.
    """
    theta = np.asarray(theta, dtype=np.float64)
    labels, ok = _group_labels(groups)
    if labels.size != theta.shape[0]:
        raise ValueError(f"groups: {labels.size} values for {theta.shape[0]} documents")
    xs = None
    if x is not None:
        xs = np.asarray(x, dtype=np.float64).ravel()
        ok &= np.isfinite(xs)
    docs = np.flatnonzero(ok)
    if docs.size == 0:
        return None
    if xs is not None:
        docs = docs[np.argsort(xs[docs], kind="stable")]
    names: list[str] = []
    index: dict[str, int] = {}
    for label in labels[docs].tolist():
        if label not in index:
            index[label] = len(names)
            names.append(label)
    which = np.array([index[v] for v in labels[docs].tolist()], dtype=np.int64)
    if xs is not None:
        # ties of the covariate in group order (the outgoing president's last address
        # before the incoming one's first in the same year): no band split by a tie
        order = np.lexsort((which, xs[docs]))
        docs, which = docs[order], which[order]
    counts = np.bincount(which, minlength=len(names))
    sums = np.zeros((len(names), theta.shape[1]))
    np.add.at(sums, which, theta[docs])
    shares = sums / counts[:, None]
    shares /= np.maximum(shares.sum(axis=1, keepdims=True), 1e-300)
    label = name or "group"
    view: dict[str, Any] = {
        "name": label, "groups": names, "shares": np.round(shares, 4).tolist(),
        "documents": counts.tolist(), "first": None, "last": None, "bands": None,
        "note": (f"each {label}'s mean topic mix (its documents' mixes averaged), "
                 + (f"in order of {covariate_name or 'the covariate'}"
                    if xs is not None else "in order of their first document"))}
    if xs is not None:
        lo = np.full(len(names), np.inf)
        hi = np.full(len(names), -np.inf)
        np.minimum.at(lo, which, xs[docs])
        np.maximum.at(hi, which, xs[docs])
        view["first"], view["last"] = lo.tolist(), hi.tolist()
        bands = group_bands(xs[docs], labels[docs])
        if len(bands["start"]) <= max_bands:
            bands["group"] = [index[v] for v in bands["label"]]
            view["bands"] = bands
        else:
            view["note"] += (f"; {len(bands['start'])} runs of one {label} along "
                             f"{covariate_name or 'the covariate'}: not banded")
    return view


def covariate_view(model: Any, covariate: np.ndarray | None, name: str | None,
                   groups: Any = None, group_name: str | None = None
                   ) -> dict[str, Any] | None:
    """The covariate view's data (JSON-able), or None when there is nothing to draw
    (``groups``: a categorical grouping of the training documents, see
    :func:`group_view`)."""
    x, label = covariate, name
    if x is None and getattr(model, "features_", None) is not None:
        x, label = np.asarray(model.features_)[:, 0], "feature 0 (KTM's first input)"
    view: dict[str, Any] = {"empirical": None, "model": None, "groups": None}
    n_docs = np.shape(model.doc_topic_)[0]
    if x is not None and len(x) != n_docs:
        x = None
    if x is not None:
        centres, mean, counts = binned_prevalence(np.asarray(x), np.asarray(model.doc_topic_))
        if centres.size:
            view["empirical"] = {"x": np.round(centres, 5).tolist(),
                                 "prevalence": np.round(mean, 4).tolist(),
                                 "documents": counts.tolist(), "name": label or "covariate",
                                 "note": f"mean topic mix of the training documents by "
                                         f"{label or 'covariate'}"}
    if hasattr(model, "predict_topics") and hasattr(model, "lambda_"):
        view["model"] = dmr_prior_curve(model)
    if groups is not None:
        view["groups"] = group_view(np.asarray(model.doc_topic_), groups, x, group_name,
                                    label)
    if view["empirical"] is None and view["model"] is None and view["groups"] is None:
        return None
    return view
