"""The entries of a BPBFM sweep grouped by the entity they share on one side.

Relation r's rate ``u_i^T Lambda^r u_j`` is a dot product of the other entity's row with
``P = Lambda^r^T u_i`` (entries grouped by head i) or ``P = Lambda^r u_j`` (grouped by
tail j).  With the entries of a relation sorted by the entity of one side, ``P`` is
computed once per group (O(K^2)) and each entry costs O(K)
(:func:`topiclink.families.bpbfm.kernels.sweep_groups`).  A relation is grouped by the side
with fewer distinct entities among its entries (FB15k-237: 56,317 groups for 272,115
training triples; the paper protocol on UMLS: ~6,600 groups for ~96,000 entries, most of
them held-out cells).

The sweep's chunks (one random stream each, :func:`topiclink.families.bpbfm.algorithm.
chunked_counts`) are equal slices of the grouped order, and a group that straddles a
chunk boundary is split in two, so a chunk is a run of whole groups.  Everything here is
a function of the entries alone (never of the threads or workers), so the chain does not
depend on where the chunks run.

Also :func:`kept_on`, which keeps such an index on the data object it was built from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

__all__ = ["EntryGroups", "group_entries", "kept_on"]

T = TypeVar("T")


def kept_on(data: Any, name: str, build: Callable[[Any], T]) -> T:
    """``build(data)``, built once per data object and kept on it as attribute ``name``
    (indexes of the entries: the data never change during a fit)."""
    value = getattr(data, name, None)
    if value is None:
        value = build(data)
        setattr(data, name, value)
    return value


@dataclass
class EntryGroups:
    """Entries in grouped order (by relation, then the group's entity, then their order
    in the input) and the groups and chunks over them.

    Group g holds positions ``group_ptr[g]:group_ptr[g + 1]``: relation ``group_rel[g]``,
    entity ``group_entity[g]`` on the head side (``group_by_head[g]``) or the tail side;
    position p's entity on the other side is ``other[p]``, its kind and value ``kinds[p]``,
    ``values[p]``; ``order[p]`` its index in the input.  Chunk b is groups
    ``chunk_ptr[b]:chunk_ptr[b + 1]``.
    """

    order: np.ndarray          # int64 (E,)
    other: np.ndarray          # int32 (E,)
    kinds: np.ndarray          # int8 (E,)
    values: np.ndarray         # float64 (E,)
    group_ptr: np.ndarray      # int64 (G + 1,)
    group_entity: np.ndarray   # int32 (G,)
    group_rel: np.ndarray      # int32 (G,)
    group_by_head: np.ndarray  # bool (G,)
    chunk_ptr: np.ndarray      # int64 (n_chunks + 1,)

    @property
    def n_chunks(self) -> int:
        return int(self.chunk_ptr.size - 1)

    @property
    def n_groups(self) -> int:
        return int(self.group_entity.size)

    def kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """What :func:`~topiclink.families.bpbfm.kernels.sweep_groups` reads, in its
        order: (group_ptr, group_entity, group_rel, group_by_head, other, kinds, values)."""
        return (self.group_ptr, self.group_entity, self.group_rel, self.group_by_head,
                self.other, self.kinds, self.values)

    def heads_tails(self) -> tuple[np.ndarray, np.ndarray]:
        """(head, tail) of every position."""
        own = np.repeat(self.group_entity, np.diff(self.group_ptr))
        by_head = np.repeat(self.group_by_head, np.diff(self.group_ptr))
        return np.where(by_head, own, self.other), np.where(by_head, self.other, own)


def group_entries(entries: tuple[np.ndarray, ...], n_chunks: int,
                  side: str | None = None) -> EntryGroups:
    """Group ``entries = (heads, rels, tails, kinds, values)`` and cut them into
    ``n_chunks`` chunks of equal length (``numpy.linspace`` bounds).

    ``side``: None (each relation by the side with fewer distinct entities, head on a
    tie) or ``"head"`` / ``"tail"`` for every relation (tests).
    """
    if side not in (None, "head", "tail"):
        raise ValueError(f"side must be None, 'head' or 'tail', got {side!r}")
    heads, rels, tails, kinds, values = entries
    h = np.asarray(heads, dtype=np.int64)
    r = np.asarray(rels, dtype=np.int64)
    t = np.asarray(tails, dtype=np.int64)
    E = h.size
    bounds = np.linspace(0, E, n_chunks + 1).astype(np.int64)
    if E == 0:
        empty = np.zeros(0, np.int32)
        return EntryGroups(np.zeros(0, np.int64), empty, np.zeros(0, np.int8),
                           np.zeros(0), np.zeros(1, np.int64), empty, empty,
                           np.zeros(0, bool), np.zeros(n_chunks + 1, np.int64))
    R = int(r.max()) + 1
    N = int(max(h.max(), t.max())) + 1
    if side is None:
        def distinct(x: np.ndarray) -> np.ndarray:
            return np.bincount(np.unique(r * N + x) // N, minlength=R)

        rel_by_head = distinct(h) <= distinct(t)
    else:
        rel_by_head = np.full(R, side == "head")
    by_head = rel_by_head[r]
    own = np.where(by_head, h, t)
    other = np.where(by_head, t, h)
    order = np.lexsort((own, r))                # stable: ties keep the input order
    r_s, own_s = r[order], own[order]
    new = np.ones(E, dtype=bool)
    new[1:] = (r_s[1:] != r_s[:-1]) | (own_s[1:] != own_s[:-1])
    new[bounds[:-1][bounds[:-1] < E]] = True    # chunks hold whole groups
    starts = np.flatnonzero(new)
    return EntryGroups(
        order=order.astype(np.int64),
        other=other[order].astype(np.int32),
        kinds=np.ascontiguousarray(np.asarray(kinds)[order], dtype=np.int8),
        values=np.ascontiguousarray(np.asarray(values, dtype=np.float64)[order]),
        group_ptr=np.append(starts, E).astype(np.int64),
        group_entity=own_s[starts].astype(np.int32),
        group_rel=r_s[starts].astype(np.int32),
        group_by_head=by_head[order][starts],
        chunk_ptr=np.searchsorted(starts, bounds).astype(np.int64))
