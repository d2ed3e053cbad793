"""Collapsed Gibbs sampling for LDA as an engine algorithm (state + step).

Blei, Ng & Jordan (2003) model; Griffiths & Steyvers (2004) collapsed sampler, eq. 5:

    p(z_n = k | z^-n, w) ∝ (C_dk^-n + alpha_dk) (C_kw^-n + beta) / (C_k^-n + V beta)

The token kernel (:mod:`topiclink.kernels.lda`) is the template the relational and
supervised samplers extend.  ``parallel="adlda"`` runs approximate distributed LDA
(Newman et al. 2009) over ``n_shards`` fixed document shards, each with its own stream:
a different chain from the exact sampler, fixed by the seed and the shard count; the
threads that run the shards never change it.  ``parallel="dask"`` runs the very same
shards on Dask workers (:class:`topiclink.inference.chunked.DaskSweeper`): bit for bit the
``"adlda"`` chain, whatever the number of workers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.data.shards import ShardSet
from topiclink.distributed.dask_sweeper import word_topic_counts
from topiclink.inference.chunked import ChunkedSweeper, DaskSweeper, ShardSweeper
from topiclink.inference.engine import Algorithm, State, check_topic_counts, fingerprint
from topiclink.inference.partition import PartitionSweeper
from topiclink.kernels import lda as kernels
from topiclink.kernels import lda_mh
from topiclink.random import kernel_state, spawn

__all__ = ["TokenData", "ShardTokenData", "LDAState", "CollapsedGibbsLDA", "SHARDED",
           "shard_sweeper", "sampler_parallel", "sync_shards", "doc_topic_counts"]

#: the ``parallel`` settings that sweep fixed document shards (AD-LDA, its Dask version,
#: and the partitioned scheme of :mod:`topiclink.inference.partition`)
SHARDED = ("adlda", "dask", "partition")


@dataclass
class TokenData:
    """A corpus as the token kernels read it: tokens sorted by document."""

    words: np.ndarray       # int32 (N,)
    docs: np.ndarray        # int32 (N,)
    offsets: np.ndarray     # int64 (D + 1,)
    n_docs: int
    n_words: int

    @classmethod
    def from_corpus(cls, corpus: Corpus) -> TokenData:
        tok = corpus.tokens()
        return cls(tok.words, tok.docs, tok.offsets, corpus.n_docs, corpus.n_words)

    @property
    def n_tokens(self) -> int:
        return int(self.words.size)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets).astype(np.float64)

    def fingerprint(self) -> str:
        return fingerprint(self.words, self.offsets, np.array([self.n_words]))


@dataclass
class ShardTokenData:
    """A corpus on disk (:class:`~topiclink.data.shards.ShardSet`) as ``parallel="dask"``
    reads it: the driver holds the document offsets only; the Dask workers read the
    tokens from the shard files.  ``words`` and ``docs`` are None."""

    shards: ShardSet
    offsets: np.ndarray     # int64 (D + 1,)
    n_docs: int
    n_words: int
    words: None = None
    docs: None = None

    @classmethod
    def from_shards(cls, shards: ShardSet) -> ShardTokenData:
        return cls(shards, shards.offsets(), shards.n_docs, shards.n_words)

    @property
    def n_tokens(self) -> int:
        return int(self.offsets[-1])

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets).astype(np.float64)

    def fingerprint(self) -> str:
        """From the manifest (sizes, shard checksums): not the in-memory corpus's
        fingerprint, so a chain fitted on a ShardSet resumes on that ShardSet only."""
        return "shards:" + self.shards.fingerprint()


def doc_topic_counts(offsets: np.ndarray, bounds: np.ndarray, z: np.ndarray, n_topics: int
                     ) -> np.ndarray:
    """int32 (D, K) document-topic counts of ``z`` from the document offsets alone,
    one block of documents (``bounds``) at a time (temporaries of one block's size)."""
    D = offsets.shape[0] - 1
    ndk = np.zeros((D, n_topics), dtype=np.int32)
    for d0, d1 in zip(bounds[:-1], bounds[1:], strict=True):
        lo, hi = int(offsets[d0]), int(offsets[d1])
        docs = np.repeat(np.arange(d1 - d0, dtype=np.int64), np.diff(offsets[d0:d1 + 1]))
        ndk[d0:d1] = np.bincount(docs * n_topics + z[lo:hi],
                                 minlength=(d1 - d0) * n_topics).reshape(d1 - d0, n_topics)
    return ndk


@dataclass(kw_only=True)
class LDAState(State):
    """Topic of every token, the three count arrays, the kernels' xoshiro states."""

    z: np.ndarray            # int32 (N,)
    ndk: np.ndarray          # int32 (D, K)
    nwk: np.ndarray          # int32 (V, K)
    nk: np.ndarray           # int32 (K,)
    kernel_rng: np.ndarray   # uint64 (n_streams, 4)


def init_topics(data: TokenData | ShardTokenData, n_topics: int, rng: np.random.Generator,
                client: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Uniform random topics and their counts (z, ndk, nwk, nk).

    For :class:`ShardTokenData` the same z is drawn here, ndk and nk are counted here
    from z and the offsets, and nwk by the Dask workers (``client``) from their shard
    files: the same four arrays as for the corpus in memory.
    """
    z = rng.integers(0, n_topics, size=data.n_tokens).astype(np.int32)
    if isinstance(data, ShardTokenData):
        ndk = doc_topic_counts(data.offsets, data.shards.doc_bounds(), z, n_topics)
        nk = np.bincount(z, minlength=n_topics).astype(np.int32)
        nwk = word_topic_counts(data.shards, z, n_topics, client)
        return z, ndk, nwk, nk
    ndk = np.zeros((data.n_docs, n_topics), dtype=np.int32)
    nwk = np.zeros((data.n_words, n_topics), dtype=np.int32)
    nk = np.zeros(n_topics, dtype=np.int32)
    kernels.init_counts(data.words, data.docs, z, ndk, nwk, nk)
    return z, ndk, nwk, nk


def sampler_parallel(scheme: str, dask: bool) -> str | None:
    """The sampler's ``parallel`` of an estimator's scheme (LDA, DMR) and executor: None
    (``"exact"``), ``"partition"``, ``"adlda"`` (threads) or ``"dask"`` (the AD-LDA shards
    on a Dask executor)."""
    if scheme == "exact":
        return None
    return "dask" if dask else scheme


def shard_sweeper(parallel: str, offsets: np.ndarray, states: np.ndarray, n_threads: int,
                  client: Any = None, words: np.ndarray | None = None, n_words: int = 0,
                  shards: ShardSet | None = None
                  ) -> ChunkedSweeper | DaskSweeper | PartitionSweeper:
    """The sweeper of ``parallel`` (a context manager): AD-LDA shards on threads
    (``"adlda"``) or on Dask workers (``"dask"``, the same chain either way; with
    ``shards`` the workers read the tokens from the shard files), or document-shard x
    word-block partitions on threads (``"partition"``: needs ``words`` and ``n_words``)."""
    if parallel == "dask":
        return DaskSweeper(offsets, states, client, shards=shards)
    if shards is not None:
        raise ValueError("a ShardSet is read by Dask workers: use a Dask executor with "
                         f"scheme 'adlda' (the sampler's parallel={parallel!r})")
    if parallel == "partition":
        if words is None:
            raise ValueError("scheme='partition' needs the corpus's words")
        return PartitionSweeper(words, offsets, n_words, states, n_threads)
    return ChunkedSweeper(offsets, states, n_threads)


def sync_shards(sweeper: Any, parts: tuple[str, ...] = ("z", "ndk", "rng")) -> None:
    """Fetch the shards' z / ndk / RNG rows into the state (only Dask keeps them away)."""
    if isinstance(sweeper, ShardSweeper):
        sweeper.sync(parts)


class CollapsedGibbsLDA(Algorithm):
    """LDA by collapsed Gibbs.

    Parameters
    ----------
    n_topics : K
    alpha : float64 (K,) or (D, K) Dirichlet prior of theta (per document when 2-D)
    beta : symmetric Dirichlet prior of the topics
    parallel : None (the exact sequential sampler), ``"adlda"`` (shards on threads),
        ``"dask"`` (the same shards on Dask workers) or ``"partition"`` (document shards x
        vocabulary blocks on threads, :mod:`topiclink.inference.partition`)
    n_shards : document shards of AD-LDA (each its own stream); with a
        :class:`ShardTokenData` (a ShardSet on disk) it must equal the ShardSet's number
        of shards and ``parallel`` must be ``"dask"``: the workers read the shard files,
        ``init`` / ``check_values`` count nwk on the workers (one pass over the files
        each), the driver holds z, the counts and the offsets only
    n_threads : threads running the shards (never changes the chain)
    client : ``parallel="dask"``: a distributed.Client, a scheduler address or None (the
        current client)
    sampler : ``"gibbs"`` (the exact collapsed conditional, O(K) per token) or ``"mh"``
        (exact Metropolis-Hastings steps with O(1) proposals per token,
        :mod:`topiclink.kernels.lda_mh`; sequential only)
    n_mh : Metropolis-Hastings steps per token (``sampler="mh"``)
    """

    name = "LDA"
    state_class = LDAState

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float,
                 parallel: str | None = None, n_shards: int = 1, n_threads: int = 1,
                 client: Any = None, sampler: str = "gibbs",
                 n_mh: int = 2) -> None:
        if sampler not in ("gibbs", "mh"):
            raise ValueError(f"sampler must be 'gibbs' or 'mh', got {sampler!r}")
        if sampler == "mh" and parallel is not None:
            raise ValueError("sampler='mh' runs the sequential chain: use scheme='exact'")
        self.sampler = sampler
        self.n_mh = int(n_mh)
        self._word_index: tuple[TokenData, np.ndarray, np.ndarray] | None = None
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = float(beta)
        self.parallel = parallel
        self.n_shards = n_shards if parallel in SHARDED else 1
        self.n_threads = n_threads
        self.client = client
        self._sweeper: ChunkedSweeper | DaskSweeper | None = None

    def fingerprint(self, data: TokenData | ShardTokenData) -> str:
        return data.fingerprint()

    def check_data(self, data: TokenData | ShardTokenData) -> None:
        """A ShardSet is swept by Dask workers over its own shards: one-line ValueError
        unless ``parallel="dask"`` with ``n_shards`` equal to the ShardSet's."""
        if isinstance(data, ShardTokenData):
            if self.parallel != "dask":
                raise ValueError("fitting a ShardSet needs a Dask executor and scheme "
                                 "'adlda' (the workers read the shard files)")
            if self.n_shards != data.shards.n_shards:
                raise ValueError(f"the ShardSet has {data.shards.n_shards} shards but "
                                 f"the scheme {self.n_shards}: use scheme=Shards('adlda', "
                                 f"{data.shards.n_shards}) (or write_shards(..., "
                                 f"{self.n_shards}))")

    def init(self, data: TokenData | ShardTokenData, rng: np.random.Generator) -> LDAState:
        self.check_data(data)
        init_rng, chain_rng = spawn(rng, 2)
        z, ndk, nwk, nk = init_topics(data, self.n_topics, init_rng, self.client)
        return LDAState(z=z, ndk=ndk, nwk=nwk, nk=nk,
                        kernel_rng=kernel_state(chain_rng, self.n_shards),
                        data_fingerprint=self.fingerprint(data))

    def check_values(self, state: LDAState, data: TokenData | ShardTokenData) -> None:
        if not isinstance(data, ShardTokenData):
            check_topic_counts(state.z, state.ndk, state.nwk, state.nk, data.docs,
                               data.words)
            return
        # the same checks without the words on the driver: nk and ndk from z and the
        # offsets here, nwk counted by the workers from the shard files
        K = state.nk.shape[0]
        z = state.z
        if z.size and (z.min() < 0 or z.max() >= K):
            raise ValueError(f"state: topic assignments outside [0, {K})")
        if not (np.array_equal(np.bincount(z, minlength=K), state.nk)
                and np.array_equal(doc_topic_counts(data.offsets, data.shards.doc_bounds(),
                                                    z, K), state.ndk)
                and np.array_equal(word_topic_counts(data.shards, z, K, self.client),
                                   state.nwk)):
            raise ValueError("state: the topic counts do not match the topic assignments")

    @contextlib.contextmanager
    def session(self, state: LDAState, data: TokenData | ShardTokenData) -> Iterator[None]:
        if self.parallel not in SHARDED:
            yield
            return
        self.check_data(data)
        with shard_sweeper(self.parallel, data.offsets, state.kernel_rng, self.n_threads,
                           self.client, data.words, data.n_words,
                           getattr(data, "shards", None)) as sweeper:
            self._sweeper = sweeper
            try:
                yield
            finally:
                self._sweeper = None

    def step(self, state: LDAState, data: TokenData) -> dict[str, float]:
        if self.parallel in SHARDED:
            if self._sweeper is None:       # outside a session: one sweep, all gathered
                with shard_sweeper(self.parallel, data.offsets, state.kernel_rng, 1,
                                   self.client, data.words, data.n_words,
                                   getattr(data, "shards", None)) as sweeper:
                    sweeper.sweep(data.words, data.offsets, state.z, state.ndk, state.nwk,
                                  state.nk, self.alpha, self.beta)
                return {}
            self._sweeper.sweep(data.words, data.offsets, state.z, state.ndk, state.nwk,
                                state.nk, self.alpha, self.beta)
        elif self.sampler == "mh":
            if self._word_index is None or self._word_index[0] is not data:
                self._word_index = (data, *lda_mh.word_index(data.words, data.n_words))
            _, ptr, pos = self._word_index
            lda_mh.sweep_mh(data.words, data.offsets, state.z, state.ndk, state.nwk,
                            state.nk, self.alpha, self.beta, state.kernel_rng[0], ptr, pos,
                            self.n_mh)
        else:
            kernels.sweep(data.words, data.offsets, state.z, state.ndk, state.nwk, state.nk,
                          self.alpha, self.beta, state.kernel_rng[0])
        return {}

    def sync(self, state: LDAState, parts: tuple[str, ...] = ("z", "ndk", "rng")) -> None:
        """Make ``parts`` of the state current (``parallel="dask"`` keeps them on the
        workers between reads; otherwise a no-op)."""
        sync_shards(self._sweeper, parts)

    def objective(self, state: LDAState, data: TokenData) -> float:
        """Collapsed log p(w, z) per token."""
        self.sync(state, ("ndk",))
        return kernels.log_joint(state.ndk, state.nwk, state.nk, self.alpha,
                                 self.beta) / data.n_tokens
