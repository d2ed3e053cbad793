"""``topiclink info`` (a saved model) and ``topiclink models`` (the estimators)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from topiclink.cli.common import load_model_file
from topiclink.cli.errors import check, path_value, reported_errors

__all__ = ["info_cmd", "model_summary", "models_cmd", "models_table"]


def info_cmd(model_path: Annotated[Path, typer.Argument(parser=path_value,
                                                        help="A saved model file (.npz).")],
             words: Annotated[int, typer.Option(
                 help="Top words per topic; for a model of entities (BPBFM): top "
                      "entities per factor.")] = 10) -> None:
    """Describe a saved model of any class: its header, parameters and summary (top words
    per topic; top entities per factor for a model of a knowledge graph)."""
    from topiclink.persistence import read_header

    check(words >= 1, f"--words must be >= 1, got {words}")
    model = load_model_file(model_path)
    with reported_errors():
        header = read_header(model_path)
    typer.echo(f"file: {model_path}  (format {header.get('format_version')}, saved by "
               f"topiclink {header.get('library_version')})")
    params = ", ".join(f"{k}={v}" for k, v in sorted(header.get("params", {}).items()))
    typer.echo(f"class: {header.get('class', type(model).__name__)}({params})")
    if hasattr(model, "summary"):
        with reported_errors():
            typer.echo(model_summary(model, words))


def model_summary(model: object, words: int) -> str:
    """``model.summary()`` with ``words`` passed to the keyword its class takes for the
    length of a listing: ``n_words`` (topic models), else ``n_entities`` (a model of
    entities, e.g. BPBFM's top entities per factor); neither: its default summary."""
    import inspect

    summary = model.summary  # type: ignore[attr-defined]
    try:
        accepted = inspect.signature(summary).parameters
    except (TypeError, ValueError):
        accepted = {}
    for keyword in ("n_words", "n_entities"):
        if keyword in accepted:
            return str(summary(**{keyword: words}))
    return str(summary())


def models_table() -> list[dict[str, str]]:
    """One row per registered estimator: class, paper names, fit inputs, capabilities,
    module (read without importing the models: :mod:`topiclink.cli.catalog`)."""
    from topiclink.cli.catalog import estimator_catalog

    return [{"estimator": e.name, "paper names": ", ".join(e.paper_names) or "-",
             "fit requires": ", ".join(e.fit_requires),
             "capabilities": ",".join(e.capabilities), "module": e.module}
            for e in estimator_catalog().values()]


def models_cmd() -> None:
    """List the registered estimators, the paper names they answer to and what their fit
    needs (`topiclink fit model NAME` takes either name)."""
    rows = models_table()
    columns = ["estimator", "paper names", "fit requires", "capabilities", "module"]
    widths = {c: max([len(c), *(len(r[c]) for r in rows)]) for c in columns}
    typer.echo(" ".join(c.rjust(widths[c]) for c in columns))
    for row in rows:
        typer.echo(" ".join(row[c].rjust(widths[c]) for c in columns))
