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
its ``fit_requires`` to know whether to pass documents, links, labels or a knowledge
graph's train triples; ``fit lda``, ``fit rtm``, ``fit lmv``, ``fit slda``, ``fit bpbfm``
and one command per other registered estimator are the same scaffold with each class's
options, generated from the registry (:mod:`topiclink.cli.estimator_commands`: each
family declares its command's name, short flags and defaults in its own folder).
"""

from __future__ import annotations

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
    HoldoutOpt,
    InputOpt,
    OutOpt,
    SeedOpt,
    VerboseOpt,
    VocabOpt,
    check_model,
    check_out_file,
    checkpoint_options,
    fit_and_report,
    fit_clock,
    load_data,
    parse_params,
    require_data,
    setup_logging,
)
from topiclink.cli.documents import DocumentSource, document_options
from topiclink.cli.errors import check, exception_message, fail, reported_errors
from topiclink.cli.help import HelpCommand

__all__ = ["app", "resolve_model", "fit_registered", "fit_triples", "generated_commands"]

def generated_commands() -> dict[str, type]:
    """``fit NAME`` -> estimator class for every registered estimator
    (:mod:`topiclink.cli.estimator_commands`; ``fit model`` is the scaffold's own)."""
    from topiclink.cli.catalog import command_name
    from topiclink.estimators.base import registered_estimators

    commands: dict[str, type] = {}
    for cls in registered_estimators().values():
        commands.setdefault(command_name(cls), cls)
    commands.pop("model", None)
    return commands


def _command_class(command: str) -> type | None:
    """The estimator class of ``fit COMMAND``, importing its module only (the catalog,
    :mod:`topiclink.cli.catalog`, says which)."""
    import importlib

    from topiclink.cli.catalog import estimator_catalog

    if command == "model":
        return None
    entry = next((e for e in estimator_catalog().values() if e.command == command), None)
    if entry is None:
        return None
    from topiclink.estimators.base import registered_estimators

    module = importlib.import_module(entry.module)
    cls = getattr(module, entry.name, None)
    return cls if isinstance(cls, type) else registered_estimators().get(entry.name)


class FitGroup(TyperGroup):
    """``topiclink fit``: ``fit model NAME`` and one generated command per registered
    estimator (built when listed or called)."""

    def list_commands(self, ctx: Any) -> list[str]:
        from topiclink.cli.catalog import estimator_catalog

        names = {e.command for e in estimator_catalog().values()} - {"model"}
        return [*super().list_commands(ctx), *sorted(names)]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands with their summaries, read without importing the models
        (:mod:`topiclink.cli.catalog`)."""
        from typer._click.utils import make_default_short_help

        from topiclink.cli.catalog import estimator_catalog
        from topiclink.cli.help import plain_text

        own = TyperGroup.list_commands(self, ctx)
        rows = [(name, TyperGroup.get_command(self, ctx, name).get_short_help_str(1000))
                for name in own]
        rows += sorted((e.command, f"Fit {e.name}: {plain_text(e.summary)}")
                       for e in estimator_catalog().values() if e.command != "model")
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(name, make_default_short_help(text, limit))
                                for name, text in rows])

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        known = super().get_command(ctx, cmd_name)
        if known is not None:
            return known
        cls = _command_class(cmd_name)
        if cls is None:
            return None
        from topiclink.cli.estimator_commands import estimator_command

        single = typer.Typer(rich_markup_mode=None, add_completion=False,
                             pretty_exceptions_enable=False)
        single.command(cmd_name, cls=HelpCommand)(estimator_command(cls, fit_registered))
        return typer.main.get_command(single)


app = typer.Typer(help="Fit a model and write it to a model file.", no_args_is_help=True,
                  rich_markup_mode=None, cls=FitGroup)

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


def resolve_model(name: str) -> tuple[type, dict[str, Any]]:
    """A registered estimator class name or a paper name -> (class, base keywords)."""
    from topiclink.estimators.base import paper_models, registered_estimators

    classes = registered_estimators()
    if name in classes:
        return classes[name], {}
    papers = paper_models()
    if name in papers:
        return papers[name]
    raise fail(f"unknown model {name!r}; known estimators: {', '.join(classes)}; paper "
               f"names: {', '.join(papers)} (see `topiclink models`)")


@app.command("model", cls=HelpCommand)
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
        "--param", "-p", help="Another parameter, key=value (JSON).")]
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
                   verbose: bool, source: DocumentSource | None,
                   features: str | None = None) -> None:
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
    if "tensor" in tuple(getattr(model, "fit_requires", ())):
        check(holdout == 0, "--holdout keeps documents out; a knowledge-graph model is "
              "evaluated on the valid and test triples by `topiclink experiment bpbfm "
              "--protocol kg`")
        check(source is None, f"{cls.__name__} fits a knowledge graph's triples (--dataset "
              "or --data DIR with train.txt), not --documents")
        out = _checked(model, out, force, dataset, data, inputs=False)
        fit_triples(model, load_data(dataset, data), out, ckpt)
        return
    out = _checked(model, out, force, dataset, data, input_file, vocab, holdout=holdout,
                   source=source)
    ds = load_data(dataset, data, input_file, vocab,
                   directed=bool(getattr(cls, "directed_links", False)), source=source,
                   needs_links="links" in tuple(getattr(model, "fit_requires", ())))
    fit_and_report(model, ds, out, holdout=holdout, seed=seed, checkpoint=ckpt,
                   newer_citations=source.newer_citations if source else "error",
                   features=features)


def fit_triples(model: Any, ds: Any, out: Path | None, ckpt: dict[str, Any]) -> None:
    """Fit a model of a knowledge graph to the dataset's train triples, print its summary
    and save it to ``out``.  Like every knowledge-graph model trained on train.txt, the
    model sees the valid and test cells as zeros (marking exactly those cells unobserved
    would tell it where the answers are); `topiclink experiment bpbfm --protocol kg`
    evaluates on them."""
    if not ds.tensor:
        raise fail(f"dataset {ds.name!r} has no knowledge-graph triples (a relational "
                   "tensor); use --dataset umls, nations, or --data DIR with train.txt")
    if "train" not in ds.tensor:
        raise fail(f"dataset {ds.name!r} has no train split (splits: "
                   f"{', '.join(ds.tensor)})")
    train = ds.tensor["train"]
    with reported_errors():
        with fit_clock() as clock:
            model.fit(train, **ckpt)
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
    typer.echo(f"{clock.describe()} on {ds.name!r}: {train.n_entries} train triples"
               + (f" (not used: {others} triples)" if others else ""))
    valid = ds.tensor.get("valid")
    if valid is not None and valid.n_entries:
        from topiclink.experiments.evaluation import evaluate_triples

        with reported_errors():
            table = evaluate_triples(model, ds, "valid")
        value = {(m, q): v for m, q, v in zip(table["metric"], table["queries"],
                                              table["value"], strict=True)}
        typer.echo(f"valid triples ({valid.n_entries}): filtered MRR "
                   f"{value['mrr', 'both']:.3f} (tails {value['mrr', 'tail']:.3f}, heads "
                   f"{value['mrr', 'head']:.3f}), Hits@10 {value['hits_at_10', 'both']:.3f}"
                   "; the test triples: topiclink evaluate")
    if path is not None:
        typer.echo(f"model written to {path}")
    else:
        typer.echo("model not saved (no --out FILE given); nothing was written")
