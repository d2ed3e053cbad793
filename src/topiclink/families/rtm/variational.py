"""Variational EM for the relational topic model (Chang & Blei 2009), "Var-RTM", as an
engine algorithm (state + step).

Chang & Blei, "Relational Topic Models for Document Networks", AISTATS 2009 (and Ann.
Appl. Stat. 2010).  LDA for the words; for every observed link between documents d and
d' the exponential link function

    psi_e(y_dd' = 1) = exp(eta^T (zbar_d o zbar_d') + nu),       zbar_d = (1/N_d) sum_n z_dn

(``o`` the elementwise product).  Only the exponential link is implemented.  Only positive
links are observed; the absence of links is handled by the paper's regularisation with
``rho`` pseudo non-links (below).  This is the "Var-RTM" baseline of the gRTM paper
(``docs/design/grtm.md``) and the "RTM (exponential link)" baseline of the LMV paper
(``docs/design/lmv.md``).

Variational EM, mean field ``q(theta_d) = Dir(gamma_d)``, ``q(z_dn) = Mult(phi_dn)``
(kernels in :mod:`topiclink.topics.kernels.variational`).  Because ``E_q[log psi_e] = eta^T
(phibar_d o phibar_d') + nu`` exactly (z_d and z_d' are independent under q), the bound
needs no approximation for the exponential link, and its gradient in ``phi_dn`` is
``(eta o phibar_d') / N_d`` per neighbour d'.

M-step for (eta, nu)
--------------------
With ``pibar = sum_{linked pairs} phibar_d o phibar_d'`` (K-vector) and M links, the links
contribute ``eta^T pibar + M nu``.  Write ``a_k = eta_k + nu`` and ``a_0 = nu``; since
``1^T (phibar_d o phibar_d') <= 1`` the link term is ``sum_k pibar_k a_k +
(M - 1^T pibar) a_0``: K + 1 "categories" with soft counts ``pibar_k`` and
``pibar_0 = M - 1^T pibar``.  The regulariser adds rho pseudo non-links whose topic
proportions are uniform, ``E[zbar o zbar'] = 1/K^2`` per topic, i.e. weights
``pi0_k = 1/K^2`` and ``pi0_0 = 1 - K/K^2 = (K-1)/K``.  ``log(1 - exp(x))`` is concave,
so by Jensen ``log(1 - exp(sum_c pi0_c a_c)) >= sum_c pi0_c log(1 - exp(a_c))``; the
(eta, nu) objective maximised is therefore

    F(eta, nu) = sum_c [ pibar_c a_c + rho pi0_c log(1 - exp(a_c)) ],   c = 0..K,

separable in the ``a_c``, each a Bernoulli log-likelihood with ``pibar_c`` successes and
``rho pi0_c`` failures, hence ``exp(a_c) = pibar_c / (pibar_c + rho pi0_c)``:

    nu  = log(M - 1^T pibar) - log(rho (K-1)/K + M - 1^T pibar)
    eta = log(pibar) - log(pibar + rho/K^2 1) - 1 nu

— Chang & Blei's closed form (Sec. 3).  All ``a_c < 0``, so ``psi_e <= 1`` for any pair
of topic proportions.  The objective that EM increases monotonically is

    J = ELBO(words, links) + rho sum_c pi0_c log(1 - exp(a_c)) + log p(beta),

``log p(beta) = s sum_kw log beta_kw`` for ``topic_inference="map"`` (pseudo-count
``s = topic_word_prior``: beta_kw ∝ S_kw + s is the MAP under Dirichlet(1 + s)), and for
``topic_inference="variational"`` the ELBO also covers ``q(beta_k) = Dir(lambda_k)``,
``lambda_kw = s + S_kw`` (LMV paper, Algorithm 1 step 4).  ``S_kw = sum_d c_dw phi_dwk``.
:meth:`VariationalRTMEM.objective` is ``J / n_tokens`` (the estimator's
``trace_["log_likelihood"]``).

Links are treated as undirected (as Chang & Blei do): a directed input is symmetrised, so
a reciprocal pair ``i -> j``, ``j -> i`` counts as one link.

One engine iteration (:meth:`VariationalRTMEM.step`) is one E-step (every document in
turn, at most ``e_step_iter`` phi/gamma rounds, warm-started from the current gamma and
phibar) followed by the M-step of the topics and of (eta, nu).  Everything needed to
continue is in :class:`VarRTMState`; the algorithm draws no random number after
``init`` (the seeded topics).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.inference.engine import Algorithm, State, fingerprint
from topiclink.topics.kernels import variational as kernels
from topiclink.topics.variational import TOPIC_INFERENCE, seeded_topic_stats, topic_m_step

__all__ = ["VarRTMData", "VarRTMState", "VariationalRTMEM", "link_m_step", "link_objective",
           "E_STEP_TOL"]

_TINY = 1e-300
#: a document's E-step stops when the mean absolute change of gamma is below this
E_STEP_TOL = 1e-6


def link_m_step(pibar: np.ndarray, n_links: float, rho: float) -> tuple[np.ndarray, float]:
    """Closed-form (eta, nu) of Chang & Blei (2009), exponential link.

    ``exp(a_c) = pibar_c / (pibar_c + rho pi0_c)`` with ``pibar_0 = M - 1^T pibar``,
    ``pi0_k = 1/K^2``, ``pi0_0 = (K-1)/K``, ``eta = a_{1..K} - nu``, ``nu = a_0`` (module
    docstring).

    Parameters
    ----------
    pibar : ndarray (K,)
        ``sum over linked pairs of phibar_d o phibar_d'``.
    n_links : float
        M, the number of links (> 0).
    rho : float
        Number of pseudo non-links (> 0).
    """
    K = pibar.size
    p = np.maximum(np.asarray(pibar, dtype=np.float64), _TINY)
    rest = max(float(n_links) - float(pibar.sum()), _TINY)
    nu = math.log(rest) - math.log(rest + rho * (K - 1) / K)
    eta = np.log(p) - np.log(p + rho / K**2) - nu
    return eta, float(nu)


def link_objective(pibar: np.ndarray, n_links: float, eta: np.ndarray, nu: float,
                   rho: float) -> tuple[float, float]:
    """The (eta, nu)-dependent part of J: ``(eta^T pibar + M nu, regulariser)``.

    The regulariser is ``rho sum_c pi0_c log(1 - exp(a_c))`` (``-inf`` if some
    ``a_c >= 0``).
    """
    K = pibar.size
    a = np.append(np.asarray(eta, dtype=np.float64) + nu, nu)
    pi0 = np.append(np.full(K, 1.0 / K**2), (K - 1) / K)
    with np.errstate(divide="ignore", invalid="ignore"):
        log1m = np.where(a < 0, np.log(-np.expm1(np.minimum(a, -_TINY))), -np.inf)
    links = float(np.dot(eta, pibar) + n_links * nu)
    return links, float(rho * np.dot(pi0, log1m))


@dataclass
class VarRTMData:
    """Documents as the E-step kernel reads them (CSR counts) and the undirected links."""

    counts: sp.csr_matrix       # (D, V) document-term counts (the seeded initialisation)
    indptr: np.ndarray          # int64 (D + 1,)
    indices: np.ndarray         # int32 (nnz,)
    values: np.ndarray          # float64 (nnz,)
    doc_len: np.ndarray         # float64 (D,)
    pairs: np.ndarray           # int64 (M, 2), each unordered linked pair once
    adj_indptr: np.ndarray      # int64 (D + 1,), the symmetric adjacency
    adj_indices: np.ndarray     # int32
    n_tokens: int

    @classmethod
    def from_corpus(cls, corpus: Corpus, links: Links) -> VarRTMData:
        """The data of ``corpus`` and ``links`` (direction ignored, see
        :meth:`Links.undirected_pairs`)."""
        pairs, adj = links.undirected_pairs()
        counts = corpus.counts
        return cls(counts=counts, indptr=counts.indptr.astype(np.int64),
                   indices=counts.indices.astype(np.int32),
                   values=counts.data.astype(np.float64),
                   doc_len=corpus.doc_lengths.astype(np.float64), pairs=pairs,
                   adj_indptr=adj.indptr.astype(np.int64),
                   adj_indices=adj.indices.astype(np.int32), n_tokens=int(corpus.n_tokens))

    @property
    def n_docs(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_words(self) -> int:
        return int(self.counts.shape[1])

    @property
    def n_links(self) -> int:
        return int(self.pairs.shape[0])

    def fingerprint(self) -> str:
        return fingerprint(self.indptr, self.indices, self.values, self.pairs,
                           np.array([self.n_words]))


@dataclass(kw_only=True)
class VarRTMState(State):
    """The variational parameters and the current M-step estimates.

    ``gamma`` and ``phibar`` warm-start the next E-step; ``log_topics`` and ``eta`` are
    what it uses; ``stats`` (the topic-word statistics of the last E-step), ``components``,
    ``nu`` and ``J`` (the objective after the last iteration) complete the estimates.
    """

    gamma: np.ndarray        # (D, K) q(theta_d) = Dir(gamma_d)
    phibar: np.ndarray       # (D, K) E_q[zbar_d]
    stats: np.ndarray        # (V, K) S_wk = sum_d c_dw phi_dwk (the seeded counts at init)
    components: np.ndarray   # (K, V) the topics' point estimate / mean
    log_topics: np.ndarray   # (K, V) log beta ("map") or E_q[log beta] ("variational")
    eta: np.ndarray          # (K,)
    nu: float
    J: float = float("nan")


class VariationalRTMEM(Algorithm):
    """Chang & Blei's variational EM for the RTM (exponential link); module docstring.

    Parameters
    ----------
    n_topics : K
    alpha : float64 (K,) Dirichlet prior of theta
    topic_word_prior : s, the topics' pseudo-count / Dirichlet prior
    n_pseudo_negatives : rho (None: the number of links M)
    topic_inference : "map" or "variational" topics
    e_step_iter : maximum phi/gamma rounds per document in one E-step
    e_step_tol : a document's E-step stops when gamma changes less than this
    """

    name = "VariationalRTM"
    state_class = VarRTMState

    def __init__(self, n_topics: int, alpha: np.ndarray, topic_word_prior: float, *,
                 n_pseudo_negatives: float | None = None, topic_inference: str = "map",
                 e_step_iter: int = 5, e_step_tol: float = E_STEP_TOL) -> None:
        if topic_inference not in TOPIC_INFERENCE:
            raise ValueError(f"topic_inference must be one of {TOPIC_INFERENCE}, "
                             f"got {topic_inference!r}")
        self.n_topics = int(n_topics)
        self.alpha = alpha
        self.s = float(topic_word_prior)
        self.n_pseudo_negatives = n_pseudo_negatives
        self.topic_inference = topic_inference
        self.e_step_iter = int(e_step_iter)
        self.e_step_tol = float(e_step_tol)
        self.init_topics: np.ndarray | None = None   # (K, V) statistics to start from

    def rho(self, data: VarRTMData) -> float:
        """The number of pseudo non-links used on ``data``."""
        return float(data.n_links if self.n_pseudo_negatives is None
                     else self.n_pseudo_negatives)

    def fingerprint(self, data: VarRTMData) -> str:
        return data.fingerprint()

    def init(self, data: VarRTMData, rng: np.random.Generator) -> VarRTMState:
        """Uniform phibar (so the first M-step gives eta = 0), topics seeded from the
        counts of random documents plus one pseudo-count per word, or from
        ``init_topics`` S (K, V) plus the topic prior s."""
        K, D = self.n_topics, data.n_docs
        M = data.n_links
        if M == 0:
            raise ValueError("VariationalRTMEM needs at least one link")
        gamma = np.tile(self.alpha, (D, 1)) + data.doc_len[:, None] / K
        phibar = np.full((D, K), 1.0 / K)
        if self.init_topics is None:
            seed_stats = seeded_topic_stats(data.counts, K, rng)
            components, log_topics, _ = topic_m_step(seed_stats, 1.0, self.topic_inference)
        else:  # given statistics (e.g. a fitted LDA's n_wk) under the model's own prior
            seed_stats = np.array(self.init_topics, dtype=np.float64)
            components, log_topics, _ = topic_m_step(seed_stats, self.s,
                                                     self.topic_inference)
        return VarRTMState(gamma=gamma, phibar=phibar,
                           stats=np.ascontiguousarray(seed_stats.T), components=components,
                           log_topics=log_topics, eta=np.zeros(K),
                           nu=math.log(M / (M + self.rho(data))),
                           data_fingerprint=self.fingerprint(data))

    def check_values(self, state, data) -> None:  # noqa: ANN001
        if np.any(state.gamma <= 0) or np.any(state.phibar < 0):
            raise ValueError("state: gamma must be > 0 and phibar >= 0")

    def step(self, state: VarRTMState, data: VarRTMData) -> dict[str, float]:
        """One E-step (documents in turn, warm-started) and the M-step."""
        M, rho = data.n_links, self.rho(data)
        state.stats[:] = 0.0
        doc_terms = np.zeros(data.n_docs)
        kernels.e_step(data.indptr, data.indices, data.values, data.doc_len, data.adj_indptr,
                       data.adj_indices, np.ascontiguousarray(state.log_topics.T), state.eta,
                       self.alpha, state.gamma, state.phibar, state.stats, doc_terms,
                       self.e_step_iter, self.e_step_tol)
        components, log_topics, word_term = topic_m_step(state.stats.T.copy(), self.s,
                                                         self.topic_inference)
        phibar, pairs = state.phibar, data.pairs
        pibar = (phibar[pairs[:, 0]] * phibar[pairs[:, 1]]).sum(axis=0)
        eta, nu = link_m_step(pibar, M, rho)
        link_term, reg = link_objective(pibar, M, eta, nu, rho)
        state.components, state.log_topics = components, log_topics
        state.eta, state.nu = eta, nu
        state.J = float(doc_terms.sum()) + word_term + link_term + reg
        return {"link_log_likelihood": link_term / M}

    def objective(self, state: VarRTMState, data: VarRTMData) -> float:
        """J per token after the last iteration."""
        return state.J / data.n_tokens
