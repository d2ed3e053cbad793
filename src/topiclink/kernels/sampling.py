"""Primitives shared by the Gibbs kernels: the blocked categorical draw, the draw from
cumulative weights, and the per-document Dirichlet prior.

Blocked draw: unnormalised probabilities live in a scratch buffer of :func:`padded` length
(zeros past the last topic); the cumulative search runs in blocks of :data:`BLOCK` topics,
so the dependent add chain is ``K/BLOCK + BLOCK`` long instead of ``K``
(``docs/design/lda.md``).

Dirichlet prior: a kernel's ``alpha`` is either one float64 vector (K,) shared by every
document, or a float64 matrix (1, K) (one row shared by every document) or (D, K) (row d
is document d's prior ``alpha_d``, e.g. DMR's ``exp(x_d^T lambda)``).  A kernel takes
``ad = prior_row(alpha, d)`` once per document and reads ``ad[k]`` where it read
``alpha[k]``; for a vector ``prior_row`` returns ``alpha`` itself, so the 1-D kernels are
the same arithmetic (bit for bit) as before per-document priors existed.

Imports only numpy, numba and math (``tests/test_architecture.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

__all__ = ["BLOCK", "check_prior", "draw_blocked", "draw_cumulative", "n_prior_rows",
           "padded", "prior_row"]

BLOCK = 8


def padded(n_topics: int) -> int:
    """Topic count rounded up to a multiple of :data:`BLOCK` (scratch-buffer length)."""
    return ((n_topics + BLOCK - 1) // BLOCK) * BLOCK


@njit(inline="always")
def draw_blocked(p: np.ndarray, block_sums: np.ndarray, n_blocks: int, u: float) -> int:
    """Draw index k with probability p[k] / sum(p) by a two-level blocked search.

    ``p`` has length ``n_blocks * BLOCK`` with zeros past the last topic; ``u`` is a
    uniform in [0, 1).  Returns a topic whose ``p`` is positive.

    ``block_sums`` receives the running totals of the block sums; the block is the number
    of running totals ``<= u * total`` and the topic inside it the number of partial sums
    ``<= u * total`` (fixed-length loops of comparisons instead of loops that stop at a
    data-dependent point, so a draw costs no mispredicted branch; the same topic, bit for
    bit, as a search that stops at the first partial sum above the target).  The LDA
    kernels write this draw out in place (:mod:`topiclink.topics.kernels.lda` says why).
    """
    total = 0.0
    for b in range(n_blocks):
        s = 0.0
        base = b * BLOCK
        for j in range(BLOCK):
            s += p[base + j]
        total += s
        block_sums[b] = total
    target = u * total
    b = 0
    for c in range(n_blocks - 1):
        b += block_sums[c] <= target
    acc = block_sums[b - 1] if b > 0 else 0.0
    base = b * BLOCK
    j = 0
    for c in range(BLOCK - 1):
        acc += p[base + c]
        j += acc <= target
    k = base + j
    # guard against rounding landing on a zero-probability pad entry
    while p[k] <= 0.0 and k > 0:
        k -= 1
    return k


@njit(inline="always")
def draw_cumulative(cum: np.ndarray, n: int, u: float) -> int:
    """Draw index c with probability ``w_c / sum(w)`` from the running sums ``cum[:n]`` of
    non-negative weights ``w`` and a uniform ``u`` in [0, 1): the smallest c with
    ``cum[c] > u * cum[n - 1]`` (binary search, O(log n)); a uniform index when every
    weight underflowed to 0."""
    total = cum[n - 1]
    if not total > 0.0:
        return min(int(u * n), n - 1)
    target = u * total
    lo = 0
    hi = n - 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if cum[mid] > target:
            hi = mid
        else:
            lo = mid + 1
    return lo


# --- per-document Dirichlet prior -------------------------------------------------------
# Each helper is a plain Python function (usable outside Numba) and the target of an
# overload resolved at compile time on alpha's dimension: the 1-D specialisations are the
# identity / constants, so they add nothing to a 1-D kernel.


def prior_row(alpha: np.ndarray, d: int) -> np.ndarray:
    """The Dirichlet prior (K,) of document ``d``: ``alpha`` itself for a vector, row ``d``
    of a (D, K) matrix, row 0 of a (1, K) matrix."""
    if alpha.ndim == 1:
        return alpha
    if alpha.shape[0] == 1:
        return alpha[0]
    return alpha[d]


def n_prior_rows(alpha: np.ndarray) -> int:
    """Number of distinct prior rows: 1 for a vector, ``alpha.shape[0]`` for a matrix (a
    kernel that caches functions of the prior recomputes them per document when > 1)."""
    return 1 if alpha.ndim == 1 else alpha.shape[0]


def check_prior(alpha: np.ndarray, n_docs: int, n_topics: int) -> None:
    """Raise ValueError unless a matrix ``alpha`` has shape (1, K) or (n_docs, K); a vector
    is accepted as it is (as before per-document priors)."""
    if alpha.ndim == 2 and (alpha.shape[1] != n_topics
                            or (alpha.shape[0] != 1 and alpha.shape[0] != n_docs)):
        raise ValueError("alpha must have shape (K,), (1, K) or (D, K)")


def _is_prior(alpha) -> bool:
    return isinstance(alpha, types.Array) and alpha.ndim in (1, 2)


@overload(prior_row, inline="always")
def _prior_row_impl(alpha, d):
    if not _is_prior(alpha):
        return None
    if alpha.ndim == 1:
        def vector(alpha, d):
            return alpha
        return vector

    def matrix(alpha, d):
        if alpha.shape[0] == 1:
            return alpha[0]
        return alpha[d]
    return matrix


@overload(n_prior_rows, inline="always")
def _n_prior_rows_impl(alpha):
    if not _is_prior(alpha):
        return None
    if alpha.ndim == 1:
        def vector(alpha):
            return 1
        return vector

    def matrix(alpha):
        return alpha.shape[0]
    return matrix


@overload(check_prior, inline="always")
def _check_prior_impl(alpha, n_docs, n_topics):
    if not _is_prior(alpha):
        return None
    if alpha.ndim == 1:
        def vector(alpha, n_docs, n_topics):
            return None
        return vector

    def matrix(alpha, n_docs, n_topics):
        if alpha.shape[1] != n_topics or (alpha.shape[0] != 1 and alpha.shape[0] != n_docs):
            raise ValueError("alpha must have shape (K,), (1, K) or (D, K)")
    return matrix
