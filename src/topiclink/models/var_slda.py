"""Supervised LDA with a logistic response by variational EM: the "vSLDA" baseline.

Blei & McAuliffe, "Supervised Topic Models" (NIPS 2007), with the binary logistic
response made tractable by the Jaakkola-Jordan bound (Jaakkola & Jordan 2000), the usual
"variational logistic sLDA".  It is the variational counterpart of gSLDA
(:class:`~topiclink.models.slda.SupervisedTopicModel`, Zhu et al. 2013), whose paper
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
:mod:`topiclink.kernels.var_slda`.  M-step:

    beta_kw = (S_kw + s) / (S_k + V s),
    (2 c A + I / nu^2) eta = (c / 2) b,                                               (4)
    A = sum_d lam(xi_d) E[zbar_d zbar_d^T],   b = sum_d ytil_d phibar_d,
    E[zbar_d zbar_d^T] = (1/N_d^2)(S_d S_d^T - sum_n phi_dn phi_dn^T + diag(S_d)),

(4) maximising the concave quadratic in eta.  Each step maximises J in its block, so J
never decreases; ``trace_["log_likelihood"]`` records J / n_tokens after every EM
iteration.  alpha is fixed (no Newton update of alpha, unlike lda-c's "estimate" mode).

Prediction: the LDA E-step with the topics fixed and no label term (c = 0) gives
``phibar`` of a new document; ``decision_function = eta^T phibar``, ``predict =
1[eta^T phibar > 0]`` and ``predict_proba = sigmoid(eta^T phibar)``, the plug-in mean
(not the expectation of the sigmoid under q).
"""

from __future__ import annotations

import logging
import time
from typing import Any, ClassVar

import numpy as np
import scipy.linalg

from topiclink.callbacks import RelativeTolerance
from topiclink.data.checks import (
    DataError,
    check_n_topics,
    check_positive,
    doc_topic_prior_vector,
    encode_labels,
)
from topiclink.data.corpus import Corpus, as_corpus
from topiclink.inference.gibbs import run_chain
from topiclink.kernels import var_rtm as rtm_kernels
from topiclink.kernels import var_slda as kernels
from topiclink.models.base import Estimator
from topiclink.models.capabilities import ClassifierCapability, LinkPredictionMixin, TopicsMixin

from topiclink.models.var_rtm import _as_int, _seeded_stats
from topiclink.random import RandomState, as_generator

__all__ = ["VariationalSLDA", "jj_lambda", "label_m_step", "label_objective",
           "label_statistics"]

logger = logging.getLogger(__name__)

_TRANSFORM_TOL = 1e-6


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


class VariationalSLDA(ClassifierCapability, TopicsMixin, Estimator):
    """Binary logistic supervised LDA by variational EM (Jaakkola-Jordan bound): vSLDA.

    The variational baseline for gSLDA (:class:`SupervisedTopicModel`).  Model, objective
    and updates are in the module docstring.  Binary labels only; for more classes use
    :class:`SupervisedTopicModel` (one-vs-all).

    Parameters
    ----------
    n_topics : int, default 10
        K (>= 2).
    c : float, default 1.0
        Weight of the label log-likelihood (c = 1: plain sLDA; gSLDA's paper uses 25).
    doc_topic_prior : float or array (K,), default 0.1
        alpha, fixed (not estimated).
    topic_word_prior : float, default 0.01
        s, the pseudo-count of the topic M-step ``beta_kw ∝ S_kw + s``.
    weight_prior_var : float, default 1.0
        nu^2 of the prior eta ~ N(0, nu^2 I) (as gSLDA).
    max_iter : int, default 100
        EM iterations.
    e_step_iter : int, default 20
        Maximum coordinate-ascent sweeps per document in each E-step.
    e_step_tol : float, default 1e-4
        A document's E-step stops when the mean absolute change of gamma in a sweep is
        below this.
    tol : float, default 1e-4
        Stop EM when J per token changes by less than ``tol`` relative to its previous
        value (0: run ``max_iter`` iterations).
    transform_iter : int, default 100
        Maximum sweeps per new document in :meth:`transform` and prediction.
    random_state : int, Generator or None
        Only the topic initialisation is random: each topic starts from the word counts
        of a distinct random document plus one pseudo-count per word (lda-c's "seeded").
    verbose : bool
        A progress bar.
    callbacks : list, optional
        ``on_iteration(model, iteration, info)`` objects; returning True stops.

    Attributes
    ----------
    classes_ : ndarray (2,)
        The labels; ``classes_[1]`` is the positive class (y = 1).
    coef_ : ndarray (1, K)
        eta (one row, as :class:`SupervisedTopicModel` and scikit-learn for binary).
    components_ : ndarray (K, V)
        Topics beta (rows sum to 1); also ``topic_word_``.
    doc_topic_ : ndarray (D, K)
        ``E_q[theta_d] = gamma_d / sum gamma_d`` of the training documents.
    zbar_ : ndarray (D, K)
        ``E_q[zbar_d] = phibar_d`` of the training documents.
    alpha_ : ndarray (K,)
    topic_weights_ : ndarray (K,)
        Share of training tokens in each topic.
    vocabulary_ : ndarray of str (V,)
    trace_ : dict of ndarray
        Per EM iteration: ``"log_likelihood"`` (J per token, non-decreasing), ``"elbo"``
        (J), ``"label_bound"`` (the Jaakkola-Jordan bound on the mean label
        log-likelihood), ``"train_accuracy"``, ``"e_step_sweeps"`` (mean sweeps per
        document), ``"seconds"`` (the whole iteration), ``"seconds_e_step"``,
        ``"seconds_m_step"``.
    n_iter_ : int
        EM iterations run.
    converged_ : bool
        Whether EM stopped on ``tol`` (False: it ran ``max_iter`` iterations).
    n_tokens_ : int
    """

    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "coef_", "classes_", "doc_topic_", "zbar_", "alpha_",
        "topic_weights_", "vocabulary_")
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "converged_", "n_tokens_")

    def __init__(self, n_topics: int = 10, c: float = 1.0, doc_topic_prior: Any = None,
                 topic_word_prior: float = 0.01, weight_prior_var: float = 1.0,
                 max_iter: int = 100, e_step_iter: int = 20, e_step_tol: float = 1e-4,
                 tol: float = 1e-4, transform_iter: int = 100,
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self.n_topics = n_topics
        self.c = c
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.weight_prior_var = weight_prior_var
        self.max_iter = max_iter
        self.e_step_iter = e_step_iter
        self.e_step_tol = e_step_tol
        self.tol = tol
        self.transform_iter = transform_iter
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks

    # ------------------------------------------------------------------ fitting
    def _validate(self) -> tuple[int, np.ndarray, float, float, float]:
        K = check_n_topics(self.n_topics)
        alpha = doc_topic_prior_vector(self.doc_topic_prior, K)
        s = check_positive(self.topic_word_prior, "topic_word_prior")
        c = check_positive(self.c, "c")
        nu2 = check_positive(self.weight_prior_var, "weight_prior_var")
        _as_int(self.max_iter, "max_iter", 1)
        _as_int(self.e_step_iter, "e_step_iter", 1)
        _as_int(self.transform_iter, "transform_iter", 1)
        check_positive(self.e_step_tol, "e_step_tol", allow_zero=True)
        check_positive(self.tol, "tol", allow_zero=True)
        return K, alpha, s, c, nu2

    def fit(self, X: Any, y: Any) -> VariationalSLDA:
        """Fit to documents ``X`` with binary labels ``y``.

        Parameters
        ----------
        X : Corpus or (sparse) document-term matrix, shape (D, V)
            No empty document.
        y : array (D,)
            Two classes (any labels; the larger in sorted order is the positive class).
        """
        K, alpha, s, c, nu2 = self._validate()
        corpus = as_corpus(X)
        corpus.check_no_empty("fit")
        encoder, codes = encode_labels(y, corpus.n_docs)
        if encoder.classes_.size > 2:
            raise DataError(f"VariationalSLDA is binary only, y has {encoder.classes_.size} "
                            "classes; use SupervisedTopicModel (one-vs-all) for multiclass")
        rng = as_generator(self.random_state)
        tok = corpus.tokens()
        offsets = tok.offsets.astype(np.int64)
        words = tok.words.astype(np.int32)
        D, V = corpus.n_docs, corpus.n_words
        n_tokens = int(words.size)
        doc_len = np.diff(offsets).astype(np.float64)
        ytil = 2.0 * codes.astype(np.float64) - 1.0

        # initial state: uniform phi (so the first M-step sees no topic signal in eta,
        # eta = 0 before it), topics seeded from random documents
        phi = np.full((n_tokens, K), 1.0 / K)
        gamma = alpha + doc_len[:, None] / K
        phibar = np.full((D, K), 1.0 / K)
        xi = np.zeros(D)
        stats = np.zeros((V, K))
        doc_terms = np.zeros(D)
        log_topics = np.log(_normalise(_seeded_stats(corpus.counts, K, rng) + 1.0))
        eta = np.zeros(K)
        state: dict[str, Any] = {}

        def step(_: int) -> dict[str, float]:
            nonlocal log_topics, eta
            t0 = time.perf_counter()
            stats[:] = 0.0
            sweeps = kernels.e_step(offsets, words, np.ascontiguousarray(log_topics.T), eta,
                                    ytil, c, alpha, phi, gamma, phibar, xi, stats, doc_terms,
                                    int(self.e_step_iter), float(self.e_step_tol))
            t1 = time.perf_counter()
            lam_kw = stats.T + s
            components = _normalise(lam_kw)
            log_topics = np.log(components)
            word_term = float(np.sum(lam_kw * log_topics))
            A, b = label_statistics(phi, offsets, phibar, xi, ytil)
            eta = label_m_step(A, b, c, nu2)
            label, prior = label_objective(A, b, xi, eta, c, nu2)
            t2 = time.perf_counter()
            state["J"] = float(doc_terms.sum()) + word_term + label + prior
            state["components"] = components
            return {"elbo": state["J"], "label_bound": label / (c * D),
                    "train_accuracy": float(np.mean((phibar @ eta > 0) == (ytil > 0))),
                    "e_step_sweeps": sweeps / D, "seconds_e_step": t1 - t0,
                    "seconds_m_step": t2 - t1}

        def objective() -> float:
            return state["J"] / n_tokens

        logger.info("VariationalSLDA: %d documents, %d words, %d tokens, K=%d, c=%g", D, V,
                    n_tokens, K, c)
        t0 = time.perf_counter()
        cbs = [*(self.callbacks or []), RelativeTolerance(float(self.tol), "VariationalSLDA")]
        result = run_chain(self, step, objective, int(self.max_iter), cbs, self.verbose, 1,
                           desc="vSLDA")
        logger.info("VariationalSLDA: %d EM iterations in %.2f s%s", result.n_iter,
                    time.perf_counter() - t0, "" if result.stopped_early else
                    " (max_iter reached before tol)")

        self.classes_ = encoder.classes_
        self.coef_ = eta[None, :].copy()
        self.components_ = state["components"]
        self.doc_topic_ = gamma / gamma.sum(axis=1, keepdims=True)
        self.zbar_ = phibar
        self.alpha_ = alpha
        token_topics = stats.sum(axis=0)
        self.topic_weights_ = token_topics / token_topics.sum()
        self.vocabulary_ = np.asarray(corpus.vocabulary, dtype=str)
        self.trace_ = result.trace
        self.n_iter_ = result.n_iter
        self.converged_ = bool(result.stopped_early)
        self.n_tokens_ = n_tokens
        return self

    # ------------------------------------------------------------------ prediction
    @property
    def topic_word_(self) -> np.ndarray:
        self._check_fitted()
        return np.asarray(self.components_)

    def _infer(self, corpus: Corpus) -> np.ndarray:
        """phibar (n_docs, K) of documents from their words alone (topics fixed, c = 0).

        Without the label term, tokens of the same word share their optimal phi, so this
        runs LDA's E-step per (document, distinct word) with the word's count: the link-free
        case of :func:`topiclink.kernels.var_rtm.e_step` (eta = 0, no neighbours), which is
        update (1) with c = 0 applied to all tokens of a word at once.
        """
        alpha = np.asarray(self.alpha_, dtype=np.float64)
        K = alpha.size
        counts = corpus.counts
        D = counts.shape[0]
        doc_len = corpus.doc_lengths.astype(np.float64)
        empty = int((doc_len == 0).sum())
        if empty:
            logger.info("%d of %d documents have no known words; they get the prior mean",
                        empty, D)
        gamma = np.tile(alpha, (D, 1)) + doc_len[:, None] / K
        phibar = np.full((D, K), 1.0 / K)
        rtm_kernels.e_step(counts.indptr.astype(np.int64), counts.indices.astype(np.int32),
                           counts.data.astype(np.float64), doc_len,
                           np.zeros(D + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                           np.ascontiguousarray(np.log(np.asarray(self.components_)).T),
                           np.zeros(K), alpha, gamma, phibar,
                           np.zeros((counts.shape[1], K)), np.zeros(D),
                           int(self.transform_iter), _TRANSFORM_TOL)
        return phibar

    def transform(self, X: Any) -> np.ndarray:
        """``E_q[zbar]`` = phibar (n_docs, K) of new documents, the classifier's input.

        The LDA E-step with the topics fixed and no label; a document without known
        words gets ``alpha / sum(alpha)``.
        """
        self._check_fitted()
        return self._infer(self._as_model_corpus(X))

    def decision_function(self, X: Any) -> np.ndarray:
        """``eta^T phibar`` (n_docs,): positive for ``classes_[1]``."""
        return self.transform(X) @ np.asarray(self.coef_[0])

    def predict(self, X: Any) -> np.ndarray:
        """``classes_[1]`` where ``eta^T phibar > 0``, else ``classes_[0]``."""
        return np.asarray(self.classes_)[(self.decision_function(X) > 0).astype(int)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """(n_docs, 2): ``sigmoid(eta^T phibar)`` for ``classes_[1]`` — the plug-in mean,
        not ``E_q[sigmoid(eta^T zbar)]``."""
        p = 0.5 * (1.0 + np.tanh(0.5 * self.decision_function(X)))
        return np.column_stack([1.0 - p, p])

    def score(self, X: Any, y: Any) -> float:
        """Accuracy."""
        from topiclink.metrics import accuracy

        return float(accuracy(np.asarray(y), self.predict(X)))

    def summary(self, n_words: int = 8) -> str:
        """Topics with their label weight eta_k."""
        text = super().summary(n_words)
        eta = " ".join(f"{v:+.3f}" for v in np.asarray(self.coef_[0]))
        return (f"vSLDA (c={self.c}), classes {list(self.classes_)}\n{text}\n"
                f"label weights eta: {eta}")


def _normalise(lam_kw: np.ndarray) -> np.ndarray:
    return lam_kw / lam_kw.sum(axis=1, keepdims=True)
