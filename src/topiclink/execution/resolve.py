"""From what a user passes to an executor: the one place that names the subclasses.

:func:`resolve_executor` turns ``None``, a thread count, an
:class:`~topiclink.execution.executor.Executor`, a ``distributed.Client`` or a scheduler
address into an executor; :func:`open_executor` is the same for a ``with`` block (it
closes only what it made); :func:`helper_thread` is the one background thread a
pipelined step overlaps its work with; :func:`run_blocks_in_order` runs numbered blocks
on threads and merges them in block order.  The base module
(:mod:`~topiclink.execution.executor`) imports none of this, so the package has no
import circle.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from topiclink.execution.dask import DaskExecutor
from topiclink.execution.executor import Executor
from topiclink.execution.serial import SerialExecutor
from topiclink.execution.threads import ThreadExecutor

__all__ = ["resolve_executor", "open_executor", "helper_thread", "run_blocks_in_order",
           "is_dask_spec"]


def is_dask_spec(executor: Any) -> bool:
    """Whether ``executor`` names a Dask cluster: a ``distributed.Client``, a scheduler
    address (str) or ``"dask"`` (the current client), as the estimators' ``executor``."""
    return isinstance(executor, str) or any(
        cls.__module__.split(".")[0] == "distributed" for cls in type(executor).__mro__)


def resolve_executor(executor: Executor | int | Any = None, *,
                     name: str = "topiclink") -> Executor:
    """The executor that ``executor`` names.

    Parameters
    ----------
    executor : None or 1
        a :class:`~topiclink.execution.serial.SerialExecutor` (the calling thread);
        an integer ``k >= 2``: a :class:`~topiclink.execution.threads.ThreadExecutor` of
        ``k`` threads named ``name...`` (cap a count that comes from ``n_jobs`` with
        :func:`~topiclink.execution.executor.n_threads` first); an :class:`Executor`:
        itself (its maker keeps owning it); a ``distributed.Client`` or a scheduler
        address (``tcp://host:port``, checked here: one-line ValueError): a
        :class:`~topiclink.execution.dask.DaskExecutor` on that cluster (it connects
        when a run starts); ``"dask"``: on the current client.
    name : the threads' name prefix (starts with ``topiclink``)

    Returns
    -------
    Executor
    """
    if executor is None:
        return SerialExecutor()
    if isinstance(executor, Executor):
        return executor
    if isinstance(executor, int) and not isinstance(executor, bool):
        if executor < 1:
            raise ValueError(f"a thread count must be >= 1, got {executor}")
        return SerialExecutor() if executor == 1 else ThreadExecutor(executor, name=name)
    if is_dask_spec(executor):
        return DaskExecutor(None if executor == "dask" else executor)
    raise TypeError(f"executor must be None, a thread count, an Executor, a Dask client or "
                    f"a scheduler address, got {type(executor).__name__}")


@contextlib.contextmanager
def open_executor(executor: Executor | int | Any = None, *,
                  name: str = "topiclink") -> Iterator[Executor]:
    """:func:`resolve_executor` for a ``with`` block: closes the executor at the end only
    when it made it (a given :class:`Executor` is borrowed and stays open)."""
    resolved = resolve_executor(executor, name=name)
    try:
        yield resolved
    finally:
        if resolved is not executor:
            resolved.close()


def helper_thread(name: str) -> ThreadExecutor:
    """One background thread named ``name`` (starts with ``topiclink``) for a step that
    overlaps two pieces of its work (e.g. the next block's preparation with this block's
    kernel); close it, or use it as a ``with`` block."""
    return ThreadExecutor(1, name=name)


def run_blocks_in_order(run_block: Callable[[int], Any], n_blocks: int,
                        n_threads: Executor | int, merge: Callable[[Any], None]) -> None:
    """``merge(run_block(b))`` for b = 0, 1, ..., n_blocks - 1, merged in that order.

    ``n_threads``: a thread count, or an in-process :class:`Executor` to run them on
    (borrowed, left open).  With two threads or more the blocks run on a thread pool
    (``run_block`` should release the GIL: a ``nogil`` Numba kernel), at most
    ``2 n_threads`` in flight so memory stays bounded; the merge order, hence any
    floating-point sum, never depends on the threads.
    """
    if isinstance(n_threads, Executor):
        where: Executor | int = n_threads
    else:
        where = max(1, int(n_threads if n_blocks > 1 else 1))
    with open_executor(where) as ex:
        for result in ex.imap_ordered(run_block, range(n_blocks)):
            merge(result)
