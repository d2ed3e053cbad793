"""Knowledge-graph triple files (``head<TAB>relation<TAB>tail`` per line).

The format of the ConvE / NTP releases of Nations, UMLS, Kinship, FB15k-237, WN18RR...:
each split file lists the true (observed, value 1) triples only.  A file may instead give
a count in a 4th field on every line (``head<TAB>relation<TAB>tail<TAB>count``, an
integer >= 0) for count tensors.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from topiclink.data.checks import DataError, where
from topiclink.data.io.rda import check_file, check_text, read_bytes
from topiclink.data.tensor import RelationalTensor

__all__ = ["read_triples"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


def _count(text: str, path: Path, k: int) -> float:
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


def _read_split(path: Path, sep: str
                ) -> tuple[list[tuple[str, str, str]], list[int], list[float] | None]:
    """The triples of one file, their line numbers and their counts (None: a file of 3
    fields a line, every triple a one).  Lines with count 0 are dropped (logged)."""
    raw = read_bytes(path)
    check_text(raw, path)
    text = raw.decode("utf-8")
    text = text.removeprefix("\ufeff")  # a UTF-8 byte order mark is not part of the head
    triples: list[tuple[str, str, str]] = []
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
        for name, value in zip(("head", "relation", "tail", "count"), parts, strict=False):
            if not value:
                raise DataError(f"{where(path, k)}: empty {name}")
        count = _count(parts[3], path, k) if len(parts) == 4 else 1.0
        if count == 0:
            n_zero += 1
            continue
        triples.append((parts[0], parts[1], parts[2]))
        lines.append(k)
        counts.append(count)
    if n_zero:
        logger.info("%s: dropped %d triples with count 0 (observed zeros)", path.name, n_zero)
    if not triples:
        raise DataError(f"{path}: no triples (the file is empty)" if not n_zero else
                        f"{path}: no triple with a count > 0")
    return triples, lines, (counts if n_fields is not None and n_fields[0] == 4 else None)


def read_triples(paths: Mapping[str, PathLike] | Sequence[PathLike],
                 duplicates: Literal["error", "drop"] = "error",
                 sep: str = "\t") -> dict[str, RelationalTensor]:
    """Read triple files that share one entity and relation indexing.

    Parameters
    ----------
    paths : mapping split -> path, or sequence of paths
        E.g. ``{"train": "train.txt", "valid": "valid.txt", "test": "test.txt"}``; a
        sequence uses each file's stem (``train`` for ``train.txt``) as its split name.
        Files may be gzip-compressed.
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
        names over all splits, so indices are deterministic.  Listed triples have value 1;
        every other entry is an observed zero (``missing`` is empty; held-out protocols
        set it, see :meth:`RelationalTensor.hold_out`).  A file with a 4th field gives
        each triple that count instead of 1 (lines with count 0 are observed zeros:
        dropped and logged; a repeated triple keeps its first count with ``"drop"``).

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
    raw = {split: _read_split(p, sep) for split, p in items}
    entities = np.array(sorted({x for t, _, _ in raw.values() for h, _, tl in t
                                for x in (h, tl)}))
    relations = np.array(sorted({r for t, _, _ in raw.values() for _, r, _ in t}))
    e_index = {e: i for i, e in enumerate(entities.tolist())}
    r_index = {r: i for i, r in enumerate(relations.tolist())}
    E, R = len(entities), len(relations)
    out: dict[str, RelationalTensor] = {}
    seen_keys: dict[str, np.ndarray] = {}
    for split, p in items:
        triples, lines, counts = raw[split]
        arr = np.array([(e_index[h], r_index[r], e_index[t]) for h, r, t in triples],
                       dtype=np.int64).reshape(-1, 3)
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
                raise DataError(f"{where(p, int(ln[r]))}: repeats the triple of line "
                                f"{int(ln[first[inverse[r]]])}; {n_dup} repeated triples in "
                                f"all (duplicates='drop' removes them)")
            logger.info("%s: dropped %d duplicate triples", p.name, n_dup)
            keep = np.sort(first)
            arr, key, values = arr[keep], key[keep], values[keep]
        for other, okey in seen_keys.items():
            n_shared = int(np.isin(key, okey).sum())
            if n_shared:
                logger.warning("%s: %d triples also appear in split %r", p.name, n_shared,
                               other)
        seen_keys[split] = key
        out[split] = RelationalTensor(arr[:, 0], arr[:, 1], arr[:, 2], values, E, R,
                                      entity_names=entities,
                                      relation_names=relations)
    return out
