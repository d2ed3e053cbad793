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
        "--subset", metavar="auto|test|held-out|all|valid",
        help="Which documents: auto (a test split, else those not in the model's "
             "training data, else all), test, held-out or all; a knowledge-graph model's "
             "triples: test (auto) or valid.")] = "auto",
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
    truth).  A knowledge-graph model (fit bpbfm, bpbfm-em, bpbfm-dc): filtered MRR and
    Hits@1/3/10 of the test (or valid) triples of --dataset/--data, for tail queries,
    head queries and both; entities and relations are matched by name, and a triple with
    one the model does not know is counted in a warning and ranked last (the pessimistic
    convention)."""
    from topiclink.experiments.evaluation import evaluate_model
    from topiclink.experiments.runner import write_csv
    setup_logging(verbose)
    check(subset in ("auto", "test", "held-out", "all", "valid"),
          f"--subset must be auto, test, held-out or all (or valid: a knowledge-graph "
          f"model's triples), got {subset!r}")
    check(0 < fraction < 1, f"--fraction must be in (0, 1), got {fraction:g}")
    if dataset is None and data is None and input_file is None:
        raise fail("give the data to evaluate on: --dataset NAME, --data DIR or --input "
                   "FILE")
    require_data(dataset, data, input_file)
    out = check_out_file(out, force=force, model=False)
    model = load_model_file(model_path)
    _check_subset_for(model, subset, input_file)
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


def _check_subset_for(model: object, subset: str, input_file: Path | None) -> None:
    """A knowledge-graph model takes triples (--dataset/--data) and --subset auto, test
    or valid; --subset valid is for such a model only (one-line errors)."""
    kg = hasattr(model, "score_tails_batch")
    if kg and input_file is not None:
        raise fail(f"a {type(model).__name__} is evaluated on triples: give --dataset NAME "
                   "or --data DIR (a folder of train/valid/test triples), not --input")
    if kg and subset not in ("auto", "test", "valid"):
        raise fail(f"--subset {subset} is for documents: a {type(model).__name__} is "
                   "evaluated on the test (auto) or valid triples")
    if not kg and subset == "valid":
        raise fail(f"--subset valid is for a knowledge-graph model's triples; a "
                   f"{type(model).__name__} takes auto, test, held-out or all")
