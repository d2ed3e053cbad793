"""``topiclink fit NAME`` generated from the estimator registry.

Every registered estimator gets one, built when it is listed or called: its
constructor's parameters become options, their help comes from the class docstring's
Parameters section (or the glossary, :mod:`topiclink.parameters`), their type from the
class's ``_parameter_constraints`` table, and the body is the scaffold of ``fit model
NAME`` (data options, ``--documents``, ``--holdout``, ``--out``, checkpoints; a model of
a knowledge graph's triples fits the dataset's train triples).  A class declares, in its
own module and nowhere else:

- ``cli_name``: its command (default: its name in kebab case, e.g. ``lda-regression``);
- ``cli_flags``: more flags per parameter (e.g. ``{"doc_topic_prior": ("--alpha",)}``;
  every command has ``--topics/-k`` and ``--iterations/-n``);
- ``cli_defaults``: the command's defaults where they differ from the constructor's (a
  paper's setting), a callable of the other parameters for a derived one (e.g. half of
  ``max_iter``).
- ``cli_configs``: parameters that are a frozen dataclass of numbers (a config such as
  BPBFM's ``priors``): each field becomes an option of its own name (``--gamma0 2``),
  and the fields given build the config (the others at their defaults).

From the class's declarations the command also gains: ``--model/-m NAME`` when more
than one paper name exists for models of the same data (a paper's variant: its keywords
are set before the options given); ``--jobs/-j T`` when the class has a scheme that
shards in this process (T > 1: that scheme with T shards on T threads); ``--scheduler``
and ``--shards`` when it has one that runs on Dask.  A new estimator therefore reaches the
command line by registering itself, touching nothing here.

An option's help is the first sentence of its description, in plain text
(:func:`~topiclink.cli.help.option_help`); a str option of fixed words shows them as its
metavar (``--loss logistic|hinge``).  ``--help`` leaves out the run settings
(:data:`RUN_PARAMETERS`: sweeps of ``transform``, logging, threads, schemes, online step
sizes), checkpoints, clusters and the columns of ``--documents``; ``--help-all`` shows them.
A short flag and a glossary symbol mean one thing on every command: ``-m`` is ``--model``
(:data:`RESERVED`), and a config field named like a glossary symbol is ``--CONFIG-FIELD``
(BPBFM's ``beta``: ``--priors-beta``; ``--beta`` is the topic-word prior).

What does not become an option: ``random_state`` (``--seed``), ``verbose``
(``--verbose``), ``callbacks`` and ``executor`` (Python objects: a Dask client; the
threads are ``--n-jobs``), and every parameter
whose forms are not a number, a flag or a fixed set of words (arrays, kernels,
tuples); those, and a parameter whose flag another option already takes, are given with
``--param key=value``, as in ``fit model``.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import typer

from topiclink.cli.catalog import command_name

__all__ = ["cli_defaults", "estimator_options", "estimator_command",
           "parameter_help", "EstimatorOption"]

#: parameters that are never options of a generated command
SKIPPED = frozenset({"random_state", "verbose", "callbacks", "executor", "init_topics"})

#: parameters shown by ``--help-all`` (under "Run settings"), not by ``--help``: how a
#: sampler runs and reports, not what it models
RUN_PARAMETERS = frozenset({"evaluate_every", "transform_iter", "e_step_iter",
                            "n_jobs", "scheme", "batch_size", "step_a1", "step_a2", "step_v",
                            "optimize_every"})

#: flags every generated command gives these parameters besides ``--name``
COMMON_FLAGS: dict[str, tuple[str, ...]] = {"n_topics": ("--topics", "-k"),
                                            "max_iter": ("--iterations", "-n")}

#: flags taken by the scaffold's own options (data, output, ``--documents``) and by the
#: generic ones (``-m``: ``--model``, ``-j``: ``--jobs``): one meaning on every command
RESERVED = frozenset({
    "--dataset", "-d", "--data", "--input", "-i", "--vocab", "--seed", "--param", "-p",
    "--holdout", "--out", "-o", "--force", "-f", "--checkpoint", "--checkpoint-every",
    "--verbose", "-v", "--quiet", "-q", "--help", "--help-all", "--model", "-m",
    "--jobs", "-j", "--scheduler", "--shards", "--features"})


def glossary_symbol_flags() -> dict[str, str]:
    """``--alpha`` -> ``doc_topic_prior``...: the flags spelled as a glossary parameter's
    paper symbol or other spelling (:data:`topiclink.parameters.ALIASES`), which mean that
    parameter on every command; a config field of that name (BPBFM's ``beta``) is given as
    ``--CONFIG-FIELD`` instead (``--priors-beta``)."""
    from topiclink.parameters import ALIASES, GLOSSARY

    flags = {f"--{alias.replace('_', '-')}": name for alias, name in ALIASES.items()}
    for name, entry in GLOSSARY.items():
        symbol = entry.symbol.split(" ", 1)[0] if entry.symbol else ""
        if symbol.isidentifier() and len(symbol) > 1:
            flags.setdefault(f"--{symbol.replace('_', '-')}", name)
    return flags


def parameter_help(cls: type) -> dict[str, str]:
    """Each parameter's help: the first sentence of its description in the numpydoc
    ``Parameters`` section of ``cls``'s docstring, in plain text
    (:func:`~topiclink.cli.help.option_help`; ``a, b : type`` lines give both names)."""
    from topiclink.cli.help import option_help

    doc = inspect.cleandoc(cls.__doc__ or "")
    match = re.search(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc,
                      flags=re.M | re.S)
    if match is None:
        return {}
    helps: dict[str, str] = {}
    names: list[str] = []
    text: list[str] = []

    def flush() -> None:
        sentence = option_help(" ".join(text))
        for name in names:
            helps[name] = sentence
    for line in match.group(1).splitlines():
        if line and not line[0].isspace():
            flush()
            head = line.split(":", 1)[0]
            names = [n.strip() for n in head.split(",") if n.strip().isidentifier()]
            text = []
        elif line.strip():
            text.append(line.strip())
    flush()
    return helps


class EstimatorOption:
    """One constructor parameter as an option: its name, flags, Python type, default,
    help."""

    def __init__(self, name: str, flags: tuple[str, ...], kind: Any, default: Any,
                 help: str, config: type | None = None,  # noqa: A002 - typer's word
                 field: str = "", choices: tuple[str, ...] = ()) -> None:
        self.name, self.flags, self.kind = name, flags, kind
        self.default, self.help = default, help
        #: the words a ``str`` option takes (shown as its metavar, e.g. ``exact|adlda``)
        self.choices = choices
        #: a field of a config parameter (``cli_configs``): the config class and field
        self.config, self.field = config, field

    @property
    def dest(self) -> str:
        """The command function's keyword (prefixed: never a scaffold option's name)."""
        return f"param_{self.name}"

    def annotation(self) -> Any:
        from topiclink.cli.help import RUN_SETTINGS

        extra: dict[str, Any] = {}
        if self.choices:
            extra["metavar"] = "|".join(self.choices)
        if self.name in RUN_PARAMETERS:
            extra["rich_help_panel"] = RUN_SETTINGS
        return Annotated[self.kind, typer.Option(*self.flags, help=self.help, **extra)]


#: joins a config parameter and its field in an option's name (``priors__gamma0``)
CONFIG_SEP = "__"


def _config_options(name: str, config: type, taken: set[str]) -> list[EstimatorOption]:
    """The options of config parameter ``name`` (``cli_configs``): one per field of the
    frozen dataclass ``config``, named by the field (its help from the class docstring),
    None by default (the field given builds the config; the others keep its defaults)."""
    import dataclasses

    helps = parameter_help(config)
    symbols = glossary_symbol_flags()
    options = []
    for f in dataclasses.fields(config):
        flag = "--" + f.name.replace("_", "-")
        if flag in symbols:     # a glossary symbol means the glossary's parameter
            flag = f"--{name.replace('_', '-')}-{f.name.replace('_', '-')}"
        if flag in taken:
            continue
        taken.add(flag)
        kind = int if isinstance(f.default, int) and not isinstance(f.default, bool) \
            else float
        options.append(EstimatorOption(
            f"{name}{CONFIG_SEP}{f.name}", (flag,), kind | None, None,
            f"{helps.get(f.name, f.name).rstrip('.')} (a field of {name}; default {f.default!r}).",
            config=config, field=f.name))
    return options


def _kind(constraints: list[Any], default: Any) -> Any:
    """The option type of a parameter's forms, or None when it has no command-line
    form (an array, a kernel, a tuple...)."""
    from topiclink.data.checks import Boolean, Integer, NoneValue, Options, Real

    optional = default is None or any(isinstance(c, NoneValue) for c in constraints)
    # the forms a word on the command line can take (a vector form stays with --param)
    forms = [c for c in constraints if isinstance(c, Integer | Real | Options)]
    if not forms:
        return None
    if all(isinstance(c, Boolean) for c in forms) or (
            isinstance(default, bool) and any(isinstance(c, Boolean) for c in forms)):
        return None if default is None else bool
    if all(isinstance(c, Integer) for c in forms):
        kind: Any = int
    elif all(isinstance(c, Integer | Real) for c in forms):
        kind = float
    elif all(isinstance(c, Options) and not isinstance(c, Boolean) for c in forms) and all(
            isinstance(v, str) for c in forms for v in c.values):
        kind = str
    else:
        return None
    return kind | None if optional else kind


def _choices(constraints: list[Any]) -> tuple[str, ...]:
    """The words a parameter of fixed words takes (its ``Options`` forms), in order."""
    from topiclink.data.checks import Boolean, Options

    words = [v for c in constraints if isinstance(c, Options) and not isinstance(c, Boolean)
             for v in c.values]
    if not words or not all(isinstance(v, str) for v in words):
        return ()
    return tuple(dict.fromkeys(words))


def cli_defaults(cls: type) -> dict[str, Any]:
    """The command's defaults of ``cls`` that differ from its constructor's
    (``cli_defaults``; a callable default is derived from the other parameters)."""
    return dict(getattr(cls, "cli_defaults", {}) or {})


def estimator_options(cls: type) -> tuple[list[EstimatorOption], list[str]]:
    """(the options of ``cls``'s command, the parameters left to ``--param``)."""
    from topiclink.cli.help import option_help
    from topiclink.parameters import GLOSSARY

    constraints: Mapping[str, list[Any]] = getattr(cls, "_parameter_constraints", {})
    declared: Mapping[str, tuple[str, ...]] = getattr(cls, "cli_flags", {}) or {}
    defaults = cli_defaults(cls)
    helps = parameter_help(cls)
    clashes = sorted({f for flags in declared.values() for f in flags if f in RESERVED})
    if clashes:
        raise ValueError(f"{cls.__name__}.cli_flags: {', '.join(clashes)} mean(s) the same "
                         f"on every command (RESERVED in {__name__}); choose other flags")
    taken = set(RESERVED)
    options: list[EstimatorOption] = []
    left: list[str] = []
    configs: Mapping[str, type] = getattr(cls, "cli_configs", {}) or {}
    for p in inspect.signature(cls).parameters.values():
        if p.name in SKIPPED or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in configs:
            options += _config_options(p.name, configs[p.name], taken)
            continue
        kind = _kind(list(constraints.get(p.name, [])), p.default)
        long = "--" + p.name.replace("_", "-")
        extra = (*COMMON_FLAGS.get(p.name, ()), *declared.get(p.name, ()))
        if kind is bool:
            long = f"{long}/--no-{p.name.replace('_', '-')}"
        flags = tuple(dict.fromkeys(f for f in (long, *extra)
                                    if f.split("/")[0] not in taken))
        if kind is None or not flags or not flags[0].startswith(long.split("/")[0]):
            left.append(p.name)
            continue
        taken.update(f.split("/")[0] for f in flags)
        entry = GLOSSARY.get(p.name)
        text = helps.get(p.name) or (option_help(entry.doc) if entry is not None else "")
        if p.name == "scheme":
            text += " A sharded scheme takes its shard count as NAME:S (e.g. adlda:4)."
        default = defaults.get(p.name, p.default)
        if callable(default):
            text += f" Default: {inspect.getdoc(default) or 'derived'}."
            default = None
            kind = kind | None
        choices = _choices(list(constraints.get(p.name, []))) if kind in (str, str | None) \
            else ()
        options.append(EstimatorOption(p.name, flags, kind, default, text, choices=choices))
    return options, left


def _variants(cls: type) -> dict[str, tuple[type, dict[str, Any]]]:
    """The paper names of the models that fit the data ``cls`` fits (its own variants
    first): the choices of ``--model``."""
    from topiclink.estimators.base import paper_models

    requires = tuple(getattr(cls, "fit_requires", ("X",)))
    table = {name: entry for name, entry in paper_models().items()
             if tuple(getattr(entry[0], "fit_requires", ("X",))) == requires}
    return dict(sorted(table.items(), key=lambda item: item[1][0] is not cls))


def _schemes(cls: type) -> tuple[str | None, str | None]:
    """(the sharded scheme that runs in this process, the one that runs on Dask) of
    ``cls`` (None where it has none)."""
    sharded = tuple(getattr(cls, "_sharded_schemes", ()) or ())
    local = tuple(getattr(cls, "_local_schemes", ()) or ())
    in_process = next((s for s in sharded if s in local), None)
    on_dask = next((s for s in sharded if s not in local), None)
    return in_process, on_dask


def _generic_options(cls: type, options: list[EstimatorOption]
                     ) -> list[tuple[str, Any, Any]]:
    """``--model``, ``--jobs`` and ``--scheduler`` / ``--shards`` of ``cls`` (what its
    declarations give it; see the module docstring)."""
    from topiclink.cli.catalog import estimator_catalog
    from topiclink.cli.common import SchedulerOpt, ShardsOpt
    from topiclink.cli.help import RUN_SETTINGS

    extra: list[tuple[str, Any, Any]] = []
    # the paper names of the models of this data, from the catalog: the command is built
    # without importing the other families (``_model_params`` resolves a --model given)
    requires = tuple(getattr(cls, "fit_requires", ("X",)))
    own = list(getattr(cls, "paper_names", {}) or {})
    elsewhere = [name for e in estimator_catalog().values()
                 if e.fit_requires == requires and e.name != cls.__name__
                 for name in e.paper_names]
    if len(own) + len(elsewhere) > 1:
        others = "; or another model of this data" if elsewhere else ""
        extra.append(("model", Annotated[str | None, typer.Option(
            "--model", "-m", help="A paper's model: "
            + ", ".join(own) + others + ".", show_default=False)], None))
    in_process, on_dask = _schemes(cls)
    if in_process is not None:
        extra.append(("jobs", Annotated[int, typer.Option(
            "--jobs", "-j", help=f"Threads (-1: all cores); above 1 the {in_process} scheme "
            "with that many shards.", rich_help_panel=RUN_SETTINGS)], 1))
    if on_dask is not None:
        extra += [("scheduler", SchedulerOpt, None), ("shards", ShardsOpt, 2)]
    return extra


def estimator_command(cls: type, run: Callable[..., None]) -> Callable[..., None]:
    """The typer command function of ``cls``: its options (:func:`estimator_options`),
    the generic ones its declarations give it and the scaffold's, with ``run(model class,
    params, **scaffold)`` as its body.  ``params``: the ``cli_defaults``, then the
    ``--model`` paper variant's keywords, then the options given on the command line
    (only those: an untouched option leaves the constructor's default)."""
    from topiclink.cli.common import (
        CheckpointEveryOpt,
        CheckpointOpt,
        DataDirOpt,
        DatasetOpt,
        ForceOpt,
        InputOpt,
        SeedOpt,
        VerboseOpt,
        VocabOpt,
    )
    from topiclink.cli.documents import document_options
    from topiclink.cli.help import plain_text

    options, left = estimator_options(cls)
    generic = _generic_options(cls, options)
    from topiclink.cli.common import FeaturesOpt
    from topiclink.cli.common import HoldoutOpt as holdout
    from topiclink.cli.common import OutOpt as out

    param = Annotated[list[str] | None, typer.Option(
        "--param", "-p", help="Another parameter, key=value (JSON)"
        + (f": {', '.join(left)}" if left else "") + ".")]
    scaffold: list[tuple[str, Any, Any]] = [
        ("dataset", DatasetOpt, None), ("data", DataDirOpt, None),
        ("input_file", InputOpt, None), ("vocab", VocabOpt, None),
        ("seed", SeedOpt, 0), ("param", param, None), ("holdout", holdout, 0.0),
        ("out", out, None), ("force", ForceOpt, False), ("checkpoint", CheckpointOpt, None),
        ("checkpoint_every", CheckpointEveryOpt, "5min"), ("verbose", VerboseOpt, True)]
    triples = "tensor" in tuple(getattr(cls, "fit_requires", ()))
    if "features" in tuple(getattr(cls, "fit_requires", ())):
        scaffold.insert(4, ("features", FeaturesOpt, None))
    if triples:     # a knowledge graph's train triples: no documents, texts or holdout
        scaffold = [entry for entry in scaffold
                    if entry[0] not in ("input_file", "vocab", "holdout")]

    def body(ctx: typer.Context, **values: Any) -> None:
        given = _given_options(ctx, options, values)
        target, params = _model_params(cls, given, values)
        if triples:
            values.update(input_file=None, vocab=None, holdout=0.0, source=None)
        run(target, params, **values)

    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("ctx", keyword, annotation=typer.Context)]
    params += [inspect.Parameter(o.dest, keyword, default=o.default,
                                annotation=o.annotation()) for o in options]
    params += [inspect.Parameter(name, keyword, default=default, annotation=annotation)
               for name, annotation, default in (*generic, *scaffold)]
    if not triples:     # document_options puts the --documents options in its place
        params.append(inspect.Parameter("source", keyword, default=None))
    body.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    body.__annotations__ = {p.name: p.annotation for p in params
                            if p.annotation is not inspect.Parameter.empty}
    body.__name__ = body.__qualname__ = "fit_" + command_name(cls).replace("-", "_")
    summary = plain_text((inspect.getdoc(cls) or cls.__name__).split("\n\n")[0])
    data = ("a knowledge graph's train triples (--dataset or --data)" if triples else
            "--dataset, --data, --input or --documents")
    body.__doc__ = f"Fit {cls.__name__}: {summary} Data: {data}."
    return body if triples else document_options(body)


def _given_options(ctx: typer.Context, options: list[EstimatorOption],
                   values: dict[str, Any]) -> dict[str, Any]:
    """The constructor options given on the command line (popped from ``values``; the
    others are dropped), a ``--scheme NAME:S`` as its ``Shards``."""
    given: dict[str, Any] = {}
    fields: dict[str, dict[str, Any]] = {}
    for o in options:
        value = values.pop(o.dest)
        source = ctx.get_parameter_source(o.dest)
        if source is None or source.name in ("DEFAULT", "DEFAULT_MAP"):
            continue
        if o.config is not None:                # a field of a config parameter
            fields.setdefault(o.name.split(CONFIG_SEP)[0], {})[o.field] = value
            continue
        given[o.name] = value
    for o in options:
        name = o.name.split(CONFIG_SEP)[0]
        if o.config is not None and name in fields and name not in given:
            given[name] = o.config(**fields[name])
    if isinstance(given.get("scheme"), str) and ":" in given["scheme"]:
        given["scheme"] = _shards(given["scheme"])
    return given


def _model_params(cls: type, given: dict[str, Any], values: dict[str, Any]
                  ) -> tuple[type, dict[str, Any]]:
    """(the model class, its keywords) of one command line: ``cli_defaults`` (those the
    class takes), the ``--model`` variant's keywords, the options given, then what
    ``--jobs`` and ``--scheduler`` / ``--shards`` set (popped from ``values``)."""
    from topiclink.cli.common import dask_params
    from topiclink.cli.errors import check, fail
    from topiclink.execution import Shards, resolve_n_jobs

    target, base = cls, {}
    name = values.pop("model", None)
    if name is not None:
        variants = _variants(cls)
        if name not in variants:
            raise fail(f"unknown --model {name!r}; models of this data: "
                       f"{', '.join(variants)} (see `topiclink models`)")
        target, base = variants[name]
    accepted = set(target._get_param_names())
    derived = {k: v for k, v in cli_defaults(cls).items() if callable(v)}
    params = {k: v for k, v in cli_defaults(cls).items()
              if k in accepted and not callable(v)}
    params.update(base)
    params.update(given)
    jobs = values.pop("jobs", None)
    scheduler, shards = values.pop("scheduler", None), values.pop("shards", 2)
    in_process, on_dask = _schemes(cls)
    if jobs is not None:
        check(jobs == -1 or jobs >= 1, f"--jobs must be -1 or >= 1, got {jobs}")
        threads = resolve_n_jobs(jobs)
        if threads > 1 and in_process is not None:   # a --scheme given runs on them
            if "scheme" not in given:
                params["scheme"] = Shards(in_process, threads)
            params["executor"] = threads
    if on_dask is not None:
        on_cluster = dask_params(scheduler, shards, on_dask)
        if on_cluster:
            params.pop("executor", None)
            params.update(on_cluster)
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise fail(f"{target.__name__} has no parameter {unknown[0]!r}; its "
                   f"parameters: {', '.join(sorted(accepted))}")
    if derived:
        full = {**{k: p.default for k, p in inspect.signature(target).parameters.items()},
                **params}
        for key, rule in derived.items():
            if key in accepted and key not in given and key not in base:
                params[key] = rule(full)
    return target, params


def _shards(text: str) -> Any:
    """``--scheme NAME:S`` -> ``Shards(NAME, n_shards=S)`` (the count changes the chain)."""
    from topiclink.cli.errors import fail
    from topiclink.execution import Shards

    name, _, count = text.partition(":")
    try:
        n_shards = int(count)
    except ValueError:
        raise fail(f"--scheme {text!r}: the shard count after ':' must be an integer, "
                   "e.g. adlda:4") from None
    return Shards(name.strip(), n_shards=n_shards)
