"""Shared input checks of the metrics (one-line ``ValueError``)."""

from __future__ import annotations

import numpy as np


def refuse_complex(func: str, name: str, x: object) -> None:
    """Complex input would be cast to real silently (dropping the imaginary part)."""
    try:
        complex_ = np.iscomplexobj(x)
    except (TypeError, ValueError):  # ragged nested lists: left to the caller's conversion
        return
    if complex_:
        raise ValueError(f"{func}: {name} must hold real numbers, got complex values")
