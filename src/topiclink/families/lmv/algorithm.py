"""Batch variational Bayes for LMV (LDA + mixed-membership blockmodel + visibility) as an
engine algorithm: Tan, Chan & Zheng (2016), Algorithm 1 (``docs/design/lmv.md``).

One iteration (each block an ascent step on the bound L*):

1. every ordered pair's (kappa, nu), streamed in fixed blocks of cited documents; only the
   sufficient statistics are kept (:mod:`topiclink.families.lmv.pairs`): per-document
   kappa/nu sums, S1 (K x K, links), T (D x K x K, non-links per cited document) and the
   pairs' entropy;
2-3. phi and gamma per document (:func:`topiclink.topics.kernels.word_e_step.word_e_step`);
4. lambda = eta + word statistics;
5. the nested NCVMP loop of (a, b) and (g, h) with damped steps accepted only when L*
   increases (:mod:`topiclink.families.lmv.updates`).

``visibility=False`` is Pairwise-Link-LDA: tau fixed at 1 (E log tau = 0, taubar = 1), the
same code path.  Memory O(D K^2 + links); no D x D array.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.special import betaln, digamma

from topiclink.families.lmv.updates import (
    beta_entropy,
    blockmodel_objective,
    blockmodel_target,
    damped_step,
    visibility_objective,
    visibility_target,
)
from topiclink.inference.engine import Algorithm, State, fingerprint
from topiclink.random import spawn
from topiclink.topics.kernels.word_e_step import word_e_step
from topiclink.topics.var_lda import lda_bound
from topiclink.topics.variational import expected_log_dirichlet

__all__ = ["LMVData", "LMVState", "BatchLMV", "expected_log_dirichlet", "start_lda"]


@dataclass
class LMVData:
    """Documents and directed citations (``cites`` CSR: row d lists what d cites)."""

    counts: sp.csr_matrix          # (D, V) float64 counts
    cites: sp.csr_matrix           # (D, D) bool, row = citing document
    in_degree: np.ndarray          # (D,) links received
    time: np.ndarray | None        # (D,) publication times (LMV(t)) or None

    @classmethod
    def build(cls, counts: sp.csr_matrix, pairs: np.ndarray,
              time: np.ndarray | None = None) -> LMVData:
        D = counts.shape[0]
        cites = sp.csr_matrix((np.ones(len(pairs), bool), (pairs[:, 0], pairs[:, 1])),
                              shape=(D, D))
        cites.sort_indices()
        in_degree = np.asarray(cites.sum(axis=0)).ravel().astype(np.float64)
        counts = sp.csr_matrix(counts, dtype=np.float64)
        counts.sort_indices()
        return cls(counts, cites, in_degree, time)

    @cached_property
    def cited_by(self) -> sp.csr_matrix:
        """The links by cited document: row d' lists the documents citing d' (sorted)."""
        rev = sp.csr_matrix(self.cites.T)
        rev.sort_indices()
        return rev

    @property
    def n_docs(self) -> int:
        return int(self.counts.shape[0])

    def fingerprint(self) -> str:
        parts = [self.counts.indptr, self.counts.indices, self.counts.data,
                 self.cites.indptr, self.cites.indices]
        if self.time is not None:
            parts.append(self.time)
        return fingerprint(*parts)


@dataclass(kw_only=True)
class LMVState(State):
    """Everything batch LMV needs to continue (the pairs' q is summarised by its
    statistics; it is recomputed every iteration)."""

    gamma: np.ndarray            # (D, K) q(theta_d) = Dir(gamma_d)
    lam: np.ndarray              # (K, V) q(beta_k) = Dir(lambda_k)
    a: np.ndarray                # (K, K) q(B_ij) = Beta(a_ij, b_ij)
    b: np.ndarray
    g: np.ndarray                # (D,) q(tau_d) = Beta(g_d, h_d)
    h: np.ndarray
    pair_sums: np.ndarray        # (D, K) sum of kappa (as citing) + nu (as cited)
    S1: np.ndarray               # (K, K) links' sum of kappa nu^T
    T: np.ndarray                # (D, K, K) non-links' sum of kappa nu^T per cited doc
    pair_entropy: float = 0.0
    word_stats: np.ndarray       # (V, K) sum c phi
    word_terms: np.ndarray       # (D,) sum c phi (E log theta - log phi)
    citation_topics: np.ndarray  # (L, 2) int32 hard topic pair of each citation
    link_nu: np.ndarray          # (L, K) each citation's q(r) (zeros before the first step)
    bound: float = float("nan")


def start_lda(counts: sp.csr_matrix, n_topics: int, alpha: float, eta: float,
              rng: np.random.Generator, *, n_iter: int = 100, restarts: int = 5
              ) -> tuple[np.ndarray, np.ndarray]:
    """The fitted LDA the LMV family starts from (paper Sec. 6: LMV, PLLDA and RTM start
    from the same fitted LDA): the best of ``restarts`` collapsed Gibbs chains of
    ``n_iter`` sweeps each (highest log p(w, z)), with priors Dir(alpha), Dir(eta).

    Returns ``(ndk, nwk)`` as float64: the document-topic counts (D, K) and the
    topic-word counts (K, V) of the best chain.  ``nwk`` is what ``init_topics`` of
    :class:`~topiclink.families.lmv.estimator.VisibilityTopicModel`,
    :class:`~topiclink.families.rtm.estimator_variational.VariationalRTM` and
    :class:`~topiclink.families.lda_regression.estimator.LDARegression` take.
    """
    from topiclink.data.corpus import Corpus
    from topiclink.topics.lda import CollapsedGibbsLDA, TokenData

    K = int(n_topics)
    tokens = TokenData.from_corpus(Corpus(sp.csr_matrix(counts, dtype=np.int32)))
    lda = CollapsedGibbsLDA(K, np.full(K, float(alpha)), float(eta))
    best, best_score = None, -np.inf
    for chain_rng in spawn(rng, max(1, int(restarts))):
        chain = lda.init(tokens, chain_rng)
        for _ in range(int(n_iter)):
            lda.step(chain, tokens)
        score = lda.objective(chain, tokens)
        if score > best_score:
            best, best_score = chain, score
    assert best is not None
    return best.ndk.astype(np.float64), best.nwk.T.astype(np.float64).copy()


class BatchLMV(Algorithm):
    """Batch LMV / Pairwise-Link-LDA; see the module docstring.

    ``pair_statistics(elog_theta, vs_link, elog_tau, taubar, Bbar) -> dict`` computes
    step 1 (the streamed kernel; injected so tests can use the naive twin).

    ``start`` says where gamma starts when the topics come from the fitted LDA
    (:meth:`initial_topics`): ``"counts"``, alpha + the chain's n_dk; ``"e-step"``, LDA's
    word E-step at the chain's topics (as with ``init_topics``; the batch estimator's
    default, see :meth:`initial_topics`).
    """

    name = "LMV"
    state_class = LMVState

    def __init__(self, n_topics: int, *, alpha: float, eta: float,
                 blockmodel_prior: tuple[float, float],
                 visibility_prior: tuple[float, float], visibility: bool = True,
                 n_threads: int = 1, e_step_iter: int = 50, e_step_tol: float = 1e-6,
                 nested_iter: int = 20, nested_tol: float = 1e-6,
                 init_lda_iter: int = 100, init_restarts: int = 5,
                 start: str = "counts") -> None:
        if start not in ("counts", "e-step"):
            raise ValueError(f"start must be 'counts' or 'e-step', got {start!r}")
        self.n_topics = n_topics
        self.alpha = float(alpha)
        self.eta = float(eta)
        self.a0, self.b0 = (float(v) for v in blockmodel_prior)
        self.g0, self.h0 = (float(v) for v in visibility_prior)
        self.visibility = bool(visibility)
        self.n_threads = int(n_threads)
        self.e_step_iter, self.e_step_tol = int(e_step_iter), float(e_step_tol)
        self.nested_iter, self.nested_tol = int(nested_iter), float(nested_tol)
        self.init_lda_iter = int(init_lda_iter)
        self.init_restarts = max(1, int(init_restarts))
        self.start = start
        self.init_topics: np.ndarray | None = None   # (K, V) statistics to start from
        self.name = "LMV" if visibility else "PLLDA"

    def fingerprint(self, data: LMVData) -> str:
        return data.fingerprint()

    # ------------------------------------------------------------------ set-up
    def init(self, data: LMVData, rng: np.random.Generator) -> LMVState:
        K, (D, V) = self.n_topics, data.counts.shape
        if self.init_topics is None:
            gamma, lam = self.initial_topics(data, rng)
        else:
            gamma, lam = self.given_topics(data, self.init_topics)
        a, b = self.initial_blockmodel(data)
        state = LMVState(
            gamma=gamma, lam=lam, a=a, b=b, g=np.full(D, self.g0), h=np.full(D, self.h0),
            pair_sums=np.zeros((D, K)), S1=np.zeros((K, K)), T=np.zeros((D, K, K)),
            word_stats=np.zeros((V, K)), word_terms=np.zeros(D),
            citation_topics=np.zeros((data.cites.nnz, 2), np.int32),
            link_nu=np.zeros((data.cites.nnz, K)), data_fingerprint=self.fingerprint(data))
        return state

    def initial_topics(self, data: LMVData, rng: np.random.Generator
                       ) -> tuple[np.ndarray, np.ndarray]:
        """(gamma, lambda) from the best of ``init_restarts`` collapsed Gibbs LDA chains of
        ``init_lda_iter`` sweeps each (highest log p(w, z)): lambda = eta + n_wk, and
        gamma = alpha + n_dk (``start="counts"``) or from LDA's word E-step at those
        topics (``start="e-step"``, :meth:`given_topics`).  Why the E-step start for the
        batch fit: a chain's n_dk are one draw of hard topics, and gamma started there
        relaxes slowly, because each document's 2 (D - 1) pair terms pull its proportions
        towards where they are (the words, ~57 per Cora abstract, move them by a fraction
        N_d / (N_d + 2 D) per iteration).  On the bundled Cora (K = 9, eta = 0.5) the
        counts start still changed L* by 2.8e-5 (relative) per iteration after 34
        iterations, never reaching the paper's 1e-5 in 100; the E-step start reached it
        in 13, at a higher L* (-7.439 against -7.490 per token); with the estimator's
        defaults (K = 10, eta = 0.1) in 28, on WebKB (LINQS) in 39 (counts: not in 100).
        The slow relaxation itself remains: the 600 most connected Cora papers need 175.
        The paper starts LMV from a fitted LDA; the start matters,
        because the 2 (D - 1) pair topic draws of every document pin its proportions where
        they start (a variational LDA from seeded topics merged topics in most simulated
        data sets and LMV kept them merged; started from the true topics it recovers the
        paper's Table S1).  A single Gibbs chain also gets stuck, in about a third of the
        simulated data sets: the best of 5 found the topics in every one checked.
        """
        ndk, nwk = start_lda(data.counts, self.n_topics, self.alpha, self.eta, rng,
                             n_iter=self.init_lda_iter, restarts=self.init_restarts)
        if self.start == "e-step":
            return self.given_topics(data, nwk)
        return self.alpha + ndk, self.eta + nwk

    def given_topics(self, data: LMVData, stats: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """(gamma, lambda) from given topic-word statistics S (K, V) (``init_topics``, e.g.
        the n_wk of a fitted LDA shared with other models): lambda = eta + S, and gamma
        from LDA's word E-step (paper eq. 3.2-3.3 without the pair terms) at these topics,
        so that the documents start where that LDA puts them."""
        K, (D, V) = self.n_topics, data.counts.shape
        lam = self.eta + np.asarray(stats, dtype=np.float64)
        doc_len = np.asarray(data.counts.sum(axis=1)).ravel()
        gamma = np.full((D, K), self.alpha) + doc_len[:, None] / K
        word_e_step(data.counts.indptr.astype(np.int64), data.counts.indices.astype(np.int32),
                    data.counts.data, np.ascontiguousarray(expected_log_dirichlet(lam).T),
                    np.full(K, self.alpha), np.zeros((D, K)), gamma, np.zeros((V, K)),
                    np.zeros(D), self.e_step_iter, self.e_step_tol)
        return gamma, lam

    def initial_blockmodel(self, data: LMVData) -> tuple[np.ndarray, np.ndarray]:
        """(a, b) with mean = the network's link density / the prior mean visibility
        (capped at 0.5) and the prior's total a0 + b0: the blockmodel starts where the
        links say, not at the prior mean (typically 0.5, thousands of times too dense)."""
        D, K = data.n_docs, self.n_topics
        density = data.cites.nnz / max(D * (D - 1), 1)
        tau0 = self.g0 / (self.g0 + self.h0) if self.visibility else 1.0
        mean = float(np.clip(density / tau0, 1e-6, 0.5))
        total = self.a0 + self.b0
        return np.full((K, K), mean * total), np.full((K, K), (1 - mean) * total)

    def check_values(self, state: LMVState, data: LMVData) -> None:
        for name in ("gamma", "lam", "a", "b", "g", "h"):
            if np.any(getattr(state, name) <= 0):
                raise ValueError(f"state: {name} must be > 0")
        for name in ("pair_sums", "S1", "T", "word_stats", "link_nu"):
            if np.any(getattr(state, name) < 0):
                raise ValueError(f"state: {name} must be >= 0")
        topics = state.citation_topics
        if topics.size and (topics.min() < -1 or topics.max() >= self.n_topics):
            raise ValueError(f"state: citation topics outside [0, {self.n_topics})")

    # ------------------------------------------------------------------ expectations
    def _tau(self, state: LMVState) -> tuple[np.ndarray, np.ndarray]:
        """(taubar, E log tau) of every document (1 and 0 without visibility)."""
        if not self.visibility:
            D = state.g.size
            return np.ones(D), np.zeros(D)
        return state.g / (state.g + state.h), digamma(state.g) - digamma(state.g + state.h)

    def pair_statistics(self, state: LMVState, data: LMVData) -> dict:
        from topiclink.families.lmv.pairs import stream_pair_statistics

        taubar, elog_tau = self._tau(state)
        return stream_pair_statistics(
            expected_log_dirichlet(state.gamma), data.cites.indptr.astype(np.int64),
            data.cites.indices.astype(np.int64),
            digamma(state.a) - digamma(state.a + state.b), elog_tau, taubar,
            state.a / (state.a + state.b), time=data.time, n_threads=self.n_threads,
            link_nu=state.link_nu)

    # ------------------------------------------------------------------ one iteration
    def step(self, state: LMVState, data: LMVData) -> dict[str, float]:
        K = self.n_topics
        elog_theta = expected_log_dirichlet(state.gamma)
        stats = self.pair_statistics(state, data)
        state.pair_sums = stats["gamma_out"] + stats["gamma_in"]
        state.S1, state.T = stats["S1"], stats["T"]
        taubar, elog_tau = self._tau(state)
        Bbar = state.a / (state.a + state.b)
        elog_B = digamma(state.a) - digamma(state.a + state.b)
        log1m = np.log1p(-taubar[:, None, None] * Bbar)
        # the pairs' entropy: their total minus the parts that depend on gamma, a, b, g, h
        state.pair_entropy = float(
            stats["bound"] - np.sum(state.pair_sums * elog_theta) - np.sum(state.S1 * elog_B)
            - np.dot(data.in_degree, elog_tau) - np.sum(state.T * log1m))
        state.citation_topics = stats["citation_topics"]
        # steps 2-4: words, gamma, lambda
        state.word_stats = np.zeros((data.counts.shape[1], K))
        rounds = word_e_step(data.counts.indptr.astype(np.int64),
                             data.counts.indices.astype(np.int32), data.counts.data,
                             np.ascontiguousarray(expected_log_dirichlet(state.lam).T),
                             np.full(K, self.alpha), state.pair_sums, state.gamma,
                             state.word_stats, state.word_terms, self.e_step_iter,
                             self.e_step_tol)
        state.lam = self.eta + state.word_stats.T
        # step 5: the nested NCVMP loop
        n_nested = self._nested(state, data)
        state.bound = self.bound(state, data)
        return {"pair_rounds": float(stats.get("rounds", np.nan)),
                "e_step_rounds": rounds / data.n_docs, "nested_rounds": float(n_nested)}

    def _nested(self, state: LMVState, data: LMVData) -> int:
        taubar = self._tau(state)[0]
        for it in range(self.nested_iter):
            a_old, g_old = state.a.copy(), state.g.copy()

            def block(a: np.ndarray, b: np.ndarray, taubar: np.ndarray = taubar) -> float:
                return float(blockmodel_objective(a, b, self.a0, self.b0, state.S1, state.T,
                                                  taubar).sum())

            state.a, state.b, _, _ = damped_step(state.a, state.b, blockmodel_target(
                state.a, state.b, self.a0, self.b0, state.S1, state.T, taubar), block)
            if self.visibility:
                Bbar = state.a / (state.a + state.b)

                def vis(g: np.ndarray, h: np.ndarray, Bbar: np.ndarray = Bbar) -> float:
                    return float(visibility_objective(g, h, self.g0, self.h0, data.in_degree,
                                                      state.T, Bbar).sum())

                state.g, state.h, _, _ = damped_step(state.g, state.h, visibility_target(
                    state.g, state.h, self.g0, self.h0, data.in_degree, state.T, Bbar), vis)
                taubar = self._tau(state)[0]
            change = max(np.max(np.abs(state.a - a_old) / a_old),
                         np.max(np.abs(state.g - g_old) / g_old))
            if change < self.nested_tol:
                return it + 1
        return self.nested_iter

    # ------------------------------------------------------------------ the bound
    def bound(self, state: LMVState, data: LMVData) -> float:
        """L* at the current state (the pairs at their last q)."""
        elog_theta = expected_log_dirichlet(state.gamma)
        elog_beta = expected_log_dirichlet(state.lam)
        taubar, elog_tau = self._tau(state)
        elog_B = digamma(state.a) - digamma(state.a + state.b)
        elog_1mB = digamma(state.b) - digamma(state.a + state.b)
        Bbar = state.a / (state.a + state.b)
        lda = lda_bound(state.gamma, state.lam, state.word_stats, state.word_terms,
                        self.alpha, self.eta, elog_theta, elog_beta)
        pairs = (np.sum(state.pair_sums * elog_theta) + state.pair_entropy
                 + np.sum(state.S1 * elog_B) + np.dot(data.in_degree, elog_tau)
                 + np.sum(state.T * np.log1p(-taubar[:, None, None] * Bbar)))
        blocks = np.sum((self.a0 - 1) * elog_B + (self.b0 - 1) * elog_1mB
                        - betaln(self.a0, self.b0) + beta_entropy(state.a, state.b))
        vis = 0.0
        if self.visibility:
            elog_1mt = digamma(state.h) - digamma(state.g + state.h)
            vis = np.sum((self.g0 - 1) * elog_tau + (self.h0 - 1) * elog_1mt
                         - betaln(self.g0, self.h0) + beta_entropy(state.g, state.h))
        return float(lda + pairs + blocks + vis)

    def objective(self, state: LMVState, data: LMVData) -> float:
        """L* per token."""
        return state.bound / float(data.counts.sum())
