"""Model files are validated on load: every corrupt, truncated or edited file is one line
naming the file and the member, never a traceback, a segfault or a replaced method."""

from __future__ import annotations

import io
import os
import stat

import numpy as np
import pytest

import topiclink
from tests.fuzz.cases_files import members as _members
from tests.fuzz.cases_files import write as _write
from topiclink.datasets import make_rtm_data


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    (corpus, links), _ = make_rtm_data(n_docs=40, n_words=30, n_topics=3, doc_length=20,
                                       random_state=1)
    folder = tmp_path_factory.mktemp("models")
    y = np.arange(corpus.n_docs) % 2
    models = {
        "lda": topiclink.LDA(3, max_iter=3, random_state=0).fit(corpus),
        "rtm": topiclink.RelationalTopicModel(3, max_iter=3, negative_ratio=0.1,
                                              random_state=0).fit(corpus, links=links),
        "slda": topiclink.SupervisedTopicModel(3, max_iter=3, random_state=0).fit(corpus, y),
        "varrtm": topiclink.VariationalRTM(3, max_iter=3, random_state=0).fit(
            corpus, links=links),
    }
    return {name: m.save(folder / f"{name}.npz", full=True) for name, m in models.items()}


def _edits(header, arrays):
    """(description, expected message fragment, header, arrays) for edited files."""
    comps = arrays["components_"]
    yield "fewer topic columns than words", "components_", header, {
        **arrays, "components_": comps[:, :-3] / comps[:, :-3].sum(axis=1, keepdims=True)}
    yield "missing components_", "required array 'components_'", header, {
        k: v for k, v in arrays.items() if k != "components_"}
    yield "NaN topic", "NaN", header, {**arrays, "components_": np.where(
        np.arange(comps.size).reshape(comps.shape) == 0, np.nan, comps)}
    yield "negative topic", ">= 0", header, {**arrays, "components_": comps - 1.0}
    yield "rows not summing to one", "sum to 1", header, {**arrays, "components_": comps * 2}
    yield "a member named transform", "unknown member 'transform'", header, {
        **arrays, "transform": np.zeros(3)}
    yield "object-free text topics", "dtype", header, {
        **arrays, "components_": comps.astype(str)}
    yield "more topics than n_topics", "K", header, {
        **arrays, "components_": np.vstack([comps, comps[:1]])}
    yield "vocabulary of numbers", "dtype", header, {
        **arrays, "vocabulary_": np.arange(comps.shape[1])}
    yield "3-D topics", "dimensions", header, {**arrays, "components_": comps[None]}
    yield "unknown parameter", "unknown parameter 'bogus'", {
        **header, "params": {**header["params"], "bogus": 1}}, arrays
    yield "invalid parameter", "n_topics must be", {
        **header, "params": {**header["params"], "n_topics": -1}}, arrays
    yield "parameter of the wrong type", "max_iter must be", {
        **header, "params": {**header["params"], "max_iter": "many"}}, arrays
    yield "params not an object", "'params'", {**header, "params": [1, 2]}, arrays
    yield "no class", "'class'", {k: v for k, v in header.items() if k != "class"}, arrays
    yield "unknown class", "unknown model class", {**header, "class": "NoSuchModel"}, arrays
    yield "unknown attribute", "unknown attribute 'fit'", {
        **header, "attributes": {**header["attributes"], "fit": 3}}, arrays
    yield "attribute that is a list", "number or text", {
        **header, "attributes": {**header["attributes"], "n_iter_": [1, 2]}}, arrays
    yield "future format version", "format version", {**header, "format_version": 99}, arrays
    yield "other format", "not a topiclink model file", {**header, "format": "x"}, arrays
    if "state" in header:
        yield "state without fields", "saved sampler state is invalid", {
            **header, "state": {"class": header["state"]["class"]}}, arrays
        yield "state of another class", "saved sampler state is invalid", {
            **header, "state": {**header["state"], "class": "Other"}}, arrays
    yield "trace of text", "dtype", header, {
        **arrays, "trace_/log_likelihood": np.array(["a", "b"])}


@pytest.mark.parametrize("model", ["lda", "rtm", "slda", "varrtm"])
def test_edited_files_are_one_line_errors(model, saved, tmp_path):
    header, arrays = _members(saved[model])
    n_cases = 0
    for i, (what, fragment, h, a) in enumerate(_edits(header, arrays)):
        if what == "more topics than n_topics" and model == "slda":
            continue                         # slda's components_ is the first chain's
        path = _write(tmp_path / f"case{i}.npz", h, a)
        with pytest.raises(ValueError) as info:
            topiclink.load(path)
        message = str(info.value)
        assert "\n" not in message, what
        assert fragment in message and str(path) in message, f"{what}: {message}"
        n_cases += 1
    assert n_cases >= 20


def test_header_and_members_must_agree(saved, tmp_path):
    header, arrays = _members(saved["lda"])
    path = _write(tmp_path / "x.npz", header, arrays, list_arrays=False)   # header as saved
    assert topiclink.load(path).components_.shape == arrays["components_"].shape
    listed = {**header, "arrays": {**header["arrays"],
                                   "ghost": {"shape": [1], "dtype": "float64"}}}
    with pytest.raises(ValueError, match="'ghost' is listed in the header but absent"):
        topiclink.load(_write(tmp_path / "y.npz", listed, arrays, list_arrays=False))
    wrong = {**header, "arrays": {**header["arrays"],
                                  "alpha_": {"shape": [7], "dtype": "float64"}}}
    with pytest.raises(ValueError, match="'alpha_' has shape"):
        topiclink.load(_write(tmp_path / "z.npz", wrong, arrays, list_arrays=False))


@pytest.mark.parametrize("kind", ["truncated", "empty", "random", "text", "directory",
                                  "npy", "header not json", "header not an object"])
def test_unreadable_files_are_one_line_errors(kind, saved, tmp_path):
    good = saved["lda"].read_bytes()
    path = tmp_path / "bad.npz"
    if kind == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "random":
        path.write_bytes(np.random.default_rng(0).bytes(4096))
    elif kind == "text":
        path.write_text("this is not a model\n")
    elif kind == "directory":
        path.mkdir()
    elif kind == "npy":
        np.save(path.with_suffix(".npy"), np.ones(3))
        path = path.with_suffix(".npy")
    else:
        raw = b"{not json" if kind == "header not json" else b"[1, 2]"
        buf = io.BytesIO()
        np.savez(buf, __header__=np.frombuffer(raw, np.uint8))
        path.write_bytes(buf.getvalue())
    with pytest.raises(ValueError) as info:
        topiclink.load(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_a_valid_file_still_loads_and_resumes(saved):
    model = topiclink.load(saved["rtm"])
    assert model.state_.iteration == 3


def test_saved_models_follow_the_umask(saved, tmp_path):
    model = topiclink.load(saved["lda"])
    old = os.umask(0o022)
    try:
        path = model.save(tmp_path / "mode.npz")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_failed_save_leaves_the_old_file_and_no_temporary(saved, tmp_path, monkeypatch):
    import topiclink.persistence as persistence

    model = topiclink.load(saved["lda"])
    path = model.save(tmp_path / "keep.npz")
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(persistence.os, "replace", broken)
    with pytest.raises(OSError, match="No space"):
        model.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.npz"]


def test_killing_a_save_never_corrupts_the_model_file(saved, tmp_path):
    """A child re-saves a model in a loop; it is killed at 8 random moments, and the file
    must load every time (write to a temporary file, then an atomic rename)."""
    import signal
    import subprocess
    import sys
    import time

    target = tmp_path / "m.npz"
    target.write_bytes(saved["rtm"].read_bytes())
    script = (f"import topiclink\nm = topiclink.load({str(saved['rtm'])!r})\n"
              f"while True:\n    m.save({str(target)!r}, full=True)\n")
    rng = np.random.default_rng(0)
    for _ in range(8):
        child = subprocess.Popen([sys.executable, "-c", script])
        time.sleep(1.5 + float(rng.random()))
        child.send_signal(signal.SIGKILL)
        child.wait()
        assert topiclink.load(target).state_ is not None
    leftovers = [p for p in tmp_path.iterdir() if p.name != "m.npz"]
    assert all(p.name.startswith(".m.npz.") for p in leftovers)   # only orphaned temps


# ---------------------------------------------------------------------- every estimator
#: saved float arrays whose values are genuinely unbounded (only "finite" applies)
_UNBOUNDED = {"coef_", "weights_", "lambda_", "features_", "messages_mean_", "prior_mean_",
              "kernel_theta_"}


def _all_estimators():
    from tests.fuzz.cases_models import names

    return names()


@pytest.mark.parametrize("name", _all_estimators())
def test_every_saved_array_has_a_value_range(name):
    """Audit: a saved float array is finite and, unless it is an unbounded coefficient,
    has a range (probabilities, rows summing to 1, positive scales)."""
    cls = topiclink.estimators.base.registered_estimators()[name]
    for member in (*cls._saved_arrays, *cls._saved_optional):
        spec = cls._array_specs.get(member)
        assert spec is not None, f"{name}.{member} has no ArraySpec"
        if spec.kind != "f":
            continue
        assert spec.check is not None, f"{name}.{member} is not even checked finite"
        assert spec.check != "finite" or member in _UNBOUNDED, \
            f"{name}.{member}: only 'finite' -- give it a range"


@pytest.mark.parametrize("name", _all_estimators())
def test_perturbed_saved_arrays_of_every_estimator_are_refused(name, tmp_path):
    """Each saved array of each registered estimator, shifted by 5, scaled by 50, with a
    NaN or negated: where that leaves its declared range, load refuses in one line
    naming the member; scalars that are NaN or negative where they must not be, and
    edited size parameters, likewise."""
    from tests.fuzz.cases_models import _PERTURB, _expect, saved
    from tests.fuzz.cases_models import fitted as fitted_model

    cls = type(fitted_model(name))
    header, arrays = _members(saved(name))
    n_refused = 0
    for member, value in sorted(arrays.items()):
        if "/" in member or value.dtype.kind != "f" or not value.size:
            continue
        for kind, perturb in _PERTURB.items():
            path = _write(tmp_path / f"{member}-{kind}.npz", header,
                          {**arrays, member: perturb(value)})
            if _expect(cls._array_specs[member].check, kind, value) != "error":
                continue
            with pytest.raises(ValueError) as info:
                topiclink.load(path)
            message = str(info.value)
            assert "\n" not in message and repr(member) in message, (kind, message)
            n_refused += 1
    for attr, value in header["attributes"].items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            edited = {**header, "attributes": {**header["attributes"], attr: float("nan")}}
            with pytest.raises(ValueError, match=repr(attr)):
                topiclink.load(_write(tmp_path / f"{attr}.npz", edited, arrays))
    size = "n_topics"
    edited = {**header, "params": {**header["params"], size: header["params"][size] + 1}}
    with pytest.raises(ValueError, match="K"):
        topiclink.load(_write(tmp_path / "size.npz", edited, arrays))
    assert n_refused >= 4
    assert type(topiclink.load(saved(name))).__name__ == name


def test_the_reported_edits_are_refused(tmp_path):
    from tests.fuzz.cases_models import saved

    def load(name, header_edit=None, **arrays_edit):
        header, arrays = _members(saved(name))
        if header_edit:
            header = header_edit(header)
        arrays = {**arrays, **{k: f(arrays[k]) for k, f in arrays_edit.items()}}
        with pytest.raises(ValueError) as info:
            topiclink.load(_write(tmp_path / f"{name}.npz", header, arrays))
        return str(info.value)

    assert "'visibility_'" in load("VisibilityTopicModel", visibility_=lambda v: v + 5)
    assert "'blockmodel_'" in load("VisibilityTopicModel", blockmodel_=lambda v: v * 50)
    assert "'intercept_'" in load("LDARegression", lambda h: {
        **h, "attributes": {**h["attributes"], "intercept_": float("nan")}})
    assert "'tau_' must be a finite number > 0" in load("KernelTopicModel", lambda h: {
        **h, "attributes": {**h["attributes"], "tau_": -1}})
    assert "K" in load("BilinearPoissonFactorModel", lambda h: {
        **h, "params": {**h["params"], "n_topics": h["params"]["n_topics"] + 3}})
    assert "n_dictionary" in load("BilinearPoissonFactorModel", lambda h: {
        **h, "params": {**h["params"], "n_dictionary": 4}})
