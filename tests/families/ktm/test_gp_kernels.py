"""Kernels of topiclink.families.ktm.gp: analytic gradients vs finite differences, PSD, sklearn
API."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor

from topiclink.families.ktm.gp.features import shortest_path_features
from topiclink.families.ktm.gp.kernels import (
    RBF,
    CategoricalKernel,
    ConstantKernel,
    OnColumns,
    RationalQuadratic,
    ShortestPathKernel,
    SOTUKernel,
    WhiteKernel,
    rational_quadratic,
    squared_exponential,
)


def _sotu_X(rng, n=25, n_speakers=5):
    return np.column_stack([rng.uniform(1790, 2011, n), rng.integers(0, n_speakers, n)])


def _fd_gradient(kernel, X, h=1e-6):
    """Central differences of kernel(X) with respect to kernel.theta."""
    theta = kernel.theta
    out = np.empty(kernel(X).shape + (theta.size,))
    for j in range(theta.size):
        tp, tm = theta.copy(), theta.copy()
        tp[j] += h
        tm[j] -= h
        out[:, :, j] = (kernel.clone_with_theta(tp)(X) - kernel.clone_with_theta(tm)(X)) / (2 * h)
    return out


def _cases():
    rng = np.random.default_rng(1)
    sotu = _sotu_X(rng)
    cat = rng.integers(0, 4, (20, 1)).astype(float)
    A = (rng.random((15, 15)) < 0.15).astype(float)
    paths = shortest_path_features(np.triu(A, 1) + np.triu(A, 1).T)
    mixed = np.column_stack([rng.uniform(0, 10, 20), rng.integers(0, 3, 20)])
    return [
        ("sotu", SOTUKernel(length_scale=7.0, alpha=0.8, speaker_constant=0.6,
                            amplitude=1.7), sotu),
        ("sotu_fixed_alpha", SOTUKernel(length_scale=3.0, alpha=2.0, alpha_bounds="fixed"),
         sotu),
        ("categorical", CategoricalKernel(rho=0.3), cat),
        ("shortest_path", ShortestPathKernel(length_scale=2.5, amplitude=0.8), paths),
        ("shortest_path_aniso", ShortestPathKernel(length_scale=rng.uniform(1, 4, 15),
                                                   amplitude=1.3), paths),
        ("composed", OnColumns(squared_exponential(2.0, 1.5), [0])
         * OnColumns(CategoricalKernel(0.4), [1]) + WhiteKernel(0.1), mixed),
        ("rq_scaled", rational_quadratic(3.0, 0.7, 2.0), mixed[:, :1]),
    ]


CASES = _cases()


@pytest.mark.parametrize("name,kernel,X", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(name, kernel, X):
    K, G = kernel(X, eval_gradient=True)
    assert np.allclose(K, kernel(X), rtol=0, atol=1e-14)
    assert G.shape == K.shape + (kernel.n_dims,)
    fd = _fd_gradient(kernel, X)
    rel = np.abs(G - fd).max() / np.abs(G).max()
    assert rel < 1e-6, (name, rel)


@pytest.mark.parametrize("name,kernel,X", CASES, ids=[c[0] for c in CASES])
def test_symmetric_psd_diag_and_cross(name, kernel, X):
    K = kernel(X)
    assert np.array_equal(K, K.T)
    assert np.linalg.eigvalsh(K).min() >= -1e-10
    assert np.allclose(kernel.diag(X), np.diag(K), rtol=1e-14, atol=0)
    if "WhiteKernel" not in repr(kernel):  # sklearn's WhiteKernel(X, Y) is 0 off k(X)
        assert np.allclose(kernel(X, X), K, rtol=1e-12, atol=1e-14)
    assert kernel(X[:3], X[3:7]).shape == (3, 4)


def test_psd_on_many_random_inputs():
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(200):
        n = int(rng.integers(3, 30))
        X = np.column_stack([rng.uniform(0, 30, n), rng.integers(0, rng.integers(1, 6), n)])
        k = SOTUKernel(length_scale=np.exp(rng.uniform(-2, 2)), alpha=np.exp(rng.uniform(-2, 3)),
                       speaker_constant=np.exp(rng.uniform(-3, 3)))
        c = CategoricalKernel(rho=rng.uniform(0, 1))
        g = ShortestPathKernel(rng.uniform(0.5, 3))
        for K in (k(X), c(X[:, 1:]), g(rng.normal(size=(n, 4)))):
            worst = min(worst, np.linalg.eigvalsh(K).min())
    assert worst >= -1e-10


def test_sotu_kernel_is_rq_on_its_embedding():
    """r^2 = dt^2/l^2 + c [speakers differ] is the squared distance of (t/l, sqrt(c/2) e_s)."""
    rng = np.random.default_rng(3)
    X = _sotu_X(rng, 30, 4)
    ell, alpha, c, amp = 6.0, 1.3, 0.9, 2.2
    emb = np.column_stack([X[:, 0] / ell, np.sqrt(c / 2) * np.eye(4)[X[:, 1].astype(int)]])
    ref = amp * RationalQuadratic(length_scale=1.0, alpha=alpha)(emb)
    k = SOTUKernel(length_scale=ell, alpha=alpha, speaker_constant=c, amplitude=amp)
    assert np.allclose(k(X), ref, rtol=1e-12, atol=0)
    # one speaker: plain sklearn RationalQuadratic on the year, scaled
    same = X.copy()
    same[:, 1] = 0
    rq = amp * RationalQuadratic(length_scale=ell, alpha=alpha)(X[:, :1])
    assert np.allclose(k(same), rq, rtol=1e-12, atol=0)


def test_sklearn_api_theta_clone_and_gpr():
    k = SOTUKernel(length_scale=5.0, alpha=1.0, speaker_constant=0.5, amplitude=2.0)
    names = [h.name for h in k.hyperparameters]
    assert names == ["alpha", "amplitude", "length_scale", "speaker_constant"]
    assert np.allclose(k.theta, np.log([1.0, 2.0, 5.0, 0.5]))
    k2 = k.clone_with_theta(np.log([2.0, 3.0, 4.0, 0.25]))
    assert (k2.alpha, k2.amplitude, k2.length_scale) == pytest.approx((2.0, 3.0, 4.0))
    assert k.length_scale == 5.0 and k.is_stationary()
    comp = OnColumns(RBF(2.0), [0]) * OnColumns(CategoricalKernel(0.5), [1])
    assert comp.n_dims == 2 and comp.bounds.shape == (2, 2)
    comp2 = comp.clone_with_theta(np.log([3.0, 0.2]))
    assert comp2.k1.kernel.length_scale == pytest.approx(3.0)
    assert comp2.k2.kernel.rho == pytest.approx(0.2)
    # usable inside scikit-learn's own regressor (its optimizer uses our gradients)
    rng = np.random.default_rng(0)
    X = _sotu_X(rng, 40, 3)
    y = np.sin(X[:, 0] / 20) + 0.3 * X[:, 1] + 0.05 * rng.standard_normal(40)
    k0 = SOTUKernel(alpha_bounds="fixed")
    gpr = GaussianProcessRegressor(k0, alpha=1e-2, random_state=0).fit(X, y)
    assert gpr.log_marginal_likelihood_value_ > gpr.log_marginal_likelihood(k0.theta)


def test_scaling_helpers_and_errors():
    X = np.linspace(0, 5, 6)[:, None]
    assert np.allclose(squared_exponential(2.0, 3.0)(X), 3.0 * RBF(2.0)(X))
    assert np.allclose((ConstantKernel(2.0) * SOTUKernel())(np.column_stack([X, X])),
                       SOTUKernel(amplitude=2.0)(np.column_stack([X, X])))
    with pytest.raises(ValueError, match="two columns"):
        SOTUKernel()(X)
    with pytest.raises(ValueError, match="Gradient"):
        CategoricalKernel()(X, X, eval_gradient=True)
    with pytest.raises(ValueError, match="length scales"):
        ShortestPathKernel(length_scale=[1.0, 2.0])(np.ones((3, 3)))
    with pytest.raises(ValueError, match="columns"):
        OnColumns(RBF(), [2])(X)
