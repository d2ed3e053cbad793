"""Collapsed Gibbs sampling for LDA as an engine algorithm (state + step).

Blei, Ng & Jordan (2003) model; Griffiths & Steyvers (2004) collapsed sampler, eq. 5:

    p(z_n = k | z^-n, w) ∝ (C_dk^-n + alpha_dk) (C_kw^-n + beta) / (C_k^-n + V beta)

The token kernel (:mod:`topiclink.kernels.lda`) is the template the relational and
supervised samplers extend.  ``parallel="adlda"`` runs approximate distributed LDA
(Newman et al. 2009) over ``n_shards`` fixed document shards, each with its own stream:
a different chain from the exact sampler, fixed by the seed and the shard count; the
threads that run the shards never change it.  ``parallel="dask"`` runs the very same
shards on Dask workers: bit for bit the ``"adlda"`` chain, whatever the number of
workers.  Both are the iteration of :class:`topiclink.inference.adlda.ADLDAShards` (a
:class:`~topiclink.inference.sharded.ShardedAlgorithm`: split, shared, local, merge,
write back), which the engine runs through ``step`` / ``session`` / ``sync``;
``parallel="partition"`` runs a :class:`~topiclink.inference.partition.PartitionSweeper`
on threads.  :class:`ShardedTokenSampler` is the dispatch that
:class:`CollapsedGibbsLDA` and DMR (:mod:`topiclink.families.dmr.algorithm`) share.
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
from topiclink.execution import DaskExecutor
from topiclink.inference.adlda import ADLDAShards
from topiclink.inference.engine import State, check_topic_counts, fingerprint
from topiclink.inference.partition import PartitionSweeper
from topiclink.kernels import lda as kernels
from topiclink.kernels import lda_mh
from topiclink.random import kernel_state, spawn

__all__ = ["TokenData", "ShardTokenData", "LDAState", "CollapsedGibbsLDA", "SHARDED",
           "ADLDA", "ShardedTokenSampler", "sampler_parallel", "doc_topic_counts"]

#: the ``parallel`` settings that sweep fixed document shards (AD-LDA, its Dask version,
#: and the partitioned scheme of :mod:`topiclink.inference.partition`)
SHARDED = ("adlda", "dask", "partition")
#: the ``parallel`` settings run by :class:`~topiclink.inference.adlda.ADLDAShards`
ADLDA = ("adlda", "dask")


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


class ShardedTokenSampler(ADLDAShards):
    """The sharded sweeps of a token sampler (LDA, DMR), by ``parallel``: ``"adlda"`` /
    ``"dask"`` the :class:`~topiclink.inference.adlda.ADLDAShards` iteration (threads of
    this process, or a :class:`~topiclink.execution.DaskExecutor` on ``client``);
    ``"partition"`` a :class:`~topiclink.inference.partition.PartitionSweeper` on
    ``n_threads`` threads; None: the subclass sweeps by itself (:meth:`session` and
    :meth:`sync` do nothing).

    A subclass sets ``parallel``, ``client`` and ``beta``, calls
    ``ShardedAlgorithm.__init__`` and gives :meth:`token_data` and ``adlda_alpha``; its
    ``step`` calls :meth:`sharded_step` when ``parallel`` is one of :data:`SHARDED`.
    """

    parallel: str | None
    client: Any
    _partition: PartitionSweeper | None = None

    def token_data(self, data: Any) -> TokenData | ShardTokenData:
        """The tokens of ``data``."""
        raise NotImplementedError

    def adlda_tokens(self, data: Any) -> tuple[np.ndarray | None, np.ndarray, Any]:
        tok = self.token_data(data)
        return tok.words, tok.offsets, getattr(tok, "shards", None)

    def _partition_sweeper(self, state: Any, data: Any, n_threads: int) -> PartitionSweeper:
        tok = self.token_data(data)
        if tok.words is None:
            raise ValueError("scheme='partition' needs the corpus's words")
        return PartitionSweeper(tok.words, tok.offsets, tok.n_words, state.kernel_rng,
                                n_threads)

    @contextlib.contextmanager
    def session(self, state: Any, data: Any) -> Iterator[None]:
        if self.parallel == "partition":
            with self._partition_sweeper(state, data, self.n_threads) as sweeper:
                self._partition = sweeper
                try:
                    yield
                finally:
                    self._partition = None
        elif self.parallel in ADLDA:
            # the run's executor (borrowed by ShardedAlgorithm; None: own threads)
            self.executor = DaskExecutor(self.client) if self.parallel == "dask" else None
            try:
                with super().session(state, data):
                    yield
            finally:
                self.executor = None
        else:
            yield

    def sharded_step(self, state: Any, data: Any) -> dict[str, float]:
        """One sweep of the shards (a session is opened for a lone call)."""
        if self.parallel in ADLDA:
            if self._ex is None:
                with self.session(state, data):
                    return self.sharded_step(state, data)
            return super().step(state, data)
        tok = self.token_data(data)
        alpha = self.adlda_alpha(state, data)
        if self._partition is None:         # outside a session: one sweep, one thread
            with self._partition_sweeper(state, data, 1) as sweeper:
                sweeper.sweep(tok.words, tok.offsets, state.z, state.ndk, state.nwk,
                              state.nk, alpha, self.beta)
        else:
            self._partition.sweep(tok.words, tok.offsets, state.z, state.ndk, state.nwk,
                                  state.nk, alpha, self.beta)
        return {}

    def sync(self, state: Any, parts: tuple[str, ...] = ("z", "ndk", "rng")) -> None:
        """Make the state current (the AD-LDA shards' z, ndk and RNG rows: on Dask they
        stay on the workers between reads; otherwise a no-op; ``parts`` is accepted for
        callers that need less: everything is written)."""
        if self.parallel in ADLDA:
            super().sync(state)


class CollapsedGibbsLDA(ShardedTokenSampler):
    """LDA by collapsed Gibbs (a :class:`ShardedTokenSampler`).

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
        super().__init__(n_shards if parallel in SHARDED else 1, None, n_threads)
        self.client = client

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

    def token_data(self, data: TokenData | ShardTokenData) -> TokenData | ShardTokenData:
        return data

    def adlda_alpha(self, state: LDAState, data: TokenData | ShardTokenData) -> np.ndarray:
        return self.alpha

    @contextlib.contextmanager
    def session(self, state: LDAState, data: TokenData | ShardTokenData) -> Iterator[None]:
        if self.parallel in SHARDED:
            self.check_data(data)
        with super().session(state, data):
            yield

    def step(self, state: LDAState, data: TokenData) -> dict[str, float]:
        if self.parallel in SHARDED:
            return self.sharded_step(state, data)
        if self.sampler == "mh":
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

    def objective(self, state: LDAState, data: TokenData) -> float:
        """Collapsed log p(w, z) per token."""
        self.sync(state, ("ndk",))
        return kernels.log_joint(state.ndk, state.nwk, state.nk, self.alpha,
                                 self.beta) / data.n_tokens
