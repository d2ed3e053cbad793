"""Raw text -> :class:`Corpus` through a scikit-learn vectorizer; the raw 20 Newsgroups tarball.

The vectorizer is **fitted in place** and not stored in the corpus (a :class:`Corpus` holds
arrays only, so it saves and loads without pickling).  To give a test split the vocabulary
of the training split, create the vectorizer yourself and pass it to both calls::

    vec = default_vectorizer(len(train_texts))
    train = corpus_from_texts(train_texts, vectorizer=vec)   # fits vec
    test = corpus_from_texts(test_texts, vectorizer=vec)     # vec is fitted: transform only
"""

from __future__ import annotations

import logging
import os
import re
import tarfile
import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from topiclink.data.checks import DataError, check_memory
from topiclink.data.corpus import Corpus
from topiclink.data.io.rda import check_file

__all__ = ["TOKEN_PATTERN", "check_texts", "corpus_from_newsgroups_tar", "corpus_from_texts",
           "read_tar_member", "read_text_lines", "text_lines",
           "default_vectorizer", "read_newsgroups_tar"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: Words of two or more letters (no digits or underscores).
TOKEN_PATTERN = r"(?u)\b[^\W\d_]{2,}\b"


def default_vectorizer(n_texts: int | None = None, **kwargs: Any) -> Any:
    """The default :class:`sklearn.feature_extraction.text.CountVectorizer`.

    ``stop_words="english"``, ``token_pattern=TOKEN_PATTERN`` (words of 2+ letters),
    ``min_df=2`` when ``n_texts >= 10`` (else 1); ``kwargs`` override any of them.
    """
    from sklearn.feature_extraction.text import CountVectorizer

    params: dict[str, Any] = {
        "stop_words": "english",
        "token_pattern": TOKEN_PATTERN,
        "min_df": 2 if n_texts is not None and n_texts >= 10 else 1,
    }
    params.update(kwargs)
    return CountVectorizer(**params)


def check_texts(texts: Iterable[str]) -> list[str]:
    """``texts`` as a list of strings; TypeError for one string, DataError naming the
    first entry that is not a string."""
    if isinstance(texts, str):
        raise TypeError("texts must be an iterable of strings, not one string")
    docs = list(texts)
    for i, t in enumerate(docs):
        if not isinstance(t, str):
            raise DataError(f"texts[{i}] is {type(t).__name__}, not str")
    return docs


def text_lines(text: str) -> list[str]:
    """The lines of a text file's contents: a line ends at ``"\\n"`` (a ``"\\r"`` before
    it, CRLF, is dropped), the last one also at the end of the text (no empty last entry
    after a final newline).

    Unlike :meth:`str.splitlines`, the other characters Python counts as line boundaries
    (``\\v``, ``\\f``, ``\\x1c``, ``\\x1d``, ``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``)
    do not end a line: they stay inside it (whitespace to the tokenizer), so a document
    per line stays one document.
    """
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    return [row[:-1] if row.endswith("\r") else row for row in rows]


def read_text_lines(path: PathLike) -> list[str]:
    """The lines of a UTF-8 text file (:func:`text_lines`; gzip-compressed accepted, a
    byte order mark dropped), e.g. one document per line.

    The text is never decoded lossily: a file holding a NUL byte or bytes that are not
    UTF-8 (Latin-1, UTF-16...) is refused, naming the file, line and byte offset; convert
    it to UTF-8 first (e.g. ``iconv -f LATIN1 -t UTF-8``).

    Raises
    ------
    DataFileNotFoundError
        The file does not exist (or is a directory).
    DataError
        ``file:line: NUL byte at byte offset N`` or ``file:line: not valid UTF-8 text
        (byte 0xe9 at byte offset N)``.
    """
    from topiclink.data.io.rda import check_text, read_bytes

    p = check_file(path)
    raw = read_bytes(p)
    check_memory(4 * len(raw), f"{p}: {len(raw)} bytes of text")
    check_text(raw, p)
    return text_lines(raw.decode("utf-8").removeprefix("\ufeff"))


def _is_fitted(vectorizer: Any) -> bool:
    return hasattr(vectorizer, "vocabulary_")


def corpus_from_texts(texts: Iterable[str], vectorizer: Any = None,
                      doc_ids: Sequence[object] | None = None,
                      titles: Sequence[str] | None = None,
                      metadata: pd.DataFrame | None = None, name: str = "",
                      **vectorizer_kwargs: Any) -> Corpus:
    """Tokenise and count raw texts into a :class:`Corpus`.

    Parameters
    ----------
    texts : iterable of str
        One document per entry.
    vectorizer : scikit-learn text vectorizer, optional
        Anything with ``fit_transform``/``transform``/``get_feature_names_out`` (e.g.
        ``CountVectorizer``).  Unfitted: fitted in place on ``texts``.  Already fitted:
        only ``transform`` is called, so the corpus gets its vocabulary.  Default:
        :func:`default_vectorizer` with ``vectorizer_kwargs``.
    doc_ids, titles, metadata, name
        Passed to :class:`Corpus` (``metadata`` is re-indexed 0..n-1).
    **vectorizer_kwargs
        Options of the default vectorizer (not allowed with ``vectorizer``).

    Returns
    -------
    Corpus
        Integer counts over ``vectorizer.get_feature_names_out()``.  Documents left
        without any counted word are kept (positions stay aligned) and their number is
        logged; remove them with :meth:`Corpus.drop_empty`.

    Raises
    ------
    DataError
        An entry that is not a string (naming its position).
    """
    docs = check_texts(texts)
    if vectorizer is None:
        vectorizer = default_vectorizer(len(docs), **vectorizer_kwargs)
    elif vectorizer_kwargs:
        raise ValueError(f"vectorizer options {sorted(vectorizer_kwargs)} given with a "
                         f"vectorizer; set them on the vectorizer instead")
    needs = ("transform", "get_feature_names_out") if _is_fitted(vectorizer) else (
        "fit_transform", "get_feature_names_out")
    lacking = [m for m in needs if not callable(getattr(vectorizer, m, None))]
    if isinstance(vectorizer, type):
        raise TypeError(f"vectorizer must be a vectorizer instance, got the class "
                        f"{vectorizer.__name__} (write {vectorizer.__name__}())")
    if lacking:
        raise TypeError(f"vectorizer must be a scikit-learn text vectorizer (with "
                        f"fit_transform, transform and get_feature_names_out, e.g. "
                        f"CountVectorizer), got {type(vectorizer).__name__} (no "
                        f"{lacking[0]})")
    if _is_fitted(vectorizer):
        X = vectorizer.transform(docs)
    else:
        try:
            X = vectorizer.fit_transform(docs)
        except ValueError as exc:  # e.g. "empty vocabulary; perhaps the documents..."
            raise DataError(f"cannot build a vocabulary from {len(docs)} texts: {exc}") from None
    if metadata is not None:
        metadata = metadata.reset_index(drop=True)
    corpus = Corpus(X, vocabulary=np.asarray(vectorizer.get_feature_names_out(), dtype=str),
                    doc_ids=doc_ids, titles=titles, metadata=metadata, name=name)
    n_empty = corpus.empty_documents().size
    if n_empty:
        logger.info("%d of %d texts have no word in the vocabulary (kept as empty documents)",
                    n_empty, corpus.n_docs)
    return corpus


_NEWS_SPLITS = {"train": "20news-bydate-train", "test": "20news-bydate-test"}
_NUM = re.compile(r"\d+")


def read_newsgroups_tar(path: PathLike, splits: Sequence[str] = ("train", "test"),
                        strip_headers: bool = False
                        ) -> tuple[dict[str, pd.DataFrame], np.ndarray]:
    """Read the raw ``20news-bydate.tar.gz`` (Rennie's layout) without extracting it.

    Parameters
    ----------
    path : str or path-like
        The tarball, members ``20news-bydate-<split>/<newsgroup>/<message number>``.
    splits : sequence of {"train", "test"}
    strip_headers : bool
        Drop each message's header block (up to the first blank line).

    Returns
    -------
    frames : dict split -> DataFrame
        Columns ``doc_id`` (``"<newsgroup>/<number>"``), ``group``, ``label`` (position of
        the group in ``label_names``) and ``text`` (Latin-1 decoded), sorted by group
        then message number.
    label_names : ndarray of str
        All newsgroups of the archive in alphabetical order (20 for the full archive).
    """
    p = check_file(path)
    unknown = [s for s in splits if s not in _NEWS_SPLITS]
    if unknown:
        raise ValueError(f"unknown split(s) {unknown}; choose from {sorted(_NEWS_SPLITS)}")
    prefix = {v: k for k, v in _NEWS_SPLITS.items()}
    rows: dict[str, list[tuple[str, str, str]]] = {s: [] for s in splits}
    groups: set[str] = set()
    try:
        with tarfile.open(p, mode="r:*") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                parts = member.name.lstrip("./").split("/")
                if len(parts) != 3 or parts[0] not in prefix:
                    continue
                split, group, msg = prefix[parts[0]], parts[1], parts[2]
                groups.add(group)
                if split not in rows:
                    continue
                check_memory(member.size, f"{p}: member {member.name} ({member.size} bytes)")
                text = read_tar_member(tar, member).decode("latin-1")
                if strip_headers:
                    head, sep, body = text.partition("\n\n")
                    text = body if sep else text
                rows[split].append((f"{group}/{msg}", group, text))
    except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise DataError(f"{p}: not a readable tar archive: {_one_line(exc)}") from None
    if not groups:
        raise DataError(f"{p}: no members named 20news-bydate-train|test/<group>/<number>")
    names = sorted(groups)
    code = {g: i for i, g in enumerate(names)}
    out: dict[str, pd.DataFrame] = {}
    for split, r in rows.items():

        def _key(row: tuple[str, str, str]) -> tuple[str, int, str]:
            msg = row[0].split("/", 1)[1]
            return (row[1], int(msg) if _NUM.fullmatch(msg) else -1, msg)

        r.sort(key=_key)
        df = pd.DataFrame(r, columns=["doc_id", "group", "text"])
        df.insert(2, "label", np.array([code[g] for g in df["group"]], dtype=np.int64))
        out[split] = df
    return out, np.array(names)


def _one_line(exc: BaseException) -> str:
    """The first line of an exception's message (tarfile lists one line per method)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = lines[0].rstrip(":") if lines else type(exc).__name__
    detail = [ln.lstrip("- ") for ln in lines[1:]]
    return text + (f" ({'; '.join(detail)})" if detail else "")


def read_tar_member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    """A member's bytes, read in chunks so that a header declaring a size larger than the
    archive's data fails on the missing data instead of allocating that size."""
    f = tar.extractfile(member)
    if f is None:  # pragma: no cover - regular files always have a file object
        return b""
    chunks: list[bytes] = []
    left = member.size
    while left > 0:
        chunk = f.read(min(left, 1 << 20))
        if not chunk:
            raise tarfile.ReadError(f"member {member.name}: unexpected end of data")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def corpus_from_newsgroups_tar(path: PathLike, split: str = "train", vectorizer: Any = None,
                               strip_headers: bool = False, **vectorizer_kwargs: Any
                               ) -> tuple[Corpus, np.ndarray, np.ndarray]:
    """One split of the raw 20 Newsgroups tarball as a :class:`Corpus` with labels.

    Parameters
    ----------
    path : str or path-like
        ``20news-bydate.tar.gz``.
    split : {"train", "test"}
    vectorizer, **vectorizer_kwargs
        As in :func:`corpus_from_texts` (pass the vectorizer fitted on the train split to
        vectorise the test split with the same vocabulary).
    strip_headers : bool
        Drop the e-mail headers of each message.

    Returns
    -------
    corpus : Corpus
        ``doc_ids`` ``"<newsgroup>/<number>"``, ``metadata`` columns ``group``, ``label``.
    labels : ndarray of int64
        0..19, the position of the newsgroup in ``label_names``.
    label_names : ndarray of str
        The newsgroups in alphabetical order (the order of the R ``lda`` label map).
    """
    frames, names = read_newsgroups_tar(path, splits=(split,), strip_headers=strip_headers)
    df = frames[split]
    corpus = corpus_from_texts(df["text"].tolist(), vectorizer=vectorizer,
                               doc_ids=df["doc_id"].to_numpy(),
                               metadata=df[["group", "label"]], name=f"20newsgroups-{split}",
                               **vectorizer_kwargs)
    return corpus, df["label"].to_numpy(), names

