"""One runner for the papers' protocols: a grid of cells, seeds, workers, rows, one CSV.

A protocol is a function ``run_cell(cell, context) -> row | None`` plus a grid of cells
(e.g. model x K x c x fold).  :func:`run_grid` runs every cell, sequentially or in
``workers`` joblib processes, and collects the rows into a :class:`pandas.DataFrame` in
the order of the sequential loop; :func:`write_csv` is the one CSV writer (atomic: a
temporary file renamed over the target), also used after every row so that an
interrupted run leaves the rows it finished.

Seeds.  A cell's seed is derived by :func:`cell_seed` through
:class:`numpy.random.SeedSequence` from one base seed and the cell's coordinates on the
protocol's ``seed_axes`` (never from its position in the grid), so it does not depend on
which other cells run (``--only-folds``, another list of K) nor on ``workers``: the rows
are the same for any number of workers; only the timings feel the shared machine.  A
protocol that leaves an axis out of ``seed_axes`` gives every value on that axis the same
seed: the gRTM protocol seeds by (fold, K), so the models and the values of c it compares
in a cell share their random numbers (a paired comparison).

Models.  :func:`build_model` builds a model by name: a protocol-local factory registered
with :func:`register_model` (baselines that are not topiclink estimators, e.g. LDA + SVM
or tomotopy), else the estimator a paper calls that name
(:func:`topiclink.estimators.base.make_paper_model`).  :func:`fit_model` calls ``fit`` with
what the model's ``fit_requires`` declares (documents, links, labels, tensor, features).

Plans.  Inside a :func:`planning` block (``topiclink experiment NAME --plan``),
:func:`run_grid` fits nothing: it works out the cells, their seeds and which of them a
checkpoint (or a results CSV) already holds, and raises :class:`GridPlanned` with them
instead of running any; :func:`fit_model` refuses to fit (a protocol that fits outside
its grid has no plan).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import itertools
import logging
import numbers
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from topiclink.experiments.grid_checkpoint import GridCheckpoint, current_grid_checkpoint

__all__ = ["Cell", "CSVRows", "GridPlanned", "PlannedCell", "build_model", "cell_seed",
           "fit_model", "grid", "is_planning", "model_class", "model_fit_requires",
           "model_names", "model_params", "plan_lines", "planning", "register_model",
           "run_grid", "unregister_model", "write_csv"]

logger = logging.getLogger(__name__)

#: A protocol-local model factory: keyword parameters -> an object with ``fit``.
ModelFactory = Callable[..., Any]


@dataclass(frozen=True)
class _LocalModel:
    factory: ModelFactory
    params: frozenset[str] | None   # accepted keywords (None: any)
    fit_requires: tuple[str, ...]


_LOCAL_MODELS: dict[str, _LocalModel] = {}


# ---------------------------------------------------------------------- the model table
def register_model(name: str, factory: ModelFactory, *, params: Iterable[str] | None = None,
                   fit_requires: Sequence[str] = ("X", "y"), replace: bool = False) -> None:
    """Register a protocol-local model (a baseline that is not a topiclink estimator).

    ``factory(**params)`` builds it; ``params`` lists the keywords it accepts (None: any);
    ``fit_requires`` what its ``fit`` needs, as an estimator's declaration.  A local name
    is found before the paper names of :func:`~topiclink.estimators.base.paper_models`.
    """
    if name in _LOCAL_MODELS and not replace:
        known = _LOCAL_MODELS[name]
        if known.factory is factory:
            return
        raise ValueError(f"model {name!r} is already registered (replace=True to replace it)")
    _LOCAL_MODELS[name] = _LocalModel(factory, None if params is None else frozenset(params),
                                      tuple(fit_requires))


def unregister_model(name: str) -> None:
    """Remove a protocol-local model (tests)."""
    _LOCAL_MODELS.pop(name, None)


def _paper_table() -> dict[str, tuple[type, dict[str, Any]]]:
    from topiclink.estimators.base import paper_models

    return paper_models()


def model_names() -> list[str]:
    """Every name :func:`build_model` knows: local models, then the paper names."""
    return [*_LOCAL_MODELS, *(n for n in _paper_table() if n not in _LOCAL_MODELS)]


def model_class(name: str) -> type | None:
    """The estimator class behind a paper name (None for a local factory)."""
    if name in _LOCAL_MODELS:
        return None
    table = _paper_table()
    if name not in table:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(model_names())}")
    return table[name][0]


def model_params(name: str) -> frozenset[str] | None:
    """The constructor keywords model ``name`` accepts (None: a factory taking any)."""
    if name in _LOCAL_MODELS:
        return _LOCAL_MODELS[name].params
    cls = model_class(name)
    assert cls is not None
    return frozenset(cls._get_param_names())


def model_fit_requires(name: str) -> tuple[str, ...]:
    """What ``fit`` of model ``name`` needs (its ``fit_requires``)."""
    if name in _LOCAL_MODELS:
        return _LOCAL_MODELS[name].fit_requires
    cls = model_class(name)
    return tuple(getattr(cls, "fit_requires", ("X",)))


def build_model(name: str, params: Mapping[str, Any] | None = None,
                optional: Mapping[str, Any] | None = None) -> Any:
    """Build model ``name`` with ``params`` (all must be accepted) and those of
    ``optional`` that it accepts (protocol settings shared by models that differ in
    which of them they have, e.g. ``evaluate_every`` or ``negative_ratio``)."""
    params = dict(params or {})
    accepted = model_params(name)
    if optional:
        params.update({k: v for k, v in optional.items()
                       if k not in params and (accepted is None or k in accepted)})
    if accepted is not None:
        unknown = sorted(set(params) - accepted)
        if unknown:
            raise ValueError(f"model {name!r} has no parameter {unknown[0]!r}; its "
                             f"parameters: {', '.join(sorted(accepted))}")
    if name in _LOCAL_MODELS:
        return _LOCAL_MODELS[name].factory(**params)
    from topiclink.estimators.base import make_paper_model

    return make_paper_model(name, **params)


def fit_model(model: Any, X: Any = None, *, links: Any = None, y: Any = None,
              tensor: Any = None, features: Any = None, **fit_options: Any) -> Any:
    """``model.fit`` with the inputs its ``fit_requires`` declares (default: ``X``).

    Documents go first (positional), labels second; links, tensor and features as
    keywords (``fit(X, links=...)``, ``fit(X, y)``, ``fit(tensor)``,
    ``fit(X, features=...)``).  A declared input that is None raises a one-line
    ValueError.  ``fit_options`` (``checkpoint``, ``checkpoint_every``) go to ``fit``.
    """
    if is_planning():
        raise RuntimeError(f"{type(model).__name__} would be fitted outside the grid of "
                           "a plan; a protocol that fits outside run_grid needs a cells "
                           "step for --plan")
    requires = tuple(getattr(model, "fit_requires", ("X",)))
    given = {"X": X, "links": links, "y": y, "tensor": tensor, "features": features}
    missing = [k for k in requires if given[k] is None]
    if missing:
        what = {"X": "documents", "links": "links", "y": "labels", "tensor": "a tensor",
                "features": "document features"}
        raise ValueError(f"{type(model).__name__} needs {what[missing[0]]} to fit")
    args: list[Any] = []
    if "X" in requires:
        args.append(X)
    elif "tensor" in requires:
        args.append(tensor)
    if "y" in requires:
        args.append(y)
    kwargs = {k: given[k] for k in ("links", "features") if k in requires}
    if "tensor" in requires and "X" in requires:
        kwargs["tensor"] = tensor
    return model.fit(*args, **kwargs, **fit_options)


# ---------------------------------------------------------------------- grid and seeds
@dataclass(frozen=True)
class Cell:
    """One configuration of a grid: its coordinates (axis -> value) and its seed."""

    coords: dict[str, Any]
    seed: int = 0
    index: int = field(default=0, compare=False)

    def __getitem__(self, axis: str) -> Any:
        return self.coords[axis]

    def get(self, axis: str, default: Any = None) -> Any:
        return self.coords.get(axis, default)


AxisValues = Iterable[Any] | Callable[[dict[str, Any]], Iterable[Any]]


def grid(axes: Mapping[str, AxisValues]) -> list[dict[str, Any]]:
    """The cells of a grid, first axis outermost.

    An axis's values may be a callable of the coordinates chosen so far (the axes before
    it), e.g. ``"c": lambda cell: c_values if has_c(cell["model"]) else [nan]``.
    """
    cells: list[dict[str, Any]] = [{}]
    for axis, values in axes.items():
        nxt = []
        for partial in cells:
            vals = values(partial) if callable(values) else values
            nxt.extend({**partial, axis: v} for v in vals)
        cells = nxt
    return cells


def _key(value: Any) -> int:
    """A coordinate as a non-negative integer for a SeedSequence spawn key (numbers by
    value, so 4, 4.0 and numpy's 4 agree; anything else by a hash of its text)."""
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, numbers.Integral):
        if int(value) >= 0:
            return int(value)
        text = f"int:{int(value)}"
    elif isinstance(value, numbers.Real):
        f = float(value)
        if f.is_integer() and f >= 0:
            return int(f)
        text = f"float:{f.hex()}"
    else:
        text = value if isinstance(value, str) else repr(value)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


def cell_seed(base_seed: int, coords: Mapping[str, Any],
              axes: Sequence[str] | None = None) -> int:
    """The seed of a cell: ``SeedSequence(base_seed, spawn_key=coordinates)`` -> 63 bits.

    ``axes`` picks (and orders) the coordinates that enter the seed (default all, in
    sorted order); each enters as (hash of the axis name, value), so the seed depends on
    the coordinates only, never on the other cells of a run.
    """
    names = sorted(coords) if axes is None else list(axes)
    missing = [a for a in names if a not in coords]
    if missing:
        raise KeyError(f"seed axis {missing[0]!r} is not a coordinate of the cell")
    key = tuple(itertools.chain.from_iterable((_key(a), _key(coords[a])) for a in names))
    ss = np.random.SeedSequence(int(base_seed), spawn_key=key)
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))


# ---------------------------------------------------------------------- CSV
def write_csv(table: pd.DataFrame | Sequence[Mapping[str, Any]], path: str | os.PathLike[str]
              ) -> Path:
    """Write rows (a DataFrame or a list of dicts) to ``path`` atomically: a temporary
    file in the same folder, then a rename, so a reader never sees half a table."""
    path = Path(path)
    frame = table if isinstance(table, pd.DataFrame) else pd.DataFrame(list(table))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as fh:
            frame.to_csv(fh, index=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class CSVRows:
    """Rows collected one by one and the CSV rewritten (atomically) after each."""

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = None if path is None else Path(path)
        self.rows: list[dict[str, Any]] = []
        plan = _PLAN.get()
        if plan is not None and self.path is not None:
            plan.append(self.path)      # a plan reports the rows this file already holds

    def add(self, row: Mapping[str, Any]) -> None:
        self.rows.append(dict(row))
        if self.path is not None:
            write_csv(self.rows, self.path)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows)


# ---------------------------------------------------------------------- plans
#: inside :func:`planning`: the results CSVs the plan's protocol opened (CSVRows)
_PLAN: contextvars.ContextVar[list[Path] | None] = contextvars.ContextVar(
    "topiclink_plan", default=None)


@dataclass(frozen=True)
class PlannedCell:
    """A cell of a plan: its coordinates, its seed (None where the protocol does not
    seed by cell) and where it is already finished (None: to fit)."""

    coords: dict[str, Any]
    seed: int | None = None
    finished: str | None = None


class GridPlanned(Exception):
    """Raised by :func:`run_grid` inside :func:`planning`, instead of running the grid:
    its cells (nothing was fitted)."""

    def __init__(self, cells: Sequence[PlannedCell]) -> None:
        super().__init__(f"{len(cells)} cells planned")
        self.cells = list(cells)


@contextlib.contextmanager
def planning() -> Iterator[None]:
    """Inside the block, :func:`run_grid` raises :class:`GridPlanned` with its cells
    instead of running them and :func:`fit_model` refuses to fit."""
    token = _PLAN.set([])
    try:
        yield
    finally:
        _PLAN.reset(token)


def is_planning() -> bool:
    """Whether this is a :func:`planning` block."""
    return _PLAN.get() is not None


def _cell_key(coords: Mapping[str, Any], axes: Sequence[str]) -> tuple[str, ...]:
    """Coordinates as text that a CSV row read back gives too (4, 4.0 and "4" agree)."""
    def text(value: Any) -> str:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return str(value)
        return "nan" if np.isnan(number) else repr(number)

    return tuple(text(coords.get(a)) for a in axes)


def _rows_in(paths: Iterable[Path], axes: Sequence[str]) -> dict[tuple[str, ...], Path]:
    """The cells (by :func:`_cell_key`) that the existing results CSVs hold a row of."""
    found: dict[tuple[str, ...], Path] = {}
    for path in dict.fromkeys(paths):
        if not path.is_file():
            continue
        try:
            table = pd.read_csv(path)
        except (OSError, ValueError):
            continue
        if not set(axes) <= set(table.columns):
            continue
        for row in table[list(axes)].to_dict("records"):
            found.setdefault(_cell_key(row, axes), path)
    return found


def _plan(todo: Sequence[Cell], done: Mapping[int, Any], checkpoint: GridCheckpoint | None,
          csv_path: str | os.PathLike[str] | None) -> list[PlannedCell]:
    """The planned cells of :func:`run_grid`: finished in the checkpoint, or holding a row
    in a results CSV (which a run without the checkpoint computes again)."""
    axes = list(dict.fromkeys(a for c in todo for a in c.coords))
    paths = [*([] if csv_path is None else [Path(csv_path)]), *(_PLAN.get() or [])]
    in_csv = _rows_in(paths, axes) if axes else {}
    cells = []
    for c in todo:
        where = None
        if c.index in done and checkpoint is not None:
            where = f"checkpoint {checkpoint.folder}"
        elif _cell_key(c.coords, axes) in in_csv:
            where = str(in_csv[_cell_key(c.coords, axes)])
        cells.append(PlannedCell(dict(c.coords), c.seed, where))
    return cells


def _value(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return f"{float(value):g}"
    return str(value)


def plan_lines(cells: Sequence[PlannedCell]) -> list[str]:
    """One line per cell (its coordinates, seed, where it is finished) and a count line."""
    width = len(str(len(cells)))
    lines = []
    for i, cell in enumerate(cells, start=1):
        coords = "  ".join(f"{k}={_value(v)}" for k, v in cell.coords.items())
        seed = "" if cell.seed is None else f"  seed={cell.seed}"
        where = "" if cell.finished is None else f"  [finished: {cell.finished}]"
        lines.append(f"cell {i:>{width}}/{len(cells)}: {coords}{seed}{where}")
    skipped = sum(1 for c in cells if c.finished and c.finished.startswith("checkpoint "))
    in_csv = sum(1 for c in cells if c.finished) - skipped
    parts = [f"{len(cells)} cell{'' if len(cells) == 1 else 's'}",
             f"{len(cells) - skipped} to fit"]
    if skipped:
        parts.append(f"{skipped} finished in the checkpoint (skipped)")
    if in_csv:
        parts.append(f"{in_csv} already in the results (fitted again without "
                     "--checkpoint-dir)")
    lines.append(", ".join(parts) + "; nothing fitted (--plan)")
    return lines


# ---------------------------------------------------------------------- running
RunCell = Callable[[Cell, Any], Mapping[str, Any] | None]


def _call(run_cell: RunCell, cell: Cell, context: Any,
          checkpoints: tuple[Path, int | str | float] | None = None
          ) -> dict[str, Any] | None:
    """One cell (in this process or a worker); its fits checkpoint into
    ``checkpoints = (folder, every)`` when given."""
    from topiclink.estimators.checkpoint import checkpoint_folder

    with checkpoint_folder(*checkpoints) if checkpoints else contextlib.nullcontext():
        row = run_cell(cell, context)
    return None if row is None else dict(row)


def run_grid(cells: Iterable[Mapping[str, Any]], run_cell: RunCell, context: Any = None, *,
             base_seed: int = 0, seed_axes: Sequence[str] | None = None, workers: int = 1,
             context_of: Callable[[Cell, Any], Any] | None = None,
             on_row: Callable[[dict[str, Any]], None] | None = None,
             csv_path: str | os.PathLike[str] | None = None,
             checkpoint: GridCheckpoint | None = None) -> pd.DataFrame:
    """Run ``run_cell(cell, context)`` for every cell; returns the rows as a DataFrame.

    Parameters
    ----------
    cells : iterable of dict
        Coordinates of each cell (see :func:`grid`).
    run_cell : callable
        ``(Cell, context) -> dict or None`` (None: the cell has no row, e.g. a baseline
        that cannot run on this task).  A module-level function when ``workers > 1``
        (it is sent to other processes).
    context : object
        Shared data (folds, a task) passed to every call.
    base_seed : int
        The run's seed; each cell's ``seed`` is :func:`cell_seed` of it and the cell's
        ``seed_axes`` coordinates (default: all coordinates).
    workers : int
        Cells run at once in separate processes (joblib); the rows do not depend on it
        and come back in the order of the sequential loop.
    context_of : callable, optional
        ``(Cell, context) -> the part of the context this cell needs`` (e.g. its fold),
        evaluated here, so that a worker receives only that part.
    on_row : callable, optional
        Called with each row as it arrives (progress output).
    csv_path : path, optional
        Rewritten (atomically) after every row and at the end.
    checkpoint : GridCheckpoint, optional
        Skip the cells it records as finished (their rows come from it), record each
        cell as it finishes, and checkpoint each cell's fits in its folder
        (:mod:`topiclink.experiments.grid_checkpoint`; default: the one a
        :func:`~topiclink.experiments.grid_checkpoint.grid_checkpoint` block set).

    Raises
    ------
    GridPlanned
        Inside :func:`planning`, with the cells (those finished in ``checkpoint`` or
        holding a row in ``csv_path`` marked), instead of running any.
    """
    if isinstance(workers, bool) or not isinstance(workers, numbers.Integral) or workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    todo = [Cell(dict(c), cell_seed(base_seed, c, seed_axes), i)
            for i, c in enumerate(cells)]

    def ctx(cell: Cell) -> Any:
        return context if context_of is None else context_of(cell, context)

    if checkpoint is None:
        checkpoint = current_grid_checkpoint()
    done: dict[int, Any] = {}
    if checkpoint is not None:
        for c in todo:
            finished, row = checkpoint.row_of(c.coords)
            if finished:
                done[c.index] = row
        logger.info("checkpoint %s: %d of %d cells finished earlier, %d to run",
                    checkpoint.folder, len(done), len(todo), len(todo) - len(done))
    if is_planning():
        raise GridPlanned(_plan(todo, done, checkpoint, csv_path))
    run_now = [c for c in todo if c.index not in done]

    def saves(cell: Cell) -> tuple[Path, int | str | float] | None:
        return None if checkpoint is None else (checkpoint.cell_folder(cell.coords),
                                                checkpoint.every)

    if workers == 1 or len(run_now) <= 1:
        fresh: Iterable[dict[str, Any] | None] = (
            _call(run_cell, c, ctx(c), saves(c)) for c in run_now)
    else:
        from joblib import Parallel, delayed

        fresh = Parallel(n_jobs=int(workers), return_as="generator")(
            delayed(_call)(run_cell, c, ctx(c), saves(c)) for c in run_now)

    def in_order() -> Iterator[dict[str, Any] | None]:
        computed = iter(fresh)
        for c in todo:
            if c.index in done:
                yield done[c.index]
                continue
            row = next(computed)
            if checkpoint is not None:
                checkpoint.record(c.coords, row)
            yield row

    sink = CSVRows(csv_path)
    for row in in_order():
        if row is None:
            continue
        sink.add(row)
        if on_row is not None:
            on_row(row)
    table = sink.frame()
    if csv_path is not None and not sink.rows:
        write_csv(table, csv_path)
    return table
