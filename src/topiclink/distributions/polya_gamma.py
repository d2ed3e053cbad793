"""Polya-Gamma draws and their closed-form moments.

A Polya-Gamma variable :math:`\\omega \\sim \\mathrm{PG}(h, z)` (Polson, Scott & Windle, 2013)
is the infinite convolution

.. math::

    \\omega \\overset{d}{=} \\frac{1}{2\\pi^2} \\sum_{k=1}^{\\infty}
    \\frac{g_k}{(k - 1/2)^2 + z^2 / (4\\pi^2)}, \\qquad g_k \\sim \\mathrm{Gamma}(h, 1),

with Laplace transform :math:`E[e^{-t\\omega}] = \\cosh^h(z/2) / \\cosh^h(\\sqrt{z^2/4 + t/2})`.
It is the augmentation variable of logistic (sigmoid) likelihoods: conditionally on
:math:`\\omega`, a logit term becomes Gaussian.

Draws go through :func:`polyagamma.random_polyagamma` (methods chosen per element, see
:func:`sample_pg`) and a gamma-series sampler for fractional shapes at small ``|z|``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from polyagamma import random_polyagamma

from topiclink.distributions._checks import as_floats, broadcast, checked, first_bad
from topiclink.random import RandomState, as_generator

__all__ = ["sample_pg", "pg_mean", "pg_var"]

# Below this |z| the variance uses the series of sinh(s) - s (no cancellation).
_VAR_SERIES_CUTOFF = 1.0
# sinh(s) - s = s^3 * sum_k s^(2k-2) / (2k+1)!, k = 1..9; the first omitted term is
# s^18/21! < 2e-20 of the sum at s = 1.
_SINH_SERIES = np.array([1.0 / math.factorial(2 * k + 1) for k in range(1, 10)])
# Below this t = |z|/2 the mean uses tanh(t)/t = 1 - t^2/3 + 2 t^4/15 (error < 1e-25).
_MEAN_SERIES_CUTOFF = 1e-4


def _check_h_z(func: str, h: ArrayLike, z: ArrayLike) -> tuple[NDArray[np.float64],
                                                               NDArray[np.float64]]:
    """Convert ``h`` and ``z`` to float arrays and validate them (one-line ValueErrors)."""
    h_arr, z_arr = as_floats(func, "h", h), as_floats(func, "z", z)
    checked(func, "h", h_arr, count=True)
    checked(func, "z", z_arr, "", count=True)
    broadcast(func, h=h_arr, z=z_arr)
    return h_arr, z_arr


def _scalar_or_array(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return ``x[()]`` for 0-d arrays (a NumPy scalar) and ``x`` otherwise."""
    return x[()] if x.ndim == 0 else x


# Routing (measured with the moment grid of tests/test_distributions.py; polyagamma's
# default "hybrid" choice is biased in several regions, see sample_pg's notes):
#   h == 1, |z| < _DEVROYE_MAX_Z: polyagamma "devroye" (exact there, and the fastest:
#                            ~110 ns against ~160 ns for "alternate"; its draws are wrong
#                            from |z| ~ 180 on, for every h);
#   other h, |z| >= _ALTERNATE_MIN_Z: polyagamma "alternate" (accurate for every h there);
#   h >= _SADDLE_MIN_H, |z| < _ALTERNATE_MIN_Z: polyagamma "saddle" (Windle et al.'s
#                            saddle-point envelope rejection sampler; unbiased here in
#                            2e7 draws at h = 32 and 256: |z-score| <= 1.1 on mean and
#                            variance; ~0.8 us a draw for any h, where "devroye" sums h
#                            unit draws: ~30 us at h = 256, the paper's multiclass c);
#   other h, |z| <  _ALTERNATE_MIN_Z: integer part of h by "devroye" (exact for integer h),
#                            the fractional part by the truncated gamma series +
#                            moment-matched gamma tail (_series_draws).
_ALTERNATE_MIN_Z = 3.0
_DEVROYE_MAX_Z = 100.0
_SADDLE_MIN_H = 32.0
_SERIES_TERMS = 64
_SERIES_CHUNK = 16_384


def _series_draws(gen: np.random.Generator, h: NDArray[np.float64],
                  z: NDArray[np.float64]) -> NDArray[np.float64]:
    """PG(h, z) from the first T terms of the gamma series plus a gamma-distributed tail.

    omega = 1/(2 pi^2) sum_k g_k / d_k, d_k = (k - 1/2)^2 + z^2 / (4 pi^2), g_k ~ Gamma(h).
    Terms k <= T are drawn exactly; the remainder R (mean h/(2pi^2) sum_{k>T} 1/d_k,
    variance h/(4pi^4) sum_{k>T} 1/d_k^2, both from the closed forms minus the partial
    sums) is drawn from the gamma law with the same mean and variance, so the first two
    moments are exact and only higher moments of a ~0.4% remainder (T = 64) are approximated.
    """
    out = np.empty(h.size)
    k = np.arange(1, _SERIES_TERMS + 1) - 0.5
    for lo in range(0, h.size, _SERIES_CHUNK):
        hh = h[lo:lo + _SERIES_CHUNK]
        zz = z[lo:lo + _SERIES_CHUNK]
        d = k[None, :] ** 2 + (zz[:, None] / (2 * np.pi)) ** 2
        g = gen.standard_gamma(np.broadcast_to(hh[:, None], d.shape))
        head = (g / d).sum(axis=1) / (2 * np.pi**2)
        tail_mean = np.maximum(pg_mean(hh, zz) - hh * (1.0 / d).sum(axis=1) / (2 * np.pi**2),
                               1e-300)
        tail_var = np.maximum(pg_var(hh, zz) - hh * (1.0 / d**2).sum(axis=1) / (4 * np.pi**4),
                              1e-300)
        out[lo:lo + hh.size] = head + gen.gamma(tail_mean**2 / tail_var, tail_var / tail_mean)
    return out


def _routed_subset(gen: np.random.Generator, h: NDArray[np.float64],
                   z: NDArray[np.float64], method: str, mask: NDArray[np.bool_],
                   out: NDArray[np.float64]) -> None:
    """out[mask] = polyagamma draws of (h, z)[mask]; no fancy indexing when mask is all."""
    if mask.all():
        out[:] = random_polyagamma(h, z, method=method, random_state=gen)
    elif mask.any():
        out[mask] = random_polyagamma(h[mask], z[mask], method=method, random_state=gen)


def _draw_routed(gen: np.random.Generator, h: NDArray[np.float64],
                 z: NDArray[np.float64]) -> NDArray[np.float64]:
    out = np.zeros(h.size)
    absz = np.abs(z)
    unit = (h == 1.0) & (absz < _DEVROYE_MAX_Z)
    _routed_subset(gen, h, z, "devroye", unit, out)
    far = ~unit & (absz >= _ALTERNATE_MIN_Z)
    _routed_subset(gen, h, z, "alternate", far, out)
    large = ~(unit | far) & (h >= _SADDLE_MIN_H)
    _routed_subset(gen, h, z, "saddle", large, out)
    near = ~(unit | far | large)
    if near.any():
        hn, zn = h[near], z[near]
        whole = np.floor(hn)
        frac = hn - whole
        part = np.zeros(hn.size)
        has_whole = whole >= 1
        if has_whole.any():
            part[has_whole] = random_polyagamma(whole[has_whole], zn[has_whole],
                                                method="devroye", random_state=gen)
        has_frac = frac > 0
        if has_frac.any():
            part[has_frac] += _series_draws(gen, frac[has_frac], zn[has_frac])
        out[near] = part
    return out


def sample_pg(rng: RandomState, h: ArrayLike, z: ArrayLike,
              out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Draw :math:`\\omega \\sim \\mathrm{PG}(h, z)` elementwise over broadcast ``h`` and ``z``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (anything :func:`topiclink.random.as_generator` accepts; a
        Generator is used as is, so repeated calls continue its stream).
    h : array_like of float
        Shape parameters, finite and > 0 (any positive real, not only integers).
    z : array_like of float
        Tilting parameters, finite (the distribution is even in ``z``).
    out : ndarray of float64, optional
        Array of the broadcast shape of ``h`` and ``z`` that receives the draws.

    Returns
    -------
    ndarray of float64, shape ``np.broadcast_shapes(h.shape, z.shape)``
        One independent draw per element (``out`` itself when given; a 0-d array for
        scalar ``h`` and ``z``).

    Raises
    ------
    ValueError
        If an ``h`` is not finite and > 0, a ``z`` is not finite, the shapes do not
        broadcast or ``out`` has the wrong shape or dtype; the message names the index.
    RuntimeError
        If ``polyagamma`` returns a non-finite draw for valid parameters.

    Notes
    -----
    polyagamma 2.0.2's default (hybrid) method is not exact everywhere (measured with
    10^6-10^7 draws per cell): too large a mean and variance for non-integer ``1 < h < 8``
    at small ``|z|`` (+0.7% / +5% at ``h = 3.7, z = 0``; upstream issue #133), too small
    for ``h < 1`` (-0.7% / -1.2% at ``h = 0.5``), wrong draws for ``h = 1, |z| >= 200``,
    near-constant draws for ``8 <= h <= 50`` at large ``|z|``, and a normal approximation
    for ``h > 50`` with zero variance from ``|z| ~ 40`` and NaN from ``|z| ~ 710``.
    So draws are routed: ``h = 1, |z| < 100`` -> ``"devroye"`` (exact there and fastest;
    wrong from ``|z| ~ 180`` for every ``h``); otherwise ``|z| >= 3`` -> polyagamma's
    ``"alternate"`` method; ``|z| < 3`` and ``h >= 32`` -> ``"saddle"`` (its cost does not
    grow with ``h``; biased for small ``h``, not measurably from ``h = 16`` on); ``|z| < 3``
    and smaller ``h``
    -> ``"devroye"`` (exact for integer ``h``) for the integer part of ``h`` plus the
    truncated gamma series with a moment-matched tail for the fractional part (PG is
    infinitely divisible: PG(a, z) + PG(b, z) = PG(a + b, z) in law).

    """
    gen = as_generator(rng)
    h_arr, z_arr = _check_h_z("sample_pg", h, z)
    shape = np.broadcast_shapes(h_arr.shape, z_arr.shape)
    if out is not None:
        if not isinstance(out, np.ndarray) or out.dtype != np.float64:
            raise ValueError("sample_pg: out must be a float64 numpy array")
        if out.shape != shape:
            raise ValueError(
                f"sample_pg: out has shape {out.shape} but h and z broadcast to {shape}"
            )
    size = math.prod(shape)
    if size == 0:
        return out if out is not None else np.empty(shape, dtype=np.float64)
    h_flat = np.ascontiguousarray(np.broadcast_to(h_arr, shape)).ravel()
    z_flat = np.ascontiguousarray(np.broadcast_to(z_arr, shape)).ravel()
    draws = _draw_routed(gen, h_flat, z_flat).reshape(shape)
    bad = ~np.isfinite(draws)
    if bad.any():
        first = int(np.argmax(bad.ravel()))
        at = first_bad(bad)
        raise RuntimeError(
            f"sample_pg: polyagamma returned a non-finite draw at index {at or '()'} "
            f"(h = {float(h_flat[first])!r}, z = {float(z_flat[first])!r}; "
            f"{int(bad.sum())} of {size} draws)"
        )
    if out is None:
        return draws
    out[...] = draws
    return out


def pg_mean(h: ArrayLike, z: ArrayLike) -> NDArray[np.float64]:
    """Mean of :math:`\\mathrm{PG}(h, z)`.

    .. math::

        E[\\omega] = \\frac{h}{2z} \\tanh\\left(\\frac{z}{2}\\right),
        \\qquad \\lim_{z \\to 0} E[\\omega] = \\frac{h}{4}.

    Computed as :math:`(h/4)\\,\\tanh(t)/t` with :math:`t = |z|/2`, using
    :math:`\\tanh(t)/t = 1 - t^2/3 + 2t^4/15` for :math:`t < 10^{-4}`.

    Parameters
    ----------
    h : array_like of float
        Shape parameters, finite and > 0.
    z : array_like of float
        Tilting parameters, finite.

    Returns
    -------
    ndarray of float64, shape ``np.broadcast_shapes(h.shape, z.shape)``
        The means (a NumPy scalar for scalar inputs).
    """
    h_arr, z_arr = _check_h_z("pg_mean", h, z)
    t = 0.5 * np.abs(z_arr)
    small = t < _MEAN_SERIES_CUTOFF
    t_safe = np.where(small, 1.0, t)
    t_small = np.where(small, t, 0.0)
    t2 = t_small * t_small
    ratio = np.where(small, 1.0 - t2 / 3.0 + 2.0 * t2 * t2 / 15.0, np.tanh(t_safe) / t_safe)
    return _scalar_or_array(np.asarray(0.25 * h_arr * ratio, dtype=np.float64))


def pg_var(h: ArrayLike, z: ArrayLike) -> NDArray[np.float64]:
    """Variance of :math:`\\mathrm{PG}(h, z)`.

    .. math::

        \\mathrm{Var}[\\omega] = \\frac{h}{4 z^3}\\,
        \\frac{\\sinh z - z}{\\cosh^2(z/2)},
        \\qquad \\lim_{z \\to 0} \\mathrm{Var}[\\omega] = \\frac{h}{24},
        \\qquad \\mathrm{Var}[\\omega] \\sim \\frac{h}{2|z|^3} \\; (|z| \\to \\infty).

    With :math:`s = |z|` (the variance is even in ``z``):

    * :math:`s < 1`: :math:`\\sinh s - s = s^3 \\sum_{k \\ge 1} s^{2k-2}/(2k+1)!`, so
      :math:`\\mathrm{Var} = h/(4\\cosh^2(s/2)) \\sum_{k=1}^{9} s^{2k-2}/(2k+1)!`
      (no cancellation, exact limit ``h/24`` at 0);
    * :math:`s \\ge 1`: :math:`(\\sinh s - s)/\\cosh^2(s/2) = 2\\tanh(s/2) - s\\,
      \\mathrm{sech}^2(s/2)`; with :math:`u = e^{-s}` this is
      :math:`2(1 - u^2 - 2su)/(1+u)^2`, hence
      :math:`\\mathrm{Var} = h(1 - u^2 - 2su) / (2 s^3 (1+u)^2)`, which neither
      overflows nor loses accuracy for large ``s`` (``u`` underflows to 0).

    Parameters
    ----------
    h : array_like of float
        Shape parameters, finite and > 0.
    z : array_like of float
        Tilting parameters, finite.

    Returns
    -------
    ndarray of float64, shape ``np.broadcast_shapes(h.shape, z.shape)``
        The variances (a NumPy scalar for scalar inputs).
    """
    h_arr, z_arr = _check_h_z("pg_var", h, z)
    s = np.abs(z_arr)
    small = s < _VAR_SERIES_CUTOFF
    # series branch (evaluated everywhere on a clipped argument, selected below)
    s_small = np.where(small, s, 0.0)
    s2 = s_small * s_small
    series = np.zeros_like(s_small)
    for coef in _SINH_SERIES[::-1]:  # Horner in s^2
        series = series * s2 + coef
    cosh_half = np.cosh(0.5 * s_small)
    var_small = 0.25 * series / (cosh_half * cosh_half)
    # large branch on an argument clipped to >= 1
    s_big = np.where(small, 1.0, s)
    u = np.exp(-s_big)
    one_u = 1.0 + u
    var_big = ((1.0 - u * u - 2.0 * s_big * u) / (one_u * one_u)) / (2.0 * s_big) / s_big / s_big
    unit = np.where(small, var_small, var_big)
    return _scalar_or_array(np.asarray(h_arr * unit, dtype=np.float64))
