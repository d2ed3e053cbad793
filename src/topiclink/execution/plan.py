"""An estimator's ``scheme`` and ``executor`` read together: what a fit runs and where.

The ``scheme`` is statistical (it changes the chain: the exact sampler, AD-LDA over
``n_shards`` document shards, the partition sampler...); the ``executor`` is where the
pieces run (``None``: this process with ``n_jobs`` threads; a thread count; a
``distributed.Client``, a scheduler address, or ``"dask"`` for the current client) and
never changes the chain.  :func:`execution_plan` checks the pair and returns the
:class:`Plan` the models build their samplers from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from topiclink.execution.executor import n_threads, resolve_n_jobs
from topiclink.execution.shards import scheme_parts

__all__ = ["Plan", "execution_plan", "is_dask_executor"]


def is_dask_executor(executor: Any) -> bool:
    """Whether ``executor`` names a Dask cluster (a client, an address, ``"dask"``)."""
    return executor is not None and not isinstance(executor, int)


@dataclass(frozen=True)
class Plan:
    """``scheme``: the scheme's name; ``n_shards``: its shards (1 for a scheme without);
    ``n_threads``: threads of this process; ``dask``: whether the shards run on Dask;
    ``client``: the ``DaskExecutor`` argument (a client, an address, or None: current)."""

    scheme: str
    n_shards: int
    n_threads: int
    dask: bool
    client: Any


def execution_plan(owner: str, scheme: Any, executor: Any, n_jobs: int | None, *,
                   sharded: tuple[str, ...] = (), local: tuple[str, ...] = ()) -> Plan:
    """The plan of ``scheme`` (None: the family has one scheme, ``"exact"``) on
    ``executor``.  ``sharded``: the schemes with shards; ``local``: the schemes that run in
    this process only (a Dask executor is a one-line ValueError naming ``executor``).  An
    integer ``executor`` is the thread count; giving another one as ``n_jobs`` too is a
    ValueError."""
    name, n_shards = scheme_parts("exact" if scheme is None else scheme)
    if name not in sharded:
        n_shards = 1
    dask = is_dask_executor(executor)
    if dask and name in local:
        remote = [s for s in sharded if s not in local]
        raise ValueError(f"{owner}: executor: scheme={name!r} runs in this process; give "
                         "None or a thread count (a Dask executor runs scheme="
                         f"{' or '.join(map(repr, remote))})")
    if isinstance(executor, int):
        if n_jobs not in (None, 1, executor):
            raise ValueError(f"{owner}: executor: give the thread count once (executor="
                             f"{executor} and n_jobs={n_jobs})")
        threads = n_threads(resolve_n_jobs(executor))
    else:
        threads = n_threads(resolve_n_jobs(n_jobs))
    client = (None if executor == "dask" else executor) if dask else None
    return Plan(name, n_shards, threads, dask, client)
