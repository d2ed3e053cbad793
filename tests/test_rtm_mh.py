"""The Metropolis-Hastings Z step of the relational / supervised topic models
(:mod:`topiclink.relational.kernels.rtm_mh`): counts and pair rows stay consistent, and the
stationary distribution is the exact posterior of z given the words, the pairs'
augmentation coefficients and U (all K^N assignments of a tiny corpus enumerated)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numba import njit

from tests import naive
from topiclink.kernels.rng import uniform
from topiclink.random import as_generator, kernel_state
from topiclink.relational.kernels.rtm_mh import (
    REFRESH_DIAGONAL,
    REFRESH_FULL,
    REFRESH_NONE,
    sweep_relational_mh_range,
)
from topiclink.relational.pairs import PairSet
from topiclink.topics.kernels import lda as kl
from topiclink.topics.kernels.lda_mh import word_index

# a tiny corpus: 3 documents, 6 tokens, words shared across documents
WORDS = np.array([0, 1, 1, 2, 0, 2], np.int32)
DOCS = np.array([0, 0, 1, 1, 2, 2], np.int32)
OFFSETS = np.array([0, 2, 4, 6], np.int64)
K, V, D = 3, 3, 3
BETA = 0.3


def _pairs(kind):
    """(source, target, a, b, U, refresh) of the three link structures tested."""
    rng = np.random.default_rng(5)
    if kind == "slda":
        # gSLDA: every document one out-pair to a virtual node D whose vector is eta
        src = np.arange(D, dtype=np.int64)
        dst = np.full(D, D, np.int64)
        U = np.zeros((K, K))
        refresh = REFRESH_NONE
    else:
        src = np.array([0, 1, 2, 0, 1], np.int64)
        dst = np.array([1, 2, 0, 2, 0], np.int64)
        if kind == "full":
            U = rng.normal(0, 2.0, (K, K))
            refresh = REFRESH_FULL
        else:
            U = np.diag(rng.normal(0, 2.5, K))
            refresh = REFRESH_DIAGONAL
    a = rng.normal(0, 1.5, src.size)
    b = rng.uniform(0.2, 1.5, src.size)
    return src, dst, a, b, U, refresh


ETA = np.array([2.5, -3.0, 1.0])


def _log_link(ndk, src, dst, a, b, U, kind):
    zbar = ndk / np.diff(OFFSETS)[:, None]
    if kind == "slda":
        omega = zbar @ ETA
    else:
        omega = np.einsum("pk,kl,pl->p", zbar[src], U, zbar[dst])
    return float((a * omega - 0.5 * b * omega**2).sum())


def _exact_posterior(alpha, beta, link):
    N = WORDS.size
    assignments = np.array(list(itertools.product(range(K), repeat=N)), np.int32)
    logp = np.empty(len(assignments))
    for i, zz in enumerate(assignments):
        ndk = np.zeros((D, K), np.int32)
        nwk = np.zeros((V, K), np.int32)
        np.add.at(ndk, (DOCS, zz), 1)
        np.add.at(nwk, (WORDS, zz), 1)
        logp[i] = naive.lda_log_joint(ndk, nwk, alpha, beta) + link(ndk)
    post = np.exp(logp - logp.max())
    return post / post.sum()


def _csr(src, dst, a, b):
    ps = PairSet(src, dst, np.ones(src.size, np.int8), np.ones(src.size), D + 1)
    return (ps.out.ptr, ps.out.nbr, ps.by_source(a), ps.by_source(b),
            ps.into.ptr, ps.into.nbr, ps.by_target(a), ps.by_target(b))


@njit
def _rows(ndk, offsets, U, Uz, Vz, eta, virtual):
    """Uz = zbar U^T, Vz = zbar U at the start of an iteration (the estimator's step)."""
    Dd, Kk = ndk.shape
    for d in range(Dd):
        n = offsets[d + 1] - offsets[d]
        for k in range(Kk):
            su = 0.0
            sv = 0.0
            for l in range(Kk):
                su += U[k, l] * ndk[d, l]
                sv += U[l, k] * ndk[d, l]
            Uz[d, k] = su / n
            Vz[d, k] = sv / n
    if virtual:
        for k in range(Kk):
            Uz[Dd, k] = eta[k]


@njit
def _chains(words, docs, offsets, alpha, beta, n_chains, n_sweeps, states, n_mh, U, eta,
            virtual, refresh, out_ptr, out_nbr, out_a, out_b, in_ptr, in_nbr, in_a, in_b,
            ptr, pos):
    N = words.size
    finals = np.empty(n_chains, np.int64)
    Dd = offsets.size - 1
    Uz = np.zeros((Dd + 1, K))
    Vz = np.zeros((Dd + 1, K))
    for c in range(n_chains):
        st = states[c]
        z = np.empty(N, np.int32)
        for i in range(N):
            z[i] = np.int32(uniform(st) * K)
        ndk = np.zeros((Dd, K), np.int32)
        nwk = np.zeros((V, K), np.int32)
        nk = np.zeros(K, np.int32)
        kl.init_counts(words, docs, z, ndk, nwk, nk)
        for _ in range(n_sweeps):
            _rows(ndk, offsets, U, Uz, Vz, eta, virtual)
            sweep_relational_mh_range(words, offsets, z, ndk, nwk, nk, alpha, beta, st,
                                      ptr, pos, U, Uz, Vz, out_ptr, out_nbr, out_a, out_b,
                                      in_ptr, in_nbr, in_a, in_b, n_mh, refresh, 0, Dd)
        code = 0
        for i in range(N):
            code = code * K + z[i]
        finals[c] = code
    return finals


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "n_mh", "per_doc"),
                         [("full", 2, False), ("full", 3, True), ("diagonal", 2, True),
                          ("slda", 2, False), ("slda", 1, True)])
def test_stationary_distribution_equals_exact_posterior(kind, n_mh, per_doc):
    """Final states of 30,000 independent chains (60 sweeps each, from uniform topics)
    against p(z | w, a, b, U) over all 3^6 assignments (pooled chi-square, p > 1e-3).
    Full and diagonal U with out- and
    in-pairs (and a pair in both directions), the gSLDA virtual node, a shared and a
    per-document prior.  The test has power: the same counts reject the posterior
    without the link factor, and with its linear part doubled (p < 1e-6)."""
    src, dst, a, b, U, refresh = _pairs(kind)
    rng = np.random.default_rng(9)
    alpha = rng.uniform(0.2, 1.0, (D, K)) if per_doc else np.array([0.5, 0.8, 0.2])
    n_chains = 30_000
    states = kernel_state(as_generator(71 + n_mh), n_chains)
    ptr, pos = word_index(WORDS, V)
    finals = _chains(WORDS, DOCS, OFFSETS, alpha, BETA, n_chains, 60, states, n_mh, U, ETA,
                     kind == "slda", refresh, *_csr(src, dst, a, b), ptr, pos)
    counts = np.bincount(finals, minlength=K ** WORDS.size)
    cases = [(lambda n: _log_link(n, src, dst, a, b, U, kind), True),
             (lambda n: 0.0, False),
             (lambda n: _log_link(n, src, dst, 2 * a, b, U, kind), False)]
    for link, passes in cases:
        p = naive.pooled_chi2_pvalue(counts, n_chains * _exact_posterior(alpha, BETA, link))
        assert p > 1e-3 if passes else p < 1e-6, (kind, passes, p)


@pytest.mark.parametrize("kind", ["full", "diagonal"])
def test_counts_and_rows_stay_consistent(kind):
    """After sweeps of a larger corpus the counts equal a recount of z and every swept
    document's rows Uz / Vz equal U zbar_d / U^T zbar_d of its new counts (to rounding,
    whichever way they were refreshed)."""
    rng = np.random.default_rng(3)
    Dn, Vn, Kn = 40, 30, 25
    lengths = rng.integers(1, 30, Dn)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    words = rng.integers(0, Vn, offsets[-1]).astype(np.int32)
    docs = np.repeat(np.arange(Dn, dtype=np.int32), lengths)
    z = rng.integers(0, Kn, words.size).astype(np.int32)
    ndk, nwk, nk = (np.zeros((Dn, Kn), np.int32), np.zeros((Vn, Kn), np.int32),
                    np.zeros(Kn, np.int32))
    kl.init_counts(words, docs, z, ndk, nwk, nk)
    src = rng.integers(0, Dn, 120)
    dst = (src + rng.integers(1, Dn, 120)) % Dn
    pairs = PairSet(src, dst, np.ones(120, np.int8), np.ones(120), Dn)
    a, b = rng.normal(0, 1, 120), rng.uniform(0.1, 1, 120)
    U = rng.normal(0, 2, (Kn, Kn)) if kind == "full" else np.diag(rng.normal(0, 2, Kn))
    refresh = REFRESH_FULL if kind == "full" else REFRESH_DIAGONAL
    ptr, pos = word_index(words, Vn)
    state = kernel_state(as_generator(4))[0]
    before = z.copy()
    for _ in range(3):
        zbar = ndk / lengths[:, None]
        Uz, Vz = zbar @ U.T, zbar @ U
        sweep_relational_mh_range(words, offsets, z, ndk, nwk, nk, np.full(Kn, 0.1), 0.05,
                                  state, ptr, pos, U, Uz, Vz, pairs.out.ptr, pairs.out.nbr,
                                  pairs.by_source(a), pairs.by_source(b), pairs.into.ptr,
                                  pairs.into.nbr, pairs.by_target(a), pairs.by_target(b), 3,
                                  refresh, 0, Dn)
        ref = [np.zeros_like(x) for x in (ndk, nwk, nk)]
        kl.init_counts(words, docs, z, *ref)
        for x, y in zip((ndk, nwk, nk), ref, strict=True):
            np.testing.assert_array_equal(x, y)
        zbar = ndk / lengths[:, None]
        np.testing.assert_allclose(Uz, zbar @ U.T, atol=1e-10)
        np.testing.assert_allclose(Vz, zbar @ U, atol=1e-10)
    assert (z != before).mean() > 0.3          # it moves


def test_auto_takes_mh_from_its_threshold_where_it_applies():
    """``sampler="auto"`` (the default of gRTM and gSLDA): the Metropolis-Hastings sweep from
    AUTO_MIN_TOPICS topics on in the exact scheme, Gibbs below it, with ``approx`` and with
    shards (where "mh" itself is refused)."""
    from topiclink import RelationalTopicModel, SupervisedTopicModel
    from topiclink.relational.kernels.rtm_mh import AUTO_MIN_TOPICS

    K = AUTO_MIN_TOPICS
    for cls, extra in ((RelationalTopicModel, {"weights": "diagonal"}),
                       (SupervisedTopicModel, {})):
        assert cls(K - 1, **extra)._algorithm().sampler == "gibbs"
        assert cls(K, **extra)._algorithm().sampler == "mh"
        assert cls(K, sampler="gibbs", **extra)._algorithm().sampler == "gibbs"
    assert RelationalTopicModel(K, weights="diagonal", approx=True)._algorithm().sampler \
        == "gibbs"
    assert SupervisedTopicModel(K, scheme="shards")._algorithm().sampler == "gibbs"
