"""``topiclink experiment ...``: the papers' evaluation protocols (CSV tables and figures)."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from topiclink.cli.common import (
    CheckpointDirOpt,
    CheckpointEveryOpt,
    DataDirOpt,
    DatasetOpt,
    ForceOpt,
    VerboseOpt,
    WorkersOpt,
    check,
    check_input_paths,
    check_model_size,
    check_out_dir,
    echo_table,
    fail,
    float_list,
    int_list,
    load_data,
    reported_errors,
    setup_logging,
)
from topiclink.cli.documents import DocumentSource, document_options

__all__ = ["app"]

app = typer.Typer(help="Run a paper's evaluation protocol; writes CSV and figures.",
                  no_args_is_help=True,
                  rich_markup_mode=None)

#: options that change neither a cell's row nor which cells there are
_NOT_SETTINGS = frozenset({"verbose", "workers", "force", "out", "n_jobs"})


def checkpointable(command: Callable[..., None]) -> Callable[..., None]:
    """Give an experiment command ``--checkpoint-dir`` / ``--checkpoint-every``: its grid
    skips the cells a previous run of the same command finished and its fits resume
    from their checkpoints (:mod:`topiclink.experiments.grid_checkpoint`); the output
    folder's earlier (partial) results are then replaced without ``--force``.  The
    folder is refused when it belongs to a run with other settings."""

    @functools.wraps(command)
    def wrapper(*args: Any, checkpoint_dir: Path | None = None,
                checkpoint_every: str = "5min", **kwargs: Any) -> None:
        if checkpoint_dir is None:
            return command(*args, **kwargs)
        from topiclink.experiments.grid_checkpoint import grid_checkpoint
        from topiclink.models.checkpoint import checkpoint_folder, parse_every

        bound = inspect.signature(command).bind(*args, **kwargs)
        bound.apply_defaults()
        settings = {"command": command.__name__, **{
            k: str(v) if isinstance(v, Path) else v for k, v in bound.arguments.items()
            if k not in _NOT_SETTINGS}}
        try:
            parse_every(checkpoint_every)
        except (TypeError, ValueError) as exc:
            raise fail(str(exc).replace("checkpoint_every", "--checkpoint-every")) from None
        resuming = (checkpoint_dir / "grid.json").exists()
        if resuming and "force" in bound.arguments:
            bound.arguments["force"] = True
        with contextlib.ExitStack() as stack:
            with reported_errors():
                stack.enter_context(grid_checkpoint(checkpoint_dir, settings,
                                                    checkpoint_every))
                stack.enter_context(checkpoint_folder(checkpoint_dir / "fits",
                                                      checkpoint_every))
            if resuming:
                typer.echo(f"resuming from {checkpoint_dir}")
            return command(*bound.args, **bound.kwargs)

    signature = inspect.signature(command, eval_str=True)
    params = list(signature.parameters.values())
    extra = [inspect.Parameter("checkpoint_dir", inspect.Parameter.KEYWORD_ONLY,
                               default=None, annotation=CheckpointDirOpt),
             inspect.Parameter("checkpoint_every", inspect.Parameter.KEYWORD_ONLY,
                               default="5min", annotation=CheckpointEveryOpt)]
    position = next((i for i, p in enumerate(params) if p.name == "verbose"), len(params))
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*params[:position], *extra, *params[position:]])
    wrapper.__annotations__ = {**{p.name: p.annotation for p in params},
                               "checkpoint_dir": CheckpointDirOpt,
                               "checkpoint_every": CheckpointEveryOpt}
    return wrapper


def _names(models: str, known: list[str] | tuple[str, ...]) -> list[str]:
    names = [m.strip() for m in models.split(",") if m.strip()]
    if not names:
        raise fail(f"--models needs at least one model; known: {', '.join(known)}")
    unknown = [m for m in names if m not in known]
    if unknown:
        raise fail(f"unknown model {unknown[0]!r}; known: {', '.join(known)}")
    return names


def _check_out(out: Path, prefix: str, force: bool) -> None:
    """The output folder is writable and holds no earlier results (unless ``force``)."""
    check_out_dir(out)
    if out.is_dir() and not force:
        earlier = sorted(p.name for p in out.glob(f"{prefix}_*") if p.is_file())
        if earlier:
            raise fail(f"{out} already holds results ({', '.join(earlier[:3])}"
                       f"{', ...' if len(earlier) > 3 else ''}); give --force to replace "
                       "them or another --out")


def _figure(table, metric: str, title: str, path: Path) -> None:  # noqa: ANN001
    """One metric against K, one line per configuration, saved to ``path``."""
    from topiclink.plotting.experiments import plot_metric_vs_topics

    ax = plot_metric_vs_topics(table, metric)
    ax.set_title(title)
    ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


OnlyFoldsOpt = Annotated[str | None, typer.Option(
    "--only-folds", help="Run only these fold indices, e.g. 0,1 (the rows of a fold do not "
    "depend on which other folds run).")]


@app.command("grtm")
@checkpointable
def experiment_grtm(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    folds: Annotated[int, typer.Option(help="Number of folds over documents.")] = 5,
    only_folds: OnlyFoldsOpt = None,
    topics: Annotated[str, typer.Option(help="Values of K, comma-separated.")]
    = "5,10,15,20,25",
    models: Annotated[str, typer.Option(help="Comma-separated: Gibbs-gRTM, Gibbs-RTM, "
                                        "Approx-gRTM, Gibbs-gMMRTM, Gibbs-MMRTM, "
                                        "Approx-gMMRTM, Var-RTM (or any link model's "
                                        "paper name).")]
    = "Gibbs-gRTM,Gibbs-RTM,Gibbs-gMMRTM,Gibbs-MMRTM,Var-RTM",
    c: Annotated[str | None, typer.Option(
        "--c", help="Regularisation constants of positive pairs, comma-separated (c_neg = "
        "1); default: each model's own, measured on Cora (4 for full U; 36 for Gibbs-RTM, 16 "
        "for Gibbs-MMRTM; the paper tunes c in 2..10 for full U, up to 36 for diagonal "
        "U).")]
    = None,
    iterations: Annotated[int, typer.Option("--iterations", "-n")] = 400,
    alpha: Annotated[float, typer.Option(
        help="Document-topic prior of the Gibbs models (the paper states 5; 0.5 "
             "reproduces its findings on the LINQS data, where 5 leaves the diagonal "
             "models near random).")] = 0.5,
    var_rtm_alpha: Annotated[float, typer.Option(help="Document-topic prior of Var-RTM.")]
    = 0.1,
    negatives: Annotated[float, typer.Option(help="Fraction of unobserved pairs used as "
                                             "negatives (paper: 0.01).")] = 0.01,
    seed: Annotated[int, typer.Option()] = 0,
    workers: WorkersOpt = 1,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output folder (created when missing) for the grtm_*.csv "
        "tables and grtm_*.png figures; results already there are refused unless "
        "--force.")] = Path("grtm-experiment"),
    force: ForceOpt = False,
    verbose: VerboseOpt = True,
) -> None:
    """The gRTM paper's protocol (default data: cora-linqs): link rank, word rank and AUC
    against K over folds."""
    from topiclink.experiments.grtm import (
        GRTMSettings,
        link_model_names,
        paper_findings,
        run_grtm_experiment,
        summarise,
    )
    from topiclink.experiments.runner import write_csv

    setup_logging(verbose)
    # every option, the data path and the output folder before reading any data
    names = _names(models, link_model_names())
    k_values = int_list(topics, "--topics", minimum=2)
    check_model_size(max(k_values))
    c_values = float_list(c, "--c", positive=True) if c is not None else None
    check(folds >= 2, f"--folds must be >= 2, got {folds}")
    chosen = (int_list(only_folds, "--only-folds", 0, folds - 1)
              if only_folds is not None else None)
    check(iterations >= 1, f"--iterations must be >= 1, got {iterations}")
    check(alpha > 0, f"--alpha must be > 0, got {alpha:g}")
    check(var_rtm_alpha > 0, f"--var-rtm-alpha must be > 0, got {var_rtm_alpha:g}")
    check(0 < negatives <= 1, f"--negatives must be a fraction in (0, 1], got {negatives:g}")
    check(workers >= 1, f"--workers must be >= 1, got {workers}")
    check_input_paths(data)
    _check_out(out, "grtm", force)
    ds = load_data(dataset, data, default="cora-linqs")
    if ds.corpus is None or ds.links is None:
        raise fail(f"dataset {ds.name!r} has no documents with links")
    check_model_size(max(k_values), ds.corpus.n_docs, ds.corpus.n_words,
                     what=f" on {ds.corpus.n_docs} documents x {ds.corpus.n_words} words")
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "grtm_results.csv"

    def show(row: dict) -> None:
        typer.echo(f"{row['model']:>13s} K={row['K']:<3d} c={row['c']:<5g} fold {row['fold']}: "
                   f"link rank {row['link_rank']:7.1f}  word rank {row['word_rank']:7.1f}  "
                   f"AUC {row['auc']:.3f}  train {row['train_seconds']:.1f} s")

    settings = GRTMSettings(alpha=alpha, negative_ratio=negatives, max_iter=iterations,
                            var_rtm_alpha=var_rtm_alpha)
    with reported_errors():
        table = run_grtm_experiment(
            ds.corpus, ds.links, names, topics=k_values,
            c_values=c_values, n_folds=folds, settings=settings, random_state=seed,
            folds=chosen, on_row=show, workers=workers, csv_path=csv_path)
    summary = summarise(table)
    write_csv(summary, out / "grtm_summary.csv")
    findings = paper_findings(table)
    write_csv(findings, out / "grtm_findings.csv")
    for metric in ("link_rank", "word_rank", "auc", "train_seconds"):
        _figure(table, metric, f"{ds.name}: {metric.replace('_', ' ')}",
                out / f"grtm_{metric}.png")
    echo_table(summary)
    if not findings.empty:
        typer.echo("\nthe paper's claims, cell by cell (share of (K, fold) cells where the "
                   "first configuration is better):")
        echo_table(findings)
    typer.echo(f"results: {csv_path}, summary, findings and figures in {out}/")


@app.command("slda")
@checkpointable
def experiment_slda(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    task: Annotated[str, typer.Option(help="binary (alt.atheism vs talk.religion.misc on "
                                      "20 Newsgroups) or multiclass.")] = "binary",
    topics: Annotated[str, typer.Option(help="Values of K, comma-separated.")]
    = "5,10,15,20,25,30",
    models: Annotated[str, typer.Option(help="Comma-separated: gSLDA, gMedLDA, LDA+SVM, "
                                        "tomotopy-SLDA, vSLDA (variational sLDA, "
                                        "binary task only).")]
    = "gSLDA,gMedLDA,LDA+SVM,tomotopy-SLDA",
    c: Annotated[str, typer.Option("--c", help="Regularisation constants, comma-separated.")]
    = "1,25",
    iterations: Annotated[int, typer.Option("--iterations", "-n")] = 200,
    runs: Annotated[int, typer.Option(help="Repetitions with different seeds.")] = 1,
    n_jobs: Annotated[int, typer.Option(help="Processes for one-vs-all classes.")] = 1,
    workers: WorkersOpt = 1,
    seed: Annotated[int, typer.Option()] = 0,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output folder (created when missing) for the slda_*.csv "
        "tables and slda_*.png figures; results already there are refused unless "
        "--force.")] = Path("slda-experiment"),
    force: ForceOpt = False,
    verbose: VerboseOpt = True,
) -> None:
    """The gSLDA / Gibbs MedLDA protocol (default data: 20newsgroups): accuracy and time
    against K and c."""
    import numpy as np

    from topiclink.experiments.runner import write_csv
    from topiclink.experiments.slda import (
        C_MODELS,
        MODEL_NAMES,
        prepare_task,
        run_slda_experiment,
    )

    setup_logging(verbose)
    # every option, the data path and the output folder before reading any data
    names = _names(models, MODEL_NAMES)
    check(task in ("binary", "multiclass"), f"--task must be binary or multiclass, got "
          f"{task!r}")
    k_values = int_list(topics, "--topics", minimum=2)
    check_model_size(max(k_values))
    c_values = float_list(c, "--c", positive=True)
    check(iterations >= 1, f"--iterations must be >= 1, got {iterations}")
    check(runs >= 1, f"--runs must be >= 1, got {runs}")
    check(n_jobs != 0, "--n-jobs must be an integer other than 0 (-1: all cores), got 0")
    check(workers >= 1, f"--workers must be >= 1, got {workers}")
    check_input_paths(data)
    _check_out(out, "slda", force)
    ds = load_data(dataset, data, default="20newsgroups")
    with reported_errors():
        prepared = prepare_task(ds, task, random_state=seed)
    typer.echo(f"{prepared.name}: {prepared.train.n_docs} training / {prepared.test.n_docs} "
               f"test documents, {prepared.train.n_words} words, "
               f"{len(np.unique(prepared.y_train))} classes")
    out.mkdir(parents=True, exist_ok=True)

    def show(row: dict) -> None:
        typer.echo(f"{row['model']:>14s} K={row['K']:<3d} c={row['c']:<6g} run {row['run']}: "
                   f"accuracy {row['accuracy']:.3f}  train {row['train_seconds']:.1f} s  "
                   f"test {row['test_seconds']:.1f} s")

    with reported_errors():
        table = run_slda_experiment(prepared, names, topics=k_values,
                                    c_values=c_values, n_runs=runs,
                                    max_iter=iterations, n_jobs=n_jobs, random_state=seed,
                                    on_row=show, workers=workers,
                                    csv_path=out / "slda_results.csv")
    if table.empty:
        raise fail("no results (is tomotopy installed for tomotopy-SLDA?)")
    for metric in ("accuracy", "train_seconds"):
        _figure(table, metric, f"{prepared.name}: {metric.replace('_', ' ')}",
                out / f"slda_{metric}_vs_K.png")
    supervised = table[table["model"].isin(C_MODELS)]
    if supervised["c"].nunique() > 1:
        import matplotlib.pyplot as plt

        from topiclink.plotting.experiments import plot_metric_vs_topics

        c_models = list(dict.fromkeys(supervised["model"]))
        fig, axes = plt.subplots(1, len(c_models), figsize=(5.5 * len(c_models), 4),
                                 sharey=True, squeeze=False)
        for ax, name in zip(axes[0], c_models, strict=True):
            plot_metric_vs_topics(supervised[supervised["model"] == name], "accuracy",
                                  ax=ax, x="c")
            ax.set_title(f"{prepared.name}: {name}, accuracy against c")
        fig.savefig(out / "slda_accuracy_vs_c.png", dpi=120, bbox_inches="tight")
        plt.close(fig)
    summary = table.groupby(["model", "K", "c"], dropna=False)[
        ["accuracy", "train_seconds", "n_iter", "seconds_per_iteration", "test_seconds"]
    ].mean()
    write_csv(summary.reset_index(), out / "slda_summary.csv")
    typer.echo(summary.to_string(float_format=lambda v: f"{v:.3f}"))
    typer.echo(f"results: {out / 'slda_results.csv'}, summary and figures in {out}/")


def _load_directed(dataset: str | None, data: Path | None, default: str):  # noqa: ANN202
    """The dataset with its links read as directed citations (i -> j: i cites j)."""
    from topiclink.datasets import load_dataset

    check_input_paths(data)
    name = dataset if dataset is not None else (None if data is not None else default)
    try:
        with reported_errors():
            ds = load_dataset(name, data_dir=data, directed=True)
    except TypeError:  # a loader without a `directed` option
        ds = load_data(dataset, data, default=default)
    if ds.corpus is None or ds.links is None:
        raise fail(f"dataset {ds.name!r} has no documents with links")
    if not ds.links.directed:
        raise fail(f"dataset {ds.name!r} has undirected links; the LMV protocol needs "
                   "directed citations")
    return ds


def _write_lines(lines: list[str]) -> None:
    for line in lines:
        typer.echo(f"  {line}")


@app.command("lmv")
@checkpointable
@document_options
def experiment_lmv(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    folds: Annotated[int, typer.Option(help="Number of folds over documents.")] = 5,
    only_folds: OnlyFoldsOpt = None,
    topics: Annotated[str, typer.Option(help="Values of K, comma-separated.")]
    = "5,7,9,11,13",
    eta: Annotated[str, typer.Option("--eta", help="Topic-word priors eta, comma-separated.")]
    = "0.1,0.5",
    models: Annotated[str, typer.Option(help="Comma-separated paper names: LMV, LMVS, PLLDA, "
                                        "RTM (= Var-RTM), LDA+Reg, Gibbs-gRTM (or any link "
                                        "model's paper name).")]
    = "LMV,LMVS,PLLDA,RTM,LDA+Reg,Gibbs-gRTM",
    max_iter: Annotated[int | None, typer.Option(
        "--max-iter", help="Iteration limit of every model (default: each model's own).")]
    = None,
    seed: Annotated[int, typer.Option()] = 0,
    workers: WorkersOpt = 1,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Output folder (created when missing) for lmv_results.csv, "
        "lmv_summary.csv, lmv_findings.md and lmv_*.png; without it the summary and "
        "findings are only printed.")] = None,
    force: ForceOpt = False,
    verbose: VerboseOpt = True,
    protocol: Annotated[str, typer.Option(
        help="kfold (the paper's Cora protocol, Sec. 6) or kdd (the hep-th split of Sec. "
             "7.2: --dataset hepth; models LMVS(t), LMVS, PLLDA, RTM, Gibbs-gRTM; default "
             "--topics 10,15,20,25,30 and --eta 0.5,0.1,0.01; --folds ignored).")]
    = "kfold",
    n_jobs: Annotated[int, typer.Option(
        "--n-jobs", help="Threads of one fit (--protocol kdd: the pair blocks of LMVS / "
        "PLLDA minibatches; -1: all cores).")] = 1,
    split: Annotated[str | None, typer.Option(
        "--split", help="kfold: random folds over documents (the Cora protocol); time: "
        "train on the documents before --cutoff and the citations among them, test on "
        "the later documents citing them (the hep-th protocol; models LMVS(t), LMVS, "
        "PLLDA, RTM, Gibbs-gRTM).  Default: kfold; time with --protocol kdd.",
        show_default=False)] = None,
    cutoff: Annotated[str | None, typer.Option(
        "--cutoff", help="--split time: documents before this time train; written as the "
        "--time-column is, as an ISO date (2002-01) or a fractional year (2002.0).  "
        "Default with --dataset hepth: 2002-01 (the paper's).", show_default=False)] = None,
    source: DocumentSource | None = None,
) -> None:
    """The LMV paper's Cora protocol (default data: cora-rlda, directed citations):
    predictive rank and CPU time against K, per eta, over folds; ``--protocol kdd``: the
    hep-th protocol (Sec. 7.2, Figure 7); your own ``--documents`` and ``--edges`` with
    either split (``--split time --cutoff DATE`` with ``--time-column``)."""
    from topiclink.experiments.lmv import (
        available_models,
        paper_findings,
        run_lmv_experiment,
        summarise,
    )

    setup_logging(verbose)
    check(protocol in ("kfold", "kdd"), f"--protocol must be kfold or kdd, got {protocol!r}")
    split_kind = split if split is not None else ("time" if protocol == "kdd" else "kfold")
    check(split_kind in ("kfold", "time"), f"--split must be kfold or time, got {split!r}")
    check(cutoff is None or split_kind == "time", "--cutoff needs --split time")
    if protocol == "kdd":
        check(source is None, "--protocol kdd is the hep-th protocol (--dataset hepth); for "
              "your own --documents give --split time --cutoff DATE")
        check(split_kind == "time", "--protocol kdd splits by time; drop --split kfold")
    if source is not None:
        check(dataset is None and data is None, "give either --documents or --dataset / "
              "--data, not both")
        source.check(requires=("X", "links"))
    if split_kind == "time":
        _experiment_lmv_kdd(dataset, data, topics, eta, models, max_iter, seed, workers, out,
                            force, n_jobs, cutoff=cutoff, source=source, verbose=verbose)
        return
    check(n_jobs == 1, "--n-jobs applies to --protocol kdd (the Cora protocol's fits run "
          "one thread each; use --workers)")
    names = _names(models, available_models())
    k_values = int_list(topics, "--topics", minimum=2)
    check_model_size(max(k_values))
    etas = float_list(eta, "--eta", positive=True)
    check(folds >= 2, f"--folds must be >= 2, got {folds}")
    chosen = (int_list(only_folds, "--only-folds", 0, folds - 1)
              if only_folds is not None else None)
    check(max_iter is None or max_iter >= 1, f"--max-iter must be >= 1, got {max_iter}")
    check(workers >= 1, f"--workers must be >= 1, got {workers}")
    if out is not None:
        _check_out(out, "lmv", force)
    if source is not None:
        ds = source.load()
        if ds.links is None or not ds.links.directed:
            raise fail("the LMV protocol needs directed citations: give --edge-direction "
                       "source-cites-target or target-cites-source")
    else:
        ds = _load_directed(dataset, data, "cora-rlda")
    check_model_size(max(k_values), ds.corpus.n_docs, ds.corpus.n_words,
                     what=f" on {ds.corpus.n_docs} documents x {ds.corpus.n_words} words")
    typer.echo(f"{ds.name}: {ds.corpus.n_docs} documents, {ds.links.n_links} directed links")

    def show(row: dict) -> None:
        typer.echo(f"{row['model']:>10s} K={row['K']:<3d} eta={row['eta']:<4g} fold "
                   f"{row['fold']}: predictive rank {row['predictive_rank']:7.1f} (random "
                   f"{row['random_rank']:.1f})  CPU {row['cpu_seconds']:.1f} s")

    with reported_errors():
        table = run_lmv_experiment(ds, folds=folds, topics=k_values, etas=etas,
                                   models=names, workers=workers, seed=seed,
                                   max_iter=max_iter, out=out, on_row=show,
                                   only_folds=chosen)
    summary = summarise(table)
    echo_table(summary)
    typer.echo("\nthe paper's claims:")
    _write_lines(paper_findings(summary))
    if out is not None:
        typer.echo(f"results: {out / 'lmv_results.csv'}, summary, findings and figures in "
                   f"{out}/")


def _experiment_lmv_kdd(dataset: str | None, data: Path | None, topics: str, eta: str,
                        models: str, max_iter: int | None, seed: int, workers: int,
                        out: Path | None, force: bool, n_jobs: int = 1, *,
                        cutoff: str | None = None,
                        source: DocumentSource | None = None,
                        verbose: bool = False) -> None:
    """``experiment lmv --split time`` (``--protocol kdd``): :func:`topiclink.experiments.
    lmv_kdd.run_lmv_kdd_experiment` on a split by time: the hep-th split of the paper
    (at ``--cutoff``, default January 2002) or of the user's ``--documents`` (sorted by
    time and id, the vocabulary fitted on the documents before the cutoff).  The
    defaults of the CLI's Cora grid are replaced by the paper's hep-th grid."""
    from topiclink.data.dates import format_year, parse_cutoff
    from topiclink.experiments.lmv_kdd import (
        KDD_MODELS,
        KDDSettings,
        kdd_findings,
        run_lmv_kdd_experiment,
        summarise_kdd,
    )

    if source is None:
        check(dataset in (None, "hepth"), f"--split time runs on --dataset hepth or on your "
              f"own --documents with --time-column, got --dataset {dataset!r}")
    else:
        check(source.time_column is not None, "--split time needs the documents' times: "
              "give --time-column and --time-format")
        check(cutoff is not None, "--split time needs --cutoff DATE (documents before it "
              "train)")
    if topics == "5,7,9,11,13":
        topics = "10,15,20,25,30"
    if eta == "0.1,0.5":
        eta = "0.5,0.1,0.01"
    if models == "LMV,LMVS,PLLDA,RTM,LDA+Reg,Gibbs-gRTM":
        models = ",".join(KDD_MODELS)
    names = _names(models, list(KDD_MODELS))
    k_values = int_list(topics, "--topics", minimum=2)
    etas = float_list(eta, "--eta", positive=True)
    check(max_iter is None or max_iter >= 1, f"--max-iter must be >= 1, got {max_iter}")
    check(workers >= 1, f"--workers must be >= 1, got {workers}")
    check(n_jobs != 0, "--n-jobs must be an integer other than 0 (-1: all cores), got 0")
    cutoff_value = None
    if cutoff is not None:
        try:
            cutoff_value = parse_cutoff(cutoff, source.time_format if source else None)
        except ValueError as exc:
            raise fail(f"--cutoff: {exc}") from None
    if out is not None:
        _check_out(out, "lmv_kdd", force)
    settings = KDDSettings(n_jobs=n_jobs, verbose=verbose and workers == 1)
    if max_iter is not None:
        settings.stochastic["max_iter"] = int(max_iter)
    from topiclink.data.time_split import split_by_time
    from topiclink.datasets.hepth import KDD_CUTOFF, hepth_kdd_split

    if source is None:
        with reported_errors():
            split = hepth_kdd_split(data, cutoff=KDD_CUTOFF if cutoff_value is None
                                    else cutoff_value)
        what = ("hep-th KDD split" if cutoff_value in (None, KDD_CUTOFF) else
                f"hep-th split at {format_year(split.cutoff)}")
    else:
        from topiclink.cli.documents import TIME_COLUMN

        assert cutoff_value is not None
        ds = source.load(fit_before=cutoff_value)
        if ds.links is None or not ds.links.directed:
            raise fail("the LMV protocol needs directed citations: give --edge-direction "
                       "source-cites-target or target-cites-source")
        with reported_errors():
            split = split_by_time(ds.corpus, ds.links,
                                  ds.corpus.metadata[TIME_COLUMN].to_numpy(), cutoff_value,
                                  train_vocabulary=False)
        what = f"{ds.name} split at {format_year(cutoff_value)}"
    check(split.n_train >= 2 and split.n_test >= 1,
          f"the split at the cutoff leaves {split.n_train} training and {split.n_test} test "
          "documents (test documents must cite a training document); move --cutoff")
    r = split.report
    typer.echo(f"{what}: {split.n_train} training papers, "
               f"{r.get('train_links', split.train_links.n_links)} training citations; "
               f"{split.n_test} test papers, {split.test_citations.nnz} test->train "
               f"citations; vocabulary {split.train_corpus.n_words} terms")

    def show(row: dict) -> None:
        typer.echo(f"{row['model']:>10s} K={row['K']:<3d} eta={row['eta']:<5g}: predictive "
                   f"rank {row['predictive_rank']:8.1f} ({100 * row['improvement']:.1f} % "
                   f"better than random {row['random_rank']:.1f})  CPU "
                   f"{row['cpu_seconds']:.0f} s  [{row['stop_reason'] or row['n_iter']}]")

    with reported_errors():
        table = run_lmv_kdd_experiment(split, topics=k_values, etas=etas, models=names,
                                       workers=workers, seed=seed, settings=settings,
                                       out=out, on_row=show)
    echo_table(summarise_kdd(table))
    typer.echo("\nthe paper's claims:" if source is None else
               "\nthe LMV paper's hep-th claims (Sec. 7.2.1), checked on this data:")
    _write_lines(kdd_findings(table))
    if out is not None:
        typer.echo(f"results: {out / 'lmv_kdd_results.csv'}, summary, findings and Figure 7 "
                   f"in {out}/")


@app.command("lmv-simulation")
@checkpointable
def experiment_lmv_simulation(
    replicates: Annotated[int, typer.Option(help="Simulated data sets (paper: 20).")] = 20,
    models: Annotated[str, typer.Option(help="Comma-separated paper names: LMV, LMVS, "
                                        "PLLDA, RTM (= Var-RTM), LDA+Reg.")]
    = "LMV,LMVS,PLLDA,RTM,LDA+Reg",
    n_docs: Annotated[int, typer.Option("--n-docs", help="Documents per data set (paper: "
                                        "3000).")] = 3000,
    n_train: Annotated[int, typer.Option("--n-train", help="The first N documents train, "
                                         "the rest test (paper: 2000).")] = 2000,
    doc_length: Annotated[int, typer.Option("--doc-length", help="Words per document "
                                            "(paper: 100).")] = 100,
    max_iter: Annotated[int | None, typer.Option(
        "--max-iter", help="Iteration limit of every model (default: each model's own).")]
    = None,
    seed: Annotated[int, typer.Option()] = 0,
    workers: WorkersOpt = 1,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Output folder (created when missing) for lmv_sim_*.csv, "
        "lmv_sim_*.png and findings.md; without it Table S1 and the checks are only "
        "printed.")] = None,
    force: ForceOpt = False,
    verbose: VerboseOpt = True,
) -> None:
    """The LMV paper's simulation study (supplement S7): Table S1 (blockmodel recovery)
    beside the paper's, visibility recovery, predictive rank and CPU time (Figure S4)."""
    from topiclink.experiments.lmv import available_models
    from topiclink.experiments.lmv_simulation import (
        findings,
        format_table_s1,
        model_summary,
        run_lmv_simulation,
        table_s1,
        zero_entries,
    )

    setup_logging(verbose)
    names = _names(models, available_models())
    check(replicates >= 1, f"--replicates must be >= 1, got {replicates}")
    check(n_docs >= 3, f"--n-docs must be >= 3, got {n_docs}")
    check(2 <= n_train < n_docs, f"--n-train must be in [2, --n-docs), got {n_train}")
    check(doc_length >= 1, f"--doc-length must be >= 1, got {doc_length}")
    check(max_iter is None or max_iter >= 1, f"--max-iter must be >= 1, got {max_iter}")
    check(workers >= 1, f"--workers must be >= 1, got {workers}")
    if out is not None:
        _check_out(out, "lmv_sim", force)
        if (out / "findings.md").is_file() and not force:
            raise fail(f"{out} already holds findings.md; give --force to replace it or "
                       "another --out")

    def show(row: dict) -> None:
        typer.echo(f"replicate {row['replicate']:<3d} {row['model']:>8s}: predictive rank "
                   f"{row['predictive_rank']:7.1f} (random {row['random_rank']:.1f})  CPU "
                   f"{row['cpu_seconds']:.1f} s")

    with reported_errors():
        result = run_lmv_simulation(replicates, workers=workers, seed=seed, models=names,
                                    n_docs=n_docs, n_train=n_train, doc_length=doc_length,
                                    max_iter=max_iter, out=out, on_row=show)
    table = result.table
    typer.echo("\nTable S1 (paper = published; ours = this run):")
    typer.echo(format_table_s1(table_s1(table)))
    z = zero_entries(table, result.truth_blockmodel)
    if not z.empty:
        typer.echo("\nlargest estimate of a zero entry of B:")
        echo_table(z)
    typer.echo("\nper model (Figure S4), mean and sd over replicates:")
    echo_table(model_summary(table))
    typer.echo("\nthe paper's checks:")
    _write_lines(findings(result))
    if out is not None:
        typer.echo(f"results: {out / 'lmv_sim_results.csv'}, Table S1, findings.md and "
                   f"figures in {out}/")


@app.command("bpbfm")
@checkpointable
def experiment_bpbfm(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    protocol: Annotated[str, typer.Option(
        help="paper (RESCAL's: 10 % of all entries held out per fold, AUC-ROC and "
             "AUC-PR; refused where those entries do not fit in memory, e.g. FB15k-237), "
             "kg (the data set's test triples, filtered MRR and Hits@1/3/10 for head and "
             "tail prediction, ties at the mean rank; sparse, in bounded memory) or "
             "both.")] = "both",
    folds: Annotated[int, typer.Option(help="Folds of the paper protocol (independent "
                                       "random 10 % draws); in the kg protocol each fold "
                                       "is a repetition with another seed.")] = 10,
    only_folds: OnlyFoldsOpt = None,
    topics: Annotated[str, typer.Option(help="Values of K (latent factors), "
                                        "comma-separated.")] = "5,10,20",
    models: Annotated[str, typer.Option(help="Comma-separated: BPBFM-1, BPBFM-2 (or any "
                                        "tensor model's name, e.g. BPBFM-1-online; RESCAL, "
                                        "DistMult, ComplEx with topiclink[bench]).")]
    = "BPBFM-1,BPBFM-2",
    iterations: Annotated[int, typer.Option("--iterations", "-n",
                                            help="Gibbs iterations.")] = 300,
    burn_in: Annotated[int, typer.Option("--burn-in", help="Iterations before samples are "
                                         "kept for prediction.")] = 150,
    thinning: Annotated[int, typer.Option(help="Keep every this many samples after "
                                          "burn-in.")] = 5,
    fraction: Annotated[float, typer.Option(help="Share of all entries held out per fold "
                                            "(paper protocol; the paper: 0.1).")] = 0.1,
    trajectory_every: Annotated[int, typer.Option(
        "--trajectory-every", help="Record the held-out AUC every this many iterations in "
        "the first fold of the paper protocol (AUC against wall time); 0: never.")] = 10,
    n_jobs: Annotated[int, typer.Option(help="Threads of one fit.")] = 1,
    seed: Annotated[int, typer.Option()] = 0,
    workers: WorkersOpt = 1,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output folder (created when missing) for the bpbfm_*.csv "
        "tables, bpbfm_summary.txt and bpbfm_*.png figures; results already there are "
        "refused unless --force.")] = Path("bpbfm-experiment"),
    force: ForceOpt = False,
    verbose: VerboseOpt = True,
) -> None:
    """The BPBFM paper's protocols (default data: umls): held-out AUC-ROC/PR over random
    10 % of all entries (paper) and filtered MRR / Hits@k on the test triples (kg),
    against K over folds."""
    from topiclink.experiments.bpbfm import (
        PROTOCOLS,
        BPBFMSettings,
        run_bpbfm_experiment,
        summary_text,
        tensor_model_names,
    )
    from topiclink.experiments.kge_peers import register_pykeen_peers

    setup_logging(verbose)
    register_pykeen_peers()     # RESCAL, DistMult, ComplEx where PyKEEN is installed
    # every option, the data path and the output folder before reading any data
    names = _names(models, tensor_model_names())
    check(protocol in (*PROTOCOLS, "both"), f"--protocol must be paper, kg or both, got "
          f"{protocol!r}")
    protocols = list(PROTOCOLS) if protocol == "both" else [protocol]
    k_values = int_list(topics, "--topics", minimum=2)
    check_model_size(max(k_values))
    check(folds >= 1, f"--folds must be >= 1, got {folds}")
    chosen = (int_list(only_folds, "--only-folds", 0, folds - 1)
              if only_folds is not None else None)
    check(iterations >= 1, f"--iterations must be >= 1, got {iterations}")
    check(0 <= burn_in < iterations, f"--burn-in must be in [0, --iterations), got "
          f"{burn_in}")
    check(thinning >= 1, f"--thinning must be >= 1, got {thinning}")
    check(0 < fraction < 1, f"--fraction must be in (0, 1), got {fraction:g}")
    check(trajectory_every >= 0, f"--trajectory-every must be >= 0, got {trajectory_every}")
    check(n_jobs != 0, "--n-jobs must be an integer other than 0 (-1: all cores), got 0")
    check(workers >= 1, f"--workers must be >= 1, got {workers}")
    check_input_paths(data)
    _check_out(out, "bpbfm", force)
    ds = load_data(dataset, data, default="umls")
    if ds.tensor is None:
        raise fail(f"dataset {ds.name!r} has no tensor of triples")
    splits = ds.tensor if isinstance(ds.tensor, dict) else {"train": ds.tensor}
    train = splits.get("train")
    if train is not None:
        typer.echo(f"{ds.name}: {train.n_entities} entities, {train.n_relations} relations, "
                   + ", ".join(f"{len(splits[s].heads)} {s}" for s in splits) + " triples")
    if "paper" in protocols:  # refused at scale before the output folder is made
        from topiclink.experiments.bpbfm import check_paper_protocol, union_tensor

        with reported_errors():
            check_paper_protocol(union_tensor(splits), fraction, ds.name)
    out.mkdir(parents=True, exist_ok=True)

    def show(row: dict) -> None:
        if row["protocol"] == "paper":
            what = f"AUC-ROC {row['auc_roc']:.4f}  AUC-PR {row['auc_pr']:.4f}"
        else:
            what = (f"MRR {row['mrr']:.4f}  Hits@1 {row['hits_at_1']:.3f}  Hits@3 "
                    f"{row['hits_at_3']:.3f}  Hits@10 {row['hits_at_10']:.3f}")
        typer.echo(f"{row['protocol']:>5s} {row['model']:>10s} K={row['K']:<3d} fold "
                   f"{row['fold']}: {what}  fit {row['fit_seconds']:.1f} s  evaluation "
                   f"{row['test_seconds']:.1f} s  peak RSS {row['peak_rss_mb']:.0f} MiB")

    settings = BPBFMSettings(max_iter=iterations, burn_in=burn_in, thinning=thinning,
                             n_jobs=n_jobs, holdout_fraction=fraction,
                             trajectory_every=trajectory_every)
    with reported_errors():
        table = run_bpbfm_experiment(ds, models=names, topics=k_values,
                                     protocols=protocols, folds=folds, only_folds=chosen,
                                     workers=workers, seed=seed, settings=settings,
                                     out=out, on_row=show)
    typer.echo("")
    typer.echo(summary_text(table))
    typer.echo(f"results: {out / 'bpbfm_results.csv'}, trajectory, summary and figures in "
               f"{out}/")


@app.command("ktm")
@checkpointable
def experiment_ktm(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    topics: Annotated[int, typer.Option("--topics", help="K (the paper: 10).")] = 10,
    vocabulary: Annotated[int, typer.Option(
        help="Keep the most frequent terms after stop words (the paper: 5000).")] = 5000,
    iterations: Annotated[int, typer.Option("--iterations", "-n",
                                            help="Gibbs sweeps (KTM: outer iterations).")]
    = 200,
    models: Annotated[str | None, typer.Option(
        help="Comma-separated: LDA, DMR, GDMR (tomotopy), KTM (default: all that are "
             "available here).")] = None,
    test_fraction: Annotated[float, typer.Option(
        "--test-fraction", help="Share of the addresses held out (seeded split).")] = 0.2,
    last_year: Annotated[int, typer.Option(
        "--last-year", help="Use the addresses up to this year (the paper's corpus ends "
        "in 2011).")] = 2011,
    evaluate_every: Annotated[int, typer.Option(
        "--evaluate-every", help="Training perplexity every this many iterations.")] = 10,
    kernel: Annotated[str | None, typer.Option(
        "--kernel", help="sotu: the State-of-the-Union protocol (year and president); "
        "graph: topics on a graph, a connected subgraph of a linked corpus with the "
        "shortest-path kernel, against LDA and a constant-kernel KTM (default: graph for "
        "a data set with links, else sotu; graph without --dataset/--data: cora).")] = None,
    subgraph_size: Annotated[int, typer.Option(
        "--subgraph-size", help="--kernel graph: documents in the BFS ball (the paper: "
        "318).")] = 350,
    optimize_every: Annotated[int | None, typer.Option(
        "--optimize-every", help="--kernel graph: iterations between the KTMs' "
        "maximisations of the kernel hyper-parameters and tau; 0 (the default): keep "
        "the start values (amplitude 1, median-heuristic length scale, tau 1); on 3 of 4 "
        "Cora subgraphs the maximisation ran the graph kernel to its bounds "
        "(benchmarks/ktm_graph_seeds.py).")] = 0,
    seed: Annotated[int, typer.Option()] = 0,
    out: Annotated[Path, typer.Option(
        "--out", "-o", help="Output folder (created when missing) for ktm_*.csv, "
        "ktm_summary.txt and ktm_*.png; results already there are refused unless "
        "--force.")] = Path("ktm-experiment"),
    force: ForceOpt = False,
    verbose: VerboseOpt = True,
) -> None:
    """The kernel topic model paper's experiments.  --kernel sotu (default data: sotu):
    training perplexity against iteration, held-out perplexity by document completion,
    time per iteration, topics over time (LDA, DMR, tomotopy GDMR, KTM).  --kernel graph
    (default data: cora): held-out perplexity of KTM with the shortest-path kernel vs LDA
    vs KTM with a constant kernel on a connected subgraph, and the subgraph coloured by
    dominant topic."""
    if kernel is not None and kernel not in ("sotu", "graph"):
        raise fail(f"--kernel must be sotu or graph, got {kernel!r}")
    ds = None
    if kernel == "graph" or (kernel is None and (dataset is not None or data is not None)):
        ds = load_data(dataset, data, default="cora")
        if kernel == "graph" or (kernel is None and ds.links is not None):
            _experiment_ktm_graph(ds, topics=topics, vocabulary=vocabulary,
                                  iterations=iterations, models=models,
                                  test_fraction=test_fraction, subgraph_size=subgraph_size,
                                  optimize_every=optimize_every, seed=seed, out=out,
                                  force=force, verbose=verbose)
            return
    from topiclink.experiments.ktm import (
        MODEL_NAMES,
        KTMSettings,
        available_models,
        prepare_sotu,
        run_ktm_experiment,
        summary_text,
    )

    setup_logging(verbose)
    if models is None:
        names = available_models()
        skipped = [m for m in MODEL_NAMES if m not in names]
        if skipped:
            typer.echo(f"not available here, skipped: {', '.join(skipped)}")
    else:
        names = _names(models, MODEL_NAMES)
    check(topics >= 3, f"--topics must be >= 3, got {topics}")
    check_model_size(topics)
    check(vocabulary >= 2, f"--vocabulary must be >= 2, got {vocabulary}")
    check(iterations >= 1, f"--iterations must be >= 1, got {iterations}")
    check(0 < test_fraction < 1, f"--test-fraction must be in (0, 1), got {test_fraction:g}")
    check(evaluate_every >= 1, f"--evaluate-every must be >= 1, got {evaluate_every}")
    check_input_paths(data)
    _check_out(out, "ktm", force)
    if ds is None:
        ds = load_data(dataset, data, default="sotu")
    settings = KTMSettings(n_topics=topics, vocabulary=vocabulary, max_iter=iterations,
                           test_fraction=test_fraction, last_year=last_year,
                           evaluate_every=evaluate_every,
                           burn_in=min(50, max(iterations // 4, 0)))
    with reported_errors():
        prepared = prepare_sotu(ds, settings, seed)
    typer.echo(f"{ds.name}: {prepared.corpus.n_docs} addresses {settings.first_year}-"
               f"{last_year} ({prepared.train.size} training, {prepared.test.size} test), "
               f"{prepared.corpus.n_words} words, {prepared.speaker_names.size} presidents")

    def show(run) -> None:  # noqa: ANN001
        typer.echo(f"{run.model:>5s}: training perplexity {run.final_train_perplexity:.1f}  "
                   f"held-out {run.heldout_perplexity:.1f}  "
                   f"{run.seconds_per_iteration:.4f} s/iteration")

    with reported_errors():
        result = run_ktm_experiment(prepared, names, seed=seed, out=out, on_model=show)
    typer.echo("")
    typer.echo(summary_text(result))
    typer.echo(f"results: {out / 'ktm_trajectory.csv'}, summary and figures in {out}/")


def _experiment_ktm_graph(ds, *, topics: int, vocabulary: int, iterations: int,  # noqa: ANN001
                          models: str | None, test_fraction: float, subgraph_size: int,
                          optimize_every: int | None, seed: int, out: Path, force: bool,
                          verbose: bool) -> None:
    """``experiment ktm --kernel graph``: topics on a connected subgraph."""
    from topiclink.experiments.ktm_graph import (
        GRAPH_MODEL_NAMES,
        GraphKTMSettings,
        graph_summary_text,
        prepare_graph,
        run_ktm_graph_experiment,
    )

    setup_logging(verbose)
    names = list(GRAPH_MODEL_NAMES) if models is None else _names(models, GRAPH_MODEL_NAMES)
    check(topics >= 3, f"--topics must be >= 3, got {topics}")
    check_model_size(topics)
    check(vocabulary >= 2, f"--vocabulary must be >= 2, got {vocabulary}")
    check(iterations >= 1, f"--iterations must be >= 1, got {iterations}")
    check(0 < test_fraction < 1, f"--test-fraction must be in (0, 1), got {test_fraction:g}")
    check(subgraph_size >= 5, f"--subgraph-size must be >= 5, got {subgraph_size}")
    check(optimize_every is None or optimize_every >= 0,
          f"--optimize-every must be >= 0, got {optimize_every}")
    if ds.corpus is None or ds.links is None:
        raise fail(f"dataset {ds.name!r} has no documents with links (--kernel graph needs "
                   "them)")
    _check_out(out, "ktm", force)
    settings = GraphKTMSettings(n_topics=topics, n_docs=subgraph_size, max_iter=iterations,
                                test_fraction=test_fraction, vocabulary=vocabulary,
                                optimize_every=optimize_every)
    with reported_errors():
        prepared = prepare_graph(ds, settings, seed)
    typer.echo(f"{ds.name}: connected subgraph of {prepared.corpus.n_docs} documents, "
               f"{prepared.links.n_links} links ({prepared.train.size} training, "
               f"{prepared.test.size} test), {prepared.corpus.n_words} words")

    def show(run) -> None:  # noqa: ANN001
        typer.echo(f"{run.model:>9s}: training perplexity {run.final_train_perplexity:.1f}  "
                   f"held-out {run.heldout_perplexity:.1f}  "
                   f"{run.seconds_per_iteration:.4f} s/iteration")

    with reported_errors():
        result = run_ktm_graph_experiment(prepared, names, seed=seed, out=out,
                                          on_model=show)
    typer.echo("")
    typer.echo(graph_summary_text(result))
    typer.echo(f"results: {out / 'ktm_graph_summary.csv'}, documents and figures in {out}/")
