"""Thread counts for the chunked (parallel) Gibbs sweeps."""

from __future__ import annotations

import os

__all__ = ["resolve_n_jobs", "n_threads"]


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
