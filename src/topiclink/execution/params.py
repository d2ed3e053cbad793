"""The estimators' ``executor`` parameter as a setting: stored, cloned and pickled.

A ``distributed.Client`` is a live connection, not a setting: it is recognised without
importing distributed (:func:`is_client`), shared -- never copied -- by
``sklearn.base.clone`` (:class:`SharedClientMixin`), dropped by pickling, and written to a
model file as ``null`` (:class:`ExecutorCodec`; a thread count, a scheduler address and
``"dask"`` are kept), so a loaded model fits in this process, or on the cluster it named.
The accepted forms of the parameter (a constraint) are in :mod:`topiclink.parameters`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["is_client", "ExecutorCodec", "SharedClientMixin"]


def is_client(value: object) -> bool:
    """Whether ``value`` is a ``distributed.Client`` (without importing distributed)."""
    cls = type(value)
    return cls.__module__.split(".")[0] == "distributed" and cls.__name__ == "Client"


class ExecutorCodec:
    """A model file keeps a thread count, a scheduler address or ``"dask"``, and stores a
    live client as ``null`` (this process)."""

    schema = "executor/1"

    def encode(self, value: Any) -> Any:
        """The stored form of ``value`` (a live client: None)."""
        return value if isinstance(value, str | int) else None

    def decode(self, data: Any) -> Any:
        """The parameter of the stored form ``data``; ValueError for another type."""
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
