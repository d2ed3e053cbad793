"""BPBFM's kept posterior samples are the engine's (issue 25): a chain continued by
``fit(resume=True)``, by ``save(full=True)`` + load, or from a checkpoint of an
interrupted fit keeps exactly the samples one uninterrupted fit keeps, and a checkpoint
stores each kept sample once.

Same process, integer-seeded chains: exact comparisons."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

import topiclink
from topiclink.callbacks import LambdaCallback
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
from topiclink.families.bpbfm.synthetic import make_bpbfm_data

# samples at iterations 7, 10, 13, 16, 19 (burn_in 4, thinning 3), the latest 4 kept:
# 12 iterations hold 7 and 10, a checkpoint at 14 holds 7, 10 and 13, 20 hold 10 to 19
# (10 kept before the continuation, 7 dropped after it)
SCHEDULE = {"burn_in": 4, "thinning": 3, "max_samples": 4}
SAMPLES = ("samples_embedding_", "samples_relation_matrices_", "samples_self_scale_")


@pytest.fixture(scope="module")
def tensor():
    tensor, _ = make_bpbfm_data(30, 3, 3, random_state=9, density=0.05)
    return tensor


def _model(max_iter, self_pairs="bilinear", **kw):
    return BilinearPoissonFactorModel(3, max_iter=max_iter, self_pairs=self_pairs,
                                      random_state=3, evaluate_every=1, **SCHEDULE, **kw)


def _assert_same_samples(a, b):
    assert a.samples_embedding_.shape[0] == 4
    for name in (*SAMPLES, "embedding_", "relation_matrices_"):
        x, y = getattr(a, name), getattr(b, name)
        if x is None:
            assert y is None, name
        else:
            np.testing.assert_array_equal(x, y, err_msg=name)
    np.testing.assert_array_equal(a.state_.U, b.state_.U)


class _Interrupted(Exception):
    pass


def _interrupt_at(k):
    def f(model, iteration, info):
        if iteration + 1 == k:
            raise _Interrupted
    return LambdaCallback(f)


@pytest.fixture(scope="module", params=["bilinear", "scaled"])
def whole(request, tensor):
    return _model(20, request.param).fit(tensor)


def test_resume_keeps_the_samples_of_one_fit(whole, tensor):
    half = _model(12, whole.self_pairs).fit(tensor)
    assert half.samples_embedding_.shape[0] == 2            # iterations 7 and 10
    half.set_params(max_iter=8).fit(tensor, resume=True)
    assert half.n_iter_ == 20
    _assert_same_samples(whole, half)


def test_save_full_load_and_resume_keeps_the_samples_of_one_fit(whole, tensor, tmp_path):
    half = _model(12, whole.self_pairs).fit(tensor)
    loaded = topiclink.load(half.save(tmp_path / "half.npz", full=True))
    assert len(loaded._progress_.samples) == 2
    loaded.set_params(max_iter=8).fit(tensor, resume=True)
    _assert_same_samples(whole, loaded)


def test_a_file_of_the_older_format_resumes_with_its_samples(whole, tensor, tmp_path,
                                                            monkeypatch):
    """A full save written before the engine kept the samples with the run (its run
    header has no 'samples' member; the kept samples are the published samples_*)
    resumes as one fit, like a file of today."""
    import topiclink.estimators.base as base
    from topiclink.estimators.checkpoint import progress_to_saved

    def older(progress, previous_iter, *, samples_published=False):
        arrays, meta = progress_to_saved(progress, previous_iter)
        meta.pop("samples", None)
        return {k: v for k, v in arrays.items() if not k.startswith("run_/samples/")}, meta

    half = _model(12, whole.self_pairs).fit(tensor)
    with monkeypatch.context() as patch:
        patch.setattr(base, "progress_to_saved", older)
        path = half.save(tmp_path / "older.npz", full=True)
    loaded = topiclink.load(path)
    assert len(loaded._progress_.samples) == 2
    loaded.set_params(max_iter=8).fit(tensor, resume=True)
    _assert_same_samples(whole, loaded)


def test_a_checkpoint_of_an_interrupted_fit_keeps_the_samples_of_one_fit(whole, tensor,
                                                                         tmp_path):
    path = tmp_path / "run.npz"
    with pytest.raises(_Interrupted):
        _model(20, whole.self_pairs, callbacks=[_interrupt_at(15)]).fit(
            tensor, checkpoint=path, checkpoint_every=1)
    written = topiclink.load(path)
    assert written.n_iter_ == 14 and len(written._progress_.samples) == 3   # 7, 10, 13
    again = _model(20, whole.self_pairs).fit(tensor, checkpoint=path)
    _assert_same_samples(whole, again)


def test_a_checkpoint_of_a_resumed_fit_keeps_the_samples_of_one_fit(whole, tensor,
                                                                     tmp_path):
    """12 iterations, then 8 more checkpointed and interrupted at the chain's 15th."""
    path = tmp_path / "more.npz"
    half = _model(12, whole.self_pairs).fit(tensor)
    half.set_params(max_iter=8, callbacks=[_interrupt_at(15)])
    with pytest.raises(_Interrupted):
        half.fit(tensor, resume=True, checkpoint=path, checkpoint_every=1)
    again = topiclink.load(path).set_params(max_iter=8)
    again.n_iter_ = 12                        # the model the continuation started from
    again.fit(tensor, resume=True, checkpoint=path)
    _assert_same_samples(whole, again)


def _member_sizes(path):
    with zipfile.ZipFile(path) as zf:
        return {i.filename.removesuffix(".npy"): i.file_size for i in zf.infolist()}


def test_a_checkpoint_stores_each_kept_sample_once(tensor, tmp_path):
    """The run's kept samples are the published ``samples_*``: the checkpoint points at
    those instead of storing them again (at FB15k-237's size, 50 samples of 12 MB)."""
    path = tmp_path / "run.npz"
    model = _model(20, "scaled").fit(tensor, checkpoint=path, checkpoint_every=1)
    kept = sum(getattr(model, name).nbytes for name in SAMPLES)
    sizes = _member_sizes(path)
    assert not [k for k in sizes if k.startswith("run_/samples/")]
    assert sum(sizes[name] for name in SAMPLES) >= kept
    once = path.stat().st_size
    # the same model and progress with every sample stored twice, for the comparison
    model._samples_published_ = False
    twice = model.save(tmp_path / "twice.npz", full=True, compress=False).stat().st_size
    assert sorted(k for k in _member_sizes(tmp_path / "twice.npz")
                  if k.startswith("run_/samples/")) == [
        "run_/samples/U", "run_/samples/relation_matrices", "run_/samples/rho"]
    assert twice - once >= kept
    # both load to the same run in progress
    a, b = topiclink.load(path)._progress_, topiclink.load(tmp_path / "twice.npz")._progress_
    assert len(a.samples) == len(b.samples) == 4
    for x, y in zip(a.samples, b.samples, strict=True):
        assert sorted(x) == sorted(y) == ["U", "relation_matrices", "rho"]
        for key in x:
            np.testing.assert_array_equal(x[key], y[key])


def test_pooled_chains_save_their_run_samples_apart(tensor, tmp_path):
    """After pooling, ``samples_*`` hold every chain's samples, the run chain 0's: a full
    save stores the run's apart and loads both back."""
    model = _model(20, n_chains=2).fit(tensor)
    assert model.samples_embedding_.shape[0] == 8 and not model._samples_published_
    loaded = topiclink.load(model.save(tmp_path / "pooled.npz", full=True))
    assert loaded.samples_embedding_.shape[0] == 8
    run = loaded._progress_.samples
    assert len(run) == 4
    np.testing.assert_array_equal(np.stack([s["U"] for s in run]),
                                  model.samples_embedding_[:4])


def test_before_burn_in_the_samples_are_the_current_state(tensor):
    model = _model(6).fit(tensor)                    # the first sample: iteration 7
    assert model._progress_.samples == [] and not model._samples_published_
    np.testing.assert_array_equal(model.samples_embedding_, model.state_.U[None])
