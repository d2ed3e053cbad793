"""Collapsed Gibbs sampling for LDA as an engine algorithm (state + step).

Blei, Ng & Jordan (2003) model; Griffiths & Steyvers (2004) collapsed sampler, eq. 5:

    p(z_n = k | z^-n, w) ∝ (C_dk^-n + alpha_dk) (C_kw^-n + beta) / (C_k^-n + V beta)

The token kernel (:mod:`topiclink.kernels.lda`) is the template the relational and
supervised samplers extend.  ``parallel="adlda"`` runs approximate distributed LDA
(Newman et al. 2009) over ``n_shards`` fixed document shards, each with its own stream:
a different chain from the exact sampler, fixed by the seed and the shard count; the
threads that run the shards never change it.  ``parallel="dask"`` runs the very same
shards on Dask workers (:class:`topiclink.distributed.DaskSweeper`): bit for bit the
``"adlda"`` chain, whatever the number of workers.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.distributed import DaskSweeper
from topiclink.inference.chunked import ChunkedSweeper
from topiclink.inference.engine import Algorithm, State, check_topic_counts, fingerprint
from topiclink.inference.partition import PartitionSweeper
from topiclink.kernels import lda as kernels
from topiclink.kernels import lda_mh
from topiclink.random import kernel_state, spawn

__all__ = ["TokenData", "LDAState", "CollapsedGibbsLDA", "SHARDED", "shard_sweeper",
           "sync_shards"]

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


@dataclass(kw_only=True)
class LDAState(State):
    """Topic of every token, the three count arrays, the kernels' xoshiro states."""

    z: np.ndarray            # int32 (N,)
    ndk: np.ndarray          # int32 (D, K)
    nwk: np.ndarray          # int32 (V, K)
    nk: np.ndarray           # int32 (K,)
    kernel_rng: np.ndarray   # uint64 (n_streams, 4)


def init_topics(data: TokenData, n_topics: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Uniform random topics and their counts (z, ndk, nwk, nk)."""
    z = rng.integers(0, n_topics, size=data.n_tokens).astype(np.int32)
    ndk = np.zeros((data.n_docs, n_topics), dtype=np.int32)
    nwk = np.zeros((data.n_words, n_topics), dtype=np.int32)
    nk = np.zeros(n_topics, dtype=np.int32)
    kernels.init_counts(data.words, data.docs, z, ndk, nwk, nk)
    return z, ndk, nwk, nk


def shard_sweeper(parallel: str, offsets: np.ndarray, states: np.ndarray, n_threads: int,
                  client: Any = None, words: np.ndarray | None = None, n_words: int = 0
                  ) -> ChunkedSweeper | DaskSweeper | PartitionSweeper:
    """The sweeper of ``parallel`` (a context manager): AD-LDA shards on threads
    (``"adlda"``) or on Dask workers (``"dask"``, the same chain either way), or
    document-shard x word-block partitions on threads (``"partition"``: needs ``words``
    and ``n_words``)."""
    if parallel == "dask":
        return DaskSweeper(offsets, states, client)
    if parallel == "partition":
        if words is None:
            raise ValueError("parallel='partition' needs the corpus's words")
        return PartitionSweeper(words, offsets, n_words, states, n_threads)
    return ChunkedSweeper(offsets, states, n_threads)


def sync_shards(sweeper: Any, parts: tuple[str, ...] = ("z", "ndk", "rng")) -> None:
    """Fetch the shards' z / ndk / RNG rows into the state (only Dask keeps them away)."""
    if isinstance(sweeper, DaskSweeper):
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
    n_shards : document shards of AD-LDA (each its own stream)
    n_threads : threads running the shards (never changes the chain)
    client : ``parallel="dask"``: a distributed.Client, a scheduler address or None (the
        current client)
    full_sync : ``parallel="dask"``: gather z / ndk / RNG rows after every sweep (when
        callbacks may read the state); otherwise only when read (objective: ndk; end of
        the run: everything)
    sampler : ``"gibbs"`` (the exact collapsed conditional, O(K) per token) or ``"mh"``
        (exact Metropolis-Hastings steps with O(1) proposals per token,
        :mod:`topiclink.kernels.lda_mh`; sequential only)
    n_mh : Metropolis-Hastings steps per token (``sampler="mh"``)
    """

    name = "LDA"
    state_class = LDAState

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float,
                 parallel: str | None = None, n_shards: int = 1, n_threads: int = 1,
                 client: Any = None, full_sync: bool = False, sampler: str = "gibbs",
                 n_mh: int = 2) -> None:
        if sampler not in ("gibbs", "mh"):
            raise ValueError(f"sampler must be 'gibbs' or 'mh', got {sampler!r}")
        if sampler == "mh" and parallel is not None:
            raise ValueError("sampler='mh' runs the sequential chain: use parallel=None")
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
        self.full_sync = full_sync
        self._sweeper: ChunkedSweeper | DaskSweeper | None = None

    def fingerprint(self, data: TokenData) -> str:
        return data.fingerprint()

    def init(self, data: TokenData, rng: np.random.Generator) -> LDAState:
        init_rng, chain_rng = spawn(rng, 2)
        z, ndk, nwk, nk = init_topics(data, self.n_topics, init_rng)
        return LDAState(z=z, ndk=ndk, nwk=nwk, nk=nk,
                        kernel_rng=kernel_state(chain_rng, self.n_shards),
                        data_fingerprint=self.fingerprint(data))

    def check_values(self, state: LDAState, data: TokenData) -> None:
        check_topic_counts(state.z, state.ndk, state.nwk, state.nk, data.docs, data.words)

    @contextlib.contextmanager
    def session(self, state: LDAState, data: TokenData) -> Iterator[None]:
        if self.parallel not in SHARDED:
            yield
            return
        with shard_sweeper(self.parallel, data.offsets, state.kernel_rng, self.n_threads,
                           self.client, data.words, data.n_words) as sweeper:
            self._sweeper = sweeper
            try:
                yield
            finally:
                self._sweeper = None

    def step(self, state: LDAState, data: TokenData) -> dict[str, float]:
        if self.parallel in SHARDED:
            if self._sweeper is None:       # outside a session: one sweep, all gathered
                with shard_sweeper(self.parallel, data.offsets, state.kernel_rng, 1,
                                   self.client, data.words, data.n_words) as sweeper:
                    sweeper.sweep(data.words, data.offsets, state.z, state.ndk, state.nwk,
                                  state.nk, self.alpha, self.beta)
                return {}
            self._sweeper.sweep(data.words, data.offsets, state.z, state.ndk, state.nwk,
                                state.nk, self.alpha, self.beta)
            if self.full_sync:
                self.sync(state)
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
