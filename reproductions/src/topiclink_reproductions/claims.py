"""One checker for the papers' claims: a :class:`~topiclink_reproductions.spec.ClaimSpec`
against a results table gives a verdict, AGREES, PARTLY, DISAGREES or NOT CHECKED.

Three kinds of claim, each over the rows a selection (``{"model": "LMV", "eta": 0.5}``)
picks from the table:

``compare``
    Rows ``a`` and rows ``b`` paired on the columns ``on`` (``K``, ``fold``); the claim
    is ``a op factor * b`` for the metric.  With ``statistic = "cells"`` each pair is
    judged: AGREES when the share of pairs that hold is at least ``agree``, PARTLY when
    some hold, DISAGREES when none does.  With ``statistic = "mean"`` the means over the
    pairs are compared (AGREES or DISAGREES).
``ratio``
    ``mean(a) / mean(b)`` over the pairs within ``[low, high]``: AGREES; else PARTLY
    when the per-pair ratios reach into the interval, else DISAGREES (ours higher or
    lower).
``range``
    The metric of rows ``a`` within ``[low, high]``: AGREES when every value is, PARTLY
    when their range overlaps the interval, else DISAGREES (ours higher or lower).

A claim whose rows were not run is NOT CHECKED, with the reason.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from topiclink_reproductions.spec import ClaimSpec

__all__ = ["AGREES", "DISAGREES", "NOT_CHECKED", "PARTLY", "check_claim", "check_claims",
           "claim_lines", "select"]

AGREES, PARTLY, DISAGREES, NOT_CHECKED = "AGREES", "PARTLY", "DISAGREES", "NOT CHECKED"

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    ">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le}

#: the columns of :func:`check_claims`' table
COLUMNS = ("claim", "verdict", "metric", "cells", "share", "mean_a", "mean_b", "value",
           "detail")


def _matches(column: pd.Series, value: Any) -> pd.Series:
    if isinstance(value, float) and math.isnan(value):
        return column.isna()
    if isinstance(value, int | float) and not isinstance(value, bool) \
            and pd.api.types.is_numeric_dtype(column):
        return pd.Series(np.isclose(column.to_numpy(dtype=float), float(value)),
                         index=column.index)
    return column == value


def select(table: pd.DataFrame, where: Mapping[str, Any]) -> pd.DataFrame:
    """The rows of ``table`` whose columns equal ``where``'s values (numbers compared
    with :func:`numpy.isclose`; a column the table lacks selects nothing)."""
    keep = pd.Series(True, index=table.index)
    for col, value in where.items():
        if col not in table.columns:
            return table.iloc[0:0]
        keep &= _matches(table[col], value)
    return table[keep]


def _label(where: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in where.items())


def _row(claim: ClaimSpec, verdict: str, detail: str, cells: int = 0,
         share: float = math.nan, mean_a: float = math.nan, mean_b: float = math.nan,
         value: float = math.nan) -> dict[str, Any]:
    return {"claim": claim.name, "verdict": verdict, "metric": claim.metric,
            "cells": cells, "share": share, "mean_a": mean_a, "mean_b": mean_b,
            "value": value, "detail": detail}


def _pairs(claim: ClaimSpec, a: pd.DataFrame, b: pd.DataFrame
           ) -> tuple[np.ndarray, np.ndarray]:
    """The metric of ``a`` and ``b`` paired on ``claim.on`` (all rows against the mean
    of the other side without ``on``)."""
    if not claim.on:
        return (a[claim.metric].to_numpy(dtype=float),
                np.full(len(a), float(b[claim.metric].mean())))
    keys = list(claim.on)
    m = a[[*keys, claim.metric]].merge(b[[*keys, claim.metric]], on=keys,
                                       suffixes=("_a", "_b"))
    return (m[f"{claim.metric}_a"].to_numpy(dtype=float),
            m[f"{claim.metric}_b"].to_numpy(dtype=float))


def _interval(claim: ClaimSpec) -> tuple[float, float]:
    return (-math.inf if claim.low is None else claim.low,
            math.inf if claim.high is None else claim.high)


def _spread(values: np.ndarray, low: float, high: float) -> str:
    """The verdict of values against [low, high] (every one inside, overlap, or not)."""
    lo, hi = float(np.min(values)), float(np.max(values))
    if lo >= low and hi <= high:
        return AGREES
    if hi >= low and lo <= high:
        return PARTLY
    return f"{DISAGREES} (ours higher)" if lo > high else f"{DISAGREES} (ours lower)"


def check_claim(table: pd.DataFrame, claim: ClaimSpec) -> dict[str, Any]:
    """One claim on ``table``: a row of :func:`check_claims`."""
    if claim.metric not in table.columns:
        return _row(claim, NOT_CHECKED, f"no column {claim.metric!r}")
    a = select(table, claim.a).dropna(subset=[claim.metric])
    if a.empty:
        return _row(claim, NOT_CHECKED, f"{_label(claim.a)} not run")
    low, high = _interval(claim)
    if claim.kind == "range":
        values = a[claim.metric].to_numpy(dtype=float)
        verdict = _spread(values, low, high)
        return _row(claim, verdict, f"ours {values.min():.4g}-{values.max():.4g} over "
                    f"{values.size} rows", cells=values.size, mean_a=float(values.mean()),
                    value=float(values.mean()))
    b = select(table, claim.b).dropna(subset=[claim.metric])
    if b.empty:
        return _row(claim, NOT_CHECKED, f"{_label(claim.b)} not run")
    va, vb = _pairs(claim, a, b)
    if va.size == 0:
        return _row(claim, NOT_CHECKED, f"no {', '.join(claim.on)} run by both")
    mean_a, mean_b = float(va.mean()), float(vb.mean())
    if claim.kind == "ratio":
        ratio = mean_a / mean_b
        if low <= ratio <= high:
            verdict = AGREES
        elif _spread(va / vb, low, high).startswith(DISAGREES):
            verdict = _spread(np.array([ratio]), low, high)
        else:
            verdict = PARTLY
        return _row(claim, verdict, f"ours {ratio:.3f} ({claim.metric} {mean_a:.4g} / "
                    f"{mean_b:.4g}, {va.size} pairs)", cells=va.size, mean_a=mean_a,
                    mean_b=mean_b, value=ratio)
    op = _OPS[claim.op]
    scaled = f"{claim.factor:g} * " if claim.factor != 1.0 else ""
    if claim.statistic == "mean" or not claim.on:
        holds = bool(op(mean_a, claim.factor * mean_b))
        return _row(claim, AGREES if holds else DISAGREES,
                    f"mean {claim.metric} {mean_a:.4g} {claim.op} {scaled}{mean_b:.4g}: "
                    f"{holds}", cells=va.size, share=float(holds), mean_a=mean_a,
                    mean_b=mean_b, value=mean_a / mean_b if mean_b else math.nan)
    held = op(va, claim.factor * vb)
    share = float(held.mean())
    verdict = AGREES if share >= claim.agree else PARTLY if share > 0 else DISAGREES
    return _row(claim, verdict, f"holds in {int(held.sum())}/{held.size} "
                f"({', '.join(claim.on)}) pairs; mean {claim.metric} {mean_a:.4g} vs "
                f"{mean_b:.4g}", cells=held.size, share=share, mean_a=mean_a,
                mean_b=mean_b, value=mean_a / mean_b if mean_b else math.nan)


def check_claims(table: pd.DataFrame, claims: Sequence[ClaimSpec]) -> pd.DataFrame:
    """Every claim on ``table``: one row each (columns :data:`COLUMNS`), in order."""
    return pd.DataFrame([check_claim(table, c) for c in claims], columns=list(COLUMNS))


def claim_lines(findings: pd.DataFrame, claims: Sequence[ClaimSpec] = ()) -> list[str]:
    """The findings as text, one line per claim (``name: VERDICT; detail``, then the
    claim's note where ``claims`` gives it)."""
    notes = {c.name: c.note for c in claims}
    lines = []
    for row in findings.itertuples(index=False):
        note = notes.get(row.claim, "")
        lines.append(f"{row.claim}: {row.verdict}; {row.detail}" + (f" ({note})" if note
                                                                    else ""))
    return lines
