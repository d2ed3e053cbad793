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

Each iteration: (1) draw U from its Gaussian conditional (:mod:`topiclink.inference.weights`);
(2) sweep every token with the exact O(K) relational conditional
(:func:`topiclink.kernels.rtm.sweep_relational_range`); (3) draw every pair's augmentation
variable, as soon as both its documents are swept (:mod:`topiclink.inference.pipeline`):
lambda_ij ~ PG(c_ij, omega_ij) for the logistic loss (paper eq. 12), or
1/lambda_ij ~ IG(1/(c|zeta_ij|), 1), zeta_ij = l - ytil_ij omega_ij, for the hinge loss.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import check_n_topics, check_positive
from topiclink.data.corpus import as_corpus
from topiclink.data.links import Links, as_links
from topiclink.inference.augment import (
    ChunkedAugmenter,
    augment,
    initial_coefficients,
    pseudo_loglik,
)
from topiclink.inference.gibbs import run_chain
from topiclink.inference.pairs import PairSet
from topiclink.inference.pipeline import BlockPipeline, pipeline_layout
from topiclink.inference.weights import draw_weights, weight_posterior
from topiclink.kernels import lda as lda_kernels
from topiclink.kernels import rtm as rtm_kernels
from topiclink.models.base import TopicModelBase
from topiclink.models.lda import _alpha_vector, infer_doc_topics
from topiclink.models.linking import LinkPredictionMixin
from topiclink.parallel import n_threads, resolve_n_jobs
from topiclink.persistence import register
from topiclink.random import RandomState, as_generator, kernel_state, spawn

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


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@register
class RelationalTopicModel(LinkPredictionMixin, TopicModelBase):
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
    directed : bool or None
        None: directed when the links are (a Links object says; an edge array is directed).
        Undirected links enter training in both orientations.
    max_iter : int, default 400
        Gibbs iterations (the paper: 400 on Cora).
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
    random_state, verbose, callbacks
        As for :class:`~topiclink.models.lda.LDA`.

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
    """

    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "doc_topic_", "train_zbar_", "weights_", "topic_weights_",
        "vocabulary_", "alpha_", "train_doc_ids_", "train_titles_")
    _saved_scalars: ClassVar[tuple[str, ...]] = (
        "n_iter_", "n_pairs_", "n_negatives_", "directed_", "mean_doc_length_")

    def __init__(self, n_topics: int = 10, loss: str = "logistic", weights: str = "full",
                 approx: bool = False, doc_topic_prior: float | None = None,
                 topic_word_prior: float = 0.01, c: float = 1.0, c_neg: float = 1.0,
                 hinge_cost: float = 1.0, weight_prior_var: float = 1.0,
                 negative_ratio: float = 0.01, directed: bool | None = None,
                 max_iter: int = 400, n_average: int = 1, evaluate_every: int = 10,
                 transform_iter: int = 50, n_jobs: int | None = None,
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self.n_topics = n_topics
        self.loss = loss
        self.weights = weights
        self.approx = approx
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.c = c
        self.c_neg = c_neg
        self.hinge_cost = hinge_cost
        self.weight_prior_var = weight_prior_var
        self.negative_ratio = negative_ratio
        self.directed = directed
        self.max_iter = max_iter
        self.n_average = n_average
        self.evaluate_every = evaluate_every
        self.transform_iter = transform_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks

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
    def _validate(self) -> tuple[int, np.ndarray, float]:
        K = check_n_topics(self.n_topics)
        if self.loss not in ("logistic", "hinge"):
            raise ValueError(f"loss must be 'logistic' or 'hinge', got {self.loss!r}")
        if self.weights not in ("full", "diagonal"):
            raise ValueError(f"weights must be 'full' or 'diagonal', got {self.weights!r}")
        alpha = _alpha_vector(self.doc_topic_prior, K)
        beta = check_positive(self.topic_word_prior, "topic_word_prior")
        check_positive(self.c, "c")
        check_positive(self.c_neg, "c_neg")
        check_positive(self.weight_prior_var, "weight_prior_var")
        if check_positive(self.hinge_cost, "hinge_cost") < 1 and self.loss == "hinge":
            raise ValueError(f"hinge_cost must be >= 1, got {self.hinge_cost}")
        if not 0 <= float(self.negative_ratio) <= 1:
            raise ValueError(f"negative_ratio must be in [0, 1], got {self.negative_ratio}")
        for name in ("max_iter", "n_average"):
            v = getattr(self, name)
            if not isinstance(v, int | np.integer) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.n_average > self.max_iter:
            raise ValueError("n_average must not exceed max_iter")
        return K, alpha, beta

    def _training_pairs(self, links: Links, rng: np.random.Generator) -> PairSet:
        pos = links.pairs.astype(np.int64)
        neg = (links.sample_negatives(ratio=float(self.negative_ratio), random_state=rng)
               .astype(np.int64) if self.negative_ratio > 0 else np.zeros((0, 2), np.int64))
        if not links.directed:
            pos = np.concatenate([pos, pos[:, ::-1]])
            neg = np.concatenate([neg, neg[:, ::-1]])
        src = np.concatenate([pos[:, 0], neg[:, 0]])
        dst = np.concatenate([pos[:, 1], neg[:, 1]])
        y = np.concatenate([np.ones(len(pos), np.int8), np.zeros(len(neg), np.int8)])
        c = np.where(y == 1, float(self.c), float(self.c_neg))
        self.n_negatives_ = int(len(neg))
        # in the order of their later endpoint: the pairs that each block of the Z sweep
        # completes are consecutive (inference/pipeline.py)
        order = np.argsort(np.maximum(src, dst), kind="stable")
        return PairSet(src[order], dst[order], y[order], c[order], links.n_docs)

    # ------------------------------------------------------------------ augmentation
    def _augment(self, rng: np.random.Generator, omega: np.ndarray, pairs: Any
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Draw lambda for every pair; return the Gaussian coefficients (a, b)."""
        return augment(rng, self.loss, omega, pairs.y, pairs.c, float(self.hinge_cost))

    def _initial_ab(self, pairs: Any) -> tuple[np.ndarray, np.ndarray]:
        """(a, b) at lambda = 1."""
        return initial_coefficients(self.loss, pairs.y, pairs.c, float(self.hinge_cost))

    # ------------------------------------------------------------------ fitting
    def fit(self, X: Any, links: Any = None, y: None = None) -> RelationalTopicModel:
        """Fit to documents ``X`` and their ``links`` (Links, (n, 2) edge array of document
        positions, SciPy adjacency or networkx graph over ``X``'s document ids)."""
        K, alpha, beta = self._validate()
        threads = n_threads(resolve_n_jobs(self.n_jobs))
        corpus = as_corpus(X)
        corpus.check_no_empty("fit")
        if links is None:
            raise ValueError("fit needs links: a Links object, an (n, 2) edge array, "
                             "a scipy adjacency matrix or a networkx graph")
        links = as_links(links, corpus.n_docs, doc_ids=corpus.doc_ids, directed=self.directed)
        if self.directed is not None and links.directed != self.directed:
            links = Links.from_pairs(links.pairs, links.n_docs, directed=bool(self.directed),
                                     duplicates="drop")
        rng = as_generator(self.random_state)
        init_rng, pair_rng, chain_rng, weight_rng, aug_rng = spawn(rng, 5)
        pairs = self._training_pairs(links, pair_rng)
        if pairs.n_pairs == 0:
            raise ValueError("no training pairs: give at least one link or negative_ratio > 0")
        tok = corpus.tokens()
        D, V, N = corpus.n_docs, corpus.n_words, tok.words.size
        z = init_rng.integers(0, K, size=N).astype(np.int32)
        ndk = np.zeros((D, K), dtype=np.int32)
        nwk = np.zeros((V, K), dtype=np.int32)
        nk = np.zeros(K, dtype=np.int32)
        lda_kernels.init_counts(tok.words, tok.docs, z, ndk, nwk, nk)
        lengths = np.diff(tok.offsets).astype(np.float64)
        state = kernel_state(chain_rng)[0]
        full = self.weights == "full"
        a, b = (np.array(v, dtype=np.float64) for v in self._initial_ab(pairs))
        U = np.zeros((K, K))
        acc = {"U": np.zeros((K, K)), "nwk": np.zeros((V, K)), "n": 0}
        omega_last = np.zeros(pairs.n_pairs)
        inv_length = 1.0 / lengths
        # blocks of documents of about equal sweep work (tokens + pair visits x topics
        # touched); the pairs each block completes are drawn while later blocks are swept
        visits = (np.bincount(pairs.source, minlength=D)
                  + np.bincount(pairs.target, minlength=D))
        layout = pipeline_layout(lengths + visits * np.minimum(lengths, K), pairs.source,
                                 pairs.target)
        pipeline = BlockPipeline(layout.block_chunks, threaded=threads > 1)
        augmenter = ChunkedAugmenter(aug_rng, self.loss, pairs.y, pairs.c,
                                     float(self.hinge_cost), bounds=layout.chunks)
        # each chunk's sum of the pair pseudo log-likelihood (eqs. 7-8 of the paper)
        loglik_parts = np.zeros(len(layout.chunks))

        def step(it: int) -> dict[str, float]:
            nonlocal U
            t0 = time.perf_counter()
            zbar = ndk / lengths[:, None]
            P, s = weight_posterior(zbar, pairs.source, pairs.target, a, b,
                                    float(self.weight_prior_var), full,
                                    (pairs.out.ptr, pairs.out.nbr, pairs.out.order),
                                    executor=weight_pool)
            eta = draw_weights(weight_rng, P, s)
            U = eta.reshape(K, K) if full else np.diag(eta)
            t1 = time.perf_counter()
            Uz = zbar @ U.T
            Vz = zbar @ U
            # the sweep reads this iteration's (a, b) by document; new draws go to a, b
            a_out, b_out = pairs.by_source(a), pairs.by_source(b)
            a_in, b_in = pairs.by_target(a), pairs.by_target(b)

            def sweep_block(block: int) -> None:
                rtm_kernels.sweep_relational_range(
                    tok.words, tok.offsets, z, ndk, nwk, nk, alpha, beta, state, U, Uz, Vz,
                    pairs.out.ptr, pairs.out.nbr, a_out, b_out, pairs.into.ptr,
                    pairs.into.nbr, a_in, b_in, bool(self.approx),
                    layout.doc_edges[block], layout.doc_edges[block + 1])

            def draw_chunk(i: int) -> None:
                # both endpoints swept: Uz[j] = U zbar_j is fresh, omega_ij = zbar_i . Uz[j]
                lo, hi = layout.chunks[i]
                omega = rtm_kernels.pair_dots(ndk, Uz, pairs.source[lo:hi],
                                              pairs.target[lo:hi], inv_length)
                omega_last[lo:hi] = omega
                augmenter.draw_chunk(i, omega, a, b)
                loglik_parts[i] = (hi - lo) * pseudo_loglik(
                    self.loss, omega, pairs.y[lo:hi], pairs.c[lo:hi], float(self.hinge_cost))

            seconds_z, seconds_lambda = pipeline.run(sweep_block, draw_chunk)
            if it >= self.max_iter - self.n_average:
                acc["U"] += U
                acc["nwk"] += nwk
                acc["n"] += 1
            return {"seconds_weights": t1 - t0, "seconds_z": seconds_z,
                    "seconds_lambda": seconds_lambda,
                    "link_loglik": float(loglik_parts.sum()) / pairs.n_pairs}

        def loglik() -> float:
            return lda_kernels.log_joint(ndk, nwk, nk, alpha, beta) / N

        logger.info("%s: %d documents, %d tokens, %d pairs (%d negatives), K=%d",
                    self.variant_name_, D, N, pairs.n_pairs, self.n_negatives_, K)
        weight_pool = (ThreadPoolExecutor(1, thread_name_prefix="topiclink-weights")
                       if threads > 1 else None)
        try:
            result = run_chain(self, step, loglik, self.max_iter, self.callbacks,
                               self.verbose, self.evaluate_every, desc=self.variant_name_,
                               blas_threads=threads)
        finally:
            if weight_pool is not None:
                weight_pool.shutdown()
        n_acc = max(acc["n"], 1)
        U_hat = acc["U"] / n_acc if acc["n"] else U
        nwk_hat = acc["nwk"] / n_acc if acc["n"] else nwk.astype(np.float64)
        self.weights_ = U_hat
        self.components_ = ((nwk_hat.T + beta) / (nwk_hat.sum(axis=0)[:, None] + V * beta))
        theta = ndk + alpha
        self.doc_topic_ = theta / theta.sum(axis=1, keepdims=True)
        self.train_zbar_ = ndk / lengths[:, None]
        self.topic_weights_ = nk / max(int(nk.sum()), 1)
        self.vocabulary_ = np.asarray(corpus.vocabulary, dtype=str)
        self.alpha_ = alpha
        self.train_doc_ids_ = np.asarray(corpus.doc_ids).astype(str)
        self.train_titles_ = (np.asarray(corpus.titles, dtype=str) if corpus.titles is not None
                              else np.zeros(0, dtype=str))
        self.trace_ = result.trace
        self.n_iter_ = result.n_iter
        self.n_pairs_ = pairs.n_pairs
        self.directed_ = bool(links.directed)
        self.mean_doc_length_ = float(lengths.mean())
        self.state_ = {"z": z, "pairs": pairs, "omega": omega_last}
        return self

    # ------------------------------------------------------------------ prediction

    def transform(self, X: Any) -> np.ndarray:
        """Smoothed topic proportions (n_docs, K) of new documents from their words."""
        self._check_fitted()
        corpus = self._as_model_corpus(X)
        return infer_doc_topics(corpus, np.ascontiguousarray(self.components_.T),
                                np.asarray(self.alpha_), as_generator(self.random_state),
                                n_iter=self.transform_iter)

    def _query_topics(self, X_new: Any) -> np.ndarray:
        corpus = self._as_model_corpus(X_new)
        return infer_doc_topics(corpus, np.ascontiguousarray(self.components_.T),
                                np.asarray(self.alpha_), as_generator(self.random_state),
                                n_iter=self.transform_iter, smooth=False)

    def _scores_from_topics(self, zq: np.ndarray, targets: np.ndarray, direction: str
                            ) -> np.ndarray:
        zt = self.train_zbar_[targets]
        U = self.weights_
        if direction == "out":
            return zq @ U @ zt.T
        if direction == "in":
            return zq @ U.T @ zt.T
        out = zq @ U @ zt.T
        into = zq @ U.T @ zt.T
        if self.loss == "logistic":
            # log-odds of "a link in at least one direction": 1 - (1 - p_out)(1 - p_in)
            p = 1.0 - (1.0 - _sigmoid(out)) * (1.0 - _sigmoid(into))
            p = np.clip(p, 1e-300, 1 - 1e-16)
            return np.log(p) - np.log1p(-p)
        return np.maximum(out, into)

    def predict_link_proba(self, X_new: Any, targets: Any = None,
                           direction: str = "either") -> np.ndarray:
        """Link probabilities (logistic loss only; the hinge loss has scores, not
        probabilities: use :meth:`link_scores`)."""
        if self.loss != "logistic":
            raise ValueError("the hinge loss gives link scores, not probabilities; "
                             "use link_scores()")
        return _sigmoid(self.link_scores(X_new, targets, direction))

    def predict_words_from_links(self, links_out: Any, links_in: Any = None,
                                 n_tokens: int | None = None, n_iter: int = 60,
                                 random_state: RandomState = None) -> np.ndarray:
        """Word distributions (n_new, V) of new documents known only by their links.

        ``links_out`` (n_new, n_train) boolean: new document cites training document;
        ``links_in``: training document cites the new one (undirected models: give the
        links once in ``links_out``).  The topic proportions are inferred from the link
        term alone (``n_tokens`` unobserved-word tokens, default the mean training length),
        alternating token sweeps with the pairs' augmentation draws; then
        ``p(w) = sum_k thetahat_k phihat_kw``.
        """
        self._check_fitted()
        n_train, K = self.train_zbar_.shape
        out = sp.csr_matrix(links_out, dtype=bool)
        if out.shape[1] != n_train:
            raise ValueError(f"links_out has {out.shape[1]} columns for {n_train} training "
                             f"documents")
        into = (sp.csr_matrix(links_in, dtype=bool) if links_in is not None
                else sp.csr_matrix(out.shape, dtype=bool))
        if into.shape != out.shape:
            raise ValueError("links_in and links_out must have the same shape")
        if not self.directed_:
            into = (into + out).astype(bool).tocsr()
            out = into.copy()
        n_new = out.shape[0]
        L = int(n_tokens or max(1, round(self.mean_doc_length_)))
        rng = as_generator(self.random_state if random_state is None else random_state)
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
