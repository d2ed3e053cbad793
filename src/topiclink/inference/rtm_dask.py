"""The gRTM family's Gibbs sampler with its document shards on Dask workers.

:class:`DaskRelationalGibbs` runs the iteration of
:class:`~topiclink.inference.rtm.RelationalGibbs` (Chen et al. 2015; ``design/models/
grtm.md``) over ``n_shards`` contiguous document shards, balanced by sweep work (tokens
plus pair visits x topics touched, as the single-machine pipeline blocks).  Training pair
(i, j) is *owned* by the shard of its source i: its augmentation variable and (a_ij, b_ij)
are drawn there.  One iteration, in the order of ``RelationalGibbs.step``:

1. the driver draws U from its Gaussian conditional (eq. 13) with the single-machine code
   (:func:`~topiclink.inference.weights.weight_posterior`,
   :func:`~topiclink.inference.weights.draw_weights`): it holds ndk and every pair's a, b;
2. round one: the driver broadcasts ``(U, ndk, nwk, nk)`` and sends each shard the current
   (a, b) of its in-pairs owned by other shards; each shard sweeps its tokens (eq. 14,
   :func:`~topiclink.kernels.rtm.sweep_relational_range`) against private copies of nwk
   and nk (AD-LDA, Newman et al. 2009: the count changes are added by the driver
   afterwards) and of ndk, so that neighbours in other shards are seen as they were at the
   start of the iteration and those in its own shard fresh, as the single-machine kernel
   sees them.  It returns its nwk row changes (compact, as
   :func:`~topiclink.distributed.dask_sweeper.sweep_shard`), its nk change and its ndk rows;
3. round two: each shard draws the augmentation of its owned pairs with both endpoints
   fresh and this iteration's U (lambda ~ PG(c, omega), eq. 12, or the hinge loss's
   inverse-Gaussian draw: the exact conditional) and returns their new (a, b) (a only for
   the hinge loss: the logistic a = c (y - 1/2) never changes) and its part of the pseudo
   log-likelihood.  The new ndk it needs is round one's ndk with every shard's new rows:
   the round-two tasks are submitted with round one's and take those rows straight from
   the round-one results (worker to worker), so no driver round trip separates the two
   rounds; the driver adds the same rows (and the nwk, nk changes) to its arrays.

Topics z, the shards' RNG streams and the discriminants omega stay on the workers between
iterations (each task takes the previous one's result future); :meth:`DaskRelationalGibbs.
sync` gathers them when the state is read (the end of a run, callbacks that read
``state_``).  ndk, nwk, nk, U, a and b are current on the driver after every iteration.

Random streams: shard s sweeps with xoshiro row s of ``state.kernel_rng`` (n_shards, 4) and
draws its pairs' augmentation with ``state.aug_rngs[s]`` (``augmentation="reference"``:
the ``polyagamma`` package / NumPy per chunk of at most 8192 pairs) or, for
``augmentation="numba"``, from chunk streams seeded by one 64-bit draw of its sweep
stream per iteration (:func:`topiclink.kernels.augment.augment_pair_chunks`).  The chain
is therefore a function of the seed and ``n_shards`` only, never of the number of
workers.  With one shard and at most 4096 training pairs (one chunk of pairs) it is the
single-machine chain bit for bit.

Bytes per iteration (:attr:`DaskRelationalShards.bytes_sent`, ``bytes_received`` and
``bytes_peer`` add the payload sizes up): sent ``n_workers x (K^2 x 8 + D K x c + (V K + K)
x 4)`` for round one's broadcast (c: 1, 2 or 4 bytes per ndk entry, the narrowest integer
type holding the counts) and 16 bytes per cross-shard in-pair; received the changed nwk
rows (1-4 bytes per entry plus 4 per row id), ``D K x c`` of ndk rows, 8 bytes per pair for
b (16 for the hinge loss) and a few scalars; between workers (``bytes_peer``, counted from
where the shards were placed) each shard's ndk rows to every other worker holding a shard.

Faults: a worker lost mid-fit does not change the chain.  The driver keeps each shard's
state tuple at a recovery point (the start, every :meth:`DaskRelationalShards.sync`, and a
gather every :data:`~topiclink.distributed.dask_sweeper.RECOVERY_EVERY` iterations) and,
per iteration since, U, ndk at its start, the foreign (a, b), the round-one ndk rows and
the count changes; a lost shard's static data is scattered again and its state rebuilt on
a live worker by :func:`replay_task`, then the iteration is redone (the driver's arrays
change only once both rounds are in).  After :data:`~topiclink.distributed.dask_sweeper.
MAX_RECOVERIES` failed redos: a one-line :class:`~topiclink.distributed.WorkerLostError`
naming the worker; a lost scheduler: a one-line :class:`~topiclink.distributed.
SchedulerLostError` within :data:`~topiclink.distributed.dask_sweeper.SCHEDULER_TIMEOUT`
(30) s (see :mod:`topiclink.distributed.dask_sweeper`).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
from numba import njit

from topiclink.distributed.dask_sweeper import (
    RECOVERY_EVERY,
    DaskConnection,
    compact_dtype,
    lost_shards,
    pick,
)
from topiclink.inference.augment import augment, pseudo_loglik
from topiclink.inference.pairs import PairIndex, PairSet
from topiclink.inference.rtm import HINGE_EPS, RelationalData, RelationalGibbs, RelationalState
from topiclink.inference.weights import draw_weights, weight_posterior
from topiclink.kernels import augment as augment_kernels
from topiclink.kernels import lda as lda_kernels
from topiclink.kernels import rtm as rtm_kernels
from topiclink.random import kernel_state, spawn

__all__ = ["DaskRelationalGibbs", "DaskRelationalShards", "shard_bounds", "sweep_task",
           "augment_task", "replay_task"]

logger = logging.getLogger(__name__)

#: pairs per augmentation chunk of a shard (as the single-machine pipeline's chunks)
CHUNK_SIZE = 8192

# the shard's state tuple: z, xoshiro row, augmentation generator, own a, own b, own omega,
# the iteration's augmentation seed, the round's payload for the driver
_Z, _RNG, _GEN, _A, _B, _OMEGA, _SEED, _OUT = range(8)


def shard_bounds(data: RelationalData, src: np.ndarray, dst: np.ndarray, n_topics: int,
                 n_shards: int) -> np.ndarray:
    """Document boundaries of ``n_shards`` contiguous shards of about equal sweep work
    (tokens + pair visits x min(N_d, K), the work measure of the single-machine pipeline
    blocks), by :func:`topiclink.kernels.lda.balanced_chunks` on its cumulative sum.  A
    shard may be empty when a few documents carry most of the work (it then does
    nothing)."""
    D = data.tokens.n_docs
    if n_shards > D:
        raise ValueError(f"n_shards ({n_shards}) exceeds the number of documents ({D})")
    lengths = np.diff(data.tokens.offsets)
    visits = np.bincount(src, minlength=D) + np.bincount(dst, minlength=D)
    work = lengths + visits * np.minimum(lengths, n_topics)
    cum = np.concatenate([[0], np.cumsum(work)]).astype(np.int64)
    return lda_kernels.balanced_chunks(cum, n_shards)


@njit(cache=True)
def _fresh_rows(ndk: np.ndarray, U: np.ndarray, inv_length: np.ndarray) -> np.ndarray:
    """Rows ``U zbar_d`` computed as the sweep kernel refreshes them after sweeping document
    d (same operations, same rounding), so the pairs' discriminants omega_ij = zbar_i .
    (U zbar_j) match the single-machine draws bit for bit."""
    D, K = ndk.shape
    Uz = np.empty((D, K))
    for d in range(D):
        cd = ndk[d]
        inv_n = inv_length[d]
        for k in range(K):
            su = 0.0
            for l in range(K):
                su += U[k, l] * cd[l]
            Uz[d, k] = su * inv_n
    return Uz


# ---------------------------------------------------------------------- worker tasks
def sweep_task(static: dict, prev: tuple, shared: tuple, foreign: tuple) -> tuple:
    """Round one of an iteration on one shard (runs on a worker): the Z sweep (eq. 14).

    ``static``: the shard's tokens, pair CSRs and settings (:meth:`DaskRelationalShards.
    _statics`); ``prev``: its state tuple after the previous round two; ``shared``:
    ``(U, ndk, nwk, nk)`` at the start of the iteration (read only; ndk in a compact
    integer type); ``foreign``: (a, b) of its in-pairs owned by other shards (sent with the
    task).  Returns the new state tuple whose last entry is ``(word ids, nwk row changes,
    nk change, ndk rows)`` (changes and rows in the narrowest integer type holding them).
    """
    U, ndk_c, base_w, base_k = shared
    z, rng = prev[_Z].copy(), prev[_RNG].copy()
    ndk = ndk_c.astype(np.int32)                       # private copy, every document
    zbar = ndk / static["lengths"][:, None]
    Uz = zbar @ U.T                                    # as RelationalGibbs.step
    Vz = zbar @ U
    nwk, nk = base_w.copy(), base_k.copy()
    vals_a = np.concatenate([prev[_A], foreign[0]])
    vals_b = np.concatenate([prev[_B], foreign[1]])
    out_idx, in_idx = static["out_idx"], static["in_idx"]
    seed = np.uint64(augment_kernels.draw_seed(rng) if static["augmentation"] == "numba"
                     else 0)
    d0, d1 = static["d0"], static["d1"]
    rtm_kernels.sweep_relational_range(
        static["words"], static["offsets"], z, ndk, nwk, nk, static["alpha"],
        static["beta"], rng, U, Uz, Vz, static["out_ptr"], static["out_nbr"],
        np.ascontiguousarray(vals_a[out_idx]), np.ascontiguousarray(vals_b[out_idx]),
        static["in_ptr"], static["in_nbr"], np.ascontiguousarray(vals_a[in_idx]),
        np.ascontiguousarray(vals_b[in_idx]), static["approx"], d0, d1)
    vocab = static["vocab"]
    diff = nwk[vocab] - base_w[vocab]
    changed = np.flatnonzero(diff.any(axis=1))
    rows = np.ascontiguousarray(diff[changed])
    mine = np.ascontiguousarray(ndk[d0:d1])
    out = (vocab[changed], rows.astype(compact_dtype(rows)), nk - base_k,
           mine.astype(compact_dtype(mine)))
    return z, rng, prev[_GEN], prev[_A], prev[_B], prev[_OMEGA], seed, out


def _ndk_rows(values: tuple) -> np.ndarray:
    """A shard's new ndk rows from its round-one result (on the worker holding it)."""
    return values[_OUT][3]


def augment_task(static: dict, prev: tuple, shared: tuple, *rows: np.ndarray) -> tuple:
    """Round two of an iteration on one shard (runs on a worker): the augmentation draws of
    its owned pairs given the swept topics of both endpoints and this iteration's U
    (eq. 12 and its hinge analogue).  ``prev``: the shard's state tuple of round one;
    ``shared``: round one's broadcast (U, and ndk at the start of the iteration); ``rows``:
    every shard's new ndk rows (in shard order), which replace the old ones.  Returns the
    new state tuple whose last entry is ``(a or None, b, summed pseudo log-likelihood)``
    (a only for the hinge loss)."""
    U = shared[0]
    loss, hinge = static["loss"], static["hinge_cost"]
    src, dst, y, c = static["src"], static["dst"], static["y"], static["c"]
    n = src.size
    a, b, omega = np.empty(n), np.empty(n), np.empty(n)
    gen = prev[_GEN]
    if n:
        ndk = shared[1].astype(np.int32)
        edges = static["bounds"]
        for t, r in enumerate(rows):
            ndk[edges[t]:edges[t + 1]] = r
        inv_length = static["inv_length"]
        Uz = _fresh_rows(ndk, U, inv_length)
        bounds = static["chunk_bounds"]
        parts = np.zeros(bounds.size - 1)
        if static["augmentation"] == "numba":
            code = (augment_kernels.LOSS_LOGISTIC if loss == "logistic"
                    else augment_kernels.LOSS_HINGE)
            augment_kernels.augment_pair_chunks(
                code, 0, bounds.size - 1, bounds, prev[_SEED], ndk, Uz, src, dst,
                inv_length, y, c, hinge, HINGE_EPS, omega, a, b, parts)
        else:
            gen = copy.deepcopy(gen)                   # the previous result stays intact
            for i in range(bounds.size - 1):
                lo, hi = int(bounds[i]), int(bounds[i + 1])
                w = rtm_kernels.pair_dots(ndk, Uz, src[lo:hi], dst[lo:hi], inv_length)
                omega[lo:hi] = w
                a[lo:hi], b[lo:hi] = augment(gen, loss, w, y[lo:hi], c[lo:hi], hinge)
                parts[i] = (hi - lo) * pseudo_loglik(loss, w, y[lo:hi], c[lo:hi], hinge)
        total = float(parts.sum())
    else:
        total = 0.0
    out = (a if loss == "hinge" else None, b, total)
    return prev[_Z], prev[_RNG], gen, a, b, omega, prev[_SEED], out


def replay_task(static: dict, state: tuple, base_w: np.ndarray, base_k: np.ndarray,
                log: list) -> tuple:
    """A lost shard's state tuple rebuilt from its state at the recovery point by redoing
    the logged iterations' two rounds (runs on a worker).  ``log``: per iteration since,
    ``(U, ndk at its start (compact), the shard's foreign (a, b), every shard's round-one
    ndk rows, the summed nwk / nk changes)``: each redone round sees what the original saw,
    so its draws are the original ones."""
    nwk, nk = base_w.copy(), base_k.copy()
    prev = state
    for U, ndk_c, foreign, rows, deltas in log:
        shared = (U, ndk_c, nwk, nk)
        prev = augment_task(static, sweep_task(static, prev, shared, foreign), shared, *rows)
        for words, drows, dnk in deltas:
            nwk[words] += drows
            nk += dnk
    return (*prev[:_OUT], None)


# ---------------------------------------------------------------------- the transport
class DaskRelationalShards(DaskConnection):
    """The shards of one run on a Dask cluster (a context manager: leaving it gathers
    what is still on the workers into the state and closes an owned client).

    Parameters
    ----------
    algorithm : the sampler (settings and the shard plan of :meth:`DaskRelationalGibbs.
        attach`)
    state, data : the chain and its data; ndk, nwk, nk, U, a and b of ``state`` are updated
        in place every iteration, z, omega and the streams by :meth:`sync`
    client : distributed.Client, scheduler address or None (the current client)
    """

    def __init__(self, algorithm: DaskRelationalGibbs, state: RelationalState,
                 data: RelationalData, client: Any = None) -> None:
        self.algorithm = algorithm
        self.state = state
        self.data = data
        self._init_connection(client)
        self.bytes_peer = 0
        self.n_iterations = 0
        self._static: list | None = None
        self._shard: list | None = None
        self._workers: list | None = None
        self._fresh = True
        self._base: list | None = None          # per shard: state tuple, recovery point
        self._base_counts: tuple | None = None  # (nwk, nk) at the recovery point
        self._log: list = []                    # per iteration since: replay_task's log

    def __enter__(self) -> DaskRelationalShards:
        self._connect()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self._finish(self.sync if self._shard is not None else None, exc_type is not None,
                     "z and omega are those of the last sync", self._forget)

    def _forget(self) -> None:
        self._static = self._shard = self._workers = None
        self._base = self._base_counts = None
        self._log = []

    @property
    def n_shards(self) -> int:
        return self.algorithm.n_shards

    def _statics(self) -> list[dict]:
        """Per shard, what never changes during a run: its tokens (offsets shifted so that
        the kernel indexes them by global document id), the document lengths, its owned
        pairs and the CSRs of its documents' out-pairs (all owned) and in-pairs (indexes
        into its own (a, b) followed by the foreign ones)."""
        alg, tok = self.algorithm, self.data.tokens
        plan = alg.plan()
        lengths = tok.lengths
        statics = []
        for s in range(self.n_shards):
            d0, d1 = int(plan["bounds"][s]), int(plan["bounds"][s + 1])
            lo, hi = int(tok.offsets[d0]), int(tok.offsets[d1])
            words = np.ascontiguousarray(tok.words[lo:hi])
            own = plan["own"][s]
            statics.append({
                "d0": d0, "d1": d1, "bounds": plan["bounds"], "words": words,
                "offsets": np.ascontiguousarray(tok.offsets - lo),
                "vocab": np.unique(words).astype(np.int32),
                "lengths": lengths, "inv_length": 1.0 / lengths,
                "alpha": alg.alpha, "beta": alg.beta, "approx": alg.approx,
                "loss": alg.loss, "hinge_cost": alg.hinge_cost,
                "augmentation": alg.augmentation,
                "src": np.ascontiguousarray(self.state.pair_source[own]),
                "dst": np.ascontiguousarray(self.state.pair_target[own]),
                "y": np.ascontiguousarray(self.state.pair_y[own]),
                "c": np.ascontiguousarray(self.state.pair_c[own]),
                "chunk_bounds": np.array([*range(0, own.size, CHUNK_SIZE), own.size],
                                         dtype=np.int64),
                **plan["csr"][s]})
        return statics

    def _load(self) -> None:
        """Scatter every shard's static data once, and its state next to it."""
        client, st, plan = self.client, self.state, self.algorithm.plan()
        statics = self._statics()
        self._static = client.scatter(statics, hash=False)
        who = client.who_has(self._static)
        self._workers = [list(who[f.key]) or None for f in self._static]
        states = []
        for s in range(self.n_shards):
            d0, d1 = int(plan["bounds"][s]), int(plan["bounds"][s + 1])
            lo, hi = int(self.data.tokens.offsets[d0]), int(self.data.tokens.offsets[d1])
            own = plan["own"][s]
            states.append((st.z[lo:hi].copy(), st.kernel_rng[s].copy(),
                           copy.deepcopy(st.aug_rngs[s]), st.a[own], st.b[own],
                           st.omega[own], np.uint64(0), None))
        self._shard = [client.scatter([x], workers=w, hash=False)[0]
                       for x, w in zip(states, self._workers, strict=True)]
        self._set_base(states)
        self.bytes_sent += sum(v.nbytes for d in statics for v in d.values()
                               if isinstance(v, np.ndarray))
        self.bytes_sent += sum(x[i].nbytes for x in states for i in (_Z, _RNG, _A, _B, _OMEGA))
        self._fresh = True

    def _set_base(self, states: list) -> None:
        st = self.state
        self._base = states
        self._base_counts = (st.nwk.copy(), st.nk.copy())
        self._log = []

    def _restore(self) -> None:
        """After losing workers: every shard whose data or state is gone gets its static
        data scattered again and its state rebuilt from the recovery point by
        :func:`replay_task` on a live worker."""
        client = self.client
        lost = lost_shards(client, list(zip(self._static, self._shard, strict=True)))
        if not lost:
            return
        statics = self._statics()
        futures = client.scatter([statics[s] for s in lost], hash=False)
        who = client.who_has(futures)
        base_w, base_k = self._base_counts
        log = list(self._log)
        for s, static in zip(lost, futures, strict=True):
            workers = list(who.get(static.key) or ()) or None
            self._static[s], self._workers[s] = static, workers
            self._shard[s] = client.submit(replay_task, static, self._base[s], base_w,
                                           base_k, [(U, n, f[s], r, d) for U, n, f, r, d
                                                    in log],
                                           workers=workers, allow_other_workers=True,
                                           pure=False)
            self.bytes_sent += sum(v.nbytes for v in statics[s].values()
                                   if isinstance(v, np.ndarray)) + base_w.nbytes
        logger.warning("DaskRelationalShards: shards %s rebuilt from the recovery point (%d "
                       "iterations redone)", lost, len(log))

    def _mark(self) -> None:
        """A new recovery point: every shard's state tuple gathered into the driver's copy
        (not into the state: z and omega stay as of the last :meth:`sync`)."""
        client = self.client
        got = self._gather([client.submit(pick, f, (_Z, _RNG, _GEN, _A, _B, _OMEGA, _SEED),
                                          pure=False) for f in self._shard])
        self.bytes_received += sum(x[i].nbytes for x in got for i in (_Z, _RNG, _A, _B,
                                                                       _OMEGA))
        self._set_base([(*x, None) for x in got])

    def _submit(self, fn: Any, s: int, *args: Any) -> Any:
        return self.client.submit(fn, self._static[s], *args, pure=False,
                                  workers=self._workers[s], allow_other_workers=True)

    def iterate(self, U: np.ndarray) -> tuple[float, float, float]:
        """Rounds one and two of an iteration with the drawn ``U``; returns the seconds
        until round one's results are in, the further seconds until round two's are, and
        the summed pseudo log-likelihood of the pairs.

        Round two is submitted together with round one: each shard's draw task takes the
        other shards' new ndk rows straight from their round-one results (worker to
        worker), so no driver round trip separates the rounds; the driver adds the same
        rows to its ndk meanwhile."""
        if self._shard is None:
            self._recovering(self._load, lambda: None)
        st, plan = self.state, self.algorithm.plan()
        S = self.n_shards
        t0 = time.perf_counter()
        ndk_c = st.ndk.astype(compact_dtype(st.ndk))
        foreign = [(st.a[ids], st.b[ids]) for ids in plan["foreign"]]
        times: list[float] = []

        def attempt() -> tuple[list, list, list]:
            # a function of the driver's state only (it is changed below, once both rounds
            # are in): a redo after a lost worker is the same computation
            client = self.client
            shared = client.scatter([(U, ndk_c, st.nwk.copy(), st.nk.copy())],
                                    broadcast=True, hash=False)[0]
            self.bytes_sent += (U.nbytes + ndk_c.nbytes + st.nwk.nbytes + st.nk.nbytes) \
                * self.n_workers
            first = []
            for s in range(S):
                self.bytes_sent += foreign[s][0].nbytes + foreign[s][1].nbytes
                first.append(self._submit(sweep_task, s, self._shard[s], shared, foreign[s]))
            rows = [client.submit(_ndk_rows, f, pure=False) for f in first]
            second = [self._submit(augment_task, s, first[s], shared, *rows)
                      for s in range(S)]
            got1 = self._gather([client.submit(pick, f, _OUT, pure=False) for f in first])
            times.append(time.perf_counter())
            got2 = self._gather([client.submit(pick, f, _OUT, pure=False) for f in second])
            return second, got1, got2

        second, got1, got2 = self._recovering(attempt, self._restore)
        for s, (words, drows, dnk, mine) in enumerate(got1):
            st.nwk[words] += drows
            st.nk += dnk
            st.ndk[plan["bounds"][s]:plan["bounds"][s + 1]] = mine
            self.bytes_received += words.nbytes + drows.nbytes + dnk.nbytes + mine.nbytes
            self.bytes_peer += mine.nbytes * self._peers(s)
        t1 = times[-1]
        total = 0.0
        for s, (a, b, part) in enumerate(got2):
            own = plan["own"][s]
            if a is not None:
                st.a[own] = a
                self.bytes_received += a.nbytes
            st.b[own] = b
            total += part
            self.bytes_received += b.nbytes + 8
        self._shard = second
        self._fresh = False
        self.n_iterations += 1
        self._log.append((U, ndk_c, foreign, [g[3] for g in got1],
                          [(g[0], g[1], g[2]) for g in got1]))
        if len(self._log) >= RECOVERY_EVERY:
            self._recovering(self._mark, self._restore)
        return t1 - t0, time.perf_counter() - t1, total

    def _peers(self, s: int) -> int:
        """Workers other than shard s's that hold other shards (they fetch s's ndk rows)."""
        mine = set(self._workers[s] or ())
        others = {w for t in range(self.n_shards) if t != s for w in (self._workers[t] or ())}
        return len(others - mine)

    def sync(self) -> None:
        """Gather z, omega and the streams of every shard into the state (a no-op when
        nothing changed since the last sync)."""
        if self._shard is None or self._fresh:
            return
        st, plan = self.state, self.algorithm.plan()

        def attempt() -> list:
            client = self.client
            return self._gather([client.submit(pick, f, (_Z, _RNG, _GEN, _OMEGA), pure=False)
                                 for f in self._shard])

        got = self._recovering(attempt, self._restore)
        base = []
        for s, (z, rng, gen, omega) in enumerate(got):
            d0, d1 = int(plan["bounds"][s]), int(plan["bounds"][s + 1])
            lo, hi = int(self.data.tokens.offsets[d0]), int(self.data.tokens.offsets[d1])
            st.z[lo:hi] = z
            st.kernel_rng[s] = rng
            st.aug_rngs[s] = copy.deepcopy(gen)
            st.omega[plan["own"][s]] = omega
            self.bytes_received += z.nbytes + rng.nbytes + omega.nbytes
            own = plan["own"][s]
            base.append((z, rng, gen, st.a[own], st.b[own], omega, np.uint64(0), None))
        self._fresh = True
        self._set_base(base)                # a new recovery point, for free


# ---------------------------------------------------------------------- the algorithm
class DaskRelationalGibbs(RelationalGibbs):
    """:class:`~topiclink.inference.rtm.RelationalGibbs` with its documents in
    ``n_shards`` shards on Dask workers (see the module docstring).

    Parameters
    ----------
    n_shards : document shards (each its own sweep and augmentation stream; the chain
        depends on it, never on the number of workers)
    client : distributed.Client, scheduler address or None (the current client)
    full_sync : gather z, omega and the streams after every iteration (callbacks that read
        ``state_``); otherwise only at the end of a run
    **kwargs : as :class:`~topiclink.inference.rtm.RelationalGibbs`
    """

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float, *, n_shards: int = 2,
                 client: Any = None, full_sync: bool = False, **kwargs: Any) -> None:
        super().__init__(n_topics, alpha, beta, **kwargs)
        if int(n_shards) < 1:
            raise ValueError(f"n_shards must be >= 1, got {n_shards}")
        self.n_shards = int(n_shards)
        self.client = client
        self.full_sync = bool(full_sync)
        self.shards: DaskRelationalShards | None = None
        self._plan: tuple[int, dict] | None = None

    def _streams(self, data: RelationalData, src: np.ndarray, dst: np.ndarray,
                 chain_rng: np.random.Generator, aug_rng: np.random.Generator
                 ) -> tuple[np.ndarray, list[np.random.Generator]]:
        """One xoshiro row and one augmentation generator per shard."""
        shard_bounds(data, src, dst, self.n_topics, self.n_shards)    # n_shards <= D
        return kernel_state(chain_rng, self.n_shards), spawn(aug_rng, self.n_shards)

    def attach(self, state: RelationalState, data: RelationalData) -> None:
        """The pairs' CSR by source (for the U step) and the shard plan: document bounds,
        each shard's owned pairs, its in-pairs owned elsewhere and its local CSRs."""
        if self._attached is not None and self._attached[0] == id(state):
            return
        D = data.tokens.n_docs
        src, dst = state.pair_source, state.pair_target
        pairs = PairSet(src, dst, state.pair_y, state.pair_c, D)
        bounds = shard_bounds(data, src, dst, self.n_topics, self.n_shards)
        shard_of = np.searchsorted(bounds, np.arange(D), side="right") - 1
        owner = shard_of[src]
        own_list, foreign_list, csr_list = [], [], []
        for s in range(self.n_shards):
            own = np.flatnonzero(owner == s)
            out = PairIndex.build(src[own], dst[own], D)
            into_ids = np.flatnonzero(shard_of[dst] == s)
            into = PairIndex.build(dst[into_ids], src[into_ids], D)
            foreign = into_ids[owner[into_ids] != s]
            # position of each in-pair in the shard's values: own pairs, then foreign ones
            pos = np.where(owner[into_ids] == s, np.searchsorted(own, into_ids),
                           own.size + np.searchsorted(foreign, into_ids))
            own_list.append(own)
            foreign_list.append(foreign)
            csr_list.append({"out_ptr": out.ptr, "out_nbr": out.nbr, "out_idx": out.order,
                             "in_ptr": into.ptr, "in_nbr": into.nbr,
                             "in_idx": pos[into.order].astype(np.int64)})
        self._attached = (id(state), {"pairs": pairs, "lengths": data.tokens.lengths,
                                      "bounds": bounds, "own": own_list,
                                      "foreign": foreign_list, "csr": csr_list})

    def plan(self) -> dict:
        """The shard plan of the attached state (:meth:`attach`)."""
        if self._attached is None:
            raise ValueError("DaskRelationalGibbs: attach a state first")
        return self._attached[1]

    @contextlib.contextmanager
    def session(self, state: RelationalState, data: RelationalData) -> Iterator[None]:
        self.attach(state, data)
        with super().session(state, data), \
                DaskRelationalShards(self, state, data, self.client) as shards:
            self.shards = shards
            try:
                yield
            finally:
                self.shards = None

    def step(self, state: RelationalState, data: RelationalData) -> dict[str, float]:
        """One iteration: U on the driver, then the two rounds on the shards."""
        if self.shards is None:          # outside a session: one iteration, all gathered
            with self.session(state, data):
                return self.step(state, data)
        self.attach(state, data)
        ws = self.plan()
        pairs, K = ws["pairs"], self.n_topics
        t0 = time.perf_counter()
        zbar = state.ndk / ws["lengths"][:, None]
        P, s = weight_posterior(zbar, pairs.source, pairs.target, state.a, state.b,
                                self.weight_prior_var, self.full,
                                (pairs.out.ptr, pairs.out.nbr, pairs.out.order),
                                executor=self._weight_pool)
        eta = draw_weights(state.weight_rng, P, s)
        state.U = eta.reshape(K, K) if self.full else np.diag(eta)
        t1 = time.perf_counter()
        shards = self.shards
        before = (shards.bytes_sent, shards.bytes_received, shards.bytes_peer)
        seconds_z, seconds_lambda, total = shards.iterate(state.U)
        if self.full_sync:
            shards.sync()
        return {"seconds_weights": t1 - t0, "seconds_z": seconds_z,
                "seconds_lambda": seconds_lambda, "link_loglik": total / pairs.n_pairs,
                "bytes_sent": float(shards.bytes_sent - before[0]),
                "bytes_received": float(shards.bytes_received - before[1]),
                "bytes_peer": float(shards.bytes_peer - before[2])}

    def sync(self, state: RelationalState | None = None) -> None:
        """Make z, omega and the streams of the state current (a no-op outside a run)."""
        if self.shards is not None:
            self.shards.sync()
