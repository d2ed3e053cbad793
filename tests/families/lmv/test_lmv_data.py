"""``make_lmv_data``: the LMV generator (topic-adjusted visibility; Tan, Chan & Zheng 2016).

Tolerances are fixed in advance, as in ``test_synthetic.py``: counts are compared with
their exact expectations given the truth (computed here from the truth, all pairs at
once on small networks), in units of their exact standard deviations (5 sd for single
comparisons; for sums of squared standardised deviations, mean m and 5 * sqrt(2 m)).
"""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.datasets import make_lmv_data as make_lmv_data_top
from topiclink.datasets.synthetic import LMVTruth, make_lmv_data, paper_blockmodel


def _all_pairs_proba(truth: LMVTruth) -> np.ndarray:
    """``P[d, d'] = tau_eff_d' theta_d^T B theta_d'`` for every eligible ordered pair."""
    th = truth.doc_topic
    P = th @ truth.blockmodel @ th.T * truth.effective_visibility[None, :]
    np.fill_diagonal(P, 0.0)
    if truth.publication_time is not None:
        t = truth.publication_time
        P[t[None, :] > t[:, None]] = 0.0
    return P


def _adjacency(links: Links) -> np.ndarray:
    A = np.zeros((links.n_docs, links.n_docs))
    A[links.source, links.target] = 1.0
    return A


def _standardised_sq_sum(observed: np.ndarray, mean: np.ndarray, var: np.ndarray,
                         min_mean: float = 5.0) -> tuple[float, int]:
    keep = mean >= min_mean
    return float(((observed[keep] - mean[keep]) ** 2 / var[keep]).sum()), int(keep.sum())


def _within(stat: float, m: int) -> bool:
    return abs(stat - m) < 5 * np.sqrt(2 * m)


# ---------------------------------------------------------------------- the paper's B
def test_paper_blockmodel_entries() -> None:
    B = paper_blockmodel()
    assert B.shape == (6, 6) and B.dtype == np.float64
    expected = {(1, 1): 0.3, (2, 2): 0.3, (3, 3): 0.3, (4, 4): 0.2, (5, 5): 0.2, (6, 6): 0.2,
                (2, 5): 0.05, (3, 4): 0.05, (4, 1): 0.04, (5, 2): 0.04, (1, 6): 0.03,
                (6, 3): 0.03, (1, 3): 0.02, (4, 6): 0.02, (6, 1): 0.02}   # 1-based
    want = np.zeros((6, 6))
    for (s, r), v in expected.items():
        want[s - 1, r - 1] = v
    np.testing.assert_array_equal(B, want)
    assert np.count_nonzero(B) == 15
    B[0, 0] = 9.0                                   # a fresh array every call
    assert paper_blockmodel()[0, 0] == 0.3


# ---------------------------------------------------------------------- shapes
def test_shapes_dtypes_and_links() -> None:
    (corpus, links), truth = make_lmv_data(n_docs=200, random_state=0)
    assert make_lmv_data_top is make_lmv_data
    assert isinstance(corpus, Corpus) and isinstance(links, Links)
    assert isinstance(truth, LMVTruth)
    assert corpus.counts.shape == (200, 100) and (corpus.doc_lengths == 100).all()
    assert truth.topic_word.shape == (6, 100) and truth.doc_topic.shape == (200, 6)
    assert truth.visibility.shape == (200,) and truth.visibility.dtype == np.float64
    assert truth.blockmodel.shape == (6, 6) and truth.publication_time is None
    np.testing.assert_array_equal(truth.blockmodel, paper_blockmodel())
    np.testing.assert_array_equal(truth.effective_visibility, truth.visibility)
    np.testing.assert_allclose(truth.topic_word.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(truth.doc_topic.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert ((truth.visibility >= 0) & (truth.visibility <= 1)).all()
    assert truth.n_pairs == 200 * 199 and corpus.metadata is None
    # words follow their topics: z aligned with tokens(), zbar its proportions
    tok = corpus.tokens()
    assert truth.assignments.shape == tok.words.shape
    assert (truth.topic_word[truth.assignments, tok.words] > 0).all()
    # directed, no self-links, no duplicates, asymmetric
    assert links.directed and links.n_docs == 200 and links.n_links > 0
    assert (links.source != links.target).all()
    pairs = set(zip(links.source.tolist(), links.target.tolist(), strict=True))
    assert len(pairs) == links.n_links
    assert any((t, s) not in pairs for s, t in pairs)
    # link_proba agrees with the all-pairs formula (0 on the diagonal)
    P = _all_pairs_proba(truth)
    rows, cols = np.divmod(np.arange(200 * 200), 200)
    np.testing.assert_allclose(truth.link_proba(rows, cols), P.ravel(), rtol=1e-12, atol=0)
    assert truth.expected_n_links == pytest.approx(P.sum(), rel=1e-12)
    assert truth.link_count_variance == pytest.approx((P * (1 - P)).sum(), rel=1e-12)


def test_determinism() -> None:
    (c1, l1), t1 = make_lmv_data(n_docs=150, random_state=7)
    (c2, l2), t2 = make_lmv_data(n_docs=150, random_state=np.random.default_rng(7))
    assert (c1.counts != c2.counts).nnz == 0
    np.testing.assert_array_equal(l1.source, l2.source)
    np.testing.assert_array_equal(l1.target, l2.target)
    for name in ("topic_word", "doc_topic", "visibility", "assignments"):
        np.testing.assert_array_equal(getattr(t1, name), getattr(t2, name))
    (_, l3), t3 = make_lmv_data(n_docs=150, random_state=8)
    assert not np.array_equal(t1.visibility, t3.visibility)


# ---------------------------------------------------------------------- the link law
def test_link_count_matches_expectation() -> None:
    (_, links), truth = make_lmv_data(n_docs=400, random_state=1)
    P = _all_pairs_proba(truth)
    mean, sd = P.sum(), np.sqrt((P * (1 - P)).sum())
    assert abs(links.n_links - mean) < 5 * sd


def test_degrees_match_expectation_and_visibility_is_on_the_cited_side() -> None:
    (_, links), truth = make_lmv_data(n_docs=400, random_state=2)
    A = _adjacency(links)
    P = _all_pairs_proba(truth)
    V = P * (1 - P)
    for axis in (0, 1):                  # in-degree (column sums), out-degree (row sums)
        stat, m = _standardised_sq_sum(A.sum(axis=axis), P.sum(axis=axis), V.sum(axis=axis))
        assert m > 100 and _within(stat, m)
    # against a wrong truth (visibility on the citing side) the in-degrees fail
    th = truth.doc_topic
    Q = th @ truth.blockmodel @ th.T * truth.visibility[:, None]
    np.fill_diagonal(Q, 0.0)
    stat, m = _standardised_sq_sum(A.sum(axis=0), Q.sum(axis=0), (Q * (1 - Q)).sum(axis=0))
    assert not _within(stat, m)


def test_in_degree_correlates_with_visibility() -> None:
    (_, links), truth = make_lmv_data(n_docs=500, random_state=3)
    in_degree = np.bincount(links.target, minlength=500)
    assert np.corrcoef(in_degree, truth.visibility)[0, 1] > 0.5   # threshold fixed a priori


def test_paper_design_default_size() -> None:
    (corpus, links), truth = make_lmv_data(random_state=4)
    assert corpus.n_docs == 3000 and corpus.n_words == 100 and truth.n_topics == 6
    assert truth.n_pairs == 3000 * 2999
    assert abs(links.n_links - truth.expected_n_links) < 5 * np.sqrt(truth.link_count_variance)


# ---------------------------------------------------------------------- fixed parameters
def test_fixed_topics_and_visibility_are_respected() -> None:
    _, first = make_lmv_data(n_docs=120, random_state=5)
    (_, links), again = make_lmv_data(n_docs=120, topic_word=first.topic_word,
                                      visibility=first.visibility, random_state=6)
    np.testing.assert_allclose(again.topic_word, first.topic_word, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(again.visibility, first.visibility)
    assert not np.array_equal(again.doc_topic, first.doc_topic)
    B = np.full((3, 3), 0.1)
    tau = np.linspace(0.0, 1.0, 50)
    (_, links), t = make_lmv_data(n_docs=50, n_topics=3, n_words=20, blockmodel=B,
                                  visibility=tau, random_state=0)
    np.testing.assert_array_equal(t.blockmodel, B)
    assert 0 not in set(links.target.tolist())      # tau = 0: never cited
    (_, links), _ = make_lmv_data(n_docs=40, blockmodel=np.zeros((6, 6)), random_state=0)
    assert links.n_links == 0


# ---------------------------------------------------------------------- publication times
def test_publication_time_no_link_to_newer_document() -> None:
    (corpus, links), truth = make_lmv_data(n_docs=400, publication_time=True, random_state=9)
    t = truth.publication_time
    assert t is not None and t.shape == (400,)
    np.testing.assert_array_equal(np.sort(t), np.arange(400))
    np.testing.assert_array_equal(corpus.metadata["publication_time"].to_numpy(), t)
    assert links.n_links > 0 and (t[links.target] <= t[links.source]).all()
    assert truth.n_pairs == 400 * 399 // 2
    P = _all_pairs_proba(truth)
    assert abs(links.n_links - P.sum()) < 5 * np.sqrt((P * (1 - P)).sum())
    # given times (with ties): a tie may link, a newer document may not
    times = np.repeat(np.arange(20.0), 10)
    (_, links), truth = make_lmv_data(n_docs=200, publication_time=times,
                                      visibility=np.ones(200), random_state=0)
    np.testing.assert_array_equal(truth.publication_time, times)
    assert (times[links.target] <= times[links.source]).all()
    assert truth.n_pairs == int((times[None, :] <= times[:, None]).sum()) - 200


def test_visibility_age_effect_formula() -> None:
    tau = np.full(5, 0.8)
    times = np.array([0.0, 4.0, 2.0, 1.0, 3.0])
    age = (4.0 - times) / 4.0
    _, decay = make_lmv_data(n_docs=5, visibility=tau, publication_time=times,
                             visibility_age_effect=1.5, random_state=0)
    np.testing.assert_allclose(decay.effective_visibility, 0.8 * np.exp(-1.5 * age),
                               rtol=1e-15)
    np.testing.assert_array_equal(decay.visibility, tau)
    _, grow = make_lmv_data(n_docs=5, visibility=tau, publication_time=times,
                            visibility_age_effect=-1.5, random_state=0)
    np.testing.assert_allclose(grow.effective_visibility, 0.8 * np.exp(-1.5 * (1 - age)),
                               rtol=1e-15)
    # the links follow the effective visibility: citations received by age decile
    (_, links), truth = make_lmv_data(n_docs=600, publication_time=True,
                                      visibility_age_effect=2.0, random_state=10)
    t = truth.publication_time
    decile = np.minimum((t * 10 // 600).astype(np.int64), 9)
    A = _adjacency(links)
    observed = np.bincount(decile, weights=A.sum(axis=0), minlength=10)
    P = _all_pairs_proba(truth)
    mean = np.bincount(decile, weights=P.sum(axis=0), minlength=10)
    var = np.bincount(decile, weights=(P * (1 - P)).sum(axis=0), minlength=10)
    stat, m = _standardised_sq_sum(observed, mean, var)
    assert m == 10 and _within(stat, m)
    # against a wrong truth (no age effect) the deciles fail
    Q = P / truth.effective_visibility[None, :] * truth.visibility[None, :]
    mean = np.bincount(decile, weights=Q.sum(axis=0), minlength=10)
    var = np.bincount(decile, weights=(Q * (1 - Q)).sum(axis=0), minlength=10)
    stat, m = _standardised_sq_sum(observed, mean, var)
    assert not _within(stat, m)


# ---------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize("kwargs", [
    {"n_docs": 1},
    {"n_docs": 2.5},
    {"n_words": 1},
    {"n_topics": 1},
    {"n_topics": 4},                                        # no default B for K != 6
    {"blockmodel": np.full((6, 5), 0.1)},
    {"blockmodel": np.full((6, 6), 1.2)},
    {"blockmodel": np.full((6, 6), -0.1)},
    {"blockmodel": np.full((6, 6), np.nan)},
    {"doc_topic_prior": 0.0},
    {"topic_word_prior": -1.0},
    {"visibility_prior": (1.0, 0.0)},
    {"visibility_prior": (1.0,)},
    {"visibility_prior": "ab"},
    {"topic_word": np.full((6, 99), 1 / 99)},
    {"topic_word": np.full((6, 100), 0.02)},
    {"visibility": np.full(10, 0.5)},
    {"visibility": np.full(20, 1.5)},
    {"publication_time": np.arange(5.0)},
    {"publication_time": np.r_[np.arange(19.0), np.inf]},
    {"visibility_age_effect": 1.0},                         # needs publication times
    {"visibility_age_effect": float("nan"), "publication_time": True},
    {"doc_length": 0},
])
def test_bad_arguments_one_line_errors(kwargs: dict) -> None:
    kwargs = {"n_docs": 20, **kwargs}
    with pytest.raises(ValueError) as info:
        make_lmv_data(random_state=0, **kwargs)
    message = str(info.value)
    assert message and "\n" not in message
