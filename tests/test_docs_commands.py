"""Every ``topiclink ...`` command of the docs runs (issue 42).

``tests/test_docs.py`` parses every command of ``docs/**/*.md`` and runs the table of
``docs/which-model.md``; here every other command runs, in-process (typer's CliRunner),
each page's commands in order in one sandbox folder of the page (so ``topiclink suggest
cora-grtm.npz`` finds the model the line before fitted), with ``TOPICLINK_DATA`` the
shared data sets:

- ``fit``, ``info``, ``suggest``, ``report``, ``evaluate``, ``datasets``, ``models``,
  ``demo`` and ``--help`` run verbatim; ``demo`` once per session (its result is reused
  for a repeat of the identical command);
- ``experiment NAME ...`` runs with ``--plan`` appended: the data read and checked, the
  grid worked out, nothing fitted;
- a command named in the text without its inputs (``topiclink report``, ``topiclink fit
  bpbfm``, ``topiclink experiment``) runs with ``--help``: the command exists;
- ``datasets fetch ...`` downloads from the loopback server of ``tests/test_fetch.py``
  (``scripts/serve_datasets.py`` serving ``TOPICLINK_DATA``) into the sandbox's data
  home, never from the network;
- any other change to a command is in :data:`CHANGED`, with its reason.

The user files the pages read (``papers.csv``, ``cites.txt``, ``my_texts.txt``,
``speeches.csv``, a ``kg`` folder of triples, ``hepth.csv`` + ``cit-HepTh.txt.gz``, the
model files a page reports on) are small stand-ins made by :data:`SETUP`.  A page whose
data sets are not in ``TOPICLINK_DATA`` is skipped.  The commands written with a
stand-in (``NAME``, ``...``) are patterns (:data:`tests.test_docs.PATTERN`), not run.
"""

from __future__ import annotations

import csv
import gzip
import os
import re
import shlex
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.test_docs import ALL_COMMANDS, PATTERN, _write_user_files, which_model_commands

pytestmark = pytest.mark.slow   # 150 s of CPU (6 min wall at load 5 on a shared 2-core box)

#: commands run with a change, and why: {command as in the docs: (as run, reason)}
CHANGED: dict[str, tuple[str, str]] = {
    "topiclink datasets fetch all --data-home /data/topiclink": (
        "topiclink datasets fetch all --data-home data-home",
        "the data home inside the sandbox"),
    "topiclink fit rtm --dataset cora --model Gibbs-gRTM -k 15 --c 4 --out cora-grtm.npz": (
        "topiclink fit rtm --dataset cora --model Gibbs-gRTM -k 15 --c 4 -n 30 "
        "--out cora-grtm.npz",
        "its 300 sweeps take 90 s; the suggest and evaluate lines after it need a model"),
    "topiclink fit lmv --dataset cora-rlda -k 9 --inference stochastic --out vis.npz": (
        "topiclink fit lmv --dataset cora-rlda -k 9 --inference stochastic -n 10 "
        "--out vis.npz",
        "its 100 sweeps take 2 minutes; the suggest line after it needs a model"),
    "topiclink fit bpbfm-dc --dataset fb15k-237 --topics 200 --out fb.npz": (
        "topiclink fit bpbfm-dc --dataset fb15k-237 --topics 40 -n 3 --out fb.npz",
        "its 500 EM iterations take 20 minutes on FB15k-237 (2.3 s each at K = 200) and "
        "compressing the K = 200 model file 40 s"),
    "topiclink select-kg --dataset wn18rr --models bpbfm-patterns -k 100 --patterns "
    "inverse,paths,paths3 -n 25": (
        "topiclink select-kg --dataset umls --models bpbfm-patterns -k 10 --patterns "
        "inverse,paths3 -n 5",
        "its three WN18RR fits and their scoring take minutes; the same command on UMLS"),
    "topiclink experiment grtm --data /path/to/citeseer": (
        "topiclink experiment grtm --data citeseer",
        "the page's stand-in for a user's folder: a LINQS folder in the sandbox"),
    "topiclink fit model DirichletMultinomialMixture": (
        "topiclink fit model DirichletMultinomialMixture --dataset cora -n 2 --out dmm.npz",
        "named in the text without data: fitted on the bundled Cora"),
    "topiclink demo": (
        "topiclink demo --out figures/",
        "the same run, its figures in figures/ instead of the working folder: the demo "
        "(40 s) runs once per session"),
}

#: commands a page needs the CLI to find that are registered by importing a module
PLUG_INS = {"adding-a-model.md": "tests.examples.dmm.protocol"}

#: the data sets of the protocols' defaults (``experiment NAME`` without --dataset)
DEFAULT_DATA = {"grtm": "cora-linqs", "lmv": "cora-rlda", "slda": "20newsgroups",
                "ktm": "sotu", "bpbfm": "umls"}

#: commands that need their inputs: named in the text without them, they run ``--help``
NEEDS_INPUT = ("fit", "report", "info", "suggest", "evaluate")


def _shared() -> Path:
    return Path(os.environ.get("TOPICLINK_DATA", "/nonexistent"))


# ---------------------------------------------------------------------- user files
def _cora_texts(n: int) -> list[tuple[str, str]]:
    """(title, text) of the bundled Cora's first ``n`` documents."""
    import numpy as np

    from topiclink.datasets import load_dataset

    cora = load_dataset("cora")
    counts = cora.corpus.counts.tocsr()
    vocabulary = cora.corpus.vocabulary
    return [(cora.corpus.titles[i][:80],
             " ".join(np.repeat(vocabulary[counts[i].indices], counts[i].data.astype(int))))
            for i in range(n)]


def _getting_started(folder: Path) -> None:
    """``my_texts.txt`` (one text per line) and a LINQS folder ``citeseer`` (the
    shared Cora's files under CiteSeer's names)."""
    import shutil

    (folder / "my_texts.txt").write_text("".join(t + "\n" for _, t in _cora_texts(60)))
    (folder / "citeseer").mkdir()
    for kind in ("content", "cites"):
        shutil.copy(_shared() / "cora-linqs" / f"cora.{kind}",
                    folder / "citeseer" / f"citeseer.{kind}")


def _speeches(folder: Path) -> None:
    """``speeches.csv``: id, text, party."""
    with (folder / "speeches.csv").open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["id", "text", "party"])
        for i, (_, text) in enumerate(_cora_texts(80)):
            out.writerow([f"s{i}", text, ("left", "right")[i % 2]])


def _hepth(folder: Path) -> None:
    """``hepth.csv`` (id, month, title, abstract: 7-digit arXiv ids, yymm months from
    1999 to 2002) and ``cit-HepTh.txt.gz`` (SNAP's edge list: ids without their leading
    zeros, each paper citing older ones)."""
    import numpy as np

    rng = np.random.default_rng(0)
    texts = _cora_texts(160)
    months = [f"{y % 100:02d}{m:02d}" for y in (1999, 2000, 2001, 2002) for m in (1, 4, 7, 10)]
    ids = [f"{months[i * len(months) // len(texts)]}{i:03d}" for i in range(len(texts))]
    with (folder / "hepth.csv").open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["id", "month", "title", "abstract"])
        for paper, (title, text) in zip(ids, texts, strict=True):
            out.writerow([paper, paper[:4], title, text])
    lines = ["# Directed graph (each unordered pair of nodes is saved once)",
             "# FromNodeId\tToNodeId"]
    for i in range(10, len(ids)):
        for j in rng.choice(i, size=3, replace=False):
            lines.append(f"{int(ids[i])}\t{int(ids[j])}")
    with gzip.open(folder / "cit-HepTh.txt.gz", "wt") as f:
        f.write("\n".join(lines) + "\n")


def _run_setup(folder: Path, *lines: str) -> None:
    for line in lines:
        result = _invoke(shlex.split(line)[1:])
        assert result.exit_code == 0, f"setup {line}\n{result.output[-2000:]}"


def _looking_at_a_model(folder: Path) -> None:
    """The files of ``guide/looking-at-a-model.md``: papers.csv and cites.txt, and the
    model files it reports on (fitted here with two iterations)."""
    _write_user_files(folder)
    (folder / "cites.txt").write_text((folder / "links.csv").read_text().replace(",", " "))
    _speeches(folder)
    _run_setup(folder,
               "topiclink fit rtm --dataset cora --topics 5 -n 2 --out grtm.npz --quiet",
               "topiclink fit lmv --documents papers.csv --edges cites.txt --topics 5 -n 2 "
               "--out lmv.npz --quiet",
               "topiclink fit ktm --dataset sotu --features year --topics 5 -n 2 --out ktm.npz "
               "--quiet",
               "topiclink fit lda --documents speeches.csv --topics 5 -n 2 --out lda.npz "
               "--quiet")


#: the stand-ins of the user files each page reads, made in its sandbox
SETUP: dict[str, Callable[[Path], None]] = {
    "getting-started.md": _getting_started,
    "guide/knowledge-graphs.md": _write_user_files,
    "guide/looking-at-a-model.md": _looking_at_a_model,
    "guide/visibility.md": _hepth,
    "which-model.md": _write_user_files,
}

#: data sets a page's stand-ins need beyond its commands' --dataset
SETUP_DATA = {"guide/looking-at-a-model.md": {"sotu"}}


# ---------------------------------------------------------------------- the commands
def _page_commands() -> dict[str, list[str]]:
    """Each page's commands, in order: the patterns and the table of which-model.md (run
    by ``tests/test_docs.py``) left out."""
    table = set(which_model_commands())
    pages: dict[str, list[str]] = {}
    for page, line in ALL_COMMANDS:
        if PATTERN.search(line) or (page == "which-model.md" and line in table):
            continue
        pages.setdefault(page, []).append(line)
    return pages


PAGES = _page_commands()


def _named_only(args: list[str]) -> tuple[bool, bool]:
    """(the arguments name a command or group and nothing else, it is a group)."""
    from tests.test_docs import _cli

    command = _cli()
    ctx = command.make_context("topiclink", [], resilient_parsing=True)
    for name in args:
        if name.startswith("-") or not hasattr(command, "get_command"):
            return False, False
        command = command.get_command(ctx, name)
        if command is None:
            return False, False
    return True, hasattr(command, "get_command")


def run_args(line: str) -> list[str]:
    """The arguments a doc command runs with (see the module docstring)."""
    args = shlex.split(CHANGED.get(line, (line, ""))[0])[1:]
    if args[:1] == ["experiment"] and len(args) > 1 and not {"--help", "--plan"} & set(args):
        return [*args, "--plan"]
    named, group = _named_only(args)
    if named and (group or args[0] in NEEDS_INPUT):
        return [*args, "--help"]
    return args


def _data_sets(line: str) -> set[str]:
    """The data sets of ``TOPICLINK_DATA`` a command reads."""
    args = shlex.split(line)[1:]
    named = {args[i + 1] for i, a in enumerate(args[:-1]) if a == "--dataset"}
    if args[:1] == ["experiment"] and len(args) > 1 and not named and not any(
            a in ("--data", "--documents", "--help") for a in args):
        named.add("cora" if "--kernel" in args else DEFAULT_DATA.get(args[1], ""))
    if args[:2] == ["datasets", "fetch"]:
        named.add("nations")
    return named - {""}


def _missing(page: str) -> list[str]:
    from topiclink.datasets.registry import dataset_specs

    specs = dataset_specs()
    wanted = set(SETUP_DATA.get(page, set())).union(*map(_data_sets, PAGES[page]))
    return sorted(n for n in wanted if not (n in specs and specs[n].location == "bundled")
                  and not (_shared() / n).is_dir())


def _invoke(args: list[str]):
    from typer.testing import CliRunner

    from topiclink.cli.app import app

    return CliRunner().invoke(app, args)


# ---------------------------------------------------------------------- the sandboxes
class _Sandboxes:
    """One folder per page, its stand-ins made once; the loopback mirror; demo's result."""

    def __init__(self, factory) -> None:
        self.factory = factory
        self.folders: dict[str, Path] = {}
        self.demo: dict[tuple[str, ...], object] = {}
        self.server = None

    def folder(self, page: str) -> Path:
        if page not in self.folders:
            folder = self.factory.mktemp(re.sub(r"\W", "-", page))
            self.folders[page] = folder
            setup = SETUP.get(page)
            if setup is not None:
                cwd = Path.cwd()
                os.chdir(folder)
                try:
                    setup(folder)
                finally:
                    os.chdir(cwd)
        return self.folders[page]

    def mirror(self) -> str:
        if self.server is None:
            from scripts.serve_datasets import DatasetServer

            self.server = DatasetServer(_shared())
            self.server.__enter__()
        return self.server.url

    def close(self) -> None:
        if self.server is not None:
            self.server.__exit__(None, None, None)


@pytest.fixture(scope="module")
def sandboxes(tmp_path_factory):
    boxes = _Sandboxes(tmp_path_factory)
    yield boxes
    boxes.close()


def _offline_sources(monkeypatch) -> None:
    """Every data set's sources without their internet origins: the mirror only."""
    import dataclasses

    from topiclink.datasets import fetch as fetch_module
    from topiclink.datasets import sources as sources_module

    real = sources_module.get_source

    def mirror_only(name):
        source = real(name)
        return dataclasses.replace(source, files=tuple(
            dataclasses.replace(f, origins=()) for f in source.files))

    monkeypatch.setattr(fetch_module, "get_source", mirror_only)


def _plug_in(page: str, monkeypatch) -> None:
    """The page's plug-in protocol registered for this command only."""
    module = PLUG_INS.get(page)
    if module is None:
        return
    import importlib

    from topiclink.experiments import registry

    original = registry._REGISTRY
    before = dict(original)
    spec = importlib.import_module(module).SPEC      # the first import registers it
    if spec.name not in before:
        original.pop(spec.name, None)
    monkeypatch.setattr(registry, "_REGISTRY", {**before, spec.name: spec})


def run_doc_command(page: str, line: str, boxes: _Sandboxes, monkeypatch):
    """Run one command of ``page`` in its sandbox; returns the CliRunner result."""
    folder = boxes.folder(page)
    monkeypatch.chdir(folder)
    args = run_args(line)
    if args[:2] == ["datasets", "fetch"] or page == "api/datasets.md":
        _offline_sources(monkeypatch)
        monkeypatch.setenv("TOPICLINK_DATA_MIRROR", boxes.mirror())
        monkeypatch.setenv("TOPICLINK_DATA", str(folder / "home"))
    _plug_in(page, monkeypatch)
    if args[:1] == ["demo"]:
        key = tuple(args)
        if key not in boxes.demo:
            boxes.demo[key] = _invoke(args)
        return boxes.demo[key]
    return _invoke(args)


CASES = [pytest.param(page, i, line, id=f"{page}#{i}: {line[10:60]}")
         for page, lines in PAGES.items() for i, line in enumerate(lines)]


@pytest.mark.parametrize("page, index, line", CASES)
def test_doc_command_runs(page, index, line, sandboxes, monkeypatch):
    missing = _missing(page)
    if missing:
        pytest.skip(f"{page} needs {', '.join(missing)} in TOPICLINK_DATA")
    t0 = time.perf_counter()
    result = run_doc_command(page, line, sandboxes, monkeypatch)
    seconds = time.perf_counter() - t0
    assert result.exit_code == 0, (f"{page}: `{line}` (run as {run_args(line)}) exit "
                                   f"{result.exit_code}\n{result.output[-3000:]}")
    if "--plan" in run_args(line):
        assert "nothing fitted (--plan)" in result.output, result.output[-2000:]
    print(f"{seconds:6.1f} s  {page}: {line}")


def test_every_page_with_commands_is_covered():
    """The pages with commands to run, and the changed ones still in the docs."""
    assert {"getting-started.md", "guide/visibility.md", "guide/knowledge-graphs.md",
            "guide/looking-at-a-model.md", "api/datasets.md", "results.md"} <= set(PAGES)
    commands = {line for lines in PAGES.values() for line in lines}
    assert set(CHANGED) <= commands, set(CHANGED) - commands
    assert set(SETUP) <= set(PAGES), set(SETUP) - set(PAGES)


def test_a_broken_command_fails(sandboxes, monkeypatch):
    """A wrong file name or option value in a page's command fails its test."""
    page = "getting-started.md"
    if _missing(page):
        pytest.skip(f"{page} needs {', '.join(_missing(page))} in TOPICLINK_DATA")
    for line in ("topiclink fit lda --input my_text.txt -k 10 --out mine.npz",
                 "topiclink experiment grtm --dataset cora-linqs --models Gibbs-gRTMx",
                 "topiclink info no-such-model.npz"):
        result = run_doc_command(page, line, sandboxes, monkeypatch)
        assert result.exit_code != 0, line
