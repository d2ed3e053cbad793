"""Dask as an executor: the only code that knows Dask clients, futures and lost workers.

:class:`DaskExecutor` runs an iteration's tasks on a Dask cluster (``client``: a
``distributed.Client``, a scheduler address, or None for the current client).  Each task
is a function of what the driver sends it, so the results are the same as on the calling
thread or on threads, bit for bit, for any number of workers; ``map`` returns them in task
order.  It ships data (``ships_data``): a family builds compact, self-contained tasks for
it (the rows a task reads, on task-local ids) instead of views into shared arrays.

Faults (:class:`DaskConnection`): every wait for results
(:meth:`DaskConnection._gather`) ends, never hangs.  A worker lost mid-map costs only a
redo: the tasks are submitted again with the same inputs (at most :data:`MAX_RECOVERIES`
times), so the chain is the uninterrupted one, draw for draw -- a loss while the lost
shards are being restored, even of every worker at once, costs one more redo once a worker
is back; when the redos keep failing the run stops with a one-line :class:`WorkerLostError`
naming the lost worker.  A lost
scheduler stops it with a one-line :class:`SchedulerLostError` (at once when the client
has seen its connection close, after at most :data:`SCHEDULER_TIMEOUT` s without a
connection while waiting for results).

A scheduler address is checked for its form (``tcp://host:port``,
:func:`address_problem`) before any connection is tried, and a connection that fails ends
with one line after at most :data:`CONNECT_TIMEOUT` s; a ``client`` that is neither None,
a ``distributed.Client`` nor such an address is refused when the executor is made.

Dask and distributed are imported only when a client is resolved (``pip install
'topiclink[dask]'``): importing this module imports neither.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import operator
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from topiclink.execution.executor import Executor
from topiclink.execution.replay import SharedLog, held_bytes, rounds

__all__ = ["DaskExecutor", "DaskConnection", "resolve_client", "connect_client",
           "payload_bytes", "WorkerLostError", "SchedulerLostError", "SCHEDULER_TIMEOUT",
           "MAX_RECOVERIES", "NO_CLIENT", "CONNECT_TIMEOUT", "ADDRESS_FORM",
           "address_problem", "check_scheduler_address", "check_client"]

logger = logging.getLogger(__name__)

#: seconds without a connection to the scheduler after which a run waiting on the cluster
#: stops with a :class:`SchedulerLostError` (a scheduler that closes its connections is
#: noticed at once; this bounds a silent one)
SCHEDULER_TIMEOUT = 30.0

#: how many times one iteration is redone after losing workers before the run stops with a
#: :class:`WorkerLostError`
MAX_RECOVERIES = 3

#: seconds between two looks at the connection while waiting for results
_POLL = 2.0

#: seconds a connection to a scheduler given by its address may take before the run stops
#: with a one-line ValueError (distributed's own default, made explicit so that a Dask
#: configuration cannot turn it into a wait without end)
CONNECT_TIMEOUT = 30.0

#: the form of a scheduler address, as the one-line errors name it
ADDRESS_FORM = "tcp://host:port"

#: the protocols of a distributed address (``inproc://`` addresses have their own form)
_PROTOCOLS = ("tcp", "tls", "ucx", "ws", "wss")


class WorkerLostError(RuntimeError):
    """A Dask worker holding part of a run was lost and the run could not go on (one-line
    message; ``address``: the lost worker's address, None when it could not be told)."""

    def __init__(self, address: str | None, detail: str = "") -> None:
        self.address = address
        who = f"Dask worker {address}" if address else "a Dask worker"
        super().__init__(f"{who} was lost mid-fit{': ' + detail if detail else ''}")


class SchedulerLostError(RuntimeError):
    """The connection to the Dask scheduler was lost mid-fit (one-line message;
    ``address``: the scheduler's address)."""

    def __init__(self, address: str | None, detail: str = "") -> None:
        self.address = address
        where = f" at {address}" if address else ""
        super().__init__(f"the Dask scheduler{where} was lost mid-fit"
                         f"{': ' + detail if detail else ''}")


def _loss_types() -> tuple[type, ...]:
    """The exceptions distributed raises when a worker or the scheduler goes away."""
    import concurrent.futures

    import distributed
    from distributed.comm.core import CommClosedError

    return (concurrent.futures.CancelledError, distributed.KilledWorker, CommClosedError)


def _is_loss(exc: BaseException | None, client: Any) -> bool:
    """Whether ``exc`` says that part of the cluster went away: one of
    :func:`_loss_types`, or a connection error while the client has lost its scheduler."""
    if exc is None:
        return False
    if isinstance(exc, _loss_types()):
        return True
    return isinstance(exc, (OSError, TimeoutError)) and client is not None \
        and client.status != "running"

NO_CLIENT = ("executor='dask' found no Dask client: pass executor=distributed.Client(...) "
             "(or a scheduler address), or create a distributed.Client before fit")


def address_problem(address: str) -> str | None:
    """Why ``address`` is not the address of a Dask scheduler (None when it has the form):
    ``[protocol://]host:port`` with a protocol of distributed (``tcp``, ``tls``, ``ucx``,
    ``ws``, ``wss``; none: ``tcp``), a host name, IPv4 address or bracketed IPv6 address,
    and a port 1..65535; or an ``inproc://`` address.  Checked before connecting, so that
    a typo is a one-line error at once rather than distributed's own error after a wait."""
    if not address:
        return "it is empty"
    if any(c.isspace() for c in address):
        return "it holds spaces"
    protocol, sep, rest = address.partition("://")
    if not sep:
        protocol, rest = "tcp", address
    if protocol == "inproc":
        return None if rest else "the inproc address has no host"
    if protocol not in _PROTOCOLS:
        return f"{protocol!r} is not a protocol of distributed ({', '.join(_PROTOCOLS)})"
    host, colon, port = rest.rpartition(":")
    if not colon:
        return "it has no port number"
    if not (port.isascii() and port.isdigit()) or not 1 <= int(port) <= 65535:
        return f"the port {port!r} is not a number 1..65535"
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        allowed = "0123456789abcdefABCDEF:."
    else:
        allowed = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"
    if not host or any(c not in allowed for c in host) or "/" in rest:
        return f"{host!r} is not a host name or IP address"
    return None


def check_scheduler_address(address: str, name: str = "executor") -> str:
    """``address`` when it has the form of a scheduler address (:func:`address_problem`),
    else a one-line ValueError naming ``name``, the address and the expected form."""
    problem = address_problem(address)
    if problem is not None:
        raise ValueError(f"{name}: {address!r} is not a Dask scheduler address ({problem}); "
                         f"expected the form {ADDRESS_FORM}")
    return address


def _is_client(value: object) -> bool:
    """Whether ``value`` is a ``distributed.Client`` (or a subclass), without importing
    distributed."""
    return any(cls.__module__.split(".")[0] == "distributed" and cls.__name__ == "Client"
               for cls in type(value).__mro__)


def check_client(client: Any, name: str = "client") -> Any:
    """``client`` when it is None (the current client), a ``distributed.Client`` or a
    well-formed scheduler address (:func:`check_scheduler_address`); anything else is a
    one-line TypeError naming ``name`` (checked when an executor is made, not when it
    first connects)."""
    if client is None or _is_client(client):
        return client
    if isinstance(client, str):
        return check_scheduler_address(client, name)
    raise TypeError(f"{name} must be a distributed.Client, a scheduler address "
                    f"({ADDRESS_FORM}) or None (the current client), got "
                    f"{type(client).__name__} {client!r}"[:300])


def resolve_client(client: Any = None) -> tuple[Any, bool]:
    """``(client, owned)``: a ``distributed.Client`` as given; a scheduler address (str)
    connected here (``owned``: the caller closes it); None -> ``distributed.get_client()``.
    One-line errors when distributed is missing or there is no client."""
    try:
        import distributed
    except ImportError:
        raise ImportError("a Dask executor needs dask and distributed: pip install "
                          "'topiclink[dask]' (or pip install dask distributed)") from None
    if client is None:
        try:
            return distributed.get_client(), False
        except ValueError:
            raise ValueError(NO_CLIENT) from None
    if isinstance(client, str):
        check_scheduler_address(client)
        try:
            return distributed.Client(client, set_as_default=False,
                                      timeout=CONNECT_TIMEOUT), True
        except (OSError, ValueError) as exc:
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(f"executor: cannot connect to the Dask scheduler at "
                             f"{client!r} ({detail})") from None
    if not isinstance(client, distributed.Client):
        raise TypeError(f"executor must be a distributed.Client, a scheduler address or None, "
                        f"got {type(client).__name__}")
    return client, False


def connect_client(client: Any = None) -> tuple[Any, bool, int]:
    """``(client, owned, n_workers)`` for one run: :func:`resolve_client`, then up to 60 s
    for a first worker when the cluster has none yet."""
    client, owned = resolve_client(client)
    try:
        nthreads = client.nthreads()
        if not nthreads:
            client.wait_for_workers(1, timeout=60)
            nthreads = client.nthreads()
    except BaseException:
        if owned:       # a connection made here is not left open
            client.close()
        raise
    return client, owned, len(nthreads)


class DaskConnection:
    """What a Dask sampler keeps of its cluster: ``client_arg`` (the ``client`` parameter
    as given), the live ``client`` while connected (``_owned``: connected here from an
    address, so closed here), ``n_workers`` and the payload byte counters."""

    def _init_connection(self, client: Any) -> None:
        self.client_arg = check_client(client)
        self.client: Any = None
        self._owned = False
        self.n_workers = 0
        self.bytes_sent = 0
        self.bytes_received = 0

    def _connect(self) -> None:
        """:func:`connect_client` (a no-op while connected)."""
        if self.client is None:
            self.client, self._owned, self.n_workers = connect_client(self.client_arg)
            self._known_workers = set(self.client.nthreads())

    # ------------------------------------------------------------------ faults
    def _scheduler_address(self) -> str | None:
        try:
            return str(self.client.scheduler.address)
        except Exception:
            return None

    def _gather(self, futures: list) -> list:
        """``client.gather(futures)`` that never hangs on a lost cluster: a lost worker's
        data or a lost scheduler ends it with :class:`WorkerLostError` /
        :class:`SchedulerLostError` (the connection is looked at every few seconds; after
        :data:`SCHEDULER_TIMEOUT` s without it the scheduler counts as lost).  Errors
        raised by the tasks themselves pass unchanged."""
        import distributed

        client = self.client
        flat = [f for f in _flatten(futures)]
        since: float | None = None
        while True:
            try:
                with client.as_current():
                    distributed.wait(flat, timeout=_POLL)
                break
            except TimeoutError:
                if client.status == "running":
                    since = None
                    continue
                since = time.monotonic() if since is None else since
                if client.status in ("closing", "closed") or \
                        time.monotonic() - since > SCHEDULER_TIMEOUT:
                    raise SchedulerLostError(self._scheduler_address(),
                                             f"no connection for {SCHEDULER_TIMEOUT:.0f} s"
                                             ) from None
            except Exception:       # cancelled futures: gather raises the error
                break
        try:
            return client.gather(futures)
        except Exception as exc:
            if _is_loss(exc, client) and not any(
                    f.status == "error" and not _is_loss(f.exception(), client)
                    for f in flat):
                raise self._lost(exc) from None
            raise

    def _lost(self, exc: BaseException) -> WorkerLostError | SchedulerLostError:
        """What a loss-type error ``exc`` means: the scheduler gone (the client is no
        longer connected) or workers gone (named when the cluster no longer lists them)."""
        client = self.client
        if client is None or client.status != "running":
            return SchedulerLostError(self._scheduler_address(), type(exc).__name__)
        try:
            now = set(client.nthreads())
        except Exception:
            return SchedulerLostError(self._scheduler_address(), type(exc).__name__)
        gone = sorted(getattr(self, "_known_workers", set()) - now)
        self._known_workers = now
        self.n_workers = len(now) or self.n_workers
        return WorkerLostError(", ".join(gone) or None,
                               f"its data was lost ({type(exc).__name__})")

    def _recovering(self, attempt: Callable[[], Any], restore: Callable[[], None] | None
                    ) -> Any:
        """``attempt()``, redone after ``restore()`` when a worker was lost (at most
        :data:`MAX_RECOVERIES` times; ``restore`` None: no redo, the
        :class:`WorkerLostError` is raised).  ``attempt`` must be a function of the driver's
        state only, so that its redo is the same computation.  The wait for a worker and
        ``restore`` are part of the try: a worker lost while the shards are being restored
        (the other one of two, say) costs one more redo, never a stray error."""
        restoring = False
        for tries in range(MAX_RECOVERIES + 1):
            self._check_scheduler()
            try:
                if restoring:
                    self._wait_for_a_worker()
                    restore()                           # type: ignore[misc]
                return attempt()
            except WorkerLostError as lost:
                if restore is None or tries == MAX_RECOVERIES:
                    raise
                logger.warning("%s: %s; restoring its shards and redoing the iteration",
                               type(self).__name__, lost)
            except Exception as exc:                # raised by a scatter or a submit
                if not (_is_loss(exc, self.client) or self._no_workers(exc)):
                    raise
                lost = self._lost(exc)
                if isinstance(lost, SchedulerLostError) or restore is None \
                        or tries == MAX_RECOVERIES:
                    raise lost from None
                logger.warning("%s: %s; restoring its shards and redoing the iteration",
                               type(self).__name__, lost)
            restoring = True
        raise AssertionError("unreachable")

    def _no_workers(self, exc: BaseException) -> bool:
        """Whether ``exc`` is distributed's timeout of a scatter or submit to a cluster
        that has no worker left (every worker lost at once): a loss, not a task's error."""
        if not isinstance(exc, TimeoutError) or self.client is None:
            return False
        if "no valid workers" in str(exc).lower():
            return True
        try:
            return not self.client.nthreads()
        except Exception:
            return False

    def _check_scheduler(self) -> None:
        """A :class:`SchedulerLostError` at once when the client has lost its scheduler
        (rather than a send that waits for distributed's connect timeout)."""
        client = self.client
        if client is not None and client.status != "running":
            raise SchedulerLostError(self._scheduler_address(), f"client {client.status}")

    def _wait_for_a_worker(self) -> None:
        """Up to 60 s for at least one worker (a nanny restarts a killed one)."""
        client = self.client
        try:
            if not client.nthreads():
                client.wait_for_workers(1, timeout=60)
            self._known_workers = set(client.nthreads())
        except Exception as exc:
            raise self._lost(exc) from None
        self.n_workers = len(self._known_workers)

    def _disconnect(self) -> None:
        """Close a connection made here; forget the client."""
        if self._owned and self.client is not None:
            self.client.close()
        self.client = None
        self._owned = False

    def _finish(self, gather: Callable[[], None] | None, failed: bool, stale: str,
                forget: Callable[[], None]) -> None:
        """End a run: ``gather`` the shards' state back (None: nothing is out on the
        workers) -- after a failed run a gathering error is logged, naming what is
        ``stale``, instead of hiding the first error -- then ``forget`` the shards and
        disconnect."""
        try:
            if gather is not None:
                try:
                    gather()
                except Exception:
                    if not failed:
                        raise
                    logger.warning("%s: could not gather the shards after an error; %s",
                                   type(self).__name__, stale)
        finally:
            forget()
            self._disconnect()


def _flatten(values: Any) -> Iterator[Any]:
    """The futures in a (nested) list."""
    if isinstance(values, (list, tuple)):
        for v in values:
            yield from _flatten(v)
    else:
        yield values


#: :meth:`DaskExecutor.step_kept` rounds between two gathers of the shards' states into
#: the driver's recovery point (what a lost shard is rebuilt from, replaying the rounds
#: logged since: their ``fn`` and ``args``, and their ``shared`` values in a compact
#: :class:`~topiclink.execution.replay.SharedLog`)
KEPT_RECOVERY_EVERY = 10


def _replay(state: Any, log: list[tuple[Callable[..., tuple[Any, Any]], Any]],
            shared: tuple, static: Any = None) -> Any:
    """A shard's state after the logged rounds ``(fn, arg)`` with their ``shared`` values
    (a :attr:`SharedLog.packed`, rebuilt exactly; runs on a worker)."""
    for (fn, arg), value in zip(log, rounds(shared), strict=True):
        state = fn(state, value, arg, static)[0]
    return state


def _chained(first: Callable[..., tuple[Any, Any]], second: Callable[..., tuple[Any, Any]],
             state: Any, shared: Any, arg: tuple[Any, tuple], static: Any = None
             ) -> tuple[Any, Any]:
    """One shard's two rounds of :meth:`DaskExecutor.step_kept_chained` with the logged
    hand-overs (``arg``: the shard's argument and every shard's hand-over): the replay."""
    state = first(state, shared, arg[0], static)[0]
    return second(state, shared, arg[1], static)


def _hand(hand_over: Callable[[Any], Any], pair: tuple[Any, Any]) -> Any:
    """``hand_over`` of a first round's output (on the worker holding it)."""
    return hand_over(pair[1])


def _second(second: Callable[..., tuple[Any, Any]], pair: tuple[Any, Any], shared: Any,
            static: Any, *hands: Any) -> tuple[Any, Any]:
    """A shard's second round on its first round's state and every shard's hand-over
    (fetched by its worker from the workers holding them)."""
    return second(pair[0], shared, hands, static)


def payload_bytes(value: Any) -> int:
    """Payload bytes of nested tuples / lists / dicts (their values) of arrays and scalars
    (8 per scalar): what
    the byte counters add up for a task sent or a result received."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, tuple | list):
        return sum(payload_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(payload_bytes(v) for v in value.values())
    return 8


class DaskExecutor(DaskConnection, Executor):
    """Tasks as Dask tasks (module docstring); results in task order, the same as on
    threads bit for bit.

    Parameters
    ----------
    client : distributed.Client, a scheduler address or None (the current client at the
        time of the run)

    Attributes
    ----------
    client : the live client while connected (inside :meth:`session` or a ``map``), else
        None; ``client_arg`` keeps what was given
    n_workers : the cluster's workers when last connected
    bytes_sent, bytes_received : payload bytes of the tasks and results so far
        (:func:`payload_bytes`; a task redone after a lost worker counts again)
    bytes_peer : payload bytes handed from worker to worker by :meth:`step_kept_chained`
        (each hand-over times the other workers holding shards)
    n_rounds : ``map`` calls (round trips) so far
    replay_bytes : bytes of the arrays the driver holds to replay the kept rounds since
        their recovery points (the latest ``shared`` in full, earlier ones as the entries
        that changed, and the rounds' ``args``)
    """

    ships_data = True

    def __init__(self, client: Any = None) -> None:
        Executor.__init__(self)
        self._init_connection(client)
        self.n_rounds = 0
        self._forget()

    def _forget(self) -> None:
        """Drop the replicas (driver copies and the workers' futures) and the kept
        shard states."""
        self.replicas = {}
        self.kept = {}
        self._kept: dict[str, dict[str, Any]] = {}
        self._resident: dict[str, dict[str, Any]] = {}   # key -> worker -> future
        self._workers: list[str] = []
        self._slots: list[str] = []                       # one entry per worker thread

    @contextlib.contextmanager
    def session(self) -> Iterator[Executor]:
        """Connected for the block (one run); a no-op inside a running session.  A
        connection made here from an address is closed at the end, and the replicas
        are dropped."""
        if self.client is not None:
            yield self
            return
        self._connect()
        try:
            yield self
        finally:
            self._forget()
            self._disconnect()

    # ------------------------------------------------------------------ replicas
    def _place(self) -> None:
        """Note the workers and their threads (task i of :meth:`map_with` goes to thread
        slot i mod the number of slots)."""
        nthreads = self.client.nthreads()
        if not nthreads:        # every worker lost: a loss (a redo waits for a worker)
            raise WorkerLostError(", ".join(sorted(getattr(self, "_known_workers", ())))
                                  or None, "no worker is left in the cluster")
        self._workers = sorted(nthreads)
        self._slots = [w for w in self._workers for _ in range(max(1, int(nthreads[w])))]
        self.n_workers = len(self._workers)

    def _broadcast(self, key: str) -> None:
        value = self.replicas[key]
        future = self.client.scatter([value], broadcast=True, hash=False)[0]
        self._resident[key] = dict.fromkeys(self._workers, future)
        self.bytes_sent += self.n_workers * payload_bytes(value)

    def _needs_session(self, what: str) -> None:
        if self.client is None:
            raise RuntimeError(f"DaskExecutor.{what} outside a session: use "
                               "'with executor.session():'")

    def replicate(self, key: str, value: Any) -> None:
        """Broadcast ``value`` to every worker (``n_workers x`` its payload bytes); the
        driver keeps it to send again after a lost worker.  Inside a session."""
        self._needs_session("replicate")
        if not self._workers:
            self._place()
        self.replicas[key] = value

        def attempt() -> None:
            self._broadcast(key)

        self._recovering(attempt, self._place)

    def update_replica(self, key: str, fn: Callable[..., Any], *args: Any) -> None:
        """Each worker's copy becomes ``fn(copy, *args)`` (a task placed on that worker,
        which returns a new value: a recomputed task sees the same input); ``n_workers
        x`` the payload of ``args`` travels.  The driver's copy is updated alike."""
        self._needs_session("update_replica")
        self.replicas[key] = fn(self.replicas[key], *args)
        client = self.client
        self._resident[key] = {
            w: client.submit(fn, self._resident[key][w], *args, workers=[w],
                             allow_other_workers=True, pure=False)
            for w in self._workers}
        self.bytes_sent += self.n_workers * payload_bytes(args)

    def map_with(self, fn: Callable[..., Any], tasks: Iterable[Any],
                 keys: tuple[str, ...]) -> list[Any]:
        """``fn(task, *replicas)`` as Dask tasks, task i placed on thread slot i mod the
        slots (it may run elsewhere if that worker is gone: Dask moves its inputs, bytes
        not counted); in task order.  After a lost worker every replica is broadcast
        again from the driver's copies and the tasks redone with the same inputs."""
        self._needs_session("map_with")
        if not self._slots:
            self._place()
        tasks = list(tasks)
        sent = 0

        def attempt() -> list:
            nonlocal sent
            client = self.client
            futures = []
            for i, task in enumerate(tasks):
                w = self._slots[i % len(self._slots)]
                futures.append(client.submit(fn, task, *(self._resident[k][w] for k in keys),
                                             workers=[w], allow_other_workers=True,
                                             pure=False))
                sent += payload_bytes(task)
            return self._gather(futures)

        def restore() -> None:
            self._place()
            for key in list(self.replicas):
                self._broadcast(key)

        results = self._recovering(attempt, restore)
        self.tasks_run += len(tasks)
        self.bytes_sent += sent
        self.bytes_received += sum(payload_bytes(r) for r in results)
        self.n_rounds += 1
        return results

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Any:
        """``fn(*args)`` as one Dask task (a ``distributed.Future``); inside a session."""
        if self.client is None:
            raise RuntimeError("DaskExecutor.submit outside a session: use "
                               "'with executor.session():'")
        self.tasks_run += 1
        return self.client.submit(fn, *args, pure=False)

    def map(self, fn: Callable[..., Any], tasks: Iterable[Any],
            shared: Any = None) -> list[Any]:
        """``[fn(t) for t in tasks]`` (``fn(t, shared)`` with ``shared``, scattered once to
        every worker) as Dask tasks, in task order; redone with the same inputs after a
        lost worker.  Outside a session it connects for this call."""
        tasks = list(tasks)
        if self.client is None:
            with self.session():
                return self.map(fn, tasks, shared)
        sent = 0

        def attempt() -> list:
            nonlocal sent
            client = self.client
            extra: tuple = ()
            if shared is not None:
                extra = (client.scatter([shared], broadcast=True, hash=False)[0],)
                sent += payload_bytes(shared) * max(1, self.n_workers)
            futures = [client.submit(fn, t, *extra, pure=False) for t in tasks]
            sent += sum(payload_bytes(t) for t in tasks)
            return self._gather(futures)

        results = self._recovering(attempt, lambda: None)
        self.tasks_run += len(tasks)
        self.bytes_sent += sent
        self.bytes_received += sum(payload_bytes(r) for r in results)
        self.n_rounds += 1
        return results

    # ------------------------------------------------------------------ kept shard states
    def keep(self, key: str, states: list[Any], statics: list[Any] | None = None) -> None:
        """Scatter shard i's state (and its static data) to thread slot i mod the slots,
        where its rounds run; the driver keeps the states as the first recovery point and
        the statics to send again should a worker be lost."""
        self._needs_session("keep")
        if not self._slots:
            self._place()
        states = list(states)
        statics = [None] * len(states) if statics is None else list(statics)
        if len(statics) != len(states):
            raise ValueError(f"keep: {len(statics)} statics for {len(states)} shards")
        where = [self._slots[i % len(self._slots)] for i in range(len(states))]

        def attempt() -> tuple[list, list]:
            client = self.client
            return ([client.scatter([st], workers=[w], hash=False)[0]
                     for st, w in zip(states, where, strict=True)],
                    [client.scatter([st], workers=[w], hash=False)[0]
                     for st, w in zip(statics, where, strict=True)])

        futures, static_futures = self._recovering(attempt, self._place)
        self.bytes_sent += payload_bytes(states) + payload_bytes(statics)
        self._kept[key] = {"key": key, "futures": futures, "where": where, "point": states,
                           "log": [], "shared": SharedLog(), "statics": statics,
                           "static_futures": static_futures}

    @property
    def replay_bytes(self) -> int:
        """Bytes of the arrays held to replay the kept rounds (the class docstring)."""
        return sum(rec["shared"].nbytes + held_bytes(rec["log"])
                   for rec in self._kept.values())

    def _log(self, rec: dict[str, Any], steps: list[tuple[Any, Any]], shared: Any) -> None:
        """Log a round (each shard's ``(fn, arg)`` and the round's ``shared``); every
        :data:`KEPT_RECOVERY_EVERY` rounds the states are fetched instead (a new recovery
        point, the log restarts)."""
        rec["log"].append(steps)
        rec["shared"].append(shared)
        if len(rec["log"]) >= KEPT_RECOVERY_EVERY:
            self.fetch(rec["key"])

    def step_kept(self, key: str, fn: Callable[..., tuple[Any, Any]], shared: Any = None,
                  args: list[Any] | None = None) -> list[Any]:
        """One round on the workers holding the shards (``shared`` broadcast once; ``fn``
        called as in :meth:`Executor.step_kept`); only the outputs travel back.  After a
        lost worker every shard is rebuilt from the recovery point by replaying the logged
        rounds (``fn`` is pure) and the round is redone: the same states and outputs as
        without the loss."""
        self._needs_session("step_kept")
        rec = self._kept[key]
        n = len(rec["futures"])
        args = [None] * n if args is None else list(args)
        if len(args) != n:
            raise ValueError(f"step_kept: {len(args)} arguments for {n} shards")
        sent = 0

        def attempt() -> tuple[list, list]:
            nonlocal sent
            client = self.client
            extra = None
            if shared is not None:
                extra = client.scatter([shared], broadcast=True, hash=False)[0]
                sent += payload_bytes(shared) * max(1, self.n_workers)
            pairs = [client.submit(fn, rec["futures"][i], extra, args[i],
                                   rec["static_futures"][i], workers=[rec["where"][i]],
                                   allow_other_workers=True, pure=False) for i in range(n)]
            states = [client.submit(operator.itemgetter(0), p, workers=[rec["where"][i]],
                                    allow_other_workers=True, pure=False)
                      for i, p in enumerate(pairs)]
            outs = [client.submit(operator.itemgetter(1), p, pure=False) for p in pairs]
            sent += payload_bytes(args)
            return states, self._gather(outs)

        states, outs = self._recovering(attempt, lambda: self._rebuild(key))
        rec["futures"] = states
        self._log(rec, [(fn, a) for a in args], shared)
        self.bytes_sent += sent
        self.bytes_received += payload_bytes(outs)
        self.tasks_run += n
        self.n_rounds += 1
        return outs

    def step_kept_chained(self, key: str, first: Callable[..., tuple[Any, Any]],
                          second: Callable[..., tuple[Any, Any]],
                          hand_over: Callable[[Any], Any], shared: Any = None,
                          args: list[Any] | None = None) -> tuple[list[Any], list[Any]]:
        """:meth:`Executor.step_kept_chained` on the workers holding the shards: both
        rounds are submitted at once; each shard's second round takes the other shards'
        hand-overs straight from their workers (no driver round trip between the rounds;
        counted in :attr:`bytes_peer`).  The driver gets both rounds' outputs; the round
        is logged with the hand-overs (computed here from the first outputs) so that a
        lost worker's shards are rebuilt by replay as in :meth:`step_kept`."""
        self._needs_session("step_kept_chained")
        rec = self._kept[key]
        n = len(rec["futures"])
        args = [None] * n if args is None else list(args)
        if len(args) != n:
            raise ValueError(f"step_kept_chained: {len(args)} arguments for {n} shards")
        sent = 0
        times: list[float] = []

        def attempt() -> tuple[list, list, list]:
            nonlocal sent
            client = self.client
            times[:] = [time.perf_counter()]
            extra = None
            if shared is not None:
                extra = client.scatter([shared], broadcast=True, hash=False)[0]
                sent += payload_bytes(shared) * max(1, self.n_workers)
            where, statics = rec["where"], rec["static_futures"]

            def on(i: int, fn: Callable[..., Any], *a: Any) -> Any:
                return client.submit(fn, *a, workers=[where[i]], allow_other_workers=True,
                                     pure=False)

            ones = [on(i, first, rec["futures"][i], extra, args[i], statics[i])
                    for i in range(n)]
            hands = [on(i, _hand, hand_over, p) for i, p in enumerate(ones)]
            twos = [on(i, _second, second, ones[i], extra, statics[i], *hands)
                    for i in range(n)]
            states = [on(i, operator.itemgetter(0), p) for i, p in enumerate(twos)]
            out1 = [client.submit(operator.itemgetter(1), p, pure=False) for p in ones]
            out2 = [client.submit(operator.itemgetter(1), p, pure=False) for p in twos]
            sent += payload_bytes(args)
            got1 = self._gather(out1)
            times.append(time.perf_counter())
            return states, got1, self._gather(out2)

        states, got1, got2 = self._recovering(attempt, lambda: self._rebuild(key))
        t_end = time.perf_counter()
        self.chained_seconds = (times[1] - times[0], t_end - times[1])
        hands = tuple(hand_over(o) for o in got1)
        rec["futures"] = states
        step = functools.partial(_chained, first, second)
        self._log(rec, [(step, (a, hands)) for a in args], shared)
        for i, h in enumerate(hands):
            mine = rec["where"][i]
            peers = {w for j, w in enumerate(rec["where"]) if j != i and w != mine}
            self.bytes_peer += payload_bytes(h) * len(peers)
        self.bytes_sent += sent
        self.bytes_received += payload_bytes(got1) + payload_bytes(got2)
        self.tasks_run += 2 * n
        self.n_rounds += 1
        return got1, got2

    def _rebuild(self, key: str) -> None:
        """After a lost worker: every shard of ``key`` placed again, its static data sent
        again and its state rebuilt from the recovery point by replaying the logged rounds
        (on its worker)."""
        rec = self._kept[key]
        n = len(rec["futures"])
        self._place()
        client = self.client
        rec["where"] = [self._slots[i % len(self._slots)] for i in range(n)]
        logs = [[rnd[i] for rnd in rec["log"]] for i in range(n)]
        rec["static_futures"] = [client.scatter([rec["statics"][i]], workers=[w],
                                                hash=False)[0]
                                 for i, w in enumerate(rec["where"])]
        packed = rec["shared"].packed
        shared = client.scatter([packed], broadcast=True, hash=False)[0]
        rec["futures"] = [
            client.submit(_replay, client.scatter([rec["point"][i]], workers=[w],
                                                  hash=False)[0],
                          logs[i], shared, rec["static_futures"][i], workers=[w],
                          allow_other_workers=True, pure=False)
            for i, w in enumerate(rec["where"])]
        self.bytes_sent += (payload_bytes(rec["point"]) + payload_bytes(logs)
                            + self.n_workers * payload_bytes(packed)
                            + payload_bytes(rec["statics"]))

    def fetch(self, key: str) -> list[Any]:
        """Gather the shards' states (also the new recovery point); after a lost worker
        they are rebuilt by replay and gathered again."""
        self._needs_session("fetch")
        rec = self._kept[key]
        states = self._recovering(lambda: self._gather(rec["futures"]),
                                  lambda: self._rebuild(key))
        self.bytes_received += payload_bytes(states)
        rec["point"], rec["log"], rec["shared"] = list(states), [], SharedLog()
        return list(states)

    def drop(self, key: str) -> None:
        self._kept.pop(key, None)

    def close(self) -> None:
        self._forget()
        self._disconnect()

    def __repr__(self) -> str:
        where = self.client_arg if isinstance(self.client_arg, str) else \
            ("the current client" if self.client_arg is None else "a client")
        return f"DaskExecutor({where})"
