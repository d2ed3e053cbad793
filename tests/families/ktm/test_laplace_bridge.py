"""Tests of the KTM Laplace bridge (Dirichlet <-> softmax-basis Gaussian) and of the Gaussian
message arithmetic in :mod:`topiclink.families.ktm.laplace`.

Round trips are checked to ``ROUND_TRIP_RTOL`` relative on the bridge's own image (the
"diagonal family": Gaussians that come from some alpha), for K = 3..50 and alpha spanning
1e-2..1e4, and the paper's printed eq. (19) is shown to fail them.

Moment test (``test_bridge_matches_dirichlet_moments_for_large_alpha``): ``N_DRAWS`` draws of
Dirichlet(c p) are mapped to the softmax basis; the sample mean and unbiased sample variance
of each y_k must lie within ``N_SIGMA`` standard errors (``sqrt(s2 / n)`` for the mean,
``sqrt((m4 - s2^2) / n)`` for the variance) of the bridge's mu_k and Sigma_kk, plus the
Laplace approximation's own leading-order error: the exact moments are
``psi(a_k) - mean psi(a)`` and ``psi1(a_k)(1 - 2/K) + sum psi1(a) / K^2`` and
``log a - psi(a) ~ 1/(2a)``, ``psi1(a) - 1/a ~ 1/(2a^2)``, so the allowance is
``1/(2 min a)`` on the mean and ``Sigma_kk / min a`` (relative) on the variance. At
c = 1e4 that allowance is ~8 standard errors of the mean (0.02 of y's standard deviation);
at c = 1e6 it is below one. Why 5 sigma: 2 x 5 components x 2 statistics, each with a
two-sided 5.7e-7 chance of a spurious failure; a variance formula missing its
``sum 1/alpha / K^2`` term is shown to sit far outside the tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topiclink.families.ktm.laplace import (
    _gaussian_to_dirichlet_printed,
    beta_to_logit_gaussian,
    dirichlet_to_gaussian,
    gaussian_divide,
    gaussian_multiply,
    gaussian_to_dirichlet,
    logit_gaussian_to_beta,
)

SEED = 20240521
ROUND_TRIP_RTOL = 1e-12
N_DRAWS = 200_000
N_SIGMA = 5.0
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _rel_err(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got / want - 1.0)))


def _alpha(seed: int, D: int, K: int, lo: float = -2.0, hi: float = 4.0) -> np.ndarray:
    """(D, K) alphas, log10-uniform on [lo, hi]."""
    return 10.0 ** np.random.default_rng([SEED, seed, D, K]).uniform(lo, hi, size=(D, K))


# --- the K >= 3 bridge --------------------------------------------------------------------

def test_forward_map_matches_eqs_15_and_18() -> None:
    alpha = np.array([0.5, 2.0, 8.0, 1.0])
    mu, var = dirichlet_to_gaussian(alpha)
    K = 4
    for k in range(K):
        assert mu[k] == pytest.approx(math.log(alpha[k]) - sum(map(math.log, alpha)) / K,
                                      rel=1e-15, abs=1e-15)
        want = (1 - 2 / K) / alpha[k] + sum(1 / a for a in alpha) / K**2
        assert var[k] == pytest.approx(want, rel=1e-15)
    assert abs(mu.sum()) < 1e-15


@SETTINGS
@given(K=st.integers(3, 50), D=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_round_trip_is_exact_on_the_diagonal_family(K: int, D: int, seed: int) -> None:
    alpha = _alpha(seed, D, K)
    mu, var = dirichlet_to_gaussian(alpha)
    assert mu.shape == var.shape == (D, K)
    assert _rel_err(gaussian_to_dirichlet(mu, var), alpha) <= ROUND_TRIP_RTOL


def test_round_trip_all_K_vectorised_over_documents() -> None:
    worst = 0.0
    for K in range(3, 51):
        alpha = _alpha(0, 200, K)
        mu, var = dirichlet_to_gaussian(alpha)
        back = gaussian_to_dirichlet(mu, var)
        rows = np.stack([gaussian_to_dirichlet(*dirichlet_to_gaussian(a)) for a in alpha[:5]])
        np.testing.assert_array_equal(back[:5], rows)  # vectorised == row by row
        worst = max(worst, _rel_err(back, alpha))
    assert worst <= ROUND_TRIP_RTOL  # measured: ~4e-15


def test_printed_eq_19_does_not_invert_the_forward_map() -> None:
    """The paper's e^{-mu_k} puts G^2 / alpha_k (G the geometric mean) where alpha_k belongs,
    so its error grows with the spread of alpha (diluted by 1/K^2 against 1 - 2/K): on alpha
    log-uniform over 1e-2..1e4 the typical (median) row is off by a factor of ~100-1000 and
    the worst by ~1e4-1e5, while e^{+mu_k} is exact. Only a symmetric alpha (G = alpha_k)
    cannot tell the two apart, so a test on it would not catch the sign."""
    for K in (3, 10, 50):
        alpha = _alpha(1, 100, K)
        mu, var = dirichlet_to_gaussian(alpha)
        printed = np.abs(_gaussian_to_dirichlet_printed(mu, var) / alpha - 1.0).max(axis=1)
        assert np.median(printed) > 1.0 and printed.max() > 1e3, (K, np.median(printed))
        assert _rel_err(gaussian_to_dirichlet(mu, var), alpha) <= ROUND_TRIP_RTOL
    symmetric = np.full(7, 0.3)
    mu, var = dirichlet_to_gaussian(symmetric)
    assert _rel_err(_gaussian_to_dirichlet_printed(mu, var), symmetric) <= ROUND_TRIP_RTOL


def test_gaussian_to_dirichlet_ignores_a_common_shift_of_mu() -> None:
    alpha = _alpha(2, 3, 6)
    mu, var = dirichlet_to_gaussian(alpha)
    for shift in (-1e3, -5.0, 7.5, 800.0):
        np.testing.assert_allclose(gaussian_to_dirichlet(mu + shift, var), alpha,
                                   rtol=1e-12)


def test_gaussian_to_dirichlet_is_stable_for_large_mu() -> None:
    """A naive e^{mu} overflows at mu = 710; the shifted/log form gives the exact alpha."""
    np.testing.assert_allclose(gaussian_to_dirichlet([800.0, 800.0, 800.0], [1.0, 2.0, 4.0]),
                               [2 / 3, 1 / 3, 1 / 6], rtol=1e-15)
    # spread 800 > 709: exp(800) alone overflows, alpha itself is finite.
    alpha = gaussian_to_dirichlet([-400.0, 0.0, 400.0], [1e300] * 3)
    log_want = [math.log(1 / 3 + 1 / 9) - math.log(1e300),
                400 - math.log(9) - math.log(1e300),  # 1/3 and e^{-400} are below an ulp
                800 - math.log(9) - math.log(1e300)]
    np.testing.assert_allclose(np.log(alpha), log_want, rtol=1e-14)
    with pytest.raises(ValueError, match=r"alpha\[2\] \(component 2\) overflows"):
        gaussian_to_dirichlet([-400.0, 0.0, 400.0], [1.0] * 3)


def test_bridge_matches_dirichlet_moments_for_large_alpha() -> None:
    p = np.array([0.1, 0.15, 0.2, 0.25, 0.3])
    K = p.size
    for c in (1e4, 1e6):
        alpha = c * p
        rng = np.random.default_rng([SEED, int(c)])
        # Dirichlet draw x = g / sum(g), g_k ~ Gamma(alpha_k): the normaliser cancels in
        # y_k = log x_k - mean_l log x_l, so y comes straight from log g.
        log_g = np.log(rng.standard_gamma(alpha, size=(N_DRAWS, K)))
        y = log_g - log_g.mean(axis=1, keepdims=True)
        mu, var = dirichlet_to_gaussian(alpha)
        mean, s2 = y.mean(axis=0), y.var(axis=0, ddof=1)
        m4 = ((y - mean) ** 4).mean(axis=0)
        se_mean, se_var = np.sqrt(s2 / N_DRAWS), np.sqrt((m4 - s2**2) / N_DRAWS)
        tol_mean = N_SIGMA * se_mean + 1 / (2 * alpha.min())
        tol_var = N_SIGMA * se_var + var / alpha.min()
        assert np.all(np.abs(mean - mu) <= tol_mean), ((mean - mu) / se_mean, c)
        assert np.all(np.abs(s2 - var) <= tol_var), ((s2 - var) / se_var, c)
        wrong_var = (1 - 2 / K) / alpha  # eq. (18) without its sum term
        assert np.all(np.abs(s2 - wrong_var) > 5 * tol_var)


# --- K = 2 --------------------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "mu", "var"), [(2.0, 1.2, 0.5, 1.3), (0.5, 0.9, -0.6, 3.1),
                                                   (3.0, 4.0, -0.3, 0.6)])
def test_beta_map_reproduces_figure_3(a: float, b: float, mu: float, var: float) -> None:
    got_mu, got_var = beta_to_logit_gaussian(a, b)
    assert round(float(got_mu), 1) == mu and round(float(got_var), 1) == var
    assert got_mu == pytest.approx(math.log(a / b), rel=1e-15)
    assert got_var == pytest.approx(1 / a + 1 / b, rel=1e-15)


@SETTINGS
@given(st.floats(-2.0, 4.0), st.floats(-2.0, 4.0))
def test_beta_round_trip(log_a: float, log_b: float) -> None:
    a, b = 10.0**log_a, 10.0**log_b
    mu, var = beta_to_logit_gaussian(a, b)
    assert mu == pytest.approx(math.log(a) - math.log(b), rel=1e-15, abs=1e-15)
    assert var == pytest.approx(1 / a + 1 / b, rel=1e-15)
    back_a, back_b = logit_gaussian_to_beta(mu, var)
    assert back_a == pytest.approx(a, rel=ROUND_TRIP_RTOL)
    assert back_b == pytest.approx(b, rel=ROUND_TRIP_RTOL)


def test_beta_maps_are_vectorised_and_inverse_both_ways() -> None:
    rng = np.random.default_rng(SEED)
    mu = rng.normal(0, 20, size=(4, 6))
    var = 10.0 ** rng.uniform(-3, 3, size=(4, 6))
    a, b = logit_gaussian_to_beta(mu, var)
    assert a.shape == b.shape == (4, 6)
    mu2, var2 = beta_to_logit_gaussian(a, b)
    np.testing.assert_allclose(mu2, mu, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(var2, var, rtol=1e-12)
    a_big, b_big = logit_gaussian_to_beta(800.0, 1e300)  # e^800 alone overflows
    assert math.log(a_big) == pytest.approx(800 - math.log(1e300), rel=1e-14)
    assert b_big == pytest.approx(1 / 1e300, rel=1e-15)


@pytest.mark.parametrize("K", [0, 1, 2])
def test_k_below_3_is_refused_with_a_pointer_to_the_beta_map(K: int) -> None:
    with pytest.raises(ValueError, match=r"K = \d .*K >= 3.* use beta_to_logit_gaussian"):
        dirichlet_to_gaussian(np.ones((3, K)))
    with pytest.raises(ValueError, match=r"K = \d .*K >= 3.* use logit_gaussian_to_beta"):
        gaussian_to_dirichlet(np.zeros(K), np.ones(K))


# --- Gaussian messages --------------------------------------------------------------------

def test_gaussian_divide_is_exact_natural_parameter_arithmetic() -> None:
    # precisions 2 - 0.5 = 1.5, precision-means 2*1 - 0.5*4 = 0 and 4*3 - 1*1 = 11: exact.
    mu, var, n = gaussian_divide([1.0, 3.0], [0.5, 0.25], [4.0, 1.0], [2.0, 1.0])
    np.testing.assert_array_equal(1 / var, [1.5, 3.0])
    np.testing.assert_allclose(mu, [0.0, 11 / 3], rtol=1e-15)
    assert n == 0
    mu_s, var_s, n_s = gaussian_divide(1.0, 0.5, 4.0, 2.0)
    assert np.ndim(mu_s) == 0 and var_s == pytest.approx(2 / 3) and n_s == 0


@SETTINGS
@given(st.floats(-50, 50), st.floats(-3, 3), st.floats(-50, 50), st.floats(-3, 3))
def test_divide_undoes_multiply(m1: float, lv1: float, m2: float, lv2: float) -> None:
    v1, v2 = 10.0**lv1, 10.0**lv2
    mu, var = gaussian_multiply(m1, v1, m2, v2)
    assert 1 / var == pytest.approx(1 / v1 + 1 / v2, rel=1e-14)
    back_mu, back_var, n = gaussian_divide(mu, var, m2, v2)
    assert n == 0
    # relative to the scale of the subtraction 1/var - 1/v2 (cancellation when v2 << v1)
    scale = (1 / var) / (1 / v1)
    assert back_var == pytest.approx(v1, rel=1e-13 * scale)
    assert back_mu == pytest.approx(m1, rel=1e-12 * scale, abs=1e-12 * scale * (1 + abs(m2)))


def test_gaussian_divide_clips_and_counts_non_positive_precisions() -> None:
    mu1 = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    var1 = np.array([[2.0, 1.0, 0.5], [1.0, 1.0, 4.0]])
    var2 = np.array([[1.0, 1.0, 1.0], [2.0, 0.5, 8.0]])  # precisions -0.5, 0, 1, .5, -1, .125
    mu, var, n = gaussian_divide(mu1, var1, 1.0, var2, min_precision=1e-6)
    assert n == 3
    clipped = np.array([[True, True, False], [False, True, False]])
    np.testing.assert_array_equal(var[clipped], 1e6)
    eta = mu1 / var1 - 1.0 / var2  # eta is kept where the precision is clipped
    np.testing.assert_allclose(mu[clipped] * 1e-6, eta[clipped], rtol=1e-15)
    np.testing.assert_allclose(var[~clipped], [1.0, 2.0, 8.0], rtol=1e-15)
    # a positive precision below the floor is raised (and counted) too
    assert gaussian_divide(0.0, 1.0, 0.0, 1.0 + 1e-9, min_precision=1e-6)[2] == 1


# --- bad input: one line, naming the position ---------------------------------------------

@pytest.mark.parametrize(("call", "pattern"), [
    (lambda: dirichlet_to_gaussian([[1.0, 2.0, 3.0], [1.0, -1.0, 2.0]]),
     r"alpha\[1, 1\] \(document 1, component 1\) = -1\.0"),
    (lambda: dirichlet_to_gaussian([[1.0, 2.0, 3.0], [1.0, 2.0, 0.0]]),
     r"> 0.*alpha\[1, 2\] \(document 1, component 2\) = 0\.0"),
    (lambda: dirichlet_to_gaussian([1.0, np.nan, 3.0]), r"alpha\[1\] \(component 1\) = nan"),
    (lambda: dirichlet_to_gaussian([1.0, 2.0, np.inf]), r"alpha\[2\] \(component 2\) = inf"),
    (lambda: dirichlet_to_gaussian([1.0, 2.0, 1e-310]), r"1/alpha\[2\] \(component 2\)"),
    (lambda: dirichlet_to_gaussian(np.ones((2, 2, 3))), r"shape \(K,\) or \(D, K\)"),
    (lambda: dirichlet_to_gaussian(["a", "b", "c"]), r"alpha must be a real number"),
    (lambda: gaussian_to_dirichlet(np.zeros((2, 3)), np.ones(3)),
     r"mu has shape \(2, 3\) but var has shape \(3,\)"),
    (lambda: gaussian_to_dirichlet([[0.0, 0.0, 0.0], [0.0, np.nan, 0.0]], np.ones((2, 3))),
     r"mu\[1, 1\] \(document 1, component 1\) = nan"),
    (lambda: gaussian_to_dirichlet(np.zeros((2, 3)), [[1.0, 1.0, 1.0], [1.0, 1.0, -2.0]]),
     r"var\[1, 2\] \(document 1, component 2\) = -2\.0"),
    (lambda: gaussian_to_dirichlet(np.zeros(3), [1.0, 0.0, 1.0]), r"var\[1\] \(component 1\)"),
    (lambda: beta_to_logit_gaussian([1.0, 0.0], 1.0), r"a\[1\] = 0\.0"),
    (lambda: beta_to_logit_gaussian(1.0, [1.0, 2.0, np.nan]), r"b\[2\] = nan"),
    (lambda: beta_to_logit_gaussian([1.0, 2.0], [1.0, 2.0, 3.0]), r"do not broadcast"),
    (lambda: logit_gaussian_to_beta(np.inf, 1.0), r"mu must be finite, got mu = inf"),
    (lambda: logit_gaussian_to_beta(0.0, [1.0, -1.0]), r"var\[1\] = -1\.0"),
    (lambda: logit_gaussian_to_beta(800.0, 1.0), r"a overflows"),
    (lambda: gaussian_divide([0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 0.0]),
     r"var2\[1\] = 0\.0"),
    (lambda: gaussian_divide([0.0, np.nan], 1.0, 0.0, 1.0), r"mu1\[1\] = nan"),
    (lambda: gaussian_divide(0.0, 1.0, 0.0, 2.0, min_precision=0.0), r"min_precision"),
    (lambda: gaussian_multiply(0.0, [[1.0], [np.inf]], 0.0, 1.0), r"var1\[1, 0\] = inf"),
])
def test_bad_input_is_a_one_line_error_naming_the_position(call, pattern) -> None:
    with pytest.raises(ValueError, match=pattern) as info:
        call()
    assert "\n" not in str(info.value)
