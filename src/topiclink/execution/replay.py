"""The compact log of the broadcasts a kept-shard executor replays after a lost worker.

:class:`~topiclink.execution.DaskExecutor` rebuilds a lost shard from its recovery point
by replaying the rounds since, each with the ``shared`` value that was broadcast for it.
Those values are often large and change little from one round to the next (AD-LDA and
Gibbs-gRTM broadcast the whole V x K word-topic counts, of which a sweep moves only the
tokens it resampled), so :class:`SharedLog` holds the latest one as given and each earlier
one as its difference from the next (:func:`difference`): only the entries that changed.
:func:`rounds` rebuilds every logged value exactly, bit for bit, on the worker that
replays.

Generic: the values are nested tuples / lists of numpy arrays and anything else; two
C-contiguous arrays of the same type, shape and dtype at the same place of consecutive
values are stored as the flat positions that differ (ids, or a bit mask when most
differ; integers up to 32 bits as the exact
changes in the narrowest integer type, any other dtype as the old and new bits) when that
is smaller than the array; everything else is kept as it was given.  Imports numpy only.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from topiclink.execution.shards import compact_dtype

__all__ = ["SharedLog", "difference", "restore", "rounds", "held_bytes"]

def _patchable(new: Any, old: Any) -> bool:
    return (type(new) is np.ndarray and type(old) is np.ndarray
            and new.shape == old.shape and new.dtype == old.dtype
            and new.flags.c_contiguous and old.flags.c_contiguous
            and not new.dtype.hasobject and new.dtype.itemsize in (1, 2, 4, 8)
            and new.dtype.fields is None)


def _positions(changed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The flat positions where ``changed``, and how they are stored: as int32 / int64
    ids, or as a bit mask (uint8, :func:`numpy.packbits`) when that is smaller."""
    idx = np.flatnonzero(changed)
    if changed.size < 2**31:
        idx = idx.astype(np.int32)
    if idx.nbytes > (changed.size + 7) // 8:
        return idx, np.packbits(changed)
    return idx, idx


def _where(stored: np.ndarray, size: int) -> np.ndarray:
    """The flat positions from what :func:`_positions` stored."""
    if stored.dtype == np.uint8:
        return np.flatnonzero(np.unpackbits(stored, count=size))
    return stored


def difference(new: Any, old: Any) -> tuple:
    """How ``old`` (a round's value) is had from ``new`` (the next round's) and back:
    ``("add", positions, old - new)`` for integer arrays (positions: int ids, or a
    packed uint8 bit mask when smaller), ``("put", positions, old bits,
    new bits)`` for other arrays (either only when smaller than ``old``),
    ``("seq", type, parts)`` for tuples / lists of the same length, else
    ``("full", old, new)`` (references, no copies)."""
    if type(new) in (tuple, list) and type(new) is type(old) and len(new) == len(old):
        return ("seq", type(old), [difference(n, o) for n, o in zip(new, old, strict=True)])
    if _patchable(new, old):
        flat_new, flat_old = new.reshape(-1), old.reshape(-1)
        if new.dtype.kind in "iu" and new.dtype.itemsize <= 4:   # int64 holds the change
            idx, stored = _positions(flat_new != flat_old)
            d = flat_old[idx].astype(np.int64) - flat_new[idx]
            diff: tuple = ("add", stored, d.astype(compact_dtype(d)))
        else:
            bits = np.dtype(f"u{new.dtype.itemsize}")
            idx, stored = _positions(flat_new.view(bits) != flat_old.view(bits))
            diff = ("put", stored, flat_old[idx], flat_new[idx])
        if sum(a.nbytes for a in diff[1:]) < old.nbytes:      # else most entries changed
            return diff
    return ("full", old, new)


def restore(value: Any, diff: tuple, backward: bool) -> Any:
    """The value one round before (``backward``) or after the round of ``value``, from
    their :func:`difference`: a new value, ``value`` is left alone."""
    kind = diff[0]
    if kind == "seq":
        return diff[1](restore(v, d, backward) for v, d in zip(value, diff[2], strict=True))
    if kind == "full":
        return diff[1] if backward else diff[2]
    out = value.copy()
    flat = out.reshape(-1)
    idx = _where(diff[1], out.size)
    if kind == "add":
        change = diff[2].astype(np.int64)
        flat[idx] = (flat[idx].astype(np.int64) + (change if backward else -change)
                     ).astype(out.dtype)
    else:
        flat[idx] = diff[2] if backward else diff[3]
    return out


class SharedLog:
    """The values broadcast for the rounds since a recovery point: the latest as given
    (a reference: the caller must not change it afterwards), each earlier one as its
    :func:`difference` from the next.  :attr:`packed` is what a worker replays from
    (:func:`rounds`)."""

    def __init__(self) -> None:
        self.latest: Any = None
        self.back: list[tuple] = []         # back[i]: round i from round i + 1
        self.n_rounds = 0

    def append(self, shared: Any) -> None:
        if self.n_rounds:
            self.back.append(difference(shared, self.latest))
        self.latest = shared
        self.n_rounds += 1

    @property
    def packed(self) -> tuple[Any, list[tuple], int]:
        return self.latest, self.back, self.n_rounds

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays it holds (each array once)."""
        return held_bytes((self.latest, self.back))


def rounds(packed: tuple[Any, list[tuple], int]) -> Iterator[Any]:
    """Every logged value of a :attr:`SharedLog.packed`, oldest first, exactly as given
    (two passes over the differences: back to the oldest, then forward)."""
    latest, back, n = packed
    if not n:
        return
    value = latest
    for diff in reversed(back):
        value = restore(value, diff, backward=True)
    yield value
    for diff in back:
        value = restore(value, diff, backward=False)
        yield value


def held_bytes(value: Any, seen: set[int] | None = None) -> int:
    """Bytes of the numpy arrays in nested tuples / lists / dicts, each array once (a
    view counts its own bytes)."""
    seen = set() if seen is None else seen
    if isinstance(value, np.ndarray):
        if id(value) in seen:
            return 0
        seen.add(id(value))
        return int(value.nbytes)
    if isinstance(value, tuple | list):
        return sum(held_bytes(v, seen) for v in value)
    if isinstance(value, dict):
        return sum(held_bytes(v, seen) for v in value.values())
    return 0
