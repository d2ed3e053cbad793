"""Where the pieces of an iteration run: the only code that knows thread pools and Dask
clients (and, in a later step, shard files).

- :mod:`~topiclink.execution.executor`: the :class:`Executor` contract (``map`` in task
  order, ordered streaming with bounded in-flight tasks, ``submit``, shard states kept
  where their rounds run -- ``keep`` / ``step_kept`` / ``step_kept_chained`` / ``fetch``
  --, context-manager lifetime, byte counters) and ``n_jobs`` resolution; it names no
  subclass;
- :mod:`~topiclink.execution.resolve`: :func:`resolve_executor` / :func:`open_executor`
  (``None``, a thread count, an executor, a Dask client or address), :func:`helper_thread`
  and :func:`run_blocks_in_order`: the one module that builds executors from settings;
- :mod:`~topiclink.execution.serial`: the calling thread;
- :mod:`~topiclink.execution.threads`: a thread pool, and :func:`padded_rows` (per-worker
  buffers apart by a cache line);
- :mod:`~topiclink.execution.dask`: a Dask cluster (:class:`DaskExecutor`; the
  connection and fault handling the Dask samplers share); dask is imported only when a
  client is resolved;
- :mod:`~topiclink.execution.shards`: :class:`Shards` (a sharded statistical scheme and
  its shard count, the estimators' ``scheme``), :func:`balanced_chunks`, the shard
  geometry shared by every executor, and :func:`count_delta` (a shard's count changes,
  compact);
- :mod:`~topiclink.execution.plan`: :func:`execution_plan`, an estimator's ``scheme``
  (changes the chain) and ``executor`` (never does) read together, resolved once into the
  :class:`Plan` whose executor the estimator hands to its algorithm;
- :mod:`~topiclink.execution.params`: the ``executor`` parameter as a setting (its model
  file codec, ``clone`` sharing a client, pickling dropping it).

A core package: it imports the standard library and numpy only; everything may import it.
"""

from topiclink.execution.dask import DaskExecutor
from topiclink.execution.executor import (
    Executor,
    n_threads,
    payload_counters,
    resolve_n_jobs,
    with_payload,
)
from topiclink.execution.params import ExecutorCodec, SharedClientMixin, is_client
from topiclink.execution.plan import Plan, execution_plan
from topiclink.execution.resolve import (
    helper_thread,
    is_dask_spec,
    open_executor,
    resolve_executor,
    run_blocks_in_order,
)
from topiclink.execution.serial import SerialExecutor
from topiclink.execution.shards import (
    DEFAULT_SHARDS,
    Shards,
    balanced_chunks,
    compact_dtype,
    count_delta,
    scheme_parts,
)
from topiclink.execution.threads import ThreadExecutor, padded_rows

__all__ = ["Executor", "SerialExecutor", "ThreadExecutor", "DaskExecutor", "resolve_executor",
           "open_executor", "resolve_n_jobs", "n_threads", "run_blocks_in_order",
           "balanced_chunks", "compact_dtype", "count_delta", "padded_rows",
           "payload_counters", "with_payload", "Shards", "DEFAULT_SHARDS", "scheme_parts",
           "Plan", "execution_plan", "is_dask_spec", "helper_thread", "ExecutorCodec",
           "SharedClientMixin", "is_client"]
