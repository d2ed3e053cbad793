"""Publication times (LMV(t)): numbers, or dates converted to one documented scale.

Accepted, one entry per document:

- real numbers (any scale: years, days, YYMM codes converted by you): kept as they are;
- dates: ``numpy.datetime64``, ``pandas.Timestamp`` (a timezone-aware one is taken in
  UTC), ``datetime.date`` / ``datetime.datetime``, or ISO 8601 text (``"1994-05-01"``,
  ``"1994-05"``, ``"1994-05-01T12:00"``, optionally ending in ``Z``): converted to
  **days since 1970-01-01** (floats; earlier dates are negative);

and refused with a one-line :class:`~topiclink.data.checks.DataError` naming the first
bad entry and its position: complex numbers, booleans, missing values (None, NaN, NaT),
a mix of numbers and dates, and any other text.  Numeric text with a decimal point, an
exponent or a sign (``"17.0"``, ``"1994.5"``, ``"-3"``, ``"1e3"``; surrounding blanks
allowed) is a number: the text must parse as a finite number exactly (``"17.0x"``,
``"1,5"`` and ``"nan"`` are refused).  Text of digits alone (``"0001"``, ``"9405"``,
``"1994"``) is refused rather than read as a number: such codes (hep-th's YYMM) do not
sort as times (``"0001"`` is January 2000, after ``"9912"``); convert them to dates or
numbers first.  Only the order of the times matters to LMV(t) (a cited
document newer than the citing one), so any numeric scale is fine, but the times of one
fit (and its ``partial_fit`` chunks) must share it.
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

import numpy as np
import pandas as pd

from topiclink.data.checks import DataError

__all__ = ["as_times"]

_ISO = re.compile(r"\d{4}-\d{2}(-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?)?Z?")
_DAY = np.timedelta64(1, "D")
#: numeric text read as a number: a sign, a decimal point or an exponent (digits alone
#: are refused: YYMM-like codes)
_NUMBER = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def as_times(values: Any, n_docs: int, name: str = "publication_time") -> np.ndarray:
    """``values`` (one per document) as float64 times: numbers as given, dates as days
    since 1970-01-01 (see the module docstring); one-line DataError otherwise."""
    if isinstance(values, pd.Series | pd.Index):
        values = values.to_numpy()
    if isinstance(values, str | bytes | dict | set):
        raise DataError(f"{name} must be a sequence of {n_docs} times, got "
                        f"{type(values).__name__}")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be a 1-D sequence of {n_docs} times") from None
    if arr.ndim != 1 or arr.shape[0] != n_docs:
        raise DataError(f"{name} has {arr.size} values for {n_docs} documents"
                        + (f" (shape {arr.shape})" if arr.ndim != 1 else ""))
    kind = arr.dtype.kind
    if kind in "iuf":
        t = arr.astype(np.float64)
    elif kind == "M":
        t = _days(arr, name)
    elif kind in "US" or kind == "O":
        t = _from_items(arr, name)
    else:
        what = {"c": "complex numbers", "b": "booleans", "m": "time spans"}.get(
            kind, f"dtype {arr.dtype}")
        raise DataError(f"{name} must hold numbers or dates, got {what}")
    bad = ~np.isfinite(t)
    if bad.any():
        d = int(np.flatnonzero(bad)[0])
        raise DataError(f"{name} of document {d} is {arr[d]!r} (not a finite time)")
    return t


def _days(arr: np.ndarray, name: str) -> np.ndarray:
    """datetime64 -> days since 1970-01-01 (NaT: a one-line error)."""
    nat = np.isnat(arr)
    if nat.any():
        d = int(np.flatnonzero(nat)[0])
        raise DataError(f"{name} of document {d} is missing (NaT)")
    return (arr - np.datetime64("1970-01-01", "D")) / _DAY


def _from_items(arr: np.ndarray, name: str) -> np.ndarray:
    """Entry by entry: all numbers, or all dates (datetime-likes or ISO text)."""
    out = np.empty(arr.shape[0], dtype=np.float64)
    first_kind: tuple[str, int] | None = None
    for d, item in enumerate(arr.tolist()):
        kind, value = _one(item, d, name)
        if first_kind is None:
            first_kind = (kind, d)
        elif kind != first_kind[0]:
            raise DataError(f"{name} mixes {first_kind[0]}s (document {first_kind[1]}) and "
                            f"{kind}s (document {d}: {item!r}); give one kind")
        out[d] = value
    return out


def _one(item: object, d: int, name: str) -> tuple[str, float]:
    if isinstance(item, bool | np.bool_) or item is None:
        raise DataError(f"{name} of document {d} is {item!r} (a number or a date expected)")
    if isinstance(item, int | float | np.integer | np.floating):
        return "number", float(item)
    if isinstance(item, pd.Timestamp):
        if item is pd.NaT:
            raise DataError(f"{name} of document {d} is missing (NaT)")
        if item.tzinfo is not None:
            item = item.tz_convert("UTC").tz_localize(None)
        return "date", float(_days(np.array([item.to_datetime64()]), name)[0])
    if isinstance(item, _dt.datetime):
        if item.tzinfo is not None:
            item = item.astimezone(_dt.UTC).replace(tzinfo=None)
        return "date", float(_days(np.array([np.datetime64(item, "us")]), name)[0])
    if isinstance(item, _dt.date):
        return "date", float(_days(np.array([np.datetime64(item, "D")]), name)[0])
    if isinstance(item, np.datetime64):
        return "date", float(_days(np.array([item]), name)[0])
    if isinstance(item, bytes):
        item = item.decode("ascii", "replace")
    if isinstance(item, str):
        text = item.strip()
        if _ISO.fullmatch(text):
            try:
                value = np.datetime64(text.rstrip("Z").replace(" ", "T"))
            except ValueError:
                raise DataError(f"{name} of document {d} is {item!r}, not a valid date"
                                ) from None
            return "date", float(_days(np.array([value]), name)[0])
        if _NUMBER.fullmatch(text) and not text.isdigit() and np.isfinite(float(text)):
            return "number", float(text)
        hint = (" (digits alone, e.g. hep-th's YYMM codes, are not read as numbers: convert "
                "them to numbers or dates)" if text.isdigit() else "")
        raise DataError(f"{name} of document {d} is the text {item!r}: give numbers, dates "
                        f"or ISO dates such as '1994-05-01'{hint}")
    raise DataError(f"{name} of document {d} is a {type(item).__name__} (a number or a "
                    "date expected)")
