"""Commands that compute nothing answer without importing the models: ``topiclink models``
and ``topiclink fit --help`` read the estimators' declarations from their source
(:mod:`topiclink.cli.catalog`), which must say what the imported registry says; and the
command line speaks its own words in the library's messages."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.cli.catalog import estimator_catalog
from topiclink.cli.errors import cli_wording

runner = CliRunner()

_PROBE = ("import sys; sys.argv = ['topiclink', *sys.argv[1:]]\n"
          "from topiclink.cli.app import app\n"
          "try:\n    app()\nexcept SystemExit:\n    pass\n"
          "heavy = sorted(m for m in ('numba', 'sklearn', 'scipy', 'pandas') if m in sys.modules)\n"
          "print('HEAVY', ','.join(heavy) or '-', file=sys.stderr)")


def _heavy_imports(*args: str) -> tuple[str, str]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True,
                          text=True, timeout=120)
    return proc.stdout, proc.stderr.rsplit("HEAVY", 1)[-1].strip()


@pytest.mark.parametrize("args", [["models"], ["fit", "--help"], ["--help"]])
def test_listings_import_no_numba_sklearn_or_pandas(args):
    out, heavy = _heavy_imports(*args)
    assert heavy == "-", f"topiclink {' '.join(args)} imported {heavy}"
    assert out.strip()


def test_the_catalog_says_what_the_registry_says():
    """Read from the source (in a fresh process, nothing imported) and from the imported
    classes: the same estimators, paper names, fit inputs, capabilities, modules and
    commands."""
    code = ("from topiclink.cli.catalog import estimator_catalog\n"
            "import sys\n"
            "assert 'topiclink.estimators.base' not in sys.modules\n"
            "print(repr({k: tuple(vars(v).values()) for k, v in estimator_catalog().items()}))\n"
            "assert 'numba' not in sys.modules and 'sklearn' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    from_source = eval(proc.stdout)  # noqa: S307 - our own repr of tuples of str

    from topiclink.cli.catalog import _imported_entry
    from topiclink.estimators.base import library_estimators

    imported = {name: tuple(vars(_imported_entry(cls)).values())
                for name, cls in library_estimators().items()}
    assert from_source == imported
    assert {"RelationalTopicModel", "LDA", "BilinearPoissonFactorModel"} <= set(imported)
    assert estimator_catalog()["VariationalRTM"].command == "var-rtm"


def test_models_lists_an_imported_estimator_too():
    import tests.examples.dmm.estimator  # noqa: F401

    assert "DirichletMultinomialMixture" in estimator_catalog()
    assert "DirichletMultinomialMixture" in runner.invoke(app, ["models"]).output


def test_messages_speak_the_command_line():
    assert cli_wording("the 'linqs' loader reads your own LINQS-format folder: pass "
                       "data_dir= (CLI: --data DIR)") == \
        "the 'linqs' loader reads your own LINQS-format folder: give --data DIR"
    assert "--newer-citations drop" in cli_wording(
        "cites a newer one; pass newer_citations='drop' to drop such citations or 'keep' "
        "to keep them as links")
    assert "--id-rule 'zero-pad:7'" in cli_wording("pass normalize_ids='zero-pad:7'")
    assert cli_wording("x.rda: the file holds 2 objects (a, b); pass name=") == (
        "x.rda: the file holds 2 objects (a, b); the command line reads a folder or file "
        "with one of them (in Python: name=)")
    result = runner.invoke(app, ["fit", "lda", "--dataset", "linqs", "-k", "2", "-n", "1",
                                 "--quiet"])
    assert result.exit_code == 1
    assert "data_dir=" not in result.output and "--data DIR" in result.output, result.output


def test_evaluate_names_its_documents_subset():
    result = runner.invoke(app, ["evaluate", "m.npz", "--dataset", "cora", "--subset", "x"])
    assert result.exit_code == 1 and "--subset must be auto, test, held-out or all" in \
        result.output
