"""The executor contract: run tasks somewhere, give their results back in task order.

An :class:`Executor` is where an iteration's independent pieces run (the calling thread,
a thread pool, a Dask cluster); it never decides *what* they compute.  Every
sampler in topiclink keeps its chain independent of the executor: the tasks are fixed by
the data and the number of shards (each with its own random stream), and their results
are merged in task order, so serial, threads and Dask give the same arrays, bit for
bit.

This module knows no subclass: turning what a user passes (``None``, a thread count, a
Dask client or scheduler address) into an executor is :mod:`topiclink.execution.resolve`.
"""

from __future__ import annotations

import abc
import contextlib
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any

__all__ = ["Executor", "resolve_n_jobs", "n_threads", "payload_counters", "with_payload"]

class Executor(abc.ABC):
    """Runs tasks and returns their results in task order.

    Subclasses implement :meth:`submit` (and may override :meth:`map` /
    :meth:`imap_ordered` for speed).  An executor is a context manager: leaving the
    ``with`` block (or :meth:`close`) releases its workers; one that was handed to
    :func:`~topiclink.execution.resolve.open_executor` is borrowed and stays open.

    Attributes
    ----------
    n_workers : how many tasks may run at once (1 for the serial executor)
    tasks_run : tasks submitted so far
    bytes_sent, bytes_received : bytes shipped to and from workers (stay 0 in process:
        threads share memory, nothing is copied; a Dask executor counts its transfers)
    bytes_peer : bytes handed from worker to worker by :meth:`step_kept_chained` (0 in
        process)
    chained_seconds : (seconds of round one, further seconds of round two) of the last
        :meth:`step_kept_chained`
    """

    n_workers: int = 1
    #: whether tasks and results travel to other processes (Dask): a family then sends
    #: compact, self-contained tasks rather than views into shared arrays
    ships_data: bool = False

    def __init__(self) -> None:
        self.tasks_run = 0
        self.bytes_sent = 0
        self.bytes_received = 0
        self.bytes_peer = 0
        self.chained_seconds = (0.0, 0.0)
        self.replicas: dict[str, Any] = {}
        self.kept: dict[str, list[Any]] = {}
        self.kept_statics: dict[str, list[Any]] = {}

    # ------------------------------------------------------------------ running tasks
    @abc.abstractmethod
    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future:
        """Start ``fn(*args)``; its result (or exception) through the returned future."""

    def map(self, fn: Callable[..., Any], tasks: Iterable[Any],
            shared: Any = None) -> list[Any]:
        """``[fn(t) for t in tasks]`` (or ``fn(t, shared)`` when ``shared`` is not None),
        computed here or on the workers, returned in task order.  ``shared``: data every
        task reads (sent once per call by executors that ship data; passed as is in
        process).  The first exception raised by a task is raised here."""
        call = fn if shared is None else (lambda t: fn(t, shared))
        futures = [self.submit(call, t) for t in tasks]
        return [f.result() for f in futures]

    def imap_ordered(self, fn: Callable[[Any], Any], tasks: Iterable[Any],
                     max_in_flight: int | None = None) -> Iterator[Any]:
        """``fn(t)`` of every task, yielded in task order as soon as each (and those
        before it) is done, with at most ``max_in_flight`` (default ``2 n_workers``)
        tasks started and not yet yielded, so memory stays bounded.  What the caller does
        with a result (a merge) therefore always happens in task order."""
        limit = max(1, 2 * self.n_workers if max_in_flight is None else int(max_in_flight))
        pending: deque[Future] = deque()
        it = iter(tasks)
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < limit:
                    try:
                        task = next(it)
                    except StopIteration:
                        exhausted = True
                        break
                    pending.append(self.submit(fn, task))
                if not pending:
                    return
                yield pending.popleft().result()
        finally:
            for f in pending:
                f.cancel()

    # ------------------------------------------------------------------ data kept by workers
    def replicate(self, key: str, value: Any) -> None:
        """Every worker keeps ``value`` under ``key`` for the session, for
        :meth:`map_with` to read (in process: the value itself, nothing is copied; an
        executor that ships data sends it once to each worker)."""
        self.replicas[key] = value

    def update_replica(self, key: str, fn: Callable[..., Any], *args: Any) -> None:
        """Every copy of ``key`` becomes ``fn(copy, *args)`` (``fn`` returns a new value
        and leaves its input alone): only ``args`` travel, not the whole value."""
        self.replicas[key] = fn(self.replicas[key], *args)

    def replica(self, key: str) -> Any:
        """The driver's copy of ``key`` (what every worker holds), or None."""
        return self.replicas.get(key)

    def map_with(self, fn: Callable[..., Any], tasks: Iterable[Any],
                 keys: tuple[str, ...]) -> list[Any]:
        """``[fn(t, *replicas) for t in tasks]``, the replicas of ``keys`` read where the
        task runs; results in task order."""
        values = [self.replicas[k] for k in keys]
        return self.map(lambda t: fn(t, *values), tasks)

    # ------------------------------------------------------------------ state kept by shards
    def keep(self, key: str, states: list[Any], statics: list[Any] | None = None) -> None:
        """Shard i's state stays with shard i (on a Dask worker: the worker running its
        tasks) until :meth:`drop`; :meth:`step_kept` advances every shard's state.
        ``statics``: per shard, read-only data its rounds need (its documents, say), sent
        once and never fetched back."""
        statics = [None] * len(states) if statics is None else list(statics)
        if len(statics) != len(states):
            raise ValueError(f"keep: {len(statics)} statics for {len(states)} shards")
        self.kept[key] = list(states)
        self.kept_statics[key] = statics

    def step_kept(self, key: str, fn: Callable[..., tuple[Any, Any]], shared: Any = None,
                  args: list[Any] | None = None) -> list[Any]:
        """One round: ``(state_i, out_i) = fn(state_i, shared, args_i, static_i)`` for
        every shard i (``fn`` pure: it returns a new state and leaves its inputs alone);
        the new states stay with their shards and the outputs come back in shard order.
        ``shared`` and ``args`` must not change afterwards: an executor that can lose a
        shard keeps them to replay the round."""
        states, statics = self.kept[key], self.kept_statics[key]
        args = [None] * len(states) if args is None else list(args)
        if len(args) != len(states):
            raise ValueError(f"step_kept: {len(args)} arguments for {len(states)} shards")
        pairs = self.map(lambda i: fn(states[i], shared, args[i], statics[i]),
                         range(len(states)))
        self.kept[key] = [p[0] for p in pairs]
        return [p[1] for p in pairs]

    def step_kept_chained(self, key: str, first: Callable[..., tuple[Any, Any]],
                          second: Callable[..., tuple[Any, Any]],
                          hand_over: Callable[[Any], Any], shared: Any = None,
                          args: list[Any] | None = None) -> tuple[list[Any], list[Any]]:
        """Two rounds in which every shard's second round reads what every shard's first
        round handed over: ``(state_i, first_i) = first(state_i, shared, args_i,
        static_i)``, ``hands = (hand_over(first_0), ..., hand_over(first_{n-1}))``, then
        ``(state_i, second_i) = second(state_i, shared, hands, static_i)``.  ``first``,
        ``second`` and ``hand_over`` are pure; the new states stay with their shards and
        both rounds' outputs come back in shard order.  An executor that ships data
        hands the (small) ``hand_over`` values from worker to worker, not through here;
        :attr:`chained_seconds` says how long each round took."""
        states, statics = self.kept[key], self.kept_statics[key]
        n = len(states)
        args = [None] * n if args is None else list(args)
        if len(args) != n:
            raise ValueError(f"step_kept_chained: {len(args)} arguments for {n} shards")
        t0 = time.perf_counter()
        ones = self.map(lambda i: first(states[i], shared, args[i], statics[i]), range(n))
        t1 = time.perf_counter()
        hands = tuple(hand_over(p[1]) for p in ones)
        twos = self.map(lambda i: second(ones[i][0], shared, hands, statics[i]), range(n))
        self.chained_seconds = (t1 - t0, time.perf_counter() - t1)
        self.kept[key] = [p[0] for p in twos]
        return [p[1] for p in ones], [p[1] for p in twos]

    def fetch(self, key: str) -> list[Any]:
        """The shards' states, in shard order, here (a Dask executor gathers them)."""
        return list(self.kept[key])

    def drop(self, key: str) -> None:
        """Forget the shards' states."""
        self.kept.pop(key, None)
        self.kept_statics.pop(key, None)

    # ------------------------------------------------------------------ lifetime
    @contextlib.contextmanager
    def session(self) -> Iterator[Executor]:
        """Resources held for one run (a Dask executor connects); a no-op here."""
        yield self

    def close(self) -> None:
        """Release the workers (nothing to release by default)."""
        return None

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_workers={self.n_workers})"


# ---------------------------------------------------------------------- payload counters
def payload_counters(executor: Executor | None) -> tuple[int, int]:
    """(bytes sent, bytes received) of an executor that ships data; (0, 0) otherwise."""
    if executor is None or not executor.ships_data:
        return 0, 0
    return int(executor.bytes_sent), int(executor.bytes_received)


def with_payload(info: dict[str, float], executor: Executor | None,
                 before: tuple[int, int]) -> dict[str, float]:
    """``info`` with ``bytes_sent`` / ``bytes_received`` moved since ``before`` (a
    :func:`payload_counters` reading), only when the executor ships data."""
    if executor is not None and executor.ships_data:
        sent, received = payload_counters(executor)
        info["bytes_sent"] = float(sent - before[0])
        info["bytes_received"] = float(received - before[1])
    return info


# ---------------------------------------------------------------------- worker counts
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
