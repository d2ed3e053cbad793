"""Link scores that do not depend on which other queries are scored with them.

A BLAS matrix product may sum a dot product in another order (another kernel, other
partial sums) for a block of 1, 4 or 4,000 rows, so the scores of a query scored alone
and in a batch can differ in the last bits, and a ranking of near-ties with them.
:func:`row_products` computes ``a @ b.T`` with every entry summed over ``k`` in order
``0..K-1`` (no reassociation, no fused multiply-add): entry ``(i, j)`` depends only on row
``i`` of ``a`` and row ``j`` of ``b``, so :meth:`suggest_links`, which scores queries in
blocks, gives exactly the scores of :meth:`link_scores` over all of them.  The inner loop
runs over ``j`` (independent entries), which vectorises, in tiles of ``TILE`` columns of
``b`` that stay in cache while every row of ``a`` uses them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["row_products"]


#: columns of ``b.T`` per tile (a K x TILE slab stays in cache while every row uses it)
TILE = 256


@njit(cache=True, nogil=True)
def _products(a: np.ndarray, b_t: np.ndarray, out: np.ndarray) -> None:
    n, K = a.shape
    m = b_t.shape[1]
    for start in range(0, m, TILE):
        stop = min(start + TILE, m)
        width = stop - start
        for i in range(n):
            row = out[i, start:stop]       # slices indexed from 0: the loop vectorises
            row[:] = 0.0
            for k in range(K):
                x = a[i, k]
                col = b_t[k, start:stop]
                for j in range(width):
                    row[j] += x * col[j]


def row_products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b.T`` (float64, shape (len(a), len(b))), each entry summed in a fixed order:
    the same bits for a row of ``a`` whichever rows come with it (see the module
    docstring)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"row_products: shapes {a.shape} and {b.shape} do not match")
    out = np.empty((a.shape[0], b.shape[0]))
    _products(a, np.ascontiguousarray(b.T), out)
    return out
