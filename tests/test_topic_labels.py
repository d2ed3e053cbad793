"""Topic labels by term-score by default (issue 23): a word frequent in every topic does
not label them all; ``by="probability"`` keeps the raw ranking."""

from __future__ import annotations

import numpy as np
import pytest

import topiclink
from topiclink.estimators.topic_display import top_word_indices


def _model():
    """Two topics over 'states united government' everywhere plus their own words."""
    vocab = np.array(["states", "united", "government", "war", "army", "tax", "trade"])
    comps = np.array([[0.25, 0.20, 0.15, 0.25, 0.13, 0.01, 0.01],
                      [0.25, 0.20, 0.15, 0.01, 0.01, 0.20, 0.18]])
    lda = topiclink.LDA(n_topics=2)
    lda.components_, lda.vocabulary_, lda.n_iter_ = comps, vocab, 1
    return lda


def test_term_score_labels_drop_the_words_every_topic_shares():
    lda = _model()
    assert lda.top_words(2, by="probability") == [["states", "war"], ["states", "united"]]
    assert lda.top_words(2) == [["war", "army"], ["tax", "trade"]]
    assert "topic  0: war army" in lda.summary(2)
    assert "states united" in lda.summary(2, by="probability")


def test_label_ranking_is_checked():
    lda = _model()
    with pytest.raises(ValueError, match="by must be one of term-score, probability"):
        lda.top_words(2, by="frequency")
    with pytest.raises(ValueError, match="n_words must be an integer"):
        top_word_indices(lda.components_, 0)


def test_plot_top_words_ranks_by_term_score():
    import matplotlib

    matplotlib.use("Agg")
    from topiclink.plotting import plot_top_words

    ax = plot_top_words(_model(), n_words=2)
    assert {t.get_text() for t in ax.texts} == {"war", "army", "tax", "trade"}
    ax = plot_top_words(_model(), n_words=2, by="probability")
    assert "states" in {t.get_text() for t in ax.texts}
