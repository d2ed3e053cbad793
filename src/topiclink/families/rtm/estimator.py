"""Discriminative relational topic models (gRTM family) by augment-and-collapse Gibbs.

Chen, Zhu, Xia & Zhang, "Discriminative Relational Topic Models", TPAMI 2015.  One
estimator covers the paper's six Gibbs variants:

=================  ========  =========  ======
paper name         loss      weights    approx
=================  ========  =========  ======
Gibbs-gRTM         logistic  full       False
Gibbs-RTM          logistic  diagonal   False
Approx-gRTM        logistic  full       True
Gibbs-gMMRTM       hinge     full       False
Gibbs-MMRTM        hinge     diagonal   False
Approx-gMMRTM      hinge     full       True
=================  ========  =========  ======

The sampler (state, step, objective) is :class:`topiclink.families.rtm.algorithm.RelationalGibbs`;
this module validates, builds the data, runs the engine, publishes the estimates and
predicts.
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import (
    Boolean,
    DataError,
    NoneValue,
    Options,
    doc_topic_prior_vector,
)
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links, as_links
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import LinkPredictionMixin, TopicsMixin
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.collapsed import (
    CollapsedTopicsMixin,
    doc_topic_estimate,
    topic_shares,
    topic_word_estimate,
)
from topiclink.estimators.fit_docs import documents_checkpoint
from topiclink.estimators.param_codecs import ParamCodec
from topiclink.estimators.schema import LINK_ARRAYS, TOPIC_ARRAYS, ArraySpec
from topiclink.estimators.training_documents import publish_training_documents
from topiclink.execution import ExecutorCodec, Shards, SharedClientMixin
from topiclink.families.rtm.algorithm import (
    AUGMENTATION_SAMPLERS,
    RelationalData,
    RelationalGibbs,
    RelationalState,
)
from topiclink.families.rtm.shards import ShardedRelationalGibbs
from topiclink.parameters import Negatives, SchemeCodec, SchemeForm, shared
from topiclink.random import RandomState, kernel_state
from topiclink.relational.augment import LOSSES, augment, initial_coefficients
from topiclink.relational.kernels import rtm as rtm_kernels
from topiclink.relational.kernels.rtm_mh import AUTO_MIN_TOPICS
from topiclink.topics.fixed_topics import infer_doc_topics
from topiclink.topics.lda import TokenData

__all__ = ["RelationalTopicModel", "PAPER_VARIANTS"]

logger = logging.getLogger(__name__)

PAPER_VARIANTS: dict[str, dict[str, Any]] = {
    "Gibbs-gRTM": {"loss": "logistic", "weights": "full", "approx": False},
    "Gibbs-RTM": {"loss": "logistic", "weights": "diagonal", "approx": False},
    "Approx-gRTM": {"loss": "logistic", "weights": "full", "approx": True},
    "Gibbs-gMMRTM": {"loss": "hinge", "weights": "full", "approx": False},
    "Gibbs-MMRTM": {"loss": "hinge", "weights": "diagonal", "approx": False},
    "Approx-gMMRTM": {"loss": "hinge", "weights": "full", "approx": True},
}

#: token sweeps (half burn-in) of the link-only inference of predict_words_from_links
_WORDS_FROM_LINKS_ITER = 60


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class RelationalTopicModel(SharedClientMixin, LinkPredictionMixin, CollapsedTopicsMixin,
                           TopicsMixin, Estimator):
    """Relational topic model with a bilinear link discriminant, fitted by Gibbs sampling.

    Parameters
    ----------
    n_topics : int, default 10
        K.
    loss : {"logistic", "hinge"}
        Log-loss with Polya-Gamma augmentation (gRTM) or hinge loss with inverse-Gaussian
        augmentation (gMMRTM).
    weights : {"full", "diagonal"}
        Full K x K weight matrix U (generalised RTM) or U = diag(eta) (standard RTM).
    approx : bool
        The paper's "Approx" Z step: the link term computed once per document.
    doc_topic_prior : float, default 0.1
        alpha (the paper uses 5 in its sensitivity study; see ``experiments``).
    topic_word_prior : float, default 0.01
        beta.
    c : float, default 1.0
        Regularisation constant of positive pairs (the paper tunes it; c_neg is fixed).
    c_neg : float, default 1.0
        Regularisation constant of negative pairs.
    hinge_cost : float, default 1.0
        l >= 1, the margin of the hinge loss.
    weight_prior_var : float, default 1.0
        nu^2, the prior variance of every entry of U.
    negative_ratio : float, default 0.01
        Fraction of the unobserved training pairs drawn (once per fit) as negatives.
        Ignored when ``negatives_per_link`` is given.
    negatives_per_link : float > 0 or None, default None
        Draw the negatives (once per fit) document by document instead: document i gets
        ``max(1, floor(negatives_per_link * p_i + 1/2))`` negatives ``(i, j)`` (none if it
        has no link), ``p_i`` its positive training pairs as a source (out-degree;
        undirected: degree), the ``j`` distinct and uniform among the documents it is not
        linked to (at most all of them).  O(#negatives) time and memory (rejection against
        a hash set of its links), for networks where a fraction of all D^2 pairs is too
        many; see :func:`topiclink.relational.negatives.negatives_per_document`.  Each
        negative is one ordered training pair (undirected: not mirrored), so there are
        about ``negatives_per_link`` negatives per positive training pair.
    augmentation : {"reference", "numba"}, default "reference"
        Sampler of the pairs' augmentation draws: "reference" (the ``polyagamma``
        package and NumPy's ``wald``, per chunk of pairs from Python) or "numba" (every
        pair of an iteration in Numba, :mod:`topiclink.relational.kernels.augment`: exact Devroye
        PG(1, z) draws, sums of them for integer c <= 16, a moment-matched gamma series
        otherwise; Michael-Schucany-Haas inverse-Gaussian draws).  The two give different
        (equally valid) chains; "numba" is the faster one at scale.
    directed : bool or None
        None: directed when the links are (a Links object says; an edge array is directed).
        Undirected links enter training in both orientations.
    max_iter : int, default 400
        Gibbs iterations (the paper: 400 on Cora); per call of ``fit``.
    n_average : int, default 1
        Average U and the topics over the last ``n_average`` iterations.
    evaluate_every : int, default 10
        Record the word log joint per token every this many iterations.
    transform_iter : int, default 50
        Sweeps used to infer the topics of new documents.
    n_jobs : int or None, default None
        Threads (``-1``: all cores).  With two or more, the augmentation draws of the pairs
        whose documents have been swept run on a second thread while the Z sweep goes on
        (they commute with the rest of the sweep), and BLAS may use ``n_jobs`` threads.
        The draws come from fixed chunks of pairs with their own streams, so the chain is
        the same, draw for draw, for any ``n_jobs``.
    scheme : "exact", "shards" or Shards("shards", n_shards), default "exact"
        The statistical scheme (it fixes the chain).  ``"exact"``: the single-machine
        sampler.  ``"shards"``: the documents in ``n_shards`` contiguous shards (at most
        the number of documents; the name alone is 2, :class:`topiclink.execution.Shards`
        gives another count), each pair's augmentation drawn by the shard of its source
        document; every iteration the driver draws U, the shards sweep their tokens
        against the word-topic counts and the neighbours' topic proportions of the start
        of the iteration (AD-LDA; their own shard's neighbours fresh) and then draw their
        pairs' augmentation exactly (:mod:`topiclink.families.rtm.shards`).  Each shard
        has its own random streams: the chain is fixed by the seed and the shards, never
        by the executor.
    executor : None, int, distributed.Client or str, default None
        Where the pieces run; never changes the chain.  None: this process, ``n_jobs``
        threads; an integer: that many threads; a Dask client, a scheduler address or
        ``"dask"`` (the current client): the shards on the workers of a Dask cluster
        (``scheme="shards"`` only; needs ``pip install 'topiclink[dask]'``).  Shared by
        ``clone``, dropped by pickling; a model file stores a thread count or an address,
        never a client (loaded: None).
    sampler : "auto", "gibbs" or "mh", default "auto"
        The Z step of the exact scheme: ``"gibbs"``, the exact conditional with the link
        term (O(K) per token, eq. 14); ``"mh"``, exact Metropolis-Hastings with LightLDA's
        O(1) document and word proposals and the link factor in the acceptance ratio
        (O(pairs of the document) per proposal; :mod:`topiclink.relational.kernels.
        rtm_mh`): cheaper per token at large K, more sweeps to mix.  Not with
        ``approx=True`` (an approximation of the Gibbs step) or ``scheme="shards"``.
        ``"auto"``: ``"mh"`` from :data:`~topiclink.relational.kernels.rtm_mh.
        AUTO_MIN_TOPICS` (1,000) topics on where it applies, else ``"gibbs"``.
    random_state, verbose, callbacks
        As for :class:`~topiclink.families.lda.estimator.LDA`.

    Attributes
    ----------
    components_ : (K, V) topic-word probabilities
    doc_topic_ : (D, K) smoothed topic proportions of the training documents
    train_zbar_ : (D, K) empirical topic proportions zbar of the training documents
    weights_ : (K, K) the link weight matrix U (diagonal models: diag(eta))
    trace_ : dict with per-iteration ``log_likelihood`` (word log joint per token),
        ``link_loglik`` (mean pair pseudo log-likelihood), ``seconds_weights`` (U step),
        ``seconds_z`` (Z sweep), ``seconds_lambda`` (the pairs' discriminants and
        augmentation draws; with ``n_jobs > 1`` only the part not hidden behind the sweep)
        and ``seconds`` (whole iteration)
    n_pairs_, n_negatives_ : training pairs used
    state_ : RelationalState, the chain (``fit(X, links=..., resume=True)`` continues it)
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "links")
    #: ``topiclink fit rtm`` (:mod:`topiclink.cli.estimator_commands`): the paper's
    #: Cora setting (K = 15, c = 4, alpha = 0.5)
    cli_name: ClassVar[str] = "rtm"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {
        "doc_topic_prior": ("--alpha",), "negative_ratio": ("--negatives",)}
    cli_defaults: ClassVar[dict[str, Any]] = {
        "n_topics": 15, "max_iter": 300, "c": 4.0, "doc_topic_prior": 0.5, "n_jobs": -1}
    paper_names: ClassVar[dict[str, dict[str, Any]]] = PAPER_VARIANTS
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics"), "loss": [Options(*LOSSES)],
        "weights": [Options("full", "diagonal")], "approx": [Boolean()],
        **shared("doc_topic_prior", "topic_word_prior", "c", "c_neg", "hinge_cost",
                 "weight_prior_var", "negative_ratio", "negatives_per_link"),
        "augmentation": [Options(*AUGMENTATION_SAMPLERS)],
        "directed": [NoneValue(), Boolean()],
        **shared("max_iter", "n_average", "evaluate_every", "transform_iter", "n_jobs"),
        "scheme": [SchemeForm("exact", "shards", sharded=("shards",))],
        **shared("executor"), "sampler": [Options("auto", "gibbs", "mh")],
        **shared("random_state", "verbose", "callbacks"),
    }
    _param_codecs: ClassVar[dict[str, ParamCodec]] = {"scheme": SchemeCodec(),
                                                      "executor": ExecutorCodec()}
    _sharded_schemes = ("shards",)
    _local_schemes = ("exact",)
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "doc_topic_", "train_zbar_", "weights_", "topic_weights_",
        "vocabulary_", "alpha_", "train_doc_ids_", "train_titles_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **TOPIC_ARRAYS,
        **LINK_ARRAYS,
        "weights_": ArraySpec(("K", "K")),
    }
    _saved_scalars: ClassVar[tuple[str, ...]] = (
        "n_iter_", "n_pairs_", "n_negatives_", "directed_", "mean_doc_length_")
    _scalar_specs: ClassVar[dict[str, str]] = {"mean_doc_length_": "positive",
                                               "directed_": "bool"}
    _state_class = RelationalState
    # predict_words_from_links draws n_tokens tokens per new document: a whole number
    _n_tokens_whole = True
    _n_tokens_per_document = False

    def __init__(self, n_topics: int = 10, *, loss: str = "logistic", weights: str = "full",
                 approx: bool = False, doc_topic_prior: float | None = None,
                 topic_word_prior: float = 0.01, c: float = 1.0, c_neg: float = 1.0,
                 hinge_cost: float = 1.0, weight_prior_var: float = 1.0,
                 negative_ratio: float = 0.01, negatives_per_link: float | None = None,
                 augmentation: str = "reference", directed: bool | None = None,
                 max_iter: int = 400, n_average: int = 1, evaluate_every: int = 10,
                 transform_iter: int = 50, n_jobs: int | None = None,
                 scheme: str | Shards = "exact", executor: Any = None,
                 sampler: str = "auto", random_state: RandomState = None,
                 verbose: bool = False, callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    @classmethod
    def from_paper(cls, name: str, **kwargs: Any) -> RelationalTopicModel:
        """The paper's named variant, e.g. ``from_paper("Gibbs-gMMRTM", n_topics=10)``."""
        if name not in PAPER_VARIANTS:
            raise ValueError(f"unknown variant {name!r}; known: {sorted(PAPER_VARIANTS)}")
        return cls(**{**PAPER_VARIANTS[name], **kwargs})

    @property
    def variant_name_(self) -> str:
        for name, cfg in PAPER_VARIANTS.items():
            if (cfg["loss"], cfg["weights"], cfg["approx"]) == (self.loss, self.weights,
                                                                 bool(self.approx)):
                return name
        return "custom"

    # ------------------------------------------------------------------ validation
    def _check_params(self) -> None:
        if self.loss == "hinge" and self.hinge_cost < 1:
            raise ValueError(f"hinge_cost must be >= 1, got {self.hinge_cost}")
        if self.n_average > self.max_iter:
            raise ValueError("n_average must not exceed max_iter")

    #: bytes per K^4 of the full-weight U step: the K^2 x K^2 precision P, its Cholesky
    #: factor, the gather index of the Kronecker moments (int64) and the triangle moments
    #: G ((K(K+1)/2)^2), about 26 K^4 (``inference/weights.py``); measured peak growth
    #: from K = 20 to 40 and 60 on a 300-document Cora fit: 28-30 K^4 bytes
    FULL_WEIGHT_BYTES_PER_K4: ClassVar[int] = 32

    def _fit_memory(self, corpus: Corpus) -> int:
        """The documents' arrays, plus the weight step: ``weights="full"`` draws U from a
        K^2-dimensional Gaussian whose precision is a dense K^2 x K^2 matrix
        (Chen et al. 2015, eq. 14), so K = 100 needs about 3 GiB and K = 200 about
        48 GiB; refused before any allocation when the machine lacks it."""
        K = int(self.n_topics)
        weights = (self.FULL_WEIGHT_BYTES_PER_K4 * K ** 4 if self.weights == "full"
                   else 8 * 4 * K * K)
        return super()._fit_memory(corpus) + weights

    def _algorithm(self) -> RelationalGibbs:
        """The sampler: :class:`RelationalGibbs`, or with ``scheme="shards"`` its sharded
        version :class:`~topiclink.families.rtm.shards.ShardedRelationalGibbs` on a Dask
        executor or on threads."""
        K = int(self.n_topics)
        plan = self._execution_plan()
        cls: Any = RelationalGibbs
        extra: dict[str, Any] = {}
        exact = plan.scheme != "shards" and not self.approx
        if self.sampler == "mh" and not exact:
            raise ValueError("sampler='mh' is the exact scheme's Z step: use "
                             "scheme='exact' and approx=False (or sampler='gibbs')")
        if plan.scheme == "shards":
            cls = ShardedRelationalGibbs
            extra = {"n_shards": plan.n_shards, "executor": plan.executor}
        else:
            sampler = self.sampler
            if sampler == "auto":
                sampler = "mh" if exact and K >= AUTO_MIN_TOPICS else "gibbs"
            extra = {"sampler": str(sampler)}
        return cls(
            K, doc_topic_prior_vector(self.doc_topic_prior, K), float(self.topic_word_prior),
            loss=self.loss, full=self.weights == "full", approx=bool(self.approx),
            c=float(self.c), hinge_cost=float(self.hinge_cost),
            weight_prior_var=float(self.weight_prior_var),
            negatives=Negatives.from_params(self.get_params(deep=False)),
            augmentation=self.augmentation,
            n_threads=plan.n_threads, name=self.variant_name_,
            **extra)

    # ------------------------------------------------------------------ fitting
    @documents_checkpoint
    def fit(self, X: Any, y: None = None, *, links: Any = None, resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY) -> RelationalTopicModel:
        """Fit to documents ``X`` and their ``links`` (Links, (n, 2) edge array of document
        positions, SciPy adjacency or networkx graph over ``X``'s document ids).

        ``resume=True`` continues the chain (same documents and links) for ``max_iter``
        more iterations.
        """
        self._check_fit_links(y, links)
        self._validate_params()
        corpus = self._training_corpus(X)
        algorithm = self._algorithm()
        links = as_links(links, corpus.n_docs, doc_ids=corpus.doc_ids, directed=self.directed)
        if self.directed is not None and links.directed != self.directed:
            links = Links.from_pairs(links.pairs, links.n_docs, directed=bool(self.directed),
                                     duplicates="drop")
        if links.n_links == 0:
            raise DataError(f"{type(self).__name__}.fit: no links among the {corpus.n_docs} "
                            "documents; the link model cannot be fitted (LDA fits the words "
                            "alone)")
        data = RelationalData(TokenData.from_corpus(corpus), links)

        def publish(state: RelationalState, averaged: dict[str, np.ndarray] | None) -> None:
            self._publish(state, averaged, algorithm, data, corpus)

        if not resume:
            logger.info("%s: %d documents, %d tokens, K=%d", self.variant_name_,
                        corpus.n_docs, data.tokens.n_tokens, algorithm.n_topics)
        self._run_engine(algorithm, data, resume=resume, publish=publish,
                         checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         n_average=int(self.n_average),
                         evaluate_every=int(self.evaluate_every))
        return self

    def _publish(self, state: RelationalState, averaged: dict[str, np.ndarray] | None,
                 algorithm: RelationalGibbs, data: RelationalData, corpus: Corpus) -> None:
        alpha = algorithm.alpha
        lengths = data.tokens.lengths
        if averaged is not None:
            U_hat, nwk_hat = averaged["U"], averaged["nwk"]
        else:
            U_hat, nwk_hat = state.U, state.nwk.astype(np.float64)
        self.weights_ = U_hat
        self.components_ = topic_word_estimate(nwk_hat, nwk_hat.sum(axis=0), algorithm.beta)
        self.doc_topic_ = doc_topic_estimate(state.ndk, alpha)
        self.train_zbar_ = state.ndk / lengths[:, None]
        self.topic_weights_ = topic_shares(state.nk)
        self.alpha_ = alpha
        publish_training_documents(self, corpus)
        self.n_pairs_ = int(state.pair_source.size)
        self.n_negatives_ = int(state.n_negatives)
        self.directed_ = bool(data.links.directed)
        self.mean_doc_length_ = float(lengths.mean())
        self.n_iter_ = state.iteration

    # ------------------------------------------------------------------ prediction
    def _query_topics(self, corpus: Corpus) -> np.ndarray:
        return infer_doc_topics(corpus, np.ascontiguousarray(self.components_.T),
                                np.asarray(self.alpha_), self._prediction_generator(),
                                n_iter=int(self.transform_iter), smooth=False)

    def _scores_from_topics(self, zq: np.ndarray, targets: np.ndarray, direction: str
                            ) -> np.ndarray:
        from topiclink.kernels.scores import row_products  # a query's bits, whatever batch

        zt = self.train_zbar_[targets]
        U = np.asarray(self.weights_)
        if direction == "out":
            return row_products(row_products(zq, U.T), zt)          # zq U zt^T
        if direction == "in":
            return row_products(row_products(zq, U), zt)            # zq U^T zt^T
        out = row_products(row_products(zq, U.T), zt)
        into = row_products(row_products(zq, U), zt)
        if self.loss == "logistic":
            # log-odds of "a link in at least one direction": 1 - (1 - p_out)(1 - p_in)
            p = 1.0 - (1.0 - _sigmoid(out)) * (1.0 - _sigmoid(into))
            p = np.clip(p, 1e-300, 1 - 1e-16)
            return np.log(p) - np.log1p(-p)
        return np.maximum(out, into)

    def _probabilities(self, scores: np.ndarray) -> np.ndarray:
        if self.loss != "logistic":
            raise ValueError("the hinge loss gives link scores, not probabilities; "
                             "use link_scores()")
        return _sigmoid(scores)

    def _augment(self, rng: np.random.Generator, omega: np.ndarray, pairs: Any
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Draw lambda for every pair; return the Gaussian coefficients (a, b)."""
        return augment(rng, self.loss, omega, pairs.y, pairs.c, float(self.hinge_cost))

    def _initial_ab(self, pairs: Any) -> tuple[np.ndarray, np.ndarray]:
        """(a, b) at lambda = 1."""
        return initial_coefficients(self.loss, pairs.y, pairs.c, float(self.hinge_cost))

    def _words_from_links(self, out: sp.csr_matrix, into: sp.csr_matrix,
                          n_tokens: Any, rng: np.random.Generator) -> np.ndarray:
        """Link-only inference: token sweeps of the link term alternating with the pairs'
        augmentation draws (``n_tokens`` unobserved-word tokens per new document)."""
        n_train, K = self.train_zbar_.shape
        if not self.directed_:
            into = (into + out).astype(bool).tocsr()
            out = into.copy()
        n_new = out.shape[0]
        L = int(n_tokens) if n_tokens is not None else max(1, round(self.mean_doc_length_))
        n_iter = _WORDS_FROM_LINKS_ITER
        alpha = np.asarray(self.alpha_)
        Uz = self.train_zbar_ @ self.weights_.T
        Vz = self.train_zbar_ @ self.weights_
        oc, ic = out.tocoo(), into.tocoo()
        # q cites training j: omega = zbar_q . (U zbar_j) -> an out-pair with vector Uz[j];
        # training j cites q: omega = (U^T zbar_j) . zbar_q -> an in-pair with vector Vz[j]
        cite_q, cite_j = np.asarray(oc.row, np.int64), np.asarray(oc.col, np.int64)
        cited_q, cited_j = np.asarray(ic.row, np.int64), np.asarray(ic.col, np.int64)

        def by_doc(rows: np.ndarray, cols: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            order = np.argsort(rows, kind="stable")
            ptr = np.zeros(n_new + 1, np.int64)
            np.cumsum(np.bincount(rows, minlength=n_new), out=ptr[1:])
            return ptr, np.ascontiguousarray(cols[order]), order

        out_ptr, out_nbr, out_ord = by_doc(cite_q, cite_j)
        in_ptr, in_nbr, in_ord = by_doc(cited_q, cited_j)
        pairs_out = _Pairs(np.ones(cite_q.size, np.int8), np.full(cite_q.size, float(self.c)))
        pairs_in = _Pairs(np.ones(cited_q.size, np.int8), np.full(cited_q.size, float(self.c)))
        offsets = np.arange(0, (n_new + 1) * L, L, dtype=np.int64)
        z = rng.integers(0, K, size=n_new * L).astype(np.int32)
        ndk = np.zeros((n_new, K), np.int32)
        np.add.at(ndk, (np.repeat(np.arange(n_new), L), z), 1)
        state = kernel_state(rng)[0]
        a_out, b_out = self._initial_ab(pairs_out)
        a_in, b_in = self._initial_ab(pairs_in)
        burn = n_iter // 2
        acc = np.zeros((n_new, K))
        for it in range(n_iter):
            rtm_kernels.link_term_sweep(
                z, offsets, ndk, alpha, state, Uz, Vz,
                out_ptr, out_nbr, a_out[out_ord], b_out[out_ord],
                in_ptr, in_nbr, a_in[in_ord], b_in[in_ord])
            zq = ndk / L
            a_out, b_out = self._augment(
                rng, np.einsum("pk,pk->p", zq[cite_q], Uz[cite_j]), pairs_out)
            a_in, b_in = self._augment(
                rng, np.einsum("pk,pk->p", zq[cited_q], Vz[cited_j]), pairs_in)
            if it >= burn:
                acc += ndk
        theta = acc / (n_iter - burn) + alpha
        theta /= theta.sum(axis=1, keepdims=True)
        return theta @ self.components_

    def summary(self, n_words: int = 8) -> str:
        text = super().summary(n_words)
        U = self.weights_
        strongest = np.dstack(np.unravel_index(np.argsort(-U, axis=None)[:5], U.shape))[0]
        pairs = ", ".join(f"U[{k},{l}]={U[k, l]:.2f}" for k, l in strongest)
        return (f"{self.variant_name_} (loss={self.loss}, weights={self.weights}, "
                f"c={self.c}, {self.n_pairs_} training pairs)\n{text}\n"
                f"largest link weights: {pairs}")


class _Pairs:
    """Minimal stand-in for PairSet in the augmentation of prediction-time pairs."""

    def __init__(self, y: np.ndarray, c: np.ndarray) -> None:
        self.y = y
        self.c = c
        self.n_pairs = y.size
