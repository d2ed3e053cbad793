"""Blocked sweep with the draws of finished pairs overlapped (relational/pipeline.py)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from topiclink.relational.pipeline import BlockPipeline, pipeline_layout


def _pairs(seed: int, D: int = 60, n: int = 500):
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, D, n), rng.integers(0, D, n)
    order = np.argsort(np.maximum(src, dst), kind="stable")
    return rng.integers(1, 30, D).astype(float), src[order], dst[order]


@pytest.mark.parametrize(("n_blocks", "chunk_size", "min_chunk"),
                         [(1, 8192, 0), (4, 7, 0), (8, 50, 120), (100, 3, 1), (8, 64, 10_000)])
def test_layout_chunks_cover_pairs_ready_after_their_block(n_blocks, chunk_size, min_chunk):
    work, src, dst = _pairs(0)
    lay = pipeline_layout(work, src, dst, n_blocks=n_blocks, chunk_size=chunk_size,
                          min_chunk=min_chunk)
    edges = lay.doc_edges
    assert edges[0] == 0 and edges[-1] == work.size and np.all(np.diff(edges) > 0)
    assert len(lay.block_chunks) == edges.size - 1 <= max(1, min(n_blocks, work.size))
    np.testing.assert_array_equal(lay.pair_order, np.arange(src.size))  # already sorted
    # consecutive chunks of at most chunk_size covering every pair once
    assert lay.chunks[0][0] == 0 and lay.chunks[-1][1] == src.size
    assert all(b[0] == a[1] for a, b in zip(lay.chunks, lay.chunks[1:], strict=False))
    assert all(0 < hi - lo <= chunk_size for lo, hi in lay.chunks)
    assert sorted(i for ids in lay.block_chunks for i in ids) == list(range(len(lay.chunks)))
    # a chunk released after block b holds pairs whose later endpoint is swept by then,
    # and every chunk is released as soon as it is that large (or at the end)
    last = np.maximum(src, dst)
    for b, ids in enumerate(lay.block_chunks):
        for i in ids:
            lo, hi = lay.chunks[i]
            assert np.all(last[lo:hi] < edges[b + 1])
        if ids:
            lo = lay.chunks[ids[0]][0]
            hi = lay.chunks[ids[-1]][1]
            assert hi - lo >= min_chunk or b == len(lay.block_chunks) - 1
            assert hi == np.searchsorted(last, edges[b + 1])   # all that is ready
    if min_chunk == 0 and n_blocks > 1:
        assert sum(1 for ids in lay.block_chunks if ids) > 1


def test_layout_balances_work_and_rejects_bad_sizes():
    work = np.ones(100)
    work[:10] = 91.0                       # the first ten documents carry 91% of the work
    lay = pipeline_layout(work, np.zeros(0, int), np.zeros(0, int), n_blocks=10, min_chunk=0)
    assert lay.doc_edges[1] == 1 and lay.chunks == []
    with pytest.raises(ValueError, match=">= 1"):
        pipeline_layout(work, np.zeros(0, int), np.zeros(0, int), n_blocks=0)


@pytest.mark.parametrize("threaded", [False, True])
def test_pipeline_processes_each_chunk_once_after_its_block(threaded):
    block_chunks = [[0, 1], [], [2], [3, 4, 5]]
    swept: list[int] = []
    done: dict[int, int] = {}
    lock = threading.Lock()

    def process(i: int) -> None:
        with lock:
            assert i not in done
            done[i] = len(swept)            # blocks swept when chunk i ran

    sweep_s, wait_s = BlockPipeline(block_chunks, threaded).run(swept.append, process)
    assert swept == [0, 1, 2, 3] and sorted(done) == list(range(6))
    for b, ids in enumerate(block_chunks):
        assert all(done[i] >= b + 1 for i in ids)
    assert sweep_s >= 0 and wait_s >= 0


@pytest.mark.parametrize("threaded", [False, True])
def test_pipeline_raises_the_errors_of_either_side(threaded):
    def bad_chunk(i: int) -> None:
        if i == 1:
            raise RuntimeError("chunk 1 broke")

    with pytest.raises(RuntimeError, match="chunk 1 broke"):
        BlockPipeline([[0], [1], [2]], threaded).run(lambda b: None, bad_chunk)

    def bad_sweep(b: int) -> None:
        if b == 1:
            raise ValueError("sweep broke")

    with pytest.raises(ValueError, match="sweep broke"):
        BlockPipeline([[0], [1], [2]], threaded).run(bad_sweep, lambda i: None)
    assert not any(t.name == "topiclink-pipeline" for t in threading.enumerate())
