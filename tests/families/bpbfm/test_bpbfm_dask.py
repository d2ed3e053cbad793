"""Online Gibbs of BPBFM on Dask (``BilinearPoissonFactorModel(inference="online",
executor=client)``: the algorithm's executor is a :class:`topiclink.execution.DaskExecutor`),
the family's part: the chunk tasks merge into the minibatch's counts, a minibatch step
outside a run, the bytes it moves, partial_fit streams and a loaded model's stream on
Dask.  The executor contract (the same fit on any number of workers and on worker
processes, the current client and an address, resume, clone / pickle, the errors) is
``tests/test_executor_contract.py``."""

from __future__ import annotations

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import topiclink  # noqa: E402
from topiclink.execution import DaskExecutor  # noqa: E402
from topiclink.families.bpbfm import algorithm as inference  # noqa: E402
from topiclink.families.bpbfm.algorithm import (  # noqa: E402
    BPBFMData,
    chunk_arguments,
    chunked_counts,
    count_chunk,
)
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel  # noqa: E402
from topiclink.families.bpbfm.online import BPBFMOnline  # noqa: E402
from topiclink.random import generator_state  # noqa: E402

from .test_bpbfm import _planted  # noqa: E402
from .test_bpbfm_online import _chunks  # noqa: E402

#: 300-entry minibatches in 8 chunks of ~38 entries (CHUNK_ENTRIES = 40 below); the last
#: minibatch of a sweep is shorter (3154 = 10 x 300 + 154 entries for BPBFM-1)
KW = {"inference": "online", "batch_size": 300, "max_iter": 4, "burn_in": 2,
      "evaluate_every": 2, "random_state": 3}
MODELS = {1: None, 2: 3}
STATE = ("g", "g_total", "G", "eta", "eta_total", "d", "eps", "stat_entity", "stat_cells",
         "stat_rm", "kernel_rng")


@pytest.fixture(scope="module")
def small_chunks():
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(inference, "CHUNK_ENTRIES", 40)
        yield


@pytest.fixture(scope="module")
def planted():
    return {model: _planted(model=model)[0] for model in MODELS}


def assert_same_fit(a, b) -> None:
    """Every state array and stream, the published estimates and the trace (all but the
    timings and the Dask byte counts)."""
    for name in STATE:
        np.testing.assert_array_equal(getattr(a.state_, name), getattr(b.state_, name),
                                      err_msg=name)
    for name in ("stat_scale", "n_items", "updates", "iteration"):
        assert getattr(a.state_, name) == getattr(b.state_, name), name
    for name in ("global_rng", "batch_rng"):
        assert generator_state(getattr(a.state_, name)) == \
            generator_state(getattr(b.state_, name)), name
    for name in ("embedding_", "relation_matrices_", "samples_embedding_",
                 "samples_relation_matrices_", "factor_weights_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    keys = {k for k in a.trace_ if k != "seconds" and not k.startswith("bytes_")}
    assert keys == {k for k in b.trace_ if k != "seconds" and not k.startswith("bytes_")}
    for key in keys:
        np.testing.assert_array_equal(a.trace_[key], b.trace_[key], err_msg=key)


# ---------------------------------------------------------------------- the chunk task
@pytest.mark.parametrize("model", [1, 2])
def test_chunk_tasks_merge_into_chunked_counts(small_chunks, planted, model):
    """count_chunk on each chunk's arguments, added back in chunk order, is
    chunked_counts of the whole minibatch (counts, total and advanced streams); and a
    chunk's payload holds only its own entities and relations."""
    data = BPBFMData.from_tensor(planted[model], True)
    online = BPBFMOnline(3, MODELS[model], batch_size=300)
    state = online.init(data, np.random.default_rng(0))
    captured = {}

    def capture(groups, g, L, G, terms, rm_shape, streams):
        captured["args"] = (groups, g, L, G, terms, rm_shape)
        captured["streams"] = streams.copy()
        return chunked_counts(groups, g, L, G, terms, rm_shape, False, streams, 1)

    online.chunk_counts = capture
    batch = np.random.default_rng(1).permutation(data.n_entries)[:300]
    *_, n_ent, x_cells, x_rm, total = online.minibatch_counts(state, data, batch)
    groups, g, L, G, terms, rm_shape = captured["args"]
    streams = captured["streams"]
    assert streams.shape[0] == groups.n_chunks == 8
    ne, xc, xr, tot = np.zeros_like(n_ent), np.zeros_like(x_cells), np.zeros_like(x_rm), 0
    for b in range(8):
        args, (ents, crels, mats) = chunk_arguments(groups, g, L, G, terms, rm_shape, b)
        assert ents.size < g.shape[0] and crels.size <= L.shape[0]
        assert args[1].shape == (ents.size, 3)
        part = count_chunk(*args, False, streams[b])
        ne[ents] += part[0]
        xc[mats] += part[1]
        if rm_shape[0]:
            xr[np.ix_(crels, mats)] += part[2]
        tot += part[3]
        streams[b] = part[4]
    np.testing.assert_array_equal(ne, n_ent)
    np.testing.assert_array_equal(xc, x_cells)
    np.testing.assert_array_equal(xr, x_rm)
    assert tot == total > 0
    np.testing.assert_array_equal(streams, state.kernel_rng)


@pytest.mark.parametrize("size", [5, 300])
def test_minibatch_outside_a_session(small_chunks, planted, client2, size):
    """A minibatch step outside a run (connects for the step), empty chunks included (5
    entries in 8 chunks): the same draws as the sequential step."""
    data = BPBFMData.from_tensor(planted[2], True)
    seq = BPBFMOnline(3, 3, batch_size=300)
    dsk = BPBFMOnline(3, 3, batch_size=300, executor=DaskExecutor(client2))
    a = seq.init(data, np.random.default_rng(4))
    b = dsk.init(data, np.random.default_rng(4))
    batch = np.arange(size)
    seq.minibatch_step(a, data, batch, 0.5)
    info = dsk.minibatch_step(b, data, batch, 0.5)
    for name in STATE:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert info["bytes_sent"] > 21 * size and info["bytes_received"] > 0
    assert dsk.executor.n_rounds == 1 and dsk.executor.client is None


# ---------------------------------------------------------------------- streams, files
@pytest.mark.parametrize("model", [1, 2])
def test_partial_fit_same_stream(small_chunks, planted, client2, model):
    train = planted[model]
    kw = {"n_dictionary": MODELS[model], "inference": "online", "batch_size": 100,
          "random_state": 0}
    seq = BilinearPoissonFactorModel(3, **kw)
    dsk = BilinearPoissonFactorModel(3, executor=client2, **kw)
    for chunk in _chunks(train, 3, np.random.default_rng(1)):
        seq.partial_fit(chunk)
        dsk.partial_fit(chunk)
        assert_same_fit(seq, dsk)
    assert dsk.trace_["bytes_sent"].shape == (3,) and np.all(dsk.trace_["bytes_sent"] > 0)


def test_a_loaded_model_continues_its_stream_on_dask(small_chunks, planted, client2,
                                                    tmp_path):
    """partial_fit of a loaded model: the same stream in this process and on Dask."""
    train = planted[1]
    half = BilinearPoissonFactorModel(3, executor=client2, **{**KW, "max_iter": 2}).fit(train)
    chunk = next(_chunks(train, 3, np.random.default_rng(0)))
    twin = topiclink.load(half.save(tmp_path / "again.npz", full=True))
    loaded = topiclink.load(half.save(tmp_path / "bpbfm.npz", full=True))
    twin.set_params(executor=None).partial_fit(chunk)
    loaded.set_params(executor=client2).partial_fit(chunk)
    np.testing.assert_array_equal(twin.state_.g, loaded.state_.g)
