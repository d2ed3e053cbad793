"""Thread counts for Numba kernels."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["resolve_n_jobs", "numba_threads"]


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


@contextmanager
def numba_threads(n: int) -> Iterator[None]:
    """Run Numba parallel kernels with at most ``n`` threads (capped by the pool size)."""
    import numba

    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(previous)
