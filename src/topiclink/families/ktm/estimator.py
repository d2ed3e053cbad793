"""Kernel topic models (the estimator): Hennig, Stern, Herbrich & Graepel (AISTATS 2012).

Topic proportions pi_d = softmax(y_d) with y_dk = h_k(phi_d) + N(0, tau^2) and
h_k ~ GP(m_k, kernel) over the document features phi_d (numbers, categories coded as
numbers for a kernel that understands them, graph positions).  The algorithm is
:mod:`topiclink.families.ktm.algorithm`; this module validates, runs the engine, publishes the
estimates and predicts priors at new feature values from the fitted GPs.
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar

import numpy as np
from sklearn.gaussian_process.kernels import ConstantKernel, Kernel, RationalQuadratic

from topiclink.data.checks import (
    POSITIVE,
    Boolean,
    DataError,
    InstanceOf,
    Integer,
    NoneValue,
    as_real,
    check_memory,
)
from topiclink.data.corpus import Corpus
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import TopicsMixin
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.feature_prior import FeaturePriorTopicsMixin
from topiclink.estimators.fit_docs import documents_checkpoint
from topiclink.estimators.param_codecs import SklearnKernelCodec
from topiclink.estimators.schema import TOPIC_ARRAYS, ArraySpec
from topiclink.families.ktm.algorithm import KTMData, KTMState, KTMVariational, bridge_to_dirichlet
from topiclink.families.ktm.gp.regression import FITCGP, HeteroscedasticGP
from topiclink.parameters import shared
from topiclink.random import RandomState

__all__ = ["KernelTopicModel"]

logger = logging.getLogger(__name__)


def default_kernel() -> Kernel:
    """amplitude x rational quadratic over all features (length scale 1)."""
    return ConstantKernel(1.0) * RationalQuadratic(length_scale=1.0, alpha=1.0)


class KernelTopicModel(FeaturePriorTopicsMixin, TopicsMixin, Estimator):
    """Kernel topic model: topic proportions that vary smoothly with document features.

    Parameters
    ----------
    n_topics : int, default 10
        K (>= 3: the Laplace bridge between Dirichlet and Gaussian needs it).
    kernel : scikit-learn kernel or None
        Over the features (``topiclink.families.ktm.gp.kernels``: ``SOTUKernel``,
        ``CategoricalKernel``,
        ``ShortestPathKernel``, ``OnColumns``, or any ``sklearn.gaussian_process.kernels``
        composition).  None: ``ConstantKernel(1) * RationalQuadratic(1, 1)``.  Its
        hyper-parameters (within their bounds) are optimised every ``optimize_every``
        iterations; the fitted kernel is ``kernel_``.
    topic_word_prior : float, default 0.01
        beta.
    tau : float, default 1.0
        Standard deviation of the noise between h_k and y_dk (the start of its
        optimisation with ``fit_tau``).
    fit_tau : bool, default False
        Optimise tau with the kernel's hyper-parameters.  Off by default: the summed
        evidence of the messages drives tau away from where held-out documents are best
        predicted -- up on hep-th abstracts with a year feature (on one 800-abstract
        sample held-out perplexity 620 after 20 iterations, after 100 643 with the
        hyper-prior and 648 without), down to its bound on Cora subgraphs -- while with
        tau = 1 it stayed level or improved from 20 to 100 iterations on every sample of
        hep-th, the State of the Union and 20 Newsgroups (newsgroup kernel, inducing
        points: 623 -> 622, against 642 -> 646) tried (``benchmarks/ktm_hyperpriors.py``).
    hyperprior_scale : float or None, default 1.0
        Standard deviation of a normal prior on every optimised log hyper-parameter (the
        kernel's, and log tau with ``fit_tau``), centred on its starting value: the
        evidence maximisation is a MAP fit that keeps the hyper-parameters near the
        kernel you give unless the messages insist.  None: maximum evidence (ML-II).
        Chosen among 0.5, 1 and 2 on an 800-abstract hep-th sample (held-out perplexity
        after 100 iterations 586, 574, 620; 627 without a prior).
    max_iter : int, default 50
        Outer iterations (words, messages, GPs) per call of ``fit``.
    n_inner : int, default 3
        Variational passes over each document per outer iteration.
    optimize_every : int, default 10
        Iterations between evidence maximisations (L-BFGS, analytic gradients); 0: never.
    min_precision : float, default 1e-6
        Floor of the messages' precisions (clipped ones are counted in
        ``trace_["clipped"]``).
    n_inducing : int or None, default None
        None: exact GPs (O(D^3) per topic and iteration; fine to a few thousand
        documents).  M: with more than M documents, FITC inducing-point GPs on M seeded
        documents (O(D M^2)); kernel hyper-parameters fitted on those M documents.
    transform_iter : int, default 50
        Gibbs sweeps used to infer new documents' proportions (topics fixed).
    evaluate_every : int, default 1
    random_state, verbose, callbacks : as every estimator

    Attributes
    ----------
    components_ : (K, V) topics; doc_topic_ : (D, K) E[pi_d]
    doc_prior_ : (D, K) each training document's prior Dirichlet (its GP cavity)
    alpha_ : (K,) mean of ``doc_prior_`` (new documents without features)
    kernel_ : the kernel with the fitted hyper-parameters; tau_ : float
    features_ : (D, F) training features; messages_mean_, messages_var_ : (D, K)
    prior_mean_ : (K,) the GP prior means m_k
    trace_ : ``"log_likelihood"`` (training log-likelihood per token; the training
        perplexity is ``exp(-value)``), ``"log_evidence"``, ``"clipped"``, ``"tau"``
    """

    cli_name = "ktm"  # ``topiclink fit ktm``

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "features")
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"KTM": {}}
    _param_codecs: ClassVar[dict[str, Any]] = {
        "kernel": SklearnKernelCodec(("sklearn.gaussian_process.kernels",
                                      "topiclink.families.ktm.gp.kernels"))}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        "n_topics": [Integer(3)],
        "kernel": [NoneValue(), InstanceOf(Kernel, name="a scikit-learn kernel")],
        **shared("topic_word_prior"), "tau": POSITIVE, "fit_tau": [Boolean()],
        **shared("max_iter"), "n_inner": [Integer(1)], **shared("optimize_every"),
        "min_precision": POSITIVE, **shared("transform_iter"),
        "n_inducing": [NoneValue(), Integer(2)],
        "hyperprior_scale": [NoneValue(), *POSITIVE],
        **shared("evaluate_every", "random_state", "verbose", "callbacks"),
    }
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        *TOPIC_ARRAYS, "doc_prior_", "features_", "messages_mean_", "messages_var_",
        "prior_mean_", "kernel_theta_")
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "tau_", "n_tokens_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **TOPIC_ARRAYS,
        "doc_prior_": ArraySpec(("D", "K"), "f", "positive"),
        "features_": ArraySpec(("D", "F"), "f", "finite"),
        "messages_mean_": ArraySpec(("D", "K"), "f", "finite"),
        "messages_var_": ArraySpec(("D", "K"), "f", "positive"),
        "prior_mean_": ArraySpec(("K",), "f", "finite"),
        "kernel_theta_": ArraySpec(("P",), "f", "finite"),
    }
    _scalar_specs: ClassVar[dict[str, str]] = {"tau_": "positive", "n_tokens_": "count"}
    _state_class = KTMState

    def __init__(self, n_topics: int = 10, *, kernel: Kernel | None = None,
                 topic_word_prior: float = 0.01, tau: float = 1.0, fit_tau: bool = False,
                 max_iter: int = 50, n_inner: int = 3, optimize_every: int = 10,
                 min_precision: float = 1e-6, n_inducing: int | None = None,
                 hyperprior_scale: float | None = 1.0, transform_iter: int = 50,
                 evaluate_every: int = 1, random_state: RandomState = None,
                 verbose: bool = False, callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    def _kernel(self) -> Kernel:
        return default_kernel() if self.kernel is None else self.kernel

    def _check_params(self) -> None:
        """Every hyper-parameter of the kernel (composites included) is a finite number
        > 0 or an array of them, and its search bounds (unless "fixed") are numbers > 0
        (scikit-learn kernels accept anything at construction)."""
        kernel = self._kernel()
        try:
            values = kernel.get_params(deep=True)
            hyper = list(kernel.hyperparameters)
        except Exception as exc:  # noqa: BLE001 - a kernel whose parameters are broken
            raise ValueError(f"KernelTopicModel: kernel {type(kernel).__name__} has invalid "
                             f"parameters ({type(exc).__name__}: {exc})".splitlines()[0]
                             ) from None
        for h in hyper:
            for what, value in ((h.name, values.get(h.name)),
                                (f"{h.name}_bounds", None if h.fixed else h.bounds)):
                if value is None and what != h.name:
                    continue
                try:
                    arr = as_real(value, what)
                except DataError:
                    arr = np.array([np.nan])
                if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
                    raise ValueError(f"KernelTopicModel: kernel parameter {what} must be a "
                                     f"finite number > 0 (or an array of them), got "
                                     f"{value!r}")

    def _check_kernel_on(self, features: np.ndarray, where: str = "KernelTopicModel",
                         theta: np.ndarray | None = None) -> None:
        """The kernel against the features it will read, before any fitting: the search
        bounds of every free hyper-parameter are ordered (lower <= upper) and contain its
        starting value, ``theta`` (a saved ``kernel_theta_``) has one entry per free
        hyper-parameter, and the kernel evaluates on two rows of ``features`` to a finite
        2 x 2 matrix (an anisotropic length scale with one entry per column, columns
        that exist).  One-line ValueError naming ``kernel``."""
        kernel = self._kernel()
        name = f"{where}: kernel {kernel!r}"
        for h in kernel.hyperparameters:
            if h.fixed:
                continue
            bounds = np.atleast_2d(np.asarray(h.bounds, dtype=np.float64))
            value = np.atleast_1d(np.asarray(kernel.get_params()[h.name], dtype=np.float64))
            if np.any(bounds[:, 0] > bounds[:, 1]):
                raise ValueError(f"{name}: the bounds of {h.name} have a lower bound above "
                                 f"the upper one ({bounds.tolist()})")
            lo, hi = bounds[:, 0], bounds[:, 1]
            if value.size in (1, lo.size) and np.any((value < lo) | (value > hi)):
                raise ValueError(f"{name}: {h.name} = {value.tolist()} is outside its "
                                 f"search bounds {bounds.tolist()} (start inside them, or "
                                 f"fix it with {h.name}_bounds='fixed')")
        if theta is not None and np.shape(theta) != np.shape(kernel.theta):
            raise ValueError(f"{name} has {np.size(kernel.theta)} free hyper-parameters, "
                             f"kernel_theta_ {np.size(theta)}")
        rows = features[: min(2, features.shape[0])]
        try:
            gram = np.asarray((kernel if theta is None else kernel.clone_with_theta(theta))(
                rows), dtype=np.float64)
        except Exception as exc:  # noqa: BLE001 - scikit-learn's checks, or a broken kernel
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(f"{name} does not fit the features ({features.shape[1]} "
                             f"columns): {reason}") from None
        if gram.shape != (rows.shape[0], rows.shape[0]) or not np.all(np.isfinite(gram)):
            raise ValueError(f"{name} gives a non-finite or misshaped matrix on the features "
                             f"({features.shape[1]} columns)")

    def _fit_memory(self, corpus: Corpus) -> int:
        """Plus the GPs: a few D x D matrices (exact) or D x M (FITC), and the messages
        and priors (several D x K)."""
        K, D = int(self.n_topics), corpus.n_docs
        M = D if self.n_inducing is None else min(D, int(self.n_inducing))
        return super()._fit_memory(corpus) + 8 * 4 * D * M + 8 * 6 * D * K

    def _algorithm(self) -> KTMVariational:
        return KTMVariational(int(self.n_topics), self._kernel(),
                              beta=float(self.topic_word_prior), n_inner=int(self.n_inner),
                              optimize_every=int(self.optimize_every), tau=float(self.tau),
                              fit_tau=bool(self.fit_tau),
                              min_precision=float(self.min_precision),
                              n_inducing=self.n_inducing,
                              hyperprior_scale=self.hyperprior_scale)

    def _features(self, features: Any, n_docs: int, what: str) -> np.ndarray:
        if features is None:
            raise DataError(f"{what}: features must be given (an (n_docs, n_features) "
                            "array of numbers)")
        try:
            values = as_real(features, f"{what}: features")
        except DataError as exc:
            raise DataError(f"{exc} (code categories as numbers for a kernel that reads "
                            "them)") from None
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim != 2 or values.shape[0] != n_docs:
            raise DataError(f"{what}: features must have shape ({n_docs}, n_features), got "
                            f"{values.shape}")
        if values.shape[1] == 0:
            raise DataError(f"{what}: features have no column (the kernel needs at least "
                            "one feature per document)")
        fitted = getattr(self, "features_", None)
        if fitted is not None and what != "fit" and values.shape[1] != fitted.shape[1]:
            raise DataError(f"{what}: features have {values.shape[1]} columns but the model "
                            f"was fitted on {fitted.shape[1]}")
        bad = ~np.isfinite(values)
        if bad.any():
            d, f = (int(i) for i in np.argwhere(bad)[0])
            raise DataError(f"{what}: feature {f} of document {d} is {values[d, f]}")
        if what == "fit" and n_docs > 1:
            constant = np.flatnonzero(np.ptp(values, axis=0) == 0)
            if constant.size:
                raise DataError(f"fit: feature {int(constant[0])} has the same value "
                                f"({values[0, constant[0]]:g}) for every document: it "
                                "carries no information for the kernel (drop it)")
        return np.ascontiguousarray(values)

    @documents_checkpoint
    def fit(self, X: Any, y: None = None, *, features: Any = None, resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY) -> KernelTopicModel:
        """Fit to documents ``X`` with their ``features`` (D, F) (numbers the kernel reads).

        ``resume=True`` continues for ``max_iter`` more iterations on the same data.
        """
        if y is not None:
            raise TypeError("KernelTopicModel.fit takes the features as a keyword: "
                            "fit(X, features=...)")
        self._validate_params()
        corpus = self._training_corpus(X)
        values = self._features(features, corpus.n_docs, "fit")
        self._check_kernel_on(values)
        algorithm = self._algorithm()
        data = KTMData(corpus.counts.tocsr(), values)
        logger.info("KTM: %d documents, %d words, %d tokens, %d features, K=%d",
                    corpus.n_docs, corpus.n_words, int(data.n_tokens), values.shape[1],
                    algorithm.K)

        def publish(state: KTMState, averaged: dict[str, np.ndarray] | None) -> None:
            self._publish(state, algorithm, data, corpus.vocabulary)

        self._run_engine(algorithm, data, resume=resume, publish=publish,
                         checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         evaluate_every=int(self.evaluate_every))
        self.n_tokens_ = float(data.n_tokens)
        if self.n_iter_ >= int(self.optimize_every or 0):
            for found, where in ((algorithm.parameters_at_bounds(self.state_),
                                  "on a bound of its search range"),
                                 (algorithm.parameters_far_from_prior(self.state_),
                                  "far (> 3 prior standard deviations) from its start")):
                if found:
                    logger.warning(
                        "KTM: evidence maximisation left %s %s; the summed evidence of the "
                        "messages is not a reliable guide on these data: consider "
                        "optimize_every=0 with hyper-parameters set by hand or by "
                        "validation", ", ".join(found), where)
        return self

    def _publish(self, state: KTMState, algorithm: KTMVariational, data: KTMData,
                 vocabulary: np.ndarray) -> None:
        self.components_ = algorithm.topics(state)
        self.doc_topic_ = algorithm.proportions(state)
        self.topic_weights_ = state.nk / max(float(state.nk.sum()), 1e-300)
        self.vocabulary_ = np.asarray(vocabulary, dtype=str)
        self.doc_prior_ = state.alpha.copy()
        self.alpha_ = state.alpha.mean(axis=0)
        self.features_ = data.features
        self.messages_mean_ = state.msg_mean.copy()
        self.messages_var_ = np.where(np.isfinite(state.msg_var), state.msg_var, 1e300)
        self.prior_mean_ = state.prior_mean.copy()
        self.kernel_theta_ = state.theta.copy()
        self.tau_ = float(state.tau)
        self.n_iter_ = state.iteration
        self.__dict__.pop("_gps", None)

    def _check_loaded_fields(self, where: str) -> None:
        """A loaded model's kernel (the ``kernel`` parameter of the file) against its saved
        features and fitted hyper-parameters (``features_``, ``kernel_theta_``)."""
        super()._check_loaded_fields(where)
        self._check_kernel_on(np.asarray(self.features_), where,
                              theta=np.asarray(self.kernel_theta_))

    @property
    def kernel_(self) -> Kernel:
        """The kernel with the fitted hyper-parameters."""
        self._check_fitted()
        kernel = self._kernel()
        return kernel.clone_with_theta(self.kernel_theta_) if self.kernel_theta_.size \
            else kernel

    # ------------------------------------------------------------------ prediction
    def _gp_list(self) -> list[HeteroscedasticGP | FITCGP]:
        gps = self.__dict__.get("_gps")
        if gps is None:
            kernel = self.kernel_
            tau2 = self.tau_ ** 2
            K, D = self.components_.shape[0], self.features_.shape[0]
            if self.n_inducing is not None and D > int(self.n_inducing):
                gps = [FITCGP(kernel, self.features_, self.messages_mean_[:, k],
                              self.messages_var_[:, k], mean=float(self.prior_mean_[k]),
                              tau=self.tau_, n_inducing=int(self.n_inducing),
                              random_state=0) for k in range(K)]
            else:
                gps = [HeteroscedasticGP.from_kernel(kernel, self.features_,
                                                     self.messages_mean_[:, k],
                                                     self.messages_var_[:, k] + tau2,
                                                     mean=float(self.prior_mean_[k]))
                       for k in range(K)]
            self.__dict__["_gps"] = gps
        return gps

    def predict_alpha(self, features: Any) -> np.ndarray:
        """The Dirichlet prior (n, K) of documents with these features: each topic's GP
        posterior at them (mean, variance + tau^2) mapped by the Laplace bridge."""
        self._check_fitted()
        n = int(np.shape(features)[0]) if np.ndim(features) else 1
        values = self._features(features, n, "predict_alpha")
        # the K topics' GPs (built on first use: an exact GP keeps two D x D matrices, a
        # FITC one M x M and D x M) and the cross-covariances with the n documents
        K, D = self.components_.shape[0], self.features_.shape[0]
        M = D if self.n_inducing is None or D <= int(self.n_inducing) else int(self.n_inducing)
        built = self.__dict__.get("_gps") is not None
        check_memory((0.0 if built else 8.0 * K * (2 * M * M + 2 * D * M)) + 24.0 * D * n,
                     f"predict_alpha: {n} documents x {K} topics' GPs over {D} training "
                     "documents", "predict fewer documents at a time"
                     + (", or fit with n_inducing (FITC GPs of M x M)" if M == D else ""))
        mean = np.empty((n, self.components_.shape[0]))
        var = np.empty_like(mean)
        for k, gp in enumerate(self._gp_list()):
            mean[:, k], var[:, k] = gp.predict(values)
        return bridge_to_dirichlet(mean, var + self.tau_ ** 2)

    def summary(self, n_words: int = 8) -> str:
        text = super().summary(n_words)
        return (f"{text}\nkernel: {self.kernel_!r}, tau = {self.tau_:.3g}; log evidence "
                f"{self.trace_['log_evidence'][-1]:.1f}")
