"""``topiclink fit ...``: fit a model and write it to a model file.

Every fit command needs its data named (``--dataset``, ``--data`` or ``--input``: no
silent default), writes only the file ``--out`` names (no ``--out``: the model is
reported but not saved; an existing file only with ``--force``), and checks its options,
its output path and the model's size against the machine before reading any data.

Every fit command of documents also reads your own ``--documents FILE`` (with
``--edges FILE`` for the models of links; :mod:`topiclink.cli.documents`): the text
analyser it fits is saved with the model, and publication times (``--time-column``) go
to the models that use them.

``fit model NAME`` fits any registered estimator (by class name or paper name), reading
its ``fit_requires`` to know whether to pass links or labels; ``fit lda``, ``fit rtm``,
``fit lmv`` and ``fit slda`` are the same scaffold with each family's options; ``fit
bpbfm`` fits a bilinear Poisson factor model to the train triples of a knowledge graph.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from topiclink.cli.common import (
    CheckpointEveryOpt,
    CheckpointOpt,
    DataDirOpt,
    DatasetOpt,
    ForceOpt,
    InputOpt,
    SchedulerOpt,
    SeedOpt,
    ShardsOpt,
    VerboseOpt,
    VocabOpt,
    check,
    check_model,
    check_out_file,
    checkpoint_options,
    dask_params,
    exception_message,
    fail,
    fit_and_report,
    load_data,
    parse_params,
    reported_errors,
    require_data,
    setup_logging,
)
from topiclink.cli.documents import DocumentSource, document_options

__all__ = ["app", "resolve_model", "fit_registered", "generated_commands"]

#: the estimators with a hand-written command (family options, paper names, triples);
#: every other registered estimator gets a generated one
HAND_WRITTEN = {"lda": "LDA", "rtm": "RelationalTopicModel",
                "lmv": "VisibilityTopicModel", "slda": "SupervisedTopicModel",
                "bpbfm": "BilinearPoissonFactorModel"}


def generated_commands() -> dict[str, type]:
    """``fit NAME`` -> estimator class for every registered estimator without a
    hand-written command (:mod:`topiclink.cli.estimator_commands`)."""
    from topiclink.cli.estimator_commands import command_name
    from topiclink.models.base import registered_estimators

    taken = {*HAND_WRITTEN, "model"}
    return {command_name(cls): cls for name, cls in registered_estimators().items()
            if name not in HAND_WRITTEN.values() and command_name(cls) not in taken}


class FitGroup(TyperGroup):
    """``topiclink fit``: the hand-written commands, ``fit model NAME`` and one generated
    command per other registered estimator (built when listed or called)."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*super().list_commands(ctx), *sorted(generated_commands())]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        known = super().get_command(ctx, cmd_name)
        if known is not None:
            return known
        cls = generated_commands().get(cmd_name)
        if cls is None:
            return None
        from topiclink.cli.estimator_commands import estimator_command

        single = typer.Typer(rich_markup_mode=None, add_completion=False,
                             pretty_exceptions_enable=False)
        single.command(cmd_name)(estimator_command(cls, fit_registered))
        return typer.main.get_command(single)


app = typer.Typer(help="Fit a model and write it to a model file.", no_args_is_help=True,
                  rich_markup_mode=None, cls=FitGroup)

OutOpt = Annotated[Path | None, typer.Option(
    "--out", "-o", help="Model file to write (.npz is added when missing); without --out "
    "the model is fitted and reported but not saved. An existing file is refused unless "
    "--force.", show_default=False)]
HoldoutOpt = Annotated[float, typer.Option(
    help="Fraction of the documents (with their links and labels) kept out of training; "
         "their held-out metrics are printed (0: train on everything).")]


def _checked(model: Any, out: Path | None, force: bool, dataset: str | None,
             data: Path | None, input_file: Path | None = None, vocab: Path | None = None,
             holdout: float = 0.0, inputs: bool = True,
             source: DocumentSource | None = None) -> Path | None:
    """Everything a fit command checks before reading data: the model's parameters and
    size, ``--holdout``, that data was named and exists (every ``--documents`` option,
    ``--edges`` for a model of links), and the output file."""
    check_model(model)
    check(0 <= holdout < 1, f"--holdout must be a fraction in [0, 1), got {holdout:g}")
    require_data(dataset, data, input_file, inputs=inputs, source=source,
                 requires=tuple(getattr(model, "fit_requires", ("X",))))
    if vocab is not None:
        from topiclink.cli.common import check_input_paths

        check_input_paths(vocab=vocab)
    return check_out_file(out, force=force)


@app.command("lda")
@document_options
def fit_lda(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    input_file: InputOpt = None,
    vocab: VocabOpt = None,
    topics: Annotated[int, typer.Option("--topics", "-k", help="Number of topics K.")] = 20,
    iterations: Annotated[int, typer.Option("--iterations", "-n", help="Gibbs sweeps.")] = 200,
    alpha: Annotated[float, typer.Option(help="Document-topic prior alpha.")] = 0.1,
    beta: Annotated[float, typer.Option(help="Topic-word prior beta.")] = 0.01,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", help="Threads (-1: all cores). Above 1 the sweep is partitioned "
        "into --jobs document shards x vocabulary blocks (scheme='partition'); the "
        "chain depends on the shard count, not on the threads.")] = 1,
    sampler: Annotated[str, typer.Option(
        help="Token kernel of the sequential chain: auto, gibbs or mh (exact "
        "Metropolis-Hastings with O(1) proposals; auto picks it from K = 3000).")]
    = "auto",
    scheduler: SchedulerOpt = None,
    shards: ShardsOpt = 2,
    seed: SeedOpt = 0,
    out: OutOpt = None,
    force: ForceOpt = False,
    checkpoint: CheckpointOpt = None,
    checkpoint_every: CheckpointEveryOpt = "5min",
    verbose: VerboseOpt = True,
    source: DocumentSource | None = None,
) -> None:
    """Fit LDA (collapsed Gibbs) to a dataset (--dataset, --data or --input) or your own
    --documents (their text analysis saved with the model) and save it to --out; on a
    Dask cluster with --scheduler."""
    from topiclink.execution import Shards, resolve_n_jobs
    from topiclink.models import LDA

    setup_logging(verbose)
    check(jobs == -1 or jobs >= 1, f"--jobs must be -1 or >= 1, got {jobs}")
    threads = resolve_n_jobs(jobs)
    parallel = {"scheme": Shards("partition", threads), "executor": threads} \
        if threads > 1 else {}
    parallel = dask_params(scheduler, shards, "adlda") or parallel
    model = LDA(n_topics=topics, doc_topic_prior=alpha, topic_word_prior=beta,
                max_iter=iterations, sampler=sampler, random_state=seed, verbose=verbose,
                **parallel)
    ckpt = checkpoint_options(checkpoint, checkpoint_every)
    out = _checked(model, out, force, dataset, data, input_file, vocab, source=source)
    ds = load_data(dataset, data, input_file, vocab, source=source)
    fit_and_report(model, ds, out, seed=seed, checkpoint=ckpt)


@app.command("rtm")
@document_options
def fit_rtm(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    model_name: Annotated[str, typer.Option(
        "--model", "-m", help="Gibbs-gRTM, Gibbs-RTM, Approx-gRTM, Gibbs-gMMRTM, "
        "Gibbs-MMRTM, Approx-gMMRTM (or any link model's paper name, e.g. Var-RTM, "
        "which ignores the options it does not have).")] = "Gibbs-gRTM",
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
    scheduler: SchedulerOpt = None,
    shards: ShardsOpt = 2,
    seed: SeedOpt = 0,
    holdout: HoldoutOpt = 0.0,
    out: OutOpt = None,
    force: ForceOpt = False,
    checkpoint: CheckpointOpt = None,
    checkpoint_every: CheckpointEveryOpt = "5min",
    verbose: VerboseOpt = True,
    source: DocumentSource | None = None,
) -> None:
    """Fit a relational topic model (gRTM family) to a linked dataset (--dataset or
    --data, e.g. --dataset cora, or your own --documents and --edges) and save it to
    --out; the Gibbs variants on a Dask cluster with --scheduler."""
    from topiclink.experiments.runner import build_model, model_fit_requires

    setup_logging(verbose)
    try:
        if "links" not in model_fit_requires(model_name):
            raise fail(f"{model_name!r} is not a link model; see `topiclink models`")
        # --scheduler's parameters are required (a model without them is an error)
        model = build_model(model_name, {"n_topics": topics, "max_iter": iterations,
                                         "random_state": seed,
                                         **dask_params(scheduler, shards, "shards")},
                            {"c": c, "doc_topic_prior": alpha, "negative_ratio": negatives,
                             "n_jobs": n_jobs, "verbose": verbose})
    except (TypeError, ValueError) as exc:
        raise fail(str(exc)) from None
    ckpt = checkpoint_options(checkpoint, checkpoint_every)
    out = _checked(model, out, force, dataset, data, holdout=holdout, inputs=False,
                   source=source)
    ds = load_data(dataset, data, source=source)
    fit_and_report(model, ds, out, holdout=holdout, seed=seed, checkpoint=ckpt,
                   newer_citations=source.newer_citations if source else "error")


@app.command("lmv")
@document_options
def fit_lmv(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    topics: Annotated[int, typer.Option("--topics", "-k", help="Number of topics K.")] = 9,
    inference: Annotated[str, typer.Option(
        help="batch (Algorithm 1: every pair, L* monotone) or stochastic (LMVS: "
             "minibatches with case-control pairs).")] = "batch",
    visibility: Annotated[bool, typer.Option(
        "--visibility/--no-visibility",
        help="Fit a visibility per document (LMV); --no-visibility: Pairwise-Link-LDA.")]
    = True,
    iterations: Annotated[int, typer.Option(
        "--iterations", "-n", help="Outer iterations (batch) or sweeps (stochastic).")]
    = 100,
    eta: Annotated[float, typer.Option(help="Topic-word prior eta.")] = 0.5,
    tol: Annotated[float | None, typer.Option(
        help="Stopping rule: relative L* change (batch, default 1e-5) or relative "
             "diag(B) change per sweep (stochastic, default 0.05).",
        show_default=False)] = None,
    batch_size: Annotated[int, typer.Option(help="Stochastic: documents per minibatch.")]
    = 200,
    n0: Annotated[int, typer.Option(
        help="Stochastic: non-links at path length l < n0 are sampled with probability "
             "1/l, the rest with 1/n0.")] = 100,
    n_jobs: Annotated[int, typer.Option(help="Threads streaming the pairs (-1: all cores; "
                                        "the same fit for any value).")] = -1,
    seed: SeedOpt = 0,
    holdout: HoldoutOpt = 0.0,
    out: OutOpt = None,
    force: ForceOpt = False,
    checkpoint: CheckpointOpt = None,
    checkpoint_every: CheckpointEveryOpt = "5min",
    verbose: VerboseOpt = True,
    source: DocumentSource | None = None,
) -> None:
    """Fit the topic-adjusted visibility model (LMV / LMVS / Pairwise-Link-LDA) to a
    directed citation dataset (--dataset or --data, e.g. --dataset cora-rlda, or your own
    --documents and --edges; with --time-column a document only cites older ones: LMV(t))
    and save it to --out; `topiclink suggest FILE --text ...` then ranks documents to
    cite."""
    from topiclink.models import VisibilityTopicModel

    setup_logging(verbose)
    try:
        model = VisibilityTopicModel(
            topics, visibility=visibility, inference=inference, topic_word_prior=eta,
            max_iter=iterations, tol=tol, batch_size=batch_size, n0=n0, n_jobs=n_jobs,
            random_state=seed, verbose=verbose)
    except (TypeError, ValueError) as exc:
        raise fail(str(exc)) from None
    ckpt = checkpoint_options(checkpoint, checkpoint_every)
    out = _checked(model, out, force, dataset, data, holdout=holdout, inputs=False,
                   source=source)
    ds = load_data(dataset, data, directed=True, source=source)
    fit_and_report(model, ds, out, holdout=holdout, seed=seed, checkpoint=ckpt,
                   newer_citations=source.newer_citations if source else "error")


@app.command("slda")
@document_options
def fit_slda(
    dataset: DatasetOpt = None,
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
    scheduler: SchedulerOpt = None,
    shards: ShardsOpt = 2,
    seed: SeedOpt = 0,
    out: OutOpt = None,
    force: ForceOpt = False,
    checkpoint: CheckpointOpt = None,
    checkpoint_every: CheckpointEveryOpt = "5min",
    verbose: VerboseOpt = True,
    source: DocumentSource | None = None,
) -> None:
    """Fit a supervised topic model (gSLDA / Gibbs MedLDA) to a labelled dataset's
    training documents (--dataset or --data, e.g. --dataset poliblog-rlda) or to your own
    --documents with --label-column (their text analysis saved with the model) and save
    it to --out; prints test accuracy where the dataset has a test split."""
    from topiclink.models.base import make_paper_model

    setup_logging(verbose)
    try:
        model = make_paper_model("gSLDA", n_topics=topics, loss=loss, c=c,
                                 doc_topic_prior=alpha, max_iter=iterations, n_jobs=n_jobs,
                                 random_state=seed, verbose=verbose,
                                 **dask_params(scheduler, shards, "shards"))
    except (TypeError, ValueError) as exc:
        raise fail(str(exc)) from None
    ckpt = checkpoint_options(checkpoint, checkpoint_every)
    out = _checked(model, out, force, dataset, data, inputs=False, source=source)
    ds = load_data(dataset, data, source=source)
    fit_and_report(model, ds, out, seed=seed, checkpoint=ckpt)


@app.command("bpbfm")
def fit_bpbfm(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    topics: Annotated[int, typer.Option(
        "--topics", "-k", help="Number of latent factors K (>= 2; the shrinkage prior "
        "switches off those not needed).")] = 10,
    components: Annotated[int | None, typer.Option(
        "--components", hidden=True, help="Deprecated (until 0.2.0): --topics.")] = None,
    dictionary: Annotated[int | None, typer.Option(
        "--dictionary", "-m", help="BPBFM-2 with M shared K x K matrices; without it "
        "BPBFM-1 (one matrix per relation).", show_default=False)] = None,
    inference: Annotated[str, typer.Option(
        help="batch (Gibbs), online (conditional density filtering) or em (BPBFM-1 by "
             "MAP-EM).")] = "batch",
    chains: Annotated[int, typer.Option(
        "--chains", help="Independent chains (em: restarts) fitted one after the other; "
        "predictions average over all their samples (batch and em).")] = 1,
    iterations: Annotated[int, typer.Option(
        "--iterations", "-n", help="Gibbs iterations (online: sweeps).")] = 500,
    burn_in: Annotated[int | None, typer.Option(
        help="Iterations before samples are kept (default: half of --iterations).",
        show_default=False)] = None,
    n_jobs: Annotated[int, typer.Option(help="Threads (-1: all cores; the same chain for "
                                        "any value).")] = 1,
    seed: SeedOpt = 0,
    out: OutOpt = None,
    force: ForceOpt = False,
    checkpoint: CheckpointOpt = None,
    checkpoint_every: CheckpointEveryOpt = "5min",
    verbose: VerboseOpt = True,
) -> None:
    """Fit a bilinear Poisson factor model (BPBFM-1, or BPBFM-2 with --dictionary) to the
    train triples of a knowledge graph (--dataset umls|nations, or --dataset triples /
    --data DIR with train.txt, valid.txt, test.txt).  Like every knowledge-graph model
    trained on train.txt, the model sees the valid and test cells as zeros (marking exactly
    those cells unobserved would tell it where the answers are); `topiclink experiment
    bpbfm --protocol kg` evaluates on them.  Prints the summary and saves to --out."""

    from topiclink.models import BilinearPoissonFactorModel

    setup_logging(verbose)
    if components is not None:
        typer.echo("--components is deprecated and will be removed in 0.2.0; use --topics "
                   "(-k)", err=True)
        topics = components
    try:
        model = BilinearPoissonFactorModel(
            topics, n_dictionary=dictionary, inference=inference, max_iter=iterations,
            burn_in=iterations // 2 if burn_in is None else burn_in, n_jobs=n_jobs,
            n_chains=chains, random_state=seed, verbose=verbose)
    except (TypeError, ValueError) as exc:
        raise fail(str(exc)) from None
    ckpt = checkpoint_options(checkpoint, checkpoint_every)
    out = _checked(model, out, force, dataset, data, inputs=False)
    ds = load_data(dataset, data)
    if not ds.tensor:
        raise fail(f"dataset {ds.name!r} has no knowledge-graph triples (a relational "
                   "tensor); use --dataset umls, nations, or --data DIR with train.txt")
    if "train" not in ds.tensor:
        raise fail(f"dataset {ds.name!r} has no train split (splits: "
                   f"{', '.join(ds.tensor)})")
    train = ds.tensor["train"]
    with reported_errors():
        t0 = time.perf_counter()
        model.fit(train, **ckpt)
        seconds = time.perf_counter() - t0
    path = None
    if out is not None:
        try:
            path = model.save(out)
        except OSError as exc:
            raise fail(f"could not write the model to {out}: {exception_message(exc)}") \
                from None
    typer.echo(model.summary())
    others = ", ".join(f"{t.n_entries} {name}" for name, t in ds.tensor.items()
                       if name != "train" and t.n_entries)
    typer.echo(f"trained in {seconds:.1f} s on {ds.name!r}: {train.n_entries} train triples"
               + (f" (not used: {others} triples)" if others else ""))
    if path is not None:
        typer.echo(f"model written to {path}")
    else:
        typer.echo("model not saved (no --out FILE given); nothing was written")


def resolve_model(name: str) -> tuple[type, dict[str, Any]]:
    """A registered estimator class name or a paper name -> (class, base keywords)."""
    from topiclink.models.base import paper_models, registered_estimators

    classes = registered_estimators()
    if name in classes:
        return classes[name], {}
    papers = paper_models()
    if name in papers:
        return papers[name]
    raise fail(f"unknown model {name!r}; known estimators: {', '.join(classes)}; paper "
               f"names: {', '.join(papers)} (see `topiclink models`)")


@app.command("model")
@document_options
def fit_model_cmd(
    name: Annotated[str, typer.Argument(
        help="A registered estimator (class name, e.g. RelationalTopicModel) or a paper "
             "name (e.g. Gibbs-gRTM); see `topiclink models`.")],
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    input_file: InputOpt = None,
    vocab: VocabOpt = None,
    topics: Annotated[int | None, typer.Option(
        "--topics", "-k", help="Number of topics K (default: the estimator's).")] = None,
    max_iter: Annotated[int | None, typer.Option(
        "--max-iter", "--iterations", "-n",
        help="Iterations (default: the estimator's).")] = None,
    seed: SeedOpt = 0,
    param: Annotated[list[str] | None, typer.Option(
        "--param", "-p", help="Another constructor parameter as key=value (repeatable; "
        "values parsed as JSON when possible: 4, 0.5, true, null, [1,2], \"text\").")]
    = None,
    holdout: HoldoutOpt = 0.0,
    out: OutOpt = None,
    force: ForceOpt = False,
    checkpoint: CheckpointOpt = None,
    checkpoint_every: CheckpointEveryOpt = "5min",
    verbose: VerboseOpt = True,
    source: DocumentSource | None = None,
) -> None:
    """Fit any registered estimator by name to a dataset or your own --documents (and
    --edges); what its fit needs (links, labels) comes from its fit_requires
    declaration, so a new estimator class works here as is."""
    cls, base = resolve_model(name)
    accepted = set(cls._get_param_names())
    params: dict[str, Any] = dict(base)
    for key, value in (("n_topics", topics), ("max_iter", max_iter)):
        if value is not None:
            if key not in accepted:
                raise fail(f"{cls.__name__} has no parameter {key!r}")
            params[key] = value
    fit_registered(cls, params, dataset=dataset, data=data, input_file=input_file,
                   vocab=vocab, seed=seed, param=param, holdout=holdout, out=out,
                   force=force, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                   verbose=verbose, source=source)


def fit_registered(cls: type, params: dict[str, Any], *, dataset: str | None,
                   data: Path | None, input_file: Path | None, vocab: Path | None,
                   seed: int, param: list[str] | None, holdout: float, out: Path | None,
                   force: bool, checkpoint: Path | None, checkpoint_every: str,
                   verbose: bool, source: DocumentSource | None) -> None:
    """The body of ``fit model NAME`` and of the generated ``fit NAME`` commands
    (:mod:`topiclink.cli.estimator_commands`): ``params`` and ``--param`` to the
    constructor (with ``--seed`` and ``--verbose`` where it takes them), the data
    (what ``fit`` needs comes from ``fit_requires``), fit, report and save."""
    setup_logging(verbose)
    accepted = set(cls._get_param_names())
    params = dict(params)
    for key, value in (("random_state", seed), ("verbose", verbose)):
        if key in accepted:
            params[key] = value
    extra = parse_params(param)
    unknown = sorted(set(extra) - accepted)
    if unknown:
        raise fail(f"{cls.__name__} has no parameter {unknown[0]!r}; its parameters: "
                   f"{', '.join(sorted(accepted))}")
    params.update(extra)
    try:
        model = cls(**params)
    except (TypeError, ValueError) as exc:
        raise fail(str(exc)) from None
    ckpt = checkpoint_options(checkpoint, checkpoint_every)
    out = _checked(model, out, force, dataset, data, input_file, vocab, holdout=holdout,
                   source=source)
    ds = load_data(dataset, data, input_file, vocab,
                   directed=bool(getattr(cls, "directed_links", False)), source=source)
    fit_and_report(model, ds, out, holdout=holdout, seed=seed, checkpoint=ckpt,
                   newer_citations=source.newer_citations if source else "error")
