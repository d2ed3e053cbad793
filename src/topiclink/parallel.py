"""Thread counts for the chunked (parallel) sweeps, and running fixed blocks in order."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

__all__ = ["resolve_n_jobs", "n_threads", "run_blocks_in_order", "balanced_chunks"]


def resolve_n_jobs(n_jobs: int | None) -> int:
    """``None``/``1`` -> 1; ``-1`` -> all cores; ``-k`` -> cores + 1 - k; else ``n_jobs``."""
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int):
        raise ValueError(f"n_jobs must be an integer, got {n_jobs!r}")
    cores = os.cpu_count() or 1
    if n_jobs == 0:
        raise ValueError("n_jobs must not be 0")
    if n_jobs < 0:
        return max(1, cores + 1 + n_jobs)
    return n_jobs


def n_threads(n_jobs: int) -> int:
    """Threads to run ``n_jobs`` chunks: at most one per core."""
    return max(1, min(n_jobs, os.cpu_count() or 1))


def run_blocks_in_order(run_block: Callable[[int], Any], n_blocks: int, n_threads: int,
                        merge: Callable[[Any], None]) -> None:
    """``merge(run_block(b))`` for b = 0, 1, ..., n_blocks - 1, merged in that order.

    With ``n_threads >= 2`` the blocks run on a thread pool (``run_block`` should release
    the GIL: a ``nogil`` Numba kernel), at most ``2 n_threads`` in flight so memory stays
    bounded; the merge order, hence any floating-point sum, never depends on the threads.
    """
    if n_threads <= 1 or n_blocks <= 1:
        for b in range(n_blocks):
            merge(run_block(b))
        return
    with ThreadPoolExecutor(max_workers=n_threads) as pool:
        pending: deque = deque()
        nxt = 0
        while nxt < n_blocks or pending:
            while nxt < n_blocks and len(pending) < 2 * n_threads:
                pending.append(pool.submit(run_block, nxt))
                nxt += 1
            merge(pending.popleft().result())


def balanced_chunks(offsets: np.ndarray, n_chunks: int) -> np.ndarray:
    """Document boundaries splitting the tokens into ``n_chunks`` near-equal parts (the
    shards of every sharded sampler and of :func:`topiclink.data.shards.write_shards`)."""
    n_docs = offsets.shape[0] - 1
    n_chunks = max(1, min(n_chunks, n_docs))
    targets = np.linspace(0, offsets[-1], n_chunks + 1)
    bounds = np.searchsorted(offsets, targets[1:-1], side="left")
    return np.concatenate([[0], bounds, [n_docs]]).astype(np.int64)
