"""Numba kernel of BPBFM-1's MAP-EM: adding per-entry rows into per-entity rows.

The E-step itself (:func:`topiclink.families.bpbfm.em.estep`) is dense algebra over the
nonzero entries of one relation at a time (BLAS products); what BLAS cannot do is the
scatter of the entries' rows ``w_e Lambda^r u_j`` (to head i) and ``w_e Lambda^r^T u_i``
(to tail j) into the entities' statistics, where several entries share an entity.
``numpy.add.at`` does it too, an order of magnitude slower.

Imports only numpy, numba, math and topiclink.kernels (``tests/test_architecture.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["add_rows"]


@njit(cache=True, nogil=True)
def add_rows(target: np.ndarray, index: np.ndarray, rows: np.ndarray) -> None:
    """``target[index[e]] += rows[e]`` for every e, in order (repeated indices add up).

    Parameters
    ----------
    target : float64 (N, K), updated in place
    index : int (E,), rows of ``target``
    rows : float64 (E, K)
    """
    K = rows.shape[1]
    for e in range(index.shape[0]):
        i = index[e]
        for k in range(K):
            target[i, k] += rows[e, k]
