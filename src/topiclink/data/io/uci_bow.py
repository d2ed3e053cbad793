"""The UCI "Bag of Words" format (KOS, NIPS, Enron, NYTimes, PubMed at the UCI repository).

``docword.<name>.txt[.gz]``: three header lines ``D``, ``W``, ``NNZ``, then ``NNZ`` lines
``docID wordID count`` (1-based ids, whitespace-separated).  ``vocab.<name>.txt``: one word
per line; line ``w`` is word id ``w``.
"""

from __future__ import annotations

import gzip
import io
import logging
import os
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.checks import DataError, check_memory, check_vocabulary, where
from topiclink.data.corpus import Corpus
from topiclink.data.io.rda import check_file, check_text, read_bytes

__all__ = ["read_uci_bow", "is_gzip", "numbered_lines", "read_header", "read_vocab",
           "check_sizes"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _open_text(path: Path) -> io.TextIOBase:
    if _is_gzip(path):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")  # noqa: SIM115


def _numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    with _open_text(path) as f:
        yield from enumerate(f, start=1)


def _read_header(path: Path) -> tuple[int, int, int]:
    values: list[int] = []
    names = ("D (number of documents)", "W (vocabulary size)", "NNZ (number of entries)")
    for k, line in _numbered_lines(path):
        text = line.removeprefix("\ufeff").strip() if k == 1 else line.strip()
        try:
            v = int(text)
        except ValueError:
            raise DataError(f"{where(path, k)}: header line {k} must be the integer "
                            f"{names[k - 1]}, found {text[:40]!r}") from None
        if v < 0:
            raise DataError(f"{where(path, k)}: {names[k - 1]} must be >= 0, found {v}")
        values.append(v)
        if k == 3:
            break
    if len(values) < 3:
        raise DataError(f"{path}: the file ends inside the 3-line header (D, W, NNZ)")
    return values[0], values[1], values[2]


def _scan_body(path: Path, D: int, W: int) -> None:
    """Slow line-by-line validation that raises at the first bad line."""
    seen: dict[tuple[int, int], int] = {}
    for k, line in _numbered_lines(path):
        if k <= 3 or not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3:
            raise DataError(f"{where(path, k)}: expected 3 numbers (doc word count), "
                            f"found {len(parts)}")
        try:
            d, w, c = (int(x) for x in parts)
        except ValueError:
            raise DataError(f"{where(path, k)}: non-integer value in {line.strip()[:60]!r}"
                            ) from None
        if not 1 <= d <= D:
            raise DataError(f"{where(path, k)}: docID {d} outside [1, {D}]")
        if not 1 <= w <= W:
            raise DataError(f"{where(path, k)}: wordID {w} outside [1, {W}]")
        if c <= 0:
            raise DataError(f"{where(path, k)}: count {c} must be a positive integer")
        if (d, w) in seen:
            raise DataError(f"{where(path, k)}: repeats (docID {d}, wordID {w}) of line "
                            f"{seen[(d, w)]}")
        seen[(d, w)] = k


def read_uci_bow(docword_path: PathLike, vocab_path: PathLike | None = None,
                 name: str | None = None) -> Corpus:
    """Read a UCI bag-of-words data set.

    Parameters
    ----------
    docword_path : str or path-like
        ``docword.<name>.txt`` or its gzip-compressed version (detected from the content).
    vocab_path : str or path-like, optional
        ``vocab.<name>.txt`` with exactly W lines.  Default: words named ``"w0"``...
    name : str, optional
        Corpus name (default: ``<name>`` taken from ``docword.<name>.txt``).

    Returns
    -------
    Corpus
        ``D x W`` int32 counts; ``doc_ids`` are the 1-based UCI docIDs ``1..D``.  Documents
        without any entry are kept and their number is logged.

    Raises
    ------
    DataError
        ``file:line`` of a bad header value, a line without exactly three integers, an id
        out of range, a non-positive count, a repeated (docID, wordID), a vocabulary file
        without exactly W words or with a repeated word (naming both lines; checked
        before the body is read) or not UTF-8; NNZ not
        matching the number of entry lines (the header must be exact: no entry is
        skipped); no entry at all ("no non-empty documents"); or header sizes D, W that
        exceed 2**31 - 1 or the memory available (checked before anything is allocated).
    """
    p = check_file(docword_path)
    try:
        return _read_uci_bow(p, vocab_path, name)
    except (OSError, EOFError, zlib.error) as exc:  # corrupt gzip stream
        if isinstance(exc, FileNotFoundError):
            raise
        raise DataError(f"{p}: cannot read: {exc}") from None


#: Largest D or W: CSR indices are int32.
_MAX_SIZE = 2 ** 31 - 1
#: Bytes per document of the arrays built for it (CSR indptr, doc ids, lengths, tokens index).
_BYTES_PER_DOC = 40


def _check_sizes(p: Path, D: int, W: int, default_vocab: bool) -> None:
    """Refuse header sizes the machine cannot hold, before allocating anything."""
    for k, label, v in ((1, "D", D), (2, "W", W)):
        if v > _MAX_SIZE:
            raise DataError(f"{where(p, k)}: {label} = {v} exceeds the largest supported "
                            f"size {_MAX_SIZE}")
    # default vocabulary "w0".."w<W-1>": a fixed-width str array, 4 bytes per character
    per_word = 8 + (4 * (len(str(max(W - 1, 0))) + 1) if default_vocab else 0)
    check_memory(W * per_word, f"{where(p, 2)}: W = {W} words")
    check_memory(D * _BYTES_PER_DOC, f"{where(p, 1)}: D = {D} documents")
    check_memory(W * per_word + D * _BYTES_PER_DOC, f"{p}: D = {D} and W = {W}")


def _read_vocab(vp: Path) -> list[str]:
    raw = read_bytes(vp)
    check_text(raw, vp)
    words = [line.rstrip("\r") for line in raw.decode("utf-8").removeprefix("\ufeff")
             .split("\n")]
    while words and not words[-1].strip():
        words.pop()
    for k, wd in enumerate(words, start=1):
        if not wd.strip():
            raise DataError(f"{where(vp, k)}: empty word")
    check_vocabulary([wd.strip() for wd in words], str(vp), path=vp,
                     lines=range(1, len(words) + 1))
    return words


def _read_body(p: Path, D: int, W: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    try:
        df = pd.read_csv(p, sep=r"\s+", header=None, skiprows=3, dtype=np.int64, engine="c",
                         compression="gzip" if _is_gzip(p) else None)
    except pd.errors.EmptyDataError:
        return (np.zeros(0, np.int64),) * 3  # type: ignore[return-value]
    except (ValueError, OverflowError, pd.errors.ParserError):
        _scan_body(p, D, W)
        raise DataError(f"{p}: malformed body (lines after the 3-line header must be "
                        f"'doc word count')") from None
    if df.shape[1] != 3:
        _scan_body(p, D, W)
        raise DataError(f"{p}: expected 3 numbers (doc word count) per line, found "
                        f"{df.shape[1]}")  # pragma: no cover - _scan_body names the line
    d, w, c = (df[k].to_numpy() for k in df.columns)
    return d, w, c


def _read_uci_bow(p: Path, vocab_path: PathLike | None, name: str | None) -> Corpus:
    D, W, NNZ = _read_header(p)
    vocab = None
    if vocab_path is not None:
        vp = check_file(vocab_path)
        words = _read_vocab(vp)
        if len(words) != W:
            raise DataError(f"{vp}: {len(words)} words, but {p.name} has W = {W}")
        vocab = np.array([wd.strip() for wd in words], dtype=str)
    _check_sizes(p, D, W, default_vocab=vocab is None)
    d, w, c = _read_body(p, D, W)
    bad = (d < 1) | (d > D) | (w < 1) | (w > W) | (c <= 0)
    key = (d - 1) * W + (w - 1)
    # repeated (doc, word) entries: sort + neighbours (NumPy 2's hash-based np.unique
    # took 7.8 s on 6M keys, the sort 0.4 s; benchmarks/shards.py)
    ordered = np.sort(key)
    if bad.any() or bool(np.any(ordered[1:] == ordered[:-1])):
        _scan_body(p, D, W)
    if d.size != NNZ:
        raise DataError(f"{where(p, 3)}: the header says NNZ = {NNZ} but the file has "
                        f"{d.size} entries")
    if d.size == 0:
        raise DataError(f"no non-empty documents in {p} (D = {D}, NNZ = 0)")
    counts = sp.csr_matrix((c, (d - 1, w - 1)), shape=(D, W))
    if name is None:
        parts = p.name.split(".")
        name = parts[1] if len(parts) > 2 and parts[0] == "docword" else parts[0]
    corpus = Corpus(counts, vocabulary=vocab, doc_ids=np.arange(1, D + 1), name=name)
    n_empty = corpus.empty_documents().size
    if n_empty:
        logger.info("%s: %d of %d documents have no entries (kept)", p.name, n_empty, D)
    return corpus


# the parsing helpers under public names, for the streaming shard writer
# (:mod:`topiclink.data.shards`)
#: True when the file starts with the gzip magic bytes
is_gzip = _is_gzip
#: ``(line number, text)`` of every line of a plain or gzip text file
numbered_lines = _numbered_lines
#: ``(D, W, NNZ)`` of the 3-line header; one-line DataError naming the bad line
read_header = _read_header
#: the words of a ``vocab.<name>.txt`` file; one-line DataError naming an empty word
read_vocab = _read_vocab
#: refuse header sizes the machine cannot hold, before allocating anything
check_sizes = _check_sizes
