"""Checkpoints of long fits: where they go, how often, and what they store beside the state.

Every estimator's ``fit`` declares ``checkpoint=PATH`` and ``checkpoint_every=`` (iterations
as an int, or a duration such as ``"30s"``, ``"10min"``, ``"2h"``; default ``"5min"``) and
hands them to :meth:`~topiclink.estimators.base.Estimator._run_engine`, which makes them a
:class:`CheckpointRequest` (:func:`checkpoint_request`).  The engine
(:func:`topiclink.inference.engine.run`) writes the model with its full sampler state
(the ``save(full=True)`` format) and the run's progress (:class:`RunProgress`: iterations
done, trace rows, averaging sums, kept samples, the stopping rules' memory) to ``PATH``, atomically,
every so often and when the fit ends.  Calling the same ``fit`` again with the same
``checkpoint`` after a crash or a ``kill -9`` continues from the last checkpoint and
returns the model an uninterrupted fit would have returned, draw for draw; after a fit
that ended, it returns that model without iterating.  An online fit
(``inference="online"`` / ``"stochastic"``) is also written inside a sweep, at minibatch
boundaries: when a duration has passed, or every N minibatches with
``checkpoint_every="N minibatches"``; it resumes at the next minibatch of that sweep.  A
``partial_fit`` given ``checkpoint=`` keeps a stream on disk
(:mod:`~topiclink.estimators.stream_checkpoint`).

:func:`checkpoint_folder` makes every fit inside a ``with`` block checkpoint into one
folder (file names from the estimator class and the order of the fits): the fallback of a
``fit`` given ``checkpoint=None``, which is how ``topiclink experiment --checkpoint-dir``
checkpoints the fits of a grid's cells.

Never two writers: a fit given a checkpoint holds an advisory lock (``fcntl.flock``) on
the sibling file ``PATH.lock`` from its start to its end (:func:`checkpoint_lock`), and a
second fit, in this process or another, given the same path is refused on one line
(:class:`CheckpointInUseError`) instead of overwriting the first one's file.  The kernel
drops the lock when its process dies, so a lock file left by a killed fit does not block
the run that resumes it.  On platforms without ``fcntl`` (Windows) the lock is a no-op.
A checkpoint that cannot be written (a full disk, a read-only folder) stops the fit with
a one-line :class:`~topiclink.persistence.SaveError`; the previous checkpoint is intact
and the same fit run again resumes from it.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from topiclink.inference.engine import PassProgress, RunProgress
from topiclink.persistence import SaveError, write_error

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, checkpoint_lock no-op
    fcntl = None  # type: ignore[assignment]

__all__ = ["CheckpointRequest", "parse_every", "checkpoint_folder", "progress_to_saved",
           "progress_from_saved", "check_progress_sums", "check_progress_samples",
           "checkpoint_request", "DEFAULT_EVERY", "checkpoint_lock",
           "CheckpointInUseError", "save_checkpoint"]

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


_MINIBATCHES = re.compile(r"\s*([0-9]+)\s*(minibatch|minibatches)\s*")


@dataclass
class CheckpointRequest:
    """A fit's checkpoint file and schedule (``every_minibatches``: at minibatch boundaries
    of an online fit's passes, ``checkpoint_every="N minibatches"``)."""

    path: Path
    every_iterations: int | None
    every_seconds: float | None
    every_minibatches: int | None = None

    @classmethod
    def make(cls, path: str | os.PathLike[str], every: int | str | float, *,
             count: str = "iterations") -> CheckpointRequest:
        """``count``: what an int ``every`` counts, ``"iterations"`` (``fit``) or
        ``"minibatches"`` (``partial_fit``, whose one iteration is its pass)."""
        if not isinstance(path, str | os.PathLike):
            raise TypeError(f"checkpoint must be a file path, not {type(path).__name__}")
        p = Path(path)
        if p.suffix != ".npz":
            p = p.with_name(p.name + ".npz")
        if p.is_dir():
            raise ValueError(f"checkpoint {p} is a directory; give a file path")
        match = _MINIBATCHES.fullmatch(every) if isinstance(every, str) else None
        if match is not None:
            n = int(match.group(1))
            if n < 1:
                raise ValueError(f"checkpoint_every must be >= 1 minibatch, got {every!r}")
            return cls(p, None, None, n)
        iterations, seconds = parse_every(every)
        if count == "minibatches" and iterations is not None:
            return cls(p, None, None, iterations)
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


# ---------------------------------------------------------------------- one writer
class CheckpointInUseError(OSError):
    """Another fit (this process or another) holds the checkpoint's lock: one line naming
    the checkpoint, the lock file and the process holding it."""


@contextlib.contextmanager
def checkpoint_lock(path: str | os.PathLike[str]) -> Iterator[Path | None]:
    """Hold the advisory lock ``PATH.lock`` of the checkpoint ``path`` for the block.

    ``fcntl.flock`` (exclusive, non-blocking) on the sibling file ``PATH.lock``, which
    holds the pid of the process that locked it.  Held: a one-line
    :class:`CheckpointInUseError`.  The kernel releases the lock of a process that dies
    (``kill -9`` included), so a lock file a killed fit left behind is taken over at
    once; the file is removed when the block ends (after checking, on taking the lock,
    that it is still the file at that path, so two fits can never both hold it).  The
    lock is per open file: a second fit of the same process is refused too.  A folder
    where the lock file cannot be created is a one-line
    :class:`~topiclink.persistence.SaveError` naming it, before any work.  Yields the lock
    file; a no-op yielding None where ``fcntl`` is missing (Windows)."""
    path = Path(path)
    if fcntl is None:  # pragma: no cover - Windows
        yield None
        return
    lock = path.with_name(path.name + ".lock")
    while True:
        try:
            lock.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as exc:
            raise write_error(path, exc, "checkpoint") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise write_error(path, exc, "checkpoint") from None
            error = CheckpointInUseError(
                f"checkpoint {path} is in use by another fit ("
                + (f"process {holder}" if holder.isdigit() else "another process")
                + f" holds its lock {lock}): never two writers of one checkpoint; wait for "
                "that fit to end, or give this one another checkpoint path")
            error.errno = errno.EWOULDBLOCK
            raise error from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)                  # its holder removed it as we opened it: again
    try:
        try:                          # who holds it, for the refusal's message
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:               # a full disk: the lock holds all the same
            pass
        yield lock
    finally:
        try:
            os.unlink(lock)           # while holding it: a waiting opener sees the change
        except OSError:
            pass
        os.close(fd)


def save_checkpoint(model: Any, path: Path, call: str = "fit") -> Path:
    """Write ``model`` with its full state to its checkpoint ``path`` (uncompressed: it is
    rewritten many times in a fit).  A write that fails (a full disk, a read-only folder)
    is a one-line :class:`~topiclink.persistence.SaveError` naming the call (``"fit"`` or
    ``"partial_fit"``), the iteration, the cause and that the previous checkpoint is
    intact and can be resumed from."""
    previous = path.is_file()
    try:
        return model.save(path, full=True, compress=False)
    except SaveError as exc:
        error = SaveError(
            f"{type(model).__name__}.{call}: the checkpoint after iteration "
            f"{getattr(model, 'n_iter_', '?')} was not written ({exc})"
            + (f"; run the same {call} again, once that is fixed, to resume from the previous "
               "checkpoint" if previous else
               f"; the {call} stopped before its first checkpoint"))
        error.errno = exc.errno
        raise error from None


# ---------------------------------------------------------------------- the fit keywords
def checkpoint_request(checkpoint: str | os.PathLike[str] | None,
                       checkpoint_every: int | str | float, owner: str, *,
                       partial: bool = False) -> CheckpointRequest | None:
    """The request of a ``fit``'s (or, ``partial``, a ``partial_fit``'s) ``checkpoint`` and
    ``checkpoint_every``, which every estimator declares and hands to the engine run.

    ``checkpoint=None``: the next file of the enclosing :func:`checkpoint_folder` block
    (named after ``owner``, the estimator's class), or None outside one; a stream
    (``partial``) checkpoints only where it is told to.  For a ``partial_fit`` an int
    ``checkpoint_every`` counts minibatches (its one iteration is its pass).  One-line
    TypeError / ValueError for a bad path or schedule."""
    if checkpoint is not None:
        return CheckpointRequest.make(checkpoint, checkpoint_every,
                                      count="minibatches" if partial else "iterations")
    return None if partial else request_from_folder(owner)


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
    if progress.pass_ is not None:
        arrays.update(_pass_to_saved(progress.pass_, meta))
    return arrays, meta


def _pass_to_saved(pass_: PassProgress, meta: dict[str, Any]) -> dict[str, np.ndarray]:
    """The pass in progress as ``run_/pass/items`` (int64), ``run_/pass/sums`` and
    ``run_/pass/last`` (float64, in the order of the header's ``run.pass`` keys)."""
    sums, last = sorted(pass_.sums), sorted(pass_.last)
    meta["pass"] = {"batch_size": int(pass_.batch_size), "done": int(pass_.done),
                    "sums": sums, "last": last}
    return {"run_/pass/items": np.asarray(pass_.items, dtype=np.int64),
            "run_/pass/sums": np.array([pass_.sums[k] for k in sums], dtype=np.float64),
            "run_/pass/last": np.array([pass_.last[k] for k in last], dtype=np.float64)}


def _pass_from_saved(spec: Any, arrays: dict[str, np.ndarray], where: str
                     ) -> PassProgress | None:
    """The pass in progress of a saved run (header member ``run.pass``), or None."""
    stored = sorted(k for k in arrays if k.startswith("run_/pass/"))
    if spec is None:
        if stored:
            raise ValueError(f"{where}: a pass in progress without a description in the "
                             "run header")
        return None
    expected = ["run_/pass/items", "run_/pass/last", "run_/pass/sums"]
    if stored != expected:
        raise ValueError(f"{where}: the run's pass in progress is stored as {stored}, "
                         f"expected {expected}")
    try:
        batch_size, done = int(spec["batch_size"]), int(spec["done"])
        sums, last = list(spec["sums"]), list(spec["last"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{where}: header member 'run.pass' is incomplete") from None
    items = arrays["run_/pass/items"]
    if items.ndim != 1 or items.dtype.kind not in "iu":
        raise ValueError(f"{where}: the pass's items are {items.shape} {items.dtype}, "
                         "expected a 1-d integer array")
    values = {}
    for name, keys in (("sums", sums), ("last", last)):
        figures = arrays[f"run_/pass/{name}"]
        if not all(isinstance(k, str) for k in keys) or figures.shape != (len(keys),) or \
                figures.dtype.kind != "f":
            raise ValueError(f"{where}: the pass's {name} are {figures.shape} "
                             f"{figures.dtype} for the keys {keys!r}")
        values[name] = {k: float(v) for k, v in zip(keys, figures, strict=True)}
    pass_ = PassProgress(np.array(items, dtype=np.int64), batch_size, done,
                         values["sums"], values["last"])
    if batch_size < 1 or not 0 <= done <= pass_.n_batches:
        raise ValueError(f"{where}: header member 'run.pass' is inconsistent ({done} of "
                         f"{pass_.n_batches} minibatches of {batch_size} done)")
    return pass_


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
    pass_ = _pass_from_saved(meta.get("pass"), arrays, where)
    if pass_ is not None and (stopped or done >= n_iter):
        raise ValueError(f"{where}: a pass in progress in a run that has ended")
    return RunProgress(n_iter=n_iter, done=done, rows=rows, sums=sums, n_summed=n_summed,
                       samples=samples, callbacks=callbacks, stopped=stopped,
                       pass_=pass_), previous


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
