"""Publication times parsed as the user declares them, on one human-readable scale.

Every parser returns **fractional years** (float64): ``2001.0`` is 1 January 2001,
``year + (month - 1) / 12`` for a year-month, ``year + (day_of_year - 1) / days_in_year``
for a calendar date.  The scale keeps the order of the dates (all the LMV model needs) and
stays readable (``2000.0`` = January 2000, ``1999.917`` = December 1999).

Nothing is guessed: ``time_format`` says what the strings are.

========== ======================================== ===============================
format     accepts                                  example -> value
========== ======================================== ===============================
"iso"      ``YYYY-MM-DD`` (a trailing time is        ``"2001-05-17"`` -> 2001.371
           ignored), ``YYYY-MM``, ``YYYY``
"year"     a 4-digit year                           ``"1999"`` -> 1999.0
"yymm"     2-digit year + month (arXiv ids), with   ``"0001"`` -> 2000.0,
           the century pivot below                  ``"9912"`` -> 1999.917
"yyyymm"   4-digit year + month                     ``"200105"`` -> 2001.333
"number"   any finite number, taken as it is        ``"3.5"`` -> 3.5
"%..."     a :func:`datetime.strptime` format       ``"%d/%m/%Y"``
========== ======================================== ===============================

Century pivot of ``"yymm"``: a two-digit year ``yy >= pivot`` is ``19yy``, else ``20yy``
(default :data:`YYMM_PIVOT` = 90: arXiv started in 1991, so ``"9108"`` is August 1991 and
``"0704"`` April 2007).  Parsing ``"0001"`` as the number 1 would sort January 2000
before 1999: that is why ``"number"`` is never the default for such codes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from datetime import date, datetime

import numpy as np

from topiclink.data.checks import DataError

__all__ = ["TIME_FORMATS", "YYMM_PIVOT", "format_year", "parse_cutoff", "parse_times",
           "yymm_to_year"]

#: Two-digit years at or above this are 19xx, below it 20xx (``"yymm"``).
YYMM_PIVOT = 90

_ISO = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?")
_YEAR = re.compile(r"[+-]?\d{1,4}")
_YYMM = re.compile(r"(\d{2})(\d{2})")
_YYYYMM = re.compile(r"(\d{4})(\d{2})")


def _frac_day(d: date) -> float:
    start = date(d.year, 1, 1).toordinal()
    n_days = date(d.year + 1, 1, 1).toordinal() - start
    return d.year + (d.toordinal() - start) / n_days


def _year_month(year: int, month: int) -> float:
    if not 1 <= month <= 12:
        raise ValueError(f"month {month}")
    return year + (month - 1) / 12


def _iso(s: str, pivot: int) -> float:
    m = _ISO.fullmatch(s)
    if not m:
        raise ValueError(s)
    year = int(m.group(1))
    if m.group(3) is not None:
        return _frac_day(date(year, int(m.group(2)), int(m.group(3))))
    if m.group(2) is not None:
        return _year_month(year, int(m.group(2)))
    return float(year)


def _year(s: str, pivot: int) -> float:
    if not _YEAR.fullmatch(s):
        raise ValueError(s)
    return float(int(s))


def yymm_to_year(code: str, pivot: int = YYMM_PIVOT) -> float:
    """A ``YYMM`` code (``"0001"``) as a fractional year (2000.0); see the module doc."""
    m = _YYMM.fullmatch(code)
    if not m:
        raise ValueError(code)
    yy = int(m.group(1))
    return _year_month((1900 if yy >= pivot else 2000) + yy, int(m.group(2)))


def _yyyymm(s: str, pivot: int) -> float:
    m = _YYYYMM.fullmatch(s)
    if not m:
        raise ValueError(s)
    return _year_month(int(m.group(1)), int(m.group(2)))


def _number(s: str, pivot: int) -> float:
    v = float(s)
    if not math.isfinite(v):
        raise ValueError(s)
    return v


_PARSERS: dict[str, Callable[[str, int], float]] = {
    "iso": _iso, "year": _year, "yymm": yymm_to_year, "yyyymm": _yyyymm, "number": _number}

#: The named formats of :func:`parse_times` (a ``strptime`` pattern with ``%`` works too).
TIME_FORMATS = tuple(_PARSERS)


def _strptime(fmt: str) -> Callable[[str, int], float]:
    def parse(s: str, pivot: int) -> float:
        return _frac_day(datetime.strptime(s, fmt).date())
    return parse


def _as_text(v: object) -> str | None:
    """A value as stripped text; None for a missing value (None, NaN, empty)."""
    if v is None:
        return None
    if isinstance(v, float | np.floating):
        if not math.isfinite(float(v)):
            return None
        if float(v).is_integer():
            return str(int(v))
        return repr(float(v))
    s = str(v).strip()
    return s or None


def parse_times(values: Sequence[object] | np.ndarray, time_format: str,
                pivot: int = YYMM_PIVOT, what: str = "time") -> np.ndarray:
    """Parse dates in the declared ``time_format`` into fractional years (float64).

    Parameters
    ----------
    values : sequence of str (or numbers)
        One entry per document.  Numbers are read through their text (``1999`` ->
        ``"1999"``), so an integer year column works with ``"year"``.
    time_format : str
        One of :data:`TIME_FORMATS` or a :func:`datetime.strptime` pattern (contains
        ``%``); see the module docstring.
    pivot : int
        Century pivot of ``"yymm"`` (default :data:`YYMM_PIVOT`).
    what : str
        Names the column (or file) in error messages.

    Raises
    ------
    DataError
        ``"<what>: row R value 'x' is not a <format> date; N of M values unparsable"`` for
        the first unparsable (or missing) entry.
    ValueError
        An unknown ``time_format``.
    """
    if not isinstance(time_format, str):
        raise ValueError(f"time_format must be a string, got {type(time_format).__name__}")
    if "%" in time_format:
        parser = _strptime(time_format)
    elif time_format in _PARSERS:
        parser = _PARSERS[time_format]
    else:
        raise ValueError(f"unknown time_format {time_format!r}; choose one of "
                         f"{', '.join(TIME_FORMATS)} or a strptime pattern such as '%d/%m/%Y'")
    seq = values.tolist() if isinstance(values, np.ndarray) else list(values)
    out = np.empty(len(seq), dtype=np.float64)
    bad: list[int] = []
    for i, v in enumerate(seq):
        s = _as_text(v)
        try:
            if s is None:
                raise ValueError("missing")
            out[i] = parser(s, pivot)
        except (ValueError, OverflowError):
            bad.append(i)
    if bad:
        r = bad[0]
        shown = "a missing value" if _as_text(seq[r]) is None else f"value {seq[r]!r}"
        raise DataError(f"{what}: row {r} has {shown}, not a {time_format!r} date; "
                        f"{len(bad)} of {len(seq)} values unparsable")
    return out


def format_year(t: float) -> str:
    """A fractional year as ``YYYY-MM`` (the month it falls in): ``2000.0`` ->
    ``"2000-01"``, ``1999.917`` -> ``"1999-12"``; non-integral inputs of the ``"number"``
    format print the same way."""
    year = math.floor(t)
    month = min(12, int(math.floor((t - year) * 12 + 1e-9)) + 1)
    return f"{year:04d}-{month:02d}"


def parse_cutoff(text: str, time_format: str | None = None) -> float:
    """A split's cutoff on the fractional-year scale: written as the time column is
    (``time_format``), or as an ISO date / year-month / year (``"2002-01"``), or as a
    fractional year (``"2002.0"``).  ValueError (one line) for anything else."""
    value = str(text).strip()
    readings: dict[str, float] = {}
    for fmt in dict.fromkeys(f for f in (time_format, "iso", "number") if f is not None):
        if fmt == "number" and readings:
            break
        try:
            reading = float(parse_times([value], fmt, what="cutoff")[0])
        except (DataError, ValueError):
            continue
        if fmt != "iso" or reading >= 1000 or not readings:  # "0201": not the year 201
            readings[fmt] = reading
    if not readings:
        raise ValueError(f"cutoff {value!r} is not a date: write it as the time column is"
                         f"{f' ({time_format})' if time_format else ''}, as an ISO date "
                         "(2002-01-31, 2002-01, 2002) or as a fractional year (2002.0)")
    values = sorted(set(readings.values()))
    if len(values) > 1:
        shown = ", ".join(f"{format_year(v)} as {f}" for f, v in readings.items())
        raise ValueError(f"cutoff {value!r} is ambiguous ({shown}); write it as an ISO "
                         "year-month such as 2002-01")
    return values[0]
