"""LMV / Pairwise-Link-LDA (batch VB): the bound never decreases, the streamed step equals
its naive twin inside the algorithm, planted visibilities and blockmodel are recovered,
PLLDA absorbs the mean visibility into B, predictions follow eq. 6.1, bad input is one line."""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.data import DataError, Links
from topiclink.datasets import make_lmv_data
from topiclink.families.lmv.estimator import VisibilityTopicModel


@pytest.fixture(scope="module")
def planted():
    return make_lmv_data(n_docs=400, n_words=100, n_topics=6, random_state=1)


@pytest.fixture(scope="module")
def lmv(planted):
    (corpus, links), _ = planted
    return VisibilityTopicModel(6, max_iter=60, tol=0.0, random_state=0, n_jobs=2).fit(
        corpus, links=links)


def _matched(model, truth):
    from scipy.optimize import linear_sum_assignment

    cos = model.components_ @ truth.topic_word.T
    cos /= np.outer(np.linalg.norm(model.components_, axis=1),
                    np.linalg.norm(truth.topic_word, axis=1))
    rows, cols = linear_sum_assignment(-cos)
    order = np.empty(6, int)
    order[cols] = rows
    return order, cos[rows, cols]


def test_the_bound_never_decreases(lmv):
    ll = lmv.trace_["log_likelihood"]
    assert np.all(np.diff(ll) >= -1e-9 * np.abs(ll[1:]))
    assert ll[-1] > ll[0]


def test_planted_visibility_and_blockmodel_are_recovered(lmv, planted):
    """Thresholds fixed before running: topics matched with cosine > 0.9, visibility
    correlation > 0.8, every diagonal block within 0.08 of the truth, the zero blocks
    below 0.05."""
    _, truth = planted
    order, cos = _matched(lmv, truth)
    assert cos.min() > 0.9
    assert np.corrcoef(lmv.visibility_, truth.visibility)[0, 1] > 0.8
    B = lmv.blockmodel_[np.ix_(order, order)]
    np.testing.assert_allclose(np.diag(B), np.diag(truth.blockmodel), atol=0.08)
    assert B[truth.blockmodel == 0].max() < 0.05


def test_pairwise_link_lda_absorbs_the_mean_visibility(planted, lmv):
    """With tau fixed at 1, B takes about E[tau] = 0.5 of the true rates (the paper's
    Table S1: 0.146 for 0.3)."""
    (corpus, links), truth = planted
    pllda = VisibilityTopicModel(6, visibility=False, max_iter=60, tol=0.0, random_state=0,
                                 n_jobs=2).fit(corpus, links=links)
    assert np.all(pllda.visibility_ == 1.0)
    order, _ = _matched(pllda, truth)
    ratio = np.diag(pllda.blockmodel_[np.ix_(order, order)]) / np.diag(truth.blockmodel)
    assert 0.35 < ratio.mean() < 0.65


def test_the_streamed_step_equals_the_naive_twin(planted):
    """One iteration of the estimator's algorithm with the Numba streaming replaced by the
    all-pairs NumPy twin gives the same state."""
    from tests import naive
    from topiclink.families.lmv.algorithm import BatchLMV, LMVData

    (corpus, links), _ = planted
    sub = corpus.subset(np.arange(25))
    lk = links.subgraph(np.arange(25))
    data = LMVData.build(sub.counts, np.asarray(lk.pairs), None)

    class Twin(BatchLMV):
        def pair_statistics(self, state, data):
            from scipy.special import digamma

            from topiclink.families.lmv.algorithm import expected_log_dirichlet

            taubar, elog_tau = self._tau(state)
            coo = data.cites.tocoo()  # CSR order: the rows of state.link_nu
            out = naive.lmv_pair_statistics(
                expected_log_dirichlet(state.gamma), np.column_stack([coo.row, coo.col]),
                digamma(state.a) - digamma(state.a + state.b), elog_tau, taubar,
                state.a / (state.a + state.b), link_nu=state.link_nu)
            return {"gamma_out": out["gamma_out"], "gamma_in": out["gamma_in"],
                    "S1": out["S1"], "T": out["T"], "bound": out["bound"],
                    "citation_topics": np.asarray(out.get("citation_topics",
                                                          np.zeros((len(lk.pairs), 2))),
                                                  np.int32)}

    kwargs = {"alpha": 0.2, "eta": 0.1, "blockmodel_prior": (1, 1),
              "visibility_prior": (1, 1)}
    fast, slow = BatchLMV(6, **kwargs), Twin(6, **kwargs)
    a = fast.init(data, np.random.default_rng(0))
    b = slow.init(data, np.random.default_rng(0))
    for _ in range(3):
        fast.step(a, data)
        slow.step(b, data)
    for name in ("gamma", "lam", "a", "b", "g", "h", "S1", "T", "link_nu"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-8,
                                   atol=1e-10, err_msg=name)
    assert a.bound == pytest.approx(b.bound, rel=1e-9)


def test_predictions_follow_the_paper(lmv, planted):
    (corpus, links), _ = planted
    new = corpus.subset([0, 1, 2])
    scores = lmv.link_scores(new, direction="out")
    zq = lmv.transform(new)
    expected = (zq @ lmv.blockmodel_ @ lmv.doc_topic_.T) * lmv.visibility_
    np.testing.assert_allclose(scores, expected, rtol=1e-10)
    proba = lmv.predict_link_proba(new, targets=[3, 4])
    assert proba.shape == (3, 2) and np.all((proba >= 0) & (proba <= 1))
    table = lmv.suggest_links(new, top=3, direction="out")
    assert len(table) == 9
    assert lmv.citation_topics_.shape == (len(links.pairs), 2)
    assert "most visible" in lmv.summary()


def test_bad_input_is_one_line(planted):
    (corpus, links), _ = planted
    small = corpus.subset(np.arange(20))
    lk = links.subgraph(np.arange(20))
    undirected = Links.from_pairs(np.array([[0, 1], [2, 3]]), 20, directed=False)
    with pytest.raises(DataError, match="directed citations"):
        VisibilityTopicModel(3).fit(small, links=undirected)
    times = np.arange(20.0)
    newer = Links.from_pairs(np.array([[0, 5]]), 20, directed=True)
    with pytest.raises(DataError, match="cites document 5, which is newer"):
        VisibilityTopicModel(3).fit(small, links=newer, publication_time=times)
    both = Links.from_pairs(np.array([[0, 5], [6, 1]]), 20, directed=True)
    dropped = VisibilityTopicModel(3, max_iter=2).fit(small, links=both,
                                                      publication_time=times,
                                                      newer_citations="drop")
    assert dropped.n_links_ == 1 and dropped.elbo_.shape == (2,)
    with pytest.raises(ValueError, match="newer_citations must be"):
        VisibilityTopicModel(3).fit(small, links=both, publication_time=times,
                                    newer_citations="ignore")
    with pytest.raises(DataError, match="publication_time of document 2"):
        VisibilityTopicModel(3).fit(small, links=lk, publication_time=np.where(
            np.arange(20) == 2, np.nan, times))
    with pytest.raises(ValueError, match="n_topics must be"):
        VisibilityTopicModel(1).fit(small, links=lk)
    with pytest.raises(ValueError, match="blockmodel_prior must be a pair"):
        VisibilityTopicModel(3, blockmodel_prior=(1, -1)).fit(small, links=lk)
    with pytest.raises(TypeError, match="keyword"):
        VisibilityTopicModel(3).fit(small, lk)
    empty = Links.from_pairs(np.zeros((0, 2), int), 20, directed=True)
    with pytest.raises(DataError, match="the network has none"):
        VisibilityTopicModel(3, max_iter=3).fit(small, links=empty)
    with pytest.raises(DataError, match="self-link"):
        VisibilityTopicModel(3).fit(small, links=np.array([[0, 1], [4, 4]]))
    with pytest.raises(DataError, match="25"):
        VisibilityTopicModel(3).fit(small, links=np.array([[0, 1], [3, 25]]))
    one = Links.from_pairs(np.array([[0, 1]]), 20, directed=True)
    model = VisibilityTopicModel(3, max_iter=3).fit(small, links=one)   # isolated: fine
    assert np.all(np.isfinite(model.visibility_)) and model.visibility_.shape == (20,)


def test_lmv_t_ignores_pairs_citing_forward_in_time():
    (corpus, links), truth = make_lmv_data(n_docs=150, n_topics=6, publication_time=True,
                                          random_state=3)
    m = VisibilityTopicModel(6, max_iter=10, tol=0.0, random_state=0).fit(
        corpus, links=links, publication_time=truth.publication_time)
    ll = m.trace_["log_likelihood"]
    assert np.all(np.diff(ll) >= -1e-9 * np.abs(ll[1:]))
    untimed = VisibilityTopicModel(6, max_iter=10, tol=0.0, random_state=0).fit(
        corpus, links=links)
    assert not np.allclose(m.visibility_, untimed.visibility_)


def test_the_bound_never_decreases_on_cora():
    """L* is monotone on real citations too (the 400 most connected Cora papers, directed):
    each block, the links' warm-started fixed points included, is an ascent step."""
    from topiclink.datasets import load_bundled_cora

    ds = load_bundled_cora(directed=True)
    keep = np.sort(np.argsort(-ds.links.degrees(), kind="stable")[:400])
    model = VisibilityTopicModel(5, topic_word_prior=0.5, max_iter=25, tol=0.0,
                                 random_state=0).fit(ds.corpus.subset(keep),
                                                     links=ds.links.subgraph(keep))
    ll = model.trace_["log_likelihood"]
    assert len(ll) == 25
    assert np.all(np.diff(ll) >= -1e-9 * np.abs(ll[1:]))
