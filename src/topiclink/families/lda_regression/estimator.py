"""LDA + Regression: the baseline of Tan, Chan & Zheng (2016), "Topic-adjusted visibility
metric for scientific articles", section 5 (``docs/design/lmv.md``, "Baselines").

LDA is fitted to the documents alone (batch variational Bayes,
:class:`topiclink.topics.var_lda.BatchVarLDA`), then a logistic regression of every
directed link indicator y_dd' (d cites d') on the K covariates gammabar_d ∘ gammabar_d'
(the Hadamard product of the normalised variational Dirichlet parameters,
gammabar_dk = gamma_dk / sum_l gamma_dl)::

    P(y_dd' = 1) = sigmoid(intercept + sum_k coef_k gammabar_dk gammabar_d'k)

Text and links are modelled separately: the topics never see the links.  The regression
is fitted (scikit-learn's ``LogisticRegression``) on all links plus a uniform random
sample, without replacement, of the non-links (a case-control sample; self-pairs d = d'
are never used), and its intercept corrected for the sampling so that the probabilities
are calibrated on the full set of pairs.
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from topiclink.callbacks import RelativeTolerance
from topiclink.data.checks import (
    POSITIVE,
    DataError,
    NoneValue,
    Real,
    check_init_topics,
)
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links, as_links
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import (
    LinkPredictionMixin,
    ScoresAreProbabilitiesMixin,
    TopicsMixin,
)
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.fit_docs import documents_checkpoint
from topiclink.estimators.schema import LINK_ARRAYS, TOPIC_ARRAYS, ArraySpec
from topiclink.estimators.training_documents import publish_training_documents
from topiclink.estimators.variational import VariationalTopicsMixin
from topiclink.execution import n_threads, resolve_n_jobs
from topiclink.parameters import shared
from topiclink.random import RandomState
from topiclink.topics.var_lda import BatchVarLDA, LDAData, VarLDAState

__all__ = ["LDARegression", "directed_pairs", "sample_nonlinks"]

logger = logging.getLogger(__name__)

#: the non-link sample's stream: SeedSequence(random_state_, spawn_key=(_NEGATIVES_KEY,)),
#: independent of the topic initialisation's stream
_NEGATIVES_KEY = 1


def directed_pairs(links: Links) -> np.ndarray:
    """(n, 2) int64 ordered pairs (d, d') with y_dd' = 1: the links themselves when
    directed, both directions of every pair when undirected."""
    pairs = np.asarray(links.pairs, dtype=np.int64)
    if links.directed:
        return pairs
    return np.concatenate([pairs, pairs[:, ::-1]])


def sample_nonlinks(n_docs: int, pairs: np.ndarray, n_sample: int,
                    rng: np.random.Generator) -> np.ndarray:
    """A uniform sample without replacement of ``n_sample`` ordered non-links (d, d'),
    d != d', (d, d') not in ``pairs``; all of them when there are no more.  Sorted
    row-major, (m, 2) int64."""
    D = int(n_docs)
    link_keys = np.unique(pairs[:, 0] * D + pairs[:, 1])
    n_non = D * (D - 1) - link_keys.size
    m = int(min(n_sample, n_non))
    if m <= 0:
        return np.zeros((0, 2), np.int64)
    if 2 * m >= n_non:
        # dense: enumerate every non-link (at most 2 m of them)
        keys = np.arange(D * D, dtype=np.int64)
        keys = keys[(keys // D != keys % D) & ~np.isin(keys, link_keys, assume_unique=True)]
        if m < keys.size:
            keys = np.sort(rng.choice(keys, size=m, replace=False))
    else:
        # sparse: draw off-diagonal pairs, keep the first occurrence of each non-link
        chosen = np.zeros(0, np.int64)
        while chosen.size < m:
            need = m - chosen.size
            draw = rng.integers(0, D * (D - 1), size=need + need // 4 + 16, dtype=np.int64)
            i, j = draw // (D - 1), draw % (D - 1)
            keys = i * D + j + (j >= i)
            keys = keys[~np.isin(keys, link_keys)]
            merged = np.concatenate([chosen, keys])
            _, first = np.unique(merged, return_index=True)
            chosen = merged[np.sort(first)][:m]
        keys = np.sort(chosen)
    return np.column_stack([keys // D, keys % D])


class LDARegression(ScoresAreProbabilitiesMixin, LinkPredictionMixin,
                    VariationalTopicsMixin, TopicsMixin, Estimator):
    """LDA + Regression: variational LDA, then a logistic regression of the links on
    gammabar_d ∘ gammabar_d'.

    Parameters
    ----------
    n_topics : int, default 10
        K.
    doc_topic_prior : float, optional
        alpha (default 1/K).
    topic_word_prior : float, default 0.1
        eta of the topics' Dirichlet prior.
    n_negatives : float, default 10
        Non-links sampled per (directed) link, at most all non-links.
    C : float, default 1.0
        Inverse L2 regularisation strength of the logistic regression (scikit-learn's
        ``C``; the intercept is not penalised).
    max_iter : int, default 100
        Variational EM iterations of the LDA.
    tol : float, default 1e-5
        Stop when the ELBO per token changes by less than ``tol`` relative to its previous
        value.
    transform_iter : int, default 100
        E-step rounds per new document.
    n_jobs : int, optional
        Threads running the LDA's fixed document blocks (never changes the result).
    init_topics : array (K, V) or None, default None
        Where the topics start: topic-word statistics S >= 0 (expected counts, e.g. the
        ``nwk`` of :func:`topiclink.families.lmv.algorithm.start_lda`, a fitted LDA shared with
        other models as in the LMV paper, Sec. 6), combined with the topic prior as the
        M-step would.  None: LDA-C's seeded topics (``random_state``).
    random_state, verbose, callbacks
        As for :class:`~topiclink.families.lda.estimator.LDA`; the seed draws the topic
        initialisation and the non-link sample (same seed, same model).

    Notes
    -----
    Links are directed citations (d cites d').  Undirected links are accepted and taken
    to be both directions of every pair (y_dd' = y_d'd = 1); the covariates are symmetric,
    so link scores are the same in both directions in any case.

    Attributes
    ----------
    components_ : (K, V) topics (the mean of q(beta))
    doc_topic_ : (D, K) gammabar_d of the training documents
    coef_ : (K,) regression weights of gammabar_dk gammabar_d'k
    intercept_ : float
        Case-control corrected: ``b_fit + log(m / N0)`` with ``b_fit`` the fitted
        intercept, ``m`` the sampled non-links and ``N0 = D (D - 1) - L`` all non-links
        (the sample's odds of a link are ``N0 / m`` times the population's), so that
        :meth:`predict_link_proba` estimates P(y_dd' = 1) over all pairs.
    n_links_, n_nonlinks_ : links (directed pairs) and sampled non-links in the regression
    trace_ : ``log_likelihood`` is the LDA's ELBO per token (non-decreasing)
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "links")
    directed_links: ClassVar[bool] = True
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"LDA+Reg": {}, "LDA+Regression": {}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics"), "doc_topic_prior": [NoneValue(), Real(0, low_open=True)],
        **shared("topic_word_prior", "n_negatives"), "C": POSITIVE,
        **shared("max_iter", "tol", "transform_iter", "n_jobs", "random_state", "verbose",
                 "callbacks", "init_topics"),
    }
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "doc_topic_", "coef_", "vocabulary_", "alpha_", "train_zbar_",
        "train_doc_ids_", "train_titles_", "topic_weights_", "log_topics_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **TOPIC_ARRAYS,
        **LINK_ARRAYS,
        "coef_": ArraySpec(("K",), "f", "finite"),
        "log_topics_": ArraySpec(("K", "V"), "f", "nonpositive"),
    }
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "n_links_", "n_nonlinks_",
                                                 "intercept_")
    _state_class = VarLDAState

    def __init__(self, n_topics: int = 10, *, doc_topic_prior: float | None = None,
                 topic_word_prior: float = 0.1, n_negatives: float = 10, C: float = 1.0,
                 max_iter: int = 100, tol: float = 1e-5, transform_iter: int = 100,
                 n_jobs: int | None = None, init_topics: Any = None,
                 random_state: RandomState = None,
                 verbose: bool = False, callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    def _algorithm(self) -> BatchVarLDA:
        K = int(self.n_topics)
        alpha = 1.0 / K if self.doc_topic_prior is None else float(self.doc_topic_prior)
        return BatchVarLDA(K, alpha=alpha, eta=float(self.topic_word_prior),
                           n_threads=n_threads(resolve_n_jobs(self.n_jobs)))

    # ------------------------------------------------------------------ fitting
    @documents_checkpoint
    def fit(self, X: Any, y: None = None, *, links: Any = None, resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY) -> LDARegression:
        """Fit the LDA to documents ``X``, then the regression to ``links`` (d cites d';
        undirected links count in both directions).
        """
        self._check_fit_links(y, links)
        self._validate_params()
        corpus = self._training_corpus(X)
        lk = as_links(links, corpus.n_docs, doc_ids=corpus.doc_ids)
        pairs = directed_pairs(lk)
        D = corpus.n_docs
        if pairs.shape[0] == 0:
            raise DataError("LDARegression.fit: the network has no links (the regression "
                            "needs at least one)")
        if pairs.shape[0] >= D * (D - 1):
            raise DataError("LDARegression.fit: every ordered pair of documents is linked "
                            "(the regression needs non-links)")
        algorithm = self._algorithm()
        if self.init_topics is not None:
            algorithm.init_topics = check_init_topics(self.init_topics, algorithm.n_topics,
                                                      corpus.n_words, "LDARegression")
        data = LDAData.build(corpus.counts)
        negatives: list[np.ndarray] = []

        def publish(state: VarLDAState, averaged: dict[str, np.ndarray] | None) -> None:
            if not negatives:          # drawn once per fit, from the recorded seed
                negatives.append(self._sample_negatives(D, pairs))
            self._publish(state, algorithm, corpus, pairs, negatives[0])

        self._run_engine(algorithm, data, resume=resume, publish=publish,
                         checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         extra_callbacks=[RelativeTolerance(float(self.tol),
                                                            "LDARegression")])
        return self

    def _sample_negatives(self, n_docs: int, pairs: np.ndarray) -> np.ndarray:
        seed = self.random_state_
        entropy = int(seed) if seed is not None else 0
        rng = np.random.default_rng(np.random.SeedSequence(entropy,
                                                           spawn_key=(_NEGATIVES_KEY,)))
        wanted = max(1, int(round(float(self.n_negatives) * pairs.shape[0])))
        negatives = sample_nonlinks(n_docs, pairs, wanted, rng)
        n_non = n_docs * (n_docs - 1) - pairs.shape[0]
        logger.info("LDARegression: %d links and %d sampled non-links (of %d) over %d "
                    "documents", pairs.shape[0], negatives.shape[0], n_non, n_docs)
        return negatives

    def _publish(self, state: VarLDAState, algorithm: BatchVarLDA, corpus: Corpus,
                 pairs: np.ndarray, negatives: np.ndarray) -> None:
        self._publish_batch_topics(state.lam, state.gamma, algorithm.alpha,
                                   state.word_stats.sum(axis=0))
        publish_training_documents(self, corpus)
        self._regress(self.doc_topic_, pairs, negatives)
        self.n_iter_ = state.iteration

    def _regress(self, zbar: np.ndarray, pairs: np.ndarray, negatives: np.ndarray) -> None:
        """The case-control logistic regression and its intercept correction."""
        D = zbar.shape[0]
        both = np.concatenate([pairs, negatives])
        covariates = zbar[both[:, 0]] * zbar[both[:, 1]]
        labels = np.concatenate([np.ones(pairs.shape[0], np.int64),
                                 np.zeros(negatives.shape[0], np.int64)])
        reg = LogisticRegression(C=float(self.C), max_iter=1000, tol=1e-8)
        reg.fit(covariates, labels)
        n_non = D * (D - 1) - pairs.shape[0]
        self.coef_ = np.asarray(reg.coef_[0], dtype=np.float64)
        self.intercept_ = float(reg.intercept_[0] + np.log(negatives.shape[0] / n_non))
        self.n_links_ = int(pairs.shape[0])
        self.n_nonlinks_ = int(negatives.shape[0])

    # ------------------------------------------------------------------ prediction
    def _scores_from_topics(self, zq: np.ndarray, targets: np.ndarray, direction: str
                            ) -> np.ndarray:
        """P(query cites target) = sigmoid(intercept + (zq ∘ zt) @ coef); "in" swaps the
        roles (the same number: the covariates are symmetric); "either" combines both as
        independent events."""
        from topiclink.kernels.scores import row_products  # a query's bits, whatever batch

        zt = np.asarray(self.train_zbar_)[targets]
        coef = np.asarray(self.coef_)
        out = expit(self.intercept_ + row_products(zq * coef, zt))
        if direction == "out":
            return out
        into = expit(self.intercept_ + row_products(zt * coef, zq).T)
        if direction == "in":
            return into
        return 1.0 - (1.0 - out) * (1.0 - into)

    def summary(self, n_words: int = 8) -> str:
        text = super().summary(n_words)
        coef = np.asarray(self.coef_)
        weights = ", ".join(f"{c:+.2f}" for c in coef)
        return "\n".join([
            f"LDA + Regression: {self.n_links_} links, {self.n_nonlinks_} sampled non-links",
            text, f"regression on gammabar_d * gammabar_d': intercept {self.intercept_:.3f}, "
                  f"coefficients by topic [{weights}]"])
