"""What a report shows besides the model file: the training documents, their links and
labels, a covariate, held-out documents, a relational tensor -- and matching a loaded
data set to a model's training documents.

A model file keeps the fitted arrays only (never the corpus): link models keep their
training documents' ids (``train_doc_ids_``), so the data is matched by id, and the
data's documents that were not in training, with their links to training documents,
become the held-out set; other topic models are matched by position (the data the model
was fitted on, empty documents dropped as the fit commands drop them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import DataError
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.data.tensor import RelationalTensor

__all__ = ["ReportInputs", "inputs_from_dataset", "held_out_from_dataset",
           "group_from_metadata", "time_from_metadata", "GROUP_NAMES"]

#: metadata columns read as the covariate (time) when the data names none
TIME_NAMES = ("publication_time", "year", "time", "date")

#: metadata columns read as the documents' grouping when none is named (the sitting
#: president of a State of the Union address)
GROUP_NAMES = ("president",)


@dataclass
class ReportInputs:
    """The data a report attaches to a model (every member optional).

    corpus : the training documents, row d = the model's document d
    links : links among them
    labels : their labels, in the space of the model's ``classes_``
    covariate, covariate_name : one number per training document (e.g. the year)
    groups, group_name : one category per training document (e.g. the president; None
        or "" for none): each group's mean topic mix, and the covariate's axis banded by
        group
    held_out, held_out_links : documents not in training and their true links (n_held,
        n_train) to the training documents (held-out precision@k)
    tensor : the relational tensor of an entity model (true tails marked)
    source : where the data came from (shown in the report)
    """

    corpus: Corpus | None = None
    links: Links | None = None
    labels: np.ndarray | None = None
    covariate: np.ndarray | None = None
    covariate_name: str | None = None
    groups: np.ndarray | None = None
    group_name: str | None = None
    held_out: Corpus | None = None
    held_out_links: sp.csr_matrix | None = None
    tensor: RelationalTensor | None = None
    source: str = ""
    notes: list[str] = field(default_factory=list)

    def check(self, model: Any) -> None:
        """One-line DataError when a member does not fit the model."""
        n = _n_train(model)
        if n is None:
            return
        for name, value in (("corpus", self.corpus), ("links", self.links),
                            ("labels", self.labels), ("covariate", self.covariate),
                            ("groups", self.groups)):
            if value is None:
                continue
            size = value.n_docs if hasattr(value, "n_docs") else len(value)
            if size != n:
                raise DataError(f"report: {name} has {size} documents; the model was "
                                f"fitted on {n}")
        if (self.held_out is None) != (self.held_out_links is None):
            raise DataError("report: give held_out and held_out_links together")
        if self.held_out_links is not None and self.held_out_links.shape != (
                self.held_out.n_docs, n):
            raise DataError(f"report: held_out_links must be ({self.held_out.n_docs}, {n}), "
                            f"got {self.held_out_links.shape}")


def _n_train(model: Any) -> int | None:
    theta = getattr(model, "doc_topic_", None)
    return None if theta is None else int(np.shape(theta)[0])


def time_from_metadata(corpus: Corpus | None, name: str | None = None
                ) -> tuple[np.ndarray | None, str | None]:
    """The documents' covariate from their metadata: the column ``name``, else the first
    of :data:`TIME_NAMES` that holds numbers; (None, None) without one."""
    meta = None if corpus is None else corpus.metadata
    if meta is None:
        return None, None
    names = [name] if name else []
    names += [c for c in meta.columns if str(c).lower() in TIME_NAMES]
    for name in names:
        if name in meta.columns:
            try:
                return meta[name].to_numpy(dtype=np.float64), str(name)
            except (TypeError, ValueError):
                continue
    return None, None


def group_from_metadata(corpus: Corpus | None, name: str | bool | None = None
                 ) -> tuple[np.ndarray | None, str | None]:
    """The documents' grouping from their metadata: (one str per document, "" where
    missing; the column's name), or (None, None).

    ``name``: a metadata column (a one-line DataError naming the columns there are when
    it is not one); None: the first of :data:`GROUP_NAMES` the metadata has, if any;
    False: none.
    """
    if name is False:
        return None, None
    meta = None if corpus is None else corpus.metadata
    if name is None or name is True:
        if meta is None:
            return None, None
        found = [c for c in meta.columns if str(c).lower() in GROUP_NAMES]
        if not found:
            return None, None
        column = found[0]
    else:
        columns = [] if meta is None else [str(c) for c in meta.columns]
        if str(name) not in columns:
            there = (f"its metadata columns: {', '.join(columns)}" if columns else
                     "the documents have no metadata columns")
            raise DataError(f"report: no metadata column {name!r} to group the documents "
                            f"by; {there}")
        column = next(c for c in meta.columns if str(c) == str(name))
    values = meta[column].to_numpy(dtype=object)
    labels = np.array(["" if v is None or (isinstance(v, float) and v != v) else str(v)
                       for v in values.tolist()], dtype=object)
    return labels, str(column)


def _labels(model: Any, ds: Any, positions: np.ndarray) -> np.ndarray | None:
    if ds.labels is None or not hasattr(model, "classes_"):
        return None
    labels = np.asarray(ds.labels)[positions]
    classes = np.asarray(model.classes_)
    names = getattr(ds, "label_names", None)
    if classes.dtype.kind in "US" and names is not None and labels.dtype.kind in "iu":
        return np.asarray(names)[labels]
    return labels


def held_out_from_dataset(ds: Any, train_pos: np.ndarray, max_docs: int = 1000,
                          seed: int = 0) -> tuple[Corpus | None, sp.csr_matrix | None]:
    """The data's documents that are not training documents, with at least one word and
    one link to a training document (at most ``max_docs``, drawn at random), and those
    links as a (n_held, n_train) matrix; a data set's test split with its test links
    (``ds.test`` / ``ds.test_links``) when it has them."""
    corpus = ds.corpus
    test, test_links = getattr(ds, "test", None), getattr(ds, "test_links", None)
    if test is not None and test.corpus is not None and test_links is not None:
        truth = sp.csr_matrix(test_links, dtype=bool)[:, train_pos]
        held_corpus = test.corpus
    else:
        if ds.links is None:
            return None, None
        inside = np.zeros(corpus.n_docs, dtype=bool)
        inside[train_pos] = True
        held = np.flatnonzero(~inside)
        if held.size == 0:
            return None, None
        truth = (ds.links.between(held, train_pos)
                 + ds.links.between(train_pos, held).T).tocsr()
        held_corpus = corpus.subset(held)
    truth = (truth != 0).tocsr()
    usable = np.flatnonzero((np.asarray(truth.sum(axis=1)).ravel() > 0)
                            & (held_corpus.doc_lengths > 0))
    if usable.size == 0:
        return None, None
    if usable.size > max_docs:
        usable = np.sort(np.random.default_rng(seed).choice(usable, max_docs, replace=False))
    return held_corpus.subset(usable), truth[usable]


def _match_by_id(model: Any, corpus: Corpus) -> np.ndarray:
    ids = np.asarray(model.train_doc_ids_).astype(str)
    position = {d: i for i, d in enumerate(np.asarray(corpus.doc_ids).astype(str).tolist())}
    pos = np.array([position.get(d, -1) for d in ids.tolist()], dtype=np.int64)
    missing = int((pos < 0).sum())
    if missing:
        first = ids[np.flatnonzero(pos < 0)[0]]
        raise DataError(f"report: {missing} of the model's {ids.size} training documents "
                        f"are not in the data (matched by document id; e.g. {first!r}); "
                        "give the data the model was fitted on")
    return pos


def _match_by_position(model: Any, corpus: Corpus) -> np.ndarray:
    n = _n_train(model)
    if corpus.n_docs == n:
        return np.arange(n)
    kept = np.flatnonzero(corpus.doc_lengths > 0)
    if kept.size == n:
        return kept
    raise DataError(f"report: the data has {corpus.n_docs} documents ({kept.size} not "
                    f"empty); the model was fitted on {n}: give the data it was fitted on "
                    "(a model fitted with --holdout keeps no document ids to match)")


def inputs_from_dataset(model: Any, ds: Any, *, group_column: str | bool | None = None,
                        max_held_out: int = 1000, seed: int = 0) -> ReportInputs:
    """The parts of a loaded :class:`~topiclink.datasets.base.Dataset` that fit the
    model (one-line DataError when its documents are not the model's).

    ``group_column``: the metadata column that groups the documents (e.g. ``"president"``;
    None: ``president`` when the metadata has it; False: none); a one-line DataError
    listing the columns when the data has no such column.
    """
    groups, group_name = group_from_metadata(ds.corpus, group_column)
    inputs = ReportInputs(source=f"data: {ds.name}")
    if ds.tensor:
        inputs.tensor = ds.tensor.get("train", next(iter(ds.tensor.values())))
    corpus = ds.corpus
    if corpus is None or _n_train(model) is None:
        return inputs
    ids = getattr(model, "train_doc_ids_", None)
    by_id = ids is not None and len(ids) > 0
    pos = _match_by_id(model, corpus) if by_id else _match_by_position(model, corpus)
    identity = pos.size == corpus.n_docs and np.array_equal(pos, np.arange(pos.size))
    inputs.corpus = corpus if identity else corpus.subset(pos)
    if ds.links is not None and ds.links.n_links:
        inputs.links = ds.links if identity else ds.links.subgraph(pos)
    inputs.labels = _labels(model, ds, pos)
    x, name = time_from_metadata(corpus, getattr(ds, "time_column", None))
    if x is not None:
        inputs.covariate, inputs.covariate_name = x[pos], name
    if groups is not None:
        inputs.groups, inputs.group_name = groups[pos], group_name
    if by_id and hasattr(model, "link_scores"):
        inputs.held_out, inputs.held_out_links = held_out_from_dataset(
            ds, pos, max_docs=max_held_out, seed=seed)
    return inputs
