"""Plain JSON-able view data of a fitted model: what the report page embeds.

:func:`report_data` picks the views from the model's capabilities (topics and
documents for every topic model; relational for link models; visibility for LMV;
supervised for classifiers; entities for BPBFM; covariate for KTM / DMR or when a
covariate or a grouping of the documents is attached) and caps what it embeds
(:class:`Limits`) so that a large model's page stays small and quick: top words per
topic, topic mixes rounded and sparse, at most ``max_network_nodes`` nodes, precomputed
suggestions and tails for a bounded number of queries.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from topiclink._version import __version__
from topiclink.data.checks import check_memory
from topiclink.estimators.capabilities import (
    ClassifierCapability,
    EntityFactorsMixin,
    LinkPredictionMixin,
    TopicsMixin,
)
from topiclink.report.inputs import ReportInputs
from topiclink.report.views.covariate import covariate_view
from topiclink.report.views.documents import documents_view
from topiclink.report.views.entities import entities_view
from topiclink.report.views.relational import relational_view
from topiclink.report.views.supervised import supervised_view
from topiclink.report.views.topics import topics_view
from topiclink.report.views.visibility import visibility_view

__all__ = ["Limits", "REPORT_FORMAT", "paper_name", "report_data"]

REPORT_FORMAT = "topiclink-report"


@dataclass(frozen=True)
class Limits:
    """Caps on what a report embeds.

    n_words : candidate words per topic and lambda (the relevance slider's list length)
    decimals : decimals of the embedded topic mixes
    max_network_nodes : nodes of the network drawn (the most connected documents)
    max_suggestion_pairs : (query, target) pairs scored for the suggested links: every
        training document is a query while D^2 is within it (20M: D <= 4,472), else the
        most connected max_suggestion_pairs / D documents (random ones without links)
    max_held_out : held-out documents scored for precision@k
    max_tail_queries : (head, relation) queries of an entity model precomputed
    max_predicted : training documents a classifier predicts for the misclassified list
    seed : seed of every sample and of the network layout
    """

    n_words: int = 30
    decimals: int = 3
    max_network_nodes: int = 2000
    max_suggestion_pairs: int = 20_000_000
    max_held_out: int = 1000
    max_tail_queries: int = 3000
    max_predicted: int = 5000
    seed: int = 0

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            low = 0 if name in ("seed", "decimals") else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"report limits: {name} must be an integer >= {low}, got "
                                 f"{value!r}")


def paper_name(model: Any) -> str:
    """The paper name whose settings the model has (e.g. "Gibbs-gRTM"; the one naming
    the most settings when several match: "LMVS" rather than "LMV"), else the class
    name."""
    best, size = type(model).__name__, -1
    for name, settings in getattr(type(model), "paper_names", {}).items():
        matches = all(getattr(model, key, object()) == value for key, value in settings.items())
        if matches and len(settings) > size:
            best, size = name, len(settings)
    return best


def _header(model: Any, inputs: ReportInputs) -> dict[str, Any]:
    params = {k: v for k, v in model.get_params(deep=False).items()
              if isinstance(v, bool | int | float | str) or v is None}
    summary = model.summary() if hasattr(model, "summary") else ""
    return {"class": type(model).__name__, "name": paper_name(model),
            "params": params, "n_iter": int(getattr(model, "n_iter_", 0) or 0),
            "summary": summary, "data": inputs.source, "notes": list(inputs.notes),
            "library_version": __version__}


def report_memory(model: Any, inputs: ReportInputs, limits: Limits) -> float:
    """Bytes the views allocate at their peak, checked before any is built: the topics'
    (K, V) arrays, the documents' (D, K) mixes, a block of suggestion scores over the
    training documents (and the held-out documents' inference), the network's layout,
    a block of an entity model's tail probabilities, a classifier's predictions."""
    from topiclink.metrics.chunked import default_chunk_size

    K, V = (np.shape(model.components_)[-2:] if isinstance(model, TopicsMixin)
            and getattr(model, "components_", None) is not None else (0, 0))
    D = int(np.shape(getattr(model, "doc_topic_", np.zeros((0, 0))))[0])
    need = 32.0 * K * V + 16.0 * D * max(K, 1)
    if isinstance(model, LinkPredictionMixin):
        n_train = int(np.shape(model.train_zbar_)[0])
        block = min(256, default_chunk_size(n_train), n_train)
        need += 48.0 * block * n_train + 48.0 * default_chunk_size(n_train) * n_train
        need += 8.0 * min(limits.max_held_out, n_train) * K * 4
        need += 8.0 * 4 * 48 * min(limits.max_network_nodes, D)  # 48 repulsions a node
    if isinstance(model, EntityFactorsMixin):
        need += 3 * 8.0 * 4_000_000                       # entities_view's block of tails
    if isinstance(model, ClassifierCapability):
        need += 8.0 * limits.max_predicted * max(K, 1) * 4
    return need


def report_data(model: Any, inputs: ReportInputs | None = None,
                limits: Limits | None = None) -> dict[str, Any]:
    """Every view of a fitted model as plain JSON-able data (see the module docstring).

    ``inputs`` attaches the data the model file lacks (:class:`ReportInputs`; checked
    against the model: one-line DataError).
    """
    check_is_fitted(model)
    inputs = inputs or ReportInputs()
    inputs.check(model)
    limits = limits or Limits()
    check_memory(report_memory(model, inputs, limits), f"report of a {type(model).__name__}",
                 "give smaller Limits (max_suggestion_pairs, max_held_out, max_network_nodes, "
                 "max_tail_queries, max_predicted) or free some memory")
    t0 = time.perf_counter()
    views: dict[str, Any] = {}
    topic_xy = None
    corpus = inputs.corpus
    if isinstance(model, TopicsMixin):
        lengths = corpus.doc_lengths if corpus is not None else None
        views["topics"] = topics_view(model, lengths, n_words=limits.n_words)
        topic_xy = np.column_stack([views["topics"]["map"]["x"], views["topics"]["map"]["y"]])
        views["documents"] = documents_view(model, corpus, decimals=limits.decimals)
    if isinstance(model, LinkPredictionMixin) and topic_xy is not None:
        views["relational"] = relational_view(
            model, links=inputs.links, held_out=inputs.held_out,
            held_out_links=inputs.held_out_links, topic_xy=topic_xy,
            max_nodes=limits.max_network_nodes,
            max_suggestion_pairs=limits.max_suggestion_pairs, seed=limits.seed)
    if getattr(model, "visibility_", None) is not None:
        views["visibility"] = visibility_view(model, inputs.links, seed=limits.seed)
    if isinstance(model, ClassifierCapability):
        views["supervised"] = supervised_view(model, corpus, inputs.labels,
                                              max_docs=limits.max_predicted,
                                              seed=limits.seed)
    if isinstance(model, EntityFactorsMixin):
        views["entities"] = entities_view(model, inputs.tensor,
                                          max_pairs=limits.max_tail_queries)
    if isinstance(model, TopicsMixin):
        found = covariate_view(model, inputs.covariate, inputs.covariate_name,
                               inputs.groups, inputs.group_name)
        if found is not None:
            views["covariate"] = found
    return {"format": REPORT_FORMAT, "format_version": 1, "model": _header(model, inputs),
            "views": views, "limits": asdict(limits),
            "build_seconds": round(time.perf_counter() - t0, 3)}
