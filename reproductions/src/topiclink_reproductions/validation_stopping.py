"""Training to convergence: early stopping on a validation metric, the best model kept.

:class:`ValidationStopper` watches a metric (higher is better: a validation filtered MRR)
evaluated every ``frequency`` steps (epochs of an SGD model, iterations of a Gibbs chain
or of EM) and says when to stop:

* after ``patience`` evaluations in a row without an improvement of more than
  ``relative_delta`` (relative to the best value so far) -- PyKEEN's ``EarlyStopper``
  rule (``frequency``, ``patience``, ``relative_delta``);
* at the cap, ``max_steps`` (always evaluated there, whatever the frequency), marked
  ``cap_hit``: the curve may not have flattened;
* when the model stops by itself before the steps it was asked for (EM's tolerance),
  marked ``"model"``.

The best model is the one of the *best* evaluation (the highest value, however small its
lead: the threshold only decides when to stop), kept by the ``snapshot`` the caller
gives (a copy of the weights, or of the fitted estimator) and handed back as
``best_snapshot``: the caller restores it.  Unlike PyKEEN's ``EarlyStopper``, which
reloads the best weights only when patience runs out, the best one is kept at the cap
too.

Two ways to drive it:

* a model trained in one call with a per-step hook (an SGD peer's ``on_batch``): call
  :meth:`ValidationStopper.observe` at every step boundary (it evaluates only when due);
  its True stops the training; after the call, :meth:`ValidationStopper.finish` at the
  last step evaluates the final model if that was not done;
* a model that continues where it stopped (``fit(..., resume=True)``: BPBFM's Gibbs
  chain and EM): :func:`train_in_steps` advances it ``frequency`` steps at a time.

Pure Python: nothing here imports PyKEEN or torch.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

__all__ = ["ValidationStopper", "train_in_steps"]


class ValidationStopper:
    """Early stopping on a validation metric (module docstring).

    Parameters
    ----------
    frequency : int >= 1
        Evaluate every this many steps (and at ``max_steps``).
    patience : int >= 1
        Stop after this many evaluations in a row without an improvement of more than
        ``relative_delta``.
    max_steps : int >= 1
        The cap.
    relative_delta : float >= 0, default 0
        An evaluation improves when ``value > best * (1 + relative_delta)`` (``best`` the
        value that last improved; for a first evaluation, any finite value).

    Attributes
    ----------
    curve : list of dict
        One per evaluation: ``step``, ``value``, ``seconds`` (the training's seconds so far
        as the caller reports them, or None).
    best_step, best_value : the best evaluation (None before the first)
    best_snapshot : what ``snapshot()`` returned at the best evaluation
    stopped_by : None (still going), "patience", "cap" or "model"
    eval_seconds : wall time spent in ``evaluate`` and ``snapshot``
    train_seconds : training wall time (set by :func:`train_in_steps`; None otherwise)
    """

    def __init__(self, frequency: int, patience: int, max_steps: int,
                 relative_delta: float = 0.0) -> None:
        for name, v in (("frequency", frequency), ("patience", patience),
                        ("max_steps", max_steps)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not (isinstance(relative_delta, int | float) and relative_delta >= 0):
            raise ValueError(f"relative_delta must be >= 0, got {relative_delta!r}")
        self.frequency = int(frequency)
        self.patience = int(patience)
        self.max_steps = int(max_steps)
        self.relative_delta = float(relative_delta)
        self.curve: list[dict[str, Any]] = []
        self.best_step: int | None = None
        self.best_value: float | None = None
        self.best_snapshot: Any = None
        self.stopped_by: str | None = None
        self.eval_seconds = 0.0
        self.train_seconds: float | None = None
        self._threshold = -math.inf      # the value that last reset the patience
        self._bad = 0                    # evaluations since then

    # ------------------------------------------------------------------ the rule
    def due(self, step: int) -> bool:
        """Whether ``step`` is an evaluation step (a multiple of ``frequency``, or the
        cap) not yet evaluated."""
        step = int(step)
        if step < 1 or (self.curve and self.curve[-1]["step"] >= step):
            return False
        return step % self.frequency == 0 or step >= self.max_steps

    def report(self, step: int, value: float, seconds: float | None = None) -> bool:
        """Record the evaluation of ``step``; True when training should stop here
        (patience exhausted, or the cap reached)."""
        step, value = int(step), float(value)
        if self.curve and step <= self.curve[-1]["step"]:
            raise ValueError(f"step {step} reported after step {self.curve[-1]['step']}")
        self.curve.append({"step": step, "value": value,
                           "seconds": None if seconds is None else float(seconds)})
        if math.isfinite(value) and (self.best_value is None or value > self.best_value):
            self.best_step, self.best_value = step, value
        if math.isfinite(value) and (
                self._threshold == -math.inf
                or value > self._threshold + self.relative_delta * abs(self._threshold)):
            self._threshold, self._bad = value, 0
        else:
            self._bad += 1
        if self._bad >= self.patience:
            self.stopped_by = "patience"
        elif step >= self.max_steps:
            self.stopped_by = "cap"
        return self.stopped_by is not None

    @property
    def is_best(self) -> bool:
        """The last evaluation is the best so far."""
        return bool(self.curve) and self.best_step == self.curve[-1]["step"]

    @property
    def cap_hit(self) -> bool:
        """Training ended at the cap, patience not exhausted."""
        return self.stopped_by == "cap"

    @property
    def last_step(self) -> int:
        return int(self.curve[-1]["step"]) if self.curve else 0

    def next_chunk(self, step: int) -> int:
        """Steps from ``step`` to the next evaluation step (at most the cap)."""
        step = int(step)
        return max(0, min(self.frequency - step % self.frequency, self.max_steps - step))

    # ------------------------------------------------------------------ driving it
    def observe(self, step: int, evaluate: Callable[[], float],
                snapshot: Callable[[], Any] | None = None,
                seconds: float | None = None, force: bool = False) -> bool:
        """At a step boundary: when due (or ``force``), ``evaluate()``, report it and,
        at a new best, keep ``snapshot()``; True when training should stop."""
        if not (force and int(step) > self.last_step) and not self.due(step):
            return False
        t0 = time.perf_counter()
        try:
            stop = self.report(step, evaluate(), seconds)
            if self.is_best and snapshot is not None:
                self.best_snapshot = snapshot()
        finally:
            self.eval_seconds += time.perf_counter() - t0
        return stop

    def finish(self, step: int, evaluate: Callable[[], float],
               snapshot: Callable[[], Any] | None = None, seconds: float | None = None,
               stopped_by: str | None = None) -> None:
        """After training ended at ``step``: evaluate it if not yet done; set
        ``stopped_by`` (the given reason, else "cap" at the cap, else "model") when the
        rule had not stopped it."""
        if int(step) > self.last_step:
            self.observe(step, evaluate, snapshot, seconds, force=True)
        if self.stopped_by is None:
            self.stopped_by = stopped_by or ("cap" if int(step) >= self.max_steps
                                             else "model")

    def summary(self) -> dict[str, Any]:
        """The fields a result row records."""
        return {"steps": self.last_step, "best_step": self.best_step,
                "best_valid": self.best_value, "stopped_by": self.stopped_by,
                "cap_hit": self.cap_hit, "n_evaluations": len(self.curve),
                "frequency": self.frequency, "patience": self.patience,
                "max_steps": self.max_steps, "relative_delta": self.relative_delta,
                "eval_seconds": self.eval_seconds, "curve": list(self.curve)}


def train_in_steps(stopper: ValidationStopper, advance: Callable[[int, int], int],
                   evaluate: Callable[[], float],
                   snapshot: Callable[[], Any] | None = None) -> ValidationStopper:
    """Train a resumable model to convergence: ``advance(step, n)`` trains ``n`` more
    steps from ``step`` (the steps taken so far) and returns the steps it took (fewer
    than ``n``: the model stopped by itself, e.g. EM's tolerance); after each chunk the
    model is evaluated (chunks end on the evaluation steps).  The seconds reported with
    each evaluation are the training's alone (``advance``'s wall time, summed)."""
    step, trained = 0, 0.0
    while stopper.stopped_by is None:
        n = stopper.next_chunk(step)
        if n <= 0:                          # at the cap already
            stopper.finish(step, evaluate, snapshot, trained)
            break
        t0 = time.perf_counter()
        taken = int(advance(step, n))
        trained += time.perf_counter() - t0
        if taken < 0 or taken > n:
            raise ValueError(f"advance took {taken} steps, asked for {n}")
        step += taken
        if step == 0:                       # nothing trained at all: nothing to evaluate
            stopper.stopped_by = "model"
            break
        stopper.observe(step, evaluate, snapshot, trained, force=True)
        if taken < n and stopper.stopped_by is None:
            stopper.stopped_by = "model"
    stopper.train_seconds = trained
    return stopper
