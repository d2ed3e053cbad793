"""The papers' evaluation protocols as functions returning tidy tables (pandas).

Every protocol runs on :mod:`topiclink.experiments.runner` (grid, workers, seeds from
:class:`numpy.random.SeedSequence`, models by paper name, one CSV writer);
:func:`~topiclink.experiments.evaluation.evaluate_model` gives the held-out metrics of
one fitted model.  Each protocol module also registers a
:class:`~topiclink.experiments.registry.ProtocolSpec` (its options and its steps), from
which ``topiclink experiment NAME`` is generated and which
:func:`~topiclink.experiments.registry.run_protocol` runs.
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
from topiclink.families import exports, public_names

__all__ = [
    "Choice", "ProtocolSpec", "Session", "build_model", "cell_seed", "evaluate_model",
    "get_protocol", "grid", "protocols", "register_protocol", "run_grid", "run_protocol",
    "write_csv"]
__getattr__, __dir__ = exports(__name__, __all__)
__all__ += public_names(__name__)   # the families' names
