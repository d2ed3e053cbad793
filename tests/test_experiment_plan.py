"""``topiclink experiment NAME --plan``: the data read and checked, the grid worked out,
one line per cell and a count line, and nothing fitted or written.

The plan comes from the one runner (:func:`topiclink.experiments.runner.planning` makes
``run_grid`` stop with its cells), so every protocol has it; these tests use the bundled
Cora, the worked example protocol of ``tests/examples/dmm`` and small files of their own.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.experiments import runner as runner_module
from topiclink.experiments.registry import (
    ProtocolSpec,
    register_protocol,
    run_protocol,
    unregister_protocol,
)
from topiclink.experiments.runner import (
    GridPlanned,
    cell_seed,
    fit_model,
    grid,
    planning,
    run_grid,
    write_csv,
)

cli = CliRunner()

GRTM = ["experiment", "grtm", "--dataset", "cora", "--folds", "2", "--topics", "3,4",
        "--models", "Gibbs-gRTM,Var-RTM", "--quiet"]


def _cell_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("cell ")]


def _no_cell_runs(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("a cell ran during --plan")

    monkeypatch.setattr(runner_module, "_call", refuse)


def test_plan_lists_the_cells_and_fits_nothing(tmp_path, monkeypatch):
    _no_cell_runs(monkeypatch)
    out = tmp_path / "out"
    t0 = time.perf_counter()
    result = cli.invoke(app, [*GRTM, "--out", str(out), "--plan"])
    seconds = time.perf_counter() - t0
    assert result.exit_code == 0, result.output
    lines = _cell_lines(result.output)
    assert len(lines) == 8     # 2 folds x 2 K x 2 models (Var-RTM has no c)
    assert lines[0].startswith("cell 1/8: fold=0  K=3  model=Gibbs-gRTM  c=4  seed=")
    assert "model=Var-RTM  c=nan" in lines[1]
    assert result.output.splitlines()[-1] == "8 cells, 8 to fit; nothing fitted (--plan)"
    assert not out.exists()          # no output folder, no file
    assert seconds < 30, seconds


def test_plan_of_a_protocol_outside_the_runner_lists_its_fits(tmp_path):
    """``ktm --kernel graph`` fits outside ``run_grid``: its spec's ``cells`` step."""
    out = tmp_path / "ktm"
    result = cli.invoke(app, ["experiment", "ktm", "--kernel", "graph", "--dataset", "cora",
                              "--topics", "4", "-n", "3", "--out", str(out), "--plan"])
    assert result.exit_code == 0, result.output
    lines = _cell_lines(result.output)
    assert lines and all("K=4  iterations=3" in line for line in lines), result.output
    assert "connected subgraph" in result.output      # the data were read and cut
    assert not out.exists()


def _documents(folder: Path) -> tuple[Path, Path]:
    papers, links = folder / "papers.csv", folder / "links.csv"
    papers.write_text("id,text\n" + "".join(f"p{i},word{i} shared text here\n"
                                            for i in range(6)))
    links.write_text("".join(f"p{i},p{i - 1}\n" for i in range(1, 6)))
    return papers, links


def _bad_lines(tmp_path: Path) -> dict[str, list[str]]:
    papers, links = _documents(tmp_path)
    out = ["--out", str(tmp_path / "o"), "--quiet"]
    return {
        "model name": [*GRTM, "--models", "Gibbs-gRTMx", *out],
        "data folder": ["experiment", "grtm", "--data", str(tmp_path / "missing"), *out],
        "data set": ["experiment", "slda", "--dataset", "no-such-set", *out],
        "column": ["experiment", "lmv", "--documents", str(papers), "--edges", str(links),
                   "--text-column", "abstract", *out],
        "file": ["experiment", "lmv", "--documents", str(tmp_path / "nope.csv"), *out],
    }


@pytest.mark.parametrize("what", ["model name", "data folder", "data set", "column", "file"])
def test_plan_fails_as_the_run_does(what, tmp_path, monkeypatch):
    _no_cell_runs(monkeypatch)
    line = _bad_lines(tmp_path)[what]
    real = cli.invoke(app, line)
    planned = cli.invoke(app, [*line, "--plan"])
    assert real.exit_code != 0 and real.stderr.startswith("error: "), real.output
    assert (planned.exit_code, planned.stderr) == (real.exit_code, real.stderr)
    assert not _cell_lines(planned.output)


@pytest.fixture
def dmm():
    import tests.examples.dmm.protocol as module

    register_protocol(module.SPEC, replace=True)
    yield module
    unregister_protocol("dmm")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_plan_says_which_cells_are_finished(dmm, tmp_path):
    out, ck = tmp_path / "out", tmp_path / "ck"
    args = ["experiment", "dmm", "--dataset", "cora", "--topics", "2,3", "--folds", "2",
            "-n", "2", "--out", str(out), "--quiet"]
    fresh = cli.invoke(app, [*args, "--checkpoint-dir", str(tmp_path / "none"), "--plan"])
    assert fresh.exit_code == 0, fresh.output
    assert fresh.output.splitlines()[-1] == "4 cells, 4 to fit; nothing fitted (--plan)"
    assert not (tmp_path / "none").exists() and not out.exists()

    ran = cli.invoke(app, [*args, "--checkpoint-dir", str(ck)])
    assert ran.exit_code == 0, ran.output
    before = _snapshot(ck), _snapshot(out)
    again = cli.invoke(app, [*args, "--checkpoint-dir", str(ck), "--plan"])
    assert again.exit_code == 0, again.output
    assert "a run resumes from" in again.output
    lines = _cell_lines(again.output)
    assert len(lines) == 4 and all(f"[finished: checkpoint {ck}]" in x for x in lines)
    assert again.output.splitlines()[-1] == ("4 cells, 0 to fit, 4 finished in the "
                                             "checkpoint (skipped); nothing fitted (--plan)")
    assert (_snapshot(ck), _snapshot(out)) == before      # nothing written

    refused = cli.invoke(app, [*args, "--seed", "7", "--checkpoint-dir", str(ck), "--plan"])
    assert refused.exit_code == 1
    assert "belongs to a run with seed=0, this run has 7" in refused.stderr

    held = cli.invoke(app, [*args, "--plan"])             # as the run: --force needed
    assert held.exit_code == 1 and "--force" in held.stderr
    forced = cli.invoke(app, [*args, "--force", "--plan"])
    assert forced.exit_code == 0, forced.output
    assert all(f"[finished: {out / 'dmm_results.csv'}]" in x
               for x in _cell_lines(forced.output))
    assert "4 already in the results" in forced.output.splitlines()[-1]
    assert (_snapshot(ck), _snapshot(out)) == before


def test_run_grid_inside_planning_raises_its_cells(tmp_path):
    def never(cell, context):
        raise AssertionError("ran")

    cells = grid({"fold": [0, 1], "K": [2, 3]})
    csv = tmp_path / "rows.csv"
    write_csv([{"fold": 1, "K": 3.0, "score": 1.0}], csv)
    with planning(), pytest.raises(GridPlanned) as planned:
        run_grid(cells, never, base_seed=5, seed_axes=["fold"], csv_path=csv)
    got = planned.value.cells
    assert [c.coords for c in got] == cells
    assert [c.seed for c in got] == [cell_seed(5, c, ["fold"]) for c in cells]
    assert [c.finished for c in got] == [None, None, None, str(csv)]
    assert run_grid(cells[:1], lambda c, x: {"ok": 1}).to_dict("records") == [{"ok": 1}]


def test_fit_model_refuses_inside_planning():
    class Model:
        def fit(self, X):
            raise AssertionError("fitted")

    with planning(), pytest.raises(RuntimeError, match="outside the grid of a plan"):
        fit_model(Model(), X=[[1]])


class _Session:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def echo(self, text: str = "") -> None:
        self.lines.append(text)

    def errors(self):
        return contextlib.nullcontext()


def _spec(name: str, **steps) -> ProtocolSpec:
    return ProtocolSpec(name=name, options=None, check=lambda o, ui: o,
                        load=lambda plan, ui, data: None,
                        report=lambda *a: pytest.fail("reported"), **steps)


def test_a_protocol_that_fits_outside_the_runner_needs_a_cells_step():
    ran = []
    bare = register_protocol(_spec("plan-bare", run=lambda *a: ran.append(1)))
    with_cells = register_protocol(_spec(
        "plan-cells", run=lambda *a: pytest.fail("ran"),
        cells=lambda plan, data: [{"model": "A"}, {"model": "B"}]))
    try:
        with pytest.raises(RuntimeError, match="needs a cells step"):
            run_protocol(bare, object(), _Session(), plan=True)
        session = _Session()
        cells = run_protocol(with_cells, object(), session, plan=True)
        assert [c.coords for c in cells] == [{"model": "A"}, {"model": "B"}]
        assert session.lines == ["cell 1/2: model=A", "cell 2/2: model=B",
                                 "2 cells, 2 to fit; nothing fitted (--plan)"]
    finally:
        unregister_protocol("plan-bare")
        unregister_protocol("plan-cells")
