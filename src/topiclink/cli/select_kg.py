"""``topiclink select-kg``: choose a knowledge-graph model on the validation triples
(:func:`topiclink.experiments.select_kg_model`), printing each candidate's validation MRR,
the chosen one and its test MRR."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from topiclink.cli.common import (
    DataDirOpt,
    DatasetOpt,
    ForceOpt,
    VerboseOpt,
    check_out_file,
    echo_table,
    int_list,
    load_data,
    require_data,
    seed_option,
    setup_logging,
)
from topiclink.cli.errors import check, fail, path_value, reported_errors

__all__ = ["select_kg_cmd"]

SelectSeedOpt = seed_option("Seed of every candidate's fit (an integer >= 0).")


def select_kg_cmd(
    dataset: DatasetOpt = None,
    data: DataDirOpt = None,
    models: Annotated[str, typer.Option(
        "--models", help="Fit commands of knowledge-graph models to compare, e.g. "
        "bpbfm-em,bpbfm-patterns,bpbfm-dc.")] = "bpbfm-em,bpbfm-patterns",
    topics: Annotated[str, typer.Option(
        "--topics", "-k", help="The numbers of factors K to try, e.g. 20,50,100.")] = "50",
    patterns: Annotated[str, typer.Option(
        "--patterns", help="The pattern kinds to try for the models that take them "
        "(none, inverse, paths, paths3).")] = "paths,paths3",
    constant_rules: Annotated[str | None, typer.Option(
        "--constant-rules", help="The max_constant_rules values to try for the models "
        "that take them, e.g. 0,30 (default: each estimator's).",
        show_default=False)] = None,
    max_iter: Annotated[str | None, typer.Option(
        "--max-iter", "--iterations", "-n",
        help="Iterations of every fit, or several to choose among on the validation "
        "triples, e.g. 25,100 (default: each estimator's).", show_default=False)] = None,
    budget: Annotated[float | None, typer.Option(
        "--budget", help="CPU seconds for all fits and validations; the candidates not "
        "reached are skipped and listed.", show_default=False)] = None,
    seed: SelectSeedOpt = 0,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", parser=path_value,
        help="Write the table (CSV) to this file (an existing file is refused unless "
        "--force).", show_default=False)] = None,
    force: ForceOpt = False,
    verbose: VerboseOpt = True,
) -> None:
    """Choose a knowledge-graph model on the validation triples: fit every --models x
    --topics x --patterns (x --constant-rules, x --iterations when several) candidate
    on the training triples, print its filtered validation MRR and Hits, and score the
    best one, once, on the test triples."""
    setup_logging(verbose)
    ks = int_list(topics, "--topics", minimum=1)
    kinds = [p.strip() for p in patterns.split(",") if p.strip()]
    check(bool(kinds), "--patterns is empty")
    grid: dict[str, list[Any]] = {"n_topics": ks, "patterns": kinds}
    if constant_rules is not None:
        grid["max_constant_rules"] = int_list(constant_rules, "--constant-rules",
                                              minimum=0)
    iterations = None if max_iter is None else int_list(max_iter, "--iterations",
                                                         minimum=1)
    check(budget is None or budget > 0, f"--budget must be > 0, got {budget:g}"
          if budget is not None else "")
    if dataset is None and data is None:
        raise fail("give the triples: --dataset NAME or --data DIR (train.txt, valid.txt, "
                   "test.txt)")
    require_data(dataset, data, None)
    table_path = check_out_file(out, force=force, model=False) if out is not None else None
    if iterations is not None and len(iterations) > 1:
        grid["max_iter"] = iterations
    estimators = {name: _estimator(name, iterations and iterations[0], seed)
                  for name in (m.strip() for m in models.split(",")) if name}
    check(bool(estimators), "--models is empty")
    ds = load_data(dataset, data)
    from topiclink.experiments import candidate_grid, select_kg_model

    with reported_errors():
        from topiclink.families.bpbfm.patterns import PATTERN_KINDS

        for kind in kinds:
            check(kind in PATTERN_KINDS, f"--patterns: {kind!r} is not one of "
                  f"{', '.join(PATTERN_KINDS)}")
        candidates = candidate_grid(estimators, grid)
        result = select_kg_model(ds, candidates, budget_seconds=budget)
    typer.echo(f"{len(candidates)} candidates on {ds.name} (validation triples)")
    echo_table(result.table)
    mrr = result.test_mrr()
    tail = f"; test MRR {mrr:.4f}" if mrr is not None else "; no test triples"
    typer.echo(f"chosen: {result.best_label}{tail}")
    if table_path is not None:
        from topiclink.experiments.runner import write_csv

        with reported_errors():
            write_csv(result.table, table_path)
        typer.echo(f"written {table_path}")


def _estimator(name: str, max_iter: int | None, seed: int) -> Any:
    """The unfitted estimator of a fit command; one that is no knowledge-graph model is
    refused on one line (before any data is read)."""
    from topiclink.cli.fit import generated_commands

    commands = generated_commands()
    cls = commands.get(name)
    if cls is None:
        raise fail(f"--models: no fit command {name!r}; knowledge-graph models: "
                   + ", ".join(sorted(n for n, c in commands.items()
                                      if hasattr(c, "score_tails_batch"))))
    check(hasattr(cls, "score_tails_batch"),
          f"--models {name}: {cls.__name__} is not a knowledge-graph model")
    accepted = set(cls._get_param_names())
    params: dict[str, Any] = {}
    if max_iter is not None and "max_iter" in accepted:
        params["max_iter"] = max_iter
    if "random_state" in accepted:
        params["random_state"] = seed
    with reported_errors():
        return cls(**params)
