"""benchmarks/bpbfm_fb15k237_em_limits.py: the untied model (separate head and tail
factors) it compares with the library's tied EM is fitted by code of its own, so that
code is checked here on a small dense tensor: (a) its E-step statistics equal a dense
NumPy computation, (b) its block ECM never lowers the log posterior, (c) its scorer gives
the rates of the factors.  The same for the degree factors: (d) the counts and one round
of the conditional maximisers equal a dense computation, (e) the rounds never lower the
Poisson posterior of (a, b), (f) the scorer gives the scaled rates."""

from __future__ import annotations

import numpy as np
import pytest
from tests.benchmark_module import benchmark_module

from topiclink.data.tensor import RelationalTensor
from topiclink.families.bpbfm.algorithm import BPBFMData
from topiclink.families.bpbfm.em import EPS, OnesByRelation


@pytest.fixture(scope="module")
def bench():
    with benchmark_module("bpbfm_fb15k237_em_limits") as module:
        yield module


def _tensor(N: int = 9, R: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.random((R, N, N)) < 0.25
    r, h, t = np.nonzero(x)
    return RelationalTensor(h, r, t, np.ones(h.size), N, R), x


def _factors(N, R, K, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.gamma(1.0, 1.0, (N, K)), rng.gamma(1.0, 1.0, (N, K)),
            rng.gamma(1.0, 0.3, (R, K, K)))


def test_untied_statistics_equal_the_dense_computation(bench):
    tensor, x = _tensor()
    ones = OnesByRelation.of(BPBFMData.from_tensor(tensor, True))
    U, V, L = _factors(9, 3, 4)
    rate = np.einsum("ik,rkl,jl->rij", U, L, V)
    W = x / -np.expm1(-rate)
    np.testing.assert_allclose(bench.untied_estep(ones, U, V, L, "L"),
                               np.einsum("ik,rij,jl->rkl", U, W, V), rtol=1e-12)
    np.testing.assert_allclose(bench.untied_estep(ones, U, V, L, "U"),
                               np.einsum("rij,jl,rkl->ik", W, V, L), rtol=1e-12)
    np.testing.assert_allclose(bench.untied_estep(ones, U, V, L, "V"),
                               np.einsum("rij,ik,rkl->jl", W, U, L), rtol=1e-12)


def _log_posterior(x, U, V, L, b):
    rate = np.einsum("ik,rkl,jl->rij", U, L, V)
    ll = np.sum(np.where(x, np.log(-np.expm1(-rate)), -rate))
    return ll + sum(EPS * np.log(a).sum() - b * a.sum() for a in (U, V, L))


def test_untied_block_ecm_never_lowers_the_log_posterior(bench):
    tensor, x = _tensor(seed=2)
    ones = OnesByRelation.of(BPBFMData.from_tensor(tensor, True))
    U, V, L = _factors(9, 3, 3, seed=4)
    b = 2.0
    last = _log_posterior(x, U, V, L, b)
    for _ in range(30):
        for block in ("L", "U", "V"):
            U, V, L = bench.untied_block(ones, U, V, L, b, block)
            after = _log_posterior(x, U, V, L, b)
            assert after >= last - 1e-9 * abs(last), (block, last, after)
            last = after


def test_untied_scorer_gives_the_rates(bench):
    U, V, L = _factors(9, 3, 4)
    s = bench.UntiedScorer(U, V, L)
    rate = np.einsum("ik,rkl,jl->rij", U, L, V)
    heads, rels = np.array([0, 3, 3]), np.array([1, 1, 2])
    np.testing.assert_allclose(s.score_tails_batch(heads, rels),
                               -np.expm1(-rate[rels, heads]), rtol=1e-12)
    np.testing.assert_allclose(s.score_heads_batch(rels, heads),
                               -np.expm1(-rate[rels][np.arange(3), :, heads]), rtol=1e-12)


def _degree_case():
    tensor, x = _tensor(N=8, R=3, seed=5)
    U, _, L = _factors(8, 3, 3, seed=6)
    return tensor, x, U, L


def test_degree_counts_and_one_round_equal_the_dense_computation(bench):
    tensor, x, U, L = _degree_case()
    n_head, n_tail = bench.degree_counts(tensor)
    np.testing.assert_array_equal(n_head, x.sum(axis=2))          # x[r, h, t]
    np.testing.assert_array_equal(n_tail, x.sum(axis=1))
    rate = np.einsum("ik,rkl,jl->rij", U, L, U)
    alpha = 0.7
    A, B = bench.degree_factors(n_head, n_tail, U, L, alpha, 1)
    A_dense = (n_head + alpha) / (rate.sum(axis=2) + alpha)       # b = 1
    np.testing.assert_allclose(A, A_dense, rtol=1e-12)
    B_dense = (n_tail + alpha) / (np.einsum("ri,rij->rj", A_dense, rate) + alpha)
    np.testing.assert_allclose(B, B_dense, rtol=1e-12)


def _degree_posterior(x, rate, A, B, alpha):
    """Poisson log posterior of (a, b) given the rates, the ones as counts of 1."""
    lam = A[:, :, None] * B[:, None, :] * rate
    prior = sum(float(np.sum(alpha * np.log(z) - alpha * z)) for z in (A, B))
    return float(np.sum(x * np.log(lam) - lam)) + prior


def test_degree_rounds_never_lower_the_posterior(bench):
    tensor, x, U, L = _degree_case()
    n_head, n_tail = bench.degree_counts(tensor)
    rate = np.einsum("ik,rkl,jl->rij", U, L, U)
    last = _degree_posterior(x, rate, np.ones_like(n_head), np.ones_like(n_tail), 0.5)
    for rounds in range(1, 8):
        A, B = bench.degree_factors(n_head, n_tail, U, L, 0.5, rounds)
        now = _degree_posterior(x, rate, A, B, 0.5)
        assert now >= last - 1e-9 * abs(last), (rounds, last, now)
        last = now
    # a perturbed maximiser is worse: the check can fail
    assert _degree_posterior(x, rate, A * 1.1, B, 0.5) < last


def test_degree_scorer_gives_the_scaled_rates(bench):
    _, _, U, L = _degree_case()
    rng = np.random.default_rng(3)
    A, B = rng.gamma(2.0, 0.5, (3, 8)), rng.gamma(2.0, 0.5, (3, 8))
    s = bench.DegreeScorer(U, L, A, B)
    lam = A[:, :, None] * B[:, None, :] * np.einsum("ik,rkl,jl->rij", U, L, U)
    heads, rels = np.array([0, 3, 3]), np.array([1, 1, 2])
    np.testing.assert_allclose(s.score_tails_batch(heads, rels),
                               -np.expm1(-lam[rels, heads]), rtol=1e-12)
    np.testing.assert_allclose(s.score_heads_batch(rels, heads),
                               -np.expm1(-lam[rels][np.arange(3), :, heads]), rtol=1e-12)


def test_joint_degree_block_ecm_never_lowers_the_log_posterior(bench):
    """The untied model with degree factors, rate ``a_ri b_rj u_i^T Lambda^r v_j``: every
    block (Lambda, U, V, A, B) an exact M-step of the EM surrogate, so the log posterior
    never decreases; and a misplaced exposure breaks it (the check can fail)."""
    tensor, x = _tensor(seed=2)
    ones = OnesByRelation.of(BPBFMData.from_tensor(tensor, True))
    b, alpha = 2.0, 0.5

    def log_posterior(U, V, L, A, B):
        rate = A[:, :, None] * B[:, None, :] * np.einsum("ik,rkl,jl->rij", U, L, V)
        ll = np.sum(np.where(x, np.log(-np.expm1(-rate)), -rate))
        ll += sum(EPS * np.log(z).sum() - b * z.sum() for z in (U, V, L))
        return ll + sum(float(np.sum(alpha * np.log(z) - alpha * z)) for z in (A, B))

    def run(block_fn):
        U, V, L = _factors(9, 3, 3, seed=4)
        A, B = np.ones((3, 9)), np.ones((3, 9))
        values = [log_posterior(U, V, L, A, B)]
        for _ in range(15):
            for block in ("L", "U", "V", "A", "B"):
                U, V, L, A, B = block_fn(ones, U, V, L, A, B, b, alpha, block)
                values.append(log_posterior(U, V, L, A, B))
        return np.array(values)

    values = run(bench.degree_block)
    assert np.all(np.diff(values) >= -1e-9 * np.abs(values[:-1])), np.diff(values).min()
    assert values[-1] > values[0] + 1.0

    def broken(ones, U, V, L, A, B, rate, alpha, block):
        if block == "A":                  # the exposure without the tail factors b
            S = bench.untied_estep(ones, U, V, L, "A", A, B)
            Q = np.einsum("rkl,rl->rk", L, np.ones_like(B) @ V)
            return U, V, L, (S + alpha) / (Q @ U.T + alpha), B
        return bench.degree_block(ones, U, V, L, A, B, rate, alpha, block)

    assert np.diff(run(broken)).min() < 0


def test_untied_estep_with_unit_degrees_is_the_untied_estep(bench):
    tensor, _ = _tensor()
    ones = OnesByRelation.of(BPBFMData.from_tensor(tensor, True))
    U, V, L = _factors(9, 3, 4)
    one = np.ones((3, 9))
    for block in ("L", "U", "V"):
        np.testing.assert_allclose(bench.untied_estep(ones, U, V, L, block, one, one),
                                   bench.untied_estep(ones, U, V, L, block), rtol=1e-13)
