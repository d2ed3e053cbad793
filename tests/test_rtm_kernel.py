"""Relational Z kernel against the brute-force twin (exact conditional by enumeration)."""

from __future__ import annotations

import numpy as np
import pytest

from tests import naive
from topiclink.kernels.rng import uniforms
from topiclink.random import as_generator, kernel_state
from topiclink.relational.kernels import rtm as kr
from topiclink.relational.pairs import PairSet
from topiclink.topics.kernels import lda as kl


def _setup(seed, D=6, V=9, K=4, L=7, n_pairs=12, u_scale=3.0):
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
    src = rng.integers(0, D, size=3 * n_pairs)
    dst = rng.integers(0, D, size=3 * n_pairs)
    keep = src != dst
    key = np.unique(src[keep] * D + dst[keep])[:n_pairs]
    source, target = key // D, key % D
    a = rng.normal(0, 2, size=source.size)
    b = rng.gamma(2.0, 0.5, size=source.size)
    U = rng.normal(0, u_scale, size=(K, K))
    return words, offsets, z, ndk, nwk, nk, U, source, target, a, b


@pytest.mark.parametrize("u_scale", [3.0, 400.0])   # cached exp(L) path / fresh exp path
@pytest.mark.parametrize("approx", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_relational_sweep_matches_brute_force(seed, approx, u_scale):
    words, offsets, z, ndk, nwk, nk, U, source, target, a, b = _setup(seed, u_scale=u_scale)
    K = nk.size
    alpha = np.linspace(0.2, 0.8, K)
    beta = 0.1
    pairs = PairSet(source, target, np.ones(source.size, np.int8), np.ones(source.size),
                    ndk.shape[0])
    state = kernel_state(as_generator(seed))[0]
    ref = [arr.copy() for arr in (z, ndk, nwk, nk)]
    lengths = np.diff(offsets)
    for _ in range(3):
        u = uniforms(state.copy(), words.size)
        zbar = ndk / lengths[:, None]
        Uz, Vz = zbar @ U.T, zbar @ U
        kr.sweep_relational(words, offsets, z, ndk, nwk, nk, alpha, beta, state, U, Uz, Vz,
                            pairs.out.ptr, pairs.out.nbr, pairs.by_source(a), pairs.by_source(b),
                            pairs.into.ptr, pairs.into.nbr, pairs.by_target(a),
                            pairs.by_target(b), approx)
        naive.rtm_sweep(words, offsets, *ref, alpha, beta, u, U, source, target, a, b, approx)
        np.testing.assert_array_equal(z, ref[0])
        np.testing.assert_array_equal(ndk, ref[1])
        np.testing.assert_array_equal(nwk, ref[2])
        # the kernel refreshed u_d, v_d of every swept document
        zbar = ndk / lengths[:, None]
        np.testing.assert_allclose(Uz, zbar @ U.T, atol=1e-12)
        np.testing.assert_allclose(Vz, zbar @ U, atol=1e-12)


def test_brute_force_twin_differs_when_link_term_is_dropped():
    """The comparison above can fail: without the link term the draws differ."""
    words, offsets, z, ndk, nwk, nk, U, source, target, a, b = _setup(5)
    K = nk.size
    alpha = np.full(K, 0.5)
    state = kernel_state(as_generator(5))[0]
    ref = [arr.copy() for arr in (z, ndk, nwk, nk)]
    u = uniforms(state.copy(), words.size)
    kl.sweep(words, offsets, z, ndk, nwk, nk, alpha, 0.1, state)
    naive.rtm_sweep(words, offsets, *ref, alpha, 0.1, u, U, source, target, a, b)
    assert not np.array_equal(z, ref[0])
