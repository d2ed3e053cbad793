"""Numba kernels of the bilinear Poisson factor models (BPBFM-1, BPBFM-2).

One kernel serves both models (``docs/design/bpbfm.md``, Gibbs steps 1-2).  Relation r's
Poisson rate is a sum over the CSR list ``rel_ptr[r]:rel_ptr[r + 1]`` of terms (m, w)::

    rate^r_ij = sum_{(m, w)} sum_{k1, k2} w u_ik1 G^m_k1k2 u_jk2

(BPBFM-1: ``G = Lambda`` (R, K, K), one term (r, 1) per relation; BPBFM-2: every
dictionary element m with ``w = eta_mr``).  :func:`sweep_groups` takes the entries grouped
by the entity they share on one side of a relation
(:mod:`topiclink.families.bpbfm.grouping`): per group one O(K^2) matrix-vector product,
per entry the rate in O(K) and its latent count X (a one of binary data: zero-truncated
Poisson; count data: the observed value; a held-out entry: Poisson, the imputation of a
missing value), and per unit of X two draws from cumulative weights (O(K) for BPBFM-1,
O(M K) for BPBFM-2) giving its cell (m, k1, k2), accumulating

- ``n_ent[i, k1]`` (sender) and ``n_ent[j, k2]`` (receiver; skipped with
  ``sender_only``, the supplement's printed count, kept for the Geweke test only),
- ``x_cells[m, k1, k2]``,
- ``x_rm[r, m]`` (only when ``x_rm`` has rows: BPBFM-2).

Imports only numpy, numba, math and topiclink.kernels (``tests/test_architecture.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.counts import poisson_draw, zero_truncated_poisson_draw
from topiclink.kernels.rng import uniform
from topiclink.kernels.sampling import draw_cumulative

__all__ = ["KIND_ONE", "KIND_COUNT", "KIND_MISSING", "group_rates", "group_vector",
           "sweep_groups", "sweep_self_pairs",
           "entry_rates", "bilinear_rates", "ones_loglik"]

#: entry kinds: a one of binary data, an observed count, a held-out (imputed) entry
KIND_ONE = 0
KIND_COUNT = 1
KIND_MISSING = 2


@njit(inline="always")
def group_vector(us: np.ndarray, Lr: np.ndarray, s_is_head: bool, P: np.ndarray) -> None:
    """``P = Lambda^r^T u_s`` (s the head: ``P_k2 = sum_k1 u_sk1 Lambda_k1k2``) or
    ``P = Lambda^r u_s`` (s the tail: ``P_k1 = sum_k2 Lambda_k1k2 u_sk2``), each sum in
    index order; a group's rate with entity o on the other side is ``u_o . P``."""
    K = us.shape[0]
    if s_is_head:
        for k in range(K):
            P[k] = 0.0
        for k1 in range(K):
            a = us[k1]
            for k2 in range(K):
                P[k2] += a * Lr[k1, k2]
    else:
        for k1 in range(K):
            acc = 0.0
            for k2 in range(K):
                acc += Lr[k1, k2] * us[k2]
            P[k1] = acc


@njit(cache=True, nogil=True)
def group_rates(group_ptr: np.ndarray, group_entity: np.ndarray, group_rel: np.ndarray,
                group_by_head: np.ndarray, other: np.ndarray, U: np.ndarray,
                L: np.ndarray) -> np.ndarray:
    """``u_i^T Lambda^r u_j`` of every position of grouped entries
    (:class:`~topiclink.families.bpbfm.grouping.EntryGroups`), in grouped order, as
    :func:`sweep_groups` computes them: O(K^2) a group, O(K) an entry."""
    K = U.shape[1]
    out = np.empty(other.shape[0])
    P = np.empty(K)
    for g in range(group_entity.shape[0]):
        group_vector(U[group_entity[g]], L[group_rel[g]], group_by_head[g], P)
        for e in range(group_ptr[g], group_ptr[g + 1]):
            uo = U[other[e]]
            rate = 0.0
            for k in range(K):
                rate += uo[k] * P[k]
            out[e] = rate
    return out


@njit(cache=True, nogil=True)
def sweep_groups(g_lo: int, g_hi: int, group_ptr: np.ndarray, group_entity: np.ndarray,
                 group_rel: np.ndarray, group_by_head: np.ndarray, other: np.ndarray,
                 kinds: np.ndarray, values: np.ndarray, U: np.ndarray, L: np.ndarray,
                 G: np.ndarray, rel_ptr: np.ndarray, rel_m: np.ndarray, rel_w: np.ndarray,
                 sender_only: bool, state: np.ndarray, n_ent: np.ndarray,
                 x_cells: np.ndarray, x_rm: np.ndarray) -> int:
    """Latent counts of the entries of groups ``g_lo:g_hi`` and their allocation
    (accumulated in place); :mod:`topiclink.families.bpbfm.grouping` says what a group is.

    Group g shares entity s on one side of relation r.  Once per group (O(K^2)):
    ``P = Lambda^r^T u_s`` when s is the head, ``P = Lambda^r u_s`` when it is the tail.
    Per entry with other entity o (O(K)): the rate ``u_o . P`` (the running sums of
    ``u_ok P_k`` are kept), then the latent count X.  Per unit of X, two draws give the
    cell (m, k1, k2), whose probability is ``w_m u_ik1 G^m_k1k2 u_jk2 / rate``:

    1. o's factor k_o with probability ``u_ok P_k / rate`` (the cell probability summed
       over m and s's factor), O(log K) from the running sums;
    2. (m, s's factor k_s) given k_o with probability proportional to ``w_m G^m_k1k2
       u_sk_s`` over the relation's terms, O(M K) (BPBFM-1: one term, O(K)).

    ``(k1, k2) = (k_s, k_o)`` when s is the head, ``(k_o, k_s)`` when it is the tail; the
    joint law is that of one categorical draw over the M K^2 cells, at O(K) per unit
    instead of O(M K^2) per entry.

    Parameters
    ----------
    g_lo, g_hi : the groups to sweep; group_ptr : int64 (G + 1,) their positions;
        group_entity, group_rel : int32 (G,); group_by_head : bool (G,)
    other : int32 (E,) the other entity of each position; kinds : int8 (E,)
        (``KIND_*``); values : float64 (E,)
    U : float64 (N, K); L : float64 (R, K, K) the relation matrices
        ``Lambda^r = sum_{(m, w)} w G^m``; G : float64 (M, K, K)
    rel_ptr : int64 (R + 1,); rel_m : int64 (T,); rel_w : float64 (T,) relation r's
        terms (m, w) are ``rel_ptr[r]:rel_ptr[r + 1]``
    sender_only : count the head only (the printed, wrong, U statistic; Geweke test only)
    state : uint64 (4,) xoshiro256** stream of this chunk
    n_ent : int64 (N, K); x_cells : int64 (M, K, K); x_rm : int64 (R, M) or (0, 0)

    Returns
    -------
    the total latent count drawn
    """
    K = U.shape[1]
    R = rel_ptr.shape[0] - 1
    max_terms = 1
    for r in range(R):
        nt = rel_ptr[r + 1] - rel_ptr[r]
        if nt > max_terms:
            max_terms = nt
    P = np.empty(K)
    cum_o = np.empty(K)
    cum_s = np.empty(max_terms * K)
    track_rm = x_rm.shape[0] > 0
    total = 0
    for g in range(g_lo, g_hi):
        r = group_rel[g]
        s = group_entity[g]
        s_is_head = group_by_head[g]
        us = U[s]
        group_vector(us, L[r], s_is_head, P)
        p0 = rel_ptr[r]
        nt = rel_ptr[r + 1] - p0
        for e in range(group_ptr[g], group_ptr[g + 1]):
            o = other[e]
            uo = U[o]
            rate = 0.0
            for k in range(K):
                rate += uo[k] * P[k]
                cum_o[k] = rate
            kind = kinds[e]
            if kind == KIND_ONE:
                x = zero_truncated_poisson_draw(rate, state)
            elif kind == KIND_COUNT:
                x = int(values[e])
            else:
                x = poisson_draw(rate, state)
            if x == 0:
                continue
            total += x
            for _ in range(x):
                ko = draw_cumulative(cum_o, K, uniform(state))
                acc = 0.0
                c = 0
                for t in range(nt):
                    Gm = G[rel_m[p0 + t]]
                    w = rel_w[p0 + t]
                    if s_is_head:
                        for k in range(K):
                            acc += w * Gm[k, ko] * us[k]
                            cum_s[c] = acc
                            c += 1
                    else:
                        for k in range(K):
                            acc += w * Gm[ko, k] * us[k]
                            cum_s[c] = acc
                            c += 1
                cell = draw_cumulative(cum_s, nt * K, uniform(state))
                t = cell // K
                ks = cell - t * K
                m = rel_m[p0 + t]
                if s_is_head:
                    i, k1, j, k2 = s, ks, o, ko
                else:
                    i, k1, j, k2 = o, ko, s, ks
                n_ent[i, k1] += 1
                if not sender_only:
                    n_ent[j, k2] += 1
                x_cells[m, k1, k2] += 1
                if track_rm:
                    x_rm[r, m] += 1
    return total


@njit(cache=True, nogil=True)
def sweep_self_pairs(entities: np.ndarray, rels: np.ndarray, values: np.ndarray,
                     binary: bool, U: np.ndarray, L: np.ndarray, G: np.ndarray,
                     rel_ptr: np.ndarray, rel_m: np.ndarray, rel_w: np.ndarray,
                     scale: np.ndarray, state: np.ndarray, n_ent: np.ndarray,
                     x_cells: np.ndarray, x_rm: np.ndarray, self_counts: np.ndarray) -> int:
    """Latent counts of the observed self-pairs (i, r, i) under a thinned rate, and their
    allocation (``self_pairs="scaled"``; :mod:`topiclink.families.bpbfm.algorithm`).

    The self-pair's bilinear count is ``Y ~ Poisson(rate)``, ``rate = u_i^T Lambda^r u_i``;
    the observed count is its thinning ``X ~ Binomial(Y, rho_r)`` (``rho_r = scale[r]``),
    so ``X ~ Poisson(rho_r rate)`` and ``Y - X ~ Poisson((1 - rho_r) rate)`` independent
    of X.  Per entry: X = 0 for a zero, a zero-truncated Poisson(rho_r rate) draw for a one
    of binary data, the value for counts; then ``Y - X`` ~ Poisson((1 - rho_r) rate), and
    Y is allocated over (m, k1, k2) by one categorical draw per unit (entity i counted
    as sender and receiver).  ``self_counts[r]`` accumulates (sum X, sum (Y - X)), the
    statistics of rho_r's Beta conditional.

    Parameters
    ----------
    entities, rels : int32 (E,) the self-pairs (i, r, i); values : float64 (E,) observed
        value (0 for a zero); binary : the values are ones of the Bernoulli-Poisson link
    U, L, G, rel_ptr, rel_m, rel_w : as :func:`sweep_groups`
    scale : float64 (R,) rho_r in [0, 1]
    state : uint64 (4,) xoshiro256** stream
    n_ent, x_cells, x_rm : as :func:`sweep_groups`; self_counts : int64 (R, 2)

    Returns
    -------
    the total of Y drawn
    """
    K = U.shape[1]
    KK = K * K
    R = rel_ptr.shape[0] - 1
    max_terms = 1
    for r in range(R):
        nt = rel_ptr[r + 1] - rel_ptr[r]
        if nt > max_terms:
            max_terms = nt
    cum = np.empty(max_terms * KK)
    track_rm = x_rm.shape[0] > 0
    total = 0
    for e in range(entities.shape[0]):
        i = entities[e]
        r = rels[e]
        ui = U[i]
        Lr = L[r]
        rate = 0.0
        for k1 in range(K):
            a = ui[k1]
            for k2 in range(K):
                rate += a * Lr[k1, k2] * ui[k2]
        rho = scale[r]
        if values[e] <= 0.0:
            x = 0
        elif binary:
            x = zero_truncated_poisson_draw(rho * rate, state)
        else:
            x = int(values[e])
        extra = poisson_draw((1.0 - rho) * rate, state)
        self_counts[r, 0] += x
        self_counts[r, 1] += extra
        y = x + extra
        if y == 0:
            continue
        total += y
        p0 = rel_ptr[r]
        nt = rel_ptr[r + 1] - p0
        acc = 0.0
        c = 0
        for t in range(nt):
            Gm = G[rel_m[p0 + t]]
            w = rel_w[p0 + t]
            for k1 in range(K):
                a = w * ui[k1]
                for k2 in range(K):
                    acc += a * Gm[k1, k2] * ui[k2]
                    cum[c] = acc
                    c += 1
        n_cells = nt * KK
        for _ in range(y):
            cell = draw_cumulative(cum, n_cells, uniform(state))
            t = cell // KK
            rem = cell - t * KK
            k1 = rem // K
            k2 = rem - k1 * K
            m = rel_m[p0 + t]
            n_ent[i, k1] += 1
            n_ent[i, k2] += 1
            x_cells[m, k1, k2] += 1
            if track_rm:
                x_rm[r, m] += 1
    return total


@njit(cache=True, nogil=True)
def entry_rates(heads: np.ndarray, rels: np.ndarray, tails: np.ndarray, U: np.ndarray,
                L: np.ndarray) -> np.ndarray:
    """``u_h^T Lambda^r u_t`` for every (h, r, t); ``L`` (R, K, K) the relation matrices."""
    return bilinear_rates(heads, rels, tails, U, L, U)


@njit(cache=True, nogil=True)
def bilinear_rates(heads: np.ndarray, rels: np.ndarray, tails: np.ndarray, U: np.ndarray,
                   L: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``u_h^T Lambda^r v_t`` for every (h, r, t); ``L`` (R, K, K) the relation matrices,
    ``V`` the tail factors."""
    n = heads.shape[0]
    K = U.shape[1]
    out = np.empty(n)
    for e in range(n):
        uh = U[heads[e]]
        ut = V[tails[e]]
        Lr = L[rels[e]]
        s = 0.0
        for k1 in range(K):
            a = uh[k1]
            if a == 0.0:
                continue
            row = 0.0
            for k2 in range(K):
                row += Lr[k1, k2] * ut[k2]
            s += a * row
        out[e] = s
    return out


@njit(cache=True)
def ones_loglik(rates: np.ndarray, values: np.ndarray, binary: bool) -> float:
    """``sum_e [log p(value_e | rate_e) + rate_e]`` over nonzero entries: binary,
    ``log(1 - exp(-rate)) + rate``; counts, ``x log(rate) - lgamma(x + 1)``.  Adding
    ``-sum of all observed cells' rates`` gives the training log-likelihood."""
    ll = 0.0
    for e in range(rates.shape[0]):
        lam = rates[e]
        if binary:
            if lam > 0.0:
                ll += math.log(-math.expm1(-lam)) + lam
            else:
                ll += -745.0
        else:
            x = values[e]
            ll += x * math.log(max(lam, 1e-300)) - math.lgamma(x + 1.0)
    return ll
