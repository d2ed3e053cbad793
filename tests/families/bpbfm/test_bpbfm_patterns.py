"""BPBFM-1 with observable patterns (:class:`PatternPoissonFactorModel`;
:mod:`topiclink.families.bpbfm.em_patterns`, :mod:`topiclink.families.bpbfm.patterns`).

(a) the E-step statistics and the objective equal a dense computation on a tiny tensor
    with held-out cells; (b) the log posterior never decreases; (c) the mined patterns
    equal a brute-force enumeration of every 1- and 2-hop pattern; (d) a planted rule is
    recovered (its weight dominates its relation's); (e) scoring: the batch rows, the
    single queries and ``predict_proba`` agree, head queries included; (f) save/load
    gives identical scores; the same seed gives the same arrays; with no pattern the fit
    is BPBFM-1-EM's, to the bit.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import topiclink
from topiclink.data.tensor import RelationalTensor
from topiclink.datasets import make_bpbfm_data
from topiclink.families.bpbfm import patterns as patterns_module
from topiclink.families.bpbfm.algorithm import BPBFMData
from topiclink.families.bpbfm.em import EPS
from topiclink.families.bpbfm.em_patterns import BPBFMPatternsEM, pattern_estep
from topiclink.families.bpbfm.estimator_em import BilinearPoissonFactorModelEM
from topiclink.families.bpbfm.estimator_patterns import PatternPoissonFactorModel
from topiclink.families.bpbfm.patterns import (
    DirectedGraph,
    mine_patterns,
    pad,
    rule_text,
    split_code,
)


def _random_graph(N: int = 9, R: int = 3, n: int = 40, seed: int = 0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, N * N * R, n))
    r, rest = np.divmod(keys, N * N)
    h, t = np.divmod(rest, N)
    return h, r, t


def _tensor(h, r, t, N, R, missing=None) -> RelationalTensor:
    return RelationalTensor(h, r, t, np.ones(h.size), N, R,
                            missing=np.zeros((0, 3), int) if missing is None else missing)


def _dense_phi(h, r, t, N, R, code) -> np.ndarray:
    """phi of a pattern by brute force: (N, N) 0/1, the diagonal 0; a constant rule's
    ``[t = c] g(h)`` or ``[h = c] g(t)`` with g the body's walks from the variable
    entity to its end (or to anywhere)."""
    A = np.zeros((2 * R, N, N))
    A[r, h, t] = 1.0
    A[r + R, t, h] = 1.0
    hops, side, anchor, end = split_code(code)
    if side >= 0:
        reach = np.eye(N)
        for d in hops:
            reach = reach @ A[d]
        g = (reach[:, end] if end >= 0 else reach.sum(axis=1)) > 0
        phi = np.zeros((N, N))
        if side == 0:
            phi[:, anchor] = g
        else:
            phi[anchor, :] = g
        np.fill_diagonal(phi, 0.0)
        return phi
    if len(hops) == 3:                   # walks h -> x -> y -> t with y != h, x != t
        other = 1.0 - np.eye(N)
        walks = np.einsum("hx,xy,yt,hy,xt->ht", *(A[d] for d in hops), other, other)
    else:
        walks = A[hops[0]].copy()
        for d in hops[1:]:
            walks = walks @ A[d]
    phi = (walks > 0).astype(float)
    np.fill_diagonal(phi, 0.0)
    return phi


# ---------------------------------------------------------------------- (c) mining
@pytest.mark.parametrize("kind", ["paths", "paths3"])
def test_mining_equals_brute_force(kind, monkeypatch):
    """Without the 3-hop samples' caps the candidates are every pattern: the mined set
    equals the brute-force one.  With them it is a subset, with the same statistics."""
    N, R = 9, 3
    h, r, t = _random_graph(N, R, 60, seed=1)
    graph = DirectedGraph(h, r, t, N, R)
    capped = mine_patterns(graph, h, r, t, kind, min_support=2, max_patterns=10_000)
    for name in ("MAX_TRIPLES_3", "MAX_WALKS", "MAX_LABELS"):
        monkeypatch.setattr(patterns_module, name, 10 ** 6)
    found = mine_patterns(graph, h, r, t, kind, min_support=2, max_patterns=10_000)
    mined = {(int(q), tuple(int(x) for x in c), int(s), int(e)) for q, c, s, e in
             zip(found.relation, found.codes, found.support, found.exposure, strict=True)}
    expected = set()
    D = range(2 * R)
    codes = [(d, -1, -1) for d in D] + [(a, b, -1) for a, b in itertools.product(D, D)]
    if kind == "paths3":
        codes += list(itertools.product(D, D, D))
    for q in range(R):
        target = np.zeros((N, N))
        target[h[r == q], t[r == q]] = 1.0
        for code in codes:
            if code == (q, -1, -1):
                continue
            phi = _dense_phi(h, r, t, N, R, code)
            support = int((phi * target).sum())
            if support >= 2:
                expected.add((q, pad(code), support, int(phi.sum())))
    assert mined == expected
    assert {(int(q), tuple(int(x) for x in c), int(s), int(e)) for q, c, s, e in zip(
        capped.relation, capped.codes, capped.support, capped.exposure, strict=True)} <= mined
    assert capped.n_patterns > (0.5 if kind == "paths3" else 1.0) * found.n_patterns - 1
    assert np.all(np.diff(found.relation) >= 0)
    inverse = mine_patterns(graph, h, r, t, "inverse", min_support=2, max_patterns=10_000)
    assert {(int(q), tuple(c)) for q, c in zip(inverse.relation, inverse.codes.tolist(),
                                               strict=True)} == \
        {(q, c) for q, c, _, _ in expected if c[1] < 0}
    assert mine_patterns(graph, h, r, t, "none").n_patterns == 0


def test_three_hop_rules_do_not_cover_their_own_triples():
    """The walk h -p-> x <-p- h -r-> t comes back to h: counted, every training triple of
    r with a p-edge at h would cover itself.  The sibling rule r(h, t) <- p(h, x),
    p(y, x), r(y, t) counts siblings y != h only."""
    N, R = 12, 2
    # relation 0: each entity's parent (0 and 1 under 10, 2 and 3 under 11, 4 and 5
    # under 9); relation 1: 0, 2 and 4 -> 8
    h = np.array([0, 1, 2, 3, 4, 5, 0, 2, 4])
    r = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1])
    t = np.array([10, 10, 11, 11, 9, 9, 8, 8, 8])
    graph = DirectedGraph(h, r, t, N, R)
    sibling = (0, 2, 1)
    np.testing.assert_array_equal(graph.pairs(sibling, np.array([0, 1, 2, 3]),
                                              np.full(4, 8)), [False, True, False, True])
    assert np.flatnonzero(graph.matrix(sibling).toarray()[:, 8]).tolist() == [1, 3, 5]
    found = mine_patterns(graph, h, r, t, "paths3", min_support=1, max_patterns=100)
    mined = {tuple(c) for q, c in zip(found.relation, found.codes.tolist(), strict=True)
             if q == 1}
    assert pad(sibling) not in mined                 # no training triple of 1 has one


def test_mining_keeps_the_most_confident():
    """At most ``max_patterns`` a relation and rule length, among the ``3 max_patterns``
    candidates of that length of largest support those of highest confidence, with the
    same statistics; shorter rules first."""
    N, R = 9, 3
    h, r, t = _random_graph(N, R, 60, seed=1)
    h, r, t = h[h != t], r[h != t], t[h != t]       # support = candidate count
    graph = DirectedGraph(h, r, t, N, R)
    every = mine_patterns(graph, h, r, t, "paths", min_support=1, max_patterns=10_000)
    few = mine_patterns(graph, h, r, t, "paths", min_support=1, max_patterns=2)
    stats = {(int(q), tuple(c)): (int(s), int(e)) for q, c, s, e in zip(
        every.relation, every.codes.tolist(), every.support, every.exposure, strict=True)}
    length = (every.codes >= 0).sum(axis=1)
    for q in range(R):
        expected = []
        for n_hops in (1, 2):
            mine = np.flatnonzero((every.relation == q) & (length == n_hops))
            order = sorted(mine, key=lambda p: (-every.support[p],
                                                tuple(every.codes[p])))[:6]
            best = sorted(order, key=lambda p: (-every.confidence()[p],
                                                tuple(every.codes[p])))
            expected += [tuple(every.codes[p]) for p in best[:2]]
        kept = few.relation == q
        assert [tuple(c) for c in few.codes[kept].tolist()] == expected
        for c, s, e in zip(few.codes[kept].tolist(), few.support[kept], few.exposure[kept],
                           strict=True):
            assert stats[(q, tuple(c))] == (s, e)
    assert (few.codes[:, 1] >= 0).sum() > 0 and (few.codes[:, 1] < 0).sum() > 0


def test_graph_rows_and_pairs_match_dense():
    N, R = 9, 3
    h, r, t = _random_graph(N, R, 50, seed=4)
    graph = DirectedGraph(h, r, t, N, R)
    rng = np.random.default_rng(0)
    for code in [(0, -1, -1), (4, -1, -1), (1, 3, -1), (5, 2, -1), (0, 4, 2), (3, 5, 1)]:
        phi = _dense_phi(h, r, t, N, R, code)
        np.testing.assert_array_equal(graph.matrix(code).toarray(), phi)
        a = rng.integers(0, N, 7)
        np.testing.assert_array_equal(graph.rows(code, a).toarray(), phi[a])
        b = rng.integers(0, N, 7)
        np.testing.assert_array_equal(graph.pairs(code, a, b), phi[a, b] > 0)


def test_rule_text():
    names = np.array(["p", "q"])
    assert rule_text((0, -1, -1), "q", names) == "q(h, t) <- p(h, t)"
    assert rule_text((3, -1, -1), "q", names) == "q(h, t) <- q(t, h)"
    assert rule_text((2, 1, -1), "q", names) == "q(h, t) <- p(x, h), q(x, t)"
    assert rule_text((0, 2, 1), "q", names) == "q(h, t) <- p(h, x), p(y, x), q(y, t)"


def test_reverse_reads_a_rule_from_the_tail():
    N, R = 9, 3
    h, r, t = _random_graph(N, R, 50, seed=4)
    graph = DirectedGraph(h, r, t, N, R)
    for code in [(0, -1, -1), (1, 3, -1), (0, 4, 2)]:
        back = graph.reverse(code)
        np.testing.assert_array_equal(graph.matrix(back).toarray(),
                                      graph.matrix(code).toarray().T)


# ---------------------------------------------------------------------- (a) E-step
def _tiny():
    N, R = 8, 2
    h, r, t = _random_graph(N, R, 40, seed=2)
    missing = np.array([[0, 0, 1], [2, 1, 3], [5, 0, 5], [4, 1, 6]])
    keep = ~np.isin((r * N + h) * N + t, (missing[:, 1] * N + missing[:, 0]) * N
                    + missing[:, 2])
    return _tensor(h[keep], r[keep], t[keep], N, R, missing), missing


@pytest.mark.parametrize("constants", [0, 4])
def test_estep_and_objective_equal_a_dense_computation(constants):
    tensor, missing = _tiny()
    N, R, K = tensor.n_entities, tensor.n_relations, 3
    data = BPBFMData.from_tensor(tensor, True)
    alg = BPBFMPatternsEM(K, prior_rate=2.0, pattern_prior=0.7, min_support=1,
                          max_constant_rules=constants)
    state = alg.init(data, np.random.default_rng(5))
    index = alg.pattern_index(data)
    assert index.patterns.n_patterns > 5
    assert (index.patterns.codes[:, 3] >= 0).sum() >= (20 if constants else 0)
    rng = np.random.default_rng(1)
    U, L = rng.gamma(1.0, 1.0, (N, K)), rng.gamma(1.0, 0.3, (R, K, K))
    W = rng.gamma(1.0, 0.5, index.patterns.n_patterns)
    h, r, t = (np.asarray(x) for x in (tensor.heads, tensor.relations, tensor.tails))
    phis = [_dense_phi(h, r, t, N, R, tuple(c)) for c in index.patterns.codes]
    rate = np.einsum("ik,rkl,jl->rij", U, L, U)
    for p, q in enumerate(index.patterns.relation):
        rate[q] += W[p] * phis[p]
    X = np.zeros((R, N, N))
    X[r, h, t] = 1.0
    held = np.zeros((R, N, N), bool)
    held[missing[:, 1], missing[:, 0], missing[:, 2]] = True
    ones = (X > 0) & ~held
    wgt = np.where(ones, 1.0 / -np.expm1(-rate), 0.0)
    S_lam = np.einsum("rij,ik,jl->rkl", wgt, U, U)
    S_u = np.einsum("rij,rkl,jl->ik", wgt, L, U) + np.einsum("rij,rkl,ik->jl", wgt, L, U)
    SW = np.array([(wgt[q] * phis[p]).sum() for p, q in enumerate(index.patterns.relation)])
    ll, got_lam, got_u, got_w = pattern_estep(U, L, W, data, index, True, True)
    np.testing.assert_allclose(got_lam, S_lam, rtol=1e-10)
    np.testing.assert_allclose(got_u, S_u, rtol=1e-10)
    np.testing.assert_allclose(got_w, SW, rtol=1e-10)
    np.testing.assert_allclose(ll, np.sum(np.log(-np.expm1(-rate[ones])) + rate[ones]))
    exposure = np.array([(phis[p] * ~held[q]).sum()
                         for p, q in enumerate(index.patterns.relation)])
    np.testing.assert_array_equal(index.exposure, exposure)
    zeros = ~ones & ~held
    prior = sum(float(EPS * np.log(x).sum() - b * x.sum())
                for x, b in ((U, 2.0), (L, 2.0), (W, 0.7)))
    dense = (np.log(-np.expm1(-rate[ones])).sum() - rate[zeros].sum() + prior) / ones.sum()
    np.testing.assert_allclose(alg.pattern_log_posterior(U, L, W, data), dense, rtol=1e-10)
    assert state.W.shape == W.shape


# ---------------------------------------------------------------------- (b) monotone
@pytest.mark.parametrize(("patterns", "constants"), [("inverse", 0), ("paths", 0),
                                                     ("paths", 5), ("none", 5)])
def test_log_posterior_never_decreases(patterns, constants):
    tensor, _ = make_bpbfm_data(40, 4, 3, random_state=3, density=0.05)
    m = PatternPoissonFactorModel(4, patterns=patterns, min_support=1, max_iter=60,
                                  max_constant_rules=constants, tol=0.0,
                                  random_state=0).fit(tensor)
    ll = m.trace_["log_likelihood"]
    assert ll.size == 60 and np.all(np.isfinite(ll))
    assert np.all(np.diff(ll) >= -1e-12 * np.abs(ll[1:])), np.diff(ll).min()
    assert ll[-1] > ll[0] + 0.1
    assert m.pattern_weights_.size > 0


@pytest.mark.parametrize("constants", [0, 4])
def test_a_step_never_lowers_the_objective_with_held_out_cells(constants):
    tensor, _ = _tiny()
    data = BPBFMData.from_tensor(tensor, True)
    alg = BPBFMPatternsEM(3, prior_rate=1.0, pattern_prior=0.5, min_support=1,
                          max_constant_rules=constants)
    state = alg.init(data, np.random.default_rng(0))
    last = alg.objective(state, data)
    for _ in range(30):
        alg.step(state, data)
        state.iteration += 1
        now = alg.pattern_log_posterior(state.U, state.L, state.W, data)
        assert now == pytest.approx(alg.objective(state, data), rel=1e-12)
        assert now >= last - 1e-12 * abs(last)
        last = now


# ---------------------------------------------------------------------- (d) planted
def test_a_planted_rule_is_recovered():
    """r2(h, t) <- r0(h, x), r1(x, t) for 80 % of the paths: the rule's weight is its
    relation's largest, near -log(1 - 0.8), and far above every other rule's."""
    rng = np.random.default_rng(7)
    N = 60
    e0 = np.unique(rng.integers(0, N * N, 90))
    e1 = np.unique(rng.integers(0, N * N, 90))
    h0, t0 = np.divmod(e0, N)
    h1, t1 = np.divmod(e1, N)
    A0 = np.zeros((N, N))
    A0[h0, t0] = 1
    A1 = np.zeros((N, N))
    A1[h1, t1] = 1
    path = (A0 @ A1 > 0)
    np.fill_diagonal(path, False)
    h2, t2 = np.nonzero(path & (rng.random((N, N)) < 0.8))
    h = np.concatenate([h0, h1, h2])
    t = np.concatenate([t0, t1, t2])
    r = np.repeat([0, 1, 2], [h0.size, h1.size, h2.size])
    m = PatternPoissonFactorModel(3, patterns="paths", max_constant_rules=0, max_iter=100,
                                  tol=0.0, random_state=0).fit(_tensor(h, r, t, N, 3))
    mine = m.pattern_relations_ == 2
    codes = m.pattern_codes_[mine]
    w = m.pattern_weights_[mine]
    best = int(np.argmax(w))
    assert tuple(codes[best]) == pad((0, 1))
    assert w[best] == pytest.approx(-np.log(0.2), rel=0.25)
    assert w[best] > 5 * np.max(np.delete(w, best), initial=0.0)
    rules = m.pattern_rules(1)
    assert rules.loc[rules.relation == "2", "rule"].item() == "2(h, t) <- 0(h, x), 1(x, t)"


# ---------------------------------------------------------------------- (e) scoring
@pytest.fixture(scope="module", params=[0, 6], ids=["paths", "with-constants"])
def fitted(request):
    tensor, _ = make_bpbfm_data(30, 3, 3, random_state=9, density=0.08)
    return PatternPoissonFactorModel(3, min_support=1, max_iter=15, tol=0.0,
                                     max_constant_rules=request.param,
                                     random_state=4).fit(tensor)


def test_the_scores_agree_and_include_the_rules(fitted):
    m = fitted
    N = m.embedding_.shape[0]
    assert m.pattern_weights_.size > 0
    heads, rels = np.array([0, 5, 5, 7, 11]), np.array([0, 1, 2, 1, 0])
    tails = m.score_tails_batch(heads, rels)
    every = np.arange(N)
    for i, (a, q) in enumerate(zip(heads, rels, strict=True)):
        np.testing.assert_allclose(tails[i], m.predict_proba(np.full(N, a), np.full(N, q),
                                                             every), rtol=1e-12)
        np.testing.assert_allclose(tails[i], m.score_tails(a, q), rtol=1e-12)
    got = m.score_heads_batch(rels, heads)
    for i, (q, b) in enumerate(zip(rels, heads, strict=True)):
        np.testing.assert_allclose(got[i], m.predict_proba(every, np.full(N, q),
                                                           np.full(N, b)), rtol=1e-12)
    factor_only = BilinearPoissonFactorModelEM._score_rows(m, heads, rels, "tail")
    assert np.all(tails >= factor_only - 1e-15)
    assert np.any(tails > factor_only + 1e-6)          # the rules raise some scores


# ---------------------------------------------------------------------- (f) files, seeds
def test_save_load_round_trip(fitted, tmp_path):
    path = fitted.save(tmp_path / "m.npz")
    back = topiclink.load(path)
    assert isinstance(back, PatternPoissonFactorModel)
    for name in ("pattern_weights_", "pattern_codes_", "train_triples_"):
        np.testing.assert_array_equal(getattr(back, name), getattr(fitted, name))
    heads, rels = np.array([0, 3, 9]), np.array([2, 0, 1])
    np.testing.assert_array_equal(back.score_tails_batch(heads, rels),
                                  fitted.score_tails_batch(heads, rels))
    np.testing.assert_array_equal(back.score_heads_batch(rels, heads),
                                  fitted.score_heads_batch(rels, heads))
    np.testing.assert_array_equal(back.predict_proba(heads, rels, heads[::-1]),
                                  fitted.predict_proba(heads, rels, heads[::-1]))
    assert back.pattern_rules(None).equals(fitted.pattern_rules(None))


def test_same_seed_same_fit_other_seed_other_fit():
    tensor, _ = make_bpbfm_data(30, 3, 3, random_state=2, density=0.08)

    def fit(seed):
        return PatternPoissonFactorModel(3, min_support=1, max_iter=8, tol=0.0,
                                         random_state=seed).fit(tensor)

    a, b, c = fit(1), fit(1), fit(2)
    for name in ("embedding_", "relation_matrices_", "pattern_weights_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.embedding_, c.embedding_)
    assert not np.array_equal(a.pattern_weights_, c.pattern_weights_)


def test_no_pattern_is_bpbfm_1_em():
    tensor, _ = make_bpbfm_data(30, 3, 3, random_state=2, density=0.08)
    a = PatternPoissonFactorModel(3, patterns="none", max_constant_rules=0, max_iter=10,
                                  tol=0.0, random_state=3).fit(tensor)
    b = BilinearPoissonFactorModelEM(3, max_iter=10, tol=0.0, random_state=3).fit(tensor)
    assert a.pattern_weights_.size == 0
    np.testing.assert_array_equal(a.embedding_, b.embedding_)
    np.testing.assert_array_equal(a.relation_matrices_, b.relation_matrices_)
    np.testing.assert_array_equal(a.trace_["log_likelihood"], b.trace_["log_likelihood"])
    np.testing.assert_array_equal(a.score_tails_batch([1, 2], [0, 2]),
                                  b.score_tails_batch([1, 2], [0, 2]))


def test_restarts_pool_the_rule_weights():
    tensor, _ = make_bpbfm_data(30, 3, 3, random_state=2, density=0.08)
    m = PatternPoissonFactorModel(3, min_support=1, max_iter=5, tol=0.0, n_chains=2,
                                  random_state=0).fit(tensor)
    assert m.samples_pattern_weights_.shape == (2, m.pattern_weights_.size)
    np.testing.assert_array_equal(m.samples_pattern_weights_[0], m.pattern_weights_)
    assert not np.array_equal(m.samples_pattern_weights_[0], m.samples_pattern_weights_[1])


def test_auto_is_paths3_up_to_the_walk_bound(monkeypatch):
    """``patterns="auto"``: the graph's 3-hop walks (any relation, either way) equal a
    dense count; at most AUTO_MAX_WALKS of them mine 3-hop rules, more mine 2-hop ones."""
    N, R = 9, 3
    h, r, t = _random_graph(N, R, 50, seed=4)
    graph = DirectedGraph(h, r, t, N, R)
    A = np.zeros((N, N))
    A[h, t] = A[t, h] = 1.0
    walks = float(np.ones(N) @ np.linalg.matrix_power(A, 3) @ np.ones(N))
    assert patterns_module.graph_walks(graph, 3) == pytest.approx(walks)
    assert patterns_module.resolve_kind("auto", graph) == "paths3"
    assert patterns_module.resolve_kind("inverse", graph) == "inverse"
    with pytest.raises(ValueError, match="patterns must be one of"):
        patterns_module.resolve_kind("path", graph)
    auto = mine_patterns(graph, h, r, t, "auto", min_support=1)
    same = mine_patterns(graph, h, r, t, "paths3", min_support=1)
    np.testing.assert_array_equal(auto.codes, same.codes)
    monkeypatch.setattr(patterns_module, "AUTO_MAX_WALKS", walks - 1)
    assert patterns_module.resolve_kind("auto", graph) == "paths"
    two = mine_patterns(graph, h, r, t, "auto", min_support=1)
    assert two.n_patterns and (two.codes[:, 2] < 0).all()
    np.testing.assert_array_equal(
        two.codes, mine_patterns(graph, h, r, t, "paths", min_support=1).codes)


def test_resume_reuses_the_rules_and_continues_the_same_iterates(monkeypatch):
    """Mining is deterministic, so ``fit(resume=True)`` on the same tensor reuses the
    last fit's rules (no second mining) and gives the iterates of one uninterrupted fit;
    on another tensor it mines again."""
    tensor, _ = make_bpbfm_data(30, 3, 3, random_state=2, density=0.08)
    calls = []
    real = patterns_module.mine_patterns

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr("topiclink.families.bpbfm.em_patterns.mine_patterns", counted)
    whole = PatternPoissonFactorModel(3, min_support=1, max_iter=8, tol=0.0,
                                      random_state=1).fit(tensor)
    assert len(calls) == 1
    part = PatternPoissonFactorModel(3, min_support=1, max_iter=4, tol=0.0,
                                     random_state=1).fit(tensor)
    part.fit(tensor, resume=True)
    assert len(calls) == 2                           # one mining for both calls
    for name in ("embedding_", "relation_matrices_", "pattern_weights_"):
        np.testing.assert_array_equal(getattr(part, name), getattr(whole, name))
    other, _ = make_bpbfm_data(30, 3, 3, random_state=5, density=0.08)
    part.set_params(max_iter=2).fit(other)
    assert len(calls) == 3
