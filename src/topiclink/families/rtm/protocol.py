"""The gRTM paper's link-prediction protocol (Chen et al. 2015, Sec. 5.1) as a function.

For every fold of a k-fold split over documents (test documents removed with all their
links), every K and every model: fit on the training documents and links (the Gibbs
models add a fixed random subsample of unobserved training pairs as negatives; Var-RTM
uses positive links only), then for every test document rank all training documents by
link score (link rank), rank the vocabulary by the words predicted from its links alone
(word rank) and compute the link ROC/PR AUC over all (test, training) pairs.  The result
is a tidy table, one row per (model, K, c, fold), run by
:func:`topiclink.experiments.runner.run_grid` (seeds from the fold and K).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.data.splits import Fold, kfold_documents
from topiclink.experiments.registry import (
    ProtocolSpec,
    Session,
    option,
    register_protocol,
    shared,
)
from topiclink.experiments.runner import (
    Cell,
    build_model,
    fit_model,
    grid,
    model_fit_requires,
    model_names,
    model_params,
    run_grid,
    write_csv,
)
from topiclink.metrics import link_auc, link_rank, word_rank

__all__ = ["GRTMSettings", "MODEL_NAMES", "DEFAULT_C", "run_grtm_experiment",
           "evaluate_fold", "summarise", "paper_findings", "link_model_names",
           "default_c", "GRTMOptions", "write_grtm_outputs", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper's models (the protocol also runs any other link model by its paper name)
MODEL_NAMES = ("Gibbs-gRTM", "Gibbs-RTM", "Approx-gRTM", "Gibbs-gMMRTM", "Gibbs-MMRTM",
               "Approx-gMMRTM", "Var-RTM")

#: Default regularisation constant c of positive pairs per model (c_neg = 1), used when
#: no ``c_values`` are given.  The paper tunes c per model: 2..10 for the full-U models,
#: up to 36 for the diagonal ones.  Full U: 4 (our alpha = 0.5 grid on Cora-LINQS,
#: benchmarks/results/experiments/grtm_cora-linqs_alpha0.5_*: c = 4 beats c = 1 in mean
#: AUC at every K for Gibbs-gRTM and Gibbs-gMMRTM).  Diagonal U, measured with this
#: protocol on Cora-LINQS (5 folds, K = 10, alpha = 0.5, 150 iterations, seed 0), link
#: AUC / link rank:
#:
#:   Gibbs-RTM    fold 0: c=1 0.601/785, c=9 0.640/770, c=16 0.673/699, c=25 0.693/677,
#:                        c=36 0.690/604, c=49 0.703/552
#:                fold 1: c=9 0.636/756, c=16 0.647/728, c=25 0.662/651, c=36 0.693/601
#:   Gibbs-MMRTM  fold 0: c=1 0.486/1141, c=9 0.650/653, c=16 0.734/594, c=25 0.661/750,
#:                        c=36 0.616/848
#:                fold 1: c=9 0.784/490, c=16 0.727/616, c=25 0.687/690, c=36 0.607/852
#:
#: so 36 (the top of the paper's range) for the logistic diagonal model, whose AUC still
#: rises with c, and 16 for the hinge one, which peaks at 9-16 and falls beyond.
DEFAULT_C: dict[str, float] = {
    "Gibbs-gRTM": 4.0, "Approx-gRTM": 4.0, "Gibbs-gMMRTM": 4.0, "Approx-gMMRTM": 4.0,
    "Gibbs-RTM": 36.0, "Gibbs-MMRTM": 16.0,
}
#: c of a link model with a ``c`` that has no entry in :data:`DEFAULT_C`
FALLBACK_C = 4.0


@dataclass
class GRTMSettings:
    """Hyper-parameters of the protocol.

    ``alpha`` = 0.5 reproduces the paper's findings on the LINQS data (full U beats
    diagonal, c > 1 beats c = 1, the Gibbs models beat Var-RTM); the paper's alpha = 5
    leaves the diagonal models near random on these short binary documents (AUC
    0.49-0.54 at c = 1; see ``benchmarks/results/experiments/grtm_*_alpha5_*``).
    ``beta`` is not stated in the paper; 0.01 is the common choice.  ``c`` (the
    regularisation constant of positive pairs, c_neg = 1) is a grid axis; without one,
    each model gets :data:`DEFAULT_C`.  Var-RTM gets its own ``var_rtm_alpha``: with a
    large alpha on the short binary LINQS documents its variational topic proportions
    stay at the prior and EM stops after two iterations (AUC 0.52 on a Cora fold at
    alpha = 5 against 0.74 with alpha = 0.1).  ``model_params`` adds or overrides
    constructor parameters per model name.
    """

    alpha: float = 0.5
    beta: float = 0.01
    negative_ratio: float = 0.01
    max_iter: int = 400
    weight_prior_var: float = 1.0
    hinge_cost: float = 1.0
    var_rtm_iter: int = 100
    var_rtm_alpha: float = 0.1
    model_params: dict[str, dict[str, Any]] = field(default_factory=dict)

    def params(self, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """(required, optional) constructor parameters of model ``name``."""
        optional: dict[str, Any] = {
            "doc_topic_prior": self.alpha, "topic_word_prior": self.beta,
            "max_iter": self.max_iter, "negative_ratio": self.negative_ratio,
            "weight_prior_var": self.weight_prior_var, "hinge_cost": self.hinge_cost,
            "evaluate_every": 0}
        if name == "Var-RTM":
            optional.update(doc_topic_prior=self.var_rtm_alpha, max_iter=self.var_rtm_iter)
        return dict(self.model_params.get(name, {})), optional


def link_model_names() -> list[str]:
    """Every model name the protocol can run: those whose ``fit`` needs links."""
    return [n for n in model_names() if "links" in model_fit_requires(n)]


def _has_c(name: str) -> bool:
    accepted = model_params(name)
    return accepted is None or "c" in accepted


def default_c(name: str) -> float:
    """The default c of a model (NaN for a model without c)."""
    return DEFAULT_C.get(name, FALLBACK_C) if _has_c(name) else float("nan")


def evaluate_fold(model: Any, fold: Fold, seed: int = 0) -> dict[str, float]:
    """Link rank, word rank and link AUC of a fitted model on a fold's test documents."""
    t0 = time.perf_counter()
    scores = model.link_scores(fold.test_corpus, direction="either")
    out = fold.test_out if fold.test_out is not None else fold.test_links
    words = model.predict_words_from_links(out, fold.test_in, random_state=seed)
    test_seconds = time.perf_counter() - t0
    has_links = np.asarray(fold.test_links.sum(axis=1)).ravel() > 0
    auc = link_auc(scores, fold.test_links)
    return {
        "link_rank": link_rank(scores, fold.test_links),
        "word_rank": word_rank(words[has_links], fold.test_corpus.counts[has_links]),
        "auc": auc["roc_auc"],
        "pr_auc": auc["pr_auc"],
        "random_link_rank": (fold.n_train + 1) / 2,
        "test_seconds": test_seconds,
    }


def _run_cell(cell: Cell, context: tuple[Fold, GRTMSettings]) -> dict[str, Any]:
    """Fit one (model, K, c) on one fold and evaluate it (a row of the protocol table)."""
    fold, settings = context
    name, K, c = cell["model"], int(cell["K"]), float(cell["c"])
    params, optional = settings.params(name)
    params = {"n_topics": K, "random_state": cell.seed, **params}
    if not np.isnan(c):
        params["c"] = c
    model = build_model(name, params, optional)
    t0 = time.perf_counter()
    fit_model(model, fold.train_corpus, links=fold.train_links)
    train_seconds = time.perf_counter() - t0
    trace = getattr(model, "trace_", None) or {}

    def total(key: str) -> float:
        return float(np.nansum(trace.get(key, np.nan)))

    row: dict[str, Any] = {
        "model": name, "K": K, "c": c, "fold": fold.fold,
        **evaluate_fold(model, fold, cell.seed),
        "train_seconds": train_seconds, "z_seconds": total("seconds_z"),
        "lambda_seconds": total("seconds_lambda"), "weights_seconds": total("seconds_weights"),
        "n_pairs": int(getattr(model, "n_pairs_", getattr(model, "n_links_", 0))),
    }
    logger.info("%s K=%d c=%g fold %d: link rank %.1f, AUC %.3f, %.1f s", name, K, c,
                fold.fold, row["link_rank"], row["auc"], train_seconds)
    return row


def run_grtm_experiment(corpus: Corpus, links: Links, models: Sequence[str],
                        topics: Iterable[int] = (5, 10, 15, 20, 25),
                        c_values: Iterable[float] | None = None, n_folds: int = 5,
                        settings: GRTMSettings | None = None, random_state: int = 0,
                        folds: Sequence[int] | None = None,
                        on_row: Callable[[dict[str, Any]], None] | None = None,
                        workers: int = 1, csv_path: Any = None) -> pd.DataFrame:
    """Run the protocol; returns one row per (model, K, c, fold).

    Columns: model, K, c (NaN for Var-RTM, which has none), fold, link_rank, word_rank,
    auc, pr_auc, random_link_rank, test_seconds, train_seconds, z_seconds, lambda_seconds
    (pair discriminants and augmentation draws), weights_seconds, n_pairs.

    ``c_values`` None gives each model its default c (:data:`DEFAULT_C`); a list runs
    every value for every model that has a c.  ``folds`` restricts the run to some fold
    indices; ``on_row`` is called after each row; ``csv_path`` is rewritten (atomically)
    after each row.  ``workers`` fits that many configurations at once in separate
    processes.  The folds come from ``random_state``; each configuration's seed from
    ``random_state``, its fold and its K (:func:`~topiclink.experiments.runner.cell_seed`),
    so the rows do not depend on ``workers`` or on which folds run, and the models and
    values of c of one (fold, K) share their seed.
    """
    settings = settings or GRTMSettings()
    known = link_model_names()
    for name in models:
        if name not in known:
            raise ValueError(f"unknown model {name!r}; known: {', '.join(known)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    all_folds = kfold_documents(corpus, links, n_folds=n_folds, random_state=random_state)
    chosen = list(range(len(all_folds))) if folds is None else [int(f) for f in folds]
    for f in chosen:
        if not 0 <= f < len(all_folds):
            raise ValueError(f"fold {f} is not in [0, {len(all_folds)})")
    cs = None if c_values is None else [float(c) for c in c_values]

    def c_axis(cell: dict[str, Any]) -> list[float]:
        name = cell["model"]
        if not _has_c(name):
            return [float("nan")]
        return [default_c(name)] if cs is None else cs

    cells = grid({"fold": chosen, "K": [int(k) for k in topics], "model": list(models),
                  "c": c_axis})
    return run_grid(cells, _run_cell, (all_folds, settings), base_seed=random_state,
                    seed_axes=("fold", "K"), workers=workers, on_row=on_row,
                    csv_path=csv_path, context_of=_fold_of)


def _fold_of(cell: Cell, context: tuple[list[Fold], GRTMSettings]
             ) -> tuple[Fold, GRTMSettings]:
    """What a cell needs: its fold (a worker is sent that fold only) and the settings."""
    folds, settings = context
    return folds[cell["fold"]], settings


def summarise(table: pd.DataFrame,
              metrics: Sequence[str] = ("link_rank", "word_rank", "auc", "train_seconds")
              ) -> pd.DataFrame:
    """Mean and standard deviation over folds for every (model, K, c)."""
    agg = table.groupby(["model", "K", "c"], dropna=False)[list(metrics)].agg(["mean", "std"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    return agg.reset_index()


def paper_findings(table: pd.DataFrame) -> pd.DataFrame:
    """The paper's qualitative claims checked cell by cell on a results table.

    Each claim compares two configurations over every (K, fold) cell where both ran:
    the share of cells where the first has the better AUC and the better link rank, and
    the mean differences.  Claims: full U beats diagonal (per loss, per c, and each at its
    default c); c > 1 beats c = 1 (per model); each Gibbs model beats Var-RTM (its best
    c); hinge is comparable to logistic (full U, same c).
    """
    def pair(name: str, a: pd.DataFrame, b: pd.DataFrame) -> dict[str, Any] | None:
        keys = ["K", "fold"]
        m = a.merge(b, on=keys, suffixes=("_a", "_b"))
        if m.empty:
            return None
        return {"claim": name, "cells": len(m),
                "auc_a_better": float((m.auc_a > m.auc_b).mean()),
                "link_rank_a_better": float((m.link_rank_a < m.link_rank_b).mean()),
                "mean_auc_a": float(m.auc_a.mean()), "mean_auc_b": float(m.auc_b.mean()),
                "mean_link_rank_a": float(m.link_rank_a.mean()),
                "mean_link_rank_b": float(m.link_rank_b.mean())}

    def sel(model: str, c: float | None = None) -> pd.DataFrame:
        t = table[table.model == model]
        return t if c is None else t[t.c == c]

    rows = []
    cs = sorted(table.loc[table.model != "Var-RTM", "c"].dropna().unique())
    for full, diag in (("Gibbs-gRTM", "Gibbs-RTM"), ("Gibbs-gMMRTM", "Gibbs-MMRTM")):
        for c in cs:
            rows.append(pair(f"{full} beats {diag} (c={c:g})", sel(full, c), sel(diag, c)))
        c_full, c_diag = DEFAULT_C[full], DEFAULT_C[diag]
        if c_full != c_diag:
            rows.append(pair(f"{full} (c={c_full:g}) beats {diag} (c={c_diag:g})",
                             sel(full, c_full), sel(diag, c_diag)))
    for model in ("Gibbs-gRTM", "Gibbs-RTM", "Gibbs-gMMRTM", "Gibbs-MMRTM"):
        for c in cs:
            if c != 1.0 and 1.0 in cs:
                rows.append(pair(f"{model}: c={c:g} beats c=1", sel(model, c),
                                 sel(model, 1.0)))
    var = sel("Var-RTM")
    for model in ("Gibbs-gRTM", "Gibbs-RTM", "Gibbs-gMMRTM", "Gibbs-MMRTM"):
        t = sel(model)
        if t.empty:
            continue
        best_c = t.groupby("c").auc.mean().idxmax()
        rows.append(pair(f"{model} (c={best_c:g}) beats Var-RTM", sel(model, best_c), var))
    for c in cs:
        rows.append(pair(f"Gibbs-gMMRTM vs Gibbs-gRTM (c={c:g}): hinge ~ logistic",
                         sel("Gibbs-gMMRTM", c), sel("Gibbs-gRTM", c)))
    return pd.DataFrame([r for r in rows if r is not None])


# ---------------------------------------------------------------------- the command
@dataclass
class GRTMOptions:
    """The options of ``topiclink experiment grtm`` (:data:`SPEC`)."""

    dataset: str | None = shared("dataset")
    data: Path | None = shared("data")
    folds: int = option(5, help="Number of folds over documents.")
    only_folds: str | None = shared("only_folds")
    topics: str = option("5,10,15,20,25", help="Values of K, comma-separated.")
    models: str = option("Gibbs-gRTM,Gibbs-RTM,Gibbs-gMMRTM,Gibbs-MMRTM,Var-RTM",
                         help="Comma-separated: Gibbs-gRTM, Gibbs-RTM, Approx-gRTM, "
                         "Gibbs-gMMRTM, Gibbs-MMRTM, Approx-gMMRTM, Var-RTM (or any link "
                         "model's paper name).")
    c: str | None = option(
        None, "--c", help="Regularisation constants of positive pairs, comma-separated "
        "(c_neg = 1); default: each model's own, measured on Cora (4 for full U; 36 for "
        "Gibbs-RTM, 16 for Gibbs-MMRTM; the paper tunes c in 2..10 for full U, up to 36 "
        "for diagonal U).")
    iterations: int = option(400, "--iterations", "-n")
    alpha: float = option(
        0.5, help="Document-topic prior of the Gibbs models (the paper states 5; 0.5 "
        "reproduces its findings on the LINQS data, where 5 leaves the diagonal models "
        "near random).")
    var_rtm_alpha: float = option(0.1, help="Document-topic prior of Var-RTM.")
    negatives: float = option(0.01, help="Fraction of unobserved pairs used as negatives "
                              "(paper: 0.01).")
    seed: int = option(0)
    workers: int = shared("workers", 1)
    out: Path = option(Path("grtm-experiment"), "--out", "-o", help="Output folder "
                       "(created when missing) for the grtm_*.csv tables and grtm_*.png "
                       "figures; results already there are refused unless --force.")
    force: bool = shared("force", False)
    verbose: bool = shared("verbose", True)


@dataclass
class _Plan:
    options: GRTMOptions
    names: list[str]
    topics: list[int]
    c_values: list[float] | None
    folds: list[int] | None


def _check(o: GRTMOptions, ui: Session) -> _Plan:
    """Every option and the output folder, before any data is read."""
    names = ui.names(o.models, link_model_names())
    k_values = ui.int_list(o.topics, "--topics", minimum=2)
    ui.check_model_size(max(k_values))
    c_values = ui.float_list(o.c, "--c", positive=True) if o.c is not None else None
    ui.check(o.folds >= 2, f"--folds must be >= 2, got {o.folds}")
    chosen = (ui.int_list(o.only_folds, "--only-folds", 0, o.folds - 1)
              if o.only_folds is not None else None)
    ui.check(o.iterations >= 1, f"--iterations must be >= 1, got {o.iterations}")
    ui.check(o.alpha > 0, f"--alpha must be > 0, got {o.alpha:g}")
    ui.check(o.var_rtm_alpha > 0, f"--var-rtm-alpha must be > 0, got {o.var_rtm_alpha:g}")
    ui.check(0 < o.negatives <= 1,
             f"--negatives must be a fraction in (0, 1], got {o.negatives:g}")
    ui.check(o.workers >= 1, f"--workers must be >= 1, got {o.workers}")
    ui.check_input_paths(o.data)
    ui.check_out(o.out, "grtm", o.force)
    return _Plan(o, names, k_values, c_values, chosen)


def _load(plan: _Plan, ui: Session, data: Any) -> Any:
    o = plan.options
    ds = data if data is not None else ui.load_data(o.dataset, o.data, default="cora-linqs")
    if ds.corpus is None or ds.links is None:
        raise ui.fail(f"dataset {ds.name!r} has no documents with links")
    ui.check_model_size(max(plan.topics), ds.corpus.n_docs, ds.corpus.n_words,
                        what=f" on {ds.corpus.n_docs} documents x {ds.corpus.n_words} words")
    o.out.mkdir(parents=True, exist_ok=True)
    return ds


def _run(plan: _Plan, ds: Any, ui: Session) -> pd.DataFrame:
    o = plan.options

    def show(row: dict) -> None:
        ui.echo(f"{row['model']:>13s} K={row['K']:<3d} c={row['c']:<5g} fold {row['fold']}: "
                f"link rank {row['link_rank']:7.1f}  word rank {row['word_rank']:7.1f}  "
                f"AUC {row['auc']:.3f}  train {row['train_seconds']:.1f} s")

    settings = GRTMSettings(alpha=o.alpha, negative_ratio=o.negatives, max_iter=o.iterations,
                            var_rtm_alpha=o.var_rtm_alpha)
    return run_grtm_experiment(ds.corpus, ds.links, plan.names, topics=plan.topics,
                               c_values=plan.c_values, n_folds=o.folds, settings=settings,
                               random_state=o.seed, folds=plan.folds, on_row=show,
                               workers=o.workers, csv_path=o.out / "grtm_results.csv")


def write_grtm_outputs(table: pd.DataFrame, out: str | Path, title: str = ""
                       ) -> dict[str, Any]:
    """Write grtm_summary.csv, grtm_findings.csv and the figures (link rank, word rank,
    AUC and training time against K) into ``out``; returns the summary and findings
    tables and the paths."""
    from topiclink.plotting.experiments import plot_metric_vs_topics, save_figure

    out = Path(out)
    summary = summarise(table)
    written: dict[str, Any] = {"summary": summary, "findings": paper_findings(table)}
    written["summary_csv"] = write_csv(summary, out / "grtm_summary.csv")
    written["findings_csv"] = write_csv(written["findings"], out / "grtm_findings.csv")
    for metric in ("link_rank", "word_rank", "auc", "train_seconds"):
        ax = plot_metric_vs_topics(table, metric)
        ax.set_title(f"{title}: {metric.replace('_', ' ')}")
        written[metric] = save_figure(ax.figure, out / f"grtm_{metric}.png")
    return written


def _report(plan: _Plan, ds: Any, table: pd.DataFrame, ui: Session) -> None:
    out = plan.options.out
    written = write_grtm_outputs(table, out, ds.name)
    ui.echo_table(written["summary"])
    if not written["findings"].empty:
        ui.echo("\nthe paper's claims, cell by cell (share of (K, fold) cells where the "
                "first configuration is better):")
        ui.echo_table(written["findings"])
    ui.echo(f"results: {out / 'grtm_results.csv'}, summary, findings and figures in {out}/")


SPEC = register_protocol(ProtocolSpec(
    name="grtm", options=GRTMOptions, check=_check, load=_load, run=_run, report=_report,
    help="The gRTM paper's protocol (default data: cora-linqs): link rank, word rank and "
         "AUC against K over folds."))
