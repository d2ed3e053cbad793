"""Bad inputs of the Python API and of model files (issue 40, item 1): each example of the
fuzz report is refused with one line naming the argument or field -- raised by topiclink,
not a NumPy / SciPy / scikit-learn / json message passing through -- or, where it is a
valid input, accepted.  The fuzz generators (``tests/fuzz/cases_*.py``) cover each class
more widely; these are the reported examples, fast."""

from __future__ import annotations

import json
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import topiclink
from tests.fuzz import cases_api as api
from tests.fuzz import cases_models as models
from tests.fuzz.cases_files import members, write
from topiclink.data.io import corpus_from_texts
from topiclink.execution import Shards
from topiclink.families.ktm.gp.kernels import OnColumns


def _links_out(n_new: int = 2) -> np.ndarray:
    out = np.zeros((n_new, api.data()["X"].n_docs))
    out[0, 1] = out[-1, 3] = 1
    return out


def _ktm(kernel: Any = None, **kwargs: Any) -> Any:
    return models.fit(models.estimator("KernelTopicModel", kernel=kernel), **kwargs)


def _dmr(**kwargs: Any) -> Any:
    estimator_kwargs = {k: kwargs.pop(k) for k in ("scheme",) if k in kwargs}
    return models.fit(models.estimator("DMR", **estimator_kwargs), **kwargs)


def _object_sparse(values: np.ndarray) -> sp.csr_matrix:
    m = sp.csr_matrix(values)
    return sp.csr_matrix((m.data.astype(object), m.indices, m.indptr), shape=m.shape)


def _edited(model: Any, tmp: str, edit: Callable[[dict, dict], tuple[dict, dict]]) -> Any:
    path = model.save(os.path.join(tmp, f"{type(model).__name__}.npz"))
    header, arrays = edit(*members(path))
    return topiclink.load(write(path, header, arrays))


def _attribute(name: str, value: Any) -> Callable[[dict, dict], tuple[dict, dict]]:
    return lambda h, a: ({**h, "attributes": {**h["attributes"], name: value}}, a)


def _kernel(kernel: Any) -> Callable[[dict, dict], tuple[dict, dict]]:
    from topiclink.families.ktm.estimator import KernelTopicModel

    codec = KernelTopicModel._param_codecs["kernel"]
    return lambda h, a: ({**h, "params": {**h["params"], "kernel": codec.encode(kernel)},
                          "param_schemas": {**(h.get("param_schemas") or {}),
                                            "kernel": codec.schema}}, a)


def _lmv(**kwargs: Any) -> Any:
    d = models.data()
    return models.estimator("VisibilityTopicModel", max_iter=1).fit(
        d["X"], links=d["links"], **kwargs)


def _tensor(**change: Any) -> Any:
    return models._tensor(**change)


@pytest.fixture(scope="module")
def lmvs_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = models.data()
    m = models.estimator("VisibilityTopicModel", inference="stochastic", max_iter=1)
    m.fit(d["X"].subset(np.arange(38)),
          links=models._among(np.asarray(d["links"].pairs), 38))
    return str(m.save(tmp_path_factory.mktemp("lmvs") / "lmvs.npz", full=True))


def _frame_dmr_file(tmp: str) -> Path:
    return models._frame_dmr().save(Path(tmp) / "dmr-frame.npz")


def _rbf(*args: Any, **kwargs: Any) -> Any:
    from sklearn.gaussian_process.kernels import RBF

    return RBF(*args, **kwargs)


# (case id, call(tmp dir), words the one-line message must contain)
REFUSED: list[tuple[str, Callable[[str], Any], tuple[str, ...]]] = [
    # n_tokens of predict_words_from_links, in every model that has it
    *[(f"n_tokens-{value!r}-{name}", lambda tmp, n=name, v=value: api.fitted(n)
       .predict_words_from_links(_links_out(), n_tokens=v), ("n_tokens",))
      for name in ("RelationalTopicModel", "VariationalRTM", "VisibilityTopicModel")
      for value in (-5, 0, -3, "many", [1, 2, 3], float("nan"))],
    ("n_tokens-fraction-RTM", lambda tmp: api.fitted("RelationalTopicModel")
     .predict_words_from_links(_links_out(), n_tokens=2.5), ("n_tokens", "whole")),
    ("vectorizer-int", lambda tmp: corpus_from_texts(["a b c", "b c d"], vectorizer=5),
     ("vectorizer",)),
    # KTM kernels that disagree with the features (2 columns)
    ("ktm-anisotropic-3", lambda tmp: _ktm(_rbf([1.0, 1.0, 1.0])), ("kernel", "2 columns")),
    ("ktm-bounds-reversed", lambda tmp: _ktm(_rbf(1.0, length_scale_bounds=(5.0, 1.0))),
     ("kernel", "bound")),
    ("ktm-outside-bounds", lambda tmp: _ktm(_rbf(10.0, length_scale_bounds=(1e-2, 1.0))),
     ("kernel", "outside")),
    ("ktm-zero-features", lambda tmp: _ktm(features=np.zeros((40, 0))), ("features",)),
    # DMR features and shards
    ("dmr-object-sparse", lambda tmp: _dmr(features=_object_sparse(models.data()[
        "features"])), ("features", "object")),
    ("dmr-duplicate-columns", lambda tmp: _dmr(features=pd.DataFrame(
        models.data()["features"], columns=["a", "a"])), ("features", "'a'")),
    ("dmr-more-shards-than-documents", lambda tmp: _dmr(
        scheme=Shards("adlda", 50)), ("n_shards", "documents (40)")),
    ("lda-more-shards-than-documents", lambda tmp: models.fit(models.estimator(
        "LDA", scheme=Shards("adlda", 50))), ("shards",)),
    ("n_shards-zero", lambda tmp: Shards("adlda", 0), ("n_shards",)),
    # model files
    ("file-intercept-text", lambda tmp: _edited(api.fitted("VariationalRTM"), tmp,
                                                _attribute("intercept_", "x")),
     ("intercept_", ".npz")),
    ("file-ktm-tau-text", lambda tmp: _edited(models.fitted("KernelTopicModel"), tmp,
                                              _attribute("tau_", "0.5")), ("tau_", ".npz")),
    ("file-ktm-kernel-edited", lambda tmp: _edited(models.fitted("KernelTopicModel"), tmp,
                                                   _kernel(_rbf(1.0))),
     ("kernel", ".npz")),
    ("file-ktm-kernel-dimensions", lambda tmp: _edited(
        models.fitted("KernelTopicModel"), tmp,
        _kernel(_rbf(1.0) * _rbf(1.0) * _rbf([1.0, 1.0, 1.0]))), ("kernel", ".npz")),
    ("file-dmr-encoding-not-json", lambda tmp: topiclink.load(write(
        _frame_dmr_file(tmp), *_attribute("feature_encoding_", "{not json")(
            *members(_frame_dmr_file(tmp))))), ("feature_encoding_", ".npz")),
    ("file-dmr-encoding-renamed", lambda tmp: topiclink.load(write(
        _frame_dmr_file(tmp), *_attribute("feature_encoding_", json.dumps({"columns": [
            {"name": "z", "kind": "numeric", "center": 0.0, "scale": 1.0}]}))(
            *members(_frame_dmr_file(tmp))))), ("feature_encoding_", ".npz")),
    ("file-lmv-n_links-text", lambda tmp: _edited(api.fitted("VisibilityTopicModel"), tmp,
                                                  _attribute("n_links_", "5")).summary(),
     ("n_links_", ".npz")),
    # unknown option values
    ("links-self_links-bogus", lambda tmp: topiclink.data.Links.from_pairs(
        [[0, 1]], 3, self_links="bogus"), ("self_links",)),
    ("links-duplicates-ignore", lambda tmp: topiclink.data.Links.from_pairs(
        [[0, 1]], 3, duplicates="ignore"), ("duplicates",)),
    ("adjacency-self_links-bogus", lambda tmp: topiclink.data.Links.from_adjacency(
        np.eye(3)[::-1], self_links="bogus"), ("self_links",)),
    ("links-directed-text", lambda tmp: topiclink.data.Links.from_pairs(
        [[0, 1]], 3, directed="no"), ("directed",)),
    ("newer_citations-bogus", lambda tmp: _lmv(newer_citations="bogus"),
     ("newer_citations",)),
    # relational tensors
    ("tensor-repeated-entity", lambda tmp: _tensor(
        entity_names=["e"] * models.data()["tensor"].n_entities), ("entity_names", "'e'")),
    ("tensor-empty-entity", lambda tmp: _tensor(entity_names=[""] + [
        f"e{i}" for i in range(1, models.data()["tensor"].n_entities)]),
     ("entity_names", "empty")),
    ("tensor-repeated-relation", lambda tmp: _tensor(
        relation_names=["r"] * models.data()["tensor"].n_relations), ("relation_names",)),
    # publication times: text that is not a number or a date
    ("time-text-not-number", lambda tmp: _lmv(publication_time=np.array(
        ["17.0x"] * 40), newer_citations="drop"), ("publication_time", "17.0x")),
    ("time-digits-alone", lambda tmp: _lmv(publication_time=np.array(
        [f"{i:04d}" for i in range(40)]), newer_citations="drop"), ("publication_time",)),
    ("ktm-columns-fraction", lambda tmp: _ktm(OnColumns(_rbf(1.0), [0.5])), ("columns",)),
]


@pytest.mark.parametrize("call, words", [pytest.param(c, w, id=i) for i, c, w in REFUSED])
def test_bad_input_is_one_line_naming_the_argument(call: Callable[[str], Any],
                                                    words: tuple[str, ...],
                                                    tmp_path: Any) -> None:
    with pytest.raises((ValueError, TypeError)) as info:
        call(str(tmp_path))
    message = str(info.value)
    assert message and "\n" not in message.strip(), message
    frames = traceback.extract_tb(info.tb)
    assert f"{os.sep}topiclink{os.sep}" in frames[-1].filename, (frames[-1].filename,
                                                                 message)
    for word in words:
        assert word in message, (word, message)


def test_lmvs_refuses_a_training_document_given_again(lmvs_file: str) -> None:
    """A loaded LMVS model's stream: a document it was trained on, given again without
    an id (its counts) or with its id, is refused naming it; the same words under a new
    id are added on purpose."""
    from topiclink.data import Corpus

    X = models.data()["X"]
    for chunk, words in ((X.counts[[38, 5]].toarray(), ("document 1", "training document 5")),
                         (X.subset([38, 7]), ("'7'", "training document"))):
        with pytest.raises(ValueError) as info:
            topiclink.load(lmvs_file).partial_fit(chunk)
        message = str(info.value)
        assert "\n" not in message and all(w in message for w in words), message
    same = X.subset([5, 38])
    chunk = Corpus(same.counts, vocabulary=same.vocabulary, doc_ids=["copy-5", "new-38"])
    model = topiclink.load(lmvs_file).partial_fit(chunk)
    assert model.doc_topic_.shape[0] == 40
    assert list(model.train_doc_ids_[-2:]) == ["copy-5", "new-38"]


def test_valid_inputs_that_were_refused_are_accepted() -> None:
    """Numeric text as publication times (read as those numbers: the same fit as the
    numbers), a KTM column index given as a whole float (the same kernel as the int)."""
    t = models.data()["time"]
    a = _lmv(publication_time=[f"{v!r}" for v in t.tolist()], newer_citations="drop")
    b = _lmv(publication_time=t, newer_citations="drop")
    np.testing.assert_array_equal(a.doc_topic_, b.doc_topic_)
    assert _lmv(publication_time=["17.0"] * t.size, newer_citations="drop").n_iter_ == 1
    f = models.data()["features"]
    k_float = OnColumns(_rbf(1.0), [np.float64(1.0)])
    k_int = OnColumns(_rbf(1.0), [1])
    np.testing.assert_array_equal(k_float(f), k_int(f))
    m = _ktm(k_float)
    assert np.all(np.isfinite(m.doc_topic_))


def test_documented_meanings() -> None:
    """An entry both listed and missing is held out (unobserved; its value kept); an
    intercept-only DMR (no feature column) fits; n_tokens does not change LMV's word
    distribution (no length enters it) but is still checked."""
    t = models.data()["tensor"]
    entry = np.array([[t.heads[0], t.relations[0], t.tails[0]]])
    held = _tensor(missing=entry)
    assert not held.observed_mask(*entry.T)[0] and held.n_entries == t.n_entries
    assert _dmr(features=np.zeros((40, 0))).lambda_.shape == (3, 1)
    lmv = api.fitted("VisibilityTopicModel")
    np.testing.assert_array_equal(lmv.predict_words_from_links(_links_out(), n_tokens=5),
                                  lmv.predict_words_from_links(_links_out()))


def test_per_document_lengths_are_used_by_variational_rtm() -> None:
    """One N per new document: each row is the prediction with that N alone."""
    model = api.fitted("VariationalRTM")
    both = model.predict_words_from_links(_links_out(), n_tokens=[3, 50])
    assert np.allclose(both[0], model.predict_words_from_links(_links_out(), n_tokens=3)[0])
    assert np.allclose(both[1], model.predict_words_from_links(_links_out(), n_tokens=50)[1])
    assert not np.allclose(both[0], both[1])
