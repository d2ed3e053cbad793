"""The command line's one-line errors: every bad input ends as ``error: ...`` (exit 1).

:func:`fail` prints the line and returns the ``typer.Exit`` to raise; :func:`check`
refuses an option value; :func:`reported_errors` turns the library's bad-input errors
into that line; :class:`CheckedGroup`, the root command group, reports whatever a
command let through the same way, unless ``--debug`` (:data:`DEBUG`) asks for the
traceback.  :func:`path_value` is the parser of every file and folder option.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

__all__ = ["DEBUG", "KNOWN_ERRORS", "WORDING", "CheckedGroup", "check", "cli_wording",
           "exception_message", "fail", "one_line", "path_value", "report_unexpected",
           "reported_errors", "show_warning"]


def path_value(value: str | Path) -> Path:
    """The parser of every file and folder option and argument of the command line: an
    empty (or blank) name is refused at once (``error: Invalid value for '--out': ...``,
    exit 2) instead of being read as ``Path("")``, the current folder; ``.`` names the
    current folder."""
    if isinstance(value, Path):
        return value
    if not str(value).strip():
        raise typer.BadParameter("an empty name is no file or folder (give a name; '.' for "
                                 "the current folder)")
    return Path(value)


def one_line(text: str) -> str:
    """``text`` on one line (its lines joined with ``; ``)."""
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def exception_message(exc: BaseException) -> str:
    """A one-line message for an exception: its text, or its type's name when empty."""
    text = one_line(str(exc)) if not isinstance(exc, KeyError) else one_line(repr(exc))
    return text or type(exc).__name__


#: the library's Python wording in its messages -> this command line's (in order; the
#: modules of the commands add theirs, e.g. ``normalize_ids=`` -> ``--id-rule``)
WORDING: list[tuple[str, str]] = [
    ("pass data_dir= (CLI: --data DIR)", "give --data DIR"),
    ("pass data_dir=", "give --data DIR"),
    ("(CLI: --data DIR)", ""),
    ("pass newer_citations='drop' to drop such citations or 'keep' to keep them as links",
     "give --newer-citations drop to drop such citations"),
    ("pass format= (one of", "give the file the extension of its format (one of"),
    ("use scheme='exact'", "use --scheme exact"),
    ("raise max_iter, continue it with fit(..., resume=True), or set a looser tol",
     "raise --iterations, or set a looser --tol"),
    ("of max_iter=", "of --iterations "),
    ("max_iter reached before the tolerance", "the iterations ran out before the tolerance"),
    # a folder of several UCI docword files, an R save file of several objects
    ("); pass name=", "); the command line reads a folder or file with one of them (in "
     "Python: name=)"),
]


def cli_wording(message: str) -> str:
    """``message`` in this command line's words: every Python spelling of
    :data:`WORDING` replaced by its option (``pass data_dir=`` -> ``give --data DIR``)."""
    for python, option in WORDING:
        message = message.replace(python, option)
    return message


def show_warning(message: Warning | str, category: type[Warning], filename: str,
                 lineno: int, file: Any = None, line: str | None = None) -> None:
    """:func:`warnings.showwarning` of the command line: ``warning: message`` on one line
    of stderr, in the command line's words, without the Python file and line a script's
    user would see (``--debug`` keeps Python's display)."""
    typer.secho(f"warning: {one_line(cli_wording(str(message)))}", err=True,
                fg=typer.colors.YELLOW)


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``error: message`` (one line, red, stderr; in the command line's words,
    :func:`cli_wording`) and return the Exit to raise."""
    typer.secho(f"error: {one_line(cli_wording(message))}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=code)


#: Set by the root command's ``--debug``: errors are raised (with their traceback)
#: instead of reported on one line.
DEBUG = False

#: The errors of bad input: reported with their own message.
KNOWN_ERRORS: tuple[type[BaseException], ...] = (ValueError, FileNotFoundError, OSError,
                                                 TypeError)


def _known_errors() -> tuple[type[BaseException], ...]:
    from sklearn.exceptions import NotFittedError

    return (*KNOWN_ERRORS, NotFittedError)


@contextlib.contextmanager
def reported_errors(*kinds: type[BaseException]) -> Iterator[None]:
    """Turn bad input (ValueError, FileNotFoundError, OSError, TypeError, NotFittedError,
    and ``kinds``) into a one-line error and exit code 1 instead of a traceback."""
    try:
        yield
    except (*_known_errors(), *kinds) as exc:
        if DEBUG:
            raise
        raise fail(exception_message(exc)) from None


def report_unexpected(exc: BaseException) -> typer.Exit:
    """The one-line report of any exception a command let through (see
    :class:`CheckedGroup`): known kinds with their message, others with their type."""
    if isinstance(exc, KeyboardInterrupt):
        return fail("interrupted", code=130)
    if isinstance(exc, MemoryError):
        return fail("out of memory" + (f": {one_line(str(exc))}" if str(exc) else "")
                    + " (try fewer topics or a smaller dataset)")
    if isinstance(exc, _known_errors()):
        return fail(exception_message(exc))
    return fail(f"{type(exc).__name__}: {exception_message(exc)} (run with --debug for the "
                "traceback)")


class CheckedGroup(TyperGroup):
    """The root command group: whatever a command raises becomes one ``error: ...`` line
    (exit 1; ``interrupted``, exit 130, on Ctrl-C; usage errors exit 2) instead of a
    traceback, unless ``--debug`` was given."""

    def invoke(self, ctx: Any) -> Any:
        from typer._click import exceptions as click_exc

        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, click_exc.NoArgsIsHelpError):
            raise
        except click_exc.UsageError as exc:
            if ctx.params.get("debug"):
                raise
            where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            raise fail(f"{exc.format_message().rstrip('.')} (see `{where} --help`)",
                       code=exc.exit_code) from None
        except click_exc.ClickException as exc:
            if ctx.params.get("debug"):
                raise
            raise fail(exc.format_message(), code=exc.exit_code) from None
        except (Exception, KeyboardInterrupt) as exc:
            if ctx.params.get("debug"):
                raise
            raise report_unexpected(exc) from None


def check(condition: bool, message: str) -> None:
    """Refuse an option value (one-line error) unless ``condition``."""
    if not condition:
        raise fail(message)
