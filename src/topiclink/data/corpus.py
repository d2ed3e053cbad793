"""The document collection: a CSR document-term count matrix with its vocabulary."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.checks import (
    DataError,
    as_1d,
    check_counts_matrix,
    check_ids,
    check_index,
    check_vocabulary,
)

__all__ = ["Corpus", "TokenArrays", "as_corpus"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TokenArrays:
    """Flat token arrays for the Gibbs kernels, tokens sorted by document.

    Attributes
    ----------
    words : ndarray of int32, shape (n_tokens,)
    docs : ndarray of int32, shape (n_tokens,)
    offsets : ndarray of int64, shape (n_docs + 1,)
        Tokens of document ``d`` are ``words[offsets[d]:offsets[d + 1]]``.
    """

    words: np.ndarray
    docs: np.ndarray
    offsets: np.ndarray


@dataclass(eq=False)
class Corpus:
    """Bag-of-words documents.

    Parameters
    ----------
    counts : sparse matrix, shape (n_docs, n_words)
        Non-negative integer counts; stored as canonical int32 CSR.
    vocabulary : sequence of str, optional
        Word strings (default ``"w0", "w1", ...``).
    doc_ids : sequence, optional
        External document identifiers, unique (default ``0..n_docs-1``).
    titles : sequence of str, optional
    metadata : pandas.DataFrame, optional
        One row per document (time, author, class label, ...).
    """

    counts: sp.csr_matrix
    vocabulary: np.ndarray | None = None
    doc_ids: np.ndarray | None = None
    titles: np.ndarray | None = None
    metadata: pd.DataFrame | None = None
    name: str = ""
    _tokens: TokenArrays | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not sp.issparse(self.counts):
            self.counts = check_counts_matrix(self.counts, name="counts")
        n_docs = self.counts.shape[0]
        if self.doc_ids is None:
            self.doc_ids = np.arange(n_docs)
        else:
            self.doc_ids = check_ids(self.doc_ids, "doc_ids", n_docs)
        self.counts = check_counts_matrix(self.counts, doc_ids=self.doc_ids, name="counts")
        n_words = self.counts.shape[1]
        if self.vocabulary is None:
            self.vocabulary = np.array([f"w{i}" for i in range(n_words)])
        else:
            self.vocabulary = check_vocabulary(self.vocabulary, "vocabulary", n_words)
        if self.titles is not None:
            self.titles = as_1d(self.titles, "titles", n_docs, dtype=str)
        if self.metadata is not None and len(self.metadata) != n_docs:
            raise DataError(f"metadata has {len(self.metadata)} rows for {n_docs} documents")

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_documents(cls, documents: Iterable[tuple[Sequence[int], Sequence[int]]],
                       n_words: int | None = None, **kwargs: object) -> Corpus:
        """Build from ``(word_ids, counts)`` pairs, one per document (R ``lda`` format).

        Word ids are 0-based integer positions (whole floats are accepted); an id that is
        not an integer (a word string: map words to positions with the vocabulary first),
        negative or outside ``[0, n_words)`` raises naming the document.  Counts are
        checked as in the constructor (non-negative integers).
        """
        if n_words is not None and (isinstance(n_words, bool | np.bool_)
                                    or not isinstance(n_words, int | np.integer)
                                    or n_words < 0):
            raise DataError(f"from_documents: n_words must be an integer >= 0, got {n_words!r}")
        if isinstance(documents, str | bytes | dict) or not isinstance(documents, Iterable):
            raise DataError(f"from_documents: expected an iterable of (word_ids, counts) "
                            f"pairs, got {type(documents).__name__}")
        indptr = [0]
        indices: list[np.ndarray] = []
        data: list[np.ndarray] = []
        for d, doc in enumerate(documents):
            try:
                w, c = doc
                w = np.asarray(w)
                c = np.asarray(c)
            except (TypeError, ValueError):
                raise DataError(f"document {d}: expected a (word_ids, counts) pair, got "
                                f"{type(doc).__name__}") from None
            if w.ndim != 1 or w.shape != c.shape:
                raise DataError(f"document {d}: {w.size} word ids but {c.size} counts "
                                f"(shapes {w.shape} and {c.shape})")
            w = _word_positions(w, d)
            if c.size and c.dtype.kind not in "biuf":
                raise DataError(f"document {d}: counts must be numbers, got "
                                f"{_plain(c.ravel()[0])!r} "
                                f"(dtype {c.dtype})")
            if w.size and (w.min() < 0 or (n_words is not None and w.max() >= n_words)):
                bad = w[(w < 0) | ((w >= n_words) if n_words is not None else False)][0]
                bound = f"[0, {n_words})" if n_words is not None else "(ids start at 0)"
                raise DataError(f"document {d}: word id {bad} outside the vocabulary {bound}")
            indices.append(w)
            data.append(c.astype(np.float64) if c.dtype.kind == "b" else c)
            indptr.append(indptr[-1] + w.size)
        vocab = kwargs.get("vocabulary")
        if n_words is None and vocab is not None and not isinstance(vocab, str | bytes):
            n_words = check_vocabulary(vocab).size
            top = max((int(i.max()) for i in indices if i.size), default=-1)
            if top >= n_words:
                raise DataError(f"from_documents: word id {top} outside the vocabulary "
                                f"[0, {n_words})")
        if n_words is None:
            n_words = int(max((i.max() for i in indices if i.size), default=-1)) + 1
        M = sp.csr_matrix(
            (np.concatenate(data) if data else np.zeros(0),
             np.concatenate(indices) if indices else np.zeros(0, np.int64),
             np.asarray(indptr)),
            shape=(len(indptr) - 1, n_words),
        )
        return cls(M, **kwargs)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ properties
    @property
    def n_docs(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_words(self) -> int:
        """Vocabulary size V."""
        return int(self.counts.shape[1])

    @property
    def doc_lengths(self) -> np.ndarray:
        """Tokens per document, int64 array of shape (n_docs,)."""
        return np.asarray(self.counts.sum(axis=1)).ravel().astype(np.int64)

    @property
    def n_tokens(self) -> int:
        return int(self.counts.data.sum(dtype=np.int64))

    def __len__(self) -> int:
        return self.n_docs

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name else ""
        return (f"Corpus({label}{self.n_docs} documents, {self.n_words} words, "
                f"{self.n_tokens} tokens)")

    def tokens(self) -> TokenArrays:
        """Flat token arrays sorted by document (cached)."""
        if self._tokens is None:
            M = self.counts
            words = np.repeat(M.indices, M.data).astype(np.int32)
            lengths = self.doc_lengths
            docs = np.repeat(np.arange(self.n_docs, dtype=np.int32), lengths)
            offsets = np.zeros(self.n_docs + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            self._tokens = TokenArrays(words, docs, offsets)
        return self._tokens

    # ------------------------------------------------------------------ selection
    def subset(self, index: Sequence[int] | np.ndarray) -> Corpus:
        """The documents at positions ``index`` (same vocabulary), in that order.

        ``index`` is a 1-D array of positions in ``[0, n_docs)`` or a boolean mask of
        length ``n_docs``; anything else raises a one-line :class:`DataError`.
        """
        idx = check_index(index, self.n_docs, name="subset")
        return Corpus(
            self.counts[idx],
            vocabulary=self.vocabulary,
            doc_ids=self.doc_ids[idx],
            titles=None if self.titles is None else self.titles[idx],
            metadata=None if self.metadata is None
            else self.metadata.iloc[idx].reset_index(drop=True),
            name=self.name,
        )

    def append(self, other: Corpus) -> Corpus:
        """This corpus's documents followed by ``other``'s (same number of words; the
        vocabulary, name and metadata columns are this corpus's).  Ids that would clash
        (e.g. both default ``0..n-1``) become positions in the result for ``other``."""
        if other.n_words != self.n_words:
            raise DataError(f"append: the corpora have {self.n_words} and {other.n_words} "
                            "words")
        D0 = self.n_docs
        new_ids = other.doc_ids
        if self.doc_ids.dtype.kind != new_ids.dtype.kind or np.intersect1d(
                self.doc_ids, new_ids).size:
            new_ids = np.arange(D0, D0 + other.n_docs)
            ids = (np.arange(D0 + other.n_docs) if self.doc_ids.dtype.kind in "iu"
                   else np.concatenate([self.doc_ids.astype(str), new_ids.astype(str)]))
            if self.doc_ids.dtype.kind in "iu":
                ids[:D0] = self.doc_ids
        else:
            ids = np.concatenate([self.doc_ids, new_ids])
        titles = None
        if self.titles is not None or other.titles is not None:
            titles = np.concatenate([
                self.titles if self.titles is not None else np.full(D0, "", dtype=object),
                other.titles if other.titles is not None
                else np.full(other.n_docs, "", dtype=object)]).astype(str)
        metadata = None
        if self.metadata is not None and other.metadata is not None:
            metadata = pd.concat([self.metadata, other.metadata], ignore_index=True)
        return Corpus(sp.vstack([self.counts, other.counts], format="csr"),
                      vocabulary=self.vocabulary, doc_ids=ids, titles=titles,
                      metadata=metadata, name=self.name)

    def empty_documents(self) -> np.ndarray:
        """Positions of documents with no tokens."""
        return np.flatnonzero(self.doc_lengths == 0)

    def check_has_documents(self, what: str = "corpus") -> None:
        """Raise a one-line :class:`DataError` when there is nothing to learn from.

        ``"<what>: the corpus has no documents"`` (0 rows), ``"... has no words"`` (0
        columns) or ``"... has no tokens"`` (every document empty).  Estimators call it
        (through :meth:`check_no_empty`) before any work.
        """
        if self.n_docs == 0:
            raise DataError(f"{what}: the corpus has no documents")
        if self.n_words == 0:
            raise DataError(f"{what}: the corpus has no words (its vocabulary is empty)")
        if self.counts.nnz == 0:
            raise DataError(f"{what}: the corpus has no tokens (all {self.n_docs} documents "
                            f"are empty)")

    def check_no_empty(self, what: str = "corpus") -> None:
        """Raise naming the first empty document (models cannot learn from it); first
        :meth:`check_has_documents` (a corpus without documents is refused too)."""
        self.check_has_documents(what)
        empty = self.empty_documents()
        if empty.size:
            d = int(empty[0])
            raise DataError(
                f"{what}: document {d} (id {_plain(self.doc_ids[d])!r}) is empty "
                f"({empty.size} empty documents in all); drop them with Corpus.drop_empty()"
            )

    def drop_empty(self) -> tuple[Corpus, np.ndarray]:
        """Remove empty documents; returns the new corpus and the kept positions.

        The number dropped is logged; pass the kept positions to
        :meth:`topiclink.data.links.Links.subgraph` to keep links consistent.
        """
        keep = np.flatnonzero(self.doc_lengths > 0)
        n_drop = self.n_docs - keep.size
        if n_drop:
            logger.info("dropped %d empty documents of %d", n_drop, self.n_docs)
        return self.subset(keep), keep

    def with_vocabulary(self, vocabulary: np.ndarray) -> tuple[Corpus, int]:
        """Re-express the counts over another vocabulary (e.g. a fitted model's).

        Words absent from ``vocabulary`` are dropped; returns the new corpus and the
        number of tokens dropped (log it).
        """
        vocabulary = check_vocabulary(vocabulary, "with_vocabulary")
        if self.vocabulary.shape == vocabulary.shape and np.array_equal(self.vocabulary,
                                                                        vocabulary):
            return self, 0
        lookup = {w: i for i, w in enumerate(vocabulary.tolist())}
        col = np.array([lookup.get(w, -1) for w in self.vocabulary.tolist()], dtype=np.int64)
        M = self.counts.tocoo()
        keep = col[M.col] >= 0
        dropped = int(M.data[~keep].sum())
        new = sp.csr_matrix((M.data[keep], (M.row[keep], col[M.col[keep]])),
                            shape=(self.n_docs, vocabulary.size))
        return Corpus(new, vocabulary=vocabulary, doc_ids=self.doc_ids, titles=self.titles,
                      metadata=self.metadata, name=self.name), dropped

    def word_index(self, words: Iterable[str]) -> np.ndarray:
        """Vocabulary positions of ``words``; an unknown word raises naming it."""
        lookup = {w: i for i, w in enumerate(self.vocabulary)}
        out = []
        for w in words:
            if w not in lookup:
                raise DataError(f"word {w!r} is not in the vocabulary")
            out.append(lookup[w])
        return np.asarray(out, dtype=np.int64)

    def doc_index(self, ids: Iterable[object]) -> np.ndarray:
        """Positions of documents with external ids ``ids``; unknown ids raise."""
        lookup = {v: i for i, v in enumerate(self.doc_ids.tolist())}
        out = []
        for k, v in enumerate(ids):
            if v not in lookup:
                raise DataError(f"entry {k}: document id {v!r} is not in the corpus")
            out.append(lookup[v])
        return np.asarray(out, dtype=np.int64)


def _word_positions(w: np.ndarray, d: int) -> np.ndarray:
    """The word ids of document ``d`` as int64 (one-line DataError for strings, NaN or
    fractions)."""
    if w.size == 0:
        return w.astype(np.int64)
    if w.dtype.kind == "f":
        bad = ~np.isfinite(w) | (w != np.round(w))
        if bad.any():
            raise DataError(f"document {d}: word id {_plain(w[_first(bad)])!r} is not an integer "
                            f"position")
    elif w.dtype.kind not in "iu":
        raise DataError(f"document {d}: word ids must be integer positions, got "
                        f"{_plain(w.ravel()[0])!r} ({w.dtype}); map words to their positions in "
                        f"the vocabulary first (Corpus.word_index)")
    return w.astype(np.int64)


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _plain(value: object) -> object:
    """A NumPy scalar as the Python value (for messages: ``'a'``, not ``np.str_('a')``)."""
    return value.item() if isinstance(value, np.generic) else value


def as_corpus(X: object, name: str = "X") -> Corpus:
    """Accept a :class:`Corpus`, a SciPy sparse matrix, a dense array or a DataFrame."""
    if isinstance(X, Corpus):
        return X
    if isinstance(X, pd.DataFrame):
        return Corpus(check_counts_matrix(X.to_numpy(), name=name),
                      vocabulary=X.columns.to_numpy(), doc_ids=X.index.to_numpy())
    if sp.issparse(X) or isinstance(X, np.ndarray):
        return Corpus(check_counts_matrix(X, name=name))
    if isinstance(X, list | tuple):
        return Corpus(check_counts_matrix(X, name=name))
    raise TypeError(
        f"{name} must be a Corpus, a scipy.sparse matrix, a numpy array or a pandas DataFrame, "
        f"got {type(X).__name__}"
    )
