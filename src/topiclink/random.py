"""Randomness: one :class:`numpy.random.Generator` per fit, child streams, Numba seeds.

Every estimator normalises its ``random_state`` once per ``fit`` with :func:`as_generator`
and derives independent child streams with :func:`spawn` (initialisation, each Gibbs
block, augmentation draws).  Numba kernels never touch NumPy's global RNG: they receive
an explicit ``uint64`` state array produced by :func:`kernel_state` (xoshiro256**, see
:mod:`topiclink.kernels.rng`), one row per thread or chunk.
"""

from __future__ import annotations

import numbers

import numpy as np

RandomState = None | int | np.integer | np.random.Generator | np.random.SeedSequence

__all__ = ["RandomState", "as_generator", "spawn", "kernel_state"]


def as_generator(random_state: RandomState = None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``random_state``.

    Parameters
    ----------
    random_state : None, int, SeedSequence or Generator
        ``None`` gives fresh OS entropy; an int or SeedSequence a reproducible stream;
        a Generator is returned unchanged (so callers share its stream on purpose).
    """
    if random_state is None or isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state}")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState):
        raise TypeError(
            "random_state: legacy numpy.random.RandomState is not supported; "
            "pass an int or numpy.random.Generator"
        )
    raise TypeError(
        f"random_state must be None, an int, a SeedSequence or a Generator, "
        f"got {type(random_state).__name__}"
    )


def spawn(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """Derive ``n`` statistically independent child generators from ``rng``."""
    if n < 0:
        raise ValueError(f"cannot spawn {n} generators")
    return list(rng.spawn(n))


def kernel_state(rng: np.random.Generator, n_streams: int = 1) -> np.ndarray:
    """Seed ``n_streams`` xoshiro256** states for Numba kernels.

    Returns
    -------
    state : ndarray of uint64, shape (n_streams, 4)
        Row ``t`` is the private state of stream ``t`` (thread or document chunk).
        The all-zero state (the generator's only fixed point) is never returned.
    """
    state = rng.integers(0, np.iinfo(np.uint64).max, size=(n_streams, 4), dtype=np.uint64,
                         endpoint=True)
    zero_rows = ~state.any(axis=1)
    state[zero_rows, 0] = np.uint64(0x9E3779B97F4A7C15)
    return state
