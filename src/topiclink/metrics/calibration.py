"""Calibration of predicted probabilities: the reliability table and the expected
calibration error (Naeini, Cooper & Hauskrecht 2015; Guo et al. 2017).

Predictions are put in ``n_bins`` equal-width bins of [0, 1]; a bin's gap is
``|mean predicted - observed frequency|``; the ECE is the gaps' average weighted by the
bins' shares of the predictions.  A model whose probabilities mean what they say has a
small ECE whatever its ranking quality (AUC measures the ranking, not this).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

__all__ = ["expected_calibration_error", "reliability_table"]


def _checked(y_true: ArrayLike, proba: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y_true, dtype=np.float64).ravel()
    p = np.asarray(proba, dtype=np.float64).ravel()
    if y.size != p.size:
        raise ValueError(f"y_true has {y.size} entries, proba {p.size}")
    if y.size == 0:
        raise ValueError("no predictions to calibrate")
    if not np.all(np.isin(y, (0.0, 1.0))):
        raise ValueError("y_true must hold 0/1 outcomes")
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1:
        raise ValueError("proba must hold probabilities in [0, 1]")
    return y, p


def reliability_table(y_true: ArrayLike, proba: ArrayLike, n_bins: int = 10) -> pd.DataFrame:
    """One row per non-empty bin: ``lower``, ``upper``, ``count``, ``mean_proba``,
    ``observed`` (frequency of ones), ``gap`` (their absolute difference)."""
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1, got {n_bins!r}")
    y, p = _checked(y_true, proba)
    edges = np.linspace(0.0, 1.0, int(n_bins) + 1)
    which = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, int(n_bins) - 1)
    count = np.bincount(which, minlength=n_bins)
    mean_p = np.bincount(which, weights=p, minlength=n_bins)
    ones = np.bincount(which, weights=y, minlength=n_bins)
    keep = count > 0
    table = pd.DataFrame({"lower": edges[:-1], "upper": edges[1:], "count": count,
                          "mean_proba": mean_p / np.maximum(count, 1),
                          "observed": ones / np.maximum(count, 1)})[keep]
    table["gap"] = (table["mean_proba"] - table["observed"]).abs()
    return table.reset_index(drop=True)


def expected_calibration_error(y_true: ArrayLike, proba: ArrayLike, n_bins: int = 10
                               ) -> float:
    """ECE = sum over bins of (bin count / n) * |mean predicted - observed frequency|."""
    table = reliability_table(y_true, proba, n_bins)
    return float((table["count"] * table["gap"]).sum() / table["count"].sum())
