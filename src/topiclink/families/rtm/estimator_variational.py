"""The relational topic model fitted by variational EM (Chang & Blei 2009): "Var-RTM".

Chang & Blei, "Relational Topic Models for Document Networks", AISTATS 2009.  LDA for the
words; for every observed link between documents d and d' the exponential link function
``psi_e(y_dd' = 1) = exp(eta^T (zbar_d o zbar_d') + nu)``, positive links only,
regularised by ``rho`` pseudo non-links.  The algorithm (state, E-step, closed-form
M-step, the monotone objective J and its derivation) is
:class:`topiclink.families.rtm.variational.VariationalRTMEM`; this module validates, builds the
data, runs the engine, publishes the estimates and predicts.

Two summaries of a document's topics under the variational posterior ``q``:

- ``transform`` (the library's contract): the expected topic proportions
  ``E_q[theta_d] = gamma_d / sum gamma_d``, smoothed by the prior;
- :meth:`VariationalRTM.topic_features`: ``E_q[zbar_d] = phibar_d``, the mean of the
  empirical topic proportions — what the link function uses (link scores of new
  documents, ``zbar_`` of the training documents).
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma

from topiclink.data.checks import (
    DataError,
    Options,
    check_init_topics,
    doc_topic_prior_vector,
)
from topiclink.data.corpus import Corpus
from topiclink.data.links import as_links
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import LinkPredictionMixin, TopicsMixin
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.fit_docs import documents_checkpoint_parameters
from topiclink.estimators.schema import LINK_ARRAYS, TOPIC_ARRAYS, ArraySpec
from topiclink.estimators.training_documents import publish_training_documents
from topiclink.estimators.variational import TRANSFORM_TOL, VariationalTopicsMixin
from topiclink.families.rtm.variational import VariationalRTMEM, VarRTMData, VarRTMState
from topiclink.parameters import shared
from topiclink.random import RandomState
from topiclink.topics.variational import TOPIC_INFERENCE, expected_proportions

__all__ = ["VariationalRTM"]

logger = logging.getLogger(__name__)



class VariationalRTM(LinkPredictionMixin, VariationalTopicsMixin, TopicsMixin, Estimator):
    """Relational topic model (exponential link) by variational EM: the Var-RTM baseline.

    Chang & Blei, AISTATS 2009: LDA words plus ``p(y_dd'=1) = exp(eta^T (zbar_d o zbar_d')
    + nu)`` for every observed link, positive links only, regularised by ``rho`` pseudo
    non-links with uniform topic proportions.  Formulas, the derivation of the M-step and
    the monotone objective are in :mod:`topiclink.families.rtm.variational`.

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
        EM iterations (per call of ``fit``; ``resume=True`` adds more).
    e_step_iter : int, default 5
        phi/gamma rounds per document in each E-step (fewer when gamma has converged).
    tol : float, default 1e-4
        Stop when the objective per token changes by less than ``tol`` relative to its
        previous value (0: run ``max_iter`` iterations).
    transform_iter : int, default 100
        Maximum phi/gamma rounds per new document in :meth:`transform`,
        :meth:`topic_features`, the link scores of new documents and
        :meth:`predict_words_from_links`.
    init_topics : array (K, V) or None, default None
        Where the topics start: topic-word statistics S >= 0 (expected counts, e.g. the
        ``nwk`` of :func:`topiclink.families.lmv.algorithm.start_lda`, a fitted LDA shared with
        other models as in the LMV paper, Sec. 6), combined with the topic prior as the
        M-step would.  None: topics seeded from random documents (``random_state``).
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
        ``E_q[zbar_d] = phibar_d``, what the link function uses (also ``train_zbar_``).
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
    state_ : VarRTMState
        gamma, phibar, the topics, eta, nu and J: ``fit(X, links=..., resume=True)``
        continues EM from it (also after ``save(path, full=True)`` and load).
    """

    cli_name = "var-rtm"  # ``topiclink fit var-rtm``

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "links")
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"Var-RTM": {}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics", "doc_topic_prior", "topic_word_prior", "n_pseudo_negatives"),
        "topic_inference": [Options(*TOPIC_INFERENCE)],
        **shared("max_iter", "e_step_iter", "tol", "transform_iter", "init_topics",
                 "random_state", "verbose", "callbacks"),
    }
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "log_topics_", "doc_topic_", "zbar_", "weights_", "alpha_",
        "topic_weights_", "vocabulary_", "train_doc_ids_", "train_titles_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **TOPIC_ARRAYS,
        **LINK_ARRAYS,
        "zbar_": ArraySpec(("D", "K"), "f", "simplex"),
        "log_topics_": ArraySpec(("K", "V"), "f", "nonpositive"),
        "weights_": ArraySpec(("K",)),
    }
    _saved_scalars: ClassVar[tuple[str, ...]] = (
        "intercept_", "n_iter_", "n_links_", "n_pseudo_negatives_", "mean_doc_length_",
        "n_tokens_")
    _scalar_specs: ClassVar[dict[str, str]] = {"mean_doc_length_": "positive",
                                               "n_pseudo_negatives_": "nonnegative"}
    _state_class = VarRTMState

    def __init__(self, n_topics: int = 10, *, doc_topic_prior: Any = None,
                 topic_word_prior: float = 0.01, n_pseudo_negatives: float | None = None,
                 topic_inference: str = "map", max_iter: int = 100, e_step_iter: int = 5,
                 tol: float = 1e-4, transform_iter: int = 100, init_topics: Any = None,
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    # ------------------------------------------------------------------ fitting
    def _algorithm(self) -> VariationalRTMEM:
        K = int(self.n_topics)
        return VariationalRTMEM(
            K, doc_topic_prior_vector(self.doc_topic_prior, K), float(self.topic_word_prior),
            n_pseudo_negatives=(None if self.n_pseudo_negatives is None
                                else float(self.n_pseudo_negatives)),
            topic_inference=self.topic_inference, e_step_iter=int(self.e_step_iter))

    @documents_checkpoint_parameters
    def fit(self, X: Any, y: None = None, *, links: Any = None, resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY) -> VariationalRTM:
        """Fit to documents and the links among them.

        Parameters
        ----------
        X : Corpus or (sparse) document-term matrix, shape (D, V)
            No empty document.
        links : Links, (M, 2) array, scipy adjacency or networkx graph (keyword)
            At least one link; treated as undirected.
        resume : bool, default False
            Continue EM from ``state_`` (same documents and links) for ``max_iter`` more
            iterations: 10 + 10 iterations equal 20.
        """
        self._check_fit_links(y, links)
        self._validate_params()
        corpus = self._training_corpus(X)
        algorithm = self._algorithm()
        if self.init_topics is not None:
            algorithm.init_topics = check_init_topics(self.init_topics, algorithm.n_topics,
                                                      corpus.n_words, "VariationalRTM")
        data = VarRTMData.from_corpus(corpus, as_links(links, corpus.n_docs,
                                                       doc_ids=corpus.doc_ids))
        if data.n_links == 0:
            raise DataError("VariationalRTM.fit: no links; the link model cannot be fitted")

        def publish(state: VarRTMState, averaged: dict[str, np.ndarray] | None) -> None:
            self._publish(state, algorithm, data, corpus)

        if not resume:
            logger.info("VariationalRTM: %d documents, %d words, %d tokens, %d links, K=%d, "
                        "rho=%g", data.n_docs, data.n_words, data.n_tokens, data.n_links,
                        algorithm.n_topics, algorithm.rho(data))
        result, seconds = self._run_em(algorithm, data, "VariationalRTM", resume=resume,
                                       publish=publish, checkpoint=checkpoint,
                                       checkpoint_every=checkpoint_every)
        logger.info("VariationalRTM: %d iterations in %.2f s", result.n_iter, seconds)
        return self

    def _publish(self, state: VarRTMState, algorithm: VariationalRTMEM, data: VarRTMData,
                 corpus: Corpus) -> None:
        self.components_ = state.components
        self.log_topics_ = state.log_topics
        self.doc_topic_ = expected_proportions(state.gamma)
        self.zbar_ = state.phibar.copy()
        self.weights_ = np.asarray(state.eta, dtype=np.float64)
        self.intercept_ = float(state.nu)
        self.alpha_ = algorithm.alpha
        token_topics = state.stats.T.copy().sum(axis=1)
        self.topic_weights_ = token_topics / token_topics.sum()
        publish_training_documents(self, corpus)
        self.n_links_ = data.n_links
        self.n_pseudo_negatives_ = algorithm.rho(data)
        self.mean_doc_length_ = float(data.doc_len.mean())
        self.n_tokens_ = data.n_tokens
        self.n_iter_ = state.iteration

    # ------------------------------------------------------------------ prediction
    @property
    def train_zbar_(self) -> np.ndarray:
        """``E_q[zbar]`` of the training documents (``zbar_``, the link function's
        inputs)."""
        return np.asarray(self.zbar_)

    def _query_topics(self, corpus: Corpus) -> np.ndarray:
        return self._infer(corpus)[1]

    def _scores_from_topics(self, zq: np.ndarray, targets: np.ndarray, direction: str
                            ) -> np.ndarray:
        """``log psi_e = eta^T (zbar_q o zbar_t) + nu``; the exponential link is symmetric,
        so every direction gives the same score."""
        from topiclink.kernels.scores import row_products  # a query's bits, whatever batch

        return row_products(zq * self.weights_, np.asarray(self.zbar_)[targets]) + \
            self.intercept_

    def _probabilities(self, scores: np.ndarray) -> np.ndarray:
        """``psi_e = exp(score)``, at most 1 (every score is < 0 after the M-step)."""
        return np.exp(np.minimum(scores, 0.0))

    def _words_from_links(self, out: sp.csr_matrix, into: sp.csr_matrix, n_tokens: Any,
                          rng: np.random.Generator) -> np.ndarray:
        """Word distributions of new documents known only by their (undirected) links.

        For each new document, ``q(z)`` is inferred from the link term alone (no word is
        observed; all N tokens share one phi), the links being the union of ``out`` and
        ``into``:

            phi_k ∝ exp(E[log theta_k] + (eta_k / N) sum_{d' linked} zbar_d'k),
            gamma = alpha + N phi,

        iterated to convergence (at most ``transform_iter`` rounds); then ``p(w) =
        sum_k phi_k beta_kw``.  ``n_tokens``: N of each new document, a number or one
        per document (default ``mean_doc_length_``).  Deterministic (``rng`` unused).
        """
        A = ((out + into) != 0).astype(np.float64)
        n_new = A.shape[0]
        N = np.broadcast_to(np.asarray(self.mean_doc_length_ if n_tokens is None
                                       else n_tokens, dtype=np.float64), (n_new,))
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
            if change < TRANSFORM_TOL:
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
