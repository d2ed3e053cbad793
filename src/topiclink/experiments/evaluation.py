"""Held-out metrics of a fitted (or loaded) model on a dataset, as a tidy table.

What is measured follows the model's capabilities and what the data has:

- topic models (``perplexity``): held-out perplexity by document completion (half of each
  document's tokens observed, the rest predicted; Wallach et al. 2009);
- classifiers (``predict`` and ``classes_``) when the documents have labels: accuracy;
- link models (``link_scores`` and ``train_doc_ids_``) when the data has links: the
  evaluated documents are scored against the model's training documents (matched by
  document id), and the data's links between them give the link ROC/PR AUC and the
  predictive link rank (with the random ranking's expected rank for reference).

Which documents: ``documents="auto"`` takes a dataset's test split where it has one, else
the documents whose ids are not among the model's training documents
(``train_doc_ids_``), else every document; ``"all"``, ``"test"``, ``"held-out"`` or an
array of positions choose explicitly.

- knowledge-graph models (:class:`~topiclink.estimators.capabilities.EntityFactorsMixin`,
  no documents): the triples of a split of the data's tensor (``"test"``, the default,
  or ``"valid"``) are ranked in the filtered setting (:func:`evaluate_triples`): filtered
  MRR and Hits@1/3/10 for tail queries, head queries and both.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.datasets.base import Dataset
from topiclink.estimators.capabilities import EntityFactorsMixin
from topiclink.metrics import link_auc, link_rank
from topiclink.metrics.ranking import filtered_ranks, metrics_by_side

__all__ = ["evaluate_model", "evaluate_triples", "held_out_positions", "KG_SPLITS"]

logger = logging.getLogger(__name__)

#: the splits of a tensor of triples a knowledge-graph model is evaluated on
KG_SPLITS = ("test", "valid")
#: bytes of one (queries, entities) block of scores of :func:`evaluate_triples`
_SCORE_BLOCK_BYTES = 16 * 2 ** 20
_HITS_AT = (1, 3, 10)


def held_out_positions(model: Any, corpus: Corpus) -> np.ndarray | None:
    """Positions of the documents of ``corpus`` that were not in the model's training
    data (by document id); None when the model records no training ids."""
    ids = getattr(model, "train_doc_ids_", None)
    if ids is None or len(ids) == 0:
        return None
    train = set(np.asarray(ids).astype(str).tolist())
    doc_ids = np.asarray(corpus.doc_ids).astype(str)
    return np.flatnonzero([d not in train for d in doc_ids.tolist()])


def _labels_for(model: Any, labels: np.ndarray, names: np.ndarray | None) -> np.ndarray:
    """Dataset label codes in the label space of ``model.classes_``."""
    classes = np.asarray(model.classes_)
    if classes.dtype.kind in "US" and names is not None and labels.dtype.kind in "iu":
        return np.asarray(names)[labels]
    return labels


def _rows_links(model: Any, ds: Dataset, queries: np.ndarray, split: str
                ) -> list[dict[str, Any]]:
    corpus, links = ds.corpus, ds.links
    train_ids = np.asarray(model.train_doc_ids_).astype(str)
    position = {d: i for i, d in enumerate(np.asarray(corpus.doc_ids).astype(str).tolist())}
    found = [(m, position[d]) for m, d in enumerate(train_ids.tolist()) if d in position]
    if not found:
        logger.warning("no training document of the model is in this dataset (matched by "
                       "document id); no link metrics")
        return []
    model_pos = np.asarray([m for m, _ in found], dtype=np.int64)
    data_pos = np.asarray([p for _, p in found], dtype=np.int64)
    truth = (links.between(queries, data_pos) + links.between(data_pos, queries).T)
    truth = (truth != 0).tocsr()
    has = np.asarray(truth.sum(axis=1)).ravel() > 0
    if not has.any():
        logger.warning("the evaluated documents have no links to the model's training "
                       "documents; no link metrics")
        return []
    scores = model.link_scores(corpus.subset(queries), targets=model_pos, direction="either")
    auc = link_auc(scores, truth)
    n = int(has.sum())
    base = {"split": split, "documents": n, "targets": int(model_pos.size)}
    return [{"metric": "link_auc", "value": auc["roc_auc"], **base},
            {"metric": "link_pr_auc", "value": auc["pr_auc"], **base},
            {"metric": "link_rank", "value": link_rank(scores, truth), **base},
            {"metric": "random_link_rank", "value": (model_pos.size + 1) / 2, **base}]


def evaluate_model(model: Any, ds: Dataset, *, documents: Any = "auto",
                   fraction: float = 0.5, random_state: int = 0) -> pd.DataFrame:
    """Held-out metrics of ``model`` on ``ds``: one row per metric.

    Parameters
    ----------
    model : a fitted topiclink model
    ds : Dataset
        Documents (and links, labels, a test split) over any vocabulary: words are
        matched to the model's vocabulary by name.
    documents : "auto", "all", "test", "held-out" or array of positions
        Which documents of ``ds`` are evaluated (see the module docstring).
    fraction : float
        Share of each document's tokens held out for the perplexity.
    random_state : int
        Seed of the completion split and of the inference of new documents.

    Returns
    -------
    DataFrame
        Columns ``metric``, ``value``, ``split`` (which documents), ``documents`` (how
        many entered the metric), ``targets`` (training documents scored, link metrics).
    """
    if isinstance(model, EntityFactorsMixin):
        if not isinstance(documents, str) or documents not in ("auto", *KG_SPLITS):
            raise ValueError(f"a {type(model).__name__} is evaluated on a split of triples: "
                             f"'test' (or 'auto') or 'valid', got {documents!r}")
        return evaluate_triples(model, ds, "test" if documents == "auto" else documents)
    if ds.corpus is None:
        raise ValueError(f"dataset {ds.name!r} has no documents to evaluate on")
    corpus, labels, names, split = ds.corpus, ds.labels, ds.label_names, "all"
    positions: np.ndarray | None = None
    held = held_out_positions(model, ds.corpus)
    if isinstance(documents, str):
        if documents not in ("auto", "all", "test", "held-out"):
            raise ValueError("documents must be 'auto', 'all', 'test', 'held-out' or "
                             f"positions, got {documents!r}")
        has_test = ds.test is not None and ds.test.corpus is not None
        if documents == "test" and not has_test:
            raise ValueError(f"dataset {ds.name!r} has no test split")
        if documents == "held-out" and held is None:
            raise ValueError(f"{type(model).__name__} records no training document ids; "
                             "cannot tell which documents were held out")
        if documents == "test" or (documents == "auto" and has_test):
            corpus, labels, split = ds.test.corpus, ds.test.labels, "test"
            names = ds.test.label_names if ds.test.label_names is not None else names
        elif documents == "held-out" or (documents == "auto" and held is not None):
            positions, split = held, "held-out"
            if not positions.size:
                if documents == "held-out":
                    raise ValueError("every document of the dataset was in training")
                logger.warning("every document of %r was in the model's training data; "
                               "evaluating on all of them (not held out)", ds.name)
                positions, split = None, "all (training documents)"
    else:
        positions, split = np.asarray(documents, dtype=np.int64), "held-out"
    if positions is not None:
        corpus = ds.corpus.subset(positions)
        labels = None if labels is None else np.asarray(labels)[positions]
    rows: list[dict[str, Any]] = []
    if hasattr(model, "vocabulary_"):
        mapped, _ = corpus.with_vocabulary(model.vocabulary_)
        known = np.flatnonzero(mapped.doc_lengths > 0)
        if known.size < corpus.n_docs:
            logger.info("%d of %d documents have no word of the model's vocabulary; "
                        "left out", corpus.n_docs - known.size, corpus.n_docs)
    else:
        known = np.arange(corpus.n_docs)
    if not known.size:
        raise ValueError("no evaluated document has a word of the model's vocabulary")
    base = {"split": split, "documents": int(known.size), "targets": None}
    if hasattr(model, "perplexity"):
        value = model.perplexity(corpus.subset(known), fraction=fraction,
                                 random_state=random_state)
        rows.append({"metric": "perplexity", "value": float(value), **base})
    if labels is not None and hasattr(model, "predict") and hasattr(model, "classes_"):
        y = _labels_for(model, np.asarray(labels)[known], names)
        pred = model.predict(corpus.subset(known))
        rows.append({"metric": "accuracy", "value": float(np.mean(pred == y)), **base})
    if (ds.links is not None and hasattr(model, "link_scores")
            and getattr(model, "train_doc_ids_", None) is not None and split != "test"):
        if positions is None:
            logger.warning("link metrics need documents that were not in training; none")
        else:
            rows.extend(_rows_links(model, ds, positions[known], split))
    table = pd.DataFrame(rows, columns=["metric", "value", "split", "documents", "targets"])
    return table.astype({"value": float, "documents": "Int64", "targets": "Int64"})


# ---------------------------------------------------------------------- knowledge graphs
def evaluate_triples(model: Any, ds: Dataset, split: str = "test") -> pd.DataFrame:
    """Filtered ranking metrics of a knowledge-graph model on the ``split`` triples of
    ``ds.tensor``: MRR and Hits@1/3/10 of tail queries (h, r, ?), head queries (?, r, t)
    and both pooled.

    Every entity of the model is a candidate; the other known true triples (of every
    split of ``ds.tensor``) are left out of each ranking and ties take the mean rank
    (:func:`~topiclink.metrics.ranking.filtered_ranks`).  The data's entities and
    relations are matched to the model's by name
    (:meth:`~topiclink.estimators.capabilities.EntityFactorsMixin.model_indices`); a
    triple with an entity or relation the model does not know is counted in one warning
    and ranked last (rank = the model's number of entities, head and tail: the
    pessimistic convention).

    Returns
    -------
    DataFrame
        Columns ``metric`` (mrr, hits_at_1, hits_at_3, hits_at_10), ``queries`` (tail,
        head or both), ``value``, ``split`` and ``triples`` (the split's triples ranked).
    """
    tensors = ds.tensor or {}
    if not tensors:
        raise ValueError(f"dataset {ds.name!r} has no triples to evaluate a "
                         f"{type(model).__name__} on")
    if split not in tensors or tensors[split].n_entries == 0:
        raise ValueError(f"dataset {ds.name!r} has no {split} triples (its splits: "
                         f"{', '.join(tensors)})")
    N = int(np.shape(model.embedding_)[0])
    R = int(np.asarray(model.relation_names_).size)
    triples = np.column_stack(model.model_indices(tensors[split]))
    unknown = (triples < 0).any(axis=1)
    n = int(triples.shape[0])
    if unknown.all():
        raise ValueError(f"no {split} triple of {ds.name!r} has entities and a relation the "
                         f"model knows (matched by name)")
    if unknown.any():
        logger.warning("%d of the %d %s triples name an entity or relation the model does "
                       "not know: ranked last (rank %d, head and tail)", int(unknown.sum()),
                       n, split, N)
    known = np.vstack([np.column_stack(model.model_indices(t)) for t in tensors.values()])
    known = known[(known >= 0).all(axis=1)]
    ranks = {}
    for side in ("tail", "head"):
        ranks[side] = np.full(n, float(N))
        ranks[side][~unknown] = _side_ranks(model, triples[~unknown], known, side, N, R)
    values = metrics_by_side(ranks, _HITS_AT)
    rows = [{"metric": metric, "queries": queries, "value": values[metric + suffix],
             "split": split, "triples": n}
            for queries, suffix in (("tail", "_tail"), ("head", "_head"), ("both", ""))
            for metric in ("mrr", *(f"hits_at_{k}" for k in _HITS_AT))]
    table = pd.DataFrame(rows, columns=["metric", "queries", "value", "split", "triples"])
    return table.astype({"value": float, "triples": "Int64"})


def _side_ranks(model: Any, triples: np.ndarray, known: np.ndarray, side: str, N: int,
                R: int) -> np.ndarray:
    """Filtered ranks of the triples' tails (``side="tail"``) or heads (``"head"``), in
    the triples' order, the ``known`` (n, 3) triples filtered.  The triples are taken by
    query (entity, relation), a block of at most ~16 MiB of scores at a time, each
    distinct query scored once (``score_tails_batch`` / ``score_heads_batch``)."""
    h, r, t = (np.ascontiguousarray(c, dtype=np.int64) for c in triples.T)
    given, answer = (h, t) if side == "tail" else (t, h)
    kg, ka = (known[:, 0], known[:, 2]) if side == "tail" else (known[:, 2], known[:, 0])
    answers = sp.csr_array((np.ones(ka.size, dtype=bool), (known[:, 1] * N + kg, ka)),
                           shape=(R * N, N))
    rows = r * N + given
    order = np.argsort(rows, kind="stable")
    size = int(max(1, min(4096, _SCORE_BLOCK_BYTES // (8 * N))))
    ranks = np.empty(rows.size)
    for lo in range(0, rows.size, size):
        idx = order[lo:lo + size]
        queries, inverse = np.unique(rows[idx], return_inverse=True)
        a, rel = queries % N, queries // N
        scores = (model.score_tails_batch(a, rel) if side == "tail"
                  else model.score_heads_batch(rel, a))
        ranks[idx] = filtered_ranks(scores[np.ravel(inverse)], answer[idx],
                                    answers[rows[idx]])
    return ranks
