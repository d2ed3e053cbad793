"""The ``executor`` parameter of the estimators (a thread count or a Dask cluster).

A ``distributed.Client`` is a live connection, not a setting: it is validated without
importing distributed (:class:`ClientLike`), shared -- never copied -- by
``sklearn.base.clone`` (:class:`SharedClientMixin`), dropped by pickling, and written to a
model file as ``null`` (:class:`ExecutorCodec`; a thread count, a scheduler address and
``"dask"`` are kept), so a loaded model fits in this process, or with the client current
then when it named one.
"""

from __future__ import annotations

from typing import Any

from topiclink.callbacks import reads_state
from topiclink.data.checks import Constraint, Integer, NoneValue

__all__ = ["CLIENT", "EXECUTOR", "is_client", "ClientCodec", "ClientLike", "ExecutorCodec",
           "SharedClientMixin", "needs_full_state"]


def is_client(value: object) -> bool:
    """Whether ``value`` is a ``distributed.Client`` (without importing distributed)."""
    return _is_client(value)


def _is_client(value: object) -> bool:
    cls = type(value)
    return cls.__module__.split(".")[0] == "distributed" and cls.__name__ == "Client"


class ClientLike(Constraint):
    """A ``distributed.Client`` or a scheduler address (str of the form
    ``tcp://host:port``, :func:`topiclink.execution.dask.address_problem`, checked here
    so that a typo is refused before a fit tries to connect; ``"dask"``: the current
    client)."""

    def accepts(self, value: object) -> bool:
        from topiclink.execution.dask import address_problem

        if isinstance(value, str):
            return value == "dask" or address_problem(value) is None
        return _is_client(value)

    def describe(self) -> str:
        from topiclink.execution.dask import ADDRESS_FORM

        return (f"a distributed.Client, a scheduler address ({ADDRESS_FORM}) or 'dask' "
                "(the current client)")


#: the accepted forms of a Dask cluster (the old ``client`` parameter)
CLIENT = [NoneValue(), ClientLike()]
#: the accepted forms of ``executor``: None (this process), a thread count (-1: all
#: cores), a Dask client, a scheduler address or "dask" (the current client)
EXECUTOR = [NoneValue(), Integer(exclude=(0,)), ClientLike()]


class ClientCodec:
    """A model file keeps a scheduler address and stores a live client as ``null``."""

    schema = "dask-client/1"

    def encode(self, value: Any) -> Any:
        return value if isinstance(value, str) else None

    def decode(self, data: Any) -> Any:
        if data is not None and not isinstance(data, str):
            raise ValueError("a client is stored as a scheduler address or null")
        return data


class ExecutorCodec:
    """A model file keeps a thread count, a scheduler address or ``"dask"``, and stores a
    live client as ``null`` (this process)."""

    schema = "executor/1"

    def encode(self, value: Any) -> Any:
        return value if isinstance(value, str | int) else None

    def decode(self, data: Any) -> Any:
        if data is not None and not isinstance(data, str | int):
            raise ValueError("an executor is stored as a thread count, an address or null")
        return data


def _is_connection(value: Any) -> bool:
    return not (value is None or isinstance(value, str | int))


class SharedClientMixin:
    """``clone`` shares a client given as ``executor`` (a connection cannot be
    deep-copied); pickling and ``copy.deepcopy`` drop it (None: this process)."""

    def __sklearn_clone__(self) -> Any:
        client = self.__dict__.get("executor")
        if not _is_connection(client):
            return super().__sklearn_clone__()  # type: ignore[misc]
        self.executor = None
        try:
            twin = super().__sklearn_clone__()  # type: ignore[misc]
        finally:
            self.executor = client
        twin.executor = client
        return twin

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()  # type: ignore[misc]
        if _is_connection(state.get("executor")):
            state = {**state, "executor": None}
        return state


def needs_full_state(callbacks: Any) -> bool:
    """Deprecated name of :func:`topiclink.callbacks.reads_state` (the engine now decides
    when a sharded state is gathered); kept for one release."""
    return reads_state(callbacks)
