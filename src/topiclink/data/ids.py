"""Explicit document-id normalisation (ids are strings matched exactly otherwise).

Citation files often write ids differently from the document files: SNAP's hep-th graph
writes ``1001`` for arXiv paper ``0001001``.  Nothing is guessed: the caller names a rule,
applied to the document ids and to both ends of every edge alike.

Rules
-----
``None``
    Exact match (only surrounding whitespace is ignored by the readers).
``"zero-pad:N"``
    Left-pad an all-digit id with zeros to ``N`` characters (``"1001"`` -> ``"0001001"``
    for ``N = 7``); a longer id, or one with other characters, is kept as it is.
``"strip-zeros"``
    Remove the leading zeros of an all-digit id (``"0001001"`` -> ``"1001"``;
    ``"000"`` -> ``"0"``).
``"lower"``
    Lower-case (``"HEP-TH/9201001"`` -> ``"hep-th/9201001"``).
callable
    ``f(id: str) -> str``, applied to every id.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

__all__ = ["IdRule", "normalize_ids", "id_normalizer"]

IdRule = str | Callable[[str], str] | None

_PAD = re.compile(r"zero-pad:(\d+)")


def id_normalizer(rule: IdRule) -> Callable[[str], str] | None:
    """The function of ``rule`` (see the module docstring); ``None`` for exact matching.

    Raises
    ------
    ValueError
        An unknown rule string (the message lists the rules).
    """
    if rule is None or callable(rule):
        return rule
    if not isinstance(rule, str):
        raise ValueError(f"normalize_ids must be a rule string, a callable or None, got "
                         f"{type(rule).__name__}")
    m = _PAD.fullmatch(rule.strip())
    if m:
        width = int(m.group(1))
        if width < 1:
            raise ValueError(f"normalize_ids {rule!r}: the width must be >= 1")
        return lambda s: s.zfill(width) if s.isdigit() else s
    if rule == "strip-zeros":
        return lambda s: (s.lstrip("0") or "0") if s.isdigit() else s
    if rule == "lower":
        return str.lower
    raise ValueError(f"unknown normalize_ids rule {rule!r}; use 'zero-pad:N' (e.g. "
                     f"'zero-pad:7'), 'strip-zeros', 'lower', a callable or None")


def normalize_ids(ids: object, rule: IdRule) -> np.ndarray:
    """``ids`` (a sequence of strings) after ``rule``, as a str array.

    A callable rule that does not return a string raises ``TypeError`` naming the id.
    """
    arr = np.asarray(ids, dtype=str) if not isinstance(ids, np.ndarray) else ids.astype(str)
    fn = id_normalizer(rule)
    if fn is None or arr.size == 0:
        return arr
    out = []
    for v in arr.tolist():
        w = fn(v)
        if not isinstance(w, str):
            raise TypeError(f"normalize_ids: the rule returned {type(w).__name__} for id "
                            f"{v!r}; it must return a string")
        out.append(w)
    return np.asarray(out, dtype=str)
