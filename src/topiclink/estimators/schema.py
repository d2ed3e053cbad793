"""Schemas of the arrays in a model file: what ``topiclink.load`` checks before it builds
an estimator (so a corrupt or edited file is one line naming the member, never a traceback
or an out-of-bounds read in a kernel).

Shapes are written with symbols (``("K", "V")``): every symbol must take one value across
all arrays of a file (``"*"`` is free).  ``kind`` is the NumPy dtype kind class
(``"f"`` float, ``"i"`` integer, ``"U"`` text, ``"*"`` any); ``check`` is a value
constraint: ``"finite"``, ``"positive"``, ``"nonnegative"``, ``"nonpositive"``,
``"probability"`` (in [0, 1]), ``"simplex"`` (non-negative, each slice along the last axis
sums to 1), ``"colsimplex"`` (non-negative, each slice along the second-to-last axis sums
to 1: columns that are distributions).  Every check but ``None`` includes "finite".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ArraySpec", "check_arrays"]

_KINDS = {"f": "fc", "i": "iu", "U": "US", "b": "b", "id": "iuUS", "*": None}
_KIND_NAMES = {"f": "floats", "i": "integers", "U": "text", "b": "booleans",
               "id": "integers or text (document ids)", "*": "anything"}


@dataclass(frozen=True)
class ArraySpec:
    shape: tuple[str | int, ...] | None
    kind: str = "f"
    check: str | None = "finite"


#: arrays without a declared spec: numbers must at least be finite
DEFAULT = ArraySpec(shape=None, kind="*", check="finite")


def check_arrays(where: str, arrays: dict[str, np.ndarray], specs: dict[str, ArraySpec],
                 sizes: dict[str, int] | None = None) -> dict[str, int]:
    """Check every array against its spec; returns the bound sizes (``{"K": 10, ...}``).

    Raises a one-line ``ValueError`` naming ``where`` and the member.
    """
    bound: dict[str, int] = dict(sizes or {})
    source = {symbol: "the parameters" for symbol in bound}
    for name in sorted(arrays):
        value = arrays[name]
        spec = specs.get(name, DEFAULT)
        kinds = _KINDS[spec.kind]
        if value.dtype == object or (kinds is not None and value.dtype.kind not in kinds):
            raise ValueError(f"{where}: array {name!r} has dtype {value.dtype}, expected "
                             f"{_KIND_NAMES[spec.kind]}")
        if spec.shape is not None:
            if value.ndim != len(spec.shape):
                raise ValueError(f"{where}: array {name!r} has {value.ndim} dimensions, "
                                 f"expected {len(spec.shape)} {spec.shape}")
            for axis, symbol in enumerate(spec.shape):
                if symbol == "*":
                    continue
                if isinstance(symbol, int):
                    if value.shape[axis] != symbol:
                        raise ValueError(f"{where}: array {name!r} has {value.shape[axis]} "
                                         f"entries along axis {axis}, expected {symbol}")
                    continue
                n = int(value.shape[axis])
                if symbol not in bound:
                    bound[symbol], source[symbol] = n, repr(name)
                elif bound[symbol] != n:
                    raise ValueError(f"{where}: array {name!r} has {n} {symbol} along axis "
                                     f"{axis} where {source[symbol]} has {bound[symbol]}")
        if value.dtype.kind in "fciu" and spec.check is not None:
            _check_values(where, name, value, spec.check)
    return bound


def _check_values(where: str, name: str, value: np.ndarray, check: str) -> None:
    if value.dtype.kind in "fc" and not np.all(np.isfinite(value)):
        raise ValueError(f"{where}: array {name!r} holds NaN or infinite values")
    if check in ("positive",) and value.size and np.min(value) <= 0:
        raise ValueError(f"{where}: array {name!r} must be > 0 (min {np.min(value)!r})")
    if check == "nonpositive" and value.size and np.max(value) > 0:
        raise ValueError(f"{where}: array {name!r} must be <= 0 (max {np.max(value)!r})")
    if check in ("nonnegative", "simplex", "colsimplex", "probability") and value.size \
            and np.min(value) < 0:
        raise ValueError(f"{where}: array {name!r} must be >= 0 (min {np.min(value)!r})")
    if check == "probability" and value.size and np.max(value) > 1:
        raise ValueError(f"{where}: array {name!r} holds probabilities, which must be <= 1 "
                         f"(max {np.max(value)!r})")
    if check in ("simplex", "colsimplex") and value.size:
        axis = -1 if check == "simplex" else -2
        sums = value.sum(axis=axis).ravel()
        worst = float(sums[np.argmax(np.abs(sums - 1.0))])
        if abs(worst - 1.0) > 1e-6:
            raise ValueError(f"{where}: array {name!r} must sum to 1 along its "
                             f"{'last' if axis == -1 else 'second-to-last'} axis (found a "
                             f"sum of {worst:.6g})")


#: the topics contract: K x V topics, D x K proportions, K weights, V words, K priors
TOPIC_ARRAYS = {
    "components_": ArraySpec(("K", "V"), "f", "simplex"),
    "doc_topic_": ArraySpec(("D", "K"), "f", "simplex"),
    "topic_weights_": ArraySpec(("K",), "f", "simplex"),
    "vocabulary_": ArraySpec(("V",), "U", None),
    "alpha_": ArraySpec(("K",), "f", "positive"),
}

#: the link-prediction contract's training documents
LINK_ARRAYS = {
    "train_zbar_": ArraySpec(("D", "K"), "f", "probability"),
    "train_doc_ids_": ArraySpec(("D",), "id", None),
    "train_titles_": ArraySpec(("*",), "U", None),
}
