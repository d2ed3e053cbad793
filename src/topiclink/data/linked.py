"""One call from documents + citations to an aligned corpus, links, times and metadata.

:func:`linked_corpus` joins a :class:`~topiclink.data.io.documents.DocumentTable` and an
:class:`~topiclink.data.io.documents.EdgeList` by id, counts the words of the texts
(:class:`~topiclink.data.analyzer.TextAnalyzer`) and drops, **with a logged count for
each**, what must go: edges naming unknown ids, self-citations, repeated edges, and
documents left without any vocabulary word (empty texts, or stop words only) together
with their links.  The edges lost to unknown ids and the links lost with the dropped
documents count against one limit, ``max_lost`` (1% of the edges read): above it the
loss is not silent but an error naming the counts by cause, example ids and the value of
``max_lost`` that would accept it.  The usual causes are ids written differently in the
two files (``1001`` vs ``0001001``, ``hep-th/440`` vs ``hep-th/0440``), which an explicit
``normalize_ids=`` rule fixes, and missing texts.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data import ids as id_rules
from topiclink.data.analyzer import TextAnalyzer
from topiclink.data.checks import DataError, check_index
from topiclink.data.clean import drop_empty_documents
from topiclink.data.corpus import Corpus
from topiclink.data.ids import IdRule
from topiclink.data.io.documents import DocumentTable, EdgeList
from topiclink.data.links import Links

__all__ = ["LinkedCorpus", "linked_corpus"]

logger = logging.getLogger(__name__)

Policy = Literal["drop", "error"]


@dataclass(eq=False)
class LinkedCorpus:
    """Documents with word counts, directed citation links, times and metadata, aligned.

    Attributes
    ----------
    corpus : Corpus
        Counts over ``analyzer.vocabulary_``; ``doc_ids`` are the (normalised) string ids,
        ``metadata`` the table's metadata (also in :attr:`metadata`).
    links : Links
        ``source`` cites ``target`` (positions in ``corpus``); undirected when the edge
        list was.
    times : ndarray of float64 or None
        Fractional years, aligned with the documents.
    metadata : DataFrame
        One row per document (index ``0..n-1``).
    analyzer : TextAnalyzer
        The fitted analyser (``to_dict()`` stores it).
    report : dict of str -> int
        What was read and dropped: ``documents_read``, ``edges_read``,
        ``unknown_id_edges``, ``self_citations``, ``duplicate_edges``,
        ``empty_documents`` (no vocabulary word), ``empty_texts`` (those of them whose
        text is empty), ``links_of_empty_documents``, ``links_lost``
        (``unknown_id_edges + links_of_empty_documents``), ``documents``, ``links``.
    """

    corpus: Corpus
    links: Links
    times: np.ndarray | None
    metadata: pd.DataFrame
    analyzer: TextAnalyzer
    report: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"LinkedCorpus({self.corpus.n_docs} documents x {self.corpus.n_words} terms, "
                f"{self.links.n_links} links)")


def _examples(values: np.ndarray, k: int = 3) -> str:
    return ", ".join(repr(str(v)) for v in pd.unique(values)[:k])


def _needed(lost: int, n: int) -> str:
    """The smallest two-decimal fraction that accepts ``lost`` of ``n`` (for messages)."""
    return f"{math.ceil(100 * lost / n) / 100:g}"


def _unknown_error(edges: EdgeList, doc_ids: np.ndarray, unknown: np.ndarray,
                   n_unknown_ids: int, max_lost: float, rule: IdRule) -> DataError:
    n, n_bad = len(edges), int(unknown.sum())
    bad_ids = np.concatenate([edges.source[unknown], edges.target[unknown]])
    bad_ids = bad_ids[~np.isin(bad_ids, doc_ids)]
    line = int(edges.lines[np.flatnonzero(unknown)[0]])
    hint = _id_hint(doc_ids, bad_ids, rule)
    return DataError(
        f"{edges.source_file}: {n_bad} of {n} edges ({n_bad / n:.1%}, more than "
        f"max_lost={max_lost:.1%}) name {n_unknown_ids} ids that are not documents, "
        f"e.g. {_examples(bad_ids)} (first at line {line}); document ids look like "
        f"{_examples(doc_ids)}{hint}")


def _id_hint(doc_ids: np.ndarray, bad_ids: np.ndarray, rule: IdRule) -> str:
    """Name the id rule that matches the most unknown ids
    (:func:`~topiclink.data.ids.suggest_id_rule`), else list the rules."""
    if rule is not None:
        return "; check normalize_ids"
    found = id_rules.suggest_id_rule(doc_ids, bad_ids)
    if found is not None:
        best, matched, tried = found
        return (f"; the files write ids differently: pass normalize_ids='{best}' (it "
                f"matches {matched} of {tried} of these ids) or a callable")
    return (f"; if the files write ids differently (e.g. '1001' for '0001001'), pass "
            f"normalize_ids={'|'.join(repr(r) for r in id_rules.ID_RULES)} or a callable")


def _loss(n_docs: int, dropped_ids: np.ndarray, n_empty_text: int,
          links_dropped: int, n_unknown: int, unknown_ids: np.ndarray) -> str:
    """The causes of the loss, for the log line and the error: documents dropped without
    any vocabulary word and their links; edges naming ids that are not documents."""
    parts = []
    if dropped_ids.size:
        d = int(dropped_ids.size)
        parts.append(f"dropped {d} of {n_docs} documents ({d / n_docs:.1%}) without any "
                     f"vocabulary word ({n_empty_text} with an empty text; e.g. "
                     f"{_examples(dropped_ids)}) and their {links_dropped} links")
    if n_unknown:
        n_ids = int(pd.unique(unknown_ids).size)
        parts.append(f"{n_unknown} edges naming {n_ids} ids that are not documents (e.g. "
                     f"{_examples(unknown_ids)})")
    return ", and ".join(parts)


def _same_rule(applied: IdRule, rule: IdRule) -> bool:
    """Whether edges normalised by ``applied`` already are under ``rule``."""
    return applied is not None and (applied is rule or (isinstance(applied, str)
                                                        and applied == rule))


def _count(analyzer: TextAnalyzer, texts: list[str], fit_on: object) -> sp.csr_matrix:
    """Counts of ``texts``: transform only when fitted; else fit on ``fit_on`` (all texts
    by default) and transform the rest, each text analysed once."""
    if analyzer.vocabulary_ is not None:
        if fit_on is not None:
            raise ValueError("fit_on given with an analyzer that is already fitted")
        return analyzer.transform(texts)
    if fit_on is None:
        return analyzer.fit_transform(texts)
    fit = check_index(fit_on, len(texts), name="fit_on")
    rest = np.setdiff1d(np.arange(len(texts)), fit)
    X_fit = analyzer.fit_transform([texts[i] for i in fit.tolist()])
    X_rest = analyzer.transform([texts[i] for i in rest.tolist()])
    order = np.argsort(np.concatenate([fit, rest]), kind="stable")
    return sp.csr_matrix(sp.vstack([X_fit, X_rest], format="csr")[order])


def _first_line(edges: EdgeList, mask: np.ndarray, keep: np.ndarray) -> int:
    return int(edges.lines[keep][np.flatnonzero(mask)[0]])


def linked_corpus(documents: DocumentTable, edges: EdgeList, *,
                  analyzer: TextAnalyzer | None = None, normalize_ids: IdRule = None,
                  max_lost: float = 0.01, self_citations: Policy = "drop",
                  duplicates: Policy = "drop", drop_empty: bool = True,
                  fit_on: object = None, name: str = "") -> LinkedCorpus:
    """Join documents and citations into an aligned corpus, links, times and metadata.

    Parameters
    ----------
    documents : DocumentTable
        From :func:`~topiclink.data.io.documents.read_documents`.
    edges : EdgeList
        From :func:`~topiclink.data.io.documents.read_edges` (citing -> cited).
    analyzer : TextAnalyzer, optional
        Unfitted: fitted on the texts.  Fitted: only ``transform`` (the texts are counted
        over its vocabulary).  Default ``TextAnalyzer()`` (English stop words, words of 2+
        letters, no stemming, every term kept).
    normalize_ids : str or callable, optional
        An id rule of :mod:`topiclink.data.ids` applied to the document ids and to both
        ends of every edge (e.g. ``"zero-pad:7"``, ``"after-slash:strip-zeros"`` for
        ``hep-th/440`` vs ``hep-th/0440``); ``None``: exact string match.  Edges read
        with the same rule (``read_edges(normalize_ids=)``) are not normalised again.
    max_lost : float
        Largest tolerated fraction of the edges read that is lost: edges with an end
        that is not a document, plus the links of the documents dropped without any
        vocabulary word (``drop_empty``).  Up to it they are dropped with one logged
        warning naming the counts of each cause; above it a :class:`DataError` names
        the counts, example ids and the ``max_lost`` that would accept the loss
        (default 1%).  Unknown ids alone over the limit stop before the texts are
        counted.
    self_citations, duplicates : {"drop", "error"}
        A document citing itself / an edge listed again (for undirected edges ``a b`` and
        ``b a`` are the same).  ``"drop"``: removed, count logged; ``"error"``: DataError
        naming ``file:line``.  (:class:`Links` never hold either.)
    drop_empty : bool
        Remove documents without any vocabulary word (and their links) with
        :func:`~topiclink.data.clean.drop_empty_documents`; ``False`` keeps them aligned.
    fit_on : array_like of bool or int, optional
        Fit an unfitted ``analyzer`` on these documents only (a mask or positions, e.g.
        the training documents of a split by time); the others are counted over that
        vocabulary.  Default: all documents.
    name : str
        The corpus name.

    Returns
    -------
    LinkedCorpus

    Raises
    ------
    DataError
        More edges lost than ``max_lost``, ids repeated after ``normalize_ids``, or a
        self-citation / duplicate under the ``"error"`` policy.
    """
    for pol, what in ((self_citations, "self_citations"), (duplicates, "duplicates")):
        if pol not in ("drop", "error"):
            raise ValueError(f"{what} must be 'drop' or 'error', got {pol!r} (Links hold no "
                             f"self-citations or repeated pairs)")
    if not 0 <= max_lost <= 1:
        raise ValueError(f"max_lost must be a fraction in [0, 1], got {max_lost!r}")
    doc_ids = documents.ids
    src, tgt = edges.source, edges.target
    if normalize_ids is not None:
        doc_ids = id_rules.normalize_ids(doc_ids, normalize_ids)
        if not _same_rule(edges.normalized_by, normalize_ids):
            src = id_rules.normalize_ids(src, normalize_ids)
            tgt = id_rules.normalize_ids(tgt, normalize_ids)
        dup = pd.Series(doc_ids).duplicated()
        if dup.any():
            first = str(doc_ids[int(np.flatnonzero(dup)[0])])
            rows = np.flatnonzero(doc_ids == first)[:2]
            raise DataError(f"{documents.source}: normalize_ids makes ids "
                            f"{str(documents.ids[rows[0]])!r} and "
                            f"{str(documents.ids[rows[1]])!r} (rows {rows[0]} and {rows[1]}) "
                            f"the same id {first!r}; {int(dup.sum())} such clashes")
    report: dict[str, int] = {"documents_read": len(documents), "edges_read": len(edges)}
    n_docs = len(doc_ids)

    # ---- join by id
    index = pd.Index(doc_ids)
    s = index.get_indexer(src)
    t = index.get_indexer(tgt)
    unknown = (s < 0) | (t < 0)
    n_unknown = int(unknown.sum())
    report["unknown_id_edges"] = n_unknown
    bad_ids = np.concatenate([src[s < 0], tgt[t < 0]])
    if n_unknown > max_lost * len(edges):
        raise _unknown_error(EdgeList(src, tgt, edges.lines, edges.directed,
                                      edges.source_file), doc_ids, unknown,
                             int(pd.unique(bad_ids).size), max_lost, normalize_ids)
    keep = ~unknown
    pairs = np.column_stack([s[keep], t[keep]]).astype(np.int64)

    # ---- self-citations and duplicates, counted here to name file lines
    selfs = pairs[:, 0] == pairs[:, 1]
    report["self_citations"] = int(selfs.sum())
    if selfs.any():
        if self_citations == "error":
            line = _first_line(edges, selfs, keep)
            raise DataError(f"{edges.source_file}:{line}: document {str(src[keep][selfs][0])!r} "
                            f"cites itself; {int(selfs.sum())} self-citations in all "
                            f"(self_citations='drop' removes them)")
        logger.info("%s: dropped %d self-citations", edges.source_file, int(selfs.sum()))
    lines_kept = edges.lines[keep][~selfs]
    pairs = pairs[~selfs]
    key_pairs = pairs if edges.directed else np.sort(pairs, axis=1)
    dup = pd.DataFrame(key_pairs).duplicated().to_numpy()
    report["duplicate_edges"] = int(dup.sum())
    if dup.any():
        if duplicates == "error":
            line = int(lines_kept[np.flatnonzero(dup)[0]])
            raise DataError(f"{edges.source_file}:{line}: repeats an earlier edge; "
                            f"{int(dup.sum())} duplicate edges in all (duplicates='drop' "
                            f"removes them)")
        logger.info("%s: dropped %d duplicate edges", edges.source_file, int(dup.sum()))
    pairs = pairs[~dup]
    links = Links.from_pairs(pairs, n_docs, directed=edges.directed,
                             source_name=edges.source_file)

    # ---- words
    if analyzer is None:
        analyzer = TextAnalyzer()
    X = _count(analyzer, documents.texts, fit_on)
    metadata = documents.metadata.reset_index(drop=True)
    corpus = Corpus(X, vocabulary=analyzer.vocabulary_, doc_ids=doc_ids,
                    titles=documents.titles, metadata=metadata, name=name)
    times = documents.times
    n_links = links.n_links
    dropped_ids = np.zeros(0, dtype=str)
    n_empty_text = 0
    links_dropped = 0
    if drop_empty:
        corpus, new_links, _, kept = drop_empty_documents(corpus, links)
        assert new_links is not None
        dropped = np.setdiff1d(np.arange(n_docs), kept)
        dropped_ids = doc_ids[dropped]
        n_empty_text = int(np.isin(documents.empty_texts, dropped).sum())
        links_dropped = n_links - new_links.n_links
        links = new_links
        times = None if times is None else times[kept]
        metadata = metadata.iloc[kept].reset_index(drop=True)
    report["empty_documents"] = int(dropped_ids.size)
    report["empty_texts"] = n_empty_text
    report["links_of_empty_documents"] = links_dropped
    lost = n_unknown + links_dropped
    report["links_lost"] = lost
    if lost or dropped_ids.size:
        causes = _loss(n_docs, dropped_ids, n_empty_text, links_dropped, n_unknown,
                       bad_ids)
        n_edges = len(edges)
        where = (documents.source or "documents") if dropped_ids.size else edges.source_file
        if lost > max_lost * n_edges:
            raise DataError(
                f"{where}: {lost} of {n_edges} edges ({lost / n_edges:.1%}) "
                f"would be lost, more than max_lost={max_lost:.1%}: {causes}; give those "
                f"documents their text, or pass max_lost={_needed(lost, n_edges)} to drop "
                f"them")
        if n_edges:
            logger.warning("%s: %s: lost %d of %d edges (%.1f%%, max_lost=%.1f%%)", where,
                           causes, lost, n_edges, 100 * lost / n_edges, 100 * max_lost)
        else:
            logger.warning("%s: %s", where, causes)
    report["documents"] = corpus.n_docs
    report["links"] = links.n_links
    logger.info("linked corpus: %s", ", ".join(f"{k} {v}" for k, v in report.items()))
    return LinkedCorpus(corpus, links, times, metadata, analyzer, report)
