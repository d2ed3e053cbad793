"""Tests of the evaluation metrics: hand-computed cases, baselines, perfect scores, errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import average_precision_score, roc_auc_score

from topiclink.metrics.classification import accuracy, perplexity
from topiclink.metrics.coherence import npmi_coherence
from topiclink.metrics.links import link_auc, link_rank, link_rank_per_query, predictive_rank
from topiclink.metrics.words import word_rank, word_rank_per_doc

# --- link rank ---------------------------------------------------------------------------------

SCORES = np.array([
    [0.9, 0.1, 0.5, 0.5],   # ranks 1, 4, 2.5, 2.5
    [0.2, 0.2, 0.2, 0.8],   # ranks 3, 3, 3, 1
    [0.3, 0.1, 0.2, 0.4],   # no true link
])
TRUE = np.array([
    [1, 0, 1, 0],           # mean rank (1 + 2.5) / 2 = 1.75
    [1, 0, 0, 0],           # rank 3 (three-way tie for ranks 2..4)
    [0, 0, 0, 0],
], dtype=bool)


def test_link_rank_hand_computed_with_ties() -> None:
    np.testing.assert_array_equal(link_rank_per_query(SCORES, TRUE), [1.75, 3.0, np.nan])
    assert link_rank(SCORES, TRUE) == pytest.approx((1.75 + 3.0) / 2)
    assert predictive_rank is link_rank


def test_link_rank_sparse_and_numeric_links_agree() -> None:
    expected = link_rank(SCORES, TRUE)
    assert link_rank(SCORES, sp.csr_array(TRUE)) == expected
    assert link_rank(SCORES, sp.csr_matrix(TRUE.astype(float))) == expected
    assert link_rank(SCORES, TRUE.astype(int)) == expected
    # explicitly stored zeros are not links
    coo = sp.coo_array((np.array([1.0, 1.0, 0.0, 1.0]), (np.array([0, 0, 2, 1]),
                                                          np.array([0, 2, 3, 0]))),
                       shape=TRUE.shape)
    assert link_rank(SCORES, coo) == expected


def test_link_rank_infinite_scores_rank_last_and_first() -> None:
    scores = np.array([[-np.inf, 0.0, np.inf, 1.0]])
    np.testing.assert_array_equal(link_rank_per_query(scores, [[1, 0, 0, 0]]), [4.0])
    np.testing.assert_array_equal(link_rank_per_query(scores, [[0, 0, 1, 0]]), [1.0])


def test_link_rank_perfect_scores() -> None:
    rng = np.random.default_rng(0)
    true = rng.random((50, 80)) < 0.1
    true[:, 0] = True  # every query has >= 1 link
    scores = true.astype(float)  # true links tied at the top
    m = true.sum(axis=1)
    np.testing.assert_allclose(link_rank_per_query(scores, true), (m + 1) / 2)
    assert link_rank(scores, true) == pytest.approx(np.mean((m + 1) / 2))
    # strictly ordered true links give the same mean rank (m + 1) / 2
    noisy = scores + 0.5 * rng.random(scores.shape)
    np.testing.assert_allclose(link_rank_per_query(noisy, true), (m + 1) / 2)


def test_link_rank_random_scores_baseline() -> None:
    rng = np.random.default_rng(1)
    n_query, n = 300, 501
    true = rng.random((n_query, n)) < 0.05
    scores = rng.random((n_query, n))
    m = true.sum(axis=1)
    m = m[m > 0]
    # The m true ranks of a query are a simple random sample (without replacement) of
    # 1..n: their mean has variance (n^2 - 1)/12 / m * (n - m)/(n - 1).
    var_q = (n * n - 1) / 12.0 / m * (n - m) / (n - 1)
    se = math.sqrt(var_q.sum()) / m.size
    assert abs(link_rank(scores, true) - (n + 1) / 2) < 5 * se


def test_link_rank_errors() -> None:
    with pytest.raises(ValueError, match=r"^link_rank: scores has shape \(3, 5\) but true_links "
                                         r"has shape \(3, 4\)$"):
        link_rank(np.zeros((3, 5)), np.zeros((3, 4), dtype=bool))
    with pytest.raises(ValueError, match=r"link_rank: scores has shape \(3, 5\) but true_links "
                                         r"has shape \(3, 4\)"):
        link_rank(np.zeros((3, 5)), sp.csr_array((3, 4)))
    with pytest.raises(ValueError, match=r"link_rank: scores is empty"):
        link_rank(np.zeros((0, 5)), np.zeros((0, 5), dtype=bool))
    with pytest.raises(ValueError, match=r"link_rank: scores must be 2-D"):
        link_rank(np.zeros(5), np.zeros(5, dtype=bool))
    with pytest.raises(ValueError, match=r"link_rank: scores contains NaN at \[1, 2\]"):
        bad = np.zeros((2, 3))
        bad[1, 2] = np.nan
        link_rank(bad, np.ones((2, 3), dtype=bool))
    with pytest.raises(ValueError, match=r"link_rank: true_links has no non-zero entry"):
        link_rank(np.zeros((2, 3)), np.zeros((2, 3), dtype=bool))
    with pytest.raises(ValueError, match=r"^link_rank_per_query: scores has shape"):
        link_rank_per_query(np.zeros((3, 5)), np.zeros((2, 5)))


# --- link AUC -----------------------------------------------------------------------------------

def test_link_auc_hand_computed_with_ties() -> None:
    scores = np.array([[0.8, 0.8], [0.3, 0.1]])
    true = np.array([[1, 0], [1, 0]], dtype=bool)
    # positive/negative pairs: (0.8, 0.8) tie = 1/2, (0.8, 0.1) = 1, (0.3, 0.8) = 0,
    # (0.3, 0.1) = 1 -> ROC AUC 2.5 / 4. Thresholds 0.8: P = 1/2, R = 1/2; 0.3: P = 2/3,
    # R = 1 -> AP = 1/2 * 1/2 + 1/2 * 2/3.
    res = link_auc(scores, true)
    assert res["roc_auc"] == pytest.approx(0.625)
    assert res["pr_auc"] == pytest.approx(0.25 + 1.0 / 3.0)
    assert set(res) == {"roc_auc", "pr_auc"}


def test_link_auc_matches_sklearn_and_mask() -> None:
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(20, 30))
    true = rng.random((20, 30)) < 0.2
    scores[true] += 1.0
    res = link_auc(scores, sp.csr_array(true))
    assert res["roc_auc"] == pytest.approx(roc_auc_score(true.ravel(), scores.ravel()))
    assert res["pr_auc"] == pytest.approx(average_precision_score(true.ravel(), scores.ravel()))
    mask = rng.random((20, 30)) < 0.5
    res_m = link_auc(scores, true, mask=mask)
    assert res_m["roc_auc"] == pytest.approx(roc_auc_score(true[mask], scores[mask]))
    assert res_m["pr_auc"] == pytest.approx(average_precision_score(true[mask], scores[mask]))
    assert link_auc(scores, true, mask=sp.csr_array(mask)) == res_m


def test_link_auc_perfect_and_infinite_scores() -> None:
    rng = np.random.default_rng(3)
    true = rng.random((30, 40)) < 0.1
    res = link_auc(true.astype(float), true)
    assert res == {"roc_auc": 1.0, "pr_auc": 1.0}
    scores = np.where(true, np.inf, -np.inf)
    assert link_auc(scores, true) == {"roc_auc": 1.0, "pr_auc": 1.0}


def test_link_auc_random_scores_baseline() -> None:
    rng = np.random.default_rng(4)
    true = rng.random((200, 300)) < 0.05
    scores = rng.random((200, 300))
    n_pos = int(true.sum())
    n_neg = true.size - n_pos
    # Mann-Whitney null: Var(AUC) = (n_pos + n_neg + 1) / (12 n_pos n_neg)
    se = math.sqrt((n_pos + n_neg + 1) / (12.0 * n_pos * n_neg))
    assert abs(link_auc(scores, true)["roc_auc"] - 0.5) < 5 * se


def test_link_auc_errors() -> None:
    scores = np.zeros((2, 3))
    with pytest.raises(ValueError, match=r"^link_auc: true_links has no positive pair, AUC is "
                                         r"undefined$"):
        link_auc(scores, np.zeros((2, 3), dtype=bool))
    with pytest.raises(ValueError, match=r"link_auc: true_links has no negative pair"):
        link_auc(scores, np.ones((2, 3), dtype=bool))
    true = np.array([[1, 0, 0], [0, 0, 0]], dtype=bool)
    mask = np.array([[0, 1, 1], [1, 1, 1]], dtype=bool)
    with pytest.raises(ValueError, match=r"no positive pair among the masked pairs"):
        link_auc(scores, true, mask=mask)
    with pytest.raises(ValueError, match=r"link_auc: scores has shape \(2, 3\) but mask has "
                                         r"shape \(3, 2\)"):
        link_auc(scores, true, mask=np.ones((3, 2), dtype=bool))
    with pytest.raises(ValueError, match=r"link_auc: mask must be boolean"):
        link_auc(scores, true, mask=np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"link_auc: mask selects no pair"):
        link_auc(scores, true, mask=np.zeros((2, 3), dtype=bool))
    with pytest.raises(ValueError, match=r"link_auc: scores has shape \(2, 3\) but true_links"):
        link_auc(scores, np.zeros((2, 2), dtype=bool))


# --- word rank ----------------------------------------------------------------------------------

PROBS = np.array([
    [0.5, 0.2, 0.2, 0.1],   # ranks 1, 2.5, 2.5, 4
    [0.1, 0.2, 0.3, 0.4],   # empty document
    [0.1, 0.2, 0.3, 0.4],   # ranks 4, 3, 2, 1
])
COUNTS = sp.csr_array(np.array([
    [2, 0, 1, 0],           # token: (2*1 + 1*2.5)/3 = 1.5; type: (1 + 2.5)/2 = 1.75
    [0, 0, 0, 0],
    [0, 0, 0, 3],           # rank 1
]))


def test_word_rank_hand_computed_with_ties() -> None:
    np.testing.assert_allclose(word_rank_per_doc(PROBS, COUNTS), [1.5, np.nan, 1.0])
    np.testing.assert_allclose(word_rank_per_doc(PROBS, COUNTS, weighting="type"),
                               [1.75, np.nan, 1.0])
    assert word_rank(PROBS, COUNTS) == pytest.approx((1.5 + 1.0) / 2)
    assert word_rank(PROBS, COUNTS, weighting="type") == pytest.approx((1.75 + 1.0) / 2)
    assert word_rank(PROBS, COUNTS.toarray()) == word_rank(PROBS, COUNTS)


def test_word_rank_random_baseline_and_perfect() -> None:
    rng = np.random.default_rng(5)
    n_docs, vocab = 200, 400
    counts = sp.random_array((n_docs, vocab), density=0.05, rng=rng, format="csr",
                             data_sampler=lambda size: rng.integers(1, 4, size=size))
    probs = rng.random((n_docs, vocab))
    # every word type's rank is uniform on 1..V; type-weighted doc means over m distinct
    # words have variance (V^2 - 1)/12/m * (V - m)/(V - 1)
    m = np.diff(counts.indptr)
    m = m[m > 0]
    var_d = (vocab**2 - 1) / 12.0 / m * (vocab - m) / (vocab - 1)
    se = math.sqrt(var_d.sum()) / m.size
    assert abs(word_rank(probs, counts, weighting="type") - (vocab + 1) / 2) < 5 * se
    perfect = (counts.toarray() > 0).astype(float)
    np.testing.assert_allclose(word_rank_per_doc(perfect, counts, weighting="type")[
        np.diff(counts.indptr) > 0], (m + 1) / 2)


def test_word_rank_errors() -> None:
    with pytest.raises(ValueError, match=r"^word_rank: word_probs has shape \(3, 4\) but counts "
                                         r"has shape \(3, 5\)$"):
        word_rank(PROBS, sp.csr_array((3, 5)))
    with pytest.raises(ValueError, match=r"word_rank: counts must be finite and >= 0"):
        word_rank(PROBS, -COUNTS)
    with pytest.raises(ValueError, match=r"word_rank: weighting must be 'token' or 'type'"):
        word_rank(PROBS, COUNTS, weighting="doc")
    with pytest.raises(ValueError, match=r"word_rank: counts has no non-zero entry"):
        word_rank(PROBS, sp.csr_array((3, 4)))
    with pytest.raises(ValueError, match=r"word_rank: word_probs is empty"):
        word_rank(np.zeros((0, 4)), sp.csr_array((0, 4)))


# --- perplexity and accuracy --------------------------------------------------------------------

def test_perplexity() -> None:
    assert perplexity(-100 * math.log(50.0), 100) == pytest.approx(50.0)
    assert perplexity(0.0, 7) == 1.0
    assert perplexity(-1e6, 1) == math.inf
    with pytest.raises(ValueError, match=r"^perplexity: n_tokens must be finite and > 0, got 0$"):
        perplexity(-10.0, 0)
    with pytest.raises(ValueError, match=r"perplexity: log_likelihood must be finite, got nan"):
        perplexity(float("nan"), 10)


def test_accuracy() -> None:
    assert accuracy([1, 2, 3], [1, 2, 0]) == pytest.approx(2 / 3)
    assert accuracy(np.array(["a", "b"]), np.array(["a", "b"])) == 1.0
    with pytest.raises(ValueError, match=r"^accuracy: y_true has 3 labels but y_pred has 2$"):
        accuracy([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match=r"accuracy: y_true is empty"):
        accuracy([], [])


# --- NPMI coherence -----------------------------------------------------------------------------

# words 0 and 1 appear in exactly the same documents; words 0 and 2 never together;
# word 3 shares one of two documents with each of them (PMI = 0)
CORPUS = sp.csr_array(np.array([
    [1, 2, 0, 1],
    [3, 1, 0, 0],
    [0, 0, 1, 5],
    [0, 0, 2, 0],
]))


def test_npmi_always_and_never_cooccurring_words() -> None:
    topics = np.array([
        [0.4, 0.3, 0.1, 0.2],   # top-2 {0, 1}: always together -> 1
        [0.4, 0.1, 0.3, 0.2],   # top-2 {0, 2}: never together -> -1
        [0.4, 0.1, 0.2, 0.3],   # top-2 {0, 3}: p = 1/4 = 1/2 * 1/2 -> 0
    ])
    np.testing.assert_allclose(npmi_coherence(topics, CORPUS, top_n=2), [1.0, -1.0, 0.0],
                               atol=1e-15)
    # top-3 {0, 1, 3}: pairs (0, 1) = 1, (0, 3) = 0, (1, 3) = 0;
    # top-3 {0, 1, 2}: pairs (0, 1) = 1, (0, 2) = -1, (1, 2) = -1
    three = np.array([[0.4, 0.3, 0.1, 0.2], [0.4, 0.3, 0.2, 0.1]])
    np.testing.assert_allclose(npmi_coherence(three, CORPUS, top_n=3), [1.0 / 3.0, -1.0 / 3.0],
                               atol=1e-15)


def test_npmi_ties_and_edge_probabilities() -> None:
    # tied weights: the lower word index wins -> top-2 {0, 1}
    assert npmi_coherence(np.array([[0.3, 0.3, 0.3, 0.1]]), CORPUS, top_n=2)[0] == 1.0
    # two words present in every document: p(wi, wj) = 1 -> 1; an absent word -> -1
    full = sp.csr_array(np.array([[1, 1, 0], [1, 1, 0]]))
    np.testing.assert_array_equal(
        npmi_coherence(np.array([[0.5, 0.4, 0.1], [0.5, 0.1, 0.4]]), full, top_n=2), [1.0, -1.0])


def _npmi_brute_force(topic_word: np.ndarray, counts: np.ndarray, top_n: int) -> np.ndarray:
    binary = counts > 0
    n_docs = binary.shape[0]
    out = []
    for row in topic_word:
        top = np.argsort(-row, kind="stable")[:top_n]
        vals = []
        for i, j in itertools.combinations(top, 2):
            pij = np.mean(binary[:, i] & binary[:, j])
            if pij == 0:
                vals.append(-1.0)
            elif pij == 1:
                vals.append(1.0)
            else:
                pi, pj = binary[:, i].sum() / n_docs, binary[:, j].sum() / n_docs
                vals.append(math.log(pij / (pi * pj)) / -math.log(pij))
        out.append(np.mean(vals))
    return np.array(out)


def test_npmi_matches_brute_force_over_chunks() -> None:
    rng = np.random.default_rng(6)
    counts = (rng.random((60, 120)) < 0.15) * rng.integers(1, 4, size=(60, 120))
    topic_word = rng.dirichlet(np.full(120, 0.1), size=450)  # > 2048 // 10 topics: 3 chunks
    np.testing.assert_allclose(npmi_coherence(topic_word, sp.csr_array(counts), top_n=10),
                               _npmi_brute_force(topic_word, counts, 10), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(npmi_coherence(topic_word[:5], counts, top_n=4),
                               _npmi_brute_force(topic_word[:5], counts, 4), rtol=1e-12)


def test_npmi_errors() -> None:
    with pytest.raises(ValueError, match=r"^npmi_coherence: topic_word has 5 columns but counts "
                                         r"has 4$"):
        npmi_coherence(np.ones((2, 5)), CORPUS)
    with pytest.raises(ValueError, match=r"npmi_coherence: top_n must be between 2 and V = 4, "
                                         r"got 10"):
        npmi_coherence(np.ones((2, 4)), CORPUS)
    with pytest.raises(ValueError, match=r"top_n must be between 2 and V = 4, got 1"):
        npmi_coherence(np.ones((2, 4)), CORPUS, top_n=1)
    with pytest.raises(ValueError, match=r"npmi_coherence: counts must be >= 0"):
        npmi_coherence(np.ones((2, 4)), -CORPUS, top_n=2)
    with pytest.raises(ValueError, match=r"npmi_coherence: counts has no documents"):
        npmi_coherence(np.ones((2, 4)), sp.csr_array((0, 4)), top_n=2)
    with pytest.raises(ValueError, match=r"npmi_coherence: top_n must be an integer"):
        npmi_coherence(np.ones((2, 4)), CORPUS, top_n=2.0)
