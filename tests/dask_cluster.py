"""In-process Dask clusters for the distributed tests (one thread per worker)."""

from __future__ import annotations

import pytest

distributed = pytest.importorskip("distributed")


def cluster(n_workers: int, processes: bool = False):
    """A LocalCluster of ``n_workers`` single-thread workers (threads of this process, or
    separate processes), without a dashboard port clash."""
    return distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                    processes=processes, dashboard_address=":0")
