"""The Dask executor (:class:`topiclink.execution.DaskExecutor`): the same results in task
order as the serial and thread executors, connected for one session (or one ``map``),
payload bytes counted, a task's own error passed unchanged, a lost worker's tasks redone
with the same inputs, and a one-line error without a client."""

from __future__ import annotations

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from tests.dask_cluster import cluster  # noqa: E402
from topiclink.execution import (  # noqa: E402
    DaskExecutor,
    SerialExecutor,
    ThreadExecutor,
    resolve_executor,
)
from topiclink.execution.dask import payload_bytes  # noqa: E402


def _draws(task: tuple[int, np.ndarray]) -> np.ndarray:
    """A task that depends only on what it is sent: its own seeded stream and its rows."""
    seed, rows = task
    return rows.sum(axis=0) + np.random.default_rng(seed).standard_normal(rows.shape[1])


def _scaled(task: int, shared: np.ndarray) -> np.ndarray:
    return shared * task


def _tasks() -> list[tuple[int, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [(s, rng.random((5 + s, 3))) for s in range(7)]


def test_same_results_in_task_order_as_in_process(client2):
    tasks = _tasks()
    want = SerialExecutor().map(_draws, tasks)
    with ThreadExecutor(2) as threads:
        np.testing.assert_array_equal(np.stack(threads.map(_draws, tasks)), np.stack(want))
    ex = DaskExecutor(client2)
    assert ex.ships_data and ex.client is None              # connects only when used
    got = ex.map(_draws, tasks)                             # outside a session: one call
    np.testing.assert_array_equal(np.stack(got), np.stack(want))
    assert ex.client is None and ex.n_rounds == 1 and ex.tasks_run == 7
    assert ex.bytes_sent == sum(payload_bytes(t) for t in tasks) > 0
    assert ex.bytes_received == 7 * 3 * 8
    shared = np.arange(4.0)
    with ex.session() as same:                              # one connection, two maps
        assert same is ex and ex.client is client2 and ex.n_workers == 2
        out = ex.map(_scaled, range(3), shared)
        assert list(ex.imap_ordered(abs, [-2, 3, -1])) == [2, 3, 1]
    assert ex.client is None
    np.testing.assert_array_equal(np.stack(out), np.outer(range(3), shared))


def _with_table(task: tuple[int, int], graph: dict, table: tuple) -> float:
    lo, hi = task
    return float(graph["w"][lo:hi].sum() + table[0][lo:hi].sum() * table[1])


def _replace_rows(table: tuple, rows: np.ndarray, values: np.ndarray) -> tuple:
    first = table[0].copy()
    first[rows] = values
    return first, table[1]


def test_replicas_and_shared_tuples_as_in_process(client2):
    """map_with on replicas (one update sending only the changed rows) and map with a
    tuple as ``shared``: the serial executor's results, bit for bit."""
    rng = np.random.default_rng(3)
    graph, table = {"w": rng.random(40)}, (rng.random(40), 2.5)
    tasks = [(i, i + 7) for i in range(0, 40, 7)]
    rows, values = np.array([1, 5, 33]), rng.random(3)
    results = []
    for ex in (SerialExecutor(), DaskExecutor(client2)):
        with ex.session():
            ex.replicate("graph", graph)
            ex.replicate("table", table)
            first = ex.map_with(_with_table, tasks, ("graph", "table"))
            sent = ex.bytes_sent
            ex.update_replica("table", _replace_rows, rows, values)
            if ex.ships_data:        # each worker gets the rows, not the table
                assert ex.bytes_sent - sent == 2 * (rows.nbytes + values.nbytes)
            second = ex.map_with(_with_table, tasks, ("graph", "table"))
            shared = ex.map(_sum_shared, [1, 2], (np.arange(3.0), 4.0))
        results.append((first, second, shared))
        assert ex.replica("table") is None or not ex.ships_data   # dropped after a session
    assert results[0] == results[1]
    assert results[0][0] != results[0][1]


def _sum_shared(task: int, shared: tuple) -> float:
    return float(shared[0].sum() * task + shared[1])


def test_scheduler_address_and_current_client():
    with cluster(1) as c:
        ex = resolve_executor(c.scheduler_address)
        assert isinstance(ex, DaskExecutor) and c.scheduler_address in repr(ex)
        assert ex.map(abs, [-1, 2]) == [1, 2]
        assert ex.client is None                    # the connection made here is closed
        with distributed.Client(c):
            assert DaskExecutor().map(abs, [-3]) == [3]


def test_errors(client2, monkeypatch):
    ex = DaskExecutor(client2)
    with pytest.raises(RuntimeError, match="outside a session"):
        ex.submit(abs, 1)
    with pytest.raises(ValueError, match="invalid literal"):    # the task's own error
        ex.map(int, ["1", "not a number"])
    assert ex.client is None
    with pytest.raises(ValueError, match="found no Dask client"):
        DaskExecutor().map(abs, [1])


def test_lost_worker_redoes_the_tasks(monkeypatch):
    """A worker process killed during a map: the tasks are submitted again with the
    same inputs and the results are those of the serial executor."""
    from tests.test_dask_faults import kill_worker

    tasks = _tasks()
    want = SerialExecutor().map(_draws, tasks)
    with cluster(2, processes=True) as c, \
            distributed.Client(c, set_as_default=False) as cl:
        ex = DaskExecutor(cl)
        with ex.session():
            real = cl.submit
            killed: list = []

            def submit(*args, **kwargs):                    # kill once, mid-submission
                if not killed and len(cl.futures) >= 3:
                    killed.append(kill_worker(cl))
                return real(*args, **kwargs)

            monkeypatch.setattr(cl, "submit", submit)
            got = ex.map(_draws, tasks)
        assert killed
    np.testing.assert_array_equal(np.stack(got), np.stack(want))


# ---------------------------------------------------------------------- kept shard states
def _walk(state: np.ndarray, shared: np.ndarray | None, arg: int,
          static: np.ndarray) -> tuple[np.ndarray, float]:
    """A pure round: the shard's state moves by its own seeded draws, the shared vector
    and its static data; returns the new state and a summary."""
    rng = np.random.default_rng(int(state[0] * 1e6) % 2**32 + arg)
    new = state + rng.standard_normal(state.shape) + (0.0 if shared is None else shared)
    new = new * static
    return new, float(new.sum())


def _rounds(ex, n_rounds: int = 5) -> tuple[list, list]:
    states = [np.full(4, float(i + 1)) for i in range(3)]
    statics = [np.linspace(0.9, 1.1, 4) + 0.01 * i for i in range(3)]
    outs = []
    with ex.session():
        ex.keep("walk", states, statics)
        for r in range(n_rounds):
            outs.append(ex.step_kept("walk", _walk, np.full(4, 0.1 * r), [r, r + 1, r + 2]))
        final = ex.fetch("walk")
    return outs, final


def test_kept_states_as_in_process(client2, monkeypatch):
    """keep / step_kept / fetch: the same outputs and final states on Dask as in
    process, with a recovery point taken mid-way (every 2 rounds here)."""
    from topiclink.execution import dask as execution_dask

    monkeypatch.setattr(execution_dask, "KEPT_RECOVERY_EVERY", 2)
    want = _rounds(SerialExecutor())
    ex = DaskExecutor(client2)
    got = _rounds(ex)
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1], strict=True):
        np.testing.assert_array_equal(a, b)
    assert ex.n_rounds == 5 and ex.bytes_received > 0


def test_kept_states_rebuilt_after_a_lost_worker(monkeypatch, caplog):
    """A worker process killed between rounds: every shard is rebuilt from the recovery
    point by replaying the logged rounds, and the run ends as the uninterrupted one."""
    from tests.test_dask_faults import kill_worker
    from topiclink.execution import dask as execution_dask

    monkeypatch.setattr(execution_dask, "KEPT_RECOVERY_EVERY", 3)
    want = _rounds(SerialExecutor(), 6)
    with cluster(2, processes=True) as c, \
            distributed.Client(c, set_as_default=False) as cl:
        cl.wait_for_workers(2, timeout=60)
        ex = DaskExecutor(cl)
        real = DaskExecutor.step_kept
        calls: list = []

        def step(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 5:                  # after a recovery point and one round
                kill_worker(cl)
            return real(self, *args, **kwargs)

        monkeypatch.setattr(DaskExecutor, "step_kept", step)
        got = _rounds(ex, 6)
    assert "redoing the iteration" in caplog.text         # the rebuild ran
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1], strict=True):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------- chained kept rounds
def test_step_kept_chained_as_in_process(client2, monkeypatch):
    """step_kept_chained: the same outputs and final states on Dask as in process (a
    recovery point mid-way), the hand-overs counted as bytes between workers."""
    from tests.test_execution import chained_rounds
    from topiclink.execution import dask as execution_dask

    monkeypatch.setattr(execution_dask, "KEPT_RECOVERY_EVERY", 2)
    want = chained_rounds(SerialExecutor())
    ex = DaskExecutor(client2)
    got = chained_rounds(ex)
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1], strict=True):
        np.testing.assert_array_equal(a, b)
    # 3 shards on 2 workers: each float hand-over (8 bytes) to the one other worker
    assert ex.n_rounds == 5 and ex.bytes_peer == 5 * 3 * 8 and ex.bytes_received > 0


def test_step_kept_chained_rebuilt_after_a_lost_worker(monkeypatch, caplog):
    """A worker process killed between chained rounds: the shards are rebuilt by replaying
    both logged rounds with their hand-overs, and the run ends as the uninterrupted one."""
    from tests.test_dask_faults import kill_worker
    from tests.test_execution import chained_rounds
    from topiclink.execution import dask as execution_dask

    monkeypatch.setattr(execution_dask, "KEPT_RECOVERY_EVERY", 3)
    want = chained_rounds(SerialExecutor(), 6)
    with cluster(2, processes=True) as c, \
            distributed.Client(c, set_as_default=False) as cl:
        cl.wait_for_workers(2, timeout=60)
        real = DaskExecutor.step_kept_chained
        calls: list = []

        def step(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 5:                  # after a recovery point and one round
                kill_worker(cl)
            return real(self, *args, **kwargs)

        monkeypatch.setattr(DaskExecutor, "step_kept_chained", step)
        got = chained_rounds(DaskExecutor(cl), 6)
    assert "redoing the iteration" in caplog.text
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1], strict=True):
        np.testing.assert_array_equal(a, b)
