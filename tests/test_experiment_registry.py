"""The protocol registry (``topiclink.experiments.registry``) and the commands generated
from it: every paper protocol registers itself in its own module of the reproductions
(found through its entry point), without any ``topiclink experiment`` says in one line
that none is installed, ``cli/experiment.py`` has no per-protocol code, a checkpoint
folder of the hand-written commands is accepted for the same flags, and the throwaway
``dmm`` protocol of ``tests/examples`` becomes ``topiclink experiment dmm`` by being
imported."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.experiments.registry import (
    ProtocolSpec,
    documents,
    get_protocol,
    option,
    option_fields,
    protocols,
    register_protocol,
    shared,
    unregister_protocol,
)

runner = CliRunner()
SRC = Path(__file__).resolve().parents[1] / "src" / "topiclink"

#: protocol -> the module that defines it (in the reproductions, reproductions/)
MODULES = {"grtm": "topiclink_reproductions.grtm",
           "slda": "topiclink_reproductions.slda",
           "lmv": "topiclink_reproductions.lmv",
           "lmv-kdd": "topiclink_reproductions.lmv_kdd",
           "lmv-simulation": "topiclink_reproductions.lmv_simulation",
           "bpbfm": "topiclink_reproductions.bpbfm",
           "ktm": "topiclink_reproductions.ktm",
           "ktm-graph": "topiclink_reproductions.ktm_graph"}

#: protocol -> the command that runs it
BUILT_IN = {"grtm": "grtm", "slda": "slda", "lmv": "lmv", "lmv-kdd": "lmv",
            "lmv-simulation": "lmv-simulation", "bpbfm": "bpbfm", "ktm": "ktm",
            "ktm-graph": "ktm"}


def test_every_protocol_registers_from_its_own_module():
    from topiclink.experiments.registry import installed

    found = protocols()
    assert set(BUILT_IN) <= set(found)
    assert {name: installed()[name] for name in BUILT_IN} == MODULES   # the entry points
    for name in BUILT_IN:
        spec = found[name]
        module = MODULES[name]
        for step in (spec.check, spec.load, spec.run, spec.report):
            assert step.__module__ == module, (name, step)
        assert (spec.options is None) == (BUILT_IN[name] != name)


def test_the_cli_has_no_protocol_code():
    """A grep-level fact: no command body, no protocol name in ``cli/experiment.py``."""
    text = (SRC / "cli" / "experiment.py").read_text()
    assert not re.search(r"def experiment_\w+\(", text)
    for name in BUILT_IN:
        assert not re.search(rf"[\"']{re.escape(name)}[\"']", text), name
        assert f"experiments.{name.replace('-', '_')}" not in text, name


def test_commands_take_their_options_from_the_dataclass():
    from topiclink.cli.experiment import protocol_command

    result = runner.invoke(app, ["experiment", "--help"])
    assert result.exit_code == 0, result.output
    for name in set(BUILT_IN.values()):
        assert f"  {name} " in result.output, name
        spec = get_protocol(name)
        command = protocol_command(spec)
        params = list(command.__signature__.parameters)     # type: ignore[attr-defined]
        fields = [f.name for f, info, _ in option_fields(spec.options) if not info.documents]
        assert [p for p in params if p in fields] == fields
        assert {"checkpoint_dir", "checkpoint_every"} <= set(params)
        assert command.__name__ == f"experiment_{name.replace('-', '_')}"
    lmv = list(protocol_command(get_protocol("lmv")).__signature__.parameters)
    assert "documents" in lmv and "edges" in lmv and "source" not in lmv


# grid.json settings written by the hand-written commands (topiclink 0.1, before the
# registry) for the flags beside them
OLD_SETTINGS = [
    (["lmv", "--dataset", "hepth", "--protocol", "kdd", "--topics", "20", "--eta", "0.5",
      "--models", "LMVS(t)", "--n-jobs", "2"],
     {"command": "experiment_lmv", "dataset": "hepth", "data": None, "folds": 5,
      "only_folds": None, "topics": "20", "eta": "0.5", "models": "LMVS(t)",
      "max_iter": None, "seed": 0, "protocol": "kdd", "split": None, "cutoff": None,
      "documents": None, "edges": None, "id_column": "id", "text_column": "text",
      "title_column": None, "label_column": None, "time_column": None,
      "time_format": None, "id_rule": None, "edge_direction": "source-cites-target",
      "stemmer": "none", "stop_words": "english", "min_df": 1, "max_features": None,
      "max_lost": 0.01, "newer_citations": "error"}),
    (["lmv-simulation"],
     {"command": "experiment_lmv_simulation", "replicates": 20,
      "models": "LMV,LMVS,PLLDA,RTM,LDA+Reg", "n_docs": 3000, "n_train": 2000,
      "doc_length": 100, "max_iter": None, "seed": 0}),
    (["grtm", "--topics", "5", "--c", "2,3"],
     {"command": "experiment_grtm", "dataset": None, "data": None, "folds": 5,
      "only_folds": None, "topics": "5", "models":
      "Gibbs-gRTM,Gibbs-RTM,Gibbs-gMMRTM,Gibbs-MMRTM,Var-RTM", "c": "2,3",
      "iterations": 400, "alpha": 0.5, "var_rtm_alpha": 0.1, "negatives": 0.01,
      "seed": 0}),
]


@pytest.mark.parametrize("args, settings", OLD_SETTINGS, ids=lambda a: str(a)[:20])
def test_a_checkpoint_folder_of_the_old_commands_is_accepted(tmp_path, args, settings):
    """Same flags: the folder is accepted (the run stops at --workers 0, which is not a
    setting); another value: refused, naming it."""
    folder = tmp_path / "ck"
    folder.mkdir()
    (folder / "grid.json").write_text(json.dumps(
        {"format": "topiclink-grid-checkpoint", "version": 1, "settings": settings}))
    common = ["--workers", "0", "--checkpoint-dir", str(folder), "--out",
              str(tmp_path / "o"), "--quiet"]
    result = runner.invoke(app, ["experiment", *args, *common])
    assert result.exit_code == 1
    assert result.stderr.strip() == "error: --workers must be >= 1, got 0", result.stderr
    result = runner.invoke(app, ["experiment", *args, "--seed", "7", *common])
    assert "belongs to a run with seed=0, this run has 7" in result.stderr, result.stderr


def test_registry_refusals():
    with pytest.raises(ValueError, match="unknown protocol 'nope'"):
        get_protocol("nope")
    with pytest.raises(ValueError, match="unknown shared option"):
        shared("colour")
    grtm = get_protocol("grtm")
    with pytest.raises(ValueError, match="already registered"):
        register_protocol(dataclasses.replace(grtm, run=_run_nothing))

    @dataclasses.dataclass
    class Options:
        files: object = documents()

    with pytest.raises(ValueError, match="named source"):
        ProtocolSpec(name="x", options=Options, check=_run_nothing, load=_run_nothing,
                     run=_run_nothing, report=_run_nothing)
    with pytest.raises(TypeError, match="not a dataclass"):
        ProtocolSpec(name="x", options=dict, check=_run_nothing, load=_run_nothing,
                     run=_run_nothing, report=_run_nothing)


def _run_nothing(*args):
    return None


def test_without_protocols_the_command_says_how_to_install_them(monkeypatch):
    """No distribution provides a protocol (the library alone): one line, exit 1, and the
    listing says the same; ``topiclink --help`` imports no protocol."""
    import subprocess
    import sys

    import topiclink.experiments.registry as registry

    monkeypatch.setattr(registry, "_REGISTRY", {})
    monkeypatch.setattr(registry, "installed", dict)
    result = runner.invoke(app, ["experiment", "grtm", "--help"])
    assert result.exit_code == 1
    assert result.stderr.strip() == f"error: {registry.NOT_INSTALLED}", result.stderr
    assert "pip install -e ./reproductions" in registry.NOT_INSTALLED
    listing = runner.invoke(app, ["experiment", "--help"])
    assert listing.exit_code == 0 and registry.NOT_INSTALLED in " ".join(
        listing.output.split())
    with pytest.raises(ValueError, match="no paper protocols are installed"):
        get_protocol("grtm")
    code = ("import sys; from topiclink.cli.app import main; sys.argv = ['topiclink', "
            "'--help']\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('topiclink_reproductions')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().endswith("[]"), out


def test_option_declares_flags_and_help():
    @dataclasses.dataclass
    class Options:
        max_iter: int | None = option(None, "--max-iter", "-n", help="Sweeps.",
                                      show_default=False)

    [(field, info, kind)] = option_fields(Options)
    assert (field.name, field.default, kind) == ("max_iter", None, int | None)
    assert (info.flags, info.help, info.show_default) == (("--max-iter", "-n"), "Sweeps.",
                                                          False)


@pytest.fixture
def dmm_protocol():
    import tests.examples.dmm.protocol as module

    register_protocol(module.SPEC, replace=True)
    yield module
    unregister_protocol("dmm")


def test_the_worked_example_becomes_a_command(dmm_protocol, tmp_path):
    """``tests/examples/dmm/protocol.py`` registers a protocol; ``topiclink experiment
    dmm`` appears in the listing and runs on a tiny grid, checkpoint folder included,
    with no edit of the command line."""
    listing = runner.invoke(app, ["experiment", "--help"])
    assert "  dmm " in listing.output and "GSDMM" in listing.output
    help_text = runner.invoke(app, ["experiment", "dmm", "--help"]).output
    for flag in ("--topics", "--folds", "--iterations", "-n", "--dataset", "--workers",
                 "--checkpoint-dir", "--force", "--quiet"):
        assert flag in help_text, flag
    out, ck = tmp_path / "out", tmp_path / "ck"
    args = ["experiment", "dmm", "--dataset", "cora", "--topics", "2,3", "--folds", "2",
            "-n", "2", "--out", str(out), "--checkpoint-dir", str(ck), "--quiet"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "dmm_results.csv")
    assert len(table) == 4 and set(table["K"]) == {2, 3} and (table["perplexity"] > 1).all()
    for name in ("dmm_summary.csv", "dmm_perplexity.png"):
        assert (out / name).is_file(), name
    assert "lowest held-out perplexity" in result.output
    assert json.loads((ck / "grid.json").read_text())["settings"]["command"] == \
        "experiment_dmm"
    again = runner.invoke(app, args)       # every cell finished: rows from the folder
    assert again.exit_code == 0 and "resuming from" in again.output, again.output
    pd.testing.assert_frame_equal(pd.read_csv(out / "dmm_results.csv"), table)
    refused = runner.invoke(app, args[:-3] + ["--quiet"])
    assert refused.exit_code == 1 and "--force" in refused.stderr
    bad = runner.invoke(app, ["experiment", "dmm", "--topics", "1", "--out",
                              str(tmp_path / "x")])
    assert bad.stderr.strip() == "error: --topics values must be >= 2, got 1"
