"""``topiclink evaluate``: held-out metrics of a saved model on a dataset or files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from topiclink.cli.common import (
    DataDirOpt,
    DatasetOpt,
    InputOpt,
    VerboseOpt,
    VocabOpt,
    echo_table,
    fail,
    load_data,
    reported_errors,
    setup_logging,
)

__all__ = ["evaluate_cmd"]


def evaluate_cmd(
    model_path: Annotated[Path, typer.Argument(help="A saved model file (.npz).")],
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    input_file: InputOpt = None,
    vocab: VocabOpt = None,
    documents: Annotated[str, typer.Option(
        help="Which documents: auto (a test split, else those not in the model's "
             "training data, else all), test, held-out or all.")] = "auto",
    fraction: Annotated[float, typer.Option(
        help="Share of each document's tokens held out for the perplexity.")] = 0.5,
    seed: Annotated[int, typer.Option(help="Seed of the completion split and of the "
                                      "inference of new documents.")] = 0,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Also write the table to this CSV file.")] = None,
    verbose: VerboseOpt = False,
) -> None:
    """Held-out metrics of a saved model: perplexity by document completion (topic
    models), accuracy (classifiers, when the documents have labels), and for link models
    the link AUC and link rank of the documents that were not in training against the
    training documents (matched by document id; the data's links between them are the
    truth)."""
    from topiclink.experiments.evaluation import evaluate_model
    from topiclink.experiments.runner import write_csv
    from topiclink.models.base import load

    setup_logging(verbose)
    if dataset is None and data is None and input_file is None:
        raise fail("give the data to evaluate on: --dataset NAME, --data DIR or --input "
                   "FILE")
    with reported_errors():
        model = load(model_path)
    ds = load_data(dataset, data, input_file, vocab)
    if input_file is not None and documents == "auto":
        documents = "all"      # the user's own documents: no ids to match
    with reported_errors():
        table = evaluate_model(model, ds, documents=documents, fraction=fraction,
                               random_state=seed)
    if table.empty:
        raise fail(f"nothing to evaluate: a {type(model).__name__} on {ds.name!r} has no "
                   "metric here (no labels or links for what the model predicts)")
    typer.echo(f"{type(model).__name__} from {model_path} on {ds.name}:")
    echo_table(table)
    if out is not None:
        table.insert(0, "dataset", ds.name)
        table.insert(0, "estimator", type(model).__name__)
        table.insert(0, "model_file", str(model_path))
        write_csv(table, out)
        typer.echo(f"written {out}")
