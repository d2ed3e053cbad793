"""The ``topiclink`` command line (typer), thin over the Python API.

The root app and the console-script entry point :func:`main`; the commands live in one
module per group (:mod:`~topiclink.cli.fit`, :mod:`~topiclink.cli.experiment`,
:mod:`~topiclink.cli.evaluate`, :mod:`~topiclink.cli.suggest`, :mod:`~topiclink.cli.info`,
:mod:`~topiclink.cli.report`, :mod:`~topiclink.cli.datasets`, :mod:`~topiclink.cli.demo`)
over the shared options and
the fit-and-report scaffold of :mod:`~topiclink.cli.common`, the one-line errors of
:mod:`~topiclink.cli.errors`, the short plain-text help pages of :mod:`~topiclink.cli.help`
(every command is a :class:`~topiclink.cli.help.HelpCommand`) and the listing read without
importing the models, :mod:`~topiclink.cli.catalog`.
"""

from __future__ import annotations

import warnings
from typing import Annotated

import typer

from topiclink._version import __version__
from topiclink.cli import (
    datasets,
    demo,
    errors,
    evaluate,
    experiment,
    fit,
    info,
    report,
    search_k,
    select_kg,
    suggest,
)
from topiclink.cli.errors import CheckedGroup
from topiclink.cli.help import HelpCommand

# rich_markup_mode=None: the plain help layout (typer's rich one shows every flag as
# taking a "<bool>" value).  CheckedGroup turns whatever a command raises into one
# ``error: ...`` line (``--debug`` shows the traceback instead).
app = typer.Typer(
    name="topiclink",
    help="Bayesian topic models of linked data: fit, inspect and evaluate from the shell. "
         "Errors are one line `error: ...` (exit 1; 2 for a bad option; 130 when "
         "interrupted); --debug shows the traceback instead.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=CheckedGroup,
)
app.add_typer(fit.app, name="fit")
app.add_typer(experiment.app, name="experiment")
for _name, _command in (("evaluate", evaluate.evaluate_cmd), ("suggest", suggest.suggest_cmd),
                       ("info", info.info_cmd), ("report", report.report_cmd),
                       ("models", info.models_cmd), ("datasets", datasets.datasets_cmd),
                       ("demo", demo.demo_cmd), ("search-k", search_k.search_k_cmd),
                       ("select-kg", select_kg.select_kg_cmd)):
    app.command(_name, cls=HelpCommand)(_command)


@app.callback(invoke_without_command=True)
def _main(ctx: typer.Context,
          version: Annotated[bool, typer.Option("--version", help="Print the version.")]
          = False,
          debug: Annotated[bool, typer.Option(
              "--debug", help="Show the traceback of an error instead of one line.")]
          = False) -> None:
    errors.DEBUG = debug
    if not debug:   # warnings as one line in the command line's words, for this command
        shown = warnings.showwarning
        warnings.showwarning = errors.show_warning
        ctx.call_on_close(lambda: setattr(warnings, "showwarning", shown))
    if version:
        typer.echo(f"topiclink {__version__}")
        raise typer.Exit()


def main() -> None:  # console-script entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
