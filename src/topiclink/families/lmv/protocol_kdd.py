"""The LMV paper's hep-th protocol (Tan, Chan & Zheng 2016, Sec. 7.2, Figure 7) as a function.

Split (:func:`topiclink.datasets.hepth.hepth_kdd_split`): the 25,224 papers added to arXiv
in 1992-2001 and the 271,838 citations among them train; the 4,064 papers of 2002-2003
citing at least one training paper are the test set, with their 60,914 citations to
training papers as the truth.  Any :class:`~topiclink.data.time_split.TimeSplit` runs
through the same code (a small synthetic time-stamped corpus in the tests).

Models (paper names): ``LMVS(t)`` (LMVS with publication times: a non-link to a newer
paper carries no likelihood term; the 943 citations of a newer paper in hep-th are kept
as links, ``newer_citations="keep"``), ``LMVS``, ``PLLDA`` (stochastic with the same
subsampling, as the paper: batch LMV and PLLDA do not fit in memory), ``RTM`` (our
Var-RTM with variational topics under the same Dir(eta) prior, tol 1e-5) and
``Gibbs-gRTM`` (not in the paper).  Minibatch 2000, step size A1 = 1, A2 = 5, v = 0.501,
eps = 0.1 (paper S4).  K from 10 to 30, eta in {0.5, 0.1, 0.01}; alpha = 1/K.  All
models of one (K, eta) start from the same fitted LDA
(:func:`topiclink.families.lmv.algorithm.start_lda`, ``init_topics``) except Gibbs-gRTM.

Metric: for each test paper, the average rank of the training papers it cites among all
training papers, ranked by ``link_scores(test, direction="out")`` (eq. 6.1: the test
paper cites); the predictive rank is the mean over test papers, computed in blocks of
test papers (:func:`topiclink.metrics.chunked.rank_in_chunks`, so memory stays bounded),
reported as % better than random ((n_train + 1) / 2).  Every training paper is older
than every test paper, so the test papers' own times exclude no candidate: scoring with
them is scoring "out" (``direction="either"`` would add the impossible training ->
test direction and is ~7 % worse on citations).  CPU time (``time.process_time`` of the
fit in this process, plus the CPU a checkpoint recorded when the fit resumed from one,
:class:`~topiclink.callbacks.CpuTime`) per cell.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
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

__all__ = ["KDD_MODELS", "KDD_ESTIMATORS", "KDDSettings", "run_lmv_kdd_experiment",
           "summarise_kdd", "kdd_findings", "write_kdd_outputs", "shared_start",
           "PAPER_TOPICS", "PAPER_ETAS", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper's models on hep-th (Figure 7) and Gibbs-gRTM
KDD_MODELS = ("LMVS(t)", "LMVS", "PLLDA", "RTM", "Gibbs-gRTM")

#: paper name -> (runner model name, fixed constructor parameters, uses times)
KDD_ESTIMATORS: dict[str, tuple[str, dict[str, Any], bool]] = {
    "LMVS(t)": ("LMVS", {}, True),
    "LMVS": ("LMVS", {}, False),
    "PLLDA": ("PLLDAS", {}, False),
    "RTM": ("Var-RTM", {"topic_inference": "variational", "tol": 1e-5, "max_iter": 1000},
            False),
    "Gibbs-gRTM": ("Gibbs-gRTM", {}, False),
}
_STOCHASTIC = ("LMVS(t)", "LMVS", "PLLDA")

#: the paper's claims (Sec. 7.2.1), fixed before any run
PAPER_IMPROVEMENT = (0.73, 0.83)     # LMVS(t) over random, over K and eta
PAPER_BEST = (20, 0.5)               # LMVS(t)'s best (K, eta)
#: the paper's grid (Figure 7)
PAPER_TOPICS = (10, 15, 20, 25, 30)
PAPER_ETAS = (0.5, 0.1, 0.01)


@dataclass
class KDDSettings:
    """Hyper-parameters (paper S4-S5, Sec. 7.2).

    ``stochastic``: LMVS / LMVS(t) / PLLDA (minibatch 2000; A1 = 1, A2 = 5, v = 0.501;
    eps = 0.1 with the library's default "window" rule; ``stopping="paper"`` for the
    paper's first-calm-sweep rule), ``max_iter`` sweeps at most.  ``shared_start``: every
    model accepting ``init_topics`` starts from one LDA per (K, eta).  ``n_jobs``: threads
    of one fit.  ``chunk_size``: test papers scored per block (None: about 32 MiB).
    ``model_params``: per paper name, added or overriding constructor parameters.
    ``verbose``: each fit shows its progress bar (one fit at a time: ``workers=1``).
    """

    stochastic: dict[str, Any] = field(default_factory=lambda: {
        "batch_size": 2000, "step_a1": 1.0, "step_a2": 5.0, "step_v": 0.501, "tol": 0.1,
        "max_iter": 100})
    shared_start: bool = True
    start_iter: int = 100
    start_restarts: int = 5
    n_jobs: int = 1
    chunk_size: int | None = None
    model_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    verbose: bool = False

    def params(self, name: str, K: int, eta: float, seed: int
               ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """(runner model, required, optional) constructor parameters of ``name``."""
        est, fixed, _ = KDD_ESTIMATORS[name]
        required: dict[str, Any] = {"n_topics": int(K), "topic_word_prior": float(eta),
                                    "random_state": int(seed), **fixed}
        if name in _STOCHASTIC:
            required.update(self.stochastic)
        required.update(self.model_params.get(name, {}))
        optional = {"doc_topic_prior": 1.0 / K, "n_jobs": self.n_jobs, "evaluate_every": 0,
                    "verbose": self.verbose}
        return est, required, optional


_START_CACHE: dict[tuple, np.ndarray] = {}


def shared_start(counts: Any, K: int, eta: float, seed: int, *, n_iter: int = 100,
                 restarts: int = 5) -> np.ndarray:
    """The topic-word counts (K, V) of the LDA every model of a (K, eta) cell starts from
    (:func:`topiclink.families.lmv.algorithm.start_lda` with alpha = 1/K, Dir(eta), seeded by the
    cell's seed; cached per process: the same numbers in every worker)."""
    from topiclink.families.lmv.algorithm import start_lda

    key = (id(counts), counts.shape, int(K), float(eta), int(seed), int(n_iter),
           int(restarts))
    if key not in _START_CACHE:
        _START_CACHE.clear()
        _, nwk = start_lda(counts, K, 1.0 / K, eta, np.random.default_rng(int(seed)),
                           n_iter=n_iter, restarts=restarts)
        _START_CACHE[key] = nwk
    return _START_CACHE[key]


def _run_cell(cell: Cell, context: tuple[TimeSplit, KDDSettings]) -> dict[str, Any]:
    split, settings = context
    name, K, eta = cell["model"], int(cell["K"]), float(cell["eta"])
    est, required, optional = settings.params(name, K, eta, cell.seed)
    start_seconds = 0.0
    from topiclink.experiments.runner import model_params

    accepted = model_params(est)
    if settings.shared_start and (accepted is None or "init_topics" in accepted):
        c0 = time.process_time()
        required["init_topics"] = shared_start(
            split.train_corpus.counts, K, eta, cell.seed, n_iter=settings.start_iter,
            restarts=settings.start_restarts)
        start_seconds = time.process_time() - c0
    clock = CpuTime()       # the fit's CPU over a resume from the grid's checkpoints too
    model = build_model(est, required, {**optional, "callbacks": [clock]})
    fit_options: dict[str, Any] = {}
    if KDD_ESTIMATORS[name][2]:
        fit_options = {"publication_time": split.train_times, "newer_citations": "keep"}
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
                          chunk_size=settings.chunk_size)
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
                           topics: Iterable[int] = PAPER_TOPICS,
                           etas: Iterable[float] = PAPER_ETAS,
                           models: Sequence[str] = KDD_MODELS, workers: int = 1,
                           seed: int = 0, settings: KDDSettings | None = None,
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
    out : folder for ``lmv_kdd_results.csv`` (rewritten after every row), the summary,
        findings and the Figure 7 panels (:func:`write_kdd_outputs`).

    Columns: model, estimator, K, eta, predictive_rank, random_rank, improvement,
    cpu_seconds, cpu_hours, wall_seconds, start_cpu_seconds (the shared LDA start, once
    per process and (K, eta)), test_seconds, n_iter, converged, stop_reason, n_train,
    n_test, n_test_citations.
    """
    names = [str(m) for m in models]
    unknown = [m for m in names if m not in KDD_ESTIMATORS]
    if not names or unknown:
        raise ValueError(f"model {unknown[0] if unknown else None!r} is not in the KDD "
                         f"protocol; known: {', '.join(KDD_ESTIMATORS)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    settings = settings or KDDSettings()
    if split is None:
        from topiclink.datasets.hepth import hepth_kdd_split

        split = hepth_kdd_split(data_dir)
    logger.info("KDD split: %s", split)
    cells = grid({"K": [int(k) for k in topics], "eta": [float(e) for e in etas],
                  "model": names})
    out_dir = None if out is None else Path(out)
    table = run_grid(cells, _run_cell, (split, settings), base_seed=seed, seed_axes=("K",),
                     workers=workers, on_row=on_row,
                     csv_path=None if out_dir is None else out_dir / "lmv_kdd_results.csv")
    table.attrs["split"] = repr(split)
    if out_dir is not None:
        write_kdd_outputs(table, out_dir)
    return table


def summarise_kdd(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, K, eta): rank, % better than random, CPU hours, sweeps."""
    cols = [c for c in ("model", "K", "eta", "predictive_rank", "improvement", "cpu_hours",
                        "n_iter", "converged") if c in table]
    return table[cols].sort_values(["eta", "model", "K"], ascending=[False, True, True],
                                   ignore_index=True)


def kdd_findings(table: pd.DataFrame) -> list[str]:
    """The paper's hep-th claims (Sec. 7.2.1), each with our numbers: LMV(S) better than
    PLLDA and RTM for every K and eta; publication times help (LMVS(t) better than LMVS);
    LMVS(t) best at K = 20, eta = 0.5; LMVS(t) 73-83 % better than random.  A claim whose
    models were not run says NOT CHECKED."""
    lines: list[str] = []
    have = set(table["model"])
    piv = table.pivot_table(index=["K", "eta"], columns="model", values="predictive_rank")
    for lmv in ("LMVS(t)", "LMVS"):
        if lmv not in have:
            continue
        for other in ("PLLDA", "RTM"):
            if other not in have:
                lines.append(f"{lmv} better than {other} for every K and eta: NOT CHECKED "
                             f"({other} not run)")
                continue
            both = piv[[lmv, other]].dropna()
            wins = int((both[lmv] < both[other]).sum())
            gain = 1 - both[lmv] / both[other]
            lines.append(f"{lmv} better than {other} for every K and eta: "
                         f"{'AGREES' if wins == len(both) else 'DISAGREES'}; better in "
                         f"{wins}/{len(both)} cells (rank {gain.min():.1%}-{gain.max():.1%} "
                         f"lower)")
    if {"LMVS(t)", "LMVS"} <= have:
        both = piv[["LMVS(t)", "LMVS"]].dropna()
        wins = int((both["LMVS(t)"] < both["LMVS"]).sum())
        gain = 1 - both["LMVS(t)"] / both["LMVS"]
        lines.append(f"publication times help (LMVS(t) better than LMVS): "
                     f"{'AGREES' if wins == len(both) else 'DISAGREES'}; better in "
                     f"{wins}/{len(both)} cells (rank {gain.mean():.1%} lower on average)")
    else:
        lines.append("publication times help: NOT CHECKED (needs LMVS(t) and LMVS)")
    t = table[table["model"] == "LMVS(t)"]
    if t.empty:
        lines.append("LMVS(t) 73-83 % better than random: NOT CHECKED (LMVS(t) not run)")
        return lines
    imp = t["improvement"].to_numpy()
    lo, hi = PAPER_IMPROVEMENT
    verdict = ("AGREES" if imp.min() >= lo and imp.max() <= hi else
               "PARTLY (our range overlaps the paper's)" if imp.max() >= lo and imp.min() <= hi
               else "DISAGREES (ours higher)" if imp.min() > hi else "DISAGREES (ours lower)")
    lines.append(f"LMVS(t) 73-83 % better than random: {verdict}; ours {imp.min():.1%}-"
                 f"{imp.max():.1%} over {len(t)} (K, eta) cells")
    best = t.loc[t["predictive_rank"].idxmin()]
    if len(t) == 1:
        lines.append(f"LMVS(t) best at K=20, eta=0.5: NOT CHECKED (one cell run: K="
                     f"{int(best['K'])}, eta={best['eta']:g})")
    else:
        ok = (int(best["K"]), float(best["eta"])) == PAPER_BEST
        lines.append(f"LMVS(t) best at K=20, eta=0.5: {'AGREES' if ok else 'DISAGREES'}; "
                     f"ours best at K={int(best['K'])}, eta={best['eta']:g} (rank "
                     f"{best['predictive_rank']:.1f})")
    return lines


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


@dataclass
class _Plan:
    options: Any                      # topiclink.families.lmv.protocol.LMVOptions
    names: list[str]
    topics: list[int]
    etas: list[float]
    cutoff: float | None
    settings: KDDSettings


def _check(o: Any, ui: Session) -> _Plan:
    """``experiment lmv --split time`` (``--protocol kdd``): every option and the output
    folder, before any data.  The defaults of the command's Cora grid are replaced by
    the paper's hep-th grid."""
    from topiclink.data.dates import parse_cutoff

    source = o.source
    if source is None:
        ui.check(o.dataset in (None, "hepth"), f"--split time runs on --dataset hepth or on "
                 f"your own --documents with --time-column, got --dataset {o.dataset!r}")
    else:
        ui.check(source.time_column is not None, "--split time needs the documents' times: "
                 "give --time-column and --time-format")
        ui.check(o.cutoff is not None, "--split time needs --cutoff DATE (documents before "
                 "it train)")
    topics = _hepth_grid(o, "topics", ",".join(str(k) for k in PAPER_TOPICS))
    eta = _hepth_grid(o, "eta", ",".join(f"{e:g}" for e in PAPER_ETAS))
    models = _hepth_grid(o, "models", ",".join(KDD_MODELS))
    names = ui.names(models, list(KDD_MODELS))
    k_values = ui.int_list(topics, "--topics", minimum=2)
    etas = ui.float_list(eta, "--eta", positive=True)
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
    settings = KDDSettings(n_jobs=o.n_jobs, verbose=o.verbose and o.workers == 1)
    if o.max_iter is not None:
        settings.stochastic["max_iter"] = int(o.max_iter)
    return _Plan(o, names, k_values, etas, cutoff, settings)


def _load(plan: _Plan, ui: Session, data: Any) -> TimeSplit:
    """The split by time: hep-th's (at ``--cutoff``, default January 2002) or the user's
    ``--documents`` (sorted by time and id, the vocabulary fitted on the documents
    before the cutoff)."""
    from topiclink.data.dates import format_year
    from topiclink.data.time_split import split_by_time
    from topiclink.datasets.hepth import KDD_CUTOFF, hepth_kdd_split

    o, cutoff = plan.options, plan.cutoff
    if o.source is None:
        split = hepth_kdd_split(o.data, cutoff=KDD_CUTOFF if cutoff is None else cutoff)
        what = ("hep-th KDD split" if cutoff in (None, KDD_CUTOFF) else
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


def _run(plan: _Plan, split: TimeSplit, ui: Session) -> pd.DataFrame:
    o = plan.options

    def show(row: dict) -> None:
        ui.echo(f"{row['model']:>10s} K={row['K']:<3d} eta={row['eta']:<5g}: predictive "
                f"rank {row['predictive_rank']:8.1f} ({100 * row['improvement']:.1f} % "
                f"better than random {row['random_rank']:.1f})  CPU "
                f"{row['cpu_seconds']:.0f} s  [{row['stop_reason'] or row['n_iter']}]")

    return run_lmv_kdd_experiment(split, topics=plan.topics, etas=plan.etas,
                                  models=plan.names, workers=o.workers, seed=o.seed,
                                  settings=plan.settings, out=o.out, on_row=show)


def _report(plan: _Plan, split: TimeSplit, table: pd.DataFrame, ui: Session) -> None:
    """The summary and the paper's claims printed (the files are written by the run)."""
    o = plan.options
    ui.echo_table(summarise_kdd(table))
    ui.echo("\nthe paper's claims:" if o.source is None else
            "\nthe LMV paper's hep-th claims (Sec. 7.2.1), checked on this data:")
    for line in kdd_findings(table):
        ui.echo(f"  {line}")
    if o.out is not None:
        ui.echo(f"results: {o.out / 'lmv_kdd_results.csv'}, summary, findings and Figure "
                f"7 in {o.out}/")


#: no command of its own: ``experiment lmv --split time`` / ``--protocol kdd`` runs it
#: with the options of :class:`topiclink.families.lmv.protocol.LMVOptions`
SPEC = register_protocol(ProtocolSpec(
    name="lmv-kdd", options=None, check=_check, load=_load, run=_run, report=_report,
    help="The LMV paper's hep-th protocol (Sec. 7.2, Figure 7), or any split by time."))
