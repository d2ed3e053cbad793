"""Document ids come back as given (issue 22): integer ids stay integers through fit,
suggest_links and save/load; text ids stay text; a relational fit without links is a
one-line error."""

from __future__ import annotations

import numpy as np
import pytest

import topiclink
from topiclink.data import Corpus, DataError, Links
from topiclink.datasets import make_rtm_data

LINK_MODELS = ["RelationalTopicModel", "VariationalRTM", "LDARegression",
               "VisibilityTopicModel"]


@pytest.fixture(scope="module")
def data():
    (corpus, links), _ = make_rtm_data(n_docs=30, n_words=40, n_topics=3, doc_length=20,
                                       random_state=3)
    return corpus, links


def _fit(name, corpus, links):
    cls = topiclink.registered_estimators()[name]
    est = cls(n_topics=3, max_iter=3, random_state=0)
    if getattr(cls, "directed_links", False):
        links = Links.from_pairs(links.pairs, links.n_docs, directed=True)
    return est.fit(corpus, links=links)


@pytest.mark.parametrize("name", LINK_MODELS)
@pytest.mark.parametrize("ids", [np.arange(100, 130), np.array([f"p{i}" for i in range(30)])],
                         ids=["int", "text"])
def test_suggested_ids_are_the_given_ids(name, ids, data, tmp_path):
    corpus, links = data
    named = Corpus(corpus.counts, vocabulary=corpus.vocabulary, doc_ids=ids)
    est = _fit(name, named, links)
    got = est.suggest_links(corpus.subset([0, 1]), top=3)["doc_id"].tolist()
    assert all(type(x) is type(ids[0].item()) for x in got), got
    assert set(got) <= set(ids.tolist())
    loaded = topiclink.load(est.save(tmp_path / "m.npz"))
    assert loaded.suggest_links(corpus.subset([0, 1]), top=3)["doc_id"].tolist() == got


@pytest.mark.parametrize("name", LINK_MODELS)
def test_a_link_model_needs_links(name, data):
    corpus, _ = data
    empty = Links.from_pairs(np.zeros((0, 2), dtype=int), corpus.n_docs, directed=True)
    with pytest.raises((DataError, ValueError), match="links|citations") as info:
        _fit(name, corpus, empty)
    assert "\n" not in str(info.value)
