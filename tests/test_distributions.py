"""Tests of the Polya-Gamma and inverse Gaussian samplers, their moments and the moment check.

Moment tests draw ``N_DRAWS`` samples per parameter cell and require the sample mean and the
sample variance to lie within ``N_SIGMA`` standard errors of the exact values
(:func:`topiclink.diagnostics.moments.assert_moments`: the standard error of the mean is
``sqrt(var / n)``, that of the sample variance ``sqrt((m4 - m2^2) / n)`` from the sample
fourth central moment). The tolerance was fixed before any result was looked at.

Why 5 sigma (Bonferroni): a two-sided 5-sigma excursion of a standard normal has
probability 5.7e-7. The Polya-Gamma grid has 8 x 9 = 72 cells with 2 statistics each
(144 z-scores), the inverse Gaussian and hinge grids add 10 x 2 and 5 x 4 more, so the
probability that any correct cell fails by chance is below 184 x 5.7e-7 = 1.1e-4, while a
bias of 5 standard errors (e.g. ~1% of the mean of PG(1, 0) at n = 200,000) is caught.
"""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.diagnostics.moments import MomentCheck, assert_moments, moment_zscores
from topiclink.distributions.inverse_gaussian import (
    ig_mean,
    ig_var,
    sample_hinge_augmentation,
    sample_inverse_gaussian,
)
from topiclink.distributions.polya_gamma import pg_mean, pg_var, sample_pg

SEED = 20240611
N_DRAWS = 200_000
N_SIGMA = 5.0

H_GRID = (0.5, 1.0, 2.0, 3.7, 10.0, 25.0, 64.0, 256.0)
Z_GRID = (0.0, 1e-4, 0.5, 1.0, 2.9, 3.0, 5.0, 30.0, -7.0, 99.0, 1e3, 1e6)

# The grid includes the cells where polyagamma 2.0.2's default (hybrid) method is wrong
# (non-integer 1 < h < 8 at small |z|, h = 1 at |z| >= 200, 8 <= h <= 50 and h > 50 at
# large |z|: biases of 10 to 10^11 standard errors, see sample_pg's notes) and both sides
# of sample_pg's routing threshold |z| = 3; sample_pg routes around those defects, so every
# cell must pass.


def _pg_grid() -> list:
    return [pytest.param(h, z, id=f"h={h:g}-z={z:g}") for h in H_GRID for z in Z_GRID]


def pg_cell_draws(h: float, z: float, n: int = N_DRAWS) -> np.ndarray:
    """The draws of one grid cell (seeded by the cell's position in the grid)."""
    rng = np.random.default_rng([SEED, H_GRID.index(h), Z_GRID.index(z)])
    return sample_pg(rng, h, np.full(n, z))


@pytest.mark.slow
@pytest.mark.parametrize(("h", "z"), _pg_grid())
def test_pg_moments_grid(h: float, z: float) -> None:
    draws = pg_cell_draws(h, z)
    assert draws.shape == (N_DRAWS,)
    assert_moments(draws, float(pg_mean(h, z)), float(pg_var(h, z)), n_sigma=N_SIGMA)


# Former defects that need more draws to be seen: h < 1 (polyagamma's default is biased by
# -0.68% in the mean at h = 0.5, z = 0, i.e. ~ -6 standard errors at n = 10^6) and h > 50
# at moderate |z| (the default's normal approximation has zero variance at z = 100).
@pytest.mark.slow
@pytest.mark.parametrize(
    ("h", "z", "n"),
    [pytest.param(0.5, 0.0, 1_000_000, id="h=0.5-z=0-n=1e6"),
     pytest.param(64.0, 100.0, N_DRAWS, id="h=64-z=100")],
)
def test_pg_moments_former_defects_off_grid(h: float, z: float, n: int) -> None:
    rng = np.random.default_rng([SEED, 3, int(h * 10), int(z)])
    draws = sample_pg(rng, h, np.full(n, z))
    assert_moments(draws, float(pg_mean(h, z)), float(pg_var(h, z)), n_sigma=N_SIGMA)


# --- closed-form moments -------------------------------------------------------------------

_K_TERMS = 10**6
_HALF_K = np.arange(1, _K_TERMS + 1) - 0.5


def _pg_moments_by_series(h: float, z: float) -> tuple[float, float]:
    """Mean and variance of PG(h, z) from the gamma-convolution representation.

    PG(h, z) = 1/(2 pi^2) sum_k g_k / d_k with d_k = (k - 1/2)^2 + a^2, a = z / (2 pi),
    g_k ~ Gamma(h, 1), so mean = h/(2 pi^2) sum 1/d_k and var = h/(4 pi^4) sum 1/d_k^2.
    The sums run over 10^6 terms plus the tails, by the midpoint rule, as integrals from
    K to infinity: int dx/(x^2 + a^2) = arctan(a/K)/a and
    int dx/(x^2 + a^2)^2 = arctan(a/K)/(2a^3) - K/(2a^2 (K^2 + a^2))
    (its a -> 0 series 1/(3K^3) - 2a^2/(5K^5) when a/K is small); the neglected
    midpoint-rule error is O(1/K^3) relative.
    """
    a = abs(z) / (2.0 * np.pi)
    a2 = a * a
    d = _HALF_K * _HALF_K + a2
    k = float(_K_TERMS)
    s1 = float(np.sum(1.0 / d))
    s2 = float(np.sum(1.0 / (d * d)))
    if a == 0.0:
        t1, t2 = 1.0 / k, 1.0 / (3.0 * k**3)
    else:
        t1 = np.arctan(a / k) / a
        if a / k < 1e-2:
            t2 = 1.0 / (3.0 * k**3) - 2.0 * a2 / (5.0 * k**5)
        else:
            t2 = np.arctan(a / k) / (2.0 * a**3) - k / (2.0 * a2 * (k * k + a2))
    return h / (2.0 * np.pi**2) * (s1 + t1), h / (4.0 * np.pi**4) * (s2 + t2)


def _pg_laplace(h: float, z: float, t: float) -> float:
    """E[exp(-t omega)] = cosh^h(z/2) / cosh^h(sqrt(z^2/4 + t/2)) for omega ~ PG(h, z)."""
    return float(np.exp(h * (np.log(np.cosh(z / 2)) - np.log(np.cosh(np.sqrt(z * z / 4
                                                                          + t / 2))))))


@pytest.mark.parametrize("h", [1.0, 3.7, 4.0, 256.0])
@pytest.mark.parametrize("z", [0.5, 6.0, -40.0])
def test_pg_laplace_transform(h: float, z: float) -> None:
    """Beyond two moments: the sample mean of exp(-t omega) matches the closed-form
    Laplace transform at t = s / E[omega], s in {0.5, 2, 5} (bulk and left tail; larger s
    make the estimator too heavy-tailed for a CLT), within 5 standard errors, on each of
    sample_pg's routes (h = 1 devroye at |z| >= 3, alternate, devroye + series, saddle
    for h >= 32 at |z| < 3).  The
    polyagamma default fails it at h = 3.7, z = 0.5 (z-score -6.4)."""
    x = sample_pg(np.random.default_rng(SEED), np.full(200_000, h), np.full(200_000, z))
    for s in (0.5, 2.0, 5.0):
        t = s / float(pg_mean(h, z))
        e = np.exp(-t * x)
        zscore = (e.mean() - _pg_laplace(h, z, t)) / (e.std() / np.sqrt(e.size))
        assert abs(zscore) < N_SIGMA, (h, z, t, zscore)


@pytest.mark.parametrize("z", [0.0, 1e-6, 1.9999e-4, 2.0001e-4, 0.5, 0.9999999, 1.0, -7.0,
                               50.0, 1e3, 1e6])
@pytest.mark.parametrize("h", [1.0, 3.7])
def test_pg_closed_forms_match_series(h: float, z: float) -> None:
    mean, var = _pg_moments_by_series(h, z)
    assert pg_mean(h, z) == pytest.approx(mean, rel=1e-12)
    assert pg_var(h, z) == pytest.approx(var, rel=1e-12)


def test_pg_moment_limits_and_asymptotes() -> None:
    h = 2.5
    assert pg_mean(h, 0.0) == h / 4
    assert pg_var(h, 0.0) == pytest.approx(h / 24, rel=1e-15)
    for z in (1e4, 1e6, -1e6, 1e100):
        assert pg_mean(h, z) == pytest.approx(h / (2 * abs(z)), rel=1e-15)
        # Var ~ h / (2|z|^3): (sinh z - z)/cosh^2(z/2) -> 2 for large |z|
        assert pg_var(h, z) == pytest.approx(h / (2 * abs(z) ** 3), rel=1e-12)
    assert pg_var(h, 1e300) == 0.0  # underflows without overflow warnings or NaN


def test_pg_moments_vectorised_and_even() -> None:
    h = np.array([[0.5], [3.0]])
    z = np.array([-30.0, -1.0, 0.0, 1e-3, 1.0, 30.0])
    mean, var = pg_mean(h, z), pg_var(h, z)
    assert mean.shape == var.shape == (2, 6)
    for i in range(2):
        for j in range(6):
            assert mean[i, j] == pg_mean(float(h[i, 0]), float(z[j]))
            assert var[i, j] == pg_var(float(h[i, 0]), float(z[j]))
    np.testing.assert_array_equal(pg_mean(h, z), pg_mean(h, -z))
    np.testing.assert_array_equal(pg_var(h, z), pg_var(h, -z))


# --- sampler interface ----------------------------------------------------------------------

def test_sample_pg_same_seed_same_draws() -> None:
    h = np.array([0.7, 1.0, 2.0, 4.5, 30.0])
    z = np.array([[0.0], [-3.0], [12.0]])
    a = sample_pg(np.random.default_rng(7), h, z)
    b = sample_pg(np.random.default_rng(7), h, z)
    c = sample_pg(7, h, z)
    assert a.shape == (3, 5)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, sample_pg(np.random.default_rng(8), h, z))
    assert np.all(a > 0)


def test_sample_pg_generator_stream_continues() -> None:
    rng = np.random.default_rng(3)
    first = sample_pg(rng, 1.0, np.zeros(4))
    second = sample_pg(rng, 1.0, np.zeros(4))
    assert not np.array_equal(first, second)


def test_sample_pg_out_and_shapes() -> None:
    out = np.empty((2, 3))
    res = sample_pg(np.random.default_rng(0), 1.0, np.zeros((2, 3)), out=out)
    assert res is out and np.all(out > 0)
    scalar = sample_pg(np.random.default_rng(0), 1.0, 0.0)
    assert scalar.shape == () and scalar > 0
    assert sample_pg(np.random.default_rng(0), 1.0, np.zeros((0, 3))).shape == (0, 3)


@pytest.mark.parametrize(
    ("h", "z", "pattern"),
    [
        (0.0, 1.0, r"h must be finite and > 0, got h = 0\.0"),
        (np.array([1.0, -2.0]), 1.0, r"h must be finite and > 0, got h\[1\] = -2\.0"),
        (np.array([[1.0, np.nan]]), 1.0, r"h must be finite and > 0, got h\[0, 1\] = nan"),
        (np.inf, 1.0, r"h must be finite and > 0, got h = inf"),
        (1.0, np.array([0.0, 1.0, np.nan]), r"z must be finite, got z\[2\] = nan"),
        (1.0, -np.inf, r"z must be finite, got z = -inf"),
        (np.ones(3), np.zeros(4), r"h with shape \(3,\) and z with shape \(4,\) do not broadcast"),
        ("a", 1.0, r"h must be a real number"),
    ],
)
def test_sample_pg_rejects_bad_input(h, z, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern) as info:
        sample_pg(np.random.default_rng(0), h, z)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("sample_pg: ")


def test_sample_pg_rejects_bad_out() -> None:
    with pytest.raises(ValueError, match=r"out has shape \(3,\) but h and z broadcast to \(4,\)"):
        sample_pg(np.random.default_rng(0), 1.0, np.zeros(4), out=np.empty(3))
    with pytest.raises(ValueError, match="out must be a float64 numpy array"):
        sample_pg(np.random.default_rng(0), 1.0, np.zeros(4), out=np.empty(4, dtype=np.float32))


def test_pg_moments_reject_bad_input() -> None:
    with pytest.raises(ValueError, match=r"pg_mean: h must be finite and > 0"):
        pg_mean(-1.0, 0.0)
    with pytest.raises(ValueError, match=r"pg_var: z must be finite, got z\[1\] = nan"):
        pg_var(1.0, [0.0, np.nan])


# --- the moment check can fail ----------------------------------------------------------------

def test_assert_moments_rejects_pg_with_perturbed_z() -> None:
    h, z, z_wrong = 1.0, 1.0, 1.2  # z off by 20%
    se = np.sqrt(pg_var(h, z) / N_DRAWS)
    assert abs(pg_mean(h, z_wrong) - pg_mean(h, z)) > 10 * se  # a shift the check must see
    wrong = sample_pg(np.random.default_rng([SEED, 99]), h, np.full(N_DRAWS, z_wrong))
    with pytest.raises(AssertionError, match="moment check failed"):
        assert_moments(wrong, float(pg_mean(h, z)), float(pg_var(h, z)))
    # the same draws pass against their own distribution
    assert_moments(wrong, float(pg_mean(h, z_wrong)), float(pg_var(h, z_wrong)))


def test_assert_moments_rejects_wrong_variance_only() -> None:
    h, z = 1.0, 1.0
    mean, var = float(pg_mean(h, z)), float(pg_var(h, z))
    rng = np.random.default_rng([SEED, 98])
    wrong = mean + np.sqrt(1.1 * var) * rng.standard_normal(N_DRAWS)  # right mean, var +10%
    check = moment_zscores(wrong, mean, var)
    assert abs(check.z_mean) <= N_SIGMA < check.z_var
    with pytest.raises(AssertionError, match="variance"):
        assert_moments(wrong, mean, var)


def test_assert_moments_accepts_exact_sampler_and_reports() -> None:
    rng = np.random.default_rng([SEED, 97])
    draws = 3.0 + 2.0 * rng.standard_normal(N_DRAWS)
    check = assert_moments(draws, 3.0, 4.0)
    assert isinstance(check, MomentCheck)
    assert check.n == N_DRAWS and check.max_abs_z <= N_SIGMA


def test_assert_moments_input_checks() -> None:
    with pytest.raises(AssertionError, match="not finite"):
        assert_moments(np.array([1.0, np.nan, 2.0]), 1.0, 1.0)
    with pytest.raises(ValueError, match="at least 2 draws"):
        assert_moments(np.array([1.0]), 1.0, 1.0)
    with pytest.raises(ValueError, match="var must be finite and > 0"):
        assert_moments(np.array([1.0, 2.0]), 1.0, 0.0)
    with pytest.raises(ValueError, match="n_sigma must be finite and > 0"):
        assert_moments(np.array([1.0, 2.0]), 1.0, 1.0, n_sigma=-1)


# --- inverse Gaussian ---------------------------------------------------------------------------

IG_MEANS = (1e-3, 0.1, 1.0, 10.0, 1e3)
IG_SHAPES = (1.0, 2.5)


@pytest.mark.slow
@pytest.mark.parametrize("shape", IG_SHAPES)
@pytest.mark.parametrize("mean", IG_MEANS)
def test_inverse_gaussian_moments(mean: float, shape: float) -> None:
    rng = np.random.default_rng([SEED, 1, IG_MEANS.index(mean), IG_SHAPES.index(shape)])
    draws = sample_inverse_gaussian(rng, np.full(N_DRAWS, mean), shape)
    assert draws.shape == (N_DRAWS,) and np.all(draws > 0)
    assert_moments(draws, float(ig_mean(mean, shape)), float(ig_var(mean, shape)),
                   n_sigma=N_SIGMA)


def test_inverse_gaussian_moment_formulas() -> None:
    np.testing.assert_array_equal(ig_mean([1.0, 2.0], 3.0), [1.0, 2.0])
    np.testing.assert_allclose(ig_var([1.0, 2.0], [[1.0], [4.0]]), [[1.0, 8.0], [0.25, 2.0]])


def test_inverse_gaussian_reproducible_and_validated() -> None:
    a = sample_inverse_gaussian(np.random.default_rng(5), [0.5, 2.0, 9.0], 1.5)
    b = sample_inverse_gaussian(np.random.default_rng(5), [0.5, 2.0, 9.0], 1.5)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"mean must be finite and > 0, got mean\[1\] = 0\.0"):
        sample_inverse_gaussian(np.random.default_rng(0), [1.0, 0.0], 1.0)
    with pytest.raises(ValueError, match=r"shape must be finite and > 0, got shape = nan"):
        sample_inverse_gaussian(np.random.default_rng(0), 1.0, np.nan)
    with pytest.raises(ValueError, match=r"mean with shape \(2,\) and shape with shape \(3,\)"):
        sample_inverse_gaussian(np.random.default_rng(0), [1.0, 2.0], [1.0, 2.0, 3.0])


# --- hinge-loss augmentation ---------------------------------------------------------------------

HINGE_CELLS = ((0.5, 1.0), (-2.0, 1.0), (0.05, 4.0), (3.0, 0.25), (-0.01, 10.0))


@pytest.mark.slow
@pytest.mark.parametrize(("zeta", "c"), HINGE_CELLS)
def test_hinge_augmentation_moments(zeta: float, c: float) -> None:
    rng = np.random.default_rng([SEED, 2, HINGE_CELLS.index((zeta, c))])
    lam = sample_hinge_augmentation(rng, np.full(N_DRAWS, zeta), c)
    assert np.all(lam > 0)
    mu = 1.0 / (c * abs(zeta))
    # 1/lambda ~ IG(mu, 1): E[1/lambda] = 1/(c|zeta|), Var = mu^3
    assert_moments(1.0 / lam, mu, mu**3, n_sigma=N_SIGMA)
    # lambda = 1/x for x ~ IG(mu, 1): E = 1/mu + 1 = c|zeta| + 1, Var = 1/mu + 2
    assert_moments(lam, 1.0 / mu + 1.0, 1.0 / mu + 2.0, n_sigma=N_SIGMA)


def test_hinge_augmentation_guards_small_zeta() -> None:
    zeta0 = sample_hinge_augmentation(np.random.default_rng(4), np.zeros(1000), 2.0)
    zeta_eps = sample_hinge_augmentation(np.random.default_rng(4), np.full(1000, 1e-8), 2.0)
    np.testing.assert_array_equal(zeta0, zeta_eps)
    assert np.all(np.isfinite(zeta0)) and np.all(zeta0 > 0)
    custom = sample_hinge_augmentation(np.random.default_rng(4), np.zeros(1000), 2.0, eps=1e-8)
    np.testing.assert_array_equal(zeta0, custom)


def test_hinge_augmentation_validation() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"zeta must be finite, got zeta\[0\] = nan"):
        sample_hinge_augmentation(rng, [np.nan, 1.0], 1.0)
    with pytest.raises(ValueError, match=r"c must be finite and > 0, got c = 0\.0"):
        sample_hinge_augmentation(rng, [1.0], 0.0)
    with pytest.raises(ValueError, match=r"eps must be finite and > 0"):
        sample_hinge_augmentation(rng, [1.0], 1.0, eps=0.0)
