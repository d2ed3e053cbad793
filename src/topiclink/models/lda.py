"""Latent Dirichlet allocation by collapsed Gibbs sampling.

Blei, Ng & Jordan (2003) model; Griffiths & Steyvers (2004) collapsed sampler.  The token
kernel (:mod:`topiclink.kernels.lda`) is the template the relational and supervised
models extend with a per-topic link or label term.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from topiclink.data.checks import check_n_topics, check_positive
from topiclink.data.corpus import Corpus, as_corpus
from topiclink.inference.chunked import ChunkedSweeper
from topiclink.inference.gibbs import run_chain
from topiclink.kernels import lda as kernels
from topiclink.models.base import TopicModelBase
from topiclink.parallel import n_threads, resolve_n_jobs
from topiclink.persistence import register
from topiclink.random import RandomState, as_generator, kernel_state, spawn

__all__ = ["LDA", "infer_doc_topics", "completion_split"]

logger = logging.getLogger(__name__)


def _alpha_vector(doc_topic_prior: float | Sequence[float] | None, n_topics: int) -> np.ndarray:
    if doc_topic_prior is None:
        return np.full(n_topics, 0.1)
    a = np.asarray(doc_topic_prior, dtype=np.float64)
    if a.ndim == 0:
        check_positive(float(a), "doc_topic_prior")
        return np.full(n_topics, float(a))
    if a.shape != (n_topics,):
        raise ValueError(f"doc_topic_prior has {a.size} entries for {n_topics} topics")
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError("doc_topic_prior must be finite and > 0 for every topic")
    return a


def infer_doc_topics(corpus: Corpus, phi_wk: np.ndarray, alpha: np.ndarray,
                     rng: np.random.Generator, n_iter: int = 50,
                     burn_in: int | None = None, smooth: bool = True) -> np.ndarray:
    """Topic proportions of documents with the topics fixed (Gibbs on their z only).

    p(z_n = k) ∝ (C_dk^-n + alpha_k) phi_{k w_n}; theta_d is estimated from the counts
    averaged over the sweeps after ``burn_in`` (default ``n_iter // 2``):
    theta_dk = (Cbar_dk + alpha_k) / (N_d + sum alpha).  Empty documents get the prior mean.
    With ``smooth=False`` the empirical proportions ``zbar_dk = Cbar_dk / N_d`` are returned
    instead (what the relational models' link scores use; empty documents get 1/K).

    Returns
    -------
    theta : ndarray (n_docs, K)
    """
    if n_iter < 1:
        raise ValueError(f"n_iter must be >= 1, got {n_iter}")
    burn = n_iter // 2 if burn_in is None else burn_in
    if not 0 <= burn < n_iter:
        raise ValueError(f"burn_in must be in [0, n_iter), got {burn}")
    K = phi_wk.shape[1]
    tok = corpus.tokens()
    n_tokens = tok.words.size
    state = kernel_state(rng)[0]
    # initialise each token at its most likely topic under the prior x phi, randomised
    z = rng.integers(0, K, size=n_tokens).astype(np.int32)
    ndk = np.zeros((corpus.n_docs, K), dtype=np.int32)
    np.add.at(ndk, (tok.docs, z), 1)
    acc = np.zeros((corpus.n_docs, K))
    for it in range(n_iter):
        kernels.sweep_fixed_topics(tok.words, tok.offsets, z, ndk, phi_wk, alpha, state)
        if it >= burn:
            acc += ndk
    acc /= n_iter - burn
    if smooth:
        acc += alpha
    else:
        acc[acc.sum(axis=1) == 0] = 1.0
    acc /= acc.sum(axis=1, keepdims=True)
    return acc


def completion_split(corpus: Corpus, rng: np.random.Generator,
                     fraction: float = 0.5) -> tuple[Corpus, Corpus]:
    """Split every document's tokens at random into an observed and a held-out part.

    The document-completion protocol (Wallach et al. 2009): estimate theta from the
    observed part, score the held-out part.  Each token is held out with probability
    ``fraction`` independently.
    """
    import scipy.sparse as sp

    tok = corpus.tokens()
    held = rng.random(tok.words.size) < fraction
    shape = corpus.counts.shape

    def part(mask: np.ndarray) -> Corpus:
        M = sp.csr_matrix((np.ones(int(mask.sum()), np.int32),
                           (tok.docs[mask], tok.words[mask])), shape=shape)
        return Corpus(M, vocabulary=corpus.vocabulary, doc_ids=corpus.doc_ids)

    return part(~held), part(held)


@register
class LDA(TopicModelBase):
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
        Gibbs sweeps over all tokens.
    evaluate_every : int, default 1
        Record the collapsed log joint per token every this many iterations (0: only at
        the end).
    transform_iter : int, default 50
        Sweeps used by :meth:`transform` for new documents (second half averaged).
    n_jobs : int, default 1
        Threads.  ``1``: the exact sequential collapsed sampler.  ``n > 1`` (``-1``: all
        cores): approximate distributed LDA (AD-LDA) over ``n`` fixed document chunks,
        each with its own RNG stream; the same seed and ``n_jobs`` give the same result.
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
    state_ : dict
        ``"z"``: final topic of every training token (corpus token order).
    """

    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "doc_topic_", "topic_weights_", "vocabulary_", "alpha_")
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "n_tokens_")

    def __init__(self, n_topics: int = 10, doc_topic_prior: float | None = None,
                 topic_word_prior: float = 0.01, max_iter: int = 200,
                 evaluate_every: int = 1, transform_iter: int = 50, n_jobs: int = 1,
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self.n_topics = n_topics
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.max_iter = max_iter
        self.evaluate_every = evaluate_every
        self.transform_iter = transform_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks

    # ------------------------------------------------------------------ fitting
    def _validate(self) -> tuple[int, np.ndarray, float]:
        K = check_n_topics(self.n_topics)
        alpha = _alpha_vector(self.doc_topic_prior, K)
        beta = check_positive(self.topic_word_prior, "topic_word_prior")
        if not isinstance(self.max_iter, int | np.integer) or self.max_iter < 1:
            raise ValueError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        return K, alpha, beta

    def fit(self, X: Any, y: None = None) -> LDA:
        """Fit to a :class:`~topiclink.data.Corpus` or a (sparse) document-term matrix."""
        K, alpha, beta = self._validate()
        corpus = as_corpus(X)
        corpus.check_no_empty("fit")
        rng = as_generator(self.random_state)
        init_rng, chain_rng = spawn(rng, 2)
        tok = corpus.tokens()
        z = init_rng.integers(0, K, size=tok.words.size).astype(np.int32)
        ndk = np.zeros((corpus.n_docs, K), dtype=np.int32)
        nwk = np.zeros((corpus.n_words, K), dtype=np.int32)
        nk = np.zeros(K, dtype=np.int32)
        kernels.init_counts(tok.words, tok.docs, z, ndk, nwk, nk)
        n_jobs = resolve_n_jobs(self.n_jobs)
        states = kernel_state(chain_rng, n_jobs)
        n_tokens = tok.words.size
        sweeper = ChunkedSweeper(tok.offsets, states, n_threads(n_jobs))

        def step(_: int) -> dict[str, float]:
            if n_jobs == 1:
                kernels.sweep(tok.words, tok.offsets, z, ndk, nwk, nk, alpha, beta, states[0])
            else:
                sweeper.sweep(tok.words, tok.offsets, z, ndk, nwk, nk, alpha, beta)
            return {}

        def loglik() -> float:
            return kernels.log_joint(ndk, nwk, nk, alpha, beta) / n_tokens

        logger.info("LDA: %d documents, %d words, %d tokens, K=%d", corpus.n_docs,
                    corpus.n_words, n_tokens, K)
        t0 = time.perf_counter()
        with sweeper:
            result = run_chain(self, step, loglik, self.max_iter, self.callbacks,
                               self.verbose, self.evaluate_every, desc="LDA")
        logger.info("LDA: %d iterations in %.2f s", result.n_iter, time.perf_counter() - t0)
        self._set_fitted(ndk, nwk, nk, alpha, beta, corpus.vocabulary)
        self.trace_ = result.trace
        self.n_iter_ = result.n_iter
        self.n_tokens_ = n_tokens
        self.state_ = {"z": z}
        return self

    def _set_fitted(self, ndk: np.ndarray, nwk: np.ndarray, nk: np.ndarray,
                    alpha: np.ndarray, beta: float, vocabulary: np.ndarray) -> None:
        V = nwk.shape[0]
        self.components_ = ((nwk.T + beta) / (nk[:, None] + V * beta)).astype(np.float64)
        theta = ndk + alpha
        self.doc_topic_ = theta / theta.sum(axis=1, keepdims=True)
        self.topic_weights_ = nk / max(int(nk.sum()), 1)
        self.vocabulary_ = np.asarray(vocabulary, dtype=str)
        self.alpha_ = alpha

    def fit_transform(self, X: Any, y: None = None) -> np.ndarray:
        return self.fit(X).doc_topic_

    # ------------------------------------------------------------------ prediction

    def _transform_corpus(self, corpus: Corpus, rng: np.random.Generator,
                          n_iter: int | None = None) -> np.ndarray:
        empty = corpus.empty_documents()
        if empty.size:
            logger.info("%d of %d documents have no known words; they get the prior mean",
                        empty.size, corpus.n_docs)
        return infer_doc_topics(corpus, np.ascontiguousarray(self.components_.T),
                                np.asarray(self.alpha_, dtype=np.float64), rng,
                                n_iter=n_iter or self.transform_iter)

    def transform(self, X: Any) -> np.ndarray:
        """Topic proportions (n_docs, K) of new documents with the topics fixed."""
        self._check_fitted()
        corpus = self._as_model_corpus(X)
        return self._transform_corpus(corpus, as_generator(self.random_state))

    def log_likelihood_completion(self, X: Any, fraction: float = 0.5,
                                  random_state: RandomState = None) -> tuple[float, int]:
        """Held-out log-likelihood by document completion and the held-out token count.

        Each document's tokens are split at random: theta is inferred from the observed
        part, and ``sum log sum_k theta_dk phi_kw`` is evaluated on the held-out part.
        """
        self._check_fitted()
        corpus = self._as_model_corpus(X)
        rng = as_generator(self.random_state if random_state is None else random_state)
        split_rng, infer_rng = spawn(rng, 2)
        observed, held = completion_split(corpus, split_rng, fraction)
        theta = self._transform_corpus(observed, infer_rng)
        tok = held.tokens()
        ll = kernels.token_log_likelihood(tok.words, tok.offsets, theta,
                                          np.ascontiguousarray(self.components_.T))
        return float(ll), int(tok.words.size)

    def perplexity(self, X: Any, fraction: float = 0.5,
                   random_state: RandomState = None) -> float:
        """Held-out perplexity by document completion, ``exp(-loglik / n_heldout_tokens)``."""
        from topiclink.metrics import perplexity

        ll, n = self.log_likelihood_completion(X, fraction, random_state)
        return float(perplexity(ll, n))

    def score(self, X: Any, y: None = None) -> float:
        """Held-out log-likelihood per token by document completion (higher is better)."""
        ll, n = self.log_likelihood_completion(X)
        return ll / max(n, 1)
