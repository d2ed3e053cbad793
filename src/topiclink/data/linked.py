"""One call from documents + citations to an aligned corpus, links, times and metadata.

:func:`linked_corpus` joins a :class:`~topiclink.data.io.documents.DocumentTable` and an
:class:`~topiclink.data.io.documents.EdgeList` by id, counts the words of the texts
(:class:`~topiclink.data.analyzer.TextAnalyzer`) and drops, **with a logged count for
each**, what must go: edges naming unknown ids, self-citations, repeated edges, and
documents left without any vocabulary word (together with their links).  Too many unknown
ids is not a silent loss but an error naming the counts and examples: the usual cause is
ids written differently in the two files (``1001`` vs ``0001001``), which an explicit
``normalize_ids=`` rule fixes.
"""

from __future__ import annotations

import logging
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
        ``empty_documents`` (no vocabulary word), ``links_of_empty_documents``,
        ``documents``, ``links``.
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


def _unknown_error(edges: EdgeList, doc_ids: np.ndarray, unknown: np.ndarray,
                   n_unknown_ids: int, max_unknown: float, rule: IdRule) -> DataError:
    n, n_bad = len(edges), int(unknown.sum())
    bad_ids = np.concatenate([edges.source[unknown], edges.target[unknown]])
    bad_ids = bad_ids[~np.isin(bad_ids, doc_ids)]
    line = int(edges.lines[np.flatnonzero(unknown)[0]])
    hint = "; check normalize_ids" if rule is not None else _id_hint(doc_ids, bad_ids)
    return DataError(
        f"{edges.source_file}: {n_bad} of {n} edges ({n_bad / n:.1%}, more than "
        f"max_unknown={max_unknown:.1%}) name {n_unknown_ids} ids that are not documents, "
        f"e.g. {_examples(bad_ids)} (first at line {line}); document ids look like "
        f"{_examples(doc_ids)}{hint}")


def _id_hint(doc_ids: np.ndarray, bad_ids: np.ndarray) -> str:
    """Suggest an id rule: zero-padding when the document ids are digits of one width."""
    widths = np.unique(np.char.str_len(doc_ids)) if doc_ids.size else np.zeros(0)
    digits = doc_ids.size and all(v.isdigit() for v in doc_ids[:1000].tolist())
    if digits and widths.size == 1 and all(v.isdigit() for v in bad_ids[:1000].tolist()):
        rule = f"'zero-pad:{int(widths[0])}'"
    else:
        rule = "'zero-pad:N', 'strip-zeros' or 'lower'"
    return (f"; if the files write ids differently (e.g. '1001' for '0001001'), pass "
            f"normalize_ids={rule} or a callable")


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
                  max_unknown: float = 0.01, self_citations: Policy = "drop",
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
        ends of every edge (e.g. ``"zero-pad:7"``); ``None``: exact string match.
    max_unknown : float
        Largest tolerated fraction of edges with an end that is not a document.  Up to it
        they are dropped with a logged warning; above it a :class:`DataError` names the
        counts and example ids (default 1%).
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
        Too many unknown ids, ids repeated after ``normalize_ids``, or a self-citation /
        duplicate under the ``"error"`` policy.
    """
    for pol, what in ((self_citations, "self_citations"), (duplicates, "duplicates")):
        if pol not in ("drop", "error"):
            raise ValueError(f"{what} must be 'drop' or 'error', got {pol!r} (Links hold no "
                             f"self-citations or repeated pairs)")
    if not 0 <= max_unknown <= 1:
        raise ValueError(f"max_unknown must be a fraction in [0, 1], got {max_unknown!r}")
    doc_ids = documents.ids
    src, tgt = edges.source, edges.target
    if normalize_ids is not None:
        doc_ids = id_rules.normalize_ids(doc_ids, normalize_ids)
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
    if n_unknown:
        bad_ids = np.concatenate([src[s < 0], tgt[t < 0]])
        n_ids = int(pd.unique(bad_ids).size)
        if n_unknown > max_unknown * len(edges):
            raise _unknown_error(EdgeList(src, tgt, edges.lines, edges.directed,
                                          edges.source_file), doc_ids, unknown, n_ids,
                                 max_unknown, normalize_ids)
        logger.warning("%s: dropped %d of %d edges (%.2f%%) naming %d ids that are not "
                       "documents (e.g. %s)", edges.source_file, n_unknown, len(edges),
                       100 * n_unknown / len(edges), n_ids, _examples(bad_ids))
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
    report["empty_documents"] = 0
    report["links_of_empty_documents"] = 0
    if drop_empty:
        corpus, new_links, _, kept = drop_empty_documents(corpus, links)
        assert new_links is not None
        report["empty_documents"] = n_docs - kept.size
        report["links_of_empty_documents"] = n_links - new_links.n_links
        if kept.size < n_docs:
            empty_ids = np.delete(doc_ids, kept)
            logger.warning("dropped %d of %d documents without any vocabulary word (e.g. %s) "
                           "and their %d links", n_docs - kept.size, n_docs,
                           _examples(empty_ids), n_links - new_links.n_links)
        links = new_links
        times = None if times is None else times[kept]
        metadata = metadata.iloc[kept].reset_index(drop=True)
    report["documents"] = corpus.n_docs
    report["links"] = links.n_links
    logger.info("linked corpus: %s", ", ".join(f"{k} {v}" for k, v in report.items()))
    return LinkedCorpus(corpus, links, times, metadata, analyzer, report)
