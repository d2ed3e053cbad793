"""The LMV paper's hep-th protocol (Tan, Chan & Zheng 2016, Sec. 7.2, Figure 7), read from
``papers/lmv_kdd.toml``.

Split (:func:`topiclink.datasets.hepth.hepth_kdd_split`, code: the rule is the data
set's): the 25,224 papers added to arXiv in 1992-2001 and the 271,838 citations among
them train; the 4,064 papers of 2002-2003 citing at least one training paper are the test
set, with their 60,914 citations to training papers as the truth.  Any
:class:`~topiclink.data.time_split.TimeSplit` runs through the same code (a small
synthetic time-stamped corpus in the tests; the user's ``--documents`` split at
``--cutoff``).

The paper file holds the grid, the models (``LMVS(t)``: LMVS fitted with the training
papers' publication times; PLLDA stochastic; RTM our Var-RTM) with their settings, and the
claims; only "LMVS(t) best at K = 20, eta = 0.5" is code (:func:`best_cell`).

Metric: for each test paper, the average rank of the training papers it cites among all
training papers, ranked by ``link_scores(test, direction="out")`` (eq. 6.1: the test
paper cites); the predictive rank is the mean over test papers, computed in blocks of
test papers (:func:`topiclink.metrics.chunked.rank_in_chunks`, so memory stays bounded),
reported as % better than random ((n_train + 1) / 2).  Every training paper is older
than every test paper, so the test papers' own times exclude no candidate: scoring with
them is scoring "out".  CPU time (``time.process_time`` of the fit in this process, plus
the CPU a checkpoint recorded when the fit resumed from one,
:class:`~topiclink.callbacks.CpuTime`) per cell.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from topiclink.callbacks import CpuTime
from topiclink.data.time_split import TimeSplit
from topiclink.experiments.registry import ProtocolSpec, Session, register_protocol
from topiclink.experiments.runner import Cell, build_model, fit_model, grid, run_grid, write_csv
from topiclink.metrics.chunked import rank_in_chunks
from topiclink_reproductions.claims import (
    AGREES,
    DISAGREES,
    NOT_CHECKED,
    check_claims,
    claim_lines,
)
from topiclink_reproductions.lmv import echo_claims, echo_rows, shared_start
from topiclink_reproductions.paper_models import PaperModels, accepts
from topiclink_reproductions.spec import PaperSpec, load_paper

__all__ = ["PAPER", "KDD_MODELS", "PAPER_BEST", "run_lmv_kdd_experiment", "summarise_kdd",
           "best_cell", "kdd_findings", "write_kdd_outputs", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper file: grid, models and their settings, claims
PAPER: PaperSpec = load_paper("lmv_kdd")
#: the paper's models on hep-th (Figure 7) and Gibbs-gRTM
KDD_MODELS: tuple[str, ...] = PAPER.model_names
#: LMVS(t)'s best (K, eta) in the paper (the one claim that is code: :func:`best_cell`)
PAPER_BEST = (20, 0.5)


def _run_cell(cell: Cell, context: tuple[TimeSplit, PaperModels, int | None]
              ) -> dict[str, Any]:
    split, models, chunk_size = context
    name, K, eta = cell["model"], int(cell["K"]), float(cell["eta"])
    est, required, optional = models.params(
        name, {"n_topics": K, "topic_word_prior": eta, "random_state": int(cell.seed)},
        {"doc_topic_prior": 1.0 / K})
    start_seconds = 0.0
    start = models.group("start")
    if start and accepts(est, "init_topics"):
        c0 = time.process_time()
        required["init_topics"] = shared_start(split.train_corpus, K, eta, 1.0 / K,
                                               cell.seed, **start)
        start_seconds = time.process_time() - c0
    clock = CpuTime()       # the fit's CPU over a resume from the grid's checkpoints too
    model = build_model(est, required, {**optional, "callbacks": [clock]})
    fit_options = models.fit_options(name)
    if fit_options.get("publication_time") is True:
        fit_options["publication_time"] = split.train_times
    c0, w0 = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():   # the row records converged / stop_reason
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit_model(model, split.train_corpus, links=split.train_links, **fit_options)
    # this process's CPU for the fit, plus what the checkpoint it resumed from recorded
    cpu = time.process_time() - c0 + clock.restored_seconds
    wall = time.perf_counter() - w0
    t0 = time.perf_counter()
    test = split.test_corpus

    def scores(rows: np.ndarray) -> np.ndarray:
        return model.link_scores(test.subset(rows), direction="out")

    rank = rank_in_chunks(scores, split.n_test, split.n_train, split.test_citations,
                          chunk_size=chunk_size)
    random_rank = (split.n_train + 1) / 2
    row = {"model": name, "estimator": est, "K": K, "eta": eta,
           "predictive_rank": rank, "random_rank": random_rank,
           "improvement": 1.0 - rank / random_rank, "cpu_seconds": cpu,
           "cpu_hours": cpu / 3600, "wall_seconds": wall,
           "start_cpu_seconds": start_seconds, "resumed": clock.resumed,
           "test_seconds": time.perf_counter() - t0,
           "n_iter": int(getattr(model, "n_iter_", -1)),
           "converged": getattr(model, "converged_", None),
           "stop_reason": getattr(model, "stop_reason_", ""),
           "n_train": split.n_train, "n_test": split.n_test,
           "n_test_citations": int(split.test_citations.nnz)}
    logger.info("%s K=%d eta=%g: predictive rank %.1f (%.1f %% better than random %.1f), "
                "CPU %.1f s, %s", name, K, eta, rank, 100 * row["improvement"], random_rank,
                cpu, row["stop_reason"])
    return row


def run_lmv_kdd_experiment(split: TimeSplit | None = None, *,
                           topics: Iterable[int] = PAPER.axis("K"),
                           etas: Iterable[float] = PAPER.axis("eta"),
                           models: Sequence[str] = KDD_MODELS, workers: int = 1,
                           seed: int = 0, settings: PaperModels | None = None,
                           chunk_size: int | None = None,
                           out: str | Path | None = None, data_dir: Any = None,
                           on_row: Callable[[dict[str, Any]], None] | None = None
                           ) -> pd.DataFrame:
    """Run the hep-th protocol; one row per (model, K, eta).

    Parameters
    ----------
    split : TimeSplit, optional
        Default: :func:`~topiclink.datasets.hepth.hepth_kdd_split` (from ``data_dir``).
    topics, etas : the grid (paper: K = 10..30, eta in {0.5, 0.1, 0.01}).
    models : paper names of :data:`KDD_MODELS`.
    workers : fits at once in separate processes (rows do not depend on it); with the
        grid checkpoint of the CLI, finished cells are skipped on a rerun.
    seed : the run's seed; each cell's seed comes from (seed, K), so the models and etas
        of one K share it.
    settings : the models' settings (default: ``PaperModels.of(PAPER)``).
    chunk_size : test papers scored per block (None: about 32 MiB).
    out : folder for ``lmv_kdd_results.csv`` (rewritten after every row), the summary,
        findings and the Figure 7 panels (:func:`write_kdd_outputs`).

    Columns: model, estimator, K, eta, predictive_rank, random_rank, improvement,
    cpu_seconds, cpu_hours, wall_seconds, start_cpu_seconds (the shared LDA start, once
    per process and (K, eta)), resumed, test_seconds, n_iter, converged, stop_reason,
    n_train, n_test, n_test_citations.
    """
    names = [str(m) for m in models]
    unknown = [m for m in names if m not in KDD_MODELS]
    if not names or unknown:
        raise ValueError(f"model {unknown[0] if unknown else None!r} is not in the KDD "
                         f"protocol; known: {', '.join(KDD_MODELS)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    settings = settings or PaperModels.of(PAPER)
    if split is None:
        from topiclink.datasets.hepth import hepth_kdd_split

        split = hepth_kdd_split(data_dir)
    logger.info("KDD split: %s", split)
    cells = grid({"K": [int(k) for k in topics], "eta": [float(e) for e in etas],
                  "model": names})
    out_dir = None if out is None else Path(out)
    table = run_grid(cells, _run_cell, (split, settings, chunk_size), base_seed=seed,
                     seed_axes=PAPER.seed_axes, workers=workers, on_row=on_row,
                     csv_path=None if out_dir is None else out_dir / "lmv_kdd_results.csv")
    table.attrs["split"] = repr(split)
    if out_dir is not None:
        write_kdd_outputs(table, out_dir)
    return table


def summarise_kdd(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, K, eta): the paper file's metrics (rank, % better than random,
    CPU hours, sweeps, converged)."""
    cols = [c for c in ("model", "K", "eta", *PAPER.metrics) if c in table]
    return table[cols].sort_values(["eta", "model", "K"], ascending=[False, True, True],
                                   ignore_index=True)


def best_cell(table: pd.DataFrame) -> dict[str, Any]:
    """"LMVS(t) best at K = 20, eta = 0.5" (Sec. 7.2.1) as a row of
    :func:`~topiclink_reproductions.claims.check_claims` (code: it needs the best cell)."""
    K, eta = PAPER_BEST
    row = {"claim": f"LMVS(t) best at K={K}, eta={eta:g}", "metric": "predictive_rank"}
    t = table[table["model"] == "LMVS(t)"]
    if t.empty:
        return {**row, "verdict": NOT_CHECKED, "detail": "LMVS(t) not run", "cells": 0}
    best = t.loc[t["predictive_rank"].idxmin()]
    where = f"K={int(best['K'])}, eta={best['eta']:g}"
    if len(t) == 1:
        return {**row, "verdict": NOT_CHECKED, "detail": f"one cell run: {where}",
                "cells": 1}
    ok = (int(best["K"]), float(best["eta"])) == PAPER_BEST
    return {**row, "verdict": AGREES if ok else DISAGREES, "cells": len(t),
            "detail": f"ours best at {where} (rank {best['predictive_rank']:.1f})"}


def kdd_findings(table: pd.DataFrame) -> list[str]:
    """The paper's hep-th claims (Sec. 7.2.1) as lines, ``claim: VERDICT; our numbers``:
    those of the paper file, then :func:`best_cell`."""
    checked = check_claims(table, PAPER.claims)
    rows = pd.concat([checked, pd.DataFrame([best_cell(table)])], ignore_index=True)
    return claim_lines(rows, PAPER.claims)


def write_kdd_outputs(table: pd.DataFrame, out: str | Path) -> dict[str, Path]:
    """lmv_kdd_results.csv, lmv_kdd_summary.csv, lmv_kdd_findings.md and Figure 7
    (lmv_kdd_figure7.png: predictive rank and CPU hours against K, one column per eta)."""
    import matplotlib.pyplot as plt

    from topiclink.plotting.experiments import save_figure

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"results": write_csv(table, out / "lmv_kdd_results.csv"),
             "summary": write_csv(summarise_kdd(table), out / "lmv_kdd_summary.csv")}
    text = "# LMV hep-th (KDD) protocol: the paper's claims (Sec. 7.2.1)\n\n"
    if "split" in table.attrs:
        text += f"{table.attrs['split']}\n\n"
    text += "\n".join(f"- {line}" for line in kdd_findings(table)) + "\n"
    path = out / "lmv_kdd_findings.md"
    path.write_text(text)
    paths["findings"] = path
    etas = sorted(table["eta"].unique(), reverse=True)
    fig, axes = plt.subplots(2, len(etas), figsize=(4.5 * len(etas), 7), squeeze=False)
    for j, eta in enumerate(etas):
        sub = table[np.isclose(table["eta"], eta)]
        for model, rows in sub.groupby("model", sort=False):
            rows = rows.sort_values("K")
            axes[0, j].plot(rows["K"], rows["predictive_rank"], marker="o", label=model)
            axes[1, j].plot(rows["K"], rows["cpu_hours"], marker="o", label=model)
        axes[0, j].set_title(f"eta = {eta:g}")
        axes[1, j].set_xlabel("K")
    axes[0, 0].set_ylabel("average predictive rank")
    axes[1, 0].set_ylabel("CPU hours")
    axes[0, 0].legend(fontsize=8)
    fig.suptitle("hep-th (KDD Cup 2003): Figure 7")
    paths["figure7"] = save_figure(fig, out / "lmv_kdd_figure7.png")
    return paths


# ---------------------------------------------------------------------- the command
def _hepth_grid(options: Any, name: str, paper: str) -> str:
    """An option's value, or ``paper`` where it keeps the command's (Cora) default."""
    value = getattr(options, name)
    default = {f.name: f.default for f in dataclasses.fields(options)}[name]
    return paper if value == default else value


def _check(o: Any, ui: Session) -> dict[str, Any]:
    """``experiment lmv --split time`` (``--protocol kdd``): every option and the output
    folder, before any data: the keyword arguments of :func:`run_lmv_kdd_experiment` and
    the cutoff.  The defaults of the command's Cora grid give way to the paper file's."""
    from topiclink.data.dates import parse_cutoff

    source = o.source
    if source is None:
        ui.check(o.dataset in (None, PAPER.dataset), f"--split time runs on --dataset "
                 f"{PAPER.dataset} or on your own --documents with --time-column, got "
                 f"--dataset {o.dataset!r}")
    else:
        ui.check(source.time_column is not None, "--split time needs the documents' times: "
                 "give --time-column and --time-format")
        ui.check(o.cutoff is not None, "--split time needs --cutoff DATE (documents before "
                 "it train)")
    ui.check(o.max_iter is None or o.max_iter >= 1,
             f"--max-iter must be >= 1, got {o.max_iter}")
    ui.check(o.workers >= 1, f"--workers must be >= 1, got {o.workers}")
    ui.check(o.n_jobs != 0, "--n-jobs must be an integer other than 0 (-1: all cores), got 0")
    cutoff = None
    if o.cutoff is not None:
        try:
            cutoff = parse_cutoff(o.cutoff, source.time_format if source else None)
        except ValueError as exc:
            raise ui.fail(f"--cutoff: {exc}") from None
    if o.out is not None:
        ui.check_out(o.out, "lmv_kdd", o.force)
    settings = PaperModels.of(PAPER, stochastic={} if o.max_iter is None else
                              {"max_iter": int(o.max_iter)})
    settings.shared.update(n_jobs=o.n_jobs, verbose=o.verbose and o.workers == 1)
    return {"models": ui.names(_hepth_grid(o, "models", ",".join(KDD_MODELS)),
                               list(KDD_MODELS)),
            "topics": ui.int_list(_hepth_grid(o, "topics", PAPER.joined(PAPER.axis("K"))),
                                  "--topics", minimum=2),
            "etas": ui.float_list(_hepth_grid(o, "eta", PAPER.joined(PAPER.axis("eta"))),
                                  "--eta", positive=True),
            "workers": o.workers, "seed": o.seed, "settings": settings, "out": o.out,
            "cutoff": cutoff}


def _load(o: Any, cutoff: float | None, ui: Session) -> TimeSplit:
    """The split by time: hep-th's (at ``--cutoff``, default the paper file's) or the
    user's ``--documents`` (sorted by time and id, the vocabulary fitted on the documents
    before the cutoff)."""
    from topiclink.data.dates import format_year
    from topiclink.data.time_split import split_by_time
    from topiclink.datasets.hepth import hepth_kdd_split

    paper_cutoff = float(PAPER.split.get("cutoff"))
    if o.source is None:
        split = hepth_kdd_split(o.data, cutoff=paper_cutoff if cutoff is None else cutoff)
        what = ("hep-th KDD split" if cutoff in (None, paper_cutoff) else
                f"hep-th split at {format_year(split.cutoff)}")
    else:
        assert cutoff is not None
        ds = o.source.load(fit_before=cutoff)
        if ds.links is None or not ds.links.directed:
            raise ui.fail("the LMV protocol needs directed citations: give --edge-direction "
                          "source-cites-target or target-cites-source")
        split = split_by_time(ds.corpus, ds.links,
                              ds.corpus.metadata[ds.time_column].to_numpy(), cutoff,
                              train_vocabulary=False)
        what = f"{ds.name} split at {format_year(cutoff)}"
    ui.check(split.n_train >= 2 and split.n_test >= 1,
             f"the split at the cutoff leaves {split.n_train} training and {split.n_test} "
             "test documents (test documents must cite a training document); move --cutoff")
    r = split.report
    ui.echo(f"{what}: {split.n_train} training papers, "
            f"{r.get('train_links', split.train_links.n_links)} training citations; "
            f"{split.n_test} test papers, {split.test_citations.nnz} test->train "
            f"citations; vocabulary {split.train_corpus.n_words} terms")
    return split


#: a row as the command prints it
ROW = ("{model:>10s} K={K:<3d} eta={eta:<5g}: predictive rank {predictive_rank:8.1f} "
       "({improvement:.1%} better than random {random_rank:.1f})  CPU {cpu_seconds:.0f} s  "
       "[{stop_reason}]")


def _report(o: Any, table: pd.DataFrame, ui: Session) -> None:
    """The summary and the paper's claims printed (the files are written by the run)."""
    ui.echo_table(summarise_kdd(table))
    echo_claims(ui, kdd_findings(table), "the paper's claims:" if o.source is None else
                "the LMV paper's hep-th claims (Sec. 7.2.1), checked on this data:")
    if o.out is not None:
        ui.echo(f"results: {o.out / 'lmv_kdd_results.csv'}, summary, findings and Figure "
                f"7 in {o.out}/")


def _run(o: Any, plan: dict[str, Any], split: TimeSplit, ui: Session) -> pd.DataFrame:
    kwargs = {k: v for k, v in plan.items() if k != "cutoff"}
    return run_lmv_kdd_experiment(split, **kwargs, on_row=echo_rows(ui, ROW))


#: no command of its own: ``experiment lmv --split time`` / ``--protocol kdd`` runs it
#: with the options of :class:`topiclink_reproductions.lmv.LMVOptions`; the plan is
#: (options, keyword arguments of the run and the cutoff)
SPEC = register_protocol(ProtocolSpec(
    name="lmv-kdd", options=None,
    check=lambda o, ui: (o, _check(o, ui)),
    load=lambda plan, ui, data: _load(plan[0], plan[1]["cutoff"], ui),
    run=lambda plan, split, ui: _run(*plan, split, ui),
    report=lambda plan, split, table, ui: _report(plan[0], table, ui),
    help=PAPER.title + "."))
