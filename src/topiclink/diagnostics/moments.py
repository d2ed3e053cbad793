"""Large-sample checks of a sampler's first two moments against known values.

With :math:`n` i.i.d. draws of a distribution with mean :math:`\\mu` and variance
:math:`\\sigma^2`, the central limit theorem gives

.. math::

    z_{\\text{mean}} = \\frac{\\bar x - \\mu}{\\sqrt{\\sigma^2 / n}}, \\qquad
    z_{\\text{var}} = \\frac{s^2 - \\sigma^2}{\\sqrt{(m_4 - m_2^2)/n}}
    \\;\\approx\\; \\mathcal N(0, 1),

where :math:`s^2` is the unbiased sample variance and :math:`m_2, m_4` the second and fourth
sample central moments (:math:`m_4 - m_2^2` estimates :math:`n\\,\\mathrm{Var}[s^2]`; using
:math:`m_2^2` instead of :math:`s^4` keeps it non-negative, and the two differ by
:math:`O(1/n)`). A sampler passes when both :math:`|z|` are at most ``n_sigma``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["MomentCheck", "moment_zscores", "assert_moments"]


@dataclass(frozen=True)
class MomentCheck:
    """Outcome of a moment check.

    Attributes
    ----------
    n : int
        Number of draws.
    sample_mean, sample_var : float
        :math:`\\bar x` and the unbiased :math:`s^2`.
    z_mean, z_var : float
        Standardised deviations of :math:`\\bar x` from the mean and of :math:`s^2` from the
        variance (see the module docstring).
    """

    n: int
    sample_mean: float
    sample_var: float
    z_mean: float
    z_var: float

    @property
    def max_abs_z(self) -> float:
        """Largest of :math:`|z_{\\text{mean}}|` and :math:`|z_{\\text{var}}|`."""
        return max(abs(self.z_mean), abs(self.z_var))


def moment_zscores(samples: ArrayLike, mean: float, var: float) -> MomentCheck:
    """Standardised deviations of the sample mean and variance from ``mean`` and ``var``.

    Parameters
    ----------
    samples : array_like of float, any shape
        Independent draws (flattened); at least 2 and all finite.
    mean : float
        Expected mean :math:`\\mu`.
    var : float
        Expected variance :math:`\\sigma^2 > 0`.

    Returns
    -------
    MomentCheck
        :math:`z_{\\text{mean}} = (\\bar x - \\mu)/\\sqrt{\\sigma^2/n}` and
        :math:`z_{\\text{var}} = (s^2 - \\sigma^2)/\\sqrt{(m_4 - m_2^2)/n}`.

    Raises
    ------
    ValueError
        If there are fewer than 2 samples or ``mean``/``var`` are invalid.
    AssertionError
        If a sample is not finite (the sampler under test is broken).
    """
    x = np.asarray(samples, dtype=np.float64).ravel()
    n = x.size
    if n < 2:
        raise ValueError(f"moment_zscores: samples must hold at least 2 draws, got {n}")
    if not np.isfinite(mean):
        raise ValueError(f"moment_zscores: mean must be finite, got {mean!r}")
    if not (np.isfinite(var) and var > 0):
        raise ValueError(f"moment_zscores: var must be finite and > 0, got {var!r}")
    n_bad = int(np.count_nonzero(~np.isfinite(x)))
    if n_bad:
        raise AssertionError(f"moment check: {n_bad} of {n} samples are not finite")
    x_bar = float(np.mean(x))
    dev = x - x_bar
    dev2 = dev * dev
    m2 = float(np.mean(dev2))
    m4 = float(np.mean(dev2 * dev2))
    s2 = m2 * n / (n - 1)
    z_mean = (x_bar - mean) / np.sqrt(var / n)
    se_var = np.sqrt(max(m4 - m2 * m2, 0.0) / n)
    if se_var > 0:
        z_var = (s2 - var) / se_var
    else:  # all draws equal: the variance matches only if it is exactly s2
        z_var = 0.0 if s2 == var else float(np.copysign(np.inf, s2 - var))
    return MomentCheck(n=n, sample_mean=x_bar, sample_var=s2, z_mean=float(z_mean),
                       z_var=float(z_var))


def assert_moments(samples: ArrayLike, mean: float, var: float,
                   n_sigma: float = 5.0) -> MomentCheck:
    """Raise AssertionError unless the sample mean and variance match within ``n_sigma``.

    Parameters
    ----------
    samples : array_like of float, any shape
        Independent draws of the sampler under test.
    mean, var : float
        Exact mean and variance of the target distribution.
    n_sigma : float, default 5.0
        Tolerance in standard errors for both :math:`|z_{\\text{mean}}|` and
        :math:`|z_{\\text{var}}|` (see :func:`moment_zscores`).

    Returns
    -------
    MomentCheck
        The z-scores, for reporting how close a passing check came to its tolerance.

    Raises
    ------
    AssertionError
        If :math:`|z_{\\text{mean}}| > n_\\sigma` or :math:`|z_{\\text{var}}| > n_\\sigma`, or a
        sample is not finite.
    """
    if not (np.isfinite(n_sigma) and n_sigma > 0):
        raise ValueError(f"assert_moments: n_sigma must be finite and > 0, got {n_sigma!r}")
    check = moment_zscores(samples, mean, var)
    if abs(check.z_mean) > n_sigma or abs(check.z_var) > n_sigma:
        raise AssertionError(
            f"moment check failed (n={check.n}, tolerance {n_sigma:g} sigma): "
            f"mean {check.sample_mean:.6g} vs {mean:.6g} (z = {check.z_mean:+.2f}), "
            f"variance {check.sample_var:.6g} vs {var:.6g} (z = {check.z_var:+.2f})"
        )
    return check
