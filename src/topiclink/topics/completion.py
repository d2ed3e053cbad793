"""Perplexity of fixed topics: document completion with given per-document priors, and the
training-set perplexity of point estimates.

These score *any* topic model from its arrays alone (topics phi (K, V), document priors
alpha, or training proportions theta), e.g. a peer library's fitted model whose own
estimators differ from ours (tomotopy's ``infer`` log-likelihood is not a held-out
perplexity).  :func:`completion_log_likelihood` is the estimator of
:meth:`topiclink.estimators.capabilities.TopicsMixin.log_likelihood_completion`: with the same
``random_state`` it draws the same split and the same inference chains, so it reproduces
an estimator's own number given that estimator's topics and priors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.random import RandomState

__all__ = ["completion_log_likelihood", "completion_perplexity", "training_perplexity"]


def _topics(topics: Any, n_words: int) -> np.ndarray:
    phi = np.asarray(topics, dtype=np.float64)
    if phi.ndim != 2 or phi.shape[1] != n_words:
        raise ValueError(f"topics must be (K, {n_words}) (one row per topic over the "
                         f"corpus's vocabulary), got shape {phi.shape}")
    if not np.isfinite(phi).all() or (phi < 0).any():
        raise ValueError("topics must be finite and non-negative")
    return phi


def completion_log_likelihood(X: Any, topics: Any, alpha: Any, fraction: float = 0.5,
                              random_state: RandomState = None, n_iter: int = 50
                              ) -> tuple[float, int]:
    """Held-out log-likelihood by document completion with fixed topics and priors.

    Each document's tokens are split at random (each held out with probability
    ``fraction``); its proportions theta_d are inferred from the observed part by Gibbs on
    z with the topics fixed and the prior Dirichlet(alpha_d) (``n_iter`` sweeps, the
    second half averaged); ``sum log sum_k theta_dk phi_kw`` is summed over the held-out
    tokens (Wallach et al. 2009).

    Parameters
    ----------
    X : Corpus or document-term matrix (D, V)
    topics : array (K, V)
        Topic-word probabilities (rows sum to 1; every word of ``X`` must have a positive
        probability under some topic, or its log-likelihood is -inf).
    alpha : array (K,) or (D, K)
        One Dirichlet prior for every document, or each document's own.
    fraction : float in (0, 1)
    random_state : int, Generator or None
        Seeds the split and the inference, exactly as the estimators'
        ``log_likelihood_completion(X, fraction, random_state)`` does.
    n_iter : int
        Gibbs sweeps of the inference (the estimators' ``transform_iter``, default 50).

    Returns
    -------
    (log_likelihood, n_heldout_tokens)
    """
    from topiclink.data.corpus import as_corpus
    from topiclink.random import as_generator, spawn
    from topiclink.topics.fixed_topics import completion_split, infer_doc_topics
    from topiclink.topics.kernels.lda import token_log_likelihood

    if isinstance(fraction, bool) or not 0.0 < float(fraction) < 1.0:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    corpus = as_corpus(X)
    phi = _topics(topics, corpus.n_words)
    K = phi.shape[0]
    a = np.asarray(alpha, dtype=np.float64)
    if a.shape not in ((K,), (corpus.n_docs, K)):
        raise ValueError(f"alpha must have shape ({K},) or ({corpus.n_docs}, {K}), got "
                         f"{a.shape}")
    if not np.isfinite(a).all() or (a <= 0).any():
        raise ValueError("alpha must be finite and positive")
    rng = as_generator(random_state)
    split_rng, infer_rng = spawn(rng, 2)
    observed, held = completion_split(corpus, split_rng, float(fraction))
    phi_wk = np.ascontiguousarray(phi.T)
    theta = infer_doc_topics(observed, phi_wk, np.ascontiguousarray(a), infer_rng,
                             n_iter=int(n_iter))
    tok = held.tokens()
    ll = token_log_likelihood(tok.words, tok.offsets, theta, phi_wk)
    return float(ll), int(tok.words.size)


def completion_perplexity(X: Any, topics: Any, alpha: Any, fraction: float = 0.5,
                          random_state: RandomState = None, n_iter: int = 50) -> float:
    """``exp(-loglik / n_heldout_tokens)`` of :func:`completion_log_likelihood`."""
    from topiclink.metrics.classification import perplexity

    ll, n = completion_log_likelihood(X, topics, alpha, fraction, random_state, n_iter)
    return float(perplexity(ll, n))


def training_perplexity(X: Any, doc_topic: Any, topics: Any) -> float:
    """Perplexity of the training documents under point estimates:
    ``exp(-sum_{d,w} n_dw log(sum_k theta_dk phi_kw) / N)``.

    ``doc_topic`` (D, K) are the documents' fitted proportions theta, ``topics`` (K, V)
    the topics phi.  Vectorised over the nonzero counts.
    """
    from topiclink.data.corpus import as_corpus

    corpus = as_corpus(X)
    phi = _topics(topics, corpus.n_words)
    theta = np.asarray(doc_topic, dtype=np.float64)
    if theta.shape != (corpus.n_docs, phi.shape[0]):
        raise ValueError(f"doc_topic must be ({corpus.n_docs}, {phi.shape[0]}), got "
                         f"{theta.shape}")
    counts = corpus.counts.tocoo()
    n = float(counts.data.sum())
    if n <= 0:
        raise ValueError("training_perplexity: the documents have no tokens")
    p = np.einsum("ik,ik->i", theta[counts.row], phi[:, counts.col].T)
    with np.errstate(divide="ignore"):
        ll = float(np.dot(counts.data, np.log(p)))
    return float(np.exp(-ll / n))
