"""The Gibbs engine: owns the iteration loop, timing, trace and callbacks.

A model supplies ``step(iteration) -> dict`` (one full sweep over its blocks, returning
per-iteration figures such as seconds per block) and ``log_likelihood() -> float``; the
engine runs burn-in and sampling iterations, records the trace, and stops early when a
callback returns ``True``.

BLAS is limited to ``blas_threads`` threads (default 1) while the chain runs: its matrices
are small, and OpenBLAS's idle threads spin on the second core for a while after every
call, slowing the single-threaded Numba sweeps beside them (one Cora fold of Gibbs-gRTM at
K = 10: 12.7 s with the default two BLAS threads, 9.9 s with one;
``benchmarks/grtm_speed.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from topiclink.callbacks import ProgressBar

__all__ = ["ChainResult", "run_chain"]

logger = logging.getLogger(__name__)


@dataclass
class ChainResult:
    """What a chain run produced.

    ``trace`` maps a figure name (``"log_likelihood"``, ``"seconds"``, block timings) to
    an array with one entry per completed iteration.
    """

    n_iter: int
    stopped_early: bool
    trace: dict[str, np.ndarray] = field(default_factory=dict)


def run_chain(model: Any, step: Callable[[int], dict[str, float]],
              log_likelihood: Callable[[], float], n_iter: int,
              callbacks: Sequence[Any] | None = None, verbose: bool | int = False,
              evaluate_every: int = 1, desc: str | None = None,
              blas_threads: int | None = 1) -> ChainResult:
    """Run ``n_iter`` iterations of ``step`` with tracing and callbacks.

    Parameters
    ----------
    model : the estimator (passed to callbacks)
    step : one iteration; returns per-iteration figures (e.g. block timings)
    log_likelihood : figure of merit per token, evaluated every ``evaluate_every``
        iterations (NaN in the trace in between)
    verbose : a tqdm progress bar when truthy
    blas_threads : BLAS threads while the chain runs (``None``: leave BLAS alone)
    """
    if blas_threads is None:
        return _run_chain(model, step, log_likelihood, n_iter, callbacks, verbose,
                          evaluate_every, desc)
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        return _run_chain(model, step, log_likelihood, n_iter, callbacks, verbose,
                          evaluate_every, desc)


def _run_chain(model: Any, step: Callable[[int], dict[str, float]],
               log_likelihood: Callable[[], float], n_iter: int,
               callbacks: Sequence[Any] | None, verbose: bool | int,
               evaluate_every: int, desc: str | None) -> ChainResult:
    cbs = list(callbacks or [])
    if verbose:
        cbs.insert(0, ProgressBar(desc=desc))
    for cb in cbs:
        if hasattr(cb, "on_train_begin"):
            cb.on_train_begin(model, n_iter)
    rows: list[dict[str, float]] = []
    stopped = False
    try:
        for it in range(n_iter):
            t0 = time.perf_counter()
            info = dict(step(it))
            info["seconds"] = time.perf_counter() - t0
            last = it == n_iter - 1
            if evaluate_every and ((it + 1) % evaluate_every == 0 or last):
                info["log_likelihood"] = float(log_likelihood())
            else:
                info["log_likelihood"] = float("nan")
            rows.append(info)
            if logger.isEnabledFor(logging.DEBUG):
                logger.debug("iteration %d: %s", it + 1, info)
            for cb in cbs:
                if cb.on_iteration(model, it, info):
                    stopped = True
            if stopped:
                if not np.isfinite(info["log_likelihood"]):
                    info["log_likelihood"] = float(log_likelihood())
                break
    finally:
        for cb in cbs:
            if hasattr(cb, "on_train_end"):
                cb.on_train_end(model)
    keys = sorted({k for r in rows for k in r})
    trace = {k: np.array([r.get(k, np.nan) for r in rows], dtype=float) for k in keys}
    return ChainResult(n_iter=len(rows), stopped_early=stopped, trace=trace)
