"""topiclink.execution: results in task order on every executor, bounded streaming,
lifetimes, resolution of None / thread counts, and the thread call sites giving the same
arrays on one and two threads."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from topiclink.execution import (
    Executor,
    SerialExecutor,
    ThreadExecutor,
    n_threads,
    open_executor,
    padded_rows,
    resolve_executor,
    resolve_n_jobs,
    run_blocks_in_order,
)


def _slow_square(i: int) -> int:
    time.sleep(0.002 * ((7 * i) % 5))     # finish out of order
    return i * i


@pytest.mark.parametrize("make", [SerialExecutor, lambda: ThreadExecutor(3)])
def test_map_and_streaming_keep_task_order(make):
    with make() as ex:
        assert isinstance(ex, Executor)
        assert ex.map(_slow_square, range(20)) == [i * i for i in range(20)]
        assert ex.map(lambda t, s: t + s, range(5), shared=10) == list(range(10, 15))
        assert list(ex.imap_ordered(_slow_square, range(20))) == [i * i for i in range(20)]
        assert ex.submit(_slow_square, 4).result() == 16
        assert ex.tasks_run == 46
        assert ex.bytes_sent == ex.bytes_received == 0     # in process: nothing shipped


def test_streaming_bounds_the_tasks_in_flight():
    started: list[int] = []
    merged: list[int] = []
    lock = threading.Lock()

    def task(i: int) -> int:
        with lock:
            started.append(i)
        return i

    with ThreadExecutor(2) as ex:
        for r in ex.imap_ordered(task, range(40)):
            time.sleep(0.001)
            # never more than 2 n_workers started and not yet handed over
            assert len(started) - len(merged) <= 4
            merged.append(r)
    assert merged == list(range(40))


def test_serial_streaming_is_lazy():
    seen: list[int] = []
    gen = SerialExecutor().imap_ordered(lambda i: seen.append(i) or i, range(5))
    assert seen == []
    assert next(gen) == 0 and seen == [0]


@pytest.mark.parametrize("make", [SerialExecutor, lambda: ThreadExecutor(2)])
def test_a_task_error_reaches_the_caller(make):
    def bad(i: int) -> int:
        if i == 3:
            raise KeyError("task 3")
        return i

    with make() as ex, pytest.raises(KeyError, match="task 3"):
        ex.map(bad, range(6))
    with make() as ex, pytest.raises(KeyError, match="task 3"):
        list(ex.imap_ordered(bad, range(6)))
    with make() as ex:
        assert isinstance(ex.submit(bad, 3).exception(), KeyError)


def test_threads_are_named_and_released():
    names: list[str] = []
    with ThreadExecutor(2, name="topiclink-test") as ex:
        ex.map(lambda i: names.append(threading.current_thread().name), range(4))
    assert names and all(n.startswith("topiclink-test") for n in names)
    with pytest.raises(RuntimeError, match="closed"):
        ex.map(abs, [1])
    with pytest.raises(ValueError, match="start with 'topiclink'"):
        ThreadExecutor(2, name="pool")
    with pytest.raises(ValueError, match=">= 1"):
        ThreadExecutor(0)


def test_resolve_executor():
    assert isinstance(resolve_executor(None), SerialExecutor)
    assert isinstance(resolve_executor(1), SerialExecutor)
    with resolve_executor(2) as ex:
        assert isinstance(ex, ThreadExecutor) and ex.n_workers == 2
    with ThreadExecutor(2) as mine:
        assert resolve_executor(mine) is mine
        with open_executor(mine) as borrowed:    # borrowed: stays open afterwards
            assert borrowed is mine
        assert mine.map(abs, [-1]) == [1]
    with open_executor(2) as made:
        pass
    with pytest.raises(RuntimeError, match="closed"):
        made.map(abs, [1])
    for bad, error in ((0, ValueError), (True, TypeError), (2.0, TypeError)):
        with pytest.raises(error):
            resolve_executor(bad)
    addressed = resolve_executor("tcp://127.0.0.1:8786")    # connects only when used
    assert type(addressed).__name__ == "DaskExecutor" and addressed.ships_data
    assert addressed.client is None and addressed.client_arg == "tcp://127.0.0.1:8786"
    assert not resolve_executor(None).ships_data and not resolve_executor(mine).ships_data


def test_run_blocks_in_order_merges_in_block_order():
    for threads in (1, 2, 3):
        merged: list[int] = []
        run_blocks_in_order(_slow_square, 12, threads, merged.append)
        assert merged == [b * b for b in range(12)]


def test_thread_counts():
    assert resolve_n_jobs(None) == 1 and n_threads(10**6) >= 1


def test_the_base_module_names_no_executor_subclass():
    """``execution/executor.py`` imports no subclass (the factory is ``resolve.py``): the
    package has no import circle."""
    import ast
    from pathlib import Path

    import topiclink.execution.executor as base

    tree = ast.parse(Path(base.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not {m for m in imported if m and m.startswith("topiclink.execution.")}


def test_padded_rows_keep_values_and_a_cache_line_apart():
    rows = np.arange(12, dtype=np.uint64).reshape(3, 4)
    out = padded_rows(rows)
    np.testing.assert_array_equal(out, rows)
    assert out.strides[0] >= 128


def test_chunked_augmenter_same_draws_on_one_and_two_threads():
    """The augmentation draws of fixed chunks with their own streams (the gRTM pair
    chunks): bit for bit the same on one and two threads."""
    from topiclink.relational.augment import ChunkedAugmenter

    rng = np.random.default_rng(0)
    omega = rng.normal(size=5000)
    y = (rng.random(5000) < 0.5).astype(np.float64)
    results = []
    for loss in ("logistic", "hinge"):
        for threads in (1, 2):
            with ChunkedAugmenter(np.random.default_rng(7), loss, y, 1.5, n_threads=threads,
                                  chunk_size=700) as aug:
                results.append(aug(omega))
        (a1, b1), (a2, b2) = results[-2:]
        np.testing.assert_array_equal(a1, a2)
        np.testing.assert_array_equal(b1, b2)


# ---------------------------------------------------------------------- chained kept rounds
def _first(state: np.ndarray, shared: float, arg: int, static: float
           ) -> tuple[np.ndarray, tuple]:
    """A pure first round: the state moves by its own seeded draws; hands over its sum."""
    rng = np.random.default_rng(int(abs(state[0]) * 1e6) % 2**32 + arg)
    new = (state + rng.standard_normal(state.shape) + shared) * static
    return new, (arg, float(new.sum()))


def _hand(out: tuple) -> float:
    return out[1]


def _second(state: np.ndarray, shared: float, hands: tuple, static: float
            ) -> tuple[np.ndarray, float]:
    """A pure second round reading every shard's hand-over of this round."""
    new = state + 0.01 * np.array(hands).mean() * static
    return new, float(new @ new)


def chained_rounds(ex, n_rounds: int = 5) -> tuple[list, list]:
    """keep, ``n_rounds`` chained rounds and fetch of three shards on ``ex``."""
    states = [np.full(4, float(i + 1)) for i in range(3)]
    outs = []
    with ex.session():
        ex.keep("walk", states, [0.9, 1.0, 1.1])
        for r in range(n_rounds):
            outs.append(ex.step_kept_chained("walk", _first, _second, _hand, 0.1 * r,
                                             [r, r + 1, r + 2]))
        final = ex.fetch("walk")
    return outs, final


def _chained_by_hand(n_rounds: int = 5) -> tuple[list, list]:
    """What chained rounds compute, written out."""
    states = [np.full(4, float(i + 1)) for i in range(3)]
    statics = [0.9, 1.0, 1.1]
    outs = []
    for r in range(n_rounds):
        ones = [_first(states[i], 0.1 * r, r + i, statics[i]) for i in range(3)]
        hands = tuple(_hand(o[1]) for o in ones)
        twos = [_second(ones[i][0], 0.1 * r, hands, statics[i]) for i in range(3)]
        states = [t[0] for t in twos]
        outs.append(([o[1] for o in ones], [t[1] for t in twos]))
    return outs, states


@pytest.mark.parametrize("make", [SerialExecutor, lambda: ThreadExecutor(3)])
def test_step_kept_chained_in_process(make):
    """Every shard's second round reads every shard's first-round hand-over of the same
    round; the states stay kept; outputs of both rounds in shard order."""
    want = _chained_by_hand()
    with make() as ex:
        got = chained_rounds(ex)
        assert ex.bytes_peer == 0 and all(t >= 0 for t in ex.chained_seconds)
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1], strict=True):
        np.testing.assert_array_equal(a, b)
    with SerialExecutor() as ex, pytest.raises(ValueError, match="2 arguments for 3 shards"):
        ex.keep("walk", [np.zeros(2)] * 3)
        ex.step_kept_chained("walk", _first, _second, _hand, 0.0, [1, 2])
