"""The paper experiments' commands check their options and paths before any data is
loaded or model fitted, with a one-line error (the library's commands:
tests/test_cli_reliability.py)."""

from __future__ import annotations

import pytest
from tests.test_cli_reliability import (
    assert_missing_path_named,
    assert_refused_before_loading,
    forbid_work,
)


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test's assertions if data is loaded, a model fitted or an experiment run."""
    import topiclink_reproductions.grtm as grtm
    import topiclink_reproductions.slda as slda

    return forbid_work(monkeypatch, [(grtm, "run_grtm_experiment"),
                                     (slda, "run_slda_experiment"),
                                     (slda, "prepare_task")])


@pytest.mark.parametrize("args, message", [
    (["experiment", "grtm", "--topics", ""], "--topics"),
    (["experiment", "grtm", "--topics", ","], "--topics"),
    (["experiment", "grtm", "--topics", "5,x"], "--topics"),
    (["experiment", "grtm", "--topics", "1"], "--topics"),
    (["experiment", "grtm", "--topics", "1000000000000"], "memory"),
    (["experiment", "grtm", "--models", ""], "--models"),
    (["experiment", "grtm", "--c", ""], "--c"),
    (["experiment", "grtm", "--c", "a,b"], "--c"),
    (["experiment", "grtm", "--c", "-1"], "--c"),
    (["experiment", "grtm", "--folds", "1"], "--folds"),
    (["experiment", "grtm", "--only-folds", "7"], "--only-folds"),
    (["experiment", "grtm", "--only-folds", ","], "--only-folds"),
    (["experiment", "grtm", "--iterations", "0"], "--iterations"),
    (["experiment", "grtm", "--negatives", "0"], "--negatives"),
    (["experiment", "grtm", "--workers", "0"], "--workers"),
    (["experiment", "slda", "--topics", ""], "--topics"),
    (["experiment", "slda", "--c", ""], "--c"),
    (["experiment", "slda", "--runs", "0"], "--runs"),
    (["experiment", "slda", "--n-jobs", "0"], "--n-jobs"),
    (["experiment", "slda", "--task", "ternary"], "--task"),
    (["experiment", "slda", "--models", ""], "--models"),
])
def test_bad_options_are_refused_before_loading(tmp_path, no_work, args, message):
    assert_refused_before_loading(args, tmp_path / "out", message, no_work)


@pytest.mark.parametrize("args", [
    ["experiment", "grtm", "--data", "{missing}"],
    ["experiment", "slda", "--data", "{missing}"],
])
def test_missing_input_paths_are_one_line(tmp_path, no_work, args):
    missing = tmp_path / "no" / "such"
    args = [a.format(missing=missing) for a in args] + ["--out", str(tmp_path / "o")]
    assert_missing_path_named(args, missing, no_work)
