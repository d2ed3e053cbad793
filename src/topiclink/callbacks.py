"""Callbacks run by the Gibbs engine after every iteration.

A callback is any object with ``on_iteration(model, iteration, info) -> bool | None``
(``True`` stops training) and optional ``on_train_begin(model, n_iter)`` /
``on_train_end(model)``.  A callback with ``needs_estimates = True`` finds the model's
fitted attributes set to the current estimates when it is called
(:func:`topiclink.inference.engine.run`).  ``info`` is a dict of per-iteration figures (at least
``"log_likelihood"`` per token and ``"seconds"``).

A callback that reads only ``info`` and the published estimates, never the sampler state
``model.state_``, says so with ``reads_state = False``.  Before the callbacks of an
iteration the engine makes the state current (``Algorithm.sync``: a sharded run gathers
its shards) only when one of them reads it (:func:`reads_state`; a callback without the
attribute is taken to read the state).

A callback that remembers earlier iterations (a stopping rule) has
``checkpoint_state() -> JSON value`` and ``restore_checkpoint_state(value)``, so that a fit
resumed from a checkpoint stops where an uninterrupted one would.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

__all__ = ["Callback", "ProgressBar", "EarlyStopping", "EvaluateEvery", "LambdaCallback",
           "RelativeTolerance", "CpuTime", "reads_state"]

logger = logging.getLogger(__name__)


def reads_state(callbacks: Any) -> bool:
    """Whether a callback may read ``model.state_`` during the run (then the engine
    syncs a sharded state before the callbacks of every iteration).  A callback says so
    itself with ``reads_state`` (a class or instance attribute; missing: True, the safe
    answer for code that cannot be known); the info-only callbacks of this module (the
    progress bar, the stopping rules, ``EvaluateEvery``) declare ``reads_state = False``."""
    return any(bool(getattr(cb, "reads_state", True)) for cb in callbacks or ())


@runtime_checkable
class Callback(Protocol):
    def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> bool | None:
        ...


class ProgressBar:
    """A tqdm progress bar showing the log-likelihood per token."""

    reads_state = False      # info and estimates only

    def __init__(self, desc: str | None = None, leave: bool = False) -> None:
        self.desc = desc
        self.leave = leave
        self._bar: Any = None

    def on_train_begin(self, model: Any, n_iter: int) -> None:
        from tqdm.auto import tqdm

        self._bar = tqdm(total=n_iter, desc=self.desc or type(model).__name__,
                         leave=self.leave, unit="it")

    def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> None:
        if self._bar is not None:
            ll = info.get("log_likelihood")
            if ll is not None and math.isfinite(ll):
                self._bar.set_postfix(ll=f"{ll:.4f}", refresh=False)
            self._bar.update(1)

    def on_train_end(self, model: Any) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class EarlyStopping:
    """Stop when the log-likelihood per token changes by less than ``tol`` (relative)
    over ``patience`` consecutive iterations, after ``min_iter`` iterations."""

    reads_state = False      # info and estimates only

    def __init__(self, tol: float = 1e-4, patience: int = 10, min_iter: int = 20) -> None:
        self.tol = tol
        self.patience = patience
        self.min_iter = min_iter
        self._last: float | None = None
        self._calm = 0

    def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> bool:
        ll = info.get("log_likelihood", float("nan"))
        if not math.isfinite(ll):
            return False
        if self._last is not None and abs(ll - self._last) <= self.tol * abs(self._last):
            self._calm += 1
        else:
            self._calm = 0
        self._last = ll
        if iteration + 1 >= self.min_iter and self._calm >= self.patience:
            logger.info("early stop at iteration %d (log-likelihood %.5f)", iteration + 1, ll)
            return True
        return False


    def checkpoint_state(self) -> dict[str, Any]:
        return {"last": self._last, "calm": self._calm}

    def restore_checkpoint_state(self, memory: dict[str, Any]) -> None:
        self._last, self._calm = memory["last"], int(memory["calm"])


class EvaluateEvery:
    """Call ``fn(model) -> dict`` every ``every`` iterations and record the results in
    ``self.history`` (list of ``(iteration, dict)``), e.g. held-out perplexity.

    The engine publishes the current estimates to the model before calling it
    (``needs_estimates``), so ``fn`` scores the fit in progress, on a first fit too.
    """

    reads_state = False      # info and estimates only

    needs_estimates = True

    def __init__(self, fn: Callable[[Any], dict[str, float]], every: int = 10) -> None:
        self.fn = fn
        self.every = every
        self.history: list[tuple[int, dict[str, float]]] = []

    def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> None:
        if (iteration + 1) % self.every == 0:
            result = self.fn(model)
            self.history.append((iteration + 1, result))
            logger.info("iteration %d: %s", iteration + 1, result)


class LambdaCallback:
    """Wrap a function ``f(model, iteration, info) -> bool | None`` as a callback."""

    def __init__(self, f: Callable[[Any, int, dict[str, float]], bool | None]) -> None:
        self.f = f

    def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> bool | None:
        return self.f(model, iteration, info)


class RelativeTolerance:
    """Stop a monotone optimiser (variational EM) when its objective per token changes by
    less than ``tol`` (relative) in one iteration; warn once if it decreases (it must not,
    up to rounding).  ``name`` labels the warning."""

    reads_state = False      # info and estimates only

    def __init__(self, tol: float, name: str = "the model") -> None:
        self.tol = tol
        self.name = name
        self.last: float | None = None
        self.warned = False

    def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> bool:
        value = info.get("log_likelihood", float("nan"))
        if not math.isfinite(value):
            return False
        last, self.last = self.last, value
        if last is None:
            return False
        if value < last - 1e-9 * abs(last) and not self.warned:
            logger.warning("%s: the bound decreased at iteration %d (%.8f -> %.8f)",
                           self.name, iteration + 1, last, value)
            self.warned = True
        return self.tol > 0 and abs(value - last) <= self.tol * abs(last)

    def checkpoint_state(self) -> dict[str, Any]:
        return {"last": self.last, "warned": self.warned}

    def restore_checkpoint_state(self, memory: dict[str, Any]) -> None:
        self.last, self.warned = memory["last"], bool(memory["warned"])


class CpuTime:
    """The CPU seconds of a fit, resumes included: ``seconds`` is the process CPU time
    (``time.process_time``: every thread of this process) spent in the engine's runs it
    has watched, plus what a checkpoint recorded of the runs before (a fit resumed from
    ``checkpoint=PATH`` counts the CPU spent up to that checkpoint, not the iterations
    redone after it).  ``restored_seconds``: that record (0 for a fit that did not
    resume); ``resumed``: the count began from one (a checkpoint written without a
    ``CpuTime`` leaves it False and the earlier CPU uncounted).

    >>> clock = CpuTime()
    >>> model = LDA(10, callbacks=[clock]).fit(X)          # doctest: +SKIP
    >>> clock.seconds                                      # doctest: +SKIP
    """

    reads_state = False      # the clock only

    def __init__(self) -> None:
        self.before = 0.0
        self.restored_seconds = 0.0
        self.resumed = False
        self._start: float | None = None

    @property
    def seconds(self) -> float:
        running = 0.0 if self._start is None else time.process_time() - self._start
        return self.before + running

    def on_train_begin(self, model: Any, n_iter: int) -> None:
        self._start = time.process_time()

    def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> bool:
        return False

    def on_train_end(self, model: Any) -> None:
        self.before, self._start = self.seconds, None

    def checkpoint_state(self) -> dict[str, Any]:
        return {"seconds": self.seconds}

    def restore_checkpoint_state(self, memory: dict[str, Any]) -> None:
        self.before = self.restored_seconds = float(memory["seconds"])
        self.resumed = True
