"""What the threaded sweepers share: a thread pool for a fit, and per-worker buffers that
never share a cache line.

Workers that write neighbouring small arrays for every token (their RNG states, their
copies of the topic totals) share cache lines and slow each other down (false sharing:
it cost a third of the two-thread LDA throughput here); :func:`padded_rows` puts each
worker's row 128 bytes from the next.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

__all__ = ["ThreadedSweeper", "padded_rows"]


def padded_rows(rows: np.ndarray) -> np.ndarray:
    """A copy of the (P, n) array ``rows`` whose rows lie at least 128 bytes apart (each
    ``out[i]`` is a view into a private line-aligned stretch); copy results back after the
    threads are done."""
    P, n = rows.shape
    per_line = 64 // rows.itemsize
    stride = n + (-n) % per_line + 2 * per_line
    out = np.zeros((P, stride), dtype=rows.dtype)[:, :n]
    out[:] = rows
    return out


class ThreadedSweeper:
    """A context manager owning a thread pool of ``n_threads`` (none for one thread)."""

    def __init__(self, states: np.ndarray, n_threads: int) -> None:
        self.states = states
        self.n_threads = max(1, int(n_threads))
        self._pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> Any:
        if self.n_threads > 1:
            self._pool = ThreadPoolExecutor(self.n_threads, thread_name_prefix="topiclink")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def run_all(self, task: Callable[[int], None], n_tasks: int) -> None:
        """``task(i)`` for i < n_tasks, on the pool when there is one (the tasks must touch
        disjoint data: the result never depends on the number of threads)."""
        if self._pool is None:
            for i in range(n_tasks):
                task(i)
        else:
            list(self._pool.map(task, range(n_tasks)))
