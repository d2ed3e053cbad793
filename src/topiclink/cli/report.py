"""``topiclink report``: one self-contained HTML page of a saved model (opens offline)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from topiclink.cli.common import (
    DataDirOpt,
    DatasetOpt,
    ForceOpt,
    InputOpt,
    VerboseOpt,
    VocabOpt,
    check_input_paths,
    check_out_file,
    load_data,
    load_model_file,
    setup_logging,
)
from topiclink.cli.documents import DocumentSource, document_options
from topiclink.cli.errors import fail, path_value, reported_errors

__all__ = ["report_cmd"]


@document_options
def report_cmd(
    model_path: Annotated[Path, typer.Argument(parser=path_value,
                                               help="A saved model file (.npz).")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", parser=path_value,
        help="The HTML file to write (default: the model file's name with "
        ".html); an existing file is refused unless --force.", show_default=False)] = None,
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    input_file: InputOpt = None,
    vocab: VocabOpt = None,
    title: Annotated[str | None, typer.Option(
        help="The page's title.", show_default=False)] = None,
    group_column: Annotated[str | None, typer.Option(
        "--group-column", help="A metadata column of the data that groups the documents "
        "(e.g. president): each group's mean topic mix, and the time axis banded by group "
        "(default: president when the data has it).", show_default=False)] = None,
    force: ForceOpt = False,
    verbose: VerboseOpt = False,
    source: DocumentSource | None = None,
) -> None:
    """Write one self-contained HTML report of a saved model (it opens offline): its
    topics, documents, links, visibility, classifier or relations, as the model has them.

    A model file holds no documents: give the data it was fitted on (--dataset, --data,
    --input or --documents) to search by words, mark the true links and, for documents
    not in training, state held-out precision@k."""
    from topiclink.report import build_report, inputs_from_dataset

    setup_logging(verbose)
    path = out if out is not None else model_path.with_suffix(".html")
    path = check_out_file(path, force=force, option="--out", model=False)
    if source is not None:
        if dataset is not None or data is not None or input_file is not None:
            raise fail("give the documents as --documents or a dataset as --dataset/--data/"
                       "--input, not both")
        source.check(requires=("X",))
    else:
        check_input_paths(data, input_file, vocab)
    given = (source is not None or dataset is not None or data is not None
             or input_file is not None)
    if group_column is not None and not given:
        raise fail("--group-column reads the data's metadata: give the data too (--dataset, "
                   "--data, --input or --documents); a model file keeps none")
    model = load_model_file(model_path)
    inputs = None
    if source is not None and group_column:
        source.extra_columns = (group_column,)
    if given:
        ds = load_data(dataset, data, input_file, vocab, source=source,
                       directed=bool(getattr(model, "directed_links", False)))
        with reported_errors():
            inputs = inputs_from_dataset(model, ds, group_column=group_column)
    with reported_errors(ImportError):
        report = build_report(model, inputs=inputs, title=title)
        report.save(path)
    views = ", ".join(report.data["views"])
    typer.echo(f"report of {report.data['model']['name']} ({views}) written to {path} "
               f"({report.size_bytes / 1e6:.1f} MB, {report.seconds:.1f} s)")
    typer.echo(f"open it in a browser (no network needed): {path.resolve().as_uri()}")
