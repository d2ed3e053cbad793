"""``topiclink datasets``: the data sets, their size, licence, citation and whether they are
in the data home; ``topiclink datasets fetch NAME|all`` downloads them.

The listing reads only the packaged registry of sources (``datasets/bundled/sources.json``)
and the data home's file names, with the standard library: it answers in well under a
second (the loaders and their numpy / pandas are imported only by ``--counts`` and
``fetch``).
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import typer

from topiclink.cli.errors import fail, path_value, reported_errors

__all__ = ["datasets_cmd"]

# The same rule as topiclink.datasets.home.data_home (kept here so that the listing does
# not import topiclink.datasets; tests/test_fetch_cli.py checks that they agree).
_HOME_ENV, _DEFAULT_HOME, _MIRROR_ENV = "TOPICLINK_DATA", "~/topiclink_data", \
    "TOPICLINK_DATA_MIRROR"

DataHomeOpt = Annotated[Path | None, typer.Option(
    "--data-home", parser=path_value, show_default=False,
    help="The data home: the folder of data set folders (default $TOPICLINK_DATA, else "
    "~/topiclink_data).")]


def _home(option: Path | None) -> Path:
    if option is not None:
        return option.expanduser()
    env = os.environ.get(_HOME_ENV, "").strip()
    return Path(env or _DEFAULT_HOME).expanduser()


def _registry() -> dict[str, Any]:
    text = resources.files("topiclink").joinpath("datasets", "bundled",
                                                 "sources.json").read_text("utf-8")
    return json.loads(text)


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    raise AssertionError


def _listing(home: Path) -> list[str]:
    reg = _registry()
    rows = []
    for name, d in reg["bundled"].items():
        rows.append((name, _size(d["size"]), "bundled", d))
    for name, d in reg["datasets"].items():
        files = [f for f in d["files"] if not f.get("optional")]
        there = sum((home / name / f["name"]).is_file() for f in files)
        cached = ("yes" if there == len(files) else "no" if there == 0
                  else f"{there}/{len(files)} files")
        rows.append((name, _size(sum(f["size"] for f in files)), cached, d))
    w = max(len(r[0]) for r in rows)
    lines = [f"data home: {home}" + (f"   mirror: {os.environ[_MIRROR_ENV]}"
                                     if os.environ.get(_MIRROR_ENV, "").strip() else ""),
             f"{'name':<{w}}  {'size':>9}  {'cached':<9}  description"]
    for name, size, cached, d in rows:
        lines.append(f"{name:<{w}}  {size:>9}  {cached:<9}  {d['description']}")
        lines.append(f"{'':<{w}}  licence: {d['licence']}")
        lines.append(f"{'':<{w}}  cite: {d['citation']}")
    lines.append("fetch one: topiclink datasets fetch NAME (or all); load_dataset(NAME) "
                 "fetches what is missing")
    return lines


def _fetch(names: list[str], home: Path | None, mirror: str | None, timeout: float | None,
           force: bool, all_files: bool) -> None:
    from topiclink.datasets.fetch import fetch_dataset
    from topiclink.datasets.sources import dataset_sources

    sources = dataset_sources()
    if not names:
        raise fail("datasets fetch needs a data set name or 'all' "
                   f"(one of {', '.join(sources)})", code=2)
    wanted = list(sources) if names == ["all"] else names
    unknown = [n for n in wanted if n not in sources]
    if unknown:
        raise fail(f"unknown data set {unknown[0]!r} for fetch; one of "
                   f"{', '.join(sources)} or all", code=2)
    for name in wanted:
        files = [f.name for f in sources[name].files] if all_files else None
        with reported_errors():
            folder = fetch_dataset(name, home, files=files, mirror=mirror, force=force,
                                   timeout=timeout)
        typer.echo(f"{name}: {folder}")


def datasets_cmd(
        action: Annotated[str | None, typer.Argument(
            metavar="fetch", show_default=False,
            help="Without it: list the data sets. 'fetch NAME...' or 'fetch all': "
            "download them into the data home.")] = None,
        names: Annotated[list[str] | None, typer.Argument(
            metavar="NAME|all", show_default=False,
            help="fetch: the data sets to download, or all.")] = None,
        data_home: DataHomeOpt = None,
        mirror: Annotated[str | None, typer.Option(
            "--mirror", show_default=False,
            help="fetch: base URL laid out as the data home, tried first (default "
            "$TOPICLINK_DATA_MIRROR).")] = None,
        timeout: Annotated[float | None, typer.Option(
            "--timeout", min=0.1, show_default=False,
            help="fetch: seconds to wait for a connection or data (default 30).")] = None,
        force: Annotated[bool, typer.Option(
            "--force", show_default=False, help="fetch: download again what is there.")]
        = False,
        all_files: Annotated[bool, typer.Option(
            "--all-files", show_default=False,
            help="fetch: also the optional files (20newsgroups' raw messages).")] = False,
        counts: Annotated[bool, typer.Option(
            "--counts", show_default=False,
            help="List the documents, words, links... of each data set found (loads "
            "them: seconds).")] = False) -> None:
    """List the data sets (size, licence, citation, cached or not), or fetch them."""
    if action is not None and action != "fetch":
        raise fail(f"unknown action {action!r}: use `topiclink datasets` to list, "
                   f"`topiclink datasets fetch NAME|all` to download", code=2)
    if action == "fetch":
        _fetch(list(names or []), data_home, mirror, timeout, force, all_files)
        return
    if names:
        raise fail(f"unexpected argument {names[0]!r}", code=2)
    home = _home(data_home)
    if data_home is not None and not home.is_dir():
        raise fail(f"data home not found: {home}")
    if counts:
        from topiclink.datasets import list_datasets

        with reported_errors():
            table = list_datasets(data_dir=home)
        shown = table.astype(object).where(table.notna(), "")
        typer.echo(shown.to_string(index=False))
        return
    typer.echo("\n".join(_listing(home)))
