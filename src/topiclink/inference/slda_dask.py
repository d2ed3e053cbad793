"""Supervised topic models (gSLDA, Gibbs MedLDA; binary and one-vs-all) trained on Dask
(``parallel="dask"`` of :class:`~topiclink.models.slda.SupervisedTopicModel`).

The documents are cut into ``n_shards`` contiguous shards balanced by tokens
(:func:`~topiclink.kernels.lda.balanced_chunks`).  A label depends only on its own
document's topic proportions, so the augmentation of a shard's labels is local and exact;
only the word-topic counts and the classifier eta are shared.  One iteration of chain m
(the order of :meth:`SupervisedGibbs.step_chain <topiclink.inference.slda.SupervisedGibbs.
step_chain>`) is one round trip:

1. eta | z, lambda (driver): eta ~ N(P^{-1} s, P^{-1}) with P = I / nu^2 + sum_s P_s and
   s = sum_s s_s (Zhu et al. 2013, the Gaussian conditional of eta), where shard s reported
   ``P_s = sum_{d in s} b_d zbar_d zbar_d^T`` (K x K) and ``s_s = sum_{d in s} a_d zbar_d``
   (K) at the end of the previous round (the driver computes them itself from the state
   for the first round of a run); added in shard order;
2. the driver broadcasts ``(nwk[m], nk[m], eta[m])`` once and submits one task per
   (chain, shard) (:func:`step_shard`): the shard sweeps its tokens with the label term
   (:func:`~topiclink.kernels.rtm.sweep_relational`, one virtual pair per document whose
   neighbour vector is eta) against private copies of the counts (AD-LDA, Newman et al.
   2009), with its own xoshiro row;
3. lambda | z, eta (worker): the shard draws the augmentation of its documents
   (:func:`~topiclink.inference.augment.augment`) with its own stream, and returns its
   count deltas (changed nwk rows in the narrowest exact integer type,
   :func:`~topiclink.distributed.dask_sweeper.compact_dtype`, and the nk change), the next
   round's ``(P_s, s_s)`` and the label log-likelihood / accuracy partial sums.  The driver
   adds the deltas (integer sums: exact in any order).

z, ndk, a, b and the kernel / augmentation streams stay on the workers;
:meth:`DaskSupervisedGibbs.sync` gathers them when something reads them (the objective:
chain 0's ndk; callbacks that may read ``state_``: everything, every iteration; the end of
the run: everything).  Every task is a function of its inputs, and the reductions run in a
fixed order on the driver: the chain depends on the seed and ``n_shards`` only, never on
the number of workers or threads.  With one shard it is the sequential chain draw for draw
(the same streams; the single shard sweeps every document against the current counts).

Bytes per iteration: sent ``n_workers x M x (V K x 4 + 2 K x 8)`` (broadcasts) plus the
task descriptions (alpha); received, per (chain, shard), ``r (K + 1) x w + K x 4`` (r
changed word rows, w in {1, 2, 4} bytes) plus ``(K^2 + K + 2) x 8`` for the statistics.
:attr:`DaskSupervisedGibbs.bytes_sent` / ``bytes_received`` add these payloads up.
Dask and distributed are imported only when a run starts.

Faults: no recovery here yet (the shards' state lives on the workers and no recovery
point is kept): a worker lost mid-fit stops the run with a one-line
:class:`~topiclink.distributed.WorkerLostError` naming the worker, a lost scheduler with a
one-line :class:`~topiclink.distributed.SchedulerLostError` within
:data:`~topiclink.distributed.dask_sweeper.SCHEDULER_TIMEOUT` (30) s -- never a hang or a
different chain; resume from a checkpoint.
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from topiclink.distributed.dask_sweeper import DaskConnection, compact_dtype, pick
from topiclink.inference.augment import augment, pseudo_loglik
from topiclink.inference.slda import SupervisedData, SupervisedGibbs, SupervisedState
from topiclink.inference.weights import draw_weights
from topiclink.kernels import lda as lda_kernels
from topiclink.kernels import rtm as rtm_kernels

__all__ = ["DaskSupervisedGibbs", "step_shard", "shard_statistics"]

#: what a shard keeps on its worker, in the order of a shard task's result tuple
_PARTS = ("z", "ndk", "rng", "a", "b", "aug")
_REPORT = len(_PARTS)


def shard_statistics(ndk: np.ndarray, lengths: np.ndarray, a: np.ndarray, b: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The eta sufficient statistics of a shard's documents (Zhu et al. 2013, the Gaussian
    conditional of eta): ``P_s = sum_d b_d zbar_d zbar_d^T`` (K x K, without the prior)
    and ``s_s = sum_d a_d zbar_d`` (K,), zbar_d = ndk_d / N_d."""
    zbar = ndk / lengths[:, None]
    return zbar.T @ (b[:, None] * zbar), zbar.T @ a


def step_shard(static: dict, prev: tuple, shared: tuple, m: int, alpha: np.ndarray,
               settings: tuple) -> tuple:
    """Steps 2 and 3 of one iteration of chain ``m`` on one shard (runs on a worker).

    ``static``: the shard's ``words``, ``offsets`` (local, from 0), ``vocab`` (its distinct
    words, int32), ``lengths`` (float64) and ``targets`` ((M, D_s) int8); ``prev``:
    ``(z, ndk, rng, a, b, aug_generator, report)`` after the previous iteration (not
    modified); ``shared``: ``(nwk, nk, eta)`` of chain m at the start of this iteration
    (read only); ``settings``: ``(beta, loss, c, hinge_cost)``.

    The Z step is :func:`~topiclink.kernels.rtm.sweep_relational` with one out-pair per
    document to a virtual node whose vector is eta (coefficients a_d, b_d), swept against
    private copies of nwk / nk; then lambda | z, eta by :func:`augment` with the shard's
    stream.  Returns ``(z, ndk, rng, a, b, aug_generator, report)`` with ``report`` =
    ``(delta, P_s, s_s, loglik_sum, n_correct)``; ``delta`` = ``(word ids, their nwk row
    changes (compact dtype), nk change)``.
    """
    beta, loss, c, hinge_cost = settings
    words, offsets, vocab = static["words"], static["offsets"], static["vocab"]
    lengths = static["lengths"]
    z, ndk, rng = prev[0].copy(), prev[1].copy(), prev[2].copy()
    a, b = prev[3], prev[4]
    gen = copy.deepcopy(prev[5])
    base_w, base_k, eta = shared
    nwk, nk = base_w.copy(), base_k.copy()
    D, K = lengths.shape[0], eta.shape[0]
    Uz = np.zeros((D + 1, K))
    Uz[D] = eta
    empty_f, empty_i = np.zeros(0), np.zeros(0, dtype=np.int64)
    rtm_kernels.sweep_relational(
        words, offsets, z, ndk, nwk, nk, alpha, beta, rng, np.zeros((K, K)), Uz,
        np.zeros((D + 1, K)), np.arange(D + 1, dtype=np.int64), np.full(D, D, np.int64),
        a, b, np.zeros(D + 1, dtype=np.int64), empty_i, empty_f, empty_f, False)
    yf = static["targets"][m].astype(np.float64)
    cs = np.full(D, c)
    omega = (ndk / lengths[:, None]) @ eta
    a_new, b_new = augment(gen, loss, omega, yf, cs, hinge_cost)
    P_s, s_s = shard_statistics(ndk, lengths, a_new, b_new)
    diff = nwk[vocab] - base_w[vocab]
    changed = np.flatnonzero(diff.any(axis=1))
    rows = np.ascontiguousarray(diff[changed])
    delta = (vocab[changed], rows.astype(compact_dtype(rows)), nk - base_k)
    loglik = pseudo_loglik(loss, omega, yf, cs, hinge_cost) * D if D else 0.0
    correct = int(np.sum((omega > 0) == (yf > 0.5)))
    return z, ndk, rng, a_new, b_new, gen, (delta, P_s, s_s, loglik, correct)


class DaskSupervisedGibbs(DaskConnection, SupervisedGibbs):
    """:class:`~topiclink.inference.slda.SupervisedGibbs` with the documents in
    ``n_shards`` shards held by Dask workers (see the module docstring).

    The state is the sequential sampler's with ``n_shards`` kernel rows and augmentation
    streams per chain (row ``m * n_shards + s``).  Inside :meth:`session` the shards'
    z, ndk, a, b and streams live on the workers; :meth:`sync` writes them into the state
    (leaving the session syncs everything).

    Parameters
    ----------
    n_shards : document shards (>= 1, at most the number of documents)
    client : distributed.Client, scheduler address or None (the current client)
    full_sync : gather the whole state after every iteration (callbacks reading it)
    others : as :class:`~topiclink.inference.slda.SupervisedGibbs`
    """

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float, *, loss: str, c: float,
                 hinge_cost: float, weight_prior_var: float, n_shards: int = 2,
                 client: Any = None, full_sync: bool = False,
                 seeds: list[np.random.SeedSequence] | None = None,
                 name: str = "gSLDA") -> None:
        super().__init__(n_topics, alpha, beta, loss=loss, c=c, hinge_cost=hinge_cost,
                         weight_prior_var=weight_prior_var, seeds=seeds, n_threads=1,
                         name=name)
        if int(n_shards) < 1:
            raise ValueError(f"n_shards must be >= 1, got {n_shards}")
        self.n_shards = int(n_shards)
        self._init_connection(client)
        self.full_sync = bool(full_sync)
        self.n_rounds = 0
        self._reset()

    def _reset(self) -> None:
        self._data: SupervisedData | None = None
        self._state: SupervisedState | None = None
        self._chunks: np.ndarray | None = None
        self._static: list | None = None          # per shard: future of its fixed arrays
        self._workers: list | None = None         # per shard: the worker holding it
        self._shard: list[list] | None = None     # [m][s]: future of step_shard's tuple
        self._stats: list[list] | None = None     # [m][s]: (P_s, s_s) for the next eta
        self._fresh: set[tuple[str, int]] = set()  # (part, chain) already in the state

    def _check_shards(self, data: SupervisedData) -> None:
        if self.n_shards > data.tokens.n_docs:
            raise ValueError(f"n_shards ({self.n_shards}) exceeds the number of documents "
                             f"({data.tokens.n_docs})")

    def init(self, data: SupervisedData, rng: np.random.Generator) -> SupervisedState:
        """As :meth:`SupervisedGibbs.init`, with ``n_shards`` kernel rows and augmentation
        streams per chain (spawned from the chain's streams)."""
        self._check_shards(data)
        return super().init(data, rng)

    # ------------------------------------------------------------------ session
    @contextlib.contextmanager
    def session(self, state: SupervisedState, data: SupervisedData) -> Iterator[None]:
        """Connect to the cluster; the shards are loaded by the first :meth:`step` and
        gathered back into ``state`` on leaving."""
        self._connect()
        failed = False
        try:
            yield
        except BaseException:
            failed = True
            raise
        finally:
            self._close(failed)

    def _close(self, failed: bool) -> None:
        out = self._shard is not None and self._state is not None
        self._finish((lambda: self.sync(self._state)) if out else None, failed,
                     "the state is that of the last sync", self._reset)

    def _load(self, state: SupervisedState, data: SupervisedData) -> None:
        """Scatter every shard's tokens once and its chains' state next to them; the first
        round's eta statistics are computed here from the (complete) state."""
        self._check_shards(data)
        client, tok = self.client, data.tokens
        M, S = state.z.shape[0], self.n_shards
        chunks = lda_kernels.balanced_chunks(tok.offsets, S)
        lengths = tok.lengths
        statics = []
        for s in range(S):
            d0, d1 = int(chunks[s]), int(chunks[s + 1])
            lo, hi = int(tok.offsets[d0]), int(tok.offsets[d1])
            w = np.ascontiguousarray(tok.words[lo:hi])
            statics.append({"words": w,
                            "offsets": np.ascontiguousarray(tok.offsets[d0:d1 + 1] - lo),
                            "vocab": np.unique(w).astype(np.int32),
                            "lengths": np.ascontiguousarray(lengths[d0:d1]),
                            "targets": np.ascontiguousarray(data.targets[:, d0:d1])})
        self._static = client.scatter(statics, hash=False)
        who = client.who_has(self._static)
        self._workers = [list(who[f.key]) or None for f in self._static]
        self.bytes_sent += sum(a.nbytes for st in statics for a in st.values())
        self._shard, self._stats = [], []
        for m in range(M):
            futures, stats = [], []
            for s in range(S):
                d0, d1 = int(chunks[s]), int(chunks[s + 1])
                lo, hi = int(tok.offsets[d0]), int(tok.offsets[d1])
                part = (state.z[m, lo:hi].copy(), state.ndk[m, d0:d1].copy(),
                        state.kernel_rng[m * S + s].copy(), state.a[m, d0:d1].copy(),
                        state.b[m, d0:d1].copy(), copy.deepcopy(state.aug_rngs[m * S + s]),
                        None)
                futures.append(client.scatter([part], workers=self._workers[s],
                                              hash=False)[0])
                self.bytes_sent += sum(a.nbytes for a in part[:5])
                stats.append(shard_statistics(state.ndk[m, d0:d1], lengths[d0:d1],
                                              state.a[m, d0:d1], state.b[m, d0:d1]))
            self._shard.append(futures)
            self._stats.append(stats)
        self._chunks, self._data, self._state = chunks, data, state
        self._fresh = {(p, m) for p in _PARTS for m in range(M)}

    # ------------------------------------------------------------------ iterating
    def step(self, state: SupervisedState, data: SupervisedData) -> dict[str, float]:
        """One iteration of every chain (eta | z on the driver; z | eta and lambda | z, eta
        on the shards), one round trip; returns the first chain's figures."""
        if self.client is None:         # outside a session: one iteration, all gathered
            with self.session(state, data):
                return self.step(state, data)
        if self._shard is None:
            self._load(state, data)
        elif state is not self._state or data is not self._data:
            raise ValueError("DaskSupervisedGibbs: step the same state and data within a "
                             "session")
        assert self._shard is not None and self._stats is not None
        client = self.client
        M, S, D = state.z.shape[0], self.n_shards, data.tokens.n_docs
        t0 = time.perf_counter()
        for m in range(M):          # step 1: eta | z, lambda from the reduced statistics
            P = self._stats[m][0][0].copy()
            s_lin = self._stats[m][0][1].copy()
            for P_s, s_s in self._stats[m][1:]:
                P += P_s
                s_lin += s_s
            P[np.diag_indices_from(P)] += 1.0 / self.weight_prior_var
            state.eta[m] = draw_weights(state.eta_rngs[m], P, s_lin)
        t1 = time.perf_counter()
        shared = client.scatter([(state.nwk[m].copy(), state.nk[m].copy(), state.eta[m].copy())
                                 for m in range(M)], broadcast=True, hash=False)
        self.bytes_sent += self.n_workers * sum(
            state.nwk[m].nbytes + state.nk[m].nbytes + state.eta[m].nbytes for m in range(M))
        alpha = np.asarray(self.alpha, dtype=np.float64)
        settings = (self.beta, self.loss, self.c, self.hinge_cost)
        new = [[client.submit(step_shard, self._static[s], self._shard[m][s], shared[m], m,
                              alpha, settings, pure=False) for s in range(S)]
               for m in range(M)]
        self.bytes_sent += alpha.nbytes * M * S
        reports = self._gather([[client.submit(pick, f, _REPORT, pure=False) for f in row]
                                 for row in new])
        t2 = time.perf_counter()
        infos = []
        for m in range(M):
            loglik, correct = 0.0, 0
            for s, (delta, P_s, s_s, ll_s, correct_s) in enumerate(reports[m]):
                rows, drows, dnk = delta
                state.nwk[m][rows] += drows
                state.nk[m] += dnk
                self._stats[m][s] = (P_s, s_s)
                loglik += ll_s
                correct += correct_s
                self.bytes_received += (rows.nbytes + drows.nbytes + dnk.nbytes + P_s.nbytes
                                        + s_s.nbytes + 16)
            infos.append({"label_loglik": loglik / D, "train_accuracy": correct / D})
        self._shard = new           # committed only once every delta is added
        self._fresh = set()
        self.n_rounds += 1
        if self.full_sync:
            self.sync(state)
        info = infos[0]
        info.update(seconds_weights=t1 - t0, seconds_shards=t2 - t1)
        return info

    def sync(self, state: SupervisedState, parts: tuple[str, ...] = _PARTS,
             chains: tuple[int, ...] | None = None) -> None:
        """Write the shards' current ``parts`` (of "z", "ndk", "rng", "a", "b", "aug") of
        ``chains`` (default all) into ``state`` (a no-op for those already fetched, or
        outside a session)."""
        if self._shard is None or self._chunks is None:
            return
        if state is not self._state:
            raise ValueError("DaskSupervisedGibbs: sync the state of the running session")
        M, S = len(self._shard), self.n_shards
        chains = tuple(range(M)) if chains is None else tuple(chains)
        for m in chains:
            need = tuple(p for p in _PARTS if p in parts and (p, m) not in self._fresh)
            if not need:
                continue
            index = tuple(_PARTS.index(p) for p in need)
            client = self.client
            got = self._gather([client.submit(pick, f, index, pure=False)
                                 for f in self._shard[m]])
            offsets = self._data.tokens.offsets
            for s, values in enumerate(got):
                d0, d1 = int(self._chunks[s]), int(self._chunks[s + 1])
                lo, hi = int(offsets[d0]), int(offsets[d1])
                for part, value in zip(need, values, strict=True):
                    if part == "z":
                        state.z[m, lo:hi] = value
                    elif part == "ndk":
                        state.ndk[m, d0:d1] = value
                    elif part == "rng":
                        state.kernel_rng[m * S + s] = value
                    elif part == "a":
                        state.a[m, d0:d1] = value
                    elif part == "b":
                        state.b[m, d0:d1] = value
                    else:
                        state.aug_rngs[m * S + s] = copy.deepcopy(value)
                    self.bytes_received += getattr(value, "nbytes", 64)
            self._fresh.update((p, m) for p in need)

    def objective(self, state: SupervisedState, data: SupervisedData) -> float:
        """The first chain's word log joint per token (gathers its ndk)."""
        self.sync(state, ("ndk",), chains=(0,))
        return super().objective(state, data)
