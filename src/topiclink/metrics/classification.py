"""Perplexity and classification accuracy."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from sklearn.metrics import accuracy_score

__all__ = ["perplexity", "accuracy"]


def perplexity(log_likelihood: float, n_tokens: float) -> float:
    """Perplexity of held-out tokens, :math:`\\exp(-\\ell / N)`.

    Parameters
    ----------
    log_likelihood : float
        Total log-likelihood :math:`\\ell` (natural log) of the ``n_tokens`` tokens; finite
        and <= 0 (a positive value is refused: no probability of a token exceeds 1).
    n_tokens : int or float
        Number of tokens :math:`N > 0`.

    Returns
    -------
    float
        :math:`\\exp(-\\ell/N)` (``inf`` if it overflows).
    """
    try:
        ll = float(log_likelihood)
    except (TypeError, ValueError):
        raise ValueError("perplexity: log_likelihood must be a real number") from None
    try:
        n = float(n_tokens)
    except (TypeError, ValueError):
        raise ValueError("perplexity: n_tokens must be a positive number") from None
    if not math.isfinite(ll):
        raise ValueError(f"perplexity: log_likelihood must be finite, got {ll!r}")
    if ll > 0:
        raise ValueError(f"perplexity: log_likelihood must be <= 0 (a log-probability of "
                         f"tokens), got {ll!r}")
    if not (math.isfinite(n) and n > 0):
        raise ValueError(f"perplexity: n_tokens must be finite and > 0, got {n_tokens!r}")
    exponent = -ll / n
    return math.exp(exponent) if exponent < 709.0 else math.inf


def accuracy(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Fraction of correct predictions, :math:`\\frac{1}{n}\\sum_i [\\hat y_i = y_i]`.

    Parameters
    ----------
    y_true, y_pred : array_like, shape (n,)
        True and predicted labels, ``n >= 1``.

    Returns
    -------
    float
        :func:`sklearn.metrics.accuracy_score`.
    """
    yt = np.asarray(y_true)
    yp = np.asarray(y_pred)
    if yt.ndim != 1 or yp.ndim != 1:
        raise ValueError(f"accuracy: y_true and y_pred must be 1-D, got shapes {yt.shape} "
                         f"and {yp.shape}")
    if yt.shape != yp.shape:
        raise ValueError(f"accuracy: y_true has {yt.size} labels but y_pred has {yp.size}")
    if yt.size == 0:
        raise ValueError("accuracy: y_true is empty")
    for name, y in (("y_true", yt), ("y_pred", yp)):
        if y.dtype.kind == "c":
            raise ValueError(f"accuracy: {name} must not be complex")
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            i = int(np.flatnonzero(~np.isfinite(y))[0])
            raise ValueError(f"accuracy: {name}[{i}] is {y[i]}; labels must be finite")
        if y.dtype == object and any(v is None for v in y.tolist()):
            i = next(k for k, v in enumerate(y.tolist()) if v is None)
            raise ValueError(f"accuracy: {name}[{i}] is None")
    try:
        return float(accuracy_score(yt, yp))
    except (TypeError, ValueError) as exc:  # e.g. labels of mixed types
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"accuracy: labels cannot be compared: {msg}") from None
