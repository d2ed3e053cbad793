"""The calling thread as an executor: every task runs at once, in task order."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any

from topiclink.execution.executor import Executor

__all__ = ["SerialExecutor"]


class SerialExecutor(Executor):
    """Runs each task on the calling thread when it is submitted (``n_workers = 1``)."""

    n_workers = 1

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        future: Future = Future()
        self.tasks_run += 1
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - delivered through the future
            future.set_exception(exc)
        return future

    def map(self, fn: Callable[..., Any], tasks: Iterable[Any],
            shared: Any = None) -> list[Any]:
        tasks = list(tasks)
        self.tasks_run += len(tasks)
        if shared is None:
            return [fn(t) for t in tasks]
        return [fn(t, shared) for t in tasks]

    def imap_ordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any],
                     max_in_flight: int | None = None) -> Iterator[Any]:
        """Lazily: each task runs when its result is asked for."""
        for t in tasks:
            self.tasks_run += 1
            yield fn(t)
