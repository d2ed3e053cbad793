"""Constant rules of BPBFM's patterns (``max_constant_rules``;
:mod:`topiclink.families.bpbfm.patterns`): AnyBURL's ``r(h, c) <- d(h, e)`` (AC1),
``r(h, c) <- d(h, y)`` (AC2) and ``r(h, c) <- true``, and their head-anchored mirrors.

(a) ``rows``, ``pairs``, ``matrix``, ``reverse`` and the batched ``constant_factors``
    equal a dense computation of ``[t = c] g(h)`` / ``[h = c] g(t)``; (b) with the sample
    of triples covering them all, the mined rules equal a brute-force enumeration of every
    candidate (support, exposure, and no rule whose body holds the covered cell's own
    edge); capped, the ``max_constant_rules`` of highest confidence per relation, side and
    body kind; (c) a planted constant rule is recovered; (d) the rule text.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from topiclink.data.tensor import RelationalTensor
from topiclink.families.bpbfm import patterns as patterns_module
from topiclink.families.bpbfm.estimator_patterns import PatternPoissonFactorModel
from topiclink.families.bpbfm.patterns import (
    CONFIDENCE_SMOOTHING,
    HEAD_ANCHOR,
    TAIL_ANCHOR,
    DirectedGraph,
    mine_patterns,
    pad,
    rule_text,
)

from .test_bpbfm_patterns import _dense_phi, _random_graph


def _constant_codes(N: int, R: int) -> list[tuple[int, ...]]:
    """Every constant code of at most one hop."""
    out = []
    for side, c in itertools.product((TAIL_ANCHOR, HEAD_ANCHOR), range(N)):
        out.append(pad((), side, c))
        for d in range(2 * R):
            out.append(pad((d,), side, c))
            out += [pad((d,), side, c, e) for e in range(N)]
    return out


# ---------------------------------------------------------------------- (a) phi
def test_rows_pairs_matrix_and_reverse_match_dense():
    N, R = 8, 2
    h, r, t = _random_graph(N, R, 40, seed=3)
    graph = DirectedGraph(h, r, t, N, R)
    rng = np.random.default_rng(0)
    codes = _constant_codes(N, R)
    for code in [codes[i] for i in rng.choice(len(codes), 60, replace=False)] + [
            pad((), TAIL_ANCHOR, 3), pad((), HEAD_ANCHOR, 0), pad((1,), TAIL_ANCHOR, 2),
            pad((3,), HEAD_ANCHOR, 5, 1)]:
        phi = _dense_phi(h, r, t, N, R, code)
        np.testing.assert_array_equal(graph.matrix(code).toarray(), phi)
        a = rng.integers(0, N, 9)
        np.testing.assert_array_equal(graph.rows(code, a).toarray(), phi[a])
        b = rng.integers(0, N, 9)
        np.testing.assert_array_equal(graph.pairs(code, a, b), phi[a, b] > 0)
        np.testing.assert_array_equal(graph.matrix(graph.reverse(code)).toarray(), phi.T)
        assert graph.n_paths(code) >= phi.sum()


def test_constant_factors_equal_the_sum_of_the_rules_rows():
    N, R = 8, 2
    h, r, t = _random_graph(N, R, 40, seed=3)
    graph = DirectedGraph(h, r, t, N, R)
    rng = np.random.default_rng(1)
    codes = _constant_codes(N, R)
    chosen = [codes[i] for i in rng.choice(len(codes), 25, replace=False)]
    w = rng.gamma(1.0, 1.0, len(chosen))
    a = rng.integers(0, N, 12)
    A, B = graph.constant_factors(chosen, a)
    dense = sum(wj * _dense_phi(h, r, t, N, R, c)[a] for wj, c in zip(w, chosen,
                                                                     strict=True))
    np.testing.assert_allclose((A @ np.diag(w) @ B.toarray()), dense, rtol=1e-12)
    A0, B0 = graph.constant_factors([], a)
    assert A0.shape == (a.size, 0) and B0.shape == (0, N)
    b = rng.integers(0, N, 40)
    a = rng.integers(0, N, 40)
    batch = graph.constant_pairs(chosen, a, b).toarray()
    for j, c in enumerate(chosen):
        np.testing.assert_array_equal(batch[:, j], graph.pairs(c, a, b))
        np.testing.assert_array_equal(graph.body_values(np.array(chosen), a,
                                                        np.full(a.size, j)),
                                      _dense_body(h, r, t, N, R, c)[a])


def _dense_body(h, r, t, N, R, code):
    hops, _, _, end = patterns_module.split_code(code)
    A = np.zeros((2 * R, N, N))
    A[r, h, t] = 1.0
    A[r + R, t, h] = 1.0
    reach = np.eye(N)
    for d in hops:
        reach = reach @ A[d]
    return (reach[:, end] if end >= 0 else reach.sum(axis=1)) > 0


# ---------------------------------------------------------------------- (b) mining
def _brute_force(h, r, t, N, R, min_support):
    """Every constant candidate of every relation with its support and exposure; bodies
    that hold the covered cell's own edge are not candidates."""
    out = set()
    for q in range(R):
        target = np.zeros((N, N))
        target[h[r == q], t[r == q]] = 1.0
        np.fill_diagonal(target, 0.0)
        for code in _constant_codes(N, R):
            hops, side, c, e = patterns_module.split_code(code)
            own = q if side == TAIL_ANCHOR else (q + R) % (2 * R)
            if hops and hops[0] == own and (e < 0 or e == c):
                continue
            phi = _dense_phi(h, r, t, N, R, code)
            support = int((phi * target).sum())
            if support >= min_support:
                out.add((q, code, support, int(phi.sum())))
    return out


def _mined(found) -> set:
    return {(int(q), tuple(int(x) for x in c), int(s), int(e)) for q, c, s, e in
            zip(found.relation, found.codes, found.support, found.exposure, strict=True)}


@pytest.mark.parametrize("min_support", [1, 2])
def test_mining_equals_brute_force(min_support, monkeypatch):
    N, R = 9, 3
    h, r, t = _random_graph(N, R, 70, seed=5)
    graph = DirectedGraph(h, r, t, N, R)
    monkeypatch.setattr(patterns_module, "CANDIDATES_PER_KEPT", 10 ** 4)
    found = mine_patterns(graph, h, r, t, "none", min_support=min_support,
                          max_constant_rules=10 ** 4)
    assert _mined(found) == _brute_force(h, r, t, N, R, min_support)
    assert np.all(np.diff(found.relation) >= 0)
    with_paths = mine_patterns(graph, h, r, t, "paths", min_support=min_support,
                               max_constant_rules=10 ** 4)
    paths = mine_patterns(graph, h, r, t, "paths", min_support=min_support)
    assert _mined(with_paths) == _mined(found) | _mined(paths)
    assert np.all(np.diff(with_paths.relation) >= 0)


def test_no_rule_covers_its_own_triple():
    """r(h, c) <- r(h, y) would hold for every training triple (h, r, c) through the
    triple itself; r(h, c) <- r(h, c') with c' != c is a genuine rule."""
    N, R = 6, 1
    h = np.array([0, 1, 2, 0, 3])
    r = np.zeros(5, dtype=np.int64)
    t = np.array([4, 4, 4, 5, 5])
    graph = DirectedGraph(h, r, t, N, R)
    found = _mined(mine_patterns(graph, h, r, t, "none", min_support=1,
                                 max_constant_rules=100))
    codes = {c for _, c, _, _ in found}
    assert pad((0,), TAIL_ANCHOR, 4) not in codes            # r(h, 4) <- r(h, y)
    assert pad((0,), TAIL_ANCHOR, 4, 4) not in codes         # r(h, 4) <- r(h, 4)
    assert (0, pad((0,), TAIL_ANCHOR, 5, 4), 1, 3) in found  # r(h, 5) <- r(h, 4)
    assert (0, pad((), TAIL_ANCHOR, 4), 3, 5) in found       # r(h, 4) <- true
    assert pad((1,), HEAD_ANCHOR, 0) not in codes            # r(0, t) <- r(y, t)


def test_capped_mining_keeps_the_most_confident(monkeypatch):
    """Per relation, side and body kind, the ``max_constant_rules`` of highest smoothed
    confidence among the candidates (all of them here), with the same statistics."""
    N, R = 9, 3
    h, r, t = _random_graph(N, R, 70, seed=5)
    graph = DirectedGraph(h, r, t, N, R)
    monkeypatch.setattr(patterns_module, "CANDIDATES_PER_KEPT", 10 ** 4)
    every = _mined(mine_patterns(graph, h, r, t, "none", min_support=1,
                                 max_constant_rules=10 ** 4))
    few = mine_patterns(graph, h, r, t, "none", min_support=1, max_constant_rules=2)

    def kind(code):
        hops, side, _, end = patterns_module.split_code(code)
        return side, len(hops), end >= 0

    expected = []
    for q in range(R):
        for k in sorted({kind(c) for _, c, _, _ in every}):
            group = [(s / (e + CONFIDENCE_SMOOTHING), c, s, e) for qq, c, s, e in every
                     if qq == q and kind(c) == k]
            group.sort(key=lambda x: (-x[0], x[1]))
            expected += [(q, c, s, e) for _, c, s, e in group[:2]]
    assert _mined(few) == set(expected)
    assert few.n_patterns == len(expected)


# ---------------------------------------------------------------------- (c) planted
def test_a_planted_constant_rule_is_recovered():
    """r1(h, 0) holds for 80 % of the entities with a r0-edge to entity 1 (and for no
    other): the AC1 rule r1(h, 0) <- r0(h, 1) has r1's largest weight, near -log(0.2)."""
    rng = np.random.default_rng(0)
    N = 120
    noise = rng.random((N, N)) < 0.03
    np.fill_diagonal(noise, False)
    h0, t0 = np.nonzero(noise)
    linked = np.flatnonzero(rng.random(N) < 0.5)
    linked = linked[linked > 1]
    h0 = np.concatenate([h0, linked])
    t0 = np.concatenate([t0, np.ones(linked.size, dtype=np.int64)])
    keys = np.unique(h0 * N + t0)
    h0, t0 = keys // N, keys % N
    with_edge = np.unique(h0[t0 == 1])
    with_edge = with_edge[with_edge != 0]
    h1 = with_edge[rng.random(with_edge.size) < 0.8]
    h = np.concatenate([h0, h1])
    t = np.concatenate([t0, np.zeros(h1.size, dtype=np.int64)])
    r = np.repeat([0, 1], [h0.size, h1.size])
    tensor = RelationalTensor(h, r, t, np.ones(h.size), N, 2,
                              missing=np.zeros((0, 3), int))
    m = PatternPoissonFactorModel(3, patterns="none", max_constant_rules=10, max_iter=100,
                                  tol=0.0, random_state=0).fit(tensor)
    mine = m.pattern_relations_ == 1
    codes, w = m.pattern_codes_[mine], m.pattern_weights_[mine]
    best = int(np.argmax(w))
    assert tuple(codes[best]) == pad((0,), TAIL_ANCHOR, 0, 1)
    assert w[best] == pytest.approx(-np.log(0.2), rel=0.3)
    rules = m.pattern_rules(1)
    assert rules.loc[rules.relation == "1", "rule"].item() == "1(h, 0) <- 0(h, 1)"


# ---------------------------------------------------------------------- (d) text
def test_rule_text():
    names = np.array(["p", "q"])
    ents = np.array(["a", "b", "c"])
    assert rule_text(pad((0,), TAIL_ANCHOR, 2, 1), "q", names, ents) == "q(h, c) <- p(h, b)"
    assert rule_text(pad((3,), HEAD_ANCHOR, 0, 2), "q", names, ents) == "q(a, t) <- q(c, t)"
    assert rule_text(pad((1,), TAIL_ANCHOR, 1), "p", names, ents) == "p(h, b) <- q(h, y)"
    assert rule_text(pad((), HEAD_ANCHOR, 2), "p", names) == "p(e2, t) <- true"
