"""Overlap a blocked Gibbs sweep with the draws that each finished block makes ready.

In the relational models one iteration sweeps every document's topics (Z), then draws
every pair's augmentation variable lambda_ij given omega_ij = zbar_i^T U zbar_j.  The
conditional of lambda_ij depends on documents i and j only, and no later part of the sweep
reads lambda_ij, so lambda_ij can be drawn as soon as both i and j have been swept: the
updates commute, and the chain is the same, draw for draw, whether the draws wait for the
end of the sweep or run on another core while later documents are swept.

:func:`pipeline_layout` cuts the documents into blocks of about equal work and orders the
pairs by their later endpoint, so the pairs that block b makes ready form consecutive
chunks (each with its own random stream downstream); :class:`BlockPipeline` runs the sweep
block by block and processes each chunk once its block is done.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from topiclink.execution import helper_thread

__all__ = ["PipelineLayout", "pipeline_layout", "BlockPipeline"]


@dataclass(frozen=True)
class PipelineLayout:
    """Document blocks and the chunks of pairs each block makes ready.

    Attributes
    ----------
    doc_edges : int64 (n_blocks + 1,) — block b sweeps documents ``doc_edges[b]:doc_edges[b+1]``
    pair_order : int64 (n_pairs,) — the pairs sorted by their later endpoint (stable)
    chunks : list of (lo, hi) ranges into the sorted pairs, consecutive, covering all
    block_chunks : for each block, the indices of the chunks that are ready once it is
        swept (every pair of such a chunk has its later endpoint in this block or before)
    """

    doc_edges: np.ndarray
    pair_order: np.ndarray
    chunks: list[tuple[int, int]]
    block_chunks: list[list[int]]


def pipeline_layout(work: np.ndarray, source: np.ndarray, target: np.ndarray,
                    n_blocks: int = 8, chunk_size: int = 8192,
                    min_chunk: int = 4096) -> PipelineLayout:
    """Blocks of documents of about equal ``work`` (e.g. tokens plus pair visits) and the
    pairs in the order of their later endpoint ``max(source, target)``, cut into chunks of
    at most ``chunk_size`` that each become ready when a block is done.  The pairs of
    consecutive blocks are pooled until at least ``min_chunk`` are ready (fewer, larger
    draws cost less than many small ones).  Depends only on the data (never on the number
    of threads), so random streams tied to chunks give the same draws either way.
    """
    if n_blocks < 1 or chunk_size < 1 or min_chunk < 0:
        raise ValueError("n_blocks and chunk_size must be >= 1, min_chunk >= 0")
    D = int(work.size)
    cum = np.cumsum(np.asarray(work, dtype=np.float64))
    total = float(cum[-1]) if D else 0.0
    n_blocks = max(1, min(n_blocks, D))
    # block b ends after the last document whose cumulative work is within b+1 shares
    inner = np.searchsorted(cum, total * np.arange(1, n_blocks) / n_blocks, side="right")
    doc_edges = np.unique(np.concatenate([[0], np.clip(inner, 1, max(D - 1, 1)), [D]]))
    last = np.maximum(np.asarray(source), np.asarray(target))
    order = np.argsort(last, kind="stable").astype(np.int64)
    # pairs whose later endpoint is in blocks < b: sorted positions [0, pair_edges[b])
    pair_edges = np.searchsorted(last[order], doc_edges, side="left")
    chunks: list[tuple[int, int]] = []
    block_chunks: list[list[int]] = []
    start = 0                                  # first pair not yet in a chunk
    n_done = doc_edges.size - 1
    for b in range(n_done):
        ready = int(pair_edges[b + 1])
        ids = []
        if ready - start >= max(min_chunk, 1) or (b == n_done - 1 and ready > start):
            for lo in range(start, ready, chunk_size):
                ids.append(len(chunks))
                chunks.append((lo, min(lo + chunk_size, ready)))
            start = ready
        block_chunks.append(ids)
    return PipelineLayout(doc_edges.astype(np.int64), order, chunks, block_chunks)


class BlockPipeline:
    """Run ``sweep_block(b)`` for every block in order on the calling thread and
    ``process_chunk(i)`` once for every chunk, after the block that makes it ready.

    ``threaded=False``: every chunk after the whole sweep, in order.  ``threaded=True``: a
    helper thread processes ready chunks while later blocks are swept (``sweep_block`` must
    release the GIL for this to overlap, as Numba ``nogil`` kernels do), and both threads
    finish the remaining chunks after the sweep.  Chunks must write disjoint results with
    their own random streams, so both modes give the same values.
    """

    def __init__(self, block_chunks: list[list[int]], threaded: bool) -> None:
        self.block_chunks = block_chunks
        self.threaded = bool(threaded)

    def run(self, sweep_block: Callable[[int], None],
            process_chunk: Callable[[int], None]) -> tuple[float, float]:
        """Returns (seconds in the sweep, seconds after it until every chunk is done)."""
        sweep_seconds = 0.0
        if not self.threaded:
            for b in range(len(self.block_chunks)):
                t0 = time.perf_counter()
                sweep_block(b)
                sweep_seconds += time.perf_counter() - t0
            t0 = time.perf_counter()
            for ids in self.block_chunks:
                for i in ids:
                    process_chunk(i)
            return sweep_seconds, time.perf_counter() - t0

        ready: queue.SimpleQueue[int | None] = queue.SimpleQueue()
        errors: list[BaseException] = []

        def drain(block: bool) -> None:
            while not errors:
                try:
                    i = ready.get() if block else ready.get_nowait()
                except queue.Empty:
                    return
                if i is None:
                    return
                try:
                    process_chunk(i)
                except BaseException as exc:  # noqa: BLE001 - re-raised on the caller
                    errors.append(exc)

        helper = helper_thread("topiclink-pipeline")
        helper.submit(drain, True)
        try:
            for b, ids in enumerate(self.block_chunks):
                t0 = time.perf_counter()
                sweep_block(b)
                sweep_seconds += time.perf_counter() - t0
                for i in ids:
                    ready.put(i)
            t0 = time.perf_counter()
            drain(False)
        finally:
            ready.put(None)
            helper.close()
        if errors:
            raise errors[0]
        return sweep_seconds, time.perf_counter() - t0
