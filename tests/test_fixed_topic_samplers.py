"""Topic proportions of new documents with the topics fixed by the three samplers (dense
Gibbs, sparse Gibbs: topiclink/topics/kernels/fixed_sparse.py, Metropolis-Hastings:
fixed_mh.py): the stationary distribution against exact enumeration, a wrong target
rejected, the same result for any threads, chunks and batch, and the planted proportions
recovered."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from topiclink.data.corpus import as_corpus
from topiclink.topics import fixed_topics
from topiclink.topics.fixed_topics import infer_doc_topics
from topiclink.topics.kernels import fixed_mh, fixed_sparse
from topiclink.topics.kernels import lda as kl

WORDS = np.array([0, 1, 1, 2], np.int32)       # one document; word 1 twice
PHI_WK = np.array([[0.60, 0.30, 0.10],         # (V, K): rows are words
                   [0.10, 0.50, 0.40],
                   [0.25, 0.05, 0.70]])
ALPHA = np.array([0.3, 1.0, 0.6])


def exact_count_distribution(alpha: np.ndarray) -> dict[tuple[int, ...], float]:
    """p(C_d | w) over the document's count vectors, summed over every z in K^N:
    p(z) ∝ prod_n phi_{z_n w_n} prod_k Gamma(C_k + alpha_k)."""
    K = PHI_WK.shape[1]
    out: dict[tuple[int, ...], float] = {}
    for z in itertools.product(range(K), repeat=WORDS.size):
        c = np.bincount(z, minlength=K)
        w = math.prod(PHI_WK[WORDS[n], z[n]] for n in range(WORDS.size))
        w *= math.prod(math.gamma(c[k] + alpha[k]) for k in range(K))
        out[tuple(c)] = out.get(tuple(c), 0.0) + w
    total = sum(out.values())
    return {c: p / total for c, p in out.items()}


def final_counts(sampler: str, n_chains: int, n_iter: int) -> np.ndarray:
    """The counts (n_chains, K) after ``n_iter`` sweeps of independent chains of the
    document (its copies with distinct keys), from a uniform random start."""
    n = WORDS.size
    words = np.tile(WORDS, n_chains)
    offsets = np.arange(0, n * n_chains + 1, n, dtype=np.int64)
    keys = np.arange(1, n_chains + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    theta = np.zeros((n_chains, PHI_WK.shape[1]))
    args = (keys, n_iter, n_iter - 1, False)
    vocab = np.arange(PHI_WK.shape[0], dtype=np.int64)
    if sampler == "gibbs":
        kl.infer_documents(words, offsets, 0, n_chains, PHI_WK, ALPHA, *args, theta)
    elif sampler == "sparse":
        tables = fixed_mh.word_tables(PHI_WK, vocab, ALPHA)
        fixed_sparse.infer_documents_sparse(words.copy(), words, offsets, 0, n_chains,
                                            PHI_WK, *tables, ALPHA, *args, theta)
    else:
        prob, alias, _ = fixed_mh.word_tables(PHI_WK, vocab, np.ones(PHI_WK.shape[1]))
        fixed_mh.infer_documents_mh(words.copy(), words, offsets, 0, n_chains, PHI_WK, prob,
                                    alias, ALPHA, *args, 1, theta)
    return np.rint(theta * n).astype(np.int64)


def chi_square_p(counts: np.ndarray, exact: dict[tuple[int, ...], float]) -> float:
    keys = sorted(exact)
    seen = {c: 0 for c in keys}
    for row in map(tuple, counts):
        seen[row] += 1
    observed = np.array([seen[c] for c in keys], float)
    expected = np.array([exact[c] for c in keys]) * counts.shape[0]
    return float(stats.chisquare(observed, expected).pvalue)


@pytest.mark.parametrize("sampler", ["mh", "sparse", "gibbs"])
def test_stationary_counts_follow_the_exact_posterior(sampler):
    """20,000 chains, 12 sweeps each: the final count vectors against the enumerated
    posterior (chi-square, alpha level 1e-3)."""
    counts = final_counts(sampler, 20_000, 12)
    assert chi_square_p(counts, exact_count_distribution(ALPHA)) > 1e-3


@pytest.mark.parametrize("sampler", ["mh", "sparse"])
def test_the_check_rejects_a_wrong_target(sampler):
    """The same draws against the posterior of another prior fail: the test has power
    against an error of that size (a 20 % error in MH's phi ratio gave p = 1e-8)."""
    counts = final_counts(sampler, 20_000, 12)
    assert chi_square_p(counts, exact_count_distribution(ALPHA * 1.5)) < 1e-6


@pytest.fixture(scope="module")
def planted():
    from topiclink.datasets.synthetic import make_lda_data

    corpus, truth = make_lda_data(n_docs=120, n_words=300, n_topics=8, doc_length=150,
                                  doc_topic_prior=0.1, topic_word_prior=0.01, random_state=3)
    return corpus, truth


@pytest.mark.parametrize("sampler", ["mh", "sparse"])
def test_threads_chunks_and_batches_never_change_a_document(planted, monkeypatch, sampler):
    corpus, truth = planted
    phi_wk = np.ascontiguousarray(truth.topic_word.T)
    alpha = np.full(8, 0.1)
    one = infer_doc_topics(corpus, phi_wk, alpha, np.random.default_rng(5), n_iter=20,
                           sampler=sampler)
    two = infer_doc_topics(corpus, phi_wk, alpha, np.random.default_rng(5), n_iter=20,
                           sampler=sampler, n_threads=2)
    np.testing.assert_array_equal(one, two)
    monkeypatch.setattr(fixed_topics, "TABLE_ENTRIES", 8 * 40)      # tables of <= 40 words
    assert len(fixed_topics._vocabulary_chunks(corpus.tokens().words,
                                               corpus.tokens().offsets, 8)) > 10
    chunked = infer_doc_topics(corpus, phi_wk, alpha, np.random.default_rng(5), n_iter=20,
                               sampler=sampler, n_threads=2)
    np.testing.assert_array_equal(one, chunked)
    rows = [7, 3, 100]
    alone = infer_doc_topics(as_corpus(corpus.counts[rows]), phi_wk, alpha,
                             np.random.default_rng(5), n_iter=20, sampler=sampler)
    np.testing.assert_array_equal(alone, one[rows])
    gibbs = [infer_doc_topics(corpus, phi_wk, alpha, np.random.default_rng(5), n_iter=20,
                              n_threads=t) for t in (1, 2)]
    np.testing.assert_array_equal(*gibbs)


def test_every_sampler_recovers_the_planted_proportions(planted):
    """50 sweeps with the true topics: mean absolute error of theta below 0.05, the fast
    samplers within 20 % of dense Gibbs's."""
    corpus, truth = planted
    phi_wk = np.ascontiguousarray(truth.topic_word.T)
    err = {}
    for sampler in ("mh", "sparse", "gibbs"):
        theta = infer_doc_topics(corpus, phi_wk, np.full(8, 0.1), np.random.default_rng(0),
                                 sampler=sampler)
        np.testing.assert_allclose(theta.sum(axis=1), 1.0)
        err[sampler] = float(np.abs(theta - truth.doc_topic).mean())
    assert max(err.values()) < 0.05, err
    assert max(err["mh"], err["sparse"]) < 1.2 * err["gibbs"] + 0.002, err


def test_per_document_priors_and_empty_documents():
    """A (D, K) prior: each document uses its own row; an empty document gets the prior
    mean (smoothed) or 1/K (not), as the Gibbs inference."""
    counts = np.array([[3, 0, 2], [0, 0, 0], [1, 4, 0]])
    alpha = np.array([[0.2, 0.5, 0.3], [1.0, 2.0, 1.0], [0.4, 0.4, 0.4]])
    for smooth in (True, False):
        theta = infer_doc_topics(as_corpus(counts), PHI_WK, alpha, np.random.default_rng(1),
                                 n_iter=10, sampler="mh", smooth=smooth)
        expected = alpha[1] / alpha[1].sum() if smooth else np.full(3, 1 / 3)
        np.testing.assert_allclose(theta[1], expected)
        np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="sampler must be one of"):
        infer_doc_topics(as_corpus(counts), PHI_WK, alpha, np.random.default_rng(1),
                         sampler="warp")
    with pytest.raises(ValueError, match="sampler='sparse' needs one prior"):
        infer_doc_topics(as_corpus(counts), PHI_WK, alpha, np.random.default_rng(1),
                         sampler="sparse")
