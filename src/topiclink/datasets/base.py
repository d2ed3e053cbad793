"""The :class:`Dataset` record returned by every loader."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.data.tensor import RelationalTensor

__all__ = ["Dataset", "SUMMARY_KEYS"]

#: Keys of :meth:`Dataset.summary`, in order (``None`` where a count does not apply).
SUMMARY_KEYS = ("documents", "words", "tokens", "links", "labels", "entities", "relations",
                "triples", "test_documents")


@dataclass(repr=False, eq=False)
class Dataset:
    """A loaded data set: any of a corpus, links, labels, a relational tensor, a test split.

    Attributes
    ----------
    name : str
        Registry name (e.g. ``"cora-linqs"``).
    corpus : Corpus or None
        The documents (the training split when there is a test split).
    links : Links or None
        Links between the documents of ``corpus``.
    labels : ndarray of int64, shape (n_docs,), or None
        Class of each document as an index into ``label_names`` (a user's
        ``--documents --label-column``: the class names themselves, str).
    label_names : ndarray of str, shape (n_classes,), or None
    tensor : dict of str -> RelationalTensor, or None
        Multi-relational data by split (``"train"``, ``"valid"``, ``"test"``; a single
        tensor is stored under ``"train"``).
    test : Dataset or None
        A held-out split with the same vocabulary (e.g. 20 Newsgroups' test documents).
    source : str
        Citation / provenance.
    path : Path or None
        Where it was read from.
    test_links : scipy.sparse.csr_matrix of bool, shape (n_test, n_train), or None
        Held-out links from the documents of :attr:`test` to those of ``corpus`` (e.g.
        the test -> training citations of a split by time).
    analyzer : TextAnalyzer or None
        The fitted analyser that counted the texts (users' own documents): the fit
        commands save it with the model, so new texts are analysed the same way.
    time_column : str or None
        The ``corpus.metadata`` column of publication times (fractional years) that the
        fit commands pass to models taking ``publication_time`` (set when the user named
        a time column).
    """

    name: str
    corpus: Corpus | None = None
    links: Links | None = None
    labels: np.ndarray | None = None
    label_names: np.ndarray | None = None
    tensor: dict[str, RelationalTensor] | None = None
    test: Dataset | None = None
    source: str = ""
    path: Path | None = None
    test_links: Any = None
    analyzer: Any = None
    time_column: str | None = None

    def summary(self) -> dict[str, Any]:
        """Counts for listings: one entry per key of :data:`SUMMARY_KEYS`.

        ``labels`` is the number of classes; ``entities``/``relations`` come from the
        tensors; ``triples`` is the number of nonzero entries over all tensor splits;
        ``test_documents`` the number of documents of :attr:`test`.
        """
        c = self.corpus
        out: dict[str, Any] = dict.fromkeys(SUMMARY_KEYS)
        if c is not None:
            out.update(documents=c.n_docs, words=c.n_words, tokens=c.n_tokens)
        if self.links is not None:
            out["links"] = self.links.n_links
        if self.label_names is not None:
            out["labels"] = int(len(self.label_names))
        elif self.labels is not None:
            out["labels"] = int(np.unique(self.labels).size)
        if self.tensor:
            first = next(iter(self.tensor.values()))
            out.update(entities=first.n_entities, relations=first.n_relations,
                       triples=sum(t.n_entries for t in self.tensor.values()))
        if self.test is not None and self.test.corpus is not None:
            out["test_documents"] = self.test.corpus.n_docs
        return out

    def __repr__(self) -> str:
        parts = []
        if self.corpus is not None:
            parts.append(f"{self.corpus.n_docs} documents x {self.corpus.n_words} words "
                         f"({self.corpus.n_tokens} tokens)")
        if self.links is not None:
            kind = "directed" if self.links.directed else "undirected"
            parts.append(f"{self.links.n_links} {kind} links")
        if self.labels is not None:
            k = len(self.label_names) if self.label_names is not None else \
                np.unique(self.labels).size
            parts.append(f"{k} classes")
        if self.tensor:
            first = next(iter(self.tensor.values()))
            splits = ", ".join(f"{s} {t.n_entries}" for s, t in self.tensor.items())
            parts.append(f"{first.n_entities} entities x {first.n_relations} relations "
                         f"(triples: {splits})")
        if self.test is not None and self.test.corpus is not None:
            parts.append(f"test split of {self.test.corpus.n_docs} documents")
        body = "; ".join(parts) if parts else "empty"
        return f"Dataset({self.name!r}: {body})"
