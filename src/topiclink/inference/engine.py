"""The engine: explicit sampler state, one algorithm interface, one loop that owns it all.

Every inference algorithm (a Gibbs sampler, a variational EM) is an :class:`Algorithm`:

- ``init(data, rng) -> State``: a :class:`State` dataclass holding *everything* needed to
  continue: arrays, the kernels' xoshiro states, the NumPy generators of the augmentation
  draws, and the iteration number;
- ``step(state, data) -> info``: one iteration, in place; returns per-iteration figures;
- ``objective(state, data) -> float``: the figure of merit per token (collapsed log joint,
  variational bound) recorded as ``trace_["log_likelihood"]``;
- ``averaged(state, data) -> dict``: the quantities averaged over the last iterations
  (posterior means of U, of the word-topic counts, ...);
- ``session(state, data)``: a context manager for resources that live for one run
  (thread pools), entered by the engine;
- ``retained(state) -> dict`` (optional; algorithms that keep posterior samples): the
  quantities kept per sample.  Given ``keep=`` (an :class:`~topiclink.parameters.Averaging`
  schedule), :func:`run` copies them after every iteration the schedule keeps (counted
  over the whole chain), the latest ``keep.max_samples``, into ``RunProgress.samples``
  and ``RunResult.samples``; checkpoints store them with the progress, so a family gets
  kept samples that survive ``fit(resume=True)`` and checkpoints without code of its own.

The algorithm object carries the hyper-parameters (a model's ``fit`` builds it from its
validated parameters); ``data`` is whatever the algorithm's ``prepare`` built from the
user's input.  Tests (Geweke, twins) call the very ``step`` that :func:`run` calls.

:func:`run` owns the loop: the averaging window, tracing, callbacks (a callback with
``needs_estimates = True`` sees the model's fitted attributes updated to the current
estimates first), a tqdm progress bar, the BLAS thread limit.  Continuing a chain is
just calling :func:`run` again on the same state: 10 + 10 iterations equal 20.

Streams go through the same loop, not one written per family: :func:`run_partial` is one
pass of an online algorithm's ``partial_step`` over the items of a new chunk, with the
callbacks, progress bar and BLAS limit of :func:`run` (``partial_fit`` of every online
family calls it through ``Estimator._run_partial``).  The stream seen so far lives in the
state (the fields named by ``State.stream_fields``), so a model saved with its state
continues its stream.

Checkpoints are the engine's too, not each family's: given a :class:`Checkpointing`,
:func:`run` hands the state and a :class:`RunProgress` (iterations done, this run's trace
rows, the averaging sums, the kept samples, the stopping rules' memory) to
``checkpoint.write`` every so many iterations or seconds and once at the end; a run
restarted with that progress continues exactly where the written one stood, so a fit killed
and resumed from its last checkpoint equals an uninterrupted fit draw for draw.

An online algorithm's iteration (a sweep, a ``partial_fit`` pass) runs in minibatches, and
a checkpoint may cut it at their boundaries (a long online sweep killed midway then loses
at most one minibatch): an algorithm with ``minibatch_passes = True`` takes ``passes=`` (a
:class:`Passes`) in ``step`` and ``partial_step``, begins its pass through it and reports
every minibatch boundary to it; there :func:`run` records the pass (:class:`PassProgress`:
its items in the order visited, the minibatches done, the figures added up so far) as
``RunProgress.pass_`` and writes a checkpoint when one is due
(``Checkpointing.every_minibatches`` or ``every_seconds``).  A run restarted with that
progress continues the pass at the next minibatch, with the items drawn before the
checkpoint, so it too ends draw for draw where the uninterrupted run ends.

BLAS is limited to ``algorithm.blas_threads`` threads (default 1) while the chain runs:
its matrices are small, and OpenBLAS's idle threads spin on the second core after every
call, slowing the single-threaded Numba sweeps beside them (one Cora fold of Gibbs-gRTM at
K = 10: 12.7 s with two BLAS threads, 9.9 s with one; ``benchmarks/grtm_speed.py``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from threadpoolctl import ThreadpoolController

from topiclink.parameters import Averaging
from topiclink.random import generator_state, restore_generator

__all__ = ["Algorithm", "State", "RunResult", "RunProgress", "PassProgress", "Passes",
           "Checkpointing", "run", "run_partial", "fingerprint", "state_key", "state_to_saved",
           "state_from_saved", "check_state", "check_topic_counts"]

logger = logging.getLogger(__name__)


@dataclass(kw_only=True)
class State:
    """Base of every sampler / optimiser state: subclasses add their arrays and streams.

    Fields may be NumPy arrays, NumPy Generators (or lists of them), and JSON scalars;
    :func:`state_to_saved` stores exactly these kinds.
    """

    iteration: int = 0
    data_fingerprint: str = ""

    #: fields holding the stream seen so far (``partial_fit``): saved with the state like
    #: every field, but their shapes follow the stream, not a fresh ``init`` (so
    #: :func:`check_state` compares their kind and dtype only), and a model file written
    #: before a field existed loads it at its default (an empty stream)
    stream_fields: ClassVar[tuple[str, ...]] = ()

    @property
    def workspace(self) -> Any:
        """The algorithm's workspace for this state: what it derives from the fields and
        the data to step them (pair indexes, the statistics one step leaves to the next),
        a family's typed object set by ``Algorithm.attach`` or ``step``; None when there
        is none yet.  Not a field: never saved, hashed or compared; :func:`run` drops it
        when the run ends, and a copy or pickle of the state carries none, so a resumed,
        loaded or copied state rebuilds it (it holds nothing the fields do not imply)."""
        return self.__dict__.get("_workspace")

    @workspace.setter
    def workspace(self, value: Any) -> None:
        self.__dict__["_workspace"] = value

    def __getstate__(self) -> dict[str, Any]:
        """The fields, without the workspace (``copy``, ``deepcopy`` and pickle)."""
        return {k: v for k, v in self.__dict__.items() if k != "_workspace"}


class Algorithm:
    """One inference algorithm; see the module docstring for the contract."""

    #: shown on the progress bar and in log messages
    name: str = "algorithm"
    #: the State subclass ``init`` returns (used to rebuild a saved state)
    state_class: type[State] = State
    #: BLAS threads while running (None: leave BLAS alone)
    blas_threads: int | None = 1
    #: ``step`` (and ``partial_step``) run in minibatches and take ``passes=`` (a
    #: :class:`Passes`), so a checkpoint may cut an iteration at a minibatch boundary
    minibatch_passes: ClassVar[bool] = False

    def init(self, data: Any, rng: np.random.Generator) -> State:
        raise NotImplementedError

    def fingerprint(self, data: Any) -> str:
        """A hash of the data a state belongs to (``init`` stores it in the state; a
        resumed run must be given data with the same fingerprint)."""
        return ""

    def check_values(self, state: Any, data: Any) -> None:
        """Hook: value checks of a state about to be resumed (counts consistent with the
        assignments, ids in range); one-line ValueError."""

    def check_pass(self, pass_: PassProgress, data: Any) -> None:
        """Hook: value checks of a saved pass about to be continued on ``data`` (its items
        in range, the batch size this algorithm's); one-line ValueError.  Only algorithms
        with ``minibatch_passes`` have passes."""
        raise ValueError(f"{self.name} does not run its iterations in minibatches; a saved "
                         "pass in progress cannot be continued by it")

    def attach(self, state: Any, data: Any) -> None:
        """Build what ``step`` needs from the state beyond its arrays (e.g. pair indexes)
        as the state's typed workspace (:attr:`State.workspace`), never on the algorithm;
        called by ``init`` and at the start of every :func:`run` (idempotent)."""

    def step(self, state: Any, data: Any) -> dict[str, float]:
        raise NotImplementedError

    def objective(self, state: Any, data: Any) -> float:
        return float("nan")

    def averaged(self, state: Any, data: Any) -> dict[str, np.ndarray]:
        return {}

    def retained(self, state: Any) -> dict[str, np.ndarray]:
        """The quantities kept per posterior sample (name -> array) when :func:`run` is
        given ``keep=``; the engine copies them.  Only algorithms whose models keep
        samples implement it."""
        raise NotImplementedError(f"{type(self).__name__} keeps no posterior samples")

    def sync(self, state: Any) -> None:
        """Hook: make every field of ``state`` current where a run keeps parts of it
        elsewhere between iterations (Dask workers); the engine calls it before a
        checkpoint and before the callbacks of an iteration when one of them reads the
        state (:func:`topiclink.callbacks.reads_state`)."""

    @contextlib.contextmanager
    def session(self, state: Any, data: Any) -> Iterator[None]:
        yield


@dataclass
class RunResult:
    """What one :func:`run` produced.

    ``trace`` maps a figure name to one value per completed iteration of this run;
    ``averaged`` the mean of ``algorithm.averaged`` over the averaging window (None when
    the run stopped before the window began); ``samples`` the kept samples
    (``algorithm.retained`` at the iterations ``keep`` keeps, oldest first, those carried
    in by the progress included).
    """

    n_iter: int
    stopped_early: bool
    trace: dict[str, np.ndarray] = field(default_factory=dict)
    averaged: dict[str, np.ndarray] | None = None
    samples: list[dict[str, np.ndarray]] = field(default_factory=list)


@dataclass
class RunProgress:
    """Where one :func:`run` stands: with the state, everything needed to continue it.

    ``rows``: the per-iteration figures of the iterations done; ``sums`` / ``n_summed``:
    the averaging window so far; ``samples``: the kept samples so far (copies of
    ``algorithm.retained``, oldest first; a resumed chain carries its earlier ones);
    ``callbacks``: the memory of every callback that has ``checkpoint_state()`` as
    ``[class name, memory]``; ``stopped``: a callback ended the run early; ``pass_``: the
    pass of the iteration in progress (iteration ``done + 1``) at its last minibatch
    boundary, while a checkpoint cuts it (None between iterations).
    """

    n_iter: int
    done: int = 0
    rows: list[dict[str, float]] = field(default_factory=list)
    sums: dict[str, np.ndarray] = field(default_factory=dict)
    n_summed: int = 0
    samples: list[dict[str, np.ndarray]] = field(default_factory=list)
    callbacks: list[Any] = field(default_factory=list)
    stopped: bool = False
    pass_: PassProgress | None = None

    @property
    def complete(self) -> bool:
        return self.stopped or self.done >= self.n_iter

    def averaged(self) -> dict[str, np.ndarray] | None:
        return _mean(self.sums, self.n_summed)


@dataclass
class PassProgress:
    """Where one pass over minibatches (an online algorithm's sweep, a ``partial_fit``
    pass) stands at a minibatch boundary: ``items`` in the order the pass visits them
    (minibatch m is ``items[m * batch_size:(m + 1) * batch_size]``), ``done`` minibatches
    done, ``sums`` the figures the pass adds up over its minibatches so far and ``last``
    the figures of the last minibatch done."""

    items: np.ndarray
    batch_size: int
    done: int = 0
    sums: dict[str, float] = field(default_factory=dict)
    last: dict[str, float] = field(default_factory=dict)

    @property
    def n_batches(self) -> int:
        return -(-int(self.items.size) // int(self.batch_size))

    def remaining(self) -> Iterator[np.ndarray]:
        """The minibatches not done yet, in order."""
        size = int(self.batch_size)
        for start in range(self.done * size, int(self.items.size), size):
            yield self.items[start:start + size]


class Passes:
    """An iteration's minibatch boundaries as :func:`run` hands them to a step that runs
    in minibatches (``Algorithm.minibatch_passes``).

    The step calls ``begin(items, batch_size, summed)`` once: the pass a checkpoint stood
    in when the run resumes inside this iteration (its items, drawn before the
    checkpoint, are kept; ``items`` is then not called), else a new pass over ``items``
    (an array, or a callable drawing it).  After every minibatch it updates the pass
    (``done``, ``sums``, ``last``) and calls ``boundary(pass_)``, where the engine records
    it and writes a checkpoint when one is due.
    """

    def __init__(self, resume: PassProgress | None = None,
                 on_boundary: Callable[[PassProgress], None] | None = None) -> None:
        self._resume = resume
        self._on_boundary = on_boundary

    def begin(self, items: np.ndarray | Callable[[], np.ndarray], batch_size: int,
              summed: Sequence[str] = ()) -> PassProgress:
        resumed, self._resume = self._resume, None
        if resumed is not None:
            if resumed.batch_size != int(batch_size) or sorted(resumed.sums) != sorted(
                    summed):
                raise ValueError(f"the saved pass runs minibatches of {resumed.batch_size} "
                                 f"adding up {sorted(resumed.sums)}, this one "
                                 f"{int(batch_size)} adding up {sorted(summed)}")
            return resumed
        order = items() if callable(items) else items
        return PassProgress(np.asarray(order, dtype=np.int64), int(batch_size),
                            sums=dict.fromkeys(summed, 0.0))

    def boundary(self, pass_: PassProgress) -> None:
        if self._on_boundary is not None:
            self._on_boundary(pass_)


@dataclass
class Checkpointing:
    """When and how :func:`run` writes checkpoints.

    ``write(state, progress)`` stores both (atomically); it is called after every
    ``every_iterations`` iterations, or when ``every_seconds`` have passed since the last
    write, and after the last iteration.  Inside an iteration run in minibatches
    (``Algorithm.minibatch_passes``) it is also called at a minibatch boundary when
    ``every_minibatches`` minibatches of the pass are done since its start (the pass's
    ``done`` a multiple of it) or ``every_seconds`` have passed.
    """

    write: Callable[[State, RunProgress], None]
    every_iterations: int | None = None
    every_seconds: float | None = None
    every_minibatches: int | None = None
    _last: float = field(default=0.0, repr=False)

    def due(self, done: int) -> bool:
        if self.every_iterations and done % self.every_iterations == 0:
            return True
        return self._time_is_up()

    def due_in_pass(self, done: int) -> bool:
        """Whether the boundary after the pass's ``done``-th minibatch gets a write."""
        if self.every_minibatches and done % self.every_minibatches == 0:
            return True
        return self._time_is_up()

    def _time_is_up(self) -> bool:
        return bool(self.every_seconds) and (
            time.monotonic() - self._last >= float(self.every_seconds))  # type: ignore[arg-type]

    def __call__(self, state: State, progress: RunProgress) -> None:
        self.write(state, progress)
        self._last = time.monotonic()


def run(algorithm: Algorithm, state: State, data: Any, n_iter: int, *,
        model: Any = None, callbacks: Sequence[Any] | None = None,
        verbose: bool | int = False, evaluate_every: int = 1, n_average: int = 0,
        publish: Callable[[State, dict[str, np.ndarray] | None], None] | None = None,
        progress: RunProgress | None = None, checkpoint: Checkpointing | None = None,
        keep: Averaging | None = None) -> RunResult:
    """Run ``n_iter`` iterations of ``algorithm`` on ``state`` (in place).

    Parameters
    ----------
    model : the estimator, passed to callbacks
    evaluate_every : the objective is recorded every this many iterations (counted over
        the whole chain, so a resumed chain keeps the schedule) and at the last one;
        0: only at the last one
    n_average : average ``algorithm.averaged`` over the last ``n_average`` iterations
    publish : ``publish(state, averaged)`` sets the model's fitted attributes from the
        current state; called before any callback with ``needs_estimates = True``
    progress : continue a run from where it stood (a checkpoint's); its ``n_iter`` is the
        run's length (``n_iter`` must equal it); its averaging sums may also carry over a
        window begun by an earlier run (``done = 0``); with a ``pass_``, iteration
        ``done + 1`` continues that pass at its next minibatch
    checkpoint : write the state and the progress every so often and at the end (and,
        for an algorithm with ``minibatch_passes``, at minibatch boundaries when due)
    keep : keep a copy of ``algorithm.retained(state)`` after every iteration this
        schedule keeps (``keep.keeps(state.iteration)``: counted over the whole chain),
        the latest ``keep.max_samples`` (None: all), in ``progress.samples``; a sample
        is kept before that iteration's callbacks run (one with ``needs_estimates`` sees
        it published) and before its checkpoint is written
    """
    if progress is None:
        progress = RunProgress(n_iter=int(n_iter))
    elif progress.n_iter != n_iter:
        raise ValueError(f"run: the progress is of a {progress.n_iter}-iteration run, not "
                         f"{n_iter}")
    algorithm.attach(state, data)
    try:
        with _blas_limits(algorithm), algorithm.session(state, data):
            return _run(algorithm, state, data, progress, model, callbacks, verbose,
                        evaluate_every, n_average, publish, checkpoint, keep)
    finally:
        state.workspace = None          # a workspace lives for one run (State.workspace)


def run_partial(algorithm: Any, state: State, data: Any, items: np.ndarray | None = None,
                *, model: Any = None, callbacks: Sequence[Any] | None = None,
                verbose: bool | int = False,
                publish: Callable[[State, dict[str, np.ndarray] | None], None] | None = None,
                progress: RunProgress | None = None, checkpoint: Checkpointing | None = None
                ) -> RunResult:
    """One ``partial_fit`` pass: ``algorithm.partial_step(state, data, items)`` (an
    :class:`~topiclink.inference.online.OnlineAlgorithm`: minibatches over ``items``, the
    new chunk of the stream, with the continuing step sizes) run as one iteration of the
    engine's loop: the iteration counter, the objective, the trace row, callbacks
    (``on_train_begin`` / ``on_iteration`` / ``on_train_end``; a callback returning True
    marks the result ``stopped_early``), the progress bar and the BLAS limit are those of
    :func:`run`.  No averaging window.  ``checkpoint``: the pass is cut at its minibatch
    boundaries as :func:`run` cuts a sweep (``Checkpointing.due_in_pass``); ``progress``
    (a one-iteration run's, with the ``pass_`` a checkpoint stood in) continues that pass,
    whose items then replace ``items``.  Without either, a stream is saved with the model
    (``save(path, full=True)``)."""
    def step(state: State, data: Any, **passes: Any) -> dict[str, float]:
        return algorithm.partial_step(state, data, items, **passes)

    if progress is None:
        progress = RunProgress(n_iter=1)
    elif progress.n_iter != 1:
        raise ValueError(f"run_partial: the progress is of a {progress.n_iter}-iteration run, "
                         "not of one pass")
    algorithm.attach(state, data)
    try:
        with _blas_limits(algorithm):
            return _run(algorithm, state, data, progress, model, callbacks, verbose,
                        1, 0, publish, checkpoint, step=step)
    finally:
        state.workspace = None          # a workspace lives for one run (State.workspace)


#: one threadpoolctl controller for the process: building one scans the loaded libraries
#: (12.5 ms, paid by every ``partial_fit`` when it was rebuilt per run)
_CONTROLLER: ThreadpoolController | None = None


def _blas_limits(algorithm: Algorithm) -> contextlib.AbstractContextManager[Any]:
    """The BLAS thread limit of ``algorithm`` (``blas_threads``; None: no limit)."""
    global _CONTROLLER
    blas = algorithm.blas_threads
    if blas is None:
        return contextlib.nullcontext()
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=blas, user_api="blas")


def _restore_callbacks(cbs: Sequence[Any], memories: Sequence[Any]) -> None:
    """Give each callback with memory the one saved for the callback of its class at
    the same rank among that class (the user's callbacks may differ between runs)."""
    saved: dict[str, list[Any]] = {}
    for entry in memories:
        if isinstance(entry, list | tuple) and len(entry) == 2:
            saved.setdefault(str(entry[0]), []).append(entry[1])
    for cb in cbs:
        queue = saved.get(type(cb).__qualname__)
        if queue and hasattr(cb, "restore_checkpoint_state"):
            cb.restore_checkpoint_state(queue.pop(0))


def _callback_memories(cbs: Sequence[Any]) -> list[Any]:
    return [[type(cb).__qualname__, cb.checkpoint_state()] for cb in cbs
            if hasattr(cb, "checkpoint_state")]


def _run(algorithm: Algorithm, state: State, data: Any, progress: RunProgress, model: Any,
         callbacks: Sequence[Any] | None, verbose: bool | int, evaluate_every: int,
         n_average: int, publish: Callable[..., None] | None,
         checkpoint: Checkpointing | None, keep: Averaging | None = None,
         step: Callable[..., dict[str, float]] | None = None) -> RunResult:
    from topiclink.callbacks import ProgressBar, reads_state

    step = algorithm.step if step is None else step
    # an online iteration is cut at its minibatch boundaries while a checkpoint is kept
    # (or continued from the pass a checkpoint stood in); else it runs as one step
    cut = bool(getattr(algorithm, "minibatch_passes", False)) and (
        checkpoint is not None or progress.pass_ is not None)
    if progress.pass_ is not None and not cut:
        raise ValueError(f"run: the progress stands inside a pass of minibatches, which "
                         f"{algorithm.name} does not run")

    n_iter = progress.n_iter
    user_cbs = list(callbacks or [])
    _restore_callbacks(user_cbs, progress.callbacks)
    cbs = list(user_cbs)
    if verbose:
        cbs.insert(0, ProgressBar(desc=algorithm.name))
    wants_estimates = publish is not None and any(getattr(cb, "needs_estimates", False)
                                                  for cb in cbs)
    # a callback that reads model.state_ finds it current: the shards of a sharded run
    # are gathered for it (Algorithm.sync), else they stay where they run
    wants_state = reads_state(cbs)
    for cb in cbs:
        if hasattr(cb, "on_train_begin"):
            cb.on_train_begin(model, n_iter - progress.done)
    rows, sums, samples = progress.rows, progress.sums, progress.samples
    averaging = Averaging.last(n_average, n_iter)   # the mean over the last n_average
    if checkpoint is not None:
        checkpoint._last = time.monotonic()

    def boundary(pass_: PassProgress) -> None:
        progress.pass_ = pass_
        if checkpoint is not None and checkpoint.due_in_pass(pass_.done):
            progress.callbacks = _callback_memories(user_cbs)
            algorithm.sync(state)
            checkpoint(state, progress)

    try:
        for local in range(progress.done, 0 if progress.stopped else n_iter):
            it = state.iteration
            t0 = time.perf_counter()
            if cut:
                info = dict(step(state, data, passes=Passes(progress.pass_, boundary)))
                progress.pass_ = None
            else:
                info = dict(step(state, data))
            info["seconds"] = time.perf_counter() - t0
            state.iteration += 1
            if averaging.keeps(local + 1):
                for key, value in algorithm.averaged(state, data).items():
                    if key not in sums:
                        sums[key] = np.zeros(np.shape(value))
                    sums[key] += value
                progress.n_summed += 1
            # a sharded state is gathered at most once an iteration (for a kept sample,
            # the callbacks that read the state, a checkpoint: whichever asks first)
            synced = False
            if keep is not None and keep.keeps(state.iteration):
                algorithm.sync(state)
                synced = True
                samples.append({k: np.array(v, copy=True)
                                for k, v in algorithm.retained(state).items()})
                if keep.max_samples is not None:
                    del samples[:max(0, len(samples) - keep.max_samples)]
            last = local == n_iter - 1
            if evaluate_every and ((it + 1) % evaluate_every == 0 or last):
                info["log_likelihood"] = float(algorithm.objective(state, data))
            elif last:
                info["log_likelihood"] = float(algorithm.objective(state, data))
            else:
                info["log_likelihood"] = float("nan")
            rows.append(info)
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("%s iteration %d: %s", algorithm.name, it + 1, info)
            if wants_state and not synced:
                algorithm.sync(state)
                synced = True
            if wants_estimates:
                publish(state, progress.averaged())  # type: ignore[misc]
            for cb in cbs:
                if cb.on_iteration(model, it, info):
                    progress.stopped = True
            if progress.stopped and not np.isfinite(info["log_likelihood"]):
                info["log_likelihood"] = float(algorithm.objective(state, data))
            progress.done = local + 1
            if checkpoint is not None and (progress.complete or checkpoint.due(progress.done)):
                progress.callbacks = _callback_memories(user_cbs)
                if not synced:
                    algorithm.sync(state)
                checkpoint(state, progress)
            if progress.stopped:
                break
    finally:
        for cb in cbs:
            if hasattr(cb, "on_train_end"):
                cb.on_train_end(model)
    keys = sorted({k for r in rows for k in r})
    trace = {k: np.array([r.get(k, np.nan) for r in rows], dtype=float) for k in keys}
    return RunResult(n_iter=len(rows), stopped_early=progress.stopped, trace=trace,
                     averaged=progress.averaged(), samples=samples)


def _mean(sums: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray] | None:
    if not n:
        return None
    return {k: v / n for k, v in sums.items()}


def fingerprint(*arrays: np.ndarray) -> str:
    """A short hash of the arrays a state was built on (to refuse resuming on other data)."""
    h = hashlib.blake2b(digest_size=12)
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def state_key(state: State) -> str:
    """A hash of everything a state holds (every field as :func:`state_to_saved` stores
    it: arrays, generator states, values): equal for a state and the one a model file
    saved with it loads, different after any draw or update.  Says where in a stream a
    model stands (``partial_fit(checkpoint=...)``)."""
    arrays, meta = state_to_saved(state)
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps(meta, sort_keys=True, default=_json_number).encode())
    for name in sorted(arrays):
        h.update(name.encode())
        h.update(fingerprint(arrays[name]).encode())
    return h.hexdigest()


def _json_number(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"a state description holds a {type(value).__name__}")


# ---------------------------------------------------------------------- saving a state
def state_to_saved(state: State) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Split a state into arrays and a JSON-able description (generators by their state)."""
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {"class": type(state).__name__, "fields": {}}
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        if isinstance(value, np.ndarray):
            arrays[f.name] = value
            meta["fields"][f.name] = {"kind": "array"}
        elif isinstance(value, np.random.Generator):
            meta["fields"][f.name] = {"kind": "generator", "state": generator_state(value)}
        elif isinstance(value, list) and all(            # an empty list too
                isinstance(g, np.random.Generator) for g in value):
            meta["fields"][f.name] = {"kind": "generators",
                                      "states": [generator_state(g) for g in value]}
        elif value is None or isinstance(value, bool | int | float | str):
            meta["fields"][f.name] = {"kind": "value", "value": value}
        elif isinstance(value, np.generic):
            meta["fields"][f.name] = {"kind": "value", "value": value.item()}
        else:
            raise TypeError(f"state field {f.name!r} holds a {type(value).__name__}, which "
                            "a model file cannot store")
    return arrays, meta


def state_from_saved(state_class: type[State], arrays: dict[str, np.ndarray],
                     meta: dict[str, Any]) -> State:
    """Rebuild a state written by :func:`state_to_saved` (one-line error if incomplete)."""
    if meta.get("class") != state_class.__name__:
        raise ValueError(f"saved state is a {meta.get('class')!r}, expected "
                         f"{state_class.__name__!r}")
    values: dict[str, Any] = {}
    fields = meta.get("fields", {})
    for f in dataclasses.fields(state_class):
        if f.name not in fields:
            if f.name in state_class.stream_fields and (
                    f.default is not dataclasses.MISSING
                    or f.default_factory is not dataclasses.MISSING):
                continue               # written before the field existed: the default
            raise ValueError(f"saved state has no field {f.name!r}")
        spec = fields[f.name]
        kind = spec.get("kind")
        if kind == "array":
            if f.name not in arrays:
                raise ValueError(f"saved state is missing the array {f.name!r}")
            values[f.name] = np.array(arrays[f.name])
        elif kind == "generator":
            values[f.name] = restore_generator(spec["state"])
        elif kind == "generators":
            values[f.name] = [restore_generator(s) for s in spec["states"]]
        elif kind == "value":
            values[f.name] = spec["value"]
        else:
            raise ValueError(f"saved state field {f.name!r} has unknown kind {kind!r}")
    return state_class(**values)


def check_state(algorithm: Algorithm, state: State, data: Any) -> None:
    """Refuse a state that does not belong to ``algorithm`` on ``data`` before any kernel
    reads it (a saved state may have been edited): every field must have the kind, shape
    and dtype of a fresh ``init`` on the same data, floats must be finite, and
    ``algorithm.check_values`` must pass.  One-line ValueError."""
    reference = algorithm.init(data, np.random.default_rng(0))
    for f in dataclasses.fields(reference):
        mine, ref = getattr(state, f.name, None), getattr(reference, f.name)
        stream = f.name in reference.stream_fields
        if isinstance(ref, np.ndarray):
            if not isinstance(mine, np.ndarray) or mine.dtype != ref.dtype or (
                    mine.ndim != ref.ndim if stream else mine.shape != ref.shape):
                got = (f"{mine.shape} {mine.dtype}" if isinstance(mine, np.ndarray)
                       else type(mine).__name__)
                raise ValueError(f"state field {f.name!r} is {got}, expected {ref.shape} "
                                 f"{ref.dtype}")
            if mine.dtype.kind == "f" and not np.all(np.isfinite(mine)):
                raise ValueError(f"state field {f.name!r} holds NaN or infinite values")
        elif isinstance(ref, list):
            if not isinstance(mine, list) or len(mine) != len(ref):
                raise ValueError(f"state field {f.name!r} must hold {len(ref)} streams")
        elif isinstance(ref, float | int) and not isinstance(ref, bool):
            if isinstance(mine, bool) or not isinstance(mine, int | float | np.number):
                raise ValueError(f"state field {f.name!r} must be a number")
    algorithm.check_values(state, data)


def check_topic_counts(z: np.ndarray, ndk: np.ndarray, nwk: np.ndarray, nk: np.ndarray,
                       docs: np.ndarray, words: np.ndarray) -> None:
    """Topic assignments in [0, K) and counts equal to the ones they imply."""
    K = nk.shape[0]
    if z.size and (z.min() < 0 or z.max() >= K):
        raise ValueError(f"state: topic assignments outside [0, {K})")
    if not (np.array_equal(np.bincount(z, minlength=K), nk)
            and np.array_equal(np.bincount(docs * K + z, minlength=ndk.size).reshape(
                ndk.shape), ndk)
            and np.array_equal(np.bincount(words.astype(np.int64) * K + z,
                                           minlength=nwk.size).reshape(nwk.shape), nwk)):
        raise ValueError("state: the topic counts do not match the topic assignments")
