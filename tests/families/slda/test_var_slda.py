"""vSLDA (variational logistic sLDA, Jaakkola-Jordan bound).

Ladder: the E[zbar zbar^T] formula against enumeration; the per-token update (1) is the
exact maximiser of the per-document bound; the Numba E-step equals a NumPy twin; the
closed-form eta maximises the bounded label objective; EM never decreases J; the engine
algorithm's step is the estimator's iteration and resuming (also after save/load)
continues EM exactly; planted recovery; determinism, persistence and bad input.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.special import digamma, gammaln, log_expit

import topiclink
from topiclink.data import Corpus, DataError
from topiclink.datasets import make_lda_data, make_slda_data
from topiclink.families.slda import kernels_variational as kernels
from topiclink.families.slda.estimator_variational import VariationalSLDA
from topiclink.families.slda.variational import (
    VariationalSLDAEM,
    VarSLDAData,
    VarSLDAState,
    jj_lambda,
    label_m_step,
    label_objective,
    label_statistics,
)
from topiclink.kernels import special

# ---------------------------------------------------------------------- NumPy twin


def _ex2(phi, eta):
    """E[(eta^T zbar)^2] by the explicit double sum over token pairs."""
    N = phi.shape[0]
    E = np.zeros((phi.shape[1],) * 2)
    for n in range(N):
        E += np.diag(phi[n])
        for m in range(N):
            if m != n:
                E += np.outer(phi[n], phi[m])
    return eta @ (E / N**2) @ eta


def _doc_bound(phi, gamma, xi, w, log_beta, eta, ytil, c, alpha):
    """The per-document bound from its definition (any gamma, phi, xi)."""
    elog = digamma(gamma) - digamma(gamma.sum())
    N = phi.shape[0]
    lam = tanh_lam(xi)
    ex = ytil * eta @ phi.mean(axis=0)
    label = log_expit(xi) + (ex - xi) / 2 - lam * (_ex2(phi, eta) - xi**2)
    return (gammaln(alpha.sum()) - gammaln(alpha).sum() + (alpha - 1) @ elog
            + phi.sum(axis=0) @ elog + np.sum(phi * log_beta[:, w].T)
            - (gammaln(gamma.sum()) - gammaln(gamma).sum() + (gamma - 1) @ elog)
            - np.sum(phi * np.log(phi)) + c * label) if N else 0.0


def tanh_lam(xi):
    return np.tanh(xi / 2) / (4 * xi) if xi > 0 else 0.125


def _twin_token_update(phi, n, gamma, xi, w, log_beta, eta, ytil, c):
    """Equation (1) for token n, straight from the formula."""
    N = phi.shape[0]
    rest = phi.sum(axis=0) - phi[n]
    lam = tanh_lam(xi)
    logit = (digamma(gamma) - digamma(gamma.sum()) + log_beta[:, w[n]]
             + c * (ytil * eta / (2 * N) - lam * (2 * eta * (eta @ rest) + eta**2) / N**2))
    p = np.exp(logit - logit.max())
    return p / p.sum()


def _twin_sweeps(phi, gamma, w, log_beta, eta, ytil, c, alpha, n_sweeps):
    """xi from phi, then n_sweeps x (tokens in turn, gamma, xi)."""
    xi = np.sqrt(_ex2(phi, eta))
    for _ in range(n_sweeps):
        for n in range(phi.shape[0]):
            phi[n] = _twin_token_update(phi, n, gamma, xi, w, log_beta, eta, ytil, c)
        gamma = alpha + phi.sum(axis=0)
        xi = np.sqrt(_ex2(phi, eta))
    return phi, gamma, xi


@pytest.fixture(scope="module")
def tiny():
    rng = np.random.default_rng(3)
    K, V = 3, 6
    docs = [np.array([0, 0, 2, 5, 3]), np.array([1, 4, 4]), np.array([2, 3, 0, 1])]
    return {
        "K": K, "V": V, "docs": docs, "rng": rng,
        "log_beta": np.log(rng.dirichlet(np.ones(V), size=K)),
        "eta": np.array([2.5, -1.0, 0.7]), "alpha": np.array([0.3, 0.5, 0.2]),
        "ytil": np.array([1.0, -1.0, 1.0]),
        "phi": [rng.dirichlet(np.ones(K), size=d.size) for d in docs],
    }


def test_jj_lambda_and_log_sigmoid():
    xi = np.concatenate([[0.0, 1e-6, 9e-5, 1e-4, 2e-4], np.geomspace(1e-3, 50, 40)])
    ours = np.array([special.jj_lambda(v) for v in xi])
    ref = np.where(xi > 0, np.tanh(xi / 2) / (4 * np.maximum(xi, 1e-300)), 0.125)
    np.testing.assert_allclose(ours, ref, rtol=1e-10)
    np.testing.assert_allclose(jj_lambda(xi), ours, rtol=1e-14)
    x = np.linspace(-40, 40, 81)
    np.testing.assert_allclose([special.log_sigmoid(v) for v in x], log_expit(x), rtol=1e-12)


def test_second_moment_formula_matches_enumeration(tiny):
    """E[(eta^T zbar)^2] under q(z) = prod_n phi_n, by summing over all K^N assignments,
    equals both the double sum and the O(NK) form the kernel uses."""
    phi, eta, K = tiny["phi"][0], tiny["eta"], tiny["K"]
    N = phi.shape[0]
    exact = 0.0
    for z in itertools.product(range(K), repeat=N):
        prob = np.prod(phi[np.arange(N), z])
        exact += prob * (eta[list(z)].mean()) ** 2
    S = phi.sum(axis=0)
    fast = ((eta @ S) ** 2 - np.sum((phi @ eta) ** 2) + eta**2 @ S) / N**2
    assert exact == pytest.approx(_ex2(phi, eta), rel=1e-12)
    assert exact == pytest.approx(fast, rel=1e-12)


@pytest.mark.parametrize("c", [1.0, 25.0])
def test_token_update_is_the_exact_coordinate_maximiser(tiny, c):
    """Equation (1) maximises the document bound over phi_n (others, gamma, xi fixed):
    no random point of the simplex does better, and it beats the old phi_n."""
    rng = np.random.default_rng(7)
    w, phi = tiny["docs"][0], tiny["phi"][0].copy()
    args = (tiny["log_beta"], tiny["eta"], tiny["ytil"][0], c)
    gamma = tiny["alpha"] + phi.sum(axis=0) + 0.7
    xi = 0.9
    for n in range(w.size):
        def bound(p, n=n):
            q = phi.copy()
            q[n] = p
            return _doc_bound(q, gamma, xi, w, args[0], args[1], args[2], c, tiny["alpha"])
        best = _twin_token_update(phi, n, gamma, xi, w, *args)
        b_best = bound(best)
        assert b_best >= bound(phi[n]) - 1e-12
        for p in rng.dirichlet(np.full(tiny["K"], 0.5), size=200):
            assert bound(p) <= b_best + 1e-12
        phi[n] = best


def test_e_step_kernel_matches_numpy_twin(tiny):
    """The Numba E-step (token updates, gamma, xi, phibar, word statistics, doc terms)
    equals the per-token NumPy twin of equations (1)-(3)."""
    docs, K, V, alpha = tiny["docs"], tiny["K"], tiny["V"], tiny["alpha"]
    offsets = np.concatenate([[0], np.cumsum([d.size for d in docs])]).astype(np.int64)
    words = np.concatenate(docs).astype(np.int32)
    phi = np.concatenate(tiny["phi"])
    D = len(docs)
    gamma = np.array([alpha + p.sum(axis=0) for p in tiny["phi"]])
    phibar, xi = np.zeros((D, K)), np.zeros(D)
    stats, terms = np.zeros((V, K)), np.zeros(D)
    c, n_sweeps = 3.0, 3
    sweeps = kernels.e_step(offsets, words, np.ascontiguousarray(tiny["log_beta"].T),
                            tiny["eta"], tiny["ytil"], c, alpha, phi, gamma, phibar, xi,
                            stats, terms, n_sweeps, 0.0)
    assert sweeps == n_sweeps * D
    ref_stats = np.zeros((V, K))
    for d, w in enumerate(docs):
        p, g, x = _twin_sweeps(tiny["phi"][d].copy(), alpha + tiny["phi"][d].sum(axis=0), w,
                               tiny["log_beta"], tiny["eta"], tiny["ytil"][d], c, alpha,
                               n_sweeps)
        np.testing.assert_allclose(phi[offsets[d]:offsets[d + 1]], p, rtol=1e-10)
        np.testing.assert_allclose(gamma[d], g, rtol=1e-10)
        np.testing.assert_allclose(phibar[d], p.mean(axis=0), rtol=1e-10)
        assert xi[d] == pytest.approx(x, rel=1e-10)
        np.add.at(ref_stats, w, p)
        # doc term = the bound without its word and label parts
        no_words = _doc_bound(p, g, x, w, np.zeros_like(tiny["log_beta"]), tiny["eta"],
                              tiny["ytil"][d], 0.0, alpha)
        assert terms[d] == pytest.approx(no_words, rel=1e-10)
    np.testing.assert_allclose(stats, ref_stats, rtol=1e-10)


def test_e_step_increases_the_document_bound(tiny):
    """Each kernel sweep (warm start) increases the document bound; c = 0 is LDA."""
    w, alpha = tiny["docs"][0], tiny["alpha"]
    phi = tiny["phi"][0].copy()
    gamma = alpha + phi.sum(axis=0)
    offsets = np.array([0, w.size], np.int64)
    lb = np.ascontiguousarray(tiny["log_beta"].T)
    xi = np.zeros(1)
    last = _doc_bound(phi, gamma, np.sqrt(_ex2(phi, tiny["eta"])), w, tiny["log_beta"],
                      tiny["eta"], 1.0, 2.0, alpha)
    for _ in range(6):
        g = gamma[None].copy()
        kernels.e_step(offsets, w.astype(np.int32), lb, tiny["eta"], np.ones(1), 2.0, alpha,
                       phi, g, np.zeros((1, 3)), xi, np.zeros((6, 3)), np.zeros(1), 1, 0.0)
        gamma = g[0]
        now = _doc_bound(phi, gamma, xi[0], w, tiny["log_beta"], tiny["eta"], 1.0, 2.0,
                         alpha)
        assert now >= last - 1e-12
        last = now


def test_eta_m_step_maximises_the_label_objective():
    rng = np.random.default_rng(0)
    D, K = 30, 4
    lengths = rng.integers(2, 9, size=D)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    phi = rng.dirichlet(np.ones(K), size=offsets[-1])
    phibar = np.array([phi[offsets[d]:offsets[d + 1]].mean(axis=0) for d in range(D)])
    xi, ytil = rng.gamma(2.0, 1.0, size=D), rng.choice([-1.0, 1.0], size=D)
    A, b = label_statistics(phi, offsets, phibar, xi, ytil)
    eta0 = rng.normal(size=K)
    ref = sum(jj_lambda(xi[d]) * _ex2(phi[offsets[d]:offsets[d + 1]], eta0)
              for d in range(D))
    assert eta0 @ A @ eta0 == pytest.approx(ref, rel=1e-10)
    c, nu2 = 4.0, 2.0
    eta = label_m_step(A, b, c, nu2)

    def total(e):
        return sum(label_objective(A, b, xi, e, c, nu2))

    best = total(eta)
    for _ in range(50):
        assert total(eta + rng.normal(scale=0.05, size=K)) < best


# ---------------------------------------------------------------------- EM


@pytest.fixture(scope="module")
def planted():
    return make_slda_data(n_docs=400, n_topics=5, random_state=0)


def test_em_objective_never_decreases():
    """Short documents and c = 25, so that the label term moves the E-step and eta."""
    (corpus, y), _ = make_slda_data(n_docs=200, n_words=100, n_topics=4, doc_length=8,
                                    random_state=0)
    m = VariationalSLDA(4, c=25.0, max_iter=30, tol=0.0, random_state=1).fit(corpus, y)
    J = m.trace_["log_likelihood"]
    assert J.shape == (30,) and np.all(np.isfinite(J)) and m.n_iter_ == 30
    assert np.all(np.diff(J) >= -1e-8 * np.abs(J[:-1]))
    assert J[-1] - J[0] > 0.05  # it is computed and moves, not a constant
    np.testing.assert_allclose(m.trace_["elbo"], J * m.n_tokens_)
    assert np.all(m.trace_["label_bound"] < 0)
    assert m.trace_["seconds"].shape == (30,) and not m.converged_


def test_recovers_classifier_direction(planted):
    """Same bars as gSLDA's planted test: topic-matched eta correlates > 0.9 with the
    planted one and held-out accuracy > 0.7 (the Bayes rate with the true zbar is ~0.77
    on these 100 documents)."""
    (corpus, y), truth = planted
    m = VariationalSLDA(5, max_iter=100, random_state=0)
    m.fit(corpus.subset(range(300)), y[:300])
    cos = m.components_ @ truth.topic_word.T
    rows, cols = linear_sum_assignment(-cos)
    perm = np.empty(5, int)
    perm[cols] = rows
    assert np.corrcoef(m.coef_[0][perm], truth.eta)[0, 1] > 0.9
    held = corpus.subset(range(300, 400))
    assert m.score(held, y[300:]) > 0.7
    proba = m.predict_proba(held)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(proba[:, 1] > 0.5, m.decision_function(held) > 0)
    np.testing.assert_allclose(proba[:, 1], 1.0 / (1.0 + np.exp(-m.decision_function(held))),
                               rtol=1e-12)
    np.testing.assert_array_equal(
        m.predict(held), m.classes_[(m.decision_function(held) > 0).astype(int)])
    assert m.converged_ and m.n_iter_ < 100


def test_determinism_persistence_and_labels(planted, tmp_path):
    (corpus, y), _ = planted
    small = corpus.subset(range(120))
    labels = np.where(y[:120] == 1, "pos", "neg")
    a = VariationalSLDA(4, c=2.0, max_iter=8, random_state=3).fit(small, labels)
    b = VariationalSLDA(4, c=2.0, max_iter=8, random_state=3).fit(small, labels)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert list(a.classes_) == ["neg", "pos"] and a.coef_.shape == (1, 4)
    assert set(a.predict(small.subset([0, 1, 2]))) <= {"neg", "pos"}
    loaded = topiclink.load(a.save(tmp_path / "v.npz"))
    assert isinstance(loaded, VariationalSLDA)
    np.testing.assert_allclose(loaded.decision_function(small.subset([0, 1])),
                               a.decision_function(small.subset([0, 1])))
    assert "label weights eta" in a.summary()
    # prediction (count-based LDA E-step) = the token kernel with c = 0, converged
    new = corpus.subset(range(300, 310))
    tok = new.tokens()
    K = 4
    phibar = np.zeros((10, K))
    kernels.e_step(tok.offsets, tok.words, np.ascontiguousarray(np.log(a.components_).T),
                   a.coef_[0], np.zeros(10), 0.0, a.alpha_,
                   np.full((tok.words.size, K), 1.0 / K),
                   a.alpha_ + new.doc_lengths[:, None] / K, phibar, np.zeros(10),
                   np.zeros((new.n_words, K)), np.zeros(10), 500, 1e-10)
    np.testing.assert_allclose(a.topic_features(new), phibar, atol=1e-5)
    np.testing.assert_array_equal(a.decision_function(new),
                                  a.topic_features(new) @ a.coef_[0])
    # transform = E_q[theta] = gamma / sum gamma, gamma = alpha + N_d phibar_d
    theta = a.transform(new)
    lengths = new.doc_lengths[:, None]
    np.testing.assert_allclose(theta, (a.alpha_ + lengths * a.topic_features(new))
                               / (a.alpha_.sum() + lengths), rtol=1e-12)
    assert not np.allclose(theta, a.topic_features(new))
    np.testing.assert_allclose(a.fit_transform(small, labels), a.doc_topic_)
    blank = sp.csr_matrix((2, new.n_words))
    np.testing.assert_allclose(a.transform(blank), np.tile(a.alpha_ / a.alpha_.sum(), (2, 1)))
    np.testing.assert_allclose(a.topic_features(blank),
                               np.tile(a.alpha_ / a.alpha_.sum(), (2, 1)))
    assert VariationalSLDA.fit_requires == ("X", "y")
    assert VariationalSLDA.paper_names == {"vSLDA": {}}
    assert topiclink.VariationalSLDA is VariationalSLDA
    X = sp.csr_matrix(small.counts)
    c = VariationalSLDA(4, c=2.0, max_iter=8, random_state=3).fit(X, labels)
    np.testing.assert_array_equal(c.coef_, a.coef_)


def test_bad_input(planted):
    (corpus, y), _ = planted
    with pytest.raises(DataError, match="single class"):
        VariationalSLDA(3).fit(corpus, np.zeros(corpus.n_docs))
    with pytest.raises(DataError, match="labels for"):
        VariationalSLDA(3).fit(corpus, y[:-1])
    with pytest.raises(ValueError, match="n_topics must be an integer >= 2"):
        VariationalSLDA(1).fit(corpus, y)
    with pytest.raises(ValueError, match="c must be a finite number > 0"):
        VariationalSLDA(3, c=-1.0).fit(corpus, y)
    with pytest.raises(ValueError, match="e_step_iter must be an integer >= 1"):
        VariationalSLDA(3, e_step_iter=0).fit(corpus, y)
    with pytest.raises(ValueError, match="tol must be a finite number >= 0"):
        VariationalSLDA(3, tol=-1e-3).fit(corpus, y)
    with pytest.raises(ValueError, match="weight_prior_var"):
        VariationalSLDA(3, weight_prior_var=0.0).fit(corpus, y)
    with pytest.raises(TypeError):
        VariationalSLDA(3, 2.0)  # keyword-only after n_topics
    with pytest.raises(ValueError, match="nothing to resume"):
        VariationalSLDA(3).fit(corpus, y, resume=True)
    with pytest.raises(Exception, match="not fitted"):
        VariationalSLDA(3).topic_features(corpus)
    counts = corpus.counts.toarray()
    counts[4] = 0
    with pytest.raises(DataError, match="document 4 .* is empty"):
        VariationalSLDA(3).fit(Corpus(sp.csr_matrix(counts)), y)
    three, _ = make_lda_data(n_docs=30, n_words=40, n_topics=3, random_state=0)
    with pytest.raises(DataError, match="binary only.*SupervisedTopicModel"):
        VariationalSLDA(3).fit(three, np.arange(30) % 3)


# ---------------------------------------------------------------------- engine and resume


def _same_fit(a, b):
    for name in ("components_", "coef_", "doc_topic_", "zbar_", "topic_weights_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.n_iter_ == b.n_iter_
    for key in ("log_likelihood", "elbo", "label_bound", "train_accuracy", "e_step_sweeps"):
        np.testing.assert_array_equal(a.trace_[key], b.trace_[key], err_msg=key)
    for name in ("phi", "gamma", "phibar", "xi", "stats", "components", "log_topics", "eta"):
        np.testing.assert_array_equal(getattr(a.state_, name), getattr(b.state_, name),
                                      err_msg=f"state_.{name}")
    assert a.state_.J == b.state_.J and a.state_.iteration == b.state_.iteration


def test_resume_continues_em_exactly(planted, tmp_path):
    """10 + 10 EM iterations (also through save(full=True) + load) = 20 in one go."""
    (corpus, y), _ = planted
    small, labels = corpus.subset(range(150)), np.where(y[:150] == 1, "pos", "neg")
    kw = dict(c=4.0, tol=0.0, random_state=5)
    whole = VariationalSLDA(4, max_iter=20, **kw).fit(small, labels)
    split = VariationalSLDA(4, max_iter=10, **kw).fit(small, labels)
    path = split.save(tmp_path / "half.npz", full=True)
    split.fit(small, labels, resume=True)
    _same_fit(split, whole)
    held = corpus.subset(range(300, 320))
    np.testing.assert_array_equal(split.decision_function(held),
                                  whole.decision_function(held))
    loaded = topiclink.load(path)
    assert isinstance(loaded.state_, VarSLDAState) and loaded.n_iter_ == 10
    loaded.fit(small, labels, resume=True)
    _same_fit(loaded, whole)
    assert list(loaded.classes_) == ["neg", "pos"]
    with pytest.raises(ValueError, match="resume needs the data"):
        loaded.fit(small, labels[::-1], resume=True)


def test_resume_keeps_the_tolerance_rule(planted):
    """With tol > 0 a resumed fit stops at the iteration where one long fit stops."""
    (corpus, y), _ = planted
    small = corpus.subset(range(200))
    whole = VariationalSLDA(4, max_iter=100, random_state=1).fit(small, y[:200])
    assert whole.converged_ and 4 < whole.n_iter_ < 100
    half = VariationalSLDA(4, max_iter=whole.n_iter_ // 2, random_state=1).fit(small,
                                                                                y[:200])
    assert not half.converged_
    half.set_params(max_iter=100).fit(small, y[:200], resume=True)
    assert half.converged_ and half.n_iter_ == whole.n_iter_
    np.testing.assert_array_equal(half.coef_, whole.coef_)
    np.testing.assert_array_equal(half.trace_["log_likelihood"],
                                  whole.trace_["log_likelihood"])


def test_engine_algorithm_is_the_estimator(planted):
    """init + step of VariationalSLDAEM, driven by hand, give the estimator's fit; the
    eta of a step is the closed form (4) of its E-step's statistics."""
    (corpus, y), _ = planted
    small = corpus.subset(range(100))
    model = VariationalSLDA(3, c=4.0, max_iter=5, tol=0.0, random_state=4).fit(small,
                                                                               y[:100])
    data = VarSLDAData.from_corpus(small, y[:100])
    algorithm = model._algorithm()
    assert isinstance(algorithm, VariationalSLDAEM)
    state = algorithm.init(data, np.random.default_rng(4))
    Js = []
    for _ in range(5):
        info = algorithm.step(state, data)
        Js.append(algorithm.objective(state, data))
        assert info["elbo"] == state.J
    np.testing.assert_array_equal(Js, model.trace_["log_likelihood"])
    np.testing.assert_array_equal(state.eta, model.coef_[0])
    np.testing.assert_array_equal(state.components, model.components_)
    A, b = label_statistics(state.phi, data.offsets, state.phibar, state.xi, data.ytil)
    np.testing.assert_array_equal(label_m_step(A, b, 4.0, 1.0), state.eta)
