"""``analysis.estimate_effect``: stm's estimateEffect, checked against known effects.

The coverage tests draw corpora from a DMR with a known effect of a two-level covariate
and count how often the 95 % interval of the difference in expected topic proportion
covers the true difference ``E[theta | b] - E[theta | a]`` (Dirichlet means of
``exp(lambda_0 + lambda_1 x)``).  Topics have disjoint words, so a fit recovers them and
the only uncertainty left is that of the proportions.  The prior weighs as much as a
third of a 15-token document, so the posterior means are shrunk: regressing them alone
(``uncertainty="none"``) gives intervals that are too narrow.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from tests.report_fixtures import FAMILIES, fit_family, make_report_data
from topiclink.analysis import TopicEffects, estimate_effect
from topiclink.analysis.effects import doc_topic_draws
from topiclink.families.dmr.estimator import DMR
from topiclink.families.lda.estimator import LDA

K, V = 3, 60
LAMBDA0 = np.log(np.array([3.0, 2.0, 1.0]))
LAMBDA1 = np.array([0.8, -0.5, 0.0])
PHI = np.kron(np.eye(K), np.full(V // K, K / V))          # disjoint words per topic


def _true_difference() -> np.ndarray:
    a, b = np.exp(LAMBDA0), np.exp(LAMBDA0 + LAMBDA1)
    return b / b.sum() - a / a.sum()


def _dmr_corpus(seed: int, n_docs: int = 1000, length: int = 15):
    rng = np.random.default_rng(seed)
    group = np.repeat([0, 1], n_docs // 2)
    alpha = np.exp(LAMBDA0[None] + LAMBDA1[None] * group[:, None])
    theta = rng.gamma(alpha)
    theta /= theta.sum(axis=1, keepdims=True)
    counts = np.array([rng.multinomial(length, t @ PHI) for t in theta])
    meta = pd.DataFrame({"g": np.where(group == 1, "b", "a")})
    return sp.csr_matrix(counts), group[:, None].astype(float), meta, theta, alpha


def _coverage(n_replicates: int, ways: dict[str, dict]) -> dict[str, float]:
    truth = _true_difference()
    hits: dict[str, list[bool]] = {w: [] for w in ways}
    for r in range(n_replicates):
        X, F, meta, _, _ = _dmr_corpus(1000 + r)
        model = DMR(n_topics=K, max_iter=300, burn_in=50, random_state=r).fit(X, features=F)
        _, truth_of = linear_sum_assignment(-np.corrcoef(model.components_, PHI)[:K, K:])
        for way, kwargs in ways.items():
            d = estimate_effect(model, "~ g", meta, documents=X, fit_params={"features": F},
                                random_state=r, progress=False, **kwargs
                                ).difference("g", "b", "a")
            t = truth[truth_of]
            hits[way] += list((d["low"] <= t) & (t <= d["high"]))
    return {w: float(np.mean(h)) for w, h in hits.items()}


@pytest.mark.slow
def test_bands_cover_a_known_dmr_effect_at_the_nominal_rate():
    """60 replicates x 3 topics: the chain's draws cover at 0.95 (measured 0.94 over
    100 replicates); the posterior means alone at 0.81 (a binomial 95 % range around
    0.95 with 180 intervals is about 0.92-0.98)."""
    rates = _coverage(60, {"global": {}, "none": {"uncertainty": "none"}})
    assert rates["global"] >= 0.90, rates
    assert rates["none"] <= 0.87, rates


def test_regression_of_true_proportions_covers_at_the_nominal_rate():
    """The regression and its coefficient draws alone: true proportions as the model's,
    no proportion uncertainty; 200 replicates x 3 topics."""
    truth = _true_difference()
    hits = []
    for r in range(200):
        _, _, meta, theta, _ = _dmr_corpus(r, n_docs=400, length=1)
        model = SimpleNamespace(doc_topic_=theta, alpha_=np.ones(K))
        d = estimate_effect(model, "~ g", meta, uncertainty="none", random_state=r
                            ).difference("g", "b", "a")
        hits += list((d["low"] <= truth) & (truth <= d["high"]))
    assert 0.92 <= np.mean(hits) <= 0.98


def test_posterior_draws_have_the_dirichlet_moments():
    """One state's draws: Dirichlet((N_d + a_d) theta_d), mean theta_d and the
    Dirichlet variance."""
    theta = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    model = SimpleNamespace(doc_topic_=theta, doc_prior_=np.array([[1.0, 1, 1], [2, 2, 2]]))
    counts = np.array([[7, 0], [4, 0]])                        # lengths 7 and 4
    draws = doc_topic_draws(model, counts, 40000, random_state=0)
    conc = np.array([10.0, 10.0])[:, None]
    assert np.allclose(draws.mean(axis=0), theta, atol=0.004)
    assert np.allclose(draws.var(axis=0), theta * (1 - theta) / (conc + 1), rtol=0.05)


def test_summary_matches_ordinary_least_squares():
    rng = np.random.default_rng(0)
    D = 300
    meta = pd.DataFrame({"x": rng.normal(size=D), "c": rng.choice(["u", "v", "w"], D)})
    theta = rng.dirichlet(np.ones(4), size=D)
    model = SimpleNamespace(doc_topic_=theta, alpha_=np.ones(4))
    eff = estimate_effect(model, "~ x + c", meta, uncertainty="none", n_draws=100,
                          coef_draws=100, random_state=1)
    X = np.column_stack([np.ones(D), meta["x"], meta["c"] == "v", meta["c"] == "w"])
    beta, rss, *_ = np.linalg.lstsq(X, theta, rcond=None)
    se = np.sqrt(rss / (D - 4) * np.diag(np.linalg.inv(X.T @ X))[:, None])
    table = eff.summary()
    assert eff.terms == ["Intercept", "x", "c[T.v]", "c[T.w]"]
    assert np.allclose(eff.estimates, beta.T)
    assert np.allclose(table["estimate"].to_numpy().reshape(4, 4), beta.T, atol=4e-3)
    assert np.allclose(table["std_error"].to_numpy().reshape(4, 4), se.T, rtol=0.05)


def test_a_spline_of_time_and_the_plots():
    import matplotlib

    matplotlib.use("Agg")
    rng = np.random.default_rng(2)
    D = 400
    year = rng.uniform(1900, 2000, D)
    party = rng.choice(["D", "R"], D)
    p0 = 0.2 + 0.5 * (year - 1900) / 100
    theta = np.column_stack([p0, (1 - p0) / 2, (1 - p0) / 2])
    X = rng.poisson(30, size=(D, 5)) + 1
    model = SimpleNamespace(doc_topic_=theta, alpha_=np.full(3, 0.1))
    meta = pd.DataFrame({"year": year, "party": party})
    eff = estimate_effect(model, "~ party + bs(year, df=4)", meta, documents=X,
                          random_state=0)
    assert isinstance(eff, TopicEffects) and eff.coefficients.shape == (500, 3, 6)
    pred = eff.predict(eff.at("year", [1910.0, 1990.0]), topics=0)
    assert np.allclose(pred["estimate"], [0.25, 0.65], atol=0.01)      # linear in the year
    assert (pred["low"] < pred["estimate"]).all() and (pred["estimate"] < pred["high"]).all()
    for method, kwargs in (("continuous", {}), ("pointestimate", {}),
                           ("difference", {"value": "R", "reference": "D"})):
        ax = eff.plot("year" if method == "continuous" else "party", method, **kwargs)
        assert ax.get_title().startswith("~ party")


def test_chain_draws_leave_the_model_unchanged_and_repeat():
    X, F, meta, _, _ = _dmr_corpus(5, n_docs=200)
    model = DMR(n_topics=K, max_iter=60, burn_in=20, random_state=0).fit(X, features=F)
    before = model.doc_topic_.copy()
    a = estimate_effect(model, "~ g", meta, documents=X, fit_params={"features": F},
                        n_draws=4, random_state=3, progress=False)
    b = estimate_effect(model, "~ g", meta, documents=X, fit_params={"features": F},
                        n_draws=4, random_state=3, progress=False)
    assert np.array_equal(model.doc_topic_, before) and model.n_iter_ == 60
    assert np.array_equal(a.coefficients, b.coefficients)
    state = estimate_effect(model, "~ g", meta, documents=X, chain_sweeps=0, n_draws=4,
                            random_state=3)
    assert not np.array_equal(a.coefficients, state.coefficients)


@pytest.mark.parametrize("call, message", [
    (lambda m, X, meta: estimate_effect(m, "~ g", meta), "needs documents="),
    (lambda m, X, meta: estimate_effect(m, "~ g", meta, documents=X), "fit_params="),
    (lambda m, X, meta: estimate_effect(m, "~ nope", meta, uncertainty="none"), "nope"),
    (lambda m, X, meta: estimate_effect(m, "~ g", meta.iloc[:5], uncertainty="none"),
     "metadata has 5 rows"),
    (lambda m, X, meta: estimate_effect(m, "~ g", meta, uncertainty="all"),
     "uncertainty must be"),
    (lambda m, X, meta: estimate_effect(m, "~ g", meta, documents=X[:7],
                                        chain_sweeps=0), "documents has 7 rows"),
    (lambda m, X, meta: estimate_effect(m, "~ g", meta, topics=[5], uncertainty="none"),
     "topics must be in 0..2"),
    (lambda m, X, meta: estimate_effect(m, "~ g", meta, uncertainty="none"
                                        ).difference("year", 1, 2), "no covariate 'year'"),
])
def test_bad_calls_are_one_line_errors(call, message):
    X, F, meta, _, _ = _dmr_corpus(6, n_docs=40)
    model = DMR(n_topics=K, max_iter=5, burn_in=2, random_state=0).fit(X, features=F)
    with pytest.raises(ValueError, match=message) as info:
        call(model, X, meta)
    assert "\n" not in str(info.value)


def test_lda_continues_its_chain_without_fit_params():
    X, _, meta, _, _ = _dmr_corpus(7, n_docs=200)
    model = LDA(n_topics=K, max_iter=40, random_state=0).fit(X)
    eff = estimate_effect(model, "~ g", meta, documents=X, n_draws=3, progress=False,
                          random_state=0)
    assert eff.coefficients.shape == (60, K, 2) and model.n_iter_ == 40


def test_a_spline_outside_its_range_is_a_one_line_error():
    rng = np.random.default_rng(0)
    meta = pd.DataFrame({"x": rng.random(50)})
    model = SimpleNamespace(doc_topic_=rng.dirichlet(np.ones(3), 50), alpha_=np.ones(3))
    eff = estimate_effect(model, "~ bs(x, df=3)", meta, uncertainty="none")
    with pytest.raises(ValueError, match="outside the range") as info:
        eff.predict(eff.at("x", [2.0]))
    assert "\n" not in str(info.value)


def test_columns_instead_of_a_formula():
    rng = np.random.default_rng(3)
    meta = pd.DataFrame({"x": rng.normal(size=80), "group": rng.choice(["a", "b"], 80)})
    model = SimpleNamespace(doc_topic_=rng.dirichlet(np.ones(3), 80), alpha_=np.ones(3))
    by_columns = estimate_effect(model, ["x", "group"], meta, uncertainty="none",
                                 random_state=0)
    by_formula = estimate_effect(model, "~ x + group", meta, uncertainty="none",
                                 random_state=0)
    assert by_columns.terms == by_formula.terms == ["Intercept", "x", "group[T.b]"]
    np.testing.assert_array_equal(by_columns.coefficients, by_formula.coefficients)
    with pytest.raises(ValueError, match="no metadata column 'year'"):
        estimate_effect(model, ["x", "year"], meta, uncertainty="none")


TOPIC_FAMILIES = [name for name, views in FAMILIES.items() if "topics" in views]


@pytest.mark.parametrize("name", TOPIC_FAMILIES)
def test_every_topic_family_gets_effects_with_bands(name):
    """Every family with document-topic proportions: along its chain where it is a
    collapsed sampler that declares it (LDA, DMR), else around its fitted state."""
    d = make_report_data()
    model = fit_family(name, d)
    meta = pd.DataFrame({"year": d["year"].astype(float), "president": d["president"]})
    fit_params = {"features": d["frame"]} if name == "DMR" else None
    eff = estimate_effect(model, "~ president + year", meta, documents=d["corpus"],
                          fit_params=fit_params, n_draws=3, progress=False, random_state=0)
    table = eff.summary()
    assert len(table) == np.shape(model.doc_topic_)[1] * len(eff.terms)
    assert (table["low"] <= table["high"]).all() and table["std_error"].gt(0).all()
