"""One contract for every estimator: clone, seed determinism, save/load, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import topiclink
from topiclink.data import Corpus, DataError
from topiclink.datasets import make_rtm_data
from topiclink.models import (
    LDA,
    RelationalTopicModel,
    SupervisedTopicModel,
    VariationalRTM,
    VariationalSLDA,
)

ESTIMATORS = {
    "LDA": lambda: LDA(n_topics=3, max_iter=8, random_state=2),
    "gRTM": lambda: RelationalTopicModel(n_topics=3, max_iter=6, c=2.0, negative_ratio=0.1,
                                         random_state=2),
    "MMRTM": lambda: RelationalTopicModel(n_topics=3, loss="hinge", weights="diagonal",
                                          max_iter=6, negative_ratio=0.1, random_state=2),
    "VarRTM": lambda: VariationalRTM(n_topics=3, max_iter=8, random_state=2),
    "gSLDA": lambda: SupervisedTopicModel(n_topics=3, max_iter=6, c=4.0, random_state=2),
    "vSLDA": lambda: VariationalSLDA(n_topics=3, max_iter=6, c=4.0, random_state=2),
}


@pytest.fixture(scope="module")
def data():
    (corpus, links), _ = make_rtm_data(n_docs=60, n_words=80, n_topics=3, doc_length=30,
                                       random_state=9)
    return corpus, links


def _fit(est, corpus, links):
    if isinstance(est, LDA):
        return est.fit(corpus)
    if isinstance(est, SupervisedTopicModel | VariationalSLDA):
        return est.fit(corpus, np.arange(corpus.n_docs) % 2)
    return est.fit(corpus, links)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_clone_determinism_and_persistence(name, data, tmp_path):
    corpus, links = data
    est = ESTIMATORS[name]()
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    a = _fit(est, corpus, links)
    b = _fit(twin, corpus, links)
    np.testing.assert_array_equal(a.components_, b.components_)
    new = corpus.subset([1, 2, 3])
    np.testing.assert_array_equal(a.transform(new), b.transform(new))
    loaded = topiclink.load(a.save(tmp_path / f"{name}.npz"))
    assert type(loaded) is type(a)
    np.testing.assert_array_equal(loaded.components_, a.components_)
    np.testing.assert_allclose(loaded.transform(new), a.transform(new))
    if hasattr(a, "link_scores"):
        np.testing.assert_allclose(loaded.link_scores(new), a.link_scores(new))
    if hasattr(a, "decision_function"):
        np.testing.assert_allclose(loaded.decision_function(new), a.decision_function(new))
    assert isinstance(a.summary(), str) and len(a.top_words(3)) == 3


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_bad_input_is_a_one_line_error(name, data):
    corpus, links = data
    counts = corpus.counts.toarray()
    counts[4] = 0
    empty = Corpus(sp.csr_matrix(counts))
    with pytest.raises(DataError, match="document 4 .* is empty"):
        _fit(ESTIMATORS[name](), empty, links)
    est = ESTIMATORS[name]().set_params(n_topics=1)
    with pytest.raises(ValueError, match="n_topics must be >= 2"):
        _fit(est, corpus, links)
    fitted = _fit(ESTIMATORS[name](), corpus, links)
    with pytest.raises(ValueError, match="columns"):
        fitted.transform(np.ones((2, corpus.n_words + 1)))
