"""Dirichlet-multinomial regression (Mimno & McCallum 2008): the L-BFGS objective and its
gradient, the optimisation step, planted recovery of lambda, the reduction to LDA with
all-zero features, seeding, resuming with optimisations, persistence, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linear_sum_assignment

import topiclink
from topiclink.data import Corpus, DataError
from topiclink.families.dmr.algorithm import dmr_objective
from topiclink.families.dmr.estimator import DMR


# ---------------------------------------------------------------------- data
def simulate_dmr(n_docs=600, n_words=200, doc_length=80, seed=0):
    """The DMR generative model with one feature x ~ U[0, 1] and a clear trend.

    alpha_dk = exp(b_k + s_k x_d), theta_d ~ Dir(alpha_d), phi_k ~ Dir(0.05), N_d ~
    Poisson(doc_length) (at least 1).  Returns (corpus, x, true lambda (K, 2), phi).
    """
    rng = np.random.default_rng(seed)
    lam = np.array([[-1.0, 2.5], [0.5, -2.5], [-0.5, 1.0], [0.0, -1.0]])
    K = lam.shape[0]
    phi = rng.dirichlet(np.full(n_words, 0.05), size=K)
    x = rng.random(n_docs)
    alpha = np.exp(lam[:, 0] + np.outer(x, lam[:, 1]))
    counts = np.zeros((n_docs, n_words), dtype=np.int64)
    for d in range(n_docs):
        theta = rng.dirichlet(alpha[d])
        n = max(1, rng.poisson(doc_length))
        counts[d] = rng.multinomial(n, theta @ phi)
    return Corpus(counts), x, lam, phi


def match_topics(phi_true, phi_fit):
    """Fitted topic matched to each true topic (Hungarian method on cosine similarity)."""
    a = phi_true / np.linalg.norm(phi_true, axis=1, keepdims=True)
    b = phi_fit / np.linalg.norm(phi_fit, axis=1, keepdims=True)
    rows, cols = linear_sum_assignment(-(a @ b.T))
    return cols[np.argsort(rows)]


@pytest.fixture(scope="module")
def planted():
    corpus, x, lam, phi = simulate_dmr()
    model = DMR(4, burn_in=20, optimize_every=5, max_iter=150, random_state=3)
    model.fit(corpus, features=x[:, None])
    return corpus, x, lam, phi, model


@pytest.fixture(scope="module")
def small():
    corpus, x, _, _ = simulate_dmr(n_docs=60, n_words=50, doc_length=30, seed=5)
    features = np.column_stack([x, np.random.default_rng(1).normal(size=x.size)])
    return corpus, features


# ---------------------------------------------------------------------- the objective
def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    D, F, K = 40, 3, 5
    design = np.column_stack([np.ones(D), rng.normal(size=(D, F))])
    ndk = rng.poisson(4.0, size=(D, K)).astype(np.int32)
    ndk[0] = 0                                   # an empty document contributes nothing
    lam = 0.3 * rng.normal(size=(F + 1, K))
    inv_var = np.array([0.01, 1.0, 1.0, 1.0])
    value, grad = dmr_objective(lam, design, ndk, inv_var)
    eps = 1e-6
    numeric = np.zeros_like(lam)
    for idx in np.ndindex(*lam.shape):
        up, down = lam.copy(), lam.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (dmr_objective(up, design, ndk, inv_var)[0]
                        - dmr_objective(down, design, ndk, inv_var)[0]) / (2 * eps)
    rel = np.linalg.norm(numeric - grad) / np.linalg.norm(grad)
    assert rel < 1e-6, rel
    assert np.isfinite(value)
    # the empty document's row changes neither the value nor the gradient's likelihood part
    v2, g2 = dmr_objective(lam, design[1:], ndk[1:], inv_var)
    assert v2 == pytest.approx(value, rel=1e-12)


def test_each_optimisation_increases_the_objective(small):
    corpus, features = small
    model = DMR(3, burn_in=4, optimize_every=3, max_iter=30, random_state=0)
    model.fit(corpus, features=features)
    before = model.trace_["lambda_objective_before"]
    after = model.trace_["lambda_objective"]
    done = np.isfinite(after)
    assert np.flatnonzero(done).tolist() == [5, 8, 11, 14, 17, 20, 23, 26, 29]   # sweeps 6, 9..
    assert np.all(after[done] >= before[done])
    assert after[done][0] > before[done][0] + 1.0        # the first one moves lambda a lot
    # each M-step is partial (lbfgs_iter L-BFGS iterations, warm-started): run to
    # convergence from lambda_, the gradient vanishes and the objective gains little
    from scipy.optimize import minimize

    from topiclink.families.dmr.estimator import _design
    algo = model._algorithm()
    design, inv_var = _design(features), algo.inv_var(features.shape[1] + 1)
    shape = model.lambda_.T.shape

    def negative(flat):
        value, grad = dmr_objective(flat.reshape(shape), design, model.state_.ndk, inv_var)
        return -value, -grad.ravel()

    res = minimize(negative, model.lambda_.T.ravel(), jac=True, method="L-BFGS-B",
                   options={"maxiter": 1000, "ftol": 1e-15, "gtol": 1e-9})
    assert np.max(np.abs(res.jac)) < 1e-3
    start = -negative(model.lambda_.T.ravel())[0]
    assert 0.0 <= -res.fun - start < 0.01 * abs(start)


# ---------------------------------------------------------------------- planted recovery
def test_planted_lambda_is_recovered(planted):
    corpus, x, lam, phi, model = planted
    match = match_topics(phi, model.components_)
    fitted = model.lambda_[match]                                   # (K, 2), true order
    r = np.corrcoef(fitted.ravel(), lam.ravel())[0, 1]
    r_slope = np.corrcoef(fitted[:, 1], lam[:, 1])[0, 1]
    print(f"planted DMR: corr(lambda) = {r:.3f}, corr(slopes) = {r_slope:.3f}\n"
          f"true {lam.tolist()}\nfitted {np.round(fitted, 2).tolist()}")
    assert r > 0.9 and r_slope > 0.9
    assert np.all(np.sign(fitted[:, 1]) == np.sign(lam[:, 1]))
    # predict_topics at x = 0 and x = 1 reproduces the direction of the trend
    p = model.predict_topics(np.array([[0.0], [1.0]]))[:, match]
    true = np.exp(lam[:, 0] + np.outer([0.0, 1.0], lam[:, 1]))
    true /= true.sum(axis=1, keepdims=True)
    assert np.all(np.sign(p[1] - p[0]) == np.sign(true[1] - true[0]))
    # the topics themselves are found
    cos = np.sum(phi * model.components_[match], axis=1) / (
        np.linalg.norm(phi, axis=1) * np.linalg.norm(model.components_[match], axis=1))
    assert np.all(cos > 0.95)


def test_features_help_held_out_completion(planted):
    corpus, x, _, _, model = planted
    held = corpus.subset(np.arange(50))
    with_features = model.perplexity(held, features=x[:50, None])
    without = model.perplexity(held)
    assert with_features < without
    theta = model.transform(held, features=x[:50, None])
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)


# ---------------------------------------------------------------------- reduction to LDA
def test_all_zero_features_without_optimisation_is_lda(small):
    corpus, _ = small
    zeros = np.zeros((corpus.n_docs, 2))
    dmr = DMR(3, doc_topic_prior=0.2, burn_in=100, max_iter=20, random_state=4)
    dmr.fit(corpus, features=zeros)
    lda = topiclink.LDA(3, doc_topic_prior=0.2, max_iter=20, random_state=4).fit(corpus)
    np.testing.assert_array_equal(dmr.state_.z, lda.state_.z)
    np.testing.assert_array_equal(dmr.components_, lda.components_)
    np.testing.assert_allclose(dmr.doc_topic_, lda.doc_topic_, rtol=1e-12)
    np.testing.assert_allclose(dmr.trace_["log_likelihood"], lda.trace_["log_likelihood"],
                               rtol=1e-12)


def test_all_zero_features_learn_one_shared_alpha(planted):
    corpus = planted[0]
    zeros = np.zeros((corpus.n_docs, 1))
    model = DMR(4, burn_in=10, optimize_every=5, max_iter=60, random_state=1)
    model.fit(corpus, features=zeros)
    assert np.all(model.lambda_[:, 1] == 0.0)            # zero gradient: never moves
    alpha = model.predict_alpha(zeros[:5])
    np.testing.assert_array_equal(alpha, np.broadcast_to(alpha[0], alpha.shape))
    np.testing.assert_allclose(model.alpha_, np.exp(model.lambda_[:, 0]))
    print(f"zero features: learned alpha {np.round(model.alpha_, 3).tolist()}")
    assert model.alpha_.max() / model.alpha_.min() < 4.0


# ---------------------------------------------------------------------- engine contract
def test_same_seed_same_result_and_resume_across_optimisations(small, tmp_path):
    corpus, features = small

    def make(max_iter):
        return DMR(3, burn_in=2, optimize_every=2, max_iter=max_iter, random_state=7)

    a = make(8).fit(corpus, features=features)
    b = make(8).fit(corpus, features=features)
    np.testing.assert_array_equal(a.lambda_, b.lambda_)
    np.testing.assert_array_equal(a.state_.z, b.state_.z)
    other = DMR(3, burn_in=2, optimize_every=2, max_iter=8, random_state=8)
    assert not np.array_equal(other.fit(corpus, features=features).state_.z, a.state_.z)
    half = make(4).fit(corpus, features=features)
    loaded = topiclink.load(half.save(tmp_path / "half.npz", full=True))
    loaded.fit(corpus, features=features, resume=True)
    assert loaded.n_iter_ == 8
    np.testing.assert_array_equal(loaded.lambda_, a.lambda_)
    np.testing.assert_array_equal(loaded.state_.z, a.state_.z)
    np.testing.assert_array_equal(loaded.trace_["lambda_objective"], a.trace_["lambda_objective"])
    with pytest.raises(ValueError, match="data of the first fit"):
        loaded.fit(corpus, features=features + 1.0, resume=True)


def test_dataframe_features_are_encoded_and_saved(small, tmp_path):
    corpus, features = small
    frame = pd.DataFrame({"x": features[:, 0],
                          "group": np.where(features[:, 1] > 0, "b", "a")})
    model = DMR(3, burn_in=2, optimize_every=2, max_iter=6, random_state=0)
    model.fit(corpus, features=frame)
    assert model.feature_names_.tolist() == ["x", "group=a", "group=b"]
    assert model.lambda_.shape == (3, 4)
    loaded = topiclink.load(model.save(tmp_path / "m.npz"))
    new = pd.DataFrame({"group": ["b", "a", "zz"], "x": [0.1, 0.5, 0.9]})   # any order
    np.testing.assert_array_equal(loaded.predict_topics(new), model.predict_topics(new))
    np.testing.assert_allclose(model.predict_topics(new).sum(axis=1), 1.0)
    center, scale = features[:, 0].mean(), features[:, 0].std()     # x is standardised
    as_array = np.array([[0.1, 0.0, 1.0], [0.5, 1.0, 0.0], [0.9, 0.0, 0.0]])
    as_array[:, 0] = (as_array[:, 0] - center) / scale
    np.testing.assert_allclose(model.predict_topics(as_array), model.predict_topics(new))
    # standardised: a raw scale (a year) gives the same fit as a unit scale
    shifted = frame.assign(x=1800.0 + 200.0 * frame["x"])
    raw = DMR(3, burn_in=2, optimize_every=2, max_iter=6, random_state=0)
    raw.fit(corpus, features=shifted)
    np.testing.assert_allclose(raw.lambda_, model.lambda_, rtol=1e-6, atol=1e-8)
    assert "strongest feature weights" in model.summary()
    with pytest.raises(DataError, match="no column 'x'"):
        model.predict_topics(new[["group"]])


# ---------------------------------------------------------------------- bad input
def test_bad_features_are_one_line_errors(small):
    corpus, features = small
    model = DMR(3, max_iter=2, random_state=0)
    bad = features.copy()
    bad[7, 1] = np.nan
    cases = [
        (bad, r"document 7 .*NaN in column 'x1'"),
        (features[:-1], "59 rows for 60 documents"),
        (np.full((corpus.n_docs, 1), "a"), "must be numbers"),
        (np.zeros((corpus.n_docs, 2, 2)), "must be 2-D"),
        (pd.DataFrame({"year": np.r_[np.nan, np.ones(59)]}),
         r"document 0 .*NaN in column 'year'"),
    ]
    for value, message in cases:
        with pytest.raises(DataError, match=message) as info:
            model.fit(corpus, features=value)
        assert "\n" not in str(info.value)
    with pytest.raises(DataError, match="needs features"):
        model.fit(corpus)
    with pytest.raises(TypeError, match="keyword"):
        model.fit(corpus, features)
    fitted = DMR(3, max_iter=2, random_state=0).fit(corpus, features=features)
    with pytest.raises(DataError, match="fitted on 2"):
        fitted.predict_topics(np.zeros((2, 3)))
    with pytest.raises(DataError, match="3 rows for 2 documents"):
        fitted.transform(corpus.subset([0, 1]), features=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="DMR: sigma must be"):
        DMR(3, sigma=0.0).fit(corpus, features=features)


def test_planted_lambda_is_recovered_with_the_mh_sampler():
    """The same planted model fitted with ``sampler="mh"``: lambda and the topics found as
    by the Gibbs sweep (same thresholds)."""
    corpus, x, lam, phi = simulate_dmr()
    model = DMR(4, burn_in=20, optimize_every=5, max_iter=150, random_state=3,
                sampler="mh").fit(corpus, features=x[:, None])
    match = match_topics(phi, model.components_)
    fitted = model.lambda_[match]
    assert np.corrcoef(fitted.ravel(), lam.ravel())[0, 1] > 0.9
    assert np.all(np.sign(fitted[:, 1]) == np.sign(lam[:, 1]))
    cos = np.sum(phi * model.components_[match], axis=1) / (
        np.linalg.norm(phi, axis=1) * np.linalg.norm(model.components_[match], axis=1))
    assert np.all(cos > 0.95)


def test_mh_sampler_refuses_parallel_schemes(small):
    corpus, features = small
    with pytest.raises(ValueError, match="sampler='mh' runs the sequential chain"):
        DMR(3, sampler="mh", scheme="adlda", max_iter=2).fit(corpus, features=features)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["gibbs", "mh"])
def test_geweke_on_the_production_step(sampler):
    """Successive-conditional simulator (Geweke 2004) of the production ``DMRGibbs.step``
    with lambda held (no optimisation is due) at values that give every document its own
    prior alpha_d = exp(x_d lambda), alternated with an exact draw of the words given the
    topics (a Polya urn per topic).  The topics' marginal must then be their prior, a
    Dirichlet-multinomial per document with alpha_d: the mean and second moment of two
    documents' count of topic 0 and the number of tokens in topic 1 against their exact
    values (batch means, |z| < 4.5)."""
    from topiclink.families.dmr.algorithm import DMRData, DMRGibbs, doc_priors
    from topiclink.topics.lda import TokenData

    D, L, V, K, beta = 4, 5, 4, 3, 0.5
    offsets = np.arange(0, D * L + 1, L, dtype=np.int64)
    docs = np.repeat(np.arange(D, dtype=np.int32), L)
    rng = np.random.default_rng(11)
    design = np.column_stack([np.ones(D), np.linspace(-1.0, 1.0, D)])
    lam = np.array([[-0.5, 0.2, -0.1], [1.2, -1.0, 0.3]])
    alpha = doc_priors(design, lam)
    algo = DMRGibbs(K, beta, 1.0, 10.0, 0.1, optimize_every=1, burn_in=10**9,
                    sampler=sampler)
    words = rng.integers(0, V, D * L).astype(np.int32)
    data = DMRData(TokenData(words, docs, offsets, D, V), design)
    state = algo.init(data, rng)
    state.lam[...] = lam
    n_iter, rows = 20_000, []
    for _ in range(n_iter):
        algo.step(state, data)
        new = np.empty_like(data.tokens.words)
        counts = np.zeros((K, V))
        u = rng.random(new.size)
        for i in range(new.size):            # w | z: a Polya urn per topic
            k = state.z[i]
            p = (counts[k] + beta) / (counts[k].sum() + V * beta)
            new[i] = min(int(np.searchsorted(np.cumsum(p), u[i] * p.sum())), V - 1)
            counts[k, new[i]] += 1
        data = DMRData(TokenData(new, docs, offsets, D, V), design)
        state.nwk[:] = 0
        np.add.at(state.nwk, (new, state.z), 1)
        rows.append((state.ndk[0, 0], state.ndk[D - 1, 0], state.nk[1]))
    x = np.asarray(rows, dtype=np.float64)[1000:]

    def dirmult(a, k):        # mean and variance of one Dirichlet-multinomial coordinate
        a0, p = a.sum(), a[k] / a.sum()
        return L * p, L * p * (1 - p) * (L + a0) / (1 + a0)

    m_first, v_first = dirmult(alpha[0], 0)
    m_last, v_last = dirmult(alpha[D - 1], 0)
    m1 = sum(dirmult(alpha[d], 1)[0] for d in range(D))
    v1 = sum(dirmult(alpha[d], 1)[1] for d in range(D))
    expected = {"ndk00": m_first, "ndk00^2": v_first + m_first ** 2,
                "ndk_last0": m_last, "ndk_last0^2": v_last + m_last ** 2,
                "nk1": m1, "nk1^2": v1 + m1 ** 2}
    observed = {"ndk00": x[:, 0], "ndk00^2": x[:, 0] ** 2, "ndk_last0": x[:, 1],
                "ndk_last0^2": x[:, 1] ** 2, "nk1": x[:, 2], "nk1^2": x[:, 2] ** 2}
    assert abs(m_first - m_last) > 1.0          # the documents' priors differ
    for name, series in observed.items():
        batches = series[: series.size // 50 * 50].reshape(50, -1).mean(axis=1)
        score = (series.mean() - expected[name]) / (batches.std(ddof=1) / np.sqrt(50))
        assert abs(score) < 4.5, (sampler, name, series.mean(), expected[name], score)
