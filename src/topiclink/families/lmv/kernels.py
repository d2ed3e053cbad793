"""The pair part of batch LMV (Tan, Chan & Zheng 2016, Algorithm 1 step 1).

For every ordered pair (d, d'), d != d' (d cites or does not cite d'), the pair's
(kappa, nu) is iterated to its fixed point

    kappa_i ∝ exp(E log theta_di  + sum_j nu_j    vs(i, j))
    nu_j    ∝ exp(E log theta_d'j + sum_i kappa_i vs(i, j))

    vs(i, j) = E log B_ij + E log tau_d'      for a link (y_dd' = 1)
    vs(i, j) = log(1 - taubar_d' Bbar_ij)     for a non-link (bound L*)

and only sufficient statistics are kept: per-document kappa sums (citing) and nu sums
(cited), ``S1 = sum_links kappa nu^T``, ``T[d'] = sum_non-links kappa nu^T`` and the pairs'
part of L*.  Memory O(D K^2 + L); no D x D array.

The kernel runs over a range of *cited* documents [c_start, c_end): the non-link matrix
``vs`` of a cited document is computed once and reused for all D citing documents, and the
rows ``T[d']``, ``gamma_in[d']`` and the link rows of ``topics`` are written by exactly one
range (disjoint, so ranges may run concurrently without locks; each such row is summed
over citing documents in increasing order, whatever the ranges).  ``gamma_out`` and ``S1``
collect contributions from every range, so each range gets private ones that the caller
sums in a fixed order (:mod:`topiclink.families.lmv.pairs`).

Imports only numpy, numba, math and topiclink.kernels (``tests/test_architecture.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["pair_fixed_point", "pair_statistics", "converge_pair", "matvec", "shifted_exp",
           "softmax"]


@njit(inline="always")
def _exp_sum(x: np.ndarray, out: np.ndarray) -> tuple[float, float]:
    """out = exp(x - max x) (``out`` may be ``x``); returns (max x, sum of out), the sum
    taken in index order."""
    K = x.shape[0]
    m = x[0]
    for j in range(1, K):
        if x[j] > m:
            m = x[j]
    s = 0.0
    for j in range(K):
        out[j] = math.exp(x[j] - m)
        s += out[j]
    return m, s


@njit(cache=True, nogil=True)
def converge_pair(et_d: np.ndarray, et_c: np.ndarray, vs: np.ndarray, vsT: np.ndarray,
              nu0: np.ndarray, vs_nu0: np.ndarray, exp_d: np.ndarray, exp_w: np.ndarray,
              shift: float, kappa: np.ndarray, nu: np.ndarray, work: np.ndarray,
              tol: float, max_inner: int) -> tuple[int, float]:
    """:func:`pair_fixed_point` with the transposed ``vsT`` and ``vs_nu0 = vs @ nu0`` given
    (both depend on the cited document only), and the first kappa's exponentials factored:
    ``exp(et_d + vs_nu0) = exp_d * exp_w * exp(shift)`` with ``exp_d = exp(et_d - max)``
    (per citing document) and ``exp_w = exp(vs_nu0 - max)`` (per cited document).  Loops
    are written as axpy over the contiguous axis (vectorisable without fastmath)."""
    K = et_d.shape[0]
    rounds = 0
    log_znu = 0.0
    kappa_part = 0.0
    s = 0.0
    while True:
        rounds += 1
        # kappa from nu: logits et_d + vs @ nu
        if rounds == 1:
            s = 0.0
            for i in range(K):
                kappa[i] = et_d[i] + vs_nu0[i]
                work[i] = exp_d[i] * exp_w[i]
                s += work[i]
            if s > 1e-250:  # else underflow: the general path below
                log_zk = shift + math.log(s)
                inv = 1.0 / s
                kappa_part = 0.0
                for i in range(K):
                    k = work[i] * inv
                    kappa_part += k * (et_d[i] - kappa[i] + log_zk)
                    kappa[i] = k
        else:
            for i in range(K):
                kappa[i] = et_d[i]
            for j in range(K):
                nj = nu[j]
                for i in range(K):
                    kappa[i] += nj * vsT[j, i]
        if rounds > 1 or not s > 1e-250:
            m, s = _exp_sum(kappa, work)
            log_zk = m + math.log(s)
            inv = 1.0 / s
            kappa_part = 0.0
            for i in range(K):
                k = work[i] * inv
                # kappa_i (et_d_i - log kappa_i), log kappa_i = logit_i - log Z
                kappa_part += k * (et_d[i] - kappa[i] + log_zk)
                kappa[i] = k
        # nu from kappa: logits et_c + kappa @ vs (in work: the old nu gives the change)
        for j in range(K):
            work[j] = et_c[j]
        for i in range(K):
            ki = kappa[i]
            for j in range(K):
                work[j] += ki * vs[i, j]
        m, s = _exp_sum(work, work)
        log_znu = m + math.log(s)
        inv = 1.0 / s
        change = 0.0
        old = nu0 if rounds == 1 else nu
        for j in range(K):
            new = work[j] * inv
            diff = abs(new - old[j])
            if diff > change:
                change = diff
            nu[j] = new
        if change < tol or rounds >= max_inner:
            break
    return rounds, log_znu + kappa_part


@njit(cache=True, nogil=True)
def pair_fixed_point(et_d: np.ndarray, et_c: np.ndarray, vs: np.ndarray, tol: float,
                     max_inner: int) -> tuple[np.ndarray, np.ndarray, int, float]:
    """Converge one pair's (kappa, nu) (the per-pair step of :func:`pair_statistics`).

    ``et_d``, ``et_c``: E log theta (K,) of the citing and the cited document; ``vs``
    (K, K) the pair's link term.  nu starts at softmax(``et_c``).  A round computes kappa
    from the current nu, then nu from that kappa; it stops when no nu entry moved by
    ``tol`` or more, or after ``max_inner`` rounds.  So the returned nu is the exact update
    of the returned kappa, and kappa the update of the previous nu.

    Returns (kappa, nu, rounds, pair bound) with the pair bound
    ``sum_ij kappa_i nu_j vs_ij + sum_i kappa_i (et_d_i - log kappa_i)
    + sum_j nu_j (et_c_j - log nu_j)``, evaluated as
    ``log Z_nu + sum_i kappa_i (et_d_i - log kappa_i)`` (equal, since nu is the softmax of
    ``et_c + kappa^T vs``).
    """
    K = et_d.shape[0]
    nu0 = np.empty(K)
    softmax(et_c, nu0)
    vs = np.ascontiguousarray(vs)
    vsT = np.ascontiguousarray(vs.T)
    vs_nu0 = np.empty(K)
    matvec(vs, nu0, vs_nu0)
    kappa = np.empty(K)
    nu = np.empty(K)
    work = np.empty(K)
    exp_d = np.empty(K)
    exp_w = np.empty(K)
    shift = shifted_exp(et_d, exp_d) + shifted_exp(vs_nu0, exp_w)
    rounds, bound = converge_pair(et_d, et_c, vs, vsT, nu0, vs_nu0, exp_d, exp_w, shift, kappa,
                              nu, work, tol, max_inner)
    return kappa, nu, rounds, bound


@njit(cache=True, nogil=True)
def softmax(x: np.ndarray, out: np.ndarray) -> None:
    _, s = _exp_sum(x, out)
    for j in range(x.shape[0]):
        out[j] /= s


@njit(cache=True, nogil=True)
def shifted_exp(x: np.ndarray, out: np.ndarray) -> float:
    """out = exp(x - max x); returns max x."""
    m, _ = _exp_sum(x, out)
    return m


@njit(cache=True, nogil=True)
def matvec(A: np.ndarray, x: np.ndarray, out: np.ndarray) -> None:
    """out = A @ x with a fixed summation order (j ascending)."""
    n, K = A.shape
    for i in range(n):
        t = 0.0
        for j in range(K):
            t += A[i, j] * x[j]
        out[i] = t


@njit(cache=True, nogil=True)
def pair_statistics(elog_theta: np.ndarray, link_ptr: np.ndarray, link_dst: np.ndarray,
                    vs_link: np.ndarray, elog_tau: np.ndarray, taubar: np.ndarray,
                    bbar: np.ndarray, time: np.ndarray, c_start: int, c_end: int,
                    tol: float, max_inner: int, gamma_out: np.ndarray,
                    gamma_in: np.ndarray, S1: np.ndarray, T: np.ndarray,
                    topics: np.ndarray, link_nu: np.ndarray) -> tuple[float, int, int]:
    """Pairs (d, d') for every citing d and every cited d' in [c_start, c_end), d != d'.

    Parameters
    ----------
    elog_theta : float64 (D, K)  E log theta.
    link_ptr, link_dst : int64 (D+1,), (L,)  CSR of the links by citing document, targets
        sorted within a row.
    vs_link : float64 (K, K)  psi(a) - psi(a + b), the B part of a link's term.
    elog_tau : float64 (D,)  psi(g) - psi(g + h), added for the cited document of a link.
    taubar : float64 (D,), bbar : float64 (K, K)  non-link term log(1 - taubar_d' bbar_ij).
    time : float64 (D,)  publication times (NaN: unknown).  A NON-link (d, d') with
        time[d'] > time[d] is skipped (LMV(t): d' did not exist when d was written).
        Links always count: they are observed.
    tol, max_inner : inner fixed-point stopping rule (:func:`pair_fixed_point`).
    gamma_out : float64 (D, K), accumulated  += kappa at the citing row d.
    gamma_in : float64 (D, K), accumulated   += nu at the cited row d' (rows in range only).
    S1 : float64 (K, K), accumulated         += kappa nu^T over links.
    T : float64 (D, K, K), accumulated       += kappa nu^T over non-links at row d'.
    topics : int32 (L, 2), written  (argmax kappa, argmax nu) of each link into the range
        (a self-link d -> d gets (-1, -1)); pass a (0, 2) array to skip.
    link_nu : float64 (L, K), read and written  each link's nu from the previous call: a
        link's fixed point starts from it (when its row sums to > 0) and the converged nu
        is written back.  A link's pair term E log B + E log tau is strong enough to give
        several fixed points; starting from the previous q makes the step an ascent from
        it, so L* cannot drop by jumping to a worse one (the non-links' weak term
        log(1 - tau B) has one).  Pass a (0, K) array for cold starts everywhere.

    Returns (pairs' part of L*, total inner rounds, number of pairs visited).
    """
    D, K = elog_theta.shape
    want_topics = topics.shape[0] == link_dst.shape[0] and topics.shape[0] > 0
    warm = link_nu.shape[0] == link_dst.shape[0] and link_nu.shape[0] > 0
    warm_nu = np.empty(K)
    warm_vs_nu = np.empty(K)
    warm_exp = np.empty(K)
    pos = np.empty(D, np.int64)
    for d in range(D):
        # first link of d with target >= c_start (targets sorted)
        lo = link_ptr[d]
        hi = link_ptr[d + 1]
        while lo < hi:
            mid = (lo + hi) // 2
            if link_dst[mid] < c_start:
                lo = mid + 1
            else:
                hi = mid
        pos[d] = lo
    exp_theta = np.empty((D, K))
    max_theta = np.empty(D)
    for d in range(D):
        max_theta[d] = shifted_exp(elog_theta[d], exp_theta[d])
    exp_non = np.empty(K)
    exp_lnk = np.empty(K)
    vs_non = np.empty((K, K))
    vs_lnk = np.empty((K, K))
    vs_nonT = np.empty((K, K))
    vs_lnkT = np.empty((K, K))
    non_nu0 = np.empty(K)
    lnk_nu0 = np.empty(K)
    nu0 = np.empty(K)
    kappa = np.empty(K)
    nu = np.empty(K)
    work = np.empty(K)
    bound = 0.0
    rounds = 0
    n_pairs = 0
    for c in range(c_start, c_end):
        et_c = elog_theta[c]
        softmax(et_c, nu0)
        tb = taubar[c]
        etau = elog_tau[c]
        for i in range(K):
            for j in range(K):
                vs_non[i, j] = math.log1p(-tb * bbar[i, j])
                vs_lnk[i, j] = vs_link[i, j] + etau
                vs_nonT[j, i] = vs_non[i, j]
                vs_lnkT[j, i] = vs_lnk[i, j]
        matvec(vs_non, nu0, non_nu0)
        matvec(vs_lnk, nu0, lnk_nu0)
        shift_non = shifted_exp(non_nu0, exp_non)
        shift_lnk = shifted_exp(lnk_nu0, exp_lnk)
        t_c = time[c]
        Tc = T[c]
        for d in range(D):
            end = link_ptr[d + 1]
            p = pos[d]
            while p < end and link_dst[p] < c:
                p += 1
            is_link = p < end and link_dst[p] == c
            if d == c:
                while p < end and link_dst[p] == c:
                    if want_topics:
                        topics[p, 0] = -1
                        topics[p, 1] = -1
                    p += 1
                pos[d] = p
                continue
            if not is_link and t_c > time[d]:  # False when either time is NaN
                pos[d] = p
                continue
            if is_link and warm and link_nu[p].sum() > 0.0:
                for j in range(K):
                    warm_nu[j] = link_nu[p, j]
                matvec(vs_lnk, warm_nu, warm_vs_nu)
                shift = shifted_exp(warm_vs_nu, warm_exp)
                r, b = converge_pair(elog_theta[d], et_c, vs_lnk, vs_lnkT, warm_nu,
                                     warm_vs_nu, exp_theta[d], warm_exp,
                                     max_theta[d] + shift, kappa, nu, work, tol, max_inner)
            elif is_link:
                r, b = converge_pair(elog_theta[d], et_c, vs_lnk, vs_lnkT, nu0, lnk_nu0,
                                 exp_theta[d], exp_lnk, max_theta[d] + shift_lnk, kappa,
                                 nu, work, tol, max_inner)
            else:
                r, b = converge_pair(elog_theta[d], et_c, vs_non, vs_nonT, nu0, non_nu0,
                                 exp_theta[d], exp_non, max_theta[d] + shift_non, kappa,
                                 nu, work, tol, max_inner)
            rounds += r
            bound += b
            n_pairs += 1
            god = gamma_out[d]
            gic = gamma_in[c]
            for i in range(K):
                god[i] += kappa[i]
                gic[i] += nu[i]
            if is_link:
                for i in range(K):
                    ki = kappa[i]
                    for j in range(K):
                        S1[i, j] += ki * nu[j]
                bi = 0
                bj = 0
                for i in range(1, K):
                    if kappa[i] > kappa[bi]:
                        bi = i
                    if nu[i] > nu[bj]:
                        bj = i
                while p < end and link_dst[p] == c:
                    if want_topics:
                        topics[p, 0] = bi
                        topics[p, 1] = bj
                    if warm:
                        for j in range(K):
                            link_nu[p, j] = nu[j]
                    p += 1
            else:
                for i in range(K):
                    ki = kappa[i]
                    for j in range(K):
                        Tc[i, j] += ki * nu[j]
            pos[d] = p
    return bound, rounds, n_pairs
