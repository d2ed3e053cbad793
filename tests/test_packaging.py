"""Packaging, in seconds: the version has one source, the licence and typing files exist and
are declared, and ``scripts/check_wheel.py``'s content checks and README extraction catch
what they must (the slow check itself, a build and a fresh install, runs in CI)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import topiclink

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _check_wheel():
    spec = importlib.util.spec_from_file_location("check_wheel",
                                                  ROOT / "scripts" / "check_wheel.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_version_comes_from_the_metadata_of_pyproject():
    assert topiclink.__version__ == importlib.metadata.version("topiclink")
    assert topiclink.__version__ == PYPROJECT["project"]["version"]


def test_version_without_an_installed_distribution_is_marked_unknown():
    from topiclink._version import UNKNOWN_VERSION, _metadata_version

    assert _metadata_version("topiclink-no-such-distribution") == UNKNOWN_VERSION == "0+unknown"


def test_the_version_module_holds_no_literal_version():
    """One source: pyproject's ``version``; ``_version.py`` reads the metadata."""
    text = (ROOT / "src" / "topiclink" / "_version.py").read_text(encoding="utf-8")
    assert PYPROJECT["project"]["version"] not in text


def test_licence_fields_are_pep_639():
    project = PYPROJECT["project"]
    assert isinstance(project["license"], str) and "BSD-3-Clause" in project["license"]
    assert project["license-files"]
    for pattern in project["license-files"]:
        assert list(ROOT.glob(pattern)), f"license-files {pattern!r} matches no file"
    assert "Copyright (c) 2026, topiclink developers" in (ROOT / "LICENSE").read_text()
    cora = (ROOT / "LICENSES" / "cora-rlda.txt").read_text(encoding="utf-8")
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in cora and "cora_rlda.npz" in cora
    requires = " ".join(PYPROJECT["build-system"]["requires"])
    assert "setuptools>=77" in requires       # the first setuptools with PEP 639


def test_py_typed_is_package_data():
    assert (ROOT / "src" / "topiclink" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["topiclink"]


def test_the_readme_quick_start_is_found():
    code = _check_wheel().quick_start_code(ROOT / "README.md")
    assert "import topiclink" in code and "```" not in code
    compile(code, "README.md quick start", "exec")


def test_quick_start_extraction_takes_the_first_python_block_of_its_section(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# x\n```python\nbefore()\n```\n## Quick start\n\ntext\n```bash\n"
                      "ls\n```\n```python\nfirst()\n```\n```python\nsecond()\n```\n"
                      "## Next\n```python\nnext()\n```\n")
    assert _check_wheel().quick_start_code(readme) == "first()\n"
    readme.write_text("## Quick start\n```bash\nls\n```\n## Next\n```python\nx()\n```\n")
    with pytest.raises(RuntimeError, match="no ```python block"):
        _check_wheel().quick_start_code(readme)


GOOD_WHEEL = [
    "topiclink/__init__.py", "topiclink/py.typed", "topiclink/datasets/bundled/cora_rlda.npz",
    "topiclink/datasets/bundled/cora_rlda.README.md", "topiclink/report/static/report.css",
    "topiclink/report/static/report.js", "topiclink-0.1.0.dist-info/METADATA",
    "topiclink-0.1.0.dist-info/licenses/LICENSE",
    "topiclink-0.1.0.dist-info/licenses/LICENSES/cora-rlda.txt",
]
GOOD_METADATA = ("Metadata-Version: 2.4\nName: topiclink\nLicense-Expression: BSD-3-Clause\n"
                 "License-File: LICENSE\nLicense-File: LICENSES/cora-rlda.txt\n\n")


def test_wheel_check_accepts_a_complete_wheel():
    assert _check_wheel().wheel_problems(GOOD_WHEEL, GOOD_METADATA) == []


@pytest.mark.parametrize("change, expected", [
    (lambda n: [x for x in n if not x.endswith("py.typed")], "missing topiclink/py.typed"),
    (lambda n: [x for x in n if "licenses/LICENSES" not in x], "missing licence file"),
    (lambda n: [x for x in n if not x.endswith(".npz")], "missing topiclink/datasets"),
    (lambda n: [*n, "tests/test_io.py"], "outside the package"),
    (lambda n: [*n, "topiclink/tests/test_io.py"], "does not belong"),
    (lambda n: [*n, "benchmarks/lda_floor.py"], "outside the package"),
    (lambda n: [*n, "topiclink/results/m.npz"], "does not belong"),
    (lambda n: [*n, "topiclink/model.npz"], ".npz file outside the bundled data"),
    (lambda n: [*n, "topiclink/__pycache__/x.cpython-311.pyc"], "does not belong"),
])
def test_wheel_check_names_what_is_wrong(change, expected):
    problems = _check_wheel().wheel_problems(change(GOOD_WHEEL), GOOD_METADATA)
    assert any(expected in p for p in problems), problems


def test_wheel_check_wants_the_pep_639_metadata():
    problems = _check_wheel().wheel_problems(
        GOOD_WHEEL, "Metadata-Version: 2.1\nName: topiclink\nLicense: BSD-3-Clause\n\n")
    assert any("License-Expression" in p for p in problems)
    assert any("License-File LICENSE" in p for p in problems)


def test_sdist_check_names_what_is_wrong():
    cw = _check_wheel()
    good = list(cw.SDIST_REQUIRED) + ["docs/guide/x.md", "benchmarks/results/a.json"]
    assert cw.sdist_problems(good, ["docs/guide/x.md", "docs/guide", "reproductions/README.md"]
                             ) == []
    problems = cw.sdist_problems(
        [n for n in good if n not in ("tests/conftest.py", "reproductions/pyproject.toml")]
        + ["benchmarks/results/a.png", ".ci/run", "tests/__pycache__/x.cpython-311.pyc"],
        ["docs/missing.md"])
    assert any("missing tests/conftest.py" in p for p in problems)
    assert any("missing reproductions/pyproject.toml" in p for p in problems)
    assert any("docs/missing.md" in p for p in problems)
    assert any("a.png does not belong" in p for p in problems)
    assert any(".ci/run does not belong" in p for p in problems)
    assert any("x.cpython-311.pyc does not belong" in p for p in problems)


def test_check_wheel_runs_as_a_script():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_wheel.py"), "--help"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "--datasets" in proc.stdout


def test_a_step_collects_the_warnings_it_prints_and_fails_in_one_line(tmp_path):
    cw = _check_wheel()
    found: list[str] = []
    code = "import warnings; warnings.warn('the fit has not converged', UserWarning)"
    cw._run([sys.executable, "-c", code], step="demo", cwd=tmp_path, log=tmp_path / "a.log",
            warnings=found)
    assert len(found) == 1 and "UserWarning: the fit has not converged" in found[0]
    with pytest.raises(cw.CheckFailed, match=r"^demo: exit code 3 after \d+ s") as info:
        cw._run([sys.executable, "-c", "raise SystemExit(3)"], step="demo", cwd=tmp_path,
                log=tmp_path / "b.log")
    assert "\n" not in str(info.value)
