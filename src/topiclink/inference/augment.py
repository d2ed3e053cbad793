"""Augmentation of the logistic and hinge losses: both become Gaussian in the discriminant.

For a discriminant omega with label y in {0, 1} and regularisation constant c, each loss
contributes ``a omega - b omega^2 / 2`` to the log conditional of the other variables once
its augmentation variable lambda is drawn (``design/models/grtm.md``, ``slda.md``):

- logistic (Polson, Scott & Windle 2013): lambda ~ PG(c, omega), a = c (y - 1/2),
  b = lambda;
- hinge (Polson & Scott 2011; Zhu et al. 2014): with zeta = l - ytil omega, ytil = 2y - 1,
  1/lambda ~ IG(1/(c |zeta|), 1), a = c ytil (lambda + c l) / lambda, b = c^2 / lambda.
"""

from __future__ import annotations

import numpy as np

from topiclink.distributions import sample_hinge_augmentation, sample_pg

__all__ = ["LOSSES", "augment", "initial_coefficients", "pseudo_loglik"]

LOSSES = ("logistic", "hinge")


def augment(rng: np.random.Generator, loss: str, omega: np.ndarray, y: np.ndarray,
            c: np.ndarray, hinge_cost: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Draw every lambda given omega; return the Gaussian coefficients (a, b)."""
    if loss == "logistic":
        lam = sample_pg(rng, c, omega)
        return c * (y - 0.5), lam
    ytil = 2.0 * y - 1.0
    zeta = hinge_cost - ytil * omega
    lam = sample_hinge_augmentation(rng, zeta, c)
    return c * ytil * (lam + c * hinge_cost) / lam, c * c / lam


def initial_coefficients(loss: str, y: np.ndarray, c: np.ndarray,
                         hinge_cost: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) at lambda = 1 (the sampler's initial state)."""
    c = np.broadcast_to(np.asarray(c, dtype=np.float64), np.shape(y))
    if loss == "logistic":
        return c * (y - 0.5), np.ones(np.shape(y))
    ytil = 2.0 * y - 1.0
    return c * ytil * (1.0 + c * hinge_cost), c * c


def pseudo_loglik(loss: str, omega: np.ndarray, y: np.ndarray, c: np.ndarray,
                  hinge_cost: float = 1.0) -> float:
    """Mean pseudo log-likelihood: c (y omega - log(1 + e^omega)) or -2c max(0, zeta)."""
    if np.size(omega) == 0:
        return float("nan")
    if loss == "logistic":
        ll = c * (y * omega - np.logaddexp(0.0, omega))
    else:
        ll = -2.0 * c * np.maximum(0.0, hinge_cost - (2.0 * y - 1.0) * omega)
    return float(np.mean(ll))
