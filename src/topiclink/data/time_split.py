"""Split a citation corpus by publication time (the LMV paper's protocol, §7.2).

Training = the documents published **before** ``cutoff`` (``time < cutoff``; with
``inclusive=True``, ``time <= cutoff``) and the links among them.  Test = the later
documents (up to ``test_until``, if given) that cite at least one training document; their
citations to training documents are the held-out truth (a test x train matrix).  Links
between two test documents, training documents citing later ones and test documents
citing nothing in training are not used; every count is logged and kept in
:attr:`TimeSplit.report`.

The test corpus keeps only the words of the training vocabulary (the words that occur in
the training documents; ``train_vocabulary=True``), so a model fitted on the training
corpus can score it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import DataError, as_1d
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links

__all__ = ["TimeSplit", "split_by_time"]

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class TimeSplit:
    """A training set of earlier documents and a test set of later citing documents.

    Attributes
    ----------
    train_index, test_index : ndarray of int64
        Positions in the input corpus (sorted).
    train_corpus : Corpus
    train_links : Links
        Links among the training documents (positions in ``train_corpus``).
    train_times : ndarray of float64
    test_corpus : Corpus
        Same vocabulary as ``train_corpus``.
    test_times : ndarray of float64
    test_citations : csr_matrix of bool, shape (n_test, n_train)
        ``[i, j]``: test document ``i`` cites training document ``j`` (for undirected
        links: they are linked).
    cutoff : float
    report : dict of str -> int
        ``train_documents``, ``train_links``, ``later_documents``, ``test_documents``,
        ``test_citations``, ``later_without_citations`` (later documents citing no
        training document, not used), ``train_citing_later`` (links from a training to a
        later document, not used), ``later_later_links`` (not used),
        ``dropped_words`` (words absent from the training documents),
        ``dropped_test_tokens`` (their tokens in the test documents).
    """

    train_index: np.ndarray
    test_index: np.ndarray
    train_corpus: Corpus
    train_links: Links
    train_times: np.ndarray
    test_corpus: Corpus
    test_times: np.ndarray
    test_citations: sp.csr_matrix
    cutoff: float
    report: dict[str, int] = field(default_factory=dict)

    @property
    def n_train(self) -> int:
        return int(self.train_index.size)

    @property
    def n_test(self) -> int:
        return int(self.test_index.size)

    def __repr__(self) -> str:
        return (f"TimeSplit(cutoff={self.cutoff:g}: {self.n_train} training documents, "
                f"{self.train_links.n_links} links; {self.n_test} test documents, "
                f"{self.test_citations.nnz} test->train citations)")


def split_by_time(corpus: Corpus, links: Links, times: object, cutoff: float, *,
                  inclusive: bool = False, test_until: float | None = None,
                  train_vocabulary: bool = True) -> TimeSplit:
    """Split documents at ``cutoff``: earlier ones train, later citing ones test.

    Parameters
    ----------
    corpus : Corpus
    links : Links
        Directed: ``source`` cites ``target``.  Undirected links count both ways.
    times : array_like of float, shape (n_docs,)
        Publication times (e.g. fractional years of :mod:`topiclink.data.dates`); NaN is
        refused naming the document.
    cutoff : float
        Training: ``time < cutoff`` (``inclusive=True``: ``time <= cutoff``).
    test_until : float, optional
        Test candidates: ``time < test_until`` as well (default: every later document).
    train_vocabulary : bool
        Keep only the words that occur in the training documents (in both corpora); the
        dropped words and test tokens are counted and logged.

    Returns
    -------
    TimeSplit

    Raises
    ------
    DataError
        Misaligned inputs, a NaN time, or an empty training or test set.
    """
    if not isinstance(corpus, Corpus):
        raise TypeError(f"split_by_time: corpus must be a Corpus, got {type(corpus).__name__}")
    if not isinstance(links, Links):
        raise TypeError(f"split_by_time: links must be Links, got {type(links).__name__}")
    n = corpus.n_docs
    if links.n_docs != n:
        raise DataError(f"split_by_time: links cover {links.n_docs} documents, the corpus "
                        f"has {n}")
    t = as_1d(times, "times", n).astype(np.float64)
    if np.isnan(t).any():
        d = int(np.flatnonzero(np.isnan(t))[0])
        raise DataError(f"split_by_time: document {d} (id {corpus.doc_ids[d].item()!r}) has no "
                        f"time (NaN); {int(np.isnan(t).sum())} in all")
    is_train = t <= cutoff if inclusive else t < cutoff
    later = ~is_train
    if test_until is not None:
        later &= t < test_until
    train_index = np.flatnonzero(is_train)
    if train_index.size == 0:
        raise DataError(f"split_by_time: no document is before the cutoff {cutoff:g} "
                        f"(times {t.min():g} .. {t.max():g})")
    s, g = links.source.astype(np.int64), links.target.astype(np.int64)
    if not links.directed:  # both orientations of an undirected link
        s, g = np.concatenate([s, g]), np.concatenate([g, s])
    cites_train = later[s] & is_train[g]
    citing = np.zeros(n, dtype=bool)
    citing[s[cites_train]] = True
    test_index = np.flatnonzero(citing)
    if test_index.size == 0:
        raise DataError(f"split_by_time: no document after the cutoff {cutoff:g} cites a "
                        f"training document")
    pos_train = np.full(n, -1, dtype=np.int64)
    pos_train[train_index] = np.arange(train_index.size)
    pos_test = np.full(n, -1, dtype=np.int64)
    pos_test[test_index] = np.arange(test_index.size)
    rows, cols = pos_test[s[cites_train]], pos_train[g[cites_train]]
    truth = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, cols)),
                          shape=(test_index.size, train_index.size))
    truth.sum_duplicates()
    truth.data[:] = True
    train_links = links.subgraph(train_index)
    d_links = links.source.astype(np.int64), links.target.astype(np.int64)
    report = {
        "train_documents": int(train_index.size),
        "train_links": train_links.n_links,
        "later_documents": int(later.sum()),
        "test_documents": int(test_index.size),
        "test_citations": int(truth.nnz),
        "later_without_citations": int(later.sum() - test_index.size),
        "train_citing_later": int((is_train[d_links[0]] & later[d_links[1]]).sum())
        if links.directed else 0,
        "later_later_links": int((later[d_links[0]] & later[d_links[1]]).sum()),
    }
    train_corpus = corpus.subset(train_index)
    test_corpus = corpus.subset(test_index)
    report["dropped_words"] = 0
    report["dropped_test_tokens"] = 0
    if train_vocabulary:
        seen = np.flatnonzero(np.asarray(train_corpus.counts.sum(axis=0)).ravel() > 0)
        if seen.size < corpus.n_words:
            n_test_tokens = test_corpus.n_tokens
            train_corpus = _columns(train_corpus, seen)
            test_corpus = _columns(test_corpus, seen)
            report["dropped_words"] = corpus.n_words - int(seen.size)
            report["dropped_test_tokens"] = n_test_tokens - test_corpus.n_tokens
    n_empty = int(test_corpus.empty_documents().size)
    if n_empty:
        logger.warning("split_by_time: %d test documents have no word of the training "
                       "vocabulary (kept: their citations still count)", n_empty)
    logger.info("split_by_time at %g: %s", cutoff,
                ", ".join(f"{k} {v}" for k, v in report.items()))
    return TimeSplit(train_index, test_index, train_corpus, train_links, t[train_index],
                     test_corpus, t[test_index], truth, float(cutoff), report)


def _columns(corpus: Corpus, cols: np.ndarray) -> Corpus:
    return Corpus(corpus.counts[:, cols], vocabulary=corpus.vocabulary[cols],
                  doc_ids=corpus.doc_ids, titles=corpus.titles, metadata=corpus.metadata,
                  name=corpus.name)
