"""What the threaded sweepers share: an executor for a fit (threads from
:mod:`topiclink.execution`), and per-worker buffers that never share a cache line
(:func:`topiclink.execution.padded_rows`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from topiclink.execution import Executor, resolve_executor

__all__ = ["ThreadedSweeper"]


class ThreadedSweeper:
    """A context manager owning an executor of ``n_threads`` threads (the calling thread
    for one)."""

    def __init__(self, states: np.ndarray, n_threads: int) -> None:
        self.states = states
        self.n_threads = max(1, int(n_threads))
        self._executor: Executor | None = None

    def __enter__(self) -> Any:
        self._executor = resolve_executor(self.n_threads)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._executor is not None:
            self._executor.close()
            self._executor = None

    def run_all(self, task: Callable[[int], None], n_tasks: int) -> None:
        """``task(i)`` for i < n_tasks, on the threads when there are several (the tasks
        must touch disjoint data: the result never depends on the number of threads)."""
        if self._executor is None:
            for i in range(n_tasks):
                task(i)
        else:
            self._executor.map(task, range(n_tasks))
