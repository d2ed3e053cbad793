"""LMV pictures: blockmodel heat map, visibility plots, term-scores, recommendation table."""

from __future__ import annotations

import copy

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from topiclink.datasets.synthetic import make_lmv_data  # noqa: E402
from topiclink.estimators import LDA, VisibilityTopicModel  # noqa: E402
from topiclink.estimators.topic_display import term_scores, top_words_by_term_score  # noqa: E402
from topiclink.plotting import (  # noqa: E402
    plot_blockmodel,
    plot_visibility_by_topic,
    plot_visibility_vs_citations,
    recommendation_table,
)


@pytest.fixture(scope="module")
def fitted():
    (corpus, links), _ = make_lmv_data(n_docs=150, n_words=60, random_state=0)
    model = VisibilityTopicModel(6, max_iter=10, random_state=0).fit(corpus, links=links)
    return model, corpus, links


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_term_scores_hand_computed():
    lbar = np.array([[0.5, 0.25, 0.25], [0.125, 0.5, 0.375]])
    geo = np.sqrt(lbar[0] * lbar[1])
    expected = lbar * np.log(lbar / geo)
    np.testing.assert_allclose(term_scores(lbar), expected)
    # word 0: 0.5 * log(0.5 / sqrt(0.0625)) = 0.5 log 2
    assert term_scores(lbar)[0, 0] == pytest.approx(0.5 * np.log(2))
    # a word equally likely in every topic scores 0
    assert np.allclose(term_scores(np.array([[0.3, 0.7], [0.3, 0.7]])), 0.0)


def test_top_words_by_term_score(fitted):
    model = fitted[0]
    words = top_words_by_term_score(model, 4)
    assert len(words) == 6 and all(len(w) == 4 for w in words)
    scores = term_scores(model)
    vocab = list(model.vocabulary_)
    assert words[0][0] == vocab[int(np.argmax(scores[0]))]
    np.testing.assert_allclose(term_scores(model), term_scores(model.components_))
    with pytest.raises(ValueError, match="n_words"):
        top_words_by_term_score(model, 0)


def test_plot_blockmodel(fitted):
    model = fitted[0]
    ax = plot_blockmodel(model, n_words=3)
    assert isinstance(ax, matplotlib.axes.Axes)
    np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), model.blockmodel_)
    assert ax.get_ylabel() == "citing topic" and ax.get_xlabel() == "cited topic"
    assert len(ax.figure.axes) == 2  # the colour bar
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0].startswith("0: ") and len(labels) == 6
    ax = plot_blockmodel(model, log=True)
    np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), model.blockmodel_)


def test_plot_visibility_vs_citations(fitted):
    model, corpus, links = fitted
    ax = plot_visibility_vs_citations(model, links, n_labels=3)
    assert isinstance(ax, matplotlib.axes.Axes)
    points = ax.collections[0].get_offsets()
    assert points.shape == (corpus.n_docs, 2)
    indeg = np.bincount(links.target, minlength=corpus.n_docs)
    np.testing.assert_array_equal(points[:, 0], indeg)
    np.testing.assert_allclose(points[:, 1], model.visibility_)
    assert len(ax.texts) == 3
    # an in-degree array and an (n, 2) pair array give the same points
    ax2 = plot_visibility_vs_citations(model, indeg, n_labels=0)
    np.testing.assert_array_equal(ax2.collections[0].get_offsets(), points)
    ax3 = plot_visibility_vs_citations(model, np.asarray(links.pairs), n_labels=0)
    np.testing.assert_array_equal(ax3.collections[0].get_offsets(), points)
    with pytest.raises(ValueError, match="links"):
        plot_visibility_vs_citations(model)
    with pytest.raises(ValueError, match="in-degree"):
        plot_visibility_vs_citations(model, indeg[:-1])


def test_plot_visibility_by_topic(fitted):
    model = fitted[0]
    ax = plot_visibility_by_topic(model)
    assert isinstance(ax, matplotlib.axes.Axes)
    n_nonempty = np.unique(np.argmax(model.doc_topic_, axis=1)).size
    assert len(ax.patches) == n_nonempty
    assert len(ax.get_xticklabels()) == n_nonempty


def test_recommendation_table(fitted):
    model, corpus, links = fitted
    row = corpus.counts[0]
    years = np.arange(corpus.n_docs) + 1900
    table = recommendation_table(model, row, n=7, links=links, publication_year=years)
    assert isinstance(table, pd.DataFrame) and len(table) == 7
    assert list(table.columns) == ["rank", "target", "title", "topics", "citations", "year",
                                   "visibility", "score"]
    assert table["rank"].tolist() == list(range(1, 8))
    assert np.all(np.diff(table["score"].to_numpy()) <= 0)
    scores = model.link_scores(row, direction="out")[0]
    np.testing.assert_allclose(table["score"], scores[table["target"]])
    assert table["score"].iloc[0] == pytest.approx(scores.max())
    np.testing.assert_allclose(table["visibility"], model.visibility_[table["target"]])
    np.testing.assert_array_equal(table["year"], years[table["target"]])
    assert table["topics"].str.match(r"^T\d+ [01]\.\d\d").all()
    assert table.attrs["query_topics"].startswith("T")
    # no titles: the doc ids stand in
    assert table["title"].tolist() == [str(model.train_doc_ids_[t]) for t in table["target"]]
    # a raw text, tokenised with the model's vocabulary (synthetic words have digits,
    # which the text tokeniser drops: give a copy of the model words of letters only)
    worded = copy.copy(model)
    V = len(model.vocabulary_)
    worded.vocabulary_ = np.array([f"term{chr(97 + i // 26)}{chr(97 + i % 26)}"
                                   for i in range(V)])
    by_text = recommendation_table(worded, "termaa termab termab, termac!", n=4)
    assert list(by_text.columns) == ["rank", "target", "title", "topics", "visibility",
                                     "score"]
    counts = np.zeros(V)
    counts[[0, 1, 2]] = [1, 2, 1]
    expected = model.link_scores(counts[None, :], direction="out")[0]
    np.testing.assert_allclose(by_text["score"], np.sort(expected)[::-1][:4])
    with pytest.raises(ValueError, match="vocabulary"):
        recommendation_table(worded, "zzzqqq xxyyzz")
    with pytest.raises(ValueError, match="one query"):
        recommendation_table(model, corpus.counts[:2])


def test_clear_errors_for_other_models(fitted):
    corpus = fitted[1]
    lda = LDA(3, max_iter=2, random_state=0).fit(corpus)
    for func, args in ((plot_blockmodel, ()), (plot_visibility_by_topic, ()),
                       (plot_visibility_vs_citations, (np.zeros(corpus.n_docs),)),
                       (recommendation_table, ("text",))):
        with pytest.raises(ValueError, match="VisibilityTopicModel"):
            func(lda, *args)
    with pytest.raises(ValueError, match="not fitted"):
        plot_blockmodel(VisibilityTopicModel(3))
