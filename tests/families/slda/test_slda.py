"""SupervisedTopicModel (gSLDA / Gibbs MedLDA): exact Z step, recovery, multiclass, API."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import topiclink
from topiclink.data import DataError
from topiclink.datasets import make_lda_data, make_slda_data
from topiclink.families.slda.estimator import SupervisedTopicModel
from topiclink.kernels.rng import uniforms
from topiclink.random import as_generator, kernel_state
from topiclink.relational.kernels import rtm as kr
from topiclink.topics.kernels import lda as kl


def test_label_term_of_the_z_step_matches_brute_force():
    """sweep_relational with one virtual neighbour (eta) per document draws from
    p(z = k) ∝ LDA term x exp(a omega(k) - b omega(k)^2 / 2), omega(k) = eta.(C^- + e_k)/N."""
    rng = np.random.default_rng(0)
    D, V, K = 5, 7, 4
    lengths = rng.integers(2, 7, size=D)
    offsets = np.zeros(D + 1, np.int64)
    offsets[1:] = np.cumsum(lengths)
    words = rng.integers(0, V, size=offsets[-1]).astype(np.int32)
    docs = np.repeat(np.arange(D, dtype=np.int32), lengths)
    z = rng.integers(0, K, size=offsets[-1]).astype(np.int32)
    ndk, nwk, nk = np.zeros((D, K), np.int32), np.zeros((V, K), np.int32), np.zeros(K, np.int32)
    kl.init_counts(words, docs, z, ndk, nwk, nk)
    eta = rng.normal(0, 4, K)
    a, b = rng.normal(0, 2, D), rng.gamma(2.0, 1.0, D)
    alpha, beta = np.full(K, 0.3), 0.2
    state = kernel_state(as_generator(1))[0]
    u = uniforms(state.copy(), words.size)
    ref = [arr.copy() for arr in (z, ndk, nwk, nk)]
    Uz = np.zeros((D + 1, K))
    Uz[D] = eta
    kr.sweep_relational(words, offsets, z, ndk, nwk, nk, alpha, beta, state, np.zeros((K, K)),
                        Uz, np.zeros((D + 1, K)), np.arange(D + 1, dtype=np.int64),
                        np.full(D, D, np.int64), a, b, np.zeros(D + 1, np.int64),
                        np.zeros(0, np.int64), np.zeros(0), np.zeros(0), False)
    rz, rndk, rnwk, rnk = ref
    t = 0
    for d in range(D):
        for i in range(offsets[d], offsets[d + 1]):
            w, old = words[i], rz[i]
            rndk[d, old] -= 1
            rnwk[w, old] -= 1
            rnk[old] -= 1
            om = (rndk[d] + np.eye(K)) @ eta / lengths[d]
            logp = np.log((rndk[d] + alpha) * (rnwk[w] + beta) / (rnk + V * beta))
            logp += a[d] * om - 0.5 * b[d] * om**2
            c = np.cumsum(np.exp(logp - logp.max()))
            new = int(np.searchsorted(c, u[t] * c[-1], side="right"))
            t += 1
            rz[i] = new
            rndk[d, new] += 1
            rnwk[w, new] += 1
            rnk[new] += 1
    np.testing.assert_array_equal(z, rz)


@pytest.fixture(scope="module")
def binary():
    return make_slda_data(n_docs=400, n_topics=5, random_state=0)


@pytest.mark.parametrize(("loss", "sampler"), [("logistic", "gibbs"), ("hinge", "gibbs"),
                                               ("logistic", "mh"), ("hinge", "mh")])
def test_recovers_classifier_direction(binary, loss, sampler):
    """Matched eta correlates > 0.9 with the planted one; held-out accuracy > 0.7
    (planted labels are Bernoulli(sigmoid(eta^T zbar)), so perfect accuracy is impossible);
    with either Z step."""
    (corpus, y), truth = binary
    m = SupervisedTopicModel(5, loss=loss, max_iter=100, n_average=20, random_state=0,
                             sampler=sampler)
    m.fit(corpus.subset(range(300)), y[:300])
    cos = m.components_ @ truth.topic_word.T
    rows, cols = linear_sum_assignment(-cos)
    perm = np.empty(5, int)
    perm[cols] = rows
    assert np.corrcoef(m.coef_[0][perm], truth.eta)[0, 1] > 0.9
    assert m.score(corpus.subset(range(300, 400)), y[300:]) > 0.7
    assert m.trace_["train_accuracy"].shape == (100,)


def test_multiclass_one_vs_all_parallel_equals_sequential():
    corpus, truth = make_lda_data(n_docs=240, n_words=300, n_topics=6, doc_length=60,
                                  random_state=4)
    labels = np.array(["a", "b", "c"])[np.argmax(truth.doc_topic, axis=1) // 2]
    seq = SupervisedTopicModel(6, c=4.0, max_iter=40, random_state=1)
    seq.fit(corpus.subset(range(180)), labels[:180])
    par = SupervisedTopicModel(6, c=4.0, max_iter=40, random_state=1, n_jobs=2)
    par.fit(corpus.subset(range(180)), labels[:180])
    np.testing.assert_array_equal(seq.coef_, par.coef_)
    assert list(seq.classes_) == ["a", "b", "c"] and seq.coef_.shape == (3, 6)
    held = corpus.subset(range(180, 240))
    # prediction: classes on two threads, one stream per class -> the same scores
    np.testing.assert_array_equal(seq.decision_function(held), par.decision_function(held))
    assert seq.score(held, labels[180:]) > 0.8
    proba = seq.predict_proba(held)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert "class a: most positive topics" in seq.summary()


def test_save_load_and_determinism(tmp_path, binary):
    (corpus, y), _ = binary
    small, ys = corpus.subset(range(120)), y[:120]
    a = SupervisedTopicModel(4, max_iter=10, random_state=3).fit(small, ys)
    b = SupervisedTopicModel(4, max_iter=10, random_state=3).fit(small, ys)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    loaded = topiclink.load(a.save(tmp_path / "s.npz"))
    np.testing.assert_array_equal(loaded.decision_function(small.subset([0, 1])),
                                  a.decision_function(small.subset([0, 1])))


def test_bad_input(binary):
    (corpus, y), _ = binary
    with pytest.raises(DataError, match="single class"):
        SupervisedTopicModel(3).fit(corpus, np.zeros(corpus.n_docs))
    with pytest.raises(DataError, match="labels for"):
        SupervisedTopicModel(3).fit(corpus, y[:-1])
    yy = y.astype(float)
    yy[7] = np.nan
    with pytest.raises(DataError, match="label of document 7 is nan"):
        SupervisedTopicModel(3).fit(corpus, yy)
    with pytest.raises(ValueError, match="loss must be"):
        SupervisedTopicModel(3, loss="square").fit(corpus, y)
    with pytest.raises(ValueError, match="sampler must be"):
        SupervisedTopicModel(3, sampler="warp").fit(corpus, y)
    with pytest.raises(ValueError, match="sampler='mh' runs the sequential chain"):
        SupervisedTopicModel(3, sampler="mh", scheme="shards").fit(corpus, y)
    m = SupervisedTopicModel(3, loss="hinge", max_iter=2, random_state=0)
    m.fit(corpus.subset(range(50)), y[:50])
    with pytest.raises(ValueError, match="decision values, not probabilities"):
        m.predict_proba(corpus.subset([0]))


@pytest.mark.parametrize("K", [5, 80])
def test_eta_statistics_equal_the_dense_sums(K):
    """The eta step's statistics (dense product below SPARSE_STATISTICS_TOPICS, the
    nonzero-topic sums from it on) equal sum_d b_d zbar_d zbar_d^T and sum_d a_d zbar_d."""
    from topiclink.families.slda.algorithm import SPARSE_STATISTICS_TOPICS, shard_statistics

    assert 5 < SPARSE_STATISTICS_TOPICS <= 80
    rng = np.random.default_rng(2)
    D = 50
    ndk = np.stack([np.bincount(rng.integers(0, K, 12), minlength=K) for _ in range(D)])
    ndk = ndk.astype(np.int32)
    lengths = ndk.sum(axis=1).astype(np.float64)
    a, b = rng.normal(size=D), rng.uniform(0.1, 2.0, D)
    zbar = ndk / lengths[:, None]
    P, s = shard_statistics(ndk, lengths, a, b)
    np.testing.assert_allclose(P, zbar.T @ (b[:, None] * zbar), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(s, zbar.T @ a, rtol=1e-12, atol=1e-15)
