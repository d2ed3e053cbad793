"""The throwaway family's protocol: the third (and last) module of
``docs/adding-a-model.md``.  Importing it registers ``topiclink experiment dmm``
(held-out perplexity of GSDMM against K over folds); nothing else is edited."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

import tests.examples.dmm.estimator  # noqa: F401  (registers the estimator, paper name GSDMM)
from topiclink.data.splits import Fold, kfold_documents
from topiclink.experiments.registry import (
    ProtocolSpec,
    Session,
    option,
    register_protocol,
    shared,
)
from topiclink.experiments.runner import Cell, build_model, fit_model, grid, run_grid, write_csv


# ---------------------------------------------------------------------- the protocol
def _run_cell(cell: Cell, context: tuple[Fold, int]) -> dict[str, Any]:
    """One row: GSDMM with K topics fitted on the fold's training documents, its
    perplexity on the test documents by document completion."""
    fold, iterations = context
    model = build_model("GSDMM", {"n_topics": int(cell["K"]), "max_iter": iterations,
                                  "random_state": cell.seed})
    fit_model(model, fold.train_corpus)
    return {"model": "GSDMM", "K": int(cell["K"]), "fold": int(cell["fold"]),
            "perplexity": model.perplexity(fold.test_corpus, random_state=cell.seed)}


def run_dmm_experiment(corpus: Any, topics: list[int], n_folds: int = 2,
                       iterations: int = 10, seed: int = 0, workers: int = 1,
                       on_row: Any = None, csv_path: Any = None) -> pd.DataFrame:
    """One row per (fold, K), on :func:`~topiclink.experiments.runner.run_grid`."""
    folds = kfold_documents(corpus, n_folds=n_folds, random_state=seed)
    cells = grid({"fold": range(n_folds), "K": topics})
    return run_grid(cells, _run_cell, (folds, iterations), base_seed=seed,
                    seed_axes=("fold", "K"), workers=workers, on_row=on_row,
                    csv_path=csv_path, context_of=_fold_of)


def _fold_of(cell: Cell, context: tuple[list[Fold], int]) -> tuple[Fold, int]:
    """What a cell needs: its fold (a worker is sent that fold only)."""
    folds, iterations = context
    return folds[cell["fold"]], iterations


def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and sd of the perplexity over folds, per K."""
    agg = table.groupby("K")["perplexity"].agg(["mean", "std"]).reset_index()
    return agg.rename(columns={"mean": "perplexity_mean", "std": "perplexity_sd"})


def findings(summary: pd.DataFrame) -> list[str]:
    best = summary.loc[summary["perplexity_mean"].idxmin()]
    return [f"lowest held-out perplexity at K={int(best['K'])} "
            f"({best['perplexity_mean']:.1f})"]


# ---------------------------------------------------------------------- the command
@dataclass
class DMMOptions:
    """The options of ``topiclink experiment dmm``: one field per option, in --help
    order; the shared ones by name."""

    dataset: str | None = shared("dataset")
    data: Path | None = shared("data")
    topics: str = option("2,3", help="Values of K, comma-separated.")
    folds: int = option(2, help="Number of folds over documents.")
    iterations: int = option(5, "--iterations", "-n", help="Gibbs sweeps.")
    seed: int = option(0)
    workers: int = shared("workers", 1)
    out: Path = option(Path("dmm-experiment"), "--out", "-o", help="Output folder for "
                       "dmm_*.csv and dmm_perplexity.png.")
    force: bool = shared("force", False)
    verbose: bool = shared("verbose", True)


@dataclass
class _Plan:
    options: DMMOptions
    topics: list[int]


def _check(o: DMMOptions, ui: Session) -> _Plan:
    topics = ui.int_list(o.topics, "--topics", minimum=2)
    ui.check(o.folds >= 2, f"--folds must be >= 2, got {o.folds}")
    ui.check(o.iterations >= 1, f"--iterations must be >= 1, got {o.iterations}")
    ui.check_input_paths(o.data)
    ui.check_out(o.out, "dmm", o.force)
    return _Plan(o, topics)


def _load(plan: _Plan, ui: Session, data: Any) -> Any:
    ds = ui.load_data(plan.options.dataset, plan.options.data, default="cora")
    if ds.corpus is None:
        raise ui.fail(f"dataset {ds.name!r} has no documents")
    plan.options.out.mkdir(parents=True, exist_ok=True)
    return ds


def _run(plan: _Plan, ds: Any, ui: Session) -> pd.DataFrame:
    o = plan.options
    return run_dmm_experiment(
        ds.corpus, plan.topics, o.folds, o.iterations, o.seed, o.workers,
        on_row=lambda row: ui.echo(f"K={row['K']} fold {row['fold']}: perplexity "
                                   f"{row['perplexity']:.1f}"),
        csv_path=o.out / "dmm_results.csv")


def _report(plan: _Plan, ds: Any, table: pd.DataFrame, ui: Session) -> None:
    from topiclink.plotting.experiments import plot_metric_vs_topics, save_figure

    out = plan.options.out
    summary = summarise(table)
    write_csv(summary, out / "dmm_summary.csv")
    save_figure(plot_metric_vs_topics(table, "perplexity").figure, out / "dmm_perplexity.png")
    ui.echo_table(summary)
    for line in findings(summary):
        ui.echo(f"  {line}")
    ui.echo(f"results: {out / 'dmm_results.csv'}, summary and figure in {out}/")


SPEC = register_protocol(ProtocolSpec(
    name="dmm", options=DMMOptions, check=_check, load=_load, run=_run, report=_report,
    help="GSDMM's held-out perplexity against K over folds (default data: cora)."))
