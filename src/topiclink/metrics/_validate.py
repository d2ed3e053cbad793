"""Shared input checks of the metrics (one-line ``ValueError``)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def refuse_complex(func: str, name: str, x: object) -> None:
    """Complex input would be cast to real silently (dropping the imaginary part)."""
    try:
        complex_ = np.iscomplexobj(x)
    except (TypeError, ValueError):  # ragged nested lists: left to the caller's conversion
        return
    if complex_:
        raise ValueError(f"{func}: {name} must hold real numbers, got complex values")


def real_matrix(func: str, name: str, x: ArrayLike, axes: str) -> NDArray[np.float64]:
    """``x`` as a non-empty 2-D float array without NaN (infinities allowed); ``axes``
    names its two axes in the error messages (complex input: :func:`refuse_complex`)."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{func}: {name} must be a 2-D array of real numbers") from None
    if arr.ndim != 2:
        raise ValueError(f"{func}: {name} must be 2-D ({axes}), got {arr.ndim}-D")
    if arr.size == 0:
        raise ValueError(f"{func}: {name} is empty (shape {arr.shape})")
    if np.isnan(arr).any():
        row, col = (int(i) for i in np.argwhere(np.isnan(arr))[0])
        raise ValueError(f"{func}: {name} contains NaN at [{row}, {col}]")
    return arr
