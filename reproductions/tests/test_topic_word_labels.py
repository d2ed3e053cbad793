"""The KTM protocol's topic labels rank words as the library's ``top_words`` does."""

from __future__ import annotations

from tests.test_topic_labels import _model

from topiclink_reproductions.ktm import top_word_labels


def test_top_word_labels_agree_with_the_library_ranking():
    lda = _model()
    assert top_word_labels(lda.components_, lda.vocabulary_, 2) == ["0: war army",
                                                                   "1: tax trade"]
    assert top_word_labels(lda.components_, lda.vocabulary_, 1, by="probability") == [
        "0: states", "1: states"]
    labels = [" ".join(words) for words in lda.top_words(2)]
    assert [label.split(": ", 1)[1] for label in top_word_labels(
        lda.components_, lda.vocabulary_, 2)] == labels
