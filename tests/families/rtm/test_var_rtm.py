"""Var-RTM (Chang & Blei 2009, variational EM, exponential link).

Ladder: digamma kernel vs SciPy; E-step kernel vs a per-token NumPy twin; the E-step
fixed point is a local maximum of the bound; the closed-form (eta, nu) maximises the
regularised link objective; the EM objective is monotone; the engine algorithm's step is
the estimator's iteration and resuming (also after save/load) continues EM exactly;
held-out links on planted data; API contract; the bundled Cora (measured, sanity-checked
only).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import digamma, gammaln

import topiclink
from topiclink.data import Corpus, DataError
from topiclink.data.links import Links
from topiclink.data.splits import train_test_split_documents
from topiclink.datasets import load_bundled_cora, make_rtm_data
from topiclink.families.rtm.estimator_variational import VariationalRTM
from topiclink.families.rtm.variational import (
    VariationalRTMEM,
    VarRTMData,
    VarRTMState,
    link_m_step,
    link_objective,
)
from topiclink.kernels import special
from topiclink.metrics import link_auc, link_rank, word_rank
from topiclink.topics.kernels import variational as kernels

# ---------------------------------------------------------------------- tiny problem


def _softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(5)
    D, V, K = 6, 9, 3
    X = rng.poisson(1.2, size=(D, V))
    X[:, 0] += 1
    pairs = np.array([[0, 1], [1, 2], [0, 3], [3, 4], [2, 5], [4, 5]])
    links = Links.from_pairs(pairs, D, directed=False)
    beta = rng.dirichlet(np.ones(V), size=K)
    return {
        "X": sp.csr_matrix(X), "pairs": pairs, "links": links, "K": K,
        "log_beta": np.log(beta), "eta": np.array([1.5, -0.5, 2.0]),
        "alpha": np.array([0.3, 0.5, 0.2]),
        "gamma": rng.gamma(2.0, 2.0, size=(D, K)) + 0.1,
        "phibar": rng.dirichlet(np.ones(K), size=D),
    }


def _run_kernel(t, gamma, phibar, n_iter, tol=0.0):
    X = t["X"]
    _, adj = t["links"].undirected_pairs()
    V, K = X.shape[1], t["K"]
    stats = np.zeros((V, K))
    terms = np.zeros(X.shape[0])
    kernels.e_step(X.indptr.astype(np.int64), X.indices.astype(np.int32),
                   X.data.astype(np.float64),
                   np.asarray(X.sum(axis=1), dtype=np.float64).ravel(),
                   adj.indptr.astype(np.int64), adj.indices.astype(np.int32),
                   np.ascontiguousarray(t["log_beta"].T), t["eta"], t["alpha"], gamma, phibar,
                   stats, terms, n_iter, tol)
    return stats, terms


def _tokens(X):
    return [np.repeat(X[d].indices, X[d].data) for d in range(X.shape[0])]


def _doc_term(phi, gamma, alpha):
    """E[log p(theta)] + E[log p(z|theta)] - E[log q(theta)] - E[log q(z)], per token phi."""
    elog = digamma(gamma) - digamma(gamma.sum())
    return (gammaln(alpha.sum()) - gammaln(alpha).sum() + (alpha - 1) @ elog
            + phi.sum(axis=0) @ elog
            - (gammaln(gamma.sum()) - gammaln(gamma).sum() + (gamma - 1) @ elog)
            - np.sum(phi * np.log(phi)))


def _naive_e_step(t, gamma, phibar, n_iter):
    """Per-token coordinate ascent, documents in turn (Chang & Blei's update)."""
    X, K = t["X"], t["K"]
    toks = _tokens(X)
    nbrs = {d: [] for d in range(X.shape[0])}
    for a, b in t["pairs"]:
        nbrs[a].append(b)
        nbrs[b].append(a)
    stats = np.zeros((K, X.shape[1]))
    terms = np.zeros(X.shape[0])
    for d, w in enumerate(toks):
        N = w.size
        link = t["eta"] * sum(phibar[j] for j in nbrs[d]) / N
        for _ in range(n_iter):
            elog = digamma(gamma[d]) - digamma(gamma[d].sum())
            phi = _softmax(elog + t["log_beta"][:, w].T + link)
            gamma[d] = t["alpha"] + phi.sum(axis=0)
        phibar[d] = phi.mean(axis=0)
        np.add.at(stats.T, w, phi)
        terms[d] = _doc_term(phi, gamma[d], t["alpha"])
    return stats.T, terms


def test_digamma_kernel():
    x = np.concatenate([np.geomspace(1e-3, 1e4, 200), [0.5, 1.0, 5.999, 6.0, 6.001]])
    ours = np.array([special.digamma(v) for v in x])
    np.testing.assert_allclose(ours, digamma(x), rtol=1e-10, atol=1e-10)


def test_e_step_kernel_matches_per_token_twin(tiny):
    """The count-based kernel equals the per-token update (gamma, phibar, S, doc terms)."""
    g1, p1 = tiny["gamma"].copy(), tiny["phibar"].copy()
    g2, p2 = tiny["gamma"].copy(), tiny["phibar"].copy()
    stats1, terms1 = _run_kernel(tiny, g1, p1, n_iter=4)
    stats2, terms2 = _naive_e_step(tiny, g2, p2, n_iter=4)
    np.testing.assert_allclose(g1, g2, rtol=1e-10)
    np.testing.assert_allclose(p1, p2, rtol=1e-10)
    np.testing.assert_allclose(stats1, stats2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(terms1, terms2, rtol=1e-9)
    np.testing.assert_allclose(p1.sum(axis=1), 1.0)


def _bound(t, phis, gammas):
    """Words + links part of the ELBO (eta, nu, beta fixed) from per-token phi."""
    toks = _tokens(t["X"])
    total = 0.0
    phibar = np.array([p.mean(axis=0) for p in phis])
    for d, w in enumerate(toks):
        total += _doc_term(phis[d], gammas[d], t["alpha"])
        total += np.sum(phis[d] * t["log_beta"][:, w].T)
    s, r = t["pairs"][:, 0], t["pairs"][:, 1]
    return total + np.sum((phibar[s] * phibar[r]) @ t["eta"])


def test_e_step_fixed_point_is_a_local_maximum(tiny):
    """Sweep to convergence; then no small perturbation of any document's phi or gamma
    increases the bound (a wrong link term, e.g. without 1/N_d, fails this)."""
    gamma, phibar = tiny["gamma"].copy(), tiny["phibar"].copy()
    for _ in range(300):
        _run_kernel(tiny, gamma, phibar, n_iter=20)
    toks = _tokens(tiny["X"])
    nbr = tiny["links"].undirected_pairs()[1]
    phis = []
    for d, w in enumerate(toks):
        link = tiny["eta"] * (nbr[d] @ phibar) / w.size
        elog = digamma(gamma[d]) - digamma(gamma[d].sum())
        phis.append(_softmax(elog + tiny["log_beta"][:, w].T + link))
    np.testing.assert_allclose(np.array([p.mean(axis=0) for p in phis]), phibar, atol=1e-9)
    gammas = [gamma[d].copy() for d in range(len(toks))]
    base = _bound(tiny, phis, gammas)
    rng = np.random.default_rng(0)
    eps = 1e-4
    for _ in range(40):
        d = int(rng.integers(len(toks)))
        v = rng.normal(size=phis[d].shape)
        vg = rng.normal(size=gammas[d].shape)
        for sign in (1.0, -1.0):
            ph = list(phis)
            ph[d] = _softmax(np.log(phis[d]) + sign * eps * v)
            assert _bound(tiny, ph, gammas) <= base + 1e-11
            gm = list(gammas)
            gm[d] = gammas[d] * np.exp(sign * eps * vg)
            assert _bound(tiny, phis, gm) <= base + 1e-11


def test_link_m_step_maximises_the_regularised_objective():
    rng = np.random.default_rng(1)
    K, M, rho = 5, 200.0, 150.0
    pibar = rng.dirichlet(np.ones(K)) * 60.0  # 1^T pibar < M
    eta, nu = link_m_step(pibar, M, rho)

    def F(e, n):
        a, b = link_objective(pibar, M, e, n, rho)
        return a + b

    best = F(eta, nu)
    # closed form of the paper
    rest = M - pibar.sum()
    np.testing.assert_allclose(nu, np.log(rest) - np.log(rho * (K - 1) / K + rest))
    np.testing.assert_allclose(eta, np.log(pibar) - np.log(pibar + rho / K**2) - nu)
    # stationary (central differences) and a maximum against random perturbations
    h = 1e-6
    for k in range(K):
        e1, e2 = eta.copy(), eta.copy()
        e1[k] += h
        e2[k] -= h
        assert abs(F(e1, nu) - F(e2, nu)) / (2 * h) < 1e-4
    assert abs(F(eta, nu + h) - F(eta, nu - h)) / (2 * h) < 1e-4
    for _ in range(200):
        de = rng.normal(scale=0.05, size=K)
        assert F(eta + de, nu + rng.normal(scale=0.05)) < best
    # psi_e <= 1 for any pair of topic proportions
    z = rng.dirichlet(np.ones(K), size=(100, 2))
    assert np.all((z[:, 0] * z[:, 1]) @ eta + nu < 0)


# ---------------------------------------------------------------------- planted data


@pytest.fixture(scope="module")
def planted():
    (corpus, links), truth = make_rtm_data(n_docs=300, n_words=200, n_topics=4,
                                           doc_length=50, weights=np.full(4, 8.0),
                                           directed=False, n_links=900, random_state=0)
    fold = train_test_split_documents(corpus, links, test_size=0.2, random_state=0)
    return fold


@pytest.fixture(scope="module", params=["map", "variational"])
def fitted(request, planted):
    return VariationalRTM(n_topics=4, max_iter=40, tol=0.0, random_state=0,
                          topic_inference=request.param).fit(planted.train_corpus,
                                                             links=planted.train_links)


def test_objective_is_monotone(fitted):
    """Exact E-step (coordinate ascent) + exact M-step: J never decreases."""
    ll = fitted.trace_["log_likelihood"]
    assert ll.shape == (40,) and np.all(np.isfinite(ll))
    assert np.all(np.diff(ll) >= -1e-6 * np.abs(ll[:-1]))
    assert ll[-1] > ll[0]


def test_heldout_link_prediction_beats_random(planted, fitted):
    """Thresholds fixed before running: AUC > 0.6, link rank < 0.85 x random."""
    scores = fitted.link_scores(planted.test_corpus)
    assert scores.shape == (planted.n_test, planted.n_train)
    auc = link_auc(scores, planted.test_links)["roc_auc"]
    rank = link_rank(scores, planted.test_links)
    assert auc > 0.6
    assert rank < 0.85 * (planted.n_train + 1) / 2


def test_words_from_links_beat_no_links(planted, fitted):
    has = np.asarray(planted.test_links.sum(axis=1)).ravel() > 0
    probs = fitted.predict_words_from_links(planted.test_links[has])
    assert probs.shape == (int(has.sum()), planted.train_corpus.n_words)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    none = fitted.predict_words_from_links(sp.csr_matrix((int(has.sum()), planted.n_train)))
    counts = planted.test_corpus.counts[has]
    assert word_rank(probs, counts) < word_rank(none, counts)


def test_words_from_links_use_the_union_of_both_directions(planted, fitted):
    """Undirected model: links out, links in, or both split between the two arguments
    give the same words; n_tokens (one or one per document) sets N."""
    links = sp.csr_matrix(planted.test_links)
    ref = fitted.predict_words_from_links(links)
    np.testing.assert_array_equal(fitted.predict_words_from_links(
        sp.csr_matrix(links.shape), links), ref)
    upper = sp.triu(links, k=1).tocsr()
    np.testing.assert_array_equal(
        fitted.predict_words_from_links(upper, links - upper), ref)
    np.testing.assert_array_equal(
        fitted.predict_words_from_links(links, n_tokens=fitted.mean_doc_length_), ref)
    per_doc = np.full(links.shape[0], fitted.mean_doc_length_)
    np.testing.assert_array_equal(fitted.predict_words_from_links(links, n_tokens=per_doc),
                                  ref)
    short = fitted.predict_words_from_links(links, n_tokens=2.0)
    assert not np.allclose(short, ref)
    with pytest.raises(ValueError, match="n_tokens"):
        fitted.predict_words_from_links(links, n_tokens=0.0)


def test_fitted_attributes(planted, fitted):
    D, V, K = planted.n_train, planted.train_corpus.n_words, 4
    assert fitted.components_.shape == (K, V)
    np.testing.assert_allclose(fitted.components_.sum(axis=1), 1.0)
    np.testing.assert_allclose(fitted.doc_topic_.sum(axis=1), 1.0)
    np.testing.assert_allclose(fitted.zbar_.sum(axis=1), 1.0)
    assert fitted.zbar_.shape == fitted.doc_topic_.shape == (D, K)
    assert fitted.weights_.shape == (K,) and np.isfinite(fitted.intercept_)
    assert fitted.n_links_ == planted.train_links.n_links
    assert fitted.n_pseudo_negatives_ == fitted.n_links_
    assert fitted.n_iter_ == 40
    np.testing.assert_array_equal(fitted.train_zbar_, fitted.zbar_)
    # doc_topic_ = E_q[theta] = gamma / sum gamma, gamma = alpha + N_d phibar_d
    lengths = planted.train_corpus.doc_lengths[:, None]
    np.testing.assert_allclose(
        fitted.doc_topic_, (fitted.alpha_ + lengths * fitted.zbar_)
        / (fitted.alpha_.sum() + lengths), rtol=1e-12)
    assert isinstance(fitted.state_, VarRTMState) and fitted.state_.iteration == 40
    np.testing.assert_array_equal(fitted.zbar_, fitted.state_.phibar)
    assert fitted.trace_["log_likelihood"][-1] == fitted.state_.J / fitted.n_tokens_
    assert VariationalRTM.fit_requires == ("X", "links")
    assert VariationalRTM.paper_names == {"Var-RTM": {}}
    text = fitted.summary()
    assert "topic" in text and "eta" in text


def test_prediction_api(planted, fitted):
    test = planted.test_corpus
    theta = fitted.transform(test)
    assert theta.shape == (planted.n_test, 4)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    # transform = E_q[theta]; topic_features = E_q[zbar] = phibar, what the links use
    zbar = fitted.topic_features(test)
    assert zbar.shape == (planted.n_test, 4)
    np.testing.assert_allclose(zbar.sum(axis=1), 1.0)
    lengths = test.doc_lengths[:, None]
    np.testing.assert_allclose(theta, (fitted.alpha_ + lengths * zbar)
                               / (fitted.alpha_.sum() + lengths), rtol=1e-12)
    assert not np.allclose(theta, zbar)
    np.testing.assert_allclose(
        fitted.link_scores(test, targets=[0, 5]),
        (zbar * fitted.weights_) @ fitted.zbar_[[0, 5]].T + fitted.intercept_, rtol=1e-12)
    proba = fitted.predict_link_proba(test, targets=np.arange(10))
    assert proba.shape == (planted.n_test, 10)
    assert np.all((proba > 0) & (proba <= 1))
    np.testing.assert_allclose(
        proba, np.exp(fitted.link_scores(test, targets=np.arange(10))), rtol=1e-12)
    # empty documents: the prior mean
    blank = sp.csr_matrix((2, test.n_words))
    np.testing.assert_allclose(fitted.transform(blank),
                               np.tile(fitted.alpha_ / fitted.alpha_.sum(), (2, 1)))
    np.testing.assert_allclose(fitted.topic_features(blank),
                               np.tile(fitted.alpha_ / fitted.alpha_.sum(), (2, 1)))
    own = fitted.link_scores(targets=[0, 1, 2])
    assert own.shape == (planted.n_train, 3)
    np.testing.assert_allclose(own[:, 1], fitted.link_scores(targets=[1])[:, 0])
    with pytest.raises(ValueError, match="targets"):
        fitted.link_scores()
    with pytest.raises(DataError, match="not in"):
        fitted.link_scores(test, targets=[planted.n_train])
    table = fitted.suggest_links(test, top=5)
    scores = fitted.link_scores(test)
    assert len(table) == planted.n_test * 5
    top = table["target"].to_numpy().reshape(planted.n_test, 5)
    picked = np.take_along_axis(scores, top, axis=1)
    assert np.all(np.diff(picked, axis=1) <= 0)
    np.testing.assert_allclose(picked[:, 0], scores.max(axis=1))
    np.testing.assert_allclose(fitted.link_scores(test, direction="out"), scores)
    np.testing.assert_allclose(fitted.link_scores(test, direction="in"), scores)
    with pytest.raises(ValueError, match="direction"):
        fitted.link_scores(test, direction="sideways")
    with pytest.raises(ValueError, match="columns"):
        fitted.transform(test.counts[:, :10])
    with pytest.raises(ValueError, match="columns"):
        fitted.topic_features(test.counts[:, :10])
    with pytest.raises(ValueError, match="shape"):
        fitted.predict_words_from_links(planted.test_links[:, :5])


def test_save_load_gives_equal_predictions(tmp_path, planted, fitted):
    path = fitted.save(tmp_path / "vrtm.npz")
    loaded = topiclink.load(path)
    assert isinstance(loaded, VariationalRTM)
    np.testing.assert_array_equal(loaded.link_scores(planted.test_corpus),
                                  fitted.link_scores(planted.test_corpus))
    np.testing.assert_array_equal(loaded.predict_words_from_links(planted.test_links),
                                  fitted.predict_words_from_links(planted.test_links))
    assert loaded.intercept_ == fitted.intercept_
    np.testing.assert_array_equal(loaded.trace_["log_likelihood"],
                                  fitted.trace_["log_likelihood"])


def test_same_seed_same_result(planted):
    kw = dict(n_topics=4, max_iter=5, random_state=3)
    a = VariationalRTM(**kw).fit(planted.train_corpus, links=planted.train_links)
    b = VariationalRTM(**kw).fit(planted.train_corpus, links=planted.train_links)
    c = VariationalRTM(**{**kw, "random_state": 4}).fit(planted.train_corpus,
                                                        links=planted.train_links)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(a.zbar_, b.zbar_)
    assert not np.array_equal(a.components_, c.components_)
    # fit_transform returns the training documents' E_q[theta]
    np.testing.assert_array_equal(
        VariationalRTM(**kw).fit_transform(planted.train_corpus, links=planted.train_links),
        a.doc_topic_)


def test_directed_links_are_symmetrised(planted):
    """A directed input with both orientations of every pair = the undirected input."""
    und = planted.train_links
    pairs = und.pairs
    both = Links.from_pairs(np.vstack([pairs, pairs[:, ::-1]]), und.n_docs, directed=True)
    kw = dict(n_topics=4, max_iter=5, random_state=1)
    a = VariationalRTM(**kw).fit(planted.train_corpus, links=und)
    b = VariationalRTM(**kw).fit(planted.train_corpus, links=both)
    assert a.n_links_ == b.n_links_ == und.n_links
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-12)
    np.testing.assert_allclose(a.zbar_, b.zbar_, rtol=1e-12)


def test_bad_input(tiny):
    X, links = tiny["X"], tiny["links"]
    with pytest.raises(ValueError, match="n_topics"):
        VariationalRTM(n_topics=1).fit(X, links=links)
    with pytest.raises(ValueError, match="topic_inference"):
        VariationalRTM(topic_inference="gibbs").fit(X, links=links)
    with pytest.raises(ValueError, match="n_pseudo_negatives"):
        VariationalRTM(n_pseudo_negatives=0).fit(X, links=links)
    with pytest.raises(ValueError, match="max_iter"):
        VariationalRTM(max_iter=0).fit(X, links=links)
    empty = X.toarray()
    empty[2] = 0
    with pytest.raises(DataError, match="document 2"):
        VariationalRTM(n_topics=2).fit(empty, links=links)
    with pytest.raises(DataError, match="not in"):
        VariationalRTM(n_topics=2).fit(X, links=np.array([[0, 1], [2, 6]]))
    with pytest.raises(DataError, match="links"):
        VariationalRTM(n_topics=2).fit(X)
    with pytest.raises(DataError, match="no links"):
        VariationalRTM(n_topics=2).fit(X, links=np.zeros((0, 2), dtype=int))
    with pytest.raises(Exception, match="not fitted"):
        VariationalRTM().transform(X)
    with pytest.raises(Exception, match="not fitted"):
        VariationalRTM().topic_features(X)
    with pytest.raises(TypeError, match="links as a keyword"):
        VariationalRTM(n_topics=2).fit(X, links)
    with pytest.raises(TypeError):
        VariationalRTM(2, 0.1)  # keyword-only after n_topics
    with pytest.raises(ValueError, match="tol"):
        VariationalRTM(tol=-1.0).fit(X, links=links)
    with pytest.raises(ValueError, match="e_step_iter"):
        VariationalRTM(e_step_iter=0).fit(X, links=links)
    with pytest.raises(ValueError, match="doc_topic_prior"):
        VariationalRTM(n_topics=3, doc_topic_prior=[0.1, 0.2]).fit(X, links=links)
    with pytest.raises(ValueError, match="nothing to resume"):
        VariationalRTM(n_topics=2).fit(X, links=links, resume=True)


def test_transform_maps_vocabulary(planted, fitted):
    """A Corpus with the words in another order (and an unknown word) maps by name."""
    test = planted.test_corpus
    perm = np.random.default_rng(0).permutation(test.n_words)
    extra = sp.hstack([test.counts[:, perm], sp.csr_matrix(np.ones((test.n_docs, 1)))])
    other = Corpus(extra.tocsr(), vocabulary=[*test.vocabulary[perm], "zzz-unknown"])
    np.testing.assert_allclose(fitted.transform(other), fitted.transform(test), rtol=1e-12)
    np.testing.assert_allclose(fitted.topic_features(other), fitted.topic_features(test),
                               rtol=1e-12)


# ---------------------------------------------------------------------- engine and resume


def _same_fit(a, b):
    for name in ("components_", "log_topics_", "doc_topic_", "zbar_", "weights_",
                 "topic_weights_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.intercept_ == b.intercept_
    assert a.n_iter_ == b.n_iter_
    for key in ("log_likelihood", "link_log_likelihood"):
        np.testing.assert_array_equal(a.trace_[key], b.trace_[key], err_msg=key)
    for name in ("gamma", "phibar", "stats", "components", "log_topics", "eta"):
        np.testing.assert_array_equal(getattr(a.state_, name), getattr(b.state_, name),
                                      err_msg=f"state_.{name}")
    assert a.state_.nu == b.state_.nu and a.state_.J == b.state_.J
    assert a.state_.iteration == b.state_.iteration


@pytest.mark.parametrize("topic_inference", ["map", "variational"])
def test_resume_continues_em_exactly(planted, topic_inference, tmp_path):
    """10 + 10 EM iterations (also through save(full=True) + load) = 20 in one go."""
    kw = dict(n_topics=4, tol=0.0, random_state=2, topic_inference=topic_inference)
    corpus, links = planted.train_corpus, planted.train_links
    whole = VariationalRTM(max_iter=20, **kw).fit(corpus, links=links)
    split = VariationalRTM(max_iter=10, **kw).fit(corpus, links=links)
    path = split.save(tmp_path / "half.npz", full=True)
    split.fit(corpus, links=links, resume=True)
    _same_fit(split, whole)
    np.testing.assert_array_equal(split.link_scores(planted.test_corpus),
                                  whole.link_scores(planted.test_corpus))
    loaded = topiclink.load(path)
    assert isinstance(loaded.state_, VarRTMState) and loaded.n_iter_ == 10
    loaded.fit(corpus, links=links, resume=True)
    _same_fit(loaded, whole)
    with pytest.raises(ValueError, match="resume needs the data"):
        loaded.fit(planted.test_corpus.subset(range(5)), links=np.array([[0, 1]]),
                   resume=True)


def test_resume_keeps_the_tolerance_rule(planted):
    """With tol > 0 a resumed fit stops at the iteration where one long fit stops."""
    kw = dict(n_topics=4, tol=1e-3, random_state=2)
    corpus, links = planted.train_corpus, planted.train_links
    whole = VariationalRTM(max_iter=100, **kw).fit(corpus, links=links)
    assert whole.stopped_early_ and 4 < whole.n_iter_ < 100
    half = VariationalRTM(max_iter=whole.n_iter_ // 2, **kw).fit(corpus, links=links)
    half.set_params(max_iter=100).fit(corpus, links=links, resume=True)
    assert half.n_iter_ == whole.n_iter_ and half.stopped_early_
    np.testing.assert_array_equal(half.components_, whole.components_)
    np.testing.assert_array_equal(half.trace_["log_likelihood"],
                                  whole.trace_["log_likelihood"])


def test_engine_algorithm_is_the_estimator(planted):
    """init + step of VariationalRTMEM, driven by hand, give the estimator's fit; step
    never decreases J; the (eta, nu) of a step are the closed form of its phibar."""
    corpus, links = planted.train_corpus, planted.train_links
    model = VariationalRTM(n_topics=4, max_iter=6, tol=0.0, random_state=7).fit(
        corpus, links=links)
    data = VarRTMData.from_corpus(corpus, links)
    algorithm = model._algorithm()
    assert isinstance(algorithm, VariationalRTMEM)
    state = algorithm.init(data, np.random.default_rng(7))
    Js = []
    for _ in range(6):
        info = algorithm.step(state, data)
        Js.append(algorithm.objective(state, data))
        assert set(info) == {"link_log_likelihood"}
    np.testing.assert_array_equal(Js, model.trace_["log_likelihood"])
    np.testing.assert_array_equal(state.phibar, model.zbar_)
    np.testing.assert_array_equal(state.components, model.components_)
    pairs = data.pairs
    pibar = (state.phibar[pairs[:, 0]] * state.phibar[pairs[:, 1]]).sum(axis=0)
    eta_next, _ = link_m_step(pibar, data.n_links, algorithm.rho(data))
    np.testing.assert_array_equal(eta_next, state.eta)
    assert np.all(np.diff(Js) >= -1e-6 * np.abs(Js[:-1]))


# ---------------------------------------------------------------------- bundled Cora


def test_bundled_cora_heldout_links():
    """Measured, not tuned: one 10% held-out fold, K=10, defaults."""
    ds = load_bundled_cora()
    fold = train_test_split_documents(ds.corpus, ds.links, test_size=0.1, random_state=0)
    t0 = time.perf_counter()
    model = VariationalRTM(n_topics=10, random_state=0).fit(fold.train_corpus,
                                                           links=fold.train_links)
    seconds = time.perf_counter() - t0
    scores = model.link_scores(fold.test_corpus)
    auc = link_auc(scores, fold.test_links)["roc_auc"]
    rank = link_rank(scores, fold.test_links)
    has = np.asarray(fold.test_links.sum(axis=1)).ravel() > 0
    wr = word_rank(model.predict_words_from_links(fold.test_links[has]),
                   fold.test_corpus.counts[has])
    print(f"\nVar-RTM Cora K=10: fit {seconds:.2f} s, {model.n_iter_} EM iterations, "
          f"held-out AUC {auc:.4f}, link rank {rank:.1f} (random {(fold.n_train + 1) / 2}), "
          f"word rank {wr:.1f} (V = {ds.corpus.n_words})")
    assert np.all(np.diff(model.trace_["log_likelihood"])
                  >= -1e-6 * np.abs(model.trace_["log_likelihood"][:-1]))
    assert auc > 0.5
    assert rank < (fold.n_train + 1) / 2
