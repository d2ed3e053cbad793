"""Shard geometry: where the documents split into the fixed shards of a sharded sweep.

:func:`balanced_chunks` is a function of the data and the number of shards alone, never
of the executor.  That is why every executor (the calling thread, threads, Dask workers,
the shard files of :func:`topiclink.data.shards.write_shards`) gets the very same shards,
each with its own random stream, and so the same chain.  It lives in ``execution``
because the executors' task lists and the shard files are built from it (and the shard
files move here in a later step); it knows nothing about where the shards run, and it
imports numpy only, so kernels and data may use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Shards", "DEFAULT_SHARDS", "scheme_parts", "balanced_chunks", "compact_dtype",
           "count_delta"]

#: the document shards of a sharded scheme given by its name alone
DEFAULT_SHARDS = 2


@dataclass(frozen=True)
class Shards:
    """A sharded statistical scheme with its number of document shards: the ``scheme``
    parameter of an estimator (``LDA(scheme=Shards("adlda", n_shards=4))``; the name
    alone, ``scheme="adlda"``, is :data:`DEFAULT_SHARDS` shards).

    The shard count belongs to the scheme because it changes the chain (the shards are
    :func:`balanced_chunks` of the data, each with its own random stream); where the
    shards run (the ``executor``) never does.
    """

    scheme: str
    n_shards: int = DEFAULT_SHARDS

    def __post_init__(self) -> None:
        if not isinstance(self.scheme, str) or not self.scheme:
            raise ValueError(f"Shards: scheme must be a scheme's name, got {self.scheme!r}")
        n = self.n_shards
        if isinstance(n, bool | np.bool_) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"Shards: n_shards must be an integer >= 1, got {n!r}")
        object.__setattr__(self, "n_shards", int(n))

    def __repr__(self) -> str:
        return f"Shards({self.scheme!r}, n_shards={self.n_shards})"


def scheme_parts(scheme: str | Shards) -> tuple[str, int]:
    """``(name, n_shards)`` of a ``scheme`` value: a name (:data:`DEFAULT_SHARDS` shards,
    meaningful for a sharded scheme only) or a :class:`Shards`."""
    if isinstance(scheme, Shards):
        return scheme.scheme, scheme.n_shards
    return scheme, DEFAULT_SHARDS


def balanced_chunks(offsets: np.ndarray, n_chunks: int) -> np.ndarray:
    """Document boundaries splitting the tokens into ``n_chunks`` near-equal parts (the
    shards of every sharded sampler and of :func:`topiclink.data.shards.write_shards`)."""
    n_docs = offsets.shape[0] - 1
    n_chunks = max(1, min(n_chunks, n_docs))
    targets = np.linspace(0, offsets[-1], n_chunks + 1)
    bounds = np.searchsorted(offsets, targets[1:-1], side="left")
    return np.concatenate([[0], bounds, [n_docs]]).astype(np.int64)


def compact_dtype(values: np.ndarray) -> type:
    """The narrowest of int8 / int16 / int32 holding every value (exact)."""
    if values.size == 0:
        return np.int8
    top = max(int(values.max()), -int(values.min()))
    for dtype in (np.int8, np.int16):
        if top <= np.iinfo(dtype).max:
            return dtype
    return np.int32


def count_delta(after: np.ndarray, before: np.ndarray, rows: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """A shard's change of a count table (AD-LDA: it swept a private copy) as
    ``(row ids, their changes)``, only the ``rows`` it may touch (its words) and only those
    that changed, in the narrowest exact integer type (:func:`compact_dtype`); the merge
    adds them up, exact in any order."""
    diff = after[rows] - before[rows]
    changed = np.flatnonzero(diff.any(axis=1))
    values = np.ascontiguousarray(diff[changed])
    return rows[changed], values.astype(compact_dtype(values))
