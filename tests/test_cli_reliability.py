"""The CLI checks before it fits, never prints a traceback, never overwrites a file the user
did not name, and reads bad model files as one-line errors (issue 10)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app

runner = CliRunner()


def _one_line_error(result, code: int | None = None) -> str:
    """The result failed with exactly one ``error: ...`` line on stderr, no traceback."""
    assert result.exit_code != 0, result.output
    if code is not None:
        assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def forbid_work(monkeypatch, extra=()) -> list[str]:
    """Make loading data and fitting (and the ``(module, name)`` callables of ``extra``)
    record their names and raise; the list of names called is returned."""
    import topiclink.cli.common as common
    import topiclink.cli.evaluate as evaluate
    import topiclink.cli.experiment as experiment
    import topiclink.cli.fit as fit
    import topiclink.experiments.runner as runner_mod

    calls: list[str] = []

    def spy(name):
        def called(*args, **kwargs):
            calls.append(name)
            raise RuntimeError(f"{name} must not be called")
        return called

    for module in (common, fit, experiment, evaluate):
        if hasattr(module, "load_data"):
            monkeypatch.setattr(module, "load_data", spy("load_data"))
    for module, name in [(runner_mod, "fit_model"), *extra]:
        monkeypatch.setattr(module, name, spy(name))
    return calls


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test's assertions (not the command) if data is loaded or a model fitted."""
    return forbid_work(monkeypatch)


@pytest.fixture(scope="module")
def lda_file(tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "lda.npz"
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "3", "-n", "3",
                                 "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    return out


# ------------------------------------------------------------------ 1. checks before the fit
def _bad_out_cases(tmp_path):
    ro = tmp_path / "readonly"
    ro.mkdir()
    ro.chmod(0o555)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    existing_dir = tmp_path / "folder"
    existing_dir.mkdir()
    cases = [(str(blocker / "sub" / "m.npz"), "cannot create"),
             (str(existing_dir), "is a directory"),
             ("", "--out")]
    if os.geteuid() != 0 and sys.platform != "win32":
        cases.append((str(ro / "m.npz"), "not writable"))
    return cases


@pytest.mark.parametrize("command", [["fit", "lda", "--dataset", "cora"],
                                     ["fit", "rtm", "--dataset", "cora"],
                                     ["fit", "slda", "--dataset", "poliblog-rlda"],
                                     ["fit", "model", "LDA", "--dataset", "cora"]])
def test_unwritable_out_is_refused_before_loading(tmp_path, no_work, command):
    for out, message in _bad_out_cases(tmp_path):
        result = runner.invoke(app, [*command, "--out", out, "--quiet"])
        line = _one_line_error(result)
        assert message in line, line
    assert no_work == []


@pytest.mark.parametrize("args, message", [
    (["fit", "slda", "--dataset", "poliblog-rlda", "--n-jobs", "0"], "n_jobs"),
    (["fit", "rtm", "--dataset", "cora", "--n-jobs", "0"], "n_jobs"),
    (["fit", "lda", "--dataset", "cora", "-k", "1"], "n_topics must be an integer >= 2"),
    (["fit", "lda", "--dataset", "cora", "-k", "1000000000000"], "memory"),
    (["fit", "model", "LDA", "--dataset", "cora", "-k", "1000000000000"], "memory"),
    (["fit", "lda", "--dataset", "cora", "-n", "0"], "max_iter"),
    (["fit", "lda", "--dataset", "cora", "-n", "-3"], "max_iter"),
    (["fit", "rtm", "--dataset", "cora", "-n", "0"], "max_iter"),
    (["fit", "slda", "--dataset", "poliblog-rlda", "--loss", "square"], "loss"),
    (["fit", "lda", "--dataset", "cora", "--alpha", "-1"], "prior"),
    (["fit", "rtm", "--dataset", "cora", "--holdout", "1.5"], "--holdout"),
    (["fit", "model", "LDA", "--dataset", "cora", "--holdout", "-0.1"], "--holdout"),
])
def test_bad_options_are_refused_before_loading(tmp_path, no_work, args, message):
    assert_refused_before_loading(args, tmp_path / "m.npz", message, no_work)


def assert_refused_before_loading(args: list[str], out, message: str, calls: list[str]):
    """``args --out OUT`` fails with one line naming ``message``, before any work (``calls``
    of :func:`forbid_work` empty) and without creating OUT."""
    result = runner.invoke(app, [*args, "--out", str(out), "--quiet"])
    line = _one_line_error(result)
    assert message in line, line
    assert calls == []
    assert not out.exists()


@pytest.mark.parametrize("args, message", [
    (["suggest", "{model}", "--text", "graph", "--top", "-1"], "--top"),
    (["suggest", "{model}", "--text", "graph", "--top", "0"], "--top"),
    (["suggest", "{model}", "--text", "graph", "--direction", "up"], "--direction"),
    (["evaluate", "{model}", "--dataset", "cora", "--fraction", "1"], "--fraction"),
    (["evaluate", "{model}", "--dataset", "cora", "--subset", "some"], "--subset"),
    (["info", "{model}", "--words", "-1"], "--words"),
    (["demo", "-k", "1"], "--topics"),
    (["demo", "-n", "0"], "--iterations"),
])
def test_bad_options_of_other_commands(no_work, lda_file, args, message):
    result = runner.invoke(app, [a.format(model=lda_file) for a in args])
    line = _one_line_error(result)
    assert message in line, line
    assert no_work == []


def test_memory_check_after_loading_uses_documents_and_words(tmp_path, monkeypatch):
    """K x (D + V) x 4 bytes against the machine: refused after loading, before the fit."""
    import topiclink.cli.common as common
    import topiclink.experiments.runner as runner_mod

    calls = []
    monkeypatch.setattr(runner_mod, "fit_model", lambda *a, **k: calls.append(1))
    monkeypatch.setattr(common, "memory_bytes", lambda: 50_000_000)
    # cora: 2410 documents, ~1433 words: K = 5000 needs ~77 MB of counts
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "5000",
                                 "--out", str(tmp_path / "m.npz"), "--quiet"])
    line = _one_line_error(result)
    assert "memory" in line and calls == []


# ------------------------------------------------------------------ 2. never a traceback
def test_unexpected_exception_is_one_line_and_debug_shows_it(tmp_path, monkeypatch):
    import topiclink.experiments.runner as runner_mod

    def boom(*args, **kwargs):
        raise RuntimeError("something deep\nwent wrong")

    monkeypatch.setattr(runner_mod, "fit_model", boom)
    args = ["fit", "lda", "--dataset", "cora", "-k", "2", "-n", "1", "--quiet"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "a.npz")])
    line = _one_line_error(result, code=1)
    assert "something deep" in line and "RuntimeError" in line
    result = runner.invoke(app, ["--debug", *args, "--out", str(tmp_path / "b.npz")])
    assert isinstance(result.exception, RuntimeError)


@pytest.mark.parametrize("exc, code, message", [
    (KeyboardInterrupt(), 130, "interrupted"),
    (MemoryError(), 1, "memory"),
    (TypeError("X must be a matrix"), 1, "X must be a matrix"),
    (OSError(28, "No space left on device"), 1, "No space left"),
    (EOFError(), 1, "EOFError"),
])
def test_known_exceptions_are_one_line(tmp_path, monkeypatch, exc, code, message):
    import topiclink.experiments.runner as runner_mod

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(runner_mod, "fit_model", boom)
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "2", "-n", "1",
                                 "--out", str(tmp_path / "m.npz"), "--quiet"])
    line = _one_line_error(result, code=code)
    assert message in line, line


def test_not_fitted_error_gets_its_message(tmp_path, monkeypatch):
    from sklearn.exceptions import NotFittedError

    import topiclink.experiments.runner as runner_mod

    def boom(*args, **kwargs):
        raise NotFittedError("this LDA is not fitted yet")

    monkeypatch.setattr(runner_mod, "fit_model", boom)
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "2", "-n", "1",
                                 "--out", str(tmp_path / "m.npz"), "--quiet"])
    assert "this LDA is not fitted yet" in _one_line_error(result, code=1)


def test_usage_errors_are_one_line():
    result = runner.invoke(app, ["fit", "lda", "-k", "abc"])
    line = _one_line_error(result, code=2)
    assert "--topics" in line and "integer" in line
    result = runner.invoke(app, ["fit", "lda", "--no-such-option"])
    assert "--no-such-option" in _one_line_error(result, code=2)


# ------------------------------------------------------------------ 3. bad model files
def _bad_model_files(tmp_path, good):
    data = good.read_bytes()
    files = {}
    for name, content in [("half.npz", data[: len(data) // 2]), ("empty.npz", b""),
                          ("random.npz", os.urandom(4096)),
                          ("text.npz", b"this is a text file\nnot a model\n"),
                          ("head.npz", data[:30])]:
        path = tmp_path / name
        path.write_bytes(content)
        files[name] = path
    folder = tmp_path / "dir.npz"
    folder.mkdir()
    files["dir.npz"] = folder
    return files


@pytest.mark.parametrize("command", [["info"], ["suggest", "--text", "graph"],
                                     ["evaluate", "--dataset", "cora"]])
def test_bad_model_files_are_one_line(tmp_path, lda_file, command):
    for _name, path in _bad_model_files(tmp_path, lda_file).items():
        result = runner.invoke(app, [command[0], str(path), *command[1:]])
        line = _one_line_error(result, code=1)
        assert f"error: {path}: not a readable topiclink model file (" in line, line


# ------------------------------------------------------------------ 4. no silent default
@pytest.mark.parametrize("command", [["fit", "lda"], ["fit", "rtm"], ["fit", "slda"],
                                     ["fit", "model", "LDA"]])
def test_fit_needs_explicit_data(tmp_path, no_work, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*command, "--out", "m.npz", "--quiet"])
    line = _one_line_error(result)
    assert "--dataset" in line and "--data" in line and "cora" in line
    assert no_work == [] and list(tmp_path.iterdir()) == []


def test_fit_without_out_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "2", "-n", "2",
                                 "--quiet"])
    assert result.exit_code == 0, result.output
    assert "not saved" in result.output
    assert list(tmp_path.iterdir()) == []


def test_fit_refuses_to_overwrite_without_force(tmp_path, no_work):
    out = tmp_path / "m.npz"
    out.write_bytes(b"precious")
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "--out", str(out)])
    line = _one_line_error(result)
    assert "exists" in line and "--force" in line
    assert out.read_bytes() == b"precious" and no_work == []
    # the suffix the writer adds counts too
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "--out",
                                 str(tmp_path / "m")])
    assert "exists" in _one_line_error(result)


def test_fit_force_overwrites(tmp_path):
    out = tmp_path / "m.npz"
    out.write_bytes(b"old")
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "2", "-n", "2",
                                 "--out", str(out), "--force", "--quiet"])
    assert result.exit_code == 0, result.output
    from topiclink import load

    assert load(out).n_topics == 2


def test_evaluate_csv_is_checked_before_and_not_overwritten(tmp_path, lda_file):
    csv = tmp_path / "r.csv"
    csv.write_text("keep")
    result = runner.invoke(app, ["evaluate", str(lda_file), "--dataset", "cora",
                                 "--out", str(csv)])
    assert "--force" in _one_line_error(result)
    assert csv.read_text() == "keep"


# ------------------------------------------------------------------ 5. help
COMMANDS = [[], ["fit"], ["fit", "lda"], ["fit", "rtm"], ["fit", "slda"], ["fit", "model"],
            ["experiment"], ["experiment", "grtm"], ["experiment", "slda"], ["evaluate"],
            ["suggest"], ["info"], ["models"], ["datasets"], ["demo"], ["report"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "topiclink")
def test_help_renders_without_bool_metavar(command):
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output
    assert "<bool>" not in result.output and "BOOLEAN" not in result.output


@pytest.mark.parametrize("args", [["fit", "lda", "--input", "{missing}"],
                                  ["fit", "lda", "--data", "{missing}"],
                                  ["fit", "model", "LDA", "--input", "{missing}"],
                                  ["fit", "model", "LDA", "--data", "{missing}"],
                                  ["fit", "rtm", "--data", "{missing}"],
                                  ["fit", "slda", "--data", "{missing}"],
                                  ["evaluate", "{model}", "--input", "{missing}"],
                                  ["evaluate", "{model}", "--data", "{missing}"],
                                  ["datasets", "--data-home", "{missing}"],
                                  ["suggest", "{model}", "--file", "{missing}"],
                                  ["info", "{missing}"]])
def test_missing_input_paths_are_one_line(tmp_path, lda_file, no_work, args):
    missing = tmp_path / "no" / "such"
    args = [a.format(missing=missing, model=lda_file) for a in args]
    if args[0] == "fit":
        args += ["--out", str(tmp_path / "o.npz")]
    assert_missing_path_named(args, missing, no_work)


def assert_missing_path_named(args: list[str], missing, calls: list[str]):
    """``args`` fails (exit 1) with one line saying ``missing`` is not found, before any
    work (``calls`` of :func:`forbid_work` empty)."""
    line = _one_line_error(runner.invoke(app, args), code=1)
    assert "not found" in line and str(missing) in line, line
    assert calls == []


def test_bundled_run_without_data_home_still_works(tmp_path):
    """--dataset cora (bundled) needs no data folder; the copy of a model file loads."""
    out = tmp_path / "x.npz"
    result = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-k", "2", "-n", "2",
                                 "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    copy = tmp_path / "copy.npz"
    shutil.copy(out, copy)
    assert runner.invoke(app, ["info", str(copy)]).exit_code == 0
