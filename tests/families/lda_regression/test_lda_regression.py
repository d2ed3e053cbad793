"""LDA + Regression (Tan, Chan & Zheng 2016, section 5): the variational LDA's ELBO, the
case-control regression, planted recovery, seeding, persistence and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

import topiclink
from topiclink.data import DataError, Links
from topiclink.families.lda_regression.estimator import LDARegression, sample_nonlinks
from topiclink.families.lmv.synthetic import make_lmv_data
from topiclink.metrics import link_rank

K = 4


@pytest.fixture(scope="module")
def assortative():
    """300 documents whose links follow topic similarity (diagonal-heavy B)."""
    B = np.full((K, K), 0.002) + np.diag(np.full(K, 0.3))
    return make_lmv_data(n_docs=300, n_words=100, n_topics=K, blockmodel=B,
                         random_state=3)


@pytest.fixture(scope="module")
def small():
    B = np.full((6, 6), 0.005) + np.diag(np.full(6, 0.2))
    (corpus, links), _ = make_lmv_data(n_docs=150, n_words=80, n_topics=6, doc_length=60,
                                       blockmodel=B, random_state=5)
    return corpus, links


@pytest.mark.parametrize("n_topics", [4, 6])
def test_the_elbo_never_decreases(small, n_topics):
    corpus, links = small
    model = LDARegression(n_topics, max_iter=40, tol=0.0, random_state=1).fit(
        corpus, links=links)
    ll = model.trace_["log_likelihood"]
    assert ll.size == 40 and np.all(np.isfinite(ll))
    assert np.all(np.diff(ll) >= -1e-9 * np.abs(ll[:-1]))
    assert ll[-1] > ll[0]


def test_held_out_links_rank_far_better_than_random(assortative):
    (corpus, links), _ = assortative
    pairs = links.pairs
    n_train = 200
    inside = (pairs[:, 0] < n_train) & (pairs[:, 1] < n_train)
    model = LDARegression(K, random_state=0).fit(corpus.subset(np.arange(n_train)),
                                                 links=pairs[inside])
    held = pairs[(pairs[:, 0] >= n_train) & (pairs[:, 1] < n_train)]
    truth = sp.csr_matrix((np.ones(len(held)), (held[:, 0] - n_train, held[:, 1])),
                          shape=(corpus.n_docs - n_train, n_train))
    scores = model.link_scores(corpus.subset(np.arange(n_train, corpus.n_docs)),
                               direction="out")
    random_rank = (n_train + 1) / 2
    assert link_rank(scores, truth) < 0.5 * random_rank


def test_coefficients_are_positive_on_self_citing_topics_only():
    """Topics 0 and 1 cite themselves, 2 and 3 do not: after matching the fitted topics
    to the true ones, the weights of 0, 1 are clearly positive and those of 2, 3 not."""
    B = np.full((K, K), 0.002) + np.diag([0.3, 0.3, 0.0, 0.0])
    (corpus, links), truth = make_lmv_data(n_docs=200, n_words=100, n_topics=K,
                                           blockmodel=B, random_state=0)
    model = LDARegression(K, random_state=0).fit(corpus, links=links)
    corr = np.corrcoef(truth.doc_topic.T, model.doc_topic_.T)[:K, K:]
    rows, cols = linear_sum_assignment(-corr)
    assert np.all(corr[rows, cols] > 0.95)          # the LDA found the planted topics
    coef = model.coef_[cols]
    assert np.all(coef[:2] > 1.0) and np.all(coef[2:] < 0.0)
    # the case-control intercept correction: expected links over all pairs ~ observed
    P = model.predict_link_proba(corpus, targets=np.arange(corpus.n_docs), direction="out")
    np.fill_diagonal(P, 0.0)
    assert P.sum() == pytest.approx(links.n_links, rel=0.1)


def test_same_seed_same_model_and_threads_do_not_matter(small):
    corpus, links = small
    a = LDARegression(K, max_iter=10, random_state=4).fit(corpus, links=links)
    b = LDARegression(K, max_iter=10, random_state=4, n_jobs=2).fit(corpus, links=links)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert a.intercept_ == b.intercept_
    c = LDARegression(K, max_iter=10, random_state=5).fit(corpus, links=links)
    assert not np.array_equal(a.coef_, c.coef_)


def test_nonlink_sample_is_uniform_distinct_and_excludes_links():
    rng = np.random.default_rng(0)
    pairs = np.array([[0, 1], [1, 2], [2, 0], [3, 4]])
    for wanted in (5, 12, 1000):
        neg = sample_nonlinks(6, pairs, wanted, rng)
        assert neg.shape == (min(wanted, 30 - 4), 2)
        keys = neg[:, 0] * 6 + neg[:, 1]
        assert np.unique(keys).size == keys.size
        assert np.all(neg[:, 0] != neg[:, 1])
        assert not np.isin(keys, pairs[:, 0] * 6 + pairs[:, 1]).any()
    # uniform: every non-link equally often (chi-square-sized tolerance)
    counts = np.zeros(36)
    for _ in range(2000):
        neg = sample_nonlinks(6, pairs, 3, rng)
        np.add.at(counts, neg[:, 0] * 6 + neg[:, 1], 1)
    valid = counts[counts > 0]
    assert valid.size == 26
    expected = 2000 * 3 / 26
    assert np.max(np.abs(valid - expected)) < 5 * np.sqrt(expected)


def test_undirected_links_count_both_ways(small):
    corpus, links = small
    pairs = np.unique(np.sort(links.pairs, axis=1), axis=0)
    undirected = Links.from_pairs(pairs, corpus.n_docs, directed=False)
    both = np.concatenate([pairs, pairs[:, ::-1]])
    a = LDARegression(K, max_iter=5, random_state=0).fit(corpus, links=undirected)
    b = LDARegression(K, max_iter=5, random_state=0).fit(corpus, links=both)
    assert a.n_links_ == b.n_links_ == 2 * len(pairs)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_save_load_round_trip(small, tmp_path):
    corpus, links = small
    model = LDARegression(K, max_iter=8, random_state=2).fit(corpus, links=links)
    loaded = topiclink.load(model.save(tmp_path / "m.npz"))
    assert isinstance(loaded, LDARegression)
    new = corpus.subset(np.arange(10))
    for direction in ("out", "in", "either"):
        np.testing.assert_array_equal(model.link_scores(new, direction=direction),
                                      loaded.link_scores(new, direction=direction))
    assert loaded.intercept_ == model.intercept_
    assert topiclink.estimators.paper_models()["LDA+Reg"][0] is LDARegression


def test_bad_input_is_a_one_line_error(small):
    corpus, links = small
    D = corpus.n_docs
    cases = [
        ({"n_topics": 1}, links.pairs, ValueError, "n_topics must be"),
        ({"n_negatives": 0}, links.pairs, ValueError, "n_negatives must be"),
        ({"C": -1.0}, links.pairs, ValueError, "C must be"),
        ({}, np.array([[0, D]]), DataError, "not in"),
        ({}, np.zeros((0, 2), np.int64), DataError, "no links"),
    ]
    for params, lk, error, message in cases:
        with pytest.raises(error, match=message) as info:
            LDARegression(**{"n_topics": K, "max_iter": 2, **params}).fit(corpus, links=lk)
        assert "\n" not in str(info.value)
    with pytest.raises(TypeError, match="keyword"):
        LDARegression(K).fit(corpus, links.pairs)
    tiny = corpus.subset([0, 1, 2])
    full = np.array([[i, j] for i in range(3) for j in range(3) if i != j])
    with pytest.raises(DataError, match="non-links"):
        LDARegression(2, max_iter=2).fit(tiny, links=full)
