"""The nonconjugate updates of batch LMV: the Beta factors of the blockmodel (a, b) and of
the visibilities (g, h), by non-conjugate variational message passing (Knowles & Minka
2011), as in Tan, Chan & Zheng (2016), Algorithm 1 step 5 (``docs/design/lmv.md``).

With the bound L* (E log(1 - tau B) replaced by log(1 - taubar Bbar), taubar = g/(g+h),
Bbar = a/(a+b)) the part of L* that depends on the Beta(a, b) factor of B_ij is

    f(a, b) = (a0 - 1 + S1_ij) E log B + (b0 - 1) E log(1 - B) + H[Beta(a, b)]
              + sum_d' T_d'[i,j] log(1 - taubar_d' a / (a + b)),

E log B = psi(a) - psi(a+b), E log(1-B) = psi(b) - psi(a+b).  Its NCVMP fixed point is

    [a^, b^] = [a0 + S1_ij, b0] + F(a, b) c / (a + b)^2,
    c = - sum_d' T_d'[i,j] taubar_d' / (1 - taubar_d' Bbar_ij),
    F(x, y) = [(x+y) psi'(x+y) - y psi'(y),  x psi'(x) - (x+y) psi'(x+y)] / |I_{x,y}|,
    |I_{x,y}| = psi'(x) psi'(y) - psi'(x+y) (psi'(x) + psi'(y)),

(the design note writes the sum without the minus sign and F with the opposite sign
convention; the product is the same).  The visibility of document d' has the same form
with the roles of the Beta parameters taken by (g, h), the link count n_d' (its in-degree)
in place of S1, and c = - sum_ij T_d'[i,j] Bbar_ij / (1 - taubar_d' Bbar_ij).  A step moves
(1 - s) x + s x^ with s = 1 halved until every parameter is positive, and is accepted only
when the objective increases (:func:`damped_step`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.special import betaln, digamma, polygamma

__all__ = ["fisher_factor", "beta_entropy", "blockmodel_objective", "blockmodel_target",
           "visibility_objective", "visibility_target", "damped_step"]


def _trigamma(x: np.ndarray) -> np.ndarray:
    return polygamma(1, x)


def fisher_factor(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two components of F(x, y) = I(x, y)^-1 d E[log B] / d(mean) direction (above):
    ``F = [(x+y) psi'(x+y) - y psi'(y), x psi'(x) - (x+y) psi'(x+y)] / |I|`` times -1."""
    tx, ty, ts = _trigamma(x), _trigamma(y), _trigamma(x + y)
    det = tx * ty - ts * (tx + ty)
    return (y * ty - (x + y) * ts) / det, ((x + y) * ts - x * tx) / det


def beta_entropy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Entropy of Beta(x, y)."""
    return (betaln(x, y) - (x - 1) * digamma(x) - (y - 1) * digamma(y)
            + (x + y - 2) * digamma(x + y))


def _beta_part(x: np.ndarray, y: np.ndarray, x0: np.ndarray, y0: np.ndarray
               ) -> np.ndarray:
    return ((x0 - 1) * (digamma(x) - digamma(x + y)) + (y0 - 1) * (digamma(y) - digamma(x + y))
            + beta_entropy(x, y))


def blockmodel_objective(a: np.ndarray, b: np.ndarray, a0: float, b0: float, S1: np.ndarray,
                         T: np.ndarray, taubar: np.ndarray) -> np.ndarray:
    """f(a, b) per block (K, K); ``T`` (D, K, K) non-link statistics, ``taubar`` (D,)."""
    Bbar = a / (a + b)
    nonlinks = np.einsum("dij,dij->ij", T, np.log1p(-taubar[:, None, None] * Bbar))
    return _beta_part(a, b, a0 + S1, np.full_like(a, b0)) + nonlinks


def blockmodel_target(a: np.ndarray, b: np.ndarray, a0: float, b0: float, S1: np.ndarray,
                      T: np.ndarray, taubar: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The NCVMP fixed-point map (a^, b^) of every block."""
    Bbar = a / (a + b)
    c = -np.einsum("dij,d,dij->ij", T, taubar, 1.0 / (1.0 - taubar[:, None, None] * Bbar))
    fa, fb = fisher_factor(a, b)
    scale = c / (a + b) ** 2
    return a0 + S1 + fa * scale, b0 + fb * scale


def visibility_objective(g: np.ndarray, h: np.ndarray, g0: float, h0: float,
                         in_degree: np.ndarray, T: np.ndarray, Bbar: np.ndarray
                         ) -> np.ndarray:
    """The (g, h)-dependent part of L* per document (D,)."""
    taubar = g / (g + h)
    nonlinks = np.einsum("dij,dij->d", T, np.log1p(-taubar[:, None, None] * Bbar))
    return _beta_part(g, h, g0 + in_degree, np.full_like(g, h0)) + nonlinks


def visibility_target(g: np.ndarray, h: np.ndarray, g0: float, h0: float,
                      in_degree: np.ndarray, T: np.ndarray, Bbar: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The NCVMP fixed-point map (g^, h^) of every document's visibility."""
    taubar = g / (g + h)
    c = -np.einsum("dij,ij,dij->d", T, Bbar, 1.0 / (1.0 - taubar[:, None, None] * Bbar))
    fg, fh = fisher_factor(g, h)
    scale = c / (g + h) ** 2
    return g0 + in_degree + fg * scale, h0 + fh * scale


def damped_step(x: np.ndarray, y: np.ndarray, target: tuple[np.ndarray, np.ndarray],
                objective: Callable[[np.ndarray, np.ndarray], float], max_halvings: int = 30
                ) -> tuple[np.ndarray, np.ndarray, float, bool]:
    """Move towards ``target`` with step s = 1, halved until every parameter is positive
    and the (summed) objective does not decrease; returns (x, y, s, accepted)."""
    x_hat, y_hat = target
    before = objective(x, y)
    s = 1.0
    for _ in range(max_halvings):
        nx, ny = (1 - s) * x + s * x_hat, (1 - s) * y + s * y_hat
        if np.all(nx > 0) and np.all(ny > 0) and objective(nx, ny) >= before:
            return nx, ny, s, True
        s *= 0.5
    return x, y, 0.0, False
