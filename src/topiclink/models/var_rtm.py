"""The relational topic model fitted by variational EM (Chang & Blei 2009): "Var-RTM".

Chang & Blei, "Relational Topic Models for Document Networks", AISTATS 2009 (and Ann.
Appl. Stat. 2010).  LDA for the words; for every observed link between documents d and
d' the exponential link function

    psi_e(y_dd' = 1) = exp(eta^T (zbar_d o zbar_d') + nu),       zbar_d = (1/N_d) sum_n z_dn

(``o`` the elementwise product).  Only the exponential link is implemented.  Only positive
links are observed; the absence of links is handled by the paper's regularisation with
``rho`` pseudo non-links (below).  This is the "Var-RTM" baseline of the gRTM paper
(``design/models/grtm.md``) and the "RTM (exponential link)" baseline of the LMV paper
(``design/models/lmv.md``).

Variational EM, mean field ``q(theta_d) = Dir(gamma_d)``, ``q(z_dn) = Mult(phi_dn)``
(kernels in :mod:`topiclink.kernels.var_rtm`).  Because ``E_q[log psi_e] = eta^T
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
``trace_["log_likelihood"]`` records ``J / n_tokens`` after every EM iteration.

Links are treated as undirected (as Chang & Blei do): a directed input is symmetrised, so
a reciprocal pair ``i -> j``, ``j -> i`` counts as one link.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, gammaln

from topiclink.callbacks import RelativeTolerance
from topiclink.data.checks import DataError, check_n_topics, check_positive, doc_topic_prior_vector
from topiclink.data.corpus import Corpus, as_corpus
from topiclink.data.links import as_links
from topiclink.inference.gibbs import run_chain
from topiclink.kernels import var_rtm as kernels
from topiclink.models.base import Estimator
from topiclink.models.capabilities import ClassifierCapability, LinkPredictionMixin, TopicsMixin
from topiclink.random import RandomState, as_generator

__all__ = ["VariationalRTM", "link_m_step", "link_objective", "undirected_pairs"]

logger = logging.getLogger(__name__)

_TINY = 1e-300
_TRANSFORM_TOL = 1e-6
_FIT_E_TOL = 1e-6


def undirected_pairs(links: Any) -> tuple[np.ndarray, sp.csr_matrix]:
    """Unordered linked pairs and the symmetric adjacency of a :class:`Links`.

    Returns
    -------
    pairs : ndarray of int64, shape (M, 2)
        Each unordered pair once, ``pairs[:, 0] < pairs[:, 1]``.
    adjacency : csr_matrix of bool, shape (D, D)
        Symmetric; row d lists the neighbours of d.
    """
    A = links.adjacency()
    S = ((A + A.T) > 0).tocsr()
    S.sort_indices()
    upper = sp.triu(S, k=1).tocoo()
    pairs = np.column_stack([upper.row, upper.col]).astype(np.int64)
    return pairs, S


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


def _as_int(value: Any, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


class VariationalRTM(LinkPredictionMixin, TopicsMixin, Estimator):
    """Relational topic model (exponential link) by variational EM: the Var-RTM baseline.

    Chang & Blei, AISTATS 2009: LDA words plus ``p(y_dd'=1) = exp(eta^T (zbar_d o zbar_d')
    + nu)`` for every observed link, positive links only, regularised by ``rho`` pseudo
    non-links with uniform topic proportions.  Formulas, the derivation of the M-step and
    the monotone objective are in the module docstring.

    Parameters
    ----------
    n_topics : int, default 10
        K (>= 2).
    doc_topic_prior : float or array (K,), default 0.1
        alpha, the Dirichlet prior of theta_d.  (The gRTM paper uses alpha = 5 for its
        Gibbs models; 0.1 is the library's LDA default.)
    topic_word_prior : float, default 0.01
        s.  ``topic_inference="map"``: pseudo-count of the M-step, beta_kw ∝ S_kw + s.
        ``"variational"``: the symmetric Dirichlet prior of the topics.
    n_pseudo_negatives : float, optional
        rho, the number of pseudo non-links of the regulariser.  Default: the number of
        (undirected) training links M, as the R ``lda`` package's ``rtm.em`` (lambda =
        link density times the number of pairs).  Larger rho makes eta more
        discriminative (as rho -> inf, eta_k -> log(K (K-1) pibar_k / (M - 1^T pibar))).
    topic_inference : {"map", "variational"}, default "map"
        Point estimate of the topics in the M-step (Chang & Blei) or a variational
        Dirichlet ``q(beta_k) = Dir(lambda_k)`` (the LMV paper's convention for all its
        variational baselines); the E-step then uses ``E_q[log beta]``.
    max_iter : int, default 100
        EM iterations.
    e_step_iter : int, default 5
        phi/gamma rounds per document in each E-step (fewer when gamma has converged).
    tol : float, default 1e-4
        Stop when the objective per token changes by less than ``tol`` relative to its
        previous value (0: run ``max_iter`` iterations).
    transform_iter : int, default 100
        Maximum phi/gamma rounds per new document in :meth:`transform` and
        :meth:`predict_words_from_links`.
    random_state : int, Generator or None
        Only the topic initialisation is random: each topic starts from the word counts
        of distinct random documents ("seeded", as LDA-C) plus one pseudo-count per word.
    verbose : bool
    callbacks : list, optional
        ``on_iteration(model, iteration, info)`` objects; returning True stops.

    Attributes
    ----------
    components_ : ndarray (K, V)
        Topics beta (rows sum to 1): ``(S_kw + s) / (S_k + V s)``; for variational topics
        the mean ``lambda_kw / sum_w lambda_kw``.
    log_topics_ : ndarray (K, V)
        The log topic weights the E-step uses: ``log components_`` ("map") or
        ``E_q[log beta_kw] = psi(lambda_kw) - psi(sum_w lambda_kw)`` ("variational").
    doc_topic_ : ndarray (D, K)
        ``E_q[theta_d] = gamma_d / sum gamma_d`` of the training documents.
    zbar_ : ndarray (D, K)
        ``E_q[zbar_d] = phibar_d``, what the link function uses.
    weights_ : ndarray (K,)
        eta.
    intercept_ : float
        nu.
    alpha_ : ndarray (K,)
    topic_weights_ : ndarray (K,)
        Share of training tokens in each topic.
    vocabulary_ : ndarray of str (V,)
    n_links_ : int
        M, undirected training links.
    n_pseudo_negatives_ : float
        rho used.
    mean_doc_length_ : float
        Mean training document length (default N for :meth:`predict_words_from_links`).
    trace_ : dict of ndarray
        ``"log_likelihood"``: J per token after every EM iteration (non-decreasing);
        ``"link_log_likelihood"``: ``E_q[log psi_e]`` averaged over the links;
        ``"seconds"``.
    n_iter_ : int
    n_tokens_ : int
    """

    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "log_topics_", "doc_topic_", "zbar_", "weights_", "alpha_",
        "topic_weights_", "vocabulary_", "train_doc_ids_", "train_titles_")
    _saved_scalars: ClassVar[tuple[str, ...]] = (
        "intercept_", "n_iter_", "n_links_", "n_pseudo_negatives_", "mean_doc_length_",
        "n_tokens_")

    def __init__(self, n_topics: int = 10, doc_topic_prior: Any = None,
                 topic_word_prior: float = 0.01, n_pseudo_negatives: float | None = None,
                 topic_inference: str = "map", max_iter: int = 100, e_step_iter: int = 5,
                 tol: float = 1e-4, transform_iter: int = 100,
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self.n_topics = n_topics
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.n_pseudo_negatives = n_pseudo_negatives
        self.topic_inference = topic_inference
        self.max_iter = max_iter
        self.e_step_iter = e_step_iter
        self.tol = tol
        self.transform_iter = transform_iter
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks

    # ------------------------------------------------------------------ fitting
    def _validate(self) -> tuple[int, np.ndarray, float]:
        K = check_n_topics(self.n_topics)
        alpha = doc_topic_prior_vector(self.doc_topic_prior, K)
        s = check_positive(self.topic_word_prior, "topic_word_prior")
        if self.n_pseudo_negatives is not None:
            check_positive(self.n_pseudo_negatives, "n_pseudo_negatives")
        if self.topic_inference not in ("map", "variational"):
            raise ValueError(f"topic_inference must be 'map' or 'variational', "
                             f"got {self.topic_inference!r}")
        _as_int(self.max_iter, "max_iter", 1)
        _as_int(self.e_step_iter, "e_step_iter", 1)
        _as_int(self.transform_iter, "transform_iter", 1)
        check_positive(self.tol, "tol", allow_zero=True)
        return K, alpha, s

    def _topics(self, stats_kw: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray, float]:
        """M-step for the topics: (components, log weights for the E-step, J term)."""
        lam = stats_kw + s
        totals = lam.sum(axis=1, keepdims=True)
        components = lam / totals
        if self.topic_inference == "map":
            log_topics = np.log(components)
            term = float(np.sum(lam * log_topics))
        else:
            V = lam.shape[1]
            log_topics = digamma(lam) - digamma(totals)
            term = float(lam.shape[0] * (gammaln(V * s) - V * gammaln(s))
                         - gammaln(totals).sum() + gammaln(lam).sum())
        return components, log_topics, term

    def fit(self, X: Any, links: Any = None) -> VariationalRTM:
        """Fit to documents and the links among them.

        Parameters
        ----------
        X : Corpus or (sparse) document-term matrix, shape (D, V)
            No empty document.
        links : Links, (M, 2) array, scipy adjacency or networkx graph
            At least one link; treated as undirected.
        """
        K, alpha, s = self._validate()
        corpus = as_corpus(X)
        corpus.check_no_empty("fit")
        if links is None:
            raise DataError("VariationalRTM.fit needs links (positive links among the "
                            "documents of X)")
        lk = as_links(links, corpus.n_docs, doc_ids=corpus.doc_ids)
        pairs, adj = undirected_pairs(lk)
        M = pairs.shape[0]
        if M == 0:
            raise DataError("VariationalRTM.fit: no links; the link model cannot be fitted")
        rho = float(M if self.n_pseudo_negatives is None else self.n_pseudo_negatives)
        rng = as_generator(self.random_state)

        counts = corpus.counts
        indptr = counts.indptr.astype(np.int64)
        indices = counts.indices.astype(np.int32)
        values = counts.data.astype(np.float64)
        doc_len = corpus.doc_lengths.astype(np.float64)
        adj_indptr = adj.indptr.astype(np.int64)
        adj_indices = adj.indices.astype(np.int32)
        D, V = counts.shape
        n_tokens = corpus.n_tokens

        # initial state: uniform phibar (so the M-step gives eta = 0), seeded topics
        gamma = np.tile(alpha, (D, 1)) + doc_len[:, None] / K
        phibar = np.full((D, K), 1.0 / K)
        seed_stats = _seeded_stats(counts, K, rng)
        components, log_topics, _ = self._topics(seed_stats, 1.0)
        eta, nu = np.zeros(K), math.log(M / (M + rho))
        stats = np.zeros((V, K))
        doc_terms = np.zeros(D)
        state: dict[str, Any] = {}

        def step(_: int) -> dict[str, float]:
            nonlocal components, log_topics, eta, nu
            stats[:] = 0.0
            kernels.e_step(indptr, indices, values, doc_len, adj_indptr, adj_indices,
                           np.ascontiguousarray(log_topics.T), eta, alpha, gamma, phibar,
                           stats, doc_terms, self.e_step_iter, _FIT_E_TOL)
            stats_kw = stats.T.copy()
            components, log_topics, word_term = self._topics(stats_kw, s)
            pibar = (phibar[pairs[:, 0]] * phibar[pairs[:, 1]]).sum(axis=0)
            eta, nu = link_m_step(pibar, M, rho)
            link_term, reg = link_objective(pibar, M, eta, nu, rho)
            state["J"] = float(doc_terms.sum()) + word_term + link_term + reg
            state["stats"] = stats_kw
            return {"link_log_likelihood": link_term / M}

        def objective() -> float:
            return state["J"] / n_tokens

        logger.info("VariationalRTM: %d documents, %d words, %d tokens, %d links, K=%d, "
                    "rho=%g", D, V, n_tokens, M, K, rho)
        t0 = time.perf_counter()
        cbs = [*(self.callbacks or []), RelativeTolerance(float(self.tol), "VariationalRTM")]
        result = run_chain(self, step, objective, self.max_iter, cbs, self.verbose,
                           1, desc="VariationalRTM")
        logger.info("VariationalRTM: %d iterations in %.2f s", result.n_iter,
                    time.perf_counter() - t0)

        self.components_ = components
        self.log_topics_ = log_topics
        self.doc_topic_ = gamma / gamma.sum(axis=1, keepdims=True)
        self.zbar_ = phibar
        self.weights_ = np.asarray(eta, dtype=np.float64)
        self.intercept_ = float(nu)
        self.alpha_ = alpha
        token_topics = state["stats"].sum(axis=1)
        self.topic_weights_ = token_topics / token_topics.sum()
        self.vocabulary_ = np.asarray(corpus.vocabulary, dtype=str)
        self.train_doc_ids_ = np.asarray(corpus.doc_ids).astype(str)
        self.train_titles_ = (np.asarray(corpus.titles, dtype=str) if corpus.titles is not None
                              else np.zeros(0, dtype=str))
        self.n_links_ = int(M)
        self.n_pseudo_negatives_ = rho
        self.mean_doc_length_ = float(doc_len.mean())
        self.n_tokens_ = int(n_tokens)
        self.trace_ = result.trace
        self.n_iter_ = result.n_iter
        return self

    def fit_transform(self, X: Any, links: Any = None) -> np.ndarray:
        """Fit and return ``zbar_`` (D, K)."""
        return self.fit(X, links).zbar_

    # ------------------------------------------------------------------ prediction

    def _infer(self, corpus: Corpus) -> tuple[np.ndarray, np.ndarray]:
        """Variational (gamma, phibar) of documents from their words (topics fixed)."""
        K = self.components_.shape[0]
        alpha = np.asarray(self.alpha_, dtype=np.float64)
        counts = corpus.counts
        D = counts.shape[0]
        doc_len = corpus.doc_lengths.astype(np.float64)
        empty = int((doc_len == 0).sum())
        if empty:
            logger.info("%d of %d documents have no known words; they get the prior mean",
                        empty, D)
        gamma = np.tile(alpha, (D, 1)) + doc_len[:, None] / K
        phibar = np.full((D, K), 1.0 / K)
        kernels.e_step(counts.indptr.astype(np.int64), counts.indices.astype(np.int32),
                       counts.data.astype(np.float64), doc_len,
                       np.zeros(D + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                       np.ascontiguousarray(np.asarray(self.log_topics_).T), np.zeros(K),
                       alpha, gamma, phibar, np.zeros((counts.shape[1], K)), np.zeros(D),
                       int(self.transform_iter), _TRANSFORM_TOL)
        return gamma, phibar

    def transform(self, X: Any) -> np.ndarray:
        """Expected topic proportions ``E_q[zbar]`` (n_docs, K) of new documents.

        Variational inference from the words only (topics fixed, no links), as Chang &
        Blei predict links for a new document.  ``E_q[zbar_d] = phibar_d`` is what the
        link function uses; ``E_q[theta_d] = (alpha + N_d phibar_d) / (sum alpha + N_d)``
        differs only by the prior smoothing.  A document without known words gets
        ``alpha / sum(alpha)``.
        """
        self._check_fitted()
        return self._infer(self._as_model_corpus(X))[1]

    def _targets(self, targets: Any) -> np.ndarray:
        D = self.zbar_.shape[0]
        if targets is None:
            return np.arange(D)
        t = np.asarray(targets)
        if t.dtype == bool:
            if t.shape != (D,):
                raise ValueError(f"a boolean targets mask needs {D} entries, got {t.shape}")
            return np.flatnonzero(t)
        if t.ndim != 1 or (t.size and t.dtype.kind not in "iu"):
            raise ValueError("targets must be a 1-D array of training-document positions")
        if t.size and (t.min() < 0 or t.max() >= D):
            bad = int(t[(t < 0) | (t >= D)][0])
            raise DataError(f"targets: document {bad} is not in [0, {D}) (training "
                            f"documents)")
        return t.astype(np.int64)

    @property
    def train_zbar_(self) -> np.ndarray:
        """E_q[zbar] of the training documents (the link function's inputs)."""
        return np.asarray(self.zbar_)

    def _query_topics(self, X_new: Any) -> np.ndarray:
        return self.transform(X_new)

    def _scores_from_topics(self, zq: np.ndarray, targets: np.ndarray, direction: str
                            ) -> np.ndarray:
        # the exponential link is symmetric: every direction gives the same score
        return (zq * self.weights_) @ np.asarray(self.zbar_)[targets].T + self.intercept_

    def link_scores(self, X_new: Any = None, targets: Any = None,
                    direction: str = "either") -> np.ndarray:
        """Link scores ``eta^T (zbar_q o zbar_t) + nu`` = log psi_e, dense.

        Parameters
        ----------
        X_new : Corpus or document-term matrix (n_new, V), optional
            Query documents, inferred from their words (:meth:`transform`).  None: the
            training documents as queries (then ``targets`` is required, to avoid a
            D x D matrix by accident).
        targets : array of int (n_targets,) or bool mask (D,), optional
            Training documents to score against (default all).

        Returns
        -------
        scores : ndarray (n_query, n_targets)
        """
        self._check_fitted()
        if X_new is None:
            if targets is None:
                raise ValueError("link_scores: give X_new or targets (scoring every "
                                 "training pair would build a D x D matrix)")
            queries = np.asarray(self.zbar_)
        else:
            queries = self.transform(X_new)
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
        return self._scores_from_topics(queries, self._targets(targets), direction)

    def predict_link_proba(self, X_new: Any = None, targets: Any = None) -> np.ndarray:
        """``psi_e = exp(link_scores)``, clipped to at most 1 (see :meth:`link_scores`)."""
        return np.exp(np.minimum(self.link_scores(X_new, targets), 0.0))

    def predict_words_from_links(self, links_to_train: Any,
                                 doc_length: float | np.ndarray | None = None
                                 ) -> np.ndarray:
        """Word distributions of new documents known only by their links.

        For each new document, ``q(z)`` is inferred from the link term alone (no word
        is observed; all N tokens share one phi):

            phi_k ∝ exp(E[log theta_k] + (eta_k / N) sum_{d' linked} zbar_d'k),
            gamma = alpha + N phi,

        iterated to convergence; then ``p(w) = sum_k phi_k beta_kw``.  Used for the word
        rank metric (``design/models/grtm.md``).

        Parameters
        ----------
        links_to_train : sparse or dense (n_new, D)
            Nonzero where the new document is linked to a training document.
        doc_length : float or array (n_new,), optional
            N of each new document (default ``mean_doc_length_``).

        Returns
        -------
        ndarray (n_new, V), rows sum to 1.
        """
        self._check_fitted()
        D = self.zbar_.shape[0]
        A = sp.csr_matrix(links_to_train)
        if A.ndim != 2 or A.shape[1] != D:
            raise ValueError(f"links_to_train must have shape (n_new, {D}), got {A.shape}")
        A = (A != 0).astype(np.float64)
        n_new = A.shape[0]
        N = np.broadcast_to(np.asarray(self.mean_doc_length_ if doc_length is None
                                       else doc_length, dtype=np.float64), (n_new,))
        if not (np.all(np.isfinite(N)) and np.all(N > 0)):
            raise ValueError("doc_length must be finite and > 0")
        alpha = np.asarray(self.alpha_, dtype=np.float64)
        K = alpha.size
        link = (A @ np.asarray(self.zbar_)) * self.weights_ / N[:, None]
        gamma = alpha + N[:, None] / K
        phi = np.full((n_new, K), 1.0 / K)
        for _ in range(int(self.transform_iter)):
            logit = digamma(gamma) - digamma(gamma.sum(axis=1, keepdims=True)) + link
            logit -= logit.max(axis=1, keepdims=True)
            phi = np.exp(logit)
            phi /= phi.sum(axis=1, keepdims=True)
            new = alpha + N[:, None] * phi
            change = np.abs(new - gamma).mean()
            gamma = new
            if change < _TRANSFORM_TOL:
                break
        return phi @ np.asarray(self.components_)

    # ------------------------------------------------------------------ reading
    def summary(self, n_words: int = 8) -> str:
        """Topics with their link weight eta_k, and the intercept nu."""
        text = super().summary(n_words)
        eta = " ".join(f"{v:.3f}" for v in np.asarray(self.weights_))
        return (f"{text}\nlink weights eta: {eta}\nintercept nu: {self.intercept_:.4f} "
                f"({getattr(self, 'n_links_', '?')} links, "
                f"rho = {getattr(self, 'n_pseudo_negatives_', float('nan')):g})")


def _seeded_stats(counts: sp.csr_matrix, K: int, rng: np.random.Generator,
                  docs_per_topic: int = 1) -> np.ndarray:
    """Initial topic-word statistics: counts of distinct random documents per topic."""
    D = counts.shape[0]
    n = K * docs_per_topic
    chosen = rng.choice(D, size=n, replace=n > D)
    rows = np.repeat(np.arange(K), docs_per_topic)
    P = sp.csr_matrix((np.ones(n), (rows, chosen)), shape=(K, D))
    return np.asarray((P @ counts).todense(), dtype=np.float64)
