"""LDA token kernel: naive twin, invariants, exact posterior by enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from tests import naive
from topiclink.kernels.rng import uniform, uniforms
from topiclink.kernels.sampling import draw_blocked
from topiclink.random import as_generator, kernel_state
from topiclink.topics.kernels import lda as kl


def _random_state(seed, D=7, V=11, K=5, L=9):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, L, size=D)
    offsets = np.zeros(D + 1, np.int64)
    offsets[1:] = np.cumsum(lengths)
    words = rng.integers(0, V, size=offsets[-1]).astype(np.int32)
    docs = np.repeat(np.arange(D, dtype=np.int32), lengths)
    z = rng.integers(0, K, size=offsets[-1]).astype(np.int32)
    ndk = np.zeros((D, K), np.int32)
    nwk = np.zeros((V, K), np.int32)
    nk = np.zeros(K, np.int32)
    kl.init_counts(words, docs, z, ndk, nwk, nk)
    return words, docs, offsets, z, ndk, nwk, nk


@pytest.mark.parametrize("K", [2, 5, 8, 13])
def test_sweep_matches_naive_twin(K):
    words, docs, offsets, z, ndk, nwk, nk = _random_state(K, K=K)
    alpha = np.linspace(0.1, 0.9, K)
    beta = 0.05
    state = kernel_state(as_generator(K))[0]
    copies = [a.copy() for a in (z, ndk, nwk, nk)]
    for _ in range(3):
        u = uniforms(state.copy(), words.size)
        kl.sweep(words, offsets, z, ndk, nwk, nk, alpha, beta, state)
        naive.lda_sweep(words, offsets, *copies, alpha, beta, u)
    np.testing.assert_array_equal(z, copies[0])
    np.testing.assert_array_equal(ndk, copies[1])
    np.testing.assert_array_equal(nwk, copies[2])
    np.testing.assert_array_equal(nk, copies[3])


def test_counts_invariants_after_sweeps():
    words, docs, offsets, z, ndk, nwk, nk = _random_state(1, D=30, V=40, K=9, L=30)
    state = kernel_state(as_generator(1))[0]
    for _ in range(5):
        kl.sweep(words, offsets, z, ndk, nwk, nk, np.full(9, 0.2), 0.01, state)
        assert ndk.min() >= 0 and nwk.min() >= 0 and nk.min() >= 0
        np.testing.assert_array_equal(ndk.sum(1), np.diff(offsets))
        np.testing.assert_array_equal(nwk.sum(0), nk)
        np.testing.assert_array_equal(np.bincount(z, minlength=9), nk)
        ref_ndk = np.zeros_like(ndk)
        np.add.at(ref_ndk, (docs, z), 1)
        np.testing.assert_array_equal(ref_ndk, ndk)


def test_log_joint_matches_formula():
    words, docs, offsets, z, ndk, nwk, nk = _random_state(2)
    alpha = np.array([0.3, 0.1, 0.5, 1.0, 0.2])
    got = kl.log_joint(ndk, nwk, nk, alpha, 0.07)
    assert got == pytest.approx(naive.lda_log_joint(ndk, nwk, alpha, 0.07), rel=1e-12)


def test_draw_blocked_frequencies():
    """The blocked two-level search draws index k with probability p_k / sum p."""
    p = np.zeros(16)
    p[:11] = np.array([0.5, 0.0, 2.0, 1.0, 0.1, 3.0, 0.0, 0.7, 1.5, 0.2, 0.0])
    n = 200_000
    from numba import njit

    @njit
    def draw_many(p, n, state):
        out = np.empty(n, np.int64)
        bs = np.zeros(2)
        for i in range(n):
            out[i] = draw_blocked(p, bs, 2, uniform(state))
        return out

    draws = draw_many(p, n, kernel_state(as_generator(3))[0])
    counts = np.bincount(draws, minlength=16)
    assert counts[p == 0].sum() == 0
    expected = n * p[p > 0] / p.sum()
    chi2 = ((counts[p > 0] - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(chi2, df=(p > 0).sum() - 1) > 1e-3


@pytest.mark.slow
def test_gibbs_stationary_distribution_equals_exact_posterior():
    """Enumerate all K^N assignments of a tiny corpus: the chain's final states, over many
    independent chains, follow p(z | w) ∝ p(w, z) (chi-square, alpha level 1e-3)."""
    words = np.array([0, 1, 1, 2, 0], np.int32)
    docs = np.array([0, 0, 1, 1, 1], np.int32)
    offsets = np.array([0, 2, 5], np.int64)
    K, V, N = 2, 3, 5
    alpha = np.array([0.5, 0.8])
    beta = 0.3
    assignments = np.array(list(itertools.product(range(K), repeat=N)), np.int32)
    logp = np.empty(len(assignments))
    for a, zz in enumerate(assignments):
        ndk = np.zeros((2, K), np.int32)
        nwk = np.zeros((V, K), np.int32)
        np.add.at(ndk, (docs, zz), 1)
        np.add.at(nwk, (words, zz), 1)
        logp[a] = naive.lda_log_joint(ndk, nwk, alpha, beta)
    post = np.exp(logp - logp.max())
    post /= post.sum()

    from numba import njit

    @njit
    def run_chains(n_chains, n_sweeps, states):
        finals = np.empty(n_chains, np.int64)
        for c in range(n_chains):
            st = states[c]
            z = np.empty(N, np.int32)
            for i in range(N):
                z[i] = np.int32(uniform(st) * K)
            ndk = np.zeros((2, K), np.int32)
            nwk = np.zeros((V, K), np.int32)
            nk = np.zeros(K, np.int32)
            kl.init_counts(words, docs, z, ndk, nwk, nk)
            for _ in range(n_sweeps):
                kl.sweep(words, offsets, z, ndk, nwk, nk, alpha, beta, st)
            code = 0
            for i in range(N):
                code = code * K + z[i]
            finals[c] = code
        return finals

    n_chains = 40_000
    states = kernel_state(as_generator(11), n_chains)
    finals = run_chains(n_chains, 15, states)
    counts = np.bincount(finals, minlength=K**N)
    expected = n_chains * post
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(chi2, df=K**N - 1) > 1e-3
    # and the test can fail: a sampler ignoring the word term has another distribution
    wrong = np.exp(logp * 0.0)
    wrong /= wrong.sum()
    chi2_wrong = ((counts - n_chains * wrong) ** 2 / (n_chains * wrong)).sum()
    assert stats.chi2.sf(chi2_wrong, df=K**N - 1) < 1e-6
