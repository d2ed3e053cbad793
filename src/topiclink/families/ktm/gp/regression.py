r"""Gaussian-process regression with per-point (heteroscedastic) noise, as the kernel topic
model needs it (Hennig et al., AISTATS 2012, sec. 3.2).

Model: :math:`f \sim \mathcal{GP}(m, k)`, :math:`y_d = f(x_d) + \epsilon_d`,
:math:`\epsilon_d \sim N(0, s_d)` independent, with known noise variances
:math:`s_d = \tau^2 + \tilde\sigma_d^2` (a shared noise plus the variance of document d's
Gaussian message).  With :math:`W = \mathrm{diag}(1/s)` (the noise *precisions*), all
quantities come from one Cholesky factor of

.. math:: B = I + W^{1/2} K W^{1/2} = L L^\top,

whose eigenvalues are all >= 1 (Rasmussen & Williams 2006, sec. 3.6.3, algorithms
3.5/3.6; the paper's eq. for :math:`\log Z`).  Nothing is inverted explicitly; with
:math:`b = B^{-1} W^{1/2} (y - m)` and :math:`\alpha = W^{1/2} b = K_y^{-1}(y - m)`
(:math:`K_y = K + W^{-1}`):

* posterior at the training points: mean :math:`m + K\alpha`, variance
  :math:`\mathrm{diag}(K) - \lVert L^{-1} W^{1/2} K \rVert^2_{\text{col}}`;
* at new points: mean :math:`m_* + K_*^\top \alpha`, variance
  :math:`k_{**} - \lVert L^{-1} W^{1/2} K_* \rVert^2_{\text{col}}`;
* leave-one-out (cavity) prediction of the latent :math:`f_d` from all *other* points
  (R&W eq. 5.12 for heteroscedastic noise).  R&W's form is
  :math:`\mu_{-d} = y_d - [K_y^{-1}(y-m)]_d / [K_y^{-1}]_{dd}` and
  :math:`v_{-d} = 1/[K_y^{-1}]_{dd} - s_d`; we evaluate the algebraically identical

  .. math:: v_{-d} = \frac{\sigma^2_d}{[B^{-1}]_{dd}}, \qquad
            \mu_{-d} = \mu_d - v_{-d}\, w_d^{1/2} b_d,

  (:math:`\mu_d, \sigma^2_d` the posterior marginal; :math:`w_d \sigma^2_d = 1 -
  [B^{-1}]_{dd}`), which needs no division by a precision and stays exact when a point
  has no information at all (:math:`s_d = \infty`, e.g. a clipped message): its cavity is
  then its posterior;
* the log evidence :math:`\log p(y) = -\tfrac12 (y-m)^\top\alpha - \sum_d \log L_{dd}
  - \tfrac12 \sum_d \log s_d - \tfrac{n}{2}\log 2\pi` (sums over the points with finite
  noise) and its gradient :math:`\tfrac12 \mathrm{tr}((\alpha\alpha^\top - K_y^{-1})
  \partial K/\partial\theta)` (R&W eq. 5.9) with respect to the kernel's log
  hyper-parameters and to :math:`\log\tau` (:math:`\partial K_y/\partial\log\tau =
  2\tau^2 I`).

Cost: one ``O(D^3)`` Cholesky per fit plus ``O(D^3)`` triangular solves for the
variances (``O(D^2 N)`` for N new points); fine up to a few thousand documents.  Beyond
that, :class:`FITCGP` is the inducing-point (FITC, Snelson & Ghahramani 2006; Quinonero-
Candela & Rasmussen 2005) approximation with M inducing inputs: ``O(D M^2)`` time and
``O(D M)`` memory, exact when the inducing inputs are all training inputs.  It gives the
posterior, the evidence and the leave-one-out cavities, not evidence gradients.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.linalg as sla
from scipy.optimize import OptimizeResult, minimize
from sklearn.gaussian_process.kernels import Kernel

__all__ = ["HeteroscedasticGP", "FITCGP", "log_marginal_likelihood", "fit_hyperparameters",
           "HyperparameterFit"]

logger = logging.getLogger(__name__)

_LOG_2PI = math.log(2.0 * math.pi)


def _check_vector(name: str, value: object, D: int, *, allow_scalar: bool = False
                  ) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if allow_scalar and arr.ndim == 0:
        return np.full(D, float(arr))
    if arr.shape != (D,):
        raise ValueError(f"{name} must have shape ({D},), got {arr.shape}")
    return arr


def _noise_precisions(noise: object, D: int, tau: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Total noise variances ``tau^2 + noise`` and their precisions (0 for infinite)."""
    s = _check_vector("noise", noise, D, allow_scalar=True)
    if np.isnan(s).any() or (s < 0).any():
        i = int(np.flatnonzero(np.isnan(s) | (s < 0))[0])
        raise ValueError(f"noise variances must be >= 0 (inf allowed), got noise[{i}] = {s[i]}")
    if not (np.isfinite(tau) and tau >= 0):
        raise ValueError(f"tau must be finite and >= 0, got {tau!r}")
    total = s + float(tau) ** 2
    if (total <= 0).any():
        i = int(np.flatnonzero(total <= 0)[0])
        raise ValueError(f"total noise variance tau^2 + noise[{i}] is 0; give tau > 0 or "
                         f"positive noise")
    with np.errstate(divide="ignore"):
        w = np.where(np.isfinite(total), 1.0 / total, 0.0)
    return total, w


class HeteroscedasticGP:
    """Exact GP posterior from a kernel matrix, per-point noise variances and targets.

    Parameters
    ----------
    K : ndarray, shape (D, D)
        Prior covariance of the latent function at the training points (symmetric PSD).
    noise : array-like, shape (D,) or scalar
        Noise variances ``s_d > 0``; ``inf`` marks a point without information.
    y : array-like, shape (D,)
        Targets (finite; ignored where ``noise`` is infinite).
    mean : float or array-like, shape (D,)
        Prior mean of the latent function at the training points.

    Notes
    -----
    Use :meth:`from_kernel` to keep the kernel and inputs for :meth:`predict` at new
    inputs and for the evidence gradient.
    """

    def __init__(self, K: object, noise: object, y: object, mean: object = 0.0) -> None:
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(f"K must be a square matrix, got shape {K.shape}")
        D = K.shape[0]
        if not np.isfinite(K).all():
            raise ValueError("K holds NaN or infinite values")
        self.K = K
        self.y = _check_vector("y", y, D)
        if not np.isfinite(self.y).all():
            raise ValueError("y must be finite")
        self.mean = _check_vector("mean", mean, D, allow_scalar=True)
        self._scalar_mean = np.ndim(mean) == 0
        self.noise, self.precision = _noise_precisions(noise, D)
        self.kernel: Kernel | None = None
        self.X: np.ndarray | None = None
        self.tau = 0.0
        sw = np.sqrt(self.precision)
        self._sw = sw
        B = sw[:, None] * K * sw[None, :]
        B[np.diag_indices(D)] += 1.0
        try:
            self.L = sla.cholesky(B, lower=True, check_finite=False)
        except np.linalg.LinAlgError as exc:
            raise np.linalg.LinAlgError(
                "Cholesky of B = I + W^1/2 K W^1/2 failed: K is not positive "
                "semi-definite (numerically)") from exc
        resid = np.where(sw > 0, self.y - self.mean, 0.0)
        self._b = sla.cho_solve((self.L, True), sw * resid, check_finite=False)
        self.alpha = sw * self._b  # K_y^-1 (y - m)
        self._resid = resid

    @classmethod
    def from_kernel(cls, kernel: Kernel, X: object, y: object, noise: object,
                    mean: object = 0.0, tau: float = 0.0) -> HeteroscedasticGP:
        """Fit with ``K = kernel(X)`` and noise variances ``tau^2 + noise``."""
        Xa = np.asarray(X) if kernel.requires_vector_input else X
        D = len(Xa)
        total, _ = _noise_precisions(noise, D, tau)
        gp = cls(kernel(Xa), total, y, mean)
        gp.kernel, gp.X, gp.tau = kernel, Xa, float(tau)
        return gp

    @property
    def n(self) -> int:
        return self.K.shape[0]

    # ------------------------------------------------------------------ training points
    @cached_property
    def _V(self) -> np.ndarray:
        """``L^-1 W^1/2 K`` (D x D)."""
        return sla.solve_triangular(self.L, self._sw[:, None] * self.K, lower=True,
                                    check_finite=False)

    @cached_property
    def _binv_diag(self) -> np.ndarray:
        """``diag(B^-1)`` from ``L^-1`` (a triangular solve), in (0, 1]."""
        Linv = sla.solve_triangular(self.L, np.eye(self.n), lower=True, check_finite=False)
        return np.einsum("ij,ij->j", Linv, Linv)

    @cached_property
    def posterior_mean(self) -> np.ndarray:
        """Posterior mean of the latent ``f`` at the training points."""
        return self.mean + self.K @ self.alpha

    @cached_property
    def posterior_var(self) -> np.ndarray:
        """Posterior marginal variances of the latent ``f`` at the training points."""
        v = np.diag(self.K) - np.einsum("ij,ij->j", self._V, self._V)
        return np.maximum(v, 0.0)

    def loo(self, include_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Leave-one-out (cavity) predictive means and variances at the training points.

        Entry d predicts from all points *except* d (its own noise/message removed).

        Returns
        -------
        mean, var : ndarray, shape (D,)
            Of the latent ``f_d`` (default; the variance excludes ``s_d`` -- what the KTM
            needs as document d's new prior), or of ``y_d`` with ``include_noise=True``
            (variance ``+ s_d``, infinite for points with infinite noise).
        """
        var = self.posterior_var / self._binv_diag
        mean = self.posterior_mean - var * self._sw * self._b
        if include_noise:
            var = var + self.noise
        return mean, var

    def log_marginal_likelihood(self) -> float:
        """Log evidence ``log N(y; m, K + diag(s))`` over the points with finite noise."""
        obs = self.precision > 0
        return float(-0.5 * self._resid @ self.alpha
                     - np.log(np.diag(self.L)).sum()
                     - 0.5 * np.log(self.noise[obs]).sum()
                     - 0.5 * obs.sum() * _LOG_2PI)

    def _ky_inv(self) -> np.ndarray:
        """``K_y^-1 = W^1/2 B^-1 W^1/2`` via two triangular solves (for gradients)."""
        sw = self._sw
        Binv = sla.cho_solve((self.L, True), np.eye(self.n), check_finite=False)
        return sw[:, None] * Binv * sw[None, :]

    def log_marginal_likelihood_gradient(self, K_gradient: np.ndarray | None = None
                                         ) -> np.ndarray:
        """Gradient of the log evidence.

        With ``K_gradient`` (shape (D, D, p), ``dK/dtheta_j``) returns the p derivatives
        ``1/2 tr((alpha alpha^T - K_y^-1) dK/dtheta_j)``.  Without it (needs
        :meth:`from_kernel`): the derivatives with respect to ``kernel.theta`` (log
        hyper-parameters) followed by the one with respect to ``log tau``.
        """
        Kyinv = self._ky_inv()
        a = self.alpha
        if K_gradient is not None:
            Kg = np.asarray(K_gradient, dtype=np.float64)
            return 0.5 * (np.einsum("i,ijk,j->k", a, Kg, a)
                          - np.einsum("ij,ijk->k", Kyinv, Kg))
        if self.kernel is None:
            raise ValueError("no kernel: build with HeteroscedasticGP.from_kernel or pass "
                             "K_gradient")
        _, Kg = self.kernel(self.X, eval_gradient=True)
        g_theta = (0.5 * (np.einsum("i,ijk,j->k", a, Kg, a)
                          - np.einsum("ij,ijk->k", Kyinv, Kg))
                   if Kg.shape[2] else np.empty(0))
        # dK_y/dlog tau = 2 tau^2 I: points with infinite noise have alpha = 0, Kyinv = 0.
        g_tau = self.tau**2 * (a @ a - np.trace(Kyinv))
        return np.append(g_theta, g_tau)

    # ------------------------------------------------------------------ new points
    def predict(self, X_new: object = None, *, K_cross: object = None, k_diag: object = None,
                mean_new: object = None, return_cov: bool = False
                ) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance (or covariance) of the latent ``f`` at new points.

        Give ``X_new`` (needs :meth:`from_kernel`), or ``K_cross`` (D x N, prior
        covariances between training and new points) with ``k_diag`` (N, prior variances
        at the new points; with ``return_cov`` the N x N prior covariance instead).
        ``mean_new``: prior mean at the new points; default the scalar training mean (it
        must be given when the training mean was a vector).
        """
        if X_new is not None:
            if self.kernel is None:
                raise ValueError("predict(X_new) needs a GP built with from_kernel; pass "
                                 "K_cross and k_diag instead")
            Xn = np.asarray(X_new) if self.kernel.requires_vector_input else X_new
            Kc = self.kernel(self.X, Xn)
            kd = self.kernel(Xn) if return_cov else self.kernel.diag(Xn)
        else:
            if K_cross is None or k_diag is None:
                raise ValueError("give X_new, or K_cross and k_diag")
            Kc = np.asarray(K_cross, dtype=np.float64)
            kd = np.asarray(k_diag, dtype=np.float64)
        if Kc.ndim != 2 or Kc.shape[0] != self.n:
            raise ValueError(f"K_cross must have shape ({self.n}, N), got {Kc.shape}")
        N = Kc.shape[1]
        if mean_new is None:
            if not self._scalar_mean:
                raise ValueError("the prior mean was a vector: give mean_new")
            mean_new = self.mean[0] if self.n else 0.0
        m_new = _check_vector("mean_new", mean_new, N, allow_scalar=True)
        mu = m_new + Kc.T @ self.alpha
        V = sla.solve_triangular(self.L, self._sw[:, None] * Kc, lower=True,
                                 check_finite=False)
        if return_cov:
            if kd.shape != (N, N):
                raise ValueError(f"prior covariance at new points must be ({N}, {N})")
            return mu, kd - V.T @ V
        if kd.shape != (N,):
            raise ValueError(f"k_diag must have shape ({N},), got {kd.shape}")
        return mu, np.maximum(kd - np.einsum("ij,ij->j", V, V), 0.0)


def log_marginal_likelihood(kernel: Kernel, X: object, y: object, noise: object,
                            tau: float = 0.0, mean: object = 0.0,
                            eval_gradient: bool = False) -> float | tuple[float, np.ndarray]:
    """Log evidence of ``y`` under ``GP(mean, kernel)`` with noise ``tau^2 + noise``.

    With ``eval_gradient`` also returns its gradient with respect to
    ``np.append(kernel.theta, log(tau))`` (``kernel.n_dims + 1`` entries; the last is 0
    when ``tau == 0``).
    """
    gp = HeteroscedasticGP.from_kernel(kernel, X, y, noise, mean=mean, tau=tau)
    value = gp.log_marginal_likelihood()
    if not eval_gradient:
        return value
    return value, gp.log_marginal_likelihood_gradient()


@dataclass
class HyperparameterFit:
    """Result of :func:`fit_hyperparameters`."""

    kernel: Kernel
    tau: float
    log_marginal_likelihood: float
    initial_log_marginal_likelihood: float
    result: OptimizeResult


def fit_hyperparameters(kernel: Kernel, X: object, y: object, noise: object,
                        tau: float = 1.0, mean: object = 0.0, fit_tau: bool = True,
                        tau_bounds: tuple[float, float] = (1e-4, 1e2),
                        max_iter: int = 200) -> HyperparameterFit:
    """Maximise the log evidence over the kernel's log hyper-parameters and ``log tau``.

    L-BFGS-B (``scipy.optimize.minimize(..., jac=True)``) with the analytic gradient,
    within ``kernel.bounds`` and ``log(tau_bounds)``, from ``kernel.theta`` and ``tau``.
    Fixed kernel hyper-parameters stay fixed; ``fit_tau=False`` keeps ``tau``.  ``noise``
    are the per-point (message) variances added to ``tau^2``.  Returns the optimised
    kernel (a clone; ``kernel`` is not modified), ``tau`` and the evidence before/after.
    """
    Xa = np.asarray(X) if kernel.requires_vector_input else X
    n_theta = kernel.n_dims
    lo, hi = float(tau_bounds[0]), float(tau_bounds[1])
    if not (0 < lo <= hi):
        raise ValueError(f"tau_bounds must satisfy 0 < low <= high, got {tau_bounds}")
    tau0 = float(np.clip(tau, lo, hi)) if fit_tau else float(tau)

    def unpack(z: np.ndarray) -> tuple[Kernel, float]:
        k = kernel.clone_with_theta(z[:n_theta])
        return k, (float(np.exp(z[n_theta])) if fit_tau else tau0)

    def objective(z: np.ndarray) -> tuple[float, np.ndarray]:
        k, t = unpack(z)
        try:
            value, grad = log_marginal_likelihood(k, Xa, y, noise, tau=t, mean=mean,
                                                  eval_gradient=True)
        except np.linalg.LinAlgError:
            return 1e25, np.zeros_like(z)
        if not fit_tau:
            grad = grad[:n_theta]
        return -value, -grad

    z0 = kernel.theta.copy()
    bounds = [tuple(b) for b in kernel.bounds] if n_theta else []
    if fit_tau:
        z0 = np.append(z0, math.log(tau0))
        bounds.append((math.log(lo), math.log(hi)))
    initial = -objective(z0)[0]
    if z0.size == 0:
        res = OptimizeResult(x=z0, fun=-initial, success=True, nit=0,
                             message="nothing to optimise")
    else:
        res = minimize(objective, z0, jac=True, method="L-BFGS-B", bounds=bounds,
                       options={"maxiter": int(max_iter)})
        if not res.success:
            logger.warning("fit_hyperparameters: L-BFGS-B stopped: %s", res.message)
    k_opt, t_opt = unpack(np.asarray(res.x))
    return HyperparameterFit(k_opt, t_opt, float(-res.fun), float(initial), res)


class FITCGP:
    r"""Inducing-point (FITC) approximation of :class:`HeteroscedasticGP` for large D.

    The prior covariance is replaced by :math:`Q + \mathrm{diag}(K - Q)` with
    :math:`Q = K_{nm} K_{mm}^{-1} K_{mn}` (M inducing inputs), so the effective noise is
    :math:`\Lambda = \mathrm{diag}(K_{nn} - Q_{nn}) + \mathrm{diag}(s)`; everything comes
    from Cholesky factors of :math:`K_{mm}` and :math:`A = I + V \Lambda^{-1} V^\top`
    (:math:`V = L_m^{-1} K_{mn}`), in ``O(D M^2)``.  With all training inputs as inducing
    inputs it is the exact GP.

    Parameters
    ----------
    kernel, X, y, noise, mean, tau
        As :meth:`HeteroscedasticGP.from_kernel` (``mean`` a scalar here).
    n_inducing : int
        Number of inducing inputs, a random subset of the rows of ``X`` (all of them
        when ``n_inducing >= D``).  Ignored when ``inducing`` is given.
    inducing : array-like, optional
        The inducing inputs themselves.
    jitter : float
        Added to the diagonal of ``K_mm`` (relative to its mean diagonal).
    """

    def __init__(self, kernel: Kernel, X: object, y: object, noise: object,
                 mean: float = 0.0, tau: float = 0.0, n_inducing: int = 500,
                 inducing: object = None, jitter: float = 1e-10,
                 random_state: int | None = 0) -> None:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[:, None]
        D = X.shape[0]
        self.kernel, self.X, self.tau = kernel, X, float(tau)
        self.y = _check_vector("y", y, D)
        if np.ndim(mean) != 0:
            raise ValueError("FITCGP: mean must be a scalar")
        self.mean = float(mean)
        self.noise, w_noise = _noise_precisions(noise, D, tau)
        if inducing is None:
            M = int(n_inducing)
            if M < 1:
                raise ValueError(f"n_inducing must be >= 1, got {n_inducing}")
            if M >= D:
                Z = X
            else:
                rng = np.random.default_rng(random_state)
                Z = X[np.sort(rng.choice(D, M, replace=False))]
        else:
            Z = np.asarray(inducing, dtype=np.float64).reshape(-1, X.shape[1])
        self.Z = Z
        Kmm = kernel(Z)
        Kmm[np.diag_indices_from(Kmm)] += jitter * max(float(np.mean(np.diag(Kmm))), 1e-300)
        self.Lm = sla.cholesky(Kmm, lower=True, check_finite=False)
        V = sla.solve_triangular(self.Lm, kernel(Z, X), lower=True, check_finite=False)
        dcorr = np.maximum(kernel.diag(X) - np.einsum("ij,ij->j", V, V), 0.0)
        lam = self.noise + dcorr
        with np.errstate(divide="ignore"):
            self.precision = np.where(np.isfinite(lam), 1.0 / lam, 0.0)
        self._lam = lam
        A = (V * self.precision) @ V.T
        A[np.diag_indices_from(A)] += 1.0
        self.La = sla.cholesky(A, lower=True, check_finite=False)
        self._resid = np.where(self.precision > 0, self.y - self.mean, 0.0)
        self._beta = sla.solve_triangular(self.La, V @ (self.precision * self._resid),
                                          lower=True, check_finite=False)
        self._V = V

    def log_marginal_likelihood(self) -> float:
        """Approximate (FITC) log evidence over the points with finite noise."""
        obs = self.precision > 0
        r = self._resid
        return float(-0.5 * (r @ (self.precision * r) - self._beta @ self._beta)
                     - np.log(np.diag(self.La)).sum()
                     - 0.5 * np.log(self._lam[obs]).sum()
                     - 0.5 * obs.sum() * _LOG_2PI)

    def loo(self) -> tuple[np.ndarray, np.ndarray]:
        """Leave-one-out (cavity) mean and variance of the latent ``f_d`` (without the
        noise ``s_d``), in ``O(D M^2)``.

        ``K_y = V^T V + Lambda`` (``Lambda = diag(s) + diag(K - Q)``) has, by Woodbury,
        ``K_y^-1 = P - W^T W`` with ``P = Lambda^-1`` and ``W = L_A^-1 V P``; then R&W eq.
        5.12: ``mu_d = y_d - [K_y^-1 r]_d / [K_y^-1]_dd``, ``var(y_d) = 1 / [K_y^-1]_dd``,
        and the latent variance is ``var(y_d) - s_d``.  A point without information
        (infinite noise) gets its posterior prediction.
        """
        W = sla.solve_triangular(self.La, self._V * self.precision, lower=True,
                                 check_finite=False)
        diag = self.precision - np.einsum("ij,ij->j", W, W)
        kinv_r = self.precision * self._resid - W.T @ self._beta
        ok = (self.precision > 0) & (diag > 0)
        mu = np.empty(self.y.size)
        var = np.empty(self.y.size)
        mu[ok] = self.y[ok] - kinv_r[ok] / diag[ok]
        var[ok] = 1.0 / diag[ok] - self.noise[ok]
        if not ok.all():
            mu[~ok], var[~ok] = self.predict(self.X[~ok])
        return mu, np.maximum(var, 0.0)

    def predict(self, X_new: object) -> tuple[np.ndarray, np.ndarray]:
        """Posterior mean and variance of the latent ``f`` at ``X_new``."""
        Xn = np.asarray(X_new, dtype=np.float64)
        if Xn.ndim == 1:
            Xn = Xn[:, None]
        Vs = sla.solve_triangular(self.Lm, self.kernel(self.Z, Xn), lower=True,
                                  check_finite=False)
        Ws = sla.solve_triangular(self.La, Vs, lower=True, check_finite=False)
        mu = self.mean + Ws.T @ self._beta
        var = (self.kernel.diag(Xn) - np.einsum("ij,ij->j", Vs, Vs)
               + np.einsum("ij,ij->j", Ws, Ws))
        return mu, np.maximum(var, 0.0)
