"""Tests of the count draws of BPBFM: Poisson, zero-truncated Poisson (ZTP) and CRT.

Moment tests draw ``N_DRAWS`` samples per cell and require the sample mean and the unbiased
sample variance to lie within ``N_SIGMA`` standard errors of the closed forms. Unlike
:func:`topiclink.diagnostics.moments.assert_moments` the standard errors here are the exact
ones, ``sqrt(var / n)`` and ``sqrt((mu4 - var^2) / n)`` with the true fourth central moment
``mu4``, so cells where almost every draw is the same value (ZTP at tiny ``lam``, CRT at tiny
``r``) are handled without a degenerate sample ``m4``. Cells where fewer than
``MIN_CLT_EVENTS`` draws are expected to differ from the mode are outside the CLT's reach:
there the number of such draws is tested exactly against its binomial law.

Why 5 sigma: a two-sided 5-sigma excursion has probability 5.7e-7; ~30 cells x 2 statistics
plus the chi-square tests (each at p >= 1e-6) keep the chance of a spurious failure below
1e-4, while a bias of 5 standard errors (e.g. 0.5% of the mean of CRT(100, 0.1)) is caught;
``test_wrong_crt_formula_would_be_detected`` shows the classic off-by-one formula sits
hundreds of standard errors away.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln, polygamma

from topiclink.distributions import (
    crt_mean,
    crt_variance,
    sample_crt,
    sample_zero_truncated_poisson,
    ztp_mean,
    ztp_variance,
)
from topiclink.kernels.counts import (
    crt_draw,
    crt_draws,
    lgamma_ratio,
    poisson_draw,
    poisson_draws,
    zero_truncated_poisson_draw,
    zero_truncated_poisson_draws,
)
from topiclink.random import kernel_state

SEED = 20240917
N_DRAWS = 200_000
N_SIGMA = 5.0
MIN_CLT_EVENTS = 500
MIN_PVALUE = 1e-6

ZTP_GRID = (1e-8, 1e-4, 0.01, 0.3, 1.0, 2.5, 9.9, 10.0, 30.0, 1e3, 1e6)
CRT_GRID = ((0, 1.0), (1, 0.5), (5, 0.01), (10, 1.0), (100, 0.1), (1000, 5.0), (10**4, 1.0),
            (10**6, 0.3), (10**8, 2.0))
POISSON_GRID = (0.1, 3.0, 9.9, 10.0, 50.0, 1e4)


def _state(*key: int) -> np.ndarray:
    """A fresh xoshiro256** stream for one test cell."""
    return kernel_state(np.random.default_rng([SEED, *key]), 1)[0]


def _gen(*key: int) -> np.random.Generator:
    """A fresh Generator for one API test cell."""
    return np.random.default_rng([SEED, *key])


def _zscores(draws: np.ndarray, mean: float, var: float, mu4: float) -> tuple[float, float]:
    """z of the sample mean and of the unbiased sample variance, with exact standard errors."""
    x = draws.astype(np.float64)
    n = x.size
    z_mean = (x.mean() - mean) / math.sqrt(var / n)
    z_var = (x.var(ddof=1) - var) / math.sqrt(max(mu4 - var * var, 1e-300) / n)
    return float(z_mean), float(z_var)


def _assert_moments(draws: np.ndarray, mean: float, var: float, mu4: float) -> None:
    z_mean, z_var = _zscores(draws, mean, var, mu4)
    assert abs(z_mean) <= N_SIGMA and abs(z_var) <= N_SIGMA, (
        f"z_mean = {z_mean:.2f}, z_var = {z_var:.2f} (sample mean {draws.mean()!r} vs "
        f"{mean!r}, sample var {draws.var(ddof=1)!r} vs {var!r})")


def _assert_binomial_count(count: int, n: int, q: float) -> None:
    """``count`` is a plausible Binomial(n, q) draw (two-sided p >= MIN_PVALUE)."""
    lower = stats.binom.cdf(count, n, q)
    upper = stats.binom.sf(count - 1, n, q)
    assert min(lower, upper) >= MIN_PVALUE / 2, (count, n, q, n * q)


# --- exact pmfs and central fourth moments ---------------------------------------------------

def _ztp_pmf(k: np.ndarray, lam: float) -> np.ndarray:
    return stats.poisson.pmf(k, lam) / stats.poisson.sf(0, lam)


def _ztp_mu4(lam: float) -> float:
    if lam > 50.0:                     # P(0) < 2e-22: the Poisson value lam + 3 lam^2
        return lam + 3.0 * lam * lam
    k = np.arange(1, int(lam + 40.0 * math.sqrt(lam) + 60.0))
    m = float(ztp_mean(lam))
    return float(np.sum(_ztp_pmf(k, lam) * (k - m) ** 4))


def _crt_power_sums(n: int, r: float) -> list[float]:
    """S_k = sum_{i=2}^n p_i^k, p_i = r/(r + i - 1), k = 1..4, by polygamma."""
    if n < 2 or r == 0.0:
        return [0.0, 0.0, 0.0, 0.0]
    s1 = r * float(polygamma(0, r + n) - polygamma(0, r + 1.0))
    sums = [s1]
    for k in (2, 3, 4):
        sign_fact = (-1.0) ** k / math.factorial(k - 1)
        sums.append(r**k * sign_fact * float(polygamma(k - 1, r + 1.0) - polygamma(k - 1, r + n)))
    return sums


def _crt_mu4(n: int, r: float) -> float:
    """Fourth central moment of a sum of independent Bernoullis: kappa4 + 3 kappa2^2."""
    s1, s2, s3, s4 = _crt_power_sums(n, r)
    kappa2 = s1 - s2
    kappa4 = s1 - 7.0 * s2 + 12.0 * s3 - 6.0 * s4
    return kappa4 + 3.0 * kappa2 * kappa2


def _stirling1_unsigned(n: int) -> list[int]:
    """|s(n, l)| for l = 0..n (exact integers)."""
    row = [1]
    for m in range(n):
        new = [0] * (len(row) + 1)
        for l, c in enumerate(row):
            new[l] += m * c
            new[l + 1] += c
        row = new
    return row


def _crt_pmf_stirling(n: int, r: float) -> np.ndarray:
    log_norm = math.lgamma(r) - math.lgamma(n + r)
    return np.array([math.exp(log_norm + math.log(c) + l * math.log(r)) if c else 0.0
                     for l, c in enumerate(_stirling1_unsigned(n))])


def _crt_pmf_convolution(n: int, r: float, support: int) -> np.ndarray:
    """P(l = 0..support-1) of sum_i Bernoulli(p_i) by dynamic programming (mass beyond the
    support is dropped: it only feeds the last bin of the chi-square test)."""
    pmf = np.zeros(support)
    pmf[0] = 1.0
    for i in range(1, n + 1):
        p = r / (r + i - 1.0)
        pmf[1:] = pmf[1:] * (1.0 - p) + pmf[:-1] * p
        pmf[0] *= 1.0 - p
    return pmf


def _chi2_pvalue(draws: np.ndarray, support: np.ndarray, probs: np.ndarray) -> float:
    """Goodness of fit of integer draws to ``probs`` on ``support`` (outside mass and draws go
    to the end bins; bins are merged until each expects at least 5)."""
    probs = probs.copy()
    probs[-1] += max(1.0 - probs.sum(), 0.0)
    obs = np.bincount(np.clip(draws, support[0], support[-1]) - support[0],
                      minlength=support.size).astype(float)
    exp = probs * draws.size
    groups_obs, groups_exp, acc_o, acc_e = [], [], 0.0, 0.0
    for o, e in zip(obs, exp, strict=True):
        acc_o += o
        acc_e += e
        if acc_e >= 5.0:
            groups_obs.append(acc_o)
            groups_exp.append(acc_e)
            acc_o = acc_e = 0.0
    groups_obs[-1] += acc_o
    groups_exp[-1] += acc_e
    g_obs, g_exp = np.array(groups_obs), np.array(groups_exp)
    g_exp *= g_obs.sum() / g_exp.sum()
    return float(stats.chisquare(g_obs, g_exp).pvalue)


def _two_sample_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Chi-square homogeneity of two integer samples (bins merged to >= 10 pooled draws)."""
    lo, hi = int(min(a.min(), b.min())), int(max(a.max(), b.max()))
    ca = np.bincount(a - lo, minlength=hi - lo + 1)
    cb = np.bincount(b - lo, minlength=hi - lo + 1)
    rows, acc = [], np.zeros(2)
    for x, y in zip(ca, cb, strict=True):
        acc += (x, y)
        if acc.sum() >= 10:
            rows.append(acc.copy())
            acc[:] = 0
    rows[-1] += acc
    return float(stats.chi2_contingency(np.array(rows).T).pvalue)


# --- moments over the grids ------------------------------------------------------------------

@pytest.mark.parametrize("lam", ZTP_GRID, ids=lambda v: f"lam={v:g}")
def test_ztp_moments_grid(lam: float) -> None:
    p_not_one = float(stats.poisson.sf(1, lam) / stats.poisson.sf(0, lam))
    rare = N_DRAWS * p_not_one < MIN_CLT_EVENTS
    n = 10 * N_DRAWS if rare else N_DRAWS          # cheap cells: 10x more draws
    out = np.empty(n, dtype=np.int64)
    zero_truncated_poisson_draws(np.full(n, lam), _state(1, ZTP_GRID.index(lam)), out)
    assert out.min() >= 1
    mean, var = float(ztp_mean(lam)), float(ztp_variance(lam))
    if rare:   # the CLT does not apply to the variance: count the non-ones exactly
        _assert_binomial_count(int(np.count_nonzero(out >= 2)), n, p_not_one)
        p_ge3 = float(stats.poisson.sf(2, lam) / stats.poisson.sf(0, lam))
        _assert_binomial_count(int(np.count_nonzero(out >= 3)), n, p_ge3)
        z_mean, _ = _zscores(out, mean, var, _ztp_mu4(lam))
        assert abs(z_mean) <= N_SIGMA
    else:
        _assert_moments(out, mean, var, _ztp_mu4(lam))


@pytest.mark.parametrize(("n", "r"), CRT_GRID, ids=lambda v: f"{v:g}")
def test_crt_moments_grid(n: int, r: float) -> None:
    out = np.empty(N_DRAWS, dtype=np.int64)
    crt_draws(np.full(N_DRAWS, n, dtype=np.int64), np.full(N_DRAWS, r),
              _state(2, CRT_GRID.index((n, r))), out)
    mean, var = float(crt_mean(n, r)), float(crt_variance(n, r))
    if n <= 1:                                      # degenerate: l = n
        assert var == 0.0 and mean == n
        assert np.all(out == n)
        return
    assert out.min() >= 1 and out.max() <= n
    assert N_DRAWS * (mean - 1.0) >= MIN_CLT_EVENTS  # every other cell is in the CLT regime
    _assert_moments(out, mean, var, _crt_mu4(n, r))


@pytest.mark.parametrize("lam", POISSON_GRID, ids=lambda v: f"lam={v:g}")
def test_poisson_moments_grid(lam: float) -> None:
    out = np.empty(N_DRAWS, dtype=np.int64)
    poisson_draws(np.full(N_DRAWS, lam), _state(3, POISSON_GRID.index(lam)), out)
    assert out.min() >= 0
    _assert_moments(out, lam, lam, lam + 3.0 * lam * lam)


# --- whole pmfs --------------------------------------------------------------------------------

@pytest.mark.parametrize("lam", [0.7, 12.0])
def test_ztp_pmf_chi_square(lam: float) -> None:
    draws = sample_zero_truncated_poisson(lam, random_state=_gen(4, int(lam * 10)),
                                          size=N_DRAWS)
    support = np.arange(1, int(lam + 12 * math.sqrt(lam) + 12))
    assert _chi2_pvalue(draws, support, _ztp_pmf(support, lam)) >= MIN_PVALUE


@pytest.mark.parametrize("lam", [3.0, 9.99, 10.0, 50.0])
def test_poisson_pmf_chi_square(lam: float) -> None:
    """Both methods (inversion below 10, PTRS from 10) against the whole pmf."""
    out = np.empty(N_DRAWS, dtype=np.int64)
    poisson_draws(np.full(N_DRAWS, lam), _state(5, int(lam * 100)), out)
    support = np.arange(0, int(lam + 12 * math.sqrt(lam) + 12))
    assert _chi2_pvalue(out, support, stats.poisson.pmf(support, lam)) >= MIN_PVALUE


def test_crt_pmf_stirling_chi_square() -> None:
    n, r = 6, 1.3
    pmf = _crt_pmf_stirling(n, r)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(pmf, _crt_pmf_convolution(n, r, n + 1), rtol=1e-12, atol=1e-15)
    draws = sample_crt(n, r, random_state=_gen(6), size=N_DRAWS)
    assert _chi2_pvalue(draws, np.arange(n + 1), pmf) >= MIN_PVALUE


@pytest.mark.parametrize(("n", "r"), [(5000, 0.5), (20_000, 3.0)])
def test_crt_pmf_skipping_regime_chi_square(n: int, r: float) -> None:
    """Past the first 32 (r + 1) customers the kernel skips to the next table; its whole pmf
    still matches the exact Poisson-binomial pmf (dynamic programming over n terms)."""
    support = 80
    pmf = _crt_pmf_convolution(n, r, support)
    assert pmf.sum() > 1.0 - 1e-12
    draws = sample_crt(n, r, random_state=_gen(7, n), size=N_DRAWS)
    assert _chi2_pvalue(draws, np.arange(support), pmf) >= MIN_PVALUE


# --- API, reproducibility, agreement -------------------------------------------------------------

def test_kernel_and_api_agree_in_distribution() -> None:
    api = sample_crt(np.full(N_DRAWS // 2, 300), 0.7, random_state=_gen(8))
    kern = np.empty(N_DRAWS // 2, dtype=np.int64)
    crt_draws(np.full(kern.size, 300, dtype=np.int64), np.full(kern.size, 0.7), _state(9), kern)
    assert _two_sample_pvalue(api, kern) >= MIN_PVALUE
    api = sample_zero_truncated_poisson(np.full(N_DRAWS // 2, 2.5), random_state=_gen(10))
    kern = np.empty(N_DRAWS // 2, dtype=np.int64)
    zero_truncated_poisson_draws(np.full(kern.size, 2.5), _state(11), kern)
    assert _two_sample_pvalue(api, kern) >= MIN_PVALUE


def test_api_uses_the_kernel_stream() -> None:
    """The API draws are exactly the kernel's on the stream kernel_state(Generator) seeds."""
    lam = np.array([1e-8, 0.5, 9.9, 10.0, 1e6])
    expected = np.empty(lam.size, dtype=np.int64)
    zero_truncated_poisson_draws(lam, kernel_state(np.random.default_rng(5), 1)[0], expected)
    np.testing.assert_array_equal(sample_zero_truncated_poisson(lam, random_state=5), expected)
    n = np.array([0, 1, 7, 10**6], dtype=np.int64)
    r = np.array([1.0, 0.2, 3.0, 0.3])
    expected = np.empty(n.size, dtype=np.int64)
    crt_draws(n, r, kernel_state(np.random.default_rng(6), 1)[0], expected)
    np.testing.assert_array_equal(sample_crt(n, r, random_state=6), expected)


def test_same_state_same_draws() -> None:
    s = _state(12)
    a, b = s.copy(), s.copy()
    for draw_a, draw_b in [(poisson_draw(3.0, a), poisson_draw(3.0, b)),
                           (poisson_draw(1e4, a), poisson_draw(1e4, b)),
                           (zero_truncated_poisson_draw(0.2, a),
                            zero_truncated_poisson_draw(0.2, b)),
                           (crt_draw(10**7, 1.5, a), crt_draw(10**7, 1.5, b))]:
        assert draw_a == draw_b
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, s)                # the state advanced in place
    x = sample_crt(np.arange(50), 1.1, random_state=3)
    np.testing.assert_array_equal(x, sample_crt(np.arange(50), 1.1, random_state=3))
    g1, g2 = np.random.default_rng(4), np.random.default_rng(4)
    np.testing.assert_array_equal(sample_zero_truncated_poisson(3.0, g1, size=100),
                                  sample_zero_truncated_poisson(3.0, g2, size=100))
    assert not np.array_equal(sample_zero_truncated_poisson(3.0, g1, size=100),
                              sample_zero_truncated_poisson(3.0, 99, size=100))


def test_api_shapes_and_limits() -> None:
    assert isinstance(sample_crt(10, 1.0, random_state=0), np.int64)
    assert isinstance(sample_zero_truncated_poisson(2.0, random_state=0), np.int64)
    assert sample_zero_truncated_poisson([1.0, 2.0], random_state=0, size=(3, 2)).shape == (3, 2)
    assert sample_crt([[5], [6]], [1.0, 2.0, 3.0], random_state=0).shape == (2, 3)
    assert sample_crt(5, 1.0, random_state=0, size=0).shape == (0,)
    assert sample_crt(1e8, 2.0, random_state=0) >= 1            # whole floats are counts
    np.testing.assert_array_equal(sample_crt([0, 1, 7], 0.0, random_state=0), [0, 1, 1])
    np.testing.assert_array_equal(sample_zero_truncated_poisson(np.zeros(4), random_state=0),
                                  np.ones(4))
    s = _state(13)
    assert poisson_draw(0.0, s) == 0 and zero_truncated_poisson_draw(0.0, s) == 1
    assert crt_draw(0, 2.0, s) == 0 and crt_draw(1, 2.0, s) == 1 and crt_draw(9, 0.0, s) == 1
    huge = sample_zero_truncated_poisson(1e12, random_state=0, size=1000)
    assert abs(huge.mean() - 1e12) < 6 * math.sqrt(1e12 / 1000)
    assert sample_crt(10**12, 1.0, random_state=0, size=10).min() >= 1   # skipping is O(r log n)


@pytest.mark.parametrize(
    ("call", "message"),
    [(lambda: sample_zero_truncated_poisson(-1.0), "lam = -1.0"),
     (lambda: sample_zero_truncated_poisson([1.0, np.nan]), "lam[1] = nan"),
     (lambda: sample_zero_truncated_poisson(np.inf), "lam = inf"),
     (lambda: sample_crt(-3, 1.0), "n = -3"),
     (lambda: sample_crt(2.5, 1.0), "n = 2.5"),
     (lambda: sample_crt(np.nan, 1.0), "n = nan"),
     (lambda: sample_crt(4, -0.5), "r = -0.5"),
     (lambda: sample_crt(4, [1.0, np.nan]), "r[1] = nan"),
     (lambda: sample_crt([1, 2], [1.0, 2.0, 3.0]), "do not broadcast"),
     (lambda: sample_zero_truncated_poisson([1.0, 2.0], size=3), "size"),
     (lambda: ztp_mean(-1e-3), "lam = -0.001"),
     (lambda: ztp_variance(np.nan), "lam = nan"),
     (lambda: crt_mean(-1, 1.0), "n = -1"),
     (lambda: crt_variance(3, -2.0), "r = -2.0")],
)
def test_invalid_arguments_raise_one_line(call, message: str) -> None:
    with pytest.raises(ValueError) as info:
        call()
    text = str(info.value)
    assert message in text and "\n" not in text


# --- closed forms ------------------------------------------------------------------------------

@pytest.mark.parametrize("lam", [1e-8, 0.05, 0.0999, 0.1, 0.7, 12.0, 40.0])
def test_ztp_closed_forms_match_pmf_sums(lam: float) -> None:
    k = np.arange(1, 200)
    p = _ztp_pmf(k, lam)
    m = float(np.sum(k * p))
    assert float(ztp_mean(lam)) == pytest.approx(m, rel=1e-13)
    # variance from the pmf around the exact mean: sum p (k - m)^2 (no cancellation)
    assert float(ztp_variance(lam)) == pytest.approx(float(np.sum(p * (k - m) ** 2)), rel=1e-10)
    assert float(ztp_mean(0.0)) == 1.0 and float(ztp_variance(0.0)) == 0.0


@pytest.mark.parametrize(("n", "r"), [(1, 0.5), (2, 1e-9), (5, 0.01), (37, 2.5), (400, 30.0)])
def test_crt_closed_forms_match_direct_sums(n: int, r: float) -> None:
    p = r / (r + np.arange(n, dtype=float))
    assert float(crt_mean(n, r)) == pytest.approx(math.fsum(p), rel=1e-12)
    assert float(crt_variance(n, r)) == pytest.approx(math.fsum(p * (1 - p)), rel=1e-9, abs=1e-300)
    # the textbook forms r (psi(r+n) - psi(r)) and mean - r^2 (psi1(r) - psi1(r+n))
    textbook = r * float(polygamma(0, r + n) - polygamma(0, r))
    assert float(crt_mean(n, r)) == pytest.approx(textbook, rel=1e-9)


def test_lgamma_ratio_is_accurate() -> None:
    """g(x) = lgamma(x + r) - lgamma(x) against g(1) = lgamma(1 + r) plus the recurrence
    g(x + 1) = g(x) + log1p(r / x) summed exactly (a plain lgamma difference loses digits)."""
    for r in (0.01, 0.3, 2.0, 50.0, 1000.0):
        g1 = float(gammaln(1.0 + r))
        for x in (1, 2, 5, 15, 16, 17, 100, 1000, 10**6):
            exact = g1 + math.fsum(np.log1p(r / np.arange(1.0, x)))
            assert lgamma_ratio(float(x), r) == pytest.approx(exact, rel=1e-12)


# --- the tests have power -----------------------------------------------------------------------

@pytest.mark.parametrize(("n", "r"), [c for c in CRT_GRID if c[0] >= 2], ids=lambda v: f"{v:g}")
def test_wrong_crt_formula_would_be_detected(n: int, r: float) -> None:
    """The off-by-one CRT(n, r) = sum_{i=1}^n Bernoulli(r / (r + i)) has mean
    r (psi(r + n + 1) - psi(r + 1)), n / (r + n) below the truth: every cell of the grid would
    flag it by more than 10 N_SIGMA standard errors of the mean."""
    wrong_mean = r * float(polygamma(0, r + n + 1.0) - polygamma(0, r + 1.0))
    se = math.sqrt(float(crt_variance(n, r)) / N_DRAWS)
    assert abs(wrong_mean - float(crt_mean(n, r))) / se > 10 * N_SIGMA


def test_wrong_crt_sampler_fails_the_moment_test() -> None:
    """The same assertion rejects an actual off-by-one sampler (simulated with NumPy)."""
    n, r = 100, 0.1
    rng = np.random.default_rng([SEED, 14])
    p_wrong = r / (r + np.arange(1, n + 1))
    draws = np.zeros(N_DRAWS // 4, dtype=np.int64)
    for p in p_wrong:
        draws += rng.random(draws.size) < p
    with pytest.raises(AssertionError, match="z_mean"):
        _assert_moments(draws, float(crt_mean(n, r)), float(crt_variance(n, r)), _crt_mu4(n, r))


@pytest.mark.parametrize("lam", [0.3, 1.0, 2.5, 9.9, 10.0, 30.0, 1e3])
def test_shifted_poisson_would_be_detected(lam: float) -> None:
    """1 + Poisson(lam), a common stand-in for the ZTP, has mean 1 + lam: far outside the
    tolerance on these cells (at lam = 1e6 the two are genuinely indistinguishable with
    2e5 draws, and at lam <= 0.01 both are 1 almost surely)."""
    se = math.sqrt(float(ztp_variance(lam)) / N_DRAWS)
    assert abs(1.0 + lam - float(ztp_mean(lam))) / se > 2 * N_SIGMA
