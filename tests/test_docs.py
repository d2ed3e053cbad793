"""The documentation: every tutorial runs, and the site builds with warnings as errors.

(a) The ```python blocks of each ``docs/tutorials/<family>.md`` run in order in one
namespace, in a temporary working directory (a tutorial may write files), with
matplotlib's Agg backend.  A block whose first line is ``# doc: no-run`` is shown, not
run (none of the tutorials needs it today).
(b) ``mkdocs build --strict`` of ``mkdocs.yml`` into a temporary folder: a broken link, a
nav entry without its page, a docstring griffe cannot parse, a results JSON the
generator cannot render fail the test.  Skipped, with the reason, when MkDocs is not
installed (``pip install -e ".[docs]"``; the ``test`` extra installs it).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md"))
TUTORIALS = [p for p in TUTORIALS if p.name != "index.md"]
SLOW: set[str] = set()  # tutorials over 10 s (none: 1-9 s each on a shared 2-core machine)
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


def python_blocks(path: Path) -> list[str]:
    """The ```python blocks of a markdown file, in order (``# doc: no-run`` left out)."""
    blocks = FENCE.findall(path.read_text(encoding="utf-8"))
    return [b for b in blocks if not b.startswith("# doc: no-run")]


def test_every_tutorial_has_code():
    assert len(TUTORIALS) >= 6, TUTORIALS
    for path in TUTORIALS:
        assert python_blocks(path), f"{path.name} has no ```python block"


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.slow]
                                               if p.stem in SLOW else [])
                                  for p in TUTORIALS])
def test_tutorial_runs(path, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"tutorial_{path.stem}"}
    t0 = time.perf_counter()
    for i, block in enumerate(python_blocks(path)):
        code = compile(block, f"{path.name} [block {i + 1}]", "exec")
        exec(code, namespace)  # the tutorial's own code
    plt.close("all")
    print(f"{path.name}: {time.perf_counter() - t0:.1f} s")


@pytest.mark.slow  # about 15 s
def test_site_builds_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec(
            "mkdocstrings_handlers") is None:
        pytest.skip('MkDocs is not installed (pip install -e ".[docs]")')
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                        os.environ.get("PYTHONPATH")])))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--config-file", str(ROOT / "mkdocs.yml"),
                           "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    warnings = [line for line in proc.stderr.splitlines() if "WARNING" in line]
    assert proc.returncode == 0, "\n".join(warnings) or proc.stderr[-3000:]
    site = tmp_path / "site"
    assert (site / "index.html").is_file()
    assert (site / "api" / "models" / "index.html").is_file()
    # every results JSON has its generated page, with a table
    for json_path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        page = site / "results" / "benchmarks" / json_path.stem / "index.html"
        assert page.is_file(), json_path.name
        assert "<table>" in page.read_text(encoding="utf-8"), json_path.name
    print(f"mkdocs build --strict: {time.perf_counter() - t0:.1f} s")


def test_readme_links_and_length():
    """The README stays short and its relative links point at files that exist."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README links to a missing {target}"
    # the set-up commands that .ci/run runs
    assert 'pip install -e ".[test]" -e ./reproductions && pytest' in text
    assert "pip install -e . && topiclink demo" in text


def test_the_api_reference_lists_what_the_families_add():
    """``::: topiclink.plotting`` renders the package's own names only (the families' are
    resolved at run time), so docs/api lists each family's additions itself."""
    from topiclink.registry import public_names

    for package, page in (("topiclink.datasets.synthetic", "datasets.md"),
                          ("topiclink.plotting", "plotting.md")):
        text = (ROOT / "docs" / "api" / page).read_text()
        for name, module in public_names(package).items():
            assert f"::: {module}.{name}" in text, (page, name)


def test_no_benchmark_is_named_like_a_package():
    """``python benchmarks/NAME.py`` puts benchmarks/ first on ``sys.path``: a script named
    like an installed package (``distributed.py`` was) is imported in its place, by the
    script and by every Dask worker it starts."""
    import importlib.util

    for path in sorted((ROOT / "benchmarks").glob("*.py")):
        spec = importlib.util.find_spec(path.stem)
        assert spec is None or Path(spec.origin or "").resolve() == path.resolve(), (
            f"benchmarks/{path.name} shadows the module {path.stem!r} ({spec.origin})")
