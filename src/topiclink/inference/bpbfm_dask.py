"""Online Gibbs of BPBFM-1 / BPBFM-2 with the minibatch's latent counts drawn on Dask
(``BilinearPoissonFactorModel(inference="online", parallel="dask")``).

The filter is :class:`~topiclink.inference.bpbfm_online.BPBFMOnline`'s (Hu, Rai & Carin
2016, supplement section 2): each minibatch ``I_t`` draws its latent counts and their
allocation given the current parameters (Gibbs steps 1-2 of the batch sampler), folds them
into the decaying statistics (supplement eq. 7) and draws the global variables it touches
(eqs. 11-20).  Step 1 is cut into the same fixed chunks as
:func:`~topiclink.inference.bpbfm.chunked_counts` (``n_chunks_for(batch_size)`` chunks,
``np.linspace`` boundaries over the minibatch, chunk b on kernel stream b); here every
non-empty chunk is one Dask task (:func:`count_chunk`) and everything else stays on the
driver:

- the task gets the chunk's entries on chunk-local ids, the gamma rows ``g_i`` (totals
  folded into the matrices, as in the minibatch kernel) of the chunk's entities only, the
  relation matrices ``Lambda^r`` of its relations, the CSR list of their (matrix, weight)
  terms and the matrices ``G^m`` those terms name (BPBFM-1: the chunk's relations;
  BPBFM-2: the M dictionary matrices, O(M K^2)), and its kernel stream row;
- it runs :func:`~topiclink.kernels.bpbfm.sweep_entries` over the chunk with private
  accumulators and returns them (entity-factor counts of its entities, cell counts of its
  matrices, BPBFM-2 relation-matrix counts) with the total and its advanced stream;
- the driver adds the chunks' counts into the minibatch's arrays in chunk order and writes
  the streams back: exactly :func:`chunked_counts`' result (integer sums), so the fit is
  bit for bit that of ``parallel=None`` for any number of workers or threads.

The folding (eq. 7) and the global draws run on the driver from the merged counts.

Bytes per minibatch (payload sizes; :attr:`DaskBPBFMOnline.bytes_sent` /
:attr:`DaskBPBFMOnline.bytes_received` add them up and each sweep's ``info`` reports
them): sent ``21 |I_t|`` (entries: int32 ids, int8 kind, float64 value) plus, per chunk,
``8 K (n_e + 1)`` for its entity rows and ids, ``8 K^2`` per relation (and BPBFM-2
``8 M K^2 + 16 M`` per relation term list) and 32 for the stream; received per chunk
``8 K n_e`` + the cell counts + 40.  Nothing stays on the workers between minibatches.

Faults: the driver holds everything a chunk task needs, so a worker lost mid-fit costs
only a redo: Dask runs a lost task again elsewhere by itself, and a minibatch whose tasks
were cancelled (or killed a worker :data:`~topiclink.distributed.dask_sweeper.
MAX_RECOVERIES` times) is submitted again with the same streams -- the same chain, draw
for draw (:class:`~topiclink.distributed.WorkerLostError` only when it keeps failing).  A
lost scheduler stops the fit with a one-line :class:`~topiclink.distributed.
SchedulerLostError` within :data:`~topiclink.distributed.dask_sweeper.SCHEDULER_TIMEOUT`
(30) s.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import numpy as np

from topiclink.distributed.dask_sweeper import DaskConnection
from topiclink.inference.bpbfm import BPBFMData
from topiclink.inference.bpbfm_online import BPBFMOnline, BPBFMOnlineState
from topiclink.kernels import bpbfm as kernels

__all__ = ["DaskBPBFMOnline", "count_chunk", "chunk_arguments"]

logger = logging.getLogger(__name__)


def count_chunk(entries: tuple[np.ndarray, ...], g: np.ndarray, L: np.ndarray,
                G: np.ndarray, terms: tuple[np.ndarray, np.ndarray, np.ndarray],
                rm_shape: tuple[int, int], sender_only: bool, stream: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray]:
    """Gibbs steps 1-2 (latent counts and their allocation) of one chunk (runs on a worker).

    Parameters
    ----------
    entries : (heads, rels, tails, kinds, values) of the chunk on chunk-local ids
    g : (n_e, K) the chunk's entity rows; L : (n_r, K, K) its relation matrices;
    G : (n_m, K, K) the matrices its terms name; terms : (rel_ptr, rel_m, rel_w) on
        chunk-local relation and matrix ids; rm_shape : (n_r, n_m) or (0, 0)
    stream : uint64 (4,) the chunk's xoshiro row (copied, not advanced in place)

    Returns
    -------
    (n_ent (n_e, K), x_cells (n_m, K, K), x_rm ``rm_shape``, total, the advanced stream)
    """
    heads, rels, tails, kinds, values = entries
    ptr, rm, rw = terms
    K = g.shape[1]
    n_ent = np.zeros((g.shape[0], K), dtype=np.int64)
    x_cells = np.zeros((G.shape[0], K, K), dtype=np.int64)
    x_rm = np.zeros(rm_shape, dtype=np.int64)
    row = np.array(stream, dtype=np.uint64, copy=True)
    total = kernels.sweep_entries(heads, rels, tails, kinds, values, 0, int(heads.size), g, L,
                                  G, ptr, rm, rw, sender_only, row, n_ent, x_cells, x_rm)
    return n_ent, x_cells, x_rm, int(total), row


def chunk_arguments(entries: tuple[np.ndarray, ...], g: np.ndarray, L: np.ndarray,
                    G: np.ndarray, terms: tuple[np.ndarray, np.ndarray, np.ndarray],
                    rm_shape: tuple[int, int], lo: int, hi: int
                    ) -> tuple[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """What chunk ``lo:hi`` of a minibatch reads, on chunk-local ids.

    Returns ``(arguments, (entities, relations, matrices))``: the first five arguments of
    :func:`count_chunk` and the minibatch-local ids the chunk's rows stand for (to add its
    counts back).  The kernel reads the same numbers in the same order as on the whole
    minibatch, so its draws are the same.
    """
    heads, rels, tails, kinds, values = entries
    ptr, rm, rw = terms
    n = hi - lo
    ents, inv = np.unique(np.concatenate([heads[lo:hi], tails[lo:hi]]), return_inverse=True)
    crels, rinv = np.unique(rels[lo:hi], return_inverse=True)
    counts = ptr[crels + 1] - ptr[crels]
    cptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    idx = (np.repeat(ptr[crels] - cptr[:-1], counts) + np.arange(int(cptr[-1]))
           ).astype(np.int64)
    mats, minv = np.unique(rm[idx], return_inverse=True)
    args = ((inv[:n].astype(np.int32), rinv.astype(np.int32), inv[n:].astype(np.int32),
             np.ascontiguousarray(kinds[lo:hi]), np.ascontiguousarray(values[lo:hi])),
            np.ascontiguousarray(g[ents]), np.ascontiguousarray(L[crels]),
            np.ascontiguousarray(G[mats]),
            (cptr, minv.astype(np.int64), np.ascontiguousarray(rw[idx])),
            (crels.size, mats.size) if rm_shape[0] > 0 else (0, 0))
    return args, (ents, crels, mats)


def _nbytes(value: Any) -> int:
    """Payload bytes of nested tuples of arrays and scalars."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, tuple | list):
        return sum(_nbytes(v) for v in value)
    return 8


class DaskBPBFMOnline(DaskConnection, BPBFMOnline):
    """:class:`~topiclink.inference.bpbfm_online.BPBFMOnline` whose minibatch chunks run
    as Dask tasks (module docstring); the same chain bit for bit.

    Parameters
    ----------
    client : distributed.Client, a scheduler address or None (the current client)
    others : as :class:`~topiclink.inference.bpbfm_online.BPBFMOnline`

    Attributes
    ----------
    bytes_sent, bytes_received : payload bytes moved so far
    n_rounds : minibatches (round trips) so far
    """

    def __init__(self, n_topics: int, n_dictionary: int | None = None, *,
                 client: Any = None, **kwargs: Any) -> None:
        super().__init__(n_topics, n_dictionary, **kwargs)
        self._init_connection(client)
        self.n_rounds = 0

    # ------------------------------------------------------------------ session
    @contextlib.contextmanager
    def session(self, state: Any, data: Any) -> Iterator[None]:
        """Connect to the cluster for one run (a no-op inside a running session)."""
        if self.client is not None:
            yield
            return
        self._connect()
        try:
            yield
        finally:
            self._disconnect()

    # ------------------------------------------------------------------ step 1
    def chunk_counts(self, entries: tuple[np.ndarray, ...], g: np.ndarray, L: np.ndarray,
                     G: np.ndarray, terms: tuple[np.ndarray, np.ndarray, np.ndarray],
                     rm_shape: tuple[int, int], streams: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Step 1 of the minibatch, one Dask task per non-empty chunk, merged in chunk
        order into :func:`~topiclink.inference.bpbfm.chunked_counts`' result; ``streams``
        advanced as there."""
        if self.client is None:             # outside a run: connect for this minibatch
            with self.session(None, None):
                return self.chunk_counts(entries, g, L, G, terms, rm_shape, streams)
        n_chunks = streams.shape[0]
        bounds = np.linspace(0, entries[0].size, n_chunks + 1).astype(np.int64)
        sender_only = self.u_counts == "sender"
        where: list = []
        sent = 0

        def attempt() -> list:
            # every task is a function of what the driver sends it (the streams are
            # written back only below): a redo after a lost worker draws the same counts
            nonlocal sent
            client = self.client
            futures = []
            where.clear()
            for b in range(n_chunks):
                lo, hi = int(bounds[b]), int(bounds[b + 1])
                if hi == lo:                # the kernel draws nothing on an empty chunk
                    continue
                args, ids = chunk_arguments(entries, g, L, G, terms, rm_shape, lo, hi)
                futures.append(client.submit(count_chunk, *args, sender_only,
                                             streams[b].copy(), pure=False))
                where.append((b, ids))
                sent += _nbytes(args) + streams[b].nbytes + 8
            return self._gather(futures)

        results = self._recovering(attempt, lambda: None)
        K = g.shape[1]
        n_ent = np.zeros((g.shape[0], K), dtype=np.int64)
        x_cells = np.zeros((G.shape[0], K, K), dtype=np.int64)
        x_rm = np.zeros(rm_shape, dtype=np.int64)
        total = 0
        received = 0
        for (b, (ents, crels, mats)), (ne, xc, xr, tot, row) in zip(where, results,
                                                                     strict=True):
            n_ent[ents] += ne
            x_cells[mats] += xc
            if rm_shape[0] > 0:
                x_rm[np.ix_(crels, mats)] += xr
            total += int(tot)
            streams[b] = row
            received += _nbytes((ne, xc, xr, row)) + 8
        self.bytes_sent += sent
        self.bytes_received += received
        self.n_rounds += 1
        self._last_bytes = (sent, received)
        return n_ent, x_cells, x_rm, total

    # ------------------------------------------------------------------ bookkeeping
    def minibatch_step(self, state: BPBFMOnlineState, data: BPBFMData, batch: np.ndarray,
                       rho: float) -> dict[str, float]:
        """As :meth:`BPBFMOnline.minibatch_step`; ``info`` adds this minibatch's bytes."""
        self._last_bytes = (0, 0)
        info = super().minibatch_step(state, data, batch, rho)
        info["bytes_sent"], info["bytes_received"] = (float(x) for x in self._last_bytes)
        return info

    def step(self, state: BPBFMOnlineState, data: BPBFMData) -> dict[str, float]:
        """One sweep; ``info`` reports the sweep's bytes sent and received."""
        sent, received = self.bytes_sent, self.bytes_received
        info = super().step(state, data)
        info["bytes_sent"] = float(self.bytes_sent - sent)
        info["bytes_received"] = float(self.bytes_received - received)
        return info

    def partial_step(self, state: BPBFMOnlineState, data: BPBFMData,
                     items: np.ndarray | None = None) -> dict[str, float]:
        """As :meth:`BPBFMOnline.partial_step`, in one session; ``info`` reports the
        bytes of all its minibatches."""
        sent, received = self.bytes_sent, self.bytes_received
        with self.session(state, data):
            info = super().partial_step(state, data, items)
        info["bytes_sent"] = float(self.bytes_sent - sent)
        info["bytes_received"] = float(self.bytes_received - received)
        return info
