"""Metropolis-Hastings token sampler (LightLDA): alias tables, invariants and the exact
stationary distribution by enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numba import njit
from scipy import stats

from tests import naive
from topiclink.kernels.rng import uniform
from topiclink.random import as_generator, kernel_state
from topiclink.topics.kernels import lda as kl
from topiclink.topics.kernels.lda_mh import build_alias, sweep_mh, word_index


@njit
def _alias_many(prob, alias, n, state):
    out = np.empty(n, np.int64)
    m = prob.shape[0]
    for i in range(n):
        x = uniform(state) * m
        j = min(int(x), m - 1)
        out[i] = j if x - j < prob[j] else alias[j]
    return out


@pytest.mark.parametrize("weights", [[0.5, 0.0, 2.0, 1.0, 0.1, 3.0, 0.0, 0.7],
                                     [1.0], [1e-9, 1.0, 1e-9], list(np.arange(1, 40.0))])
def test_alias_table_frequencies(weights):
    w = np.asarray(weights, dtype=np.float64)
    n = w.size
    prob, alias = np.empty(n), np.empty(n, np.int64)
    total = build_alias(w, prob, alias, np.empty(n, np.int64), np.empty(n, np.int64))
    assert total == pytest.approx(w.sum())
    draws = _alias_many(prob, alias, 200_000, kernel_state(as_generator(4))[0])
    counts = np.bincount(draws, minlength=n)
    assert counts[w == 0].sum() == 0
    keep = w > 1e-6
    expected = 200_000 * w[keep] / w.sum()
    if keep.sum() > 1:
        chi2 = ((counts[keep] - expected) ** 2 / expected).sum()
        assert stats.chi2.sf(chi2, df=keep.sum() - 1) > 1e-3


@pytest.mark.parametrize("per_doc_prior", [False, True])
def test_counts_stay_consistent(per_doc_prior):
    rng = np.random.default_rng(0)
    D, V, K = 30, 50, 12
    lengths = rng.integers(0, 40, D)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.integers(0, V, offsets[-1]).astype(np.int32)
    docs = np.repeat(np.arange(D, dtype=np.int32), lengths)
    z = rng.integers(0, K, words.size).astype(np.int32)
    ndk, nwk, nk = np.zeros((D, K), np.int32), np.zeros((V, K), np.int32), np.zeros(K, np.int32)
    kl.init_counts(words, docs, z, ndk, nwk, nk)
    alpha = rng.uniform(0.05, 1.0, (D, K)) if per_doc_prior else np.full(K, 0.1)
    state = kernel_state(as_generator(1))[0]
    ptr, pos = word_index(words, V)
    for _ in range(4):
        sweep_mh(words, offsets, z, ndk, nwk, nk, alpha, 0.02, state, ptr, pos)
        ref = [np.zeros_like(a) for a in (ndk, nwk, nk)]
        kl.init_counts(words, docs, z, *ref)
        for a, b in zip((ndk, nwk, nk), ref, strict=True):
            np.testing.assert_array_equal(a, b)


def _exact_posterior(words, docs, K, V, alpha, beta):
    N = words.size
    assignments = np.array(list(itertools.product(range(K), repeat=N)), np.int32)
    logp = np.empty(len(assignments))
    for a, zz in enumerate(assignments):
        ndk = np.zeros((docs.max() + 1, K), np.int32)
        nwk = np.zeros((V, K), np.int32)
        np.add.at(ndk, (docs, zz), 1)
        np.add.at(nwk, (words, zz), 1)
        logp[a] = naive.lda_log_joint(ndk, nwk, alpha, beta)
    post = np.exp(logp - logp.max())
    return post / post.sum()


def assert_final_states_follow_the_posterior(finals, words, docs, K, V, alpha, beta):
    """Chi-square of the chains' final states (coded base K) against p(z | w) (p-value >
    1e-3), and against the posterior with beta tripled (p-value < 1e-6: the test has
    power); states expected fewer than 5 times pooled into one cell."""
    counts = np.bincount(finals, minlength=K ** words.size)
    for b, passes in ((beta, True), (3 * beta, False)):
        expected = finals.size * _exact_posterior(words, docs, K, V, alpha, b)
        p = naive.pooled_chi2_pvalue(counts, expected)
        assert p > 1e-3 if passes else p < 1e-6, (b, p)


@njit
def _mh_chains(words, docs, offsets, K, V, alpha, beta, n_chains, n_sweeps, states, n_mh):
    N = words.size
    finals = np.empty(n_chains, np.int64)
    for c in range(n_chains):
        st = states[c]
        z = np.empty(N, np.int32)
        for i in range(N):
            z[i] = np.int32(uniform(st) * K)
        ndk = np.zeros((offsets.size - 1, K), np.int32)
        nwk = np.zeros((V, K), np.int32)
        nk = np.zeros(K, np.int32)
        kl.init_counts(words, docs, z, ndk, nwk, nk)
        ptr, pos = word_index(words, V)
        for _ in range(n_sweeps):
            sweep_mh(words, offsets, z, ndk, nwk, nk, alpha, beta, st, ptr, pos, n_mh)
        code = 0
        for i in range(N):
            code = code * K + z[i]
        finals[c] = code
    return finals


@pytest.mark.slow
@pytest.mark.parametrize("n_mh", [1, 2, 3])
def test_stationary_distribution_equals_exact_posterior(n_mh):
    """All K^N assignments of a tiny corpus enumerated: the final states of many
    independent chains follow p(z | w) (chi-square, alpha level 1e-3), for one step
    (document proposal only), two (one of each) and three; K = 3 with an asymmetric
    prior so that both proposals' corrections matter.  The test has power: the same
    counts reject the posterior of a neighbouring model (beta tripled)."""
    words = np.array([0, 1, 1, 2, 0], np.int32)
    docs = np.array([0, 0, 1, 1, 1], np.int32)
    offsets = np.array([0, 2, 5], np.int64)
    K, V = 3, 3
    alpha = np.array([0.5, 0.8, 0.2])
    beta = 0.3
    n_chains = 30_000
    states = kernel_state(as_generator(21 + n_mh), n_chains)
    finals = _mh_chains(words, docs, offsets, K, V, alpha, beta, n_chains, 25, states, n_mh)
    assert_final_states_follow_the_posterior(finals, words, docs, K, V, alpha, beta)


@pytest.fixture(scope="module")
def planted():
    from topiclink.datasets.synthetic import make_lda_data

    return make_lda_data(n_docs=300, n_words=400, n_topics=6, doc_length=120,
                         doc_topic_prior=0.1, topic_word_prior=0.01, random_state=7)


@pytest.mark.parametrize("sampler", ["mh", "warp"])
def test_mh_samplers_recover_planted_topics_reproducibly(planted, sampler):
    """Each MH kernel recovers planted topics (matched cosine > 0.9), the same seed gives
    the same chain, and AD-LDA is refused (for "mh" the partition scheme too)."""
    from scipy.optimize import linear_sum_assignment

    from topiclink import LDA

    corpus, truth = planted
    model = LDA(n_topics=6, max_iter=150, sampler=sampler, random_state=0).fit(corpus)
    a = model.components_ / np.linalg.norm(model.components_, axis=1, keepdims=True)
    b = truth.topic_word / np.linalg.norm(truth.topic_word, axis=1, keepdims=True)
    cos = a @ b.T
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9
    again = LDA(n_topics=6, max_iter=150, sampler=sampler, random_state=0).fit(corpus)
    np.testing.assert_array_equal(model.state_.z, again.state_.z)
    with pytest.raises(ValueError, match=f"sampler='{sampler}' runs with scheme 'exact'"
                                         + ("" if sampler == "mh" else " or 'partition'")):
        LDA(n_topics=6, sampler=sampler, scheme="adlda", max_iter=2).fit(corpus)


def test_auto_sampler_choice():
    """"auto" picks an MH kernel ("warp": same proposals, faster) only from MH_MIN_TOPICS
    topics on, in the exact and partition schemes, never for AD-LDA."""
    from topiclink import LDA
    from topiclink.families.lda.estimator import MH_MIN_TOPICS

    assert LDA(n_topics=MH_MIN_TOPICS)._token_sampler() == "warp"
    assert LDA(n_topics=MH_MIN_TOPICS - 1)._token_sampler() == "gibbs"
    assert LDA(n_topics=MH_MIN_TOPICS, scheme="partition")._token_sampler() == "warp"
    assert LDA(n_topics=MH_MIN_TOPICS - 1, scheme="partition")._token_sampler() == "gibbs"
    assert LDA(n_topics=MH_MIN_TOPICS, scheme="adlda")._token_sampler() == "gibbs"
