"""The NCVMP updates of batch LMV: each fixed point is the numerical maximiser of L* in its
block, and the damped step never decreases L*."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from topiclink.families.lmv.updates import (
    beta_entropy,
    blockmodel_objective,
    blockmodel_target,
    damped_step,
    visibility_objective,
    visibility_target,
)


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    D, K = 6, 2
    return {"D": D, "K": K, "a0": 1.0, "b0": 1.0, "g0": 1.0, "h0": 1.0,
            "S1": rng.uniform(0.5, 3.0, (K, K)), "T": rng.uniform(0.0, 4.0, (D, K, K)),
            "taubar": rng.uniform(0.2, 0.8, D), "in_degree": rng.integers(0, 4, D) * 1.0,
            "Bbar": rng.uniform(0.05, 0.4, (K, K))}


def _fixed_point(target, x, y, n=500):
    for _ in range(n):
        nx, ny = target(x, y)
        x, y = 0.5 * x + 0.5 * nx, 0.5 * y + 0.5 * ny
    return x, y


def test_beta_entropy_matches_scipy():
    from scipy.stats import beta

    for x, y in [(0.5, 2.0), (3.0, 7.0), (20.0, 1.5)]:
        assert beta_entropy(np.array(x), np.array(y)) == pytest.approx(beta(x, y).entropy(),
                                                                       rel=1e-10)


def test_blockmodel_fixed_point_is_the_maximiser(problem):
    p = problem
    a, b = _fixed_point(lambda a, b: blockmodel_target(a, b, p["a0"], p["b0"], p["S1"],
                                                       p["T"], p["taubar"]),
                        np.ones((2, 2)), np.full((2, 2), 5.0))
    for i in range(2):
        for j in range(2):
            def f(v, i=i, j=j):
                aa, bb = a.copy(), b.copy()
                aa[i, j], bb[i, j] = np.exp(v)
                return -blockmodel_objective(aa, bb, p["a0"], p["b0"], p["S1"], p["T"],
                                             p["taubar"])[i, j]
            best = minimize(f, np.log([a[i, j], b[i, j]]), method="Nelder-Mead",
                            options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 4000})
            np.testing.assert_allclose(np.exp(best.x), [a[i, j], b[i, j]], rtol=1e-4)


def test_visibility_fixed_point_is_the_maximiser(problem):
    p = problem
    g, h = _fixed_point(lambda g, h: visibility_target(g, h, p["g0"], p["h0"],
                                                       p["in_degree"], p["T"], p["Bbar"]),
                        np.ones(p["D"]), np.ones(p["D"]))
    for d in range(p["D"]):
        def f(v, d=d):
            gg, hh = g.copy(), h.copy()
            gg[d], hh[d] = np.exp(v)
            return -visibility_objective(gg, hh, p["g0"], p["h0"], p["in_degree"], p["T"],
                                         p["Bbar"])[d]
        best = minimize(f, np.log([g[d], h[d]]), method="Nelder-Mead",
                        options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 4000})
        np.testing.assert_allclose(np.exp(best.x), [g[d], h[d]], rtol=1e-4)


def test_a_wrong_target_is_not_the_maximiser(problem):
    """The test above can fail: dropping the non-link term moves the fixed point."""
    p = problem
    a, b = _fixed_point(lambda a, b: blockmodel_target(a, b, p["a0"], p["b0"], p["S1"],
                                                       0 * p["T"], p["taubar"]),
                        np.ones((2, 2)), np.ones((2, 2)))
    grad = []
    for eps in (1e-6, -1e-6):
        aa = a.copy()
        aa[0, 0] += eps
        grad.append(blockmodel_objective(aa, b, p["a0"], p["b0"], p["S1"], p["T"],
                                         p["taubar"])[0, 0])
    assert abs(grad[0] - grad[1]) / 2e-6 > 1e-3


def test_damped_step_never_decreases_the_objective(problem):
    p = problem

    def objective(a, b):
        return float(blockmodel_objective(a, b, p["a0"], p["b0"], p["S1"], p["T"],
                                          p["taubar"]).sum())

    a, b = np.full((2, 2), 0.3), np.full((2, 2), 30.0)
    values = [objective(a, b)]
    for _ in range(20):
        a, b, s, accepted = damped_step(a, b, blockmodel_target(
            a, b, p["a0"], p["b0"], p["S1"], p["T"], p["taubar"]), objective)
        values.append(objective(a, b))
        assert np.all(a > 0) and np.all(b > 0)
    assert np.all(np.diff(values) >= -1e-12)
    assert values[-1] > values[0]
