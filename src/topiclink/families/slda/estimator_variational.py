"""Supervised LDA with a logistic response by variational EM: the "vSLDA" baseline.

Blei & McAuliffe, "Supervised Topic Models" (NIPS 2007), with the binary logistic
response made tractable by the Jaakkola-Jordan bound (Jaakkola & Jordan 2000), the usual
"variational logistic sLDA".  It is the variational counterpart of gSLDA
(:class:`~topiclink.families.slda.estimator.SupervisedTopicModel`, Zhu et al. 2013), whose paper
claims its Gibbs sampler trains an order of magnitude faster than a variational sLDA;
this estimator exists to measure that claim fairly (Numba E-step, O(K) per token).

The model, the objective J and the updates are in :mod:`topiclink.families.slda.variational`
(:class:`~topiclink.families.slda.variational.VariationalSLDAEM`); this module validates, runs
the engine, publishes the estimates and predicts.

Prediction: the LDA E-step with the topics fixed and no label term (c = 0) gives
``q(theta) = Dir(gamma)`` and ``phibar`` of a new document.  ``transform`` returns the
expected topic proportions ``E_q[theta] = gamma / sum gamma`` (the library's contract);
the classifier uses ``phibar = E_q[zbar]`` (:meth:`VariationalSLDA.topic_features`):
``decision_function = eta^T phibar``, ``predict = 1[eta^T phibar > 0]`` and
``predict_proba = sigmoid(eta^T phibar)``, the plug-in mean (not the expectation of the
sigmoid under q).
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar

import numpy as np

from topiclink.data.checks import (
    NON_NEGATIVE,
    DataError,
    doc_topic_prior_vector,
    encode_labels,
)
from topiclink.data.corpus import Corpus
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import ClassifierCapability, TopicsMixin
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.fit_docs import documents_checkpoint_parameters
from topiclink.estimators.schema import TOPIC_ARRAYS, ArraySpec
from topiclink.estimators.variational import VariationalTopicsMixin
from topiclink.families.slda.variational import VariationalSLDAEM, VarSLDAData, VarSLDAState
from topiclink.parameters import shared
from topiclink.random import RandomState
from topiclink.topics.variational import expected_proportions

__all__ = ["VariationalSLDA"]

logger = logging.getLogger(__name__)



class VariationalSLDA(ClassifierCapability, VariationalTopicsMixin, TopicsMixin,
                      Estimator):
    """Binary logistic supervised LDA by variational EM (Jaakkola-Jordan bound): vSLDA.

    The variational baseline for gSLDA (:class:`SupervisedTopicModel`).  Model, objective
    and updates are in :mod:`topiclink.families.slda.variational`.  Binary labels only; for more
    classes use :class:`SupervisedTopicModel` (one-vs-all).

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
        EM iterations (per call of ``fit``; ``resume=True`` adds more).
    e_step_iter : int, default 20
        Maximum coordinate-ascent sweeps per document in each E-step.
    e_step_tol : float, default 1e-4
        A document's E-step stops when the mean absolute change of gamma in a sweep is
        below this.
    tol : float, default 1e-4
        Stop EM when J per token changes by less than ``tol`` relative to its previous
        value (0: run ``max_iter`` iterations).
    transform_iter : int, default 100
        Maximum sweeps per new document in :meth:`transform`, :meth:`topic_features`
        and prediction.
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
        EM iterations run (over all calls of ``fit`` with ``resume=True``).
    converged_ : bool
        Whether the last ``fit`` stopped on ``tol`` (False: it ran ``max_iter``
        iterations).
    n_tokens_ : int
    state_ : VarSLDAState
        phi, gamma, xi, the topics, eta and J: ``fit(X, y, resume=True)`` continues EM
        from it (also after ``save(path, full=True)`` and load).
    """

    cli_name = "vslda"  # ``topiclink fit vslda``

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "y")
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"vSLDA": {}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics", "c", "doc_topic_prior", "topic_word_prior",
                 "weight_prior_var", "max_iter", "e_step_iter"),
        "e_step_tol": NON_NEGATIVE,
        **shared("tol", "transform_iter", "random_state", "verbose", "callbacks"),
    }
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "coef_", "classes_", "doc_topic_", "zbar_", "alpha_",
        "topic_weights_", "vocabulary_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **TOPIC_ARRAYS,
        "zbar_": ArraySpec(("D", "K"), "f", "simplex"),
        "coef_": ArraySpec(("M", "K")),
        "classes_": ArraySpec(("C",), "*", None),
    }
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "converged_", "n_tokens_")
    _state_class = VarSLDAState

    def __init__(self, n_topics: int = 10, *, c: float = 1.0, doc_topic_prior: Any = None,
                 topic_word_prior: float = 0.01, weight_prior_var: float = 1.0,
                 max_iter: int = 100, e_step_iter: int = 20, e_step_tol: float = 1e-4,
                 tol: float = 1e-4, transform_iter: int = 100,
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    # ------------------------------------------------------------------ fitting
    def _fit_memory(self, corpus: Corpus) -> int:
        """Plus phi: K floats per token (the (N, K) variational parameters)."""
        return super()._fit_memory(corpus) + 8 * int(self.n_topics) * corpus.n_tokens

    def _algorithm(self) -> VariationalSLDAEM:
        K = int(self.n_topics)
        return VariationalSLDAEM(
            K, doc_topic_prior_vector(self.doc_topic_prior, K), float(self.topic_word_prior),
            c=float(self.c), weight_prior_var=float(self.weight_prior_var),
            e_step_iter=int(self.e_step_iter), e_step_tol=float(self.e_step_tol))

    @documents_checkpoint_parameters
    def fit(self, X: Any, y: Any, *, resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY) -> VariationalSLDA:
        """Fit to documents ``X`` with binary labels ``y``.

        Parameters
        ----------
        X : Corpus or (sparse) document-term matrix, shape (D, V)
            No empty document.
        y : array (D,)
            Two classes (any labels; the larger in sorted order is the positive class).
        resume : bool, default False
            Continue EM from ``state_`` (same documents and labels) for ``max_iter`` more
            iterations: 10 + 10 iterations equal 20.
        """
        self._validate_params()
        corpus = self._training_corpus(X)
        algorithm = self._algorithm()
        encoder, codes = encode_labels(y, corpus.n_docs)
        if encoder.classes_.size > 2:
            raise DataError(f"VariationalSLDA is binary only, y has {encoder.classes_.size} "
                            "classes; use SupervisedTopicModel (one-vs-all) for multiclass")
        data = VarSLDAData.from_corpus(corpus, codes)
        classes = encoder.classes_

        def publish(state: VarSLDAState, averaged: dict[str, np.ndarray] | None) -> None:
            self._publish(state, algorithm, data, classes, corpus)

        if not resume:
            logger.info("VariationalSLDA: %d documents, %d words, %d tokens, K=%d, c=%g",
                        data.n_docs, data.n_words, data.n_tokens, algorithm.n_topics,
                        algorithm.c)
        result, seconds = self._run_em(algorithm, data, "VariationalSLDA", resume=resume,
                                       publish=publish, checkpoint=checkpoint,
                                       checkpoint_every=checkpoint_every)
        logger.info("VariationalSLDA: %d EM iterations in %.2f s%s", result.n_iter, seconds,
                    "" if result.stopped_early else " (max_iter reached before tol)")
        self.converged_ = bool(result.stopped_early)
        return self

    def _publish(self, state: VarSLDAState, algorithm: VariationalSLDAEM,
                 data: VarSLDAData, classes: np.ndarray, corpus: Corpus) -> None:
        self.classes_ = classes
        self.coef_ = state.eta[None, :].copy()
        self.components_ = state.components
        self.doc_topic_ = expected_proportions(state.gamma)
        self.zbar_ = state.phibar.copy()
        self.alpha_ = algorithm.alpha
        token_topics = state.stats.sum(axis=0)
        self.topic_weights_ = token_topics / token_topics.sum()
        self.vocabulary_ = np.asarray(corpus.vocabulary, dtype=str)
        self.n_tokens_ = data.n_tokens
        self.n_iter_ = state.iteration

    # ------------------------------------------------------------------ prediction
    @property
    def topic_word_(self) -> np.ndarray:
        self._check_fitted()
        return np.asarray(self.components_)

    def _inference_log_topics(self) -> np.ndarray:
        return np.log(np.asarray(self.components_))

    def decision_function(self, X: Any) -> np.ndarray:
        """``eta^T phibar`` (n_docs,): positive for ``classes_[1]``."""
        return self.topic_features(X) @ np.asarray(self.coef_[0])

    def _probabilities(self, scores: np.ndarray) -> np.ndarray:
        """(n_docs, 2): ``sigmoid(eta^T phibar)`` for ``classes_[1]`` — the plug-in mean,
        not ``E_q[sigmoid(eta^T zbar)]``."""
        p = 0.5 * (1.0 + np.tanh(0.5 * np.asarray(scores)))
        return np.column_stack([1.0 - p, p])

    def summary(self, n_words: int = 8) -> str:
        """Topics with their label weight eta_k."""
        text = super().summary(n_words)
        eta = " ".join(f"{v:+.3f}" for v in np.asarray(self.coef_[0]))
        return (f"vSLDA (c={self.c}), classes {self.classes_.tolist()}\n{text}\n"
                f"label weights eta: {eta}")
