"""``topiclink experiment ...``: the papers' evaluation protocols (CSV tables and figures).

One command per registered protocol (:mod:`topiclink.experiments.registry`), generated
when it is asked for: its options come from the fields of the protocol's options
dataclass (type, default, flags, help; the shared ones from
:mod:`topiclink.cli.common`), ``--checkpoint-dir`` / ``--checkpoint-every`` are added
(:func:`checkpointable`), so is ``--plan`` (the cells listed, the data read and checked,
nothing fitted), and the body is the one runner,
:func:`~topiclink.experiments.registry.run_protocol`, with :class:`CLISession` (this
command line's checks, one-line errors and data loading).  Nothing here is specific to a
protocol; the protocols come from installed distributions (entry points, e.g. the
repository's ``reproductions/``), whose modules are imported only when a command is run
or listed, so ``topiclink --help`` stays fast; without any, the command says so in one
line.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from topiclink.cli.common import (
    CheckpointDirOpt,
    DataDirOpt,
    DatasetOpt,
    ForceOpt,
    GridCheckpointEveryOpt,
    OnlyFoldsOpt,
    VerboseOpt,
    WorkersOpt,
    check_input_paths,
    check_model_size,
    check_out_dir,
    check_seed,
    echo_table,
    float_list,
    int_list,
    load_data,
    setup_logging,
)
from topiclink.cli.documents import document_options
from topiclink.cli.errors import check, fail, path_value, reported_errors
from topiclink.cli.help import HelpCommand, plain_text

if TYPE_CHECKING:
    from topiclink.experiments.registry import OptionInfo, ProtocolSpec

__all__ = ["app", "CLISession", "checkpointable", "protocol_command"]

#: the command-line declarations of the options protocols share
#: (:data:`topiclink.experiments.registry.SHARED_OPTIONS`)
SHARED: dict[str, Any] = {"dataset": DatasetOpt, "data": DataDirOpt, "workers": WorkersOpt,
                          "only_folds": OnlyFoldsOpt, "force": ForceOpt,
                          "verbose": VerboseOpt}

#: options that change neither a cell's row nor which cells there are
_NOT_SETTINGS = frozenset({"verbose", "workers", "force", "out", "n_jobs", "plan"})

PlanOpt = Annotated[bool, typer.Option(
    "--plan", show_default=False,
    help="Do everything a run does before fitting (read and check the data, work out the "
    "grid), print one line per cell and which are finished in --checkpoint-dir or --out, "
    "and exit without fitting or writing results.")]


def checkpointable(command: Callable[..., None]) -> Callable[..., None]:
    """Give an experiment command ``--checkpoint-dir`` / ``--checkpoint-every``: its grid
    skips the cells a previous run of the same command finished and its fits resume
    from their checkpoints (:mod:`topiclink.experiments.grid_checkpoint`); the output
    folder's earlier (partial) results are then replaced without ``--force``.  The
    folder is refused when it belongs to a run with other settings (the command's name
    and its options but :data:`_NOT_SETTINGS`)."""

    @functools.wraps(command)
    def wrapper(*args: Any, checkpoint_dir: Path | None = None,
                checkpoint_every: str = "5min", **kwargs: Any) -> None:
        if checkpoint_dir is None:
            return command(*args, **kwargs)
        planning = bool(kwargs.get("plan"))
        from topiclink.estimators.checkpoint import checkpoint_folder, parse_every
        from topiclink.experiments.grid_checkpoint import grid_checkpoint

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
                                                    checkpoint_every, readonly=planning))
                if not planning:
                    stack.enter_context(checkpoint_folder(checkpoint_dir / "fits",
                                                          checkpoint_every))
            if resuming:
                typer.echo(f"{'a run resumes' if planning else 'resuming'} from "
                           f"{checkpoint_dir}")
            return command(*bound.args, **bound.kwargs)

    signature = inspect.signature(command, eval_str=True)
    params = list(signature.parameters.values())
    extra = [inspect.Parameter("checkpoint_dir", inspect.Parameter.KEYWORD_ONLY,
                               default=None, annotation=CheckpointDirOpt),
             inspect.Parameter("checkpoint_every", inspect.Parameter.KEYWORD_ONLY,
                               default="5min", annotation=GridCheckpointEveryOpt)]
    position = next((i for i, p in enumerate(params) if p.name == "verbose"), len(params))
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*params[:position], *extra, *params[position:]])
    wrapper.__annotations__ = {**{p.name: p.annotation for p in params},
                               "checkpoint_dir": CheckpointDirOpt,
                               "checkpoint_every": GridCheckpointEveryOpt}
    return wrapper


class CLISession:
    """A protocol's :class:`~topiclink.experiments.registry.Session` on this command
    line: ``error: ...`` on one line (exit 1) for a refused option or bad input, lines
    on stdout, data sets read by :func:`~topiclink.cli.common.load_data`."""

    def echo(self, text: str = "") -> None:
        typer.echo(text)

    def echo_table(self, table: Any) -> None:
        echo_table(table)

    def fail(self, message: str) -> BaseException:
        return fail(message)

    def check(self, condition: bool, message: str) -> None:
        check(condition, message)

    def errors(self) -> contextlib.AbstractContextManager[None]:
        return reported_errors()

    def int_list(self, text: str, option: str, minimum: int | None = None,
                 maximum: int | None = None) -> list[int]:
        return int_list(text, option, minimum, maximum)

    def float_list(self, text: str, option: str, positive: bool = False) -> list[float]:
        return float_list(text, option, positive=positive)

    def names(self, text: str, known: Sequence[str]) -> list[str]:
        names = [m.strip() for m in text.split(",") if m.strip()]
        if not names:
            raise fail(f"--models needs at least one model; known: {', '.join(known)}")
        unknown = [m for m in names if m not in known]
        if unknown:
            raise fail(f"unknown model {unknown[0]!r}; known: {', '.join(known)}")
        return names

    def check_model_size(self, n_topics: int | None, n_docs: int = 1, n_words: int = 1,
                         what: str = "") -> None:
        check_model_size(n_topics, n_docs, n_words, what=what)

    def check_input_paths(self, data: Path | None) -> None:
        check_input_paths(data)

    def check_out(self, out: Path, prefix: str, force: bool) -> None:
        check_out_dir(out)
        if out.is_dir() and not force:
            earlier = sorted(p.name for p in out.glob(f"{prefix}_*") if p.is_file())
            if earlier:
                raise fail(f"{out} already holds results ({', '.join(earlier[:3])}"
                           f"{', ...' if len(earlier) > 3 else ''}); give --force to "
                           "replace them or another --out")

    def load_data(self, dataset: str | None, data: Path | None, *,
                  default: str | None = None) -> Any:
        return load_data(dataset, data, default=default)

    def setup_logging(self, verbose: bool) -> None:
        setup_logging(verbose)


def _annotation(info: OptionInfo, kind: Any, name: str = "") -> Any:
    """The typer declaration of a field ``name`` of an options dataclass (its type
    ``kind``): a file or folder (``Path``) is parsed by :func:`~topiclink.cli.errors.path_value`
    (an empty name refused), a ``seed`` checked by :func:`~topiclink.cli.common.check_seed`
    (an integer >= 0), as in every other command."""
    if info.shared is not None:
        return SHARED[info.shared]
    settings: dict[str, Any] = {}
    if info.help is not None:
        settings["help"] = plain_text(info.help)
    if not info.show_default:
        settings["show_default"] = False
    if Path in (kind, *typing.get_args(kind)):
        settings["parser"] = path_value
    if name == "seed" or name.endswith("_seed"):
        settings["callback"] = check_seed
        settings.setdefault("help", "Random seed (an integer >= 0).")
    return Annotated[kind, typer.Option(*info.flags, **settings)]


def protocol_command(spec: ProtocolSpec) -> Callable[..., None]:
    """The typer command function of a protocol: the fields of ``spec.options`` as its
    options (the ``--documents`` options where the dataclass has a
    :func:`~topiclink.experiments.registry.documents` field, and the checkpoint
    options, and ``--plan``), and :func:`~topiclink.experiments.registry.run_protocol` as
    its body."""
    from topiclink.experiments.registry import option_fields, run_protocol

    if spec.options is None:
        raise ValueError(f"protocol {spec.name!r} has no options, so no command")
    options_class = spec.options
    fields = option_fields(options_class)

    def body(plan: bool = False, **values: Any) -> None:
        run_protocol(spec, options_class(**values), CLISession(), plan=plan)

    params, annotations = [], {}
    for field, info, kind in fields:
        if info.documents:
            params.append(inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY,
                                            default=None))
            continue
        annotation = _annotation(info, kind, field.name)
        params.append(inspect.Parameter(field.name, inspect.Parameter.KEYWORD_ONLY,
                                        default=field.default, annotation=annotation))
        annotations[field.name] = annotation
    position = next((i for i, p in enumerate(params) if p.name == "verbose"), len(params))
    params.insert(position, inspect.Parameter("plan", inspect.Parameter.KEYWORD_ONLY,
                                              default=False, annotation=PlanOpt))
    annotations["plan"] = PlanOpt
    body.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    body.__annotations__ = annotations
    body.__name__ = body.__qualname__ = str(spec.checkpoint_name)
    body.__doc__ = plain_text(spec.help or "")
    command: Callable[..., None] = body
    if any(info.documents for _, info, _ in fields):
        command = document_options(command)   # the options of DocumentSource -> source=
    if spec.checkpoint:
        command = checkpointable(command)
    return command


class ProtocolGroup(TyperGroup):
    """``topiclink experiment``: its commands are the registered protocols, built when
    listed or called (the protocol modules are imported then, not at start-up)."""

    def list_commands(self, ctx: Any) -> list[str]:
        from topiclink.experiments.registry import commands

        return sorted({*super().list_commands(ctx), *(spec.name for spec in commands())})

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands, or the one line saying that no protocol is installed."""
        if self.list_commands(ctx):
            super().format_commands(ctx, formatter)
            return
        from topiclink.experiments.registry import NOT_INSTALLED

        with formatter.section("Commands"):
            formatter.write_text(NOT_INSTALLED)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        known = super().get_command(ctx, cmd_name)
        if known is not None:
            return known
        from topiclink.experiments.registry import NOT_INSTALLED, get_protocol

        try:
            spec = get_protocol(cmd_name)
        except ValueError as exc:
            if str(exc) == NOT_INSTALLED:
                raise fail(NOT_INSTALLED) from None
            return None
        if spec.options is None:
            return None
        single = typer.Typer(rich_markup_mode=None, add_completion=False,
                             pretty_exceptions_enable=False)
        single.command(spec.name, cls=HelpCommand)(protocol_command(spec))
        return typer.main.get_command(single)


app = typer.Typer(help="Run a paper's evaluation protocol; writes CSV and figures.",
                  no_args_is_help=True, rich_markup_mode=None, cls=ProtocolGroup)

