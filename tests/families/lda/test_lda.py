"""LDA estimator: planted recovery, API contract, persistence, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

import topiclink
from topiclink import LDA
from topiclink.callbacks import EarlyStopping, LambdaCallback
from topiclink.data import Corpus, DataError
from topiclink.datasets.synthetic import make_lda_data


def _cosine(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return a @ b.T


@pytest.fixture(scope="module")
def planted():
    corpus, truth = make_lda_data(n_docs=300, n_words=400, n_topics=6, doc_length=120,
                                  doc_topic_prior=0.1, topic_word_prior=0.01, random_state=7)
    return corpus, truth


@pytest.fixture(scope="module")
def fitted(planted):
    corpus, _ = planted
    return LDA(n_topics=6, max_iter=150, random_state=0).fit(corpus.subset(np.arange(250)))


def test_recovers_planted_topics(planted, fitted):
    """Topics matched by the Hungarian algorithm; every cosine above 0.9 (threshold fixed
    before running: well-separated Dirichlet(0.01) topics, 36k tokens)."""
    _, truth = planted
    cos = _cosine(fitted.components_, truth.topic_word)
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9
    # topic proportions of the training documents follow the planted ones
    theta = fitted.doc_topic_[:, rows]
    err = np.abs(theta - truth.doc_topic[:250, cols]).sum(axis=1).mean()
    assert err < 0.25


def test_fitted_attributes(fitted, planted):
    corpus, _ = planted
    K, V = 6, corpus.n_words
    assert fitted.components_.shape == (K, V)
    np.testing.assert_allclose(fitted.components_.sum(axis=1), 1.0)
    np.testing.assert_allclose(fitted.doc_topic_.sum(axis=1), 1.0)
    assert fitted.n_iter_ == 150
    ll = fitted.trace_["log_likelihood"]
    assert ll.shape == (150,) and np.all(np.isfinite(ll))
    assert ll[-1] > ll[0]
    assert fitted.state_.z.shape == (corpus.subset(np.arange(250)).n_tokens,)
    assert "topic" in fitted.summary()


def test_transform_recovers_proportions(planted, fitted):
    corpus, truth = planted
    cos = _cosine(fitted.components_, truth.topic_word)
    rows, cols = linear_sum_assignment(-cos)
    held = np.arange(250, 300)  # documents the model never saw
    theta = fitted.transform(corpus.subset(held))
    err = np.abs(theta[:, rows] - truth.doc_topic[held][:, cols]).sum(axis=1).mean()
    assert err < 0.3
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)


def test_perplexity_beats_unigram(planted, fitted):
    corpus, _ = planted
    held = corpus.subset(np.arange(250, 300))
    ppl = fitted.perplexity(held, random_state=1)
    freq = np.asarray(corpus.counts.sum(axis=0)).ravel() + 0.01
    unigram = np.exp(-(held.counts.multiply(np.log(freq / freq.sum()))).sum() / held.n_tokens)
    assert ppl < 0.7 * unigram
    assert np.isfinite(fitted.score(held))


def test_same_seed_same_result(planted):
    corpus, _ = planted
    a = LDA(n_topics=4, max_iter=20, random_state=3).fit(corpus)
    b = LDA(n_topics=4, max_iter=20, random_state=3).fit(corpus)
    c = LDA(n_topics=4, max_iter=20, random_state=4).fit(corpus)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.transform(corpus.subset([0, 1])),
                                  b.transform(corpus.subset([0, 1])))
    assert not np.array_equal(a.components_, c.components_)


def test_sklearn_clone_and_params():
    from sklearn.base import clone

    m = LDA(n_topics=7, topic_word_prior=0.05, random_state=1)
    m2 = clone(m)
    assert m2.get_params() == m.get_params()
    assert "n_topics=7" in repr(m)


def test_save_load_roundtrip(tmp_path, fitted, planted):
    corpus, _ = planted
    path = fitted.save(tmp_path / "model.npz")
    loaded = topiclink.load(path)
    assert isinstance(loaded, LDA)
    np.testing.assert_array_equal(loaded.components_, fitted.components_)
    np.testing.assert_array_equal(loaded.vocabulary_, fitted.vocabulary_)
    np.testing.assert_array_equal(loaded.trace_["log_likelihood"],
                                  fitted.trace_["log_likelihood"])
    docs = corpus.subset([3, 4, 5])
    np.testing.assert_array_equal(loaded.transform(docs), fitted.transform(docs))
    assert loaded.summary() == fitted.summary()
    # no pickle inside
    with np.load(path, allow_pickle=False) as npz:
        assert "__header__" in npz.files


def test_crash_while_saving_keeps_old_file(tmp_path, fitted, monkeypatch):
    path = fitted.save(tmp_path / "model.npz")
    before = path.read_bytes()
    import os

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        fitted.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]


def test_load_refuses_unknown_version(tmp_path, fitted):
    import json

    path = fitted.save(tmp_path / "m.npz")
    with np.load(path) as npz:
        members = {k: npz[k] for k in npz.files}
    header = json.loads(members["__header__"].tobytes())
    header["format_version"] = 99
    members["__header__"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    np.savez(tmp_path / "future.npz", **members)
    with pytest.raises(ValueError, match="format version 99"):
        topiclink.load(tmp_path / "future.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a readable topiclink model"):
        topiclink.load(tmp_path / "junk.npz")


def test_callback_can_stop_training(planted):
    corpus, _ = planted
    seen = []

    def stop_at_5(model, it, info):
        seen.append(info["log_likelihood"])
        return it == 4

    m = LDA(n_topics=3, max_iter=50, random_state=0,
            callbacks=[LambdaCallback(stop_at_5)]).fit(corpus)
    assert m.n_iter_ == 5 and len(seen) == 5
    m = LDA(n_topics=3, max_iter=400, random_state=0,
            callbacks=[EarlyStopping(tol=1e-3, patience=3, min_iter=10)]).fit(corpus)
    assert 10 <= m.n_iter_ < 400


def test_verbose_progress_bar(planted, capsys):
    corpus, _ = planted
    LDA(n_topics=3, max_iter=3, random_state=0, verbose=True).fit(corpus.subset(range(20)))
    assert "LDA" in capsys.readouterr().err


def test_accepts_sparse_dense_and_dataframe(tiny_counts):
    import pandas as pd

    for X in (tiny_counts, sp.csr_matrix(tiny_counts),
              pd.DataFrame(tiny_counts, columns=[f"t{i}" for i in range(8)])):
        m = LDA(n_topics=2, max_iter=5, random_state=0).fit(X)
        assert m.transform(X).shape == (6, 2)


def test_transform_maps_vocabulary_by_word(planted, fitted, caplog):
    corpus, _ = planted
    sub = corpus.subset([0, 1])
    perm = np.arange(corpus.n_words)[::-1]
    shuffled = Corpus(sub.counts[:, perm], vocabulary=sub.vocabulary[perm])
    np.testing.assert_allclose(fitted.transform(shuffled), fitted.transform(sub))
    extra = Corpus(sp.hstack([sub.counts, sp.csr_matrix(np.ones((2, 1), int))]).tocsr(),
                   vocabulary=np.append(sub.vocabulary, "zzz-unknown"))
    with caplog.at_level("INFO", logger="topiclink"):
        fitted.transform(extra)
    assert "dropped 2 tokens" in caplog.text


@pytest.mark.parametrize(
    "kwargs, match",
    [({"n_topics": 1}, "n_topics must be an integer >= 2"),
     ({"n_topics": 2.5}, "n_topics must be an integer"),
     ({"topic_word_prior": -1}, "topic_word_prior"),
     ({"doc_topic_prior": float("nan")}, "doc_topic_prior"),
     ({"max_iter": 0}, "max_iter")],
)
def test_bad_parameters(tiny_counts, kwargs, match):
    with pytest.raises(ValueError, match=match):
        LDA(**kwargs).fit(tiny_counts)


def test_bad_counts(tiny_counts):
    X = tiny_counts.astype(float)
    X[2, 3] = np.nan
    with pytest.raises(DataError, match=r"non-finite count nan at document 2, word 3"):
        LDA(n_topics=2).fit(X)
    X = tiny_counts.copy()
    X[1, 4] = -2
    with pytest.raises(DataError, match=r"negative count -2 at document 1, word 4"):
        LDA(n_topics=2).fit(X)
    X = tiny_counts.copy()
    X[5] = 0                              # LDA fits an empty document: the prior mean
    np.testing.assert_allclose(LDA(n_topics=2, max_iter=2).fit(X).doc_topic_[5], 0.5)
    with pytest.raises(ValueError, match="8 words"):
        LDA(n_topics=2, max_iter=2).fit(tiny_counts).transform(np.ones((2, 9)))
    with pytest.raises(TypeError, match="must be a Corpus"):
        LDA(n_topics=2).fit("not a matrix")


def test_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LDA().transform(np.ones((1, 3)))


def test_parallel_chunks_deterministic_and_thread_independent(planted, monkeypatch):
    """AD-LDA with 2 chunks: same seed -> same result, whether run on 1 or 2 threads."""
    import topiclink.execution.plan as plan_module

    corpus, truth = planted
    kwargs = {"n_topics": 6, "max_iter": 60, "scheme": "adlda", "random_state": 5}
    a = LDA(executor=2, **kwargs).fit(corpus)
    monkeypatch.setattr(plan_module, "n_threads", lambda n: 1)
    b = LDA(executor=2, **kwargs).fit(corpus)
    c = LDA(executor=1, **kwargs).fit(corpus)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.components_, c.components_)
    cos = _cosine(a.components_, truth.topic_word)
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9
