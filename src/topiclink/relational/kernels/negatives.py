"""Per-document negative sampling for the relational models, O(#negatives + #links).

For every document i, ``counts[i]`` distinct documents j != i are drawn uniformly among
those with no pair (i, j) in the CSR ``ptr``/``nbr`` (its linked documents), by rejection
against an open-addressing hash set holding i, its neighbours and the documents already
drawn for it.  A document whose request is more than half of the documents it could draw
falls back to enumerating its own complement (O(D) for that document only) and a partial
Fisher-Yates shuffle.  Nothing of size D^2 is ever formed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from topiclink.kernels.rng import uniform

__all__ = ["sample_per_document"]

_EMPTY = -1
_HASH_MULT = 0x9E3779B1


@njit(inline="always")
def _slot(key: int, mask: int) -> int:
    return ((key * _HASH_MULT) >> 7) & mask


@njit(inline="always")
def _insert(table: np.ndarray, mask: int, key: int, used: np.ndarray, n_used: int) -> int:
    """Insert ``key``; returns the new number of used slots, or -1 if it was present."""
    s = _slot(key, mask)
    while True:
        v = table[s]
        if v == key:
            return -1
        if v == _EMPTY:
            table[s] = key
            used[n_used] = s
            return n_used + 1
        s = (s + 1) & mask


@njit(cache=True)
def sample_per_document(n_docs: int, ptr: np.ndarray, nbr: np.ndarray, counts: np.ndarray,
                        state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``counts[i]`` negatives (i, j) for every document i (see the module docstring).

    ``counts[i]`` must not exceed the number of documents i could draw
    (``n_docs - 1 - (ptr[i + 1] - ptr[i])`` when ``nbr`` holds distinct neighbours other
    than i).  Returns int64 ``source`` (non-decreasing) and ``target``; draws from the
    xoshiro256** ``state`` (uint64[4], advanced), so they depend on the seed only.
    """
    D = n_docs
    total = 0
    need = 1
    for i in range(D):
        total += counts[i]
        need = max(need, ptr[i + 1] - ptr[i] + counts[i] + 1)
    size = 1
    while size < 2 * need:
        size *= 2
    mask = size - 1
    table = np.full(size, _EMPTY, dtype=np.int64)
    used = np.empty(need, dtype=np.int64)
    src = np.empty(total, dtype=np.int64)
    dst = np.empty(total, dtype=np.int64)
    scratch = np.empty(0, dtype=np.int64)
    flags = np.zeros(0, dtype=np.bool_)
    out = 0
    for i in range(D):
        m = counts[i]
        if m <= 0:
            continue
        deg = ptr[i + 1] - ptr[i]
        available = D - 1 - deg
        if 2 * m > available:
            # dense request: enumerate this document's complement, choose m of them
            if flags.shape[0] == 0:
                flags = np.zeros(D, dtype=np.bool_)
                scratch = np.empty(D, dtype=np.int64)
            flags[i] = True
            for e in range(ptr[i], ptr[i + 1]):
                flags[nbr[e]] = True
            n_free = 0
            for j in range(D):
                if not flags[j]:
                    scratch[n_free] = j
                    n_free += 1
            flags[i] = False
            for e in range(ptr[i], ptr[i + 1]):
                flags[nbr[e]] = False
            for t in range(m):
                r = t + int(uniform(state) * (n_free - t))
                tmp = scratch[t]
                scratch[t] = scratch[r]
                scratch[r] = tmp
                src[out] = i
                dst[out] = scratch[t]
                out += 1
            continue
        n_used = _insert(table, mask, i, used, 0)
        for e in range(ptr[i], ptr[i + 1]):
            res = _insert(table, mask, nbr[e], used, n_used)
            if res > 0:
                n_used = res
        got = 0
        while got < m:
            j = int(uniform(state) * D)
            res = _insert(table, mask, j, used, n_used)
            if res < 0:
                continue
            n_used = res
            src[out] = i
            dst[out] = j
            out += 1
            got += 1
        for t in range(n_used):
            table[used[t]] = _EMPTY
    return src, dst
