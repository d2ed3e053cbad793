"""The Dirichlet-multinomial mixture estimator: the estimator module of the throwaway
family folder of ``docs/adding-a-model.md``.  Importing it registers the class: it is
then found by ``topiclink.load``, the contract test and ``topiclink fit model``."""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np

from tests.examples.dmm.algorithm import CollapsedGibbsDMM, DMMState, ShardedDMM
from topiclink.data.checks import (
    POSITIVE,
)
from topiclink.data.corpus import Corpus
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import TopicsMixin
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.execution import ExecutorCodec, SharedClientMixin
from topiclink.parameters import SchemeCodec, SchemeForm, shared
from topiclink.topics.lda import TokenData


class DirichletMultinomialMixture(SharedClientMixin, TopicsMixin, Estimator):
    """One topic per document (GSDMM).  ``transform`` gives p(z_d = k | w_d).

    Parameters
    ----------
    n_topics : int, default 10
        K, the number of clusters (topics).
    doc_topic_prior, topic_word_prior : float, default 0.1
        alpha (of the cluster weights) and beta (of the topics).
    max_iter : int, default 30
        Gibbs sweeps.
    n_average : int, default 1
        Average the topics over the last ``n_average`` sweeps.
    scheme : "exact" or Shards("shards", S), default "exact"
        The exact sampler, or S document shards swept at once against the counts of the
        start of the sweep (``ShardedDMM``; the chain depends on S).
    executor : None, a thread count, a Dask client or address
        Where the shards run; never changes the chain.
    random_state, verbose, callbacks : as every estimator
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("X",)
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"GSDMM": {}}
    # ``topiclink fit dmm``, generated from the constructor (cli/estimator_commands.py)
    cli_name: ClassVar[str] = "dmm"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {"n_average": ("--average",)}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        # the shared parameters' forms from the glossary; alpha: a scalar only
        **shared("n_topics"), "doc_topic_prior": POSITIVE,
        **shared("topic_word_prior", "max_iter", "n_average"),
        "scheme": [SchemeForm("exact", "shards", sharded=("shards",))],
        **shared("executor", "random_state", "verbose", "callbacks")}
    _param_codecs: ClassVar[dict[str, Any]] = {"scheme": SchemeCodec(),
                                               "executor": ExecutorCodec()}
    _sharded_schemes = ("shards",)
    _local_schemes = ("exact",)
    _saved_arrays: ClassVar[tuple[str, ...]] = ("components_", "doc_topic_", "vocabulary_")
    _state_class = DMMState

    def __init__(self, n_topics: int = 10, *, doc_topic_prior: float = 0.1,
                 topic_word_prior: float = 0.1, max_iter: int = 30, n_average: int = 1,
                 scheme: Any = "exact", executor: Any = None,
                 random_state: Any = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self.n_topics = n_topics
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.max_iter = max_iter
        self.n_average = n_average
        self.scheme = scheme
        self.executor = executor
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks

    def fit(self, X: Any, y: None = None, *, resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY
            ) -> DirichletMultinomialMixture:
        """Fit to a corpus; ``resume=True`` continues the chain for ``max_iter`` more
        sweeps.  ``checkpoint=PATH`` writes the model with its full state to ``PATH`` every
        ``checkpoint_every`` (sweeps, or a duration such as ``"10min"``) and when the fit
        ends, and resumes from it (:mod:`topiclink.estimators.checkpoint`)."""
        self._validate_params()
        corpus = self._training_corpus(X)
        plan = self._execution_plan()
        algorithm: CollapsedGibbsDMM
        if plan.scheme == "shards":
            algorithm = ShardedDMM(
                int(self.n_topics), self.doc_topic_prior, self.topic_word_prior,
                plan.n_shards, executor=plan.executor,
                n_threads=plan.n_threads)
        else:
            algorithm = CollapsedGibbsDMM(int(self.n_topics), self.doc_topic_prior,
                                          self.topic_word_prior)
        data = TokenData.from_corpus(corpus)

        def publish(state: DMMState, averaged: dict[str, np.ndarray] | None) -> None:
            nkw = averaged["nkw"] if averaged is not None else state.nkw.astype(float)
            lam = nkw + self.topic_word_prior
            self.components_ = lam / lam.sum(axis=1, keepdims=True)
            self.vocabulary_ = np.asarray(corpus.vocabulary, dtype=str)
            self.doc_topic_ = np.eye(int(self.n_topics))[state.z]
            self.n_iter_ = state.iteration

        self._run_engine(algorithm, data, resume=resume, publish=publish,
                         checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         n_average=int(self.n_average))
        return self

    def _doc_topics(self, corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
        """p(z_d = k | w_d) = (m_k + alpha) prod_n phi_{k w_n}, normalised; the prior
        topic weights where a document has no known words."""
        counts = corpus.counts
        weights = np.log(self.doc_topic_.sum(axis=0) + self.doc_topic_prior)
        logp = counts @ np.log(self.components_).T + weights
        logp -= logp.max(axis=1, keepdims=True)
        p = np.exp(logp)
        return p / p.sum(axis=1, keepdims=True)
