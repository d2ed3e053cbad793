"""The papers' evaluation protocols as functions returning tidy tables (pandas).

Every protocol runs on :mod:`topiclink.experiments.runner` (grid, workers, seeds from
:class:`numpy.random.SeedSequence`, models by paper name, one CSV writer);
:func:`~topiclink.experiments.evaluation.evaluate_model` gives the held-out metrics of
one fitted model.
"""

from topiclink.experiments.evaluation import evaluate_model
from topiclink.experiments.grtm import GRTMSettings, run_grtm_experiment, summarise
from topiclink.experiments.runner import build_model, cell_seed, grid, run_grid, write_csv

__all__ = ["GRTMSettings", "build_model", "cell_seed", "evaluate_model", "grid", "run_grid",
           "run_grtm_experiment", "summarise", "write_csv"]
