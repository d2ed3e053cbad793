"""Distributed Gibbs training on Dask: the transport the sharded samplers share.

:class:`DaskSweeper` runs the AD-LDA sweeps of ``parallel="dask"`` on
:class:`~topiclink.LDA` and :class:`~topiclink.DMR` (those of
:class:`~topiclink.inference.chunked.ChunkedSweeper` -- the same document shards, the
same per-shard xoshiro streams, the same summed count deltas -- with each shard living on
a Dask worker; bit for bit the chain of ``parallel="adlda"`` with the same ``n_shards``,
whatever the number of workers); with a :class:`~topiclink.data.shards.ShardSet` the
workers read their shards from disk.  The relational models' sharded sampler
(:mod:`topiclink.inference.rtm_dask`) uses its client resolution; the supervised models
run their shards through :mod:`topiclink.execution` (kept shard states).  Dask and
distributed are imported only when a sweeper starts (``pip install 'topiclink[dask]'``).
"""

from __future__ import annotations

from topiclink.distributed.dask_sweeper import (
    SCHEDULER_TIMEOUT,
    DaskConnection,
    DaskSweeper,
    SchedulerLostError,
    WorkerLostError,
    resolve_client,
)
from topiclink.distributed.params import (
    CLIENT,
    ClientCodec,
    ClientLike,
    SharedClientMixin,
    needs_full_state,
)

__all__ = ["DaskConnection", "DaskSweeper", "resolve_client", "CLIENT", "ClientCodec", "ClientLike",
           "SharedClientMixin", "needs_full_state", "WorkerLostError", "SchedulerLostError",
           "SCHEDULER_TIMEOUT"]
