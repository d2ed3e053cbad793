"""Text -> word counts with a vocabulary fitted once and stored as plain JSON.

:class:`TextAnalyzer` lower-cases, tokenises with a regular expression, removes stop words,
optionally stems (Snowball stemmers of the ``snowballstemmer`` package: ``pip install
'topiclink[text]'``), and keeps the terms that pass ``min_df`` / ``max_df`` /
``max_features`` / ``min_count`` on the training texts.  New texts are counted over the
**same** vocabulary; their unknown terms are counted and logged.  The fitted analyser is a
JSON-able dict (:meth:`TextAnalyzer.to_dict`: settings + vocabulary list, no pickle), so a
model file can carry it.  Counting is scikit-learn's ``CountVectorizer`` with this class's
analyser as a callable.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import DataError, check_vocabulary
from topiclink.data.io.text import check_texts

__all__ = ["STEMMERS", "TextAnalyzer", "english_stop_words"]

logger = logging.getLogger(__name__)

#: Words of two or more letters (no digits or underscores).
DEFAULT_TOKEN_PATTERN = r"(?u)\b[^\W\d_]{2,}\b"

#: Stemmer names accepted by ``stemmer=`` (Snowball algorithms of ``snowballstemmer``).
STEMMERS = ("english", "porter")

_FORMAT = "topiclink.TextAnalyzer"
_VERSION = 1


def english_stop_words() -> frozenset[str]:
    """scikit-learn's English stop-word list (318 words), the ``stop_words="english"``."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def _make_stemmer(name: str) -> Callable[[str], str]:
    if name not in STEMMERS:
        raise ValueError(f"unknown stemmer {name!r}; choose one of {', '.join(STEMMERS)}")
    try:
        import snowballstemmer
    except ImportError:
        raise ImportError("stemming needs the snowballstemmer package: "
                          "pip install 'topiclink[text]' (or pip install snowballstemmer)"
                          ) from None
    return snowballstemmer.stemmer(name).stemWord


class TextAnalyzer:
    """Tokenise, drop stop words, stem and count, over a vocabulary fitted on training text.

    Parameters
    ----------
    lowercase : bool
        Lower-case before tokenising.
    token_pattern : str
        Regular expression of a token (default: words of 2+ letters).
    stop_words : "english", sequence of str or None
        Removed before stemming; ``"english"`` is :func:`english_stop_words`.
    stemmer : {"english", "porter"} or None
        Snowball stemmer applied to each remaining token (``"english"`` = Porter2,
        ``"porter"`` = the original Porter algorithm).  Needs ``snowballstemmer``.
    min_df, max_df : int or float
        Keep terms found in at least ``min_df`` and at most ``max_df`` training documents
        (an int is a count, a float in ``[0, 1]`` a proportion), as in ``CountVectorizer``.
    min_count : int
        Keep terms occurring at least ``min_count`` times in all the training texts.
    max_features : int, optional
        Keep only the most frequent terms (after the other filters).

    Attributes
    ----------
    vocabulary_ : ndarray of str
        The fitted terms in sorted order (column order of the counts).
    """

    def __init__(self, *, lowercase: bool = True, token_pattern: str = DEFAULT_TOKEN_PATTERN,
                 stop_words: str | Sequence[str] | None = "english",
                 stemmer: str | None = None, min_df: int | float = 1,
                 max_df: int | float = 1.0, min_count: int = 1,
                 max_features: int | None = None) -> None:
        self.lowercase = lowercase
        self.token_pattern = token_pattern
        self.stop_words = stop_words
        self.stemmer = stemmer
        self.min_df = min_df
        self.max_df = max_df
        self.min_count = min_count
        self.max_features = max_features
        self._check_params()
        self._regex = re.compile(token_pattern)
        self._stop = self._stop_set()
        self._stem = _make_stemmer(stemmer) if stemmer is not None else None
        self._cache: dict[str, str | None] = {}
        self.vocabulary_: np.ndarray | None = None
        #: Terms of the last :meth:`transform` that were not in the vocabulary.
        self.last_unknown_ = 0
        self._n_seen = 0

    # ------------------------------------------------------------------ settings
    def _check_params(self) -> None:
        if self.stemmer is not None and self.stemmer not in STEMMERS:
            raise ValueError(f"unknown stemmer {self.stemmer!r}; choose one of "
                             f"{', '.join(STEMMERS)} or None")
        if isinstance(self.stop_words, str) and self.stop_words != "english":
            raise ValueError(f"stop_words must be 'english', a list of words or None, got "
                             f"{self.stop_words!r}")
        if isinstance(self.min_count, bool) or not isinstance(self.min_count, int) or \
                self.min_count < 1:
            raise ValueError(f"min_count must be an integer >= 1, got {self.min_count!r}")
        try:
            re.compile(self.token_pattern)
        except re.error as exc:
            raise ValueError(f"token_pattern {self.token_pattern!r} is not a regular "
                             f"expression: {exc}") from None

    def _stop_set(self) -> frozenset[str]:
        if self.stop_words is None:
            return frozenset()
        if isinstance(self.stop_words, str):
            return english_stop_words()
        return frozenset(str(w) for w in self.stop_words)

    def get_params(self) -> dict[str, Any]:
        """The settings (JSON-able; a stop-word list comes back as a sorted list)."""
        stop = self.stop_words
        if stop is not None and not isinstance(stop, str):
            stop = sorted(set(map(str, stop)))
        return {"lowercase": bool(self.lowercase), "token_pattern": self.token_pattern,
                "stop_words": stop, "stemmer": self.stemmer, "min_df": self.min_df,
                "max_df": self.max_df, "min_count": self.min_count,
                "max_features": self.max_features}

    def __repr__(self) -> str:
        fitted = (f", {self.vocabulary_.size} terms" if self.vocabulary_ is not None
                  else ", unfitted")
        return f"TextAnalyzer(stemmer={self.stemmer!r}, min_df={self.min_df!r}{fitted})"

    # ------------------------------------------------------------------ analysis
    def _term(self, token: str) -> str | None:
        """The term of a token (None: a stop word), cached."""
        term: str | None
        if token in self._stop:
            term = None
        else:
            term = self._stem(token) if self._stem is not None else token
        self._cache[token] = term
        return term

    def analyze(self, text: str) -> list[str]:
        """The terms of one text, in order (before the vocabulary filter)."""
        if self.lowercase:
            text = text.lower()
        cache = self._cache
        tokens = self._regex.findall(text)
        try:
            terms = [cache[t] for t in tokens]
        except KeyError:
            terms = [cache[t] if t in cache else self._term(t) for t in tokens]
        return [t for t in terms if t is not None]

    def _counting(self, text: str) -> list[str]:
        terms = self.analyze(text)
        self._n_seen += len(terms)
        return terms

    @staticmethod
    def _check_texts(texts: Iterable[str]) -> list[str]:
        return check_texts(texts)

    # ------------------------------------------------------------------ fit / transform
    def fit(self, texts: Iterable[str]) -> TextAnalyzer:
        """Fit the vocabulary on ``texts``; returns self."""
        self.fit_transform(texts)
        return self

    def fit_transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        """Fit the vocabulary and return the counts (n_texts x n_terms, int32 CSR)."""
        from sklearn.feature_extraction.text import CountVectorizer

        docs = self._check_texts(texts)
        vec = CountVectorizer(analyzer=self.analyze, min_df=self.min_df, max_df=self.max_df,
                              max_features=self.max_features, dtype=np.int64)
        try:
            X = vec.fit_transform(docs)
        except ValueError as exc:  # empty vocabulary, or max_df < min_df
            raise DataError(f"cannot build a vocabulary from {len(docs)} texts: {exc}") from None
        vocab = np.asarray(vec.get_feature_names_out(), dtype=str)
        if self.min_count > 1:
            keep = np.flatnonzero(np.asarray(X.sum(axis=0)).ravel() >= self.min_count)
            if keep.size == 0:
                raise DataError(f"cannot build a vocabulary from {len(docs)} texts: no term "
                                f"occurs min_count={self.min_count} times")
            X, vocab = X[:, keep], vocab[keep]
        self.vocabulary_ = vocab
        logger.info("fitted a vocabulary of %d terms on %d texts", vocab.size, len(docs))
        return sp.csr_matrix(X, dtype=np.int32)

    def transform(self, texts: Iterable[str]) -> sp.csr_matrix:
        """Counts of ``texts`` over the fitted vocabulary; unknown terms are counted and
        logged (INFO), not added."""
        from sklearn.feature_extraction.text import CountVectorizer

        if self.vocabulary_ is None:
            raise RuntimeError("this TextAnalyzer is not fitted; call fit() first or load a "
                               "fitted one with TextAnalyzer.from_dict()")
        docs = self._check_texts(texts)
        vec = CountVectorizer(analyzer=self._counting,
                              vocabulary={w: i for i, w in enumerate(self.vocabulary_.tolist())},
                              dtype=np.int64)
        self._n_seen = 0
        X = vec.transform(docs)
        n_known = int(X.sum())
        n_unknown = self._n_seen - n_known
        self.last_unknown_ = n_unknown
        if n_unknown:
            logger.info("%d of %d terms in %d texts are not in the vocabulary of %d terms "
                        "(not counted)", n_unknown, self._n_seen, len(docs),
                        self.vocabulary_.size)
        return sp.csr_matrix(X, dtype=np.int32)

    def check_covers(self, vocabulary: Sequence[str] | np.ndarray, what: str = "model"
                     ) -> None:
        """Check that this fitted analyser can produce every term of ``vocabulary`` (a
        model's ``vocabulary_``); one-line DataError otherwise (an analyser saved with a
        model it did not count the words of)."""
        if self.vocabulary_ is None:
            raise DataError(f"the text analyser of the {what} is not fitted (no vocabulary)")
        terms = np.asarray(vocabulary, dtype=str)
        missing = terms[~np.isin(terms, self.vocabulary_)]
        if missing.size:
            shown = ", ".join(repr(str(t)) for t in missing[:3])
            raise DataError(f"the text analyser's vocabulary of {self.vocabulary_.size} terms "
                            f"lacks {missing.size} of the {what}'s {terms.size} terms (e.g. "
                            f"{shown}); it did not count this {what}'s words")

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict: ``format``, ``version``, ``params`` and ``vocabulary`` (a list
        of terms, or None when unfitted)."""
        return {"format": _FORMAT, "version": _VERSION, "params": self.get_params(),
                "vocabulary": None if self.vocabulary_ is None else self.vocabulary_.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TextAnalyzer:
        """Rebuild an analyser saved with :meth:`to_dict` (same settings, same vocabulary,
        hence identical :meth:`transform`)."""
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise DataError(f"not a saved TextAnalyzer (expected format {_FORMAT!r})")
        if data.get("version") != _VERSION:
            raise DataError(f"saved TextAnalyzer version {data.get('version')!r} is not "
                            f"supported (expected {_VERSION})")
        params = data.get("params")
        if not isinstance(params, dict):
            raise DataError("saved TextAnalyzer: 'params' must be a dict")
        unknown = set(params) - set(cls().get_params())
        if unknown:
            raise DataError(f"saved TextAnalyzer: unknown settings {sorted(unknown)}")
        obj = cls(**params)
        vocab = data.get("vocabulary")
        if vocab is not None:
            obj.vocabulary_ = check_vocabulary(vocab, "saved TextAnalyzer vocabulary")
        return obj
