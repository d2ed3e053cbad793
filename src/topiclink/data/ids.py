"""Explicit document-id normalisation (ids are strings matched exactly otherwise).

Citation files often write ids differently from the document files: SNAP's hep-th graph
writes ``1001`` for arXiv paper ``0001001``, another list ``hep-th/440`` for
``hep-th/0440``.  Nothing is guessed: the caller names a rule, applied to the document ids
and to both ends of every edge alike.

Rules
-----
``None``
    Exact match (only surrounding whitespace is ignored by the readers).
``"zero-pad:N"``
    Left-pad an all-digit id with zeros to ``N`` characters (``"1001"`` -> ``"0001001"``
    for ``N = 7``); a longer id, or one with other characters, is kept as it is.
``"strip-zeros"``
    Remove the leading zeros of an all-digit id (``"0001001"`` -> ``"1001"``;
    ``"000"`` -> ``"0"``); an id with other characters is kept as it is.
``"lower"``
    Lower-case (``"HEP-TH/9201001"`` -> ``"hep-th/9201001"``).
``"after-slash:RULE"``
    ``RULE`` (one of the three above) applied to the part after the last ``/`` only, the
    prefix kept as written (the whole id when it has no ``/``): prefixed ids such as
    arXiv's old ``archive/number``.  ``"after-slash:strip-zeros"`` makes ``"hep-th/0440"``
    and ``"hep-th/440"`` both ``"hep-th/440"``; ``"after-slash:zero-pad:7"`` makes
    ``"hep-th/440"`` ``"hep-th/0000440"``.
``"RULE+RULE"``
    Rules applied left to right, e.g. ``"lower+after-slash:strip-zeros"``
    (``"HEP-TH/0440"`` -> ``"hep-th/440"``).
callable
    ``f(id: str) -> str``, applied to every id.

Every rule string is idempotent (applying it twice gives what applying it once does).
:func:`suggest_id_rule` names the rule string under which most of a sample of unknown
ids become document ids: the readers' error messages propose it, they never apply it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

__all__ = ["IdRule", "ID_RULES", "normalize_ids", "id_normalizer", "suggest_id_rule"]

IdRule = str | Callable[[str], str] | None

_PAD = re.compile(r"zero-pad:(\d+)")

#: The rule strings, as a user reads them (``N``: a width).
ID_RULES = ("zero-pad:N", "strip-zeros", "lower", "after-slash:RULE", "RULE+RULE")

_RULES_SHOWN = ("'zero-pad:N' (e.g. 'zero-pad:7'), 'strip-zeros', 'lower', "
                "'after-slash:RULE' (e.g. 'after-slash:strip-zeros': 'hep-th/0440' -> "
                "'hep-th/440'), rules joined by '+'")


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
    parts = [part.strip() for part in rule.split("+")]
    fns = [_one_rule(part, rule) for part in parts]
    if len(fns) == 1:
        return fns[0]

    def composed(s: str) -> str:
        for fn in fns:
            s = fn(s)
        return s
    return composed


def _one_rule(part: str, rule: str) -> Callable[[str], str]:
    """The function of one ``+``-separated part of ``rule``."""
    if part.startswith("after-slash:"):
        inner = part[len("after-slash:"):].strip()
        if inner.startswith("after-slash:") or not inner:
            raise ValueError(f"unknown normalize_ids rule {rule!r}: after-slash: takes one "
                             f"of 'zero-pad:N', 'strip-zeros', 'lower'")
        fn = _one_rule(inner, rule)

        def after_slash(s: str) -> str:
            head, slash, tail = s.rpartition("/")
            return head + slash + fn(tail)
        return after_slash
    m = _PAD.fullmatch(part)
    if m:
        width = int(m.group(1))
        if width < 1:
            raise ValueError(f"normalize_ids {rule!r}: the width must be >= 1")
        return lambda s: s.zfill(width) if s.isdigit() else s
    if part == "strip-zeros":
        return lambda s: (s.lstrip("0") or "0") if s.isdigit() else s
    if part == "lower":
        return str.lower
    raise ValueError(f"unknown normalize_ids rule {rule!r}; use {_RULES_SHOWN}, a callable "
                     f"or None")


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


def _candidates(doc_ids: list[str]) -> list[str]:
    """Rule strings worth trying for these document ids (widths taken from them)."""
    widths = sorted({len(v) for v in doc_ids if v.isdigit()})
    tails = [v.rpartition("/")[2] for v in doc_ids if "/" in v]
    tail_widths = sorted({len(t) for t in tails if t.isdigit()})
    rules = [f"zero-pad:{w}" for w in widths[:3]] + ["strip-zeros", "lower"]
    if tails:
        rules += ["after-slash:strip-zeros", "lower+after-slash:strip-zeros"]
        rules += [f"after-slash:zero-pad:{w}" for w in tail_widths[:3]]
    return rules


def suggest_id_rule(doc_ids: object, unknown_ids: object, *, sample: int = 500
                    ) -> tuple[str, int, int] | None:
    """The rule string under which the most of ``unknown_ids`` become document ids.

    Tries zero-padding to the widths of the all-digit document ids, ``strip-zeros``,
    ``lower`` and, for prefixed document ids (``archive/number``), their ``after-slash:``
    forms, on up to ``sample`` distinct unknown ids.  A suggestion for a message only:
    nothing is applied.

    Returns
    -------
    (rule, matched, tried) or None
        ``matched`` of the ``tried`` unknown ids are document ids under ``rule``; ``None``
        when no rule matches any.
    """
    docs = [str(v) for v in np.asarray(doc_ids, dtype=str).tolist()]
    bad = list(dict.fromkeys(str(v) for v in np.asarray(unknown_ids, dtype=str).tolist()))
    bad = bad[:sample]
    if not docs or not bad:
        return None
    best: tuple[str, int, int] | None = None
    for rule in _candidates(docs):
        fn = id_normalizer(rule)
        assert fn is not None
        known = {fn(v) for v in docs}
        if len(known) < len(set(docs)):      # the rule would merge documents
            continue
        matched = sum(fn(v) in known for v in bad)
        if matched and (best is None or matched > best[1]):
            best = (rule, matched, len(bad))
    return best
