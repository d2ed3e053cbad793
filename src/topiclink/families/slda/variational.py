"""Variational EM for supervised LDA with a logistic response ("vSLDA") as an engine
algorithm (state + step).

Blei & McAuliffe, "Supervised Topic Models" (NIPS 2007), with the binary logistic
response made tractable by the Jaakkola-Jordan bound (Jaakkola & Jordan 2000), the usual
"variational logistic sLDA".  It is the variational counterpart of gSLDA
(:class:`~topiclink.families.slda.estimator.SupervisedTopicModel`, Zhu et al. 2013), whose paper
claims its Gibbs sampler trains an order of magnitude faster than a variational sLDA;
this estimator exists to measure that claim fairly (Numba E-step, O(K) per token).

Model (binary labels y_d in {0, 1}, ``ytil_d = 2 y_d - 1``)::

    theta_d ~ Dir(alpha),  z_dn ~ Cat(theta_d),  w_dn ~ Cat(beta_{z_dn}),
    p(y_d | z_d, eta) = sigmoid(ytil_d eta^T zbar_d),   zbar_d = (1/N_d) sum_n e_{z_dn},
    eta ~ N(0, nu^2 I),

with the label log-likelihood multiplied by the regularisation constant c (c = 1: plain
sLDA; c > 1 weighs each label like gSLDA's c).  No intercept (as gSLDA).

Variational EM, mean field ``q(theta_d) = Dir(gamma_d)``, ``q(z_dn) = Mult(phi_dn)``, one
Jaakkola-Jordan parameter xi_d per document.  The objective that EM increases is

    J = sum_d [ E[log p(theta_d)] + E[log p(z_d|theta_d)] - E[log q] ]
        + sum_kw (S_kw + s) log beta_kw
        + c sum_d [ log sigmoid(xi_d) + (E[x_d] - xi_d)/2 - lam(xi_d)(E[x_d^2] - xi_d^2) ]
        - ||eta||^2 / (2 nu^2),

``S_kw = sum_{d,n: w_dn = w} phi_dnk``, ``x_d = ytil_d eta^T zbar_d``,
``lam(xi) = tanh(xi/2)/(4 xi)``; ``s sum log beta`` is the log density of a Dirichlet(1 + s)
prior, so the topics are its MAP (the pseudo-count ``s = topic_word_prior``, as lda-c's
smoothing).  E-step (per document, to convergence or ``e_step_iter`` sweeps, warm-started
from the previous phi): exact coordinate ascent, equations (1)-(3) of
:mod:`topiclink.families.slda.kernels_variational`.  M-step:

    beta_kw = (S_kw + s) / (S_k + V s),
    (2 c A + I / nu^2) eta = (c / 2) b,                                               (4)
    A = sum_d lam(xi_d) E[zbar_d zbar_d^T],   b = sum_d ytil_d phibar_d,
    E[zbar_d zbar_d^T] = (1/N_d^2)(S_d S_d^T - sum_n phi_dn phi_dn^T + diag(S_d)),

(4) maximising the concave quadratic in eta.  Each step maximises J in its block, so J
never decreases; :meth:`VariationalSLDAEM.objective` is J / n_tokens (the estimator's
``trace_["log_likelihood"]``).  alpha is fixed (no Newton update of alpha, unlike
lda-c's "estimate" mode).

One engine iteration (:meth:`VariationalSLDAEM.step`) is one E-step (warm-started from
the per-token phi of the state) and the M-step of the topics and eta.  Everything needed
to continue is in :class:`VarSLDAState`; no random number is drawn after ``init`` (the
seeded topics).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.families.slda import kernels_variational as kernels
from topiclink.inference.engine import Algorithm, State, fingerprint
from topiclink.topics.variational import seeded_topic_stats, topic_m_step

__all__ = ["VarSLDAData", "VarSLDAState", "VariationalSLDAEM", "jj_lambda",
           "label_statistics", "label_m_step", "label_objective"]


def jj_lambda(xi: np.ndarray) -> np.ndarray:
    """lam(xi) = tanh(xi/2) / (4 xi) elementwise (xi >= 0), 1/8 - xi^2/96 near 0."""
    xi = np.asarray(xi, dtype=np.float64)
    small = xi < 1e-4
    safe = np.where(small, 1.0, xi)
    return np.where(small, 0.125 - xi * xi / 96.0, np.tanh(0.5 * safe) / (4.0 * safe))


def label_statistics(phi: np.ndarray, offsets: np.ndarray, phibar: np.ndarray,
                     xi: np.ndarray, ytil: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A = sum_d lam(xi_d) E[zbar_d zbar_d^T]`` (K, K) and ``b = sum_d ytil_d phibar_d``.

    ``E[zbar zbar^T] = (1/N^2)(S S^T - sum_n phi_n phi_n^T + diag(S))``, ``S = N phibar``,
    computed with three matrix products over all documents.
    """
    lengths = np.diff(offsets).astype(np.float64)
    lam = jj_lambda(xi)
    w_doc = lam / np.maximum(lengths, 1.0) ** 2
    w_tok = np.repeat(w_doc, np.diff(offsets))
    A = (phibar * lam[:, None]).T @ phibar
    A -= (phi * w_tok[:, None]).T @ phi
    A[np.diag_indices_from(A)] += (lam / np.maximum(lengths, 1.0)) @ phibar
    A = 0.5 * (A + A.T)
    return A, ytil @ phibar


def label_m_step(A: np.ndarray, b: np.ndarray, c: float, prior_var: float) -> np.ndarray:
    """eta maximising ``c (eta^T b / 2 - eta^T A eta) - ||eta||^2 / (2 nu^2)``: equation
    (4), ``(2 c A + I / nu^2) eta = c b / 2`` (Cholesky; A is positive semi-definite)."""
    P = 2.0 * c * A
    P[np.diag_indices_from(P)] += 1.0 / prior_var
    return scipy.linalg.solve(P, 0.5 * c * b, assume_a="pos")


def label_objective(A: np.ndarray, b: np.ndarray, xi: np.ndarray, eta: np.ndarray,
                    c: float, prior_var: float) -> tuple[float, float]:
    """The eta/xi-dependent part of J: ``(c * bounded label log-likelihood, log prior)``.

    Label part ``c sum_d [log sigmoid(xi_d) - xi_d / 2 + lam(xi_d) xi_d^2] + c (eta^T b / 2
    - eta^T A eta)`` (the Jaakkola-Jordan bound summed over documents); prior part
    ``-||eta||^2 / (2 nu^2)``.
    """
    xi = np.asarray(xi, dtype=np.float64)
    per_doc = -np.logaddexp(0.0, -xi) - 0.5 * xi + jj_lambda(xi) * xi * xi
    label = c * (float(per_doc.sum()) + 0.5 * float(eta @ b) - float(eta @ A @ eta))
    return label, -float(eta @ eta) / (2.0 * prior_var)


@dataclass
class VarSLDAData:
    """Documents as tokens sorted by document, their counts, and the labels in {-1, +1}."""

    counts: sp.csr_matrix   # (D, V) document-term counts (the seeded initialisation)
    offsets: np.ndarray     # int64 (D + 1,)
    words: np.ndarray       # int32 (N,)
    ytil: np.ndarray        # float64 (D,), 2 y - 1

    @classmethod
    def from_corpus(cls, corpus: Corpus, y: np.ndarray) -> VarSLDAData:
        """``y`` in {0, 1} per document (1: the positive class)."""
        tok = corpus.tokens()
        return cls(counts=corpus.counts, offsets=tok.offsets.astype(np.int64),
                   words=tok.words.astype(np.int32),
                   ytil=2.0 * np.asarray(y).astype(np.float64) - 1.0)

    @property
    def n_docs(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def n_words(self) -> int:
        return int(self.counts.shape[1])

    @property
    def n_tokens(self) -> int:
        return int(self.words.size)

    @property
    def doc_len(self) -> np.ndarray:
        return np.diff(self.offsets).astype(np.float64)

    def fingerprint(self) -> str:
        return fingerprint(self.words, self.offsets, self.ytil, np.array([self.n_words]))


@dataclass(kw_only=True)
class VarSLDAState(State):
    """The variational parameters and the current M-step estimates.

    ``phi`` (per token) warm-starts the next E-step with ``gamma``; ``log_topics`` and
    ``eta`` are what it uses; ``phibar``, ``xi``, ``stats`` (the topic-word statistics of
    the last E-step), ``components`` and ``J`` (the objective after the last iteration)
    complete the estimates.
    """

    phi: np.ndarray          # (N, K) q(z_dn)
    gamma: np.ndarray        # (D, K) q(theta_d) = Dir(gamma_d)
    phibar: np.ndarray       # (D, K) E_q[zbar_d]
    xi: np.ndarray           # (D,) Jaakkola-Jordan parameters
    stats: np.ndarray        # (V, K) S_wk = sum_{d,n: w_dn = w} phi_dnk
    components: np.ndarray   # (K, V) topics beta
    log_topics: np.ndarray   # (K, V) log beta
    eta: np.ndarray          # (K,) label weights
    J: float = float("nan")


class VariationalSLDAEM(Algorithm):
    """Variational EM for binary logistic sLDA (Jaakkola-Jordan bound); module docstring.

    Parameters
    ----------
    n_topics : K
    alpha : float64 (K,) Dirichlet prior of theta (fixed)
    topic_word_prior : s, the pseudo-count of the topic M-step
    c : weight of the label log-likelihood
    weight_prior_var : nu^2 of the prior eta ~ N(0, nu^2 I)
    e_step_iter, e_step_tol : per-document E-step sweeps and stopping tolerance
    """

    name = "vSLDA"
    state_class = VarSLDAState

    def __init__(self, n_topics: int, alpha: np.ndarray, topic_word_prior: float, *,
                 c: float, weight_prior_var: float, e_step_iter: int = 20,
                 e_step_tol: float = 1e-4) -> None:
        self.n_topics = int(n_topics)
        self.alpha = alpha
        self.s = float(topic_word_prior)
        self.c = float(c)
        self.weight_prior_var = float(weight_prior_var)
        self.e_step_iter = int(e_step_iter)
        self.e_step_tol = float(e_step_tol)

    def fingerprint(self, data: VarSLDAData) -> str:
        return data.fingerprint()

    def init(self, data: VarSLDAData, rng: np.random.Generator) -> VarSLDAState:
        """Uniform phi (eta = 0 before the first M-step, so the first E-step sees no
        label), topics seeded from the counts of random documents plus one pseudo-count
        per word."""
        K, D = self.n_topics, data.n_docs
        components, log_topics, _ = topic_m_step(seeded_topic_stats(data.counts, K, rng),
                                                 1.0)
        return VarSLDAState(phi=np.full((data.n_tokens, K), 1.0 / K),
                            gamma=self.alpha + data.doc_len[:, None] / K,
                            phibar=np.full((D, K), 1.0 / K), xi=np.zeros(D),
                            stats=np.zeros((data.n_words, K)), components=components,
                            log_topics=log_topics, eta=np.zeros(K),
                            data_fingerprint=self.fingerprint(data))

    def check_values(self, state, data) -> None:  # noqa: ANN001
        if np.any(state.gamma <= 0) or np.any(state.phibar < 0):
            raise ValueError("state: gamma must be > 0 and phibar >= 0")

    def step(self, state: VarSLDAState, data: VarSLDAData) -> dict[str, float]:
        """One E-step (every document, warm-started) and the M-step (topics, eta)."""
        c, nu2, D = self.c, self.weight_prior_var, data.n_docs
        t0 = time.perf_counter()
        state.stats[:] = 0.0
        doc_terms = np.zeros(D)
        sweeps = kernels.e_step(data.offsets, data.words,
                                np.ascontiguousarray(state.log_topics.T), state.eta, data.ytil,
                                c, self.alpha, state.phi, state.gamma, state.phibar, state.xi,
                                state.stats, doc_terms, self.e_step_iter, self.e_step_tol)
        t1 = time.perf_counter()
        components, log_topics, word_term = topic_m_step(state.stats.T, self.s)
        A, b = label_statistics(state.phi, data.offsets, state.phibar, state.xi, data.ytil)
        eta = label_m_step(A, b, c, nu2)
        label, prior = label_objective(A, b, state.xi, eta, c, nu2)
        t2 = time.perf_counter()
        state.components, state.log_topics, state.eta = components, log_topics, eta
        state.J = float(doc_terms.sum()) + word_term + label + prior
        return {"elbo": state.J, "label_bound": label / (c * D),
                "train_accuracy": float(np.mean((state.phibar @ eta > 0) == (data.ytil > 0))),
                "e_step_sweeps": sweeps / D, "seconds_e_step": t1 - t0,
                "seconds_m_step": t2 - t1}

    def objective(self, state: VarSLDAState, data: VarSLDAData) -> float:
        """J per token after the last iteration."""
        return state.J / data.n_tokens
