"""``--documents FILE [--edges FILE]``: the user's own documents and citations as a data
source of the fit commands.

:func:`document_options` adds the options (columns, time format, id rule, edge direction
and header, text analysis, the limit on lost links) to a command that takes a ``source``
parameter, and gives it a :class:`DocumentSource` (``None`` without ``--documents``).
:meth:`DocumentSource.check` checks every option before any data is read;
:meth:`DocumentSource.load` reads the files with
:func:`~topiclink.data.io.documents.read_documents` /
:func:`~topiclink.data.io.documents.read_edges`, joins them with
:func:`~topiclink.data.linked.linked_corpus`, prints what was read and dropped, and
returns a :class:`~topiclink.datasets.base.Dataset` that carries the fitted analyser
(saved with the model) and the publication times (passed to models that take them).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from topiclink.cli import errors
from topiclink.cli.errors import check, exception_message, fail, one_line, path_value
from topiclink.cli.help import DOCUMENT_PANEL

if TYPE_CHECKING:
    from topiclink.data.analyzer import TextAnalyzer
    from topiclink.datasets.base import Dataset

__all__ = ["DocumentSource", "document_options", "TIME_COLUMN", "EDGE_DIRECTIONS"]

#: The corpus metadata column of the parsed publication times (fractional years).
TIME_COLUMN = "publication_time"

EDGE_DIRECTIONS = ("source-cites-target", "target-cites-source", "undirected")

# the Python names in the data layer's messages -> the options of this command line
_OPTION_NAMES = (("normalize_ids=", "--id-rule "), (" or a callable", ""),
                 ("check normalize_ids", "check --id-rule"),
                 ("max_lost=", "--max-lost "),
                 ("header=False", "--no-edges-header"), ("header=True", "--edges-header"),
                 ("pass encoding=", "convert the file to UTF-8"))


@dataclass
class DocumentSource:
    """The ``--documents`` options of a fit command (see :func:`document_options`)."""

    documents: Path
    edges: Path | None = None
    id_column: str = "id"
    text_column: str = "text"
    title_column: str | None = None
    label_column: str | None = None
    time_column: str | None = None
    time_format: str | None = None
    id_rule: str | None = None
    edge_direction: str = "source-cites-target"
    #: None: detected (read_edges' ``header=None``)
    edges_header: bool | None = None
    stemmer: str = "none"
    stop_words: str = "english"
    min_df: int = 1
    max_features: int | None = None
    max_lost: float = 0.01
    newer_citations: str = "error"
    #: more columns kept as the documents' metadata (not an option: e.g. the column
    #: ``topiclink report --group-column`` names)
    extra_columns: tuple[str, ...] = ()

    # ------------------------------------------------------------------ checks
    def check(self, *, requires: tuple[str, ...] = ("X",)) -> None:
        """Every option, before any data is read (one-line error, exit 1); ``requires``:
        the model's ``fit_requires`` (links need ``--edges``; labels, tensors and
        document features are not read from --documents)."""
        from topiclink.data.dates import TIME_FORMATS, parse_times
        from topiclink.data.ids import id_normalizer

        for option, path in (("--documents", self.documents), ("--edges", self.edges)):
            if path is None:
                continue
            if str(path).strip() in ("", "."):
                raise fail(f"{option} needs a file name, got {str(path)!r}")
            if not path.exists():
                raise fail(f"{option} file not found: {path}")
            if option == "--edges" and path.is_dir():
                raise fail(f"--edges {path} is a directory; give the edge-list file")
        if "y" in requires and self.label_column is None:
            raise fail("this model learns from labels: name the column of each document's "
                       "class with --label-column")
        other = [need for need in requires if need not in ("X", "links", "y")]
        if other:
            what = {"y": "labels", "tensor": "a relational tensor",
                    "features": "document features"}.get(other[0], other[0])
            raise fail(f"this model needs {what}, which --documents does not provide; use "
                       "--dataset or --data")
        if self.edges_header is not None and self.edges is None:
            flag = "--edges-header" if self.edges_header else "--no-edges-header"
            raise fail(f"{flag} describes --edges FILE, which was not given")
        if "links" in requires and self.edges is None:
            raise fail("this model learns from citations: give the edge list with --edges "
                       "FILE (one 'citing cited' pair per line)")
        for option, value in (("--id-column", self.id_column),
                              ("--text-column", self.text_column),
                              ("--title-column", self.title_column),
                              ("--label-column", self.label_column),
                              ("--time-column", self.time_column)):
            check(value is None or bool(value.strip()), f"{option} needs a column name")
        if self.time_column is not None and self.time_format is None:
            raise fail(f"--time-column {self.time_column} needs --time-format: one of "
                       f"{', '.join(TIME_FORMATS)} or a strptime pattern such as '%d/%m/%Y'")
        if self.time_format is not None:
            if self.time_column is None:
                raise fail("--time-format needs --time-column (the column of the times)")
            try:
                parse_times([], self.time_format)
            except ValueError as exc:
                raise fail(f"--time-format: {exc}") from None
        try:
            id_normalizer(self.id_rule)
        except ValueError as exc:
            message = one_line(str(exc)).replace("normalize_ids ", "")
            raise fail(f"--id-rule: {message.replace(', a callable or None', '')}") from None
        check(self.edge_direction in EDGE_DIRECTIONS,
              f"--edge-direction must be one of {', '.join(EDGE_DIRECTIONS)}, got "
              f"{self.edge_direction!r}")
        check(self.stop_words in ("english", "none"),
              f"--stop-words must be english or none, got {self.stop_words!r}")
        check(self.min_df >= 1, f"--min-df must be >= 1, got {self.min_df}")
        check(self.max_features is None or self.max_features >= 1,
              f"--max-features must be >= 1, got {self.max_features}")
        check(0 <= self.max_lost <= 1,
              f"--max-lost must be a fraction in [0, 1], got {self.max_lost:g}")
        check(self.newer_citations in ("error", "drop"),
              f"--newer-citations must be error or drop, got {self.newer_citations!r}")
        self.analyzer()

    def analyzer(self) -> TextAnalyzer:
        """The unfitted analyser of ``--stemmer``, ``--stop-words``, ``--min-df`` and
        ``--max-features`` (one-line error for a bad value or a missing stemmer)."""
        from topiclink.data.analyzer import STEMMERS, TextAnalyzer

        stemmer = None if self.stemmer == "none" else self.stemmer
        check(stemmer is None or stemmer in STEMMERS,
              f"--stemmer must be none or one of {', '.join(STEMMERS)}, got {self.stemmer!r}")
        try:
            return TextAnalyzer(stemmer=stemmer, min_df=self.min_df,
                                max_features=self.max_features,
                                stop_words=None if self.stop_words == "none" else "english")
        except (ImportError, ValueError) as exc:
            raise fail(f"--stemmer {self.stemmer}: {exc}") from None

    # ------------------------------------------------------------------ reading
    def load(self, *, fit_before: float | None = None) -> Dataset:
        """Read, join and count (prints the account of what was read and dropped); a
        one-line error for bad input (a missing column with the columns there are,
        more links lost to unknown ids and dropped documents than ``--max-lost`` with
        counts and examples, an unparsable date with its value and row).

        ``fit_before`` (a time split's cutoff, fractional years): the documents are
        ordered by time, then id (so the row order of the file does not matter) and the
        analyser is fitted on the documents before it only (the test documents are
        counted over the training vocabulary, as in the LMV paper's protocol)."""
        import numpy as np

        from topiclink.data.corpus import Corpus
        from topiclink.data.io.documents import EdgeList, read_documents, read_edges
        from topiclink.data.linked import linked_corpus
        from topiclink.datasets.base import Dataset

        with _data_errors():
            docs = read_documents(self.documents, id_column=self.id_column,
                                  text_column=self.text_column,
                                  title_column=self.title_column,
                                  time_column=self.time_column, time_format=self.time_format,
                                  metadata_columns=([self.label_column]
                                                    if self.label_column else [])
                                  + [c for c in self.extra_columns
                                     if c != self.label_column])
            fit_on = None
            if fit_before is not None:
                docs = docs.sorted_by_time()
                assert docs.times is not None
                fit_on = docs.times < fit_before
                if not fit_on.any():
                    raise ValueError(f"no document of {self.documents} is older than the "
                                     f"cutoff ({_earliest(docs.times)} is the earliest)")
            if self.edges is not None:
                edges = read_edges(self.edges, direction=self.edge_direction,  # type: ignore
                                   header=self.edges_header, known_ids=docs.ids,
                                   normalize_ids=self.id_rule)
            else:  # documents only (LDA): no citations to join
                none = np.zeros(0, dtype=str)
                edges = EdgeList(none, none, np.zeros(0, dtype=np.int64),
                                 source_file="(no --edges)")
            linked = linked_corpus(docs, edges, analyzer=self.analyzer(),
                                   normalize_ids=self.id_rule, max_lost=self.max_lost,
                                   fit_on=fit_on, name=self.documents.stem)
        typer.echo(self.account(linked.report, linked.corpus.n_words, edges.header))
        corpus = linked.corpus
        if linked.times is not None:
            meta = linked.metadata.copy()
            meta[TIME_COLUMN] = linked.times
            corpus = Corpus(corpus.counts, vocabulary=corpus.vocabulary,
                            doc_ids=corpus.doc_ids, titles=corpus.titles, metadata=meta,
                            name=corpus.name)
        labels = label_names = None
        if self.label_column is not None:
            labels, label_names = _labels(linked.metadata, self.label_column,
                                          corpus.doc_ids, self.documents)
        return Dataset(name=self.documents.stem, corpus=corpus,
                       links=linked.links if self.edges is not None else None,
                       labels=labels, label_names=label_names,
                       path=self.documents, analyzer=linked.analyzer,
                       time_column=TIME_COLUMN if linked.times is not None else None)

    def account(self, report: dict[str, int], n_terms: int,
                header: list[str] | None = None) -> str:
        """One line: what was read (and the edge list's header line, if any), what was
        dropped and why, what is left."""
        r = report
        read = f"read {r['documents_read']} documents"
        if self.edges is not None:
            read += f" and {r['edges_read']} edges"
            if header is not None:
                read += f" (header line: {', '.join(header)})"
        dropped = [f"{r[key]} {what}" for key, what in (
            ("unknown_id_edges", "edges naming unknown ids"),
            ("self_citations", "self-citations"), ("duplicate_edges", "repeated edges"),
            ("empty_documents", "documents without a vocabulary word"),
            ("links_of_empty_documents", "links of those documents")) if r.get(key)]
        kept = f"{r['documents']} documents"
        if self.edges is not None:
            kept += f", {r['links']} links"
        return (f"{read}; dropped {', '.join(dropped) if dropped else 'nothing'}; "
                f"kept {kept}, {n_terms} terms")


def _earliest(times: Any) -> str:
    from topiclink.data.dates import format_year

    return format_year(float(min(times)))


def _labels(metadata: Any, column: str, doc_ids: Any, path: Path) -> tuple[Any, Any]:
    """The class name of each document (so the model's ``classes_`` are the names) and
    the sorted class names of ``--label-column``; documents without a label, or a
    single class, are a one-line error (counts and example ids)."""
    import numpy as np

    values = metadata[column]
    text = values.astype(object).where(values.notna(), "").astype(str).str.strip()
    missing = np.flatnonzero((text == "").to_numpy())
    if missing.size:
        ids = ", ".join(str(i) for i in np.asarray(doc_ids)[missing[:3]])
        raise fail(f"{path}: {missing.size} of {len(text)} documents have no label in column "
                   f"{column!r} (e.g. {ids}); give every document a class or remove those "
                   "rows")
    names, codes = np.unique(text.to_numpy(dtype=str), return_inverse=True)
    if names.size < 2:
        raise fail(f"{path}: column {column!r} holds one class ({str(names[0])!r}); a "
                   "supervised model needs at least two")
    return names[codes], names


errors.WORDING.extend(_OPTION_NAMES)    # one translation: errors.cli_wording


@contextlib.contextmanager
def _data_errors() -> Iterator[None]:
    """Bad input -> one line (exit 1) naming this command line's options where the data
    layer's message names its Python arguments (``--id-rule`` for ``normalize_ids=``)."""
    try:
        yield
    except (ValueError, TypeError, OSError, ImportError) as exc:
        if errors.DEBUG:
            raise
        raise fail(exception_message(exc)) from None   # fail speaks the CLI's words


# ---------------------------------------------------------------------- the options
_OPTIONS: dict[str, Any] = {
    "documents": Annotated[Path | None, typer.Option(
        "--documents", parser=path_value,
        help="Your own table (.csv, .jsonl...) or text folder.", show_default=False)],
    "edges": Annotated[Path | None, typer.Option(
        "--edges", parser=path_value,
        help="Citations between --documents: one 'citing cited' pair of ids per "
        "line (whitespace, .csv or .tsv; .gz too; '#' comments).", show_default=False)],
    "id_column": Annotated[str, typer.Option(help="--documents: the id column.")],
    "text_column": Annotated[str, typer.Option(help="--documents: the text column.")],
    "title_column": Annotated[str | None, typer.Option(
        help="--documents: a title column (shown by `topiclink suggest`).",
        show_default=False)],
    "label_column": Annotated[str | None, typer.Option(
        help="--documents: the column of each document's class (supervised models: fit "
        "slda).", show_default=False)],
    "time_column": Annotated[str | None, typer.Option(
        help="--documents: the publication time column (with --time-format); passed to "
        "models that use times (LMV: a document cites only older ones).",
        show_default=False)],
    "time_format": Annotated[str | None, typer.Option(
        help="How --time-column is written: iso, year, yymm (arXiv 0001 = Jan 2000), "
        "yyyymm, number, or a strptime pattern such as %d/%m/%Y.", show_default=False)],
    "id_rule": Annotated[str | None, typer.Option(
        help="Match ids written differently in the two files: zero-pad:N (1001 -> "
        "0001001 for N=7), strip-zeros, lower, after-slash:RULE (RULE on the part after "
        "the last /: after-slash:strip-zeros matches hep-th/440 and hep-th/0440), or "
        "rules joined by + (default: exactly as written).", show_default=False)],
    "edge_direction": Annotated[str, typer.Option(
        help="How to read an edge line 'a b': source-cites-target (a cites b), "
        "target-cites-source (LINQS .cites) or undirected.")],
    "edges_header": Annotated[bool | None, typer.Option(
        "--edges-header/--no-edges-header",
        help="The first line of --edges names the columns / is an edge (default: "
        "detected, e.g. citing,cited, and said so).", show_default=False)],
    "stemmer": Annotated[str, typer.Option(
        help="none, english (Snowball Porter2) or porter; needs pip install "
        "'topiclink[text]'.")],
    "stop_words": Annotated[str, typer.Option(help="english or none.")],
    "min_df": Annotated[int, typer.Option(
        help="Keep terms found in at least this many documents.")],
    "max_features": Annotated[int | None, typer.Option(
        help="Keep only the most frequent terms.", show_default=False)],
    "max_lost": Annotated[float, typer.Option(
        help="Largest fraction of the edges that may be lost, to ids that are not "
        "documents or with documents dropped for having no word (empty texts): up to it "
        "dropped and counted, above it the command stops with the counts.")],
    "newer_citations": Annotated[str, typer.Option(
        help="With --time-column, for models using times: a citation of a newer document "
        "is an error, or (drop) dropped and counted.")],
}


# every option but the two files is shown by --help-all, under its own heading
for _name, _annotation in _OPTIONS.items():
    if _name not in ("documents", "edges"):
        _annotation.__metadata__[0].rich_help_panel = DOCUMENT_PANEL


def document_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a fit command the ``--documents`` options.

    ``command`` takes a keyword ``source: DocumentSource | None``; the decorated command
    shows the options of :class:`DocumentSource` in its place (with its defaults) and
    passes ``source=None`` when ``--documents`` is not given (the other options must
    then keep their defaults).
    """
    defaults = {f.name: f.default for f in fields(DocumentSource)}
    defaults["documents"] = None

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in _OPTIONS}
        source = None
        if given["documents"] is not None:
            source = DocumentSource(**given)
        else:
            changed = [name for name in _OPTIONS if given[name] != defaults[name]]
            if changed:
                option = {"edges_header": "--edges-header"}.get(
                    changed[0], "--" + changed[0].replace("_", "-"))
                raise fail(f"{option} describes --documents FILE, which was not given")
        return command(**kwargs, source=source)

    signature = inspect.signature(command, eval_str=True)
    params = [p for p in signature.parameters.values() if p.name != "source"]
    added = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=defaults[name],
                               annotation=annotation)
             for name, annotation in _OPTIONS.items()]
    keep = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params]
    wrapper.__signature__ = signature.replace(parameters=[*keep, *added])  # type: ignore
    wrapper.__annotations__ = {**{p.name: p.annotation for p in keep}, **_OPTIONS}
    return wrapper
