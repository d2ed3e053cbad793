"""Stochastic LMV ("LMVS") with the pair blocks of every minibatch on Dask workers
(``parallel="dask"`` of :class:`~topiclink.models.lmv.VisibilityTopicModel` with
``inference="stochastic"``).

Only steps 1-3 of Algorithm 2 (Tan, Chan & Zheng 2016) move: the case-control pairs of
minibatch S and their Horvitz-Thompson sums, split into the fixed blocks of
:func:`~topiclink.inference.lmv_stochastic.block_edges` (``_SOURCES_PER_BLOCK`` sources
each), one Dask task per block (:func:`pair_block_task`).  The driver keeps everything
else (steps 4-7: phi and gamma of S, lambda, the blockmodel (a, b), the visibilities
(g, h)) and merges the blocks' results in block order with the very code of the threaded
path (:class:`~topiclink.inference.lmv_stochastic.PairMerge`).  Each block draws its
Bernoulli trials from the streams of the minibatch seed, so the fit is bit for bit that of
``parallel=None`` (any ``n_jobs``) for any number of workers or threads.

Transport:

- once per run (per :meth:`DaskStochasticLMV.session`): the citation graph's CSR arrays
  both ways and the publication times (:func:`~topiclink.inference.lmv_stochastic.
  graph_arrays`), broadcast to every worker;
- a replica of the per-document table read by the pair kernel -- E log theta (D, K),
  E log tau (D,), taubar (D,) -- on every worker: broadcast whole at the first minibatch,
  then per minibatch only the rows that changed since the previous one (the previous
  minibatch's documents: steps 4 and 7 touch only those), found by comparing bits with the
  driver's copy of what the workers hold; each worker applies them with a task
  (:func:`update_rows`) that returns a new replica (functional: a recomputed task sees the
  same input);
- each task is placed on its worker (block i on worker thread i mod the threads) but may
  run elsewhere if that worker is gone (Dask then moves its inputs between workers, bytes
  not counted here); every task is a function of its inputs, so this never changes the fit;
- per block task: the minibatch (|S| int64), vs_link and Bbar (K x K), the seed and the
  settings; back: the block's column sums (only their nonzero rows), S1 (K x K), its rows
  of gout_rows, gin (16 x K) and T (16 x K x K), and two counts.

Bytes per minibatch (:attr:`DaskStochasticLMV.bytes_sent` / ``bytes_received`` add the
payloads up; a sweep's ``info`` has the sweep's totals): sent
``n_workers x r (K + 3) x 8`` (r changed rows, r <= |S|) plus
``n_blocks x (|S| x 8 + 2 K^2 x 8 + 40)``; received ``n_blocks x (16 (2K + K^2) + K^2)
x 8`` plus the nonzero column-sum rows (``(K x 8 + 8)`` each).  The first minibatch of a
run sends ``n_workers x D (K + 2) x 8`` for the table and ``n_workers x`` the graph
(``(2 (D + 1) + 2 L) x 8 + D x 8`` bytes).  Dask and distributed are imported only when a
run starts.

Faults: the driver holds the graph and the table (the replicas are copies of its
``mirror``), so when a worker is lost mid-fit and the minibatch's tasks are cancelled,
the graph and the whole table are broadcast again to the workers left (or restarted by
their nannies) and the minibatch's blocks submitted again with the same seed: the same
chain, draw for draw (:class:`~topiclink.distributed.WorkerLostError` only after
:data:`~topiclink.distributed.dask_sweeper.MAX_RECOVERIES` failed redos).  A lost
scheduler stops the fit with a one-line :class:`~topiclink.distributed.SchedulerLostError`
within :data:`~topiclink.distributed.dask_sweeper.SCHEDULER_TIMEOUT` (30) s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from topiclink.distributed.dask_sweeper import DaskConnection
from topiclink.inference.lmv import LMVData
from topiclink.inference.lmv_stochastic import (
    LMVSState,
    PairMerge,
    StochasticLMV,
    batch_positions,
    block_edges,
    graph_arrays,
    pair_arguments,
    pair_block,
)

__all__ = ["DaskStochasticLMV", "pair_block_task", "update_rows"]


def update_rows(replica: tuple, rows: np.ndarray, elog_theta: np.ndarray,
                elog_tau: np.ndarray, taubar: np.ndarray) -> tuple:
    """A worker's replica of (E log theta, E log tau, taubar) with ``rows`` replaced
    (runs on a worker; returns new arrays, the input is not modified)."""
    et, etau, tb = (a.copy() for a in replica)
    et[rows] = elog_theta
    etau[rows] = elog_tau
    tb[rows] = taubar
    return et, etau, tb


def pair_block_task(graph: dict, replica: tuple, shared: tuple, lo: int, hi: int) -> tuple:
    """Steps 1-3 of Algorithm 2 for the sources ``batch[lo:hi]`` (runs on a worker).

    ``graph``: :func:`~topiclink.inference.lmv_stochastic.graph_arrays` of the data;
    ``replica``: (E log theta (D, K), E log tau (D,), taubar (D,)) at the start of the
    minibatch; ``shared``: ``(batch, vs_link, Bbar, n0, seed, tol, max_inner)``.

    Returns ``(col_rows, col_values, S1, rounds, n_pairs, gout_rows, gin, T)``: the
    block's column sums as their nonzero rows (positions in the batch, values), its
    private S1, counts, and its rows lo..hi of gout_rows, gin and T.
    """
    elog_theta, elog_tau, taubar = replica
    batch, vs_link, Bbar, n0, seed, tol, max_inner = shared
    D, K = elog_theta.shape
    n = batch.size
    args = pair_arguments(elog_theta, graph, vs_link, elog_tau, taubar, Bbar, n0=n0,
                          seed=seed, tol=tol, max_inner=max_inner)
    gout_rows, gin, T = np.zeros((n, K)), np.zeros((n, K)), np.zeros((n, K, K))
    g_cols, s1, rounds, n_pairs = pair_block(batch, batch_positions(batch, D), lo, hi, args,
                                             gout_rows, gin, T)
    nonzero = np.flatnonzero(g_cols.any(axis=1))
    return (nonzero, g_cols[nonzero], s1, int(rounds), int(n_pairs),
            gout_rows[lo:hi].copy(), gin[lo:hi].copy(), T[lo:hi].copy())


class DaskStochasticLMV(DaskConnection, StochasticLMV):
    """:class:`~topiclink.inference.lmv_stochastic.StochasticLMV` with the pair blocks of
    each minibatch on the workers of a Dask cluster (see the module docstring).

    Parameters
    ----------
    client : distributed.Client, scheduler address or None (the current client)
    others : as :class:`~topiclink.inference.lmv_stochastic.StochasticLMV`
    """

    def __init__(self, n_topics: int, *, client: Any = None, **kwargs: Any) -> None:
        super().__init__(n_topics, **kwargs)
        self._init_connection(client)
        self.n_minibatches_run = 0
        self._reset()

    def _reset(self) -> None:
        self._data: LMVData | None = None
        self._graph: Any = None                  # future of graph_arrays(data), broadcast
        self._slots: list[str] = []              # one entry per worker thread
        self._workers: list[str] = []
        self._replica: dict[str, Any] = {}       # worker -> future of its table replica
        self._mirror: tuple | None = None        # what the replicas hold (driver copy)

    # ------------------------------------------------------------------ session
    @contextlib.contextmanager
    def session(self, state: LMVSState, data: LMVData) -> Iterator[None]:
        """Connect to the cluster for one run; the graph is scattered by the first
        minibatch and everything is released on leaving."""
        self._connect()
        try:
            yield
        finally:
            self._close()

    def _close(self) -> None:
        try:
            self._reset()
        finally:
            self._disconnect()

    def _load(self, data: LMVData) -> None:
        """Broadcast the citation graph once (to every worker) and note the workers'
        threads (block i runs on slot i mod the number of slots)."""
        client = self.client
        self._reset()
        nthreads = client.nthreads()
        self._workers = sorted(nthreads)
        self._slots = [w for w in self._workers for _ in range(max(1, int(nthreads[w])))]
        self.n_workers = len(self._workers)
        graph = graph_arrays(data)
        self._graph = client.scatter([graph], broadcast=True, hash=False)[0]
        self.bytes_sent += self.n_workers * sum(a.nbytes for a in graph.values())
        self._data = data

    def _refresh_replicas(self, elog_theta: np.ndarray, elog_tau: np.ndarray,
                          taubar: np.ndarray) -> None:
        """Bring every worker's table to the current values: all of it the first time (or
        when the number of documents changed), else only the rows whose bits changed."""
        client = self.client
        table = (np.ascontiguousarray(elog_theta), np.ascontiguousarray(elog_tau),
                 np.ascontiguousarray(taubar))
        mirror = self._mirror
        if mirror is None or mirror[0].shape != table[0].shape:
            whole = client.scatter([table], broadcast=True, hash=False)[0]
            self._replica = dict.fromkeys(self._workers, whole)
            self.bytes_sent += self.n_workers * sum(a.nbytes for a in table)
            self._mirror = tuple(a.copy() for a in table)
            return
        changed = (table[0].view(np.uint64) != mirror[0].view(np.uint64)).any(axis=1)
        changed |= table[1].view(np.uint64) != mirror[1].view(np.uint64)
        changed |= table[2].view(np.uint64) != mirror[2].view(np.uint64)
        rows = np.flatnonzero(changed)
        if rows.size == 0:
            return
        delta = tuple(a[rows] for a in table)
        self._replica = {w: client.submit(update_rows, self._replica[w], rows, *delta,
                                          workers=[w], allow_other_workers=True,
                                          pure=False)
                         for w in self._workers}
        self.bytes_sent += self.n_workers * (rows.nbytes + sum(a.nbytes for a in delta))
        for m, a in zip(mirror, delta, strict=True):
            m[rows] = a

    # ------------------------------------------------------------------ steps 1-3
    def pair_statistics(self, batch: np.ndarray, elog_theta: np.ndarray, data: LMVData,
                        vs_link: np.ndarray, elog_tau: np.ndarray, taubar: np.ndarray,
                        Bbar: np.ndarray, seed: int) -> dict:
        """Steps 1-3 of Algorithm 2, one Dask task per block, merged here in block order
        (the result of :func:`~topiclink.inference.lmv_stochastic.sampled_statistics`,
        bit for bit)."""
        if self.client is None:
            raise ValueError("DaskStochasticLMV: pair statistics need a running session")
        if data is not self._data:
            self._recovering(lambda: self._load(data), lambda: None)
        D, K = elog_theta.shape
        batch = np.ascontiguousarray(batch, dtype=np.int64)
        shared = (batch, np.ascontiguousarray(vs_link), np.ascontiguousarray(Bbar),
                  int(self.n0), int(seed), 1e-6, 100)   # sampled_statistics' tol, max_inner
        edges = block_edges(batch.size)

        def attempt() -> list:
            self._refresh_replicas(elog_theta, elog_tau, taubar)
            client = self.client
            futures = []
            for i in range(len(edges) - 1):
                w = self._slots[i % len(self._slots)]
                futures.append(client.submit(pair_block_task, self._graph, self._replica[w],
                                             shared, edges[i], edges[i + 1], workers=[w],
                                             allow_other_workers=True, pure=False))
            self.bytes_sent += len(futures) * (batch.nbytes + shared[1].nbytes
                                               + shared[2].nbytes + 40)
            return self._gather(futures)

        def restore() -> None:
            # the graph and the table replicas may be gone: send them again, whole
            self._load(data)

        results = self._recovering(attempt, restore)
        out = PairMerge(batch.size, K)
        for i, (rows, values, s1, rounds, n_pairs, gout_rows, gin, T) in enumerate(results):
            lo, hi = edges[i], edges[i + 1]
            out.gout_rows[lo:hi] = gout_rows
            out.gin[lo:hi] = gin
            out.T[lo:hi] = T
            g_cols = np.zeros((batch.size, K))
            g_cols[rows] = values
            out.merge((g_cols, s1, rounds, n_pairs))
            self.bytes_received += (rows.nbytes + values.nbytes + s1.nbytes + gout_rows.nbytes
                                    + gin.nbytes + T.nbytes + 16)
        self.n_minibatches_run += 1
        return out.result()

    # ------------------------------------------------------------------ iterating
    def _counted(self, run: Any, state: LMVSState, data: LMVData) -> dict[str, float]:
        if self.client is None:         # outside a session (partial_fit): one of its own
            with self.session(state, data):
                return self._counted(run, state, data)
        before = (self.bytes_sent, self.bytes_received)
        info = run()
        info["bytes_sent"] = float(self.bytes_sent - before[0])
        info["bytes_received"] = float(self.bytes_received - before[1])
        return info

    def step(self, state: LMVSState, data: LMVData) -> dict[str, float]:
        """One sweep (:meth:`StochasticLMV.step`) with the sweep's bytes in ``info``."""
        return self._counted(lambda: super(DaskStochasticLMV, self).step(state, data),
                             state, data)

    def partial_step(self, state: LMVSState, data: LMVData,
                     documents: np.ndarray | None = None) -> dict[str, float]:
        """:meth:`StochasticLMV.partial_step` (``partial_fit``) on the cluster."""
        return self._counted(
            lambda: super(DaskStochasticLMV, self).partial_step(state, data, documents),
            state, data)

    def minibatch_step(self, state: LMVSState, data: LMVData, batch: np.ndarray,
                       rho: float) -> dict[str, float]:
        if self.client is None:
            with self.session(state, data):
                return super().minibatch_step(state, data, batch, rho)
        return super().minibatch_step(state, data, batch, rho)
