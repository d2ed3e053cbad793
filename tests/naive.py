"""Plain-NumPy reference versions of the Numba kernels, for tests on tiny inputs."""

from __future__ import annotations

import numpy as np
from scipy import stats
from scipy.special import gammaln


def prior_row(alpha, d):
    """Document d's Dirichlet prior: ``alpha`` (K,) shared, or row d of (D, K) (row 0 of a
    single-row (1, K))."""
    alpha = np.asarray(alpha)
    if alpha.ndim == 1:
        return alpha
    return alpha[0] if alpha.shape[0] == 1 else alpha[d]


def lda_sweep(words, offsets, z, ndk, nwk, nk, alpha, beta, uniforms):
    """One collapsed Gibbs sweep consuming one uniform per token (cumulative search);
    ``alpha`` (K,) or per document (1, K) / (D, K)."""
    V = nwk.shape[0]
    t = 0
    for d in range(len(offsets) - 1):
        ad = prior_row(alpha, d)
        for i in range(offsets[d], offsets[d + 1]):
            w, old = words[i], z[i]
            ndk[d, old] -= 1
            nwk[w, old] -= 1
            nk[old] -= 1
            p = (ndk[d] + ad) * (nwk[w] + beta) / (nk + V * beta)
            c = np.cumsum(p)
            new = int(np.searchsorted(c, uniforms[t] * c[-1], side="right"))
            t += 1
            z[i] = new
            ndk[d, new] += 1
            nwk[w, new] += 1
            nk[new] += 1


def lda_sweep_fixed_topics(words, offsets, z, ndk, phi_wk, alpha, uniforms):
    """Gibbs sweep with fixed topics, p(z_n = k) ∝ (C_dk^-n + alpha_dk) phi_{k w_n}, one
    uniform per token."""
    t = 0
    for d in range(len(offsets) - 1):
        ad = prior_row(alpha, d)
        for i in range(offsets[d], offsets[d + 1]):
            old = z[i]
            ndk[d, old] -= 1
            c = np.cumsum((ndk[d] + ad) * phi_wk[words[i]])
            new = int(np.searchsorted(c, uniforms[t] * c[-1], side="right"))
            t += 1
            z[i] = new
            ndk[d, new] += 1


def lda_log_joint(ndk, nwk, alpha, beta):
    """log p(w, z) of collapsed LDA by the textbook formula; ``alpha`` (K,) or per document
    (1, K) / (D, K)."""
    K = ndk.shape[1]
    V = nwk.shape[0]
    nk = nwk.sum(axis=0)
    ll = K * (gammaln(V * beta) - V * gammaln(beta))
    ll += (gammaln(nwk + beta).sum(axis=0) - gammaln(nk + V * beta)).sum()
    a = np.broadcast_to(np.asarray(alpha, dtype=float), ndk.shape)
    ll += (gammaln(a.sum(axis=1)) - gammaln(a).sum(axis=1)).sum()
    ll += (gammaln(ndk + a).sum(axis=1) - gammaln(ndk.sum(axis=1) + a.sum(axis=1))).sum()
    return float(ll)


def rtm_sweep(words, offsets, z, ndk, nwk, nk, alpha, beta, uniforms, U, source, target,
              a, b, approx=False):
    """Relational Z sweep by brute force: for every token and topic k recompute omega of
    every pair touching the document from the counts, and add sum a omega - b omega^2 / 2.
    (With ``approx``, the document's other tokens are frozen at the document's start;
    ``alpha`` (K,) or per document (1, K) / (D, K).)"""
    V = nwk.shape[0]
    K = nk.shape[0]
    lengths = np.diff(offsets)
    t = 0
    for d in range(len(offsets) - 1):
        start_counts = ndk[d].astype(float).copy()
        touching = np.flatnonzero((source == d) | (target == d))
        ad = prior_row(alpha, d)
        for i in range(offsets[d], offsets[d + 1]):
            w, old = words[i], z[i]
            ndk[d, old] -= 1
            nwk[w, old] -= 1
            nk[old] -= 1
            logp = np.log((ndk[d] + ad) * (nwk[w] + beta) / (nk + V * beta))
            for k in range(K):
                rest = start_counts if approx else ndk[d].astype(float)
                for e in touching:
                    s, tt = source[e], target[e]
                    zs = ndk[s] / lengths[s]
                    zt = ndk[tt] / lengths[tt]
                    own = (rest + np.eye(K)[k]) / lengths[d]
                    if s == d:
                        zs = own
                    if tt == d:
                        zt = own
                    om = zs @ U @ zt
                    logp[k] += a[e] * om - 0.5 * b[e] * om * om
            p = np.exp(logp - logp.max())
            c = np.cumsum(p)
            new = int(np.searchsorted(c, uniforms[t] * c[-1], side="right"))
            t += 1
            z[i] = new
            ndk[d, new] += 1
            nwk[w, new] += 1
            nk[new] += 1


def lmv_pair_statistics(elog_theta, links, vs_link, elog_tau, taubar, Bbar, time=None,
                        tol=1e-6, max_inner=100, link_nu=None):
    """Plain-NumPy twin of ``topiclink.families.lmv.kernels.pair_statistics`` over ALL pairs.

    ``links``: (L, 2) array of (citing, cited) pairs.  Builds the D x D link matrix and the
    per-pair term explicitly and keeps every pair's (kappa, nu) (NaN for skipped pairs):
    the returned dict has the streamed statistics plus ``kappa``, ``nu`` (D, D, K).
    ``link_nu`` (L, K), rows aligned with ``links``: a link starts from its row when the row
    is nonzero, and the converged nu is written back.
    """
    D, K = elog_theta.shape
    y = np.zeros((D, D), bool)
    row_of = {}
    for e, (d, c) in enumerate(links):
        y[d, c] = True
        row_of[(int(d), int(c))] = e
    if time is None:
        time = np.full(D, np.nan)
    out = {"gamma_out": np.zeros((D, K)), "gamma_in": np.zeros((D, K)),
           "S1": np.zeros((K, K)), "T": np.zeros((D, K, K)), "bound": 0.0, "rounds": 0,
           "n_pairs": 0, "kappa": np.full((D, D, K), np.nan), "nu": np.full((D, D, K), np.nan),
           "topics": {}}
    for d in range(D):
        for c in range(D):
            if d == c:
                continue
            if not y[d, c] and time[c] > time[d]:
                continue
            if y[d, c]:
                vs = vs_link + elog_tau[c]
            else:
                vs = np.log(1.0 - taubar[c] * Bbar)
            nu = np.exp(elog_theta[c] - elog_theta[c].max())
            nu /= nu.sum()
            e = row_of.get((d, c))
            if e is not None and link_nu is not None and link_nu[e].sum() > 0:
                nu = link_nu[e].copy()
            r = 0
            while True:
                r += 1
                x = elog_theta[d] + vs @ nu
                kappa = np.exp(x - x.max())
                kappa /= kappa.sum()
                z = elog_theta[c] + kappa @ vs
                new = np.exp(z - z.max())
                new /= new.sum()
                change = np.abs(new - nu).max()
                nu = new
                if change < tol or r >= max_inner:
                    break
            out["rounds"] += r
            out["n_pairs"] += 1
            out["bound"] += (kappa @ vs @ nu + kappa @ (elog_theta[d] - np.log(kappa))
                             + nu @ (elog_theta[c] - np.log(nu)))
            out["kappa"][d, c], out["nu"][d, c] = kappa, nu
            out["gamma_out"][d] += kappa
            out["gamma_in"][c] += nu
            if y[d, c]:
                out["S1"] += np.outer(kappa, nu)
                out["topics"][(d, c)] = (int(np.argmax(kappa)), int(np.argmax(nu)))
                if link_nu is not None:
                    link_nu[e] = nu
            else:
                out["T"][c] += np.outer(kappa, nu)
    return out


def bpbfm_sweep_groups(groups, U, L, G, rel_ptr, rel_m, rel_w, sender_only, state, n_ent,
                       x_cells, x_rm, draws):
    """Latent counts and their allocation, group by group (BPBFM kernel twin).

    ``groups`` an :class:`~topiclink.families.bpbfm.grouping.EntryGroups`.  Per group of
    relation r sharing entity s: ``P = Lambda^r^T u_s`` (s the head) or ``Lambda^r u_s``
    (s the tail), each sum in index order; per entry with other entity o the rate
    ``sum_k u_ok P_k`` (running sums ``cum_o``), X from ``draws`` (``draws.ztp(lam,
    state)``, ``draws.poisson(lam, state)``, ``draws.uniform(state)``: the kernel's own
    scalar draws on the same stream); per unit, o's factor is the first k with ``cum_o[k]
    > u * cum_o[-1]``, then (term, s's factor) the same way from the running sums of ``w
    G^m[k1, k2] u_s,k_s`` in (term, k_s) order."""
    K = U.shape[1]
    total = 0

    def first_above(cum, u):
        if not cum[-1] > 0:
            return min(int(u * cum.size), cum.size - 1)
        return min(int(np.searchsorted(cum, u * cum[-1], side="right")), cum.size - 1)

    for g in range(groups.n_groups):
        r, s = groups.group_rel[g], groups.group_entity[g]
        s_is_head = bool(groups.group_by_head[g])
        if s_is_head:
            P = np.cumsum(U[s][:, None] * L[r], axis=0)[-1]
        else:
            P = np.array([np.cumsum(L[r][k1] * U[s])[-1] for k1 in range(K)])
        terms = range(rel_ptr[r], rel_ptr[r + 1])
        for e in range(groups.group_ptr[g], groups.group_ptr[g + 1]):
            o = groups.other[e]
            cum_o = np.cumsum(U[o] * P)
            rate = cum_o[-1]
            if groups.kinds[e] == 0:
                x = int(draws.ztp(rate, state))
            elif groups.kinds[e] == 1:
                x = int(groups.values[e])
            else:
                x = int(draws.poisson(rate, state))
            total += x
            for _ in range(x):
                ko = first_above(cum_o, draws.uniform(state))
                w = np.concatenate([
                    rel_w[t] * (G[rel_m[t]][:, ko] if s_is_head else G[rel_m[t]][ko])
                    * U[s] for t in terms])
                cell = first_above(np.cumsum(w), draws.uniform(state))
                t, ks = divmod(cell, K)
                m = rel_m[rel_ptr[r] + t]
                i, k1, j, k2 = (s, ks, o, ko) if s_is_head else (o, ko, s, ks)
                n_ent[i, k1] += 1
                if not sender_only:
                    n_ent[j, k2] += 1
                x_cells[m, k1, k2] += 1
                if x_rm.shape[0]:
                    x_rm[r, m] += 1
    return total


def pooled_chi2_pvalue(counts, expected, pool_below=5.0):
    """Pearson's chi-square p-value with the cells of expected count < ``pool_below``
    pooled into one (the chi-square law of the statistic needs about 5 per cell; an
    enumerated posterior puts far less on most of its states)."""
    counts = np.asarray(counts, float)
    expected = np.asarray(expected, float)
    small = expected < pool_below
    c = np.append(counts[~small], counts[small].sum())
    e = np.append(expected[~small], expected[small].sum())
    if e[-1] == 0.0:
        c, e = c[:-1], e[:-1]
    return stats.chi2.sf(((c - e) ** 2 / e).sum(), df=c.size - 1)
