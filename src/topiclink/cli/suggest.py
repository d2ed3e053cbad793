"""``topiclink suggest``: links from new texts to a relational model's training documents."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from topiclink.cli.common import check_input_paths, echo_table, load_model_file, read_user_lines
from topiclink.cli.errors import check, fail, path_value, reported_errors

__all__ = ["suggest_cmd"]


def suggest_cmd(
    model_path: Annotated[Path, typer.Argument(parser=path_value,
                                               help="A saved relational model (.npz).")],
    text: Annotated[str | None, typer.Option(help="The query document's text.")] = None,
    text_file: Annotated[Path | None, typer.Option(
        "--file", parser=path_value, help="A UTF-8 text file with one query document per "
        "line (only a newline ends a query; a file that is not UTF-8 is refused).")] = None,
    top: Annotated[int, typer.Option(help="Suggestions per query.")] = 10,
    direction: Annotated[str, typer.Option(
        help="out (query cites), in (cited by the query's targets) or either.")] = "either",
) -> None:
    """Suggest links from new documents (raw text) to a relational model's training
    documents, with their titles where the training data had them.  A model fitted on
    --documents analyses the text as its training texts were (stop words, stemming) and
    warns how many words it does not know."""
    from topiclink.data.io import corpus_from_texts

    if (text is None) == (text_file is None):
        raise fail("give the query as --text or --file (one of them)")
    check(top >= 1, f"--top must be >= 1, got {top}")
    check(direction in ("out", "in", "either"),
          f"--direction must be out, in or either, got {direction!r}")
    if text_file is not None:
        if not text_file.exists():
            raise fail(f"query file not found: {text_file}")
        check_input_paths(input_file=text_file)
    elif not text.strip():
        raise fail("--text is empty")
    model = load_model_file(model_path)
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
