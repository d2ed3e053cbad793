"""The registry of the papers' protocols: one :class:`ProtocolSpec` per protocol, run by
one runner (:func:`run_protocol`); ``topiclink experiment NAME`` is generated from it.

A protocol module declares, next to its ``run_*`` function:

- an **options dataclass**: one field per command-line option, in ``--help`` order, with
  its type, default and help (:func:`option`); the options every protocol shares
  (``--dataset``, ``--data``, ``--workers``, ``--only-folds``, ``--force``,
  ``--verbose``) by :func:`shared`, the ``--documents`` options by :func:`documents`;
- four steps: ``check(options, session) -> plan`` (every option checked, before any data
  is read), ``load(plan, session, data) -> data`` (read and check the data; ``data`` is
  what a ``choose`` step already read, else None), ``run(plan, data, session) -> result``
  (the table, or an object holding the tables) and ``report(plan, data, result,
  session)`` (the CSV, summary, findings and figures written and printed);
- one call, ``register_protocol(ProtocolSpec(...))``, at import.

``--plan`` (:func:`run_protocol` with ``plan=True``) runs ``choose``, ``check`` and
``load``, then ``run`` inside :func:`~topiclink.experiments.runner.planning`, where
:func:`~topiclink.experiments.runner.run_grid` stops with the grid's cells before any
fit; the cells are printed and ``report`` is not run.  A protocol whose ``run`` fits
outside ``run_grid`` gives its spec a ``cells`` step instead, ``(plan, data) -> cells``.

The command line (:mod:`topiclink.cli.experiment`) finds the spec by name, builds the
command's options from the dataclass's fields and runs :func:`run_protocol` with a
:class:`Session`: the command line's checks, messages and data loading, so that the
protocols never import the CLI.  A command that runs one of several protocols (``lmv``:
the Cora protocol or, split by time, the hep-th one; ``ktm``: State of the Union or a
graph) gives its spec a ``choose`` step naming the spec to run; a spec without options
of its own (``options=None``) has no command and is reached only that way.

Discovery: a distribution provides protocols through entry points of the group
:data:`ENTRY_POINTS` (``NAME = "package.module"``: the module that registers protocol
``NAME``; the paper reproductions of the repository's ``reproductions/`` are one).
:func:`get_protocol` imports the module of its name only, :func:`protocols` every one; a
protocol may also register by its module being imported (a plug-in, the worked example
of ``tests/examples``).  The library itself provides none: without such a distribution
``topiclink experiment`` says so (:data:`NOT_INSTALLED`).
"""

from __future__ import annotations

import dataclasses
import importlib
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

__all__ = ["Choice", "ENTRY_POINTS", "NOT_INSTALLED", "OptionInfo", "ProtocolSpec", "Session",
           "commands", "documents", "get_protocol", "installed",
           "option", "option_fields", "protocols", "register_protocol", "run_protocol",
           "shared", "SHARED_OPTIONS", "unregister_protocol"]

#: the options every protocol may share; the command line owns their flags and help
SHARED_OPTIONS = ("dataset", "data", "workers", "only_folds", "force", "verbose")

_META = "topiclink_option"

#: the entry-point group of the distributions that provide protocols
ENTRY_POINTS = "topiclink.experiments"

#: the one line said when no protocol is installed or registered
NOT_INSTALLED = ("no paper protocols are installed: pip install -e ./reproductions (from "
                 "topiclink's repository) provides them")


@dataclass(frozen=True)
class OptionInfo:
    """How a field of an options dataclass appears on the command line."""

    #: the flags (default: ``--`` and the field name with ``-`` for ``_``)
    flags: tuple[str, ...] = ()
    help: str | None = None
    show_default: bool = True
    #: one of :data:`SHARED_OPTIONS`: the command line's own declaration of it
    shared: str | None = None
    #: the ``--documents FILE [--edges FILE]`` options, given to the field as one
    #: ``DocumentSource`` (None without ``--documents``)
    documents: bool = False


def option(default: Any, *flags: str, help: str | None = None,
           show_default: bool = True) -> Any:
    """A field of an options dataclass: a command-line option with this default,
    ``flags`` (e.g. ``"--iterations", "-n"``; default from the field's name) and help."""
    return dataclasses.field(default=default, metadata={_META: OptionInfo(
        tuple(flags), help, show_default)})


def shared(name: str, default: Any = None) -> Any:
    """A field for the shared option ``name`` (one of :data:`SHARED_OPTIONS`)."""
    if name not in SHARED_OPTIONS:
        raise ValueError(f"unknown shared option {name!r}; known: {', '.join(SHARED_OPTIONS)}")
    return dataclasses.field(default=default, metadata={_META: OptionInfo(shared=name)})


def documents() -> Any:
    """The field ``source: Any``: the ``--documents`` options (the user's own documents
    and citations), given to the protocol as one ``DocumentSource``
    (:mod:`topiclink.cli.documents`), or None without ``--documents``."""
    return dataclasses.field(default=None, metadata={_META: OptionInfo(documents=True)})


def option_fields(options: type) -> list[tuple[dataclasses.Field[Any], OptionInfo, Any]]:
    """(field, how it appears, its type) of each field of an options dataclass, in
    order (the types resolved: annotate the documents field ``Any``)."""
    if not dataclasses.is_dataclass(options):
        raise TypeError(f"{options!r} is not a dataclass of options")
    hints = typing.get_type_hints(options)
    return [(f, f.metadata.get(_META, OptionInfo()), hints[f.name])
            for f in dataclasses.fields(options)]


class Session(Protocol):
    """What a protocol's steps may ask of the program running them (the command line:
    one-line ``error: ...`` messages, exit 1; printing; reading data sets)."""

    def echo(self, text: str = "") -> None:
        """Print a line."""

    def echo_table(self, table: Any) -> None:
        """Print a DataFrame compactly."""

    def fail(self, message: str) -> BaseException:
        """Report ``message`` as the run's error; returns the exception to raise."""

    def check(self, condition: bool, message: str) -> None:
        """Refuse an option value (:meth:`fail`) unless ``condition``."""

    def errors(self) -> AbstractContextManager[None]:
        """Bad input inside the block (ValueError, OSError, ...) fails with its message."""

    def int_list(self, text: str, option: str, minimum: int | None = None,
                 maximum: int | None = None) -> list[int]:
        """A non-empty comma-separated list of integers in [minimum, maximum]."""

    def float_list(self, text: str, option: str, positive: bool = False) -> list[float]:
        """A non-empty comma-separated list of finite numbers (> 0 when ``positive``)."""

    def names(self, text: str, known: Sequence[str]) -> list[str]:
        """The comma-separated model names of ``--models``, each one of ``known``."""

    def check_model_size(self, n_topics: int | None, n_docs: int = 1, n_words: int = 1,
                         what: str = "") -> None:
        """Refuse a number of topics whose counts exceed the machine's memory."""

    def check_input_paths(self, data: Path | None) -> None:
        """The data folder the user gave exists."""

    def check_out(self, out: Path, prefix: str, force: bool) -> None:
        """The output folder is writable and holds no ``prefix_*`` results (unless
        ``force``)."""

    def load_data(self, dataset: str | None, data: Path | None, *,
                  default: str | None = None) -> Any:
        """The :class:`~topiclink.datasets.base.Dataset` of ``--dataset`` / ``--data``
        (``default`` without them)."""

    def setup_logging(self, verbose: bool) -> None:
        """Progress and info logging on (``verbose``) or off."""


@dataclass(frozen=True)
class Choice:
    """What a ``choose`` step picked: the protocol to run and the data it already read
    (None: the protocol's ``load`` reads it)."""

    protocol: str
    data: Any = None


@dataclass(frozen=True)
class ProtocolSpec:
    """One paper protocol: its options and the four steps :func:`run_protocol` runs.

    Parameters
    ----------
    name : str
        The command, ``topiclink experiment NAME``.
    options : type or None
        The options dataclass (:func:`option`, :func:`shared`, :func:`documents`);
        None: no command of its own (another spec's ``choose`` reaches it with that
        command's options).
    check : callable
        ``(options, session) -> plan``: every option checked (one-line errors), the
        output folder too, before any data is read.
    load : callable
        ``(plan, session, data) -> data``: the data read (``data``, when not None, was
        read by ``choose``), checked and prepared.
    run : callable
        ``(plan, data, session) -> result``: the grid run (rows printed as they come);
        a DataFrame, or an object holding the protocol's tables.
    report : callable
        ``(plan, data, result, session)``: the CSV tables, summary, findings and
        figures (drawn from the returned tables) written, and printed.
    help : str
        The command's help (its first sentence is the short help).
    choose : callable, optional
        ``(options, session) -> Choice or None``: the spec that runs these options
        (None: this one); may check the options that decide it, and read the data when
        the choice depends on it.
    checkpoint : bool
        The command takes ``--checkpoint-dir`` / ``--checkpoint-every`` (its grid
        resumes; :mod:`topiclink.experiments.grid_checkpoint`).
    checkpoint_name : str, optional
        The name a checkpoint folder records (default ``experiment_<name>``, ``-`` as
        ``_``): a folder is refused by a run of another command.
    cells : callable, optional
        ``(plan, data) -> list of dict``: the coordinates of each fit ``run`` would make,
        for ``--plan``, where ``run`` does not go through
        :func:`~topiclink.experiments.runner.run_grid` (None: ``run`` is planned by
        ``run_grid``).
    """

    name: str
    options: type | None
    check: Callable[[Any, Session], Any]
    load: Callable[[Any, Session, Any], Any]
    run: Callable[[Any, Any, Session], Any]
    report: Callable[[Any, Any, Any, Session], None]
    help: str = ""
    choose: Callable[[Any, Session], Choice | None] | None = None
    checkpoint: bool = True
    checkpoint_name: str | None = None
    cells: Callable[[Any, Any], Sequence[Mapping[str, Any]]] | None = None

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip() or " " in self.name:
            raise ValueError(f"a protocol name is one word, got {self.name!r}")
        if self.options is not None:
            for f, info, _ in option_fields(self.options):  # field types resolve
                if info.documents and f.name != "source":
                    raise ValueError(f"{self.options.__name__}.{f.name}: the documents "
                                     "field is named source")
        if self.checkpoint_name is None:
            object.__setattr__(self, "checkpoint_name",
                               f"experiment_{self.name.replace('-', '_')}")


_REGISTRY: dict[str, ProtocolSpec] = {}


def register_protocol(spec: ProtocolSpec, replace: bool = False) -> ProtocolSpec:
    """Add ``spec`` to the registry (at import of its module); a second spec of the same
    name from another place is refused unless ``replace``."""
    known = _REGISTRY.get(spec.name)
    if known is not None and not replace and known != spec:
        same_place = (getattr(known.run, "__module__", None) ==
                      getattr(spec.run, "__module__", None))
        if not same_place:
            raise ValueError(f"protocol {spec.name!r} is already registered (from "
                             f"{known.run.__module__}); replace=True to replace it")
    _REGISTRY[spec.name] = spec
    return spec


def unregister_protocol(name: str) -> ProtocolSpec | None:
    """Remove a protocol (tests)."""
    return _REGISTRY.pop(name, None)


def installed() -> dict[str, str]:
    """The protocols the installed distributions provide: name -> module (their
    :data:`ENTRY_POINTS` entry points; nothing is imported)."""
    from importlib.metadata import entry_points

    return {ep.name: ep.module for ep in entry_points(group=ENTRY_POINTS)}


def _discover() -> None:
    """Import the module of every installed protocol (their specs register)."""
    for module in dict.fromkeys(installed().values()):
        importlib.import_module(module)


def get_protocol(name: str) -> ProtocolSpec:
    """The spec registered as ``name`` (the module its entry point names imported when
    needed)."""
    if name not in _REGISTRY:
        module = installed().get(name)
        if module is not None:
            importlib.import_module(module)
    if name not in _REGISTRY:
        _discover()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = protocols()
        if not known:
            raise ValueError(NOT_INSTALLED) from None
        raise ValueError(f"unknown protocol {name!r}; known: {', '.join(known)}") from None


def protocols() -> dict[str, ProtocolSpec]:
    """Every registered protocol by name (the installed ones imported first)."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def commands() -> Iterator[ProtocolSpec]:
    """The protocols that have a command of their own."""
    return (spec for spec in protocols().values() if spec.options is not None)


def run_protocol(spec: ProtocolSpec | str, options: Any, session: Session,
                 plan: bool = False) -> Any:
    """Run a protocol: ``choose`` (which spec), logging, ``check``, ``load``, ``run``,
    ``report``; returns ``run``'s result.  Bad input in the last three fails through
    ``session.errors()`` with its message.

    ``plan``: everything before the first fit (``choose``, ``check``, ``load``, the grid
    worked out), then one line per cell and a count line printed; nothing is fitted or
    written (an output folder that ``load`` created empty is removed); returns the
    :class:`~topiclink.experiments.runner.PlannedCell` list.
    """
    spec = get_protocol(spec) if isinstance(spec, str) else spec
    choice = spec.choose(options, session) if spec.choose is not None else None
    target = spec if choice is None or choice.protocol == spec.name else get_protocol(
        choice.protocol)
    if hasattr(options, "verbose"):
        session.setup_logging(bool(options.verbose))
    steps = target.check(options, session)
    out = getattr(options, "out", None)
    fresh_out = isinstance(out, Path) and not out.exists()
    with session.errors():
        try:
            data = target.load(steps, session, None if choice is None else choice.data)
            if plan:
                return _plan_protocol(target, steps, data, session)
        finally:
            if plan and fresh_out and out.is_dir() and not any(out.iterdir()):
                out.rmdir()
        result = target.run(steps, data, session)
        target.report(steps, data, result, session)
    return result


def _plan_protocol(spec: ProtocolSpec, steps: Any, data: Any, session: Session) -> list[Any]:
    """The cells of ``spec``'s run (its ``cells`` step, or its grid stopped by
    :func:`~topiclink.experiments.runner.planning`), printed."""
    from topiclink.experiments.runner import GridPlanned, PlannedCell, plan_lines, planning

    if spec.cells is not None:
        cells = [PlannedCell(dict(c)) for c in spec.cells(steps, data)]
    else:
        with planning():
            try:
                spec.run(steps, data, session)
            except GridPlanned as planned:
                cells = planned.cells
            else:
                raise RuntimeError(f"protocol {spec.name!r} ran without a grid to plan; "
                                   "its spec needs a cells step for --plan")
    for line in plan_lines(cells):
        session.echo(line)
    return cells
