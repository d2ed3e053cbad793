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

import numpy as np

__all__ = ["balanced_chunks"]


def balanced_chunks(offsets: np.ndarray, n_chunks: int) -> np.ndarray:
    """Document boundaries splitting the tokens into ``n_chunks`` near-equal parts (the
    shards of every sharded sampler and of :func:`topiclink.data.shards.write_shards`)."""
    n_docs = offsets.shape[0] - 1
    n_chunks = max(1, min(n_chunks, n_docs))
    targets = np.linspace(0, offsets[-1], n_chunks + 1)
    bounds = np.searchsorted(offsets, targets[1:-1], side="left")
    return np.concatenate([[0], bounds, [n_docs]]).astype(np.int64)
