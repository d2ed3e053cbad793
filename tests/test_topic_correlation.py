"""Topic correlations as R's ``stm::topicCorr(method = "simple")``: Pearson correlations of
the documents' topic proportions, an edge above the cutoff."""

from __future__ import annotations

import numpy as np
import pytest

import topiclink
from topiclink.analysis import topic_correlation


def _proportions(seed: int = 0) -> np.ndarray:
    """Topics 0 and 1 rise together, topic 2 takes what they leave, topic 3 is noise."""
    rng = np.random.default_rng(seed)
    shared = rng.uniform(0.0, 0.4, 200)
    theta = np.column_stack([shared, shared + rng.normal(0, 0.02, 200).clip(-0.05, 0.05),
                             rng.uniform(0, 1, 200), rng.uniform(0, 0.2, 200)])
    return theta / theta.sum(axis=1, keepdims=True)


def test_correlations_are_numpys_and_the_graph_thresholds_them():
    theta = _proportions()
    result = topic_correlation(theta, cutoff=0.3)
    assert np.allclose(result.correlation, np.corrcoef(theta.T), atol=1e-12)
    expected = np.corrcoef(theta.T) > 0.3
    np.fill_diagonal(expected, False)
    assert np.array_equal(result.adjacency, expected)
    edges = result.edges()
    assert (edges["topic_a"] < edges["topic_b"]).all()
    assert edges["correlation"].is_monotonic_decreasing
    assert (edges.iloc[0]["topic_a"], edges.iloc[0]["topic_b"]) == (0, 1)
    graph = result.to_networkx()
    assert graph.number_of_nodes() == 4 and graph.number_of_edges() == len(edges)
    assert graph[0][1]["weight"] == pytest.approx(result.correlation[0, 1])


def test_an_unused_topic_has_no_correlation():
    theta = _proportions()
    theta = np.column_stack([theta, np.zeros(len(theta))])
    result = topic_correlation(theta)
    assert np.all(result.correlation[4, :4] == 0) and result.correlation[4, 4] == 1
    assert not result.adjacency[4].any()


def test_a_fitted_model_gives_its_training_proportions_and_labels():
    lda = topiclink.LDA(n_topics=3, max_iter=5, random_state=0)
    with pytest.raises(ValueError, match="has no doc_topic_"):
        topic_correlation(lda)
    rng = np.random.default_rng(1)
    import scipy.sparse as sp

    X = sp.csr_matrix(rng.poisson(1.0, (30, 12)))
    lda.fit(X)
    result = topic_correlation(lda)
    assert np.allclose(result.correlation, np.corrcoef(np.asarray(lda.doc_topic_).T))
    assert result.labels == [" ".join(w) for w in lda.top_words(3)]
    with pytest.raises(ValueError, match="cutoff must be in"):
        topic_correlation(lda, cutoff=1.5)
    with pytest.raises(ValueError, match="D >= 2 documents and K >= 2 topics"):
        topic_correlation(np.ones((5, 1)))


def test_the_correlation_figure():
    import matplotlib

    matplotlib.use("Agg")
    from topiclink.plotting import plot_topic_correlation

    ax = plot_topic_correlation(_proportions(), cutoff=0.3)
    assert "correlate above 0.3" in ax.get_title()
    assert {t.get_text() for t in ax.texts} >= {"0: topic 0", "1: topic 1"}
