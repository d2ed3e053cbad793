"""Distributed Gibbs training on Dask (``parallel="dask"`` of :class:`~topiclink.LDA` and
:class:`~topiclink.DMR`).

:class:`DaskSweeper` runs the AD-LDA sweeps of
:class:`~topiclink.inference.chunked.ChunkedSweeper` -- the same document shards, the same
per-shard xoshiro streams, the same summed count deltas -- with each shard living on a
Dask worker; the chain is therefore bit for bit the one of ``parallel="adlda"`` with the
same ``n_shards``, whatever the number of workers.  Dask and distributed are imported only
when a sweeper starts (``pip install 'topiclink[dask]'``).
"""

from __future__ import annotations

from topiclink.distributed.dask_sweeper import DaskSweeper, resolve_client
from topiclink.distributed.params import (
    CLIENT,
    ClientCodec,
    ClientLike,
    SharedClientMixin,
    needs_full_state,
)

__all__ = ["DaskSweeper", "resolve_client", "CLIENT", "ClientCodec", "ClientLike",
           "SharedClientMixin", "needs_full_state"]
