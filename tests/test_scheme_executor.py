"""``scheme`` (statistical: changes the chain) and ``executor`` (where the pieces run:
never changes it) of LDA, DMR, Gibbs-gRTM, gSLDA, LMVS and BPBFM.

The old ``parallel`` / ``n_shards`` / ``client`` (until 0.2.0) give the same chains as the
new spelling, with a DeprecationWarning naming it; a different executor for the same
scheme never changes a chain; bad values are one-line errors naming the parameter; model
files written with the old parameters still load.
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


def old(cls, **kw):
    with pytest.warns(DeprecationWarning):
        return cls(**kw)


FAMILIES = {"lda": (LDA, LKW), "dmr": (DMR, DKW), "rtm": (RelationalTopicModel, RKW),
            "slda": (SupervisedTopicModel, SKW), "lmv": (VisibilityTopicModel, MKW),
            "bpbfm": (BilinearPoissonFactorModel, BKW)}

#: (family, old parameters, new parameters): the same chain; the threaded ones (Dask below)
SAME = [
    ("lda", {"parallel": "partition", "n_shards": 3, "n_jobs": 2},
     {"scheme": Shards("partition", 3), "executor": 2}),
    ("lda", {"parallel": "adlda"}, {"scheme": "adlda"}),
    ("lda", {"parallel": "adlda", "n_shards": 3}, {"scheme": Shards("adlda", 3)}),
    ("dmr", {"parallel": "partition", "n_shards": 2, "n_jobs": 2},
     {"scheme": "partition", "executor": 2}),
    ("dmr", {"parallel": "adlda", "n_shards": 3}, {"scheme": Shards("adlda", 3)}),
    ("rtm", {"parallel": "shards", "n_shards": 3, "n_jobs": 2},
     {"scheme": Shards("shards", 3), "executor": 2}),
    ("lda", {"parallel": None, "n_shards": 5}, {}),          # n_shards ignored, as before
]


@pytest.mark.parametrize(("family", "before", "after"), SAME,
                         ids=[f"{f}-{b}" for f, b, _ in SAME])
def test_new_spelling_is_the_old_chain(family, before, after, data):
    cls, kw = FAMILIES[family]
    a = fit(family, old(cls, **before, **kw), data)
    b = fit(family, cls(**after, **kw), data)
    assert chain_hash(a) == chain_hash(b)
    threads = {"n_jobs", "executor"}               # n_jobs=2 and executor=2: both threads
    assert {k: v for k, v in a.get_params().items() if k not in threads} == \
        {k: v for k, v in b.get_params().items() if k not in threads}


@pytest.mark.parametrize(("family", "scheme", "executors"), [
    ("lda", Shards("adlda", 3), (None, 1, 2)),
    ("lda", Shards("partition", 3), (1, 2)),
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


def test_on_dask_the_same_chains(data):
    """Old parallel="dask" == new Dask executor == threads, per family (2 in-process
    workers)."""
    distributed = pytest.importorskip("distributed")
    from tests.dask_cluster import cluster

    with cluster(2) as c, distributed.Client(c) as client:
        for family, before, after, threads in [
                ("lda", {"parallel": "dask", "n_shards": 3},
                 {"scheme": Shards("adlda", 3)}, {"scheme": Shards("adlda", 3)}),
                ("slda", {"parallel": "dask", "n_shards": 2}, {"scheme": "shards"},
                 {"scheme": "shards", "executor": 2}),
                ("rtm", {"parallel": "dask", "n_shards": 2}, {"scheme": "shards"},
                 {"scheme": "shards"}),
                ("lmv", {"parallel": "dask"}, {}, {}),
                ("bpbfm", {"parallel": "dask"}, {}, {})]:
            cls, kw = FAMILIES[family]
            a = fit(family, old(cls, client=client, **before, **kw), data)
            assert a.executor is client
            b = fit(family, cls(executor=client, **after, **kw), data)
            c_ = fit(family, cls(**threads, **kw), data)
            assert chain_hash(a) == chain_hash(b) == chain_hash(c_), family
        # "dask": the current client (the old client=None)
        with pytest.warns(DeprecationWarning, match="executor='dask'"):
            model = LDA(parallel="dask", **LKW)
        assert model.executor == "dask"
        assert chain_hash(fit("lda", model, data)) == chain_hash(
            fit("lda", LDA(scheme="adlda", **LKW), data))


# ---------------------------------------------------------------------- deprecation
@pytest.mark.parametrize(("cls", "before", "after"), [
    (LDA, {"parallel": "dask", "n_shards": 4, "client": "tcp://h:1"},
     {"scheme": Shards("adlda", 4), "executor": "tcp://h:1"}),
    (LDA, {"parallel": "partition"}, {"scheme": "partition", "executor": None}),
    (DMR, {"parallel": "dask"}, {"scheme": "adlda", "executor": "dask"}),
    (RelationalTopicModel, {"parallel": "dask", "n_shards": 3},
     {"scheme": Shards("shards", 3), "executor": "dask"}),
    (RelationalTopicModel, {"parallel": "shards"}, {"scheme": "shards", "executor": None}),
    (SupervisedTopicModel, {"parallel": "dask", "n_shards": 1},
     {"scheme": Shards("shards", 1), "executor": "dask"}),
    (VisibilityTopicModel, {"parallel": "dask", "client": "tcp://h:1"},
     {"executor": "tcp://h:1"}),
    (BilinearPoissonFactorModel, {"parallel": "dask"}, {"executor": "dask"}),
    (LDA, {"client": "tcp://h:1"}, {"scheme": "exact", "executor": None}),  # ignored, as before
])
def test_old_names_warn_and_map(cls, before, after):
    with pytest.warns(DeprecationWarning, match=r"deprecated and will be removed in 0\.2\.0; "
                      r"(use (scheme|executor)=|drop it: here it changes nothing)") as record:
        model = cls(**before)
    assert record[0].filename == __file__                        # points at the caller
    params = model.get_params()
    assert not {"parallel", "n_shards", "client"} & set(params)
    for name, value in after.items():
        assert params[name] == value
    # set_params takes them too
    with pytest.warns(DeprecationWarning):
        twin = cls().set_params(**before)
    assert {k: twin.get_params()[k] for k in after} == after


def test_a_parameter_under_both_spellings_is_an_error():
    with pytest.raises(ValueError, match="give scheme only"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        LDA(parallel="adlda", scheme="adlda")
    with pytest.raises(ValueError, match="give executor only"):
        LDA(parallel="dask", executor=2)
    with pytest.raises(ValueError, match="parallel must be one of None, 'partition'"):
        LDA(parallel="spark")
    with pytest.raises(TypeError):                       # never was a BPBFM parameter
        BilinearPoissonFactorModel(n_shards=2)


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
    """The model file at ``path`` as an older release wrote it: ``params`` instead of
    scheme / executor."""
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


@pytest.mark.parametrize(("family", "new", "old_params"), [
    ("lda", {"scheme": Shards("adlda", 3)},
     {"parallel": "adlda", "n_shards": 3, "n_jobs": 1, "client": None}),
    ("lda", {"scheme": Shards("adlda", 3), "executor": "tcp://h:1"},
     {"parallel": "dask", "n_shards": 3, "n_jobs": 1, "client": "tcp://h:1"}),
    ("lda", {}, {"parallel": None, "n_shards": 2, "n_jobs": 1, "client": None}),
    ("dmr", {"scheme": "partition"}, {"parallel": "partition", "n_shards": 2,
                                      "client": None}),
    ("rtm", {"scheme": Shards("shards", 3)}, {"parallel": "shards", "n_shards": 3,
                                              "client": None}),
    ("slda", {"scheme": "shards", "executor": "dask"},
     {"parallel": "dask", "n_shards": 2, "client": None}),
    ("lmv", {"executor": "dask"}, {"parallel": "dask", "client": None}),
])
def test_old_model_files_load(family, new, old_params, data, tmp_path):
    cls, kw = FAMILIES[family]
    plain = {k: v for k, v in new.items() if k != "executor"}
    model = fit(family, cls(**plain, **kw), data)
    saved = model.save(tmp_path / "new.npz", full=True)
    path = _as_old_file(saved, tmp_path / "old.npz", old_params)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # loading an old file is normal
        loaded = topiclink.load(path)
    params, defaults = loaded.get_params(), cls().get_params()
    for name in ("scheme", "executor"):
        if name in defaults:
            assert params[name] == new.get(name, defaults[name]), name
    assert not {"parallel", "n_shards", "client"} & set(params)
    if "executor" not in new:                            # it continues the same chain
        a = fit(family, loaded.set_params(max_iter=1), data, resume=True)
        b = fit(family, model.set_params(max_iter=1), data, resume=True)
        assert chain_hash(a) == chain_hash(b)


def test_a_saved_model_keeps_scheme_and_executor(data, tmp_path):
    model = fit("lda", LDA(scheme=Shards("adlda", 3), executor=2, **LKW), data)
    loaded = topiclink.load(model.save(tmp_path / "m.npz"))
    assert loaded.scheme == Shards("adlda", 3) and loaded.executor == 2
