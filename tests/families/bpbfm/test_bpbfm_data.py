"""BPBFM data: ``make_bpbfm_data`` / ``draw_bpbfm_counts`` and the DataFrame / networkx
constructors of :class:`RelationalTensor`.

Tolerances are fixed in advance as in ``test_synthetic.py``: single comparisons within 5
standard deviations; for a sum of m squared standardised deviations, within
``m + 5 sqrt(2 m)``.
"""

from __future__ import annotations

import logging

import networkx as nx
import numpy as np
import pandas as pd
import pytest

import topiclink.families.bpbfm.synthetic as bpbfm_module
from topiclink.data.checks import DataError
from topiclink.data.splits import holdout_tensor_entries
from topiclink.data.tensor import RelationalTensor
from topiclink.datasets import make_bpbfm_data as make_bpbfm_data_top
from topiclink.datasets.synthetic import (
    BPBFMTruth,
    draw_bpbfm_counts,
    make_bpbfm_data,
    planted_bpbfm_pattern,
)


def _dense_rates(truth: BPBFMTruth) -> np.ndarray:
    """``(R, N, N)`` rates ``u_i^T Lambda^r u_j`` (small tensors only)."""
    return np.einsum("ik,rkl,jl->rij", truth.U, truth.relation_matrices, truth.U)


def _dense_values(t: RelationalTensor) -> np.ndarray:
    Y = np.zeros((t.n_relations, t.n_entities, t.n_entities))
    Y[t.relations, t.heads, t.tails] = t.values
    return Y


def _chi2_ok(stat: float, m: int) -> bool:
    return stat <= m + 5 * np.sqrt(2 * m)


# ---------------------------------------------------------------------- generator
def test_shapes_dtypes_determinism():
    t, truth = make_bpbfm_data(60, 4, 3, random_state=0)
    assert make_bpbfm_data_top is make_bpbfm_data
    assert isinstance(t, RelationalTensor) and isinstance(truth, BPBFMTruth)
    assert t.shape == (60, 60, 4) and t.n_entries > 0 and len(t.missing) == 0
    for a in (t.heads, t.relations, t.tails):
        assert a.dtype == np.int32
    assert t.values.dtype == np.float64 and (t.values == 1).all()
    assert t.entity_names[:3].tolist() == ["e0", "e1", "e2"] and t.relation_names[-1] == "r3"
    key = (t.relations.astype(np.int64) * 60 + t.heads) * 60 + t.tails
    assert (np.diff(key) > 0).all()                        # sorted, no duplicates
    assert truth.U.shape == (60, 3) and truth.relation_matrices.shape == (4, 3, 3)
    np.testing.assert_allclose(truth.U.sum(axis=0), 1.0)
    assert (truth.n_entities, truth.n_relations, truth.n_topics) == (60, 4, 3)
    assert truth.dictionary is None and truth.eta is None and truth.model == 1
    t2, truth2 = make_bpbfm_data(60, 4, 3, random_state=0)
    for name in ("heads", "relations", "tails", "values"):
        np.testing.assert_array_equal(getattr(t, name), getattr(t2, name))
    np.testing.assert_array_equal(truth.relation_matrices, truth2.relation_matrices)
    t3, _ = make_bpbfm_data(60, 4, 3, random_state=1)
    assert t3.n_entries != t.n_entries or not np.array_equal(t3.heads, t.heads)
    # counts: integer values >= 1
    tc, truth_c = make_bpbfm_data(60, 4, 3, binary=False, random_state=0)
    assert (tc.values >= 1).all() and (tc.values == np.round(tc.values)).all()
    assert not truth_c.binary and tc.values.max() > 1
    # rate / proba of given cells agree with the dense rates
    X = _dense_rates(truth)
    np.testing.assert_allclose(truth.rate([1, 2], [3, 0], [4, 4]), [X[3, 1, 4], X[0, 2, 4]])
    np.testing.assert_allclose(truth.proba([1], [3], [4]), 1 - np.exp(-X[3, 1, 4]))


def test_planted_structure():
    t, truth = make_bpbfm_data(200, 8, 4, random_state=3)
    c = truth.clusters
    assert np.bincount(c, minlength=4).tolist() == [50] * 4
    own = truth.U[np.arange(200), c]                       # mass of own-cluster entries
    assert truth.U[c[:, None] == np.arange(4)].sum() / 4 > 0.8
    assert own.min() >= 0
    P = truth.pattern
    assert P.shape == (8, 4, 4)
    diag = P[:, np.arange(4), np.arange(4)]
    assert ((diag == 1.0).sum(axis=1) >= 1).all()
    assert ((P == 0.5).sum(axis=(1, 2)) == 1).all()       # one off-diagonal block each
    assert set(np.unique(P).tolist()) <= {0.01, 0.5, 1.0}
    # symmetric Dirichlet: no clusters
    _, ts = make_bpbfm_data(50, 2, 3, dirichlet_a=0.5, random_state=0)
    assert ts.clusters is None and ts.dirichlet_a.tolist() == [0.5, 0.5]
    Q = planted_bpbfm_pattern(5, 3, active_fraction=0.0, n_off_diagonal=0, background=0.0,
                              random_state=0)
    assert ((Q > 0).sum(axis=(1, 2)) == 1).all()           # at least one active factor


def test_model_2_dictionary():
    t, truth = make_bpbfm_data(80, 12, 3, model=2, random_state=5)
    M = int(np.ceil(np.sqrt(12)))
    assert truth.model == 2 and truth.dictionary.shape == (M, 3, 3)
    assert truth.eta.shape == (M, 12) and truth.pattern.shape == (M, 3, 3)
    np.testing.assert_allclose(truth.relation_matrices,
                               np.einsum("mr,mkl->rkl", truth.eta, truth.dictionary))
    assert ((truth.eta_pattern == 1.0).sum(axis=0) == 1).all()    # one home element each
    _, t2 = make_bpbfm_data(80, 12, 3, model=2, n_dictionary=2, random_state=5)
    assert t2.dictionary.shape[0] == 2 and t2.eta.shape == (2, 12)


@pytest.mark.parametrize("binary", [True, False])
def test_expected_number_and_realised(binary):
    """The requested density is the exact expectation; realised totals within 5 sd."""
    N, R = 100, 10
    devs = []
    for seed in range(5):
        t, truth = make_bpbfm_data(N, R, 5, binary=binary, random_state=seed)
        X = _dense_rates(truth)
        assert truth.expected_exact
        np.testing.assert_allclose(truth.expected_count, X.sum(), rtol=1e-10)
        p = -np.expm1(-X)
        np.testing.assert_allclose(truth.expected_n_ones, p.sum(), rtol=1e-10)
        np.testing.assert_allclose(truth.n_ones_variance, (p * (1 - p)).sum(), rtol=1e-10)
        target = truth.expected_n_ones if binary else truth.expected_count
        np.testing.assert_allclose(target, 0.03 * N * N * R, rtol=1e-8)
        devs.append((t.n_entries - truth.expected_n_ones) / np.sqrt(truth.n_ones_variance))
        if not binary:
            devs.append((t.values.sum() - truth.expected_count)
                        / np.sqrt(truth.expected_count))
    assert np.abs(devs).max() < 5, devs
    _, tn = make_bpbfm_data(N, R, 5, binary=binary, n_ones=500.0, random_state=0)
    np.testing.assert_allclose(tn.expected_n_ones if binary else tn.expected_count, 500.0)


def test_series_expectation_matches_exact(monkeypatch):
    """Large tensors use the third-order series; on a sparse one it equals the full sum."""
    kw = dict(n_entities=2000, n_relations=3, n_topics=4, density=1e-4, random_state=2)
    _, exact = make_bpbfm_data(**kw)
    monkeypatch.setattr(bpbfm_module, "_EXACT_CELLS", 0)
    _, series = make_bpbfm_data(**kw)
    assert exact.expected_exact and not series.expected_exact
    np.testing.assert_allclose(series.scale, exact.scale, rtol=1e-6)
    np.testing.assert_allclose(series.expected_n_ones, exact.expected_n_ones, rtol=1e-6)
    np.testing.assert_allclose(series.n_ones_variance, exact.n_ones_variance, rtol=1e-6)
    # too dense for the series: falls back to summing every cell
    _, dense = make_bpbfm_data(60, 3, 3, density=0.2, random_state=0)
    assert dense.expected_exact
    np.testing.assert_allclose(dense.expected_n_ones, 0.2 * 60 * 60 * 3, rtol=1e-8)


def test_sparse_sampler_matches_dense_poisson():
    """``draw_bpbfm_counts`` (superposition + thinning) against ``rng.poisson`` of the dense
    rates: per-cell means and P(X = 0), and the two samplers' means against each other."""
    rng = np.random.default_rng(0)
    N, R, K, n = 6, 2, 2, 3000
    U = rng.dirichlet(np.ones(N), size=K).T
    L = rng.gamma(2.0, 2.0, size=(R, K, K))
    rate = np.einsum("ik,rkl,jl->rij", U, L, U)                    # (R, N, N)
    total = np.zeros_like(rate)
    zeros = np.zeros_like(rate)
    seeds = np.random.SeedSequence(1).spawn(n)
    for s in seeds:
        h, r, t, c = draw_bpbfm_counts(U, L, s)
        assert h.dtype == np.int32 and c.dtype == np.int64 and (c >= 1).all()
        Y = np.zeros_like(rate)
        Y[r, h, t] = c
        total += Y
        zeros += Y == 0
    dense = np.random.default_rng(2).poisson(rate, size=(n, *rate.shape))
    m = rate.size
    z_mean = (total / n - rate) / np.sqrt(rate / n)
    assert _chi2_ok(float((z_mean ** 2).sum()), m)
    p0 = np.exp(-rate)
    z_zero = (zeros / n - p0) / np.sqrt(p0 * (1 - p0) / n)
    assert _chi2_ok(float((z_zero ** 2).sum()), m)
    z_two = (total / n - dense.mean(axis=0)) / np.sqrt(2 * rate / n)
    assert _chi2_ok(float((z_two ** 2).sum()), m)
    z_dense = (dense.mean(axis=0) - rate) / np.sqrt(rate / n)
    assert _chi2_ok(float((z_dense ** 2).sum()), m)


def test_block_counts_match_rates():
    """One planted instance: counts per (relation, head cluster, tail cluster) block match
    the summed rates (the planted blocks are where the ones are)."""
    t, truth = make_bpbfm_data(150, 6, 3, binary=False, random_state=4)
    X = _dense_rates(truth)
    c = truth.clusters
    onehot = (c[:, None] == np.arange(3)).astype(float)
    expected = np.einsum("rij,ia,jb->rab", X, onehot, onehot)
    observed = np.einsum("rij,ia,jb->rab", _dense_values(t), onehot, onehot)
    keep = expected >= 5
    stat = float(((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum())
    assert _chi2_ok(stat, int(keep.sum()))
    # the planted pattern dominates: blocks with pattern weight 1 hold most of the counts
    strong = truth.pattern >= 0.5
    assert observed[strong].sum() > 0.7 * observed.sum()


def test_scale_and_holdout():
    t, truth = make_bpbfm_data(20_000, 50, 5, n_ones=100_000, random_state=0)
    assert not truth.expected_exact
    z = (t.n_entries - truth.expected_n_ones) / np.sqrt(truth.n_ones_variance)
    assert abs(z) < 5
    train, held, _ = holdout_tensor_entries(make_bpbfm_data(30, 3, 2, random_state=0)[0],
                                            0.1, random_state=0)
    assert len(train.missing) == len(held) > 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(model=3), "model"),
    (dict(n_dictionary=3), "model=2"),
    (dict(density=0.1, n_ones=10.0), "not both"),
    (dict(density=1.5), "density"),
    (dict(n_ones=1e9), "cells"),
    (dict(dirichlet_a=(1.0,)), "dirichlet_a"),
    (dict(dirichlet_a=-1.0), "dirichlet_a"),
    (dict(n_topics=1), "n_topics"),
    (dict(gamma_shape=0.0), "gamma_shape"),
    (dict(n_off_diagonal=100), "n_off_diagonal"),
])
def test_generator_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_bpbfm_data(**kwargs)


# ---------------------------------------------------------------------- DataFrame / networkx
def _same_triples(a: RelationalTensor, b: RelationalTensor) -> None:
    def table(t: RelationalTensor) -> set[tuple[str, str, str, float]]:
        return {(t.entity_names[h], t.relation_names[r], t.entity_names[x], v)
                for h, r, x, v in zip(t.heads, t.relations, t.tails, t.values, strict=True)}
    assert table(a) == table(b)


@pytest.mark.parametrize("binary", [True, False])
def test_dataframe_round_trip(binary):
    t, _ = make_bpbfm_data(40, 5, 3, binary=binary, random_state=0)
    df = t.to_dataframe()
    assert list(df.columns) == ["head", "relation", "tail", "value"]
    assert df["value"].dtype == np.int64
    value = None if binary else "value"
    back = RelationalTensor.from_dataframe(df, value=value, entities=t.entity_names,
                                           relations=t.relation_names)
    for name in ("heads", "relations", "tails", "values", "entity_names", "relation_names"):
        np.testing.assert_array_equal(getattr(back, name), getattr(t, name))
    assert back.shape == t.shape
    # default vocabularies: the sorted names found (isolated entities are dropped)
    free = RelationalTensor.from_dataframe(df.rename(columns={"head": "h"}), head="h",
                                           value=value)
    assert free.entity_names.tolist() == sorted(free.entity_names.tolist())
    _same_triples(free, t)


def test_dataframe_values_duplicates_and_zeros(caplog):
    df = pd.DataFrame({"head": ["a", "b", "a", "c", "a"],
                       "relation": ["likes", "likes", "hates", "likes", "likes"],
                       "tail": ["b", "c", "c", "a", "b"],
                       "n": [1, 2, 3, 0, 4]})
    with caplog.at_level(logging.INFO, logger="topiclink.data.tensor"):
        t = RelationalTensor.from_dataframe(df, value="n", entities=["a", "b", "c", "d"])
    assert "merged 1 duplicate" in caplog.text and "dropped 1 triples with count 0" in caplog.text
    assert t.n_entities == 4 and t.relation_names.tolist() == ["hates", "likes"]
    assert t.to_dataframe().values.tolist() == [["a", "likes", "b", 5], ["b", "likes", "c", 2],
                                                ["a", "hates", "c", 3]]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="topiclink.data.tensor"):
        tb = RelationalTensor.from_dataframe(df)            # binary: kept once
    assert "merged 1 duplicate" in caplog.text
    assert tb.n_entries == 4 and (tb.values == 1).all()
    with pytest.raises(DataError, match=r"^row 4: repeats the triple of row 0; 1 repeated"):
        RelationalTensor.from_dataframe(df, duplicates="error")
    # integer names and float counts that are integers are fine
    ints = pd.DataFrame({"head": [1, 2], "relation": [7, 7], "tail": [2, 1],
                         "value": [2.0, 1.0]})
    ti = RelationalTensor.from_dataframe(ints, value="value")
    assert ti.entity_names.tolist() == ["1", "2"] and ti.values.tolist() == [2.0, 1.0]


def test_networkx_round_trip():
    t, _ = make_bpbfm_data(30, 4, 3, binary=False, random_state=1)
    g = t.to_networkx()
    assert isinstance(g, nx.MultiDiGraph) and g.number_of_nodes() == 30
    assert g.number_of_edges() == t.n_entries
    back = RelationalTensor.from_networkx(g, value="value", relations=t.relation_names)
    assert back.shape == t.shape
    np.testing.assert_array_equal(back.entity_names, t.entity_names)
    np.testing.assert_array_equal(_dense_values(back), _dense_values(t))
    binary = RelationalTensor.from_networkx(t.to_networkx(value=None))
    assert (binary.values == 1).all() and binary.n_entries == t.n_entries
    # parallel edges with one relation are duplicates; nodes keep the graph's order
    h = nx.MultiDiGraph()
    h.add_nodes_from(["z", "y", "x"])
    h.add_edge("z", "y", relation="knows", w=2)
    h.add_edge("z", "y", relation="knows", w=3)
    h.add_edge("y", "z", relation="likes", w=1)
    th = RelationalTensor.from_networkx(h, value="w")
    assert th.entity_names.tolist() == ["z", "y", "x"] and th.n_entities == 3
    assert th.to_dataframe().values.tolist() == [["z", "knows", "y", 5], ["y", "likes", "z", 1]]


_DF = pd.DataFrame({"head": ["a", "b", "a"], "relation": ["r", "r", "s"],
                    "tail": ["b", "c", "c"], "n": [1, 2, 3]})


@pytest.mark.parametrize("kwargs, frame, match", [
    (dict(entities=["a", "b"]), _DF, r"^row 1: unknown tail 'c' \(not in entities=\)$"),
    (dict(relations=["r"]), _DF, r"^row 2: unknown relation 's'"),
    (dict(value="n"), _DF.assign(n=[1, -1, 2]), r"^row 1: count \('n'\) -1 is negative$"),
    (dict(value="n"), _DF.assign(n=[1, 2, np.nan]), r"^row 2: count \('n'\) is missing"),
    (dict(value="n"), _DF.assign(n=[1, 2.5, 1]), r"^row 1: count \('n'\) 2.5 is not an int"),
    (dict(value="n"), _DF.assign(n=[1, "x", 1]), r"^row 1: count \('n'\) 'x' is not a numb"),
    (dict(value="n"), _DF.assign(n=[np.inf, 1, 1]), r"^row 0: count \('n'\) inf is not fin"),
    (dict(), _DF.iloc[:0], r"no triples \(no entries\)"),
    (dict(value="n"), _DF.assign(n=0), r"no nonzero count \(no entries\)"),
    (dict(value="count"), _DF, r"^DataFrame has no column 'count'"),
    (dict(tail="to"), _DF, r"^DataFrame has no column 'to'"),
    (dict(), _DF.assign(head=["a", None, "b"]), r"^row 1: missing head"),
    (dict(entities=["a", "b", "a", "c"]), _DF, r"name 'a' appears twice"),
    (dict(), _DF.set_index(pd.Index([10, 11, 12])).assign(head=["a", "b", None]),
     r"^row 2 \(index 12\): missing head"),
])
def test_dataframe_bad_input(kwargs, frame, match):
    with pytest.raises(DataError, match=match) as err:
        RelationalTensor.from_dataframe(frame, **kwargs)
    assert "\n" not in str(err.value)


def test_networkx_bad_input():
    g = nx.MultiDiGraph()
    g.add_edge("a", "b", relation="r", n=1)
    g.add_edge("b", "c", n=2)
    cases = [
        (g, {}, r"^edge 1 \('b' -> 'c'\): no 'relation' attribute$"),
        (nx.MultiDiGraph([("a", "b", {"relation": "r"})]), {"value": "n"},
         r"^edge 0 \('a' -> 'b'\): no 'n' attribute$"),
        (nx.MultiDiGraph([("a", "b", {"relation": "r", "n": -2})]), {"value": "n"},
         r"^edge 0 \('a' -> 'b'\): count \('n'\) -2 is negative$"),
        (nx.MultiDiGraph([("a", "b", {"relation": "r"})]), {"relations": ["q"]},
         r"^edge 0 \('a' -> 'b'\): unknown relation 'r'"),
        (nx.MultiDiGraph(), {}, r"no triples"),
        (nx.Graph([("a", "b")]), {}, r"undirected"),
    ]
    for graph, kwargs, match in cases:
        with pytest.raises(DataError, match=match) as err:
            RelationalTensor.from_networkx(graph, **kwargs)
        assert "\n" not in str(err.value)
    with pytest.raises(TypeError, match="networkx"):
        RelationalTensor.from_networkx([("a", "b")])
