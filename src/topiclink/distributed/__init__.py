"""Distributed training on Dask: what the Dask paths share besides the executor layer.

The AD-LDA sweeps of ``parallel="dask"`` on :class:`~topiclink.LDA` and
:class:`~topiclink.DMR` run on :class:`~topiclink.execution.DaskExecutor` as the
:class:`topiclink.inference.adlda.ADLDAShards` iteration (the same shards, streams and
summed count deltas as ``parallel="adlda"``; ``DaskSweeper``, its adapter for raw arrays,
is importable from here for one release); the supervised models run their shards
through :mod:`topiclink.execution` as well.  The gRTM sampler's shards run on the
executor layer as well (:mod:`topiclink.families.rtm.shards`).  What is left here: client
resolution, the counts of a ShardSet counted by the workers, and the estimators'
``client`` parameter (:mod:`~topiclink.distributed.params`).  Dask and distributed are
imported only when a run starts (``pip install 'topiclink[dask]'``).
"""

from __future__ import annotations

from typing import Any

from topiclink.distributed.dask_sweeper import (
    SCHEDULER_TIMEOUT,
    DaskConnection,
    SchedulerLostError,
    WorkerLostError,
    resolve_client,
)
from topiclink.distributed.params import (
    CLIENT,
    EXECUTOR,
    ClientCodec,
    ClientLike,
    ExecutorCodec,
    SharedClientMixin,
    needs_full_state,
)

__all__ = ["DaskConnection", "resolve_client", "CLIENT", "ClientCodec", "ClientLike",
           "EXECUTOR", "ExecutorCodec",
           "SharedClientMixin", "needs_full_state", "WorkerLostError", "SchedulerLostError",
           "SCHEDULER_TIMEOUT"]


def __getattr__(name: str) -> Any:
    """``DaskSweeper`` moved to :mod:`topiclink.inference.chunked` (the executor layer runs
    its shards): still importable from here for one release."""
    if name == "DaskSweeper":
        import importlib
        import warnings

        warnings.warn("topiclink.distributed.DaskSweeper moved to "
                      "topiclink.inference.chunked.DaskSweeper; the old path goes in 0.2.0",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module("topiclink.inference.chunked").DaskSweeper
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
