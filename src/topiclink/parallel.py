"""Moved to :mod:`topiclink.execution` (kept importable for one release).

``resolve_n_jobs``, ``n_threads`` and ``run_blocks_in_order`` now live in
:mod:`topiclink.execution.executor`, ``balanced_chunks`` in
:mod:`topiclink.execution.shards`; import them from :mod:`topiclink.execution`.
"""

from __future__ import annotations

from topiclink.execution.executor import n_threads, resolve_n_jobs, run_blocks_in_order
from topiclink.execution.shards import balanced_chunks

__all__ = ["resolve_n_jobs", "n_threads", "run_blocks_in_order", "balanced_chunks"]
