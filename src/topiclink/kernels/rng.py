"""xoshiro256** random numbers for Numba kernels, with explicit per-stream state.

Each stream is a ``uint64[4]`` row produced by :func:`topiclink.random.kernel_state`.
Kernels never use NumPy's global generator (whose Numba state is per thread and
process-global), so results depend only on the seed and the chunking.
Reference: Blackman & Vigna, "Scrambled linear pseudorandom number generators" (2021).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_S17 = np.uint64(17)
_S45 = np.uint64(45)
_S7 = np.uint64(7)
_S11 = np.uint64(11)
_M5 = np.uint64(5)
_M9 = np.uint64(9)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(inline="always")
def _rotl(x: np.uint64, k: np.uint64) -> np.uint64:
    return (x << k) | (x >> (np.uint64(64) - k))


@njit(inline="always")
def next_u64(state: np.ndarray) -> np.uint64:
    """Advance ``state`` (uint64[4]) in place and return 64 random bits."""
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    result = _rotl(s1 * _M5, _S7) * _M9
    t = s1 << _S17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, _S45)
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return result


@njit(inline="always")
def uniform(state: np.ndarray) -> float:
    """A uniform double in [0, 1) with 53 random bits."""
    return float(next_u64(state) >> _S11) * _TO_UNIT


@njit(cache=True)
def uniforms(state: np.ndarray, n: int) -> np.ndarray:
    """``n`` uniforms from one stream (used by tests of the generator)."""
    out = np.empty(n)
    for i in range(n):
        out[i] = uniform(state)
    return out


_SM_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_SM_M1 = np.uint64(0xBF58476D1CE4E5B9)
_SM_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@njit(inline="always")
def splitmix64(x: np.uint64) -> np.uint64:
    """One step of SplitMix64 (Steele, Lea & Flood 2014): a well-mixed function of ``x``."""
    z = x + _SM_GAMMA
    z = (z ^ (z >> _S30)) * _SM_M1
    z = (z ^ (z >> _S27)) * _SM_M2
    return z ^ (z >> _S31)


@njit(inline="always")
def seed_state(seed: np.uint64, state: np.ndarray) -> None:
    """Fill a xoshiro256** ``state`` from one 64-bit seed by SplitMix64 (the seeding its
    authors recommend); never the all-zero state."""
    x = seed
    for i in range(4):
        x = splitmix64(x)
        state[i] = x
    if state[0] == 0 and state[1] == 0 and state[2] == 0 and state[3] == 0:
        state[0] = _SM_GAMMA
