"""What the collapsed Gibbs topic estimators share (LDA, DMR, gRTM, gSLDA): the
posterior-mean estimates read off the sampler's counts, and the topic proportions of new
documents by Gibbs sweeps with the topics fixed.
"""

from __future__ import annotations

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.execution.executor import n_threads, resolve_n_jobs
from topiclink.topics.fixed_topics import infer_doc_topics

__all__ = ["CollapsedTopicsMixin", "doc_topic_estimate", "topic_shares",
           "topic_word_estimate"]


def topic_word_estimate(nwk: np.ndarray, nk: np.ndarray, beta: float) -> np.ndarray:
    """phi-hat (K, V), ``(C_kw + beta) / (C_k + V beta)``, from the word-topic counts
    ``nwk`` (V, K) and the topic totals ``nk`` (K,); rows sum to 1."""
    V = nwk.shape[0]
    phi = nwk.T.astype(np.float64)          # the one K x V array made (no temporaries)
    phi += beta
    phi /= nk[:, None] + V * beta
    return phi


def doc_topic_estimate(ndk: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """theta-hat (D, K), ``(C_dk + alpha_k) / (N_d + sum_k alpha_k)``, from the
    document-topic counts ``ndk`` (D, K) and the prior ``alpha`` ((K,) or one row per
    document)."""
    theta = ndk + alpha
    return theta / theta.sum(axis=1, keepdims=True)


def topic_shares(nk: np.ndarray) -> np.ndarray:
    """The share of the training tokens in each topic (K,), from the topic totals."""
    return nk / max(int(nk.sum()), 1)


class CollapsedTopicsMixin:
    """Topic proportions of new documents: ``transform_iter`` sweeps over their tokens
    (the second half averaged) with the fitted topics ``components_`` and the prior
    ``alpha_`` fixed, on ``n_jobs`` threads (the result does not depend on them)."""

    def _inference_sampler(self) -> str:
        """The fixed-topics token sampler (:data:`~topiclink.topics.fixed_topics.
        INFER_SAMPLERS`): exact Gibbs here; a family fitted by Metropolis-Hastings
        overrides it."""
        return "gibbs"

    def _doc_topics(self, corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
        threads = n_threads(resolve_n_jobs(getattr(self, "n_jobs", 1)))
        return infer_doc_topics(corpus, np.ascontiguousarray(self.components_.T),
                                np.asarray(self.alpha_, dtype=np.float64), rng,
                                n_iter=int(self.transform_iter),
                                sampler=self._inference_sampler(), n_threads=threads)
