"""Held-out splits: k-fold over documents with link removal; held-out tensor entries.

The document protocol is the one of the relational topic model papers (see
``docs/design/grtm.md``): documents are split into folds; a test document is removed
together with *all* its links.  Training sees only the training documents and the links
among them; the links between a test document and the training documents are the
evaluation targets; links between two test documents are dropped (no model sees them).

For every original link exactly one of the following holds, so the counts add up::

    n_links = train_links.n_links + fold.n_test_links + test_test_links.n_links

and ``n_removed_links = n_test_links + test_test_links.n_links`` (links training never sees).
"""

from __future__ import annotations

import logging
import math
import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links, as_links
from topiclink.data.tensor import RelationalTensor
from topiclink.random import RandomState, as_generator

__all__ = ["Fold", "holdout_tensor_entries", "kfold_documents", "train_test_split_documents"]

logger = logging.getLogger(__name__)


@dataclass
class Fold:
    """One train/test split of a linked corpus.

    Attributes
    ----------
    fold : int
        Index of this fold, ``0 .. n_folds - 1``.
    n_folds : int
        Number of folds in the split this fold belongs to (1 for a single hold-out split).
    train_index, test_index : ndarray of int64, shapes (n_train,), (n_test,)
        Sorted positions in the full corpus; disjoint; together all documents.
    train_corpus, test_corpus : Corpus
        ``corpus.subset(train_index)`` and ``corpus.subset(test_index)``.
    train_links : Links or None
        Links among the training documents, re-indexed to ``0 .. n_train - 1``
        (``links.subgraph(train_index)``).  None when no links were given.
    test_links : scipy.sparse.csr_matrix of bool, shape (n_test, n_train), or None
        ``test_links[i, j]`` is True when test document ``test_index[i]`` and training
        document ``train_index[j]`` are linked in either direction.
    test_out : csr_matrix of bool, shape (n_test, n_train), or None
        Directed links only: ``test_out[i, j]`` is True when test document ``i`` links to
        (cites) training document ``j``.  None for undirected links.
    test_in : csr_matrix of bool, shape (n_test, n_train), or None
        Directed links only: ``test_in[i, j]`` is True when training document ``j`` links
        to (cites) test document ``i``.  ``test_links = test_out | test_in``.
    test_test_links : Links or None
        Links among the test documents, re-indexed to ``0 .. n_test - 1``.  They are
        dropped by the protocol (no model trains or is evaluated on them); kept here so
        the accounting can be checked.
    n_removed_links : int
        Links touching at least one test document (test-train and test-test), which
        training never sees.
    """

    fold: int
    n_folds: int
    train_index: np.ndarray
    test_index: np.ndarray
    train_corpus: Corpus
    test_corpus: Corpus
    train_links: Links | None = None
    test_links: sp.csr_matrix | None = None
    test_out: sp.csr_matrix | None = None
    test_in: sp.csr_matrix | None = None
    test_test_links: Links | None = None
    n_removed_links: int = 0

    @property
    def n_train(self) -> int:
        return int(self.train_index.size)

    @property
    def n_test(self) -> int:
        return int(self.test_index.size)

    @property
    def n_test_links(self) -> int:
        """Number of original links between a test and a training document.

        Directed: ``test_out.nnz + test_in.nnz`` (a reciprocal pair counts twice, as in
        the original); undirected: ``test_links.nnz``.
        """
        if self.test_links is None:
            return 0
        if self.test_out is not None and self.test_in is not None:
            return int(self.test_out.nnz + self.test_in.nnz)
        return int(self.test_links.nnz)

    def __repr__(self) -> str:
        links = ""
        if self.train_links is not None:
            links = (f", {self.train_links.n_links} train links, {self.n_test_links} "
                     f"test links, {self.n_removed_links} removed")
        return (f"Fold({self.fold + 1}/{self.n_folds}: {self.n_train} train, "
                f"{self.n_test} test documents{links})")


# ---------------------------------------------------------------------- helpers
def _bool_csr(M: sp.spmatrix, shape: tuple[int, int]) -> sp.csr_matrix:
    """Canonical boolean CSR (sorted indices, no explicit zeros)."""
    M = sp.csr_matrix(M, shape=shape)
    M.sum_duplicates()
    M.eliminate_zeros()
    out = sp.csr_matrix((np.ones(M.nnz, dtype=bool), M.indices.astype(np.int32),
                         M.indptr.astype(np.int64)), shape=shape)
    out.sort_indices()
    return out


def _check_links(corpus: Corpus, links: object) -> Links | None:
    if links is None:
        return None
    return as_links(links, corpus.n_docs, doc_ids=corpus.doc_ids)


def _make_fold(corpus: Corpus, links: Links | None, train_index: np.ndarray,
               test_index: np.ndarray, fold: int, n_folds: int) -> Fold:
    train_index = np.sort(np.asarray(train_index, dtype=np.int64))
    test_index = np.sort(np.asarray(test_index, dtype=np.int64))
    out = Fold(fold=fold, n_folds=n_folds, train_index=train_index, test_index=test_index,
               train_corpus=corpus.subset(train_index), test_corpus=corpus.subset(test_index))
    if links is None:
        return out
    shape = (test_index.size, train_index.size)
    out.train_links = links.subgraph(train_index)
    out.test_test_links = links.subgraph(test_index)
    if links.directed:
        out.test_out = _bool_csr(links.between(test_index, train_index), shape)
        out.test_in = _bool_csr(links.between(train_index, test_index).T, shape)
        union = out.test_out.astype(np.int8) + out.test_in.astype(np.int8)
        out.test_links = _bool_csr(union, shape)
    else:
        out.test_links = _bool_csr(links.between(test_index, train_index), shape)
    out.n_removed_links = links.n_links - out.train_links.n_links
    if out.n_removed_links != out.n_test_links + out.test_test_links.n_links:
        raise AssertionError(  # pragma: no cover - an internal inconsistency
            f"fold {fold}: link accounting failed ({links.n_links} links, "
            f"{out.train_links.n_links} train, {out.n_test_links} test, "
            f"{out.test_test_links.n_links} test-test)")
    logger.info("fold %d/%d: %d train / %d test documents; %d of %d links removed with the "
                "test documents (%d test-train kept for evaluation, %d test-test dropped)",
                fold + 1, n_folds, train_index.size, test_index.size, out.n_removed_links,
                links.n_links, out.n_test_links, out.test_test_links.n_links)
    return out


def _seed_from(rng: np.random.Generator) -> int:
    """An int seed for APIs (scikit-learn) that want one, drawn from ``rng``."""
    return int(rng.integers(0, 2**32 - 1))


# ---------------------------------------------------------------------- public API
def kfold_documents(corpus: Corpus, links: object = None, n_folds: int = 5,
                    shuffle: bool = True, random_state: RandomState = None) -> list[Fold]:
    """Split the documents into ``n_folds`` folds; each fold holds one part out.

    Every document is a test document in exactly one fold.  Test documents are removed
    with all their links (see :class:`Fold`); the number of removed links is logged.
    The index split is :class:`sklearn.model_selection.KFold` (fold sizes differ by at
    most one), seeded from ``random_state``.

    Parameters
    ----------
    corpus : Corpus
        The D documents.
    links : Links, (n, 2) array, scipy adjacency or networkx graph, optional
        Links over the D documents (anything :func:`topiclink.data.links.as_links`
        accepts).
    n_folds : int
        Number of folds, ``2 <= n_folds <= D``.
    shuffle : bool
        Shuffle the documents before splitting (False: contiguous blocks in corpus
        order, and ``random_state`` is unused).
    random_state : None, int, SeedSequence or Generator
        Same seed, same folds.

    Returns
    -------
    folds : list of Fold, length n_folds
        A list (not a generator) so folds can be reused and run in parallel; each fold
        holds corpus subsets, so memory is about ``n_folds`` times the corpus.
    """
    if not isinstance(corpus, Corpus):
        raise TypeError(f"corpus must be a Corpus, got {type(corpus).__name__}")
    n_docs = corpus.n_docs
    if isinstance(n_folds, bool) or not isinstance(n_folds, numbers.Integral):
        raise ValueError(f"n_folds must be an integer in [2, {n_docs}], got {n_folds!r}")
    if not 2 <= n_folds <= n_docs:
        raise ValueError(f"n_folds must be in [2, n_docs={n_docs}], got {n_folds}")
    from sklearn.model_selection import KFold

    links_ = _check_links(corpus, links)
    seed = _seed_from(as_generator(random_state)) if shuffle else None
    kf = KFold(n_splits=int(n_folds), shuffle=bool(shuffle), random_state=seed)
    return [_make_fold(corpus, links_, tr, te, f, int(n_folds))
            for f, (tr, te) in enumerate(kf.split(np.arange(n_docs)))]


def train_test_split_documents(corpus: Corpus, links: object = None, test_size: float = 0.2,
                               random_state: RandomState = None) -> Fold:
    """A single random hold-out split of the documents (test documents lose their links).

    Parameters
    ----------
    corpus : Corpus
    links : Links or anything :func:`~topiclink.data.links.as_links` accepts, optional
    test_size : float in (0, 1) or int
        Fraction of the documents held out (rounded up, as scikit-learn does), or their
        number.  Both sides must keep at least one document.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    Fold
        With ``fold = 0`` and ``n_folds = 1``.
    """
    if not isinstance(corpus, Corpus):
        raise TypeError(f"corpus must be a Corpus, got {type(corpus).__name__}")
    n_docs = corpus.n_docs
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real):
        raise ValueError(f"test_size must be a fraction in (0, 1) or a count, got {test_size!r}")
    if isinstance(test_size, numbers.Integral):
        n_test = int(test_size)
    else:
        if not 0 < test_size < 1:
            raise ValueError(f"test_size must be in (0, 1) as a fraction, got {test_size}")
        n_test = math.ceil(float(test_size) * n_docs)
    if not 1 <= n_test <= n_docs - 1:
        raise ValueError(f"test_size={test_size!r} gives {n_test} test documents of {n_docs}; "
                         f"need between 1 and {n_docs - 1}")
    links_ = _check_links(corpus, links)
    perm = as_generator(random_state).permutation(n_docs)
    return _make_fold(corpus, links_, perm[n_test:], perm[:n_test], 0, 1)


def holdout_tensor_entries(tensor: RelationalTensor, fraction: float,
                           random_state: RandomState = None
                           ) -> tuple[RelationalTensor, np.ndarray, np.ndarray]:
    """Hold out a random fraction of all observed entries of an E x E x R tensor.

    Entries are chosen uniformly without replacement among *all* observed cells, ones
    (listed triples) and zeros alike, as in the BPBFM protocol
    (``docs/design/bpbfm.md``); cells already unobserved (``tensor.missing``) are never
    chosen.  Never allocates the dense tensor (Floyd's sampling when the fraction is small).

    Parameters
    ----------
    tensor : RelationalTensor
        With ``E = n_entities``, ``R = n_relations``.
    fraction : float in (0, 1)
        ``m = round(fraction * n_observed)`` entries are held out,
        ``n_observed = E * E * R - len(tensor.missing)``; ``m`` must be >= 1.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    train_tensor : RelationalTensor
        ``tensor.hold_out(heldout_entries)``: the entries are removed and marked missing.
    heldout_entries : ndarray of int64, shape (m, 3)
        Columns ``(head, relation, tail)``, sorted by relation, head, tail.
    heldout_values : ndarray of float64, shape (m,)
        The tensor's value at each entry (0 for cells not listed as triples).
    """
    if not isinstance(tensor, RelationalTensor):
        raise TypeError(f"tensor must be a RelationalTensor, got {type(tensor).__name__}")
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) \
            or not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    E, R = int(tensor.n_entities), int(tensor.n_relations)
    n_cells = E * E * R

    def keys(h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        return (np.asarray(r, np.int64) * E + np.asarray(h, np.int64)) * E \
            + np.asarray(t, np.int64)

    miss = tensor.missing
    missing_keys = np.unique(keys(miss[:, 0], miss[:, 1], miss[:, 2]))
    n_observed = n_cells - missing_keys.size
    m = int(round(float(fraction) * n_observed))
    if m < 1:
        raise ValueError(f"fraction={fraction} of {n_observed} observed entries holds out "
                         f"no entry")
    rng = as_generator(random_state)
    # ranks among the observed cells -> cell keys, skipping the missing ones
    rank = np.sort(rng.choice(n_observed, size=m, replace=False).astype(np.int64))
    shifted = missing_keys - np.arange(missing_keys.size, dtype=np.int64)
    chosen = rank + np.searchsorted(shifted, rank, side="right")
    r, rest = np.divmod(chosen, E * E)
    h, t = np.divmod(rest, E)
    entries = np.column_stack([h, r, t]).astype(np.int64)

    values = np.zeros(m, dtype=np.float64)
    tkeys = keys(tensor.heads, tensor.relations, tensor.tails)
    order = np.argsort(tkeys)
    pos = np.searchsorted(tkeys[order], chosen)
    pos = np.minimum(pos, max(tkeys.size - 1, 0))
    if tkeys.size:
        hit = tkeys[order][pos] == chosen
        values[hit] = tensor.values[order][pos[hit]]
    n_pos = int((values > 0).sum())
    logger.info("held out %d of %d observed tensor entries (%d nonzero, %d zero)",
                m, n_observed, n_pos, m - n_pos)
    return tensor.hold_out(entries), entries, values
