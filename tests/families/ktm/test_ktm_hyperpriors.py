"""KTM's hyper-parameter fit does not get worse the longer it runs (issue: held-out
perplexity after 100 iterations above that after 20), and its hyper-prior is the log
density it claims to be."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.gaussian_process.kernels import ConstantKernel, RationalQuadratic

from tests.benchmark_module import benchmark_module
from topiclink.families.ktm.algorithm import KTMVariational, summed_evidence


@pytest.mark.slow
def test_held_out_perplexity_after_100_iterations_no_worse_than_after_20(shared_datasets):
    """300 hep-th abstracts with their year, K = 10 (``benchmarks/ktm_hyperpriors.py``,
    ``hepth-300/2``).  The old fit (maximum evidence, tau fitted) gets 7 % worse from 20
    to 100 iterations on this sample (496 -> 532, tau run to its bound 10); the default
    stays within 0.2 % (432.5 -> 433.0).  The 1 % allowance is the size of that change
    and is well under the old fit's."""
    with benchmark_module("ktm_hyperpriors") as bench:
        data = bench.hepth_sample(300, 2)
        default = bench.run_cell(data, 10, {})
        old = bench.run_cell(data, 10, bench.CONFIGS["ml-ii"])
    assert default["ratio_100_over_20"] <= 1.01, default
    assert old["ratio_100_over_20"] >= 1.03, old                  # the test can fail
    assert default["100"]["heldout_perplexity"] < old["100"]["heldout_perplexity"]


def _objective(monkeypatch, kernel, X, y, noise, *, tau, hyperprior_scale):
    """The function KTMVariational.optimise hands to L-BFGS (its minimize intercepted)."""
    import topiclink.families.ktm.algorithm as algo

    seen = {}

    def fake_minimize(fun, z0, **kwargs):
        seen["fun"] = fun

        class Result:
            x = z0
        Result.fun = fun(z0)[0]
        return Result

    monkeypatch.setattr(algo, "minimize", fake_minimize)
    alg = KTMVariational(y.shape[1], kernel, beta=0.01, fit_tau=True, tau=tau,
                         hyperprior_scale=hyperprior_scale)

    class State:
        theta = kernel.theta.copy()
        msg_mean, msg_var, prior_mean = y, noise, np.zeros(y.shape[1])

    class Data:
        features = X
        n_docs = X.shape[0]

    State.tau = tau
    alg.optimise(State, Data)
    return seen["fun"]


def _evidence(kernel, X, y, noise, z):
    value, _ = summed_evidence(kernel.clone_with_theta(z[:-1]), X, y, noise,
                               np.zeros(y.shape[1]), float(np.exp(z[-1])))
    return value


def test_the_hyper_prior_is_a_normal_log_density_around_the_start(monkeypatch):
    """The objective L-BFGS minimises is -(summed evidence + log N(z; z0, s^2)) up to a
    constant, and its gradient is that of this sum (finite differences)."""
    rng = np.random.default_rng(0)
    X, y = rng.random((12, 1)), rng.normal(size=(12, 3))
    noise = rng.uniform(0.1, 0.5, size=(12, 3))
    kernel = ConstantKernel(1.5) * RationalQuadratic(length_scale=0.7, alpha=2.0)
    scale = 0.8
    fun = _objective(monkeypatch, kernel, X, y, noise, tau=0.9, hyperprior_scale=scale)
    z0 = np.append(kernel.theta, math.log(0.9))
    z = z0 + np.array([0.3, -0.2, 0.4, -0.1])
    value, grad = fun(z)
    prior = -0.5 * float(np.sum((z - z0) ** 2)) / scale ** 2
    assert value == pytest.approx(-(_evidence(kernel, X, y, noise, z) + prior), rel=1e-10)
    step = 1e-6
    numeric = [(fun(z + step * e)[0] - fun(z - step * e)[0]) / (2 * step)
               for e in np.eye(4)]
    np.testing.assert_allclose(grad, numeric, rtol=1e-4, atol=1e-6)


def test_without_a_hyper_prior_the_objective_is_the_evidence(monkeypatch):
    rng = np.random.default_rng(1)
    X, y, noise = rng.random((8, 1)), rng.normal(size=(8, 3)), np.full((8, 3), 0.2)
    kernel = ConstantKernel(1.0) * RationalQuadratic(length_scale=1.0, alpha=1.0)
    fun = _objective(monkeypatch, kernel, X, y, noise, tau=1.0, hyperprior_scale=None)
    z = np.append(kernel.theta, 0.0) + 0.25
    assert fun(z)[0] == pytest.approx(-_evidence(kernel, X, y, noise, z), rel=1e-12)
