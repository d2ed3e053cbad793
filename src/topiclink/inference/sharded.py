"""A sharded Gibbs iteration declared by its pieces and run on any executor.

The shape of ``docs/design/architecture.md`` ("execution written once"): a family
whose iteration splits over document shards declares

- :meth:`ShardedAlgorithm.split` ``(state, data) -> (shard states, statics)``: each shard's
  part of the state (its assignments and its own random stream) and its fixed data,
  fixed by the data and ``n_shards`` (never by the executor);
- :meth:`ShardedAlgorithm.shared` ``(state, data)``: what every shard reads this round
  (fresh copies: a Dask executor keeps it to replay the round after a lost worker);
- a pure, module-level ``local(shard_state, shared, arg, static) -> (new shard state,
  report)`` (:attr:`ShardedAlgorithm.local`), run where the executor runs it;
- :meth:`ShardedAlgorithm.merge` ``(state, data, reports) -> info``: the reports folded
  into the global counts **in shard order**, so the chain is the same on any executor;
- :meth:`ShardedAlgorithm.write_back` ``(state, data, shard states)``: the shards' parts
  written into ``state`` (at the end of a run, before a checkpoint, when a callback
  reads the state);
- optionally :meth:`ShardedAlgorithm.global_step` ``(state, data) -> info``: draws on the
  driver before the shards run (regression weights, hyper-parameters).

This class runs them: the executor of the run (``executor``: an
:class:`~topiclink.execution.Executor` borrowed for the run, e.g. a ``DaskExecutor``; None:
``n_threads`` threads of this process), the shard states kept with the executor between
iterations (:meth:`~topiclink.execution.Executor.keep`, ``step_kept``; on Dask they stay on
their workers and a lost worker is rebuilt by replay), and :meth:`sync`.  The chain depends
on the seed and ``n_shards`` only.  ``tests/examples/dmm/algorithm.py`` (``ShardedDMM``)
is the worked example: a family's sharded step in one file.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from topiclink.execution import Executor, resolve_executor
from topiclink.inference.engine import Algorithm

__all__ = ["ShardedAlgorithm", "kept_shards_run"]

logger = logging.getLogger(__name__)


@contextlib.contextmanager
def kept_shards_run(algorithm: Any, state: Any, n_tasks: int, key: str, *, name: str,
                    sync_after_failure: bool = False) -> Iterator[Executor]:
    """The executor of one run of a kept-shards algorithm (``algorithm.executor``,
    borrowed; None: an own pool of at most ``min(algorithm.n_threads, n_tasks)`` threads,
    closed on leaving), set as ``algorithm._ex``.  On leaving, ``algorithm.sync(state)``
    writes the shards back (after a failure only with ``sync_after_failure``, and then a
    failing sync is logged, not raised, so the first error stands) and the executor
    drops the kept shards ``key``."""
    own = algorithm.executor is None
    ex = resolve_executor(min(algorithm.n_threads, n_tasks) if own else algorithm.executor,
                          name=name)
    failed = False
    try:
        with ex.session():
            algorithm._ex = ex
            try:
                yield ex
            except BaseException:
                failed = True
                raise
            finally:
                try:
                    if not failed or sync_after_failure:
                        algorithm.sync(state)
                except Exception:
                    if not failed:
                        raise
                    logger.warning("%s: could not fetch the shards after an error; the "
                                   "state is that of the last sync", type(algorithm).__name__)
                finally:
                    ex.drop(key)
    finally:
        if own:
            ex.close()


class ShardedAlgorithm(Algorithm):
    """Base of an algorithm whose iteration is global step -> local step on every shard
    (kept with the executor) -> merge in shard order (see the module docstring)."""

    #: the pure, picklable local step ``(shard_state, shared, arg, static) -> (new, report)``
    local: Callable[..., tuple[Any, Any]]
    #: the executor's key of this algorithm's kept shards
    kept_key = "topiclink-sharded"
    #: trace keys of the seconds spent in :meth:`global_step` and in the shards' round
    global_seconds_key = "seconds_global"
    local_seconds_key = "seconds_local"

    def __init__(self, n_shards: int, executor: Executor | None = None,
                 n_threads: int = 1) -> None:
        if n_shards < 1:
            raise ValueError(f"n_shards must be >= 1, got {n_shards}")
        self.n_shards = int(n_shards)
        self.executor = executor
        self.n_threads = max(1, int(n_threads))
        self._ex: Executor | None = None
        self._loaded: tuple[Any, Any] | None = None
        self._fresh = True

    # ------------------------------------------------------------------ the family's
    def split(self, state: Any, data: Any) -> tuple[list[Any], list[Any]]:
        raise NotImplementedError

    def shared(self, state: Any, data: Any) -> Any:
        raise NotImplementedError

    def args(self, state: Any, data: Any) -> list[Any] | None:
        """Per-shard arguments of this round (default: none)."""
        return None

    def n_tasks(self, state: Any) -> int:
        """How many kept shard states :meth:`split` makes (default ``n_shards``; e.g.
        chains x shards); the threads of an own executor are at most this many."""
        return self.n_shards

    def merge(self, state: Any, data: Any, reports: list[Any]) -> dict[str, float]:
        raise NotImplementedError

    def write_back(self, state: Any, data: Any, shard_states: list[Any]) -> None:
        raise NotImplementedError

    def global_step(self, state: Any, data: Any) -> dict[str, float]:
        return {}

    # ------------------------------------------------------------------ the run
    @contextlib.contextmanager
    def session(self, state: Any, data: Any) -> Iterator[None]:
        """The run's executor; the shards are handed out by the first :meth:`step` and
        written back into ``state`` on leaving (not after a failure)."""
        try:
            with kept_shards_run(self, state, self.n_tasks(state), self.kept_key,
                                 name="topiclink-sharded"):
                yield
        finally:
            self._ex, self._loaded, self._fresh = None, None, True

    def step(self, state: Any, data: Any) -> dict[str, float]:
        """One iteration: :meth:`global_step`, the local step on every shard, :meth:`merge`
        (a session is opened for a lone call)."""
        if self._ex is None:
            with self.session(state, data):
                return self.step(state, data)
        if self._loaded is None:
            shard_states, statics = self.split(state, data)
            n = self.n_tasks(state)
            if len(shard_states) != n or len(statics) != n:
                raise ValueError(f"{type(self).__name__}.split returned "
                                 f"{len(shard_states)} shards, not {n}")
            self._ex.keep(self.kept_key, shard_states, statics)
            self._loaded = (state, data)
        elif self._loaded[0] is not state or self._loaded[1] is not data:
            raise ValueError(f"{type(self).__name__}: step the same state and data within a "
                             "session")
        t0 = time.perf_counter()
        info = dict(self.global_step(state, data))
        t1 = time.perf_counter()
        reports = self._ex.step_kept(self.kept_key, type(self).local,
                                     self.shared(state, data), self.args(state, data))
        t2 = time.perf_counter()
        info.update(self.merge(state, data, reports))
        info[self.global_seconds_key] = t1 - t0
        info[self.local_seconds_key] = t2 - t1
        self._fresh = False
        return info

    def sync(self, state: Any) -> None:
        """Write the shards' parts into ``state`` (a no-op outside a session or when they
        are there already)."""
        if self._loaded is None or self._fresh or self._ex is None:
            return
        if state is not self._loaded[0]:
            raise ValueError(f"{type(self).__name__}: sync the state of the running session")
        self.write_back(state, self._loaded[1], self._ex.fetch(self.kept_key))
        self._fresh = True
