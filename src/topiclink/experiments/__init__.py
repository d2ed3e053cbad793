"""The runner of evaluation protocols: a grid, seeds, workers, one CSV writer, resumable.

:mod:`~topiclink.experiments.runner` runs a protocol's grid of cells (seeds from
:class:`numpy.random.SeedSequence`, models by paper name, one CSV writer),
:mod:`~topiclink.experiments.grid_checkpoint` resumes it, and
:mod:`~topiclink.experiments.registry` holds the
:class:`~topiclink.experiments.registry.ProtocolSpec` from which ``topiclink experiment
NAME`` is generated.  The papers' protocols themselves are not part of the library: a
distribution provides them through entry points (the repository's ``reproductions/``).
:func:`~topiclink.experiments.evaluation.evaluate_model` gives the held-out metrics of
one fitted model (``topiclink evaluate``);
:func:`~topiclink.experiments.select_kg.select_kg_model` chooses a knowledge-graph model
on the validation triples (``topiclink select-kg``).
"""

from topiclink.experiments.evaluation import evaluate_model
from topiclink.experiments.registry import (
    Choice,
    ProtocolSpec,
    Session,
    get_protocol,
    protocols,
    register_protocol,
    run_protocol,
)
from topiclink.experiments.runner import build_model, cell_seed, grid, run_grid, write_csv
from topiclink.experiments.select_kg import KGSelection, candidate_grid, select_kg_model

__all__ = [
    "Choice", "KGSelection", "ProtocolSpec", "Session", "build_model", "candidate_grid",
    "cell_seed", "evaluate_model", "get_protocol", "grid", "protocols", "register_protocol",
    "run_grid", "run_protocol", "select_kg_model", "write_csv"]
