"""The ``client`` parameter of the estimators with ``parallel="dask"``.

A ``distributed.Client`` is a live connection, not a setting: it is validated without
importing distributed (:class:`ClientLike`), shared -- never copied -- by
``sklearn.base.clone`` (:class:`SharedClientMixin`), dropped by pickling, and written to a
model file as ``null`` (:class:`ClientCodec`; a scheduler address string is kept), so a
loaded model fits with the client current then.
"""

from __future__ import annotations

from typing import Any

from topiclink.data.checks import Constraint, NoneValue

__all__ = ["CLIENT", "ClientCodec", "ClientLike", "SharedClientMixin", "needs_full_state"]


def _is_client(value: object) -> bool:
    cls = type(value)
    return cls.__module__.split(".")[0] == "distributed" and cls.__name__ == "Client"


class ClientLike(Constraint):
    """A ``distributed.Client`` or a scheduler address (str)."""

    def accepts(self, value: object) -> bool:
        return (isinstance(value, str) and bool(value)) or _is_client(value)

    def describe(self) -> str:
        return "a distributed.Client or a scheduler address"


#: the accepted forms of ``client``
CLIENT = [NoneValue(), ClientLike()]


class ClientCodec:
    """A model file keeps a scheduler address and stores a live client as ``null``."""

    schema = "dask-client/1"

    def encode(self, value: Any) -> Any:
        return value if isinstance(value, str) else None

    def decode(self, data: Any) -> Any:
        if data is not None and not isinstance(data, str):
            raise ValueError("a client is stored as a scheduler address or null")
        return data


class SharedClientMixin:
    """``clone`` shares the ``client`` (a connection cannot be deep-copied); pickling and
    ``copy.deepcopy`` drop it (None: the current client at fit)."""

    def __sklearn_clone__(self) -> Any:
        client = self.__dict__.get("client")
        if client is None or isinstance(client, str):
            return super().__sklearn_clone__()  # type: ignore[misc]
        self.client = None
        try:
            twin = super().__sklearn_clone__()  # type: ignore[misc]
        finally:
            self.client = client
        twin.client = client
        return twin

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()  # type: ignore[misc]
        if "client" in state and not isinstance(state["client"], str | None):
            state = {**state, "client": None}
        return state


#: callbacks of :mod:`topiclink.callbacks` that read only ``info`` or the published
#: estimates, never the sampler state
_INFO_ONLY = ("ProgressBar", "EarlyStopping", "RelativeTolerance", "EvaluateEvery")


def needs_full_state(callbacks: Any) -> bool:
    """Whether a callback may read ``model.state_`` during the run (any callback other
    than topiclink's own info-only ones): then the shards are gathered every sweep."""
    for cb in callbacks or ():
        cls = type(cb)
        if not (cls.__module__ == "topiclink.callbacks" and cls.__name__ in _INFO_ONLY):
            return True
    return False
