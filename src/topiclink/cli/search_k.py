"""``topiclink search-k``: compare numbers of topics as R's ``stm::searchK``
(:func:`topiclink.analysis.search_k`), printing the table and writing it (CSV) and its
figure (PNG)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from topiclink.cli.common import (
    DataDirOpt,
    DatasetOpt,
    ForceOpt,
    InputOpt,
    VerboseOpt,
    VocabOpt,
    check_out_dir,
    check_out_file,
    echo_table,
    int_list,
    load_data,
    require_data,
    seed_option,
    setup_logging,
)
from topiclink.cli.errors import check, fail, path_value, reported_errors

__all__ = ["search_k_cmd"]

#: the files written into --out
TABLE_FILE = "search_k.csv"
FIGURE_FILE = "search_k.png"

SearchSeedOpt = seed_option("Seed of the document split, the completion and the fits (an "
                            "integer >= 0).")


def search_k_cmd(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    input_file: InputOpt = None,
    vocab: VocabOpt = None,
    topics: Annotated[str, typer.Option(
        "--topics", "-k", help="The numbers of topics K to compare, e.g. 5,10,20.")]
    = "5,10,20",
    model: Annotated[str, typer.Option(
        "--model", "-m", help="A paper's model: a fit command (lda), an estimator class or "
        "a paper name with a number of topics (see `topiclink models`).")] = "lda",
    max_iter: Annotated[int | None, typer.Option(
        "--max-iter", "--iterations", "-n",
        help="Iterations (default: the estimator's).")] = None,
    holdout: Annotated[float, typer.Option(
        "--holdout", help="Share of the documents held out and scored.")] = 0.2,
    fraction: Annotated[float, typer.Option(
        help="Share of each document's tokens held out for the perplexity.")] = 0.5,
    seed: SearchSeedOpt = 0,
    jobs: Annotated[int, typer.Option(
        "--jobs", "-j", help="Threads (-1: all cores) fitting the K values at once; the "
        "table does not depend on it.")] = 1,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", parser=path_value,
        help=f"Folder to write {TABLE_FILE} and {FIGURE_FILE} into (existing files are "
        "refused unless --force).")] = None,
    checkpoint_dir: Annotated[Path | None, typer.Option(
        "--checkpoint-dir", parser=path_value,
        help="Checkpoint folder of the grid: the same command run again skips the K "
        "values it finished.", show_default=False)] = None,
    force: ForceOpt = False,
    verbose: VerboseOpt = True,
) -> None:
    """Compare numbers of topics as R's stm::searchK: fit the model at every --topics K on
    the same training documents (--holdout of them held out) and print, per K, the
    held-out log-likelihood per token by document completion, the semantic coherence
    (NPMI of the 10 most probable words, gensim's c_npmi with one window per document),
    stm's exclusivity and residual dispersion, and the fit time; --out writes the table
    (CSV) and a figure of the four curves (PNG)."""
    setup_logging(verbose)
    ks = int_list(topics, "--topics", minimum=2)
    check(len(set(ks)) == len(ks), f"--topics has a K twice: {topics}")
    check(0 < holdout < 1, f"--holdout must be in (0, 1), got {holdout:g}")
    check(0 < fraction < 1, f"--fraction must be in (0, 1), got {fraction:g}")
    check(jobs >= 1 or jobs == -1, f"--jobs must be >= 1 or -1, got {jobs}")
    check(max_iter is None or max_iter >= 1, f"--iterations must be >= 1, got {max_iter}")
    if dataset is None and data is None and input_file is None:
        raise fail("give the documents: --dataset NAME, --data DIR or --input FILE")
    require_data(dataset, data, input_file)
    table_path = figure_path = None
    if out is not None:
        check_out_dir(out)
        table_path = check_out_file(out / TABLE_FILE, force=force, model=False)
        figure_path = check_out_file(out / FIGURE_FILE, force=force, model=False)
    estimator = _estimator(model, max_iter, seed)
    ds = load_data(dataset, data, input_file, vocab)
    from topiclink.analysis import search_k

    with reported_errors():
        result = search_k(estimator, ds.corpus, ks, held_out=holdout, fraction=fraction,
                          random_state=seed, n_jobs=jobs, prefer="threads",
                          checkpoint_dir=checkpoint_dir, progress=verbose)
    typer.echo(f"{type(estimator).__name__} on {ds.name}: {len(result.train_index)} "
               f"training and {len(result.test_index)} held-out documents")
    echo_table(result.table)
    if table_path is not None and figure_path is not None:
        from topiclink.experiments.runner import write_csv

        with reported_errors():
            write_csv(result.table, table_path)
            result.plot().savefig(figure_path, dpi=120)
        typer.echo(f"written {table_path} and {figure_path}")


def _estimator(name: str, max_iter: int | None, seed: int) -> Any:
    """The unfitted estimator of ``--model``: a ``fit`` command's name, a registered
    class or a paper name; one that is no topic model of documents is refused on one
    line (before any data is read)."""
    from topiclink.cli.fit import generated_commands, resolve_model

    cls = generated_commands().get(name)
    params: dict[str, Any] = {}
    if cls is None:
        cls, params = resolve_model(name)
    accepted = set(cls._get_param_names())
    if "n_topics" not in accepted or not hasattr(cls, "log_likelihood_completion"):
        raise fail(f"--model {name}: {cls.__name__} is not a topic model of documents (a "
                   "number of topics and a held-out likelihood); try lda")
    params = dict(params)
    if max_iter is not None:
        check("max_iter" in accepted, f"--iterations: {cls.__name__} has no max_iter")
        params["max_iter"] = max_iter
    if "random_state" in accepted:
        params["random_state"] = seed
    with reported_errors():
        return cls(**params)
