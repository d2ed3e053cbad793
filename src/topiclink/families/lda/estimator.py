"""Latent Dirichlet allocation by collapsed Gibbs sampling (the estimator).

The algorithm (state, step, objective) is :mod:`topiclink.topics.lda`; this module
validates, builds the data, runs the engine and publishes the estimates.
"""

from __future__ import annotations

import logging
import os
from typing import Any, ClassVar

import numpy as np

from topiclink.data.checks import (
    DataError,
    check_memory,
    doc_topic_prior_vector,
)
from topiclink.data.shards import ShardSet
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import TopicsMixin
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.collapsed import (
    CollapsedTopicsMixin,
    doc_topic_estimate,
    topic_shares,
    topic_word_estimate,
)
from topiclink.estimators.fit_docs import documents_checkpoint
from topiclink.estimators.param_codecs import ParamCodec
from topiclink.estimators.schema import TOPIC_ARRAYS, ArraySpec
from topiclink.execution import ExecutorCodec, Shards, SharedClientMixin
from topiclink.parameters import SchemeCodec, SchemeForm, shared
from topiclink.random import RandomState
from topiclink.topics.lda import (
    SCHEMES_OF_SAMPLER,
    CollapsedGibbsLDA,
    LDAState,
    ShardTokenData,
    TokenData,
)

__all__ = ["LDA", "MH_MIN_TOPICS"]

#: ``sampler="auto"`` uses the O(1)-per-token "warp" kernel from this many topics on,
#: chosen by time to a held-out log-likelihood (document completion, WarpLDA's after 80
#: sweeps) on 20 Newsgroups, one thread (benchmarks/results/lda_record_20newsgroups*.json):
#: Gibbs / "warp" reached it in 9.9 / 13.7 s at K = 200, 10.1 / 11.9 s at K = 300,
#: 14.6 / 12.7 s at K = 500, 16.2 / 12.0 s at K = 700 and 26.7 / 14.3 s at K = 1000, so
#: the crossover lies between 300 and 500 (one corpus; runs of the same command differ
#: by about 15 %).  On the 1M-token synthetic corpus of benchmarks/lda_throughput.py at
#: K = 1000 "warp" also reached Gibbs's final log joint sooner.  On two threads
#: (scheme=Shards("partition", 2), benchmarks/results/lda_record_20newsgroups_2threads*.json)
#: Gibbs / "warp" took 4.5 / 6.5 s at K = 200, 7.7 / 6.8 s at K = 500 and 15.2 / 9.9 s at
#: K = 1000: the same threshold holds for the partition scheme.
MH_MIN_TOPICS = 500

logger = logging.getLogger(__name__)


class LDA(SharedClientMixin, CollapsedTopicsMixin, TopicsMixin, Estimator):
    """Latent Dirichlet allocation fitted by collapsed Gibbs sampling.

    Parameters
    ----------
    n_topics : int, default 10
        K, the number of topics (>= 2).
    doc_topic_prior : float or array (K,), default 0.1
        alpha, the Dirichlet prior of the per-document topic proportions theta_d.
    topic_word_prior : float, default 0.01
        beta, the symmetric Dirichlet prior of the topics phi_k.
    max_iter : int, default 200
        Gibbs sweeps over all tokens (per call of ``fit``; ``resume=True`` adds more).
    evaluate_every : int, default 1
        Record the collapsed log joint per token every this many iterations (0: only at
        the end).
    transform_iter : int, default 50
        Sweeps used by :meth:`transform` for new documents (second half averaged), with
        the topics fixed: exact Gibbs, after a fit by ``"mh"`` / ``"warp"`` in its sparse
        form (O(K_d) per token, K_d the topics a document uses:
        :mod:`topiclink.topics.kernels.fixed_sparse`); threaded over documents by
        ``n_jobs``.
    scheme : "exact", "partition", "adlda" or Shards("partition" | "adlda", n_shards), \
default "exact"
        The statistical scheme (it fixes the chain).  ``"exact"``: the exact sequential
        collapsed sampler.  ``"partition"`` (the multi-core choice): ``n_shards``
        document shards x ``n_shards`` vocabulary blocks, swept in ``n_shards`` phases in
        which the threads touch disjoint count rows; only the topic totals lag, by at
        most one phase (:mod:`topiclink.topics.partition`; one shard is the exact
        sampler draw for draw).  ``"adlda"``: approximate distributed LDA (AD-LDA) over
        ``n_shards`` fixed document shards, each sweeping against a copy of the
        word-topic counts taken at the start of the sweep.  A name alone is 2 shards;
        :class:`topiclink.execution.Shards` gives another count
        (``Shards("adlda", n_shards=4)``), at most the number of documents (more is
        refused, never clamped: the shards fix the chain).  Each shard has its own RNG
        stream: the chain is fixed by the seed and the shards, never by the executor.
    executor : None, int, distributed.Client or str, default None
        Where the shards run; never changes the chain.  None: this process, ``n_jobs``
        threads; an integer: that many threads (``-1``: all cores); a Dask client, a
        scheduler address or ``"dask"`` (the current client): the AD-LDA shards on the
        workers of a Dask cluster, bit for bit the threaded chain whatever the number of
        workers (``scheme="adlda"`` only; needs ``pip install 'topiclink[dask]'``).
        Shared by ``clone``; a model file stores a thread count or an address, never a
        client (loaded: None).
    n_jobs : int or None, default 1
        Threads running the shards (``-1``: all cores) when ``executor`` is None.  Never
        changes the result.
    sampler : "auto", "gibbs", "mh" or "warp", default "auto"
        The token kernel: ``"gibbs"``, the exact collapsed
        conditional (O(K) per token, vectorised); ``"mh"``, exact Metropolis-Hastings
        steps with LightLDA's document and word proposals drawn in O(1) from the current
        counts (:mod:`topiclink.topics.kernels.lda_mh`; more sweeps to mix, each much cheaper at
        large K); ``"warp"``, the same two proposals in WarpLDA's order, a word phase
        then a document phase, so that each step reads one row of counts
        (:mod:`topiclink.topics.kernels.lda_warp`; exact; at K = 1000 on 20 Newsgroups
        1.3x the tokens per second of ``"mh"`` and a held-out target 3x sooner);
        ``"auto"``: ``"warp"`` from :data:`MH_MIN_TOPICS` topics on,
        else ``"gibbs"``.  ``"warp"`` also runs on ``scheme="partition"`` (WarpLDA's
        phases over document shards x word blocks, :mod:`topiclink.topics.warp_partition`),
        ``"mh"`` on the exact scheme only; AD-LDA uses ``"gibbs"``.
    init : "random" or "spectral", default "random"
        The chain's start: uniform random topics, or ``"spectral"``: the deterministic
        anchor-word topics of the word co-occurrences (Arora et al. 2013, as stm's
        ``init.type = "Spectral"``; :mod:`topiclink.topics.spectral`), each token given
        its most probable topic under them.  The same start for every seed; the chain
        after it is seeded as always (``benchmarks/lda_spectral_init.py`` measures the
        time to a held-out likelihood from each start).
    random_state : int, Generator or None
    verbose : bool
        Show a tqdm progress bar.
    callbacks : list, optional
        Objects with ``on_iteration(model, iteration, info)``; returning True stops.

    Attributes
    ----------
    components_ : ndarray (K, V)
        phi-hat, topic-word probabilities, ``(C_kw + beta) / (C_k + V beta)``; rows sum to 1.
    doc_topic_ : ndarray (D, K)
        theta-hat of the training documents, ``(C_dk + alpha_k) / (N_d + sum alpha)``.
    topic_weights_ : ndarray (K,)
        Share of training tokens in each topic.
    vocabulary_ : ndarray of str (V,)
    trace_ : dict of ndarray
        ``"log_likelihood"``: collapsed log p(w, z) per token per iteration;
        ``"seconds"``: wall time per iteration.
    n_iter_ : int
    state_ : LDAState
        The sampler state (topics of every token, counts, RNG states): ``fit(X,
        resume=True)`` continues from it.
    random_state_ : int
        The seed actually used.
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("X",)
    allows_empty_documents: ClassVar[bool] = True
    posterior_chain: ClassVar[bool] = True
    #: ``topiclink fit lda`` (:mod:`topiclink.cli.estimator_commands`)
    cli_name: ClassVar[str] = "lda"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {
        "doc_topic_prior": ("--alpha",), "topic_word_prior": ("--beta",)}
    cli_defaults: ClassVar[dict[str, Any]] = {"n_topics": 20, "doc_topic_prior": 0.1}
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"LDA": {}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics", "doc_topic_prior", "topic_word_prior", "max_iter",
                 "evaluate_every", "transform_iter"),
        "scheme": [SchemeForm("exact", "partition", "adlda",
                              sharded=("partition", "adlda"))],
        **shared("executor", "n_jobs"),
        **shared("sampler", "init"),
        **shared("random_state", "verbose", "callbacks"),
    }
    _param_codecs: ClassVar[dict[str, ParamCodec]] = {"scheme": SchemeCodec(),
                                                      "executor": ExecutorCodec()}
    _sharded_schemes = ("partition", "adlda")
    _local_schemes = ("exact", "partition")
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "doc_topic_", "topic_weights_", "vocabulary_", "alpha_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {**TOPIC_ARRAYS}
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "n_tokens_")
    _state_class = LDAState

    def __init__(self, n_topics: int = 10, *, doc_topic_prior: float | None = None,
                 topic_word_prior: float = 0.01, max_iter: int = 200,
                 evaluate_every: int = 1, transform_iter: int = 50,
                 scheme: str | Shards = "exact", executor: Any = None,
                 n_jobs: int | None = 1, sampler: str = "auto", init: str = "random",
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    # ------------------------------------------------------------------ fitting
    def _algorithm(self) -> CollapsedGibbsLDA:
        K = int(self.n_topics)
        plan = self._execution_plan()
        return CollapsedGibbsLDA(K, doc_topic_prior_vector(self.doc_topic_prior, K),
                                 float(self.topic_word_prior),
                                 scheme=plan.scheme, n_shards=plan.n_shards,
                                 executor=plan.executor, n_threads=plan.n_threads,
                                 sampler=self._token_sampler(), init=self.init)

    def _inference_sampler(self) -> str:
        """New documents are inferred by sparse exact Gibbs (O(K_d) per token) when the
        fit used an MH kernel (many topics), else by dense Gibbs (benchmarks/lda_infer.py:
        at K = 1000 on 20 Newsgroups sparse reached dense Gibbs's held-out likelihood in
        0.55x its time; Metropolis-Hastings needed 4x the sweeps for it)."""
        return "gibbs" if self._token_sampler() == "gibbs" else "sparse"

    def _token_sampler(self) -> str:
        """The token kernel: ``sampler``, or for ``"auto"`` the Metropolis-Hastings kernel
        from :data:`MH_MIN_TOPICS` topics on (the exact and partition schemes), else exact
        Gibbs."""
        if self.sampler != "auto":
            scheme = self._execution_plan().scheme
            allowed = SCHEMES_OF_SAMPLER.get(str(self.sampler))
            if allowed is not None and scheme not in allowed:
                raise ValueError(f"sampler={self.sampler!r} runs with scheme "
                                 f"{' or '.join(map(repr, allowed))}, not {scheme!r} "
                                 "(or use sampler='gibbs')")
            return str(self.sampler)
        local = self._execution_plan().scheme in SCHEMES_OF_SAMPLER["warp"]
        return "warp" if local and int(self.n_topics) >= MH_MIN_TOPICS else "gibbs"

    @documents_checkpoint
    def fit(self, X: Any, y: None = None, *, resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY) -> LDA:
        """Fit to a :class:`~topiclink.data.Corpus`, a (sparse) document-term matrix, or a
        corpus on disk (:class:`~topiclink.data.shards.ShardSet`).

        ``resume=True`` continues the chain of a fitted model (or one saved with
        ``save(path, full=True)``) for ``max_iter`` more iterations on the same ``X``.

        A ShardSet needs a Dask ``executor`` and ``scheme=Shards("adlda", n_shards)``
        with ``n_shards`` its number of shards (one-line ValueError otherwise): each
        worker reads its shard file (the directory must be visible to the workers at the
        same path) and the driver never loads the tokens.  The chain is bit for bit that
        of the same corpus in memory with the same shards.  The driver still holds z (4
        bytes per token; 12 for a moment while the first topics are drawn as int64), ndk
        (4 D K bytes), nwk (4 V K bytes) and the document offsets (8 D bytes); the fitted
        attributes are the usual ones.  A chain fitted on a ShardSet resumes on that
        ShardSet only (its fingerprint comes from the manifest's checksums).  Predictions
        (``transform``, ``perplexity``, ``score``) take a ShardSet too and read it shard
        by shard (the same results as for the corpus in memory).
        """
        self._validate_params()
        if isinstance(X, ShardSet):
            data: TokenData | ShardTokenData
            data, algorithm = self._training_shards(X)
            vocabulary = X.vocabulary()
            if vocabulary is None:
                vocabulary = np.array([f"w{i}" for i in range(X.n_words)])
        else:
            corpus = self._training_corpus(X)   # sizes and memory before any K array
            algorithm = self._algorithm()
            data = TokenData.from_corpus(corpus)
            vocabulary = corpus.vocabulary
        logger.info("LDA: %d documents, %d words, %d tokens, K=%d", data.n_docs,
                    data.n_words, data.n_tokens, algorithm.n_topics)

        def publish(state: LDAState, averaged: dict[str, np.ndarray] | None) -> None:
            algorithm.sync(state, ("ndk",))
            self._publish(state, algorithm, vocabulary)

        self._run_engine(algorithm, data, resume=resume, publish=publish,
                         checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         evaluate_every=int(self.evaluate_every))
        self.n_tokens_ = data.n_tokens
        logger.info("LDA: %d iterations in %.2f s", self.n_iter_,
                    float(np.sum(self.trace_.get("seconds", 0.0))))
        return self

    def _training_shards(self, shards: ShardSet
                         ) -> tuple[ShardTokenData, CollapsedGibbsLDA]:
        """The training data of a ShardSet and the algorithm, checked as
        :meth:`_training_corpus` checks a corpus (sizes, memory; before the algorithm's
        K-sized arrays), without reading the tokens."""
        if shards.n_docs == 0 or shards.n_words == 0 or shards.n_tokens == 0:
            raise DataError(f"fit: the ShardSet {shards.directory} has no tokens")
        K, D, V, N = int(self.n_topics), shards.n_docs, shards.n_words, shards.n_tokens
        # the driver's arrays: counts K (D + 2 V), z and offsets (as for a Corpus)
        check_memory(8 * K * (D + 2 * V) + 8 * N + 8 * K * K,
                     f"fit: {K} topics over the ShardSet's {D} documents and {V} words")
        algorithm = self._algorithm()
        data = ShardTokenData.from_shards(shards)
        algorithm.check_data(data)
        n_empty = int(np.count_nonzero(np.diff(data.offsets) == 0))
        if n_empty:
            logger.info("%d of %d training documents are empty; their topic proportions "
                        "stay at the prior", n_empty, shards.n_docs)
        return data, algorithm

    def _publish(self, state: LDAState, algorithm: CollapsedGibbsLDA,
                 vocabulary: np.ndarray) -> None:
        self.components_ = topic_word_estimate(state.nwk, state.nk, algorithm.beta)
        self.doc_topic_ = doc_topic_estimate(state.ndk, algorithm.alpha)
        self.topic_weights_ = topic_shares(state.nk)
        self.vocabulary_ = np.asarray(vocabulary, dtype=str)
        self.alpha_ = algorithm.alpha
        self.n_iter_ = state.iteration
