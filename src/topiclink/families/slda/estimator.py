"""Supervised topic models by augment-and-collapse Gibbs: gSLDA (logistic) and Gibbs MedLDA
(hinge), binary and one-vs-all multiclass.

Zhu, Zheng & Zhang, "Improved Bayesian Logistic Supervised Topic Models with Data
Augmentation" (ACL 2013) and Zhu, Chen, Perkins & Zhang, "Gibbs Max-margin Topic Models
with Data Augmentation" (JMLR 2014).  LDA over the documents; the label of document d
enters through omega_d = eta^T zbar_d with the regularised pseudo-likelihood
psi(y_d) = exp(c y_d omega_d) / (1 + exp(omega_d))^c (logistic) or exp(-2c max(0, l -
ytil_d omega_d)) (hinge).  The sampler (state, step) is
:class:`topiclink.families.slda.algorithm.SupervisedGibbs`; this module validates, runs the engine,
publishes the estimates and predicts.
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar

import numpy as np

from topiclink.data.checks import (
    Options,
    doc_topic_prior_vector,
    encode_labels,
)
from topiclink.data.corpus import Corpus
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import ClassifierCapability, TopicsMixin
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.collapsed import (
    CollapsedTopicsMixin,
    doc_topic_estimate,
    topic_word_estimate,
)
from topiclink.estimators.fit_docs import documents_checkpoint
from topiclink.estimators.param_codecs import ParamCodec
from topiclink.estimators.schema import TOPIC_ARRAYS, ArraySpec
from topiclink.execution import ExecutorCodec, Shards, SharedClientMixin, open_executor
from topiclink.families.slda.algorithm import SupervisedData, SupervisedGibbs, SupervisedState
from topiclink.parameters import SchemeCodec, SchemeForm, shared
from topiclink.random import RandomState, spawn
from topiclink.relational.augment import LOSSES
from topiclink.relational.kernels.rtm_mh import AUTO_MIN_TOPICS
from topiclink.topics.fixed_topics import infer_doc_topics
from topiclink.topics.lda import TokenData

__all__ = ["SupervisedTopicModel"]

logger = logging.getLogger(__name__)


class SupervisedTopicModel(SharedClientMixin, ClassifierCapability, CollapsedTopicsMixin,
                           TopicsMixin, Estimator):
    """Supervised LDA with a logistic (gSLDA) or hinge (Gibbs MedLDA) label term.

    Binary labels train one chain; more classes train one binary chain per class
    (one-vs-all, run on ``n_jobs`` threads) and predict the arg-max decision value.

    Parameters
    ----------
    n_topics : int, default 10
    loss : {"logistic", "hinge"}
    c : float, default 1.0
        Regularisation constant: the weight of one label against the words (paper: 25
        binary, 256 multiclass; c = 1 is plain sLDA).
    hinge_cost : float, default 1.0
        l, the margin of the hinge loss.
    weight_prior_var : float, default 1.0
        nu^2 of the classifier prior eta ~ N(0, nu^2 I).
    doc_topic_prior, topic_word_prior : alpha (default 0.1) and beta (0.01)
    max_iter : int, default 200
    n_average : int, default 1
        Average eta and the topics over the last iterations.
    transform_iter : int, default 50
    n_jobs : int, default 1
        Threads for fitting and predicting the one-vs-all classes (each class has its own
        streams: results do not depend on it).
    scheme : "exact", "shards" or Shards("shards", n_shards), default "exact"
        The statistical scheme (it fixes the chain).  ``"exact"``: every chain sweeps all
        documents in turn (the sequential chain; one shard).  ``"shards"``: the documents
        in ``n_shards`` token-balanced shards (the name alone is 2;
        :class:`topiclink.execution.Shards` gives another count, at most the number of
        documents): each shard sweeps its tokens against a copy of the word-topic counts
        taken at the start of the iteration (AD-LDA) and draws its documents'
        augmentation with its own streams; the driver draws eta from the statistics the
        shards report.  The chain is fixed by the seed and the shards, never by the
        executor; ``Shards("shards", 1)`` is the exact chain.  A saved state resumes with
        the same shards.
    executor : None, int, distributed.Client or str, default None
        Where the shards run; never changes the chain.  None: this process, ``n_jobs``
        threads; an integer: that many threads; a Dask client, a scheduler address or
        ``"dask"`` (the current client): the shards on the workers of a Dask cluster
        (:class:`topiclink.execution.DaskExecutor`; needs ``pip install
        'topiclink[dask]'``).  Shared by ``clone``, dropped by pickling; a model file
        stores a thread count or an address, never a client (loaded: None).
    sampler : "auto", "gibbs" or "mh", default "auto"
        The Z step of the sequential chain: ``"gibbs"``, the exact conditional with the
        label term (O(K) per token); ``"mh"``, exact Metropolis-Hastings with LightLDA's
        O(1) document and word proposals and the label factor in the acceptance ratio
        (:mod:`topiclink.relational.kernels.rtm_mh`): cheaper per token at large K, more
        sweeps to mix; ``"auto"``: ``"mh"`` from
        :data:`~topiclink.relational.kernels.rtm_mh.AUTO_MIN_TOPICS` (1,000) topics on,
        else ``"gibbs"``.  ``scheme="shards"`` uses ``"gibbs"``.
    evaluate_every, random_state, verbose, callbacks : as for LDA

    Attributes
    ----------
    classes_ : ndarray of the labels
    coef_ : (n_classifiers, K) eta of each binary classifier (one row when binary)
    all_components_ : (n_classifiers, K, V) topics of each classifier's chain;
        ``components_`` is the first chain's
    trace_ : per-iteration figures of the first chain (``train_accuracy``, ``label_loglik``,
        step timings, ``log_likelihood``)
    state_ : SupervisedState, the stacked chains (``fit(X, y, resume=True)`` continues)
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "y")
    #: ``topiclink fit slda`` (:mod:`topiclink.cli.estimator_commands`): the paper's
    #: setting (c = 25, alpha = 0.1)
    cli_name: ClassVar[str] = "slda"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {"doc_topic_prior": ("--alpha",)}
    cli_defaults: ClassVar[dict[str, Any]] = {"c": 25.0, "doc_topic_prior": 0.1}
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {
        "gSLDA": {"loss": "logistic"}, "Gibbs MedLDA": {"loss": "hinge"},
        "gMedLDA": {"loss": "hinge"}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics"), "loss": [Options(*LOSSES)],
        **shared("c", "hinge_cost", "weight_prior_var", "doc_topic_prior",
                 "topic_word_prior", "max_iter", "n_average", "transform_iter", "n_jobs",
                 "evaluate_every"),
        "scheme": [SchemeForm("exact", "shards", sharded=("shards",))],
        **shared("executor"), "sampler": [Options("auto", "gibbs", "mh")],
        **shared("random_state", "verbose", "callbacks"),
    }
    _param_codecs: ClassVar[dict[str, ParamCodec]] = {"scheme": SchemeCodec(),
                                                      "executor": ExecutorCodec()}
    _sharded_schemes = ("shards",)
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "all_components_", "coef_", "classes_", "vocabulary_", "alpha_",
        "doc_topic_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **TOPIC_ARRAYS,
        "all_components_": ArraySpec(("M", "K", "V"), "f", "simplex"),
        "coef_": ArraySpec(("M", "K")),
        "classes_": ArraySpec(("C",), "*", None),
    }
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_",)
    _state_class = SupervisedState

    def __init__(self, n_topics: int = 10, *, loss: str = "logistic", c: float = 1.0,
                 hinge_cost: float = 1.0, weight_prior_var: float = 1.0,
                 doc_topic_prior: float | None = None, topic_word_prior: float = 0.01,
                 max_iter: int = 200, n_average: int = 1, transform_iter: int = 50,
                 n_jobs: int | None = 1, evaluate_every: int = 10,
                 scheme: str | Shards = "exact", executor: Any = None,
                 sampler: str = "auto", random_state: RandomState = None,
                 verbose: bool = False, callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    @property
    def model_name_(self) -> str:
        return "gSLDA" if self.loss == "logistic" else "Gibbs MedLDA"

    def _check_params(self) -> None:
        if self.loss == "hinge" and self.hinge_cost < 1:
            raise ValueError(f"hinge_cost must be >= 1, got {self.hinge_cost}")
        if self.n_average > self.max_iter:
            raise ValueError("n_average must not exceed max_iter")

    def _algorithm(self) -> SupervisedGibbs:
        K = int(self.n_topics)
        plan = self._execution_plan()
        return SupervisedGibbs(
            K, doc_topic_prior_vector(self.doc_topic_prior, K), float(self.topic_word_prior),
            loss=self.loss, c=float(self.c), hinge_cost=float(self.hinge_cost),
            weight_prior_var=float(self.weight_prior_var),
            n_threads=plan.n_threads, n_shards=plan.n_shards,
            executor=plan.executor,
            name=self.model_name_, sampler=self._token_sampler(plan.n_shards))

    def _token_sampler(self, n_shards: int) -> str:
        if self.sampler == "auto":
            return ("mh" if n_shards == 1 and int(self.n_topics) >= AUTO_MIN_TOPICS
                    else "gibbs")
        if self.sampler == "mh" and n_shards != 1:
            raise ValueError("sampler='mh' runs the sequential chain: use scheme='exact' "
                             "(or sampler='gibbs')")
        return str(self.sampler)

    @documents_checkpoint
    def fit(self, X: Any, y: Any, *, resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY) -> SupervisedTopicModel:
        """Fit to documents ``X`` with labels ``y`` (any hashable labels, >= 2 classes).

        ``resume=True`` continues the chains (same documents and labels) for ``max_iter``
        more iterations.
        """
        self._validate_params()
        corpus = self._training_corpus(X)
        algorithm = self._algorithm()
        encoder, codes = encode_labels(y, corpus.n_docs)
        n_classes = encoder.classes_.size
        rows = [codes == 1] if n_classes == 2 else [codes == k for k in range(n_classes)]
        data = SupervisedData(TokenData.from_corpus(corpus),
                              np.stack(rows).astype(np.int8))
        n_shards = algorithm.n_shards
        if n_shards > corpus.n_docs:
            raise ValueError(f"scheme: n_shards ({n_shards}) exceeds the number of "
                             f"documents ({corpus.n_docs})")

        def publish(state: SupervisedState, averaged: dict[str, np.ndarray] | None) -> None:
            algorithm.sync(state, ("ndk",), chains=(0,))    # kept shards: doc_topic_
            self._publish(state, averaged, algorithm, encoder.classes_, corpus)

        self._run_engine(algorithm, data, resume=resume, publish=publish,
                         checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         n_average=int(self.n_average),
                         evaluate_every=int(self.evaluate_every))
        return self

    def _publish(self, state: SupervisedState, averaged: dict[str, np.ndarray] | None,
                 algorithm: SupervisedGibbs, classes: np.ndarray, corpus: Corpus) -> None:
        if averaged is not None:
            eta_hat, nwk_hat = averaged["eta"], averaged["nwk"]
        else:
            eta_hat, nwk_hat = state.eta.copy(), state.nwk.astype(np.float64)
        self.classes_ = classes
        self.coef_ = eta_hat
        self.all_components_ = np.stack([topic_word_estimate(nw, nw.sum(axis=0),
                                                             algorithm.beta)
                                         for nw in nwk_hat])
        self.components_ = self.all_components_[0]
        self.doc_topic_ = doc_topic_estimate(state.ndk[0], algorithm.alpha)
        self.vocabulary_ = np.asarray(corpus.vocabulary, dtype=str)
        self.alpha_ = algorithm.alpha
        self.n_iter_ = state.iteration

    # ------------------------------------------------------------------ prediction
    def _zbar(self, corpus: Any, m: int, rng: np.random.Generator) -> np.ndarray:
        return infer_doc_topics(corpus, np.ascontiguousarray(self.all_components_[m].T),
                                np.asarray(self.alpha_), rng, n_iter=int(self.transform_iter),
                                smooth=False)

    def decision_function(self, X: Any) -> np.ndarray:
        """eta^T zbar of each document: (n_docs,) when binary, else (n_docs, n_classes);
        each classifier infers zbar under its own topics."""
        self._check_fitted()
        corpus = self._as_model_corpus(X)
        n_models = self.coef_.shape[0]
        rngs = spawn(self._prediction_generator(), n_models)
        threads = min(self._execution_plan().n_threads, n_models)

        def score(m: int) -> np.ndarray:
            return self._zbar(corpus, m, rngs[m]) @ self.coef_[m]

        # the inference kernel releases the GIL; one stream per class
        with open_executor(threads) as executor:
            columns = executor.map(score, range(n_models))
        scores = np.column_stack(columns)
        return scores[:, 0] if self.classes_.size == 2 else scores

    def _probabilities(self, scores: np.ndarray) -> np.ndarray:
        """Sigmoid for binary, normalised one-vs-all sigmoids for more classes (logistic
        loss only)."""
        if self.loss != "logistic":
            raise ValueError("the hinge loss gives decision values, not probabilities; "
                             "use decision_function()")
        return super()._probabilities(scores)

    def summary(self, n_words: int = 8) -> str:
        text = super().summary(n_words)
        lines = [f"{'gSLDA' if self.loss == 'logistic' else 'Gibbs MedLDA'} (c={self.c}), "
                 f"classes {self.classes_.tolist()}", text]
        names = [str(self.classes_[1])] if self.classes_.size == 2 else \
            [str(c) for c in self.classes_]
        for m, name in enumerate(names):
            eta = self.coef_[m]
            order = np.argsort(eta)
            words = [" ".join(w[:3]) for w in self._top_words_of(m)]
            lines.append(f"class {name}: most positive topics "
                         + ", ".join(f"{k} ({eta[k]:+.2f}: {words[k]})" for k in order[::-1][:2])
                         + "; most negative "
                         + ", ".join(f"{k} ({eta[k]:+.2f}: {words[k]})" for k in order[:2]))
        return "\n".join(lines)

    def _top_words_of(self, m: int, n: int = 3) -> list[list[str]]:
        from topiclink.estimators.topic_display import top_word_indices

        order = top_word_indices(np.asarray(self.all_components_[m]), n)
        return [[str(self.vocabulary_[j]) for j in row] for row in order]
