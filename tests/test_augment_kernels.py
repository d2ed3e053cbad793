"""Numba Polya-Gamma / inverse-Gaussian samplers (kernels.augment), the all-pairs draw of
the gRTM step, per-document negatives and make_rtm_data's sparse path.

The moment tests compare sample means and variances with the closed forms (z-scores with
the sample's own fourth moment for the variance); with about 90 scores at |z| < 4.5 a
correct sampler fails with probability < 1e-3 (the seeds are fixed anyway).  The KS tests
compare with the reference samplers (the ``polyagamma`` package through ``sample_pg``,
NumPy's ``wald``).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy import stats

from topiclink.data.links import Links
from topiclink.datasets import make_rtm_data
from topiclink.distributions import (
    ig_mean,
    ig_var,
    pg_mean,
    pg_var,
    sample_hinge_augmentation,
    sample_pg,
)
from topiclink.families.rtm.estimator import RelationalTopicModel
from topiclink.random import kernel_state
from topiclink.relational.augment import augment, pseudo_loglik
from topiclink.relational.kernels import augment as ka
from topiclink.relational.negatives import negatives_per_document

Z_MAX = 4.5


def _stream(seed: int) -> np.ndarray:
    return kernel_state(np.random.default_rng(seed))[0]


def _mean_var_z(x: np.ndarray, mean: float, var: float) -> tuple[float, float]:
    n = x.size
    zm = (x.mean() - mean) / np.sqrt(var / n)
    m4 = np.mean((x - mean) ** 4)
    zv = (np.mean((x - mean) ** 2) - var) / np.sqrt(max(m4 - var * var, 1e-300) / n)
    return float(zm), float(zv)


# ---------------------------------------------------------------------- Polya-Gamma
@pytest.mark.parametrize("b", [1.0, 2.0, 3.7, 0.4, 16.0, 25.5, 256.0])
def test_pg_moments_match_closed_forms(b):
    """Mean b/(2z) tanh(z/2) and variance b/(4z^3)(sinh z - z)/cosh^2(z/2) at z = 0,
    moderate and large z (up to 1000, where the polyagamma package's devroye method
    fails)."""
    exact = b == round(b) and b <= ka.PG_EXACT_MAX_B
    n = 200_000 if exact and b <= 2 else 60_000
    for i, z in enumerate([0.0, 0.3, 2.5, 12.0, 200.0, 1000.0]):
        x = ka.pg_draws(np.full(n, b), np.full(n, z), _stream(100 * i + int(10 * b)))
        assert np.all(np.isfinite(x)) and np.all(x > 0)
        zm, zv = _mean_var_z(x, float(pg_mean(b, z)), float(pg_var(b, z)))
        assert abs(zm) < Z_MAX and abs(zv) < Z_MAX, (b, z, zm, zv)


def test_pg_negative_z_is_even():
    n = 100_000
    x = ka.pg_draws(np.full(n, 1.0), np.full(n, -3.0), _stream(1))
    zm, zv = _mean_var_z(x, float(pg_mean(1, 3.0)), float(pg_var(1, 3.0)))
    assert abs(zm) < Z_MAX and abs(zv) < Z_MAX


@pytest.mark.parametrize(("b", "z"), [(1.0, 0.0), (1.0, 3.0), (2.0, 1.0), (1.0, 60.0),
                                      (3.7, 0.5), (0.6, 2.0), (30.0, 4.0)])
def test_pg_matches_polyagamma_package(b, z):
    n = 40_000
    mine = ka.pg_draws(np.full(n, b), np.full(n, z), _stream(7))
    ref = sample_pg(np.random.default_rng(8), np.full(n, b), np.full(n, z))
    assert stats.ks_2samp(mine, ref).pvalue > 1e-3


def test_pg_non_finite_parameters_give_nan_not_a_hang():
    x = ka.pg_draws(np.array([1.0, 1.0, np.nan, 0.0]), np.array([np.nan, np.inf, 1.0, 1.0]),
                    _stream(2))
    assert np.all(np.isnan(x))


def test_pg_is_reproducible_from_the_stream():
    b, z = np.full(1000, 1.0), np.linspace(-5, 5, 1000)
    assert np.array_equal(ka.pg_draws(b, z, _stream(3)), ka.pg_draws(b, z, _stream(3)))
    assert not np.array_equal(ka.pg_draws(b, z, _stream(3)), ka.pg_draws(b, z, _stream(4)))


# ---------------------------------------------------------------------- inverse Gaussian
@pytest.mark.parametrize("lam", [1.0, 3.0])
def test_ig_moments_match_closed_forms(lam):
    """Mean mu, variance mu^3/lam; and E[1/x] = 1/mu + 1/lam (the quantity the hinge
    augmentation uses, finite even when mu = 1e8)."""
    n = 200_000
    for i, mu in enumerate([1e-3, 0.1, 1.0, 10.0, 1e4, 1e8]):
        x = ka.ig_draws(np.full(n, mu), np.full(n, lam), _stream(50 + i))
        assert np.all(x > 0) and np.all(np.isfinite(x))
        if mu <= 10:
            zm, zv = _mean_var_z(x, float(ig_mean(mu, lam)), float(ig_var(mu, lam)))
            assert abs(zm) < Z_MAX and abs(zv) < Z_MAX, (mu, lam, zm, zv)
        r = 1.0 / x
        er, vr = 1.0 / mu + 1.0 / lam, 1.0 / (mu * lam) + 2.0 / lam**2
        assert abs((r.mean() - er) / np.sqrt(vr / n)) < Z_MAX, (mu, lam)


@pytest.mark.parametrize(("mu", "lam"), [(0.05, 1.0), (1.0, 1.0), (4.0, 2.0), (300.0, 1.0)])
def test_ig_matches_numpy_wald(mu, lam):
    n = 40_000
    mine = ka.ig_draws(np.full(n, mu), np.full(n, lam), _stream(11))
    ref = np.random.default_rng(12).wald(mu, lam, size=n)
    assert stats.ks_2samp(mine, ref).pvalue > 1e-3


@pytest.mark.parametrize(("zeta", "c"), [(0.0, 1.0), (0.5, 1.0), (-3.0, 2.0), (2.0, 0.5)])
def test_hinge_lambda_matches_reference(zeta, c):
    n = 40_000
    mine = ka.hinge_lambda_draws(np.full(n, zeta), np.full(n, c), 1e-8, _stream(13))
    ref = sample_hinge_augmentation(np.random.default_rng(14), np.full(n, zeta), c)
    assert stats.ks_2samp(mine, ref).pvalue > 1e-3
    # E[lambda] = c |zeta| + 1
    assert abs(mine.mean() - (c * abs(zeta) + 1)) < Z_MAX * mine.std() / np.sqrt(n)


# ---------------------------------------------------------------------- all-pairs draw
def _pair_problem(seed: int = 0, P: int = 5000, D: int = 300, K: int = 4):
    rng = np.random.default_rng(seed)
    ndk = rng.integers(0, 5, size=(D, K)).astype(np.int32) + 1
    lengths = ndk.sum(axis=1).astype(np.float64)
    Uz = rng.normal(size=(D, K))
    src = rng.integers(0, D, P).astype(np.int64)
    dst = rng.integers(0, D, P).astype(np.int64)
    y = (rng.random(P) < 0.3).astype(np.int8)
    c = np.where(y == 1, 2.0, 1.0)
    return ndk, Uz, src, dst, 1.0 / lengths, y, c


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_pair_draws_do_not_depend_on_grouping(loss):
    """One call over every chunk or one call per chunk: the same draws (chunk streams are
    seeded from the base seed and the chunk index); a, omega and the log-likelihood are
    the model's."""
    ndk, Uz, src, dst, inv, y, c = _pair_problem()
    P = src.size
    bounds = np.array([0, 1000, 1700, 3000, 4100, P], dtype=np.int64)
    code = ka.LOSS_LOGISTIC if loss == "logistic" else ka.LOSS_HINGE
    seed = np.uint64(0xDEADBEEF12345678)

    def run(groups):
        omega, a, b, ll = np.empty(P), np.empty(P), np.empty(P), np.empty(bounds.size - 1)
        for lo, hi in groups:
            ka.augment_pair_chunks(code, lo, hi, bounds, seed, ndk, Uz, src, dst, inv, y,
                                   c, 1.0, 1e-8, omega, a, b, ll)
        return omega, a, b, ll

    whole = run([(0, 5)])
    parts = run([(3, 5), (0, 1), (1, 3)])
    for u, v in zip(whole, parts, strict=True):
        assert np.array_equal(u, v)
    omega, a, b, ll = whole
    expected = np.einsum("pk,pk->p", ndk[src] * inv[src][:, None], Uz[dst])
    np.testing.assert_allclose(omega, expected, rtol=1e-12, atol=1e-12)
    assert np.all(b > 0)
    if loss == "logistic":
        np.testing.assert_array_equal(a, c * (y - 0.5))
    else:
        lam = c * c / b
        ytil = 2.0 * y - 1.0
        np.testing.assert_allclose(a, c * ytil * (lam + c) / lam, rtol=1e-10)
    total = sum((hi - lo) * pseudo_loglik(loss, omega[lo:hi], y[lo:hi], c[lo:hi], 1.0)
                for lo, hi in zip(bounds[:-1], bounds[1:], strict=True))
    assert ll.sum() == pytest.approx(total, rel=1e-10)
    other = ka.augment_pair_chunks  # a different base seed gives different draws
    omega2, a2, b2, ll2 = np.empty(P), np.empty(P), np.empty(P), np.empty(5)
    other(code, 0, 5, bounds, np.uint64(1), ndk, Uz, src, dst, inv, y, c, 1.0, 1e-8,
          omega2, a2, b2, ll2)
    assert not np.array_equal(b, b2)


def test_pair_draws_match_reference_augmentation_in_law():
    """b of the logistic draw is PG(c, omega): compare with the production reference
    ``augment`` at the same omegas (KS on the standardised draws)."""
    ndk, Uz, src, dst, inv, y, c = _pair_problem(P=40_000)
    P = src.size
    bounds = np.arange(0, P + 1, 8192, dtype=np.int64)
    bounds = np.append(bounds, P) if bounds[-1] != P else bounds
    omega, a, b, ll = np.empty(P), np.empty(P), np.empty(P), np.empty(bounds.size - 1)
    ka.augment_pair_chunks(ka.LOSS_LOGISTIC, 0, bounds.size - 1, bounds, np.uint64(5), ndk,
                           Uz, src, dst, inv, y, c, 1.0, 1e-8, omega, a, b, ll)
    _, b_ref = augment(np.random.default_rng(0), "logistic", omega, y.astype(float), c)
    m, s = pg_mean(c, omega), np.sqrt(pg_var(c, omega))
    assert stats.ks_2samp((b - m) / s, (b_ref - m) / s).pvalue > 1e-3


# ---------------------------------------------------------------------- estimator paths
@pytest.fixture(scope="module")
def small_net():
    return make_rtm_data(n_docs=120, n_topics=3, doc_length=30, random_state=5)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_numba_augmentation_same_chain_for_any_threads(small_net, loss):
    (corpus, links), _ = small_net
    fits = [RelationalTopicModel(3, loss=loss, augmentation="numba", negatives_per_link=2.0,
                                 max_iter=6, n_jobs=n, random_state=2).fit(corpus, links=links)
            for n in (1, 2)]
    np.testing.assert_array_equal(fits[0].weights_, fits[1].weights_)
    np.testing.assert_array_equal(fits[0].doc_topic_, fits[1].doc_topic_)
    assert np.all(np.isfinite(fits[0].trace_["link_loglik"]))


def test_numba_augmentation_resume_continues_the_chain(small_net):
    (corpus, links), _ = small_net
    kw = {"augmentation": "numba", "random_state": 3, "negative_ratio": 0.1}
    whole = RelationalTopicModel(3, max_iter=6, **kw).fit(corpus, links=links)
    part = RelationalTopicModel(3, max_iter=3, **kw).fit(corpus, links=links)
    part.fit(corpus, links=links, resume=True)
    np.testing.assert_array_equal(whole.weights_, part.weights_)


def test_default_is_the_reference_path(small_net):
    (corpus, links), _ = small_net
    m = RelationalTopicModel(3, max_iter=2, random_state=1)
    assert m.augmentation == "reference" and m.negatives_per_link is None
    a = m.fit(corpus, links=links).weights_
    b = RelationalTopicModel(3, max_iter=2, random_state=1,
                             augmentation="reference").fit(corpus, links=links).weights_
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), True, "1"])
def test_negatives_per_link_validation(small_net, bad):
    (corpus, links), _ = small_net
    with pytest.raises(ValueError, match="negatives_per_link") as info:
        RelationalTopicModel(3, negatives_per_link=bad, max_iter=1).fit(corpus, links=links)
    assert "\n" not in str(info.value)


def test_augmentation_validation(small_net):
    (corpus, links), _ = small_net
    with pytest.raises(ValueError, match="augmentation") as info:
        RelationalTopicModel(3, augmentation="fast", max_iter=1).fit(corpus, links=links)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("directed", [True, False])
def test_estimator_negatives_per_link_counts(small_net, directed):
    (corpus, _), _ = small_net
    (_, links), _ = make_rtm_data(n_docs=120, n_topics=3, doc_length=30, directed=directed,
                                  random_state=5)
    m = RelationalTopicModel(3, negatives_per_link=2.0, max_iter=1,
                             random_state=0).fit(corpus, links=links)
    positives = links.n_links * (1 if directed else 2)
    assert m.n_pairs_ == positives + m.n_negatives_
    assert abs(m.n_negatives_ - 2.0 * positives) <= 120   # rounding, at most 1/2 per doc
    state = m.state_
    neg = state.pair_y == 0
    keys = set(zip(state.pair_source[neg].tolist(), state.pair_target[neg].tolist(),
                   strict=True))
    assert len(keys) == int(neg.sum())
    A = links.adjacency()
    assert not np.any(np.asarray(A[state.pair_source[neg], state.pair_target[neg]]))


# ---------------------------------------------------------------------- negatives
def _check_negatives(links: Links, neg: np.ndarray, per_link: float) -> None:
    A = links.adjacency()
    pos = np.diff(A.indptr)
    has = links.degrees() > 0
    expected = np.where(has, np.maximum(np.floor(per_link * pos + 0.5), 1), 0)
    expected = np.minimum(expected, links.n_docs - 1 - pos)
    counts = np.bincount(neg[:, 0], minlength=links.n_docs)
    np.testing.assert_array_equal(counts, expected)
    assert np.all(np.diff(neg[:, 0]) >= 0)
    assert np.all(neg[:, 0] != neg[:, 1])
    assert not np.any(np.asarray(A[neg[:, 0], neg[:, 1]]))
    keys = neg[:, 0] * links.n_docs + neg[:, 1]
    assert np.unique(keys).size == keys.size


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("per_link", [0.3, 1.0, 2.5])
def test_negatives_per_document_rule(directed, per_link):
    rng = np.random.default_rng(1)
    D = 500
    pairs = rng.integers(0, D, size=(3000, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    links = Links.from_pairs(pairs, D, directed=directed, duplicates="drop")
    neg = negatives_per_document(links, per_link, random_state=3)
    _check_negatives(links, neg, per_link)
    again = negatives_per_document(links, per_link, random_state=3)
    np.testing.assert_array_equal(neg, again)


def test_negatives_dense_documents_use_the_complement():
    """A document linked to all but 3 others asks for more than half of what is left:
    the complement branch gives all 3; a hub's request is capped at what exists."""
    D = 50
    hub = [(0, j) for j in range(4, D)]
    other = [(5, 6), (7, 8)]
    links = Links.from_pairs(np.array(hub + other), D, directed=True)
    neg = negatives_per_document(links, 1.0, random_state=0)
    _check_negatives(links, neg, 1.0)
    assert sorted(neg[neg[:, 0] == 0, 1].tolist()) == [1, 2, 3]


def test_negatives_are_uniform_over_non_neighbours():
    """Chi-square of the targets drawn by one document over many seeds."""
    D = 40
    links = Links.from_pairs(np.array([(0, 1), (0, 2), (0, 3), (0, 4), (9, 0)]), D,
                             directed=True)
    draws = np.concatenate([
        negatives_per_document(links, 2.0, random_state=s) for s in range(2000)])
    targets = draws[draws[:, 0] == 0, 1]
    counts = np.bincount(targets, minlength=D)
    allowed = np.setdiff1d(np.arange(D), [0, 1, 2, 3, 4])   # (9, 0) does not forbid 9
    assert np.all(counts[[0, 1, 2, 3, 4]] == 0)
    assert stats.chisquare(counts[allowed]).pvalue > 1e-3


def test_negatives_per_document_scale_without_dense_memory():
    """One million documents (D^2 = 1e12 pairs): O(#negatives) work and memory."""
    D = 1_000_000
    rng = np.random.default_rng(0)
    src = rng.integers(0, D, 2_000_000)
    dst = rng.integers(0, D, 2_000_000)
    keep = src != dst
    links = Links.from_pairs(np.column_stack([src[keep], dst[keep]]), D, directed=True,
                             duplicates="drop")
    t0 = time.perf_counter()
    neg = negatives_per_document(links, 1.0, random_state=1)
    assert time.perf_counter() - t0 < 30
    assert abs(neg.shape[0] - links.n_links) < 0.2 * links.n_links + D


def test_negatives_per_document_validation():
    links = Links.from_pairs(np.array([(0, 1)]), 3)
    for bad in (0, -2, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="per_link"):
            negatives_per_document(links, bad)


# ---------------------------------------------------------------------- make_rtm_data
def test_rtm_data_auto_keeps_the_dense_path_for_small_networks():
    (c1, l1), t1 = make_rtm_data(n_docs=200, random_state=4)
    (c2, l2), t2 = make_rtm_data(n_docs=200, random_state=4, method="dense")
    np.testing.assert_array_equal(l1.pairs, l2.pairs)
    assert t1.expected_n_links == t2.expected_n_links


@pytest.mark.parametrize("directed", [True, False])
def test_rtm_data_sparse_path_draws_each_pair_with_its_probability(directed):
    """Thinning is exact: over 3000 networks on the same documents (fixed zbar), each
    pair's link frequency matches sigmoid(omega_ij) (chi-square over pairs grouped by
    probability) and the Horvitz-Thompson expected count is unbiased."""
    from topiclink.families.rtm.synthetic import planted_rtm_weights
    from topiclink.families.rtm.synthetic_links import thinned_links

    rng = np.random.default_rng(0)
    D, K = 25, 3
    zbar = rng.dirichlet(np.full(K, 0.3), size=D)
    U = planted_rtm_weights(K) + 2.0
    if not directed:
        U = (U + U.T) / 2
    W = np.ascontiguousarray(zbar @ U)
    p = 1.0 / (1.0 + np.exp(-(W @ zbar.T)))
    mask = ~np.eye(D, dtype=bool) if directed else np.triu(np.ones((D, D), bool), 1)
    R = 3000
    freq = np.zeros((D, D))
    est = []
    state = _stream(9)
    for _ in range(R):
        s, t, e, _n = thinned_links(zbar, W, directed, state)
        freq[s, t] += 1
        est.append(e)
        assert np.all(mask[s, t])
        if s.size:
            assert np.all(np.diff(s * D + t) > 0)       # row-major, no repeats
    pm, fm = p[mask], freq[mask]
    # bins of about equal probability mass
    order = np.argsort(pm)
    bins = np.array_split(order, 20)
    obs = np.array([fm[b].sum() for b in bins])
    exp = np.array([R * pm[b].sum() for b in bins])
    var = np.array([R * (pm[b] * (1 - pm[b])).sum() for b in bins])
    chi2 = float(np.sum((obs - exp) ** 2 / var))
    assert stats.chi2.sf(chi2, len(bins)) > 1e-3
    total = pm.sum()
    assert abs(np.mean(est) - total) < Z_MAX * np.std(est) / np.sqrt(R)


def test_rtm_data_sparse_matches_dense_in_distribution():
    """Same documents law, same link law: link counts and the share of links between
    documents with the same dominant topic agree between the two paths (10 seeds)."""
    stats_by = {}
    for method in ("dense", "sparse"):
        n, same, shift = [], [], []
        for s in range(10):
            (_, links), truth = make_rtm_data(n_docs=600, n_topics=4, n_links=6000,
                                              random_state=s, method=method)
            dom = truth.zbar.argmax(axis=1)
            n.append(links.n_links)
            same.append(np.mean(dom[links.source] == dom[links.target]))
            shift.append(truth.shift)
        stats_by[method] = (np.array(n), np.array(same), np.array(shift))
    nd, sd, hd = stats_by["dense"]
    ns, ss, hs = stats_by["sparse"]
    assert abs(nd.mean() - ns.mean()) < 4 * np.sqrt(6000 * 2 / 10)
    assert abs(sd.mean() - ss.mean()) < 0.02
    np.testing.assert_allclose(hs, hd, atol=0.02)   # same documents: same shift


@pytest.mark.slow
def test_rtm_data_100k_documents_1m_links_is_fast():
    t0 = time.perf_counter()
    (corpus, links), truth = make_rtm_data(n_docs=100_000, n_words=2000, n_topics=10,
                                           doc_length=50, n_links=1_000_000, random_state=0)
    seconds = time.perf_counter() - t0
    assert seconds < 45, seconds
    assert abs(links.n_links - 1_000_000) < 0.02 * 1_000_000
    assert abs(truth.expected_n_links - 1_000_000) < 0.02 * 1_000_000
    assert corpus.n_docs == 100_000


def test_rtm_data_method_validation():
    with pytest.raises(ValueError, match="method"):
        make_rtm_data(n_docs=20, method="fast")


@pytest.mark.slow
def test_numba_path_with_per_document_negatives_recovers_planted_weights():
    """Gibbs-gRTM with the Numba draws and 5 negatives per link on the planted network of
    tests/families/rtm/test_rtm.py: after matching topics, the fitted U correlates > 0.9 with the
    planted one (a case-control sample of negatives shifts every entry by about
    log(#unobserved / #negatives), which the correlation ignores; the shift is checked
    to be positive and of that order)."""
    from scipy.optimize import linear_sum_assignment

    (corpus, links), truth = make_rtm_data(n_docs=220, n_topics=5, doc_length=80,
                                           random_state=3)
    m = RelationalTopicModel(5, augmentation="numba", negatives_per_link=5.0, max_iter=80,
                             n_average=20, weight_prior_var=100.0,
                             random_state=0).fit(corpus, links=links)
    cos = m.components_ @ truth.topic_word.T
    cos /= np.linalg.norm(m.components_, axis=1)[:, None]
    cos /= np.linalg.norm(truth.topic_word, axis=1)[None, :]
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9
    perm = np.empty(5, int)
    perm[cols] = rows
    U = m.weights_[np.ix_(perm, perm)]
    assert np.corrcoef(U.ravel(), truth.weights.ravel())[0, 1] > 0.9
    offset = np.log((220 * 219 - links.n_links) / m.n_negatives_)
    assert 0.5 * offset < (U - truth.weights).mean() < 1.5 * offset
