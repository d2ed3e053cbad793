"""The compact replay log of the Dask executor (:mod:`topiclink.execution.replay`): every
logged broadcast rebuilt bit for bit from the latest and the entries that changed, the
driver's bytes O(changed entries) rather than O(V x K), and kept shards rebuilt after a
worker killed at several offsets from the recovery point, the same chain."""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.execution.replay import SharedLog, difference, restore, rounds


def _same(a, b) -> None:
    """Equal bit for bit: type, structure, dtype, shape and bytes."""
    assert type(a) is type(b)
    if isinstance(a, tuple | list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.flags.c_contiguous
        assert a.tobytes() == b.tobytes()
    else:
        assert a == b or (a != a and b != b)


def _values(n: int = 7) -> list:
    """Broadcasts of consecutive rounds: sparse integer moves, floats with -0.0 / NaN /
    inf, a compact dtype that widens, a shape that changes, scalars, None."""
    rng = np.random.default_rng(0)
    nwk = rng.integers(0, 50, (300, 8)).astype(np.int32)
    u8 = rng.integers(0, 255, 40).astype(np.uint8)
    x = rng.standard_normal(10)
    half, halff = np.zeros(200, dtype=np.int32), np.zeros(200)
    out = []
    for r in range(n):
        nwk = nwk.copy()
        i, j = rng.integers(0, 300, 5), rng.integers(0, 8, 5)
        np.add.at(nwk, (i, j), rng.integers(-3, 4, 5))
        u8 = u8.copy()
        u8[r] = 255 - u8[r]                        # a change of more than int8 holds
        x = x.copy()
        x[r % 10] = [-0.0, np.nan, np.inf, 1e-300][r % 4]
        ndk = np.full((3, 2), 100 * r).astype(np.int8 if r < 2 else np.int16)
        big = np.arange(2 * r + 1, dtype=np.int64) * 2**40
        flags = np.array([r % 2 == 0, True])
        half = half + (rng.random(200) < 0.5)        # most positions: a bit mask
        halff = np.where(rng.random(200) < 0.3, rng.standard_normal(200), halff)
        out.append((nwk, u8, x, ndk, big, flags, [float(r), "s"], r % 2 == 0, None,
                    np.float64(0.5 * r), half.astype(np.int32), halff))
    return out


def test_rounds_rebuilt_bit_for_bit():
    values = _values()
    log = SharedLog()
    for n, v in enumerate(values, 1):
        log.append(v)
        got = list(rounds(log.packed))
        assert len(got) == n
        for a, b in zip(got, values[:n], strict=True):
            _same(a, b)
    assert list(rounds(SharedLog().packed)) == []


def test_difference_both_ways_and_inputs_left_alone():
    a, b = _values(2)
    copies = [np.copy(x) if isinstance(x, np.ndarray) else x for x in (a[0], b[0])]
    d = difference(b, a)
    _same(restore(b, d, backward=True), a)
    _same(restore(a, d, backward=False), b)
    np.testing.assert_array_equal(a[0], copies[0])
    np.testing.assert_array_equal(b[0], copies[1])
    assert d[2][0][0] == "add" and d[2][0][2].dtype == np.int8     # compact changes
    assert d[2][2][0] == "put"                                      # floats: bits
    assert d[2][10][0] == "add" and d[2][10][1].dtype == np.uint8   # positions: a mask
    assert d[2][11][0] == "put" and d[2][11][1].dtype == np.uint8


def test_bytes_grow_with_the_changes_not_with_v_times_k():
    """V x K int32 counts of which each round moves 200 tokens: the log holds one full
    table and a few bytes per changed entry, where whole copies held 10 x V x K x 4."""
    rng = np.random.default_rng(1)
    V, K, moved = 20_000, 50, 200
    nwk = rng.integers(0, 5, (V, K)).astype(np.int32)
    log = SharedLog()
    changed = 0
    for _ in range(10):
        nwk = nwk.copy()
        w = rng.integers(0, V, moved)
        old, new = rng.integers(0, K, moved), rng.integers(0, K, moved)
        np.add.at(nwk, (w, old), -1)
        np.add.at(nwk, (w, new), 1)
        log.append((nwk, nwk.sum(axis=0), 0.01, False))
        changed += 2 * moved
    full = V * K * 4
    assert log.nbytes <= full + 2 * K * 8 + 10 * changed         # int32 positions, int8 changes
    assert log.nbytes < 1.1 * full                                  # was 10 x full
    _same(list(rounds(log.packed))[-1][0], nwk)


# ---------------------------------------------------------------------- on Dask
distributed = pytest.importorskip("distributed")


def _sweep(state: np.ndarray, shared: tuple, arg: int, static: np.ndarray
           ) -> tuple[np.ndarray, tuple]:
    """A pure AD-LDA-like round: moves a few counts of the shared table by the shard's own
    draws; returns its state and its changes (the driver adds them up)."""
    counts, weights = shared
    rng = np.random.default_rng(int(state.sum()) + 7 * arg)
    rows = rng.integers(0, counts.shape[0], 3)
    cols = rng.integers(0, counts.shape[1], 3)
    change = rng.integers(-1, 2, 3).astype(np.int32)
    new = state + weights[cols] * static + float(counts[rows, cols].sum())
    return new, (rows, cols, change)


def _fit(ex, n_rounds: int, sizes: list | None = None) -> tuple[list, list]:
    """``n_rounds`` rounds whose broadcast is a 2000 x 30 int32 table changed in a few
    entries per round (and a float vector); the replay bytes after each round."""
    counts = np.zeros((2000, 30), dtype=np.int32)
    weights = np.linspace(0.0, 1.0, 30)
    states = [np.full(3, float(i)) for i in range(3)]
    statics = [np.full(3, 1.0 + 0.1 * i) for i in range(3)]
    outs = []
    with ex.session():
        ex.keep("sweep", states, statics)
        for r in range(n_rounds):
            got = ex.step_kept("sweep", _sweep, (counts.copy(), weights.copy()),
                               [r, r + 1, r + 2])
            for rows, cols, change in got:
                np.add.at(counts, (rows, cols), change)
            weights = weights + 0.01
            outs.append(got)
            if sizes is not None:
                sizes.append(ex.replay_bytes)
        final = ex.fetch("sweep")
    return outs, final + [counts]


def test_replay_bytes_on_dask_are_the_changes(client2, monkeypatch):
    from topiclink.execution import DaskExecutor, SerialExecutor
    from topiclink.execution import dask as execution_dask

    monkeypatch.setattr(execution_dask, "KEPT_RECOVERY_EVERY", 6)
    want = _fit(SerialExecutor(), 8)
    sizes: list = []
    got = _fit(DaskExecutor(client2), 8, sizes)
    for a, b in zip(got[1], want[1], strict=True):
        np.testing.assert_array_equal(a, b)
    table = 2000 * 30 * 4
    # one table, the float vector, and per round at most 9 changed entries (5 bytes
    # each) and 30 floats (16 bytes each + 4 for the position) besides the shards' args
    for n, b in zip([1, 2, 3, 4, 5, 0, 1, 2], sizes, strict=True):
        assert b <= table + 240 + n * (9 * 5 + 30 * 20) + 64, (n, b)
    assert max(sizes) < 1.1 * table                        # was 5 tables at the peak


@pytest.mark.parametrize("kill_before", [4, 5, 6])
def test_replay_after_a_kill_at_several_offsets_same_chain(kill_before, monkeypatch, caplog):
    """Recovery points every 3 rounds (after rounds 3 and 6): a worker killed before round
    4 (nothing to replay), 5 (one round) or 6 (two rounds, just before the next point)
    leaves the chain of the uninterrupted run."""
    from tests.dask_cluster import cluster
    from tests.test_dask_faults import kill_worker
    from topiclink.execution import DaskExecutor, SerialExecutor
    from topiclink.execution import dask as execution_dask

    monkeypatch.setattr(execution_dask, "KEPT_RECOVERY_EVERY", 3)
    want = _fit(SerialExecutor(), 8)
    with cluster(2, processes=True) as c, \
            distributed.Client(c, set_as_default=False) as cl:
        cl.wait_for_workers(2, timeout=60)
        real = DaskExecutor.step_kept
        calls: list = []

        def step(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == kill_before:
                kill_worker(cl)
            return real(self, *args, **kwargs)

        monkeypatch.setattr(DaskExecutor, "step_kept", step)
        got = _fit(DaskExecutor(cl), 8)
    assert "redoing the iteration" in caplog.text
    for a, b in zip(got[0], want[0], strict=True):
        for x, y in zip(a, b, strict=True):
            for u, v in zip(x, y, strict=True):
                np.testing.assert_array_equal(u, v)
    for a, b in zip(got[1], want[1], strict=True):
        np.testing.assert_array_equal(a, b)
