"""Scalar special functions shared by the kernels (Numba-compiled, callable from Python).

Imports only numpy, numba and math (``tests/test_architecture.py``).
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["digamma", "jj_lambda", "log_sigmoid"]


@njit(cache=True)
def digamma(x: float) -> float:
    """psi(x) for x > 0: recurrence up to x >= 6, then the asymptotic series (error < 1e-11)."""
    result = 0.0
    while x < 6.0:
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (-1.0 / 12.0 + f * (1.0 / 120.0 + f * (-1.0 / 252.0 + f * (
        1.0 / 240.0 + f * (-1.0 / 132.0)))))
    return result + math.log(x) - 0.5 / x + series


@njit(cache=True)
def log_sigmoid(x: float) -> float:
    """log sigmoid(x) = -log(1 + exp(-x)), stable for either sign."""
    if x >= 0.0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


@njit(cache=True)
def jj_lambda(xi: float) -> float:
    """Jaakkola-Jordan lam(xi) = tanh(xi/2) / (4 xi), its limit 1/8 - xi^2/96 near 0
    (xi >= 0)."""
    if xi < 1e-4:
        return 0.125 - xi * xi / 96.0
    return math.tanh(0.5 * xi) / (4.0 * xi)
