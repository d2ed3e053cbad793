"""What the variational EM algorithms share (Var-RTM, vSLDA, variational LDA, LMV): the
seeded topic initialisation, the topic M-step, the expected topic proportions of
``q(theta)`` and the expected log of a Dirichlet's components.

The algorithms themselves are :mod:`topiclink.families.rtm.variational` and
:mod:`topiclink.families.slda.variational`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, gammaln

__all__ = ["seeded_topic_stats", "normalise_rows", "topic_m_step", "expected_proportions",
           "expected_log_dirichlet", "TOPIC_INFERENCE"]

#: point (MAP) topics or a variational Dirichlet ``q(beta_k) = Dir(lambda_k)``
TOPIC_INFERENCE = ("map", "variational")


def expected_log_dirichlet(x: np.ndarray) -> np.ndarray:
    """E log of a Dirichlet's components, row-wise: psi(x) - psi(sum x) (Blei et al.
    2003, eq. 8's E_q[log theta])."""
    return digamma(x) - digamma(x.sum(axis=-1, keepdims=True))


def seeded_topic_stats(counts: sp.csr_matrix, n_topics: int, rng: np.random.Generator,
                       docs_per_topic: int = 1) -> np.ndarray:
    """Initial topic-word statistics (K, V): the word counts of distinct random documents
    per topic (LDA-C's "seeded" initialisation).

    ``docs_per_topic`` documents are summed per topic; the K * docs_per_topic documents
    are distinct unless the corpus has fewer documents than that.
    """
    D = counts.shape[0]
    n = n_topics * docs_per_topic
    chosen = rng.choice(D, size=n, replace=n > D)
    rows = np.repeat(np.arange(n_topics), docs_per_topic)
    P = sp.csr_matrix((np.ones(n), (rows, chosen)), shape=(n_topics, D))
    return np.asarray((P @ counts).todense(), dtype=np.float64)


def normalise_rows(lam_kw: np.ndarray) -> np.ndarray:
    """Each row divided by its sum."""
    return lam_kw / lam_kw.sum(axis=1, keepdims=True)


def topic_m_step(stats_kw: np.ndarray, s: float, topic_inference: str = "map"
                 ) -> tuple[np.ndarray, np.ndarray, float]:
    """M-step of the topics from the statistics ``S_kw = sum_d c_dw phi_dwk`` (K, V).

    ``lambda_kw = S_kw + s``.  Returns ``(components, log_topics, term)``:

    - ``"map"``: ``components = lambda / sum_w lambda`` (the MAP under Dirichlet(1 + s)),
      ``log_topics = log components`` and ``term = sum_kw lambda_kw log beta_kw`` (the
      words' expected log-likelihood plus ``s sum log beta``);
    - ``"variational"``: ``q(beta_k) = Dir(lambda_k)``, ``components`` its mean,
      ``log_topics = E_q[log beta] = psi(lambda_kw) - psi(sum_w lambda_kw)`` and ``term``
      the topics' part of the ELBO at the optimum (``E[log p(beta)] - E[log q(beta)] +
      sum S log beta``).

    ``stats_kw`` is used as given (a transposed view is fine; the results follow its
    memory layout).
    """
    lam = stats_kw + s
    totals = lam.sum(axis=1, keepdims=True)
    components = lam / totals
    if topic_inference == "map":
        log_topics = np.log(components)
        term = float(np.sum(lam * log_topics))
    elif topic_inference == "variational":
        V = lam.shape[1]
        log_topics = digamma(lam) - digamma(totals)
        term = float(lam.shape[0] * (gammaln(V * s) - V * gammaln(s))
                     - gammaln(totals).sum() + gammaln(lam).sum())
    else:
        raise ValueError(f"topic_inference must be one of {TOPIC_INFERENCE}, "
                         f"got {topic_inference!r}")
    return components, log_topics, term


def expected_proportions(gamma: np.ndarray) -> np.ndarray:
    """``E_q[theta_d] = gamma_d / sum_k gamma_dk`` for ``q(theta_d) = Dir(gamma_d)``."""
    return gamma / gamma.sum(axis=1, keepdims=True)
