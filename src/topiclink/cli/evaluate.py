"""``topiclink evaluate``: held-out metrics of a saved model on a dataset or files."""

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
    check_out_file,
    echo_table,
    load_data,
    load_model_file,
    require_data,
    seed_option,
    setup_logging,
)
from topiclink.cli.errors import check, fail, path_value, reported_errors

__all__ = ["evaluate_cmd"]

SplitSeedOpt = seed_option("Seed of the completion split and of the inference of new "
                           "documents (an integer >= 0).")


def evaluate_cmd(
    model_path: Annotated[Path, typer.Argument(parser=path_value,
                                               help="A saved model file (.npz).")],
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    input_file: InputOpt = None,
    vocab: VocabOpt = None,
    subset: Annotated[str, typer.Option(
        "--subset", metavar="auto|test|held-out|all",
        help="Which documents: auto (a test split, else those not in the model's "
             "training data, else all), test, held-out or all.")] = "auto",
    fraction: Annotated[float, typer.Option(
        help="Share of each document's tokens held out for the perplexity.")] = 0.5,
    seed: SplitSeedOpt = 0,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", parser=path_value,
        help="Also write the table to this CSV file (an existing file is "
        "refused unless --force).")] = None,
    force: ForceOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Held-out metrics of a saved model: perplexity by document completion (topic
    models), accuracy (classifiers, when the documents have labels), and for link models
    the link AUC and link rank of the documents that were not in training against the
    training documents (matched by document id; the data's links between them are the
    truth)."""
    from topiclink.experiments.evaluation import evaluate_model
    from topiclink.experiments.runner import write_csv
    setup_logging(verbose)
    check(subset in ("auto", "test", "held-out", "all"),
          f"--subset must be auto, test, held-out or all, got {subset!r}")
    check(0 < fraction < 1, f"--fraction must be in (0, 1), got {fraction:g}")
    if dataset is None and data is None and input_file is None:
        raise fail("give the data to evaluate on: --dataset NAME, --data DIR or --input "
                   "FILE")
    require_data(dataset, data, input_file)
    out = check_out_file(out, force=force, model=False)
    model = load_model_file(model_path)
    ds = load_data(dataset, data, input_file, vocab)
    if input_file is not None and subset == "auto":
        subset = "all"      # the user's own documents: no ids to match
    with reported_errors():
        table = evaluate_model(model, ds, documents=subset, fraction=fraction,
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
        with reported_errors():
            write_csv(table, out)
        typer.echo(f"written {out}")
