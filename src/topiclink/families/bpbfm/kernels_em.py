"""Numba kernels of BPBFM-1's MAP-EM: the O(K) work per nonzero entry of the E-step.

The E-step (:func:`topiclink.families.bpbfm.em.estep`) takes one relation at a time and
groups its nonzero entries by the entity they share on one side (FB15k-237: 56,317
(relation, tail) groups for 272,115 triples); the O(K^2) work is then per group, by BLAS
products, and what remains per entry is a dot product and two scaled row additions
(:func:`group_pass`).

Imports only numpy, numba, math and topiclink.kernels (``tests/test_architecture.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["group_pass", "offset_group_pass", "scaled_group_pass"]


@njit(cache=True, nogil=True)
def group_pass(other: np.ndarray, group: np.ndarray, values: np.ndarray, binary: bool,
               U: np.ndarray, P: np.ndarray, B: np.ndarray, S_u: np.ndarray,
               want_b: bool, want_u: bool) -> float:
    """One relation's nonzero entries, grouped by the entity they share on one side.

    Entry e links ``other[e]`` to the entity of group ``group[e]``, whose row ``P[g]`` is
    that entity's side of the bilinear form (``Lambda^r u_j`` for a tail j, ``Lambda^r^T
    u_i`` for a head i), so the rate is ``lam_e = u_other . P[g]`` (O(K)).  With ``w_e =
    x_e / (1 - exp(-lam_e))`` (binary data) or ``x_e / lam_e`` (counts), accumulate in
    place

    - ``B[g] += w_e u_other`` (``want_b``): the group's weighted sum of the other side,
      from which the caller gets Lambda's statistic and the group entities' own by one
      matrix product each;
    - ``S_u[other] += w_e P[g]`` (``want_u``): the other side's statistic.

    Returns ``sum_e [log p(x_e | lam_e) + lam_e]``.
    """
    K = U.shape[1]
    ll = 0.0
    for e in range(other.shape[0]):
        o = other[e]
        g = group[e]
        lam = 0.0
        for k in range(K):
            lam += U[o, k] * P[g, k]
        x = values[e]
        if binary:
            if lam > 0.0:
                q = -math.expm1(-lam)
                ll += math.log(q) + lam
                w = x / q
            else:
                ll += -745.0
                w = 0.0
        else:
            if lam > 0.0:
                ll += x * math.log(lam) - math.lgamma(x + 1.0)
                w = x / lam
            else:
                ll += x * math.log(1e-300) - math.lgamma(x + 1.0)
                w = 0.0
        if w == 0.0:
            continue
        if want_b:
            for k in range(K):
                B[g, k] += w * U[o, k]
        if want_u:
            for k in range(K):
                S_u[o, k] += w * P[g, k]
    return ll


@njit(cache=True, nogil=True)
def offset_group_pass(other: np.ndarray, group: np.ndarray, values: np.ndarray,
                      binary: bool, U: np.ndarray, P: np.ndarray, offset: np.ndarray,
                      B: np.ndarray, S_u: np.ndarray, weight: np.ndarray, want_b: bool,
                      want_u: bool) -> float:
    """:func:`group_pass` with a rate added per entry (the observable patterns,
    :mod:`topiclink.families.bpbfm.em_patterns`): entry e's rate is ``lam_e = u_other .
    P[g] + offset[e]`` and its weight ``w_e = x_e / (1 - exp(-lam_e))`` (binary data) or
    ``x_e / lam_e`` (counts), written to ``weight[e]``; ``B`` and ``S_u`` are accumulated
    as :func:`group_pass` does, with these weights (the factor cells' share of the
    expected count is ``w_e`` times their rate, the offset's is ``w_e offset[e]``).  With
    a zero offset, the same sums in the same order as :func:`group_pass`.

    Returns ``sum_e [log p(x_e | lam_e) + lam_e]``.
    """
    K = U.shape[1]
    ll = 0.0
    for e in range(other.shape[0]):
        o = other[e]
        g = group[e]
        lam = 0.0
        for k in range(K):
            lam += U[o, k] * P[g, k]
        lam += offset[e]
        x = values[e]
        if binary:
            if lam > 0.0:
                q = -math.expm1(-lam)
                ll += math.log(q) + lam
                w = x / q
            else:
                ll += -745.0
                w = 0.0
        else:
            if lam > 0.0:
                ll += x * math.log(lam) - math.lgamma(x + 1.0)
                w = x / lam
            else:
                ll += x * math.log(1e-300) - math.lgamma(x + 1.0)
                w = 0.0
        weight[e] = w
        if w == 0.0:
            continue
        if want_b:
            for k in range(K):
                B[g, k] += w * U[o, k]
        if want_u:
            for k in range(K):
                S_u[o, k] += w * P[g, k]
    return ll


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def scaled_group_pass(other: np.ndarray, group: np.ndarray, values: np.ndarray,
                      binary: bool, X: np.ndarray, P: np.ndarray, scale_group: np.ndarray,
                      scale_other: np.ndarray, B: np.ndarray, S_other: np.ndarray,
                      m_group: np.ndarray, m_other: np.ndarray, want_b: bool,
                      want_other: bool, want_m: bool) -> float:
    """:func:`group_pass` with a scale per entry (the degree-corrected model,
    :mod:`topiclink.families.bpbfm.em_degrees`): entry e's rate is ``c_e lam_e``, ``c_e =
    scale_group[g] scale_other[other[e]]`` (a relation's head and tail degrees) and
    ``lam_e = X[other[e]] . P[g]`` (O(K)).  Its expected latent count is ``m_e = x_e c_e
    lam_e / (1 - exp(-c_e lam_e))`` for a one of binary data (zero-truncated Poisson) and
    ``m_e = x_e`` for a count; with ``w_e = m_e / lam_e`` accumulate in place

    - ``B[g] += w_e X[other]`` (``want_b``), ``S_other[other] += w_e P[g]``
      (``want_other``): the factors' statistics, as in :func:`group_pass`;
    - ``m_group[g] += m_e``, ``m_other[other] += m_e`` (``want_m``): the degrees'.

    Returns ``sum_e [log p(x_e | c_e lam_e) + c_e lam_e]``.

    Compiled with reassociation (and fused multiply-adds), so that the O(K) dot
    products vectorise: the sums' last digits depend on the CPU's vector width (as
    BLAS products do), never on the data's order or the thread count.
    """
    K = X.shape[1]
    ll = 0.0
    for e in range(other.shape[0]):
        o = other[e]
        g = group[e]
        lam = 0.0
        for k in range(K):
            lam += X[o, k] * P[g, k]
        c = scale_group[g] * scale_other[o]
        rate = c * lam
        x = values[e]
        if rate > 0.0:
            if binary:
                q = -math.expm1(-rate)
                ll += math.log(q) + rate
                m = x * rate / q
            else:
                ll += x * math.log(rate) - math.lgamma(x + 1.0)
                m = x
            w = m / lam
        else:
            ll += -745.0 if binary else x * math.log(1e-300) - math.lgamma(x + 1.0)
            m = 0.0
            w = 0.0
        if want_m:
            m_group[g] += m
            m_other[o] += m
        if w == 0.0:
            continue
        if want_b:
            for k in range(K):
                B[g, k] += w * X[o, k]
        if want_other:
            for k in range(K):
                S_other[o, k] += w * P[g, k]
    return ll
