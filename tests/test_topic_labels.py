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
    with pytest.raises(ValueError, match="by must be one of term-score, probability, frex"):
        lda.top_words(2, by="frequency")
    with pytest.raises(ValueError, match="n_words must be an integer"):
        top_word_indices(lda.components_, 0)


def _stm_frex(beta, w):
    """stm's calcfrex, written from its R source with SciPy's ranks."""
    from scipy.stats import rankdata

    excl = beta / beta.sum(axis=0)
    V = beta.shape[1]
    freq = np.vstack([rankdata(row) for row in beta]) / V
    ex = np.vstack([rankdata(row) for row in excl]) / V
    return 1.0 / (w / freq + (1 - w) / ex)


@pytest.mark.parametrize("w", [0.0, 0.3, 0.5, 1.0])
def test_frex_is_stms_calcfrex(w):
    from topiclink.estimators.topic_display import frex_scores

    rng = np.random.default_rng(0)
    beta = rng.dirichlet(np.full(30, 0.3), size=4)
    beta[:, 3] = beta[0, 3]                                   # ties within a topic's row
    assert np.allclose(frex_scores(beta, w), _stm_frex(beta, w), rtol=0, atol=1e-12)
    if w == 1.0:                                              # frequency alone
        assert np.array_equal(top_word_indices(beta, 5, "frex")[:, :1],
                              top_word_indices(beta, 5, "probability")[:, :1])


def test_frex_and_lift_labels():
    lda = _model()
    # war: frequent in topic 0 (0.25) and almost only there; states: frequent everywhere
    assert lda.top_words(1, by="frex") == [["war"], ["tax"]]
    lda.topic_weights_ = np.array([0.5, 0.5])
    from topiclink.estimators.topic_display import lift_scores

    marginal = 0.5 * lda.components_[0] + 0.5 * lda.components_[1]
    assert np.allclose(lift_scores(lda), lda.components_ / marginal)
    assert lda.top_words(2, by="lift") == [["war", "army"], ["tax", "trade"]]
    lda.topic_weights_ = np.array([0.9, 0.1])     # the corpus frequency follows the weights
    assert np.allclose(lift_scores(lda)[0], lda.components_[0] / (
        0.9 * lda.components_[0] + 0.1 * lda.components_[1]))
    with pytest.raises(ValueError, match="weights must be 2 non-negative shares"):
        lift_scores(lda.components_, [1.0, 2.0, 3.0])


def test_plot_top_words_ranks_by_term_score():
    import matplotlib

    matplotlib.use("Agg")
    from topiclink.plotting import plot_top_words

    ax = plot_top_words(_model(), n_words=2)
    assert {t.get_text() for t in ax.texts} == {"war", "army", "tax", "trade"}
    ax = plot_top_words(_model(), n_words=2, by="probability")
    assert "states" in {t.get_text() for t in ax.texts}
    ax = plot_top_words(_model(), n_words=1, by="frex")
    assert {t.get_text() for t in ax.texts} == {"war", "tax"}
