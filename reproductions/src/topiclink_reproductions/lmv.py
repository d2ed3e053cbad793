"""The LMV paper's Cora protocol (Tan, Chan & Zheng 2016, Sec. 6.1-6.2), read from
``papers/lmv.toml``.

For every fold of a k-fold split over documents (test documents removed with all their
links), every K, every eta and every model: fit on the training documents and the
*directed* citations among them, then rank all training documents for every test
document by the score of "the test document cites it" (``link_scores(..., direction=
"out")``) and take the predictive rank of the training documents it truly cites
(:func:`topiclink.metrics.link_rank`; random guessing gives ``(n_train + 1) / 2``).
CPU time of the fit (``time.process_time`` of the process that fits) and its wall time
are recorded.  Rows: one per (model, K, eta, fold), run by
:func:`topiclink.experiments.runner.run_grid` with seeds from the paper file's
``seed_axes`` (fold, K), so the models and the values of eta of one (fold, K) share them.

The paper file holds the grid, the models (the paper's names; ``RTM`` is our Var-RTM in
this paper only) with their settings and the claims, checked by
:mod:`topiclink_reproductions.claims`; only the plateau claim ("LMV stabilises around
K = 9-11", :func:`plateau`) is code.  Priors as the paper's (S5): alpha = 1/K, a
symmetric Dirichlet(eta) on the topics, every Beta prior (1, 1).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.data.splits import Fold, kfold_documents
from topiclink.experiments.registry import (
    Choice,
    ProtocolSpec,
    Session,
    documents,
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
    run_grid,
    write_csv,
)
from topiclink.metrics import link_rank
from topiclink_reproductions.claims import (
    AGREES,
    DISAGREES,
    NOT_CHECKED,
    check_claims,
    claim_lines,
)
from topiclink_reproductions.paper_models import PaperModels, accepts
from topiclink_reproductions.spec import PaperSpec, load_paper

__all__ = ["PAPER", "MODEL_NAMES", "resolve_model", "available_models", "check_models",
           "cell_params", "fit_and_rank", "shared_start", "run_lmv_experiment", "summarise",
           "plateau", "findings", "paper_findings", "write_lmv_outputs", "LMVOptions",
           "load_directed", "echo_rows", "echo_claims", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper file: grid, models and their settings, claims
PAPER: PaperSpec = load_paper("lmv")
#: the paper's models (and Gibbs-gRTM, which the paper does not run), in the file's order
MODEL_NAMES: tuple[str, ...] = PAPER.model_names
#: the plateau claim (not expressible as a claim of the file: it needs the best K)
PLATEAU_K, PLATEAU_TOL = 9, 0.05


def resolve_model(name: str, paper: PaperSpec = PAPER) -> str:
    """The runner's name of a paper name (the file's ``estimator``; ``"RTM"`` ->
    ``"Var-RTM"`` in the LMV paper; others unchanged)."""
    spec = paper.models.get(name)
    return name if spec is None else str(spec.settings.get("estimator", name))


def available_models(paper: PaperSpec = PAPER) -> list[str]:
    """Every name the protocol can run now: the paper's names whose estimator is a link
    model of the runner, then every link model of the runner."""
    known = [n for n in model_names() if "links" in model_fit_requires(n)]
    aliases = [n for n in paper.model_names
               if resolve_model(n, paper) != n and resolve_model(n, paper) in known]
    return [*aliases, *known]


def check_models(models: Sequence[str], paper: PaperSpec = PAPER) -> list[str]:
    """The names, checked (ValueError naming the known ones for an unknown name, e.g. a
    model whose estimator is not written yet)."""
    names = [str(m) for m in models]
    if not names:
        raise ValueError("no model given")
    known = available_models(paper)
    for name in names:
        if name not in known:
            raise ValueError(f"model {name!r} is not available; known link models: "
                             f"{', '.join(known)}")
    return names


def cell_params(models: PaperModels, name: str, K: int, eta: float, seed: int,
                doc_topic_prior: float | None = None
                ) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(runner name, required, optional) constructor parameters of paper model ``name``
    in a cell: K topics, Dir(eta) topics, the cell's seed, alpha = ``doc_topic_prior``
    (None: the paper's 1/K) and the paper file's settings."""
    alpha = 1.0 / K if doc_topic_prior is None else float(doc_topic_prior)
    return models.params(name, {"n_topics": int(K), "topic_word_prior": float(eta),
                                "random_state": int(seed)},
                         {"doc_topic_prior": alpha})


def fit_and_rank(estimator: str, required: dict[str, Any], optional: dict[str, Any],
                 train_corpus: Corpus, train_links: Links, test_corpus: Corpus,
                 test_out: Any) -> tuple[Any, dict[str, Any]]:
    """Fit runner model ``estimator`` and rank the training documents the test documents
    cite.

    Returns the fitted model and: predictive_rank, random_rank ((n_train + 1) / 2),
    improvement (1 - rank / random), cpu_seconds (``time.process_time`` of the fit, all
    threads of this process), wall_seconds, test_seconds, n_iter, converged and
    stop_reason (models that record them; a ``max_iter`` stop is in the row, not
    warned), n_train, n_queries (test documents citing at least one training document).
    """
    model = build_model(estimator, required, optional)
    with warnings.catch_warnings():
        # the row records converged / stop_reason; the warning is logged instead
        warnings.simplefilter("ignore", ConvergenceWarning)
        c0, w0 = time.process_time(), time.perf_counter()
        fit_model(model, train_corpus, links=train_links)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    t0 = time.perf_counter()
    rank = link_rank(model.link_scores(test_corpus, direction="out"), test_out)
    n_train = train_corpus.n_docs
    random_rank = (n_train + 1) / 2
    n_iter = getattr(model, "n_iter_", None)
    return model, {
        "predictive_rank": rank, "random_rank": random_rank,
        "improvement": 1.0 - rank / random_rank,
        "cpu_seconds": cpu, "wall_seconds": wall,
        "test_seconds": time.perf_counter() - t0,
        "n_iter": np.nan if n_iter is None else int(n_iter),
        "converged": getattr(model, "converged_", np.nan),
        "stop_reason": getattr(model, "stop_reason_", ""),
        "n_train": n_train,
        "n_queries": int((np.asarray(test_out.sum(axis=1)).ravel() > 0).sum()),
    }


_START: dict[str, Any] = {}


def shared_start(corpus: Corpus, K: int, eta: float, alpha: float, seed: int, *,
                 n_iter: int = 100, restarts: int = 5) -> np.ndarray:
    """The topic-word counts (K, V) of the fitted LDA every model of one cell starts from
    (:func:`topiclink.families.lmv.algorithm.start_lda`, Dir(alpha), Dir(eta), seeded by the
    cell's seed).  Cached per process for the last key, so the models of a cell reuse it;
    the same numbers in any worker (deterministic in the seed)."""
    from topiclink.families.lmv.algorithm import start_lda

    key = (corpus.n_docs, corpus.n_words, corpus.n_tokens, int(K), float(eta), float(alpha),
           int(seed), int(n_iter), int(restarts))
    if _START.get("key") != key:
        _, nwk = start_lda(corpus.counts, K, alpha, eta, np.random.default_rng(int(seed)),
                           n_iter=n_iter, restarts=restarts)
        _START.clear()
        _START.update(key=key, nwk=nwk)
    return _START["nwk"]


def _run_cell(cell: Cell, context: tuple[Fold, PaperModels]) -> dict[str, Any]:
    fold, models = context
    name, K, eta = cell["model"], int(cell["K"]), float(cell["eta"])
    est, required, optional = cell_params(models, name, K, eta, cell.seed)
    start = models.group("start")
    if start and accepts(est, "init_topics"):
        required["init_topics"] = shared_start(
            fold.train_corpus, K, eta, optional["doc_topic_prior"], cell.seed, **start)
    _, row = fit_and_rank(est, required, optional, fold.train_corpus, fold.train_links,
                          fold.test_corpus, fold.test_out)
    logger.info("%s K=%d eta=%g fold %d: predictive rank %.1f (random %.1f), CPU %.1f s",
                name, K, eta, fold.fold, row["predictive_rank"], row["random_rank"],
                row["cpu_seconds"])
    return {"model": name, "estimator": est, "K": K, "eta": eta, "fold": fold.fold, **row}


def _fold_of(cell: Cell, context: tuple[list[Fold], PaperModels]
             ) -> tuple[Fold, PaperModels]:
    folds, models = context
    return folds[cell["fold"]], models


def _as_data(dataset: Any) -> tuple[str, Corpus, Links]:
    """(name, corpus, directed links) of a Dataset, a registered name or (corpus, links)."""
    if isinstance(dataset, str):
        from topiclink.datasets import load_dataset

        dataset = load_dataset(dataset, directed=True)
    if isinstance(dataset, tuple):
        corpus, links = dataset
        name = getattr(corpus, "name", "data")
    else:
        corpus, links, name = dataset.corpus, dataset.links, dataset.name
    if corpus is None or links is None:
        raise ValueError(f"dataset {name!r} has no documents with links")
    if not links.directed:
        raise ValueError(f"dataset {name!r} has undirected links; the LMV protocol needs "
                         "directed citations (load it with directed=True)")
    return str(name), corpus, links


def run_lmv_experiment(dataset: Any, *, folds: int = PAPER.split.get("folds", 5),
                       topics: Iterable[int] = PAPER.axis("K"),
                       etas: Iterable[float] = PAPER.axis("eta"),
                       models: Sequence[str] = MODEL_NAMES, workers: int = 1,
                       seed: int = 0, max_iter: int | None = None,
                       out: str | Path | None = None,
                       settings: PaperModels | None = None,
                       only_folds: Sequence[int] | None = None,
                       on_row: Callable[[dict[str, Any]], None] | None = None
                       ) -> pd.DataFrame:
    """Run the protocol; one row per (model, K, eta, fold).

    Parameters
    ----------
    dataset : Dataset, registered name (loaded with ``directed=True``) or (corpus, links)
        Directed citations (``i -> j``: i cites j).
    folds : int
        k of the k-fold split over documents (from ``seed``).
    topics, etas : values of K and of the topic-word prior eta.
    models : paper names (:data:`MODEL_NAMES`; any link model the runner knows).
    workers : fits run at once in separate processes (rows do not depend on it).
    seed : the run's seed (folds, and every cell's seed from its fold and K).
    max_iter : overrides every model's iteration limit (None: the paper file's).
    out : folder; when given, ``lmv_results.csv`` is rewritten after every row and the
        summary, findings and figures are written at the end (:func:`write_lmv_outputs`).
    settings : the models' settings (default: ``PaperModels.of(PAPER)``; ``max_iter``
        given here wins).
    only_folds : run only these fold indices.

    Columns: model (the paper's name), estimator, K, eta, fold, predictive_rank,
    random_rank, improvement, cpu_seconds, wall_seconds, test_seconds, n_iter, converged,
    stop_reason, n_train, n_queries.
    """
    names = check_models(models)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    settings = settings or PaperModels.of(PAPER)
    if max_iter is not None:        # the caller's settings are left as they are
        settings = dataclasses.replace(settings, max_iter=int(max_iter))
    ds_name, corpus, links = _as_data(dataset)
    all_folds = kfold_documents(corpus, links, n_folds=folds, random_state=seed)
    chosen = list(range(len(all_folds))) if only_folds is None else [int(f) for f in only_folds]
    for f in chosen:
        if not 0 <= f < len(all_folds):
            raise ValueError(f"fold {f} is not in [0, {len(all_folds)})")
    cells = grid({"fold": chosen, "K": [int(k) for k in topics],
                  "eta": [float(e) for e in etas], "model": names})
    out_dir = None if out is None else Path(out)
    table = run_grid(cells, _run_cell, (all_folds, settings), base_seed=seed,
                     seed_axes=PAPER.seed_axes, workers=workers, on_row=on_row,
                     csv_path=None if out_dir is None else out_dir / "lmv_results.csv",
                     context_of=_fold_of)
    table.attrs["dataset"] = ds_name
    if out_dir is not None:
        write_lmv_outputs(table, out_dir, title=ds_name)
    return table


# ---------------------------------------------------------------------- summary, claims
def summarise(table: pd.DataFrame, metrics: Sequence[str] = PAPER.metrics) -> pd.DataFrame:
    """Mean and standard deviation over folds for every (model, K, eta), with the random
    rank and the number of folds."""
    metrics = [m for m in metrics if m in table.columns]
    keys = ["model", "K", "eta"]
    agg = table.groupby(keys, sort=False)[metrics].agg(["mean", "std"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    agg["random_rank"] = table.groupby(keys, sort=False)["random_rank"].mean()
    agg["folds"] = table.groupby(keys, sort=False)["fold"].nunique()
    return agg.reset_index().sort_values(["eta", "model", "K"], kind="stable",
                                         ignore_index=True)


def plateau(summary: pd.DataFrame, eta: float = 0.5) -> dict[str, Any]:
    """The claim "LMV stabilises around K = 9-11" (Sec. 6.2) as a row of
    :func:`~topiclink_reproductions.claims.check_claims`: every K >= 9 within 5 % of the
    best K >= 9 and no K < 9 better.  Code, not a claim of the file: it needs the best K.
    """
    name = f"LMV stabilises around K=9-11 (eta={eta:g})"
    row = {"claim": name, "metric": "predictive_rank_mean", "cells": 0}
    lmv = summary[(summary["model"] == "LMV") & np.isclose(summary["eta"], eta)]
    if not (lmv["K"] >= PLATEAU_K).any():
        return {**row, "verdict": NOT_CHECKED, "detail": f"needs LMV at K >= {PLATEAU_K}"}
    ranks = dict(zip(lmv["K"], lmv["predictive_rank_mean"], strict=True))
    best = min(r for k, r in ranks.items() if k >= PLATEAU_K)
    flat = all(r <= best * (1 + PLATEAU_TOL) for k, r in ranks.items() if k >= PLATEAU_K)
    no_low = all(r >= best for k, r in ranks.items() if k < PLATEAU_K)
    detail = (", ".join(f"K={k}: {r:.1f}" for k, r in sorted(ranks.items()))
              + f" (K >= {PLATEAU_K} within {PLATEAU_TOL:.0%} of their best: {flat}; no "
              f"K < {PLATEAU_K} better: {no_low}; best K {min(ranks, key=ranks.get)})")
    return {**row, "verdict": AGREES if flat and no_low else DISAGREES, "detail": detail,
            "cells": len(ranks)}


def findings(summary: pd.DataFrame) -> pd.DataFrame:
    """The paper's Cora claims on the summary: those of the paper file, then
    :func:`plateau`; one row each (claim, verdict, detail, ...)."""
    checked = check_claims(summary, PAPER.claims)
    return pd.concat([checked, pd.DataFrame([plateau(summary)])], ignore_index=True)


def paper_findings(summary: pd.DataFrame) -> list[str]:
    """The paper's Cora claims as lines, ``claim: VERDICT; our numbers``."""
    return claim_lines(findings(summary), PAPER.claims)


def write_lmv_outputs(table: pd.DataFrame, out: str | Path, title: str = "") -> dict[str, Path]:
    """Write lmv_results.csv, lmv_summary.csv, lmv_findings.md and the figures
    (predictive rank and CPU time against K, one panel per eta) into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"results": write_csv(table, out / "lmv_results.csv")}
    summary = summarise(table)
    paths["summary"] = write_csv(summary, out / "lmv_summary.csv")
    text = "# LMV protocol" + (f" on {title}" if title else "") + ": the paper's claims\n\n"
    text += "\n".join(f"- {line}" for line in paper_findings(summary)) + "\n"
    path = out / "lmv_findings.md"
    path.write_text(text)
    paths["findings"] = path
    from topiclink.plotting.experiments import plot_metric_panels, save_figure

    for metric in ("predictive_rank", "cpu_seconds"):
        fig = plot_metric_panels(table, metric, panel="eta", reference="random_rank"
                                 if metric == "predictive_rank" else None)
        if title:
            fig.suptitle(title)
        paths[metric] = save_figure(fig, out / f"lmv_{metric}.png")
    return paths


# ---------------------------------------------------------------------- the command
def echo_rows(ui: Session, line: str) -> Callable[[dict[str, Any]], None]:
    """A run's ``on_row``: each row printed as ``line.format(**row)``."""
    return lambda row: ui.echo(line.format(**row))


def echo_claims(ui: Session, lines: Sequence[str], header: str = "the paper's claims:"
                ) -> None:
    """The checked claims printed under ``header``."""
    ui.echo(f"\n{header}")
    for line in lines:
        ui.echo(f"  {line}")


@dataclass
class LMVOptions:
    """The options of ``topiclink experiment lmv`` (:data:`SPEC`; split by time, the
    hep-th protocol of :mod:`topiclink_reproductions.lmv_kdd` runs them).  The defaults
    of the grid and the models are the paper file's."""

    dataset: str | None = shared("dataset")
    data: Path | None = shared("data")
    folds: int = option(PAPER.split.get("folds", 5), help="Number of folds over documents.")
    only_folds: str | None = shared("only_folds")
    topics: str = option(PAPER.joined(PAPER.axis("K")), help="Values of K, comma-separated.")
    eta: str = option(PAPER.joined(PAPER.axis("eta")), "--eta",
                      help="Topic-word priors eta, comma-separated.")
    models: str = option(",".join(MODEL_NAMES),
                         help="Comma-separated paper names: LMV, LMVS, PLLDA, RTM (= "
                         "Var-RTM), LDA+Reg, Gibbs-gRTM (or any link model's paper name).")
    max_iter: int | None = option(None, "--max-iter", help="Iteration limit of every model "
                                  "(default: each model's own).")
    seed: int = option(0)
    workers: int = shared("workers", 1)
    out: Path | None = option(None, "--out", "-o", help="Output folder (created when "
                              "missing) for lmv_results.csv, lmv_summary.csv, "
                              "lmv_findings.md and lmv_*.png; without it the summary and "
                              "findings are only printed.")
    force: bool = shared("force", False)
    verbose: bool = shared("verbose", True)
    protocol: str = option(
        "kfold", help="kfold (the paper's Cora protocol, Sec. 6) or kdd (the hep-th split "
        "of Sec. 7.2: --dataset hepth; models LMVS(t), LMVS, PLLDA, RTM, Gibbs-gRTM; "
        "default --topics 10,15,20,25,30 and --eta 0.5,0.1,0.01; --folds ignored).")
    n_jobs: int = option(1, "--n-jobs", help="Threads of one fit (--protocol kdd: the pair "
                         "blocks of LMVS / PLLDA minibatches; -1: all cores).")
    split: str | None = option(
        None, "--split", help="kfold: random folds over documents (the Cora protocol); "
        "time: train on the documents before --cutoff and the citations among them, test "
        "on the later documents citing them (the hep-th protocol; models LMVS(t), LMVS, "
        "PLLDA, RTM, Gibbs-gRTM).  Default: kfold; time with --protocol kdd.",
        show_default=False)
    cutoff: str | None = option(
        None, "--cutoff", help="--split time: documents before this time train; written "
        "as the --time-column is, as an ISO date (2002-01) or a fractional year (2002.0).  "
        "Default with --dataset hepth: 2002-01 (the paper's).", show_default=False)
    source: Any = documents()


def _choose(o: LMVOptions, ui: Session) -> Choice | None:
    """The split decides the protocol: by time, the hep-th one (``lmv-kdd``)."""
    ui.check(o.protocol in ("kfold", "kdd"),
             f"--protocol must be kfold or kdd, got {o.protocol!r}")
    split_kind = o.split if o.split is not None else ("time" if o.protocol == "kdd"
                                                      else "kfold")
    ui.check(split_kind in ("kfold", "time"), f"--split must be kfold or time, got {o.split!r}")
    ui.check(o.cutoff is None or split_kind == "time", "--cutoff needs --split time")
    if o.protocol == "kdd":
        ui.check(o.source is None, "--protocol kdd is the hep-th protocol (--dataset hepth); "
                 "for your own --documents give --split time --cutoff DATE")
        ui.check(split_kind == "time", "--protocol kdd splits by time; drop --split kfold")
    if o.source is not None:
        ui.check(o.dataset is None and o.data is None, "give either --documents or "
                 "--dataset / --data, not both")
        o.source.check(requires=("X", "links"))
    return Choice("lmv-kdd") if split_kind == "time" else None


def _check(o: LMVOptions, ui: Session) -> dict[str, Any]:
    """Every option of the Cora protocol and the output folder, before any data: the
    keyword arguments of :func:`run_lmv_experiment`."""
    ui.check(o.n_jobs == 1, "--n-jobs applies to --protocol kdd (the Cora protocol's fits "
             "run one thread each; use --workers)")
    k_values = ui.int_list(o.topics, "--topics", minimum=2)
    ui.check_model_size(max(k_values))
    ui.check(o.folds >= 2, f"--folds must be >= 2, got {o.folds}")
    ui.check(o.max_iter is None or o.max_iter >= 1,
             f"--max-iter must be >= 1, got {o.max_iter}")
    ui.check(o.workers >= 1, f"--workers must be >= 1, got {o.workers}")
    if o.out is not None:
        ui.check_out(o.out, "lmv", o.force)
    return {"models": ui.names(o.models, available_models()), "topics": k_values,
            "etas": ui.float_list(o.eta, "--eta", positive=True), "folds": o.folds,
            "only_folds": (ui.int_list(o.only_folds, "--only-folds", 0, o.folds - 1)
                           if o.only_folds is not None else None),
            "workers": o.workers, "seed": o.seed, "max_iter": o.max_iter, "out": o.out}


def load_directed(dataset: str | None, data: Path | None, default: str,
                  ui: Session) -> Any:
    """The dataset with its links read as directed citations (i -> j: i cites j)."""
    from topiclink.datasets import load_dataset

    ui.check_input_paths(data)
    name = dataset if dataset is not None else (None if data is not None else default)
    try:
        with ui.errors():
            ds = load_dataset(name, data_dir=data, directed=True)
    except TypeError:  # a loader without a `directed` option
        ds = ui.load_data(dataset, data, default=default)
    if ds.corpus is None or ds.links is None:
        raise ui.fail(f"dataset {ds.name!r} has no documents with links")
    if not ds.links.directed:
        raise ui.fail(f"dataset {ds.name!r} has undirected links; the LMV protocol needs "
                      "directed citations")
    return ds


def _load(o: LMVOptions, plan: dict[str, Any], ui: Session) -> Any:
    if o.source is not None:
        ds = o.source.load()
        if ds.links is None or not ds.links.directed:
            raise ui.fail("the LMV protocol needs directed citations: give --edge-direction "
                          "source-cites-target or target-cites-source")
    else:
        ds = load_directed(o.dataset, o.data, PAPER.dataset or "cora-rlda", ui)
    ui.check_model_size(max(plan["topics"]), ds.corpus.n_docs, ds.corpus.n_words,
                        what=f" on {ds.corpus.n_docs} documents x {ds.corpus.n_words} words")
    ui.echo(f"{ds.name}: {ds.corpus.n_docs} documents, {ds.links.n_links} directed links")
    return ds


#: a row as the command prints it
ROW = ("{model:>10s} K={K:<3d} eta={eta:<4g} fold {fold}: predictive rank "
       "{predictive_rank:7.1f} (random {random_rank:.1f})  CPU {cpu_seconds:.1f} s")


def _report(out: Path | None, table: pd.DataFrame, ui: Session) -> None:
    """The summary and the paper's claims printed (the files are written by the run)."""
    summary = summarise(table)
    ui.echo_table(summary)
    echo_claims(ui, paper_findings(summary))
    if out is not None:
        ui.echo(f"results: {out / 'lmv_results.csv'}, summary, findings and figures in "
                f"{out}/")


#: the steps: ``check`` gives the plan (options, keyword arguments of the run), which
#: ``load`` (the data), ``run`` and ``report`` read
SPEC = register_protocol(ProtocolSpec(
    name="lmv", options=LMVOptions, choose=_choose,
    check=lambda o, ui: (o, _check(o, ui)),
    load=lambda plan, ui, data: _load(*plan, ui),
    run=lambda plan, ds, ui: run_lmv_experiment(ds, **plan[1], on_row=echo_rows(ui, ROW)),
    report=lambda plan, ds, table, ui: _report(plan[0].out, table, ui),
    help="The LMV paper's Cora protocol (default data: cora-rlda, directed citations): "
         "predictive rank and CPU time against K, per eta, over folds; ``--protocol "
         "kdd``: the hep-th protocol (Sec. 7.2, Figure 7); your own ``--documents`` and "
         "``--edges`` with either split (``--split time --cutoff DATE`` with "
         "``--time-column``)."))
