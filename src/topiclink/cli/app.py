"""The ``topiclink`` command line (typer), thin over the Python API."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path
from typing import Annotated

import numpy as np
import pandas as pd
import typer

from topiclink import __version__

app = typer.Typer(
    name="topiclink",
    help="Bayesian topic models of linked data: fit, inspect and evaluate from the shell.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
fit_app = typer.Typer(help="Fit a model and write it to a model file.", no_args_is_help=True)
app.add_typer(fit_app, name="fit")
experiment_app = typer.Typer(help="Run a paper's evaluation protocol; writes CSV and figures.",
                             no_args_is_help=True)
app.add_typer(experiment_app, name="experiment")

DatasetOpt = Annotated[str, typer.Option("--dataset", "-d",
                                         help="Dataset name (see `topiclink datasets`).")]
DataDirOpt = Annotated[Path | None, typer.Option(
    "--data", help="Folder holding your own copy of the dataset in its original format.")]
InputOpt = Annotated[Path | None, typer.Option(
    "--input", "-i", help="Your own documents instead of --dataset: a UCI bag-of-words "
    "docword file (with --vocab), or a text file with one document per line.")]
VocabOpt = Annotated[Path | None, typer.Option(help="UCI vocabulary file for --input.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose/--quiet", "-v/-q",
                                          help="Progress bar and info logging.")]
WorkersOpt = Annotated[int, typer.Option(
    help="Configurations run at once in separate processes (the results do not depend "
         "on it).")]


def _setup_logging(verbose: bool) -> None:
    root = logging.getLogger("topiclink")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)


def _fail(message: str) -> typer.Exit:
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=1)


def _load(dataset: str, data_dir: Path | None):  # noqa: ANN202
    from topiclink.datasets import load_dataset

    try:
        return load_dataset(dataset, data_dir=data_dir)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None


def _load_input(path: Path, vocab: Path | None):  # noqa: ANN202
    """A Corpus from a user's file: UCI docword (+ vocab) or one text per line."""
    from topiclink.data.io import corpus_from_texts, read_uci_bow

    try:
        if path.name.startswith("docword") or vocab is not None:
            return read_uci_bow(path, vocab)
        if not path.exists():
            raise FileNotFoundError(f"input file not found: {path}")
        lines = [line for line in path.read_text(errors="replace").splitlines()]
        return corpus_from_texts(lines, name=path.stem)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None


@app.callback(invoke_without_command=True)
def _main(version: Annotated[bool, typer.Option("--version", help="Print the version.")]
          = False) -> None:
    if version:
        typer.echo(f"topiclink {__version__}")
        raise typer.Exit()


@app.command("datasets")
def datasets_cmd(data: DataDirOpt = None) -> None:
    """List the datasets topiclink can load, their counts and where they were found."""
    from topiclink.datasets import list_datasets

    table = list_datasets(data_dir=data)
    shown = table.astype(object).where(table.notna(), "")
    typer.echo(shown.to_string(index=False))


@fit_app.command("lda")
def fit_lda(
    dataset: DatasetOpt = "cora",
    data: DataDirOpt = None,
    input_file: InputOpt = None,
    vocab: VocabOpt = None,
    topics: Annotated[int, typer.Option("--topics", "-k", help="Number of topics K.")] = 20,
    iterations: Annotated[int, typer.Option("--iterations", "-n", help="Gibbs sweeps.")] = 200,
    alpha: Annotated[float, typer.Option(help="Document-topic prior alpha.")] = 0.1,
    beta: Annotated[float, typer.Option(help="Topic-word prior beta.")] = 0.01,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    out: Annotated[Path, typer.Option("--out", "-o", help="Model file to write.")]
    = Path("lda.npz"),
    verbose: VerboseOpt = True,
) -> None:
    """Fit LDA (collapsed Gibbs) to a dataset and save the model."""
    from topiclink.data.clean import drop_empty_documents
    from topiclink.models.lda import LDA

    _setup_logging(verbose)
    if input_file is not None:
        corpus = _load_input(input_file, vocab)
    else:
        ds = _load(dataset, data)
        if ds.corpus is None:
            raise _fail(f"dataset {dataset!r} has no documents")
        corpus = ds.corpus
    corpus, _, _, _ = drop_empty_documents(corpus)
    try:
        model = LDA(n_topics=topics, doc_topic_prior=alpha, topic_word_prior=beta,
                    max_iter=iterations, random_state=seed, verbose=verbose)
        t0 = time.perf_counter()
        model.fit(corpus)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    seconds = time.perf_counter() - t0
    path = model.save(out)
    typer.echo(model.summary())
    typer.echo(f"trained in {seconds:.1f} s ({corpus.n_tokens * model.n_iter_ / seconds / 1e6:.1f}"
               f" M tokens/s); model written to {path}")


@fit_app.command("rtm")
def fit_rtm(
    dataset: DatasetOpt = "cora",
    data: DataDirOpt = None,
    model_name: Annotated[str, typer.Option(
        "--model", "-m", help="Gibbs-gRTM, Gibbs-RTM, Approx-gRTM, Gibbs-gMMRTM, "
        "Gibbs-MMRTM or Approx-gMMRTM.")] = "Gibbs-gRTM",
    topics: Annotated[int, typer.Option("--topics", "-k", help="Number of topics K.")] = 15,
    iterations: Annotated[int, typer.Option("--iterations", "-n", help="Gibbs iterations.")]
    = 300,
    c: Annotated[float, typer.Option("--c", help="Regularisation constant of links.")] = 4.0,
    alpha: Annotated[float, typer.Option(help="Document-topic prior alpha.")] = 0.5,
    negatives: Annotated[float, typer.Option(
        help="Fraction of unobserved pairs drawn as negatives.")] = 0.01,
    n_jobs: Annotated[int, typer.Option(help="Threads: the augmentation draws overlap the "
                                        "Z sweep (-1: all cores; the same chain for any "
                                        "value).")] = -1,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    out: Annotated[Path, typer.Option("--out", "-o", help="Model file to write.")]
    = Path("rtm.npz"),
    verbose: VerboseOpt = True,
) -> None:
    """Fit a relational topic model (gRTM family) to a linked dataset and save it."""
    from topiclink.data.clean import drop_empty_documents
    from topiclink.models.rtm import RelationalTopicModel

    _setup_logging(verbose)
    ds = _load(dataset, data)
    if ds.corpus is None or ds.links is None:
        raise _fail(f"dataset {dataset!r} has no linked documents")
    corpus, links, _, _ = drop_empty_documents(ds.corpus, ds.links)
    try:
        model = RelationalTopicModel.from_paper(
            model_name, n_topics=topics, max_iter=iterations, c=c, doc_topic_prior=alpha,
            negative_ratio=negatives, n_jobs=n_jobs, random_state=seed, verbose=verbose)
        t0 = time.perf_counter()
        model.fit(corpus, links)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    seconds = time.perf_counter() - t0
    path = model.save(out)
    typer.echo(model.summary())
    typer.echo(f"trained in {seconds:.1f} s ({model.n_pairs_} training pairs); model "
               f"written to {path}")


@fit_app.command("slda")
def fit_slda(
    dataset: DatasetOpt = "poliblog-rlda",
    data: DataDirOpt = None,
    loss: Annotated[str, typer.Option(help="logistic (gSLDA) or hinge (Gibbs MedLDA).")]
    = "logistic",
    topics: Annotated[int, typer.Option("--topics", "-k", help="Number of topics K.")] = 10,
    iterations: Annotated[int, typer.Option("--iterations", "-n", help="Gibbs iterations.")]
    = 200,
    c: Annotated[float, typer.Option("--c", help="Regularisation constant of the labels.")]
    = 25.0,
    alpha: Annotated[float, typer.Option(help="Document-topic prior alpha.")] = 0.1,
    n_jobs: Annotated[int, typer.Option(help="Processes for one-vs-all classes.")] = 1,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    out: Annotated[Path, typer.Option("--out", "-o", help="Model file to write.")]
    = Path("slda.npz"),
    verbose: VerboseOpt = True,
) -> None:
    """Fit a supervised topic model (gSLDA / Gibbs MedLDA) to a labelled dataset's
    training documents and save it; prints test accuracy where the dataset has a test
    split."""
    from topiclink.data.clean import drop_empty_documents
    from topiclink.models.slda import SupervisedTopicModel

    _setup_logging(verbose)
    ds = _load(dataset, data)
    if ds.corpus is None or ds.labels is None:
        raise _fail(f"dataset {dataset!r} has no labelled documents")
    corpus, _, labels, _ = drop_empty_documents(ds.corpus, labels=np.asarray(ds.labels))
    try:
        model = SupervisedTopicModel(n_topics=topics, loss=loss, c=c, doc_topic_prior=alpha,
                                     max_iter=iterations, n_jobs=n_jobs, random_state=seed,
                                     verbose=verbose)
        t0 = time.perf_counter()
        model.fit(corpus, labels)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    seconds = time.perf_counter() - t0
    path = model.save(out)
    typer.echo(model.summary())
    typer.echo(f"trained in {seconds:.1f} s; training accuracy "
               f"{model.score(corpus, labels):.3f}")
    if ds.test is not None and ds.test.corpus is not None and ds.test.labels is not None:
        test, _, y_test, _ = drop_empty_documents(ds.test.corpus,
                                                   labels=np.asarray(ds.test.labels))
        typer.echo(f"test accuracy {model.score(test, y_test):.3f} "
                   f"({test.n_docs} documents)")
    typer.echo(f"model written to {path}")


@app.command("suggest")
def suggest_cmd(
    model_path: Annotated[Path, typer.Argument(help="A saved relational model (.npz).")],
    text: Annotated[str | None, typer.Option(help="The query document's text.")] = None,
    text_file: Annotated[Path | None, typer.Option(
        "--file", help="A text file with one query document per line.")] = None,
    top: Annotated[int, typer.Option(help="Suggestions per query.")] = 10,
    direction: Annotated[str, typer.Option(
        help="out (query cites), in (cited by the query's targets) or either.")] = "either",
) -> None:
    """Suggest links from new documents (raw text) to a relational model's training
    documents, with their titles where the training data had them."""
    from topiclink.data.io import corpus_from_texts
    from topiclink.persistence import load

    if (text is None) == (text_file is None):
        raise _fail("give the query as --text or --file (one of them)")
    try:
        model = load(model_path)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None
    if not hasattr(model, "suggest_links"):
        raise _fail(f"{model_path} holds a {type(model).__name__}, which has no links; "
                    "fit a relational model (topiclink fit rtm)")
    if text_file is not None:
        if not text_file.exists():
            raise _fail(f"query file not found: {text_file}")
        texts = [t for t in text_file.read_text(errors="replace").splitlines() if t.strip()]
    else:
        texts = [text]
    try:
        queries = corpus_from_texts(texts, vocabulary=list(model.vocabulary_))
        empty = queries.empty_documents()
        if empty.size:
            raise _fail(f"query {int(empty[0]) + 1} has no word of the model's vocabulary")
        table = model.suggest_links(queries, top=top, direction=direction)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    with pd.option_context("display.max_colwidth", 70, "display.width", 160):
        typer.echo(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


def _int_list(text: str, name: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise _fail(f"{name} must be a comma-separated list of integers, got {text!r}") from None


def _float_list(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise _fail(f"{name} must be a comma-separated list of numbers, got {text!r}") from None


@experiment_app.command("grtm")
def experiment_grtm(
    dataset: DatasetOpt = "cora-linqs",
    data: DataDirOpt = None,
    folds: Annotated[int, typer.Option(help="Number of folds over documents.")] = 5,
    only_folds: Annotated[str | None, typer.Option(
        "--only-folds", help="Run only these fold indices, e.g. 0,1.")] = None,
    topics: Annotated[str, typer.Option(help="Values of K, comma-separated.")]
    = "5,10,15,20,25",
    models: Annotated[str, typer.Option(help="Comma-separated: Gibbs-gRTM, Gibbs-RTM, "
                                        "Approx-gRTM, Gibbs-gMMRTM, Gibbs-MMRTM, "
                                        "Approx-gMMRTM, Var-RTM.")]
    = "Gibbs-gRTM,Gibbs-RTM,Gibbs-gMMRTM,Gibbs-MMRTM,Var-RTM",
    c: Annotated[str, typer.Option("--c", help="Regularisation constants of positive "
                                   "pairs, comma-separated (c_neg = 1).")] = "1",
    iterations: Annotated[int, typer.Option("--iterations", "-n")] = 400,
    alpha: Annotated[float, typer.Option(help="Document-topic prior (paper: 5).")] = 5.0,
    var_rtm_alpha: Annotated[float, typer.Option(help="Document-topic prior of Var-RTM.")]
    = 0.1,
    negatives: Annotated[float, typer.Option(help="Fraction of unobserved pairs used as "
                                             "negatives (paper: 0.01).")] = 0.01,
    seed: Annotated[int, typer.Option()] = 0,
    workers: WorkersOpt = 1,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")]
    = Path("grtm-experiment"),
    verbose: VerboseOpt = True,
) -> None:
    """The gRTM paper's protocol: link rank, word rank and AUC against K over folds."""
    import csv

    from topiclink.experiments.grtm import (
        MODEL_NAMES,
        GRTMSettings,
        paper_findings,
        run_grtm_experiment,
        summarise,
    )
    from topiclink.plotting.experiments import plot_metric_vs_topics

    _setup_logging(verbose)
    names = [m.strip() for m in models.split(",") if m.strip()]
    unknown = [m for m in names if m not in MODEL_NAMES]
    if unknown:
        raise _fail(f"unknown model {unknown[0]!r}; known: {', '.join(MODEL_NAMES)}")
    ds = _load(dataset, data)
    if ds.corpus is None or ds.links is None:
        raise _fail(f"dataset {dataset!r} has no documents with links")
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "grtm_results.csv"
    writer_state: dict[str, object] = {}

    def append(row: dict[str, object]) -> None:
        new = "writer" not in writer_state
        fh = csv_path.open("w" if new else "a", newline="")
        writer = csv.DictWriter(fh, fieldnames=list(row))
        if new:
            writer.writeheader()
            writer_state["writer"] = True
        writer.writerow(row)
        fh.close()
        typer.echo(f"{row['model']:>13s} K={row['K']:<3d} c={row['c']:<5g} fold {row['fold']}: "
                   f"link rank {row['link_rank']:7.1f}  word rank {row['word_rank']:7.1f}  "
                   f"AUC {row['auc']:.3f}  train {row['train_seconds']:.1f} s")

    settings = GRTMSettings(alpha=alpha, negative_ratio=negatives, max_iter=iterations,
                            var_rtm_alpha=var_rtm_alpha)
    try:
        table = run_grtm_experiment(
            ds.corpus, ds.links, names, topics=_int_list(topics, "--topics"),
            c_values=_float_list(c, "--c"), n_folds=folds, settings=settings,
            random_state=seed,
            folds=_int_list(only_folds, "--only-folds") if only_folds else None,
            on_row=append, workers=workers)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    summary = summarise(table)
    summary.to_csv(out / "grtm_summary.csv", index=False)
    findings = paper_findings(table)
    findings.to_csv(out / "grtm_findings.csv", index=False)
    for metric in ("link_rank", "word_rank", "auc", "train_seconds"):
        ax = plot_metric_vs_topics(table, metric)
        ax.set_title(f"{dataset}: {metric.replace('_', ' ')}")
        ax.figure.savefig(out / f"grtm_{metric}.png", dpi=120, bbox_inches="tight")
    typer.echo(summary.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if not findings.empty:
        typer.echo("\nthe paper's claims, cell by cell (share of (K, fold) cells where the "
                   "first configuration is better):")
        typer.echo(findings.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    typer.echo(f"results: {csv_path}, summary, findings and figures in {out}/")


@experiment_app.command("slda")
def experiment_slda(
    dataset: DatasetOpt = "20newsgroups",
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
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")]
    = Path("slda-experiment"),
    verbose: VerboseOpt = True,
) -> None:
    """The gSLDA / Gibbs MedLDA protocol: accuracy and time against K and c."""
    from topiclink.experiments.slda import (
        C_MODELS,
        MODEL_NAMES,
        prepare_task,
        run_slda_experiment,
    )
    from topiclink.plotting.experiments import plot_metric_vs_topics

    _setup_logging(verbose)
    names = [m.strip() for m in models.split(",") if m.strip()]
    unknown = [m for m in names if m not in MODEL_NAMES]
    if unknown:
        raise _fail(f"unknown model {unknown[0]!r}; known: {', '.join(MODEL_NAMES)}")
    ds = _load(dataset, data)
    try:
        prepared = prepare_task(ds, task, random_state=seed)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"{prepared.name}: {prepared.train.n_docs} training / {prepared.test.n_docs} "
               f"test documents, {prepared.train.n_words} words, "
               f"{len(np.unique(prepared.y_train))} classes")
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, object]] = []

    def record(row: dict[str, object]) -> None:
        rows.append(row)
        pd.DataFrame(rows).to_csv(out / "slda_results.csv", index=False)
        typer.echo(f"{row['model']:>14s} K={row['K']:<3d} c={row['c']:<6g} run {row['run']}: "
                   f"accuracy {row['accuracy']:.3f}  train {row['train_seconds']:.1f} s  "
                   f"test {row['test_seconds']:.1f} s")

    try:
        table = run_slda_experiment(prepared, names, topics=_int_list(topics, "--topics"),
                                    c_values=_float_list(c, "--c"), n_runs=runs,
                                    max_iter=iterations, n_jobs=n_jobs, random_state=seed,
                                    on_row=record, workers=workers)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    if table.empty:
        raise _fail("no results (is tomotopy installed for tomotopy-SLDA?)")
    for metric in ("accuracy", "train_seconds"):
        ax = plot_metric_vs_topics(table, metric)
        ax.set_title(f"{prepared.name}: {metric.replace('_', ' ')}")
        ax.figure.savefig(out / f"slda_{metric}_vs_K.png", dpi=120, bbox_inches="tight")
    supervised = table[table["model"].isin(C_MODELS)]
    if supervised["c"].nunique() > 1:
        import matplotlib.pyplot as plt

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
    summary.reset_index().to_csv(out / "slda_summary.csv", index=False)
    typer.echo(summary.to_string(float_format=lambda v: f"{v:.3f}"))
    typer.echo(f"results: {out / 'slda_results.csv'}, summary and figures in {out}/")


@app.command("info")
def info_cmd(model_path: Annotated[Path, typer.Argument(help="A saved model file (.npz).")],
             words: Annotated[int, typer.Option(help="Top words per topic.")] = 10) -> None:
    """Describe a saved model: its header, parameters and top words."""
    from topiclink.persistence import load, read_header

    try:
        header = read_header(model_path)
        model = load(model_path)
    except (FileNotFoundError, ValueError) as exc:
        raise _fail(str(exc)) from None
    typer.echo(f"file: {model_path}  (format {header['format_version']}, saved by topiclink "
               f"{header['library_version']})")
    params = ", ".join(f"{k}={v}" for k, v in sorted(header["params"].items()))
    typer.echo(f"class: {header['class']}({params})")
    typer.echo(model.summary(n_words=words))


@app.command("demo")
def demo_cmd(
    topics: Annotated[int, typer.Option("--topics", "-k")] = 15,
    iterations: Annotated[int, typer.Option("--iterations", "-n")] = 150,
    seed: Annotated[int, typer.Option()] = 0,
    out: Annotated[Path, typer.Option("--out", help="Folder for the figure.")] = Path("."),
    verbose: VerboseOpt = False,
) -> None:
    """Relational topic models on the bundled Cora: held-out link prediction against
    Var-RTM and random, link suggestions with titles, and the weight-matrix figure."""
    from topiclink.demo import run_demo

    _setup_logging(verbose)
    run_demo(topics=topics, iterations=iterations, seed=seed, out=out, verbose=verbose,
             echo=typer.echo)


def main() -> None:  # console-script entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
