"""Heteroscedastic GP regression of topiclink.families.ktm.gp: sklearn agreement, LOO vs refits,
evidence gradients vs finite differences, planted length-scale recovery."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.gaussian_process import GaussianProcessRegressor

from topiclink.families.ktm.gp.kernels import (
    RBF,
    CategoricalKernel,
    ConstantKernel,
    OnColumns,
    RationalQuadratic,
    SOTUKernel,
    WhiteKernel,
)
from topiclink.families.ktm.gp.regression import (
    FITCGP,
    HeteroscedasticGP,
    fit_hyperparameters,
    log_marginal_likelihood,
)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, (30, 1))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(30)
    return rng, X, y


def test_equals_sklearn_homoscedastic(data):
    rng, X, y = data
    kernel = ConstantKernel(1.3) * RBF(1.7)
    noise = 0.05
    gpr = GaussianProcessRegressor(kernel, alpha=noise, optimizer=None).fit(X, y)
    gp = HeteroscedasticGP.from_kernel(kernel, X, y, noise)
    Xn = rng.uniform(-1, 11, (9, 1))
    m_ref, sd_ref = gpr.predict(Xn, return_std=True)
    m, v = gp.predict(Xn)
    assert np.allclose(m, m_ref, rtol=1e-8, atol=1e-12)
    assert np.allclose(v, sd_ref**2, rtol=1e-8, atol=1e-12)
    _, cov_ref = gpr.predict(Xn, return_cov=True)
    assert np.allclose(gp.predict(Xn, return_cov=True)[1], cov_ref, rtol=1e-8, atol=1e-12)
    # at the training points
    m_tr, sd_tr = gpr.predict(X, return_std=True)
    assert np.allclose(gp.posterior_mean, m_tr, rtol=1e-8, atol=1e-12)
    assert np.allclose(gp.posterior_var, sd_tr**2, rtol=1e-8, atol=1e-12)
    # evidence and its gradient (sklearn's gradient is wrt kernel.theta)
    lml_ref, grad_ref = gpr.log_marginal_likelihood(kernel.theta, eval_gradient=True)
    assert gp.log_marginal_likelihood() == pytest.approx(lml_ref, rel=1e-8)
    assert np.allclose(gp.log_marginal_likelihood_gradient()[:-1], grad_ref, rtol=1e-8)


def test_matrix_interface_and_prior_mean(data):
    rng, X, y = data
    kernel = RBF(1.2)
    s = rng.uniform(0.01, 0.3, 30)
    a = HeteroscedasticGP.from_kernel(kernel, X, y, s, mean=0.7)
    b = HeteroscedasticGP(kernel(X), s, y - 0.7)
    assert np.allclose(a.posterior_mean, b.posterior_mean + 0.7, rtol=0, atol=1e-12)
    assert np.allclose(a.posterior_var, b.posterior_var, rtol=0, atol=1e-12)
    Xn = np.array([[2.5], [7.0]])
    m1, v1 = a.predict(Xn)
    m2, v2 = b.predict(K_cross=kernel(X, Xn), k_diag=kernel.diag(Xn))
    assert np.allclose(m1, m2 + 0.7) and np.allclose(v1, v2)
    # dense reference: posterior mean m + K (K + S)^-1 (y - m)
    K = kernel(X)
    ref = 0.7 + K @ np.linalg.solve(K + np.diag(s), y - 0.7)
    assert np.allclose(a.posterior_mean, ref, rtol=1e-9)


def test_loo_equals_brute_force_refits(data):
    rng, X, y = data
    kernel = ConstantKernel(1.5) * RationalQuadratic(1.3, 0.8)
    s = rng.uniform(0.005, 0.5, 30)
    s[4] = np.inf  # a document without information (clipped message)
    mean = rng.normal(size=30)
    gp = HeteroscedasticGP.from_kernel(kernel, X, y, s, mean=mean)
    mu, var = gp.loo()
    mu_y, var_y = gp.loo(include_noise=True)
    for i in range(30):
        keep = np.arange(30) != i
        ref = HeteroscedasticGP.from_kernel(kernel, X[keep], y[keep], s[keep], mean=mean[keep])
        m_i, v_i = ref.predict(X[i:i + 1], mean_new=mean[i])
        assert mu[i] == pytest.approx(m_i[0], rel=1e-9, abs=1e-12)
        assert var[i] == pytest.approx(v_i[0], rel=1e-9, abs=1e-12)
        assert var_y[i] == pytest.approx(v_i[0] + s[i], rel=1e-9)
    assert mu_y is not None and np.array_equal(mu_y, mu)
    # the point without information: its cavity is its posterior
    assert mu[4] == pytest.approx(gp.posterior_mean[4], rel=1e-12)
    assert var[4] == pytest.approx(gp.posterior_var[4], rel=1e-12)
    # R&W eq. 5.12 on the finite points: mu = y - [Ky^-1 r]_i / [Ky^-1]_ii, var_f = 1/[.]_ii - s
    fin = np.isfinite(s)
    K = kernel(X[fin])
    Kyinv = np.linalg.inv(K + np.diag(s[fin]))  # reference only
    r = y[fin] - mean[fin]
    assert np.allclose(mu[fin][:3], (y[fin] - Kyinv @ r / np.diag(Kyinv))[:3], rtol=1e-8)
    gp_fin = HeteroscedasticGP.from_kernel(kernel, X[fin], y[fin], s[fin], mean=mean[fin])
    assert np.allclose(gp_fin.loo()[1], 1 / np.diag(Kyinv) - s[fin], rtol=1e-8)


def _fd(f, z, h=1e-6):
    g = np.empty_like(z)
    for j in range(z.size):
        zp, zm = z.copy(), z.copy()
        zp[j] += h
        zm[j] -= h
        g[j] = (f(zp) - f(zm)) / (2 * h)
    return g


def _kernel_cases():
    rng = np.random.default_rng(5)
    x1 = rng.uniform(0, 10, (25, 1))
    sotu = np.column_stack([rng.uniform(1790, 2011, 25), rng.integers(0, 4, 25)])
    mixed = np.column_stack([x1[:, 0], rng.integers(0, 3, 25)])
    return [
        ("rbf", ConstantKernel(1.4) * RBF(1.5), x1),
        ("rq", RationalQuadratic(2.0, 0.6), x1),
        ("sotu", SOTUKernel(length_scale=20.0, alpha=0.9, speaker_constant=0.7,
                            amplitude=1.3), sotu),
        ("sum_product", ConstantKernel(0.8) * RBF(2.0) + RationalQuadratic(4.0, 1.5)
         * ConstantKernel(0.5) + WhiteKernel(0.05), x1),
        ("categorical_product", OnColumns(RBF(3.0), [0])
         * OnColumns(CategoricalKernel(0.4), [1]), mixed),
    ]


KCASES = _kernel_cases()


@pytest.mark.parametrize("name,kernel,X", KCASES, ids=[c[0] for c in KCASES])
def test_evidence_gradient_vs_finite_differences(name, kernel, X):
    rng = np.random.default_rng(11)
    y = rng.standard_normal(len(X))
    s = rng.uniform(0.02, 0.4, len(X))
    s[0] = np.inf
    tau = 0.3

    def f(z):
        return log_marginal_likelihood(kernel.clone_with_theta(z[:-1]), X, y, s,
                                       tau=float(np.exp(z[-1])), mean=0.2)

    z = np.append(kernel.theta, np.log(tau))
    _, g = log_marginal_likelihood(kernel, X, y, s, tau=tau, mean=0.2, eval_gradient=True)
    fd = _fd(f, z)
    rel = np.abs(g - fd).max() / np.abs(g).max()
    assert rel < 1e-6, (name, rel, g, fd)


def test_planted_length_scale_is_recovered():
    """Data from a GP with length scale 3; start at 0.3.  Recovered: 2.67 (seed 0)."""
    rng = np.random.default_rng(0)
    D = 150
    X = np.sort(rng.uniform(0, 60, D))[:, None]
    K = 2.0 * RBF(3.0)(X)
    f = np.linalg.cholesky(K + 1e-9 * np.eye(D)) @ rng.standard_normal(D)
    s = rng.uniform(0.01, 0.1, D)
    y = f + np.sqrt(s + 0.2**2) * rng.standard_normal(D)
    fit = fit_hyperparameters(ConstantKernel(1.0) * RBF(0.3), X, y, s, tau=1.0)
    ell = fit.kernel.k2.length_scale
    assert 2.0 < ell < 4.5, fit.kernel
    assert 0.1 < fit.tau < 0.3
    assert fit.log_marginal_likelihood > fit.initial_log_marginal_likelihood + 50
    # the optimum is stationary: gradient ~ 0 in the free directions
    _, g = log_marginal_likelihood(fit.kernel, X, y, s, tau=fit.tau, eval_gradient=True)
    assert np.abs(g).max() < 1e-2


def test_fit_keeps_fixed_and_tau():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 10, (20, 1))
    y = np.sin(X[:, 0])
    k = ConstantKernel(1.0, "fixed") * RBF(1.0)
    fit = fit_hyperparameters(k, X, y, 0.01, tau=0.5, fit_tau=False)
    assert fit.tau == 0.5 and fit.kernel.k1.constant_value == 1.0
    assert k.k2.length_scale == 1.0  # input not modified


def test_bad_inputs():
    K = np.eye(3)
    with pytest.raises(ValueError, match="noise"):
        HeteroscedasticGP(K, [1.0, -1.0, 1.0], np.zeros(3))
    with pytest.raises(ValueError, match="tau"):
        HeteroscedasticGP(K, [1.0, 0.0, 1.0], np.zeros(3))
    with pytest.raises(ValueError, match="shape"):
        HeteroscedasticGP(K, 1.0, np.zeros(4))
    with pytest.raises(np.linalg.LinAlgError, match="semi-definite"):
        HeteroscedasticGP(-np.eye(3) * 5, 1.0, np.zeros(3))
    with pytest.raises(ValueError, match="mean_new"):
        HeteroscedasticGP(K, 1.0, np.zeros(3), mean=np.ones(3)).predict(
            K_cross=np.ones((3, 1)), k_diag=np.ones(1))


def test_fitc_approaches_exact_gp_as_m_grows():
    rng = np.random.default_rng(0)
    D = 200
    X = rng.uniform(0, 20, (D, 1))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(D)
    s = rng.uniform(0.01, 0.2, D)
    s[3] = np.inf
    k = ConstantKernel(1.2) * RBF(1.5)
    exact = HeteroscedasticGP.from_kernel(k, X, y, s, mean=0.1, tau=0.1)
    Xn = rng.uniform(0, 20, (50, 1))
    m_ex, v_ex = exact.predict(Xn)
    errs = []
    for M in (10, 40, 80, D):
        a = FITCGP(k, X, y, s, mean=0.1, tau=0.1, n_inducing=M)
        m, v = a.predict(Xn)
        errs.append((np.abs(m - m_ex).max(), np.abs(v - v_ex).max(),
                     abs(a.log_marginal_likelihood() - exact.log_marginal_likelihood())))
    errs = np.array(errs)
    assert (np.diff(errs, axis=0) < 0).all(), errs  # monotone in M here
    assert errs[-1].max() < 1e-7  # M = D: the exact GP
    assert errs[0, 0] > 0.1  # M = 10 is visibly approximate


def test_fitc_loo_is_exact_with_every_point_inducing_and_converges():
    """FITC's leave-one-out cavities equal the exact GP's when every training input is
    an inducing input, and approach them as M grows."""
    from sklearn.gaussian_process.kernels import RBF

    from topiclink.families.ktm.gp.regression import FITCGP, HeteroscedasticGP

    rng = np.random.default_rng(7)
    X = np.sort(rng.uniform(0, 10, 120))[:, None]
    y = np.sin(X[:, 0]) + rng.normal(0, 0.2, 120)
    noise = rng.uniform(0.02, 0.3, 120)
    kernel = 1.5 * RBF(length_scale=1.2)
    exact = HeteroscedasticGP.from_kernel(kernel, X, y, noise, mean=0.1, tau=0.1)
    mu, var = exact.loo()
    full = FITCGP(kernel, X, y, noise, mean=0.1, tau=0.1, n_inducing=120, jitter=1e-12)
    mu_f, var_f = full.loo()
    np.testing.assert_allclose(mu_f, mu, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(var_f, var, rtol=1e-5, atol=1e-7)
    errors = [np.abs(FITCGP(kernel, X, y, noise, mean=0.1, tau=0.1, n_inducing=m,
                            random_state=0).loo()[0] - mu).max() for m in (5, 15, 40)]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-3, errors
