"""Threads as an executor, and per-worker buffers that never share a cache line.

:class:`ThreadExecutor` is the one owner of a ``concurrent.futures`` thread pool in
topiclink.  Threads pay off where the tasks release the GIL (Numba ``nogil`` kernels,
the Polya-Gamma and inverse-Gaussian samplers, BLAS); they never change a chain, since
every task has its own slice of the output and its own random stream, and results are
merged in task order.

Workers that write neighbouring small arrays for every token (their RNG states, their
copies of the topic totals) share cache lines and slow each other down (false sharing:
it cost a third of the two-thread LDA throughput here); :func:`padded_rows` puts each
worker's row 128 bytes from the next.  It lives here because it is a property of how
threads share memory, not of any model: a Dask worker has its own copy anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from topiclink.execution.executor import Executor

__all__ = ["ThreadExecutor", "padded_rows"]


class ThreadExecutor(Executor):
    """A pool of ``n_workers`` threads named ``name_0``, ``name_1``, ... (``name`` starts
    with ``topiclink``), alive until :meth:`close` or the end of a ``with`` block."""

    def __init__(self, n_workers: int, *, name: str = "topiclink") -> None:
        super().__init__()
        if isinstance(n_workers, bool) or int(n_workers) < 1:
            raise ValueError(f"n_workers must be >= 1, got {n_workers!r}")
        if not name.startswith("topiclink"):
            raise ValueError(f"thread names start with 'topiclink', got {name!r}")
        self.n_workers = int(n_workers)
        self.name = name
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(
            self.n_workers, thread_name_prefix=name)

    def _live_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            raise RuntimeError(f"{self!r} is closed")
        return self._pool

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        future = self._live_pool().submit(fn, *args)
        self.tasks_run += 1
        return future

    def map(self, fn: Callable[..., Any], tasks: Iterable[Any],
            shared: Any = None) -> list[Any]:
        pool = self._live_pool()
        tasks = list(tasks)
        self.tasks_run += len(tasks)
        if shared is None:
            return list(pool.map(fn, tasks))
        return list(pool.map(lambda t: fn(t, shared), tasks))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __repr__(self) -> str:
        return f"ThreadExecutor(n_workers={self.n_workers}, name={self.name!r})"


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
