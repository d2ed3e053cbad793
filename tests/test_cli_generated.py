"""``topiclink fit NAME`` generated from the estimator registry
(:mod:`topiclink.cli.estimator_commands`): one command per registered estimator without a
hand-written one, its options from the constructor, docstring and constraint table."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.cli.estimator_commands import command_name, estimator_options, parameter_help
from topiclink.cli.fit import HAND_WRITTEN, generated_commands
from topiclink.models.base import library_estimators

runner = CliRunner()


def test_every_library_estimator_has_a_fit_command():
    result = runner.invoke(app, ["fit", "--help"])
    assert result.exit_code == 0, result.output
    generated = generated_commands()
    assert set(generated) >= {"dmr", "ktm", "lda-regression", "var-rtm", "vslda"}
    for name, cls in library_estimators().items():
        covered = name in HAND_WRITTEN.values() or command_name(cls) in generated
        assert covered, f"{name} has no fit command"
        assert (name in HAND_WRITTEN.values()) != (command_name(cls) in generated)
    for name in (*HAND_WRITTEN, "model", *generated):
        assert name in result.output


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
    assert by_name["tau"].help.startswith("Starting standard deviation")
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
    assert "adlda:4" in runner.invoke(app, ["fit", "dmr", "--help"],
                                      env={"COLUMNS": "150"}).output
