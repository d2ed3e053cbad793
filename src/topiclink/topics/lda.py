"""Collapsed Gibbs sampling for LDA as an engine algorithm (state + step).

Blei, Ng & Jordan (2003) model; Griffiths & Steyvers (2004) collapsed sampler, eq. 5:

    p(z_n = k | z^-n, w) ∝ (C_dk^-n + alpha_dk) (C_kw^-n + beta) / (C_k^-n + V beta)

The token kernel (:mod:`topiclink.topics.kernels.lda`) is the template the relational and
supervised samplers extend.  ``scheme="adlda"`` runs approximate distributed LDA
(Newman et al. 2009) over ``n_shards`` fixed document shards, each with its own stream:
a different chain from the exact sampler, fixed by the seed and the shard count; where
the shards run (threads of this process, or the Dask workers of the ``executor`` the
algorithm is handed) never changes it.  It is the iteration of
:class:`topiclink.topics.adlda.ADLDAShards` (a
:class:`~topiclink.inference.sharded.ShardedAlgorithm`: split, shared, local, merge,
write back), which the engine runs through ``step`` / ``session`` / ``sync``;
``scheme="partition"`` runs a :class:`~topiclink.topics.partition.PartitionSweeper`
on threads.  :class:`ShardedTokenSampler` is the dispatch that
:class:`CollapsedGibbsLDA` and DMR (:mod:`topiclink.families.dmr.algorithm`) share.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.data.shards import ShardSet
from topiclink.execution import Executor
from topiclink.inference.engine import State, check_topic_counts, fingerprint
from topiclink.random import kernel_state, spawn
from topiclink.topics.adlda import ADLDAShards
from topiclink.topics.chunked import word_topic_counts
from topiclink.topics.kernels import lda as kernels
from topiclink.topics.kernels import lda_mh, lda_warp
from topiclink.topics.partition import PartitionSweeper
from topiclink.topics.warp_partition import WarpPartitionSweeper

__all__ = ["TokenData", "ShardTokenData", "LDAState", "CollapsedGibbsLDA", "SHARDED",
           "INITS", "spectral_start",
           "SAMPLERS", "SCHEMES_OF_SAMPLER", "ShardedTokenSampler", "doc_topic_counts"]

#: the token samplers' schemes that sweep fixed document shards (AD-LDA and the
#: partitioned scheme of :mod:`topiclink.topics.partition`)
SHARDED = ("adlda", "partition")
#: the token kernels of :class:`CollapsedGibbsLDA`: exact Gibbs (O(K) a token) and the two
#: O(1)-a-token Metropolis-Hastings kernels (:mod:`~topiclink.topics.kernels.lda_mh`,
#: :mod:`~topiclink.topics.kernels.lda_warp`)
SAMPLERS = ("gibbs", "mh", "warp")
#: the schemes each Metropolis-Hastings kernel runs with ("gibbs": every scheme): "warp"
#: also on the partitioned threads of :mod:`topiclink.topics.warp_partition`
SCHEMES_OF_SAMPLER = {"mh": ("exact",), "warp": ("exact", "partition")}
#: how the chain starts: uniform random topics, or the deterministic anchor-word topics
#: (:func:`spectral_start`)
INITS = ("random", "spectral")
#: Metropolis-Hastings steps per token (and phase) by default.  "warp": chosen by the
#: training log joint against CPU time on 20 Newsgroups, one thread, 40-60 sweeps: at
#: K = 1000 after 22 s, -10.49 / -10.27 / -10.14 / -10.16 / -10.19 for 1 / 2 / 3 / 4 / 6
#: steps; at K = 200 after 14 s, 2, 3 and 4 steps within 0.06 of each other
MH_STEPS = {"mh": 2, "warp": 3}


@dataclass
class TokenIndex:
    """The workspace of the Metropolis-Hastings kernels on an :class:`LDAState`
    (:attr:`~topiclink.inference.engine.State.workspace`): the word order of ``data``'s
    tokens (``ptr``, ``pos``; for ``"warp"`` also ``slot``, ``docs_w`` and ``zw``, the
    assignments in word order, which the kernel keeps equal to ``state.z[pos]``)."""

    data: Any
    z: np.ndarray                    # the state's z this index was built for
    ptr: np.ndarray
    pos: np.ndarray
    slot: np.ndarray | None = None
    docs_w: np.ndarray | None = None
    zw: np.ndarray | None = None

    def fits(self, state: Any, data: Any) -> bool:
        return self.data is data and self.z is state.z


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
    """A corpus on disk (:class:`~topiclink.data.shards.ShardSet`) as AD-LDA on a Dask
    executor reads it: the driver holds the document offsets only; the Dask workers read the
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
                client: Any = None, *, init: str = "random"
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Uniform random topics and their counts (z, ndk, nwk, nk); ``init="spectral"``:
    the deterministic start of :func:`spectral_start` (``rng`` unused).

    For :class:`ShardTokenData` the same z is drawn here, ndk and nk are counted here
    from z and the offsets, and nwk by the Dask workers (``client``) from their shard
    files: the same four arrays as for the corpus in memory.
    """
    if init not in INITS:
        raise ValueError(f"init must be one of {', '.join(map(repr, INITS))}, got {init!r}")
    if init == "spectral":
        if isinstance(data, ShardTokenData):
            raise ValueError("init='spectral' needs the corpus in memory (a ShardSet is "
                             "swept by the workers from its files): use init='random'")
        return spectral_start(data, n_topics)
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


def spectral_start(data: TokenData, n_topics: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Deterministic topics and their counts (z, ndk, nwk, nk): the anchor-word topics of
    the corpus (:func:`topiclink.topics.spectral.anchor_topics`) and each token's most
    probable topic under them (:func:`~topiclink.topics.spectral.start_assignments`)."""
    from topiclink.topics.spectral import anchor_topics, start_assignments

    counts = sp.csr_matrix((np.ones(data.n_tokens), (data.docs, data.words)),
                           shape=(data.n_docs, data.n_words))
    topics, _ = anchor_topics(counts, n_topics)
    z = start_assignments(data.words, data.docs, counts, topics)
    ndk = np.zeros((data.n_docs, n_topics), dtype=np.int32)
    nwk = np.zeros((data.n_words, n_topics), dtype=np.int32)
    nk = np.zeros(n_topics, dtype=np.int32)
    kernels.init_counts(data.words, data.docs, z, ndk, nwk, nk)
    return z, ndk, nwk, nk


class ShardedTokenSampler(ADLDAShards):
    """The sharded sweeps of a token sampler (LDA, DMR), by ``scheme``: ``"adlda"`` the
    :class:`~topiclink.topics.adlda.ADLDAShards` iteration (on the algorithm's
    ``executor``: a :class:`~topiclink.execution.DaskExecutor`, or None: ``n_threads``
    threads of this process); ``"partition"`` a
    :class:`~topiclink.topics.partition.PartitionSweeper` on ``n_threads`` threads;
    ``"exact"``: the subclass sweeps by itself (:meth:`session` and :meth:`sync` do
    nothing).

    A subclass sets ``scheme`` and ``beta``, calls ``ShardedAlgorithm.__init__`` and gives
    :meth:`token_data` and ``adlda_alpha``; its ``step`` calls :meth:`sharded_step` when
    ``scheme`` is one of :data:`SHARDED`.
    """

    scheme: str
    _partition: PartitionSweeper | WarpPartitionSweeper | None = None

    def token_data(self, data: Any) -> TokenData | ShardTokenData:
        """The tokens of ``data``."""
        raise NotImplementedError

    def adlda_tokens(self, data: Any) -> tuple[np.ndarray | None, np.ndarray, Any]:
        tok = self.token_data(data)
        return tok.words, tok.offsets, getattr(tok, "shards", None)

    def _partition_sweeper(self, state: Any, data: Any, n_threads: int
                           ) -> PartitionSweeper | WarpPartitionSweeper:
        tok = self.token_data(data)
        if tok.words is None:
            raise ValueError("scheme='partition' needs the corpus's words")
        if getattr(self, "sampler", "gibbs") == "warp":
            ix = self.token_index(state, data)
            return WarpPartitionSweeper(tok.words, tok.docs, tok.offsets, tok.n_words,
                                        state.kernel_rng, n_threads, ix.ptr, ix.pos,
                                        ix.slot, ix.docs_w, ix.zw, self.n_mh)
        return PartitionSweeper(tok.words, tok.offsets, tok.n_words, state.kernel_rng,
                                n_threads)

    @contextlib.contextmanager
    def session(self, state: Any, data: Any) -> Iterator[None]:
        if self.scheme == "partition":
            with self._partition_sweeper(state, data, self.n_threads) as sweeper:
                self._partition = sweeper
                try:
                    yield
                finally:
                    self._partition = None
        elif self.scheme == "adlda":
            with super().session(state, data):
                yield
        else:
            yield

    def sharded_step(self, state: Any, data: Any) -> dict[str, float]:
        """One sweep of the shards (a session is opened for a lone call)."""
        if self.scheme == "adlda":
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
        if self.scheme == "adlda":
            super().sync(state)

    @property
    def client_arg(self) -> Any:
        """What the Dask executor was given (a client, an address or None: the current
        client), for the ShardSet counts the workers make outside the shards' rounds."""
        return getattr(self.executor, "client_arg", None)


class CollapsedGibbsLDA(ShardedTokenSampler):
    """LDA by collapsed Gibbs (a :class:`ShardedTokenSampler`).

    Parameters
    ----------
    n_topics : K
    alpha : float64 (K,) or (D, K) Dirichlet prior of theta (per document when 2-D)
    beta : symmetric Dirichlet prior of the topics
    scheme : ``"exact"`` (the sequential sampler), ``"adlda"`` (AD-LDA over ``n_shards``
        document shards) or ``"partition"`` (document shards x vocabulary blocks on
        threads, :mod:`topiclink.topics.partition`)
    n_shards : document shards of AD-LDA (each its own stream); with a
        :class:`ShardTokenData` (a ShardSet on disk) it must equal the ShardSet's number
        of shards and the executor must be a Dask one: the workers read the shard files,
        ``init`` / ``check_values`` count nwk on the workers (one pass over the files
        each), the driver holds z, the counts and the offsets only
    executor : where AD-LDA's shards run: a :class:`~topiclink.execution.DaskExecutor`
        (borrowed), or None: this process on ``n_threads`` threads (never changes the
        chain)
    n_threads : threads of this process running the shards (never changes the chain)
    sampler : ``"gibbs"`` (the exact collapsed conditional, O(K) per token), ``"mh"``
        (exact Metropolis-Hastings steps with O(1) proposals per token,
        :mod:`topiclink.topics.kernels.lda_mh`) or ``"warp"`` (the same proposals in
        WarpLDA's word-then-document order, :mod:`topiclink.topics.kernels.lda_warp`;
        a prior alpha shared by all documents; also with ``scheme="partition"``,
        :mod:`topiclink.topics.warp_partition`); ``"mh"`` sequential only
    n_mh : Metropolis-Hastings steps per token (``"mh"``), per token and phase (``"warp"``);
        None: :data:`MH_STEPS` of the sampler
    init : ``"random"`` (uniform topics) or ``"spectral"`` (:func:`spectral_start`)
    """

    name = "LDA"
    state_class = LDAState

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float,
                 scheme: str = "exact", n_shards: int = 1,
                 executor: Executor | None = None, n_threads: int = 1,
                 sampler: str = "gibbs", n_mh: int | None = None,
                 init: str = "random") -> None:
        self.init_kind = init
        if scheme not in ("exact", *SHARDED):
            raise ValueError(f"scheme must be 'exact', 'adlda' or 'partition', got {scheme!r}")
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {', '.join(map(repr, SAMPLERS))}, got "
                             f"{sampler!r}")
        if sampler != "gibbs" and scheme not in SCHEMES_OF_SAMPLER[sampler]:
            raise ValueError(f"sampler={sampler!r} runs with scheme "
                             f"{' or '.join(map(repr, SCHEMES_OF_SAMPLER[sampler]))}, "
                             f"not {scheme!r}")
        if sampler == "warp" and np.ndim(alpha) == 2 and np.shape(alpha)[0] > 1:
            raise ValueError("sampler='warp' needs one prior alpha for all documents: use "
                             "sampler='mh' or 'gibbs' with a per-document prior")
        n_mh = MH_STEPS.get(sampler, 1) if n_mh is None else n_mh
        if int(n_mh) < 1:
            raise ValueError(f"n_mh must be >= 1, got {n_mh}")
        self.sampler = sampler
        self.n_mh = int(n_mh)
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = float(beta)
        self.scheme = scheme
        super().__init__(n_shards if scheme in SHARDED else 1, executor, n_threads)

    def fingerprint(self, data: TokenData | ShardTokenData) -> str:
        return data.fingerprint()

    def check_data(self, data: TokenData | ShardTokenData) -> None:
        """A ShardSet is swept by Dask workers over its own shards: one-line ValueError
        unless AD-LDA runs on a Dask executor with ``n_shards`` equal to the ShardSet's."""
        if isinstance(data, ShardTokenData):
            if self.scheme != "adlda" or self.executor is None or not self.executor.ships_data:
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
        z, ndk, nwk, nk = init_topics(data, self.n_topics, init_rng, self.client_arg,
                                      init=self.init_kind)
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
                and np.array_equal(word_topic_counts(data.shards, z, K, self.client_arg),
                                   state.nwk)):
            raise ValueError("state: the topic counts do not match the topic assignments")

    def token_data(self, data: TokenData | ShardTokenData) -> TokenData | ShardTokenData:
        return data

    def adlda_alpha(self, state: LDAState, data: TokenData | ShardTokenData) -> np.ndarray:
        return self.alpha

    def attach(self, state: LDAState, data: TokenData | ShardTokenData) -> None:
        """The Metropolis-Hastings kernels' :class:`TokenIndex` (built once per run)."""
        if self.sampler != "gibbs":
            self.token_index(state, data)

    def token_index(self, state: LDAState, data: TokenData) -> TokenIndex:
        """The state's :class:`TokenIndex` for ``data``, built where it has none (or one
        of other data or of a replaced z)."""
        ws = state.workspace
        if isinstance(ws, TokenIndex) and ws.fits(state, data):
            return ws
        if self.sampler == "warp":
            ptr, pos, slot, docs_w = lda_warp.word_order(data.words, data.docs, data.n_words)
            ws = TokenIndex(data, state.z, ptr, pos, slot, docs_w, state.z[pos])
        else:
            ptr, pos = lda_mh.word_index(data.words, data.n_words)
            ws = TokenIndex(data, state.z, ptr, pos)
        state.workspace = ws
        return ws

    @contextlib.contextmanager
    def session(self, state: LDAState, data: TokenData | ShardTokenData) -> Iterator[None]:
        """The shards' run (:class:`ShardedTokenSampler`)."""
        if self.scheme in SHARDED:
            self.check_data(data)
        with super().session(state, data):
            yield

    def step(self, state: LDAState, data: TokenData) -> dict[str, float]:
        if self.scheme in SHARDED:
            return self.sharded_step(state, data)
        if self.sampler == "gibbs":
            kernels.sweep(data.words, data.offsets, state.z, state.ndk, state.nwk, state.nk,
                          self.alpha, self.beta, state.kernel_rng[0])
            return {}
        ix = self.token_index(state, data)
        if self.sampler == "mh":
            lda_mh.sweep_mh(data.words, data.offsets, state.z, state.ndk, state.nwk,
                            state.nk, self.alpha, self.beta, state.kernel_rng[0], ix.ptr,
                            ix.pos, self.n_mh)
        else:
            lda_warp.sweep_warp(data.words, data.offsets, state.z, ix.zw, state.ndk,
                                state.nwk, state.nk,
                                np.ascontiguousarray(np.reshape(self.alpha, -1)[
                                    :self.n_topics], dtype=np.float64),
                                self.beta, state.kernel_rng[0], ix.ptr, ix.pos, ix.slot,
                                ix.docs_w, self.n_mh)
        return {}

    def objective(self, state: LDAState, data: TokenData) -> float:
        """Collapsed log p(w, z) per token."""
        self.sync(state, ("ndk",))
        return kernels.log_joint(state.ndk, state.nwk, state.nk, self.alpha,
                                 self.beta) / data.n_tokens
