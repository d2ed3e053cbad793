"""Batch variational Bayes for LDA as an engine algorithm (Blei, Ng & Jordan 2003, with
Dirichlet topics q(beta_k) = Dir(lambda_k)).

The word part of batch LMV (:mod:`topiclink.families.lmv.algorithm`, Tan, Chan & Zheng 2016,
Algorithm 1 steps 2-4) without the pairs: one iteration is

1. phi and gamma of every document (:func:`topiclink.topics.kernels.word_e_step.word_e_step` with a
   zero citation offset), warm-started from the previous gamma;
2. lambda = eta + word statistics.

Each step is an exact coordinate maximisation of the ELBO, which therefore never
decreases; :func:`lda_bound` is the ELBO (shared with :class:`~topiclink.families.lmv.algorithm.
BatchLMV`, whose bound is this plus the pairs' and the blockmodel's terms).  The
documents are processed in fixed blocks, each accumulating its own word statistics that
are summed in block order, so the result never depends on the number of threads.
This is the LDA of the "LDA + Regression" baseline
(:mod:`topiclink.families.lda_regression.estimator`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln

from topiclink.execution import run_blocks_in_order
from topiclink.inference.engine import Algorithm, State, fingerprint
from topiclink.topics.kernels.word_e_step import word_e_step
from topiclink.topics.variational import expected_log_dirichlet, seeded_topic_stats

__all__ = ["LDAData", "VarLDAState", "BatchVarLDA", "lda_bound"]

#: the documents are split into at most this many fixed blocks (one word-statistics
#: buffer each); fixed, so that the sums never depend on the thread count
_N_BLOCKS = 16


def lda_bound(gamma: np.ndarray, lam: np.ndarray, word_stats: np.ndarray,
              word_terms: np.ndarray, alpha: float, eta: float, elog_theta: np.ndarray,
              elog_beta: np.ndarray) -> float:
    """The LDA terms of the ELBO: words + q(theta) part + q(beta) part.

    ``words = sum_d word_terms_d + sum_kw S_kw E log beta_kw`` with ``S = word_stats.T``
    (``word_terms`` from :func:`~topiclink.topics.kernels.word_e_step.word_e_step`), and for theta
    (symmetric Dir(alpha), K components) and beta (symmetric Dir(eta), V components) the
    usual ``E log p - E log q`` of a Dirichlet.  ``elog_theta`` / ``elog_beta`` are
    :func:`~topiclink.families.lmv.algorithm.expected_log_dirichlet` of gamma / lambda (callers
    that need them too pass theirs).  Summed as ``words + theta + topics``.
    """
    K = gamma.shape[1]
    V = lam.shape[1]
    words = word_terms.sum() + np.sum(word_stats.T * elog_beta)
    theta = np.sum(gammaln(K * alpha) - K * gammaln(alpha)
                   + ((alpha - gamma) * elog_theta).sum(axis=1)
                   - gammaln(gamma.sum(axis=1)) + gammaln(gamma).sum(axis=1))
    topics = np.sum(gammaln(V * eta) - V * gammaln(eta)
                    + ((eta - lam) * elog_beta).sum(axis=1)
                    - gammaln(lam.sum(axis=1)) + gammaln(lam).sum(axis=1))
    return words + theta + topics


@dataclass
class LDAData:
    """The documents: a (D, V) CSR of float64 counts with sorted indices."""

    counts: sp.csr_matrix

    @classmethod
    def build(cls, counts: sp.csr_matrix) -> LDAData:
        counts = sp.csr_matrix(counts, dtype=np.float64)
        counts.sort_indices()
        return cls(counts)

    @property
    def n_docs(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_tokens(self) -> float:
        return float(self.counts.data.sum())

    def fingerprint(self) -> str:
        return fingerprint(self.counts.indptr, self.counts.indices, self.counts.data)


@dataclass(kw_only=True)
class VarLDAState(State):
    """Everything batch variational LDA needs to continue."""

    gamma: np.ndarray            # (D, K) q(theta_d) = Dir(gamma_d)
    lam: np.ndarray              # (K, V) q(beta_k) = Dir(lambda_k)
    word_stats: np.ndarray       # (V, K) sum c phi
    word_terms: np.ndarray       # (D,) sum c phi (E log theta - log phi)
    bound: float = float("nan")


class BatchVarLDA(Algorithm):
    """Batch variational-Bayes LDA; see the module docstring.

    ``n_threads`` threads run the fixed document blocks of each step, merged in block
    order (never changes the result); the algorithm keeps no executor between steps.
    """

    name = "VB-LDA"
    state_class = VarLDAState

    def __init__(self, n_topics: int, *, alpha: float, eta: float, n_threads: int = 1,
                 e_step_iter: int = 50, e_step_tol: float = 1e-6) -> None:
        self.n_topics = int(n_topics)
        self.alpha = float(alpha)
        self.eta = float(eta)
        self.n_threads = max(1, int(n_threads))
        self.e_step_iter, self.e_step_tol = int(e_step_iter), float(e_step_tol)
        self.init_topics: np.ndarray | None = None   # (K, V) statistics to start from

    def fingerprint(self, data: LDAData) -> str:
        return data.fingerprint()

    # ------------------------------------------------------------------ set-up
    def init(self, data: LDAData, rng: np.random.Generator) -> VarLDAState:
        """LDA-C's seeded topics (as :class:`~topiclink.families.lmv.algorithm.BatchLMV`): lambda =
        eta + the counts of K random documents + 1 (or eta + ``init_topics``, given
        statistics); gamma = alpha + N_d / K."""
        K, (D, V) = self.n_topics, data.counts.shape
        if self.init_topics is None:
            lam = self.eta + seeded_topic_stats(data.counts, K, rng) + 1.0
        else:
            lam = self.eta + np.array(self.init_topics, dtype=np.float64)
        doc_len = np.asarray(data.counts.sum(axis=1)).ravel()
        return VarLDAState(gamma=np.full((D, K), self.alpha) + doc_len[:, None] / K,
                           lam=lam, word_stats=np.zeros((V, K)),
                           word_terms=np.zeros(D), data_fingerprint=self.fingerprint(data))

    def check_values(self, state: VarLDAState, data: LDAData) -> None:
        for name in ("gamma", "lam"):
            if np.any(getattr(state, name) <= 0):
                raise ValueError(f"state: {name} must be > 0")
        if np.any(state.word_stats < 0):
            raise ValueError("state: word_stats must be >= 0")

    # ------------------------------------------------------------------ one iteration
    def step(self, state: VarLDAState, data: LDAData) -> dict[str, float]:
        K, D = self.n_topics, data.n_docs
        counts = data.counts
        elog_beta_wk = np.ascontiguousarray(expected_log_dirichlet(state.lam).T)
        alpha = np.full(K, self.alpha)
        edges = np.linspace(0, D, min(_N_BLOCKS, D) + 1).round().astype(np.int64)
        blocks = [(int(lo), int(hi)) for lo, hi in zip(edges[:-1], edges[1:], strict=True)
                  if hi > lo]

        def block(lo: int, hi: int) -> tuple[np.ndarray, int]:
            start, stop = counts.indptr[lo], counts.indptr[hi]
            stats = np.zeros((counts.shape[1], K))
            rounds = word_e_step((counts.indptr[lo:hi + 1] - start).astype(np.int64),
                                 counts.indices[start:stop].astype(np.int32),
                                 counts.data[start:stop], elog_beta_wk, alpha,
                                 np.zeros((hi - lo, K)), state.gamma[lo:hi], stats,
                                 state.word_terms[lo:hi], self.e_step_iter, self.e_step_tol)
            return stats, rounds

        word_stats = np.zeros((counts.shape[1], K))
        rounds = [0]

        def merge(result: tuple[np.ndarray, int]) -> None:
            np.add(word_stats, result[0], out=word_stats)   # in block order: the same sums
            rounds[0] += result[1]

        run_blocks_in_order(lambda b: block(*blocks[b]), len(blocks), self.n_threads, merge)
        rounds = rounds[0]
        state.word_stats = word_stats
        state.lam = self.eta + state.word_stats.T
        state.bound = self.bound(state, data)
        return {"e_step_rounds": rounds / D}

    # ------------------------------------------------------------------ the bound
    def bound(self, state: VarLDAState, data: LDAData) -> float:
        """The ELBO at the current state (phi at its last E-step)."""
        return float(lda_bound(state.gamma, state.lam, state.word_stats, state.word_terms,
                               self.alpha, self.eta, expected_log_dirichlet(state.gamma),
                               expected_log_dirichlet(state.lam)))

    def objective(self, state: VarLDAState, data: LDAData) -> float:
        """The ELBO per token."""
        return state.bound / data.n_tokens
