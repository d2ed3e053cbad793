"""Inverse Gaussian draws and the hinge-loss data augmentation of max-margin models.

The inverse Gaussian (Wald) distribution :math:`\\mathrm{IG}(\\mu, \\lambda)` has density

.. math::

    p(x \\mid \\mu, \\lambda) = \\sqrt{\\frac{\\lambda}{2\\pi x^3}}
    \\exp\\left(-\\frac{\\lambda (x - \\mu)^2}{2 \\mu^2 x}\\right), \\qquad x > 0,

mean :math:`\\mu` and variance :math:`\\mu^3/\\lambda`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from topiclink.distributions._checks import broadcast, checked
from topiclink.random import RandomState, as_generator

__all__ = ["sample_inverse_gaussian", "ig_mean", "ig_var", "sample_hinge_augmentation"]


def _mean_shape(func: str, mean: ArrayLike, shape: ArrayLike
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[int, ...]]:
    """``mean`` and ``shape`` as float64 arrays, finite and > 0, and their broadcast shape."""
    mu = checked(func, "mean", mean)
    lam = checked(func, "shape", shape)
    return mu, lam, broadcast(func, mean=mu, shape=lam)


def sample_inverse_gaussian(rng: RandomState, mean: ArrayLike,
                            shape: ArrayLike = 1.0) -> NDArray[np.float64]:
    """Draw :math:`x \\sim \\mathrm{IG}(\\mu, \\lambda)` elementwise (NumPy's ``wald``).

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (anything :func:`topiclink.random.as_generator` accepts).
    mean : array_like of float
        Means :math:`\\mu`, finite and > 0.
    shape : array_like of float, default 1.0
        Shape parameters :math:`\\lambda`, finite and > 0.

    Returns
    -------
    ndarray of float64, shape ``np.broadcast_shapes(mean.shape, shape.shape)``
        One draw per element (a 0-d array for scalar inputs).
    """
    gen = as_generator(rng)
    mu, lam, _ = _mean_shape("sample_inverse_gaussian", mean, shape)
    return np.asarray(gen.wald(mu, lam), dtype=np.float64)


def ig_mean(mean: ArrayLike, shape: ArrayLike = 1.0) -> NDArray[np.float64]:
    """Mean of :math:`\\mathrm{IG}(\\mu, \\lambda)`: :math:`E[x] = \\mu`.

    Parameters
    ----------
    mean, shape : array_like of float
        :math:`\\mu` and :math:`\\lambda`, finite and > 0, broadcast together.

    Returns
    -------
    ndarray of float64, shape ``np.broadcast_shapes(mean.shape, shape.shape)``
    """
    mu, _, out_shape = _mean_shape("ig_mean", mean, shape)
    return np.broadcast_to(mu, out_shape).copy()


def ig_var(mean: ArrayLike, shape: ArrayLike = 1.0) -> NDArray[np.float64]:
    """Variance of :math:`\\mathrm{IG}(\\mu, \\lambda)`: :math:`\\mathrm{Var}[x] = \\mu^3/\\lambda`.

    Parameters
    ----------
    mean, shape : array_like of float
        :math:`\\mu` and :math:`\\lambda`, finite and > 0, broadcast together.

    Returns
    -------
    ndarray of float64, shape ``np.broadcast_shapes(mean.shape, shape.shape)``
    """
    mu, lam, _ = _mean_shape("ig_var", mean, shape)
    return np.asarray(mu * mu * mu / lam, dtype=np.float64)


def sample_hinge_augmentation(rng: RandomState, zeta: ArrayLike, c: ArrayLike,
                              eps: float = 1e-8) -> NDArray[np.float64]:
    """Draw the augmentation variables :math:`\\lambda` of the hinge-loss pseudo-likelihood.

    Polson & Scott (2011) write the SVM pseudo-likelihood as a location-scale mixture of
    normals,

    .. math::

        e^{-2c\\max(0, \\zeta)} = \\int_0^\\infty \\frac{1}{\\sqrt{2\\pi\\lambda}}
        \\exp\\left(-\\frac{(\\lambda + c\\zeta)^2}{2\\lambda}\\right) d\\lambda,

    whose conditional is :math:`\\lambda^{-1} \\mid \\zeta \\sim
    \\mathrm{IG}\\left(1/(c|\\zeta|),\\ 1\\right)`. This is the augmentation step of Gibbs
    MedLDA (Zhu et al., 2014) and of the Gibbs max-margin relational topic model gMMRTM
    (Chen et al., 2015), with :math:`\\zeta = \\ell - y\\,\\eta^\\top \\bar z` the margin
    violation of a document or link.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of randomness (anything :func:`topiclink.random.as_generator` accepts).
    zeta : array_like of float
        Margin violations :math:`\\zeta`, finite (any sign).
    c : array_like of float
        Regularisation constants :math:`c`, finite and > 0, broadcast with ``zeta``.
    eps : float, default 1e-8
        Lower guard on :math:`|\\zeta|`: the IG mean :math:`1/(c|\\zeta|)` uses
        :math:`\\max(|\\zeta|, \\epsilon)`, so :math:`\\zeta = 0` stays finite.

    Returns
    -------
    ndarray of float64, shape ``np.broadcast_shapes(zeta.shape, c.shape)``
        :math:`\\lambda = 1/x` with :math:`x \\sim \\mathrm{IG}(1/(c\\max(|\\zeta|,
        \\epsilon)), 1)`, so :math:`E[1/\\lambda] = 1/(c|\\zeta|)` and
        :math:`E[\\lambda] = c|\\zeta| + 1`.

    References
    ----------
    N. G. Polson and S. L. Scott (2011). Data augmentation for support vector machines.
    Bayesian Analysis 6(1), 1-23.

    J. Zhu, N. Chen, H. Perkins and B. Zhang (2014). Gibbs max-margin topic models with data
    augmentation. JMLR 15, 1073-1110.

    N. Chen, J. Zhu, F. Xia and B. Zhang (2015). Discriminative relational topic models.
    IEEE TPAMI 37(5), 973-986.
    """
    func = "sample_hinge_augmentation"
    zeta_arr = checked(func, "zeta", zeta, "")
    c_arr = checked(func, "c", c)
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"{func}: eps must be finite and > 0, got {eps!r}")
    broadcast(func, zeta=zeta_arr, c=c_arr)
    abs_zeta = np.maximum(np.abs(zeta_arr), eps)
    inv_lambda = sample_inverse_gaussian(rng, 1.0 / (c_arr * abs_zeta), 1.0)
    return 1.0 / inv_lambda
