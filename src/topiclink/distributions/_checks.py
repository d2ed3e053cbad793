"""Shared input checks of the distributions (one-line ``ValueError`` naming the index)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def first_bad(bad: NDArray[np.bool_]) -> str:
    """Format the index of the first True entry of ``bad`` (empty for a 0-d array)."""
    if bad.ndim == 0:
        return ""
    return "[" + ", ".join(str(int(i)) for i in np.argwhere(bad)[0]) + "]"


def as_floats(func: str, name: str, value: ArrayLike) -> NDArray[np.float64]:
    """Convert ``value`` to a float64 array or raise a one-line ValueError."""
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{func}: {name} must be a real number or array of reals") from None


def checked(func: str, name: str, value: ArrayLike, bound: str = "> 0", *,
            count: bool = False) -> NDArray[np.float64]:
    """``value`` as a float64 array whose entries are finite and ``bound`` (``"> 0"``,
    ``">= 0"``, or ``""``: finite only); the error names the first bad entry (``count``:
    and how many there are)."""
    arr = as_floats(func, name, value)
    bad = ~np.isfinite(arr)
    if bound:
        bad |= ~(arr > 0) if bound == "> 0" else ~(arr >= 0)
    if bad.any():
        n_bad = int(bad.sum())
        many = f" ({n_bad} invalid entr{'y' if n_bad == 1 else 'ies'})" if count else ""
        raise ValueError(
            f"{func}: {name} must be finite{' and ' + bound if bound else ''}, got "
            f"{name}{first_bad(bad)} = {float(arr[bad].flat[0])!r}{many}"
        )
    return arr


def broadcast(func: str, **arrays: NDArray) -> tuple[int, ...]:
    """Broadcast shape of ``arrays`` or a one-line ValueError naming them."""
    try:
        return np.broadcast_shapes(*(a.shape for a in arrays.values()))
    except ValueError:
        desc = " and ".join(f"{k} with shape {v.shape}" for k, v in arrays.items())
        raise ValueError(f"{func}: {desc} do not broadcast") from None
