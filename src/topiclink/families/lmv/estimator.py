"""Topic-adjusted visibility (LMV) and Pairwise-Link-LDA: the estimator.

Tan, Chan & Zheng, "Topic-adjusted visibility metric for scientific articles", Annals of
Applied Statistics 2016 (``docs/design/lmv.md``).  LDA for the words; for every ordered
pair of documents a citing topic s ~ theta_d, a cited topic r ~ theta_d' and
y_dd' ~ Bernoulli(tau_d' B_sr): B is a K x K blockmodel of topic-to-topic citation rates
and tau_d' the *visibility* of the cited document, how likely it is to be cited given the
topics.  ``visibility=False`` fixes tau = 1: Pairwise-Link-LDA.  Batch variational Bayes
(the paper's Algorithm 1) is :class:`topiclink.families.lmv.algorithm.BatchLMV`.
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from topiclink.callbacks import RelativeTolerance
from topiclink.data.checks import (
    Boolean,
    DataError,
    Integer,
    NoneValue,
    Options,
    Real,
    check_init_topics,
)
from topiclink.data.corpus import Corpus
from topiclink.data.links import as_links
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import (
    LinkPredictionMixin,
    ScoresAreProbabilitiesMixin,
    TopicsMixin,
)
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.param_codecs import ParamCodec
from topiclink.estimators.schema import LINK_ARRAYS, TOPIC_ARRAYS, ArraySpec
from topiclink.estimators.training_documents import publish_training_documents
from topiclink.estimators.user_warnings import warn_user
from topiclink.estimators.variational import VariationalTopicsMixin
from topiclink.execution import ExecutorCodec, SharedClientMixin
from topiclink.families.lmv.algorithm import BatchLMV, LMVData, LMVState
from topiclink.families.lmv.stochastic import LMVSChunk, LMVSState, StochasticLMV
from topiclink.families.lmv.times import as_times
from topiclink.inference.engine import State
from topiclink.parameters import RobbinsMonro, shared
from topiclink.random import RandomState

__all__ = ["VisibilityTopicModel"]

logger = logging.getLogger(__name__)

_PAIR = [NoneValue(), Real(0, low_open=True)]


class VisibilityTopicModel(SharedClientMixin, ScoresAreProbabilitiesMixin, LinkPredictionMixin,
                           VariationalTopicsMixin, TopicsMixin, Estimator):
    """LMV: LDA + a mixed-membership blockmodel of citations + document visibility.

    Parameters
    ----------
    n_topics : int, default 10
        K.
    visibility : bool, default True
        Fit a visibility tau_d per document (LMV); False: tau = 1 (Pairwise-Link-LDA).
    inference : {"batch", "stochastic"}
        "batch": variational Bayes over every pair (Algorithm 1, cost O(D^2 K^2) per
        iteration); "stochastic" (LMVS): stochastic VI on minibatches of documents with
        case-control pairs (Algorithm 2; see ``batch_size``, ``n0``, ``step_*``).
    doc_topic_prior : float, optional
        alpha (default 1/K).
    topic_word_prior : float, default 0.1
        eta of the topics' Dirichlet prior.
    blockmodel_prior : (a0, b0), default (1, 1)
        Beta prior of every blockmodel entry B_ij.
    visibility_prior : (g0, h0), default (1, 1)
        Beta prior of every visibility tau_d.
    max_iter : int, default 100
        Outer iterations (batch: pairs, words, topics, the nested (a, b)/(g, h) loop;
        stochastic: one sweep over the documents in minibatches).
    tol : float, optional
        Batch: stop when L* changes by less than ``tol`` relative to its previous value
        (default 1e-5, the paper's).  Stochastic: the tolerance eps of the change
        ``c_w = ||diag(B_w - B_{w-1})|| / ||diag(B_{w-1})||`` of sweep w (default 0.05,
        the paper's value for Cora; 0.1 for KDD); how it is used: ``stopping``.
        0: run ``max_iter`` iterations.
    stopping : {"window", "paper"}, default "window"
        Stochastic only.  ``"paper"``: stop at the first sweep with ``c_w < eps``
        (supplement S4).  ``"window"``: stop at the first sweep w >= ``min_sweeps`` whose
        changes averaged over the last ``tol_window`` sweeps are below eps.  Why not the
        paper's rule by default: ``c_w`` is noisy (each sweep is one random order of
        minibatches), so a single calm sweep fires it long before the predictive rank
        stops improving.  Measured on Cora (folds 0 and 1 of 5, K = 5, 9, 13, two seeds,
        eta = 0.5, minibatch 200, the paper's step sizes; predictive rank after each of 40
        sweeps, 12 runs; ``benchmarks/results/lmv_stop_rule_cora.json``), the excess of
        the rank where a rule stops over the mean rank of sweeps 36-40: eps = 0.1 (the
        paper's KDD value): paper rule after 4-26 sweeps (mean 14.3), +2.0 % on average,
        up to +6.2 % (it fired at sweep 4 twice); window (5 sweeps, mean of 3) after 8-40
        (mean 21.6), +0.4 %, at most +1.9 %.  eps = 0.05: paper rule mean 32.2 sweeps, at
        most +2.2 %; window mean 36.6, at most +1.2 %.  A window of 5 or a bare minimum of
        10 sweeps did no better.
        On hep-th the paper's rule (eps = 0.1) fired after sweep 2 on such a transient,
        and 14 sweeps predicted 18 % better.
    min_sweeps, tol_window : int, default 5, 3
        ``stopping="window"``: the fewest sweeps, and the sweeps averaged.
    batch_size : int, default 200
        Stochastic: documents per minibatch |S| (the paper: 200 on Cora).
    n0 : int, default 100
        Stochastic: a non-link whose citing document reaches the cited one by a shortest
        path of length l < n0 is sampled with probability 1/l, all others with 1/n0;
        links always.  Smaller n0: more pairs per minibatch.
    step_a1, step_a2, step_v : float, default 1, 5, 0.501
        Stochastic: step size A1 / (s_w + m/M + A2)^v (s_w = 1, 2, ...: the sweep; m:
        minibatch within the sweep, M: minibatches per sweep; supplement S4, where
        W = M (A2 + 1) - 1); 0.5 < v <= 1.  The first step is A1 / (1 + A2)^v.
    transform_iter : int, default 100
        E-step rounds per new document.
    n_jobs : int, optional
        Threads streaming the pairs (fixed blocks: never changes the result).
    executor : None, int, distributed.Client or str, default None
        Stochastic only for Dask.  Where the pair blocks of each minibatch run; never
        changes the fit.  None: ``n_jobs`` threads here; an integer: that many threads; a
        Dask client, a scheduler address or ``"dask"`` (the current client): tasks on the
        workers of a Dask cluster (a :class:`topiclink.execution.DaskExecutor` runs
        :meth:`~topiclink.families.lmv.stochastic.StochasticLMV.shipped_statistics`):
        the citation graph is sent once per fit, then per minibatch the changed rows of
        the per-document table and the blocks' inputs; the driver merges the blocks in
        order and does every global update.  The fit is bit for bit that of this
        process, for any number of workers (needs ``pip install 'topiclink[dask]'``).
        Shared by ``clone``, dropped by pickling; a model file stores a thread count or an
        address, never a client (loaded: None).  LMV has one scheme (no ``scheme``).
    init_topics : array (K, V) or None, default None
        Where the topics start: topic-word statistics S >= 0 (expected counts, e.g. the
        ``nwk`` of :func:`topiclink.families.lmv.algorithm.start_lda`, a fitted LDA shared with
        other models as in the paper, Sec. 6): lambda = eta + S and gamma from LDA's word
        E-step at those topics.  None: the model fits its own start (the best of 5
        collapsed Gibbs LDA chains of 100 sweeps, the same function; batch: gamma from
        the E-step at its topics, which converges in far fewer iterations than gamma
        from its counts, see :meth:`~topiclink.families.lmv.algorithm.BatchLMV.initial_topics`).
    random_state, verbose, callbacks
        As for :class:`~topiclink.families.lda.estimator.LDA` (only the topic initialisation is
        random).

    Attributes
    ----------
    components_ : (K, V) topics (the mean of q(beta))
    doc_topic_ : (D, K) E[theta_d] of the training documents
    blockmodel_ : (K, K) Bbar, E[B_ij] (topic i citing topic j)
    visibility_ : (D,) taubar_d, E[tau_d] (ones when ``visibility=False``)
    citation_topics_ : (L, 2) the most probable (citing, cited) topic pair of every link
    trace_ : ``log_likelihood`` is L* per token (non-decreasing); LMVS: ``blockmodel_change``
        per sweep
    converged_ : bool
        The stopping rule (``tol``) ended the fit (False: ``max_iter`` or a callback did;
        a :class:`~sklearn.exceptions.ConvergenceWarning` says so when ``max_iter`` did).
    stop_reason_ : str
        Why the fit stopped, e.g. ``"tolerance at sweep 12: ..."`` or ``"max_iter reached
        before the tolerance (100 iterations of max_iter=100; tol = 1e-05)"`` (logged too).
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "links")
    directed_links: ClassVar[bool] = True
    #: ``topiclink fit lmv`` (:mod:`topiclink.cli.estimator_commands`): the paper's Cora
    #: setting (K = 9, eta = 0.5)
    cli_name: ClassVar[str] = "lmv"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {"topic_word_prior": ("--eta",)}
    cli_defaults: ClassVar[dict[str, Any]] = {"n_topics": 9, "topic_word_prior": 0.5,
                                              "n_jobs": -1}
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {
        "LMV": {"visibility": True}, "PLLDA": {"visibility": False},
        "Pairwise-Link-LDA": {"visibility": False},
        "LMVS": {"visibility": True, "inference": "stochastic"},
        "PLLDAS": {"visibility": False, "inference": "stochastic"}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics"), "visibility": [Boolean()],
        "inference": [Options("batch", "stochastic")],
        "doc_topic_prior": _PAIR, **shared("topic_word_prior", "max_iter"),
        "tol": [NoneValue(), Real(0)], "stopping": [Options("window", "paper")],
        "min_sweeps": [Integer(1)], "tol_window": [Integer(1)],
        **shared("transform_iter", "batch_size"), "n0": [Integer(1)],
        **shared("step_a1", "step_a2", "step_v", "n_jobs"),
        **shared("executor", "init_topics", "random_state", "verbose", "callbacks"),
    }
    _param_codecs: ClassVar[dict[str, ParamCodec]] = {"executor": ExecutorCodec()}
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "doc_topic_", "blockmodel_", "visibility_", "citation_topics_",
        "vocabulary_", "alpha_", "train_zbar_", "train_doc_ids_", "train_titles_",
        "topic_weights_", "log_topics_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **TOPIC_ARRAYS,
        **LINK_ARRAYS,
        "blockmodel_": ArraySpec(("K", "K"), "f", "probability"),
        "visibility_": ArraySpec(("D",), "f", "probability"),
        "log_topics_": ArraySpec(("K", "V"), "f", "nonpositive"),
        "citation_topics_": ArraySpec(("L", 2), "i", None),
    }
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "n_links_", "converged_",
                                                 "stop_reason_")
    _state_class = LMVState

    @classmethod
    def _check_loaded(cls, where: str, arrays: dict[str, np.ndarray]) -> None:
        super()._check_loaded(where, arrays)
        topics, blocks = arrays.get("citation_topics_"), arrays.get("blockmodel_")
        if topics is not None and blocks is not None and topics.size and (
                topics.min() < -1 or topics.max() >= blocks.shape[0]):
            raise ValueError(f"{where}: array 'citation_topics_' holds topics outside "
                             f"[-1, {blocks.shape[0]})")
    _divergence_hint = ("inference='stochastic': lower step_a1 or raise step_a2; batch: "
                        "check the priors")

    def __init__(self, n_topics: int = 10, *, visibility: bool = True,
                 inference: str = "batch", doc_topic_prior: float | None = None,
                 topic_word_prior: float = 0.1,
                 blockmodel_prior: tuple[float, float] | None = None,
                 visibility_prior: tuple[float, float] | None = None, max_iter: int = 100,
                 tol: float | None = None, stopping: str = "window", min_sweeps: int = 5,
                 tol_window: int = 3, batch_size: int = 200, n0: int = 100,
                 step_a1: float = 1.0, step_a2: float = 5.0, step_v: float = 0.501,
                 transform_iter: int = 100, n_jobs: int | None = None,
                 executor: Any = None,
                 init_topics: Any = None, random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    @staticmethod
    def _pair(value: Any, name: str) -> tuple[float, float]:
        if value is None:
            return 1.0, 1.0
        try:
            x, y = (float(v) for v in value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a pair of numbers > 0, got {value!r}") from None
        if not (np.isfinite(x) and np.isfinite(y) and x > 0 and y > 0):
            raise ValueError(f"{name} must be a pair of numbers > 0, got {value!r}")
        return x, y

    def _check_params(self) -> None:
        self._pair(self.blockmodel_prior, "blockmodel_prior")
        self._pair(self.visibility_prior, "visibility_prior")
        if self._execution_plan().dask and self.inference != "stochastic":
            raise ValueError("executor: a Dask executor needs inference='stochastic' "
                             "(LMVS)")

    @property
    def _stochastic(self) -> bool:
        return self.inference == "stochastic"

    def _fit_memory(self, corpus: Corpus) -> int:
        """Plus the batch algorithm's (D, K, K) pair statistics and the variational
        topics and proportions (K x V, D x K)."""
        K, D = int(self.n_topics), corpus.n_docs
        pairs = 0 if self._stochastic else 8 * D * K * K
        return super()._fit_memory(corpus) + pairs + 8 * K * (D + corpus.n_words)

    def _algorithm(self) -> BatchLMV | StochasticLMV:
        K = int(self.n_topics)
        plan = self._execution_plan()
        alpha = 1.0 / K if self.doc_topic_prior is None else float(self.doc_topic_prior)
        common = dict(alpha=alpha, eta=float(self.topic_word_prior),
                      blockmodel_prior=self._pair(self.blockmodel_prior, "blockmodel_prior"),
                      visibility_prior=self._pair(self.visibility_prior, "visibility_prior"),
                      visibility=bool(self.visibility),
                      n_threads=plan.n_threads)
        if not self._stochastic:
            # gamma from LDA's E-step at the start's topics: see BatchLMV.initial_topics
            return BatchLMV(K, start="e-step", **common)
        schedule = RobbinsMonro.from_params(self.get_params(deep=False))
        return StochasticLMV(K, batch_size=int(self.batch_size), n0=int(self.n0),
                             schedule=schedule, executor=plan.executor, **common)

    def _stopping_rule(self) -> _DiagonalChange | _BoundTolerance:
        if self._stochastic:
            return _DiagonalChange(0.05 if self.tol is None else float(self.tol),
                                   rule=str(self.stopping), min_sweeps=int(self.min_sweeps),
                                   window=int(self.tol_window))
        return _BoundTolerance(1e-5 if self.tol is None else float(self.tol),
                               "VisibilityTopicModel")

    def _record_stop(self, rule: _DiagonalChange | _BoundTolerance, n_before: int) -> None:
        """``stop_reason_`` and ``converged_`` from the stopping rule, logged; a fit that
        ran out of ``max_iter`` before the tolerance warns (it did not converge)."""
        unit = "sweeps" if self._stochastic else "iterations"
        done = int(self.n_iter_)
        if rule.reason is not None and self.stopped_early_:
            self.converged_ = True
            self.stop_reason_ = rule.reason
            logger.info("%s: stopped: %s", self._label(), rule.reason)
            return
        self.converged_ = False
        if self.stopped_early_:
            self.stop_reason_ = f"stopped by a callback after {done} {unit}"
            logger.info("%s: %s", self._label(), self.stop_reason_)
            return
        tol = rule.eps if isinstance(rule, _DiagonalChange) else rule.tol
        if tol <= 0:
            self.stop_reason_ = f"max_iter reached ({done} {unit}; tol = 0: no tolerance)"
            logger.info("%s: %s", self._label(), self.stop_reason_)
            return
        self.stop_reason_ = (f"max_iter reached before the tolerance ({done - n_before} "
                             f"{unit} of max_iter={self.max_iter}; tol = {tol:g})")
        warn_user(f"{self._label()}: {self.stop_reason_}: the fit has not converged; "
                  f"raise max_iter, continue it with fit(..., resume=True), or set a looser "
                  f"tol", ConvergenceWarning)

    def _label(self) -> str:
        name = "LMV" if self.visibility else "PLLDA"
        return name + ("S" if self._stochastic else "")

    def _state_class_for(self) -> type[State]:
        return LMVSState if self._stochastic else LMVState

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Any, y: None = None, *, links: Any = None, publication_time: Any = None,
            newer_citations: str = "error", resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY) -> VisibilityTopicModel:
        """Fit to documents ``X`` and their directed citations ``links`` (d cites d').

        ``publication_time``: one time per document (LMV(t)): numbers, or dates
        (datetime64, Timestamps, ISO text such as ``"1994-05-01"``; read as days since
        1970-01-01, :mod:`topiclink.families.lmv.times`); a *non-link* whose cited
        document is newer than the citing one carries no likelihood term (the paper's
        LMV(t), Sec. 7.2: the absence of such a citation is no true zero).

        ``newer_citations`` says what happens to a *link* whose cited document is newer
        than the citing one (real data has them: preprints cite each other's later
        versions; hep-th has 943): ``"error"`` (default) refuses them naming the first
        pair, ``"drop"`` drops them (their count logged), ``"keep"`` keeps them as links,
        each with its full likelihood term log(tau_d' B_sr) like any other citation (the
        kernels skip only the newer *non-links*); their count is logged.  Any other value
        is refused (one line).  Without ``publication_time`` there is no time order: the
        option is checked but changes nothing.

        ``checkpoint=PATH`` writes the model with its full state to ``PATH`` every
        ``checkpoint_every`` (iterations, or a duration such as ``"10min"``; default
        ``"5min"``) and when the fit ends; a fit given an existing ``PATH`` resumes from it
        and returns what an uninterrupted fit returns, draw for draw
        (:mod:`topiclink.estimators.checkpoint`).  ``checkpoint=None`` inside a
        :func:`~topiclink.estimators.checkpoint.checkpoint_folder` block: that folder's file.
        An online fit is also written inside a sweep, at minibatch boundaries (after a
        duration, or every N with ``checkpoint_every="N minibatches"``).
        """
        self._check_fit_links(y, links)
        self._validate_params()
        corpus = self._training_corpus(X)
        lk = as_links(links, corpus.n_docs, doc_ids=corpus.doc_ids)
        if not lk.directed:
            raise DataError("VisibilityTopicModel needs directed citations (d cites d'); "
                            "these links are undirected")
        time, pairs = self._times(publication_time, corpus.n_docs,
                                  np.asarray(lk.pairs, dtype=np.int64), newer_citations)
        if pairs.size == 0:
            raise DataError("VisibilityTopicModel needs citations: the network has none "
                            "(documents without citations are fine, a network without any "
                            "is not)")
        algorithm = self._algorithm()
        if self.init_topics is not None:
            algorithm.init_topics = check_init_topics(self.init_topics, algorithm.n_topics,
                                                      corpus.n_words, "VisibilityTopicModel")
        data = LMVData.build(corpus.counts, pairs, time)

        def publish(state: LMVState, averaged: dict[str, np.ndarray] | None) -> None:
            self._publish(state, algorithm, corpus, data)

        rule = self._stopping_rule()
        n_before = int(getattr(self, "n_iter_", 0)) if resume else 0
        if resume:
            self._continue_rule(rule)
        self._run_engine(algorithm, data, resume=resume, publish=publish,
                         checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         extra_callbacks=[rule])
        self._record_stop(rule, n_before)
        return self

    def _continue_rule(self, rule: _DiagonalChange | _BoundTolerance) -> None:
        """``fit(resume=True)``: the rule continues from the previous sweeps (their
        ``blockmodel_change``) or the previous bound, as in one uninterrupted fit."""
        trace = getattr(self, "trace_", None) or {}
        if isinstance(rule, _DiagonalChange):
            rule.changes = [float(c) for c in trace.get("blockmodel_change", [])]
        else:
            values = np.asarray(trace.get("log_likelihood", []), dtype=float)
            values = values[np.isfinite(values)]
            if values.size:
                rule.last = float(values[-1])

    def partial_fit(self, X: Any, y: None = None, *, links: Any = None,
                    publication_time: Any = None, checkpoint: str | os.PathLike[str] | None = None,
                    checkpoint_every: int | str | float = DEFAULT_EVERY) -> VisibilityTopicModel:
        """Add a chunk of new documents to the training set and update the fit (LMVS).

        ``X``: the new documents (the fitted vocabulary: words are matched by name when
        ``X`` carries names; a first call fixes the vocabulary).  ``links``: new citations
        as (citing, cited) index pairs in the numbering of all documents so far (the
        earlier ones first, then ``X``'s), or as document ids when both corpora have ids;
        links already known are ignored.  ``publication_time``: one number per new
        document (needed when the fit has publication times).

        The new documents get fresh variational parameters and are swept once in
        minibatches of ``batch_size`` with the continuing step-size schedule (the LMV
        paper's Algorithm 2 steps 1-7 per minibatch); earlier documents are revisited as
        the cited or citing ends of sampled pairs (and with later
        ``fit(..., resume=True)`` sweeps).  The documents and citations seen so far are
        kept in the sampler state (``state_``), so a model saved with
        ``save(path, full=True)`` and loaded continues its stream exactly.

        ``checkpoint=PATH`` keeps the stream on disk: the call's pass is written to
        ``PATH.pass.npz`` at minibatch boundaries, every ``checkpoint_every`` minibatches
        (an int, or ``"N minibatches"``) or seconds (``"30s"``, ``"10min"``; default
        ``"5min"``), the model after the call to ``PATH``.  The same call run again after a
        kill resumes at the last boundary written and ends with the model an
        uninterrupted call returns, draw for draw; run again after it ended, it returns
        that model (:mod:`topiclink.estimators.stream_checkpoint`).
        """
        if not self._stochastic:
            raise ValueError("partial_fit needs inference='stochastic' (LMVS)")
        self._validate_params()
        state = getattr(self, "state_", None)
        if state is None:
            if hasattr(self, "n_iter_"):
                raise ValueError("partial_fit continues a stream kept in the sampler state; "
                                 "this model was loaded from a file saved without it "
                                 "(save(path, full=True) keeps it; or refit)")
            chunk, corpus = self._first_chunk(X, links, publication_time)
        else:
            if not isinstance(state, LMVSState) or not state.has_stream:
                raise ValueError("partial_fit continues a stream kept in the sampler state; "
                                 "this model's state keeps no documents (refit to continue)")
            chunk, corpus = self._next_chunk(state, X, links, publication_time)
        algorithm = self._algorithm()

        def publish(state: LMVSState, data: LMVData) -> None:
            self._publish(state, algorithm, corpus, data)

        self._run_partial(algorithm, chunk, publish, checkpoint=checkpoint,
                          checkpoint_every=checkpoint_every)
        self.converged_ = False
        self.stop_reason_ = "partial_fit: one pass over the new documents (no stopping rule)"
        return self

    def _first_chunk(self, X: Any, links: Any, publication_time: Any
                     ) -> tuple[LMVSChunk, Corpus]:
        corpus = self._training_corpus(X)
        lk = as_links(links if links is not None else np.zeros((0, 2), np.int64),
                      corpus.n_docs, doc_ids=corpus.doc_ids, directed=True)
        pairs = np.asarray(lk.pairs, dtype=np.int64).reshape(-1, 2)
        time, pairs = self._times(publication_time, corpus.n_docs, pairs)
        return LMVSChunk(corpus.counts, pairs, time), corpus

    def _stream_corpus(self, state: LMVSState) -> Corpus:
        """The documents seen so far: their counts from the state, their vocabulary, ids
        and titles from the fitted attributes."""
        D, V = state.gamma.shape[0], state.lam.shape[1]
        titles = np.asarray(self.train_titles_, dtype=str)
        return Corpus(sp.csr_matrix((state.doc_counts, state.doc_words, state.doc_indptr),
                                    shape=(D, V)),
                      vocabulary=np.asarray(self.vocabulary_, dtype=str),
                      doc_ids=np.asarray(self.train_doc_ids_),
                      titles=titles if titles.size else None)

    def _next_chunk(self, state: LMVSState, X: Any, links: Any, publication_time: Any
                    ) -> tuple[LMVSChunk, Corpus]:
        old = self._stream_corpus(state)
        new = self._as_model_corpus(X)
        new.check_no_empty("partial_fit")
        corpus = _append_documents(old, new)
        D0, D = old.n_docs, corpus.n_docs
        lk = as_links(links if links is not None else np.zeros((0, 2), np.int64), D,
                      doc_ids=corpus.doc_ids, directed=True)
        pairs = np.unique(np.vstack([state.citations,
                                     np.asarray(lk.pairs, np.int64).reshape(-1, 2)]),
                          axis=0)
        timed = state.times.size > 0
        if not timed and publication_time is not None:
            raise DataError("partial_fit: publication_time given, but the fit has none")
        time = None
        if timed:
            if publication_time is None:
                raise DataError("partial_fit: the fit has publication times; give "
                                "publication_time for the new documents")
            time, pairs = self._times(np.concatenate([state.times,
                                                      as_times(publication_time, D - D0)]),
                                      D, pairs)
        return LMVSChunk(corpus.counts, pairs, time), corpus

    @staticmethod
    def _times(publication_time: Any, n_docs: int, pairs: np.ndarray,
               newer_citations: str = "error") -> tuple[np.ndarray | None, np.ndarray]:
        """(times, pairs): the checked publication times and the citations, without those
        to a newer document when ``newer_citations="drop"``, with them when ``"keep"``
        (either logged with their count)."""
        if newer_citations not in ("error", "drop", "keep"):
            raise ValueError(f"newer_citations must be 'error', 'drop' or 'keep', got "
                             f"{newer_citations!r}")
        if publication_time is None:
            return None, pairs
        t = as_times(publication_time, n_docs)
        newer = t[pairs[:, 1]] > t[pairs[:, 0]]
        if newer.any() and newer_citations == "error":
            i = int(np.flatnonzero(newer)[0])
            raise DataError(f"link {i}: document {pairs[i, 0]} cites document {pairs[i, 1]}, "
                            f"which is newer ({t[pairs[i, 1]]:g} > {t[pairs[i, 0]]:g}); "
                            "pass newer_citations='drop' to drop such citations or "
                            "'keep' to keep them as links")
        if newer.any() and newer_citations == "keep":
            logger.info("kept %d citations to newer documents (of %d) as links",
                        int(newer.sum()), len(pairs))
            return t, pairs
        if newer.any():
            logger.info("dropped %d citations to newer documents (of %d)", int(newer.sum()),
                        len(pairs))
            pairs = pairs[~newer]
        return t, pairs

    def _publish(self, state: LMVState | LMVSState,
                 algorithm: BatchLMV | StochasticLMV, corpus: Corpus,
                 data: LMVData) -> None:
        self._publish_batch_topics(state.lam, state.gamma, algorithm.alpha,
                                   (state.lam - float(self.topic_word_prior)).sum(axis=1))
        self.blockmodel_ = state.a / (state.a + state.b)
        self.visibility_ = algorithm._tau(state)[0]
        self.citation_topics_ = state.citation_topics
        publish_training_documents(self, corpus)
        self.n_links_ = int(data.cites.nnz)
        self.n_iter_ = state.iteration

    @property
    def elbo_(self) -> np.ndarray:
        """L* per token after every iteration (batch: non-decreasing; LMVS sweeps do not
        evaluate it: NaN)."""
        self._check_fitted()
        return np.asarray(self.trace_["log_likelihood"], dtype=np.float64)

    # ------------------------------------------------------------------ prediction
    def _scores_from_topics(self, zq: np.ndarray, targets: np.ndarray, direction: str
                            ) -> np.ndarray:
        """p(query cites target) = taubar_t gammabar_q^T Bbar gammabar_t (paper eq. 6.1);
        "in" uses the prior mean visibility for the query; "either" combines both."""
        from topiclink.kernels.scores import row_products  # a query's bits, whatever batch

        zt = np.asarray(self.train_zbar_)[targets]
        B = np.asarray(self.blockmodel_)
        out = row_products(row_products(zq, B.T), zt) * np.asarray(self.visibility_)[targets]
        if direction == "out":
            return out
        prior_tau = float(np.mean(self.visibility_)) if self.visibility else 1.0
        into = row_products(row_products(zt, B.T), zq).T * prior_tau
        if direction == "in":
            return into
        return 1.0 - (1.0 - out) * (1.0 - into)

    def summary(self, n_words: int = 8) -> str:
        text = super().summary(n_words)
        B = np.asarray(self.blockmodel_)
        strongest = np.dstack(np.unravel_index(np.argsort(-B, axis=None)[:5], B.shape))[0]
        blocks = ", ".join(f"B[{i},{j}]={B[i, j]:.3f}" for i, j in strongest)
        lines = [f"{'LMV' if self.visibility else 'Pairwise-Link-LDA'}: {self.n_links_} "
                 f"citations", text, f"strongest blocks (topic i cites topic j): {blocks}"]
        if self.visibility:
            order = np.argsort(-np.asarray(self.visibility_))
            titles = getattr(self, "train_titles_", np.zeros(0))
            names = titles if len(titles) else self.train_doc_ids_
            lines.append("most visible: " + "; ".join(
                f"{names[d]} ({self.visibility_[d]:.2f})" for d in order[:3]))
            lines.append("least visible: " + "; ".join(
                f"{names[d]} ({self.visibility_[d]:.2f})" for d in order[-3:]))
        return "\n".join(lines)


def _append_documents(old: Corpus, new: Corpus) -> Corpus:
    """The training documents followed by a stream chunk's.  New documents keep their ids;
    an id that is already a training document's is a one-line DataError (a document is
    trained on once: ``fit(..., resume=True)`` revisits the training documents).  A chunk
    with the default ids ``0..n-1`` gets its positions in the result; such an unnamed
    document whose word counts equal a training document's is refused too (it is that
    document given again; give it a distinct id to add an identical document on
    purpose).  Integer ids of the fit and text ids of the chunk (or the reverse) make
    every id text."""
    default = new.doc_ids.dtype.kind in "iu" and np.array_equal(new.doc_ids,
                                                                np.arange(new.n_docs))
    if default:
        _refuse_repeated(old, new)
        return old.append(new)
    old_ids, new_ids = old.doc_ids.astype(str), new.doc_ids.astype(str)
    clash = np.flatnonzero(np.isin(new_ids, old_ids))
    if clash.size:
        i = int(clash[0])
        j = int(np.flatnonzero(old_ids == new_ids[i])[0])
        raise DataError(f"partial_fit: new document {i} has the id {str(new_ids[i])!r} of "
                        f"a training document (position {j}; {clash.size} such ids): a "
                        "document is trained on once (fit(..., resume=True) revisits the "
                        "training documents; ids must be unique)")
    if old.doc_ids.dtype.kind == new.doc_ids.dtype.kind:
        return old.append(new)

    def as_text(c: Corpus, ids: np.ndarray) -> Corpus:
        return Corpus(c.counts, vocabulary=c.vocabulary, doc_ids=ids, titles=c.titles,
                      metadata=c.metadata, name=c.name)

    return as_text(old, old_ids).append(as_text(new, new_ids))


def _refuse_repeated(old: Corpus, new: Corpus) -> None:
    """One-line DataError when an unnamed chunk document has exactly the word counts of a
    training document (rows compared by a vectorised fingerprint, then exactly)."""
    def fingerprints(c: Corpus) -> tuple[sp.csr_matrix, np.ndarray]:
        m = sp.csr_matrix(c.counts, dtype=np.float64)
        m.sort_indices()
        w = m.indices.astype(np.float64) + 1.0
        rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
        keys = np.zeros((m.shape[0], 3))
        for j, part in enumerate((m.data, m.data * w, m.data * np.sqrt(w))):
            np.add.at(keys[:, j], rows, part)
        return m, np.round(keys, 6)

    m_old, k_old = fingerprints(old)
    m_new, k_new = fingerprints(new)
    index: dict[tuple[float, ...], list[int]] = {}
    for j, key in enumerate(map(tuple, k_old)):
        index.setdefault(key, []).append(j)
    for i, key in enumerate(map(tuple, k_new)):
        for j in index.get(key, ()):
            a, b = m_new[i], m_old[j]
            if np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data):
                raise DataError(f"partial_fit: new document {i} has exactly the words of "
                                f"training document {j} (id {old.doc_ids[j].item()!r}): a "
                                "document is trained on once (fit(..., resume=True) "
                                "revisits the training documents; give the new one a "
                                "distinct doc_id to add an identical document on purpose)")


class _DiagonalChange:
    """LMVS's stopping rule on ``c_w = ||diag(B_w - B_{w-1})|| / ||diag(B_{w-1})||``, the
    ``blockmodel_change`` of sweep w (supplement S4).

    ``rule="paper"``: stop at the first sweep with ``c_w < eps`` (the paper's rule).
    ``rule="window"`` (the default of :class:`VisibilityTopicModel`): stop at the first
    sweep w >= ``min_sweeps`` whose changes averaged over the last ``window`` sweeps are
    below eps, ``mean(c_{w-window+1..w}) < eps``.  A single calm sweep (a transient: the
    step size is still large in the first sweeps and one minibatch order can leave the
    diagonal nearly where it was) no longer ends the fit; see
    :class:`VisibilityTopicModel` (``stopping``) for the measurement behind the default.

    The changes seen so far are the memory a checkpoint keeps
    (``checkpoint_state`` / ``restore_checkpoint_state``), so a resumed fit stops where an
    uninterrupted one would.  ``reason`` is set when the rule fires.
    """

    def __init__(self, eps: float, rule: str = "window", min_sweeps: int = 5,
                 window: int = 3) -> None:
        self.eps = float(eps)
        self.rule = rule
        self.min_sweeps = int(min_sweeps) if rule == "window" else 1
        self.window = int(window) if rule == "window" else 1
        self.changes: list[float] = []
        self.reason: str | None = None

    def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> bool:
        change = float(info.get("blockmodel_change", float("nan")))
        self.changes.append(change)
        sweep = iteration + 1
        if self.eps <= 0 or sweep < self.min_sweeps or len(self.changes) < self.window:
            return False
        recent = np.asarray(self.changes[-self.window:])
        if not np.all(np.isfinite(recent)):
            return False
        value = float(recent.mean())
        if value < self.eps:
            what = ("||diag(B) change|| / ||diag(B)||" if self.window == 1 else
                    f"||diag(B) change|| / ||diag(B)|| averaged over {self.window} sweeps")
            self.reason = (f"tolerance at sweep {sweep}: {what} = {value:.4g} < "
                           f"eps = {self.eps:g} ({self.rule} rule)")
            return True
        return False

    def checkpoint_state(self) -> dict[str, Any]:
        return {"changes": [c if np.isfinite(c) else None for c in self.changes],
                "reason": self.reason}

    def restore_checkpoint_state(self, memory: dict[str, Any]) -> None:
        self.changes = [float("nan") if c is None else float(c) for c in memory["changes"]]
        self.reason = memory.get("reason")


class _BoundTolerance(RelativeTolerance):
    """The batch rule (paper S4): stop when L* per token changes by less than ``tol``
    relative to its previous value; ``reason`` is set when it fires."""

    def __init__(self, tol: float, name: str) -> None:
        super().__init__(tol, name)
        self.reason: str | None = None

    def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> bool:
        last = self.last
        stop = super().on_iteration(model, iteration, info)
        if stop and last is not None:
            change = abs(info["log_likelihood"] - last) / abs(last)
            self.reason = (f"tolerance at iteration {iteration + 1}: relative change of L* "
                           f"{change:.3g} <= tol = {self.tol:g}")
        return stop

    def checkpoint_state(self) -> dict[str, Any]:
        return {**super().checkpoint_state(), "reason": self.reason}

    def restore_checkpoint_state(self, memory: dict[str, Any]) -> None:
        super().restore_checkpoint_state(memory)
        self.reason = memory.get("reason")
