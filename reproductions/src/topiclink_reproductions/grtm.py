"""The gRTM paper's link-prediction protocol (Chen et al. 2015, Sec. 5.1) as a function.

For every fold of a k-fold split over documents (test documents removed with all their
links), every K and every model: fit on the training documents and links (the Gibbs
models add a fixed random subsample of unobserved training pairs as negatives; Var-RTM
uses positive links only), then for every test document rank all training documents by
link score (link rank), rank the vocabulary by the words predicted from its links alone
(word rank) and compute the link ROC/PR AUC over all (test, training) pairs.  The result
is a tidy table, one row per (model, K, c, fold), run by
:func:`topiclink.experiments.runner.run_grid` (seeds from the fold and K).

The grid, the models with their settings and the paper's claims are data
(``papers/grtm.toml``, :data:`PAPER`; the claims checked by
:func:`topiclink_reproductions.claims.check_claims`); this module holds the fold
evaluation and the command.
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
from topiclink_reproductions.claims import check_claims
from topiclink_reproductions.spec import load_paper
from topiclink_reproductions.steps import finish_check, read_dataset

__all__ = ["GRTMSettings", "MODEL_NAMES", "DEFAULT_C", "PAPER", "run_grtm_experiment",
           "evaluate_fold", "summarise", "paper_findings", "link_model_names",
           "default_c", "GRTMOptions", "write_grtm_outputs", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper's protocol as data (``papers/grtm.toml``)
PAPER = load_paper("grtm")
_S = PAPER.settings
#: the paper's models (the protocol also runs any other link model by its paper name)
MODEL_NAMES = PAPER.model_names
#: Default regularisation constant c of positive pairs per model (c_neg = 1), used when
#: no ``c_values`` are given; measured as ``papers/grtm.toml`` says.
DEFAULT_C: dict[str, float] = {name: float(model.settings["c"])
                               for name, model in PAPER.models.items()
                               if "c" in model.settings}
#: c of a link model with a ``c`` that has no entry in :data:`DEFAULT_C`
FALLBACK_C = float(_S["c"])
_VAR_RTM = PAPER.model_settings("Var-RTM")


@dataclass
class GRTMSettings:
    """Hyper-parameters of the protocol (defaults: ``papers/grtm.toml``).

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

    alpha: float = _S["doc_topic_prior"]
    beta: float = _S["topic_word_prior"]
    negative_ratio: float = _S["negative_ratio"]
    max_iter: int = _S["max_iter"]
    weight_prior_var: float = _S["weight_prior_var"]
    hinge_cost: float = _S["hinge_cost"]
    var_rtm_iter: int = _VAR_RTM["max_iter"]
    var_rtm_alpha: float = _VAR_RTM["doc_topic_prior"]
    model_params: dict[str, dict[str, Any]] = field(default_factory=dict)

    def params(self, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """(required, optional) constructor parameters of model ``name``."""
        optional: dict[str, Any] = {
            "doc_topic_prior": self.alpha, "topic_word_prior": self.beta,
            "max_iter": self.max_iter, "negative_ratio": self.negative_ratio,
            "weight_prior_var": self.weight_prior_var, "hinge_cost": self.hinge_cost,
            "evaluate_every": _S["evaluate_every"]}
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
                        topics: Iterable[int] = PAPER.axis("K"),
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
                    seed_axes=PAPER.seed_axes, workers=workers, on_row=on_row,
                    csv_path=csv_path, context_of=_fold_of)


def _fold_of(cell: Cell, context: tuple[list[Fold], GRTMSettings]
             ) -> tuple[Fold, GRTMSettings]:
    """What a cell needs: its fold (a worker is sent that fold only) and the settings."""
    folds, settings = context
    return folds[cell["fold"]], settings


def summarise(table: pd.DataFrame, metrics: Sequence[str] = PAPER.metrics) -> pd.DataFrame:
    """Mean and standard deviation over folds for every (model, K, c)."""
    agg = table.groupby(["model", "K", "c"], dropna=False)[list(metrics)].agg(["mean", "std"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    return agg.reset_index()


def paper_findings(table: pd.DataFrame) -> pd.DataFrame:
    """The paper's claims (``papers/grtm.toml``) checked cell by cell on a results table:
    one row per claim (:func:`topiclink_reproductions.claims.check_claims`: the verdict,
    the share of (K, fold) cells where the first configuration is better, the means).

    Claims: full U beats diagonal (per loss, at c = 1 and 4, and each at its own c);
    c > 1 beats c = 1 (per model); each Gibbs model beats Var-RTM (at its own c); hinge
    is comparable to logistic (full U, c = 4).  A claim whose cells were not run is NOT
    CHECKED.
    """
    return check_claims(table, PAPER.claims)


# ---------------------------------------------------------------------- the command
@dataclass
class GRTMOptions:
    """The options of ``topiclink experiment grtm`` (:data:`SPEC`)."""

    dataset: str | None = shared("dataset")
    data: Path | None = shared("data")
    folds: int = option(PAPER.split.get("folds"), help="Number of folds over documents.")
    only_folds: str | None = shared("only_folds")
    topics: str = option(PAPER.joined(PAPER.axis("K")), help="Values of K, comma-separated.")
    models: str = option(PAPER.joined(PAPER.axis("model")),
                         help="Comma-separated: Gibbs-gRTM, Gibbs-RTM, Approx-gRTM, "
                         "Gibbs-gMMRTM, Gibbs-MMRTM, Approx-gMMRTM, Var-RTM (or any link "
                         "model's paper name).")
    c: str | None = option(
        None, "--c", help="Regularisation constants of positive pairs, comma-separated "
        "(c_neg = 1); default: each model's own, measured on Cora (4 for full U; 36 for "
        "Gibbs-RTM, 16 for Gibbs-MMRTM; the paper tunes c in 2..10 for full U, up to 36 "
        "for diagonal U).")
    iterations: int = option(_S["max_iter"], "--iterations", "-n")
    alpha: float = option(
        _S["doc_topic_prior"], help="Document-topic prior of the Gibbs models (the paper "
        "states 5; 0.5 reproduces its findings on the LINQS data, where 5 leaves the "
        "diagonal models near random).")
    var_rtm_alpha: float = option(_VAR_RTM["doc_topic_prior"],
                                  help="Document-topic prior of Var-RTM.")
    negatives: float = option(_S["negative_ratio"], help="Fraction of unobserved pairs "
                              "used as negatives (paper: 0.01).")
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
    finish_check(o, ui, "grtm")
    return _Plan(o, names, k_values, c_values, chosen)


def _load(plan: _Plan, ui: Session, data: Any) -> Any:
    o = plan.options
    ds = read_dataset(PAPER, o, ui, data, needs=("corpus", "links"))
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
    for metric in PAPER.metrics:
        ax = plot_metric_vs_topics(table, metric)
        ax.set_title(f"{title}: {metric.replace('_', ' ')}")
        written[metric] = save_figure(ax.figure, out / f"grtm_{metric}.png")
    return written


def _report(plan: _Plan, ds: Any, table: pd.DataFrame, ui: Session) -> None:
    out = plan.options.out
    written = write_grtm_outputs(table, out, ds.name)
    ui.echo_table(written["summary"])
    if not written["findings"].empty:
        ui.echo("\nthe paper's claims, cell by cell (share: of the (K, fold) cells, where "
                "the first configuration is better):")
        ui.echo_table(written["findings"])
    ui.echo(f"results: {out / 'grtm_results.csv'}, summary, findings and figures in {out}/")


SPEC = register_protocol(ProtocolSpec(
    name="grtm", options=GRTMOptions, check=_check, load=_load, run=_run, report=_report,
    help="The gRTM paper's protocol (default data: cora-linqs): link rank, word rank and "
         "AUC against K over folds."))
