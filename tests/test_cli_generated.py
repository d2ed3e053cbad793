"""``topiclink fit NAME`` generated from the estimator registry
(:mod:`topiclink.cli.estimator_commands`): one command per registered estimator, its
options from the constructor, docstring and constraint table, its name, short flags and
defaults declared by the class."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.cli.catalog import command_name
from topiclink.cli.estimator_commands import estimator_options, parameter_help
from topiclink.cli.fit import generated_commands
from topiclink.estimators.base import library_estimators

runner = CliRunner()


def test_every_library_estimator_has_a_fit_command():
    result = runner.invoke(app, ["fit", "--help"])
    assert result.exit_code == 0, result.output
    generated = generated_commands()
    assert set(generated) >= {"lda", "rtm", "lmv", "slda", "bpbfm", "dmr", "ktm",
                              "lda-regression", "var-rtm", "vslda"}
    for name, cls in library_estimators().items():
        assert generated.get(command_name(cls)) is cls, f"{name} has no fit command"
    for name in ("model", *generated):
        assert name in result.output


def test_the_cli_is_written_once():
    """No family has a hand-written fit command: cli/fit.py imports no estimator class
    (only ``fit model`` is written there), every family's command comes from the class's
    declarations."""
    import ast
    from pathlib import Path

    import topiclink.cli.fit as fit_module

    tree = ast.parse(Path(fit_module.__file__).read_text())
    imported = {alias.name for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert not imported & set(library_estimators()), imported & set(library_estimators())
    commands = [d for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                for d in node.decorator_list
                if isinstance(d, ast.Call) and getattr(d.func, "attr", "") == "command"]
    assert [ast.literal_eval(d.args[0]) for d in commands] == ["model"]


def test_options_come_from_the_constructor_docstring_and_constraints():
    from topiclink.families.ktm.estimator import KernelTopicModel
    from topiclink.families.rtm.estimator_variational import VariationalRTM

    options, left = estimator_options(KernelTopicModel)
    by_name = {o.name: o for o in options}
    assert left == ["kernel"]                      # a kernel object: --param only
    assert by_name["n_topics"].flags == ("--n-topics", "--topics", "-k")
    assert by_name["fit_tau"].flags == ("--fit-tau/--no-fit-tau",)
    assert by_name["fit_tau"].kind is bool and by_name["tau"].kind is float
    assert by_name["n_inducing"].kind == (int | None)
    assert by_name["tau"].help.startswith("Standard deviation of the noise")
    signature = inspect.signature(KernelTopicModel)
    skipped = {"random_state", "verbose", "callbacks", "kernel"}
    assert set(by_name) == set(signature.parameters) - skipped
    rtm = {o.name: o for o in estimator_options(VariationalRTM)[0]}
    assert rtm["topic_inference"].kind is str
    assert rtm["doc_topic_prior"].kind == (float | None)   # its vector form: --param


def test_every_generated_option_is_documented():
    for name, cls in generated_commands().items():
        options, _ = estimator_options(cls)
        assert options, name
        undocumented = [o.name for o in options if not o.help]
        assert not undocumented, f"fit {name}: no help for {undocumented}"


def test_parameter_help_reads_numpydoc():
    class Toy:
        """A toy.

        Parameters
        ----------
        a, b : float, default 1
            The first.  Not this.
        c : int
            Third line
            continued.

        Attributes
        ----------
        d : int
            Not a parameter.
        """

    assert parameter_help(Toy) == {"a": "The first.", "b": "The first.",
                                   "c": "Third line continued."}


def test_generated_command_fits_like_fit_model(tmp_path):
    """``fit var-rtm`` with typed options gives the model ``fit model VariationalRTM``
    gives with the same parameters as --param."""
    from topiclink import load

    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    result = runner.invoke(app, [
        "fit", "var-rtm", "--dataset", "cora", "-k", "3", "--max-iter", "2",
        "--e-step-iter", "3", "--doc-topic-prior", "0.2", "--topic-inference", "map",
        "--seed", "1", "--out", str(a), "--quiet"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, [
        "fit", "model", "VariationalRTM", "--dataset", "cora", "-k", "3", "--max-iter", "2",
        "--param", "e_step_iter=3", "--param", "doc_topic_prior=0.2",
        "--param", "topic_inference=\"map\"", "--seed", "1", "--out", str(b), "--quiet"])
    assert result.exit_code == 0, result.output
    ma, mb = load(a), load(b)
    assert ma.get_params() == mb.get_params()
    assert (ma.n_topics, ma.e_step_iter, ma.doc_topic_prior, ma.topic_inference) == (
        3, 3, 0.2, "map")
    np.testing.assert_array_equal(ma.components_, mb.components_)


def test_untouched_options_keep_the_constructor_defaults(monkeypatch):
    from topiclink.cli import fit as fit_module
    from topiclink.families.dmr.estimator import DMR

    seen = {}

    def fake(cls, params, **scaffold):
        seen.update(cls=cls, params=params, scaffold=scaffold)

    monkeypatch.setattr(fit_module, "fit_registered", fake)
    result = runner.invoke(app, ["fit", "dmr", "--dataset", "cora", "--sigma", "2"])
    assert result.exit_code == 0, result.output
    assert seen["cls"] is DMR and seen["params"] == {"sigma": 2.0}
    assert seen["scaffold"]["dataset"] == "cora" and seen["scaffold"]["source"] is None


def test_generated_command_errors_are_one_line(tmp_path):
    out = str(tmp_path / "m.npz")
    for args, message in [
            (["fit", "dmr", "--sigma", "-1"], "sigma"),
            (["fit", "ktm", "-k", "2"], "n_topics"),
            (["fit", "dmr", "--param", "bogus=1"], "DMR has no parameter 'bogus'")]:
        result = runner.invoke(app, [*args, "--dataset", "cora", "--out", out, "--quiet"])
        assert result.exit_code == 1, result.output
        assert message in result.output and "Traceback" not in result.output, result.output
    bad = runner.invoke(app, ["fit", "dmr", "--sigma", "abc", "--dataset", "cora"])
    assert bad.exit_code == 2 and "Invalid value for '--sigma'" in bad.output
    assert runner.invoke(app, ["fit", "no-such-model"]).exit_code == 2


def test_a_new_estimator_gets_its_command_by_registering(tmp_path):
    """The throwaway GSDMM of tests/examples declares ``cli_name`` and a short flag and
    touches nothing of the CLI."""
    import tests.examples.dmm.estimator  # noqa: F401
    from topiclink import load

    assert "dmm" in generated_commands()
    out = tmp_path / "dmm.npz"
    result = runner.invoke(app, ["fit", "dmm", "-k", "3", "-n", "3", "--average", "2",
                                 "--doc-topic-prior", "0.5", "--dataset", "cora",
                                 "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    model = load(out)
    assert (model.n_topics, model.max_iter, model.n_average, model.doc_topic_prior) == (
        3, 3, 2, 0.5)
    assert "--average" in runner.invoke(app, ["fit", "dmm", "--help"]).output


@pytest.mark.parametrize("name", ["dmr", "ktm", "lda-regression", "var-rtm", "vslda"])
def test_generated_help(name):
    result = runner.invoke(app, ["fit", name, "--help"], env={"COLUMNS": "150"})
    assert result.exit_code == 0, result.output
    assert "--out" in result.output and "--documents" in result.output


def test_scheme_with_a_shard_count(monkeypatch):
    from topiclink.cli import fit as fit_module
    from topiclink.execution import Shards

    seen = {}
    monkeypatch.setattr(fit_module, "fit_registered",
                        lambda cls, params, **scaffold: seen.update(params))
    result = runner.invoke(app, ["fit", "dmr", "--dataset", "cora", "--scheme", "adlda:3"])
    assert result.exit_code == 0, result.output
    assert seen["scheme"] == Shards("adlda", n_shards=3)
    bad = runner.invoke(app, ["fit", "dmr", "--dataset", "cora", "--scheme", "adlda:x"])
    assert bad.exit_code == 1 and "shard count after ':'" in bad.output
    assert "adlda:4" in runner.invoke(app, ["fit", "dmr", "--help-all"],   # a run setting
                                      env={"COLUMNS": "150"}).output


def _seen_params(monkeypatch) -> dict:
    from topiclink.cli import fit as fit_module

    seen: dict = {}
    monkeypatch.setattr(fit_module, "fit_registered",
                        lambda cls, params, **scaffold: seen.update(cls=cls, params=params))
    return seen


def test_class_declared_defaults_flags_and_variants(monkeypatch):
    """``cli_defaults`` fill what is not given; an option given on the command line wins,
    also when it equals the constructor's default; ``--model`` sets a paper variant's
    keywords before the options given; declared short flags work."""
    from topiclink.families.rtm.estimator import RelationalTopicModel

    seen = _seen_params(monkeypatch)
    assert runner.invoke(app, ["fit", "rtm", "--dataset", "cora"]).exit_code == 0
    assert seen["cls"] is RelationalTopicModel
    assert seen["params"] == {"n_topics": 15, "max_iter": 300, "c": 4.0,
                              "doc_topic_prior": 0.5, "n_jobs": -1}
    result = runner.invoke(app, ["fit", "rtm", "--dataset", "cora", "--c", "1",
                                 "--alpha", "0.2", "--negatives", "0.05", "-m", "Gibbs-RTM",
                                 "--loss", "hinge"])
    assert result.exit_code == 0, result.output
    assert seen["params"]["c"] == 1.0 and seen["params"]["doc_topic_prior"] == 0.2
    assert seen["params"]["negative_ratio"] == 0.05
    assert (seen["params"]["weights"], seen["params"]["loss"]) == ("diagonal", "hinge")
    # another class's paper name: the defaults it does not take are left out
    assert runner.invoke(app, ["fit", "rtm", "--dataset", "cora", "-m", "Var-RTM",
                               "-k", "3"]).exit_code == 0
    assert seen["cls"].__name__ == "VariationalRTM"
    assert seen["params"] == {"n_topics": 3, "max_iter": 300, "doc_topic_prior": 0.5}
    bad = runner.invoke(app, ["fit", "rtm", "--dataset", "cora", "-m", "Var-RTM", "--c", "2"])
    assert bad.exit_code == 1 and "VariationalRTM has no parameter 'c'" in bad.output


def test_jobs_scheduler_and_derived_defaults(monkeypatch):
    from topiclink.execution import Shards

    seen = _seen_params(monkeypatch)
    assert runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-j", "3"]).exit_code == 0
    assert seen["params"]["scheme"] == Shards("partition", 3)
    assert seen["params"]["executor"] == 3 and seen["params"]["n_topics"] == 20
    assert runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-j", "3", "--scheduler",
                               "tcp://h:1", "--shards", "4"]).exit_code == 0
    assert seen["params"]["scheme"] == Shards("adlda", 4)
    assert seen["params"]["executor"] == "tcp://h:1"
    assert runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-j", "2", "--scheme",
                               "adlda:4"]).exit_code == 0
    assert (seen["params"]["scheme"], seen["params"]["executor"]) == (Shards("adlda", 4), 2)
    bad = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "-j", "0"])
    assert bad.exit_code == 1 and "--jobs must be -1 or >= 1" in bad.output
    # BPBFM: burn-in half of the iterations unless given
    assert runner.invoke(app, ["fit", "bpbfm", "--dataset", "umls", "-n", "40"]).exit_code == 0
    assert seen["params"] == {"max_iter": 40, "burn_in": 20}
    result = runner.invoke(app, ["fit", "bpbfm", "--dataset", "umls", "-n", "40",
                                 "--burn-in", "5", "--topics", "3", "--dictionary", "4"])
    assert result.exit_code == 0, result.output
    assert seen["params"] == {"max_iter": 40, "burn_in": 5, "n_topics": 3, "n_dictionary": 4}
    helps = " ".join(runner.invoke(app, ["fit", "bpbfm", "--help"],
                                   env={"COLUMNS": "150"}).output.split())
    assert "--documents" not in helps and "--holdout" not in helps
    assert "--source" not in helps and "--input" not in helps
    assert "half of --iterations" in helps and "--components" not in helps
    assert "-m, --model" in helps      # -m is --model on every command, not --dictionary


def test_features_option_picks_metadata_columns(tmp_path, shared_datasets):
    """``--features`` exists on the commands of models fitted on document features only;
    the default kernel of KTM cannot read SOTU's string columns, and the one-line error
    names the --features that would pass; the chosen columns are the model's features."""
    from topiclink import load

    base = ["fit", "ktm", "--dataset", "sotu", "-k", "3", "-n", "1", "--quiet"]
    result = runner.invoke(app, [*base, "--out", str(tmp_path / "a.npz")])
    assert result.exit_code == 1
    line = result.stderr.strip()
    assert "\n" not in line and "features must be numbers" in line, line
    assert line.endswith("choose numeric columns with --features year"), line
    result = runner.invoke(app, [*base, "--features", "yeer"])
    assert result.exit_code == 1
    assert result.stderr.strip() == ("error: --features: dataset 'sotu' has no metadata "
                                     "column 'yeer'; its columns: president, year, "
                                     "years_active, party, sotu_type"), result.stderr
    out = tmp_path / "b.npz"
    result = runner.invoke(app, [*base, "--features", "year", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert load(out).features_.shape == (240, 1)
    lda = runner.invoke(app, ["fit", "lda", "--dataset", "cora", "--features", "year"])
    assert lda.exit_code == 2 and "--features" in lda.output
