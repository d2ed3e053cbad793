"""``topiclink fit NAME`` generated from the estimator registry.

Every registered estimator without a hand-written ``fit`` command (``fit lda``, ``fit
rtm``, ``fit lmv``, ``fit slda``, ``fit bpbfm``) gets one, built when it is listed or
called: its constructor's parameters become options, their help comes from the class
docstring's Parameters section (or the glossary, :mod:`topiclink.parameters`), their
type from the class's ``_parameter_constraints`` table, and the body is the scaffold of
``fit model NAME`` (data options, ``--documents``, ``--holdout``, ``--out``,
checkpoints).  A class names its command with ``cli_name`` (default: its name in
kebab case, e.g. ``lda-regression``) and may declare extra flags per parameter with
``cli_flags`` (e.g. ``{"n_topics": ("--topics", "-k")}``); a new estimator therefore
reaches the command line by registering itself, touching nothing here.

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
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["command_name", "estimator_options", "estimator_command", "parameter_help",
           "EstimatorOption"]

#: parameters that are never options of a generated command
SKIPPED = frozenset({"random_state", "verbose", "callbacks", "executor", "init_topics"})

#: flags every generated command gives these parameters besides ``--name`` (the flags
#: of the hand-written commands)
COMMON_FLAGS: dict[str, tuple[str, ...]] = {"n_topics": ("--topics", "-k"),
                                            "max_iter": ("--iterations", "-n")}

#: flags taken by the scaffold's own options (data, output, ``--documents``)
RESERVED = frozenset({
    "--dataset", "-d", "--data", "--input", "-i", "--vocab", "--seed", "--param", "-p",
    "--holdout", "--out", "-o", "--force", "-f", "--checkpoint", "--checkpoint-every",
    "--verbose", "-v", "--quiet", "-q", "--help"})


def command_name(cls: type) -> str:
    """The command of ``cls``: its ``cli_name`` or its class name in kebab case."""
    name = getattr(cls, "cli_name", None)
    if name:
        return str(name)
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-",
                  cls.__name__).lower()


def parameter_help(cls: type) -> dict[str, str]:
    """First sentence of each parameter's description in the numpydoc ``Parameters``
    section of ``cls``'s docstring (``a, b : type`` lines give both names)."""
    doc = inspect.cleandoc(cls.__doc__ or "")
    match = re.search(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc,
                      flags=re.M | re.S)
    if match is None:
        return {}
    helps: dict[str, str] = {}
    names: list[str] = []
    text: list[str] = []

    def flush() -> None:
        sentence = re.split(r"(?<=[a-z0-9)`'][.])\s", " ".join(text).strip(), maxsplit=1)[0]
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
                 help: str) -> None:  # noqa: A002 - typer's word
        self.name, self.flags, self.kind = name, flags, kind
        self.default, self.help = default, help

    @property
    def dest(self) -> str:
        """The command function's keyword (prefixed: never a scaffold option's name)."""
        return f"param_{self.name}"

    def annotation(self) -> Any:
        return Annotated[self.kind, typer.Option(*self.flags, help=self.help)]


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


def estimator_options(cls: type) -> tuple[list[EstimatorOption], list[str]]:
    """(the options of ``cls``'s command, the parameters left to ``--param``)."""
    from topiclink.parameters import GLOSSARY

    constraints: Mapping[str, list[Any]] = getattr(cls, "_parameter_constraints", {})
    declared: Mapping[str, tuple[str, ...]] = getattr(cls, "cli_flags", {}) or {}
    helps = parameter_help(cls)
    taken = set(RESERVED)
    options: list[EstimatorOption] = []
    left: list[str] = []
    for p in inspect.signature(cls).parameters.values():
        if p.name in SKIPPED or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        kind = _kind(list(constraints.get(p.name, [])), p.default)
        long = "--" + p.name.replace("_", "-")
        extra = tuple(declared.get(p.name, COMMON_FLAGS.get(p.name, ())))
        if kind is bool:
            long = f"{long}/--no-{p.name.replace('_', '-')}"
        flags = tuple(f for f in (long, *extra) if f.split("/")[0] not in taken)
        if kind is None or not flags or not flags[0].startswith(long.split("/")[0]):
            left.append(p.name)
            continue
        taken.update(f.split("/")[0] for f in flags)
        entry = GLOSSARY.get(p.name)
        text = helps.get(p.name) or (entry.doc if entry is not None else "")
        if p.name == "scheme":
            text += " A sharded scheme takes its shard count as NAME:S (e.g. adlda:4)."
        options.append(EstimatorOption(p.name, flags, kind, p.default, text))
    return options, left


def estimator_command(cls: type, run: Callable[..., None]) -> Callable[..., None]:
    """The typer command function of ``cls``: its options (:func:`estimator_options`)
    and the scaffold's, with ``run(cls, params, **scaffold)`` as its body; ``params``
    holds only the options given a value other than the constructor's default."""
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

    options, left = estimator_options(cls)
    holdout = Annotated[float, typer.Option(
        help="Fraction of the documents (with their links and labels) kept out of "
             "training; their held-out metrics are printed (0: train on everything).")]
    out = Annotated[Path | None, typer.Option(
        "--out", "-o", help="Model file to write (.npz is added when missing); without "
        "--out the model is fitted and reported but not saved. An existing file is "
        "refused unless --force.", show_default=False)]
    param = Annotated[list[str] | None, typer.Option(
        "--param", "-p", help="Another constructor parameter as key=value (repeatable; "
        "JSON values)" + (f": {', '.join(left)}" if left else "") + ".")]
    scaffold: list[tuple[str, Any, Any]] = [
        ("dataset", DatasetOpt, None), ("data", DataDirOpt, None),
        ("input_file", InputOpt, None), ("vocab", VocabOpt, None),
        ("seed", SeedOpt, 0), ("param", param, None), ("holdout", holdout, 0.0),
        ("out", out, None), ("force", ForceOpt, False), ("checkpoint", CheckpointOpt, None),
        ("checkpoint_every", CheckpointEveryOpt, "5min"), ("verbose", VerboseOpt, True)]

    def body(**values: Any) -> None:
        params = {o.name: values.pop(o.dest) for o in options}
        if isinstance(params.get("scheme"), str) and ":" in params["scheme"]:
            params["scheme"] = _shards(params["scheme"])
        params = {k: v for k, v in params.items()
                  if v is not None or defaults[k] is not None}
        params = {k: v for k, v in params.items() if not _same(v, defaults[k])}
        run(cls, params, **values)

    defaults = {o.name: o.default for o in options}
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter(o.dest, keyword, default=o.default,
                                annotation=o.annotation()) for o in options]
    params += [inspect.Parameter(name, keyword, default=default, annotation=annotation)
               for name, annotation, default in scaffold]
    params.append(inspect.Parameter("source", keyword, default=None))
    body.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    body.__annotations__ = {p.name: p.annotation for p in params
                            if p.annotation is not inspect.Parameter.empty}
    body.__name__ = body.__qualname__ = "fit_" + command_name(cls).replace("-", "_")
    summary = (inspect.getdoc(cls) or cls.__name__).split("\n\n")[0].replace("\n", " ")
    body.__doc__ = (f"Fit {cls.__name__}: {summary} Data from --dataset, --data, --input "
                    "or your own --documents; the model is written to --out.")
    return document_options(body)


def _shards(text: str) -> Any:
    """``--scheme NAME:S`` -> ``Shards(NAME, n_shards=S)`` (the count changes the chain)."""
    from topiclink.cli.common import fail
    from topiclink.execution import Shards

    name, _, count = text.partition(":")
    try:
        n_shards = int(count)
    except ValueError:
        raise fail(f"--scheme {text!r}: the shard count after ':' must be an integer, "
                   "e.g. adlda:4") from None
    return Shards(name.strip(), n_shards=n_shards)


def _same(value: Any, default: Any) -> bool:
    return type(value) is type(default) and value == default
