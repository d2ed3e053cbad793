"""What the commands share: options, logging, data loading (with ``--data`` format
detection) and the one fit-and-report scaffold; the one-line errors are
:mod:`~topiclink.cli.errors`.

Heavy modules (models, datasets, pandas) are imported inside the functions, so that
``topiclink --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from topiclink.cli import errors
from topiclink.cli.errors import check, exception_message, fail, path_value, reported_errors
from topiclink.cli.help import RUN_PANEL

if TYPE_CHECKING:
    from topiclink.cli.documents import DocumentSource
    from topiclink.datasets.base import Dataset

__all__ = ["DatasetOpt", "DataDirOpt", "InputOpt", "VocabOpt", "VerboseOpt", "WorkersOpt",
           "OutOpt", "HoldoutOpt", "FeaturesOpt",
           "SeedOpt", "ForceOpt", "OnlyFoldsOpt", "SchedulerOpt", "ShardsOpt", "dask_params",
           "setup_logging", "memory_bytes",
           "check_model_size", "check_model", "model_file_path", "check_out_file",
           "check_out_dir", "check_input_paths", "require_data", "load_model_file",
           "load_data", "load_input", "read_user_lines", "int_list", "float_list",
           "parse_params", "FitData", "prepare_fit_data", "check_usable_links",
           "takes_publication_time", "fit_and_report", "echo_table", "seed_option",
           "check_seed"]


def check_seed(value: int | None) -> int | None:
    """The check of every ``--seed`` option of the command line: a seed is an integer >=
    0 (what :func:`topiclink.random.as_generator` takes); a negative one is refused at
    once (``error: Invalid value for '--seed': ...``, exit 2), before any data is read."""
    if value is not None and value < 0:
        raise typer.BadParameter(f"a seed is an integer >= 0, got {value}")
    return value


def seed_option(help: str = "Random seed.", *flags: str) -> Any:  # noqa: A002 - typer's word
    """The declaration of a seed option (``--seed`` unless ``flags``), checked by
    :func:`check_seed`: every command's seed option is this one."""
    return Annotated[int, typer.Option(*flags, help=help, callback=check_seed)]


DatasetOpt = Annotated[str | None, typer.Option(
    "--dataset", "-d", help="A data set by name (see `topiclink datasets`).",
    show_default=False)]
DataDirOpt = Annotated[Path | None, typer.Option(
    "--data", parser=path_value,
    help="A folder of one data set, in its own format.")]
InputOpt = Annotated[Path | None, typer.Option(
    "--input", "-i", parser=path_value,
    help="Texts, one per line (or a UCI docword file).")]
VocabOpt = Annotated[Path | None, typer.Option(
    parser=path_value, help="The UCI vocabulary of an --input docword.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose/--quiet", "-v/-q",
                                          help="Progress bar and log.")]
WorkersOpt = Annotated[int, typer.Option(
    help="Configurations run at once in separate processes (the results do not depend "
         "on it).")]
SeedOpt = seed_option("Random seed (an integer >= 0).")
ForceOpt = Annotated[bool, typer.Option("--force/--no-force", "-f", show_default=False,
                                        help="Overwrite an existing output.")]
OnlyFoldsOpt = Annotated[str | None, typer.Option(
    "--only-folds", help="Run only these fold indices, e.g. 0,1 (the rows of a fold do not "
    "depend on which other folds run).")]
CheckpointOpt = Annotated[Path | None, typer.Option(
    "--checkpoint", parser=path_value,
    help="Checkpoint file: the model with its full sampler state is "
    "written there every --checkpoint-every; a fit run again with the same command "
    "continues from it, as if never killed.", show_default=False, rich_help_panel=RUN_PANEL)]
_EVERY = "Between checkpoints: iterations (e.g. 10) or a duration (30s, 10min, 2h)."
CheckpointEveryOpt = Annotated[str, typer.Option("--checkpoint-every", help=_EVERY,
                                                 rich_help_panel=RUN_PANEL)]
#: the same option on an experiment, shown by its --help next to --checkpoint-dir
GridCheckpointEveryOpt = Annotated[str, typer.Option("--checkpoint-every", help=_EVERY)]
CheckpointDirOpt = Annotated[Path | None, typer.Option(
    "--checkpoint-dir", parser=path_value,
    help="Checkpoint folder of the grid: the same command run again after a kill skips "
    "the finished cells and resumes the unfinished fit.", show_default=False)]


def checkpoint_options(checkpoint: Path | None, every: str) -> dict[str, Any]:
    """``fit`` keywords of --checkpoint / --checkpoint-every (checked before any data is
    read; one-line error)."""
    from topiclink.estimators.checkpoint import CheckpointRequest, parse_every

    try:
        parse_every(every)
        if checkpoint is not None:
            CheckpointRequest.make(checkpoint, every)
    except (TypeError, ValueError) as exc:
        raise fail(str(exc).replace("checkpoint_every", "--checkpoint-every")) from None
    if checkpoint is None:
        return {}
    return {"checkpoint": checkpoint, "checkpoint_every": every}


SchedulerOpt = Annotated[str | None, typer.Option(
    "--scheduler", help="Train on a Dask cluster at this scheduler address (e.g. "
    "tcp://10.0.0.5:8786; pip install 'topiclink[dask]'); the result depends on --shards, "
    "not on the workers.", show_default=False, rich_help_panel=RUN_PANEL)]
ShardsOpt = Annotated[int, typer.Option(
    "--shards", help="Document shards on the Dask workers (with --scheduler).",
    rich_help_panel=RUN_PANEL)]


def dask_params(scheduler: str | None, shards: int, scheme: str) -> dict[str, Any]:
    """The estimator parameters of ``--scheduler`` / ``--shards``: the family's sharded
    ``scheme`` with ``shards`` shards on the Dask ``executor`` at ``scheduler`` (none
    without a scheduler); a one-line error for a bad shard count or a scheduler that is no
    address (its form is checked before any data is read or any connection is tried)."""
    from topiclink.execution import Shards
    from topiclink.execution.dask import ADDRESS_FORM, address_problem

    check(shards >= 1, f"--shards must be >= 1, got {shards}")
    if scheduler is None:
        return {}
    problem = address_problem(scheduler)
    check(problem is None, f"--scheduler: {scheduler!r} is not a Dask scheduler address "
          f"({problem}); expected the form {ADDRESS_FORM}")
    return {"scheme": Shards(scheme, shards), "executor": scheduler}


# ---------------------------------------------------------------------- logging
class _CurrentStderr(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler writing to ``sys.stderr`` as it is when a record is emitted, not when
    the handler was made (the command line run again in one process, e.g. by a test
    runner that swaps the streams, logs to the stream of the current run)."""

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def setup_logging(verbose: bool) -> None:
    """INFO (verbose) or WARNING records of the ``topiclink`` loggers on stderr."""
    root = logging.getLogger("topiclink")
    if not root.handlers:
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)


# ---------------------------------------------------------------------- option checks
def memory_bytes() -> int:
    """The memory this process may still allocate (:func:`topiclink.data.checks.
    available_memory`)."""
    from topiclink.data.checks import available_memory

    return available_memory()


def check_model_size(n_topics: int | None, n_docs: int = 1, n_words: int = 1,
                     what: str = "") -> None:
    """Refuse ``n_topics`` whose counts alone (K x (D + V) x 4 bytes) exceed the machine's
    memory, before anything is allocated."""
    if n_topics is None or not isinstance(n_topics, int) or n_topics < 1:
        return
    need = n_topics * (max(n_docs, 0) + max(n_words, 0)) * 4
    have = memory_bytes()
    if have and need > have:
        raise fail(f"{n_topics} topics{what} need at least {need / 2**30:.3g} GiB of counts "
                   f"(K x (documents + words) x 4 bytes); this machine has "
                   f"{have / 2**30:.3g} GiB of memory")


def check_model(model: Any) -> None:
    """The estimator's declared parameter checks (one line), and its size against the
    machine, before any data is read."""
    validate = getattr(model, "_validate_params", None)
    if validate is not None:
        with reported_errors():
            validate()
    check_model_size(getattr(model, "n_topics", None))


def model_file_path(path: Path) -> Path:
    """The path the model writer uses for ``path`` (``.npz`` appended when missing)."""
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def _check_writable_dir(folder: Path, what: Path) -> None:
    """``folder`` exists as a writable directory, or can be created: checked with the
    permissions and then for real (a temporary file, or folder, made in it and removed at
    once), which also catches read-only file systems and running as root."""
    import tempfile

    folder = folder.absolute()
    probe = folder
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise fail(f"cannot create {what}: {probe} is not a directory")
    verb = "write" if probe == folder else "create"
    if not os.access(probe, os.W_OK | os.X_OK):
        raise fail(f"cannot {verb} {what}: directory {probe} is not writable")
    try:
        if probe == folder:
            fd, tmp = tempfile.mkstemp(prefix=".topiclink-probe-", dir=probe)
            os.close(fd)
            os.unlink(tmp)
        else:
            os.rmdir(tempfile.mkdtemp(prefix=".topiclink-probe-", dir=probe))
    except OSError as exc:
        raise fail(f"cannot {verb} {what}: directory {probe} is not writable "
                   f"({exc.strerror or exception_message(exc)})") from None


def check_out_file(out: Path | None, *, force: bool = False, option: str = "--out",
                   model: bool = True) -> Path | None:
    """Check an output file before any work: a non-empty name, not a directory, in a
    directory that is (or can be made) writable, and not an existing file unless
    ``force``.  Returns the path that will be written (``.npz`` added for a model)."""
    if out is None:
        return None
    if str(out).strip() in ("", "."):
        raise fail(f"{option} needs a file name, got an empty name")
    path = model_file_path(out) if model else out
    for candidate in dict.fromkeys((out, path)):
        if candidate.is_dir():
            raise fail(f"{option} {candidate} is a directory; give a file name")
    if path.exists() or path.is_symlink():
        if not force:
            raise fail(f"{path} exists; give --force to overwrite it")
        if not os.access(path, os.W_OK) and not os.access(path.parent, os.W_OK):
            raise fail(f"cannot write {path}: not writable")
    _check_writable_dir(path.parent, path)
    return path


def check_out_dir(out: Path, option: str = "--out") -> Path:
    """Check an output folder before any work: a name, a directory (or creatable), and
    writable."""
    if str(out).strip() == "":
        raise fail(f"{option} needs a folder name, got ''")
    if out.exists() and not out.is_dir():
        raise fail(f"{option} {out} exists and is not a directory")
    _check_writable_dir(out, out)
    return out


def check_input_paths(data: Path | None = None, input_file: Path | None = None,
                      vocab: Path | None = None) -> None:
    """The data paths a user gave exist (one-line error otherwise), before any reading."""
    if data is not None:
        if str(data).strip() == "":
            raise fail("--data needs a folder name, got ''")
        if not data.exists():
            raise fail(f"data folder not found: {data}")
        if not data.is_dir():
            raise fail(f"--data must be a folder, got the file {data}")
    for option, path in (("--input", input_file), ("--vocab", vocab)):
        if path is None:
            continue
        if str(path).strip() == "":
            raise fail(f"{option} needs a file name, got ''")
        if not path.exists():
            raise fail(f"{option} file not found: {path}")
        if path.is_dir():
            raise fail(f"{option} {path} is a directory; give a file")


def dataset_choices() -> str:
    """The registered dataset names, comma-separated."""
    from topiclink.datasets import dataset_specs

    return ", ".join(dataset_specs())


def require_data(dataset: str | None, data: Path | None, input_file: Path | None = None,
                 *, inputs: bool = True, source: DocumentSource | None = None,
                 requires: tuple[str, ...] = ("X",)) -> None:
    """Refuse a command run with no data named (no silent default dataset), or with two
    sources; check every ``--documents`` option (``source``) before any data is read."""
    check_input_paths(data, input_file)
    if source is not None:
        if dataset is not None or data is not None or input_file is not None:
            raise fail("give your documents as --documents or a dataset as --dataset/"
                       "--data/--input, not both")
        source.check(requires=requires)
        return
    if dataset is None and data is None and input_file is None:
        where = "--dataset NAME, --data DIR" + (" or --input FILE" if inputs else "")
        raise fail(f"no data given: use {where}, or your own --documents FILE [--edges "
                   f"FILE] (datasets: {dataset_choices()}; `topiclink datasets` lists them)")


def _import_model_class(path: Path) -> None:
    """Import the module of the class a model file names (from the source catalog,
    :mod:`topiclink.cli.catalog`), so that loading it imports that family only, not every
    family; nothing when the header cannot be read (``load`` then says why)."""
    import importlib

    from topiclink.cli.catalog import estimator_catalog
    from topiclink.persistence import read_header

    try:
        name = read_header(path).get("class")
        entry = estimator_catalog().get(name) if isinstance(name, str) else None
        if entry is not None and entry.module not in sys.modules:
            importlib.import_module(entry.module)
    except Exception:  # noqa: BLE001 - load() reports a bad file in one line
        return


def load_model_file(path: Path) -> Any:
    """A saved model, or one line ``<file>: not a readable topiclink model file (...)``."""
    from topiclink.estimators.base import load

    if not path.exists():
        raise fail(f"model file not found: {path}")
    if path.is_dir():
        raise fail(f"{path}: not a readable topiclink model file (a directory)")
    try:
        _import_model_class(path)
        return load(path)
    except FileNotFoundError as exc:
        raise fail(exception_message(exc)) from None
    except Exception as exc:  # noqa: BLE001 - any failure to read is the file's fault
        if errors.DEBUG:
            raise
        message = exception_message(exc)
        if message.startswith(str(path)) or message.startswith(f"{path}:"):
            raise fail(message) from None
        if isinstance(exc, EOFError) or path.stat().st_size == 0:
            message = f"{type(exc).__name__}: empty or truncated file"
        elif not isinstance(exc, ValueError | OSError):
            message = f"{type(exc).__name__}: {message}"
        raise fail(f"{path}: not a readable topiclink model file ({message})") from None


# ---------------------------------------------------------------------- data
def read_user_lines(path: Path, option: str, what: str = "document") -> list[str]:
    """The lines of a user's text file (one document or query per line): a line ends at
    ``\\n`` (or CRLF) only, so a form feed or U+2028 inside a line stays in its document
    (:func:`topiclink.data.io.read_text_lines`).  A file that is not UTF-8, or holds a NUL
    byte, is refused on one line naming it, the line and the byte offset: its text is
    never silently mangled (convert it to UTF-8, e.g. ``iconv -f LATIN1 -t UTF-8``)."""
    from topiclink.data.io import read_text_lines

    if not path.exists():
        raise fail(f"{option} file not found: {path}")
    try:
        return read_text_lines(path)
    except (OSError, ValueError) as exc:
        message = exception_message(exc)
        if "not valid UTF-8" in message:
            message += f"; {option} takes UTF-8 text, one {what} per line: convert the " \
                       "file (e.g. iconv -f LATIN1 -t UTF-8)"
        elif "NUL byte" in message:
            message += f"; {option} takes a text file, one {what} per line"
        raise fail(message) from None


def load_input(path: Path, vocab: Path | None) -> Any:
    """A Corpus from a user's file: UCI docword (+ vocab) or one text per line
    (:func:`read_user_lines`: newlines only end a document; UTF-8 only)."""
    from topiclink.data.io import corpus_from_texts, read_uci_bow

    if path.name.startswith("docword") or vocab is not None:
        with reported_errors():
            return read_uci_bow(path, vocab)
    lines = read_user_lines(path, "--input")
    with reported_errors():
        return corpus_from_texts(lines, name=path.stem)


class _NoLinksNote(logging.Filter):
    """Drops a reader's "no links" warning (records with ``topiclink_no_links``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, "topiclink_no_links", False)


@contextlib.contextmanager
def _no_links_refused_later(needs_links: bool) -> Iterator[None]:
    """While a model of links reads its data, a reader's "no links" warning is not shown:
    :func:`check_usable_links` refuses such data with its own one-line error."""
    if not needs_links:
        yield
        return
    from topiclink.data.io.linqs import logger as linqs_logger

    note = _NoLinksNote()
    linqs_logger.addFilter(note)
    try:
        yield
    finally:
        linqs_logger.removeFilter(note)


def load_data(dataset: str | None, data: Path | None, input_file: Path | None = None,
              vocab: Path | None = None, default: str | None = None, *,
              directed: bool = False, source: DocumentSource | None = None,
              needs_links: bool = False) -> Dataset:
    """The data a command works on.

    ``source`` (``--documents FILE [--edges FILE]``, checked by :func:`require_data`):
    the user's documents and citations (:meth:`DocumentSource.load`, which prints what was
    read and dropped); ``--input FILE``: the user's documents; ``--dataset NAME`` (with
    ``--data DIR``: the
    user's copy); ``--data DIR`` alone: the folder's format is detected; neither: the
    command's ``default`` dataset (an error when it has none).  ``directed``: read the
    links as citing -> cited pairs where the data set's loader can (models of directed
    citations); other loaders are called as usual.  ``needs_links``: a model of links
    reads the data (a LINQS ``.cites`` without links is then refused on one line by
    :func:`check_usable_links`, without the reader's warning before it).
    """
    from topiclink.datasets import load_dataset
    from topiclink.datasets.base import Dataset

    if source is not None:
        return source.load()
    check_input_paths(data, input_file, vocab)
    if input_file is not None:
        if dataset is not None or data is not None:
            raise fail("give your documents as --input or a dataset as --dataset/--data, "
                       "not both")
        corpus = load_input(input_file, vocab)
        return Dataset(name=input_file.stem, corpus=corpus, path=input_file)
    if dataset is None and data is None and default is None:
        require_data(dataset, data, input_file)
    name = dataset if dataset is not None else (None if data is not None else default)
    options = {"directed": True} if directed and _reads_directed(name, data) else {}
    with reported_errors(), _no_links_refused_later(needs_links):
        return load_dataset(name, data_dir=data, **options)


def _reads_directed(name: str | None, data: Path | None) -> bool:
    """Whether the loader of data set ``name`` (None: the format detected in ``data``)
    takes ``directed``; False when there is no such loader (the load reports why)."""
    import inspect

    from topiclink.datasets import dataset_specs

    if name is None or name == "auto":
        from topiclink.datasets.detect import detect_format

        try:
            name = detect_format(data)
        except (OSError, ValueError):
            return False
    spec = dataset_specs().get(name)
    return spec is not None and "directed" in inspect.signature(spec.loader).parameters


def _list_items(text: str) -> list[str]:
    """The items of a comma-separated option; an empty item between commas is an error
    (ValueError), an empty option gives no items."""
    items = text.split(",")
    if len(items) > 1 and any(not v.strip() for v in items):
        raise ValueError(f"empty item in {text!r}")
    return [v for v in items if v.strip()]


def int_list(text: str, name: str, minimum: int | None = None,
             maximum: int | None = None) -> list[int]:
    """A non-empty comma-separated list of integers in [minimum, maximum] (one-line error
    otherwise)."""
    try:
        values = [int(v) for v in _list_items(text)]
    except ValueError:
        raise fail(f"{name} must be a comma-separated list of integers, got {text!r}") from None
    if not values:
        raise fail(f"{name} needs at least one integer, got {text!r}")
    for v in values:
        if (minimum is not None and v < minimum) or (maximum is not None and v > maximum):
            bounds = (f">= {minimum}" if maximum is None else
                      f"in {minimum}..{maximum}" if minimum is not None else f"<= {maximum}")
            raise fail(f"{name} values must be {bounds}, got {v}")
    return values


def float_list(text: str, name: str, positive: bool = False) -> list[float]:
    """A non-empty comma-separated list of finite numbers (> 0 when ``positive``)."""
    import math

    try:
        values = [float(v) for v in _list_items(text)]
    except ValueError:
        raise fail(f"{name} must be a comma-separated list of numbers, got {text!r}") from None
    if not values:
        raise fail(f"{name} needs at least one number, got {text!r}")
    for v in values:
        if not math.isfinite(v) or (positive and v <= 0):
            raise fail(f"{name} values must be finite{' and > 0' if positive else ''}, "
                       f"got {v:g}")
    return values


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
    times: Any = None                        # publication times (Dataset.time_column)
    held_out: Dataset | None = None          # the data before the split ...
    held_out_positions: Any = None           # ... and the held-out documents in it


def prepare_fit_data(ds: Dataset, requires: tuple[str, ...], *, holdout: float = 0.0,
                     seed: int = 0, features: str | None = None) -> FitData:
    """The inputs ``requires`` names from a dataset; ``holdout`` > 0 keeps that fraction
    of the documents (with their links and labels) out of training; ``features`` (the
    ``--features`` option) names the metadata columns a model's document features are."""
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
    with reported_errors():
        corpus, links, labels, _ = drop_empty_documents(ds.corpus, ds.links, labels)
    if "links" in requires:
        check_usable_links(ds, links, corpus.n_docs)
    if "features" in requires:
        if corpus.metadata is None:
            raise fail(f"dataset {ds.name!r} has no document features (metadata)")
        out.features = feature_columns(corpus.metadata, features, ds.name)
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
        if "links" in requires and (links is None or links.n_links == 0):
            raise fail(f"--holdout {holdout:g} leaves no links among the "
                       f"{corpus.n_docs} training documents; a relational model needs links")
        labels = None if labels is None else labels[split.train_index]
    out.corpus, out.links, out.labels = corpus, links, labels
    if ds.time_column is not None:
        out.times = corpus.metadata[ds.time_column].to_numpy(dtype=float)
    return out


def check_usable_links(ds: Dataset, links: Any, n_docs: int) -> None:
    """A relational model needs links: one-line error (exit 1) when none are left after
    reading and after dropping empty documents, or when dropping the empty documents
    lost most of them."""
    before = 0 if ds.links is None else ds.links.n_links
    after = 0 if links is None else links.n_links
    if before == 0:
        raise fail(f"dataset {ds.name!r} has no links (0 usable links among "
                   f"{ds.corpus.n_docs} documents, e.g. an empty .cites file); a relational "
                   "model needs links (a topic model of the documents alone, e.g. `fit lda`, "
                   "does not)")
    if after == 0 or after < before / 2:
        raise fail(f"dataset {ds.name!r}: {before - after} of {before} links touch empty "
                   f"documents and were dropped with them, {after} left among {n_docs} "
                   "documents; a relational model needs the links")


@dataclass
class FitClock:
    """Wall seconds of a fit, with the part spent compiling Numba kernels apart: a first
    fit on a machine compiles them (tens of seconds; cached on disk after), which is not
    the model's training time."""

    total: float = 0.0
    compiling: float = 0.0

    @property
    def training(self) -> float:
        return max(self.total - self.compiling, 0.0)

    def describe(self) -> str:
        """``trained in 17.6 s`` (``+ 22.4 s compiling ...`` when kernels were compiled)."""
        text = f"trained in {self.training:.1f} s"
        if self.compiling >= 0.05:
            text += (f" (+ {self.compiling:.1f} s compiling Numba kernels on first use; "
                     "cached for the next runs)")
        return text


@contextlib.contextmanager
def fit_clock() -> Iterator[FitClock]:
    """Time the block; Numba's ``numba:compile`` events give the compilation time."""
    from numba.core import event

    clock = FitClock()

    def compiled(seconds: float) -> None:
        clock.compiling = seconds

    t0 = time.perf_counter()
    try:
        with event.install_timer("numba:compile", compiled):
            yield clock
    finally:
        clock.total = time.perf_counter() - t0


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


def takes_publication_time(model: Any) -> bool:
    """Whether ``model.fit`` takes ``publication_time`` (e.g. LMV)."""
    import inspect

    try:
        return "publication_time" in inspect.signature(model.fit).parameters
    except (TypeError, ValueError):
        return False


def feature_columns(metadata: Any, names: str | None, dataset: str) -> Any:
    """The columns ``names`` (comma-separated; None: all) of a dataset's metadata table,
    as the document features of a model; a one-line error names an unknown column and
    the known ones."""
    if names is None:
        return metadata
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise fail("--features names no column")
    known = [str(c) for c in metadata.columns]
    for name in wanted:
        if name not in known:
            raise fail(f"--features: dataset {dataset!r} has no metadata column {name!r}; "
                       f"its columns: {', '.join(known)}")
    return metadata[wanted]


def _features_hint(exc: BaseException, features: Any) -> str:
    """A bad-features error with the ``--features`` that would pass: the numeric
    columns of the features table."""
    message = str(exc)
    columns = getattr(features, "columns", None)
    if "features must be numbers" not in message or columns is None:
        return message
    numeric = [str(c) for c in columns if features[c].dtype.kind in "biuf"]
    if not numeric:
        return message
    return f"{message}; choose numeric columns with --features {','.join(numeric)}"


def fit_and_report(model: Any, ds: Dataset, out: Path | None, *, holdout: float = 0.0,
                   seed: int = 0, checkpoint: dict[str, Any] | None = None,
                   newer_citations: str = "error", features: str | None = None) -> Any:
    """The one scaffold of the fit commands: data -> fit -> report -> save.

    Passes the dataset's publication times (``ds.time_column``) to a model whose ``fit``
    takes ``publication_time`` (with ``newer_citations``), and attaches the dataset's
    text analyser (``ds.analyzer``) to the model, so the model file carries it.
    Reads what ``fit`` needs from ``model.fit_requires``; prints the model's summary, the
    training time (tokens per second, training pairs, training accuracy as the model
    has them), test accuracy on a dataset's test split, held-out metrics when
    ``holdout`` > 0 (:func:`topiclink.experiments.evaluation.evaluate_model`), and the
    path written.
    """
    from topiclink.experiments.runner import fit_model

    requires = tuple(getattr(model, "fit_requires", ("X",)))
    data = prepare_fit_data(ds, requires, holdout=holdout, seed=seed, features=features)
    if data.corpus is not None:
        check_model_size(getattr(model, "n_topics", None), data.corpus.n_docs,
                         data.corpus.n_words, what=f" on {data.corpus.n_docs} documents x "
                         f"{data.corpus.n_words} words")
    options = dict(checkpoint or {})
    if data.times is not None:
        if takes_publication_time(model):
            options.update(publication_time=data.times, newer_citations=newer_citations)
        else:
            typer.secho(f"note: {type(model).__name__} does not use publication times; "
                        "--time-column was read but not used", err=True)
    with reported_errors():
        try:
            with fit_clock() as clock:
                fit_model(model, data.corpus, links=data.links, y=data.labels,
                          tensor=data.tensor, features=data.features, **options)
        except ValueError as exc:  # the Python wording is translated by errors.WORDING
            hinted = _features_hint(exc, data.features)
            if hinted != str(exc):
                raise fail(hinted) from None
            raise
        if ds.analyzer is not None and hasattr(model, "set_analyzer"):
            model.set_analyzer(ds.analyzer)
    path = None
    if out is not None:
        try:
            path = model.save(out)
        except OSError as exc:
            raise fail(f"could not write the model to {out}: {exception_message(exc)}") from None
    if hasattr(model, "summary"):
        typer.echo(model.summary())
    details = _fit_details(model, data, clock.training)
    typer.echo(clock.describe() + (f" ({', '.join(details)})" if details else ""))
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
    if path is not None:
        typer.echo(f"model written to {path}")
    else:
        typer.echo("model not saved (no --out FILE given); nothing was written")
    return model


OutOpt = Annotated[Path | None, typer.Option(
    "--out", "-o", parser=path_value,
    help="The model file to write (.npz).", show_default=False)]
HoldoutOpt = Annotated[float, typer.Option(
    help="Share of the documents held out and scored.")]
FeaturesOpt = Annotated[str | None, typer.Option(
    "--features", help="The metadata columns used as document features, comma-separated "
    "(default: every column).", show_default=False)]
