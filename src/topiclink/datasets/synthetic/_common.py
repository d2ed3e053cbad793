"""Checks shared by the synthetic generators (argument validation, document lengths)."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["DocLength", "check_int", "check_prior", "doc_lengths"]

#: ``doc_length`` argument: every document N tokens, or ``(min, max)`` drawn uniformly.
DocLength = int | tuple[int, int]


def check_int(value: object, name: str, minimum: int) -> int:
    """``value`` as an int, raising ``ValueError`` unless it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_prior(value: object, size: int, name: str) -> np.ndarray:
    """A Dirichlet parameter: a scalar (symmetric) or ``size`` finite values > 0."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(size, float(arr))
    if arr.shape != (size,):
        raise ValueError(f"{name} must be a scalar or have {size} entries, got shape "
                         f"{arr.shape}")
    if not (np.isfinite(arr).all() and (arr > 0).all()):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return arr


def doc_lengths(doc_length: DocLength, n_docs: int, rng: np.random.Generator) -> np.ndarray:
    """Token count of each document: ``doc_length`` itself, or uniform on ``(min, max)``."""
    if isinstance(doc_length, numbers.Integral) and not isinstance(doc_length, bool):
        if doc_length < 1:
            raise ValueError(f"doc_length must be >= 1, got {doc_length}")
        return np.full(n_docs, int(doc_length), dtype=np.int64)
    try:
        lo, hi = doc_length  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"doc_length must be an int or a (min, max) pair, got "
                         f"{doc_length!r}") from None
    lo = check_int(lo, "doc_length min", 1)
    hi = check_int(hi, "doc_length max", lo)
    return rng.integers(lo, hi, size=n_docs, endpoint=True).astype(np.int64)
