"""Users' own documents and citation edge lists, read as they are written.

* :func:`read_documents`: CSV, TSV, JSON lines, Parquet, or one file per document (a
  folder, or a ``.tar`` / ``.tar.gz`` read without extracting it) -> :class:`DocumentTable`.
* :func:`read_edges`: two-column edge lists (whitespace, CSV or TSV; gzip read
  transparently) -> :class:`EdgeList`; a header line is detected (column names such as
  ``citing,cited``, or two fields that are not document ids above lines of ids) and
  said so in one log line, or declared with ``header=``.

Ids are **strings, exactly as written** (only surrounding whitespace is removed): ``1001``
and ``0001001`` are different ids unless an explicit rule says otherwise
(``normalize_ids=``, see :mod:`topiclink.data.ids`).  Both readers accept a UTF-8 byte
order mark, CRLF line endings and quoted fields (CSV fields may hold newlines).  Bad input
is a one-line :class:`~topiclink.data.checks.DataError` naming the file and the line, row
or column; :func:`topiclink.data.linked.linked_corpus` joins the two tables.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import logging
import os
import re
import tarfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from topiclink.data import ids as id_rules
from topiclink.data.checks import DataError, check_memory
from topiclink.data.dates import YYMM_PIVOT, parse_times
from topiclink.data.ids import IdRule
from topiclink.data.io.rda import check_file

__all__ = ["DOCUMENT_FORMATS", "DocumentTable", "EdgeList", "read_documents", "read_edges"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]
Column = str | int
Direction = Literal["source-cites-target", "target-cites-source", "undirected"]

#: Formats of :func:`read_documents` (``format=``); by default chosen from the name.
DOCUMENT_FORMATS = ("csv", "tsv", "jsonl", "parquet", "folder", "tar")

_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl",
               ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet", ".pq": "parquet",
               ".tar": "tar", ".tgz": "tar"}


# ---------------------------------------------------------------------- containers
@dataclass(eq=False)
class DocumentTable:
    """Documents as read: ids, raw texts, optional times and metadata, one row each.

    Attributes
    ----------
    ids : ndarray of str, shape (n,)
        Distinct document ids (after ``normalize_ids``, if one was given).
    texts : list of str
    times : ndarray of float64 or None
        Fractional years (:mod:`topiclink.data.dates`), when a time column was read.
    metadata : DataFrame
        ``n`` rows (index ``0..n-1``): the requested metadata columns (strings), ``time``
        (the raw time text) when a time column was read, ``path`` for one-file-per-document
        input.
    titles : ndarray of str or None
    source : str
        The file or folder read.
    """

    ids: np.ndarray
    texts: list[str]
    times: np.ndarray | None = None
    metadata: pd.DataFrame = field(default_factory=pd.DataFrame)
    titles: np.ndarray | None = None
    source: str = ""

    def __post_init__(self) -> None:
        n = len(self.ids)
        if len(self.texts) != n:
            raise DataError(f"{self.source or 'documents'}: {len(self.texts)} texts for {n} ids")
        if self.times is not None and len(self.times) != n:
            raise DataError(f"{self.source or 'documents'}: {len(self.times)} times for {n} ids")
        if len(self.metadata.columns) == 0:
            self.metadata = pd.DataFrame(index=pd.RangeIndex(n))
        elif len(self.metadata) != n:
            raise DataError(f"{self.source or 'documents'}: metadata has {len(self.metadata)} "
                            f"rows for {n} ids")

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        times = ", with times" if self.times is not None else ""
        return f"DocumentTable({len(self)} documents from {self.source!r}{times})"

    def take(self, rows: Sequence[int] | np.ndarray) -> DocumentTable:
        """The documents at positions ``rows``, in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        return DocumentTable(
            ids=self.ids[rows], texts=[self.texts[i] for i in rows.tolist()],
            times=None if self.times is None else self.times[rows],
            metadata=self.metadata.iloc[rows].reset_index(drop=True),
            titles=None if self.titles is None else self.titles[rows], source=self.source)

    def sorted_by_time(self) -> DocumentTable:
        """The documents ordered by time, then id (a canonical order: whatever order the
        file had, a fit on the result is the same).  Needs times."""
        if self.times is None:
            raise DataError(f"{self.source or 'documents'}: no times to order by (read a "
                            "time column)")
        return self.take(np.lexsort((self.ids, self.times)))

    @property
    def empty_texts(self) -> np.ndarray:
        """Positions of the documents whose text is empty or only whitespace."""
        return np.flatnonzero([not t.strip() for t in self.texts])


@dataclass(eq=False)
class EdgeList:
    """Citations as read: string ids of both ends, oriented *citing -> cited*.

    Attributes
    ----------
    source, target : ndarray of str
        ``source[k]`` cites ``target[k]`` (``direction`` already applied); for undirected
        edges the order is as written.
    lines : ndarray of int64
        The file line of each edge (1-based), for messages.
    directed : bool
    source_file : str
    header : list of str or None
        The fields of the header line, when one was read (declared or detected).
    normalized_by : str or callable or None
        The id rule already applied to ``source`` and ``target`` (``read_edges``'s
        ``normalize_ids``); :func:`~topiclink.data.linked.linked_corpus` does not apply
        the same rule twice.
    """

    source: np.ndarray
    target: np.ndarray
    lines: np.ndarray
    directed: bool = True
    source_file: str = ""
    header: list[str] | None = None
    normalized_by: IdRule = None

    def __len__(self) -> int:
        return int(self.source.size)

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"EdgeList({len(self)} {kind} edges from {self.source_file!r})"


# ---------------------------------------------------------------------- helpers
def _strip_gz(name: str) -> tuple[str, bool]:
    low = name.lower()
    return (name[:-3], True) if low.endswith(".gz") else (name, False)


def _format_of(p: Path, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in DOCUMENT_FORMATS:
            raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(DOCUMENT_FORMATS)}")
        return fmt
    if p.is_dir():
        return "folder"
    name, gz = _strip_gz(p.name)
    if gz and name.lower().endswith(".tar"):
        return "tar"
    ext = Path(name).suffix.lower()
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    raise DataError(f"{p}: cannot tell the format from the name; pass format= (one of "
                    f"{', '.join(DOCUMENT_FORMATS)})")


def _column(df: pd.DataFrame, col: Column, p: Path, what: str) -> pd.Series:
    if isinstance(col, int) and not isinstance(col, bool):
        if not 0 <= col < df.shape[1]:
            raise DataError(f"{p}: {what} column {col} does not exist ({df.shape[1]} columns)")
        return df.iloc[:, col]
    if col not in df.columns:
        shown = ", ".join(map(repr, list(df.columns)[:12]))
        raise DataError(f"{p}: no {what} column {col!r} (columns: {shown})")
    return df[col]


def _as_id_text(values: pd.Series, p: Path, what: str = "id") -> np.ndarray:
    """Ids as stripped strings; integers as their digits; a missing or non-integer number
    is refused naming the row."""
    out = []
    for r, v in enumerate(values.tolist()):
        if isinstance(v, bool) or v is None or (isinstance(v, float) and not v.is_integer()):
            raise DataError(f"{p}: row {r}: {what} {v!r} is not a usable id (missing, or not "
                            f"an integer or a string)")
        if isinstance(v, float | np.floating):
            v = int(v)
        s = str(v).strip()
        if not s:
            raise DataError(f"{p}: row {r}: empty {what}")
        out.append(s)
    return np.asarray(out, dtype=str)


def _check_unique(ids: np.ndarray, p: object, rows: Sequence[int] | None = None,
                  unit: str = "row") -> None:
    """One-line DataError naming the repeated ids and where the first one occurs."""
    s = pd.Series(ids)
    dup = s.duplicated(keep=False)
    if not dup.any():
        return
    repeated = pd.unique(s[dup])
    first = repeated[0]
    where_ = np.flatnonzero(ids == first)[:2]
    if rows is not None:
        where_ = np.asarray(rows)[where_]
    shown = ", ".join(repr(str(v)) for v in repeated[:5])
    more = f" and {repeated.size - 5} more" if repeated.size > 5 else ""
    raise DataError(f"{p}: duplicate document id {str(first)!r} at {unit}s {int(where_[0])} "
                    f"and {int(where_[1])}; {repeated.size} ids repeated ({shown}{more})")


def _text_values(values: pd.Series, p: Path, col: Column) -> list[str]:
    out = []
    for r, v in enumerate(values.tolist()):
        if v is None or (isinstance(v, float) and np.isnan(v)):
            out.append("")
        elif isinstance(v, str):
            out.append(v.replace("\r\n", "\n"))
        else:
            raise DataError(f"{p}: row {r}: text column {col!r} holds "
                            f"{type(v).__name__} {v!r}, not text")
    return out


# ---------------------------------------------------------------------- table readers
def _read_delimited(p: Path, sep: str, encoding: str) -> pd.DataFrame:
    try:
        return pd.read_csv(p, sep=sep, dtype=str, keep_default_na=False, encoding=encoding,
                           compression="infer", engine="c")
    except pd.errors.EmptyDataError:
        raise DataError(f"{p}: the file is empty (no header line)") from None
    except pd.errors.ParserError as exc:
        msg = " ".join(str(exc).split())
        raise DataError(f"{p}: {msg}") from None
    except UnicodeDecodeError as exc:
        raise DataError(f"{p}: not {encoding} text at byte {exc.start}; pass encoding=") from None


def _read_jsonl(p: Path, encoding: str) -> pd.DataFrame:
    rows: list[dict[str, object]] = []
    try:
        with _open_text(p, encoding) as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"{p}:{lineno}: not a JSON object ({exc.msg} at column "
                                    f"{exc.colno})") from None
                if not isinstance(obj, dict):
                    raise DataError(f"{p}:{lineno}: expected one JSON object per line, got "
                                    f"{type(obj).__name__}")
                rows.append(obj)
    except UnicodeDecodeError as exc:
        raise DataError(f"{p}: not {encoding} text at byte {exc.start}; pass encoding=") from None
    if not rows:
        raise DataError(f"{p}: no JSON lines")
    df = pd.DataFrame(rows)
    return df.astype(object).where(df.notna(), None)


def _read_parquet(p: Path) -> pd.DataFrame:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        try:
            import fastparquet  # noqa: F401
        except ImportError:
            raise ImportError("reading Parquet needs pyarrow: pip install pyarrow") from None
    try:
        df = pd.read_parquet(p)
    except (OSError, ValueError) as exc:
        raise DataError(f"{p}: not a readable Parquet file: {' '.join(str(exc).split())}"
                        ) from None
    return df.astype(object).where(df.notna(), None)


def _open_text(p: Path, encoding: str) -> io.TextIOBase:
    """A text stream of ``p`` (gzip by its magic bytes), BOM removed, newlines universal."""
    with open(p, "rb") as f:
        magic = f.read(2)
    enc = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    if magic == b"\x1f\x8b":
        return gzip.open(p, "rt", encoding=enc, newline=None)  # type: ignore[return-value]
    return open(p, encoding=enc, newline=None)  # noqa: SIM115


# ---------------------------------------------------------------------- one file per document
#: Files larger than this are checked against the available memory before reading.
_CHECK_ABOVE = 1 << 24

IdFromName = str | re.Pattern[str] | Callable[[str], str] | None


def _id_getter(id_pattern: IdFromName) -> Callable[[str], str | None]:
    """``relative path -> id`` (None: skip the file).  Default: the file name without its
    last suffix; a regex: its group ``id`` or group 1 (a path it does not match is
    skipped); a callable: its result."""
    if id_pattern is None:
        return lambda rel: Path(rel).stem
    if callable(id_pattern) and not isinstance(id_pattern, re.Pattern):
        return id_pattern
    rx = re.compile(id_pattern) if isinstance(id_pattern, str) else id_pattern

    def get(rel: str) -> str | None:
        m = rx.search(rel)
        if m is None:
            return None
        if "id" in rx.groupindex:
            return m.group("id")
        return m.group(1) if rx.groups else m.group(0)
    return get


def _decode(raw: bytes, where: str, encoding: str) -> str:
    try:
        text = raw.decode("utf-8-sig" if encoding.lower() in ("utf-8", "utf8") else encoding)
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: not {encoding} text at byte {exc.start}; pass "
                        f"encoding=") from None
    return text.replace("\r\n", "\n")


def _files_in_folder(p: Path, suffix: str | None, encoding: str
                     ) -> Iterator[tuple[str, str]]:
    for f in sorted(p.rglob("*")):
        rel = f.relative_to(p).as_posix()
        if not f.is_file() or any(part.startswith(".") for part in f.relative_to(p).parts):
            continue
        if suffix is not None and not f.name.endswith(suffix):
            continue
        size = f.stat().st_size
        if size > _CHECK_ABOVE:
            check_memory(size, f"{f} ({size} bytes)")
        yield rel, _decode(f.read_bytes(), str(f), encoding)


def _files_in_tar(p: Path, suffix: str | None, encoding: str) -> Iterator[tuple[str, str]]:
    try:
        with tarfile.open(p, mode="r:*") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                rel = member.name.lstrip("./") if member.name.startswith("./") else member.name
                if any(part.startswith(".") for part in rel.split("/")):
                    continue
                if suffix is not None and not rel.endswith(suffix):
                    continue
                if member.size > _CHECK_ABOVE:
                    check_memory(member.size, f"{p}: member {rel} ({member.size} bytes)")
                fobj = tar.extractfile(member)
                raw = fobj.read() if fobj is not None else b""
                if len(raw) != member.size:
                    raise tarfile.ReadError(f"member {rel}: unexpected end of data")
                yield rel, _decode(raw, f"{p}: member {rel}", encoding)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise DataError(f"{p}: not a readable tar archive: {first}") from None


def _read_files(p: Path, fmt: str, id_pattern: IdFromName, suffix: str | None,
                encoding: str) -> tuple[np.ndarray, list[str], pd.DataFrame]:
    get_id = _id_getter(id_pattern)
    files = (_files_in_folder(p, suffix, encoding) if fmt == "folder"
             else _files_in_tar(p, suffix, encoding))
    ids, texts, paths = [], [], []
    n_skipped = 0
    for rel, text in files:
        doc_id = get_id(rel)
        if doc_id is None:
            n_skipped += 1
            continue
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise DataError(f"{p}: file {rel}: the id rule gave {doc_id!r}, not a non-empty "
                            f"string")
        ids.append(doc_id.strip())
        texts.append(text)
        paths.append(rel)
    if n_skipped:
        logger.info("%s: skipped %d files whose name does not match the id pattern", p,
                    n_skipped)
    if not ids:
        raise DataError(f"{p}: no document files found"
                        + (f" ending in {suffix!r}" if suffix else ""))
    arr = np.asarray(ids, dtype=str)
    s = pd.Series(arr)
    if s.duplicated().any():
        first = s[s.duplicated()].iloc[0]
        both = [paths[i] for i in np.flatnonzero(arr == first)[:2]]
        n_rep = int(s.duplicated(keep=False).sum())
        raise DataError(f"{p}: duplicate document id {first!r} from files {both[0]} and "
                        f"{both[1]}; {n_rep} files share an id")
    return arr, texts, pd.DataFrame({"path": paths})


# ---------------------------------------------------------------------- public readers
def read_documents(path: PathLike, *, id_column: Column = "id", text_column: Column = "text",
                   time_column: Column | None = None, time_format: str | None = None,
                   title_column: Column | None = None,
                   metadata_columns: Sequence[Column] = (), format: str | None = None,
                   id_pattern: IdFromName = None, suffix: str | None = None,
                   normalize_ids: IdRule = None, encoding: str = "utf-8",
                   time_pivot: int = YYMM_PIVOT) -> DocumentTable:
    """Read documents (id, text, optional time and metadata) from a table or files.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``/``.json`` (JSON lines),
        ``.parquet`` file (``.gz`` compressed text files too), a folder, or a ``.tar`` /
        ``.tar.gz`` / ``.tgz`` archive of one file per document.
    id_column, text_column : str or int
        Column names (or 0-based positions) of the id and the text (tables only).
    time_column : str or int, optional
        Column of publication times, parsed with ``time_format``
        (:func:`topiclink.data.dates.parse_times`: ``"iso"``, ``"year"``, ``"yymm"``,
        ``"yyyymm"``, ``"number"`` or a ``strptime`` pattern) into fractional years.
    title_column : str or int, optional
    metadata_columns : sequence of str or int
        Columns kept in :attr:`DocumentTable.metadata` (as read).
    format : {"csv", "tsv", "jsonl", "parquet", "folder", "tar"}, optional
        Default: from the name (a folder is ``"folder"``).
    id_pattern : regex or callable, optional
        One-file-per-document input: how a file's path (relative to the folder or
        archive, ``/``-separated) gives its id.  Default: the file name without its last
        suffix (``2001/0101001.abs`` -> ``"0101001"``); a regex: its group ``id`` (else
        group 1, else the match), a file it does not match is skipped (count logged); a
        callable: ``f(path) -> id``.
    suffix : str, optional
        One-file-per-document input: only files whose name ends with it (e.g. ``".txt"``).
        Hidden files (``.DS_Store``) are always skipped.
    normalize_ids : str or callable, optional
        An id rule of :mod:`topiclink.data.ids` (e.g. ``"zero-pad:7"``).
    encoding : str
        Text encoding (UTF-8 by default; a byte order mark is removed).
    time_pivot : int
        Century pivot of ``"yymm"`` times.

    Returns
    -------
    DocumentTable

    Raises
    ------
    DataError
        One line naming the file and the row / line / column: a missing column, an
        empty or missing id, duplicate ids (the first repeated id, its two rows and how
        many repeat), a malformed line, an unparsable time (first bad value, its row,
        how many).  Empty texts are kept, counted and logged (they become empty
        documents: :func:`~topiclink.data.linked.linked_corpus` drops them and counts
        their links against its ``max_lost`` limit).
    FileNotFoundError
        ``path`` does not exist.
    ImportError
        Parquet without ``pyarrow``.
    """
    p = Path(path).expanduser()
    if not p.is_dir():
        p = check_file(p)
    fmt = _format_of(p, format)
    if time_column is not None and time_format is None:
        raise ValueError("time_column given without time_format: declare how the times are "
                         "written ('iso', 'year', 'yymm', 'yyyymm', 'number' or a strptime "
                         "pattern)")
    times = None
    titles = None
    if fmt in ("folder", "tar"):
        if time_column is not None or title_column is not None or metadata_columns:
            raise ValueError(f"format {fmt!r} has no columns: time_column, title_column and "
                             f"metadata_columns apply to tables only")
        ids, texts, metadata = _read_files(p, fmt, id_pattern, suffix, encoding)
        rows = None
    else:
        if id_pattern is not None or suffix is not None:
            raise ValueError("id_pattern and suffix apply to a folder or tar archive only")
        if fmt == "csv":
            df = _read_delimited(p, ",", encoding)
        elif fmt == "tsv":
            df = _read_delimited(p, "\t", encoding)
        elif fmt == "jsonl":
            df = _read_jsonl(p, encoding)
        else:
            df = _read_parquet(p)
        if df.columns.size and isinstance(df.columns[0], str):
            df.columns = [c.lstrip("\ufeff") if isinstance(c, str) else c for c in df.columns]
        ids = _as_id_text(_column(df, id_column, p, "id"), p)
        texts = _text_values(_column(df, text_column, p, "text"), p, text_column)
        meta = {}
        if title_column is not None:
            titles = np.asarray(["" if v is None else str(v) for v in
                                 _column(df, title_column, p, "title").tolist()], dtype=str)
        for col in metadata_columns:
            meta[str(col)] = _column(df, col, p, "metadata").to_numpy()
        if time_column is not None:
            raw = _column(df, time_column, p, "time")
            assert time_format is not None
            times = parse_times(raw.to_numpy(dtype=object), time_format, pivot=time_pivot,
                                what=f"{p}: column {time_column!r}")
            meta.setdefault("time", raw.to_numpy())
        metadata = pd.DataFrame(meta, index=pd.RangeIndex(len(ids)))
        rows = None
    if normalize_ids is not None:
        ids = id_rules.normalize_ids(ids, normalize_ids)
    _check_unique(ids, p, rows)
    table = DocumentTable(ids=ids, texts=texts, times=times, metadata=metadata, titles=titles,
                          source=str(p))
    empty = table.empty_texts
    if empty.size:
        shown = ", ".join(repr(str(ids[i])) for i in empty[:3])
        logger.info("%s: %d of %d documents have an empty text (e.g. %s)", p, empty.size,
                    len(table), shown)
    return table


def read_edges(path: PathLike, *, source_column: Column = 0, target_column: Column = 1,
               direction: Direction = "source-cites-target", comment: str | None = "#",
               delimiter: str | None = None, header: bool | None = None,
               normalize_ids: IdRule = None, encoding: str = "utf-8",
               known_ids: object = None) -> EdgeList:
    """Read a citation edge list, keeping the ids as strings exactly as written.

    Parameters
    ----------
    path : str or path-like
        A text file (gzip read transparently, recognised by its content), one edge per
        line.  Blank lines and lines starting with ``comment`` are skipped.
    source_column, target_column : int or str
        0-based field positions, or header names (which imply ``header=True``).
    direction : {"source-cites-target", "target-cites-source", "undirected"}
        How to read a line ``a b``: ``a`` cites ``b`` (SNAP, most lists), ``b`` cites ``a``
        (LINQS ``.cites`` files), or an undirected link.
    comment : str or None
        Prefix of comment lines (``"#"``; ``None``: none).
    delimiter : str, optional
        Field separator; default from the name: ``,`` for ``.csv``, tab for ``.tsv`` /
        ``.tab``, else any whitespace.  CSV/TSV fields may be quoted.
    header : bool, optional
        Whether the first non-comment line names the columns.  Default: ``True`` when a
        column is given by name, else detected, with one log line when it is a header:
        the first line is a header when neither of its two ids is in ``known_ids`` (if
        given) and either both are column names (``citing,cited``, ``source,target``,
        ``src,dst``, ``from,to``, ``node1,node2``, ``paper_id,cited_id``, ...), or most of
        the next 1000 lines name ``known_ids``, or its fields hold no digit while every
        id of the next lines does.  A header whose names are document ids (``0,1``
        above ids ``0``, ``1``, ...) is read as an edge: declare ``header=True``.
    normalize_ids : str or callable, optional
        An id rule of :mod:`topiclink.data.ids`, applied to both ends of every edge (and
        recorded in :attr:`EdgeList.normalized_by`).
    encoding : str
        Text encoding (UTF-8 by default; a byte order mark is removed).
    known_ids : array_like of str, optional
        The document ids as written in the documents file (``normalize_ids`` is applied
        to them too), to tell a header line from an edge.

    Returns
    -------
    EdgeList
        Oriented citing -> cited (``direction`` applied), duplicates and self-citations
        kept (:func:`~topiclink.data.linked.linked_corpus` counts and drops them).

    Raises
    ------
    DataError
        ``file:line`` of a line with too few fields or an empty id; an unknown header
        name; a file without edges (naming a lone line read as a header).
    """
    p = check_file(path)
    if direction not in ("source-cites-target", "target-cites-source", "undirected"):
        raise ValueError(f"direction must be 'source-cites-target', 'target-cites-source' or "
                         f"'undirected', got {direction!r}")
    named = [c for c in (source_column, target_column) if isinstance(c, str)]
    if named and header is False:
        raise ValueError("columns given by name need header=True")
    detect = header is None and not named
    header = bool(named) if header is None else header
    if delimiter is None:
        ext = Path(_strip_gz(p.name)[0]).suffix.lower()
        delimiter = {".csv": ",", ".tsv": "\t", ".tab": "\t"}.get(ext)
    src: list[str] = []
    tgt: list[str] = []
    lines: list[int] = []
    names: list[str] | None = None
    cols: tuple[int, int] | None = None if header else (int(source_column), int(target_column))
    need = None if cols is None else max(cols) + 1
    try:
        with _open_text(p, encoding) as f:
            for lineno, fields in _edge_rows(f, delimiter, comment):
                if cols is None:
                    cols = tuple(_header_index(fields, c, p, lineno)  # type: ignore[assignment]
                                 for c in (source_column, target_column))
                    assert cols is not None
                    need = max(cols) + 1
                    names = [v.strip() for v in fields]
                    continue
                assert need is not None
                if len(fields) < need:
                    raise DataError(f"{p}:{lineno}: expected at least {need} fields, found "
                                    f"{len(fields)}: {_shown(fields)}")
                a, b = fields[cols[0]].strip(), fields[cols[1]].strip()
                if not a or not b:
                    raise DataError(f"{p}:{lineno}: empty id in {_shown(fields)}")
                src.append(a)
                tgt.append(b)
                lines.append(lineno)
    except UnicodeDecodeError as exc:
        raise DataError(f"{p}: not {encoding} text at byte {exc.start}; pass encoding=") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{p}: cannot read: {exc}") from None
    if detect and src:
        reason = _header_reason(src, tgt, known_ids, normalize_ids)
        if reason is not None:
            names = [src[0], tgt[0]]
            if len(src) == 1:
                raise DataError(f"{p}: no edges found: its only line, line {lines[0]} "
                                f"({_shown(names)}), reads as a header ({reason}); pass "
                                f"header=False to read it as an edge")
            logger.info("%s:%d: read %s as a header line (%s); declare that the file has no "
                        "header to read it as an edge", p, lines[0], _shown(names), reason)
            del src[0], tgt[0], lines[0]
    if not src:
        raise DataError(f"{p}: no edges found")
    s = np.asarray(src, dtype=str)
    t = np.asarray(tgt, dtype=str)
    if direction == "target-cites-source":
        s, t = t, s
    if normalize_ids is not None:
        s, t = id_rules.normalize_ids(s, normalize_ids), id_rules.normalize_ids(t, normalize_ids)
    return EdgeList(s, t, np.asarray(lines, dtype=np.int64),
                    directed=direction != "undirected", source_file=str(p), header=names,
                    normalized_by=normalize_ids)


#: Column names of an edge list's header (lower-cased, separators as ``_``): a role
#: (``citing``, ``source``, ``from``, ...), an optional kind (``paper``, ``node``, ...),
#: an optional ``id`` / ``key``, an optional ``1`` / ``2``.
_HEADER_NAME = re.compile(
    r"(citing|cited|citer|citee|cites|cite|cited_by|source|target|src|dst|dest|"
    r"destination|from|to|head|tail|node|vertex|paper|doc|document|article|id|"
    r"reference|referenced|referencing|ref|parent|child)"
    r"(_?(paper|doc|document|article|node|vertex|publication))?"
    r"(_?(id|ids|key|no|number))?(_?[12])?")

#: Lines after the first that header detection looks at.
_HEADER_SAMPLE = 1000


def _header_name(field: str) -> bool:
    name = re.sub(r"[\s.\-]+", "_", field.strip().strip("\"'").lower())
    return _HEADER_NAME.fullmatch(name) is not None


def _header_reason(src: list[str], tgt: list[str], known_ids: object,
                   rule: IdRule) -> str | None:
    """Why the first edge read is a header line (see ``read_edges``), or None."""
    first = (src[0], tgt[0])
    rest = list(zip(src[1:1 + _HEADER_SAMPLE], tgt[1:1 + _HEADER_SAMPLE], strict=True))
    if known_ids is not None:
        fn = id_rules.id_normalizer(rule) or (lambda v: v)
        known = set(id_rules.normalize_ids(np.asarray(known_ids, dtype=str), rule).tolist())
        if fn(first[0]) in known or fn(first[1]) in known:
            return None                     # a document id: an edge
        if rest:
            n_known = sum(fn(a) in known and fn(b) in known for a, b in rest)
            if n_known * 2 > len(rest):
                return (f"neither is a document id, while {n_known} of the next "
                        f"{len(rest)} lines name two documents")
    if all(_header_name(v) for v in first):
        return "column names"
    if rest and not any(map(_has_digit, first)) and all(
            _has_digit(a) and _has_digit(b) for a, b in rest):
        return "no digits, while every id of the next lines has some"
    return None


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


def _shown(fields: list[str]) -> str:
    return repr(" ".join(fields)[:60])


def _header_index(fields: list[str], col: Column, p: Path, lineno: int) -> int:
    if isinstance(col, int):
        return col
    names = [f.strip().lstrip("\ufeff") for f in fields]
    if col not in names:
        raise DataError(f"{p}:{lineno}: no column {col!r} in the header {names}")
    return names.index(col)


def _edge_rows(f: io.TextIOBase, delimiter: str | None, comment: str | None
               ) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of the non-blank, non-comment lines."""
    def keep(line: str) -> bool:
        s = line.strip()
        return bool(s) and not (comment and s.startswith(comment))

    if delimiter is None:
        for lineno, line in enumerate(f, 1):
            if keep(line):
                yield lineno, line.split()
        return
    numbered = ((n, line) for n, line in enumerate(f, 1) if keep(line))
    current = [0]

    def text_lines() -> Iterator[str]:
        for n, line in numbered:
            current[0] = n
            yield line
    reader = csv.reader(text_lines(), delimiter=delimiter)
    try:
        for fields in reader:
            yield current[0], fields
    except csv.Error as exc:
        raise DataError(f"{getattr(f, 'name', 'edges')}:{current[0]}: {exc}") from None
