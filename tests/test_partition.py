"""Partitioned parallel sweeps (documents x vocabulary blocks): exactness at one shard,
disjoint blocks, counts, thread independence, and the chain's quality."""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.execution import Shards
from topiclink.execution.shards import balanced_chunks
from topiclink.random import as_generator, kernel_state
from topiclink.topics.kernels import lda as kl
from topiclink.topics.partition import (
    HOT_SHARE,
    PartitionSweeper,
    hot_words,
    word_blocks,
)


def _corpus(seed, D=40, V=60, L=40):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, L, size=D)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    # Zipf-like word frequencies, so the blocks are uneven in word count
    p = 1.0 / np.arange(1, V + 1)
    words = rng.choice(V, size=offsets[-1], p=p / p.sum()).astype(np.int32)
    docs = np.repeat(np.arange(D, dtype=np.int32), lengths)
    return words, docs, offsets


def _counts(words, docs, z, D, V, K):
    ndk = np.zeros((D, K), np.int32)
    nwk = np.zeros((V, K), np.int32)
    nk = np.zeros(K, np.int32)
    kl.init_counts(words, docs, z, ndk, nwk, nk)
    return ndk, nwk, nk


def _start(seed, K, words, docs, D, V, n_streams):
    rng = as_generator(seed)
    z = rng.integers(0, K, size=words.size).astype(np.int32)
    return (z, *_counts(words, docs, z, D, V, K)), kernel_state(rng, n_streams)


@pytest.mark.parametrize("per_doc_prior", [False, True])
def test_one_shard_is_the_exact_sweep_draw_for_draw(per_doc_prior):
    words, docs, offsets = _corpus(0)
    D, V, K = offsets.size - 1, 60, 7
    alpha = (np.random.default_rng(1).uniform(0.05, 1.0, (D, K)) if per_doc_prior
             else np.full(K, 0.1))
    (z, ndk, nwk, nk), states = _start(3, K, words, docs, D, V, 1)
    ref = [a.copy() for a in (z, ndk, nwk, nk)]
    ref_state = states[0].copy()
    with PartitionSweeper(words, offsets, V, states, n_threads=1) as sweeper:
        for _ in range(4):
            sweeper.sweep(words, offsets, z, ndk, nwk, nk, alpha, 0.05)
            kl.sweep(words, offsets, *ref, alpha, 0.05, ref_state)
    for a, b in zip((z, ndk, nwk, nk), ref, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("P", [2, 3, 5])
def test_blocks_are_a_partition_of_the_tokens(P):
    words, docs, offsets = _corpus(1)
    sweeper = PartitionSweeper(words, offsets, 60, kernel_state(as_generator(0), P), 1)
    np.testing.assert_array_equal(np.sort(sweeper.index), np.arange(words.size))
    hot = hot_words(words, 60, P)
    np.testing.assert_array_equal(sweeper.hot_ids, hot)
    assert hot.size >= 1                 # the Zipf corpus's top word holds ~21 % of tokens
    is_hot = np.isin(words, hot)
    chunks = balanced_chunks(offsets, P)
    blocks = word_blocks(words[~is_hot], 60, P)
    seen_docs, seen_words = {}, {}
    for i in range(P):
        hot_per_block = []
        for b in range(P):
            lo, hi = sweeper.block_range(i, b)
            mid, end = sweeper.hot_range(i, b)
            assert lo <= mid <= end == hi
            d = sweeper.docs[lo:hi]
            coded = sweeper.words[lo:hi]
            is_hot_token = np.arange(lo, hi) >= mid
            w = np.where(is_hot_token, hot[np.minimum(coded, hot.size - 1)], coded)
            assert np.all((d >= chunks[i]) & (d < chunks[i + 1]))   # shard i's documents
            assert np.all(blocks[w[~is_hot_token]] == b)           # block b's words
            assert not np.isin(w[~is_hot_token], hot).any()         # hot words last
            for part in (d[~is_hot_token], d[is_hot_token]):
                assert np.all(np.diff(part) >= 0)                   # grouped by document
            np.testing.assert_array_equal(w, words[sweeper.index[lo:hi]])
            seen_docs.setdefault(i, set()).update(d.tolist())
            seen_words.setdefault(b, set()).update(w[~is_hot_token].tolist())
            hot_per_block.append(end - mid)
        # a shard's hot tokens are dealt evenly to its P blocks
        assert max(hot_per_block) - min(hot_per_block) <= 1
    # in one phase the P workers touch disjoint documents and disjoint (non-hot) words
    for a in range(P):
        for c in range(a + 1, P):
            assert not seen_docs[a] & seen_docs[c]
            assert not seen_words[a] & seen_words[c]


def test_hot_words_balance_the_cells():
    """A vocabulary whose top word holds 12 % of the tokens: without hot words one
    (shard, block) cell per phase is about twice the mean at P = 16 (the speed-up bound
    measured on 16 cores); with them the largest cell of a phase is within 15 % of the
    mean, and a word at the threshold is hot only above it."""
    rng = np.random.default_rng(4)
    V, P = 10_000, 16
    p = 1.0 / np.arange(1, V + 1) ** 1.05
    words = rng.choice(V, size=300_000, p=p / p.sum()).astype(np.int32)
    offsets = np.arange(0, words.size + 1, 150, dtype=np.int64)
    sweeper = PartitionSweeper(words, offsets, V, kernel_state(as_generator(0), P), 1)
    cells = np.diff(sweeper.bounds).reshape(P, P, 2).sum(axis=2)
    phase_max = [max(cells[i, (i + s) % P] for i in range(P)) for s in range(P)]
    assert sum(phase_max) * P / words.size < 1.15
    freq = np.bincount(words, minlength=V)
    limit = words.size / (HOT_SHARE * P * P)
    assert np.all(freq[sweeper.hot_ids] > limit)
    assert np.all(np.delete(freq, sweeper.hot_ids) <= limit)
    assert hot_words(words, V, 1).size == 0
    # the old rule (every word in one block) is the 2x of the docstring
    blocks = word_blocks(words, V, P)
    key_cells = np.zeros((P, P))
    shard = np.searchsorted(balanced_chunks(offsets, P), np.arange(offsets.size - 1),
                            side="right") - 1
    np.add.at(key_cells, (np.repeat(shard, np.diff(offsets)), blocks[words]), 1)
    old_max = [max(key_cells[i, (i + s) % P] for i in range(P)) for s in range(P)]
    assert sum(old_max) * P / words.size > 1.5


def test_word_blocks_balance_tokens():
    words, _, _ = _corpus(2, D=400, V=500, L=60)
    freq = np.bincount(words, minlength=500)
    for P in (2, 4, 8):
        blocks = word_blocks(words, 500, P)
        assert np.all(np.diff(blocks) >= 0) and blocks.max() <= P - 1
        share = np.bincount(blocks, weights=freq, minlength=P) / words.size
        assert share.max() <= 1.0 / P + freq.max() / words.size + 1e-12


@pytest.mark.parametrize("P", [2, 4])
def test_counts_stay_consistent_and_threads_never_change_the_chain(P):
    words, docs, offsets = _corpus(3)
    D, V, K = offsets.size - 1, 60, 6
    alpha = np.full(K, 0.2)
    results = []
    for threads in (1, 2):
        (z, ndk, nwk, nk), states = _start(5, K, words, docs, D, V, P)
        with PartitionSweeper(words, offsets, V, states, n_threads=threads) as sweeper:
            for _ in range(5):
                sweeper.sweep(words, offsets, z, ndk, nwk, nk, alpha, 0.01)
                for a, b in zip((ndk, nwk, nk), _counts(words, docs, z, D, V, K),
                                strict=True):
                    np.testing.assert_array_equal(a, b)
        results.append((z.copy(), states.copy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_partitioned_chain_matches_the_exact_chain_in_log_joint():
    """Planted LDA corpus: the mean log joint per token over sweeps 60-100 of the
    partitioned chain (P = 4) is within 0.1 % of the exact chain's (the seed-to-seed
    spread of either chain here is about 0.012 %, five seeds); a sweep that skips one
    phase fails this."""
    from topiclink.datasets.synthetic import make_lda_data

    corpus, _ = make_lda_data(n_docs=200, n_words=300, n_topics=5, doc_length=80,
                              doc_topic_prior=0.1, topic_word_prior=0.01, random_state=3)
    tok = corpus.tokens()
    words, docs, offsets = tok.words, tok.docs, tok.offsets
    D, V, K = offsets.size - 1, corpus.n_words, 5
    alpha = np.full(K, 0.1)
    means = {}
    for P in (1, 4):
        (z, ndk, nwk, nk), states = _start(11, K, words, docs, D, V, P)
        trace = []
        with PartitionSweeper(words, offsets, V, states, n_threads=1) as sweeper:
            for it in range(100):
                sweeper.sweep(words, offsets, z, ndk, nwk, nk, alpha, 0.01)
                if it >= 60:
                    trace.append(kl.log_joint(ndk, nwk, nk, alpha, 0.01) / words.size)
        means[P] = float(np.mean(trace))
    assert abs(means[4] - means[1]) < 0.001 * abs(means[1])


def test_estimators_take_parallel_partition():
    """LDA and DMR with scheme="partition": planted topics recovered, the same result on
    1 and 2 threads, one shard = the sequential sampler."""
    from scipy.optimize import linear_sum_assignment

    from topiclink import DMR, LDA
    from topiclink.datasets.synthetic import make_lda_data

    corpus, truth = make_lda_data(n_docs=300, n_words=400, n_topics=6, doc_length=120,
                                  doc_topic_prior=0.1, topic_word_prior=0.01, random_state=7)
    kw = {"n_topics": 6, "max_iter": 60, "random_state": 5}
    a = LDA(scheme=Shards("partition", 3), n_jobs=2, **kw).fit(corpus)
    b = LDA(scheme=Shards("partition", 3), n_jobs=1, **kw).fit(corpus)
    np.testing.assert_array_equal(a.components_, b.components_)
    phi = a.components_ / np.linalg.norm(a.components_, axis=1, keepdims=True)
    true = truth.topic_word / np.linalg.norm(truth.topic_word, axis=1, keepdims=True)
    cos = phi @ true.T
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9
    one = LDA(scheme=Shards("partition", 1), **kw).fit(corpus)
    seq = LDA(**kw).fit(corpus)
    np.testing.assert_array_equal(one.state_.z, seq.state_.z)
    features = np.random.default_rng(0).normal(size=(corpus.n_docs, 2))
    dkw = {"n_topics": 6, "max_iter": 30, "burn_in": 10, "random_state": 2}
    d1 = DMR(scheme=Shards("partition", 2), n_jobs=2, **dkw).fit(corpus, features=features)
    d2 = DMR(scheme=Shards("partition", 2), n_jobs=1, **dkw).fit(corpus, features=features)
    np.testing.assert_array_equal(d1.lambda_, d2.lambda_)
    np.testing.assert_array_equal(d1.components_, d2.components_)
    d_one = DMR(scheme=Shards("partition", 1), **dkw).fit(corpus, features=features)
    d_seq = DMR(**dkw).fit(corpus, features=features)
    np.testing.assert_array_equal(d_one.lambda_, d_seq.lambda_)
