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
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from topiclink.kernels import lda as kernels

__all__ = ["DaskSweeper", "DaskConnection", "resolve_client", "connect_client", "sweep_shard",
           "compact_dtype", "load_shard_task", "count_shard_words", "word_topic_counts"]

logger = logging.getLogger(__name__)

_PARTS = ("z", "ndk", "rng")

NO_CLIENT = ("parallel='dask' found no Dask client: pass client=distributed.Client(...) "
             "(or a scheduler address), or create a distributed.Client before fit")


def resolve_client(client: Any = None) -> tuple[Any, bool]:
    """``(client, owned)``: a ``distributed.Client`` as given; a scheduler address (str)
    connected here (``owned``: the caller closes it); None -> ``distributed.get_client()``.
    One-line errors when distributed is missing or there is no client."""
    try:
        import distributed
    except ImportError:
        raise ImportError("parallel='dask' needs dask and distributed: pip install "
                          "'topiclink[dask]' (or pip install dask distributed)") from None
    if client is None:
        try:
            return distributed.get_client(), False
        except ValueError:
            raise ValueError(NO_CLIENT) from None
    if isinstance(client, str):
        try:
            return distributed.Client(client, set_as_default=False), True
        except OSError as exc:
            raise ValueError(f"parallel='dask': cannot connect to the Dask scheduler at "
                             f"{client!r} ({exc})") from None
    if not isinstance(client, distributed.Client):
        raise TypeError(f"client must be a distributed.Client, a scheduler address or None, "
                        f"got {type(client).__name__}")
    return client, False


def connect_client(client: Any = None) -> tuple[Any, bool, int]:
    """``(client, owned, n_workers)`` for one run: :func:`resolve_client`, then up to 60 s
    for a first worker when the cluster has none yet."""
    client, owned = resolve_client(client)
    try:
        nthreads = client.nthreads()
        if not nthreads:
            client.wait_for_workers(1, timeout=60)
            nthreads = client.nthreads()
    except BaseException:
        if owned:       # a connection made here is not left open
            client.close()
        raise
    return client, owned, len(nthreads)


class DaskConnection:
    """What a Dask sampler keeps of its cluster: ``client_arg`` (the ``client`` parameter
    as given), the live ``client`` while connected (``_owned``: connected here from an
    address, so closed here), ``n_workers`` and the payload byte counters."""

    def _init_connection(self, client: Any) -> None:
        self.client_arg = client
        self.client: Any = None
        self._owned = False
        self.n_workers = 0
        self.bytes_sent = 0
        self.bytes_received = 0

    def _connect(self) -> None:
        """:func:`connect_client` (a no-op while connected)."""
        if self.client is None:
            self.client, self._owned, self.n_workers = connect_client(self.client_arg)

    def _disconnect(self) -> None:
        """Close a connection made here; forget the client."""
        if self._owned and self.client is not None:
            self.client.close()
        self.client = None
        self._owned = False

    def _finish(self, gather: Callable[[], None] | None, failed: bool, stale: str,
                forget: Callable[[], None]) -> None:
        """End a run: ``gather`` the shards' state back (None: nothing is out on the
        workers) -- after a failed run a gathering error is logged, naming what is
        ``stale``, instead of hiding the first error -- then ``forget`` the shards and
        disconnect."""
        try:
            if gather is not None:
                try:
                    gather()
                except Exception:
                    if not failed:
                        raise
                    logger.warning("%s: could not gather the shards after an error; %s",
                                   type(self).__name__, stale)
        finally:
            forget()
            self._disconnect()


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


def compact_dtype(values: np.ndarray) -> type:
    """The narrowest of int8 / int16 / int32 holding every value (exact)."""
    if values.size == 0:
        return np.int8
    top = max(int(values.max()), -int(values.min()))
    for dtype in (np.int8, np.int16):
        if top <= np.iinfo(dtype).max:
            return dtype
    return np.int32


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
        if self.shards is None:
            self._static = client.scatter(statics, hash=False)
        else:                       # the workers read their shard files themselves
            self._static = [client.submit(load_shard_task, *self.shards.task_arguments(s),
                                          pure=False) for s in range(self.n_shards)]
            for f in self._static:  # waits; the worker's error (e.g. a missing shard)
                error = f.exception()
                if error is not None:
                    raise error
        who = client.who_has(self._static)
        self._workers = [list(who[f.key]) or None for f in self._static]
        self._shard = [client.scatter([st], workers=wk, hash=False)[0]
                       for st, wk in zip(states, self._workers, strict=True)]
        self.bytes_sent += sum(a.nbytes for st in statics for a in st.values())
        self.bytes_sent += sum(a.nbytes for st in states for a in st[:3])
        self._z, self._ndk = z, ndk
        self._fresh = set(_PARTS)

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
            self._load(words, offsets, z, ndk)
        elif z is not self._z or ndk is not self._ndk:
            raise ValueError("DaskSweeper: sweep the same z and ndk arrays within a session")
        client = self.client
        shared = client.scatter([(nwk.copy(), nk.copy())], broadcast=True, hash=False)[0]
        self.bytes_sent += (nwk.nbytes + nk.nbytes) * self.n_workers
        alphas = self._alpha_arguments(alpha)
        new = [client.submit(sweep_shard, self._static[s], self._shard[s], shared,
                             alphas[s], float(beta), pure=False)
               for s in range(self.n_shards)]
        deltas = client.gather([client.submit(pick, f, 3, pure=False) for f in new])
        for rows, drows, dnk in deltas:
            nwk[rows] += drows
            nk += dnk
            self.bytes_received += rows.nbytes + drows.nbytes + dnk.nbytes
        self._shard = new               # committed only once every delta is added
        self._fresh = set()
        self.n_sweeps += 1

    def sync(self, parts: tuple[str, ...] = _PARTS) -> None:
        """Write the shards' current ``parts`` (of "z", "ndk", "rng") into the arrays the
        sweeps were given and into ``states`` (a no-op for parts already fetched)."""
        if self._shard is None:
            return
        need = tuple(p for p in _PARTS if p in parts and p not in self._fresh)
        if not need:
            return
        index = tuple(_PARTS.index(p) for p in need)
        client = self.client
        got = client.gather([client.submit(pick, f, index, pure=False) for f in self._shard])
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
