"""Collapsed Gibbs for the Dirichlet-multinomial mixture (one topic per document).

Nigam et al. (2000) model; Yin & Wang (2014) collapsed sampler (GSDMM), eq. 3:

    p(z_d = k | z^-d, w) ∝ (m_k^-d + alpha) prod_w prod_{j=1}^{n_dw} (n_kw^-d + beta + j - 1)
                           / prod_{i=1}^{N_d} (n_k^-d + V beta + i - 1)

The throwaway exercise of ``docs/adding-a-model.md``: a new family is one folder, here
this algorithm module, the estimator (``estimator.py``) and the protocol
(``protocol.py``), nothing else.  ``ShardedDMM`` is the
family's sharded scheme (AD-LDA style: every shard sweeps its documents against the
counts of the start of the iteration, the changes merged in shard order), declared by its
pieces for :class:`topiclink.inference.sharded.ShardedAlgorithm`, which runs it on any
executor (threads, a Dask cluster) with the same chain.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np
from scipy.special import gammaln

from topiclink.execution import balanced_chunks
from topiclink.inference.engine import Algorithm, State
from topiclink.inference.sharded import ShardedAlgorithm
from topiclink.random import spawn
from topiclink.topics.lda import TokenData


@dataclass(kw_only=True)
class DMMState(State):
    z: np.ndarray          # int64 (D,) topic of each document
    m: np.ndarray          # int64 (K,) documents per topic
    nkw: np.ndarray        # int64 (K, V) word counts per topic
    nk: np.ndarray         # int64 (K,) tokens per topic
    rng: np.random.Generator
    #: the sharded scheme's random stream per shard (empty for the exact sampler)
    shard_rngs: list[np.random.Generator] = field(default_factory=list)


def log_conditional(m: np.ndarray, nkw: np.ndarray, nk: np.ndarray, words: np.ndarray,
                    counts: np.ndarray, n_tokens: int, alpha: float, beta: float
                    ) -> np.ndarray:
    """log p(z_d = k | rest) up to a constant, from counts without document d (eq. 3)."""
    V = nkw.shape[1]
    w = nkw[:, words] + beta
    word_term = (gammaln(w + counts) - gammaln(w)).sum(axis=1)
    length_term = gammaln(nk + V * beta + n_tokens) - gammaln(nk + V * beta)
    return np.log(m + alpha) + word_term - length_term


def draw(logp: np.ndarray, rng: np.random.Generator) -> int:
    p = np.exp(logp - logp.max())
    return int(np.searchsorted(np.cumsum(p), rng.random() * p.sum()))


class CollapsedGibbsDMM(Algorithm):
    name = "DMM"
    state_class = DMMState

    def __init__(self, n_topics: int, alpha: float, beta: float) -> None:
        self.n_topics, self.alpha, self.beta = n_topics, float(alpha), float(beta)

    def fingerprint(self, data: TokenData) -> str:
        return data.fingerprint()

    def init(self, data: TokenData, rng: np.random.Generator) -> DMMState:
        K, V = self.n_topics, data.n_words
        z = rng.integers(0, K, size=data.n_docs)
        state = DMMState(z=z, m=np.bincount(z, minlength=K), nkw=np.zeros((K, V), np.int64),
                         nk=np.zeros(K, np.int64), rng=rng,
                         data_fingerprint=self.fingerprint(data))
        np.add.at(state.nkw, (z[data.docs], data.words), 1)
        state.nk[:] = state.nkw.sum(axis=1)
        return state

    def conditional(self, state: DMMState, data: TokenData, d: int) -> np.ndarray:
        """log p(z_d = k | rest) up to a constant (document d removed from the counts)."""
        lo, hi = data.offsets[d], data.offsets[d + 1]
        words, counts = np.unique(data.words[lo:hi], return_counts=True)
        return log_conditional(state.m, state.nkw, state.nk, words, counts, hi - lo,
                               self.alpha, self.beta)

    def _move(self, state: DMMState, data: TokenData, d: int, sign: int) -> None:
        lo, hi = data.offsets[d], data.offsets[d + 1]
        k = state.z[d]
        state.m[k] += sign
        np.add.at(state.nkw[k], data.words[lo:hi], sign)
        state.nk[k] += sign * (hi - lo)

    def step(self, state: DMMState, data: TokenData) -> dict[str, float]:
        for d in range(data.n_docs):
            self._move(state, data, d, -1)
            state.z[d] = draw(self.conditional(state, data, d), state.rng)
            self._move(state, data, d, +1)
        return {"occupied_topics": float(np.count_nonzero(state.m))}

    def objective(self, state: DMMState, data: TokenData) -> float:
        V, b = data.n_words, self.beta
        ll = (gammaln(state.nkw + b).sum() - self.n_topics * V * gammaln(b)
              + self.n_topics * gammaln(V * b) - gammaln(state.nk + V * b).sum())
        return float(ll) / data.n_tokens

    def averaged(self, state: DMMState, data: TokenData) -> dict[str, np.ndarray]:
        return {"nkw": state.nkw}


# ---------------------------------------------------------------------- the sharded scheme
def shard_sweep(prev: tuple, shared: tuple, arg: None, static: dict) -> tuple[tuple, tuple]:
    """One shard's sweep (pure): its documents resampled against the counts of the start
    of the iteration plus its own moves; returns ``(z, rng)`` and its count changes."""
    z, rng = prev[0].copy(), copy.deepcopy(prev[1])
    m0, nkw0, nk0, alpha, beta = shared
    m, nkw, nk = m0.copy(), nkw0.copy(), nk0.copy()
    words, offsets = static["words"], static["offsets"]
    for d in range(z.shape[0]):
        lo, hi = offsets[d], offsets[d + 1]
        w, c = np.unique(words[lo:hi], return_counts=True)
        k = z[d]
        m[k] -= 1
        nkw[k, w] -= c
        nk[k] -= hi - lo
        k = z[d] = draw(log_conditional(m, nkw, nk, w, c, hi - lo, alpha, beta), rng)
        m[k] += 1
        nkw[k, w] += c
        nk[k] += hi - lo
    return (z, rng), (m - m0, nkw - nkw0, nk - nk0)


class ShardedDMM(ShardedAlgorithm, CollapsedGibbsDMM):
    """GSDMM with the documents in ``n_shards`` shards swept at once (approximate, like
    AD-LDA: the chain depends on ``n_shards``, never on where the shards run)."""

    name = "DMM-sharded"
    local = staticmethod(shard_sweep)
    kept_key = "dmm-shards"

    def __init__(self, n_topics: int, alpha: float, beta: float, n_shards: int, *,
                 executor=None, n_threads: int = 1) -> None:
        CollapsedGibbsDMM.__init__(self, n_topics, alpha, beta)
        ShardedAlgorithm.__init__(self, n_shards, executor, n_threads)

    def init(self, data: TokenData, rng: np.random.Generator) -> DMMState:
        state = super().init(data, rng)
        state.shard_rngs = spawn(rng, self.n_shards)
        return state

    def _chunks(self, data: TokenData) -> np.ndarray:
        return balanced_chunks(np.asarray(data.offsets), self.n_shards)

    def split(self, state: DMMState, data: TokenData) -> tuple[list, list]:
        if len(state.shard_rngs) != self.n_shards:
            raise ValueError(f"the state has {len(state.shard_rngs)} shard streams, not "
                             f"n_shards={self.n_shards}")
        chunks, states, statics = self._chunks(data), [], []
        for s in range(self.n_shards):
            d0, d1 = int(chunks[s]), int(chunks[s + 1])
            lo, hi = int(data.offsets[d0]), int(data.offsets[d1])
            states.append((state.z[d0:d1].copy(), copy.deepcopy(state.shard_rngs[s])))
            statics.append({"words": np.asarray(data.words[lo:hi]),
                            "offsets": np.asarray(data.offsets[d0:d1 + 1]) - lo})
        return states, statics

    def shared(self, state: DMMState, data: TokenData) -> tuple:
        return (state.m.copy(), state.nkw.copy(), state.nk.copy(), self.alpha, self.beta)

    def merge(self, state: DMMState, data: TokenData, reports: list) -> dict[str, float]:
        for dm, dnkw, dnk in reports:            # in shard order
            state.m += dm
            state.nkw += dnkw
            state.nk += dnk
        return {"occupied_topics": float(np.count_nonzero(state.m))}

    def write_back(self, state: DMMState, data: TokenData, shard_states: list) -> None:
        chunks = self._chunks(data)
        for s, (z, rng) in enumerate(shard_states):
            state.z[int(chunks[s]):int(chunks[s + 1])] = z
            state.shard_rngs[s] = copy.deepcopy(rng)
