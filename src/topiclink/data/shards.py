"""A corpus on disk as document shards, for training on data larger than memory.

:func:`write_shards` splits a corpus into ``n_shards`` shards of whole documents at the
:func:`~topiclink.execution.balanced_chunks` boundaries (the very shards
AD-LDA on a Dask executor sweeps), one ``.npz`` file each, and :class:`ShardSet` opens the
result.  From a UCI bag-of-words file the writer streams: pass 1 reads the file once
(in blocks of ``read_rows`` lines) to validate it and count the tokens of every document
(``D`` int64 in memory), pass 2 reads it again and fills one shard's token array at a
time, writing each shard as soon as it is complete.  Memory: ``8 D`` bytes, one shard's
tokens (``4`` bytes each) and the read buffer with its temporaries (about 150 bytes per
line of ``read_rows``; 10 MB at the default).  Shard files are written from the token
array itself (no copy).

Layout of a shard directory (format ``topiclink-shards``, version 1)::

    manifest.json        format, version, n_docs, n_words, n_tokens, name, doc_id_start
                         or null, per shard: file, doc_start, doc_stop, n_tokens, sha256
    shard-00000.npz ...  words (int32, tokens sorted by document, by word id within a
                         document, a word repeated count times), offsets (int64, local,
                         from 0), doc_range (int64 [doc_start, doc_stop]) and, only when
                         the document ids are not a range, doc_ids; titles when known
    vocabulary.json      the words, when known

Shard files are plain ``.npz`` archives read with ``allow_pickle=False``.  The directory
is written under a temporary name and renamed into place when complete (atomic): a
failed write leaves nothing behind.  Workers of a Dask cluster read the shard files by
path, so the directory must be visible to them at the same path (a shared filesystem, or
one machine).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.checks import (
    Boolean,
    DataError,
    Integer,
    check_vocabulary,
    validate_params,
    where,
)
from topiclink.data.corpus import Corpus
from topiclink.data.io.rda import check_file
from topiclink.data.io.uci_bow import check_sizes, is_gzip, numbered_lines, read_header, read_vocab
from topiclink.execution.shards import balanced_chunks

__all__ = ["ShardSet", "write_shards", "FORMAT_NAME", "FORMAT_VERSION", "load_shard"]

logger = logging.getLogger(__name__)

FORMAT_NAME = "topiclink-shards"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
VOCABULARY = "vocabulary.json"
#: lines of a UCI file parsed per block (the read buffer: about 24 bytes a line)
READ_ROWS = 1 << 16

PathLike = str | os.PathLike[str]


# ---------------------------------------------------------------------- reading shards
@dataclass(frozen=True)
class ShardInfo:
    """One shard as the manifest describes it."""

    file: str
    doc_start: int
    doc_stop: int
    n_tokens: int
    sha256: str


def file_sha256(path: PathLike, block: int = 1 << 18) -> str:
    """The SHA-256 of a file, read in blocks of ``block`` bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(block):
            h.update(chunk)
    return h.hexdigest()


def load_shard(path: PathLike, n_tokens: int, n_docs: int, sha256: str | None = None, *,
               n_words: int | None = None, doc_start: int | None = None
               ) -> tuple[np.ndarray, np.ndarray, int]:
    """``(words, offsets, doc_start)`` of one shard file, checked against the manifest's
    token and document counts (and its checksum when ``sha256`` is given): the word ids
    must lie in ``[0, n_words)`` (``n_words`` default: the manifest next to the file)
    and ``doc_range`` must be ``[doc_start, doc_start + n_docs]``.  Runs on Dask workers
    too (module level).  One-line :class:`DataError` naming the file."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{p}: shard file missing")
    if sha256 is not None and file_sha256(p) != sha256:
        raise DataError(f"{p}: checksum mismatch (the shard file changed or is corrupt)")
    try:
        with np.load(p, allow_pickle=False) as npz:
            words, offsets, doc_range = npz["words"], npz["offsets"], npz["doc_range"]
    except (OSError, ValueError, KeyError, EOFError, zlib.error) as exc:
        raise DataError(f"{p}: not a readable shard ({type(exc).__name__}: {exc})") from None
    if (words.dtype != np.int32 or offsets.dtype != np.int64 or words.ndim != 1
            or offsets.shape != (n_docs + 1,) or words.size != n_tokens
            or doc_range.shape != (2,) or doc_range.dtype.kind not in "iu"
            or offsets[0] != 0 or offsets[-1] != n_tokens
            or (offsets.size > 1 and np.any(np.diff(offsets) < 0))):
        raise DataError(f"{p}: shard arrays do not match the manifest ({n_docs} documents, "
                        f"{n_tokens} tokens)")
    d0, d1 = int(doc_range[0]), int(doc_range[1])
    if d0 < 0 or d1 - d0 != n_docs or (doc_start is not None and d0 != doc_start):
        expect = f"[{doc_start}, {doc_start + n_docs}]" if doc_start is not None else \
            f"{n_docs} documents"
        raise DataError(f"{p}: doc_range is [{d0}, {d1}], but the manifest says {expect}")
    if n_words is None:
        n_words = _manifest_words(p.parent)
    if words.size and (int(words.min()) < 0
                       or (n_words is not None and int(words.max()) >= n_words)):
        bad = (words < 0) | (words >= (n_words if n_words is not None else np.inf))
        t = int(np.flatnonzero(bad)[0])
        raise DataError(f"{p}: token {t} has word id {int(words[t])}, outside the "
                        f"vocabulary [0, {n_words}); {int(bad.sum())} such tokens")
    return words, offsets, d0


def _manifest_words(directory: Path) -> int | None:
    """``n_words`` of the manifest in ``directory``; None when it cannot be read (the
    caller then checks only that word ids are >= 0)."""
    try:
        value = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))["n_words"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _as_path(value: object, what: str) -> Path:
    """``value`` as a Path: a non-empty str or path-like (one-line TypeError/ValueError)."""
    if not isinstance(value, str | os.PathLike):
        raise TypeError(f"{what} must be a path (str or os.PathLike), got "
                        f"{type(value).__name__}")
    text = os.fspath(value)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{what} must be a non-empty path, got {text!r}")
    if "\x00" in text:
        raise ValueError(f"{what}: the path {text!r} holds a NUL character")
    return Path(text).expanduser()


class ShardSet:
    """A shard directory written by :func:`write_shards` (open with :meth:`open`).

    Reading the manifest, :meth:`doc_lengths` and :meth:`offsets` never load the tokens;
    :meth:`load` loads one shard; :meth:`to_corpus` the whole corpus (small sets only).
    """

    def __init__(self, directory: Path, manifest: dict[str, Any],
                 shards: list[ShardInfo]) -> None:
        self.directory = directory
        self.manifest = manifest
        self.shards = shards

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, directory: PathLike) -> ShardSet:
        """Open and validate a shard directory (format, version, shard list, files
        present).  One-line :class:`DataError` for anything wrong."""
        d = _as_path(directory, "ShardSet.open: directory").resolve()
        if d.exists() and not d.is_dir():
            raise DataError(f"{d}: not a shard directory (it is a file)")
        mp = d / MANIFEST
        if not mp.is_file():
            raise DataError(f"{mp}: no shard manifest (not a directory written by "
                            f"write_shards)")
        try:
            m = json.loads(mp.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"{mp}: corrupt manifest ({exc})") from None
        if not isinstance(m, dict) or m.get("format") != FORMAT_NAME:
            raise DataError(f"{mp}: not a {FORMAT_NAME} manifest")
        if m.get("version") != FORMAT_VERSION:
            raise DataError(f"{mp}: format version {m.get('version')!r}, this topiclink "
                            f"reads version {FORMAT_VERSION}")
        try:
            shards = [ShardInfo(str(s["file"]), int(s["doc_start"]), int(s["doc_stop"]),
                                int(s["n_tokens"]), str(s["sha256"])) for s in m["shards"]]
            n_docs, n_words, n_tokens = int(m["n_docs"]), int(m["n_words"]), int(m["n_tokens"])
            start = m.get("doc_id_start")
            if start is not None and (isinstance(start, bool) or not isinstance(start, int)):
                raise ValueError(f"doc_id_start {start!r}")
        except (KeyError, TypeError, ValueError) as exc:
            raise DataError(f"{mp}: corrupt manifest (bad or missing field {exc})") from None
        expect = 0
        for i, s in enumerate(shards):
            if s.doc_start != expect or s.doc_stop < s.doc_start or s.n_tokens < 0 \
                    or Path(s.file).name != s.file:
                raise DataError(f"{mp}: shard {i} ({s.file!r}) has an inconsistent entry")
            expect = s.doc_stop
        if not shards or expect != n_docs or sum(s.n_tokens for s in shards) != n_tokens \
                or n_words < 0 or n_tokens < 0:
            raise DataError(f"{mp}: the shards do not add up to {n_docs} documents and "
                            f"{n_tokens} tokens")
        for s in shards:
            if not (d / s.file).is_file():
                raise DataError(f"{d / s.file}: shard file missing (listed in {mp})")
        return cls(d, m, shards)

    # ------------------------------------------------------------------ sizes
    @property
    def n_shards(self) -> int:
        return len(self.shards)

    @property
    def n_docs(self) -> int:
        return int(self.manifest["n_docs"])

    @property
    def n_words(self) -> int:
        return int(self.manifest["n_words"])

    @property
    def n_tokens(self) -> int:
        return int(self.manifest["n_tokens"])

    @property
    def name(self) -> str:
        return str(self.manifest.get("name", ""))

    def __len__(self) -> int:
        return self.n_docs

    def __repr__(self) -> str:
        return (f"ShardSet({str(self.directory)!r}, {self.n_shards} shards, {self.n_docs} "
                f"documents, {self.n_words} words, {self.n_tokens} tokens)")

    def doc_bounds(self) -> np.ndarray:
        """int64 (n_shards + 1,): shard ``i`` holds documents ``[b[i], b[i + 1])``."""
        return np.array([0] + [s.doc_stop for s in self.shards], dtype=np.int64)

    def _index(self, i: object) -> int:
        """``i`` as a shard position in ``[0, n_shards)`` (one-line TypeError/ValueError;
        negative positions are refused)."""
        if isinstance(i, bool | np.bool_) or not isinstance(i, int | np.integer):
            raise TypeError(f"shard index must be an integer, got {type(i).__name__} {i!r}")
        if not 0 <= int(i) < self.n_shards:
            raise ValueError(f"shard {int(i)} is outside [0, {self.n_shards}) ({self.n_shards} "
                             f"shards in {self.directory})")
        return int(i)

    def path(self, i: int) -> Path:
        """The file of shard ``i``."""
        return self.directory / self.shards[self._index(i)].file

    def _member(self, i: int, name: str) -> np.ndarray | None:
        p = self.path(i)
        if not p.is_file():
            raise DataError(f"{p}: shard file missing")
        try:
            with np.load(p, allow_pickle=False) as npz:
                return npz[name] if name in npz.files else None
        except (OSError, ValueError, EOFError, zlib.error) as exc:
            raise DataError(f"{p}: not a readable shard ({type(exc).__name__}: {exc})"
                            ) from None

    def doc_lengths(self) -> np.ndarray:
        """Tokens per document, int64 (n_docs,), from the shards' offsets (the token
        arrays are not read)."""
        out = np.zeros(self.n_docs, dtype=np.int64)
        for i, s in enumerate(self.shards):
            off = self._member(i, "offsets")
            if off is None or off.shape != (s.doc_stop - s.doc_start + 1,) \
                    or off[-1] != s.n_tokens:
                raise DataError(f"{self.path(i)}: shard offsets do not match the manifest")
            out[s.doc_start:s.doc_stop] = np.diff(off)
        return out

    def offsets(self) -> np.ndarray:
        """Global document offsets, int64 (n_docs + 1,) (as ``Corpus.tokens().offsets``)."""
        off = np.zeros(self.n_docs + 1, dtype=np.int64)
        np.cumsum(self.doc_lengths(), out=off[1:])
        return off

    def load(self, i: int, verify: bool = True) -> tuple[np.ndarray, np.ndarray, int]:
        """``(words, offsets, doc_start)`` of shard ``i`` (local offsets from 0); the
        file's checksum is verified first unless ``verify=False``."""
        s = self.shards[self._index(i)]
        return load_shard(self.path(i), s.n_tokens, s.doc_stop - s.doc_start,
                          s.sha256 if verify else None, n_words=self.n_words,
                          doc_start=s.doc_start)

    def task_arguments(self, i: int) -> tuple[str, int, int, str]:
        """The arguments of :func:`load_shard` for shard ``i`` (for a worker task)."""
        s = self.shards[self._index(i)]
        return str(self.path(i)), s.n_tokens, s.doc_stop - s.doc_start, s.sha256

    def vocabulary(self) -> np.ndarray | None:
        """The words (str array), or None when the set was written without them."""
        vp = self.directory / VOCABULARY
        if not vp.is_file():
            return None
        try:
            words = json.loads(vp.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DataError(f"{vp}: corrupt vocabulary ({exc})") from None
        if not isinstance(words, list) or len(words) != self.n_words \
                or not all(isinstance(w, str) for w in words):
            raise DataError(f"{vp}: expected a list of {self.n_words} words")
        return check_vocabulary(words, str(vp))

    def fingerprint(self) -> str:
        """A short hash of the manifest's sizes and shard checksums."""
        h = hashlib.blake2b(digest_size=12)
        h.update(json.dumps([self.n_docs, self.n_words, self.n_tokens,
                             [(s.doc_start, s.doc_stop, s.n_tokens, s.sha256)
                              for s in self.shards]]).encode())
        return h.hexdigest()

    def corpus(self, i: int) -> Corpus:
        """Shard ``i`` in memory as a :class:`Corpus` (its documents' counts, the
        vocabulary, their ids and titles): what prediction streams over, shard by shard."""
        s = self.shards[self._index(i)]
        words, off, _ = self.load(i)
        n = s.doc_stop - s.doc_start
        V = max(self.n_words, 1)
        docs = np.repeat(np.arange(n, dtype=np.int64), np.diff(off))
        uniq, cnt = np.unique(docs * V + words, return_counts=True)
        counts = sp.csr_matrix((cnt, (uniq // V, uniq % V)), shape=(n, self.n_words))
        start = self.manifest.get("doc_id_start")
        if start is not None:
            doc_ids = np.arange(start + s.doc_start, start + s.doc_stop)
        else:
            doc_ids = self._member(i, "doc_ids")
            if doc_ids is None:
                raise DataError(f"{self.path(i)}: doc_ids missing")
        return Corpus(counts, vocabulary=self.vocabulary(), doc_ids=doc_ids,
                      titles=self._member(i, "titles"), name=self.name)

    def corpora(self) -> Iterator[Corpus]:
        """The shards one after another as in-memory corpora (:meth:`corpus`)."""
        for i in range(self.n_shards):
            yield self.corpus(i)

    def to_corpus(self) -> Corpus:
        """The whole corpus in memory (for small sets and tests): counts, vocabulary,
        document ids, titles and name as written (metadata is never stored)."""
        parts = list(self.corpora())
        titles = [c.titles for c in parts]
        return Corpus(sp.vstack([c.counts for c in parts], format="csr"),
                      vocabulary=self.vocabulary(),
                      doc_ids=np.concatenate([np.asarray(c.doc_ids) for c in parts]),
                      titles=(np.concatenate([np.asarray(t) for t in titles])
                              if all(t is not None for t in titles) else None),
                      name=self.name)


# ---------------------------------------------------------------------- writing
class _Writer:
    """Writes shard files into a temporary directory, renamed into place at the end."""

    def __init__(self, directory: Path, overwrite: bool) -> None:
        self.directory = directory
        if directory.exists() or directory.is_symlink():
            if not overwrite:
                raise FileExistsError(f"{directory}: already exists (remove it, choose another "
                                      f"directory or pass overwrite=True)")
            _check_replaceable(directory)
        directory.parent.mkdir(parents=True, exist_ok=True)
        self.overwrite = overwrite
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".tmp",
                                         dir=directory.parent))
        self.entries: list[dict[str, Any]] = []

    def shard(self, s: int, words: np.ndarray, offsets: np.ndarray, d0: int, d1: int,
              extra: dict[str, np.ndarray] | None = None) -> None:
        name = f"shard-{s:05d}.npz"
        path = self.tmp / name
        arrays = {"words": words, "offsets": offsets,
                  "doc_range": np.array([d0, d1], dtype=np.int64), **(extra or {})}
        with open(path, "wb") as f:
            _save_npz(f, arrays)
            f.flush()
            os.fsync(f.fileno())
        self.entries.append({"file": name, "doc_start": int(d0), "doc_stop": int(d1),
                             "n_tokens": int(words.size), "sha256": file_sha256(path)})

    def finish(self, n_docs: int, n_words: int, name: str, doc_id_start: int | None,
               vocabulary: np.ndarray | None) -> None:
        if vocabulary is not None:
            (self.tmp / VOCABULARY).write_text(
                json.dumps([str(w) for w in vocabulary], ensure_ascii=False), encoding="utf-8")
        manifest = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "n_docs": int(n_docs),
                    "n_words": int(n_words),
                    "n_tokens": int(sum(e["n_tokens"] for e in self.entries)),
                    "name": name, "doc_id_start": doc_id_start, "shards": self.entries}
        (self.tmp / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        os.chmod(self.tmp, 0o777 & ~_umask())
        if self.directory.exists():          # overwrite=True: swap, then remove the old
            old = Path(tempfile.mkdtemp(prefix=f".{self.directory.name}.", suffix=".old",
                                        dir=self.directory.parent))
            os.replace(self.directory, old / "set")
            os.replace(self.tmp, self.directory)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(self.tmp, self.directory)

    def abort(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def _check_replaceable(directory: Path) -> None:
    """``overwrite=True`` replaces only a shard directory (one with a topiclink-shards
    manifest) or an empty directory: never a file, a link or another folder."""
    if directory.is_symlink() or not directory.is_dir():
        kind = "a symbolic link" if directory.is_symlink() else "a file"
        raise DataError(f"{directory}: is {kind}, not a shard directory; overwrite=True "
                        f"replaces only a directory written by write_shards")
    if not any(directory.iterdir()):
        return
    try:
        m = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        ok = isinstance(m, dict) and m.get("format") == FORMAT_NAME
    except (OSError, UnicodeDecodeError, ValueError):
        ok = False
    if not ok:
        raise DataError(f"{directory}: not a shard directory (no {FORMAT_NAME} "
                        f"{MANIFEST}); overwrite=True replaces only a directory written by "
                        f"write_shards")


def _save_npz(f: Any, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez`` (uncompressed, the same archive), except that numeric arrays are
    written from their own buffer: no copy of a shard's tokens is made."""
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, value in arrays.items():
            arr = np.ascontiguousarray(value)
            with zf.open(f"{key}.npy", "w", force_zip64=True) as fid:
                if arr.dtype.kind in "iuf" and arr.ndim == 1:
                    np.lib.format.write_array_header_1_0(
                        fid, np.lib.format.header_data_from_array_1_0(arr))
                    fid.write(memoryview(arr).cast("B"))
                else:
                    np.lib.format.write_array(fid, arr, allow_pickle=False)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_shards(source: Corpus | PathLike, directory: PathLike, n_shards: int, *,
                 vocab: PathLike | Sequence[str] | None = None, name: str | None = None,
                 overwrite: bool = False, read_rows: int = READ_ROWS) -> ShardSet:
    """Write a corpus as ``n_shards`` document shards (see the module docstring).

    Parameters
    ----------
    source : Corpus, or the path of a UCI ``docword.<name>.txt[.gz]`` file
        A UCI file is streamed (two passes); it must list its entries sorted by docID.
    directory : where to write (must not exist unless ``overwrite=True``)
    n_shards : number of shards; at most one per document (as
        :func:`~topiclink.execution.balanced_chunks`), so ``ShardSet.n_shards`` can be
        smaller for tiny corpora
    vocab : the words: a ``vocab.<name>.txt`` path or a sequence of W words (a Corpus's
        own vocabulary by default)
    name : corpus name (default: the Corpus's, or ``<name>`` of ``docword.<name>.txt``)
    overwrite : replace an existing directory (the new set is complete before two
        renames swap it in; the old one is then removed)
    read_rows : lines of the UCI file parsed per block (the read buffer)

    Returns
    -------
    ShardSet

    Raises
    ------
    DataError
        ``file:line`` of the first bad line of a UCI file (not three integers, id out of
        range, non-positive count, repeated (docID, wordID), docIDs not sorted), NNZ not
        matching the entries, no entries; a vocabulary without W words.
    FileExistsError
        ``directory`` exists and ``overwrite`` is False.
    ValueError
        ``n_shards`` or ``read_rows`` not an integer >= 1 (floats, strings and bools are
        refused); with ``overwrite=True``, ``directory`` is not a shard directory (a
        file, a link or a non-empty folder without a shard manifest: DataError).
    """
    validate_params("write_shards", {"n_shards": n_shards, "read_rows": read_rows,
                                     "overwrite": overwrite},
                    {"n_shards": [Integer(1)], "read_rows": [Integer(1)],
                     "overwrite": [Boolean()]})
    out = _as_path(directory, "write_shards: directory")
    if not isinstance(source, Corpus | str | os.PathLike):
        raise TypeError(f"write_shards: source must be a Corpus or the path of a UCI "
                        f"docword file, got {type(source).__name__}")
    if isinstance(source, Corpus):
        return _write_corpus(source, out, int(n_shards), vocab, name, overwrite)
    p = check_file(source)
    try:
        return _write_uci(p, out, int(n_shards), vocab, name, overwrite, int(read_rows))
    except (OSError, EOFError, zlib.error) as exc:
        if isinstance(exc, FileNotFoundError | FileExistsError):
            raise
        raise DataError(f"{p}: cannot read it or write the shards to {out}: {exc}"
                        ) from None


def _vocabulary(vocab: PathLike | Sequence[str] | None, W: int, what: str
                ) -> np.ndarray | None:
    if vocab is None:
        return None
    if isinstance(vocab, str | os.PathLike):
        vp = check_file(vocab)
        words = read_vocab(vp)
        if len(words) != W:
            raise DataError(f"{vp}: {len(words)} words, but {what} has W = {W}")
        return np.array([wd.strip() for wd in words], dtype=str)
    arr = check_vocabulary(vocab, "vocab")
    if arr.shape != (W,):
        raise DataError(f"vocab: {arr.size} words, but {what} has W = {W}")
    return arr


def _id_start(doc_ids: np.ndarray) -> int | None:
    """0 or 1 when the ids are ``start, start + 1, ...``; None otherwise."""
    if doc_ids.dtype.kind not in "iu":
        return None
    for start in (0, 1):
        if np.array_equal(doc_ids, np.arange(start, start + doc_ids.size)):
            return start
    return None


def _write_corpus(corpus: Corpus, out: Path, n_shards: int, vocab: Any, name: str | None,
                  overwrite: bool) -> ShardSet:
    corpus.check_has_documents("write_shards")
    words_vocab = _vocabulary(vocab, corpus.n_words, "the corpus")
    if words_vocab is None:
        words_vocab = corpus.vocabulary
    if corpus.metadata is not None:
        logger.info("write_shards: the corpus metadata is not stored in shards")
    tok = corpus.tokens()
    chunks = balanced_chunks(tok.offsets, n_shards)
    start = _id_start(np.asarray(corpus.doc_ids))
    if start is None and np.asarray(corpus.doc_ids).dtype.kind not in "iuU":
        raise DataError("write_shards: document ids must be integers or strings to be "
                        "stored without pickles")
    writer = _Writer(out, overwrite)
    try:
        for s in range(chunks.size - 1):
            d0, d1 = int(chunks[s]), int(chunks[s + 1])
            lo, hi = int(tok.offsets[d0]), int(tok.offsets[d1])
            extra = {}
            if start is None:
                extra["doc_ids"] = np.asarray(corpus.doc_ids[d0:d1])
            if corpus.titles is not None:
                extra["titles"] = np.asarray(corpus.titles[d0:d1], dtype=str)
            writer.shard(s, np.ascontiguousarray(tok.words[lo:hi], dtype=np.int32),
                         tok.offsets[d0:d1 + 1] - lo, d0, d1, extra)
        writer.finish(corpus.n_docs, corpus.n_words, corpus.name if name is None else name,
                      start, words_vocab)
    except BaseException:
        writer.abort()
        raise
    return ShardSet.open(out)


# ---------------------------------------------------------------------- UCI streaming
def _uci_blocks(p: Path, rows: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The body of a UCI file as (doc, word, count) int64 blocks of at most ``rows``
    lines.  Raises ValueError-like pandas errors on malformed text (callers name the
    line with :func:`_first_bad_line`)."""
    try:
        reader = pd.read_csv(p, sep=r"\s+", header=None, skiprows=3, dtype=np.int64,
                             engine="c", compression="gzip" if is_gzip(p) else None,
                             chunksize=rows)
    except pd.errors.EmptyDataError:
        return
    with reader:
        for df in reader:
            if df.shape[1] != 3:
                raise ValueError("expected 3 columns")
            yield tuple(df[k].to_numpy() for k in df.columns)  # type: ignore[misc]


def _first_bad_line(p: Path, D: int, W: int) -> DataError:
    """The error of the first bad body line (a line-by-line scan, bounded memory: only the
    words of the current document are kept to find repeats)."""
    prev_d, first_line = 0, 0
    seen: dict[int, int] = {}
    for k, line in numbered_lines(p):
        if k <= 3 or not line.strip():
            continue
        parts = line.split()
        if len(parts) != 3:
            return DataError(f"{where(p, k)}: expected 3 numbers (doc word count), found "
                             f"{len(parts)}")
        try:
            d, w, c = (int(x) for x in parts)
        except ValueError:
            return DataError(f"{where(p, k)}: non-integer value in {line.strip()[:60]!r}")
        if not 1 <= d <= D:
            return DataError(f"{where(p, k)}: docID {d} outside [1, {D}]")
        if not 1 <= w <= W:
            return DataError(f"{where(p, k)}: wordID {w} outside [1, {W}]")
        if c <= 0:
            return DataError(f"{where(p, k)}: count {c} must be a positive integer")
        if d < prev_d:
            return DataError(f"{where(p, k)}: docID {d} after docID {prev_d} (line "
                             f"{first_line}): streaming needs the entries sorted by docID")
        if d != prev_d:
            prev_d, first_line, seen = d, k, {}
        if w in seen:
            return DataError(f"{where(p, k)}: repeats (docID {d}, wordID {w}) of line "
                             f"{seen[w]}")
        seen[w] = k
    return DataError(f"{p}: malformed body (lines after the 3-line header must be "
                     f"'doc word count', sorted by docID)")


def _count_pass(p: Path, D: int, W: int, rows: int) -> tuple[np.ndarray, int]:
    """Pass 1: validate every entry and count the tokens of every document."""
    lengths = np.zeros(D, dtype=np.int64)
    nnz = 0
    last_doc, last_words = 0, np.zeros(0, np.int64)     # the document open at a block end
    try:
        for d, w, c in _uci_blocks(p, rows):
            bad = (d < 1) | (d > D) | (w < 1) | (w > W) | (c <= 0)
            if bad.any() or d[0] < last_doc or (d.size > 1 and np.any(np.diff(d) < 0)):
                raise _first_bad_line(p, D, W)
            key = np.sort(d * (W + 1) + w)
            head = w[d == last_doc]
            if np.any(key[1:] == key[:-1]) or np.isin(head, last_words).any():
                raise _first_bad_line(p, D, W)
            starts = np.flatnonzero(np.r_[True, d[1:] != d[:-1]])
            lengths[d[starts] - 1] += np.add.reduceat(c, starts)
            tail = w[d == d[-1]]
            last_words = np.concatenate([last_words, tail]) if d[-1] == last_doc else tail
            last_doc = int(d[-1])
            nnz += d.size
    except (ValueError, OverflowError, pd.errors.ParserError) as exc:
        if isinstance(exc, DataError):
            raise
        raise _first_bad_line(p, D, W) from None
    return lengths, nnz


def _write_uci(p: Path, out: Path, n_shards: int, vocab: Any, name: str | None,
               overwrite: bool, rows: int) -> ShardSet:
    D, W, NNZ = read_header(p)
    vocabulary = _vocabulary(vocab, W, p.name)
    check_sizes(p, D, W, default_vocab=False)
    lengths, nnz = _count_pass(p, D, W, rows)
    if nnz != NNZ:
        raise DataError(f"{where(p, 3)}: the header says NNZ = {NNZ} but the file has {nnz} "
                        f"entries")
    if nnz == 0:
        raise DataError(f"no non-empty documents in {p} (D = {D}, NNZ = 0)")
    n_empty = int(np.count_nonzero(lengths == 0))
    if n_empty:
        logger.info("%s: %d of %d documents have no entries (kept)", p.name, n_empty, D)
    offsets = np.zeros(D + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    del lengths
    chunks = balanced_chunks(offsets, n_shards)
    if name is None:
        parts = p.name.split(".")
        name = parts[1] if len(parts) > 2 and parts[0] == "docword" else parts[0]
    writer = _Writer(out, overwrite)
    try:
        _fill_pass(p, rows, offsets, chunks, writer)
        writer.finish(D, W, name, 1, vocabulary)
    except BaseException:
        writer.abort()
        raise
    return ShardSet.open(out)


def _fill_pass(p: Path, rows: int, offsets: np.ndarray, chunks: np.ndarray,
               writer: _Writer) -> None:
    """Pass 2: the tokens of complete documents, in order, fill one shard at a time."""
    S = chunks.size - 1
    lo = offsets[chunks[:-1]]
    hi = offsets[chunks[1:]]
    s, pos = 0, 0
    buf = np.empty(int(hi[0] - lo[0]), dtype=np.int32)

    def flush_complete() -> None:
        nonlocal s, buf
        while s < S and pos == hi[s]:
            d0, d1 = int(chunks[s]), int(chunks[s + 1])
            writer.shard(s, buf, offsets[d0:d1 + 1] - lo[s], d0, d1)
            s += 1
            buf = np.empty(0, dtype=np.int32)          # free this shard before the next
            buf = np.empty(int(hi[s] - lo[s]) if s < S else 0, dtype=np.int32)

    def emit(d: np.ndarray, w: np.ndarray, c: np.ndarray) -> None:
        nonlocal pos
        order = np.lexsort((w, d))
        tokens = np.repeat((w[order] - 1).astype(np.int32), c[order])
        done = 0
        while done < tokens.size:
            take = int(min(hi[s] - pos, tokens.size - done))
            buf[pos - lo[s]:pos - lo[s] + take] = tokens[done:done + take]
            pos += take
            done += take
            flush_complete()

    flush_complete()
    pend: tuple[np.ndarray, ...] = (np.zeros(0, np.int64),) * 3
    for block in _uci_blocks(p, rows):
        d, w, c = (np.concatenate([a, b]) for a, b in zip(pend, block, strict=True))
        cut = int(np.searchsorted(d, d[-1], side="left"))   # the last document may go on
        if cut:
            emit(d[:cut], w[:cut], c[:cut])
        pend = (d[cut:], w[cut:], c[cut:])
    if pend[0].size:
        emit(*pend)
    flush_complete()
    if s != S:                                              # pragma: no cover - pass 1
        raise DataError(f"{p}: the file changed between the two passes")
