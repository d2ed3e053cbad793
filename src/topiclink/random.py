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

__all__ = ["RandomState", "as_generator", "spawn", "kernel_state", "resolve_seed",
           "generator_state", "restore_generator"]


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


def resolve_seed(random_state: RandomState = None) -> int | np.random.SeedSequence:
    """The seed a fit actually uses, as something that can be recorded and replayed.

    An integer stays that integer (``default_rng(seed)`` then gives exactly the stream the
    integer always gave); ``None`` becomes fresh OS entropy (a 128-bit integer); a
    Generator gives one 63-bit integer drawn from it (so the caller's stream advances);
    a SeedSequence is returned unchanged (its ``entropy`` is what gets recorded).
    """
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if random_state is None:
        return int(np.random.SeedSequence().entropy)
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    as_generator(random_state)          # validates (type, sign)
    return int(random_state)            # type: ignore[arg-type]


def generator_state(rng: np.random.Generator) -> dict:
    """The JSON-able state of a Generator's bit generator (to save a sampler mid-chain)."""
    return dict(rng.bit_generator.state)


def restore_generator(state: dict) -> np.random.Generator:
    """A Generator continuing exactly where :func:`generator_state` left it."""
    name = state["bit_generator"]
    if name != "PCG64":
        raise ValueError(f"cannot restore a {name!r} bit generator (only PCG64)")
    bit = np.random.PCG64()
    bit.state = state
    return np.random.Generator(bit)
