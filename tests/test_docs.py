"""The documentation: every tutorial runs, and the site builds with warnings as errors.

(a) The ```python blocks of each ``docs/tutorials/<family>.md`` run in order in one
namespace, in a temporary working directory (a tutorial may write files), with
matplotlib's Agg backend.  A block whose first line is ``# doc: no-run`` is shown, not
run (none of the tutorials needs it today).
(b) ``mkdocs build --strict`` of ``mkdocs.yml`` into a temporary folder: a broken link, a
nav entry without its page, a docstring griffe cannot parse, a results JSON the
generator cannot render, a rendered page not current with its template fail the test.
Skipped, with the reason, when MkDocs is not installed (``pip install -e ".[docs]"``; the
``test`` extra installs it).
(c) The command lines of the docs: every ``topiclink ...`` of "Which model for my data"
(``docs/which-model.md``) runs, in-process, on small files of the shape the page
describes (made from the bundled Cora and a random graph), with ``--iterations 2``
appended so that each takes seconds; every other ``topiclink ...`` command of every page
(``bash`` blocks and inline code) is parsed by the command line itself -- its commands,
options and option values -- so a renamed command or option fails here.  A command
written with a stand-in (``NAME``, ``MODEL``, ``...``, ``a|b``) is a pattern, not parsed.
The ```python blocks of the guide pages in ``RUNNABLE_GUIDES`` run as the tutorials' do.
"""

from __future__ import annotations

import csv
import functools
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md"))
TUTORIALS = [p for p in TUTORIALS if p.name != "index.md"]
SLOW = {"sotu"}  # tutorials over 10 s (sotu: ~30 s; the others 1-9 s on 2 cores)
#: tutorials that read a data set that is not bundled: skipped without it in TOPICLINK_DATA
NEEDS_DATA = {"sotu": "sotu"}
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
    if path.stem in NEEDS_DATA:
        data = Path(os.environ.get("TOPICLINK_DATA", "/nonexistent")) / NEEDS_DATA[path.stem]
        if not data.is_dir():
            pytest.skip(f"needs {NEEDS_DATA[path.stem]} in TOPICLINK_DATA")
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
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", path.read_text(encoding="utf-8")):
        written = tmp_path / Path(image).name
        assert written.is_file(), f"{path.name} shows {image} but its code does not write it"
        assert (path.parent / image).is_file(), f"{path.name}: {image} is not in the docs"


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


# ---------------------------------------------------------------------- the command lines
DOCS = ROOT / "docs"
WHICH_MODEL = DOCS / "which-model.md"
SHELL_BLOCK = re.compile(r"^```(?:bash|sh|shell|console)[^\n]*\n(.*?)^```", re.S | re.M)
INLINE_COMMAND = re.compile(r"`(topiclink [^`]+)`")
#: a command written with a stand-in is a pattern
PATTERN = re.compile(r"\.\.\.|\bNAME\b|\bMODEL\b|<|\||\bN\b|\bDIR\b")
#: commands shown, not parsed, and why
SHOWN_NOT_PARSED = {
    "topiclink fit dmm": "the example model of tests/examples/dmm, once registered",
    "topiclink experiment dmm": "the example protocol of tests/examples/dmm, once imported",
}


def doc_commands(path: Path) -> list[str]:
    """Every ``topiclink ...`` command line of a page: the lines of its shell blocks
    (continuations joined, ``#`` comments cut, ``a && b`` split) and its inline code."""
    text = path.read_text(encoding="utf-8")
    found = []
    for block in SHELL_BLOCK.findall(text):
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            for part in re.split(r"\s*(?:&&|;)\s*", line.split(" #")[0].strip()):
                if part.startswith("topiclink "):
                    found.append(" ".join(part.split()))
    found += [" ".join(m.split()) for m in INLINE_COMMAND.findall(SHELL_BLOCK.sub("", text))]
    return found


def _click_rest(ctx) -> list[str]:
    head = (getattr(ctx, "protected_args", None) or getattr(ctx, "_protected_args", None)
            or [])
    return list(head) + list(ctx.args)


@functools.cache
def _cli():
    import typer

    from topiclink.cli.app import app

    return typer.main.get_command(app)


def parse_command(line: str) -> None:
    """Parse a command line as ``topiclink`` would, without running it: an unknown
    command or option, or a value of the wrong type, raises the CLI's usage error."""
    command = _cli()
    ctx = command.make_context("topiclink", shlex.split(line)[1:])
    rest = _click_rest(ctx)
    while hasattr(command, "resolve_command") and rest:
        name, command, rest = command.resolve_command(ctx, rest)
        ctx = command.make_context(name, list(rest), parent=ctx)
        rest = _click_rest(ctx) if hasattr(command, "resolve_command") else []


def _parsed(line: str) -> str | None:
    """None when ``line`` parses (or asks for help), else the usage error."""
    try:
        parse_command(line)
    except Exception as exc:  # the CLI's click (typer vendors its own) raises its classes
        kind = type(exc).__name__
        if kind == "Exit" and getattr(exc, "exit_code", 1) == 0:
            return None
        bare = not any(t.startswith("-") for t in shlex.split(line))
        if bare and kind in ("MissingParameter", "NoArgsIsHelpError"):
            return None  # a command named in the text (`topiclink report`), no arguments
        return f"{kind}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


ALL_COMMANDS = [(p.relative_to(DOCS).as_posix(), c) for p in sorted(DOCS.rglob("*.md"))
                for c in doc_commands(p)]


def test_the_docs_have_commands():
    pages = {page for page, _ in ALL_COMMANDS}
    assert {"which-model.md", "getting-started.md", "guide/visibility.md",
            "guide/knowledge-graphs.md"} <= pages, pages
    assert len(ALL_COMMANDS) > 30


def test_every_command_of_the_docs_parses():
    bad = []
    for page, line in ALL_COMMANDS:
        if PATTERN.search(line) or line in SHOWN_NOT_PARSED:
            continue
        error = _parsed(line)
        if error:
            bad.append(f"{page}: `{line[:90]}`: {error}")
    assert not bad, "\n".join(bad)


def test_the_parse_check_can_fail():
    assert _parsed("topiclink fit lda --topics 5 --out x.npz") is None
    assert "NoSuchOption" in _parsed("topiclink fit lda --topicz 5")
    assert "BadParameter" in _parsed("topiclink fit lda --topics five")
    assert "UsageError" in _parsed("topiclink fit ldaa --topics 5")


def which_model_commands() -> list[str]:
    """The commands of the table of ``docs/which-model.md``, in order."""
    rows = [line for line in WHICH_MODEL.read_text(encoding="utf-8").splitlines()
            if line.startswith("| ") and "`topiclink " in line]
    return [" ".join(INLINE_COMMAND.search(row).group(1).split()) for row in rows]


def _write_user_files(folder: Path) -> None:
    """``papers.csv`` (id, title, text, label, year), ``links.csv`` (citing,cited) from
    the bundled Cora's first 300 documents, and ``kg/train.txt`` (random triples)."""
    import numpy as np

    from topiclink.datasets import load_dataset

    cora = load_dataset("cora")
    counts = cora.corpus.counts.tocsr()
    vocabulary, titles = cora.corpus.vocabulary, cora.corpus.titles
    n = 300
    with (folder / "papers.csv").open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["id", "title", "text", "label", "year"])
        for i in range(n):
            row = counts[i]
            text = " ".join(np.repeat(vocabulary[row.indices], row.data.astype(int)))
            label = "learning" if "learn" in titles[i].lower() else "other"
            out.writerow([f"p{i}", titles[i][:80], text, label, 1990 + i % 10])
    pairs = cora.links.pairs[(cora.links.pairs < n).all(axis=1)]
    (folder / "links.csv").write_text("".join(f"p{a},p{b}\n" for a, b in pairs))
    rng = np.random.default_rng(0)
    (folder / "kg").mkdir()
    triples = {(f"e{rng.integers(40)}", f"r{rng.integers(4)}", f"e{rng.integers(40)}")
               for _ in range(600)}
    (folder / "kg" / "train.txt").write_text("".join("\t".join(t) + "\n"
                                                     for t in sorted(triples)))


@pytest.fixture(scope="module")
def user_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("which-model")
    _write_user_files(folder)
    return folder


def test_which_model_lists_a_command_per_kind_of_data():
    commands = which_model_commands()
    assert len(commands) >= 8
    assert all(c.startswith(("topiclink fit ", "topiclink experiment ")) for c in commands)


@pytest.mark.parametrize("line", [
    pytest.param(c, id=" ".join(c.split()[1:3]) + f" #{i}",
                 marks=[pytest.mark.slow] if c.startswith("topiclink experiment") else [])
    for i, c in enumerate(which_model_commands())])   # an experiment: about 20 s
def test_which_model_command_runs(line, user_files, monkeypatch):
    from typer.testing import CliRunner

    from topiclink.cli.app import app

    if "--dataset sotu" in line and not (
            Path(os.environ.get("TOPICLINK_DATA", "/nonexistent")) / "sotu").is_dir():
        pytest.skip("needs the State of the Union in TOPICLINK_DATA")
    monkeypatch.chdir(user_files)
    args = shlex.split(line)[1:] + ["--iterations", "2", "--force", "--quiet"]
    t0 = time.perf_counter()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, f"{line}\n{result.output[-2000:]}"
    print(f"{line}: {time.perf_counter() - t0:.1f} s")


def which_model_api_cells() -> list[str]:
    """The Python of the last column of the table of ``docs/which-model.md``."""
    rows = [line for line in WHICH_MODEL.read_text(encoding="utf-8").splitlines()
            if line.startswith("| ") and "`topiclink " in line]
    return [re.findall(r"`([^`]+)`", row.rsplit("|", 2)[-2])[0] for row in rows]


def test_which_model_api_lines_name_real_classes_and_parameters():
    """Each API line's classes exist and take the keywords it passes (constructor,
    ``from_paper`` and ``fit``), so a renamed parameter fails here."""
    import ast
    import inspect

    import topiclink
    from topiclink.families.ktm.gp import kernels

    cells = which_model_api_cells()
    assert len(cells) == len(which_model_commands())
    for cell in cells:
        tree = ast.parse(cell, mode="eval")
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        classes = [c for c in calls if isinstance(c.func, ast.Name)]
        assert classes or any(isinstance(c.func, ast.Attribute) for c in calls), cell
        estimator = None
        for call in classes:
            owner = getattr(topiclink, call.func.id, None) or getattr(kernels, call.func.id,
                                                                      None)
            assert owner is not None, f"{cell}: no {call.func.id}"
            params = inspect.signature(owner).parameters
            for kw in call.keywords:
                assert kw.arg in params, f"{cell}: {call.func.id} takes no {kw.arg!r}"
            if hasattr(owner, "fit"):
                estimator = owner
        methods = [c for c in calls if isinstance(c.func, ast.Attribute)]
        for call in methods:
            if call.func.attr == "from_paper":
                estimator = getattr(topiclink, call.func.value.id)
        for call in methods:
            if call.func.attr == "fit":
                assert estimator is not None, cell
                params = inspect.signature(estimator.fit).parameters
                for kw in call.keywords:
                    assert kw.arg in params, f"{cell}: fit takes no {kw.arg!r}"


#: guide pages whose ```python blocks run as the tutorials' do (the others read files a
#: user has, such as papers.csv or the hep-th tarball, or fit for minutes)
RUNNABLE_GUIDES = {"knowledge-graphs.md": "umls"}


@pytest.mark.parametrize("name", sorted(RUNNABLE_GUIDES))
def test_guide_code_runs(name, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = Path(os.environ.get("TOPICLINK_DATA", "/nonexistent")) / RUNNABLE_GUIDES[name]
    if not data.is_dir():
        pytest.skip(f"needs {RUNNABLE_GUIDES[name]} in TOPICLINK_DATA")
    monkeypatch.chdir(tmp_path)
    path = DOCS / "guide" / name
    namespace: dict = {"__name__": f"guide_{path.stem}"}
    blocks = python_blocks(path)
    assert blocks, name
    for i, block in enumerate(blocks):
        exec(compile(block, f"{name} [block {i + 1}]", "exec"), namespace)
    plt.close("all")
