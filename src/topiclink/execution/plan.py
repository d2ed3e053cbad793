"""An estimator's ``scheme`` and ``executor`` read together: what a fit runs and where.

The ``scheme`` is statistical (it changes the chain: the exact sampler, AD-LDA over
``n_shards`` document shards, the partition sampler...); the ``executor`` is where the
pieces run (``None``: this process with ``n_jobs`` threads; a thread count; a
``distributed.Client``, a scheduler address, or ``"dask"`` for the current client) and
never changes the chain.  :func:`execution_plan` checks the pair and resolves it once
into the :class:`Plan` an estimator builds its algorithm from: the algorithm is handed
the plan's executor and never sees a client, an address or a thread-count flag to make
one from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from topiclink.execution.executor import Executor, n_threads, resolve_n_jobs
from topiclink.execution.resolve import resolve_executor
from topiclink.execution.shards import scheme_parts

__all__ = ["Plan", "execution_plan"]


@dataclass(frozen=True)
class Plan:
    """What a fit runs and where.

    Attributes
    ----------
    scheme : the scheme's name (``"exact"`` for a family with one scheme)
    n_shards : its shards (1 for a scheme without)
    n_threads : threads of this process for the work that stays here
    executor : the :class:`~topiclink.execution.DaskExecutor` the shards run on (it
        connects when a run starts), or None: this process on ``n_threads`` threads
    """

    scheme: str
    n_shards: int
    n_threads: int
    executor: Executor | None

    @property
    def dask(self) -> bool:
        """Whether the pieces run on a Dask cluster."""
        return self.executor is not None


def execution_plan(owner: str, scheme: Any, executor: Any, n_jobs: int | None, *,
                   sharded: tuple[str, ...] = (), local: tuple[str, ...] = ()) -> Plan:
    """The plan of ``scheme`` on ``executor``.

    Parameters
    ----------
    owner : the estimator's name, for the errors
    scheme : None (the family has one scheme, ``"exact"``), a name or
        :class:`~topiclink.execution.Shards`
    executor : the estimator's ``executor`` (None, a thread count, a Dask client, an
        address or ``"dask"``)
    n_jobs : the estimator's thread count (None: 1); giving another one as an integer
        ``executor`` too is a one-line ValueError
    sharded : the schemes with shards
    local : the schemes that run in this process only (a Dask executor is a one-line
        ValueError naming ``executor``)

    Returns
    -------
    Plan
    """
    name, n_shards = scheme_parts("exact" if scheme is None else scheme)
    if name not in sharded:
        n_shards = 1
    dask = executor is not None and not isinstance(executor, int)
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
    return Plan(name, n_shards, threads, resolve_executor(executor) if dask else None)
