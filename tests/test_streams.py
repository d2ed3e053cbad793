"""Streams through the engine (issue 25, item 3): ``partial_fit`` of LMVS and online BPBFM
is ``Estimator._run_partial`` -> ``engine.run_partial`` -> ``OnlineAlgorithm.partial_step``,
and the stream seen so far lives in the sampler state.

- every chunk sequence (and plain fit) of ``tests/golden/record_stream.py`` gives the
  outputs recorded before the change (on a 2-core AMD EPYC, where they were equal bit for
  bit): integer arrays exactly, floats to a norm-wise ``RTOL_FLOAT`` (below: why);
- a model saved with ``save(path, full=True)`` mid-stream, loaded and fed the remaining
  chunks equals the uninterrupted one *of the same process* bit for bit; the stream is in
  the state;
- fit then partial_fit; callbacks and the BLAS controller of the engine;
- the errors: wrong vocabulary size, partial_fit on batch models, on models saved without
  their state, on states that keep no stream.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
import scipy.sparse as sp

import topiclink
from tests.golden.record_stream import (
    CONFIGS,
    OUTPUT,
    _bpbfm,
    _lmvs,
    bpbfm_chunks,
    bpbfm_tensor,
    lmv_chunks,
    lmv_data,
    outputs,
)
from topiclink.data import DataError
from topiclink.families.lmv.stochastic import LMVSState
from topiclink.inference import engine
from topiclink.inference.engine import state_from_saved, state_to_saved


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    with np.load(OUTPUT) as z:
        return {k: z[k] for k in z.files}


def _recorded(golden: dict[str, np.ndarray], name: str) -> dict[str, np.ndarray]:
    return {k.split("/", 1)[1]: v for k, v in golden.items() if k.startswith(f"{name}/")}


#: Norm-wise relative tolerance of the recorded floats against this machine's.  The
#: recording holds LMVS's variational parameters and BPBFM's Gamma / Dirichlet draws; both
#: pass through NumPy reductions and BLAS products whose rounding depends on the kernels
#: OpenBLAS and NumPy's SIMD dispatch pick for the CPU (tests/test_golden.py measured
#: 1e-16 to 1e-10 between an Intel and an AMD machine).  Each such call is backward stable
#: (about K * eps ~ 1e-15 here, K <= 6) and the updates are smooth maps of their inputs:
#: LMVS's coordinate ascent and Robbins-Monro steps (rho <= 1) do not amplify a difference,
#: BPBFM's Gamma draws depend smoothly on their rates; over the ~50 updates of a
#: configuration a difference grows to ~1e-13.  1e-9 leaves four orders of margin and
#: still fails on any real change (a changed seed moves them by > 1e-2:
#: test_the_comparison_can_fail).  The integer arrays (latent counts, entity / triple
#: indexes, iteration counters) are compared exactly: a BPBFM latent count drawn from a
#: multinomial could flip only if a uniform fell within ~1e-15 of a boundary, about 1e-10
#: over all draws, so a failure there is a finding, not noise.
RTOL_FLOAT = 1e-9


def _assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    """Bit for bit (two runs of this process)."""
    assert sorted(got) == sorted(want)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def _assert_reproduces(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    """The recording reproduced: integers exactly, floats to ``RTOL_FLOAT``."""
    assert sorted(got) == sorted(want)
    for key, recorded in want.items():
        now = np.asarray(got[key])
        assert now.shape == recorded.shape, key
        if recorded.dtype.kind in "iub" or recorded.dtype.kind in "OSU":
            np.testing.assert_array_equal(now, recorded, err_msg=f"{key} (exact)")
            continue
        np.testing.assert_array_equal(np.isnan(now), np.isnan(recorded), err_msg=key)
        finite = ~np.isnan(recorded)
        scale = float(np.max(np.abs(recorded[finite]))) if finite.any() else 0.0
        np.testing.assert_allclose(now[finite], recorded[finite], rtol=0.0,
                                   atol=RTOL_FLOAT * scale,
                                   err_msg=f"{key} (norm-wise rtol {RTOL_FLOAT:g})")


@functools.cache
def _uninterrupted(name: str) -> dict[str, np.ndarray]:
    """The configuration run without a save / load, in this process."""
    return outputs(name)


# ---------------------------------------------------------------------- golden
@pytest.mark.parametrize("name", CONFIGS)
def test_stream_outputs_are_unchanged(name, golden):
    _assert_reproduces(_uninterrupted(name), _recorded(golden, name))


def test_the_comparison_can_fail(golden):
    want = _recorded(golden, "lmvs_stream")
    m = _lmvs(random_state=4)
    for docs, links, _ in lmv_chunks():
        m.partial_fit(docs, links=links)
    with pytest.raises(AssertionError):
        _assert_reproduces(outputs("lmvs_stream", m), want)


# ---------------------------------------------------------------------- save / load
@pytest.mark.parametrize("name,timed", [("lmvs_stream", False), ("lmvs_stream_timed", True)])
@pytest.mark.parametrize("cut", [1, 2])
def test_lmvs_save_load_mid_stream_equals_uninterrupted(name, timed, cut, tmp_path):
    chunks = lmv_chunks(timed)
    m = _lmvs()
    for docs, links, times in chunks[:cut]:
        m.partial_fit(docs, links=links, publication_time=times)
    loaded = topiclink.load(m.save(tmp_path / "lmvs.npz", full=True))
    assert loaded.state_.chunks.tolist() == m.state_.chunks.tolist()
    np.testing.assert_array_equal(loaded.state_.doc_counts, m.state_.doc_counts)
    np.testing.assert_array_equal(loaded.state_.citations, m.state_.citations)
    for docs, links, times in chunks[cut:]:
        loaded.partial_fit(docs, links=links, publication_time=times)
    _assert_same(outputs(name, loaded), _uninterrupted(name))
    assert loaded.state_.chunks.tolist() == [0, 40, 65, 90]
    np.testing.assert_array_equal(loaded.train_doc_ids_, np.arange(90))


def test_lmvs_fit_save_load_then_stream(tmp_path):
    chunks = lmv_chunks()
    corpus, _, _ = lmv_data()
    m = _lmvs(max_iter=3).fit(corpus.subset(np.arange(40)), links=chunks[0][1])
    assert m.state_.chunks.size == 0 and m.state_.has_stream   # a fit's state streams on
    loaded = topiclink.load(m.save(tmp_path / "fit.npz", full=True))
    for docs, links, _ in chunks[1:]:
        loaded.partial_fit(docs, links=links)
    _assert_same(outputs("lmvs_fit_stream", loaded), _uninterrupted("lmvs_fit_stream"))
    assert loaded.state_.chunks.tolist() == [0, 40, 65, 90]


@pytest.mark.parametrize("name", ["bpbfm_stream", "bpbfm2_stream"])
@pytest.mark.parametrize("cut", [1, 3])
def test_bpbfm_save_load_mid_stream_equals_uninterrupted(name, cut, tmp_path):
    chunks = bpbfm_chunks()
    m = _bpbfm(n_dictionary=2 if name == "bpbfm2_stream" else None)
    for chunk in chunks[:cut]:
        m.partial_fit(chunk)
    loaded = topiclink.load(m.save(tmp_path / "bpbfm.npz", full=True))
    np.testing.assert_array_equal(loaded.state_.seen_triples, m.state_.seen_triples)
    for chunk in chunks[cut:]:
        loaded.partial_fit(chunk)
    loaded.partial_fit(chunks[1])                 # replayed: the loaded model drops it
    _assert_same(outputs(name, loaded), _uninterrupted(name))
    assert loaded.state_.chunks[-1] == loaded.state_.n_items
    assert loaded.state_.seen_triples.size == sum(int((c.values > 0).sum()) for c in chunks)


def test_bpbfm_fit_save_load_then_stream(tmp_path):
    from topiclink.data.tensor import RelationalTensor

    t = bpbfm_tensor()
    m = _bpbfm(max_iter=2, burn_in=1).fit(t)
    loaded = topiclink.load(m.save(tmp_path / "fit.npz", full=True))
    for chunk in bpbfm_chunks(3, seed=1)[:2]:
        loaded.partial_fit(RelationalTensor(chunk.heads, chunk.relations, chunk.tails,
                                            chunk.values, t.n_entities, t.n_relations))
    _assert_same(outputs("bpbfm_fit_stream", loaded), _uninterrupted("bpbfm_fit_stream"))


# ---------------------------------------------------------------------- fit, then stream
def test_fit_then_partial_fit_grows_the_fit():
    chunks = lmv_chunks()
    corpus, _, _ = lmv_data()
    m = _lmvs(max_iter=2).fit(corpus.subset(np.arange(40)), links=chunks[0][1])
    m.partial_fit(chunks[1][0], links=chunks[1][1])
    assert m.doc_topic_.shape == (65, 4) and m.n_iter_ == 3
    assert m.trace_["pairs"].size == 3 and m.stop_reason_.startswith("partial_fit")
    assert m.state_.chunks.tolist() == [0, 40, 65]
    b = _bpbfm(max_iter=2, burn_in=1).fit(bpbfm_tensor())
    n = b.state_.n_items
    b.partial_fit(bpbfm_chunks()[0])
    assert b.n_iter_ == 3 and b.state_.chunks[:2].tolist() == [0, n]


def test_partial_fit_runs_through_the_engine():
    class Recorder:
        def __init__(self):
            self.calls = []

        def on_train_begin(self, model, n_iter):
            self.calls.append(("begin", n_iter))

        def on_iteration(self, model, iteration, info):
            self.calls.append(("iteration", iteration, "seconds" in info))
            return True

        def on_train_end(self, model):
            self.calls.append(("end",))

    rec = Recorder()
    m = _lmvs(callbacks=[rec])
    docs, links, _ = lmv_chunks()[0]
    m.partial_fit(docs, links=links)
    assert rec.calls == [("begin", 1), ("iteration", 0, True), ("end",)]
    assert m.stopped_early_ and m.trace_["seconds"].size == 1
    controller = engine._CONTROLLER
    assert controller is not None
    docs, links, _ = lmv_chunks()[1]
    m.partial_fit(docs, links=links)
    assert engine._CONTROLLER is controller         # built once, not per call


def test_stream_fields_are_saved_and_default_when_absent():
    docs, links, _ = lmv_chunks()[0]
    m = _lmvs().partial_fit(docs, links=links)
    arrays, meta = state_to_saved(m.state_)
    for name in LMVSState.stream_fields:
        assert name in meta["fields"]
    # a file written before the stream was kept in the state: the fields are absent
    for name in LMVSState.stream_fields:
        meta["fields"].pop(name)
        arrays.pop(name, None)
    old = state_from_saved(LMVSState, arrays, meta)
    assert not old.has_stream and old.chunks.size == 0
    m.state_ = old
    with pytest.raises(ValueError, match="keeps no documents"):
        m.partial_fit(lmv_chunks()[1][0], links=lmv_chunks()[1][1])
    # a fit resumed on its data (e.g. from an older checkpoint) takes it as its stream
    m.set_params(max_iter=1).fit(docs, links=links, resume=True)
    assert m.state_.has_stream and m.n_iter_ == 2
    m.partial_fit(lmv_chunks()[1][0], links=lmv_chunks()[1][1])
    assert m.doc_topic_.shape == (65, 4) and m.state_.chunks.tolist() == [0, 40, 65]
    fields = {f.name for f in dataclasses.fields(LMVSState)}
    assert set(LMVSState.stream_fields) <= fields


# ---------------------------------------------------------------------- errors
def test_errors(tmp_path):
    chunks = lmv_chunks()
    docs, links, _ = chunks[0]
    with pytest.raises(ValueError, match="inference='stochastic'"):
        topiclink.VisibilityTopicModel(4).partial_fit(docs, links=links)
    m = _lmvs().partial_fit(docs, links=links)
    wrong = sp.csr_matrix(np.ones((3, docs.n_words + 1)))
    with pytest.raises(ValueError, match="columns but the model was fitted on"):
        m.partial_fit(wrong)
    with pytest.raises(DataError, match="the fit has none"):
        m.partial_fit(chunks[1][0], links=chunks[1][1], publication_time=np.ones(25))
    assert m.state_.chunks.tolist() == [0, 40]        # a refused chunk changes nothing
    loaded = topiclink.load(m.save(tmp_path / "no_state.npz"))
    with pytest.raises(ValueError, match="loaded from a file saved without it"):
        loaded.partial_fit(chunks[1][0], links=chunks[1][1])
    t = bpbfm_tensor()
    batch = _bpbfm(inference="batch", max_iter=2, burn_in=1).fit(t)
    with pytest.raises(ValueError, match="inference='online'"):
        batch.partial_fit(t)
    online = _bpbfm(max_iter=1, burn_in=0).fit(t)
    plain = topiclink.load(online.save(tmp_path / "bpbfm.npz"))
    with pytest.raises(ValueError, match="save\\(path, full=True\\)"):
        plain.partial_fit(bpbfm_chunks()[0])

