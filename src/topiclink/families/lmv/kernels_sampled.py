"""The pair part of stochastic LMV ("LMVS", Tan, Chan & Zheng 2016, Algorithm 2 steps 1-3).

For a minibatch S of documents, every ordered pair (d, d') with d in S or d' in S is
included with probability pi_dd' (one Bernoulli trial per pair, even when both ends are in
S), paper eq. (4.1) read as the text means it:

    pi = 1                 for a link (y_dd' = 1)
    pi = 1 / l_dd'         for a non-link with 2 <= l_dd' < n0
    pi = 1 / n0            for a non-link with l_dd' >= n0 or no directed path d -> d'

where l_dd' is the length of the shortest directed path d -> d' in the training graph.
(Eq. 4.1 is printed with "l > n0" in the first case: a typo, since the text says links get
pi = 1 and "pairs with a shortest path length of 100 or more have a probability of 0.01".)
With publication times, a non-link whose cited document is newer than the citing one is
not a pair at all (LMV(t)).  Each chosen pair's (kappa, nu) is converged as in batch LMV
(:func:`topiclink.families.lmv.kernels.converge_pair`) and only Horvitz-Thompson-weighted sums are
kept:

    column pass (cited d' = S[s]): gin[s] += nu / pi; T[s] += kappa nu^T / pi (non-links);
        S1 += kappa nu^T (links, pi = 1); gout_cols[pos(d)] += kappa / pi when d is in S;
    row pass (citing d = S[s], cited d' not in S): gout_rows[s] += kappa / pi.

Shortest paths come from a breadth-first search from each minibatch document only (on the
reversed graph for its column, on the graph for its row), cut at length n0 - 1; never all
pairs.  Each source document draws its trials from its own xoshiro256** stream seeded by
(``seed``, document, pass), so results do not depend on how sources are split between
threads.  Memory per call O(D + |S| K^2).

Imports only numpy, numba, math and topiclink.kernels (``tests/test_architecture.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.families.lmv.kernels import converge_pair, matvec, shifted_exp, softmax
from topiclink.kernels.rng import seed_state, splitmix64, uniform

__all__ = ["bfs_lengths", "inclusion_probability", "sampled_pair_statistics",
           "link_topic_pairs", "cited_table"]


@njit(cache=True, nogil=True)
def bfs_lengths(indptr: np.ndarray, indices: np.ndarray, source: int, max_len: int,
                dist: np.ndarray, queue: np.ndarray) -> int:
    """Breadth-first search along the CSR edges from ``source``.

    ``dist`` (int32, all -1 on entry) gets the path length of every document reached by a
    path shorter than ``max_len`` (``dist[source] = 0``); others stay -1.  ``queue`` (int64,
    length >= D) lists the documents set, in order; returns how many (to reset ``dist``).
    """
    dist[source] = 0
    queue[0] = source
    head = 0
    tail = 1
    while head < tail:
        v = queue[head]
        head += 1
        dv = dist[v]
        if dv + 1 >= max_len:
            continue
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            if dist[w] < 0:
                dist[w] = dv + 1
                queue[tail] = w
                tail += 1
    return tail


@njit(inline="always")
def inclusion_probability(is_link: bool, length: int, n0: int) -> float:
    """pi of a pair (module docstring): 1 for a link, 1/l for 2 <= l < n0, else 1/n0."""
    if is_link:
        return 1.0
    if 2 <= length < n0:
        return 1.0 / length
    return 1.0 / n0


@njit(cache=True, nogil=True)
def _cited_terms(et_c: np.ndarray, tb: float, etau: float, vs_link: np.ndarray,
                 bbar: np.ndarray, link: bool, vs: np.ndarray, vsT: np.ndarray,
                 nu0: np.ndarray, vs_nu0: np.ndarray, exp_w: np.ndarray) -> float:
    """The cited document's part of a pair: ``vs`` (link or non-link term), its transpose,
    nu0 = softmax(E log theta_c), ``vs @ nu0`` and its shifted exponentials; returns the
    shift (see :func:`topiclink.families.lmv.kernels.converge_pair`)."""
    K = et_c.shape[0]
    softmax(et_c, nu0)
    for i in range(K):
        for j in range(K):
            v = vs_link[i, j] + etau if link else math.log1p(-tb * bbar[i, j])
            vs[i, j] = v
            vsT[j, i] = v
    matvec(vs, nu0, vs_nu0)
    return shifted_exp(vs_nu0, exp_w)


@njit(cache=True, nogil=True)
def cited_table(elog_theta: np.ndarray, taubar: np.ndarray, bbar: np.ndarray, lo: int,
                hi: int, vs: np.ndarray, nu0: np.ndarray, vs_nu0: np.ndarray,
                exp_w: np.ndarray, shift: np.ndarray, exp_theta: np.ndarray,
                max_theta: np.ndarray) -> None:
    """Rows lo..hi of the per-document table :func:`sampled_pair_statistics` reads
    instead of recomputing it for every pair: the non-link terms of each document as the
    cited one (``vs`` (D, K, K) = log(1 - taubar_d' Bbar), ``nu0``, ``vs_nu0``, ``exp_w``
    (D, K) and ``shift`` (D,), exactly :func:`_cited_terms`) and its shifted exponentials
    as the citing one (``exp_theta`` (D, K) = exp(E log theta - max), ``max_theta`` (D,)).
    The same values as computed per pair, so the statistics are the same bit for bit."""
    K = elog_theta.shape[1]
    vsT = np.empty((K, K))
    for c in range(lo, hi):
        shift[c] = _cited_terms(elog_theta[c], taubar[c], 0.0, bbar, bbar, False, vs[c],
                                vsT, nu0[c], vs_nu0[c], exp_w[c])
        max_theta[c] = shifted_exp(elog_theta[c], exp_theta[c])


@njit(cache=True, nogil=True)
def sampled_pair_statistics(batch: np.ndarray, batch_pos: np.ndarray, lo: int, hi: int,
                            elog_theta: np.ndarray, out_ptr: np.ndarray,
                            out_dst: np.ndarray, in_ptr: np.ndarray, in_src: np.ndarray,
                            vs_link: np.ndarray, elog_tau: np.ndarray, taubar: np.ndarray,
                            bbar: np.ndarray, time: np.ndarray, n0: int, seed: np.uint64,
                            tol: float, max_inner: int, table_vs: np.ndarray,
                            table_nu0: np.ndarray, table_vs_nu0: np.ndarray,
                            table_exp: np.ndarray, table_shift: np.ndarray,
                            exp_theta: np.ndarray, max_theta: np.ndarray,
                            gout_cols: np.ndarray,
                            gout_rows: np.ndarray, gin: np.ndarray, S1: np.ndarray,
                            T: np.ndarray) -> tuple[int, int]:
    """Both passes of the minibatch documents ``batch[lo:hi]`` (module docstring).

    Parameters
    ----------
    batch : int64 (|S|,) the minibatch (distinct documents); batch_pos : int64 (D,) the
        position of each document in ``batch`` or -1.
    elog_theta : float64 (D, K).
    out_ptr, out_dst : CSR of the links by citing document; in_ptr, in_src : by cited
        document (both with sorted rows).
    vs_link, elog_tau, taubar, bbar, time : as for
    :func:`topiclink.families.lmv.kernels.pair_statistics`.
    n0 : the inclusion rule's cut-off; seed : the minibatch's 64-bit seed.
    table_vs, table_nu0, table_vs_nu0, table_exp, table_shift, exp_theta, max_theta :
        :func:`cited_table` of all D documents, or arrays with no rows to compute each
        pair's terms in place (the same numbers; the table saves a cited document's K^2
        logarithms for each of the ~|S| / n0 rows that include it).
    gout_cols : float64 (|S|, K) accumulated (private to the caller's block): kappa / pi of
        column-pass pairs whose citing document is in S.
    gout_rows, gin : float64 (|S|, K), T : float64 (|S|, K, K): rows lo..hi written.
    S1 : float64 (K, K) accumulated (private to the caller's block).

    Returns (total inner rounds, pairs included).
    """
    D, K = elog_theta.shape
    tabled = table_vs.shape[0] == D
    dist = np.full(D, -1, np.int32)
    queue = np.empty(D, np.int64)
    linked = np.zeros(D, np.bool_)
    state = np.empty(4, np.uint64)
    vs_non = np.empty((K, K))
    vs_nonT = np.empty((K, K))
    vs_lnk = np.empty((K, K))
    vs_lnkT = np.empty((K, K))
    nu0 = np.empty(K)
    nu0_lnk = np.empty(K)
    non_nu0 = np.empty(K)
    lnk_nu0 = np.empty(K)
    exp_non = np.empty(K)
    exp_lnk = np.empty(K)
    exp_d = np.empty(K)
    kappa = np.empty(K)
    nu = np.empty(K)
    work = np.empty(K)
    rounds = 0
    n_pairs = 0
    for s in range(lo, hi):
        # ---------------- column pass: every d citing (or possibly citing) c = S[s]
        c = batch[s]
        n_set = bfs_lengths(in_ptr, in_src, c, n0, dist, queue)
        for e in range(in_ptr[c], in_ptr[c + 1]):
            linked[in_src[e]] = True
        seed_state(splitmix64(seed ^ np.uint64(2 * c)), state)
        et_c = elog_theta[c]
        shift_non = _cited_terms(et_c, taubar[c], elog_tau[c], vs_link, bbar, False,
                                 vs_non, vs_nonT, nu0, non_nu0, exp_non)
        shift_lnk = _cited_terms(et_c, taubar[c], elog_tau[c], vs_link, bbar, True,
                                 vs_lnk, vs_lnkT, nu0_lnk, lnk_nu0, exp_lnk)
        t_c = time[c]
        Ts = T[s]
        for d in range(D):
            if d == c:
                continue
            link = linked[d]
            if not link and t_c > time[d]:  # False when either time is NaN
                continue
            pi = inclusion_probability(link, dist[d], n0)
            if not link and uniform(state) >= pi:
                continue
            if tabled:
                m = max_theta[d]
                exp_c = exp_theta[d]
            else:
                m = shifted_exp(elog_theta[d], exp_d)
                exp_c = exp_d
            if link:
                r, _ = converge_pair(elog_theta[d], et_c, vs_lnk, vs_lnkT, nu0_lnk, lnk_nu0,
                                 exp_c, exp_lnk, m + shift_lnk, kappa, nu, work, tol,
                                 max_inner)
            else:
                r, _ = converge_pair(elog_theta[d], et_c, vs_non, vs_nonT, nu0, non_nu0,
                                 exp_c, exp_non, m + shift_non, kappa, nu, work, tol,
                                 max_inner)
            rounds += r
            n_pairs += 1
            w = 1.0 / pi
            for j in range(K):
                gin[s, j] += w * nu[j]
            p = batch_pos[d]
            if p >= 0:
                for i in range(K):
                    gout_cols[p, i] += w * kappa[i]
            target = S1 if link else Ts
            for i in range(K):
                ki = w * kappa[i]
                for j in range(K):
                    target[i, j] += ki * nu[j]
        for e in range(in_ptr[c], in_ptr[c + 1]):
            linked[in_src[e]] = False
        for q in range(n_set):
            dist[queue[q]] = -1
        # ---------------- row pass: d = S[s] citing (or possibly citing) c' not in S
        d = c
        n_set = bfs_lengths(out_ptr, out_dst, d, n0, dist, queue)
        for e in range(out_ptr[d], out_ptr[d + 1]):
            linked[out_dst[e]] = True
        seed_state(splitmix64(seed ^ np.uint64(2 * d + 1)), state)
        et_d = elog_theta[d]
        m_d = shifted_exp(et_d, exp_d)
        t_d = time[d]
        for cc in range(D):
            if cc == d or batch_pos[cc] >= 0:
                continue  # pairs with both ends in S had their trial in the column pass
            link = linked[cc]
            if not link and time[cc] > t_d:
                continue
            pi = inclusion_probability(link, dist[cc], n0)
            if not link and uniform(state) >= pi:
                continue
            if tabled and not link:
                vs_cc = table_vs[cc]
                for i in range(K):
                    for j in range(K):
                        vs_nonT[j, i] = vs_cc[i, j]
                r, _ = converge_pair(et_d, elog_theta[cc], vs_cc, vs_nonT, table_nu0[cc],
                                     table_vs_nu0[cc], exp_d, table_exp[cc],
                                     m_d + table_shift[cc], kappa, nu, work, tol, max_inner)
            else:
                shift = _cited_terms(elog_theta[cc], taubar[cc], elog_tau[cc], vs_link,
                                     bbar, link, vs_non, vs_nonT, nu0, non_nu0, exp_non)
                r, _ = converge_pair(et_d, elog_theta[cc], vs_non, vs_nonT, nu0, non_nu0,
                                     exp_d, exp_non, m_d + shift, kappa, nu, work, tol,
                                     max_inner)
            rounds += r
            n_pairs += 1
            w = 1.0 / pi
            for i in range(K):
                gout_rows[s, i] += w * kappa[i]
        for e in range(out_ptr[d], out_ptr[d + 1]):
            linked[out_dst[e]] = False
        for q in range(n_set):
            dist[queue[q]] = -1
    return rounds, n_pairs


@njit(cache=True, nogil=True)
def link_topic_pairs(elog_theta: np.ndarray, src: np.ndarray, dst: np.ndarray,
                     vs_link: np.ndarray, elog_tau: np.ndarray, tol: float,
                     max_inner: int, topics: np.ndarray) -> None:
    """(argmax kappa, argmax nu) of every link (src[l] cites dst[l]) at the current
    globals, written to ``topics`` (L, 2) int32; a self-link gets (-1, -1)."""
    D, K = elog_theta.shape
    vs = np.empty((K, K))
    vsT = np.empty((K, K))
    nu0 = np.empty(K)
    vs_nu0 = np.empty(K)
    exp_w = np.empty(K)
    exp_d = np.empty(K)
    kappa = np.empty(K)
    nu = np.empty(K)
    work = np.empty(K)
    dummy = np.empty((K, K))
    for e in range(src.shape[0]):
        d, c = src[e], dst[e]
        if d == c:
            topics[e, 0] = -1
            topics[e, 1] = -1
            continue
        shift = _cited_terms(elog_theta[c], 1.0, elog_tau[c], vs_link, dummy, True, vs,
                             vsT, nu0, vs_nu0, exp_w)
        m = shifted_exp(elog_theta[d], exp_d)
        converge_pair(elog_theta[d], elog_theta[c], vs, vsT, nu0, vs_nu0, exp_d, exp_w,
                  m + shift, kappa, nu, work, tol, max_inner)
        bi = 0
        bj = 0
        for i in range(1, K):
            if kappa[i] > kappa[bi]:
                bi = i
            if nu[i] > nu[bj]:
                bj = i
        topics[e, 0] = bi
        topics[e, 1] = bj
