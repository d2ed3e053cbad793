"""Per-document Dirichlet priors in the Gibbs token kernels (``alpha`` (1, K) or (D, K)).

Ladder: the helpers of :mod:`topiclink.kernels.sampling`; (D, K) sweeps against the NumPy
twins draw for draw; a (1, K) prior and a (D, K) prior with equal rows are bit for bit the
1-D prior in every kernel; ``log_joint`` against a direct gammaln computation; bad shapes
are refused; and distinct rows do change the draws (the comparisons can fail).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from scipy.special import gammaln

from tests import naive
from topiclink.kernels import sampling
from topiclink.kernels.rng import uniforms
from topiclink.random import as_generator, kernel_state
from topiclink.relational.kernels import rtm as kr
from topiclink.topics.kernels import lda as kl

BETA = 0.05


def _corpus(seed, D=7, V=11, K=5, L=9):
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
    # per-document priors spanning two orders of magnitude (DMR-like exp(x_d^T lambda))
    alpha_dk = np.exp(rng.normal(-1.0, 1.0, size=(D, K)))
    return words, offsets, z, ndk, nwk, nk, alpha_dk, rng


def _pairs(rng, D, K, n_pairs=12, u_scale=3.0):
    """Random directed training pairs as the CSR arrays of ``sweep_relational``."""
    src = rng.integers(0, D, size=3 * n_pairs)
    dst = rng.integers(0, D, size=3 * n_pairs)
    keep = src != dst
    key = np.unique(src[keep] * D + dst[keep])[:n_pairs]
    source, target = key // D, key % D
    a = rng.normal(0, 2, size=source.size)
    b = rng.gamma(2.0, 0.5, size=source.size)
    U = rng.normal(0, u_scale, size=(K, K))

    def csr(idx, other):
        order = np.argsort(idx, kind="stable")
        ptr = np.zeros(D + 1, np.int64)
        np.add.at(ptr, idx + 1, 1)
        return np.cumsum(ptr), other[order].astype(np.int64), a[order], b[order]

    return U, source, target, a, b, csr(source, target) + csr(target, source)


def _copies(*arrays):
    return [x.copy() for x in arrays]


# --- helpers ------------------------------------------------------------------------------

def test_prior_row_python_and_compiled():
    vec = np.arange(1.0, 4.0)
    one = vec[None, :].copy()
    mat = np.arange(12.0).reshape(4, 3)
    assert sampling.prior_row(vec, 2) is vec
    np.testing.assert_array_equal(sampling.prior_row(one, 3), vec)
    np.testing.assert_array_equal(sampling.prior_row(mat, 2), mat[2])
    assert [sampling.n_prior_rows(x) for x in (vec, one, mat)] == [1, 1, 4]

    @njit
    def row_sum(alpha, d):
        ad = sampling.prior_row(alpha, d)
        s = 0.0
        for k in range(ad.shape[0]):
            s += ad[k]
        return s, sampling.n_prior_rows(alpha)

    assert row_sum(vec, 2) == (6.0, 1)
    assert row_sum(one, 3) == (6.0, 1)
    assert row_sum(mat, 2) == (mat[2].sum(), 4)


@pytest.mark.parametrize("shape", [(3, 5), (7, 4), (1, 4), (2, 7, 5)])
def test_bad_prior_shapes_are_refused(shape):
    words, offsets, z, ndk, nwk, nk, _, _ = _corpus(0)
    bad = np.full(shape, 0.5)
    state = kernel_state(as_generator(0))[0]
    err = ValueError if len(shape) == 2 else Exception  # 3-D: no matching signature
    with pytest.raises(err):
        kl.sweep(words, offsets, z, ndk, nwk, nk, bad, BETA, state)
    with pytest.raises(err):
        kl.log_joint(ndk, nwk, nk, bad, BETA)


# --- (D, K) against the NumPy twins ------------------------------------------------------

@pytest.mark.parametrize("K", [2, 5, 8, 13])
def test_sweep_with_document_priors_matches_naive_twin(K):
    words, offsets, z, ndk, nwk, nk, alpha, _ = _corpus(K, K=K)
    state = kernel_state(as_generator(K))[0]
    ref = _copies(z, ndk, nwk, nk)
    for _ in range(3):
        u = uniforms(state.copy(), words.size)
        kl.sweep(words, offsets, z, ndk, nwk, nk, alpha, BETA, state)
        naive.lda_sweep(words, offsets, *ref, alpha, BETA, u)
        for got, want in zip((z, ndk, nwk, nk), ref, strict=True):
            np.testing.assert_array_equal(got, want)


def test_sweep_range_uses_global_document_rows():
    """A chunk d_start:d_end reads rows d_start.. of the (D, K) prior, not rows 0..."""
    words, offsets, z, ndk, nwk, nk, alpha, _ = _corpus(3, D=9)
    state = kernel_state(as_generator(3))[0]
    ref = _copies(z, ndk, nwk, nk)
    u = uniforms(state.copy(), words.size)
    kl.sweep_range(words, offsets, 0, 4, z, ndk, nwk, nk, alpha, BETA, state)
    kl.sweep_range(words, offsets, 4, 9, z, ndk, nwk, nk, alpha, BETA, state)
    naive.lda_sweep(words, offsets, *ref, alpha, BETA, u)
    np.testing.assert_array_equal(z, ref[0])
    np.testing.assert_array_equal(ndk, ref[1])


def test_fixed_topics_sweep_with_document_priors_matches_naive_twin():
    words, offsets, z, ndk, nwk, nk, alpha, rng = _corpus(4, K=6)
    phi_wk = rng.dirichlet(np.ones(nwk.shape[0]), size=6).T.copy()
    state = kernel_state(as_generator(4))[0]
    ref = _copies(z, ndk)
    for _ in range(3):
        u = uniforms(state.copy(), words.size)
        kl.sweep_fixed_topics(words, offsets, z, ndk, phi_wk, alpha, state)
        naive.lda_sweep_fixed_topics(words, offsets, *ref, phi_wk, alpha, u)
    np.testing.assert_array_equal(z, ref[0])
    np.testing.assert_array_equal(ndk, ref[1])


@pytest.mark.parametrize("u_scale", [3.0, 400.0])   # cached exp(L) path / fresh exp path
@pytest.mark.parametrize("approx", [False, True])
def test_relational_sweep_with_document_priors_matches_brute_force(approx, u_scale):
    words, offsets, z, ndk, nwk, nk, alpha, rng = _corpus(6, D=6, V=9, K=4, L=7)
    U, source, target, a, b, csr = _pairs(rng, 6, 4, u_scale=u_scale)
    lengths = np.diff(offsets)
    state = kernel_state(as_generator(6))[0]
    ref = _copies(z, ndk, nwk, nk)
    for _ in range(3):
        u = uniforms(state.copy(), words.size)
        zbar = ndk / lengths[:, None]
        Uz, Vz = zbar @ U.T, zbar @ U
        kr.sweep_relational(words, offsets, z, ndk, nwk, nk, alpha, BETA, state, U, Uz, Vz,
                            *csr, approx)
        naive.rtm_sweep(words, offsets, *ref, alpha, BETA, u, U, source, target, a, b, approx)
        np.testing.assert_array_equal(z, ref[0])
        np.testing.assert_array_equal(ndk, ref[1])


# --- log_joint -----------------------------------------------------------------------------

def test_log_joint_with_document_priors_matches_gammaln():
    words, offsets, z, ndk, nwk, nk, alpha, _ = _corpus(2, D=12, K=6, L=30)
    V = nwk.shape[0]
    direct = (6 * (gammaln(V * BETA) - V * gammaln(BETA))
              + (gammaln(nwk + BETA).sum(0) - gammaln(nk + V * BETA)).sum())
    for d in range(ndk.shape[0]):
        ad = alpha[d]
        direct += (gammaln(ad.sum()) - gammaln(ndk[d].sum() + ad.sum())
                   + (gammaln(ndk[d] + ad) - gammaln(ad)).sum())
    got = kl.log_joint(ndk, nwk, nk, alpha, BETA)
    assert got == pytest.approx(direct, rel=1e-12)
    assert got == pytest.approx(naive.lda_log_joint(ndk, nwk, alpha, BETA), rel=1e-12)
    # and the rows matter: the mean prior gives another value
    assert abs(kl.log_joint(ndk, nwk, nk, alpha.mean(0), BETA) - got) > 1e-6 * abs(got)


# --- (1, K) and equal rows are the 1-D prior, bit for bit ----------------------------------

def _every_kernel(alpha, seed=1):
    """Outputs of every kernel taking alpha, on one fixed corpus, state and pair set."""
    words, offsets, z, ndk, nwk, nk, _, rng = _corpus(seed, D=10, V=15, K=9, L=25)
    D, K = ndk.shape
    U, _, _, _, _, csr = _pairs(rng, D, K, n_pairs=25)
    phi_wk = rng.dirichlet(np.ones(nwk.shape[0]), size=K).T.copy()
    lengths = np.diff(offsets)
    state = kernel_state(as_generator(seed))[0]
    out = {}
    z1, d1, w1, n1 = _copies(z, ndk, nwk, nk)
    for _ in range(2):
        kl.sweep(words, offsets, z1, d1, w1, n1, alpha, BETA, state)
    kl.sweep_range(words, offsets, 2, D - 1, z1, d1, w1, n1, alpha, BETA, state)
    out["sweep"] = z1
    out["log_joint"] = kl.log_joint(d1, w1, n1, alpha, BETA)
    z2, d2 = _copies(z, ndk)
    for _ in range(2):
        kl.sweep_fixed_topics(words, offsets, z2, d2, phi_wk, alpha, state)
    out["fixed"] = z2
    for approx in (False, True):
        z3, d3, w3, n3 = _copies(z, ndk, nwk, nk)
        zbar = d3 / lengths[:, None]
        Uz, Vz = zbar @ U.T, zbar @ U
        for _ in range(2):
            kr.sweep_relational(words, offsets, z3, d3, w3, n3, alpha, BETA, state, U, Uz, Vz,
                                *csr, approx)
        out[f"relational{approx}"] = z3
        out[f"Uz{approx}"] = Uz
    z4, d4 = _copies(z, ndk)
    zbar = ndk / lengths[:, None]
    for _ in range(2):
        kr.link_term_sweep(z4, offsets, d4, alpha, state, zbar @ U.T, zbar @ U, *csr)
    out["link_term"] = z4
    return out


@pytest.mark.parametrize("form", ["single_row", "equal_rows"])
def test_shared_prior_as_matrix_is_bit_identical_to_vector(form):
    alpha = np.linspace(0.05, 1.3, 9)
    shared = alpha[None, :].copy() if form == "single_row" else np.tile(alpha, (10, 1))
    want = _every_kernel(alpha)
    got = _every_kernel(shared)
    assert set(got) == set(want)
    for key, value in want.items():
        np.testing.assert_array_equal(got[key], value, err_msg=key)


def test_distinct_rows_change_every_kernel():
    """The comparisons above can fail: rows drawn per document give other draws."""
    alpha = np.linspace(0.05, 1.3, 9)
    rows = np.random.default_rng(0).permuted(np.tile(alpha, (10, 1)), axis=1) * 3.0
    want = _every_kernel(alpha)
    got = _every_kernel(rows)
    for key in ("sweep", "fixed", "relationalFalse", "relationalTrue", "link_term"):
        assert not np.array_equal(got[key], want[key]), key
    assert got["log_joint"] != want["log_joint"]
