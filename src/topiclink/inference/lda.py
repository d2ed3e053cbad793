"""Collapsed Gibbs sampling for LDA as an engine algorithm (state + step).

Blei, Ng & Jordan (2003) model; Griffiths & Steyvers (2004) collapsed sampler, eq. 5:

    p(z_n = k | z^-n, w) ∝ (C_dk^-n + alpha_dk) (C_kw^-n + beta) / (C_k^-n + V beta)

The token kernel (:mod:`topiclink.kernels.lda`) is the template the relational and
supervised samplers extend.  ``parallel="adlda"`` runs approximate distributed LDA
(Newman et al. 2009) over ``n_shards`` fixed document shards, each with its own stream:
a different chain from the exact sampler, fixed by the seed and the shard count; the
threads that run the shards never change it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.inference.chunked import ChunkedSweeper
from topiclink.inference.engine import Algorithm, State, check_topic_counts, fingerprint
from topiclink.kernels import lda as kernels
from topiclink.random import kernel_state, spawn

__all__ = ["TokenData", "LDAState", "CollapsedGibbsLDA"]


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


class CollapsedGibbsLDA(Algorithm):
    """LDA by collapsed Gibbs.

    Parameters
    ----------
    n_topics : K
    alpha : float64 (K,) or (D, K) Dirichlet prior of theta (per document when 2-D)
    beta : symmetric Dirichlet prior of the topics
    parallel : None (the exact sequential sampler) or ``"adlda"``
    n_shards : document shards of AD-LDA (each its own stream)
    n_threads : threads running the shards (never changes the chain)
    """

    name = "LDA"
    state_class = LDAState

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float,
                 parallel: str | None = None, n_shards: int = 1, n_threads: int = 1) -> None:
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = float(beta)
        self.parallel = parallel
        self.n_shards = n_shards if parallel == "adlda" else 1
        self.n_threads = n_threads
        self._sweeper: ChunkedSweeper | None = None

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
        if self.parallel != "adlda":
            yield
            return
        with ChunkedSweeper(data.offsets, state.kernel_rng, self.n_threads) as sweeper:
            self._sweeper = sweeper
            try:
                yield
            finally:
                self._sweeper = None

    def step(self, state: LDAState, data: TokenData) -> dict[str, float]:
        if self.parallel == "adlda":
            sweeper = self._sweeper or ChunkedSweeper(data.offsets, state.kernel_rng, 1)
            sweeper.sweep(data.words, data.offsets, state.z, state.ndk, state.nwk, state.nk,
                          self.alpha, self.beta)
        else:
            kernels.sweep(data.words, data.offsets, state.z, state.ndk, state.nwk, state.nk,
                          self.alpha, self.beta, state.kernel_rng[0])
        return {}

    def objective(self, state: LDAState, data: TokenData) -> float:
        """Collapsed log p(w, z) per token."""
        return kernels.log_joint(state.ndk, state.nwk, state.nk, self.alpha,
                                 self.beta) / data.n_tokens
