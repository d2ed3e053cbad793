"""The gSLDA / Gibbs MedLDA protocol (Zhu et al. 2013, 2014) as a function.

Binary task: 20 Newsgroups alt.atheism vs talk.religion.misc (bydate split); multiclass:
all 20 groups.  For every K, c and run: fit on the training split, predict the test split,
report accuracy, training time, time per iteration and test time.  Baselines in the same
run: LDA + a linear SVM on the topic proportions ("LDA+SVM"), tomotopy's SLDAModel with
a binary response where tomotopy is installed ("tomotopy-SLDA"), and variational
logistic sLDA ("vSLDA", :class:`~topiclink.families.slda.estimator_variational.VariationalSLDA`,
binary task
only) for the paper's claim that the Gibbs samplers train an order of magnitude faster
than variational sLDA.  The cells run through
:func:`topiclink.experiments.runner.run_grid` (seeds from the run and K); the models are
built by paper name, the two baselines that are not topiclink estimators by the
factories this module registers in the runner's model table (tomotopy's:
:class:`~topiclink_reproductions.peers.tomotopy.TomotopySLDA`).

The task, the grid, the models, their settings and the claims are data
(``papers/slda.toml``, :data:`PAPER`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from topiclink.data.corpus import Corpus
from topiclink.datasets.base import Dataset
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
    model_params,
    register_model,
    run_grid,
    write_csv,
)
from topiclink_reproductions.claims import check_claims, claim_lines
from topiclink_reproductions.peers.tomotopy import TomotopySLDA
from topiclink_reproductions.spec import load_paper
from topiclink_reproductions.steps import finish_check, read_dataset

__all__ = ["SLDATask", "MODEL_NAMES", "PAPER", "prepare_task", "run_slda_experiment",
           "LDAThenSVM", "SLDAOptions", "summarise", "write_slda_outputs", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper's protocol as data (``papers/slda.toml``)
PAPER = load_paper("slda")
_S, _SPLIT = PAPER.settings, PAPER.split
MODEL_NAMES = PAPER.model_names
#: models that only run on a two-class task (skipped otherwise)
BINARY_ONLY = _SPLIT.get("binary_only_models")
BINARY_GROUPS = _SPLIT.get("binary_groups")


@dataclass
class SLDATask:
    """Train and test documents with labels (vocabulary restricted to training words)."""

    name: str
    train: Corpus
    y_train: np.ndarray
    test: Corpus
    y_test: np.ndarray
    label_names: np.ndarray


def _restrict_vocabulary(train: Corpus, test: Corpus) -> tuple[Corpus, Corpus]:
    """Keep the words that occur in the training documents (others cannot be learned)."""
    used = np.flatnonzero(np.asarray(train.counts.sum(axis=0)).ravel() > 0)

    def cut(c: Corpus) -> Corpus:
        return Corpus(c.counts[:, used], vocabulary=c.vocabulary[used], doc_ids=c.doc_ids,
                      titles=c.titles, metadata=c.metadata, name=c.name)
    return cut(train), cut(test)


def prepare_task(ds: Dataset, task: str = _SPLIT.get("task"),
                 test_size: float = _SPLIT.get("test_size"),
                 random_state: int = 0) -> SLDATask:
    """The binary or multiclass task of a labelled dataset.

    20 Newsgroups: its bydate test split; binary = alt.atheism vs talk.religion.misc.
    A dataset without a test split (e.g. Poliblog) is split at random (``test_size``).
    Empty documents (after restricting the vocabulary) are dropped with a logged count.
    """
    if ds.corpus is None or ds.labels is None:
        raise ValueError(f"dataset {ds.name!r} has no labelled documents")
    names = np.asarray(ds.label_names) if ds.label_names is not None else \
        np.unique(ds.labels).astype(str)
    if ds.test is not None and ds.test.corpus is not None:
        train, y_train = ds.corpus, np.asarray(ds.labels)
        test, y_test = ds.test.corpus, np.asarray(ds.test.labels)
    else:
        rng = np.random.default_rng(random_state)
        order = rng.permutation(ds.corpus.n_docs)
        n_test = int(np.ceil(test_size * ds.corpus.n_docs))
        te, tr = np.sort(order[:n_test]), np.sort(order[n_test:])
        train, y_train = ds.corpus.subset(tr), np.asarray(ds.labels)[tr]
        test, y_test = ds.corpus.subset(te), np.asarray(ds.labels)[te]
    if task == "binary":
        if names.size > 2:
            wanted = [int(np.flatnonzero(names == g)[0]) for g in BINARY_GROUPS
                      if g in names]
            if len(wanted) != 2:
                raise ValueError(f"binary task needs the groups {BINARY_GROUPS}")
            keep_tr, keep_te = np.isin(y_train, wanted), np.isin(y_test, wanted)
            train, y_train = train.subset(np.flatnonzero(keep_tr)), y_train[keep_tr]
            test, y_test = test.subset(np.flatnonzero(keep_te)), y_test[keep_te]
            y_train = (y_train == wanted[1]).astype(int)
            y_test = (y_test == wanted[1]).astype(int)
            names = np.asarray(BINARY_GROUPS)
    elif task != "multiclass":
        raise ValueError(f"task must be 'binary' or 'multiclass', got {task!r}")
    train, test = _restrict_vocabulary(train, test)
    for part in ("train", "test"):
        corpus = train if part == "train" else test
        keep = corpus.doc_lengths > 0
        if not keep.all():
            logger.info("%s: dropped %d documents without training words", part,
                        int((~keep).sum()))
            if part == "train":
                train, y_train = train.subset(np.flatnonzero(keep)), y_train[keep]
            else:
                test, y_test = test.subset(np.flatnonzero(keep)), y_test[keep]
    return SLDATask(f"{ds.name}-{task}", train, y_train, test, y_test, names)


# ---------------------------------------------------------------------- baselines
class LDAThenSVM:
    """The "LDA+SVM" baseline: LDA topic proportions, then a linear SVM (C = 1) on them.

    The SVM learns from the training documents' ``doc_topic_``; new documents get
    :meth:`~topiclink.families.lda.estimator.LDA.transform`.
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "y")

    def __init__(self, n_topics: int = 10, **lda_params: Any) -> None:
        from topiclink.estimators import LDA

        self.lda = LDA(n_topics, **lda_params)

    def fit(self, X: Any, y: Any) -> LDAThenSVM:
        from sklearn.svm import LinearSVC

        self.lda.fit(X)
        self.svm = LinearSVC(C=1.0).fit(self.lda.doc_topic_, y)
        self.n_iter_ = self.lda.n_iter_
        return self

    def predict(self, X: Any) -> np.ndarray:
        return self.svm.predict(self.lda.transform(X))


register_model("LDA+SVM", LDAThenSVM, params=(
    "n_topics", "doc_topic_prior", "topic_word_prior", "max_iter", "evaluate_every",
    "random_state"))
register_model("tomotopy-SLDA", TomotopySLDA, params=(
    "n_topics", "max_iter", "doc_topic_prior", "topic_word_prior", "random_state"))


def _has_c(name: str) -> bool:
    """Model ``name`` has a regularisation constant c (one row per value of ``c``)."""
    accepted = model_params(name)
    return accepted is None or "c" in accepted


# ---------------------------------------------------------------------- the protocol
def _run_cell(cell: Cell, context: tuple[SLDATask, dict[str, Any]]) -> dict[str, Any] | None:
    """Fit one configuration on the training split and score it on the test split (one row
    of :func:`run_slda_experiment`; ``None`` where the model cannot run here)."""
    task, settings = context
    name, K, c = cell["model"], int(cell["K"]), float(cell["c"])
    params: dict[str, Any] = {"n_topics": K, "max_iter": settings["max_iter"],
                              "random_state": cell.seed}
    if _has_c(name):
        params["c"] = c
    optional = {"doc_topic_prior": settings["alpha"], "topic_word_prior": settings["beta"],
                "evaluate_every": _S["evaluate_every"], "n_jobs": settings["n_jobs"]}
    try:
        model = build_model(name, params, optional)
    except ImportError as exc:
        logger.warning("%s needs a package that is not installed (%s); skipping it",
                       name, exc)
        return None
    t0 = time.perf_counter()
    fit_model(model, task.train, y=task.y_train)
    train_s = time.perf_counter() - t0
    train_s = float(getattr(model, "fit_seconds_", train_s))
    n_iter = int(getattr(model, "n_iter_", settings["max_iter"]))
    t1 = time.perf_counter()
    pred = model.predict(task.test)
    test_s = time.perf_counter() - t1
    row = {"model": name, "K": K, "c": c, "run": int(cell["run"]),
           "accuracy": float(np.mean(pred == task.y_test)),
           "train_seconds": train_s, "n_iter": n_iter,
           "seconds_per_iteration": train_s / max(n_iter, 1),
           "test_seconds": test_s, "n_train": task.train.n_docs, "n_test": task.test.n_docs}
    logger.info("%s K=%d c=%g run %d: accuracy %.3f, %.1f s", name, K, c, cell["run"],
                row["accuracy"], train_s)
    return row


def run_slda_experiment(task: SLDATask, models: Sequence[str],
                        topics: Iterable[int] = PAPER.axis("K"),
                        c_values: Iterable[float] = PAPER.axis("c"),
                        n_runs: int = _S["runs"], max_iter: int = _S["max_iter"],
                        alpha: float = _S["doc_topic_prior"],
                        beta: float = _S["topic_word_prior"],
                        n_jobs: int = _S["n_jobs"], random_state: int = 0,
                        on_row: Callable[[dict[str, Any]], None] | None = None,
                        workers: int = 1, csv_path: Any = None) -> pd.DataFrame:
    """One row per (model, K, c, run): accuracy, train/test seconds, iterations run
    (``n_iter``) and seconds per iteration.

    ``max_iter`` is the number of Gibbs iterations (gSLDA, gMedLDA, LDA, tomotopy) and the
    cap on vSLDA's EM iterations, which stop earlier on the relative tolerance of
    :class:`VariationalSLDA` (default 1e-4).  ``seconds_per_iteration`` is
    ``train_seconds / n_iter`` (for LDA+SVM it includes the SVM).  vSLDA and tomotopy-SLDA
    are binary only: on a multiclass task they are skipped with a warning.

    ``n_jobs`` is the number of processes of one multiclass fit (one-vs-all classes);
    ``workers`` runs that many configurations at once in separate processes.  Each
    configuration's seed comes from ``random_state``, its run and its K
    (:func:`~topiclink.experiments.runner.cell_seed`), so the rows are the same for any
    ``workers``; only the timings feel the shared machine.  Rows come back in the order
    of the sequential loop; ``csv_path`` is rewritten (atomically) after each.
    """
    for name in models:
        if name not in MODEL_NAMES:
            raise ValueError(f"unknown model {name!r}; known: {', '.join(MODEL_NAMES)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    n_classes = np.unique(task.y_train).size
    if n_classes != 2:
        for name in BINARY_ONLY:
            if name in models:
                logger.warning("%s is binary only; skipping it on this %d-class task", name,
                               n_classes)
        models = [m for m in models if m not in BINARY_ONLY]
    cs = [float(c) for c in c_values]
    cells = grid({"run": range(n_runs), "K": [int(k) for k in topics], "model": list(models),
                  "c": lambda cell: cs if _has_c(cell["model"]) else [float("nan")]})
    settings = {"max_iter": max_iter, "alpha": alpha, "beta": beta, "n_jobs": n_jobs}
    return run_grid(cells, _run_cell, (task, settings), base_seed=random_state,
                    seed_axes=PAPER.seed_axes, workers=workers, on_row=on_row,
                    csv_path=csv_path)


# ---------------------------------------------------------------------- the command
@dataclass
class SLDAOptions:
    """The options of ``topiclink experiment slda`` (:data:`SPEC`)."""

    dataset: str | None = shared("dataset")
    data: Path | None = shared("data")
    task: str = option(_SPLIT.get("task"), help="binary (alt.atheism vs talk.religion.misc on 20 "
                       "Newsgroups) or multiclass.")
    topics: str = option(PAPER.joined(PAPER.axis("K")), help="Values of K, comma-separated.")
    models: str = option(PAPER.joined(PAPER.axis("model")),
                         help="Comma-separated: gSLDA, gMedLDA, LDA+SVM, tomotopy-SLDA, "
                         "vSLDA (variational sLDA, binary task only).")
    c: str = option(PAPER.joined(PAPER.axis("c")), "--c",
                    help="Regularisation constants, comma-separated.")
    iterations: int = option(_S["max_iter"], "--iterations", "-n")
    runs: int = option(_S["runs"], help="Repetitions with different seeds.")
    n_jobs: int = option(_S["n_jobs"], help="Processes for one-vs-all classes.")
    workers: int = shared("workers", 1)
    seed: int = option(0)
    out: Path = option(Path("slda-experiment"), "--out", "-o", help="Output folder "
                       "(created when missing) for the slda_*.csv tables and slda_*.png "
                       "figures; results already there are refused unless --force.")
    force: bool = shared("force", False)
    verbose: bool = shared("verbose", True)


@dataclass
class _Plan:
    options: SLDAOptions
    names: list[str]
    topics: list[int]
    c_values: list[float]


def _check(o: SLDAOptions, ui: Session) -> _Plan:
    """Every option and the output folder, before any data is read."""
    names = ui.names(o.models, MODEL_NAMES)
    ui.check(o.task in ("binary", "multiclass"),
             f"--task must be binary or multiclass, got {o.task!r}")
    k_values = ui.int_list(o.topics, "--topics", minimum=2)
    ui.check_model_size(max(k_values))
    c_values = ui.float_list(o.c, "--c", positive=True)
    ui.check(o.iterations >= 1, f"--iterations must be >= 1, got {o.iterations}")
    ui.check(o.runs >= 1, f"--runs must be >= 1, got {o.runs}")
    ui.check(o.n_jobs != 0, "--n-jobs must be an integer other than 0 (-1: all cores), got 0")
    finish_check(o, ui, "slda")
    return _Plan(o, names, k_values, c_values)


def _load(plan: _Plan, ui: Session, data: Any) -> SLDATask:
    o = plan.options
    ds = read_dataset(PAPER, o, ui, data)
    prepared = prepare_task(ds, o.task, random_state=o.seed)
    ui.echo(f"{prepared.name}: {prepared.train.n_docs} training / {prepared.test.n_docs} "
            f"test documents, {prepared.train.n_words} words, "
            f"{len(np.unique(prepared.y_train))} classes")
    o.out.mkdir(parents=True, exist_ok=True)
    return prepared


def _run(plan: _Plan, prepared: SLDATask, ui: Session) -> pd.DataFrame:
    o = plan.options

    def show(row: dict) -> None:
        ui.echo(f"{row['model']:>14s} K={row['K']:<3d} c={row['c']:<6g} run {row['run']}: "
                f"accuracy {row['accuracy']:.3f}  train {row['train_seconds']:.1f} s  "
                f"test {row['test_seconds']:.1f} s")

    table = run_slda_experiment(prepared, plan.names, topics=plan.topics,
                                c_values=plan.c_values, n_runs=o.runs,
                                max_iter=o.iterations, n_jobs=o.n_jobs, random_state=o.seed,
                                on_row=show, workers=o.workers,
                                csv_path=o.out / "slda_results.csv")
    if table.empty:
        raise ui.fail("no results (is tomotopy installed for tomotopy-SLDA?)")
    return table


def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """Means over runs for every (model, K, c) (indexed by them)."""
    return table.groupby(["model", "K", "c"], dropna=False)[list(PAPER.metrics)].mean()


def write_slda_outputs(table: pd.DataFrame, out: str | Path, title: str = ""
                       ) -> dict[str, Any]:
    """Write the figures (accuracy and training time against K; accuracy against c,
    one panel per model with a c, when several c ran), slda_summary.csv and
    slda_findings.csv (the claims of ``papers/slda.toml``) into ``out``; returns the
    summary, the findings and the paths."""
    import matplotlib.pyplot as plt

    from topiclink.plotting.experiments import plot_metric_vs_topics, save_figure

    out = Path(out)
    written: dict[str, Any] = {}
    for metric in ("accuracy", "train_seconds"):
        ax = plot_metric_vs_topics(table, metric)
        ax.set_title(f"{title}: {metric.replace('_', ' ')}")
        written[metric] = save_figure(ax.figure, out / f"slda_{metric}_vs_K.png")
    supervised = table[table["model"].map(_has_c)]
    if supervised["c"].nunique() > 1:
        c_models = list(dict.fromkeys(supervised["model"]))
        fig, axes = plt.subplots(1, len(c_models), figsize=(5.5 * len(c_models), 4),
                                 sharey=True, squeeze=False)
        for ax, name in zip(axes[0], c_models, strict=True):
            plot_metric_vs_topics(supervised[supervised["model"] == name], "accuracy",
                                  ax=ax, x="c")
            ax.set_title(f"{title}: {name}, accuracy against c")
        written["accuracy_vs_c"] = save_figure(fig, out / "slda_accuracy_vs_c.png")
    written["summary"] = summary = summarise(table)
    written["summary_csv"] = write_csv(summary.reset_index(), out / "slda_summary.csv")
    written["findings"] = findings = check_claims(table, PAPER.claims)
    written["findings_csv"] = write_csv(findings, out / "slda_findings.csv")
    return written


def _report(plan: _Plan, prepared: SLDATask, table: pd.DataFrame, ui: Session) -> None:
    out = plan.options.out
    written = write_slda_outputs(table, out, prepared.name)
    ui.echo(written["summary"].to_string(float_format=lambda v: f"{v:.3f}"))
    for line in claim_lines(written["findings"], PAPER.claims):
        ui.echo(line)
    ui.echo(f"results: {out / 'slda_results.csv'}, summary, findings and figures in {out}/")


SPEC = register_protocol(ProtocolSpec(
    name="slda", options=SLDAOptions, check=_check, load=_load, run=_run, report=_report,
    help="The gSLDA / Gibbs MedLDA protocol (default data: 20newsgroups): accuracy and "
         "time against K and c."))
