"""What the commands share: options, logging, one-line errors, data loading (with
``--data`` format detection) and the one fit-and-report scaffold.

Heavy modules (models, datasets, pandas) are imported inside the functions, so that
``topiclink --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from topiclink.datasets.base import Dataset

__all__ = ["DatasetOpt", "DataDirOpt", "InputOpt", "VocabOpt", "VerboseOpt", "WorkersOpt",
           "SeedOpt", "setup_logging", "fail", "reported_errors", "load_data", "load_input",
           "int_list", "float_list", "parse_params", "FitData", "prepare_fit_data",
           "fit_and_report", "echo_table"]

DatasetOpt = Annotated[str | None, typer.Option(
    "--dataset", "-d", help="Dataset name (see `topiclink datasets`); with --data and no "
    "--dataset, the folder's format is detected (LINQS, R .rda, UCI bag-of-words, "
    "triples).", show_default=False)]
DataDirOpt = Annotated[Path | None, typer.Option(
    "--data", help="Folder holding your own copy of a dataset in its original format.")]
InputOpt = Annotated[Path | None, typer.Option(
    "--input", "-i", help="Your own documents instead of --dataset: a UCI bag-of-words "
    "docword file (with --vocab), or a text file with one document per line.")]
VocabOpt = Annotated[Path | None, typer.Option(help="UCI vocabulary file for --input.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose/--quiet", "-v/-q",
                                          help="Progress bar and info logging.")]
WorkersOpt = Annotated[int, typer.Option(
    help="Configurations run at once in separate processes (the results do not depend "
         "on it).")]
SeedOpt = Annotated[int, typer.Option(help="Random seed.")]


# ---------------------------------------------------------------------- logging, errors
def setup_logging(verbose: bool) -> None:
    """INFO (verbose) or WARNING records of the ``topiclink`` loggers on stderr."""
    root = logging.getLogger("topiclink")
    if not root.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` (red, stderr) and return the Exit(1) to raise."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=1)


@contextlib.contextmanager
def reported_errors(*kinds: type[BaseException]) -> Iterator[None]:
    """Turn bad input (ValueError, FileNotFoundError, and ``kinds``) into a one-line
    error and exit code 1 instead of a traceback."""
    try:
        yield
    except (FileNotFoundError, ValueError, *kinds) as exc:
        raise fail(str(exc).strip().splitlines()[0] if str(exc).strip() else
                   type(exc).__name__) from None


# ---------------------------------------------------------------------- data
def load_input(path: Path, vocab: Path | None) -> Any:
    """A Corpus from a user's file: UCI docword (+ vocab) or one text per line."""
    from topiclink.data.io import corpus_from_texts, read_uci_bow

    with reported_errors():
        if path.name.startswith("docword") or vocab is not None:
            return read_uci_bow(path, vocab)
        if not path.exists():
            raise FileNotFoundError(f"input file not found: {path}")
        lines = list(path.read_text(errors="replace").splitlines())
        return corpus_from_texts(lines, name=path.stem)


def load_data(dataset: str | None, data: Path | None, input_file: Path | None = None,
              vocab: Path | None = None, default: str = "cora") -> Dataset:
    """The data a command works on.

    ``--input FILE``: the user's documents; ``--dataset NAME`` (with ``--data DIR``: the
    user's copy); ``--data DIR`` alone: the folder's format is detected; neither: the
    command's ``default`` dataset.
    """
    from topiclink.datasets import load_dataset
    from topiclink.datasets.base import Dataset

    if input_file is not None:
        if dataset is not None or data is not None:
            raise fail("give your documents as --input or a dataset as --dataset/--data, "
                       "not both")
        corpus = load_input(input_file, vocab)
        return Dataset(name=input_file.stem, corpus=corpus, path=input_file)
    name = dataset if dataset is not None else (None if data is not None else default)
    with reported_errors():
        return load_dataset(name, data_dir=data)


def int_list(text: str, name: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise fail(f"{name} must be a comma-separated list of integers, got {text!r}") from None


def float_list(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise fail(f"{name} must be a comma-separated list of numbers, got {text!r}") from None


def parse_params(items: list[str] | None) -> dict[str, Any]:
    """``key=value`` strings -> a dict; values parsed as JSON when possible (``4``,
    ``0.5``, ``true``, ``null``, ``[1, 2]``, ``"text"``), else kept as text."""
    params: dict[str, Any] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise fail(f"--param takes key=value, got {item!r}")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def echo_table(table: Any) -> None:
    """Print a DataFrame compactly (3 decimals; missing values blank)."""
    import pandas as pd

    shown = table.astype(object).where(table.notna(), "")
    with pd.option_context("display.max_colwidth", 70, "display.width", 160):
        typer.echo(shown.to_string(index=False, float_format=lambda v: f"{v:.3f}"))


# ---------------------------------------------------------------------- fit and report
@dataclass
class FitData:
    """What ``fit`` gets (empty documents dropped) and what was held out."""

    dataset: Dataset
    corpus: Any = None
    links: Any = None
    labels: Any = None
    tensor: Any = None
    features: Any = None
    held_out: Dataset | None = None          # the data before the split ...
    held_out_positions: Any = None           # ... and the held-out documents in it


def prepare_fit_data(ds: Dataset, requires: tuple[str, ...], *, holdout: float = 0.0,
                     seed: int = 0) -> FitData:
    """The inputs ``requires`` names from a dataset; ``holdout`` > 0 keeps that fraction
    of the documents (with their links and labels) out of training."""
    import numpy as np

    from topiclink.data.clean import drop_empty_documents
    from topiclink.datasets.base import Dataset

    what = {"X": ("corpus", "documents"), "links": ("links", "linked documents"),
            "y": ("labels", "labelled documents"), "tensor": ("tensor", "relational tensor")}
    for need in requires:
        if need in what and getattr(ds, what[need][0]) is None:
            raise fail(f"dataset {ds.name!r} has no {what[need][1]}")
    out = FitData(dataset=ds)
    if ds.tensor:
        out.tensor = ds.tensor.get("train", next(iter(ds.tensor.values())))
    if ds.corpus is None:
        return out
    labels = None if ds.labels is None else np.asarray(ds.labels)
    corpus, links, labels, _ = drop_empty_documents(ds.corpus, ds.links, labels)
    if "features" in requires:
        if corpus.metadata is None:
            raise fail(f"dataset {ds.name!r} has no document features (metadata)")
        out.features = corpus.metadata
    if holdout:
        from topiclink.data.splits import train_test_split_documents

        if not 0 < holdout < 1:
            raise fail(f"--holdout must be a fraction in (0, 1), got {holdout}")
        with reported_errors():
            split = train_test_split_documents(corpus, links, test_size=holdout,
                                               random_state=seed)
        out.held_out = Dataset(name=ds.name, corpus=corpus, links=links, labels=labels,
                               label_names=ds.label_names)
        out.held_out_positions = split.test_index
        corpus, links = split.train_corpus, split.train_links
        labels = None if labels is None else labels[split.train_index]
    out.corpus, out.links, out.labels = corpus, links, labels
    return out


def _fit_details(model: Any, data: FitData, seconds: float) -> list[str]:
    details = []
    n_iter = getattr(model, "n_iter_", None)
    if data.corpus is not None and n_iter and seconds > 0 and hasattr(model, "components_"):
        rate = data.corpus.n_tokens * n_iter / seconds / 1e6
        details.append(f"{rate:.1f} M tokens/s")
    if hasattr(model, "n_pairs_"):
        details.append(f"{model.n_pairs_} training pairs")
    elif hasattr(model, "n_links_"):
        details.append(f"{model.n_links_} training links")
    if data.labels is not None and hasattr(model, "predict") and hasattr(model, "classes_"):
        details.append(f"training accuracy {model.score(data.corpus, data.labels):.3f}")
    return details


def fit_and_report(model: Any, ds: Dataset, out: Path, *, holdout: float = 0.0,
                   seed: int = 0) -> Any:
    """The one scaffold of the fit commands: data -> fit -> report -> save.

    Reads what ``fit`` needs from ``model.fit_requires``; prints the model's summary, the
    training time (tokens per second, training pairs, training accuracy as the model
    has them), test accuracy on a dataset's test split, held-out metrics when
    ``holdout`` > 0 (:func:`topiclink.experiments.evaluation.evaluate_model`), and the
    path written.
    """
    from topiclink.experiments.runner import fit_model

    requires = tuple(getattr(model, "fit_requires", ("X",)))
    data = prepare_fit_data(ds, requires, holdout=holdout, seed=seed)
    with reported_errors():
        t0 = time.perf_counter()
        fit_model(model, data.corpus, links=data.links, y=data.labels, tensor=data.tensor,
                  features=data.features)
        seconds = time.perf_counter() - t0
    path = model.save(out)
    if hasattr(model, "summary"):
        typer.echo(model.summary())
    details = _fit_details(model, data, seconds)
    typer.echo(f"trained in {seconds:.1f} s" + (f" ({', '.join(details)})" if details else ""))
    test = ds.test
    if (test is not None and test.corpus is not None and test.labels is not None
            and hasattr(model, "predict") and hasattr(model, "classes_")):
        import numpy as np

        from topiclink.data.clean import drop_empty_documents

        corpus, _, y, _ = drop_empty_documents(test.corpus, labels=np.asarray(test.labels))
        with reported_errors():
            typer.echo(f"test accuracy {model.score(corpus, y):.3f} "
                       f"({corpus.n_docs} documents)")
    if data.held_out is not None:
        from topiclink.experiments.evaluation import evaluate_model

        with reported_errors():
            table = evaluate_model(model, data.held_out,
                                   documents=data.held_out_positions, random_state=seed)
        if not table.empty:
            typer.echo(f"held-out documents ({holdout:g} of the dataset, not in training):")
            echo_table(table)
    typer.echo(f"model written to {path}")
    return model
