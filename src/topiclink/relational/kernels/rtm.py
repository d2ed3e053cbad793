"""Collapsed Gibbs Z step of the relational topic models (gRTM family), exact at O(K)/token.

After augmentation every training pair (i, j) contributes, for both losses,
``log psi_ij = a_ij omega_ij - b_ij omega_ij^2 / 2`` with ``omega_ij = zbar_i^T U zbar_j``
(``docs/design/grtm.md``).  Moving token n of document i to topic k changes
``omega_ij`` by ``u_jk / N_i`` (out-pairs, ``u_j = U zbar_j``) or ``v_jk / N_i`` (in-pairs,
``v_j = U^T zbar_j``), so the link part of the full conditional (Chen et al. 2015, eq. 13
and its hinge analogue, expanded) is

    L_i(k) = r_ik / N_i - (C_i^-n . Q_i[:, k]) / N_i^2 - Q_i[k, k] / (2 N_i^2),
    r_i = sum_out a_ij u_j + sum_in a_ji v_j,
    Q_i = sum_out b_ij u_j u_j^T + sum_in b_ji v_j v_j^T,

and ``p(z_n = k) ∝ (C_ik^-n + alpha_k)(C_kw^-n + beta)/(C_k^-n + V beta) exp(L_i(k))``
(``alpha_ik`` with per-document priors: ``alpha`` (1, K) or (D, K), as
:func:`topiclink.topics.kernels.lda.sweep`).
``h_i = C_i^T Q_i`` is kept up to date in O(K) per token (``h -= Q[old]; h += Q[new]``);
rows of Q_i are formed lazily, only for topics that tokens leave or enter.
With ``approx=True`` (the paper's Approx-gRTM) ``h_i`` stays at its value at the start of
the document, so ``exp(L_i)`` is computed once per document.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from topiclink.kernels.rng import uniform
from topiclink.kernels.sampling import BLOCK, check_prior, draw_blocked, prior_row


@njit(cache=True)
def gather_pairs(i: int, Uz: np.ndarray, Vz: np.ndarray, out_ptr: np.ndarray,
                  out_nbr: np.ndarray, out_a: np.ndarray, out_b: np.ndarray,
                  in_ptr: np.ndarray, in_nbr: np.ndarray, in_a: np.ndarray,
                  in_b: np.ndarray, W: np.ndarray, wa: np.ndarray, wb: np.ndarray) -> int:
    """Copy document i's pair vectors (u_j for out-pairs, v_j for in-pairs) into the rows
    of W with their a and b; returns the number of pairs (W has room for them)."""
    K = W.shape[1]
    n = 0
    for e in range(out_ptr[i], out_ptr[i + 1]):
        src = Uz[out_nbr[e]]
        for k in range(K):
            W[n, k] = src[k]
        wa[n] = out_a[e]
        wb[n] = out_b[e]
        n += 1
    for e in range(in_ptr[i], in_ptr[i + 1]):
        src = Vz[in_nbr[e]]
        for k in range(K):
            W[n, k] = src[k]
        wa[n] = in_a[e]
        wb[n] = in_b[e]
        n += 1
    return n


@njit(cache=True)
def _doc_link_terms(n: int, W: np.ndarray, wa: np.ndarray, wb: np.ndarray, cd: np.ndarray,
                    r: np.ndarray, qdiag: np.ndarray, h: np.ndarray, s: np.ndarray) -> None:
    """r = sum a_j w_j, qdiag_k = sum b_j w_jk^2 and h = C_d^T Q = sum b_j (C_d . w_j) w_j,
    all in O(n K) without forming Q."""
    K = W.shape[1]
    for k in range(K):
        r[k] = 0.0
        qdiag[k] = 0.0
        h[k] = 0.0
    for j in range(n):
        wj = W[j]
        acc = 0.0
        for k in range(K):
            acc += cd[k] * wj[k]
        s[j] = acc
        aj = wa[j]
        bj = wb[j]
        bs = bj * acc
        for k in range(K):
            r[k] += aj * wj[k]
            qdiag[k] += bj * wj[k] * wj[k]
            h[k] += bs * wj[k]


@njit(cache=True)
def _dense_link_terms(n: int, W: np.ndarray, wa: np.ndarray, wb: np.ndarray,
                      WbA: np.ndarray, QR: np.ndarray, cd: np.ndarray, r: np.ndarray,
                      qdiag: np.ndarray, h: np.ndarray, Q: np.ndarray,
                      have: np.ndarray) -> None:
    """All of Q and r with one BLAS product, ``[Q | r] = W^T [diag(b) W | a]``, then
    ``qdiag = diag(Q)`` and ``h = C_d^T Q`` (O(n K^2) flops at matrix-multiply speed:
    cheaper than the row-by-row path once a document touches most topics)."""
    K = W.shape[1]
    for j in range(n):
        bj = wb[j]
        for k in range(K):
            WbA[j, k] = bj * W[j, k]
        WbA[j, K] = wa[j]
    np.dot(W[:n].T, WbA[:n], QR)
    for k in range(K):
        for l in range(K):
            Q[k, l] = QR[k, l]
        r[k] = QR[k, K]
        qdiag[k] = QR[k, k]
        have[k] = True
    for l in range(K):
        acc = 0.0
        for k in range(K):
            acc += cd[k] * Q[k, l]
        h[l] = acc


@njit(cache=True)
def _q_row(k: int, n: int, W: np.ndarray, wb: np.ndarray, Q: np.ndarray,
           have: np.ndarray) -> np.ndarray:
    """Row k of Q = sum_j b_j w_j w_j^T, computed on first use (O(n K)) and cached."""
    if not have[k]:
        K = W.shape[1]
        row = Q[k]
        for l in range(K):
            row[l] = 0.0
        for j in range(n):
            c = wb[j] * W[j, k]
            wj = W[j]
            for l in range(K):
                row[l] += c * wj[l]
        have[k] = True
    return Q[k]


@njit(cache=True)
def _exp_rows(k: int, n: int, W: np.ndarray, wb: np.ndarray, Q: np.ndarray,
              have: np.ndarray, eq: np.ndarray, eq_inv: np.ndarray, have_exp: np.ndarray,
              scale: float) -> None:
    """Cache exp(+Q[k] * scale) and exp(-Q[k] * scale) (the factors by which moving a
    token out of / into topic k multiplies exp(L))."""
    if not have_exp[k]:
        row = _q_row(k, n, W, wb, Q, have)
        K = W.shape[1]
        for l in range(K):
            e = math.exp(row[l] * scale)
            eq[k, l] = e
            eq_inv[k, l] = 1.0 / e
        have_exp[k] = True


# exp(L) is kept multiplicatively while L drifts by at most 2 max|Q| / N_d within a
# document; beyond this bound the kernel exponentiates L afresh for every token instead
_MAX_DRIFT = 600.0
# Documents with at least K / _DENSE_TOKENS_PER_TOPIC tokens form all of Q with one matrix
# product; shorter ones form only the rows their tokens touch (benchmarks/grtm_speed.py)
_DENSE_TOKENS_PER_TOPIC = 2


@njit(cache=True)
def max_degree(out_ptr: np.ndarray, in_ptr: np.ndarray) -> int:
    """Largest number of pairs of one document (at least 1: scratch-buffer size)."""
    m = 1
    for d in range(out_ptr.shape[0] - 1):
        m = max(m, out_ptr[d + 1] - out_ptr[d] + in_ptr[d + 1] - in_ptr[d])
    return m


@njit(cache=True)
def _begin_document(d: int, cd: np.ndarray, n_tok: int, Uz: np.ndarray, Vz: np.ndarray,
                    out_ptr: np.ndarray, out_nbr: np.ndarray, out_a: np.ndarray,
                    out_b: np.ndarray, in_ptr: np.ndarray, in_nbr: np.ndarray,
                    in_a: np.ndarray, in_b: np.ndarray, W: np.ndarray, wa: np.ndarray,
                    wb: np.ndarray, s: np.ndarray, r: np.ndarray, qdiag: np.ndarray,
                    h: np.ndarray, base: np.ndarray, have: np.ndarray,
                    have_exp: np.ndarray, dense: bool, WbA: np.ndarray, QR: np.ndarray,
                    Q: np.ndarray) -> int:
    """Per-document set-up shared by the sweeps: gather the pair vectors, compute r, the
    diagonal of Q, h = C_d^T Q and base_k = r_k / N - Q_kk / (2 N^2), forget the cached
    rows of Q (``dense``: form all of Q now, see :func:`_dense_link_terms`).  Returns the
    number of pairs (all terms are zero without pairs)."""
    n_pairs = gather_pairs(d, Uz, Vz, out_ptr, out_nbr, out_a, out_b, in_ptr, in_nbr,
                            in_a, in_b, W, wa, wb)
    for k in range(r.shape[0]):
        have[k] = False
        have_exp[k] = False
    if dense and n_pairs > 0:
        _dense_link_terms(n_pairs, W, wa, wb, WbA, QR, cd, r, qdiag, h, Q, have)
    else:
        _doc_link_terms(n_pairs, W, wa, wb, cd, r, qdiag, h, s)
    inv_n = 1.0 / n_tok
    for k in range(r.shape[0]):
        base[k] = r[k] * inv_n - 0.5 * qdiag[k] * inv_n * inv_n
    return n_pairs


@njit(cache=True)
def refresh_document_rows(d: int, cd: np.ndarray, inv_n: float, U: np.ndarray,
                          Uz: np.ndarray, Vz: np.ndarray, diagonal: bool) -> None:
    """Document d's ``Uz[d] = U zbar_d`` and ``Vz[d] = U^T zbar_d`` from its counts
    ``cd`` (zbar_d = cd * inv_n): O(K^2), or O(K) for a diagonal U (the same sums with the
    zeros skipped; ``0.0 + x`` keeps the sign of a zero as the full sum gives it)."""
    K = cd.shape[0]
    if diagonal:
        for k in range(K):
            x = 0.0 + U[k, k] * cd[k]
            Uz[d, k] = x * inv_n
            Vz[d, k] = x * inv_n
        return
    for k in range(K):
        su = 0.0
        sv = 0.0
        for l in range(K):
            su += U[k, l] * cd[l]
            sv += U[l, k] * cd[l]
        Uz[d, k] = su * inv_n
        Vz[d, k] = sv * inv_n


@njit(cache=True, nogil=True)
def sweep_relational(words: np.ndarray, offsets: np.ndarray, z: np.ndarray, ndk: np.ndarray,
                     nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray, beta: float,
                     state: np.ndarray, U: np.ndarray, Uz: np.ndarray, Vz: np.ndarray,
                     out_ptr: np.ndarray, out_nbr: np.ndarray, out_a: np.ndarray,
                     out_b: np.ndarray, in_ptr: np.ndarray, in_nbr: np.ndarray,
                     in_a: np.ndarray, in_b: np.ndarray, approx: bool,
                     refresh: bool = True) -> None:
    """One Z sweep of a relational topic model over every document (in place); see
    :func:`sweep_relational_range`."""
    sweep_relational_range(words, offsets, z, ndk, nwk, nk, alpha, beta, state, U, Uz, Vz,
                           out_ptr, out_nbr, out_a, out_b, in_ptr, in_nbr, in_a, in_b,
                           approx, 0, offsets.shape[0] - 1, refresh)


@njit(cache=True, nogil=True)
def sweep_relational_range(words: np.ndarray, offsets: np.ndarray, z: np.ndarray,
                           ndk: np.ndarray, nwk: np.ndarray, nk: np.ndarray,
                           alpha: np.ndarray, beta: float, state: np.ndarray, U: np.ndarray,
                           Uz: np.ndarray, Vz: np.ndarray, out_ptr: np.ndarray,
                           out_nbr: np.ndarray, out_a: np.ndarray, out_b: np.ndarray,
                           in_ptr: np.ndarray, in_nbr: np.ndarray, in_a: np.ndarray,
                           in_b: np.ndarray, approx: bool, d_start: int, d_end: int,
                           refresh: bool = True) -> None:
    """The Z sweep of documents ``d_start:d_end`` of a relational topic model (in place;
    releases the GIL, so other threads can draw the augmentation of finished pairs).

    Per document: gather its pair vectors w_j (u_j or v_j) into a (deg x K) block; r, the
    diagonal of Q and h = C^T Q cost O(deg K); rows of Q are formed only for the topics a
    token leaves or enters (at most min(N_d, K) rows, O(deg K) each) and cached, so a
    document costs O(N_d K + min(N_d, K) deg K) instead of O(deg K^2).

    Parameters
    ----------
    words, offsets, z, ndk, nwk, nk, alpha, beta, state : as :func:`kernels.lda.sweep`
    U : float64 (K, K) weight matrix (diagonal models pass ``diag(eta)``)
    Uz, Vz : float64 (D, K), rows ``U zbar_j`` and ``U^T zbar_j``; the rows of each swept
        document are refreshed after its sweep, so later documents see its new zbar
    out_ptr, out_nbr, out_a, out_b : CSR over source documents of the training pairs
        (neighbour j and the pair's a_ij, b_ij); ``in_*`` the same over target documents
    approx : keep h_d fixed per document (Approx-gRTM / Approx-gMMRTM)
    d_start, d_end : the documents swept, in order
    refresh : refresh the swept documents' rows of Uz / Vz (O(K^2) a document); False
        where no later pair reads them (gSLDA's virtual node)
    """
    K = nk.shape[0]
    V = nwk.shape[0]
    vbeta = V * beta
    kp = ((K + BLOCK - 1) // BLOCK) * BLOCK
    n_blocks = kp // BLOCK
    p = np.zeros(kp)
    block_sums = np.zeros(n_blocks)
    inv = np.empty(K)
    for k in range(K):
        inv[k] = 1.0 / (nk[k] + vbeta)
    max_deg = max_degree(out_ptr, in_ptr)
    W = np.empty((max_deg, K))
    WbA = np.empty((max_deg, K + 1))
    QR = np.empty((K, K + 1))
    wa = np.empty(max_deg)
    wb = np.empty(max_deg)
    s = np.empty(max_deg)
    r = np.zeros(K)
    qdiag = np.zeros(K)
    Q = np.zeros((K, K))
    eq = np.zeros((K, K))
    eq_inv = np.zeros((K, K))
    have = np.zeros(K, dtype=np.bool_)
    have_exp = np.zeros(K, dtype=np.bool_)
    h = np.zeros(K)
    base = np.zeros(K)
    link = np.zeros(K)
    check_prior(alpha, offsets.shape[0] - 1, K)
    # a diagonal U (diagonal models) refreshes u_d in O(K): the same sums, zeros skipped
    diagonal = True
    for k in range(K):
        for l in range(K):
            if k != l and U[k, l] != 0.0:
                diagonal = False
    for d in range(d_start, d_end):
        start = offsets[d]
        stop = offsets[d + 1]
        n_tok = stop - start
        if n_tok == 0:
            continue
        cd = ndk[d]
        ad = prior_row(alpha, d)
        # a long document touches most topics: form all of Q at once (BLAS)
        dense = not approx and n_tok * _DENSE_TOKENS_PER_TOPIC >= K
        n_pairs = _begin_document(d, cd, n_tok, Uz, Vz, out_ptr, out_nbr, out_a, out_b,
                                  in_ptr, in_nbr, in_a, in_b, W, wa, wb, s, r, qdiag, h,
                                  base, have, have_exp, dense, WbA, QR, Q)
        inv_n = 1.0 / n_tok
        inv_n2 = inv_n * inv_n
        cached = False
        if n_pairs > 0:
            # |Q_kl| <= sqrt(Q_kk Q_ll) (Q is positive semi-definite)
            qmax = 0.0
            for k in range(K):
                qmax = max(qmax, qdiag[k])
            cached = approx or 2.0 * qmax * inv_n < _MAX_DRIFT
            if cached:
                m = -np.inf
                for k in range(K):
                    link[k] = base[k] - h[k] * inv_n2
                    m = max(m, link[k])
                for k in range(K):
                    link[k] = math.exp(link[k] - m)
        for i in range(start, stop):
            w = words[i]
            cw = nwk[w]
            old = z[i]
            cd[old] -= 1
            cw[old] -= 1
            nk[old] -= 1
            inv[old] = 1.0 / (nk[old] + vbeta)
            if n_pairs == 0:
                for k in range(K):
                    p[k] = (cd[k] + ad[k]) * (cw[k] + beta) * inv[k]
            elif approx:
                for k in range(K):
                    p[k] = (cd[k] + ad[k]) * (cw[k] + beta) * inv[k] * link[k]
            elif cached:
                # link holds exp(L - m); removing the token adds Q[old] / N^2 to L
                if not have_exp[old]:
                    _exp_rows(old, n_pairs, W, wb, Q, have, eq, eq_inv, have_exp, inv_n2)
                eo = eq[old]
                for k in range(K):
                    link[k] *= eo[k]
                    p[k] = (cd[k] + ad[k]) * (cw[k] + beta) * inv[k] * link[k]
            else:
                qo = _q_row(old, n_pairs, W, wb, Q, have)
                m = -np.inf
                for k in range(K):
                    h[k] -= qo[k]
                    link[k] = base[k] - h[k] * inv_n2
                    m = max(m, link[k])
                for k in range(K):
                    p[k] = (cd[k] + ad[k]) * (cw[k] + beta) * inv[k] * math.exp(link[k] - m)
            new = draw_blocked(p, block_sums, n_blocks, uniform(state))
            z[i] = new
            cd[new] += 1
            cw[new] += 1
            nk[new] += 1
            inv[new] = 1.0 / (nk[new] + vbeta)
            if n_pairs > 0 and not approx:
                if cached:
                    if not have_exp[new]:
                        _exp_rows(new, n_pairs, W, wb, Q, have, eq, eq_inv, have_exp,
                                  inv_n2)
                    en = eq_inv[new]
                    for k in range(K):
                        link[k] *= en[k]
                else:
                    qn = _q_row(new, n_pairs, W, wb, Q, have)
                    for k in range(K):
                        h[k] += qn[k]
        # refresh this document's u_d = U zbar_d and v_d = U^T zbar_d
        if not refresh:
            continue
        refresh_document_rows(d, cd, inv_n, U, Uz, Vz, diagonal)


@njit(cache=True)
def link_term_sweep(z: np.ndarray, offsets: np.ndarray, ndk: np.ndarray,
                    alpha: np.ndarray, state: np.ndarray, Uz: np.ndarray, Vz: np.ndarray,
                    out_ptr: np.ndarray, out_nbr: np.ndarray, out_a: np.ndarray,
                    out_b: np.ndarray, in_ptr: np.ndarray, in_nbr: np.ndarray,
                    in_a: np.ndarray, in_b: np.ndarray) -> None:
    """Gibbs sweep over the unobserved-word tokens of documents known only by their links.

    p(z_n = k) ∝ (C_dk^-n + alpha_k) exp(L_d(k)); used to predict the words of a new
    document from its links to training documents (``Uz``/``Vz`` of the training documents,
    pairs indexed by the new documents); ``offsets`` give each new document's token range.
    ``alpha``: (K,), or (1, K) / (D, K) per new document (as :func:`kernels.lda.sweep`).
    """
    K = ndk.shape[1]
    D = offsets.shape[0] - 1
    kp = ((K + BLOCK - 1) // BLOCK) * BLOCK
    n_blocks = kp // BLOCK
    p = np.zeros(kp)
    block_sums = np.zeros(n_blocks)
    max_deg = max_degree(out_ptr, in_ptr)
    W = np.empty((max_deg, K))
    WbA = np.empty((max_deg, K + 1))
    QR = np.empty((K, K + 1))
    wa = np.empty(max_deg)
    wb = np.empty(max_deg)
    s = np.empty(max_deg)
    r = np.zeros(K)
    qdiag = np.zeros(K)
    Q = np.zeros((K, K))
    have = np.zeros(K, dtype=np.bool_)
    have_exp = np.zeros(K, dtype=np.bool_)
    h = np.zeros(K)
    base = np.zeros(K)
    link = np.zeros(K)
    check_prior(alpha, D, K)
    for d in range(D):
        start = offsets[d]
        stop = offsets[d + 1]
        n_tok = stop - start
        if n_tok == 0:
            continue
        cd = ndk[d]
        ad = prior_row(alpha, d)
        n_pairs = _begin_document(d, cd, n_tok, Uz, Vz, out_ptr, out_nbr, out_a, out_b,
                                  in_ptr, in_nbr, in_a, in_b, W, wa, wb, s, r, qdiag, h,
                                  base, have, have_exp, False, WbA, QR, Q)
        inv_n = 1.0 / n_tok
        inv_n2 = inv_n * inv_n
        for i in range(start, stop):
            old = z[i]
            cd[old] -= 1
            qo = _q_row(old, n_pairs, W, wb, Q, have)
            m = -np.inf
            for k in range(K):
                h[k] -= qo[k]
                link[k] = base[k] - h[k] * inv_n2
                m = max(m, link[k])
            for k in range(K):
                p[k] = (cd[k] + ad[k]) * math.exp(link[k] - m)
            new = draw_blocked(p, block_sums, n_blocks, uniform(state))
            z[i] = new
            cd[new] += 1
            qn = _q_row(new, n_pairs, W, wb, Q, have)
            for k in range(K):
                h[k] += qn[k]


@njit(cache=True, nogil=True)
def pair_dots(X: np.ndarray, Y: np.ndarray, source: np.ndarray, target: np.ndarray,
              row_scale: np.ndarray) -> np.ndarray:
    """``out[p] = row_scale[i] * X[i] . Y[j]`` for pair p = (i, j), O(K) per pair; releases
    the GIL.  omega_ij = zbar_i . (U zbar_j): ``X = zbar``, ``Y = zbar U^T`` and unit scales,
    or ``X`` the live topic counts and ``row_scale = 1 / N``."""
    n = source.shape[0]
    K = X.shape[1]
    out = np.empty(n)
    for p in range(n):
        i = source[p]
        x = X[i]
        y = Y[target[p]]
        acc = 0.0
        for k in range(K):
            acc += x[k] * y[k]
        out[p] = acc * row_scale[i]
    return out
