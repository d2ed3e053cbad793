"""Knowledge-graph triple files (``head<TAB>relation<TAB>tail`` per line).

The format of the ConvE / NTP releases of Nations, UMLS, Kinship, FB15k-237, WN18RR...:
each split file lists the true (observed, value 1) triples only.  A file may instead give
a count in a 4th field on every line (``head<TAB>relation<TAB>tail<TAB>count``, an
integer >= 0) for count tensors.

The split files may also be the members of one archive (``.tar.gz``, ``.tgz``, ``.tar``,
``.zip``...), read without unpacking: :func:`read_triples_archive` (the ConvE release of
FB15k-237 is such an archive, ``FB15k-237.tar.gz``, with CRLF lines).
"""

from __future__ import annotations

import gzip
import itertools
import logging
import operator
import os
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from topiclink.data.checks import DataError, check_memory, where
from topiclink.data.io.rda import check_file, check_text, read_bytes
from topiclink.data.io.text import read_tar_member
from topiclink.data.tensor import RelationalTensor

__all__ = ["ARCHIVE_SUFFIXES", "is_archive", "read_triples", "read_triples_archive"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]
#: One split as parsed: heads, relations, tails, their line numbers, their counts (None:
#: all ones).
Parsed = tuple[list[str], list[str], list[str], list[int], list[float] | None]

#: Name endings of the archives :func:`read_triples` hands to :func:`read_triples_archive`.
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz",
                    ".txz")
#: Split names put first (in this order) when an archive's members are read by default.
_SPLIT_ORDER = ("train", "valid", "test")


def _count(text: str, path: str | Path, k: int) -> float:
    """The count of a 4th field: an integer >= 0 (one-line error naming ``file:line``)."""
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{where(path, k)}: count {text!r} (4th field) is not a "
                        "number") from None
    for bad, msg in ((np.isnan(value), "is missing (NaN)"),
                     (not np.isfinite(value), "is not finite"),
                     (value < 0, "is negative"), (value != np.round(value), "is not an integer")):
        if bad:
            raise DataError(f"{where(path, k)}: count {text!r} (4th field) {msg}; counts "
                            "are integers >= 0")
    return value


def _parse_plain(text: str, sep: str) -> Parsed | None:
    """The fast path of :func:`_parse_split`: every line (LF or CRLF ended, no blank line)
    holds exactly three non-empty fields.  None when any line does not (the line-by-line
    parser then finds and names the first problem).  Builds no object per line but the
    strings (no per-line lists for the garbage collector to walk)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            return None
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    n = len(rows)
    if not n:
        return None
    n_sep = list(map(operator.methodcaller("count", sep), rows))
    if min(n_sep) != 2 or max(n_sep) != 2:
        return None
    fields = list(map(str.strip, sep.join(rows).split(sep)))
    if "" in fields:
        return None
    return fields[0::3], fields[1::3], fields[2::3], list(range(1, n + 1)), None


def _parse_split(raw: bytes, path: str | Path, name: str, sep: str) -> Parsed:
    """The triples of one file's bytes (heads, relations, tails), their line numbers and
    their counts (None: a file of 3 fields a line, every triple a one).  Lines with count
    0 are dropped (logged).

    ``path`` names the file in errors (``path:line``; ``archive:member`` for a member of
    an archive), ``name`` in log lines.  CRLF line ends and a UTF-8 byte order mark are
    accepted.
    """
    check_text(raw, path)
    text = raw.decode("utf-8")
    text = text.removeprefix("\ufeff")  # a UTF-8 byte order mark is not part of the head
    fast = _parse_plain(text, sep)
    if fast is not None:
        return fast
    heads: list[str] = []
    rels: list[str] = []
    tails: list[str] = []
    lines: list[int] = []
    counts: list[float] = []
    n_fields: tuple[int, int] | None = None      # (fields, first line) of the file
    n_zero = 0
    for k, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        parts = line.split(sep)
        if len(parts) not in (3, 4):
            raise DataError(f"{where(path, k)}: expected 3 or 4 {sep!r}-separated fields "
                            f"(head, relation, tail[, count]), found {len(parts)}")
        if n_fields is None:
            n_fields = (len(parts), k)
        elif len(parts) != n_fields[0]:
            raise DataError(f"{where(path, k)}: {len(parts)} fields, but line {n_fields[1]} "
                            f"has {n_fields[0]} (a file gives a count on every line or on "
                            "none)")
        parts = [x.strip() for x in parts]
        for field, value in zip(("head", "relation", "tail", "count"), parts, strict=False):
            if not value:
                raise DataError(f"{where(path, k)}: empty {field}")
        count = _count(parts[3], path, k) if len(parts) == 4 else 1.0
        if count == 0:
            n_zero += 1
            continue
        heads.append(parts[0])
        rels.append(parts[1])
        tails.append(parts[2])
        lines.append(k)
        counts.append(count)
    if n_zero:
        logger.info("%s: dropped %d triples with count 0 (observed zeros)", name, n_zero)
    if not heads:
        raise DataError(f"{path}: no triples (the file is empty)" if not n_zero else
                        f"{path}: no triple with a count > 0")
    return heads, rels, tails, lines, (counts if n_fields is not None and n_fields[0] == 4
                                       else None)


def _read_split(path: Path, sep: str) -> Parsed:
    """:func:`_parse_split` of a file (gzip-compressed or not)."""
    return _parse_split(read_bytes(path), path, path.name, sep)


def is_archive(path: PathLike) -> bool:
    """Whether ``path`` names an archive of split files by its ending
    (:data:`ARCHIVE_SUFFIXES`, any case)."""
    name = Path(path).name.lower()
    return name.endswith(ARCHIVE_SUFFIXES)


def read_triples(paths: Mapping[str, PathLike] | Sequence[PathLike] | PathLike,
                 duplicates: Literal["error", "drop"] = "error",
                 sep: str = "\t") -> dict[str, RelationalTensor]:
    """Read triple files that share one entity and relation indexing.

    Parameters
    ----------
    paths : mapping split -> path, sequence of paths, or one path
        E.g. ``{"train": "train.txt", "valid": "valid.txt", "test": "test.txt"}``; a
        sequence uses each file's stem (``train`` for ``train.txt``) as its split name.
        Files may be gzip-compressed.  One archive (a path ending in one of
        :data:`ARCHIVE_SUFFIXES`, alone or as a one-element sequence) is read by
        :func:`read_triples_archive` with its default members.
    duplicates : {"error", "drop"}
        A triple repeated inside one split: raise naming both lines, or drop and log the
        count.  A triple found in two splits is kept in both and logged as a warning
        (it leaks held-out data into training).
    sep : str
        Field separator (TAB).

    Returns
    -------
    dict of str -> RelationalTensor
        One tensor per split (in the given order), all with the same ``n_entities``,
        ``n_relations``, ``entity_names`` and ``relation_names``: the sorted union of the
        names over all splits, so indices are deterministic.  An entity that occurs only
        in a held-out split keeps its index (the candidates of a ranking are all entities,
        as in LibKGE, PyKEEN and ConvE); the number of triples of each other split that
        mention an entity absent from split ``"train"`` is logged.  Listed triples have
        value 1; every other entry is an observed zero (``missing`` is empty; held-out
        protocols set it, see :meth:`RelationalTensor.hold_out`).  A file with a 4th
        field gives each triple that count instead of 1 (lines with count 0 are observed
        zeros: dropped and logged; a repeated triple keeps its first count with
        ``"drop"``).

    Raises
    ------
    DataError
        ``file:line`` of a line without three (or four) non-empty fields, of a line with
        a different number of fields than the file's first line, of a count that is not
        a number, NaN, infinite, negative or not an integer, or (policy ``"error"``) of a
        repeated triple.
    """
    if duplicates not in ("error", "drop"):
        raise ValueError(f"duplicates must be 'error' or 'drop', got {duplicates!r}")
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    if not isinstance(paths, Mapping):
        paths = list(paths)
        if len(paths) == 1 and is_archive(paths[0]):
            return read_triples_archive(paths[0], duplicates=duplicates, sep=sep)
    given = list(paths.values()) if isinstance(paths, Mapping) else paths
    for v in given:
        if is_archive(v):
            raise ValueError(f"{v} is an archive: pass it alone, or use "
                             "read_triples_archive(path, members=...)")
    if isinstance(paths, Mapping):
        items = [(str(k), check_file(v)) for k, v in paths.items()]
    else:
        items = [(Path(v).name.split(".")[0], check_file(v)) for v in paths]
        names = [k for k, _ in items]
        if len(set(names)) != len(names):
            raise ValueError(f"split names from file stems are not unique: {names}; "
                             f"pass a dict split -> path")
    if not items:
        raise ValueError("no triple files given")
    return _assemble([(split, p, p.name, _read_split(p, sep)) for split, p in items],
                     duplicates)


def _index(columns: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """(the sorted distinct names, the index of every name of the concatenated
    ``columns`` into them)."""
    names = sorted(set(itertools.chain.from_iterable(columns)))
    lookup = {x: i for i, x in enumerate(names)}
    n = sum(len(c) for c in columns)
    codes = np.fromiter(map(lookup.__getitem__, itertools.chain.from_iterable(columns)),
                        dtype=np.int64, count=n)
    return np.array(names), codes


def _assemble(parsed: list[tuple[str, str | Path, str, Parsed]],
              duplicates: Literal["error", "drop"]) -> dict[str, RelationalTensor]:
    """The tensors of parsed splits ``(split, path for errors, name for logs, parsed)``
    on one shared, sorted indexing (:func:`read_triples`)."""
    entities, e_codes = _index([x for *_, (h, _, t, _, _) in parsed for x in (h, t)])
    relations, r_codes = _index([r for *_, (_, r, _, _, _) in parsed])
    E, R = len(entities), len(relations)
    out: dict[str, RelationalTensor] = {}
    seen_keys: dict[str, np.ndarray] = {}
    e_at = r_at = 0
    for split, p, name, (heads, _, _, lines, counts) in parsed:
        n = len(heads)
        arr = np.column_stack([e_codes[e_at:e_at + n], r_codes[r_at:r_at + n],
                               e_codes[e_at + n:e_at + 2 * n]]).reshape(-1, 3)
        e_at, r_at = e_at + 2 * n, r_at + n
        ln = np.asarray(lines, dtype=np.int64)
        values = np.ones(arr.shape[0]) if counts is None else np.asarray(counts, np.float64)
        key = (arr[:, 1] * E + arr[:, 0]) * E + arr[:, 2]
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        if first.size < key.size:
            n_dup = key.size - first.size
            if duplicates == "error":
                dup = np.ones(key.size, dtype=bool)
                dup[first] = False
                r = int(np.flatnonzero(dup)[0])
                raise DataError(f"{where(str(p), int(ln[r]))}: repeats the triple of line "
                                f"{int(ln[first[inverse[r]]])}; {n_dup} repeated triples in "
                                f"all (duplicates='drop' removes them)")
            logger.info("%s: dropped %d duplicate triples", name, n_dup)
            keep = np.sort(first)
            arr, key, values = arr[keep], key[keep], values[keep]
        for other, okey in seen_keys.items():
            pos = np.minimum(np.searchsorted(okey, key), max(okey.size - 1, 0))
            n_shared = int(np.count_nonzero(okey[pos] == key)) if okey.size else 0
            if n_shared:
                logger.warning("%s: %d triples also appear in split %r", name, n_shared,
                               other)
        seen_keys[split] = np.sort(key)
        out[split] = RelationalTensor(arr[:, 0], arr[:, 1], arr[:, 2], values, E, R,
                                      entity_names=entities,
                                      relation_names=relations)
    _log_unseen(out, {split: name for split, _, name, _ in parsed})
    return out


def _log_unseen(tensors: Mapping[str, RelationalTensor], names: Mapping[str, str]) -> None:
    """Log, for every split but ``"train"``, how many triples mention an entity that
    ``"train"`` never mentions (they stay in the index: see :func:`read_triples`)."""
    train = tensors.get("train")
    if train is None:
        return
    seen = np.zeros(train.n_entities, dtype=bool)
    seen[train.heads] = True
    seen[train.tails] = True
    for split, t in tensors.items():
        if split == "train":
            continue
        unseen = ~(seen[t.heads] & seen[t.tails])
        n = int(unseen.sum())
        if n:
            n_ent = np.unique(np.concatenate([t.heads[~seen[t.heads]],
                                              t.tails[~seen[t.tails]]])).size
            logger.info("%s: %d of %d triples mention one of %d entities never in split "
                        "'train' (kept in the index: every entity is a candidate)",
                        names[split], n, t.n_entries, n_ent)


# ---------------------------------------------------------------------- archives
def _member_files(p: Path) -> tuple[list[str], Any, Callable[[str], bytes]]:
    """The regular-file member names of an archive (hidden files and ``__MACOSX``
    skipped, a leading ``./`` dropped), the open archive (to close) and a reader
    ``name -> bytes``."""
    def visible(name: str) -> bool:
        parts = name.split("/")
        return not any(x.startswith(".") or x == "__MACOSX" for x in parts if x)

    if zipfile.is_zipfile(p):
        zf = zipfile.ZipFile(p)
        infos = {i.filename: i for i in zf.infolist() if not i.is_dir()}

        def read_zip(name: str) -> bytes:
            check_memory(infos[name].file_size,
                         f"{p}:{name} ({infos[name].file_size} bytes)")
            return zf.read(infos[name])

        return [n for n in infos if visible(n)], zf, read_zip
    tar = tarfile.open(p, mode="r:*")
    members = {}
    try:
        for m in tar:
            name = m.name[2:] if m.name.startswith("./") else m.name
            if m.isfile() and visible(name):
                members[name] = m
    except BaseException:
        tar.close()
        raise

    def read_tar(name: str) -> bytes:
        member = members[name]
        check_memory(member.size, f"{p}:{name} ({member.size} bytes)")
        return read_tar_member(tar, member)

    return list(members), tar, read_tar


def _resolve(p: Path, wanted: str, names: list[str]) -> str:
    """The member called ``wanted``: its exact name, or the one member with that base
    name (``train.txt`` finds ``FB15k-237/train.txt``)."""
    if wanted in names:
        return wanted
    base = [n for n in names if n.rsplit("/", 1)[-1] == wanted]
    if len(base) == 1:
        return base[0]
    if len(base) > 1:
        raise DataError(f"{p}: {len(base)} members are called {wanted!r} ({', '.join(base)}); "
                        "give the full member name")
    shown = ", ".join(names[:10]) + (f", ... ({len(names)} in all)" if len(names) > 10 else "")
    raise DataError(f"{p}: no member {wanted!r} (members: {shown or 'none'})")


def read_triples_archive(path: PathLike,
                         members: Mapping[str, str] | Sequence[str] | None = None,
                         duplicates: Literal["error", "drop"] = "error",
                         sep: str = "\t") -> dict[str, RelationalTensor]:
    """Read the split files of one archive without unpacking it (:func:`read_triples`).

    Parameters
    ----------
    path : str or path-like
        A tar archive (plain, gzip, bzip2 or xz compressed: ``.tar.gz``, ``.tgz``...) or
        a zip archive (recognised by its content, not its name).
    members : mapping split -> member name, sequence of member names, or None
        The split files.  A name is a member's full name or, when one member alone has
        it, its base name.  A sequence uses each member's stem as its split name.  None:
        every ``*.txt`` member, split names from their stems, ``train``, ``valid``,
        ``test`` first (in that order), the others in archive order.
    duplicates, sep : as :func:`read_triples`

    Returns
    -------
    dict of str -> RelationalTensor
        As :func:`read_triples`.  Members may be gzip-compressed; CRLF line ends are
        read as LF.

    Raises
    ------
    DataError
        A file that is not a readable archive, a member that is missing or ambiguous, no
        ``*.txt`` member (``members=None``), or the errors of :func:`read_triples`, named
        ``archive:member:line``.
    """
    if duplicates not in ("error", "drop"):
        raise ValueError(f"duplicates must be 'error' or 'drop', got {duplicates!r}")
    p = check_file(path)
    try:
        names, handle, read = _member_files(p)
        with handle:
            if members is None:
                txt = [n for n in names if n.lower().endswith(".txt")]
                if not txt:
                    shown = ", ".join(names[:10]) or "none"
                    raise DataError(f"{p}: no .txt member (members: {shown})")
                rank = {s: i for i, s in enumerate(_SPLIT_ORDER)}
                stems = [n.rsplit("/", 1)[-1].split(".")[0] for n in txt]
                order = sorted(range(len(txt)),
                               key=lambda i: (rank.get(stems[i], len(rank)), i))
                chosen = [(stems[i], txt[i]) for i in order]
            elif isinstance(members, Mapping):
                chosen = [(str(k), _resolve(p, str(v), names)) for k, v in members.items()]
            else:
                if isinstance(members, str):
                    members = [members]
                chosen = [(m.rsplit("/", 1)[-1].split(".")[0], _resolve(p, str(m), names))
                          for m in members]
            splits = [k for k, _ in chosen]
            if not chosen:
                raise ValueError("no archive members given")
            if len(set(splits)) != len(splits):
                raise ValueError(f"split names are not unique: {splits} (members "
                                 f"{[m for _, m in chosen]}); pass a dict split -> member")
            raws = {name: read(name) for _, name in chosen}
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error,
            gzip.BadGzipFile, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DataError(f"{p}: not a readable tar or zip archive: {first}") from None
    parsed = []
    for split, name in chosen:
        raw = raws.pop(name)
        label = f"{p}:{name}"
        if raw[:2] == b"\x1f\x8b":
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError, zlib.error) as exc:
                raise DataError(f"{label}: corrupt gzip data: {exc}") from None
        parsed.append((split, label, f"{p.name}:{name}", _parse_split(raw, label,
                                                                       f"{p.name}:{name}",
                                                                       sep)))
    return _assemble(parsed, duplicates)
