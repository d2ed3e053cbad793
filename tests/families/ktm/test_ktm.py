"""Kernel topic model (``docs/design/ktm.md``): the word step keeps its totals, the
summed evidence gradient is analytic, planted topic trends over a feature are found, bad
input is a one-line error.

Thresholds fixed before running: evidence gradient relative error < 1e-6; planted trend
(K = 4 topics whose log proportions are smooth functions of x in [0, 10]): median over
topics of the correlation between predicted and true proportions > 0.8.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from topiclink.data.checks import DataError
from topiclink.families.ktm.algorithm import KTMData, KTMVariational, summed_evidence
from topiclink.families.ktm.estimator import KernelTopicModel
from topiclink.families.ktm.gp.kernels import rational_quadratic


def _planted(D: int = 300, V: int = 200, K: int = 4, L: int = 80, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0, 10, D))
    trend = np.stack([np.sin(x / 2), np.cos(x / 2), x / 5 - 1, -x / 5 + 1], 1) * 1.5
    pi = np.exp(trend)
    pi /= pi.sum(1, keepdims=True)
    topics = rng.dirichlet(np.full(V, 0.05), K)
    counts = np.zeros((D, V))
    for d in range(D):
        z = rng.choice(K, L, p=pi[d])
        for k in range(K):
            n = int((z == k).sum())
            if n:
                counts[d] += rng.multinomial(n, topics[k])
    return sp.csr_matrix(counts), x, pi, topics


def test_word_step_keeps_the_totals():
    X, x, *_ = _planted(D=40)
    alg = KTMVariational(4, rational_quadratic(), beta=0.01)
    data = KTMData(X, x[:, None])
    state = alg.init(data, np.random.default_rng(1))
    for _ in range(3):
        alg.word_step(state, data)
    lengths = np.asarray(X.sum(axis=1)).ravel()
    np.testing.assert_allclose(state.nu.sum(axis=1), lengths, rtol=1e-10)
    np.testing.assert_allclose(state.nkw.sum(axis=0), state.nk, rtol=1e-10)
    np.testing.assert_allclose(state.nk.sum(), X.sum(), rtol=1e-10)
    np.testing.assert_allclose(state.resp.sum(axis=1), 1.0, rtol=1e-12)


def test_summed_evidence_gradient_is_analytic():
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 5, (25, 1))
    y = rng.normal(size=(25, 3))
    noise = rng.uniform(0.05, 0.5, (25, 3))
    mean = np.array([0.1, -0.2, 0.0])
    kernel = rational_quadratic(length_scale=1.3, alpha=0.7, amplitude=1.1)
    z = np.append(kernel.theta, np.log(0.4))

    def f(v):
        return summed_evidence(kernel.clone_with_theta(v[:-1]), X, y, noise, mean,
                               float(np.exp(v[-1])), gradient=False)[0]

    _, grad = summed_evidence(kernel, X, y, noise, mean, 0.4)
    h = 1e-6
    fd = np.array([(f(z + h * e) - f(z - h * e)) / (2 * h) for e in np.eye(z.size)])
    assert np.max(np.abs(fd - grad) / np.maximum(np.abs(fd), 1e-8)) < 1e-6


def test_planted_topic_trends_are_found():
    X, x, pi, topics = _planted()
    m = KernelTopicModel(4, kernel=rational_quadratic(length_scale=0.3), max_iter=40,
                         random_state=0).fit(X, features=x[:, None])
    norm = np.linalg.norm
    cos = (m.components_ / norm(m.components_, axis=1, keepdims=True)) @ (
        topics / norm(topics, axis=1, keepdims=True)).T
    rows, cols = linear_sum_assignment(-cos)
    pred = m.predict_topics(x[:, None])
    corr = [np.corrcoef(pred[:, r], pi[:, c])[0, 1] for r, c in zip(rows, cols,
                                                                     strict=True)]
    assert np.median(corr) > 0.8, corr
    # the length scale started at 0.3 moved towards the trend's scale (several units)
    assert m.kernel_.k2.length_scale > 1.0, m.kernel_
    assert np.isfinite(m.trace_["log_evidence"]).all()


def test_extreme_gaussian_beliefs_stay_finite():
    """A GP far from its data can predict means whose exponentials overflow the bridge;
    the priors stay finite and within bounds (this crashed a constant-kernel fit)."""
    from topiclink.families.ktm.algorithm import ALPHA_MAX, ALPHA_MIN, bridge_to_dirichlet

    mean = np.array([[0.0, 7000.0, -20.0], [1e4, 1e4 + 1, 1e4 + 2]])
    alpha = bridge_to_dirichlet(mean, np.array([[200.0, 1e-9, 1.0], [1.0, 1.0, 1e9]]))
    assert np.isfinite(alpha).all()
    assert (alpha >= ALPHA_MIN).all() and (alpha <= ALPHA_MAX).all()


def test_bad_input_one_line_errors():
    X, x, *_ = _planted(D=30)
    with pytest.raises(ValueError, match="n_topics") as info:
        KernelTopicModel(2).fit(X, features=x[:, None])
    assert "\n" not in str(info.value)
    bad = x.copy()
    bad[4] = np.nan
    with pytest.raises(DataError, match="feature 0 of document 4 is nan"):
        KernelTopicModel(3, max_iter=1).fit(X, features=bad[:, None])
    with pytest.raises(DataError, match="shape"):
        KernelTopicModel(3, max_iter=1).fit(X, features=np.ones((29, 1)))
    with pytest.raises(DataError, match="features must be given"):
        KernelTopicModel(3, max_iter=1).fit(X)
    with pytest.raises(DataError, match="feature 1 has the same value .5. for every"):
        KernelTopicModel(3, max_iter=1).fit(X, features=np.column_stack(
            [x, np.full(x.size, 5.0)]))
    m = KernelTopicModel(3, max_iter=2, random_state=0).fit(X, features=x[:, None])
    with pytest.raises(DataError, match="columns"):
        m.predict_topics(np.ones((2, 2)))


def test_inducing_points_approach_the_exact_fit():
    """With n_inducing >= D the fit is the exact one; with fewer inducing documents the
    FITC fit still finds the planted trends (same threshold as the exact fit)."""
    X, x, pi, topics = _planted(D=200)
    kw = dict(kernel=rational_quadratic(length_scale=0.3), max_iter=25, random_state=0)
    exact = KernelTopicModel(4, **kw).fit(X, features=x[:, None])
    same = KernelTopicModel(4, n_inducing=200, **kw).fit(X, features=x[:, None])
    np.testing.assert_array_equal(exact.doc_topic_, same.doc_topic_)
    low = KernelTopicModel(4, n_inducing=40, **kw).fit(X, features=x[:, None])
    norm = np.linalg.norm
    cos = (low.components_ / norm(low.components_, axis=1, keepdims=True)) @ (
        topics / norm(topics, axis=1, keepdims=True)).T
    rows, cols = linear_sum_assignment(-cos)
    pred = low.predict_topics(x[:, None])
    corr = [np.corrcoef(pred[:, r], pi[:, c])[0, 1] for r, c in zip(rows, cols,
                                                                     strict=True)]
    assert np.median(corr) > 0.8, corr


def test_parameters_far_from_the_hyper_prior_are_named():
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from topiclink.families.ktm.algorithm import KTMState, KTMVariational

    kernel = ConstantKernel(1.0) * RBF(2.0)
    z = np.zeros((1, 3))
    state = KTMState(resp=z, nkw=z, nk=z[0], nu=z, alpha=z + 1, msg_mean=z, msg_var=z + 1,
                     prior_mean=z[0], theta=np.log([1.0 * np.exp(1.6), 2.0]), tau=1.0)
    assert KTMVariational(3, kernel, beta=0.01, hyperprior_scale=0.5
                          ).parameters_far_from_prior(state) == ["k1__constant_value"]
    assert KTMVariational(3, kernel, beta=0.01, hyperprior_scale=1.0
                          ).parameters_far_from_prior(state) == []
    assert KTMVariational(3, kernel, beta=0.01, hyperprior_scale=None
                          ).parameters_far_from_prior(state) == []


def test_parameters_at_bounds_are_named():
    """The diagnostic behind fit's warning: hyper-parameters on a bound of their range."""
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from topiclink.families.ktm.algorithm import TAU_MAX, KTMState, KTMVariational

    kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(1.0, (1e-2, 1e2))
    algo = KTMVariational(3, kernel, beta=0.01, optimize_every=10)
    z = np.zeros((1, 3))
    state = KTMState(resp=z, nkw=z, nk=z[0], nu=z, alpha=z + 1, msg_mean=z, msg_var=z + 1,
                     prior_mean=z[0], theta=np.log([1.0, 1e2]), tau=1.0)
    assert algo.parameters_at_bounds(state) == ["k2__length_scale"]
    state.theta = np.log([1e-3, 1.0])
    state.tau = TAU_MAX
    assert algo.parameters_at_bounds(state) == ["k1__constant_value", "tau"]
    state.theta = np.log([1.0, 1.0])
    state.tau = 1.0
    assert algo.parameters_at_bounds(state) == []
    assert KTMVariational(3, kernel, beta=0.01, optimize_every=0).parameters_at_bounds(
        KTMState(resp=z, nkw=z, nk=z[0], nu=z, alpha=z + 1, msg_mean=z, msg_var=z + 1,
                 prior_mean=z[0], theta=np.log([1e-3, 1e2]), tau=TAU_MAX)) == []
