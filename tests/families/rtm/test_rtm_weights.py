"""The U step: Kronecker-identity precision vs the explicit |pairs| x K^2 design."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from topiclink.relational.weights import draw_weights, pair_omega, weight_posterior


def _data(seed, D=15, K=4, n=40, sparse=False):
    rng = np.random.default_rng(seed)
    if sparse:      # topic proportions of 3-token documents: most entries are zero
        zbar = np.stack([np.bincount(rng.integers(0, K, 3), minlength=K) / 3.0
                         for _ in range(D)])
    else:
        zbar = rng.dirichlet(np.ones(K), size=D)
    src = rng.integers(0, D, n)
    dst = rng.integers(0, D, n)
    return rng, zbar, src, dst, rng.normal(size=n), rng.gamma(2.0, size=n)


@pytest.mark.parametrize("K", [4, 16, 70])    # the dense (K <= 13) and sparse moment kernels
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("full", [True, False])
def test_weight_posterior_matches_explicit_design(full, sparse, K):
    rng, zbar, src, dst, a, b = _data(0, K=K, sparse=sparse)
    K = zbar.shape[1]
    if full:
        X = np.einsum("pk,pl->pkl", zbar[src], zbar[dst]).reshape(len(src), K * K)
    else:
        X = zbar[src] * zbar[dst]
    P_ref = np.eye(X.shape[1]) / 2.0 + X.T @ (b[:, None] * X)
    s_ref = X.T @ a
    P, s = weight_posterior(zbar, src, dst, a, b, prior_var=2.0, full=full)
    np.testing.assert_allclose(P, P_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s, s_ref, rtol=1e-10, atol=1e-12)
    # the precomputed CSR layout gives the same (unique pairs only)
    from topiclink.relational.pairs import PairSet

    _, first = np.unique(src * 1000 + dst, return_index=True)
    us, ud, ua, ub = src[first], dst[first], a[first], b[first]
    ps = PairSet(us, ud, np.ones(us.size, np.int8), np.ones(us.size), zbar.shape[0])
    P1, s1 = weight_posterior(zbar, us, ud, ua, ub, 2.0, full)
    P2, s2 = weight_posterior(zbar, us, ud, ua, ub, 2.0, full,
                              (ps.out.ptr, ps.out.nbr, ps.out.order))
    np.testing.assert_allclose(P2, P1, rtol=1e-12)
    np.testing.assert_allclose(s2, s1, rtol=1e-12)
    # the moments' parts on a thread: the very same sums
    from topiclink.execution import ThreadExecutor

    with ThreadExecutor(1) as pool:
        P3, s3 = weight_posterior(zbar, us, ud, ua, ub, 2.0, full,
                                  (ps.out.ptr, ps.out.nbr, ps.out.order), executor=pool)
    np.testing.assert_array_equal(P3, P2)
    np.testing.assert_array_equal(s3, s2)
    # and omega = x^T eta matches the bilinear form with U reshaped row-major
    eta = rng.normal(size=X.shape[1])
    U = eta.reshape(K, K) if full else np.diag(eta)
    np.testing.assert_allclose(pair_omega(zbar, U, src, dst), X @ eta, rtol=1e-10)


def test_draw_weights_moments():
    """Mean and covariance of the Gaussian draw against P^{-1} s and P^{-1}."""
    rng = np.random.default_rng(1)
    A = rng.normal(size=(3, 3))
    P = A @ A.T + 3 * np.eye(3)
    s = np.array([1.0, -2.0, 0.5])
    n = 40_000
    draws = np.array([draw_weights(rng, P, s) for _ in range(n)])
    cov = np.linalg.inv(P)
    mu = cov @ s
    z = (draws.mean(axis=0) - mu) / np.sqrt(np.diag(cov) / n)
    assert np.abs(z).max() < 5
    # Bartlett: n * S ~ Wishart(n - 1, cov); check each variance by its chi-square law
    var = draws.var(axis=0, ddof=1)
    for k in range(3):
        q = (n - 1) * var[k] / cov[k, k]
        assert 1e-6 < stats.chi2.cdf(q, n - 1) < 1 - 1e-6
