"""WarpLDA's phases on threads (``sampler="warp"``, ``scheme="partition"``): one worker is
the sequential kernel draw for draw, the cells partition the tokens with disjoint
documents and words per sub-phase, counts and the two orders stay consistent, threads
never change the chain, and the chain's quality is the sequential chain's."""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.execution import Shards
from topiclink.execution.shards import balanced_chunks
from topiclink.random import as_generator, kernel_state
from topiclink.topics.kernels import lda as kl
from topiclink.topics.kernels.lda_warp import sweep_warp, word_order
from topiclink.topics.partition import word_blocks
from topiclink.topics.warp_partition import WarpPartitionSweeper, cell_lists


def _corpus(seed, D=40, V=60, L=40):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, L, size=D)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    p = 1.0 / np.arange(1, V + 1)
    words = rng.choice(V, size=offsets[-1], p=p / p.sum()).astype(np.int32)
    docs = np.repeat(np.arange(D, dtype=np.int32), lengths)
    return words, docs, offsets, V


def _counts(words, docs, z, D, V, K):
    ndk = np.zeros((D, K), np.int32)
    nwk = np.zeros((V, K), np.int32)
    nk = np.zeros(K, np.int32)
    kl.init_counts(words, docs, z, ndk, nwk, nk)
    return ndk, nwk, nk


def _start(seed, K, words, docs, D, V, n_streams):
    rng = as_generator(seed)
    z = rng.integers(0, K, size=words.size).astype(np.int32)
    return [z, *_counts(words, docs, z, D, V, K)], kernel_state(rng, n_streams)


def _sweeper(words, docs, offsets, V, states, threads, z, n_mh=2):
    ptr, pos, slot, docs_w = word_order(words, docs, V)
    zw = z[pos].copy()
    return WarpPartitionSweeper(words, docs, offsets, V, states, threads, ptr, pos, slot,
                                docs_w, zw, n_mh), (ptr, pos, slot, docs_w)


@pytest.mark.parametrize("asymmetric", [False, True])
def test_one_worker_is_the_sequential_kernel_draw_for_draw(asymmetric):
    words, docs, offsets, V = _corpus(0)
    D, K = offsets.size - 1, 7
    alpha = np.random.default_rng(1).uniform(0.05, 1.0, K) if asymmetric else np.full(K, 0.1)
    (z, ndk, nwk, nk), states = _start(3, K, words, docs, D, V, 1)
    ref = [a.copy() for a in (z, ndk, nwk, nk)]
    ref_state = states[0].copy()
    sweeper, (ptr, pos, slot, docs_w) = _sweeper(words, docs, offsets, V, states, 1, z)
    ref_zw = ref[0][pos].copy()
    with sweeper:
        for _ in range(4):
            sweeper.sweep(words, offsets, z, ndk, nwk, nk, alpha, 0.05)
            sweep_warp(words, offsets, ref[0], ref_zw, ref[1], ref[2], ref[3], alpha, 0.05,
                       ref_state, ptr, pos, slot, docs_w, 2)
    for a, b in zip((z, ndk, nwk, nk), ref, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(sweeper.zw, ref_zw)
    np.testing.assert_array_equal(states[0], ref_state)


@pytest.mark.parametrize("P", [2, 3, 5])
def test_cells_partition_the_tokens_with_disjoint_rows_per_sub_phase(P):
    words, docs, offsets, V = _corpus(1)
    _, pos, _, _ = word_order(words, docs, V)
    cells = cell_lists(words, offsets, V, P, pos)
    slots, positions, bounds = cells.slots, cells.positions, cells.bounds
    np.testing.assert_array_equal(np.sort(slots), np.arange(words.size))
    np.testing.assert_array_equal(np.sort(positions), np.arange(words.size))
    np.testing.assert_array_equal(cells.slot_words, words[pos[slots]])
    chunks = balanced_chunks(offsets, P)
    np.testing.assert_array_equal(cells.doc_bounds, chunks)
    blocks = word_blocks(words, V, P)
    for b in range(P):
        np.testing.assert_array_equal(
            np.flatnonzero(blocks == b),
            np.arange(cells.word_bounds[b], cells.word_bounds[b + 1]))
    for i in range(P):
        for b in range(P):
            cell = i * P + b
            by_word = pos[slots[bounds[cell]:bounds[cell + 1]]]
            by_doc = positions[bounds[cell]:bounds[cell + 1]]
            np.testing.assert_array_equal(np.sort(by_word), by_doc)     # the same tokens
            assert np.all(np.diff(slots[bounds[cell]:bounds[cell + 1]]) > 0)
            assert np.all(np.diff(by_doc) > 0)
            assert np.all((docs[by_doc] >= chunks[i]) & (docs[by_doc] < chunks[i + 1]))
            assert np.all(blocks[words[by_doc]] == b)
    # sub-phase s: worker i's cell (i, (i + s) mod P); the P cells' blocks are distinct
    for s in range(P):
        assert sorted((i + s) % P for i in range(P)) == list(range(P))


@pytest.mark.parametrize("P", [2, 4])
def test_counts_stay_consistent_and_threads_never_change_the_chain(P):
    words, docs, offsets, V = _corpus(3)
    D, K = offsets.size - 1, 6
    alpha = np.full(K, 0.2)
    results = []
    for threads in (1, 2):
        (z, ndk, nwk, nk), states = _start(5, K, words, docs, D, V, P)
        before = z.copy()
        sweeper, (_, pos, _, _) = _sweeper(words, docs, offsets, V, states, threads, z)
        with sweeper:
            for _ in range(5):
                sweeper.sweep(words, offsets, z, ndk, nwk, nk, alpha, 0.01)
                np.testing.assert_array_equal(sweeper.zw, z[pos])
                for a, b in zip((ndk, nwk, nk), _counts(words, docs, z, D, V, K),
                                strict=True):
                    np.testing.assert_array_equal(a, b)
        assert (z != before).mean() > 0.3
        results.append((z.copy(), states.copy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def _equilibrium_log_joint(sweep_factory, start, words, offsets, alpha, seeds, n_sweeps):
    """Mean log joint per token of chains started from ``start`` (a state drawn from the
    posterior), ``n_sweeps`` sweeps each, one chain per seed."""
    trace = []
    for seed in seeds:
        z, ndk, nwk, nk = (a.copy() for a in start)
        sweep = sweep_factory(seed, z)
        for _ in range(n_sweeps):
            sweep(z, ndk, nwk, nk)
            trace.append(kl.log_joint(ndk, nwk, nk, alpha, 0.01) / words.size)
    return float(np.mean(trace))


def test_partitioned_chain_keeps_the_posterior_log_joint():
    """Planted LDA corpus, chains started at a draw from the posterior (200 exact Gibbs
    sweeps): the mean log joint per token of the partitioned warp chain (P = 4) and of
    the sequential one, 8 chains x 150 sweeps, is the exact Gibbs chains' within 0.03 %
    (measured: both within 0.01 %; the chains' per-sweep spread is about 0.05 %).  An
    acceptance ratio missing the topic totals fails this (0.6 % off), and so do topic
    totals never merged between sub-phases."""
    from topiclink.datasets.synthetic import make_lda_data

    corpus, _ = make_lda_data(n_docs=200, n_words=300, n_topics=5, doc_length=80,
                              doc_topic_prior=0.1, topic_word_prior=0.01, random_state=3)
    tok = corpus.tokens()
    words, docs, offsets = tok.words, tok.docs, tok.offsets
    D, V, K = offsets.size - 1, corpus.n_words, 5
    alpha = np.full(K, 0.1)
    start, states = _start(11, K, words, docs, D, V, 1)
    for _ in range(200):
        kl.sweep(words, offsets, *start, alpha, 0.01, states[0])

    def gibbs(seed, z):
        state = kernel_state(as_generator(seed), 1)[0]
        return lambda *arrays: kl.sweep(words, offsets, *arrays, alpha, 0.01, state)

    def warp(P):
        def factory(seed, z):
            sweeper, _ = _sweeper(words, docs, offsets, V,
                                  kernel_state(as_generator(seed), P), 1, z, n_mh=3)
            return lambda *arrays: sweeper.sweep(words, offsets, *arrays, alpha, 0.01)
        return factory

    seeds = range(100, 108)
    exact = _equilibrium_log_joint(gibbs, start, words, offsets, alpha, seeds, 150)
    for P in (1, 4):
        got = _equilibrium_log_joint(warp(P), start, words, offsets, alpha, seeds, 150)
        assert abs(got - exact) < 0.0003 * abs(exact), (P, got, exact)


def test_estimator_runs_warp_on_the_partition_scheme():
    """LDA(sampler="warp", scheme="partition"): planted topics recovered, the same
    result on 1 and 2 threads, resume draw for draw, one shard = the sequential chain;
    "mh" on the partition scheme is a one-line error naming both."""
    from scipy.optimize import linear_sum_assignment

    from topiclink import LDA
    from topiclink.datasets.synthetic import make_lda_data

    corpus, truth = make_lda_data(n_docs=300, n_words=400, n_topics=6, doc_length=120,
                                  doc_topic_prior=0.1, topic_word_prior=0.01, random_state=7)
    kw = {"n_topics": 6, "max_iter": 60, "random_state": 5, "sampler": "warp"}
    a = LDA(scheme=Shards("partition", 3), n_jobs=2, **kw).fit(corpus)
    b = LDA(scheme=Shards("partition", 3), n_jobs=1, **kw).fit(corpus)
    np.testing.assert_array_equal(a.components_, b.components_)
    phi = a.components_ / np.linalg.norm(a.components_, axis=1, keepdims=True)
    true = truth.topic_word / np.linalg.norm(truth.topic_word, axis=1, keepdims=True)
    cos = phi @ true.T
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9
    half = LDA(scheme=Shards("partition", 3), n_jobs=2, **{**kw, "max_iter": 30}).fit(corpus)
    half.fit(corpus, resume=True)
    np.testing.assert_array_equal(half.state_.z, a.state_.z)
    one = LDA(scheme=Shards("partition", 1), **kw).fit(corpus)
    seq = LDA(**kw).fit(corpus)
    np.testing.assert_array_equal(one.state_.z, seq.state_.z)
    with pytest.raises(ValueError, match="sampler='mh' runs with scheme 'exact', not "
                                         "'partition'"):
        LDA(n_topics=6, max_iter=2, sampler="mh", scheme="partition").fit(corpus)
