"""Augmentation of the logistic and hinge losses: both become Gaussian in the discriminant.

For a discriminant omega with label y in {0, 1} and regularisation constant c, each loss
contributes ``a omega - b omega^2 / 2`` to the log conditional of the other variables once
its augmentation variable lambda is drawn (``docs/design/grtm.md``, ``docs/design/slda.md``):

- logistic (Polson, Scott & Windle 2013): lambda ~ PG(c, omega), a = c (y - 1/2),
  b = lambda;
- hinge (Polson & Scott 2011; Zhu et al. 2014): with zeta = l - ytil omega, ytil = 2y - 1,
  1/lambda ~ IG(1/(c |zeta|), 1), a = c ytil (lambda + c l) / lambda, b = c^2 / lambda.
"""

from __future__ import annotations

import numpy as np

from topiclink.distributions import sample_hinge_augmentation, sample_pg
from topiclink.execution import Executor, resolve_executor
from topiclink.random import spawn

__all__ = ["LOSSES", "ChunkedAugmenter", "augment", "initial_coefficients", "pseudo_loglik"]

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


class ChunkedAugmenter:
    """:func:`augment` over fixed chunks of pairs, each with its own RNG stream, on up to
    ``n_threads`` threads (the Polya-Gamma and inverse-Gaussian samplers release the GIL).

    The draws depend only on ``rng`` and ``chunk_size``, never on the number of threads.
    Use as a context manager (the thread pool lives until ``close``).
    """

    def __init__(self, rng: np.random.Generator | None, loss: str, y: np.ndarray, c: np.ndarray,
                 hinge_cost: float = 1.0, n_threads: int = 1,
                 chunk_size: int = 8192,
                 bounds: list[tuple[int, int]] | None = None,
                 generators: list[np.random.Generator] | None = None) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        self.loss = loss
        self.y = np.asarray(y)
        self.c = np.broadcast_to(np.asarray(c, dtype=np.float64), self.y.shape)
        self.hinge_cost = float(hinge_cost)
        n = self.y.size
        if bounds is None:
            bounds = [(lo, min(lo + chunk_size, n)) for lo in range(0, n, chunk_size)]
        elif ((bounds[0][0] if bounds else 0) != 0
              or sum(hi - lo for lo, hi in bounds) != n
              or any(b[1] != a[0] for b, a in zip(bounds, bounds[1:], strict=False))):
            raise ValueError("bounds must be consecutive (lo, hi) ranges covering every item")
        self.bounds = list(bounds)
        # one stream per chunk; given ones (a saved sampler state) are used as they are
        self.generators = (spawn(rng, len(self.bounds)) if generators is None
                           else list(generators))
        if len(self.generators) != len(self.bounds):
            raise ValueError(f"{len(self.generators)} generators for {len(self.bounds)} "
                             "chunks")
        self.n_threads = max(1, min(int(n_threads), len(self.bounds)))
        self._pool: Executor | None = (
            resolve_executor(self.n_threads, name="topiclink-aug") if self.n_threads > 1
            else None)

    def __enter__(self) -> ChunkedAugmenter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def draw_chunk(self, i: int, omega: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        """Draw the lambdas of chunk ``i`` given its discriminants ``omega`` (the chunk's
        slice only); write its (a, b) into ``a[lo:hi]``, ``b[lo:hi]`` (thread-safe across
        chunks: each has its own stream and slice)."""
        lo, hi = self.bounds[i]
        a[lo:hi], b[lo:hi] = augment(self.generators[i], self.loss, omega, self.y[lo:hi],
                                     self.c[lo:hi], self.hinge_cost)

    def __call__(self, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Draw every lambda given ``omega``; return the Gaussian coefficients (a, b)."""
        a = np.empty(self.y.size)
        b = np.empty(self.y.size)

        def run(i: int) -> None:
            lo, hi = self.bounds[i]
            self.draw_chunk(i, omega[lo:hi], a, b)

        if self._pool is None:
            for i in range(len(self.bounds)):
                run(i)
        else:
            self._pool.map(run, range(len(self.bounds)))
        return a, b


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
