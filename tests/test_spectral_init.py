"""LDA's spectral start (``init="spectral"``): anchor words against brute force, topics
recovered from a corpus drawn from LDA, the same start for every seed, a chain that
still samples the collapsed posterior after it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from topiclink import LDA
from topiclink.datasets import make_lda_data
from topiclink.topics import spectral
from topiclink.topics.lda import TokenData


def _matched_cosines(truth: np.ndarray, fitted: np.ndarray) -> np.ndarray:
    a = truth / np.linalg.norm(truth, axis=1, keepdims=True)
    b = fitted / np.linalg.norm(fitted, axis=1, keepdims=True)
    rows, cols = linear_sum_assignment(-(a @ b.T))
    return (a @ b.T)[rows, cols]


def test_cooccurrence_is_the_mean_of_the_documents_pair_counts():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.0, size=(30, 6))
    X[0] = [1, 0, 0, 0, 0, 0]                        # one token: left out
    Q, used = spectral.cooccurrence(sp.csr_matrix(X))
    kept = X.sum(axis=1) >= 2
    want = np.mean([(np.outer(n, n) - np.diag(n)) / (n.sum() * (n.sum() - 1))
                    for n in X[kept]], axis=0)
    assert used == kept.sum()
    np.testing.assert_allclose(Q, want, atol=1e-15)


def test_anchors_are_the_greedy_farthest_rows():
    """Against a direct Gram-Schmidt over all rows."""
    rng = np.random.default_rng(1)
    Qbar = rng.dirichlet(np.ones(12), size=40)
    got = spectral.find_anchors(Qbar, 5)
    chosen: list[int] = []
    basis = np.zeros((0, 12))
    for _ in range(5):
        resid = Qbar - (Qbar @ basis.T) @ basis
        norms = (resid ** 2).sum(axis=1)
        norms[chosen] = -1
        a = int(np.argmax(norms))
        chosen.append(a)
        basis = np.vstack([basis, resid[a] / np.linalg.norm(resid[a])])
    assert got.tolist() == chosen


def test_recover_l2_finds_the_convex_weights():
    """Rows that are exact convex combinations of the anchor rows are recovered."""
    rng = np.random.default_rng(2)
    S = rng.dirichlet(np.full(20, 0.3), size=4)
    C = rng.dirichlet(np.ones(4), size=30)
    Qbar = np.vstack([S, C @ S])
    got = spectral.recover_l2(Qbar, np.arange(4), steps=2000)
    np.testing.assert_allclose(got[4:], C, atol=2e-3)
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_anchor_topics_recover_the_generating_topics():
    corpus, truth = make_lda_data(n_docs=2000, n_words=500, n_topics=8, doc_length=100,
                                  random_state=0)
    topics, anchors = spectral.anchor_topics(corpus.counts, 8)
    assert topics.shape == (8, 500) and np.allclose(topics.sum(axis=1), 1.0)
    assert _matched_cosines(truth.topic_word, topics).min() > 0.9
    # each anchor is (almost) a word of one topic only
    share = truth.topic_word[:, anchors] / truth.topic_word[:, anchors].sum(axis=0)
    assert share.max(axis=0).min() > 0.9


def test_spectral_start_is_seed_free_and_starts_closer():
    corpus, truth = make_lda_data(n_docs=600, n_words=300, n_topics=6, doc_length=80,
                                  random_state=3)
    first = [LDA(n_topics=6, max_iter=1, init="spectral", sampler="gibbs", random_state=s,
                 evaluate_every=1).fit(corpus) for s in (0, 1)]
    random = LDA(n_topics=6, max_iter=1, init="random", sampler="gibbs", random_state=0,
                 evaluate_every=1).fit(corpus)
    assert first[0].trace_["log_likelihood"][-1] > random.trace_["log_likelihood"][-1] + 0.3
    algorithm = LDA(n_topics=6, init="spectral")._algorithm()
    tokens = TokenData.from_corpus(corpus)
    a = algorithm.init(tokens, np.random.default_rng(0))
    b = algorithm.init(tokens, np.random.default_rng(99))
    assert np.array_equal(a.z, b.z)                          # no seed in the start
    assert _matched_cosines(truth.topic_word, first[0].components_).min() > 0.8


def test_the_chain_after_a_spectral_start_samples_the_posterior():
    """On a corpus from LDA, 100 sweeps after either start give topics equally close to
    the truth and the same training log-likelihood to 1 %."""
    corpus, truth = make_lda_data(n_docs=400, n_words=200, n_topics=5, doc_length=60,
                                  random_state=4)
    fits = {init: LDA(n_topics=5, max_iter=100, init=init, sampler="gibbs",
                      random_state=1).fit(corpus) for init in ("random", "spectral")}
    ll = {k: m.trace_["log_likelihood"][-1] for k, m in fits.items()}
    assert abs(ll["spectral"] - ll["random"]) < 0.01 * abs(ll["random"])
    for m in fits.values():
        assert _matched_cosines(truth.topic_word, m.components_).min() > 0.85


@pytest.mark.parametrize("kwargs, message", [
    ({"init": "anchors"}, "init must be one of"),
    ({"init": "spectral", "n_topics": 40}, "fewer than the 40 topics"),
])
def test_bad_starts_are_one_line_errors(kwargs, message):
    X = np.random.default_rng(0).poisson(1.0, size=(20, 30))
    with pytest.raises(ValueError, match=message) as info:
        LDA(max_iter=1, **{"n_topics": 3, **kwargs}).fit(X)
    assert "\n" not in str(info.value)


def test_dmr_starts_from_the_same_spectral_assignments():
    from topiclink import DMR
    from topiclink.families.dmr.algorithm import DMRData

    corpus, _ = make_lda_data(n_docs=200, n_words=150, n_topics=4, doc_length=50,
                              random_state=5)
    tokens = TokenData.from_corpus(corpus)
    lda = LDA(n_topics=4, init="spectral")._algorithm().init(tokens, np.random.default_rng(0))
    dmr = DMR(4, init="spectral")._algorithm().init(
        DMRData(tokens, np.ones((200, 2))), np.random.default_rng(1))
    assert np.array_equal(lda.z, dmr.z) and np.array_equal(lda.nwk, dmr.nwk)


def test_an_unknown_start_is_refused_where_the_chain_starts():
    """Below the estimators' parameter checks: the shared start refuses it, for every
    sampler that uses it (no silent fall-back to random topics)."""
    from topiclink.topics.lda import init_topics

    corpus, _ = make_lda_data(n_docs=20, n_words=30, n_topics=2, doc_length=10,
                              random_state=0)
    with pytest.raises(ValueError, match="init must be one of 'random', 'spectral'"):
        init_topics(TokenData.from_corpus(corpus), 2, np.random.default_rng(0),
                    init="anchors")
