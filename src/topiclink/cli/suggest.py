"""``topiclink suggest``: links from new texts to a relational model's training
documents, or the top tails (heads) of a knowledge-graph query."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer

from topiclink.cli.common import (
    DataDirOpt,
    DatasetOpt,
    check_input_paths,
    echo_table,
    load_data,
    load_model_file,
    read_user_lines,
)
from topiclink.cli.errors import check, fail, path_value, reported_errors

__all__ = ["suggest_cmd"]

_KG_QUERY = "--head H --relation R (top tails) or --tail T --relation R (top heads)"


def suggest_cmd(
    model_path: Annotated[Path, typer.Argument(
        parser=path_value, help="A saved link or knowledge-graph model (.npz).")],
    text: Annotated[str | None, typer.Option(help="The query document's text.")] = None,
    text_file: Annotated[Path | None, typer.Option(
        "--file", parser=path_value, help="A UTF-8 text file with one query document per "
        "line (only a newline ends a query; a file that is not UTF-8 is refused).")] = None,
    top: Annotated[int, typer.Option(help="Suggestions per query.")] = 10,
    direction: Annotated[str, typer.Option(
        help="out (query cites), in (cited by the query's targets) or either.")] = "either",
    head: Annotated[str | None, typer.Option(
        help="Knowledge-graph model: the head of (H, R, ?), whose top tails are listed "
             "(a name or an index).")] = None,
    tail: Annotated[str | None, typer.Option(
        help="Knowledge-graph model: the tail of (?, R, T), whose top heads are listed.")
    ] = None,
    relation: Annotated[str | None, typer.Option(
        help="Knowledge-graph model: the relation R of the query.")] = None,
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
) -> None:
    """Suggest links from new documents (raw text) to a relational model's training
    documents, with their titles where the training data had them.  A model fitted on
    --documents analyses the text as its training texts were (stop words, stemming) and
    warns how many words it does not know.  A knowledge-graph model (fit bpbfm,
    bpbfm-em, bpbfm-dc): the top tails of --head H --relation R, or the top heads of
    --tail T --relation R, with their scores (probabilities); --dataset/--data leaves out
    the answers already among the data's training triples."""
    check(top >= 1, f"--top must be >= 1, got {top}")
    check(direction in ("out", "in", "either"),
          f"--direction must be out, in or either, got {direction!r}")
    if head is not None or tail is not None or relation is not None:
        if text is not None or text_file is not None:
            raise fail("give --text/--file (a link model) or --head/--tail with --relation "
                       "(a knowledge-graph model), not both")
        if direction != "either":
            raise fail("--direction is for a link model's --text/--file queries: a "
                       "knowledge-graph query lists tails with --head H, heads with --tail T")
        _suggest_entities(model_path, head, tail, relation, top, dataset, data)
        return
    if dataset is not None or data is not None:
        raise fail("--dataset/--data filter a knowledge-graph query: give them with "
                   f"{_KG_QUERY}")
    if text is None and text_file is None:
        model = load_model_file(model_path)
        if hasattr(model, "suggest_tails"):
            raise fail(f"{model_path} holds a {type(model).__name__}, a knowledge-graph "
                       f"model: give {_KG_QUERY}")
    _suggest_links(model_path, text, text_file, top, direction)


def _suggest_links(model_path: Path, text: str | None, text_file: Path | None, top: int,
                   direction: str) -> None:
    """The links of new texts to a link model's training documents (``--text`` or
    ``--file``)."""
    from topiclink.data.io import corpus_from_texts

    if (text is None) == (text_file is None):
        raise fail("give the query as --text or --file (one of them)")
    if text_file is not None:
        if not text_file.exists():
            raise fail(f"query file not found: {text_file}")
        check_input_paths(input_file=text_file)
    elif not text.strip():
        raise fail("--text is empty")
    model = load_model_file(model_path)
    if hasattr(model, "suggest_tails"):
        raise fail(f"{model_path} holds a {type(model).__name__}, a knowledge-graph model, "
                   f"which takes no --text/--file: give {_KG_QUERY}")
    if not hasattr(model, "suggest_links"):
        raise fail(f"{model_path} holds a {type(model).__name__}, which has no links; "
                   "fit a relational model (topiclink fit rtm)")
    if text_file is not None:
        texts = [t for t in read_user_lines(text_file, "--file", "query") if t.strip()]
        if not texts:
            raise fail(f"query file {text_file} has no text")
    else:
        texts = [text]
    with reported_errors():
        analyzer = getattr(model, "analyzer_", None)
        if analyzer is not None:  # the analysis of the training texts (stemming...)
            queries = model.count_texts(texts)
            unknown = int(analyzer.last_unknown_)
            if unknown:
                total = unknown + queries.n_tokens
                typer.secho(f"warning: {unknown} of the {total} words of the "
                            f"quer{'y' if len(texts) == 1 else 'ies'} (stop words aside) "
                            f"are not in the model's vocabulary of "
                            f"{len(model.vocabulary_)} terms; they are not counted",
                            err=True, fg=typer.colors.YELLOW)
        else:
            queries = corpus_from_texts(texts, vocabulary=list(model.vocabulary_))
        empty = queries.empty_documents()
        if empty.size:
            raise fail(f"query {int(empty[0]) + 1} has no word of the model's vocabulary")
        table = model.suggest_links(queries, top=top, direction=direction)
    echo_table(table)


def _suggest_entities(model_path: Path, head: str | None, tail: str | None,
                      relation: str | None, top: int, dataset: str | None,
                      data: Path | None) -> None:
    """The top tails of (head, relation, ?) or heads of (?, relation, tail) of a
    knowledge-graph model, the data's training triples left out where it is given."""
    if (head is None) == (tail is None) or relation is None:
        raise fail(f"a knowledge-graph query is {_KG_QUERY}")
    model = load_model_file(model_path)
    if not hasattr(model, "suggest_tails"):
        raise fail(f"{model_path} holds a {type(model).__name__}, which has no entities: "
                   "--head/--tail/--relation query a knowledge-graph model (topiclink fit "
                   "bpbfm); give the query documents as --text or --file")
    exclude, source = None, ""
    if dataset is not None or data is not None:
        ds = load_data(dataset, data)
        exclude = (ds.tensor or {}).get("train")
        if exclude is None:
            raise fail(f"dataset {ds.name!r} has no training triples to leave out")
        source = f"{ds.name}'s {exclude.n_entries} training triples"
    n_entities = len(model.entity_names_)      # every candidate: the count left out
    with reported_errors():
        if head is not None:
            table = model.suggest_tails(_name_or_index(head, model.entity_names_),
                                        _name_or_index(relation, model.relation_names_),
                                        n_entities, exclude=exclude)
            query, answers = f"({head!r}, {relation!r}, ?)", "tails"
        else:
            table = model.suggest_heads(_name_or_index(relation, model.relation_names_),
                                        _name_or_index(tail, model.entity_names_),
                                        n_entities, exclude=exclude)
            query, answers = f"(?, {relation!r}, {tail!r})", "heads"
    left_out = (f"{n_entities - len(table)} known {answers} left out (those in {source})"
                if exclude is not None else "nothing left out (--dataset/--data would leave "
                "out the training triples)")
    typer.echo(f"top {answers} of {query} by {type(model).__name__} from {model_path}; "
               f"{left_out}:")
    echo_table(table.head(top))


def _name_or_index(value: str, names: Iterable[object]) -> str | int:
    """A command-line entity or relation: its name where the model has it, else an index
    where it is a whole number (WN18RR's entity names are digits: the name wins), else
    the text (refused by the model with its did-you-mean)."""
    if not value.isdigit() or value in {str(n) for n in names}:
        return value
    return int(value)
