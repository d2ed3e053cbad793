"""Stochastic LMV ("LMVS", Tan, Chan & Zheng 2016, Algorithm 2; docs/design/lmv.md).

What is checked:

* the pair kernel's breadth-first search gives scipy's unweighted shortest-path lengths
  (cut at ``n0``), forwards over ``cites`` and backwards over ``cited_by``;
* the inclusion rule pi = 1 (link), 1/l (2 <= l < n0), 1/n0 (otherwise);
* with n0 = 1 (every pair included with weight 1) the sampled statistics of a minibatch are
  the exact all-pairs statistics restricted to it (streamed kernel and NumPy twin);
* the Horvitz-Thompson statistics are unbiased: over many seeds their mean is the exact
  value within Monte-Carlo error, their variance is the Bernoulli-design variance, the
  number of sampled pairs has mean sum(pi), and an unweighted estimator would be far off;
* results do not depend on the thread count; a seed fixes the fit;
* a planted network is recovered; partial_fit grows the training set; save/load and
  fit(resume=True) continue exactly; the diag(B) stopping rule stops the sweeps.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import shortest_path

import topiclink
from tests import naive
from topiclink.data import DataError
from topiclink.datasets import make_lmv_data
from topiclink.families.lmv.algorithm import LMVData
from topiclink.families.lmv.estimator import VisibilityTopicModel
from topiclink.families.lmv.kernels_sampled import bfs_lengths, inclusion_probability
from topiclink.families.lmv.pairs import stream_pair_statistics
from topiclink.families.lmv.stochastic import sampled_statistics

K = 4


# ---------------------------------------------------------------------------- helpers
def _random_links(D, n_links, rng):
    pairs = set()
    while len(pairs) < n_links:
        d, c = (int(x) for x in rng.integers(0, D, 2))
        if d != c:
            pairs.add((d, c))
    return np.array(sorted(pairs), np.int64).reshape(-1, 2)


def _network(D, n_links, seed, time=None):
    """LMVData of a random directed network and random variational quantities."""
    rng = np.random.default_rng(seed)
    links = _random_links(D, n_links, rng)
    counts = sp.random(D, 20, density=0.3, random_state=seed, format="csr") * 10
    data = LMVData.build(counts, links, time)
    p = dict(elog_theta=np.log(rng.dirichlet(np.full(K, 0.5), D)),
             vs_link=np.log(rng.uniform(0.05, 0.9, (K, K))),
             elog_tau=np.log(rng.uniform(0.2, 0.95, D)),
             taubar=rng.uniform(0.2, 0.95, D), Bbar=rng.uniform(0.05, 0.95, (K, K)))
    return data, links, p


def _sampled(batch, data, p, **kw):
    return sampled_statistics(batch, p["elog_theta"], data, p["vs_link"], p["elog_tau"],
                              p["taubar"], p["Bbar"], **kw)


def _lengths(data):
    """(D, D) directed shortest-path length d -> d' (inf: unreachable)."""
    return shortest_path(data.cites.astype(np.float64), unweighted=True, directed=True)


def _pi(data, links, n0):
    """Exact inclusion probability of every ordered pair (diagonal: 0)."""
    D = data.n_docs
    length = _lengths(data)
    pi = np.full((D, D), 1.0 / n0)
    mid = (length >= 2) & (length < n0)
    pi[mid] = 1.0 / length[mid]
    pi[links[:, 0], links[:, 1]] = 1.0
    np.fill_diagonal(pi, 0.0)
    return pi


def _matched(model, truth):
    """Hungarian matching of the fitted topics to the true ones on cosine (as in
    tests/families/lmv/test_lmv.py): ``order[k]`` is the fitted topic of true topic k."""
    cos = model.components_ @ truth.topic_word.T
    cos /= np.outer(np.linalg.norm(model.components_, axis=1),
                    np.linalg.norm(truth.topic_word, axis=1))
    rows, cols = linear_sum_assignment(-cos)
    order = np.empty(cos.shape[1], int)
    order[cols] = rows
    return order, cos[rows, cols]


FITTED = ("components_", "doc_topic_", "blockmodel_", "visibility_", "citation_topics_")


def _assert_same_fit(a, b):
    for name in FITTED:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def planted():
    """The planted network of tests/families/lmv/test_lmv.py (batch LMV recovers it)."""
    return make_lmv_data(n_docs=400, n_words=100, n_topics=6, random_state=1)


@pytest.fixture(scope="module")
def small():
    return make_lmv_data(n_docs=150, n_words=100, n_topics=6, random_state=5)


def _lmvs(**kw):
    args = dict(inference="stochastic", max_iter=3, tol=0.0, batch_size=40, n0=10,
                random_state=0, n_jobs=1)
    return VisibilityTopicModel(6, **{**args, **kw})


@pytest.fixture(scope="module")
def small_fit(small):
    (corpus, links), _ = small
    return _lmvs().fit(corpus, links=links)


# ---------------------------------------------------------------------------- 1, 2: kernel
@pytest.mark.parametrize("max_len", [1, 2, 3, 5, 1000])
def test_bfs_lengths_are_scipy_shortest_paths(max_len):
    D = 200
    data, _, _ = _network(D, 320, seed=11)
    length = _lengths(data)
    dist = np.full(D, -1, np.int32)
    queue = np.empty(D, np.int64)
    for graph, table in ((data.cites, length), (data.cited_by, length.T)):
        indptr, indices = graph.indptr.astype(np.int64), graph.indices.astype(np.int64)
        for source in range(0, D, 7):
            n_set = bfs_lengths(indptr, indices, source, max_len, dist, queue)
            row = table[source]
            want = np.where(row < max_len, row, -1).astype(np.int32)
            np.testing.assert_array_equal(dist, want)
            assert n_set == np.count_nonzero(want >= 0)
            assert sorted(queue[:n_set]) == list(np.flatnonzero(want >= 0))
            dist[queue[:n_set]] = -1                  # the kernel's reset
            assert np.all(dist == -1)
    # the graph has paths longer than 3 and unreachable pairs
    assert length[np.isfinite(length)].max() > 3 and np.isinf(length).any()


def test_inclusion_probability_rule():
    n0 = 5
    assert inclusion_probability(True, 1, n0) == 1.0
    assert inclusion_probability(True, -1, n0) == 1.0   # a link, whatever the BFS says
    assert inclusion_probability(False, 2, n0) == 0.5
    assert inclusion_probability(False, 3, n0) == pytest.approx(1 / 3, rel=1e-15)
    assert inclusion_probability(False, 4, n0) == 0.25
    assert inclusion_probability(False, 5, n0) == 0.2    # l = n0: 1/n0 (not 1/l)
    assert inclusion_probability(False, 50, n0) == 0.2
    assert inclusion_probability(False, -1, n0) == 0.2   # unreachable
    assert inclusion_probability(False, -1, 1) == 1.0    # n0 = 1: every pair


# ---------------------------------------------------------------------------- 3: n0 = 1
@pytest.mark.parametrize("timed", [False, True])
def test_n0_one_gives_the_exact_statistics_of_the_minibatch(timed):
    """n0 = 1: every pair with an end in S is included with weight 1, so gamma_pairs is
    gamma_out + gamma_in of S, T the rows of S, and S1 the links citing into S."""
    D = 30
    time = None
    if timed:
        time = np.random.default_rng(2).uniform(0, 10, D)
        time[[3, 17]] = np.nan
    data, links, p = _network(D, 70, seed=3, time=time)
    S = np.array([0, 2, 3, 9, 10, 17, 21, 29])
    got = _sampled(S, data, p, n0=1, seed=12345, tol=1e-10)
    want = stream_pair_statistics(p["elog_theta"], data.cites.indptr, data.cites.indices,
                                  p["vs_link"], p["elog_tau"], p["taubar"], p["Bbar"],
                                  time=time, tol=1e-10)
    twin = naive.lmv_pair_statistics(p["elog_theta"], links, p["vs_link"], p["elog_tau"],
                                     p["taubar"], p["Bbar"], time=time, tol=1e-10)
    np.testing.assert_allclose(got["gamma_pairs"], want["gamma_out"][S] + want["gamma_in"][S],
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(got["T"], want["T"][S], rtol=0, atol=1e-10)
    np.testing.assert_allclose(want["T"][S], twin["T"][S], rtol=0, atol=1e-10)
    into_S = np.isin(links[:, 1], S)
    kap, nu = twin["kappa"][links[:, 0], links[:, 1]], twin["nu"][links[:, 0], links[:, 1]]
    S1 = np.einsum("li,lj->ij", kap[into_S], nu[into_S])
    assert into_S.sum() > 5 and (~into_S).sum() > 5
    np.testing.assert_allclose(got["S1"], S1, rtol=0, atol=1e-10)
    # pairs with an end in S (both ends: one pair), less the time-masked non-links
    end_in_S = np.isin(np.arange(D), S)
    counted = ~np.isnan(twin["kappa"][:, :, 0])
    assert got["n_pairs"] == np.count_nonzero(counted & (end_in_S[:, None] | end_in_S))
    if timed:
        assert np.count_nonzero(~counted) > D   # the time mask really removed pairs


# ---------------------------------------------------------------------------- 4: unbiased
@pytest.fixture(scope="module")
def horvitz_thompson():
    """400 draws of the sampled statistics of one minibatch (n0 = 4) with the exact
    per-pair (kappa, nu) of the NumPy twin."""
    D, n0 = 50, 4
    data, links, p = _network(D, 65, seed=8)
    S = np.array([1, 4, 5, 12, 20, 33, 34, 40, 41, 49])
    twin = naive.lmv_pair_statistics(p["elog_theta"], links, p["vs_link"], p["elog_tau"],
                                     p["taubar"], p["Bbar"], tol=1e-10)
    seeds = np.random.default_rng(99).integers(0, 2**63, 400)
    draws = [_sampled(S, data, p, n0=n0, seed=int(s), tol=1e-10) for s in seeds]
    return dict(D=D, S=S, data=data, links=links, pi=_pi(data, links, n0), twin=twin,
                gamma=np.array([d["gamma_pairs"] for d in draws]),
                T=np.array([d["T"].sum(axis=0) for d in draws]),
                S1=np.array([d["S1"] for d in draws]),
                n_pairs=np.array([d["n_pairs"] for d in draws], float))


def _design(ht):
    """Per checked entry: each pair's value x_p and pi_p (zero x for pairs not in it), for
    gamma_pairs (|S| * K entries) then T summed over S (K * K entries)."""
    D, S, pi, twin = ht["D"], ht["S"], ht["pi"], ht["twin"]
    kappa = np.nan_to_num(twin["kappa"])          # (D, D, K); diagonal: 0
    nu = np.nan_to_num(twin["nu"])
    values, probs = [], []
    for d in S:                                    # gamma_pairs[d]: kappa of (d, .), nu of (., d)
        x = np.zeros((D, D, K))
        x[d] += kappa[d]
        x[:, d] += nu[:, d]
        values.append(x.reshape(D * D, K).T)
        probs.append(np.broadcast_to(pi.ravel(), (K, D * D)))
    y = np.zeros((D, D), bool)
    y[ht["links"][:, 0], ht["links"][:, 1]] = True
    cited_in_S = np.zeros((D, D), bool)
    cited_in_S[:, S] = True
    mask = cited_in_S & ~y
    np.fill_diagonal(mask, False)
    outer = np.einsum("dci,dcj->dcij", kappa, nu) * mask[:, :, None, None]
    values.append(outer.reshape(D * D, K * K).T)
    probs.append(np.broadcast_to(pi.ravel(), (K * K, D * D)))
    x, prob = np.vstack(values), np.vstack(probs)
    safe = np.where(prob > 0, prob, 1.0)
    exact = x.sum(axis=1)
    variance = ((1 - prob) / safe * x**2).sum(axis=1)          # Bernoulli design, HT
    unweighted = (prob * x).sum(axis=1)                        # E of weight 1 instead of 1/pi
    return exact, variance, unweighted


def test_horvitz_thompson_statistics_are_unbiased(horvitz_thompson):
    ht = horvitz_thompson
    R = ht["gamma"].shape[0]
    exact, variance, unweighted = _design(ht)
    draws = np.hstack([ht["gamma"].reshape(R, -1), ht["T"].reshape(R, -1)])
    se = np.sqrt(variance / R)
    assert np.all(se > 0)
    z = (draws.mean(axis=0) - exact) / se
    assert np.abs(z).max() < 4.5, np.abs(z).max()
    # the Monte-Carlo standard errors agree with the design's (independent trials)
    ratio = draws.var(axis=0, ddof=1) / variance
    assert 0.8 < np.median(ratio) < 1.25, np.median(ratio)
    # the same z-test would reject weight 1 instead of 1/pi on almost every entry
    z_wrong = np.abs(unweighted - exact) / se
    assert np.mean(z_wrong > 4.5) > 0.9 and z_wrong.min() > 2
    # links have pi = 1: S1 is the same exact value in every draw
    S, links, twin = ht["S"], ht["links"], ht["twin"]
    into = links[np.isin(links[:, 1], S)]
    S1 = np.einsum("li,lj->ij", twin["kappa"][into[:, 0], into[:, 1]],
                   twin["nu"][into[:, 0], into[:, 1]])
    np.testing.assert_allclose(ht["S1"], np.broadcast_to(S1, ht["S1"].shape), atol=1e-10)


def test_pairs_are_drawn_with_the_inclusion_probabilities(horvitz_thompson):
    """Mean number of sampled pairs = sum of pi over the pairs with an end in S, within
    4.5 standard errors of the independent-Bernoulli design; 1/n0 for every non-link
    (no shortest paths) would be far off."""
    ht = horvitz_thompson
    D, S, pi = ht["D"], ht["S"], ht["pi"]
    end = np.isin(np.arange(D), S)
    candidates = (end[:, None] | end) & ~np.eye(D, dtype=bool)
    p = pi[candidates]
    for value in (1.0, 0.5, 1 / 3, 0.25):       # links, l = 2, l = 3, l >= 4 or none
        assert np.count_nonzero(np.isclose(p, value)) > 10, value
    R = ht["n_pairs"].size
    se = np.sqrt((p * (1 - p)).sum() / R)
    assert abs(ht["n_pairs"].mean() - p.sum()) < 4.5 * se
    flat = np.where(p == 1.0, 1.0, 0.25)
    assert abs(flat.sum() - p.sum()) > 10 * se


# ---------------------------------------------------------------------------- 5, 6: determinism
def test_thread_count_is_bit_identical():
    data, _, p = _network(100, 250, seed=21, time=np.random.default_rng(4).uniform(0, 5, 100))
    S = np.sort(np.random.default_rng(5).choice(100, 40, replace=False))  # 3 blocks of 16
    one, two = (_sampled(S, data, p, n0=6, seed=777, n_threads=n) for n in (1, 2))
    for key in ("gamma_pairs", "S1", "T"):
        np.testing.assert_array_equal(one[key], two[key], err_msg=key)
    assert (one["rounds"], one["n_pairs"]) == (two["rounds"], two["n_pairs"])
    assert one["n_pairs"] > 0


def test_document_table_gives_the_per_pair_statistics_bit_for_bit():
    """The per-minibatch table of cited / citing terms (cited_table) is the same numbers
    as computing them for every pair (no table: what a shipped block does)."""
    from topiclink.families.lmv.stochastic import (
        PairMerge,
        batch_positions,
        block_edges,
        document_table,
        graph_arrays,
        pair_arguments,
        pair_block,
    )

    data, _, p = _network(90, 300, seed=8, time=np.random.default_rng(2).uniform(0, 5, 90))
    S = np.sort(np.random.default_rng(3).choice(90, 35, replace=False))
    pos, graph = batch_positions(S, 90), graph_arrays(data)
    results = []
    for table in (None, document_table(p["elog_theta"], p["taubar"], p["Bbar"], 2)):
        args = pair_arguments(p["elog_theta"], graph, p["vs_link"], p["elog_tau"],
                              p["taubar"], p["Bbar"], n0=5, seed=99, tol=1e-6,
                              max_inner=100, table=table)
        out = PairMerge(S.size, K)
        edges = block_edges(S.size)
        for i in range(len(edges) - 1):
            out.merge(pair_block(S, pos, edges[i], edges[i + 1], args, out.gout_rows,
                                 out.gin, out.T))
        results.append(out.result())
    plain, tabled = results
    assert plain["n_pairs"] > 100
    for key in ("gamma_pairs", "S1", "T", "rounds", "n_pairs"):
        np.testing.assert_array_equal(plain[key], tabled[key], err_msg=key)


def test_fit_does_not_depend_on_n_jobs(small, small_fit):
    (corpus, links), _ = small
    two = _lmvs(n_jobs=2).fit(corpus, links=links)
    _assert_same_fit(small_fit, two)


def test_the_seed_fixes_the_fit(small, small_fit):
    (corpus, links), _ = small
    _assert_same_fit(small_fit, _lmvs().fit(corpus, links=links))
    other = _lmvs(random_state=1).fit(corpus, links=links)
    assert not np.allclose(other.blockmodel_, small_fit.blockmodel_)
    assert not np.allclose(other.doc_topic_, small_fit.doc_topic_)


# ---------------------------------------------------------------------------- 7: recovery
def test_planted_network_is_recovered(planted):
    """The network batch LMV recovers in tests/families/lmv/test_lmv.py, fitted by LMVS with the
    paper's
    defaults (A1 = 1, A2 = 5, v = 0.501, n0 = 100), minibatches of 100, 60 sweeps.
    Thresholds fixed before running (those of the batch test): topics matched with cosine
    > 0.9, visibility correlation > 0.8, every diagonal block within 0.08 of the truth,
    the zero blocks below 0.05."""
    (corpus, links), truth = planted
    model = VisibilityTopicModel(6, inference="stochastic", batch_size=100, max_iter=60,
                                 tol=0.0, random_state=0, n_jobs=2).fit(corpus, links=links)
    order, cos = _matched(model, truth)
    assert cos.min() > 0.9
    assert np.corrcoef(model.visibility_, truth.visibility)[0, 1] > 0.8
    B = model.blockmodel_[np.ix_(order, order)]
    np.testing.assert_allclose(np.diag(B), np.diag(truth.blockmodel), atol=0.08)
    assert B[truth.blockmodel == 0].max() < 0.05
    assert np.all(np.isnan(model.trace_["log_likelihood"]))   # L* is not evaluated


# ---------------------------------------------------------------------------- 8: partial_fit
def _links_among(pairs, n):
    return pairs[(pairs < n).all(axis=1)]


def test_partial_fit_grows_the_training_set(planted):
    """fit on the first 300 documents, then two chunks with their links in the global
    numbering (all links so far each time: known ones are ignored).

    The first 300 documents of this draw do not identify all six topics (batch LMV and
    LMVS, random_state 0, 1, 2: one or two matched cosines 0.14-0.86, the rest > 0.9), so
    "all topics > 0.8" cannot be asked of any continuation; the criterion (set after
    seeing that) is: at least four topics recovered by the start (cosine > 0.9), and each
    of them still matched with cosine > 0.8 after the two partial_fits."""
    (corpus, links), truth = planted
    pairs = np.asarray(links.pairs)
    D = corpus.n_docs
    kw = dict(inference="stochastic", batch_size=100, tol=0.0, random_state=0, n_jobs=2)
    model = VisibilityTopicModel(6, max_iter=20, **kw).fit(
        corpus.subset(np.arange(300)), links=_links_among(pairs, 300))
    _, start = _matched(model, truth)
    recovered = start > 0.9
    assert recovered.sum() >= 4
    model.partial_fit(corpus.subset(np.arange(300, 350)), links=_links_among(pairs, 350))
    assert model.doc_topic_.shape == (350, 6)
    model.partial_fit(corpus.subset(np.arange(350, D)), links=pairs)
    assert model.doc_topic_.shape == (D, 6) and model.visibility_.shape == (D,)
    assert model.n_links_ == len(np.unique(pairs, axis=0))
    assert model.citation_topics_.shape == (model.n_links_, 2)
    assert model.n_iter_ == 22 and model.trace_["pairs"].size == 22
    _, cos = _matched(model, truth)
    assert cos[recovered].min() > 0.8, (start, cos)
    # the grown training set is the full data: fit(resume=True) continues on it
    model.set_params(max_iter=1).fit(corpus, links=links, resume=True)
    assert model.n_iter_ == 23

    # partial_fit from scratch builds the same kind of model
    fresh = VisibilityTopicModel(6, max_iter=1, **kw)
    fresh.partial_fit(corpus.subset(np.arange(300)), links=_links_among(pairs, 300))
    fresh.partial_fit(corpus.subset(np.arange(300, D)), links=pairs)
    assert fresh.doc_topic_.shape == (D, 6) and fresh.n_links_ == model.n_links_
    assert fresh.n_iter_ == 2


def test_partial_fit_errors(small, small_fit, tmp_path):
    (corpus, links), _ = small
    with pytest.raises(ValueError, match="inference='stochastic'"):
        VisibilityTopicModel(6, max_iter=1).partial_fit(corpus, links=links)
    # saved without its state (the stream is kept there; a full save continues it)
    loaded = topiclink.load(small_fit.save(tmp_path / "m.npz"))
    with pytest.raises(ValueError, match="loaded from a file"):
        loaded.partial_fit(corpus.subset([0, 1]), links=links)
    (timed, tlinks), truth = make_lmv_data(n_docs=60, n_topics=6, publication_time=True,
                                          random_state=4)
    first = np.arange(50)
    tp = np.asarray(tlinks.pairs)
    model = _lmvs(batch_size=25).partial_fit(
        timed.subset(first), links=_links_among(tp, 50),
        publication_time=truth.publication_time[:50])
    rest = timed.subset(np.arange(50, 60))
    with pytest.raises(DataError, match="give publication_time"):
        model.partial_fit(rest, links=tp)
    with pytest.raises(DataError, match="publication_time has"):
        model.partial_fit(rest, links=tp, publication_time=truth.publication_time[50:55])
    model.partial_fit(rest, links=tp, publication_time=truth.publication_time[50:])
    assert model.doc_topic_.shape == (60, 6)
    untimed = _lmvs(batch_size=25).partial_fit(timed.subset(first), links=_links_among(tp, 50))
    with pytest.raises(DataError, match="the fit has none"):
        untimed.partial_fit(rest, links=tp, publication_time=truth.publication_time[50:])


# ---------------------------------------------------------------------------- 9: save / resume
def test_save_load_round_trip(small, small_fit, tmp_path):
    (corpus, _), _ = small
    loaded = topiclink.load(small_fit.save(tmp_path / "m.npz"))
    assert loaded.inference == "stochastic" and loaded.n0 == small_fit.n0
    for name in VisibilityTopicModel._saved_arrays:
        np.testing.assert_array_equal(getattr(loaded, name), getattr(small_fit, name),
                                      err_msg=name)
    assert (loaded.n_iter_, loaded.n_links_) == (small_fit.n_iter_, small_fit.n_links_)
    new = corpus.subset(np.arange(5))
    np.testing.assert_array_equal(loaded.predict_link_proba(new),
                                  small_fit.predict_link_proba(new))


def test_resume_continues_exactly(small, tmp_path):
    """6 sweeps = 3 + 3, in memory and through save(full=True) + load, draw for draw."""
    (corpus, links), _ = small
    whole = _lmvs(max_iter=6).fit(corpus, links=links)
    half = _lmvs(max_iter=3).fit(corpus, links=links)
    path = half.save(tmp_path / "half.npz", full=True)
    half.fit(corpus, links=links, resume=True)
    assert half.n_iter_ == 6
    _assert_same_fit(whole, half)
    np.testing.assert_array_equal(whole.trace_["blockmodel_change"],
                                  half.trace_["blockmodel_change"])
    loaded = topiclink.load(path)
    assert loaded.n_iter_ == 3
    loaded.fit(corpus, links=links, resume=True)
    assert loaded.n_iter_ == 6
    _assert_same_fit(whole, loaded)
    np.testing.assert_array_equal(whole.state_.g, loaded.state_.g)
    assert whole.state_.updates == loaded.state_.updates
    with pytest.raises(ValueError, match="resume needs the data"):
        loaded.fit(corpus.subset(np.arange(20)), links=np.array([[0, 1]]), resume=True)


# ---------------------------------------------------------------------------- 10: stopping
def test_diagonal_change_stops_the_sweeps(small):
    (corpus, links), _ = small
    model = _lmvs(max_iter=30, tol=0.5, stopping="paper").fit(corpus, links=links)
    change = model.trace_["blockmodel_change"]
    assert model.stopped_early_ and model.n_iter_ < 30
    assert change.size == model.n_iter_ and np.all(np.isfinite(change))
    assert change[-1] < 0.5 and np.all(change[:-1] >= 0.5)
    assert model.converged_ and model.stop_reason_.startswith(
        f"tolerance at sweep {model.n_iter_}")
    never = _lmvs(max_iter=4, tol=0.0).fit(corpus, links=links)
    assert not never.stopped_early_ and never.n_iter_ == 4
    assert not never.converged_ and never.stop_reason_.startswith("max_iter reached")


def test_blockmodel_counts_every_pair_once(small_fit, small):
    """The blockmodel's Beta factors weigh all D (D - 1) pairs (the D/|S| two-stage
    estimator, paper eq. 4.3): after the sweeps, sum_ij (a_ij + b_ij) is within 10 % of
    that of the batch NCVMP target at the same state from every pair (without the D/|S|
    factor it would be about |S|/D = 0.27 of it)."""
    from scipy.special import digamma

    from topiclink.families.lmv.algorithm import LMVData, expected_log_dirichlet
    from topiclink.families.lmv.pairs import stream_pair_statistics
    from topiclink.families.lmv.updates import blockmodel_target

    (corpus, links), _ = small
    st = small_fit.state_
    data = LMVData.build(corpus.counts, np.asarray(links.pairs, np.int64))
    taubar = st.g / (st.g + st.h)
    exact = stream_pair_statistics(
        expected_log_dirichlet(st.gamma), data.cites.indptr, data.cites.indices,
        digamma(st.a) - digamma(st.a + st.b), digamma(st.g) - digamma(st.g + st.h), taubar,
        st.a / (st.a + st.b))
    a_hat, b_hat = blockmodel_target(st.a, st.b, 1.0, 1.0, exact["S1"], exact["T"], taubar)
    ratio = float(np.sum(st.a + st.b) / np.sum(a_hat + b_hat))
    assert abs(ratio - 1.0) < 0.10, ratio
