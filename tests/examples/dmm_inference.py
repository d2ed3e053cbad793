"""Collapsed Gibbs for the Dirichlet-multinomial mixture (one topic per document).

Nigam et al. (2000) model; Yin & Wang (2014) collapsed sampler (GSDMM), eq. 3:

    p(z_d = k | z^-d, w) ∝ (m_k^-d + alpha) prod_w prod_{j=1}^{n_dw} (n_kw^-d + beta + j - 1)
                           / prod_{i=1}^{N_d} (n_k^-d + V beta + i - 1)

The throwaway exercise of ``docs/adding-a-model.md``: a new family is this inference
module plus one estimator module (``dmm_model.py``), nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from topiclink.inference.engine import Algorithm, State
from topiclink.inference.lda import TokenData


@dataclass(kw_only=True)
class DMMState(State):
    z: np.ndarray          # int64 (D,) topic of each document
    m: np.ndarray          # int64 (K,) documents per topic
    nkw: np.ndarray        # int64 (K, V) word counts per topic
    nk: np.ndarray         # int64 (K,) tokens per topic
    rng: np.random.Generator


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
        V, N = data.n_words, hi - lo
        nkw = state.nkw[:, words] + self.beta
        word_term = (gammaln(nkw + counts) - gammaln(nkw)).sum(axis=1)
        length_term = gammaln(state.nk + V * self.beta + N) - gammaln(state.nk + V * self.beta)
        return np.log(state.m + self.alpha) + word_term - length_term

    def _move(self, state: DMMState, data: TokenData, d: int, sign: int) -> None:
        lo, hi = data.offsets[d], data.offsets[d + 1]
        k = state.z[d]
        state.m[k] += sign
        np.add.at(state.nkw[k], data.words[lo:hi], sign)
        state.nk[k] += sign * (hi - lo)

    def step(self, state: DMMState, data: TokenData) -> dict[str, float]:
        for d in range(data.n_docs):
            self._move(state, data, d, -1)
            logp = self.conditional(state, data, d)
            p = np.exp(logp - logp.max())
            state.z[d] = int(np.searchsorted(np.cumsum(p), state.rng.random() * p.sum()))
            self._move(state, data, d, +1)
        return {"occupied_topics": float(np.count_nonzero(state.m))}

    def objective(self, state: DMMState, data: TokenData) -> float:
        V, b = data.n_words, self.beta
        ll = (gammaln(state.nkw + b).sum() - self.n_topics * V * gammaln(b)
              + self.n_topics * gammaln(V * b) - gammaln(state.nk + V * b).sum())
        return float(ll) / data.n_tokens

    def averaged(self, state: DMMState, data: TokenData) -> dict[str, np.ndarray]:
        return {"nkw": state.nkw}
