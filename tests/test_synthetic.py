"""Synthetic generators: shapes, determinism, and the planted distributions (CLT checks).

Tolerances are fixed in advance: counts are compared with their exact expectations given
the true parameters, in units of their exact standard deviations (5 sd for single
comparisons; for sums of squared standardised deviations, mean m and 5 * sqrt(2 m)).
Each statistical test also shows it would fail against a wrong truth.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.datasets.synthetic import (
    LDATruth,
    RTMTruth,
    SLDATruth,
    make_lda_data,
    make_rtm_data,
    make_slda_data,
    planted_rtm_weights,
)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _standardised_sq_sum(observed: np.ndarray, mean: np.ndarray, var: np.ndarray,
                         min_mean: float = 5.0) -> tuple[float, int]:
    """``sum (o - m)^2 / v`` over cells with mean >= min_mean, and the number of cells."""
    keep = mean >= min_mean
    return float(((observed[keep] - mean[keep]) ** 2 / var[keep]).sum()), int(keep.sum())


def _within(stat: float, m: int) -> bool:
    return abs(stat - m) < 5 * np.sqrt(2 * m)


# ---------------------------------------------------------------------- LDA
def test_lda_shapes_and_alignment() -> None:
    corpus, truth = make_lda_data(n_docs=50, n_words=80, n_topics=4, doc_length=30,
                                  random_state=0)
    assert isinstance(corpus, Corpus) and isinstance(truth, LDATruth)
    assert corpus.counts.shape == (50, 80) and truth.n_topics == 4
    assert truth.topic_word.shape == (4, 80) and truth.doc_topic.shape == (50, 4)
    np.testing.assert_allclose(truth.topic_word.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(truth.doc_topic.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (corpus.doc_lengths == 30).all() and corpus.empty_documents().size == 0
    tok = corpus.tokens()
    z = truth.assignments
    assert z.shape == tok.words.shape and z.dtype == np.int32
    assert (z >= 0).all() and (z < 4).all()
    assert (truth.topic_word[z, tok.words] > 0).all()   # every word possible under its topic
    ndk = np.zeros((50, 4))
    np.add.at(ndk, (tok.docs, z), 1)
    np.testing.assert_allclose(truth.zbar, ndk / 30)
    np.testing.assert_allclose(truth.doc_topic_prior, 0.1)
    np.testing.assert_allclose(truth.topic_word_prior, 0.01)


def test_lda_doc_length_range() -> None:
    corpus, _ = make_lda_data(n_docs=400, n_words=50, doc_length=(1, 6), random_state=1)
    lengths = corpus.doc_lengths
    assert lengths.min() == 1 and lengths.max() == 6   # both ends reached in 400 draws
    assert set(np.unique(lengths)) == set(range(1, 7))


@pytest.mark.parametrize("kwargs", [
    {"doc_length": 0}, {"doc_length": (0, 5)}, {"doc_length": (5, 3)}, {"doc_length": "x"},
    {"n_docs": 0}, {"n_words": 1}, {"n_topics": 1}, {"doc_topic_prior": -1.0},
    {"topic_word_prior": np.ones(3)},
])
def test_lda_argument_errors(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        make_lda_data(**kwargs)


def test_lda_determinism() -> None:
    a_c, a_t = make_lda_data(n_docs=30, random_state=7)
    b_c, b_t = make_lda_data(n_docs=30, random_state=7)
    c_c, c_t = make_lda_data(n_docs=30, random_state=8)
    assert (a_c.counts != b_c.counts).nnz == 0
    for name in ("topic_word", "doc_topic", "assignments", "zbar"):
        assert np.array_equal(getattr(a_t, name), getattr(b_t, name))
    assert (a_c.counts != c_c.counts).nnz > 0
    assert not np.array_equal(a_t.topic_word, c_t.topic_word)


def test_lda_word_frequencies_match_truth() -> None:
    """Total word counts vs sum_d N_d theta_d phi, and topic totals vs sum_d N_d theta_d."""
    corpus, truth = make_lda_data(random_state=2)
    N = corpus.doc_lengths.astype(float)
    theta, phi = truth.doc_topic, truth.topic_word
    counts = np.asarray(corpus.counts.sum(axis=0)).ravel()

    def word_stat(theta: np.ndarray, phi: np.ndarray) -> tuple[float, int]:
        p = theta @ phi                                    # (D, V) per-document word probs
        mean = N @ p
        var = N @ (p * (1 - p))                            # sum of independent multinomials
        return _standardised_sq_sum(counts, mean, var)

    stat, m = word_stat(theta, phi)
    assert m > 50 and _within(stat, m)
    # power: the same statistic rejects the topics of another draw
    _, other = make_lda_data(random_state=3)
    assert not _within(*word_stat(theta, other.topic_word))

    # per document and word: c_dw ~ Mult(N_d, theta_d phi) (cells with mean >= 5); this
    # one also sees theta_d, document by document
    def doc_word_stat(theta: np.ndarray) -> tuple[float, int]:
        p = theta @ phi
        return _standardised_sq_sum(corpus.counts.toarray(), N[:, None] * p,
                                    N[:, None] * p * (1 - p))

    stat, m = doc_word_stat(theta)
    assert m > 200 and _within(stat, m)
    shuffled_theta = np.random.default_rng(0).permutation(theta)   # rows of other documents
    assert not _within(*doc_word_stat(shuffled_theta))

    # topic totals: sum_d n_dk with n_d ~ Mult(N_d, theta_d)
    nk = np.bincount(truth.assignments, minlength=truth.n_topics)
    mean_k = N @ theta
    var_k = N @ (theta * (1 - theta))
    assert (np.abs(nk - mean_k) < 5 * np.sqrt(var_k)).all()

    # words given topics: c_kw ~ Mult(n_k, phi_k)
    tok = corpus.tokens()
    ckw = np.zeros_like(phi)
    np.add.at(ckw, (truth.assignments, tok.words), 1)
    stat, m = _standardised_sq_sum(ckw, nk[:, None] * phi, nk[:, None] * phi * (1 - phi))
    assert _within(stat, m)
    shuffled = np.random.default_rng(0).permutation(truth.assignments)
    cbad = np.zeros_like(phi)
    np.add.at(cbad, (shuffled, tok.words), 1)
    nbad = np.bincount(shuffled, minlength=truth.n_topics)
    stat, m = _standardised_sq_sum(cbad, nbad[:, None] * phi, nbad[:, None] * phi * (1 - phi))
    assert not _within(stat, m)


def test_lda_default_topics_are_separated() -> None:
    _, truth = make_lda_data(random_state=3)
    phi = truth.topic_word
    cos = (phi @ phi.T) / np.outer(np.linalg.norm(phi, axis=1), np.linalg.norm(phi, axis=1))
    # the largest cosine between two topics is below 0.05 for half the seeds, 0.42 for 99%
    assert cos[~np.eye(len(phi), dtype=bool)].max() < 0.5


# ---------------------------------------------------------------------- RTM
def _expected_links_blockwise(zbar: np.ndarray, U: np.ndarray, directed: bool,
                              block: int = 37) -> tuple[float, float]:
    """Sum of p_ij and of p_ij (1 - p_ij) over the pairs that can link, row block by block."""
    D = zbar.shape[0]
    mean = var = 0.0
    for start in range(0, D, block):
        rows = np.arange(start, min(start + block, D))
        p = _sigmoid(zbar[rows] @ U @ zbar.T)
        ok = (rows[:, None] != np.arange(D)) if directed else (rows[:, None] < np.arange(D))
        mean += p[ok].sum()
        var += (p * (1 - p))[ok].sum()
    return mean, var


def _class_table(links: Links, truth: RTMTruth, classes: np.ndarray) -> dict[int, tuple]:
    """Per pair class: (n_pairs, n_links, expected links, variance), pairs i != j."""
    D = truth.zbar.shape[0]
    A = np.zeros((D, D), bool)
    A[links.source, links.target] = True
    P = _sigmoid(truth.zbar @ truth.weights @ truth.zbar.T)
    ok = ~np.eye(D, dtype=bool) if links.directed else np.triu(np.ones((D, D), bool), 1)
    out = {}
    for c in np.unique(classes[ok]):
        sel = ok & (classes == c)
        out[int(c)] = (int(sel.sum()), int(A[sel].sum()), float(P[sel].sum()),
                       float((P * (1 - P))[sel].sum()))
    return out


def test_rtm_shapes_and_truth() -> None:
    (corpus, links), truth = make_rtm_data(random_state=0)
    assert isinstance(truth, RTMTruth) and isinstance(links, Links)
    D, K = 300, 5
    assert corpus.n_docs == D and links.n_docs == D and links.directed
    assert truth.weights.shape == (K, K) and truth.zbar.shape == (D, K)
    np.testing.assert_array_equal(truth.weights, planted_rtm_weights(K))
    np.testing.assert_allclose(truth.topic_word.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(truth.zbar.sum(axis=1), 1.0, atol=1e-12)
    tok = corpus.tokens()
    ndk = np.zeros((D, K))
    np.add.at(ndk, (tok.docs, truth.assignments), 1)
    np.testing.assert_allclose(truth.zbar, ndk / corpus.doc_lengths[:, None])
    assert (links.source != links.target).all()
    density = links.n_links / (D * (D - 1))
    assert 0.02 < density < 0.10            # "a few percent" with the default U
    # nothing of size D^2 is kept in the truth
    for value in vars(truth).values():
        assert np.size(value) < D * D
    i, j = links.source[:5], links.target[:5]
    np.testing.assert_allclose(truth.link_proba(i, j),
                               _sigmoid(np.einsum("nk,kl,nl->n", truth.zbar[i],
                                                  truth.weights, truth.zbar[j])))


@pytest.mark.parametrize("directed", [True, False])
def test_rtm_total_links_match_expectation(directed: bool) -> None:
    (_, links), truth = make_rtm_data(directed=directed, random_state=4)
    mean, var = _expected_links_blockwise(truth.zbar, truth.weights, directed)
    assert abs(links.n_links - mean) < 5 * np.sqrt(var)
    assert truth.expected_n_links == pytest.approx(mean, rel=1e-9)
    # power: a generator that ignored U (here: the same density everywhere but U = 0)
    # would have expected sigmoid(0) * n_pairs links, far outside the tolerance
    D = truth.zbar.shape[0]
    n_pairs = D * (D - 1) if directed else D * (D - 1) // 2
    assert abs(links.n_links - 0.5 * n_pairs) > 5 * np.sqrt(var)


def test_rtm_link_rates_follow_planted_classes() -> None:
    """Pairs grouped by dominant topics (k, k), (k, k+1), (k+1, k), other: ordered as U."""
    (_, links), truth = make_rtm_data(random_state=5)
    K = truth.n_topics
    dom = truth.zbar.argmax(axis=1)
    di, dj = dom[:, None], dom[None, :]
    classes = np.full((dom.size, dom.size), 3)
    classes[dj == (di + 1) % K] = 1       # planted U[k, k+1] = -2
    classes[di == (dj + 1) % K] = 2       # reverse direction: background -6
    classes[di == dj] = 0                 # U[k, k] = -0.5
    table = _class_table(links, truth, classes)
    rates = {c: n_links / n_pairs for c, (n_pairs, n_links, _, _) in table.items()}
    for _, n_links, mean, var in table.values():
        assert abs(n_links - mean) < 5 * np.sqrt(var)       # each class tracks sigmoid(omega)
    assert rates[0] > 1.5 * rates[1] > 1.5 * 2 * rates[2]   # diagonal > next > reverse
    assert rates[1] > 3 * rates[3]                          # planted off-diagonal matters
    assert rates[0] > 0.1 and rates[3] < 0.02
    # power: the same check with U ignored (replaced by a constant of equal density)
    density = links.n_links / (links.n_docs * (links.n_docs - 1))
    flat = dataclasses.replace(truth, weights=np.full((K, K), np.log(density / (1 - density))))
    bad = _class_table(links, flat, classes)
    assert any(abs(n - m) > 5 * np.sqrt(v) for _, n, m, v in bad.values())


def test_rtm_uses_given_weights() -> None:
    K = 4
    U = np.full((K, K), -6.0)
    idx = np.arange(K)
    U[idx, (idx + 2) % K] = 1.0           # only "two topics apart" pairs link
    (_, links), truth = make_rtm_data(n_docs=200, n_topics=K, weights=U, random_state=6)
    np.testing.assert_array_equal(truth.weights, U)
    dom = truth.zbar.argmax(axis=1)
    gap = (dom[links.target] - dom[links.source]) % K
    frac = np.bincount(gap, minlength=K) / links.n_links
    assert frac[2] > 0.6
    # a length-K vector is a diagonal U
    (_, _), t2 = make_rtm_data(n_docs=20, n_topics=3, weights=[1.0, 2.0, 3.0], random_state=0)
    np.testing.assert_array_equal(t2.weights, np.diag([1.0, 2.0, 3.0]))


def test_rtm_undirected() -> None:
    (corpus, links), truth = make_rtm_data(n_docs=150, directed=False, random_state=7)
    assert not links.directed and (links.source < links.target).all()
    U0 = planted_rtm_weights(5)
    np.testing.assert_allclose(truth.weights, (U0 + U0.T) / 2)
    assert not truth.directed
    A = links.adjacency()
    assert (A != A.T).nnz == 0


@pytest.mark.parametrize("directed", [True, False])
def test_rtm_n_links_target(directed: bool) -> None:
    (_, links), truth = make_rtm_data(n_docs=200, n_links=600, directed=directed,
                                      random_state=8)
    assert truth.expected_n_links == pytest.approx(600, rel=1e-6)
    mean, var = _expected_links_blockwise(truth.zbar, truth.weights, directed)
    assert mean == pytest.approx(600, rel=1e-6)
    assert abs(links.n_links - 600) < 5 * np.sqrt(var)
    U0 = planted_rtm_weights(5)
    U0 = U0 if directed else (U0 + U0.T) / 2
    np.testing.assert_allclose(truth.weights - U0, truth.shift)
    assert truth.shift < 0                 # fewer links than the default density


def test_rtm_determinism() -> None:
    (c1, l1), t1 = make_rtm_data(n_docs=80, random_state=9)
    (c2, l2), t2 = make_rtm_data(n_docs=80, random_state=9)
    (c3, l3), _ = make_rtm_data(n_docs=80, random_state=10)
    assert (c1.counts != c2.counts).nnz == 0
    assert np.array_equal(l1.pairs, l2.pairs) and np.array_equal(t1.zbar, t2.zbar)
    assert l1.n_links != l3.n_links or not np.array_equal(l1.pairs, l3.pairs)
    assert (c1.counts != c3.counts).nnz > 0


@pytest.mark.parametrize("kwargs", [
    {"weights": np.zeros((3, 3))}, {"weights": np.full((5, 5), np.nan)}, {"loss": "hinge"},
    {"n_docs": 1}, {"n_docs": 10, "n_links": 90}, {"n_links": 0},
])
def test_rtm_argument_errors(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        make_rtm_data(**kwargs)


# ---------------------------------------------------------------------- sLDA
def test_slda_labels_follow_eta() -> None:
    (corpus, y), truth = make_slda_data(n_docs=600, random_state=11)
    assert isinstance(truth, SLDATruth) and corpus.n_docs == 600
    assert y.shape == (600,) and set(np.unique(y)) <= {0, 1}
    np.testing.assert_allclose(truth.eta, np.linspace(-3, 3, 5))
    p = _sigmoid(truth.zbar @ truth.eta)
    np.testing.assert_allclose(truth.label_proba, p)
    assert abs(y.sum() - p.sum()) < 5 * np.sqrt((p * (1 - p)).sum())
    dom = truth.zbar.argmax(axis=1)
    rate = np.array([y[dom == k].mean() for k in range(5)])
    assert rate[0] < 0.25 and rate[-1] > 0.75 and rate[0] < rate[2] < rate[-1]
    # per dominant-topic class the label count tracks sum sigmoid(eta^T zbar)
    for k in range(5):
        s = dom == k
        assert abs(y[s].sum() - p[s].sum()) < 5 * np.sqrt((p[s] * (1 - p[s])).sum())
    # power: reversed eta is rejected
    q = _sigmoid(truth.zbar @ truth.eta[::-1])
    assert abs(y.sum() - q.sum()) > 5 * np.sqrt((q * (1 - q)).sum()) or \
        abs(y[dom == 0].sum() - q[dom == 0].sum()) > 5 * np.sqrt(
            (q[dom == 0] * (1 - q[dom == 0])).sum())


def test_slda_determinism_and_errors() -> None:
    (_, y1), t1 = make_slda_data(n_docs=50, random_state=3)
    (_, y2), t2 = make_slda_data(n_docs=50, random_state=3)
    assert np.array_equal(y1, y2) and np.array_equal(t1.zbar, t2.zbar)
    (_, _), t3 = make_slda_data(n_docs=50, n_topics=3, eta=[0.0, 1.0, 2.0], random_state=0)
    np.testing.assert_array_equal(t3.eta, [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="eta"):
        make_slda_data(eta=np.ones(3))


def test_package_layout_and_reexports():
    """synthetic serves the word model and every family's generator; a family's generator
    lives in its folder (no module of the old layout, ``datasets.synthetic.rtm``, is left)."""
    import topiclink.datasets as datasets
    import topiclink.datasets.synthetic as synthetic
    import topiclink.families.rtm.synthetic as rtm
    import topiclink.families.slda.synthetic as slda
    from topiclink.datasets.synthetic import lda

    with pytest.raises(ImportError):
        from topiclink.datasets.synthetic import rtm as _old  # noqa: F401

    assert synthetic.make_lda_data is lda.make_lda_data is datasets.make_lda_data
    assert synthetic.make_rtm_data is rtm.make_rtm_data is datasets.make_rtm_data
    assert synthetic.make_slda_data is slda.make_slda_data is datasets.make_slda_data
    assert synthetic.planted_rtm_weights is rtm.planted_rtm_weights
    assert (synthetic.LDATruth, synthetic.RTMTruth, synthetic.SLDATruth) == \
        (lda.LDATruth, rtm.RTMTruth, slda.SLDATruth)
    assert (synthetic.RTM_DIAGONAL, synthetic.RTM_NEXT_TOPIC, synthetic.RTM_BACKGROUND) == \
        (-0.5, -2.0, -6.0)
    assert set(synthetic.__all__) >= {"LDATruth", "RTMTruth", "SLDATruth", "make_lda_data",
                                      "make_rtm_data", "make_slda_data",
                                      "planted_rtm_weights"}
