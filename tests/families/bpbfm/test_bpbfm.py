"""BPBFM-1 / BPBFM-2 batch Gibbs (``docs/design/bpbfm.md``): kernel twin, n_jobs
invariance, planted recovery, shrinkage, Geweke joint-distribution tests, persistence.

Thresholds (fixed before running; the planted data use ``make_bpbfm_data`` seed 1):

- recovery (N = 60, R = 6, K = 3, density 0.05, a random 10% of all cells held out,
  400 iterations, 200 burn-in): every true factor matched (Hungarian on cosine) with
  cosine > 0.9; relative Frobenius error of the matched relation matrices < 0.5; held-out
  AUC > 0.9 and within 0.05 of the AUC of the true probabilities;
- shrinkage (same data, K = 6, 1000 iterations, 500 burn-in): the three weakest factors
  carry < 10% of the expected count (the relation matrices' row + column mass).  (At 400
  iterations a true factor was still split over two copies: weakest three 25%.);
- Geweke: |z| < 3.5 for every test function with the exact conditionals (about 0.6%
  family-wise false alarm for 17 functions under independence); max |z| > 5 for each
  printed variant.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import roc_auc_score

import topiclink
from tests import naive
from topiclink.data.checks import DataError
from topiclink.data.tensor import RelationalTensor
from topiclink.diagnostics.geweke import geweke_zscores
from topiclink.families.bpbfm import algorithm as inference
from topiclink.families.bpbfm import kernels as kernels
from topiclink.families.bpbfm.algorithm import BPBFMData, BPBFMGibbs
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
from topiclink.families.bpbfm.grouping import group_entries
from topiclink.families.bpbfm.priors import BPBFMPriors
from topiclink.families.bpbfm.synthetic import make_bpbfm_data
from topiclink.kernels.counts import poisson_draw, zero_truncated_poisson_draw
from topiclink.kernels.rng import seed_state, uniform


# ---------------------------------------------------------------------- helpers
def _planted(seed: int = 1, N: int = 60, R: int = 6, K: int = 3, model: int = 1,
             binary: bool = True, with_tensor: bool = False):
    tensor, truth = make_bpbfm_data(N, R, K, model=model, random_state=seed, density=0.05,
                                    binary=binary)
    rng = np.random.default_rng(1)
    cells = rng.choice(N * N * R, size=N * N * R // 10, replace=False)
    r, rest = np.divmod(cells, N * N)
    h, t = np.divmod(rest, N)
    train = tensor.hold_out(np.stack([h, r, t], 1))
    Y, _ = tensor.to_dense()
    if with_tensor:
        return tensor, train, truth, (h, r, t), Y[h, t, r]
    return train, truth, (h, r, t), Y[h, t, r]


class _Draws:
    ztp = staticmethod(zero_truncated_poisson_draw)
    poisson = staticmethod(poisson_draw)
    uniform = staticmethod(uniform)


# ---------------------------------------------------------------------- (1) kernel twin
def _kernel_case(model2: bool, E: int = 40, seed: int = 5):
    """Random entries of every kind, U, Lambda, G and the relation terms."""
    rng = np.random.default_rng(seed)
    N, R, K, M = 7, 3, 3, 2
    heads = rng.integers(0, N, E).astype(np.int32)
    rels = rng.integers(0, R, E).astype(np.int32)
    tails = rng.integers(0, N, E).astype(np.int32)
    tails[rels == 2] %= 2                   # relation 2: fewer distinct tails than heads
    kinds = rng.integers(0, 3, E).astype(np.int8)
    values = np.where(kinds == 1, rng.integers(1, 6, E), 1).astype(np.float64)
    U = rng.dirichlet(np.ones(N), size=K).T.copy()
    if model2:
        G = rng.gamma(1.0, 2.0, size=(M, K, K))
        eta = rng.gamma(1.0, 1.0, size=(M, R))
        terms = (np.arange(0, (R + 1) * M, M, dtype=np.int64),
                 np.tile(np.arange(M, dtype=np.int64), R), np.ascontiguousarray(eta.T).ravel())
        rm_shape = (R, M)
        L = np.einsum("mr,mkl->rkl", eta, G)
    else:
        G = rng.gamma(1.0, 3.0, size=(R, K, K))
        terms = (np.arange(R + 1, dtype=np.int64), np.arange(R, dtype=np.int64), np.ones(R))
        rm_shape = (0, 0)
        L = G
    return (heads, rels, tails, kinds, values), U, L, G, terms, rm_shape


@pytest.mark.parametrize("model2", [False, True])
@pytest.mark.parametrize("sender_only", [False, True])
@pytest.mark.parametrize("side", [None, "head", "tail"])
def test_kernel_matches_naive_twin_draw_for_draw(model2, sender_only, side):
    entries, U, L, G, terms, rm_shape = _kernel_case(model2)
    groups = group_entries(entries, 1, side=side)
    if side is None:                        # the automatic choice uses both sides here
        assert 0 < groups.group_by_head.sum() < groups.n_groups
    N, K, M = U.shape[0], U.shape[1], G.shape[0]
    state = np.array([11, 22, 33, 44], dtype=np.uint64)
    s1, s2 = state.copy(), state.copy()
    out1 = (np.zeros((N, K), np.int64), np.zeros((M, K, K), np.int64),
            np.zeros(rm_shape, np.int64))
    out2 = tuple(np.zeros_like(a) for a in out1)
    t1 = kernels.sweep_groups(0, groups.n_groups, *groups.kernel_arrays(), U, L, G, *terms,
                              sender_only, s1, *out1)
    t2 = naive.bpbfm_sweep_groups(groups, U, L, G, *terms, sender_only, s2, *out2,
                                  draws=_Draws)
    assert t1 == t2 > 0
    np.testing.assert_array_equal(s1, s2)
    for a, b in zip(out1, out2, strict=True):
        np.testing.assert_array_equal(a, b)
    per_entity = 1 if sender_only else 2
    assert out1[0].sum() == per_entity * t1 == per_entity * out1[1].sum()
    if model2:
        assert out1[2].sum() == t1


def test_grouping_covers_every_entry_once_in_whole_groups():
    entries, *_ = _kernel_case(False, E=200)
    heads, rels, tails, kinds, values = entries
    for n_chunks in (1, 3, 7):
        g = group_entries(entries, n_chunks)
        np.testing.assert_array_equal(np.sort(g.order), np.arange(200))
        h, t = g.heads_tails()
        np.testing.assert_array_equal(h, heads[g.order])
        np.testing.assert_array_equal(t, tails[g.order])
        np.testing.assert_array_equal(np.repeat(g.group_rel, np.diff(g.group_ptr)),
                                      rels[g.order])
        np.testing.assert_array_equal(g.kinds, kinds[g.order])
        bounds = np.linspace(0, 200, n_chunks + 1).astype(np.int64)
        np.testing.assert_array_equal(g.group_ptr[g.chunk_ptr], bounds)   # equal chunks
    # by the side with fewer distinct entities: relation 0 below has 1 head, 3 tails
    two = group_entries((np.array([4, 4, 4, 1, 2]), np.array([0, 0, 0, 1, 1]),
                         np.array([0, 1, 2, 3, 3]), np.zeros(5, np.int8), np.ones(5)), 1)
    assert two.group_by_head.tolist() == [True, False]
    assert two.n_groups == 2
    with pytest.raises(ValueError, match="side must be"):
        group_entries(entries, 1, side="both")


@pytest.mark.parametrize("side", [None, "head", "tail"])
def test_group_rates_are_the_entry_rates(side):
    """The objective's rates, computed per group as the sweep computes them, are
    ``u_i^T Lambda^r u_j`` of each entry (to rounding: another order of the sums)."""
    entries, U, L, *_ = _kernel_case(True, E=200)
    heads, rels, tails, *_ = entries
    g = group_entries(entries, 3, side=side)
    rates = kernels.group_rates(*g.kernel_arrays()[:5], U, L)
    np.testing.assert_allclose(rates, np.einsum("ek,ekl,el->e", U[heads], L[rels],
                                                U[tails])[g.order], rtol=1e-13)


def _expected_allocation(entries, U, L, G, terms, rm_shape):
    """E[n_ent], E[x_cells], E[x_rm] of one sweep: each entry's mean latent count (a one:
    ``rate / (1 - exp(-rate))``; a count: its value; held out: ``rate``) spread over the
    cells (m, k1, k2) in proportion to ``w_m u_ik1 G^m_k1k2 u_jk2``."""
    heads, rels, tails, kinds, values = entries
    ptr, rm, rw = terms
    n_ent = np.zeros(U.shape)
    x_cells = np.zeros(G.shape)
    x_rm = np.zeros(rm_shape)
    for i, r, j, kind, v in zip(heads, rels, tails, kinds, values, strict=True):
        rate = U[i] @ L[r] @ U[j]
        mean = rate / -np.expm1(-rate) if kind == 0 else (v if kind == 1 else rate)
        for t in range(ptr[r], ptr[r + 1]):
            cell = mean * rw[t] * U[i][:, None] * G[rm[t]] * U[j][None, :] / rate
            x_cells[rm[t]] += cell
            n_ent[i] += cell.sum(axis=1)
            n_ent[j] += cell.sum(axis=0)
            if rm_shape[0]:
                x_rm[r, rm[t]] += cell.sum()
    return n_ent, x_cells, x_rm


@pytest.mark.parametrize("model2", [False, True])
@pytest.mark.parametrize("side", ["head", "tail"])
def test_grouped_allocation_has_the_expected_means(model2, side):
    """The two-draw allocation has the law of one draw over the M K^2 cells: the mean of
    3,000 sweeps within 5 standard errors of the exact expectation, every cell."""
    entries, U, L, G, terms, rm_shape = _kernel_case(model2, E=30, seed=8)
    groups = group_entries(entries, 1, side=side)
    expected = _expected_allocation(entries, U, L, G, terms, rm_shape)
    draws = [[], [], []]
    for s in range(3000):
        state = np.zeros(4, np.uint64)
        seed_state(np.uint64(s), state)
        out = (np.zeros(U.shape, np.int64), np.zeros(G.shape, np.int64),
               np.zeros(rm_shape, np.int64))
        kernels.sweep_groups(0, groups.n_groups, *groups.kernel_arrays(), U, L, G, *terms,
                             False, state, *out)
        for d, o in zip(draws, out, strict=True):
            d.append(o)
    for d, e in zip(draws, expected, strict=True):
        if e.size == 0:
            continue
        d = np.array(d, dtype=float)
        se = np.sqrt(np.maximum(d.var(axis=0), 1e-12) / d.shape[0])
        z = np.abs(d.mean(axis=0) - e) / se
        assert np.all(z < 5.0), (z.max(), d.mean(axis=0), e)


# ---------------------------------------------------------------------- (2) n_jobs
@pytest.mark.parametrize("n_dictionary", [None, 2])
def test_n_jobs_never_changes_the_chain(monkeypatch, n_dictionary):
    monkeypatch.setattr(inference, "CHUNK_ENTRIES", 150)
    train, *_ = _planted()
    fits = [BilinearPoissonFactorModel(3, n_dictionary=n_dictionary, max_iter=15, burn_in=5,
                                       thinning=2, n_jobs=n_jobs, random_state=3).fit(train)
            for n_jobs in (1, 2)]
    assert fits[0].state_.kernel_rng.shape[0] > 2
    for name in ("U", "G", "d", "eps", "eta"):
        np.testing.assert_array_equal(getattr(fits[0].state_, name),
                                      getattr(fits[1].state_, name))
    np.testing.assert_array_equal(fits[0].samples_embedding_, fits[1].samples_embedding_)


# ---------------------------------------------------------------------- (3) recovery
def test_planted_recovery_bpbfm1():
    train, truth, (h, r, t), y = _planted()
    K = 3
    m = BilinearPoissonFactorModel(K, max_iter=400, burn_in=200, random_state=0).fit(train)
    U = m.embedding_
    cos = (U / np.linalg.norm(U, axis=0)).T @ (truth.U / np.linalg.norm(truth.U, axis=0))
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9, cos[rows, cols]
    perm = np.empty(K, int)
    perm[cols] = rows
    L = m.relation_matrices_[:, perm][:, :, perm]
    err = np.linalg.norm(L - truth.relation_matrices) / np.linalg.norm(
        truth.relation_matrices)
    assert err < 0.5, err
    auc = roc_auc_score(y, m.predict_proba(h, r, t))
    best = roc_auc_score(y, truth.proba(h, r, t))
    assert auc > 0.9 and auc > best - 0.05, (auc, best)
    assert np.isfinite(m.trace_["log_likelihood"][-1])
    assert m.n_parameters_ == 6 * 9 + 60 * 3
    text = m.summary()
    assert "active factors" in text and "relation r0" in text


def test_bpbfm2_fits_and_predicts():
    train, truth, (h, r, t), y = _planted(model=2)
    m = BilinearPoissonFactorModel(3, n_dictionary=3, max_iter=200, burn_in=100,
                                   random_state=0).fit(train)
    assert m.dictionary_.shape == (3, 3, 3) and m.relation_weights_.shape == (3, 6)
    assert m.n_parameters_ == 3 * 9 + 3 * 6 + 60 * 3
    assert roc_auc_score(y, m.predict_proba(h, r, t)) > 0.85
    assert m.score_tails(0, 0).shape == (60,) and m.score_heads("r1", "e3").shape == (60,)


# ---------------------------------------------------------------------- (4) shrinkage
def test_shrinkage_switches_off_extra_factors():
    train, *_ = _planted()
    m = BilinearPoissonFactorModel(6, max_iter=1000, burn_in=500, random_state=0).fit(train)
    weakest = np.sort(m.factor_weights_)[:3].sum()
    assert weakest < 0.1, np.sort(m.factor_weights_)


# ---------------------------------------------------------------------- (5) Geweke
# Tiny BPBFM-1: N = 4 entities, R = 2 relations, K = 2, binary, every cell observed.
GN, GR, GK = 4, 2, 2
GPRIORS = {"a": 0.5, "gamma0": 2.0, "c0": 0.5, "e0": 1.0, "f0": 1.0, "beta": 1.0}
G_ITER = 20_000
#: Gibbs steps per regeneration of the data: with a regeneration after every step, the
#: sender-only U update is invisible (U | sender counts is an exact conditional of U given
#: a coarser statistic, and the receivers' counts are thrown away with the data); several
#: steps on the same data expose it.  The exact sampler leaves p(params | B) invariant
#: for any number of steps.
G_INNER = 5


def _prior_draw(rng):
    p = GPRIORS
    d = rng.gamma(p["gamma0"] / GK, 1 / p["c0"], size=(GR, GK))
    eps = rng.gamma(p["e0"], 1 / p["f0"], size=GR)
    S = d[:, :, None] * d[:, None, :]
    S[:, np.arange(GK), np.arange(GK)] = eps[:, None] * d
    L = rng.gamma(S) / p["beta"]
    U = rng.dirichlet(np.full(GN, p["a"]), size=GK).T
    return U, L, d, eps


def _draw_ones(rng, U, L):
    rate = np.einsum("ik,rkl,jl->rij", U, L, U)
    return rng.random(rate.shape) < -np.expm1(-rate)          # (R, N, N)


def _as_data(B):
    r, h, t = np.nonzero(B)
    return BPBFMData(h.astype(np.int32), r.astype(np.int32), t.astype(np.int32),
                     np.zeros(r.size, np.int8), np.ones(r.size), GN, GR, True, r.size)


def _test_functions(U, L, d, eps, B):
    r, h, t = np.nonzero(B)
    lam = L / (1 + L)
    return {"U00": U[0, 0], "U00^2": U[0, 0] ** 2,
            "log d0": np.log(d[:, 0]).mean(), "log d1": np.log(d[:, 1]).mean(),
            "log d0^2": (np.log(d[:, 0]) ** 2).mean(), "log eps": np.log(eps).mean(),
            "L00": lam[:, 0, 0].mean(), "L01": lam[:, 0, 1].mean(),
            "L10": lam[:, 1, 0].mean(), "ones": float(B.sum()),
            "send0": float(U[h, 0].sum()), "recv0": float(U[t, 0].sum()),
            "sendrecv": float((U[h, 0] * U[t, 0]).sum()), "conc": float((U ** 2).sum()),
            "send2": float((U[h] ** 2).sum()), "recv2": float((U[t] ** 2).sum()),
            "match": float((U[h] * U[t]).sum())}


def _geweke(seed: int, **flags) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    mc = []
    for _ in range(G_ITER):
        U, L, d, eps = _prior_draw(rng)
        mc.append(_test_functions(U, L, d, eps, _draw_ones(rng, U, L)))
    algorithm = BPBFMGibbs(GK, **GPRIORS, **flags)
    U, L, d, eps = _prior_draw(rng)
    data = _as_data(_draw_ones(rng, U, L))
    state = algorithm.init(data, rng)
    state.U, state.G, state.d, state.eps = U, L, d, eps
    sc = []
    for it in range(G_ITER):
        algorithm.step(state, data)                 # the production step
        if (it + 1) % G_INNER == 0:
            data = _as_data(_draw_ones(rng, state.U, state.G))
        B = np.zeros((GR, GN, GN), dtype=bool)
        B[data.rels, data.heads, data.tails] = True
        sc.append(_test_functions(state.U, state.G, state.d, state.eps, B))
    names = list(mc[0])
    return geweke_zscores({k: np.array([s[k] for s in mc]) for k in names},
                          {k: np.array([s[k] for s in sc]) for k in names})


def test_geweke_exact_conditionals_pass():
    z = _geweke(3)
    assert max(abs(v) for v in z.values()) < 3.5, z


@pytest.mark.parametrize("flags", [{"u_counts": "sender"}, {"d_conditional": "rows"}],
                         ids=["sender-only-U", "row-only-d"])
def test_geweke_printed_conditionals_fail(flags):
    z = _geweke(3, **flags)
    assert max(abs(v) for v in z.values()) > 5, z


# ---------------------------------------------------------------------- (6) persistence
def test_save_load_and_resume_continue_the_chain(tmp_path):
    train, _, (h, r, t), _ = _planted()
    kw = {"max_iter": 10, "burn_in": 5, "thinning": 2, "random_state": 4}
    whole = BilinearPoissonFactorModel(3, **{**kw, "max_iter": 20}).fit(train)
    part = BilinearPoissonFactorModel(3, **kw).fit(train)
    path = part.save(tmp_path / "m.npz", full=True)
    loaded = topiclink.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(h, r, t), part.predict_proba(h, r, t))
    np.testing.assert_array_equal(loaded.embedding_, part.embedding_)
    loaded.fit(train, resume=True)
    assert loaded.n_iter_ == 20
    for name in ("U", "G", "d", "eps"):
        np.testing.assert_array_equal(getattr(loaded.state_, name),
                                      getattr(whole.state_, name))
    np.testing.assert_array_equal(loaded.samples_embedding_, whole.samples_embedding_)
    np.testing.assert_array_equal(loaded.trace_["latent_count"], whole.trace_["latent_count"])
    light = topiclink.load(part.save(tmp_path / "light.npz"))
    with pytest.raises(ValueError, match="nothing to resume"):
        light.fit(train, resume=True)


def test_bpbfm2_save_load(tmp_path):
    train, *_ = _planted()
    m = BilinearPoissonFactorModel(2, n_dictionary=2, max_iter=6, burn_in=2,
                                   random_state=0).fit(train)
    loaded = topiclink.load(m.save(tmp_path / "m2.npz"))
    np.testing.assert_array_equal(loaded.dictionary_, m.dictionary_)
    np.testing.assert_array_equal(loaded.relation_weights_, m.relation_weights_)


# ---------------------------------------------------------------------- bad input
def test_bad_input_one_line_errors():
    train, *_ = _planted()
    with pytest.raises(ValueError, match="n_topics"):
        BilinearPoissonFactorModel(1).fit(train)
    empty = RelationalTensor(np.zeros(0, int), np.zeros(0, int), np.zeros(0, int),
                             np.zeros(0), 5, 2)
    with pytest.raises(DataError, match="empty tensor"):
        BilinearPoissonFactorModel(2).fit(empty)
    bad = RelationalTensor([0, 1], [0, 0], [1, 0], [1.0, 1.0], 3, 1)
    bad.values[1] = np.nan
    with pytest.raises(DataError, match="not a finite count"):
        BilinearPoissonFactorModel(2).fit(bad)
    bad.values[1] = -2.0
    with pytest.raises(DataError, match="not a finite count"):
        BilinearPoissonFactorModel(2).fit(bad)
    with pytest.raises(TypeError, match="RelationalTensor"):
        BilinearPoissonFactorModel(2).fit(np.ones((3, 3)))
    with pytest.raises(ValueError, match="^priors: a must be a finite number > 0") as info:
        BilinearPoissonFactorModel(2, priors=BPBFMPriors(a=-1.0)).fit(train)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="priors must be None or a BPBFMPriors, got") as info:
        BilinearPoissonFactorModel(2, priors={"a": 1.0}).fit(train)
    assert "\n" not in str(info.value)
