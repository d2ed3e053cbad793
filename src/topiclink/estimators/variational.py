"""What the variational estimators share: the estimates of batch variational LDA
topics, inference of new documents from their words, and the EM fit run to its ``tol``.

The LDA E-step with the topics fixed (no links, no labels) gives ``q(theta_d) =
Dir(gamma_d)`` and the mean topic assignments ``phibar_d``; ``transform`` is
``E_q[theta] = gamma / sum gamma`` (the topics contract) and :meth:`topic_features` is
``E_q[zbar] = phibar``, what a link function or a classifier reads.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from topiclink.callbacks import RelativeTolerance
from topiclink.data.corpus import Corpus
from topiclink.inference.engine import Algorithm, RunResult, State
from topiclink.topics.fixed_topics import infer_doc_topics_variational
from topiclink.topics.variational import expected_log_dirichlet, expected_proportions

__all__ = ["VariationalTopicsMixin", "TRANSFORM_TOL"]

#: convergence of gamma (mean absolute change) when inferring new documents
TRANSFORM_TOL = 1e-6


class VariationalTopicsMixin:
    """Hook: ``_inference_log_topics()`` -> (K, V) log topic weights of the E-step
    (default: the fitted ``log_topics_``, E log beta)."""

    def _inference_log_topics(self) -> np.ndarray:
        return np.asarray(self.log_topics_)

    def _publish_batch_topics(self, lam: np.ndarray, gamma: np.ndarray, alpha: float,
                              topic_mass: np.ndarray) -> None:
        """The estimates of LDA fitted by batch variational Bayes, ``q(beta_k) =
        Dir(lam_k)`` (K, V) and ``q(theta_d) = Dir(gamma_d)`` (D, K) under the symmetric
        prior ``alpha``: ``components_`` the mean of q(beta), ``log_topics_`` its
        ``E_q[log beta]``, ``doc_topic_`` = ``train_zbar_`` gammabar, ``alpha_``, and
        ``topic_weights_`` the (K,) ``topic_mass`` normalised (uniform when it is 0)."""
        K = lam.shape[0]
        self.components_ = lam / lam.sum(axis=1, keepdims=True)
        self.log_topics_ = expected_log_dirichlet(lam)
        self.doc_topic_ = gamma / gamma.sum(axis=1, keepdims=True)
        self.train_zbar_ = self.doc_topic_
        self.alpha_ = np.full(K, alpha)
        total = topic_mass.sum()
        self.topic_weights_ = topic_mass / total if total > 0 else np.full(K, 1.0 / K)

    def _query_topics(self, corpus: Corpus) -> np.ndarray:
        """What a link function reads for new documents (default ``E_q[theta]``)."""
        return self._doc_topics(corpus, self._prediction_generator())

    def _infer(self, corpus: Corpus) -> tuple[np.ndarray, np.ndarray]:
        """Variational (gamma, phibar) of documents from their words, topics fixed."""
        return infer_doc_topics_variational(corpus, self._inference_log_topics(),
                                            np.asarray(self.alpha_, dtype=np.float64),
                                            int(self.transform_iter), TRANSFORM_TOL)

    def _doc_topics(self, corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
        """``E_q[theta] = gamma / sum gamma`` (no words: alpha / sum alpha)."""
        return expected_proportions(self._infer(corpus)[0])

    def topic_features(self, X: Any) -> np.ndarray:
        """``E_q[zbar] = phibar`` (n_docs, K) of documents: what the link function or the
        classifier uses.  The same inference as :meth:`transform`, summarised by the mean
        topic assignments instead of ``E_q[theta_d] = (alpha + N_d phibar_d) / (sum alpha
        + N_d)``; a document without known words gets ``alpha / sum(alpha)``."""
        self._check_fitted()
        return self._infer(self._as_model_corpus(X))[1]

    def _run_em(self, algorithm: Algorithm, data: Any, name: str, *, resume: bool,
                publish: Callable[[State, dict[str, np.ndarray] | None], None],
                checkpoint: str | os.PathLike[str] | None,
                checkpoint_every: int | str | float) -> tuple[RunResult, float]:
        """The EM iterations through the engine (``_run_engine``), stopped when the
        objective per token changes by less than ``tol`` (relative); a resumed fit
        compares its first iteration with the previous fit's last objective, as one
        uninterrupted run would.  ``name`` labels the rule's warning.  Returns the run and
        its wall time in seconds."""
        tolerance = RelativeTolerance(float(self.tol), name)
        previous = getattr(self, "state_", None)
        if resume and isinstance(previous, self._state_class) and np.isfinite(previous.J):
            tolerance.last = algorithm.objective(previous, data)
        t0 = time.perf_counter()
        result = self._run_engine(algorithm, data, resume=resume, publish=publish,
                                  checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                                  extra_callbacks=[tolerance])
        return result, time.perf_counter() - t0
