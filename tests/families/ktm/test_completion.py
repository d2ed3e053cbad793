"""The fixed-topic perplexity estimators (inference/completion.py) and the topics-over-time
figure, which the KTM protocol uses."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from topiclink import LDA
from topiclink.families.dmr.estimator import DMR
from topiclink.topics.completion import (
    completion_log_likelihood,
    completion_perplexity,
    training_perplexity,
)


def test_completion_estimator_reproduces_the_estimators():
    rng = np.random.default_rng(1)
    X = sp.csr_matrix(rng.poisson(0.6, size=(30, 25)))
    lda = LDA(3, max_iter=10, random_state=0).fit(X)
    assert completion_log_likelihood(X, lda.components_, lda.alpha_, random_state=4) \
        == lda.log_likelihood_completion(X, random_state=4)
    assert completion_perplexity(X, lda.components_, lda.alpha_, random_state=4) \
        == pytest.approx(lda.perplexity(X, random_state=4))
    F = rng.normal(size=(30, 2))
    dmr = DMR(3, max_iter=10, burn_in=2, optimize_every=2, random_state=0).fit(X, features=F)
    assert completion_log_likelihood(X, dmr.components_, dmr.predict_alpha(F),
                                     random_state=4) \
        == dmr.log_likelihood_completion(X, random_state=4, features=F)
    with pytest.raises(ValueError, match="alpha must have shape"):
        completion_log_likelihood(X, lda.components_, np.ones((2, 3)))
    with pytest.raises(ValueError, match="topics must be"):
        completion_log_likelihood(X, lda.components_[:, :5], lda.alpha_)


def test_training_perplexity_matches_a_loop():
    rng = np.random.default_rng(2)
    X = sp.csr_matrix(rng.poisson(0.8, size=(6, 9)))
    theta = rng.dirichlet(np.ones(2), size=6)
    phi = rng.dirichlet(np.ones(9), size=2)
    ll = sum(X[d, w] * np.log(theta[d] @ phi[:, w]) for d in range(6) for w in range(9))
    assert training_perplexity(X, theta, phi) == pytest.approx(np.exp(-ll / X.sum()))
    # uniform topics: perplexity V whatever theta
    assert training_perplexity(X, theta, np.full((2, 9), 1 / 9)) == pytest.approx(9.0)


def test_plot_topics_over_time():
    from topiclink.plotting import plot_topics_over_time

    ax = plot_topics_over_time(np.arange(2000, 2010), np.random.default_rng(0).random(
        (10, 3)), ["a b", "c d", "e f"])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["e f", "c d", "a b"]
    with pytest.raises(ValueError, match="topic_labels"):
        plot_topics_over_time(np.arange(3), np.ones((3, 2)), ["x"])
    import matplotlib.pyplot as plt

    plt.close("all")
