"""Bad estimator inputs are one-line errors before any allocation or kernel: tensor
indices, memory that cannot fit, complex / text where numbers are expected, publication
times, and fits that diverge (never NaN estimates returned silently)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import topiclink
from topiclink.data import DataError
from topiclink.data.checks import as_real
from topiclink.data.tensor import RelationalTensor
from topiclink.execution import Shards
from topiclink.families.lmv.times import as_times


def _one_line(exc: pytest.ExceptionInfo) -> str:
    message = str(exc.value)
    assert message and "\n" not in message
    return message


# ---------------------------------------------------------------------- 1: tensors, memory
@pytest.mark.parametrize("heads, fragment", [
    ([0.0, np.nan], "head index nan is not a whole number"),
    ([0.5, 1.0], "head index 0.5"), (["a", "b"], "must be integers"),
    ([0, -1], "outside [0, 3)"), ([True, False], "must be integers")])
def test_tensor_indices_are_checked(heads, fragment):
    with pytest.raises(DataError) as info:
        RelationalTensor(heads, [0, 0], [1, 0], [1.0, 1.0], 3, 1)
    assert fragment in _one_line(info)


@pytest.mark.parametrize("n", [3.5, float("nan"), True, 0, 10**12])
def test_tensor_sizes_are_checked(n):
    with pytest.raises(DataError, match="n_entities"):
        RelationalTensor([0, 1], [0, 0], [1, 0], [1.0, 1.0], n, 1)


def test_a_reassigned_nan_index_is_refused_before_the_kernels():
    t = RelationalTensor([0, 1, 2], [0, 0, 0], [1, 2, 0], [1.0, 1.0, 1.0], 3, 1)
    t.heads = np.array([0.0, np.nan, 1.0])
    with pytest.raises(DataError) as info:
        topiclink.BilinearPoissonFactorModel(2, max_iter=2, burn_in=1).fit(t)
    assert "head index nan" in _one_line(info)


def test_tensor_complex_values_are_refused():
    with pytest.raises(DataError, match="complex"):
        RelationalTensor([0, 1], [0, 0], [1, 0], [1 + 1j, 1.0], 3, 1)


def _tiny_corpus():
    from topiclink.datasets import make_lda_data

    corpus, _ = make_lda_data(n_docs=10, n_words=20, n_topics=2, doc_length=10,
                              random_state=0)
    return corpus


@pytest.mark.parametrize("make", [
    lambda: topiclink.LDA(10**9, max_iter=1),
    lambda: topiclink.LDA(10**6, max_iter=1),
    lambda: topiclink.VariationalSLDA(10**6, max_iter=1),
])
def test_topic_counts_that_cannot_fit_are_refused(make):
    corpus = _tiny_corpus()
    model = make()
    with pytest.raises(ValueError) as info:
        if "y" in type(model).fit_requires:
            model.fit(corpus, np.arange(corpus.n_docs) % 2)
        else:
            model.fit(corpus)
    assert "GiB" in _one_line(info)


@pytest.mark.parametrize("kwargs", [{"n_topics": 10**5},
                                    {"n_topics": 10, "n_dictionary": 10**9}])
def test_bpbfm_factor_counts_that_cannot_fit_are_refused(kwargs):
    t = RelationalTensor([0, 1, 2], [0, 0, 0], [1, 2, 0], [1.0, 1.0, 1.0], 3, 1)
    with pytest.raises(ValueError) as info:
        topiclink.BilinearPoissonFactorModel(**kwargs, max_iter=2, burn_in=1).fit(t)
    assert "GiB" in _one_line(info)


def test_ktm_gp_memory_counts_d_squared():
    from topiclink.families.ktm.estimator import KernelTopicModel

    class Sized:
        n_docs, n_words, n_tokens = 10**6, 10, 10**6

    exact = KernelTopicModel(3)._fit_memory(Sized())
    fitc = KernelTopicModel(3, n_inducing=100)._fit_memory(Sized())
    assert exact > 8 * 10**12 > fitc


# ---------------------------------------------------------------------- 2: divergence
@pytest.fixture(scope="module")
def lmv_data():
    from topiclink.datasets import make_lmv_data

    (corpus, links), truth = make_lmv_data(n_docs=40, n_topics=6, publication_time=True,
                                           random_state=0)
    return corpus, links, truth


def test_lmvs_huge_step_stays_finite(lmv_data):
    corpus, links, _ = lmv_data
    m = topiclink.VisibilityTopicModel(3, inference="stochastic", step_a1=1e6, max_iter=3,
                                       tol=0.0, random_state=0).fit(corpus, links=links)
    for name in ("components_", "doc_topic_", "blockmodel_", "visibility_"):
        assert np.all(np.isfinite(getattr(m, name))), name


def test_lmvs_default_steps_are_unchanged():
    from topiclink.families.lmv.stochastic import positive_mix

    x, target = np.array([1.0, 2.0]), np.array([3.0, 0.5])
    np.testing.assert_array_equal(positive_mix(x, target, 0.3, "gamma"),
                                  0.7 * x + 0.3 * target)
    assert np.all(positive_mix(x, target, 1e6, "gamma") > 0)
    with pytest.raises(ValueError, match="gamma"):
        positive_mix(x, np.array([np.nan, 1.0]), 0.3, "gamma")


def test_a_fit_that_ends_non_finite_is_an_error(monkeypatch):
    from topiclink.families.lda.estimator import LDA

    original = LDA._publish

    def broken(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.doc_topic_ = self.doc_topic_ * np.nan

    monkeypatch.setattr(LDA, "_publish", broken)
    model = LDA(2, max_iter=2, random_state=0)
    with pytest.raises(ValueError) as info:
        model.fit(_tiny_corpus())
    assert "doc_topic_ holds NaN" in _one_line(info)
    assert not hasattr(model, "n_iter_")          # not left looking fitted


# ---------------------------------------------------------------------- 3: complex, text
@pytest.mark.parametrize("bad, fragment", [
    (np.array([1.0, 2 + 1j]), "complex"), (np.array(["1.5", "2"]), "text"),
    (np.array([1.0, "x"], dtype=object), "entry 1 is str"),
    (np.array([1.0, None], dtype=object), "entry 1 is NoneType"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "dates")])
def test_as_real_refuses_what_numpy_would_convert(bad, fragment):
    with pytest.raises(DataError) as info:
        as_real(bad, "x")
    assert fragment in _one_line(info)
    np.testing.assert_array_equal(as_real(np.array([1, 2], dtype=object), "x"), [1.0, 2.0])


@pytest.mark.parametrize("name", ["DMR", "KernelTopicModel"])
@pytest.mark.parametrize("kind", ["complex", "text"])
def test_features_must_be_real(name, kind):
    corpus = _tiny_corpus()
    f = np.random.default_rng(0).normal(size=(corpus.n_docs, 2))
    features = f + 1j if kind == "complex" else f.astype(str)
    with pytest.raises(DataError) as info:
        getattr(topiclink, name)(3, max_iter=1).fit(corpus, features=features)
    assert ("complex" if kind == "complex" else "text") in _one_line(info)


def test_dmr_complex_dataframe_column_is_refused():
    corpus = _tiny_corpus()
    frame = pd.DataFrame({"a": np.arange(corpus.n_docs) + 1j})
    with pytest.raises(DataError, match="column 'a' holds complex"):
        topiclink.DMR(3, max_iter=1).fit(corpus, features=frame)


# ---------------------------------------------------------------------- 4: publication times
def test_times_accept_numbers_and_dates():
    np.testing.assert_array_equal(as_times([1994, 1995.5], 2), [1994.0, 1995.5])
    days = as_times(["1970-01-02", "1970-02"], 2)
    np.testing.assert_array_equal(days, [1.0, 31.0])
    same = [np.datetime64("1970-01-02"), pd.Timestamp("1970-01-02"), dt.date(1970, 1, 2),
            dt.datetime(1970, 1, 2), "1970-01-02T00:00Z",
            pd.Timestamp("1970-01-02 01:00", tz="Europe/Paris")]
    np.testing.assert_array_equal(as_times(np.array(same, dtype=object), 6), np.ones(6))
    assert as_times(pd.Series(pd.to_datetime(["1900-05-01"])), 1)[0] < 0


@pytest.mark.parametrize("times, fragment", [
    (["0001", "9912"], "digits alone"), ([1.0, "x"], "the text 'x'"),
    ([1.0 + 1j, 2.0], "complex"), (["1990-13-45", "1990-01-01"], "not a valid date"),
    ([1.0, "1990-01-01"], "mixes numbers"), ([None, 1.0], "None"),
    ([True, False], "is True"), ([np.nan, 1.0], "document 0"),
    (np.array(["NaT", "2000-01-01"], dtype="datetime64[D]"), "NaT"), ([1.0], "1 values")])
def test_times_refuse_anything_else(times, fragment):
    with pytest.raises(DataError) as info:
        as_times(np.array(times, dtype=object) if isinstance(times, list) else times, 2)
    assert fragment in _one_line(info)


def test_lmv_fits_with_iso_dates(lmv_data):
    corpus, links, truth = lmv_data
    base = np.datetime64("1990-01-01")
    dates = (base + np.round(truth.publication_time * 1000).astype("timedelta64[D]"))
    m = topiclink.VisibilityTopicModel(3, max_iter=2, random_state=0)
    m.fit(corpus, links=links, publication_time=dates.astype(str), newer_citations="drop")
    assert np.all(np.isfinite(m.visibility_))
    with pytest.raises(DataError, match="document 0 is the text"):
        m.fit(corpus, links=links, publication_time=[f"{i:04d}" for i in range(40)])


# ---------------------------------------------------------------------- 6: queries, kernels
@pytest.fixture(scope="module")
def bpbfm_fit():
    t = RelationalTensor([0, 1, 2, 3], [0, 0, 1, 1], [1, 2, 3, 0], np.ones(4), 4, 2)
    return topiclink.BilinearPoissonFactorModel(2, max_iter=3, burn_in=1,
                                                random_state=0).fit(t)


@pytest.mark.parametrize("head, fragment", [([], "got 0 values"), ([0, 1], "got 2 values")])
def test_score_tails_takes_exactly_one_head(bpbfm_fit, head, fragment):
    with pytest.raises(ValueError) as info:
        bpbfm_fit.score_tails(head, "0")
    assert fragment in _one_line(info)
    with pytest.raises(ValueError, match="relation: expected one"):
        bpbfm_fit.score_heads([], 0)
    assert bpbfm_fit.score_tails(0, "0").shape == (4,)
    assert bpbfm_fit.score_tails([0], ["0"]).shape == (4,)


def test_kernel_parameters_must_be_numbers():
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from topiclink.families.ktm.gp.kernels import SOTUKernel

    for kernel, name in ((RBF("x"), "length_scale"),
                         (ConstantKernel(1.0) * RBF([1.0, "a"]), "k2__length_scale"),
                         (SOTUKernel(length_scale="5"), "length_scale"),
                         (RBF(1.0, length_scale_bounds=("a", 2)), "length_scale_bounds")):
        with pytest.raises(ValueError) as info:
            topiclink.KernelTopicModel(3, kernel=kernel).fit(
                _tiny_corpus(), features=np.arange(10.0))
        assert f"kernel parameter {name} must be" in _one_line(info)


# ---------------------------------------------------------------------- 7: streams
def _lmvs_stream(lmv_data):
    from topiclink.data import Corpus

    corpus, links, _ = lmv_data
    pairs = np.asarray(links.pairs)
    m = topiclink.VisibilityTopicModel(3, inference="stochastic", max_iter=1, random_state=0)
    m.fit(corpus.subset(np.arange(38)), links=pairs[(pairs < 38).all(axis=1)])
    chunk = corpus.subset([38, 39])

    def with_ids(ids):
        return Corpus(chunk.counts, vocabulary=chunk.vocabulary, doc_ids=ids)

    return m, with_ids


def test_lmvs_partial_fit_keeps_new_ids(lmv_data):
    m, with_ids = _lmvs_stream(lmv_data)
    m.partial_fit(with_ids(["new-a", "new-b"]))
    assert list(m.train_doc_ids_[-2:]) == ["new-a", "new-b"]
    assert list(m.train_doc_ids_[:2]) == ["0", "1"]
    m.partial_fit(with_ids(["new-c", "new-d"]), links=[[40, 38]])
    assert m.train_doc_ids_.size == 42 and m.n_links_ >= 1


@pytest.mark.parametrize("ids", [["new", "5"], [0, 39]])
def test_lmvs_partial_fit_refuses_existing_ids(lmv_data, ids):
    m, with_ids = _lmvs_stream(lmv_data)
    with pytest.raises(DataError) as info:
        m.partial_fit(with_ids(ids))
    assert "of a training document" in _one_line(info)


def _named_stream():
    t = RelationalTensor([0, 1, 2, 3], [0, 0, 1, 1], [1, 2, 3, 0], np.ones(4), 4, 2,
                         np.array(["a", "b", "c", "d"]), np.array(["likes", "knows"]))
    m = topiclink.BilinearPoissonFactorModel(2, inference="online", random_state=0)
    return m.partial_fit(t)


def test_online_bpbfm_unnamed_chunk_is_matched_by_index():
    m = _named_stream()
    m.partial_fit(RelationalTensor([0, 3], [1, 0], [2, 1], np.ones(2), 4, 2))
    assert list(m.entity_names_) == ["a", "b", "c", "d"]
    assert list(m.relation_names_) == ["likes", "knows"]
    assert m.embedding_.shape == (4, 2)
    m.partial_fit(RelationalTensor([0], [0], [1], np.ones(1), 2, 1))   # fewer: a prefix
    assert m.embedding_.shape == (4, 2)


def test_online_bpbfm_unnamed_chunk_cannot_add_named_entities():
    m = _named_stream()
    with pytest.raises(DataError) as info:
        m.partial_fit(RelationalTensor([0], [0], [5], np.ones(1), 6, 2))
    assert "cannot add entities" in _one_line(info)


def test_online_bpbfm_unnamed_stream_grows_by_index():
    m = topiclink.BilinearPoissonFactorModel(2, inference="online", random_state=0)
    m.partial_fit(RelationalTensor([0, 1], [0, 0], [1, 2], np.ones(2), 3, 1))
    m.partial_fit(RelationalTensor([3, 4], [0, 0], [0, 1], np.ones(2), 5, 1))
    assert list(m.entity_names_) == ["0", "1", "2", "3", "4"]


# ---------------------------------------------------------------------- 8: siblings
@pytest.mark.parametrize("y, fragment", [
    (np.arange(10) % 2 + 0j, "complex"),
    (np.array([None] + [1] * 9, dtype=object), "document 0 is None"),
    (np.array(["a", 1] * 5, dtype=object), "mixes numbers and text")])
def test_labels_must_be_numbers_or_text(y, fragment):
    with pytest.raises(DataError) as info:
        topiclink.SupervisedTopicModel(2, max_iter=1).fit(_tiny_corpus(), y)
    assert fragment in _one_line(info)


def test_a_shard_count_that_cannot_fit_is_refused():
    with pytest.raises(ValueError) as info:
        topiclink.LDA(2, scheme=Shards("partition", 10**9), max_iter=1).fit(_tiny_corpus())
    assert "in 1000000000 shards need about" in _one_line(info)


def test_full_weights_of_a_huge_k_are_refused_before_allocating():
    """gRTM's full U is a K^2-dimensional Gaussian with a dense K^2 x K^2 precision: at
    K = 400 about 760 GiB, refused in one line before the fit allocates (it used to run
    out of memory); the diagonal weights of the same K need K^2 and pass the check."""
    import topiclink.estimators.base as base

    links = np.array([[0, 1], [1, 2]])
    with pytest.raises(ValueError) as info:
        topiclink.RelationalTopicModel(400, weights="full", max_iter=1).fit(
            _tiny_corpus(), links=links)
    assert "400 topics over" in _one_line(info) and "need about" in _one_line(info)
    need = topiclink.RelationalTopicModel(400, weights="diagonal")._fit_memory(_tiny_corpus())
    assert need < base.available_memory()
    full = topiclink.RelationalTopicModel(400, weights="full")._fit_memory(_tiny_corpus())
    assert full > 32 * 400 ** 4 > 700 * 2**30
