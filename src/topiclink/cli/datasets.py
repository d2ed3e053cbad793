"""``topiclink datasets``: what can be loaded, with counts and where it was found."""

from __future__ import annotations

import typer

from topiclink.cli.common import DataDirOpt, check_input_paths
from topiclink.cli.errors import reported_errors

__all__ = ["datasets_cmd"]


def datasets_cmd(data: DataDirOpt = None) -> None:
    """List the datasets topiclink can load, their counts and where they were found."""
    from topiclink.datasets import list_datasets

    check_input_paths(data)
    with reported_errors():
        table = list_datasets(data_dir=data)
    shown = table.astype(object).where(table.notna(), "")
    typer.echo(shown.to_string(index=False))
