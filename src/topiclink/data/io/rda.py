"""R save files (``.rda`` / ``.RData``) and the R ``lda`` package's document format.

R save files are read with the PyPI package `rdata <https://rdata.readthedocs.io>`_
(``rdata.read_rda(path)`` returns a ``dict`` from object name to a Python value: numeric and
character vectors become NumPy arrays, lists become ``list`` (or ``dict`` when named), data
frames become :class:`pandas.DataFrame`, matrices with dimnames become
:class:`xarray.DataArray`).

This module also holds :class:`DataFileNotFoundError` and :func:`check_file`, which every
reader of :mod:`topiclink.data.io` uses for a missing input file.
"""

from __future__ import annotations

import bz2
import gzip
import logging
import lzma
import os
import struct
import warnings
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import DataError
from topiclink.data.corpus import Corpus

__all__ = ["DataFileNotFoundError", "check_file", "check_text", "lda_link_pairs", "read_bytes",
           "read_lda_documents", "read_rda_object"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


class DataFileNotFoundError(DataError, FileNotFoundError):
    """An input data file does not exist.

    Both a :class:`~topiclink.data.checks.DataError` and a :class:`FileNotFoundError`, so
    either ``except`` clause catches it.
    """


def check_file(path: PathLike) -> Path:
    """Return ``path`` as a :class:`~pathlib.Path`; raise if it is not an existing file.

    Raises
    ------
    DataFileNotFoundError
        One line naming the path.
    """
    p = Path(path).expanduser()
    if not p.is_file():
        what = "is a directory, not a file" if p.is_dir() else "no such file"
        raise DataFileNotFoundError(f"{p}: {what}")
    return p


def read_bytes(path: PathLike) -> bytes:
    """The bytes of an existing file, gzip-decompressed when it starts with the gzip magic.

    Raises
    ------
    DataFileNotFoundError
        The file does not exist.
    DataError
        A corrupt gzip stream.
    """
    p = check_file(path)
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataError(f"{p}: corrupt gzip data: {exc}") from None
    return raw


def check_text(raw: bytes, path: PathLike) -> None:
    """Refuse bytes that are not UTF-8 text, or that hold a NUL byte (a binary file), with a
    one-line :class:`DataError` naming ``path`` and the line."""
    nul = raw.find(b"\x00")
    if nul >= 0:
        line = raw[:nul].count(b"\n") + 1
        raise DataError(f"{path}:{line}: NUL byte at byte offset {nul} (a binary file, or "
                        "not text)")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: not valid UTF-8 text (byte "
                        f"0x{raw[exc.start]:02x} at byte offset {exc.start})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


# ---------------------------------------------------------------------- fast XDR path
# ``rdata`` parses every R object in Python (about 150 us per object: 2 s for the 11,269
# small matrices of 20 Newsgroups).  The reader below handles only what the R ``lda`` and
# ``sotu`` data files use (integer/double/character vectors, unnamed or named lists,
# ``dim``/``names`` attributes, XDR format 2 or 3) and gives up (returns None) on anything
# else, so that ``rdata`` reads those files.

_NILVALUE, _REFSXP, _ALTREP = 254, 255, 238
_SYMSXP, _LISTSXP, _CHARSXP = 1, 2, 9
_LGLSXP, _INTSXP, _REALSXP, _STRSXP, _VECSXP = 10, 13, 14, 16, 19
_NA_INT = -(2 ** 31)
_BIG_STRINGS = 16 * 2 ** 20  # bytes


class _Unsupported(Exception):
    """A feature the fast reader does not handle (fall back to rdata)."""


class _XDRReader:
    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0
        self.refs: list[str] = []

    def int(self) -> int:
        (v,) = struct.unpack_from(">i", self.buf, self.pos)
        self.pos += 4
        return v

    def length(self) -> int:
        n = self.int()
        if n == -1:
            hi, lo = self.int(), self.int()
            n = (hi << 32) + lo
        if n < 0:
            raise _Unsupported("bad length")
        return n

    def array(self, dtype: str, n: int) -> np.ndarray:
        size = np.dtype(dtype).itemsize * n
        if self.pos + size > len(self.buf):
            raise _Unsupported("truncated")
        a = np.frombuffer(self.buf, dtype=dtype, count=n, offset=self.pos)
        self.pos += size
        return a

    def charsxp(self, flags: int) -> str:
        n = self.int()
        if n == -1:
            raise _Unsupported("NA string")
        raw = self.buf[self.pos:self.pos + n]
        self.pos += n
        levels = flags >> 12
        return raw.decode("latin-1" if levels & 4 else "utf-8")

    def item(self) -> Any:
        flags = self.int()
        kind = flags & 0xFF
        has_attr = bool(flags & (1 << 9))
        has_tag = bool(flags & (1 << 10))
        if kind == _NILVALUE:
            return None
        if kind == _REFSXP:
            idx = flags >> 8
            if idx == 0:
                idx = self.int()
            if not 1 <= idx <= len(self.refs):
                raise _Unsupported("bad reference")
            return _Symbol(self.refs[idx - 1])
        if kind == _SYMSXP:
            flags2 = self.int()
            if flags2 & 0xFF != _CHARSXP:
                raise _Unsupported("symbol without name")
            name = self.charsxp(flags2)
            self.refs.append(name)
            return _Symbol(name)
        if kind == _LISTSXP:
            out: dict[str, Any] = {}
            while True:
                if has_attr:
                    raise _Unsupported("pairlist attributes")
                tag = self.item() if has_tag else None
                if not isinstance(tag, _Symbol):
                    raise _Unsupported("untagged pairlist")
                out[tag.name] = self.item()
                flags = self.int()
                if flags & 0xFF == _NILVALUE:
                    return _Pairlist(out)
                if flags & 0xFF != _LISTSXP:
                    raise _Unsupported("improper pairlist")
                has_attr = bool(flags & (1 << 9))
                has_tag = bool(flags & (1 << 10))
        if kind == _CHARSXP:
            return self.charsxp(flags)
        if kind in (_INTSXP, _LGLSXP):
            value: Any = self.array(">i4", self.length())
            if (value == _NA_INT).any():
                raise _Unsupported("NA integer")
            value = value.astype(np.int32) if kind == _INTSXP else value != 0
        elif kind == _REALSXP:
            value = self.array(">f8", self.length()).astype(np.float64)
        elif kind == _STRSXP:
            n = self.length()
            strings = []
            for _ in range(n):
                f = self.int()
                if f & 0xFF != _CHARSXP:
                    raise _Unsupported("non-CHARSXP in character vector")
                strings.append(self.charsxp(f))
            value = _string_array(strings)
        elif kind == _VECSXP:
            value = [self.item() for _ in range(self.length())]
        else:
            raise _Unsupported(f"SEXP type {kind}")
        if has_attr:
            attrs = self.item()
            if not isinstance(attrs, _Pairlist) or set(attrs.items) - {"dim", "names"}:
                raise _Unsupported("attributes other than dim/names")
            dim = attrs.items.get("dim")
            names = attrs.items.get("names")
            if dim is not None:
                if not isinstance(value, np.ndarray) or names is not None:
                    raise _Unsupported("dim on a list")
                value = value.reshape(tuple(int(d) for d in dim), order="F")
            if names is not None:
                if not isinstance(value, list) or len(names) != len(value):
                    raise _Unsupported("names on a vector")
                value = dict(zip(names.tolist(), value, strict=True))
        return value


def _string_array(strings: list[str]) -> np.ndarray:
    """Fixed-width ``str`` array, or ``object`` when that would be large and mostly padding."""
    if not strings:
        return np.zeros(0, dtype="<U1")
    fixed = len(strings) * max(map(len, strings))
    if fixed * 4 > _BIG_STRINGS and fixed > 4 * sum(map(len, strings)):
        out = np.empty(len(strings), dtype=object)
        out[:] = strings
        return out
    return np.array(strings, dtype=str)


class _Symbol:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class _Pairlist:
    __slots__ = ("items",)

    def __init__(self, items: dict[str, Any]) -> None:
        self.items = items


def _decompress(raw: bytes) -> bytes:
    if raw[:2] == b"\x1f\x8b":
        return gzip.decompress(raw)
    if raw[:3] == b"BZh":
        return bz2.decompress(raw)
    if raw[:6] == b"\xfd7zXZ\x00":
        return lzma.decompress(raw)
    return raw


def _fast_read_rda(path: Path) -> dict[str, Any] | None:
    """Objects of an R save file, or None when the file uses an unsupported feature."""
    try:
        buf = _decompress(path.read_bytes())
        if buf[:7] not in (b"RDX2\nX\n", b"RDX3\nX\n"):
            return None
        r = _XDRReader(buf)
        r.pos = 7
        version = r.int()
        r.int()  # writer's R version
        r.int()  # minimal reader version
        if version == 3:
            n_enc = r.int()
            r.pos += n_enc  # skip the native encoding name
        elif version != 2:
            return None
        top = r.item()
        if not isinstance(top, _Pairlist) or r.pos != len(buf):
            return None
        if any(isinstance(v, _Symbol | _Pairlist) for v in top.items.values()):
            return None
        return top.items
    except (_Unsupported, struct.error, ValueError, OSError, EOFError, lzma.LZMAError,
            zlib.error, MemoryError, OverflowError, IndexError):
        return None


def read_rda_object(path: PathLike, name: str | None = None) -> Any:
    """Read one object from an R save file.

    Parameters
    ----------
    path : str or path-like
        An ``.rda`` / ``.RData`` file (gzip, bzip2, xz or uncompressed).
    name : str, optional
        The object to return.  Default: the only object in the file (an error if the
        file holds several).

    Returns
    -------
    object
        The object as converted by ``rdata`` (see the module docstring).  Files holding
        only integer/double/character vectors and lists (the R ``lda`` data) are read by a
        faster built-in XDR reader giving the same values, except that a character vector
        whose fixed-width ``str`` array would take over 16 MB and 4x its text size (long
        texts of varied lengths) comes back as an ``object`` array of ``str``.

    Raises
    ------
    DataFileNotFoundError
        The file does not exist.
    DataError
        The file is not an R save file, or it has no object ``name``.
    """
    p = check_file(path)
    objects = _fast_read_rda(p)
    if objects is None:
        objects = _read_with_rdata(p)
    if not isinstance(objects, dict) or not objects:
        raise DataError(f"{p}: the R save file holds no objects")
    if name is None:
        if len(objects) != 1:
            raise DataError(f"{p}: the file holds {len(objects)} objects "
                            f"({', '.join(map(str, objects))}); pass name=")
        return next(iter(objects.values()))
    if name not in objects:
        raise DataError(f"{p}: no object named {name!r} (objects: "
                        f"{', '.join(map(str, objects))})")
    return objects[name]


def _read_with_rdata(p: Path) -> dict[str, Any]:
    import rdata  # lazy: slow to import (pulls in xarray)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return rdata.read_rda(p)
        except Exception as exc:  # noqa: BLE001 - rdata raises many types for bad input
            raise DataError(f"{p}: not a readable R save file (.rda/.RData): "
                            f"{_first_line(exc)}") from None


def read_lda_documents(obj: Sequence[Any], n_words: int | None = None,
                       vocabulary: Sequence[str] | np.ndarray | None = None,
                       what: str = "documents", **corpus_kwargs: Any) -> Corpus:
    """Build a :class:`Corpus` from documents in the R ``lda`` package format.

    Parameters
    ----------
    obj : list of array-like, each of shape (2, N_i)
        Document ``i`` is a 2 x N_i integer matrix: row 0 holds 0-based word indices,
        row 1 the counts of those words (``lda::lexicalize`` output).
    n_words : int, optional
        Vocabulary size V; default ``len(vocabulary)``, else 1 + the largest word index.
    vocabulary : sequence of str, optional
        Word strings, length V.
    what : str
        Name used in error messages (e.g. the file name).
    **corpus_kwargs
        Passed to :class:`Corpus` (``doc_ids``, ``titles``, ``metadata``, ``name``).

    Returns
    -------
    Corpus
        ``n_docs = len(obj)`` documents in the input order.  Empty documents are kept (so
        that positions stay aligned with labels and links) and their number is logged.

    Raises
    ------
    DataError
        A document that is not a 2 x N numeric matrix, a non-integer value, or a word
        index outside ``[0, n_words)``; the message names the document index.
    """
    if isinstance(obj, dict):
        obj = list(obj.values())
    if not isinstance(obj, list | tuple):
        raise DataError(f"{what}: expected a list of 2 x N integer matrices (R lda format), "
                        f"got {type(obj).__name__}")
    if vocabulary is not None:
        vocabulary = np.asarray(vocabulary, dtype=str)
        if n_words is None:
            n_words = int(vocabulary.size)
        elif n_words != vocabulary.size:
            raise DataError(f"{what}: n_words={n_words} but the vocabulary has "
                            f"{vocabulary.size} words")
    words: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    lengths = np.zeros(len(obj), dtype=np.int64)
    for d, m in enumerate(obj):
        a = np.asarray(m)
        if a.size == 0:
            a = a.reshape(2, 0)
        if a.ndim != 2 or a.shape[0] != 2:
            raise DataError(f"{what}: document {d} has shape {a.shape}; expected a 2 x N "
                            f"matrix (row 0 word indices, row 1 counts)")
        if a.dtype.kind not in "iuf":
            raise DataError(f"{what}: document {d} has non-numeric dtype {a.dtype}")
        words.append(a[0])
        counts.append(a[1])
        lengths[d] = a.shape[1]
    indptr = np.zeros(len(obj) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    w = np.concatenate(words) if words else np.zeros(0)
    c = np.concatenate(counts) if counts else np.zeros(0)

    def _doc(pos: int) -> int:
        return int(np.searchsorted(indptr, pos, side="right") - 1)

    if w.dtype.kind == "f":
        bad = ~np.isfinite(w) | (w != np.round(w))
        if bad.any():
            p = int(np.flatnonzero(bad)[0])
            raise DataError(f"{what}: document {_doc(p)}: word index {w[p]} is not an integer")
    w = w.astype(np.int64)
    if n_words is None:
        n_words = int(w.max()) + 1 if w.size else 0
    bad = (w < 0) | (w >= n_words)
    if bad.any():
        p = int(np.flatnonzero(bad)[0])
        raise DataError(f"{what}: document {_doc(p)}: word index {w[p]} outside the "
                        f"vocabulary [0, {n_words})")
    M = sp.csr_matrix((c, w, indptr), shape=(len(obj), n_words))
    try:
        corpus = Corpus(M, vocabulary=vocabulary, **corpus_kwargs)
    except DataError as exc:
        raise DataError(f"{what}: {exc}") from None
    n_empty = corpus.empty_documents().size
    if n_empty:
        logger.info("%s: %d empty documents of %d (kept)", what, n_empty, corpus.n_docs)
    return corpus


def lda_link_pairs(obj: Sequence[Any], n_docs: int | None = None,
                   what: str = "links") -> np.ndarray:
    """Pairs ``(i, j)`` from links in the R ``lda`` package format.

    Parameters
    ----------
    obj : list of int vectors
        ``obj[i]`` holds the 0-based indices of the documents linked from document ``i``
        (``cora.cites`` of the ``lda`` package).
    n_docs : int, optional
        Number of documents; default ``len(obj)``.
    what : str
        Name used in error messages.

    Returns
    -------
    ndarray of int64, shape (n_links, 2)
        ``(i, j)`` in input order (i ascending, then the order of ``obj[i]``); self-links
        and repeats are kept (build :class:`~topiclink.data.links.Links` with
        ``Links.from_pairs`` to apply a policy).

    Raises
    ------
    DataError
        A non-integer entry or an index outside ``[0, n_docs)``, naming the document.
    """
    if isinstance(obj, dict):
        obj = list(obj.values())
    if not isinstance(obj, list | tuple):
        raise DataError(f"{what}: expected a list of integer vectors (R lda format), "
                        f"got {type(obj).__name__}")
    n = len(obj) if n_docs is None else int(n_docs)
    if len(obj) > n:
        raise DataError(f"{what}: {len(obj)} link lists for {n} documents")
    src: list[np.ndarray] = []
    dst: list[np.ndarray] = []
    for i, v in enumerate(obj):
        a = np.asarray(v).ravel()
        if a.size == 0:
            continue
        if a.dtype.kind not in "iuf" or (a.dtype.kind == "f" and
                                         not (np.isfinite(a) & (a == np.round(a))).all()):
            raise DataError(f"{what}: document {i}: link targets must be integers, "
                            f"got {a[:5].tolist()}")
        a = a.astype(np.int64)
        bad = (a < 0) | (a >= n)
        if bad.any():
            raise DataError(f"{what}: document {i} links to document {a[bad][0]}, "
                            f"outside [0, {n})")
        src.append(np.full(a.size, i, dtype=np.int64))
        dst.append(a)
    if not src:
        return np.zeros((0, 2), dtype=np.int64)
    return np.column_stack([np.concatenate(src), np.concatenate(dst)])
