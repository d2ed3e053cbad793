"""``scheme`` (statistical: changes the chain) and ``executor`` (where the pieces run:
never changes it) of LDA, DMR, Gibbs-gRTM, gSLDA, LMVS and BPBFM.

A different executor for the same scheme never changes a chain; bad values are one-line
errors naming the parameter; the spellings of before 0.1.0 (``parallel``, ``n_shards``,
``client``) are the ordinary TypeError of an unknown argument, and a model file that
stores them is refused on one line.  The Dask side is ``tests/test_executor_contract.py``.
"""

from __future__ import annotations

import hashlib
import io
import json
import warnings

import numpy as np
import pytest

import topiclink
from tests.families.bpbfm.test_bpbfm import _planted
from topiclink.datasets import make_lda_data, make_lmv_data, make_rtm_data, make_slda_data
from topiclink.execution import Shards, execution_plan
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
from topiclink.families.dmr.estimator import DMR
from topiclink.families.lda.estimator import LDA
from topiclink.families.lmv.estimator import VisibilityTopicModel
from topiclink.families.rtm.estimator import RelationalTopicModel
from topiclink.families.slda.estimator import SupervisedTopicModel
from topiclink.parameters import GLOSSARY, SchemeCodec

LKW = {"n_topics": 4, "max_iter": 4, "random_state": 4}
DKW = {"n_topics": 3, "max_iter": 4, "burn_in": 1, "optimize_every": 2, "random_state": 2}
RKW = {"n_topics": 3, "negative_ratio": 0.05, "max_iter": 3, "random_state": 5}
SKW = {"n_topics": 3, "c": 4.0, "max_iter": 3, "random_state": 3}
MKW = {"n_topics": 3, "inference": "stochastic", "max_iter": 2, "tol": 0.0, "batch_size": 40,
       "n0": 10, "random_state": 0}
BKW = {"inference": "online", "batch_size": 300, "max_iter": 2, "burn_in": 1,
       "random_state": 3}


@pytest.fixture(scope="module")
def data():
    corpus, _ = make_lda_data(n_docs=60, n_words=80, n_topics=4, doc_length=30,
                              random_state=1)
    features = np.random.default_rng(3).random((corpus.n_docs, 2))
    (rc, links), _ = make_rtm_data(n_docs=60, n_topics=3, doc_length=30, random_state=3)
    (sc, y), _ = make_slda_data(n_docs=60, n_words=80, n_topics=3, doc_length=30,
                                random_state=2)
    (lc, ll), _ = make_lmv_data(n_docs=80, n_words=60, n_topics=6, random_state=5)
    return {"lda": (corpus,), "dmr": (corpus, features), "rtm": (rc, links), "slda": (sc, y),
            "lmv": (lc, ll), "bpbfm": (_planted(model=1)[0],)}


def fit(family, model, data, **kw):
    args = data[family]
    if family == "dmr":
        return model.fit(args[0], features=args[1], **kw)
    if family in ("rtm", "lmv"):
        return model.fit(args[0], links=args[1], **kw)
    return model.fit(*args, **kw)


def chain_hash(model) -> str:
    """Every array of the sampler state and every fitted array attribute."""
    digest = hashlib.sha256()
    for name, value in sorted(vars(model.state_).items()):
        if isinstance(value, np.ndarray):
            digest.update(name.encode() + np.ascontiguousarray(value).tobytes())
    for name, value in sorted(vars(model).items()):
        if name.endswith("_") and not name.startswith("_") and isinstance(value, np.ndarray):
            digest.update(name.encode() + np.ascontiguousarray(value).tobytes())
    return digest.hexdigest()


FAMILIES = {"lda": (LDA, LKW), "dmr": (DMR, DKW), "rtm": (RelationalTopicModel, RKW),
            "slda": (SupervisedTopicModel, SKW), "lmv": (VisibilityTopicModel, MKW),
            "bpbfm": (BilinearPoissonFactorModel, BKW)}

@pytest.mark.parametrize(("family", "scheme", "executors"), [
    ("lda", Shards("adlda", 3), (None, 1, 2)),
    ("lda", Shards("partition", 3), (1, 2)),
    ("dmr", Shards("partition", 2), (1, 2)),
    ("dmr", Shards("adlda", 3), (None, 2)),
    ("rtm", Shards("shards", 3), (1, 2)),
    ("slda", Shards("shards", 3), (1, 2)),
])
def test_the_executor_never_changes_the_chain(family, scheme, executors, data):
    cls, kw = FAMILIES[family]
    hashes = {chain_hash(fit(family, cls(scheme=scheme, executor=e, **kw), data))
              for e in executors}
    assert len(hashes) == 1


def test_slda_one_shard_is_the_exact_chain(data):
    exact = fit("slda", SupervisedTopicModel(**SKW), data)
    one = fit("slda", SupervisedTopicModel(scheme=Shards("shards", 1), executor=2, **SKW), data)
    assert chain_hash(exact) == chain_hash(one)


# ---------------------------------------------------------------------- old spellings
@pytest.mark.parametrize("cls", [LDA, DMR, RelationalTopicModel, SupervisedTopicModel,
                                 VisibilityTopicModel, BilinearPoissonFactorModel])
@pytest.mark.parametrize("old", [{"parallel": "dask"}, {"client": "tcp://h:1"},
                                 {"n_shards": 3}], ids=["parallel", "client", "n_shards"])
def test_the_old_spellings_are_unknown_arguments(cls, old):
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        cls(**old)
    with pytest.raises(ValueError, match="Invalid parameter"):
        cls().set_params(**old)


def test_the_library_emits_no_deprecation_warning(data):
    """The default and the new spellings, clone and set_params: no DeprecationWarning."""
    from sklearn.base import clone

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        for family, (cls, kw) in FAMILIES.items():
            fit(family, clone(cls(**kw)), data).set_params(executor=1)


# ---------------------------------------------------------------------- bad values
@pytest.mark.parametrize(("cls", "kw", "message"), [
    (LDA, {"scheme": "shards"}, r"LDA: scheme must be one of 'exact', 'partition', 'adlda' "
     r"or Shards\('partition' \| 'adlda', n_shards\), got 'shards'"),
    (LDA, {"scheme": Shards("shards", 2)}, "LDA: scheme must be"),
    (RelationalTopicModel, {"scheme": "adlda"}, "RelationalTopicModel: scheme must be"),
    (LDA, {"executor": 0}, "LDA: executor must be None or an integer other than 0"),
    (LDA, {"executor": 2.5}, "LDA: executor must be"),
    (LDA, {"executor": "dask"}, r"LDA: executor: scheme='exact' runs in this process; give "
     r"None or a thread count \(a Dask executor runs scheme='adlda'\)"),
    (LDA, {"scheme": "partition", "executor": "tcp://h:1"}, "scheme='partition' runs in "
     "this process"),
    (RelationalTopicModel, {"executor": "dask"}, "scheme='exact' runs in this process"),
    (LDA, {"scheme": "adlda", "executor": 2, "n_jobs": 3}, "executor: give the thread count "
     "once"),
    (VisibilityTopicModel, {"executor": "dask"}, "executor: a Dask executor needs "
     "inference='stochastic'"),
    (BilinearPoissonFactorModel, {"executor": "dask"}, "executor: a Dask executor needs "
     "inference='online'"),
])
def test_bad_values_are_one_line_errors(cls, kw, message, data):
    family = {v[0]: k for k, v in FAMILIES.items()}[cls]
    with pytest.raises(ValueError, match=message) as info:
        fit(family, cls(**kw), data)
    assert "\n" not in str(info.value)


def test_shards_checks_its_values():
    assert Shards("adlda") == Shards("adlda", 2) and repr(Shards("x", 3)) == \
        "Shards('x', n_shards=3)"
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="Shards: n_shards must be an integer >= 1"):
            Shards("adlda", bad)
    with pytest.raises(ValueError, match="Shards: scheme must be"):
        Shards("")
    plan = execution_plan("X", Shards("adlda", 3), None, -1, sharded=("adlda",))
    assert plan.n_shards == 3 and plan.n_threads >= 1 and not plan.dask


def test_glossary_entries():
    assert {"scheme", "executor"} <= set(GLOSSARY)
    assert not {"parallel", "n_shards", "client"} & set(GLOSSARY)
    codec = SchemeCodec()
    for value in ("exact", Shards("adlda", 3)):
        assert codec.decode(json.loads(json.dumps(codec.encode(value)))) == value


# ---------------------------------------------------------------------- model files
def _as_old_file(path, out, params):
    """The model file at ``path`` as the layout before 0.1.0 wrote it: ``params`` instead
    of scheme / executor."""
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    header = json.loads(arrays.pop("__header__").tobytes().decode("utf-8"))
    for name in ("scheme", "executor"):
        header["params"].pop(name, None)
        header.get("param_schemas", {}).pop(name, None)
    header["params"].update(params)
    if isinstance(params.get("client"), str):
        header.setdefault("param_schemas", {})["client"] = "dask-client/1"
    buffer = io.BytesIO()
    np.savez(buffer, __header__=np.frombuffer(json.dumps(header).encode("utf-8"),
                                              dtype=np.uint8), **arrays)
    out.write_bytes(buffer.getvalue())
    return out


@pytest.mark.parametrize("old_params", [
    {"parallel": "adlda", "n_shards": 3, "client": None},
    {"parallel": "dask", "client": "tcp://h:1"}], ids=["adlda", "dask"])
def test_a_model_file_with_the_old_spellings_is_refused(old_params, data, tmp_path):
    model = fit("lda", LDA(scheme=Shards("adlda", 3), **LKW), data)
    path = _as_old_file(model.save(tmp_path / "new.npz"), tmp_path / "old.npz", old_params)
    with pytest.raises(ValueError, match=r"(unknown|cannot decode) parameter "
                                         r"'(parallel|n_shards|client)'") as info:
        topiclink.load(path)
    assert "\n" not in str(info.value)


def test_a_saved_model_keeps_scheme_and_executor(data, tmp_path):
    model = fit("lda", LDA(scheme=Shards("adlda", 3), executor=2, **LKW), data)
    loaded = topiclink.load(model.save(tmp_path / "m.npz"))
    assert loaded.scheme == Shards("adlda", 3) and loaded.executor == 2
