"""RelationalTopicModel: planted recovery for both losses, prediction, API contract."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import linear_sum_assignment

import topiclink
from topiclink.data import DataError
from topiclink.data.splits import train_test_split_documents
from topiclink.datasets import make_rtm_data
from topiclink.families.rtm.estimator import PAPER_VARIANTS, RelationalTopicModel
from topiclink.metrics import link_auc, link_rank


@pytest.fixture(scope="module")
def planted():
    return make_rtm_data(n_docs=220, n_topics=5, doc_length=80, random_state=3)


def _matched_weights(model, truth):
    cos = model.components_ @ truth.topic_word.T
    cos /= np.linalg.norm(model.components_, axis=1)[:, None]
    cos /= np.linalg.norm(truth.topic_word, axis=1)[None, :]
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9, "topics not recovered"
    perm = np.empty(len(cols), int)
    perm[cols] = rows                      # true topic t -> learned topic perm[t]
    return model.weights_[np.ix_(perm, perm)]


def _classes(K):
    eye = np.eye(K, dtype=bool)
    nxt = np.roll(eye, 1, axis=1)
    return eye, nxt, ~(eye | nxt)


def _fisher_sd(truth):
    """Per-entry standard deviation of U from the Fisher information of the planted
    network, I_kl = sum_{i != j} p_ij (1 - p_ij) zbar_ik^2 zbar_jl^2 (each entry alone,
    the others known: a lower bound on its marginal posterior sd, so a stricter test)."""
    zbar = truth.zbar
    omega = zbar @ truth.weights @ zbar.T
    p = 1.0 / (1.0 + np.exp(-omega))
    w = p * (1.0 - p)
    np.fill_diagonal(w, 0.0)
    z2 = zbar**2
    return 1.0 / np.sqrt(z2.T @ w @ z2)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["gibbs", "mh"])
def test_logistic_recovers_planted_full_weight_matrix(planted, sampler):
    """All unobserved pairs as negatives and c = 1 make the pseudo-likelihood the planted
    model's likelihood, so U itself (not only its shape) is identified, each entry to the
    precision its links allow: the background entries (-6) carry ~5 links each (sd ~0.45),
    the diagonal hundreds.  With a vague prior (variance 100, no shrinkage towards 0) every
    entry must lie within 4 Fisher standard deviations of the truth (25 entries: a false
    alarm < 0.2%), the correlation must exceed 0.95 and each row's next-topic entry must
    stand above its background."""
    (corpus, links), truth = planted
    m = RelationalTopicModel(5, loss="logistic", negative_ratio=1.0, max_iter=80,
                             n_average=20, weight_prior_var=100.0, sampler=sampler,
                             random_state=0).fit(corpus, links=links)
    U = _matched_weights(m, truth)
    assert np.corrcoef(U.ravel(), truth.weights.ravel())[0, 1] > 0.95
    standardised = np.abs(U - truth.weights) / _fisher_sd(truth)
    assert standardised.max() < 4.0, np.round(standardised, 1)
    eye, nxt, rest = _classes(5)
    # the off-diagonal structure: U[k, k+1] above every background entry of its row
    for k in range(5):
        assert U[k, (k + 1) % 5] > U[k][rest[k]].max()


@pytest.mark.slow
def test_hinge_recovers_planted_structure(planted):
    """The hinge loss is not a likelihood: its weights live on the margin's scale, so the
    test checks the planted ordering diagonal > next topic > background (class means) and
    a rank correlation > 0.6.  The hinge loss has no calibration to absorb the 1:19 class
    imbalance of the planted network, so the negatives are subsampled to balance the
    positives (ratio = links / unobserved pairs) with c = 1, as the paper's hinge models
    balance through c and subsampling."""
    (corpus, links), truth = planted
    D = corpus.n_docs
    ratio = links.n_links / (D * (D - 1) - links.n_links)
    m = RelationalTopicModel(5, loss="hinge", c=1.0, negative_ratio=ratio, max_iter=80,
                             n_average=20, random_state=0).fit(corpus, links=links)
    U = _matched_weights(m, truth)
    eye, nxt, rest = _classes(5)
    assert U[eye].mean() > U[nxt].mean() > U[rest].mean()
    assert stats.spearmanr(U.ravel(), truth.weights.ravel())[0] > 0.6


@pytest.fixture(scope="module")
def fold_and_model(planted):
    (corpus, links), _ = planted
    fold = train_test_split_documents(corpus, links, test_size=0.15, random_state=0)
    m = RelationalTopicModel(5, negative_ratio=0.2, c=2.0, max_iter=60, random_state=1)
    return fold, m.fit(fold.train_corpus, links=fold.train_links)


def test_held_out_link_prediction(fold_and_model):
    fold, m = fold_and_model
    scores = m.link_scores(fold.test_corpus)
    assert scores.shape == (fold.n_test, fold.n_train)
    auc = link_auc(scores, fold.test_links)["roc_auc"]
    rank = link_rank(scores, fold.test_links)
    assert auc > 0.8                                  # random: 0.5
    assert rank < 0.5 * (fold.n_train + 1) / 2        # random: (n + 1) / 2
    proba = m.predict_link_proba(fold.test_corpus, targets=[0, 1, 2], direction="out")
    assert proba.shape == (fold.n_test, 3) and np.all((proba >= 0) & (proba <= 1))


def test_suggest_links_and_words_from_links(fold_and_model):
    fold, m = fold_and_model
    table = m.suggest_links(fold.test_corpus.subset([0, 1]), top=4)
    assert list(table.columns) == ["query", "rank", "target", "doc_id", "title", "score"]
    assert len(table) == 8 and table.groupby("query")["score"].is_monotonic_decreasing.all()
    words = m.predict_words_from_links(fold.test_out, fold.test_in, random_state=0)
    assert words.shape == (fold.n_test, fold.test_corpus.n_words)
    np.testing.assert_allclose(words.sum(axis=1), 1.0)
    # link-based word predictions beat the corpus unigram on the test documents' words
    from topiclink.metrics import word_rank

    unigram = np.asarray(fold.train_corpus.counts.sum(axis=0)).ravel().astype(float)
    base = np.tile(unigram / unigram.sum(), (fold.n_test, 1))
    has_links = np.asarray(fold.test_links.sum(axis=1)).ravel() > 0
    ours = word_rank(words[has_links], fold.test_corpus.counts[has_links])
    ref = word_rank(base[has_links], fold.test_corpus.counts[has_links])
    assert ours < ref


def test_trace_and_summary(fold_and_model):
    _, m = fold_and_model
    for key in ("seconds_z", "seconds_weights", "seconds_lambda", "link_loglik"):
        assert m.trace_[key].shape == (60,)
    assert "Gibbs-gRTM" in m.summary() and "largest link weights" in m.summary()


def test_save_load_same_predictions(tmp_path, fold_and_model):
    fold, m = fold_and_model
    path = m.save(tmp_path / "rtm.npz")
    loaded = topiclink.load(path)
    np.testing.assert_array_equal(loaded.weights_, m.weights_)
    np.testing.assert_allclose(loaded.link_scores(fold.test_corpus),
                               m.link_scores(fold.test_corpus))


@pytest.mark.parametrize("name", sorted(PAPER_VARIANTS))
def test_every_paper_variant_fits_and_is_deterministic(planted, name):
    (corpus, links), _ = planted
    small = corpus.subset(np.arange(60))
    sub = links.subgraph(np.arange(60))
    a = RelationalTopicModel.from_paper(name, n_topics=3, max_iter=5, c=2.0,
                                        negative_ratio=0.1, random_state=4).fit(small, links=sub)
    b = RelationalTopicModel.from_paper(name, n_topics=3, max_iter=5, c=2.0,
                                        negative_ratio=0.1, random_state=4).fit(small, links=sub)
    assert a.variant_name_ == name
    np.testing.assert_array_equal(a.weights_, b.weights_)
    if PAPER_VARIANTS[name]["weights"] == "diagonal":
        assert np.count_nonzero(a.weights_ - np.diag(np.diag(a.weights_))) == 0


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_threads_do_not_change_the_chain(planted, loss):
    """The augmentation runs over fixed chunks of pairs with their own streams, so
    n_jobs = 2 (chunks drawn on a second thread while the Z sweep goes on, the weight
    moments in two parts at once) gives exactly the n_jobs = 1 result; more pairs than one
    chunk (8192) so that the chunks really are split."""
    (corpus, links), _ = planted
    fits = [RelationalTopicModel(3, loss=loss, negative_ratio=0.5, max_iter=4, n_jobs=n,
                                 random_state=5).fit(corpus, links=links) for n in (1, 2)]
    assert fits[0].n_pairs_ > 2 * 8192
    np.testing.assert_array_equal(fits[0].weights_, fits[1].weights_)
    np.testing.assert_array_equal(fits[0].state_.z, fits[1].state_.z)
    np.testing.assert_array_equal(fits[0].state_.omega, fits[1].state_.omega)
    np.testing.assert_array_equal(fits[0].trace_["link_loglik"],
                                  fits[1].trace_["link_loglik"])


def test_undirected_links_accepted(planted):
    import networkx as nx

    (corpus, links), _ = planted
    small = corpus.subset(np.arange(40))
    g = nx.Graph()
    g.add_nodes_from(small.doc_ids.tolist())
    g.add_edges_from([(small.doc_ids[i], small.doc_ids[j]) for i, j in
                      links.subgraph(np.arange(40)).pairs.tolist()])
    m = RelationalTopicModel(3, max_iter=3, random_state=0).fit(small, links=g)
    assert m.directed_ is False and m.n_pairs_ % 2 == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [({"loss": "square"}, "loss must be"), ({"weights": "banded"}, "weights must be"),
     ({"n_topics": 1}, "n_topics must be an integer >= 2"), ({"c": 0}, "c must be"),
     ({"negative_ratio": 2}, "negative_ratio"), ({"loss": "hinge", "hinge_cost": 0.5},
                                                  "hinge_cost must be >= 1"),
     ({"n_jobs": 0}, "n_jobs must be None or an integer other than 0"),
     ({"sampler": "warp"}, "sampler must be"),
     ({"sampler": "mh", "approx": True}, "sampler='mh' is the exact scheme's Z step"),
     ({"sampler": "mh", "scheme": "shards"}, "sampler='mh' is the exact scheme's Z step")],
)
def test_bad_parameters(planted, kwargs, match):
    (corpus, links), _ = planted
    with pytest.raises(ValueError, match=match):
        RelationalTopicModel(**{"n_topics": 3, **kwargs}).fit(corpus, links=links)


def test_bad_links(planted):
    (corpus, links), _ = planted
    with pytest.raises(ValueError, match="needs links"):
        RelationalTopicModel(3).fit(corpus)
    with pytest.raises(DataError, match="row 1 refers to document 999"):
        RelationalTopicModel(3).fit(corpus, links=np.array([[0, 1], [2, 999]]))
    with pytest.raises(DataError, match="self-link"):
        RelationalTopicModel(3).fit(corpus, links=np.array([[0, 1], [5, 5]]))
    with pytest.raises(ValueError, match="hinge loss gives link scores"):
        m = RelationalTopicModel(3, loss="hinge", max_iter=2, random_state=0)
        m.fit(corpus.subset(np.arange(30)), links=links.subgraph(np.arange(30)))
        m.predict_link_proba(corpus.subset([40]))
