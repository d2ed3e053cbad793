"""One executor contract for every estimator that runs on Dask, discovered (never listed
by hand): the registered estimators whose ``executor`` accepts a Dask client.

Each case (an estimator in a configuration that runs on Dask, with its data) is checked
for: the same chain, bit for bit, on 1, 2 and 4 in-process workers and on worker
processes as in this process (every field of the state -- arrays, streams, counters --,
every fitted array and the trace but for timings and byte counts); the current client
(``executor="dask"``) and a scheduler address; resume across save and load (a client is
never stored: the loaded model continues on Dask when given one again, and gives the
uninterrupted chain); ``clone`` sharing a client, ``repr``, pickling dropping it; dask
imported only when used; the errors (no current client, a malformed ``executor``, no
dask installed, an unreachable scheduler, the schemes or inferences that run in this
process only).  The per-family files keep their family's maths only (a merge equal to
the sequential step, the bytes a round moves).

The clusters are the slow part: the in-process clusters of ``client`` (1, 2, 4 workers)
and ``client2`` (conftest) and one process cluster (:func:`process_client`) are shared by
every case of the module.
"""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import tests.examples.dmm.estimator  # noqa: E402,F401  (registers the exercise)
import topiclink  # noqa: E402
from tests.dask_cluster import cluster  # noqa: E402
from tests.executor_cases import CASES, IDS, Case  # noqa: E402
from tests.families.bpbfm.test_bpbfm import _planted  # noqa: E402
from topiclink.datasets import (  # noqa: E402
    make_lda_data,
    make_lmv_data,
    make_rtm_data,
    make_slda_data,
)
from topiclink.parameters import ClientLike  # noqa: E402
from topiclink.random import generator_state  # noqa: E402

ESTIMATORS = topiclink.registered_estimators()


def takes_dask(cls: type) -> bool:
    """Whether the estimator's ``executor`` accepts a Dask client."""
    forms = cls.parameter_constraints().get("executor", [])
    return any(isinstance(form, ClientLike) for form in forms)


@pytest.fixture(scope="module")
def data() -> dict[str, tuple[tuple, dict]]:
    """Per data key: the positional and keyword arguments of ``fit``."""
    corpus, _ = make_lda_data(n_docs=120, n_words=200, n_topics=5, doc_length=50,
                              random_state=1)
    rng = np.random.default_rng(3)
    features = np.column_stack([rng.random(corpus.n_docs), rng.normal(size=corpus.n_docs)])
    (rtm_corpus, links), _ = make_rtm_data(n_docs=120, n_topics=4, doc_length=50,
                                           random_state=3)
    (slda_corpus, y), _ = make_slda_data(n_docs=150, n_words=200, n_topics=4, doc_length=40,
                                         random_state=2)
    multi, truth = make_lda_data(n_docs=150, n_words=200, n_topics=6, doc_length=40,
                                 random_state=4)
    classes = np.array(["a", "b", "c"])[np.argmax(truth.doc_topic, axis=1) // 2]
    (lmv_corpus, lmv_links), _ = make_lmv_data(n_docs=150, n_words=100, n_topics=6,
                                               random_state=5)
    return {"corpus": ((corpus,), {}), "features": ((corpus,), {"features": features}),
            "links": ((rtm_corpus,), {"links": links}), "labels": ((slda_corpus, y), {}),
            "classes": ((multi, classes), {}), "lmv": ((lmv_corpus,), {"links": lmv_links}),
            "tensor1": ((_planted(model=1)[0],), {}),
            "tensor2": ((_planted(model=2)[0],), {})}


@pytest.fixture(scope="module", autouse=True)
def small_chunks():
    """BPBFM's minibatches in chunks of ~40 entries (8 tasks of a 300-entry minibatch), so
    that the tasks spread over the workers."""
    from topiclink.families.bpbfm import algorithm

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(algorithm, "CHUNK_ENTRIES", 40)
        yield


@pytest.fixture(scope="module")
def process_client():
    """A client on 2 single-thread worker processes, shared by every case."""
    with cluster(2, processes=True) as c, distributed.Client(c, set_as_default=False) as cl:
        yield cl


def make(case: Case, **overrides: Any):
    return ESTIMATORS[case.name](**{**case.kw, **overrides})


def fit(case: Case, data: dict, **overrides: Any):
    args, kwargs = data[case.data]
    return make(case, **overrides).fit(*args, **kwargs)


_references: dict[tuple[str, int], Any] = {}


def reference(case: Case, data: dict, max_iter: int | None = None):
    """The fit of ``case`` in this process (cached per module)."""
    n = int(case.kw["max_iter"] if max_iter is None else max_iter)
    key = (case.id, n)
    if key not in _references:
        _references[key] = fit(case, data, max_iter=n)
    return _references[key]


def assert_same(a: Any, b: Any, where: str) -> None:
    """Equal values: arrays bit for bit, generators by their state, containers item by
    item."""
    if isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, np.random.Generator):
        assert generator_state(a) == generator_state(b), where
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, dict):
        assert set(a) == set(b), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif dataclasses.is_dataclass(a):
        assert_state(a, b, where)
    else:
        assert a == b, where


def assert_state(a: Any, b: Any, where: str = "state_") -> None:
    assert type(a) is type(b), where
    for field in dataclasses.fields(a):
        assert_same(getattr(a, field.name), getattr(b, field.name), f"{where}.{field.name}")


def _timing(key: str) -> bool:
    return key.startswith(("seconds", "bytes_"))


def assert_same_chain(ref: Any, model: Any) -> None:
    """Bit for bit: every field of the state, every fitted array and number, the trace
    (every key of the reference's but for timings; the Dask fit adds byte counts)."""
    assert_state(ref.state_, model.state_)
    for name, value in vars(ref).items():
        if name.endswith("_") and not name.startswith("_") and name not in ("state_",
                                                                           "trace_"):
            if isinstance(value, np.ndarray | int | float | str):
                assert_same(value, getattr(model, name), name)
    keys = {k for k in ref.trace_ if not _timing(k)}
    assert keys == {k for k in model.trace_ if not _timing(k)}
    for key in keys:
        np.testing.assert_array_equal(ref.trace_[key], model.trace_[key], err_msg=key)


# ---------------------------------------------------------------------- discovery
def test_every_estimator_on_dask_has_a_case():
    """The registry's estimators whose ``executor`` takes a Dask client are those of the
    cases: a new family on Dask is caught here until it has one."""
    assert {name for name, cls in ESTIMATORS.items() if takes_dask(cls)} == \
        {c.name for c in CASES}


# ---------------------------------------------------------------------- the same chain
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_same_chain_on_any_number_of_workers(case, data, client):
    model = fit(case, data, executor=client)
    assert_same_chain(reference(case, data), model)
    for key in ("bytes_sent", "bytes_received"):     # where the family records them
        assert np.all(model.trace_.get(key, 1) > 0), key


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_worker_processes(case, data, process_client):
    assert_same_chain(reference(case, data), fit(case, data, executor=process_client))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_current_client_and_scheduler_address(case, data, client2):
    address = client2.scheduler.address
    with distributed.Client(address):               # the current client: executor="dask"
        assert_same_chain(reference(case, data), fit(case, data, executor="dask"))
    assert_same_chain(reference(case, data), fit(case, data, executor=address))


# ---------------------------------------------------------------------- persistence
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_resume_across_save_and_load(case, data, client2, tmp_path):
    """Half the iterations on Dask, saved, loaded (no client stored), resumed on Dask:
    the uninterrupted chain; a fit of this process continues on Dask too."""
    args, kwargs = data[case.data]
    half = int(case.kw["max_iter"]) // 2
    whole = reference(case, data, 2 * half)
    model = fit(case, data, executor=client2, max_iter=half)
    loaded = topiclink.load(model.save(tmp_path / "half.npz", full=True))
    assert loaded.executor is None                  # a client is never stored
    assert loaded.get_params() == {**model.get_params(), "executor": None}
    loaded.set_params(executor=client2).fit(*args, resume=True, **kwargs)
    assert_state(whole.state_, loaded.state_)
    here = reference(case, data, half)
    again = topiclink.load(here.save(tmp_path / "here.npz", full=True))
    again.set_params(executor=client2).fit(*args, resume=True, **kwargs)
    assert_state(whole.state_, again.state_)
    addressed = make(case, executor="tcp://127.0.0.1:8786")
    assert addressed._encoded_params({})["executor"] == "tcp://127.0.0.1:8786"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_client_parameter_clone_repr_pickle(case, client2):
    from sklearn.base import clone

    model = make(case, executor=client2)
    twin = clone(model)
    assert twin.executor is client2 and twin.get_params() == model.get_params()
    assert "executor=" in repr(model)
    copied = pickle.loads(pickle.dumps(model))
    assert copied.executor is None and model.executor is client2
    assert copied.get_params()["n_topics"] == model.get_params()["n_topics"]


def test_dask_imported_only_when_used():
    """One fresh interpreter fits every case in this process: dask is never imported."""
    code = "\n".join([
        "import sys",
        "import numpy as np",
        "import tests.examples.dmm.estimator",
        "import topiclink",
        "from tests.executor_cases import CASES, small_data",
        "data = small_data()",
        "ESTIMATORS = topiclink.registered_estimators()",
        "for case in CASES:",
        "    args, kwargs = data[case.data]",
        "    kw = {**case.kw, 'max_iter': 2}",
        "    ESTIMATORS[case.name](**kw).fit(*args, **kwargs)",
        "assert 'distributed' not in sys.modules and 'dask' not in sys.modules",
    ])
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------- errors
def _one_line(info: pytest.ExceptionInfo, start: str) -> None:
    message = str(info.value)
    assert "\n" not in message and start in message, message


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_errors(case, data, monkeypatch):
    args, kwargs = data[case.data]
    with pytest.raises(ValueError) as info:
        distributed.get_client()                    # no current client in this process
    with pytest.raises(ValueError) as info:
        fit(case, data, executor="dask")
    _one_line(info, "found no Dask client: pass executor=")
    for bad in (1.5, b"x", "not an address"):
        with pytest.raises(ValueError) as info:
            fit(case, data, executor=bad)
        _one_line(info, "executor must be None or an integer")
    for settings, message in case.local:
        with pytest.raises(ValueError) as info:
            fit(case, data, executor="dask", **settings)
        _one_line(info, message)
    monkeypatch.setitem(sys.modules, "distributed", None)        # dask not installed
    with pytest.raises(ImportError) as info:
        fit(case, data, executor="dask")
    _one_line(info, "a Dask executor needs dask and distributed: pip install")


@pytest.mark.parametrize("case", CASES[:1], ids=IDS[:1])
def test_an_unreachable_scheduler_is_a_one_line_error(case, data, monkeypatch):
    """Refused with one line once the connect timeout (2 s here, 30 s by default) ends."""
    import topiclink.execution.dask as dask_executor

    monkeypatch.setattr(dask_executor, "CONNECT_TIMEOUT", 2.0)
    with pytest.raises(ValueError) as info:
        fit(case, data, executor="tcp://127.0.0.1:1")
    _one_line(info, "cannot connect to the Dask scheduler at 'tcp://127.0.0.1:1'")
