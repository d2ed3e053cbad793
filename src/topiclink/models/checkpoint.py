"""Checkpoints of long fits: where they go, how often, and what they store beside the state.

Every estimator's ``fit`` takes ``checkpoint=PATH`` and ``checkpoint_every=`` (iterations
as an int, or a duration such as ``"30s"``, ``"10min"``, ``"2h"``).  The engine
(:func:`topiclink.inference.engine.run`) writes the model with its full sampler state
(the ``save(full=True)`` format) and the run's progress (:class:`RunProgress`: iterations
done, trace rows, averaging sums, kept samples, the stopping rules' memory) to ``PATH``, atomically,
every so often and when the fit ends.  Calling the same ``fit`` again with the same
``checkpoint`` after a crash or a ``kill -9`` continues from the last checkpoint and
returns the model an uninterrupted fit would have returned, draw for draw; after a fit
that ended, it returns that model without iterating.

:func:`checkpoint_folder` makes every fit inside a ``with`` block checkpoint into one
folder (file names from the estimator class and the order of the fits), which is how
``topiclink experiment --checkpoint-dir`` checkpoints the fits of a grid's cells.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from topiclink.inference.engine import RunProgress

__all__ = ["CheckpointRequest", "parse_every", "checkpoint_folder", "progress_to_saved",
           "progress_from_saved", "check_progress_sums", "check_progress_samples",
           "with_checkpoint_options", "DEFAULT_EVERY"]

#: how often a fit given ``checkpoint=`` writes it when ``checkpoint_every`` is not given
DEFAULT_EVERY = "5min"

_UNITS = {"s": 1.0, "sec": 1.0, "min": 60.0, "m": 60.0, "h": 3600.0}


def parse_every(every: int | str | float) -> tuple[int | None, float | None]:
    """``checkpoint_every`` -> (iterations, seconds): an int counts iterations; a string
    ``"<number><unit>"`` (unit s, min or h) or a float is seconds.  One-line ValueError."""
    if isinstance(every, bool):
        raise TypeError("checkpoint_every must be an int (iterations) or a duration such as "
                        "'10min', not a bool")
    if isinstance(every, int | np.integer):
        if every < 1:
            raise ValueError(f"checkpoint_every must be >= 1 iteration, got {every}")
        return int(every), None
    if isinstance(every, float):
        seconds = every
    elif isinstance(every, str):
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(s|sec|min|m|h)\s*", every)
        if match is None:
            if every.strip().isdigit():
                return parse_every(int(every))
            raise ValueError(f"checkpoint_every {every!r} is not a number of iterations or a "
                             "duration such as '30s', '10min' or '2h'")
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    else:
        raise TypeError(f"checkpoint_every must be an int or a duration string, not "
                        f"{type(every).__name__}")
    if not np.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"checkpoint_every must be a positive duration, got {every!r}")
    return None, float(seconds)


@dataclass
class CheckpointRequest:
    """A fit's checkpoint file and schedule."""

    path: Path
    every_iterations: int | None
    every_seconds: float | None

    @classmethod
    def make(cls, path: str | os.PathLike[str], every: int | str | float) -> CheckpointRequest:
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"checkpoint must be a file path, not {type(path).__name__}")
        p = Path(path)
        if p.suffix != ".npz":
            p = p.with_name(p.name + ".npz")
        if p.is_dir():
            raise ValueError(f"checkpoint {p} is a directory; give a file path")
        iterations, seconds = parse_every(every)
        return cls(p, iterations, seconds)


@dataclass
class _Folder:
    path: Path
    every: int | str | float
    counts: dict[str, int] = field(default_factory=dict)

    def next_request(self, class_name: str) -> CheckpointRequest:
        n = self.counts.get(class_name, 0)
        self.counts[class_name] = n + 1
        return CheckpointRequest.make(self.path / f"{class_name}-{n}.npz", self.every)


_FOLDER: contextvars.ContextVar[_Folder | None] = contextvars.ContextVar(
    "topiclink_checkpoint_folder", default=None)


@contextlib.contextmanager
def checkpoint_folder(path: str | os.PathLike[str] | None,
                      every: int | str | float = DEFAULT_EVERY) -> Iterator[None]:
    """Inside the block, every ``fit`` without its own ``checkpoint=`` checkpoints to
    ``path/<Class>-<n>.npz`` (n: the how-many-th fit of that class in the block), so the
    same code run again after a kill resumes each fit from its own file.  None: no-op."""
    if path is None:
        yield
        return
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    parse_every(every)
    token = _FOLDER.set(_Folder(folder, every))
    try:
        yield
    finally:
        _FOLDER.reset(token)


def request_from_folder(class_name: str) -> CheckpointRequest | None:
    folder = _FOLDER.get()
    return None if folder is None else folder.next_request(class_name)


# ---------------------------------------------------------------------- the fit keywords
def with_checkpoint_options(fit: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap an estimator's ``fit`` with the keyword-only ``checkpoint`` and
    ``checkpoint_every`` (applied to every estimator class by the base class)."""
    if getattr(fit, "_takes_checkpoint", False):
        return fit

    @functools.wraps(fit)
    def wrapper(self: Any, *args: Any, checkpoint: str | os.PathLike[str] | None = None,
                checkpoint_every: int | str | float = DEFAULT_EVERY, **kwargs: Any) -> Any:
        outer = getattr(self, "_checkpoint_request", None)
        if checkpoint is None and outer is not None:   # a subclass's fit calling super().fit
            return fit(self, *args, **kwargs)
        request = (CheckpointRequest.make(checkpoint, checkpoint_every)
                   if checkpoint is not None else request_from_folder(type(self).__name__))
        self._checkpoint_request = request
        try:
            return fit(self, *args, **kwargs)
        finally:
            self._checkpoint_request = outer
            if outer is None:
                del self._checkpoint_request

    signature = inspect.signature(fit)
    params = list(signature.parameters.values())
    extra = [inspect.Parameter("checkpoint", inspect.Parameter.KEYWORD_ONLY, default=None,
                               annotation="str | os.PathLike[str] | None"),
             inspect.Parameter("checkpoint_every", inspect.Parameter.KEYWORD_ONLY,
                               default=DEFAULT_EVERY, annotation="int | str")]
    tail = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    head = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
    wrapper.__signature__ = signature.replace(parameters=[*head, *extra, *tail])  # type: ignore[attr-defined]
    wrapper.__doc__ = (fit.__doc__ or "") + _FIT_DOC
    wrapper._takes_checkpoint = True  # type: ignore[attr-defined]
    return wrapper


_FIT_DOC = """

        Checkpoints (every estimator): ``checkpoint=PATH`` writes the model with its full
        sampler state to ``PATH`` (atomically) every ``checkpoint_every`` iterations (an
        int) or seconds (``"30s"``, ``"10min"``, ``"2h"``; default ``"5min"``) and when
        the fit ends.  Called again with the same ``PATH`` after a crash, ``fit`` resumes
        from the file and returns what an uninterrupted fit returns, draw for draw.
"""


# ---------------------------------------------------------------------- progress in files
def progress_to_saved(progress: RunProgress, previous_iter: int, *,
                      samples_published: bool = False
                      ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A run's progress as model-file arrays (``run_/sum/<key>``, and the kept samples
    stacked per key as ``run_/samples/<key>``, shape (S, ...)) and a header member.

    ``samples_published``: the model's published sample arrays are exactly these samples
    (:attr:`Estimator._sample_attributes`), so the header only says so and
    :func:`progress_from_saved` rebuilds the samples from them (a kept sample is stored
    once, not twice).  No kept sample: no member."""
    arrays = {f"run_/sum/{k}": np.asarray(v) for k, v in progress.sums.items()}
    meta: dict[str, Any] = {
        "n_iter": int(progress.n_iter), "done": int(progress.done),
        "n_summed": int(progress.n_summed), "stopped": bool(progress.stopped),
        "previous_iter": int(previous_iter), "callbacks": progress.callbacks,
        "sums": sorted(progress.sums)}
    if progress.samples:
        keys = sorted(progress.samples[0])
        meta["samples"] = {"n": len(progress.samples), "keys": keys,
                           "published": bool(samples_published)}
        if not samples_published:
            arrays.update({f"run_/samples/{k}": np.stack([s[k] for s in progress.samples])
                           for k in keys})
    return arrays, meta


def progress_from_saved(meta: Any, arrays: dict[str, np.ndarray], trace: dict[str, Any],
                        where: str, published: dict[str, np.ndarray] | None = None
                        ) -> tuple[RunProgress, int]:
    """(the progress, the iterations before this run) from a model file's members
    (``arrays``: its ``run_/...`` arrays; ``published``: the model's published sample
    arrays by sample key, read when the header says the kept samples are those); one-line
    ValueError naming ``where`` when they do not fit together.  A file written before
    samples were kept with the progress has none."""
    if not isinstance(meta, dict):
        raise ValueError(f"{where}: header member 'run' is not an object")
    try:
        n_iter, done, n_summed, previous = (int(meta[k]) for k in (
            "n_iter", "done", "n_summed", "previous_iter"))
        stopped = bool(meta["stopped"])
        callbacks = list(meta.get("callbacks") or [])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{where}: header member 'run' is incomplete") from None
    if not (0 <= done <= n_iter and 0 <= n_summed and previous >= 0):
        raise ValueError(f"{where}: header member 'run' is inconsistent ({done} of {n_iter} "
                         "iterations done)")
    n_rows = len(next(iter(trace.values()))) if trace else 0
    if n_rows != previous + done:
        raise ValueError(f"{where}: the trace has {n_rows} rows, the run header says "
                         f"{previous} + {done}")
    rows = [{k: float(v[i]) for k, v in trace.items() if not np.isnan(v[i])}
            for i in range(previous, previous + done)]
    listed = meta.get("sums", [])
    sum_arrays = {k.split("/", 2)[2]: v for k, v in arrays.items()
                  if k.startswith("run_/sum/")}
    found = sorted(sum_arrays)
    if not isinstance(listed, list) or sorted(map(str, listed)) != found:
        raise ValueError(f"{where}: the run's averaging sums are {found}, its header lists "
                         f"{listed!r}")
    sums = {}
    for name, value in sum_arrays.items():
        if value.dtype.kind != "f":
            raise ValueError(f"{where}: averaging sum {name!r} has dtype {value.dtype}, "
                             "expected floats")
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{where}: averaging sum {name!r} holds NaN or infinite values")
        sums[name] = np.array(value, dtype=float)
    if bool(sums) != (n_summed > 0):
        raise ValueError(f"{where}: {n_summed} averaged iterations but {len(sums)} sums")
    samples = _saved_samples(meta.get("samples"), arrays, published or {}, where)
    return RunProgress(n_iter=n_iter, done=done, rows=rows, sums=sums, n_summed=n_summed,
                       samples=samples, callbacks=callbacks, stopped=stopped), previous


def _saved_samples(spec: Any, arrays: dict[str, np.ndarray],
                   published: dict[str, np.ndarray], where: str
                   ) -> list[dict[str, np.ndarray]]:
    """The kept samples of a saved run (header member ``run.samples``: their number,
    keys and whether they are the published arrays), each a dict of copies."""
    stored = {k.split("/", 2)[2]: v for k, v in arrays.items()
              if k.startswith("run_/samples/")}
    if spec is None:
        if stored:
            raise ValueError(f"{where}: kept samples without a description in the run "
                             "header")
        return []
    try:
        n, keys, from_published = int(spec["n"]), list(spec["keys"]), spec["published"]
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{where}: header member 'run.samples' is incomplete") from None
    if n < 1 or not keys or not isinstance(from_published, bool) or not all(
            isinstance(k, str) for k in keys):
        raise ValueError(f"{where}: header member 'run.samples' is invalid ({spec!r})")
    if from_published:
        if stored:
            raise ValueError(f"{where}: kept samples stored twice (the run header says "
                             "they are the published ones)")
        missing = [k for k in keys if k not in published]
        if missing:
            raise ValueError(f"{where}: the run's kept sample {missing[0]!r} is not among "
                             "the model's published samples")
        source = published
    else:
        if sorted(stored) != sorted(keys):
            raise ValueError(f"{where}: the run's kept samples are {sorted(stored)}, its "
                             f"header lists {sorted(keys)}")
        source = stored
    for key in keys:
        shape = np.shape(source[key])
        if shape[:1] != (n,):
            raise ValueError(f"{where}: kept sample {key!r} has shape {shape}, the run "
                             f"header says {n} samples")
    return [{k: np.array(source[k][i]) for k in keys} for i in range(n)]


def check_progress_samples(progress: RunProgress, expected: dict[str, np.ndarray],
                           where: str) -> None:
    """The kept samples of a saved run must be what the algorithm keeps
    (``algorithm.retained``: names, shapes and dtype kinds); one-line ValueError naming
    ``where``."""
    for sample in progress.samples:
        if sorted(sample) != sorted(expected):
            raise ValueError(f"{where}: the saved kept samples hold {sorted(sample)}, the "
                             f"algorithm keeps {sorted(expected)}")
        for key, value in sample.items():
            ref = np.asarray(expected[key])
            if value.shape != ref.shape or value.dtype.kind != ref.dtype.kind:
                raise ValueError(f"{where}: kept sample {key!r} is {value.shape} "
                                 f"{value.dtype}, expected {ref.shape} {ref.dtype}")
            if value.dtype.kind == "f" and not np.all(np.isfinite(value)):
                raise ValueError(f"{where}: kept sample {key!r} holds NaN or infinite "
                                 "values")


def check_progress_sums(progress: RunProgress, expected: dict[str, np.ndarray],
                        where: str) -> None:
    """The averaging sums of a saved run must be those the algorithm averages (names and
    shapes); one-line ValueError naming ``where``."""
    if not progress.n_summed:
        return
    if sorted(progress.sums) != sorted(expected):
        raise ValueError(f"{where}: the saved averaging sums {sorted(progress.sums)} are not "
                         f"the algorithm's {sorted(expected)}")
    for key, value in progress.sums.items():
        if np.shape(value) != np.shape(expected[key]):
            raise ValueError(f"{where}: averaging sum {key!r} has shape {np.shape(value)}, "
                             f"expected {np.shape(expected[key])}")
