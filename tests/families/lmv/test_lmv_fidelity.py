"""Fidelity fixes of the LMV family against the paper (issue 23, items 6-7).

Tan, Chan & Zheng (2016); supplement S4 for the step size and the stopping rules.
"""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.datasets import make_lmv_data
from topiclink.families.lmv.algorithm import LMVData
from topiclink.families.lmv.stochastic import StochasticLMV, positive_mix
from topiclink.parameters import RobbinsMonro


@pytest.fixture(scope="module")
def small():
    return make_lmv_data(n_docs=120, n_words=60, n_topics=6, random_state=3)


def _algorithm(a1: float, a2: float, v: float = 0.501, batch_size: int = 40
               ) -> StochasticLMV:
    return StochasticLMV(6, alpha=1 / 6, eta=0.1, blockmodel_prior=(1.0, 1.0),
                         visibility_prior=(1.0, 1.0), batch_size=batch_size,
                         schedule=RobbinsMonro(a1, a2, v))


def _data(small) -> LMVData:
    (corpus, links), _ = small
    return LMVData.build(corpus.counts, np.asarray(links.pairs, np.int64))


# ---------------------------------------------------------------------------- 1: step size
@pytest.mark.parametrize(("a1", "a2", "first"), [
    (2.0, 3.0, 2.0 / 4.0 ** 0.501),   # the simulation (S7): 0.99861...
    (1.0, 5.0, 1.0 / 6.0 ** 0.501),   # Cora and KDD: 0.40753...
])
def test_first_step_counts_sweeps_from_one(small, a1, a2, first):
    """s = A1 / (s_w + m/M + A2)^v with s_w = 1 at the first sweep: the supplement's
    w / (t + W)^v, w = A1 M^v, W = M (A2 + 1) - 1, at t = 1."""
    data = _data(small)
    alg = _algorithm(a1, a2)
    state = alg.init(data, np.random.default_rng(0))
    M = alg.n_minibatches(data)
    assert M == 3
    assert alg.step_size(state, data) == pytest.approx(first, rel=1e-12)
    w, W = a1 * M ** 0.501, M * (a2 + 1) - 1
    for t in range(1, 2 * M + 1):
        state.updates = t - 1
        assert alg.step_size(state, data) == pytest.approx(w / (t + W) ** 0.501, rel=1e-12)
    # the numbers quoted in the issue
    assert round(2.0 / 4.0 ** 0.501, 3) == 0.999 and round(1.0 / 6.0 ** 0.501, 3) == 0.408


def test_every_simulation_step_is_at_most_one(small):
    """With A1 = 2, A2 = 3 (S7) no step of the first sweep extrapolates (before the fix
    the first sweep's steps ran from 1.153 down to 1.011)."""
    data = _data(small)
    alg = _algorithm(2.0, 3.0)
    state = alg.init(data, np.random.default_rng(0))
    steps = []
    for u in range(alg.n_minibatches(data)):
        state.updates = u
        steps.append(alg.step_size(state, data))
    assert max(steps) < 1.0


def test_positive_mix_halves_an_extrapolating_step():
    x, target = np.array([1.0, 2.0]), np.array([0.1, 3.0])
    new = positive_mix(x, target, 2.0, "gamma")        # 2 * 0.1 - 1 = -0.8 < 0
    assert np.all(new > 0)
    np.testing.assert_array_equal(new, 0.0 * x + 1.0 * target)  # s halved to 1
    np.testing.assert_array_equal(positive_mix(x, target, 0.5, "gamma"), 0.5 * x + 0.5 * target)
    with pytest.raises(ValueError, match="lambda"):
        positive_mix(x, np.array([np.nan, 1.0]), 0.5, "lambda")


def test_every_update_stays_positive_under_a_large_first_step(small, monkeypatch):
    """A mock first minibatch with a step far above 1 (A1 = 8: s = 8 / 6^0.501 = 3.3):
    gamma and lambda go through ``positive_mix`` and (a, b), (g, h) through
    ``positive_step``; all stay > 0 and finite."""
    import topiclink.families.lmv.stochastic as mod

    data = _data(small)
    alg = _algorithm(8.0, 5.0)
    state = alg.init(data, np.random.default_rng(1))
    calls: list[str] = []
    real_mix, real_step = mod.positive_mix, mod.positive_step

    def mix(x, target, s, what, **kw):
        calls.append(what)
        return real_mix(x, target, s, what, **kw)

    def step(x, y, target, s, **kw):
        calls.append("ab/gh")
        return real_step(x, y, target, s, **kw)

    monkeypatch.setattr(mod, "positive_mix", mix)
    monkeypatch.setattr(mod, "positive_step", step)
    rho = alg.step_size(state, data)
    assert rho > 3
    batch = np.arange(40)
    alg.minibatch_step(state, data, batch, rho)
    assert calls == ["gamma", "lambda", "ab/gh", "ab/gh"]
    for name in ("gamma", "lam", "a", "b", "g", "h"):
        value = getattr(state, name)
        assert np.all(np.isfinite(value)) and np.all(value > 0), name
    alg.check_values(state, data)


# ---------------------------------------------------------------------------- 5: keep
def test_newer_citations_keep_keeps_the_links_with_their_likelihood_term(small):
    """A link to a newer document: "error" refuses it, "drop" drops it, "keep" keeps it
    as a link with its likelihood term (its kappa nu^T adds 1 to S1, like every link)."""
    from scipy.special import digamma

    from topiclink.data import DataError
    from topiclink.families.lmv.algorithm import expected_log_dirichlet
    from topiclink.families.lmv.estimator import VisibilityTopicModel
    from topiclink.families.lmv.pairs import stream_pair_statistics

    (corpus, links), _ = small
    pairs = np.asarray(links.pairs, np.int64)
    time = np.arange(corpus.n_docs, dtype=float)[::-1]   # higher index = older
    newer = time[pairs[:, 1]] > time[pairs[:, 0]]
    assert 0 < newer.sum() < len(pairs)
    kw = dict(max_iter=2, random_state=0, n_jobs=1)
    with pytest.raises(DataError, match="'keep'"):
        VisibilityTopicModel(6, **kw).fit(corpus, links=links, publication_time=time)
    drop = VisibilityTopicModel(6, **kw).fit(corpus, links=links, publication_time=time,
                                             newer_citations="drop")
    keep = VisibilityTopicModel(6, **kw).fit(corpus, links=links, publication_time=time,
                                             newer_citations="keep")
    assert drop.n_links_ == len(pairs) - newer.sum()
    assert keep.n_links_ == len(pairs)
    assert not np.allclose(keep.visibility_, drop.visibility_)
    with pytest.raises(ValueError, match="'keep'"):
        VisibilityTopicModel(6, **kw).fit(corpus, links=links, publication_time=time,
                                          newer_citations="ignore")
    # the kernel: every kept link, newer or not, is a link term of S1
    data = LMVData.build(corpus.counts, pairs, time)
    st = keep.state_
    stats = stream_pair_statistics(
        expected_log_dirichlet(st.gamma), data.cites.indptr, data.cites.indices,
        digamma(st.a) - digamma(st.a + st.b), digamma(st.g) - digamma(st.g + st.h),
        st.g / (st.g + st.h), st.a / (st.a + st.b), time=time)
    assert stats["S1"].sum() == pytest.approx(len(pairs), rel=1e-9)
    # LMVS keeps them too
    lmvs = VisibilityTopicModel(6, inference="stochastic", batch_size=40, tol=0.0,
                                **kw).fit(corpus, links=links, publication_time=time,
                                          newer_citations="keep")
    assert lmvs.n_links_ == len(pairs)


# ---------------------------------------------------------------------------- 2: stopping
def _lmvs(**kw):
    from topiclink.families.lmv.estimator import VisibilityTopicModel

    args = dict(inference="stochastic", batch_size=40, n0=10, random_state=0, n_jobs=1)
    return VisibilityTopicModel(6, **{**args, **kw})


def test_window_rule_needs_min_sweeps_and_a_calm_average(small):
    """The default rule does not stop on one calm sweep: it waits for ``min_sweeps`` and
    for the mean change of the last ``tol_window`` sweeps to fall below eps; the paper's
    rule (``stopping="paper"``) stops at the first calm sweep."""
    (corpus, links), _ = small
    paper = _lmvs(max_iter=30, tol=0.5, stopping="paper").fit(corpus, links=links)
    window = _lmvs(max_iter=30, tol=0.5).fit(corpus, links=links)
    c = window.trace_["blockmodel_change"]
    w = window.n_iter_
    assert paper.n_iter_ < 5 <= w < 30
    assert window.converged_ and window.stop_reason_.startswith(f"tolerance at sweep {w}")
    assert c[w - 3:w].mean() < 0.5
    assert all(c[k - 3:k].mean() >= 0.5 for k in range(5, w))
    np.testing.assert_array_equal(c[:paper.n_iter_], paper.trace_["blockmodel_change"])


def test_max_iter_before_the_tolerance_warns_and_says_so(small):
    from sklearn.exceptions import ConvergenceWarning

    from topiclink.families.lmv.estimator import VisibilityTopicModel

    (corpus, links), _ = small
    with pytest.warns(ConvergenceWarning, match="max_iter reached before the tolerance"):
        m = _lmvs(max_iter=3, tol=1e-9).fit(corpus, links=links)
    assert not m.converged_ and "max_iter=3" in m.stop_reason_
    with pytest.warns(ConvergenceWarning, match="has not converged"):
        b = VisibilityTopicModel(6, max_iter=2, random_state=0, n_jobs=1).fit(
            corpus, links=links)
    assert not b.converged_ and b.stop_reason_.startswith("max_iter reached before")
    ok = VisibilityTopicModel(6, max_iter=200, tol=1e-3, random_state=0, n_jobs=1).fit(
        corpus, links=links)
    assert ok.converged_ and ok.stop_reason_.startswith(
        f"tolerance at iteration {ok.n_iter_}: relative change of L*")


def test_batch_starts_gamma_from_the_e_step_at_the_start_topics(small):
    """The batch estimator starts gamma where LDA's word E-step puts the documents at the
    fitted LDA's topics (as ``init_topics`` does), not at the chain's counts; LMVS keeps
    the counts start."""
    from topiclink.families.lmv.algorithm import BatchLMV, start_lda
    from topiclink.families.lmv.estimator import VisibilityTopicModel

    (corpus, links), _ = small
    assert VisibilityTopicModel(6)._algorithm().start == "e-step"
    assert VisibilityTopicModel(6, inference="stochastic")._algorithm().batch.start == "counts"
    data = LMVData.build(corpus.counts, np.asarray(links.pairs, np.int64))
    kw = dict(alpha=1 / 6, eta=0.1, blockmodel_prior=(1, 1), visibility_prior=(1, 1))
    ndk, nwk = start_lda(data.counts, 6, 1 / 6, 0.1, np.random.default_rng(3))
    e_step = BatchLMV(6, start="e-step", **kw)
    gamma, lam = e_step.initial_topics(data, np.random.default_rng(3))
    expected = e_step.given_topics(data, nwk)
    np.testing.assert_allclose(gamma, expected[0])
    np.testing.assert_allclose(lam, expected[1])
    assert not np.allclose(gamma, 1 / 6 + ndk)
    counts = BatchLMV(6, **kw).initial_topics(data, np.random.default_rng(3))
    np.testing.assert_allclose(counts[0], 1 / 6 + ndk)
    with pytest.raises(ValueError, match="start must be"):
        BatchLMV(6, start="flat", **kw)


def test_the_convergence_warning_names_the_callers_line_and_what_to_do(small, tmp_path):
    """The warning points at the line that called ``fit`` (this file), not at a library
    frame, also through ``fit_transform`` (a library frame between) and with a checkpoint,
    and says what to do."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from topiclink.families.lmv.estimator import VisibilityTopicModel

    (corpus, links), _ = small
    for verb, kw in (("fit", {}), ("fit_transform", {}),
                     ("fit", {"checkpoint": tmp_path / "ck.npz", "checkpoint_every": 1})):
        model = VisibilityTopicModel(6, max_iter=2, random_state=0, n_jobs=1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(model, verb)(corpus, links=links, **kw)
        found = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
        assert len(found) == 1, [str(w.message) for w in caught]
        assert found[0].filename == __file__, (found[0].filename, found[0].lineno)
        message = str(found[0].message)
        assert "raise max_iter" in message and "tol" in message and "resume=True" in message


def test_window_rule_resumes_from_a_checkpoint_where_it_would_stop(small, tmp_path):
    """A fit killed in sweep 4 and resumed from its checkpoint stops at the same
    sweep as one uninterrupted fit (the rule's memory, its changes, is checkpointed)."""
    from topiclink.callbacks import LambdaCallback

    (corpus, links), _ = small
    whole = _lmvs(max_iter=30, tol=0.5).fit(corpus, links=links)
    assert whole.n_iter_ >= 5   # the window of the stop holds sweeps before the kill
    path = tmp_path / "ck.npz"

    class Interrupt(Exception):
        pass

    def boom(model, it, info):
        if it + 1 == 4:
            raise Interrupt

    with pytest.raises(Interrupt):
        _lmvs(max_iter=30, tol=0.5, callbacks=[LambdaCallback(boom)]).fit(
            corpus, links=links, checkpoint=path, checkpoint_every=1)
    again = _lmvs(max_iter=30, tol=0.5).fit(corpus, links=links, checkpoint=path,
                                           checkpoint_every=1)
    assert again.n_iter_ == whole.n_iter_ and again.converged_
    assert again.stop_reason_ == whole.stop_reason_
    np.testing.assert_array_equal(again.blockmodel_, whole.blockmodel_)
    # fit(resume=True) continues the rule too
    part = _lmvs(max_iter=4, tol=0.5).fit(corpus, links=links)
    part.max_iter = 30
    part.fit(corpus, links=links, resume=True)
    assert part.n_iter_ == whole.n_iter_


# ---------------------------------------------------------------------------- 3: the start
def _start_of(model, corpus, links, S):
    """The initial state the estimator's algorithm builds from ``init_topics`` S."""
    from topiclink.data.links import as_links
    from topiclink.families.lmv.algorithm import LMVData as LD
    from topiclink.families.rtm.variational import VarRTMData
    from topiclink.topics.var_lda import LDAData

    alg = model._algorithm()
    alg.init_topics = S
    rng = np.random.default_rng(0)
    name = type(model).__name__
    if name == "VisibilityTopicModel":
        return alg.init(LD.build(corpus.counts, np.asarray(links.pairs, np.int64)), rng)
    if name == "VariationalRTM":
        return alg.init(VarRTMData.from_corpus(corpus, as_links(links, corpus.n_docs)), rng)
    return alg.init(LDAData.build(corpus.counts), rng)


def test_init_topics_is_the_start_of_every_estimator(small):
    """``init_topics`` S: LMV / LMVS / PLLDA and LDA+Reg start at lambda = eta + S, Var-RTM
    (variational topics) at lambda = S + s; none of them draws its own topics."""
    from topiclink.families.lda_regression.estimator import LDARegression
    from topiclink.families.lmv.algorithm import start_lda
    from topiclink.families.lmv.estimator import VisibilityTopicModel
    from topiclink.families.rtm.estimator_variational import VariationalRTM

    (corpus, links), _ = small
    _, S = start_lda(corpus.counts, 6, 1 / 6, 0.5, np.random.default_rng(3), n_iter=20,
                     restarts=2)
    assert S.shape == (6, corpus.n_words) and S.sum() == corpus.n_tokens
    for model in (VisibilityTopicModel(6, topic_word_prior=0.5),
                  VisibilityTopicModel(6, topic_word_prior=0.5, inference="stochastic"),
                  VisibilityTopicModel(6, topic_word_prior=0.5, visibility=False),
                  LDARegression(6, topic_word_prior=0.5)):
        st = _start_of(model, corpus, links, S)
        np.testing.assert_allclose(st.lam, 0.5 + S, err_msg=type(model).__name__)
    rtm = VariationalRTM(6, topic_word_prior=0.5, topic_inference="variational")
    st = _start_of(rtm, corpus, links, S)
    np.testing.assert_allclose(st.components, (S + 0.5) / (S + 0.5).sum(1, keepdims=True))
    # with a given start, batch LMV no longer depends on the seed (only the start was random)
    a, b = (VisibilityTopicModel(6, topic_word_prior=0.5, init_topics=S, max_iter=3,
                                 random_state=seed, n_jobs=1).fit(corpus, links=links)
            for seed in (0, 1))
    np.testing.assert_array_equal(a.blockmodel_, b.blockmodel_)
    from topiclink.data import DataError

    with pytest.raises(DataError, match="init_topics has shape"):
        VisibilityTopicModel(5, init_topics=S[:5, :10], max_iter=1).fit(corpus, links=links)
    with pytest.raises(ValueError, match="init_topics"):
        LDARegression(6, init_topics=-S).fit(corpus, links=links)
