"""``topiclink demo``: relational topic models on the bundled Cora (no data needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from topiclink.cli.common import (
    SeedOpt,
    VerboseOpt,
    check_model_size,
    check_out_dir,
    setup_logging,
)
from topiclink.cli.errors import check, path_value

__all__ = ["demo_cmd"]


def demo_cmd(
    topics: Annotated[int, typer.Option("--topics", "-k", help="Number of topics K.")] = 15,
    iterations: Annotated[int, typer.Option("--iterations", "-n",
                                            help="Gibbs iterations.")] = 150,
    seed: SeedOpt = 0,
    out: Annotated[Path, typer.Option("--out", parser=path_value,
                                      help="Folder for the figure.")] = Path("."),
    verbose: VerboseOpt = False,
) -> None:
    """Relational topic models on the bundled Cora: held-out link prediction against
    Var-RTM and random, link suggestions with titles, and the weight-matrix figure; then
    topic-adjusted visibility (LMV) on 400 papers' citations with its two figures."""
    from topiclink.demo import run_demo

    setup_logging(verbose)
    check(topics >= 2, f"--topics must be >= 2, got {topics}")
    check_model_size(topics)
    check(iterations >= 1, f"--iterations must be >= 1, got {iterations}")
    check_out_dir(out)
    run_demo(topics=topics, iterations=iterations, seed=seed, out=out, verbose=verbose,
             echo=typer.echo)
