"""AD-LDA sweeps over document shards that live on Dask workers.

The scheme is :class:`topiclink.inference.chunked.ChunkedSweeper`'s (Newman et al. 2009):
``n_shards`` fixed document shards (the same :func:`~topiclink.kernels.lda.balanced_chunks`
boundaries), each swept by :func:`topiclink.kernels.lda.sweep_range` against a private copy
of the word-topic counts taken at the start of the sweep and with its own xoshiro stream;
afterwards the count changes of all shards are added up (integer sums: exact, and the
same in any order).  Only the transport differs, and all of it is Dask's:

- at the start (first :meth:`DaskSweeper.sweep`) each shard's tokens, local offsets and
  vocabulary are scattered once, and its topics z, document-topic rows ndk and RNG row
  once, to the same worker;
- with a :class:`~topiclink.data.shards.ShardSet` (``DaskSweeper(..., shards=...)``) the
  workers read their shards' tokens from the shard files instead (:func:`load_shard_task`;
  the directory must be visible to them at the same path), and only z, ndk and the RNG
  row are scattered: the driver never holds the tokens;
- every sweep the driver broadcasts the current ``(nwk, nk)`` once and submits one task
  per shard (:func:`sweep_shard`, module level so that it pickles); the task returns the
  shard's new (z, ndk, rng) and its count deltas: the changed rows of nwk as
  ``(int32 word ids, rows)`` -- the rows as int8 / int16 when every change fits, else
  int32 -- and the change of nk.  Only the deltas come back (a small
  accessor task picks them out); the shard states stay on the workers, each sweep's task
  taking the previous sweep's result future as input;
- z, ndk and the RNG rows are gathered to the driver only when something reads them
  (:meth:`DaskSweeper.sync`: the objective and the estimates need ndk; a checkpoint, the
  end of the run, ...: everything).

Per sweep the driver sends ``n_workers x (V K + K) x 4`` bytes (the broadcast) plus a
few hundred bytes of task descriptions (and, for per-document priors, the shard's alpha
rows, only when they changed), and receives ``sum over shards of (r_s (K + 1) + K) x 4``
bytes at most (int32 rows; 1 or 2 bytes per entry instead of 4 when the changes fit), r_s
the number of word rows shard s changed.  A sync of ndk moves ``D K x 4``
bytes, of z ``N x 4``.  :attr:`DaskSweeper.bytes_sent` / :attr:`DaskSweeper.bytes_received`
add these payload sizes up.

The result is a function of the seed and ``n_shards`` only: the same as
``parallel="adlda"`` with the same shards, for any number of workers or threads.

Faults (:class:`~topiclink.execution.dask.DaskConnection`, shared by the Dask samplers and
:class:`~topiclink.execution.dask.DaskExecutor`): every wait for
results (:meth:`DaskConnection._gather`) ends, never hangs.  A worker lost mid-fit (its
nanny restarts it empty) cancels the futures of the data it held; the iteration is then
redone (:meth:`DaskConnection._recovering`, at most :data:`MAX_RECOVERIES` times) after
the driver has restored the lost shards.  Every task is a function of its inputs, so a
redo draws what the original would have: :class:`DaskSweeper` keeps, per shard, its
(z, ndk, rng) at a *recovery point* (the start, any full :meth:`DaskSweeper.sync`, and a
gather every :data:`RECOVERY_EVERY` sweeps: ``(N + D K) x 4`` bytes received then) with
(nwk, nk) there and each later sweep's summed count deltas and prior; a lost shard's
tokens are scattered again (or read again from its shard file) and its state rebuilt on a
live worker by :func:`replay_shard`.  The chain is then the uninterrupted one, draw for
draw.  When the redos keep failing the run stops with a one-line :class:`WorkerLostError`
naming the lost worker.  A lost scheduler stops it with a one-line
:class:`SchedulerLostError`: at once when the client has seen its connection close,
after at most :data:`SCHEDULER_TIMEOUT` s without a connection while waiting for results,
and within the client's connect timeout (distributed's ``distributed.comm.timeouts.
connect``, 30 s by default) when it goes during a send.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from topiclink.execution.dask import (  # noqa: F401 - re-exported for one release
    MAX_RECOVERIES,
    NO_CLIENT,
    SCHEDULER_TIMEOUT,
    DaskConnection,
    SchedulerLostError,
    WorkerLostError,
    connect_client,
    resolve_client,
)
from topiclink.execution.shards import compact_dtype  # noqa: F401 - re-exported
from topiclink.kernels import lda as kernels

__all__ = ["DaskSweeper", "DaskConnection", "resolve_client", "connect_client", "sweep_shard",
           "compact_dtype", "load_shard_task", "count_shard_words", "word_topic_counts",
           "replay_shard", "WorkerLostError", "SchedulerLostError", "SCHEDULER_TIMEOUT",
           "MAX_RECOVERIES", "RECOVERY_EVERY"]

logger = logging.getLogger(__name__)

#: :class:`DaskSweeper`: sweeps between two gathers of the shards' state into the driver's
#: recovery point (the state a lost shard is rebuilt from)
RECOVERY_EVERY = 10

_PARTS = ("z", "ndk", "rng")

def lost_shards(client: Any, futures: list) -> list[int]:
    """The positions of the entries of ``futures`` (per shard, a tuple of futures) with a
    future whose data is gone (cancelled, erred, or finished with no worker holding it);
    pending ones are not lost (the scheduler computes them, or cancels them later)."""
    live = [f for row in futures for f in row if f.status == "finished"]
    who = client.who_has(live) if live else {}
    return [s for s, row in enumerate(futures)
            if any(f.status in ("cancelled", "error", "lost")
                   or (f.status == "finished" and not who.get(f.key)) for f in row)]


def sweep_shard(shard: dict, prev: tuple, shared: tuple, alpha: np.ndarray, beta: float
                ) -> tuple:
    """One AD-LDA sweep of one shard (runs on a worker).

    ``shard``: ``words`` (the shard's tokens), ``offsets`` (local, from 0), ``vocab`` (its
    distinct words, int32); ``prev``: ``(z, ndk, rng, ...)`` after the previous sweep; ``shared``:
    ``(nwk, nk)`` at the start of this sweep (read only); ``alpha``: (K,), (1, K) or the
    shard's rows (D_s, K).  Returns ``(z, ndk, rng, (rows, nwk_delta_rows, nk_delta))``:
    the word ids (int32) whose nwk row changed and those rows' changes, in the narrowest
    integer type that holds them exactly (:func:`compact_dtype`).
    """
    words, offsets, vocab = shard["words"], shard["offsets"], shard["vocab"]
    z, ndk, rng = prev[0].copy(), prev[1].copy(), prev[2].copy()
    base_w, base_k = shared
    nwk, nk = base_w.copy(), base_k.copy()
    kernels.sweep_range(words, offsets, 0, offsets.shape[0] - 1, z, ndk, nwk, nk, alpha,
                        beta, rng)
    diff = nwk[vocab] - base_w[vocab]
    changed = np.flatnonzero(diff.any(axis=1))
    rows = np.ascontiguousarray(diff[changed])
    delta = (vocab[changed], rows.astype(compact_dtype(rows)), nk - base_k)
    return z, ndk, rng, delta


def replay_shard(shard: dict, state: tuple, base_w: np.ndarray, base_k: np.ndarray,
                 log: list, d0: int, d1: int) -> tuple:
    """A lost shard's ``(z, ndk, rng, None)`` rebuilt from its state at the recovery point
    by redoing the logged sweeps (runs on a worker).  ``log``: per sweep since then, the
    summed count deltas of all shards (as :meth:`DaskSweeper.sweep` added them), the prior
    and beta; each redone sweep sees the counts the original one saw (the recovery point's
    plus the earlier sweeps' deltas), so its draws are the original ones."""
    nwk, nk = base_w.copy(), base_k.copy()
    prev = state
    for deltas, alpha, beta in log:
        a = alpha if alpha.ndim == 1 or alpha.shape[0] == 1 \
            else np.ascontiguousarray(alpha[d0:d1])
        prev = sweep_shard(shard, prev, (nwk, nk), a, beta)
        for rows, drows, dnk in deltas:
            nwk[rows] += drows
            nk += dnk
    return prev[0], prev[1], prev[2], None


def load_shard_task(path: str, n_tokens: int, n_docs: int, sha256: str) -> dict:
    """The ``shard`` argument of :func:`sweep_shard` read from a shard file (runs on a
    worker: the tokens never pass through the driver)."""
    from topiclink.data.shards import load_shard

    words, offsets, _ = load_shard(path, n_tokens, n_docs, sha256)
    return {"words": words, "offsets": offsets, "vocab": np.unique(words).astype(np.int32)}


def count_shard_words(path: str, n_tokens: int, n_docs: int, sha256: str, z: np.ndarray,
                      n_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """``(vocab, rows)``: the shard's word-topic counts, for its distinct words only (runs
    on a worker; ``z`` the shard's topics)."""
    from topiclink.data.shards import load_shard

    words, _, _ = load_shard(path, n_tokens, n_docs, sha256)
    vocab, inverse = np.unique(words, return_inverse=True)
    rows = np.bincount(inverse.astype(np.int64) * n_topics + z,
                       minlength=vocab.size * n_topics).reshape(vocab.size, n_topics)
    return vocab.astype(np.int32), rows.astype(np.int32)


def word_topic_counts(shards: Any, z: np.ndarray, n_topics: int, client: Any = None
                      ) -> np.ndarray:
    """int32 (V, K) word-topic counts of the topics ``z`` of a
    :class:`~topiclink.data.shards.ShardSet`, counted by the Dask workers from the shard
    files (:func:`count_shard_words`) and summed here: the driver never reads the words."""
    client, owned = resolve_client(client)
    try:
        nwk = np.zeros((shards.n_words, n_topics), dtype=np.int32)
        offsets = [0]
        for s in shards.shards:
            offsets.append(offsets[-1] + s.n_tokens)
        futures = [client.submit(count_shard_words, *shards.task_arguments(i),
                                 z[offsets[i]:offsets[i + 1]], int(n_topics), pure=False)
                   for i in range(shards.n_shards)]
        for future in futures:          # one shard's rows at a time on the driver
            vocab, rows = future.result()
            nwk[vocab] += rows
            future.release()
        return nwk
    finally:
        if owned:
            client.close()


def pick(values: tuple, index: int | tuple) -> Any:
    """``values[index]`` (or a tuple of several), on the worker holding ``values``."""
    if isinstance(index, tuple):
        return tuple(values[i] for i in index)
    return values[index]


class DaskSweeper(DaskConnection):
    """AD-LDA sweeps over ``len(states)`` document shards held by Dask workers.

    Same use as :class:`~topiclink.inference.chunked.ChunkedSweeper` (a context manager;
    ``sweep(words, offsets, z, ndk, nwk, nk, alpha, beta)``), except that ``sweep``
    updates ``nwk`` and ``nk`` in place and leaves ``z``, ``ndk`` and ``states`` (the RNG
    rows) on the workers: :meth:`sync` writes them into the arrays (it runs on leaving
    the context).  Always pass the same z / ndk arrays within one session.

    With ``shards`` (a :class:`~topiclink.data.shards.ShardSet` of the same corpus, written
    with the same number of shards) each worker reads its shard's tokens from the shard
    file itself (:func:`load_shard_task`) instead of the driver scattering them: ``sweep``
    may then be given ``words=None``, and the driver sends only z, ndk and the RNG rows
    of each shard.  The chain is the same, bit for bit.

    Parameters
    ----------
    offsets : int64 (D + 1,) document offsets of the tokens
    states : uint64 (n_shards, 4) xoshiro states, one row per shard (updated by ``sync``)
    client : distributed.Client, scheduler address or None (the current client)
    shards : ShardSet or None; its shards must be the ``balanced_chunks(offsets,
        n_shards)`` shards (one-line ValueError otherwise)
    """

    def __init__(self, offsets: np.ndarray, states: np.ndarray, client: Any = None,
                 shards: Any = None) -> None:
        self.chunks = kernels.balanced_chunks(offsets, states.shape[0])
        if shards is not None:
            bounds = shards.doc_bounds()
            if bounds.shape != self.chunks.shape or not np.array_equal(bounds, self.chunks):
                raise ValueError(f"DaskSweeper: the ShardSet has {shards.n_shards} shards "
                                 f"over other documents than the {self.n_shards} sampler "
                                 f"shards: write the shards with n_shards={self.n_shards}")
        self.shards = shards
        self.states = states
        self._init_connection(client)
        self.n_sweeps = 0
        self._reset()

    def _reset(self) -> None:
        self._static: list | None = None     # per shard: words, offsets, vocab
        self._shard: list | None = None      # per shard: future of (z, ndk, rng, delta)
        self._workers: list | None = None    # per shard: the worker holding it
        self._alpha_futures: list | None = None
        self._alpha_last: np.ndarray | None = None
        self._ranges: list[tuple[int, int]] = []   # per shard: its token range
        self._z: np.ndarray | None = None
        self._ndk: np.ndarray | None = None
        self._fresh: set[str] = set()
        self._local: list | None = None      # per shard: its static data (no ShardSet)
        self._base: list | None = None       # per shard: (z, ndk, rng) at the recovery point
        self._base_counts: tuple | None = None   # (nwk, nk) at the recovery point
        self._log: list = []                 # per sweep since: (deltas, alpha, beta)
        self._counts: tuple | None = None    # the (nwk, nk) arrays the sweeps update

    # ------------------------------------------------------------------ session
    def __enter__(self) -> DaskSweeper:
        self._connect()
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self._finish(self.sync if self._shard is not None else None, exc_type is not None,
                     "the state's z and ndk are those of the last sync", self._reset)

    @property
    def n_shards(self) -> int:
        return int(self.chunks.size - 1)

    def _token_range(self, offsets: np.ndarray, s: int) -> tuple[int, int]:
        return int(offsets[self.chunks[s]]), int(offsets[self.chunks[s + 1]])

    def _load(self, words: np.ndarray | None, offsets: np.ndarray, z: np.ndarray,
              ndk: np.ndarray) -> None:
        """Scatter every shard's tokens and state once (the state next to its tokens)."""
        client = self.client
        statics, states = [], []
        self._ranges = [self._token_range(offsets, s) for s in range(self.n_shards)]
        for s in range(self.n_shards):
            d0, d1 = int(self.chunks[s]), int(self.chunks[s + 1])
            lo, hi = self._ranges[s]
            if self.shards is None:
                w = np.ascontiguousarray(words[lo:hi])
                statics.append({"words": w,
                                "offsets": np.ascontiguousarray(offsets[d0:d1 + 1] - lo),
                                "vocab": np.unique(w).astype(np.int32)})
            states.append((z[lo:hi].copy(), ndk[d0:d1].copy(), self.states[s].copy(), None))
        self._local = statics if self.shards is None else None
        self._static = self._place_statics(range(self.n_shards))
        who = client.who_has(self._static)
        self._workers = [list(who[f.key]) or None for f in self._static]
        self._shard = [client.scatter([st], workers=wk, hash=False)[0]
                       for st, wk in zip(states, self._workers, strict=True)]
        self.bytes_sent += sum(a.nbytes for st in statics for a in st.values())
        self.bytes_sent += sum(a.nbytes for st in states for a in st[:3])
        self._z, self._ndk = z, ndk
        self._fresh = set(_PARTS)
        self._base = [st[:3] for st in states]
        self._log = []

    def _place_statics(self, which: Any) -> list:
        """Futures of the static data of the shards ``which``: scattered from the driver,
        or read from the shard files by the workers (waited for: a worker's error, e.g. a
        missing shard, is raised here)."""
        client = self.client
        if self.shards is None:
            return client.scatter([self._local[s] for s in which], hash=False)
        futures = [client.submit(load_shard_task, *self.shards.task_arguments(s), pure=False)
                   for s in which]
        for f in futures:
            error = f.exception()
            if error is not None:
                raise error
        return futures

    # ------------------------------------------------------------------ recovery
    def _restore(self) -> None:
        """After losing workers: every shard whose data or state is gone gets its static
        data again (scattered or read from its file) and its state rebuilt from the
        recovery point by :func:`replay_shard` on a live worker; per-document priors are
        scattered again at the next sweep."""
        client = self.client
        lost = lost_shards(client, list(zip(self._static, self._shard, strict=True)))
        if not lost:
            return
        statics = self._place_statics(lost)
        who = client.who_has(statics)
        base_w, base_k = self._base_counts
        log = list(self._log)
        for s, static in zip(lost, statics, strict=True):
            workers = list(who.get(static.key) or ()) or None
            self._static[s] = static
            self._workers[s] = workers
            self._shard[s] = client.submit(
                replay_shard, static, self._base[s], base_w, base_k, log,
                int(self.chunks[s]), int(self.chunks[s + 1]), workers=workers,
                allow_other_workers=True, pure=False)
            if self._local is not None:
                self.bytes_sent += sum(a.nbytes for a in self._local[s].values())
            self.bytes_sent += sum(a.nbytes for a in self._base[s]) + base_w.nbytes
        self._alpha_last = None
        logger.warning("DaskSweeper: shards %s rebuilt from the recovery point (%d sweeps "
                       "redone)", lost, len(log))

    def _mark(self) -> None:
        """A new recovery point: every shard's (z, ndk, rng) gathered into the driver's copy
        (not into the state's arrays: what :meth:`sync` has not fetched stays stale)."""
        client = self.client
        got = self._gather([client.submit(pick, f, (0, 1, 2), pure=False)
                            for f in self._shard])
        self._base = [tuple(np.asarray(v) for v in values) for values in got]
        self.bytes_received += sum(v.nbytes for values in got for v in values)
        self._set_base_counts()

    def _set_base_counts(self) -> None:
        nwk, nk = self._counts
        self._base_counts = (nwk.copy(), nk.copy())
        self._log = []

    def _alpha_arguments(self, alpha: np.ndarray) -> list:
        """Per shard: the prior itself (a vector or one row, sent with the task) or a
        future of the shard's rows of a (D, K) prior, scattered again only when changed."""
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.ndim == 1 or alpha.shape[0] == 1:
            self.bytes_sent += alpha.nbytes * self.n_shards
            return [alpha] * self.n_shards
        if self._alpha_last is None or not np.array_equal(alpha, self._alpha_last):
            client = self.client
            self._alpha_futures = [
                client.scatter([np.ascontiguousarray(alpha[self.chunks[s]:self.chunks[s + 1]])],
                               workers=self._workers[s], hash=False)[0]
                for s in range(self.n_shards)]
            self._alpha_last = alpha.copy()
            self.bytes_sent += alpha.nbytes
        return list(self._alpha_futures)

    # ------------------------------------------------------------------ sweeping
    def sweep(self, words: np.ndarray | None, offsets: np.ndarray, z: np.ndarray, ndk: np.ndarray,
              nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray, beta: float) -> None:
        """One AD-LDA sweep: ``nwk`` and ``nk`` updated in place; ``z``, ``ndk`` and the
        RNG rows advance on the workers (:meth:`sync` fetches them)."""
        self._connect()
        if self._shard is None:
            self._recovering(lambda: self._load(words, offsets, z, ndk), lambda: None)
            self._counts = (nwk, nk)
            self._set_base_counts()
        elif z is not self._z or ndk is not self._ndk:
            raise ValueError("DaskSweeper: sweep the same z and ndk arrays within a session")
        self._counts = (nwk, nk)
        alpha = np.asarray(alpha, dtype=np.float64)

        def attempt() -> tuple[list, list]:
            client = self.client
            shared = client.scatter([(nwk.copy(), nk.copy())], broadcast=True, hash=False)[0]
            self.bytes_sent += (nwk.nbytes + nk.nbytes) * self.n_workers
            alphas = self._alpha_arguments(alpha)
            new = [client.submit(sweep_shard, self._static[s], self._shard[s], shared,
                                 alphas[s], float(beta), pure=False)
                   for s in range(self.n_shards)]
            return new, self._gather([client.submit(pick, f, 3, pure=False) for f in new])

        new, deltas = self._recovering(attempt, self._restore)
        for rows, drows, dnk in deltas:
            nwk[rows] += drows
            nk += dnk
            self.bytes_received += rows.nbytes + drows.nbytes + dnk.nbytes
        self._shard = new               # committed only once every delta is added
        self._fresh = set()
        self.n_sweeps += 1
        logged = self._alpha_last if alpha.ndim == 2 and alpha.shape[0] > 1 else alpha.copy()
        self._log.append((deltas, logged, float(beta)))
        if len(self._log) >= RECOVERY_EVERY:
            self._recovering(self._mark, self._restore)

    def sync(self, parts: tuple[str, ...] = _PARTS) -> None:
        """Write the shards' current ``parts`` (of "z", "ndk", "rng") into the arrays the
        sweeps were given and into ``states`` (a no-op for parts already fetched)."""
        if self._shard is None:
            return
        need = tuple(p for p in _PARTS if p in parts and p not in self._fresh)
        if not need:
            return
        index = tuple(_PARTS.index(p) for p in need)

        def attempt() -> list:
            client = self.client
            return self._gather([client.submit(pick, f, index, pure=False)
                                 for f in self._shard])

        got = self._recovering(attempt, self._restore)
        for s, values in enumerate(got):
            d0, d1 = int(self.chunks[s]), int(self.chunks[s + 1])
            for part, value in zip(need, values, strict=True):
                if part == "z":
                    lo, hi = self._ranges[s]
                    self._z[lo:hi] = value
                elif part == "ndk":
                    self._ndk[d0:d1] = value
                else:
                    self.states[s] = value
                self.bytes_received += value.nbytes
        self._fresh.update(need)
        if self._fresh == set(_PARTS) and self._log:    # a new recovery point, for free
            self._base = [(self._z[lo:hi].copy(),
                           self._ndk[int(self.chunks[s]):int(self.chunks[s + 1])].copy(),
                           self.states[s].copy()) for s, (lo, hi) in enumerate(self._ranges)]
            self._set_base_counts()
