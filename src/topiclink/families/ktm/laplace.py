"""The Laplace bridge of kernel topic models: Dirichlet <-> Gaussian in the softmax basis.

KTM (Hennig, Stern, Herbrich & Graepel 2012, Sec. 3.3) links a document's Dirichlet belief
on its topic weights :math:`\\pi_d` with a Gaussian belief on :math:`y_d`, where
:math:`\\pi_d = \\mathrm{softmax}(y_d)`. In the softmax basis the Dirichlet density is
:math:`\\propto \\prod_k \\pi_k(y)^{\\alpha_k}` (no ``-1`` in the exponents), unimodal with
mode :math:`\\pi = \\alpha / \\|\\alpha\\|_1`, and a Laplace approximation there is good even
for :math:`\\alpha_k < 1`. Its mode and the diagonal of its covariance (eqs. 15, 18) are

.. math::

    \\mu_k = \\log\\alpha_k - \\frac{1}{K}\\sum_\\ell \\log\\alpha_\\ell, \\qquad
    \\Sigma_{kk} = \\frac{1}{\\alpha_k}\\Big(1 - \\frac{2}{K}\\Big)
                 + \\frac{1}{K^2}\\sum_\\ell \\frac{1}{\\alpha_\\ell},

and the inverse map, Gaussian -> Dirichlet, is

.. math::

    \\alpha_k = \\frac{1}{\\Sigma_{kk}}\\Big(1 - \\frac{2}{K}
                + \\frac{e^{+\\mu_k}}{K^2}\\sum_\\ell e^{-\\mu_\\ell}\\Big).

**Sign.** The paper's eq. (19) is printed with :math:`e^{-\\mu_k}`. That does not invert
eqs. (15)/(18): with :math:`e^{\\mu_k} = \\alpha_k / G` (:math:`G` the geometric mean of
:math:`\\alpha`) the bracket must reduce to :math:`(1 - 2/K) + \\alpha_k \\Sigma_\\ell
\\alpha_\\ell^{-1} / K^2 = \\alpha_k \\Sigma_{kk}`, which needs :math:`e^{+\\mu_k}`; the
printed sign gives :math:`G^2/\\alpha_k` in place of :math:`\\alpha_k` and is right only for a
symmetric :math:`\\alpha`. We implement :math:`e^{+\\mu_k}` (the design note
``docs/design/ktm.md`` and the later "Laplace bridge" papers agree); the printed form is
kept as :func:`_gaussian_to_dirichlet_printed` for a test that shows it fails the round trip.

**K = 2.** For :math:`K = 2` the term :math:`1 - 2/K` vanishes and the diagonal Gaussian over
:math:`(y_1, y_2)` would treat two perfectly anti-correlated coordinates as independent, so
the paper maps a Beta directly to the real line (the logit, Fig. 3):
:func:`beta_to_logit_gaussian` and :func:`logit_gaussian_to_beta`, with
:math:`\\mu = \\log(a/b)`, :math:`\\sigma^2 = 1/a + 1/b`. (These are eqs. 15/18 at
:math:`K = 2` read in the basis :math:`y_1 - y_2`: :math:`\\mu = 2\\mu_1`,
:math:`\\sigma^2 = 4\\Sigma_{11}`.) The :math:`K \\ge 3` functions refuse :math:`K < 3`.

Also here: :func:`gaussian_divide` and :func:`gaussian_multiply`, the elementwise products
and quotients of Gaussian messages in natural parameters that the EP-style updates of KTM
need (cavity = belief / message, new message = new belief / cavity).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["dirichlet_to_gaussian", "gaussian_to_dirichlet", "beta_to_logit_gaussian",
           "logit_gaussian_to_beta", "gaussian_divide", "gaussian_multiply"]

# exp(x) is finite for x below log(max float64) ~ 709.78; beyond this the bridge goes to logs.
_EXP_SAFE = 700.0


def _index(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]" if idx else ""


def _position(name: str, idx: tuple[int, ...], rows_are_documents: bool) -> str:
    """``alpha[3, 1] (document 3, component 1)`` for the bridge's (D, K) arrays."""
    if not rows_are_documents:
        return f"{name}{_index(idx)}"
    if len(idx) == 1:
        return f"{name}[{idx[0]}] (component {idx[0]})"
    return f"{name}[{idx[0]}, {idx[1]}] (document {idx[0]}, component {idx[1]})"


def _as_float(func: str, name: str, value: ArrayLike) -> NDArray[np.float64]:
    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{func}: {name} must be a real number or array of reals, "
                         f"got dtype {raw.dtype}")
    return raw.astype(np.float64, copy=False)


def _check(func: str, name: str, arr: NDArray[np.float64], positive: bool,
           rows_are_documents: bool) -> None:
    """One-line ValueError naming the first NaN/inf (or, if ``positive``, <= 0) entry."""
    ok = np.isfinite(arr)
    if positive:
        ok &= arr > 0
    if not ok.all():
        idx = tuple(int(i) for i in np.argwhere(~ok)[0])
        need = "finite and > 0" if positive else "finite"
        raise ValueError(f"{func}: {name} must be {need}, got "
                         f"{_position(name, idx, rows_are_documents)} = {float(arr[idx])!r}")


def _check_bridge_shape(func: str, name: str, arr: NDArray[np.float64], k2_hint: str) -> int:
    """The component count K of a (K,) or (D, K) bridge array; K < 3 is refused."""
    if arr.ndim not in (1, 2):
        raise ValueError(f"{func}: {name} must have shape (K,) or (D, K), "
                         f"got shape {arr.shape}")
    K = arr.shape[-1]
    if K < 3:
        raise ValueError(
            f"{func}: {name} has K = {K} components but the softmax-basis bridge needs "
            f"K >= 3; for K = 2 (a Beta) use {k2_hint} (K = 1 is a point mass)")
    return K


def _scalar_or_array(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return x[()] if x.ndim == 0 else x


def _shift_plus_exp_over(c: float, x: NDArray[np.float64], var: NDArray[np.float64]
                         ) -> NDArray[np.float64]:
    """``(c + exp(x)) / var`` for ``c > 0``, without overflow in ``exp(x)`` alone.

    Directly where ``x <= _EXP_SAFE`` (a few ulps), else as
    ``exp(logaddexp(log c, x) - log var)`` (finite whenever the result is).
    """
    with np.errstate(over="ignore"):
        out = np.array((c + np.exp(np.minimum(x, _EXP_SAFE))) / var, dtype=np.float64)
    big = (x > _EXP_SAFE) | ~np.isfinite(out)
    if big.any():
        with np.errstate(over="ignore"):
            out[big] = np.exp(np.logaddexp(math.log(c), x[big]) - np.log(var[big]))
    return out


def dirichlet_to_gaussian(alpha: ArrayLike
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Laplace approximation of Dirichlet(alpha) in the softmax basis (KTM eqs. 15, 18).

    Parameters
    ----------
    alpha : array_like of float, shape (K,) or (D, K)
        Dirichlet parameters, finite and > 0, one row per document; ``K >= 3``.

    Returns
    -------
    mu : ndarray, same shape as ``alpha``
        :math:`\\mu_k = \\log\\alpha_k - \\frac1K \\sum_\\ell \\log\\alpha_\\ell` (eq. 15), the
        mode of the Dirichlet in the softmax basis (each row sums to 0).
    var : ndarray, same shape as ``alpha``
        :math:`\\Sigma_{kk} = \\frac{1}{\\alpha_k}(1 - \\frac2K) + \\frac{1}{K^2}
        \\sum_\\ell \\frac{1}{\\alpha_\\ell}` (eq. 18), the diagonal of the Laplace
        covariance (the off-diagonals, :math:`O(1/K)`, are dropped).

    Raises
    ------
    ValueError
        ``alpha`` not of shape (K,) or (D, K); ``K < 3`` (the message names
        :func:`beta_to_logit_gaussian` for ``K = 2``); an entry NaN, infinite or <= 0, or so
        small that ``1 / alpha`` overflows (the message names document and component).

    See Also
    --------
    gaussian_to_dirichlet : the inverse map.
    beta_to_logit_gaussian : the ``K = 2`` map.
    """
    func = "dirichlet_to_gaussian"
    a = _as_float(func, "alpha", alpha)
    K = _check_bridge_shape(func, "alpha", a, "beta_to_logit_gaussian")
    _check(func, "alpha", a, positive=True, rows_are_documents=True)
    with np.errstate(over="ignore"):
        inv = 1.0 / a
    _check(func, "1/alpha", inv, positive=True, rows_are_documents=True)
    log_a = np.log(a)
    mu = log_a - log_a.mean(axis=-1, keepdims=True)
    var = inv * (1.0 - 2.0 / K) + inv.sum(axis=-1, keepdims=True) / K**2
    _check(func, "var", var, positive=True, rows_are_documents=True)
    return mu, var


def _check_gaussian(func: str, mu: ArrayLike, var: ArrayLike
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    m = _as_float(func, "mu", mu)
    v = _as_float(func, "var", var)
    if m.shape != v.shape:
        raise ValueError(f"{func}: mu has shape {m.shape} but var has shape {v.shape}; "
                         "they must match")
    K = _check_bridge_shape(func, "mu", m, "logit_gaussian_to_beta")
    _check(func, "mu", m, positive=False, rows_are_documents=True)
    _check(func, "var", v, positive=True, rows_are_documents=True)
    return m, v, K


def gaussian_to_dirichlet(mu: ArrayLike, var: ArrayLike) -> NDArray[np.float64]:
    """Dirichlet parameters from a softmax-basis Gaussian (KTM eq. 19, corrected sign).

    .. math::

        \\alpha_k = \\frac{1}{\\Sigma_{kk}}\\Big(1 - \\frac{2}{K}
                    + \\frac{e^{+\\mu_k}}{K^2}\\sum_\\ell e^{-\\mu_\\ell}\\Big)

    The paper prints :math:`e^{-\\mu_k}`; only :math:`e^{+\\mu_k}` inverts
    :func:`dirichlet_to_gaussian` (see the module docstring).

    Parameters
    ----------
    mu : array_like of float, shape (K,) or (D, K)
        Means in the softmax basis, finite; ``K >= 3``. The map depends only on the
        differences :math:`\\mu_k - \\mu_\\ell` within a row, so rows need not sum to 0.
    var : array_like of float, same shape as ``mu``
        Marginal variances :math:`\\Sigma_{kk}`, finite and > 0.

    Returns
    -------
    ndarray, same shape as ``mu``
        :math:`\\alpha`, every entry finite and > 0.

    Raises
    ------
    ValueError
        Shapes differ or are not (K,) / (D, K); ``K < 3`` (the message names
        :func:`logit_gaussian_to_beta`); a NaN/inf ``mu``, a NaN/inf/<= 0 ``var``; or an
        :math:`\\alpha_k` that over- or underflows float64 (the message names document and
        component).

    Notes
    -----
    Overflow-free: :math:`e^{\\mu_k}\\sum_\\ell e^{-\\mu_\\ell} = e^{\\mu_k - m}
    \\sum_\\ell e^{m - \\mu_\\ell}` with :math:`m = \\min_\\ell \\mu_\\ell`, so the sum lies in
    :math:`[1, K]` (never overflows nor underflows to 0) and only
    :math:`x_k = \\mu_k - m + \\log\\sum_\\ell e^{m - \\mu_\\ell} - 2\\log K` is exponentiated.
    Where :math:`x_k` exceeds 700 the whole of :math:`\\alpha_k` is formed in logs,
    :math:`\\exp(\\mathrm{logaddexp}(\\log(1 - 2/K), x_k) - \\log\\Sigma_{kk})`, so
    :math:`\\mu = \\pm 800` or a row shifted by :math:`10^3` give the exact answer;
    elsewhere the direct form is accurate to a few ulps.
    """
    func = "gaussian_to_dirichlet"
    m, v, K = _check_gaussian(func, mu, var)
    low = m.min(axis=-1, keepdims=True)
    log_sum = np.log(np.exp(low - m).sum(axis=-1, keepdims=True))  # in [0, log K]
    x = (m - low) + log_sum - 2.0 * math.log(K)
    alpha = _shift_plus_exp_over(1.0 - 2.0 / K, x, v)
    bad = ~(np.isfinite(alpha) & (alpha > 0))
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{func}: {_position('alpha', idx, True)} "
                         f"{'overflows' if alpha[idx] > 0 else 'underflows'} float64 "
                         f"(mu spread {float(np.ptp(m[idx[:-1]])):.4g}, "
                         f"var = {float(v[idx])!r})")
    return alpha


def _gaussian_to_dirichlet_printed(mu: ArrayLike, var: ArrayLike) -> NDArray[np.float64]:
    """KTM eq. (19) exactly as printed, with :math:`e^{-\\mu_k}` -- NOT an inverse.

    :math:`\\alpha_k = \\Sigma_{kk}^{-1}(1 - 2/K + e^{-\\mu_k} K^{-2} \\sum_\\ell
    e^{-\\mu_\\ell})`. Kept only so that a test can show that it does not invert
    :func:`dirichlet_to_gaussian` (it does only for a symmetric alpha). No overflow care.
    """
    m, v, K = _check_gaussian("_gaussian_to_dirichlet_printed", mu, var)
    s = np.exp(-m).sum(axis=-1, keepdims=True)
    return (1.0 - 2.0 / K + np.exp(-m) * s / K**2) / v


def _broadcast(func: str, **arrays: NDArray[np.float64]) -> tuple[int, ...]:
    try:
        return np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        desc = ", ".join(f"{k} with shape {a.shape}" for k, a in arrays.items())
        raise ValueError(f"{func}: {desc} do not broadcast") from None


def beta_to_logit_gaussian(a: ArrayLike, b: ArrayLike
                           ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Laplace approximation of Beta(a, b) in the logit basis: the ``K = 2`` bridge.

    With :math:`\\pi = \\mathrm{sigmoid}(y)` the Beta density in :math:`y` is
    :math:`\\propto \\pi^a (1 - \\pi)^b`, with mode :math:`y = \\log(a/b)` and curvature
    :math:`ab/(a + b)` there (KTM Sec. 3.3 and Fig. 3: (a, b) = (2, 1.2) -> (0.5, 1.3)).

    Parameters
    ----------
    a, b : array_like of float
        Beta parameters (the two Dirichlet components), finite and > 0; broadcast together.

    Returns
    -------
    mu : ndarray (NumPy float for scalar inputs)
        :math:`\\mu = \\log a - \\log b`.
    var : ndarray (NumPy float for scalar inputs)
        :math:`\\sigma^2 = 1/a + 1/b`.

    Raises
    ------
    ValueError
        A NaN, infinite or <= 0 entry, or an ``a`` so small that ``1/a`` overflows (the
        message names it); shapes that do not broadcast.

    See Also
    --------
    logit_gaussian_to_beta : the exact inverse.
    dirichlet_to_gaussian : the ``K >= 3`` map.
    """
    func = "beta_to_logit_gaussian"
    a_arr = _as_float(func, "a", a)
    b_arr = _as_float(func, "b", b)
    shape = _broadcast(func, a=a_arr, b=b_arr)
    _check(func, "a", a_arr, positive=True, rows_are_documents=False)
    _check(func, "b", b_arr, positive=True, rows_are_documents=False)
    a_arr, b_arr = np.broadcast_to(a_arr, shape), np.broadcast_to(b_arr, shape)
    mu = np.log(a_arr) - np.log(b_arr)
    with np.errstate(over="ignore"):
        var = 1.0 / a_arr + 1.0 / b_arr
    _check(func, "var", var, positive=True, rows_are_documents=False)
    return _scalar_or_array(mu), _scalar_or_array(var)


def logit_gaussian_to_beta(mu: ArrayLike, var: ArrayLike
                           ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Beta(a, b) from a logit-basis Gaussian: the exact inverse of
    :func:`beta_to_logit_gaussian`.

    Solving :math:`\\mu = \\log(a/b)`, :math:`\\sigma^2 = 1/a + 1/b`: with :math:`a = b
    e^{\\mu}`, :math:`\\sigma^2 = (1 + e^{-\\mu})/b`, so

    .. math::

        a = \\frac{1 + e^{\\mu}}{\\sigma^2}, \\qquad b = \\frac{1 + e^{-\\mu}}{\\sigma^2}.

    Parameters
    ----------
    mu : array_like of float
        Logit means, finite.
    var : array_like of float
        Logit variances, finite and > 0; broadcasts with ``mu``.

    Returns
    -------
    a, b : ndarray (NumPy floats for scalar inputs)
        Finite and > 0.

    Raises
    ------
    ValueError
        A NaN/inf ``mu``, a NaN/inf/<= 0 ``var``, shapes that do not broadcast, or an
        ``a``/``b`` that over- or underflows float64 (the message names the entry).

    Notes
    -----
    :math:`1 + e^{\\pm\\mu}` is formed directly for :math:`|\\mu| \\le 700` and in logs
    beyond, so the result is finite whenever the true ``a`` and ``b`` are.
    """
    func = "logit_gaussian_to_beta"
    m = _as_float(func, "mu", mu)
    v = _as_float(func, "var", var)
    shape = _broadcast(func, mu=m, var=v)
    _check(func, "mu", m, positive=False, rows_are_documents=False)
    _check(func, "var", v, positive=True, rows_are_documents=False)
    m = np.array(np.broadcast_to(m, shape))
    v = np.array(np.broadcast_to(v, shape))
    a = _shift_plus_exp_over(1.0, m, v)
    b = _shift_plus_exp_over(1.0, -m, v)
    for name, out in (("a", a), ("b", b)):
        bad = ~(np.isfinite(out) & (out > 0))
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"{func}: {name}{_index(idx)} "
                             f"{'overflows' if out[idx] > 0 else 'underflows'} float64 "
                             f"(mu = {float(m[idx])!r}, var = {float(v[idx])!r})")
    return _scalar_or_array(a), _scalar_or_array(b)


def _natural(func: str, mu1: ArrayLike, var1: ArrayLike, mu2: ArrayLike, var2: ArrayLike
             ) -> tuple[tuple[int, ...], NDArray[np.float64], NDArray[np.float64],
                        NDArray[np.float64], NDArray[np.float64]]:
    """Validated natural parameters (precision, precision * mean) of two Gaussians."""
    arrs = {name: _as_float(func, name, x)
            for name, x in (("mu1", mu1), ("var1", var1), ("mu2", mu2), ("var2", var2))}
    shape = _broadcast(func, **arrs)
    for name, arr in arrs.items():
        _check(func, name, arr, positive=name.startswith("var"), rows_are_documents=False)
    with np.errstate(over="ignore"):
        lam1, lam2 = 1.0 / arrs["var1"], 1.0 / arrs["var2"]
    _check(func, "1/var1", lam1, positive=True, rows_are_documents=False)
    _check(func, "1/var2", lam2, positive=True, rows_are_documents=False)
    return shape, lam1, lam1 * arrs["mu1"], lam2, lam2 * arrs["mu2"]


def gaussian_divide(mu1: ArrayLike, var1: ArrayLike, mu2: ArrayLike, var2: ArrayLike,
                    min_precision: float = 1e-8
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """The quotient :math:`N(\\mu_1, \\sigma_1^2) / N(\\mu_2, \\sigma_2^2)`, elementwise.

    In natural parameters (precision :math:`\\lambda = 1/\\sigma^2`, precision-mean
    :math:`\\eta = \\mu/\\sigma^2`) division subtracts:

    .. math::

        \\lambda = \\lambda_1 - \\lambda_2, \\quad \\eta = \\eta_1 - \\eta_2, \\quad
        \\sigma^2 = 1/\\lambda, \\quad \\mu = \\eta / \\lambda.

    A quotient whose precision is below ``min_precision`` (in particular every non-positive
    one, which is no Gaussian) has its precision raised to ``min_precision`` and is counted;
    its :math:`\\eta` is kept, so that the clipped message contributes exactly
    :math:`(\\eta, \\text{min\\_precision})` when multiplied back (the GPML-style floor of
    EP site precisions).

    Parameters
    ----------
    mu1, var1 : array_like of float
        Numerator (e.g. the belief): means finite, variances finite and > 0.
    mu2, var2 : array_like of float
        Denominator (e.g. the message to remove), likewise. All four broadcast together.
    min_precision : float, default 1e-8
        Floor of the quotient's precision, finite and > 0 (caps its variance at
        ``1 / min_precision``).

    Returns
    -------
    mu, var : ndarray (NumPy floats for scalar inputs)
        Mean and variance of the (clipped) quotient, of the broadcast shape.
    n_clipped : int
        How many entries had their precision raised to ``min_precision``.

    Raises
    ------
    ValueError
        A NaN/inf mean, a NaN/inf/<= 0 variance (the message names which argument and
        entry), shapes that do not broadcast, or a bad ``min_precision``.
    """
    func = "gaussian_divide"
    try:
        mp = float(min_precision)
    except (TypeError, ValueError):
        mp = math.nan
    if not (math.isfinite(mp) and mp > 0):
        raise ValueError(f"{func}: min_precision must be finite and > 0, got {min_precision!r}")
    shape, lam1, eta1, lam2, eta2 = _natural(func, mu1, var1, mu2, var2)
    lam = np.broadcast_to(lam1 - lam2, shape).copy()
    eta = np.broadcast_to(eta1 - eta2, shape)
    clip = ~(lam >= mp)
    lam[clip] = mp
    return _scalar_or_array(eta / lam), _scalar_or_array(1.0 / lam), int(clip.sum())


def gaussian_multiply(mu1: ArrayLike, var1: ArrayLike, mu2: ArrayLike, var2: ArrayLike
                      ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The normalised product :math:`N(\\mu_1, \\sigma_1^2)\\,N(\\mu_2, \\sigma_2^2)`.

    Precisions and precision-means add: :math:`\\lambda = \\lambda_1 + \\lambda_2`,
    :math:`\\eta = \\eta_1 + \\eta_2`, :math:`\\sigma^2 = 1/\\lambda`,
    :math:`\\mu = \\eta/\\lambda`.

    Parameters
    ----------
    mu1, var1, mu2, var2 : array_like of float
        Means finite, variances finite and > 0; all four broadcast together.

    Returns
    -------
    mu, var : ndarray (NumPy floats for scalar inputs)
        Mean and variance of the product, of the broadcast shape.

    Raises
    ------
    ValueError
        A NaN/inf mean, a NaN/inf/<= 0 variance (the message names which argument and
        entry), or shapes that do not broadcast.
    """
    shape, lam1, eta1, lam2, eta2 = _natural("gaussian_multiply", mu1, var1, mu2, var2)
    lam = np.broadcast_to(lam1 + lam2, shape)
    eta = np.broadcast_to(eta1 + eta2, shape)
    return _scalar_or_array(eta / lam), _scalar_or_array(1.0 / lam)
