"""Input validation with one-line errors that name the problem and where it is."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["DataError", "check_n_topics", "check_counts_matrix", "check_positive", "where"]


class DataError(ValueError):
    """Malformed or inconsistent input data (a one-line message naming the location)."""


def where(path: str | None = None, line: int | None = None, row: int | None = None,
          id_: object | None = None) -> str:
    """Format a location such as ``cora.cites:17`` or ``row 3 (id 'x')``."""
    parts: list[str] = []
    if path is not None:
        parts.append(f"{path}:{line}" if line is not None else str(path))
    elif line is not None:
        parts.append(f"line {line}")
    if row is not None:
        parts.append(f"row {row}")
    if id_ is not None:
        parts.append(f"id {id_!r}")
    return " ".join(parts)


def check_n_topics(n_topics: object, name: str = "n_topics") -> int:
    """Validate a topic count: an integer >= 2."""
    if isinstance(n_topics, bool) or not isinstance(n_topics, int | np.integer):
        raise ValueError(f"{name} must be an integer >= 2, got {n_topics!r}")
    if n_topics < 2:
        raise ValueError(f"{name} must be >= 2, got {n_topics}")
    return int(n_topics)


def check_positive(value: object, name: str, allow_zero: bool = False) -> float:
    """Validate a finite positive scalar hyper-parameter."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return v


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def check_counts_matrix(X: object, n_words: int | None = None,
                        doc_ids: Sequence[object] | None = None,
                        name: str = "X") -> sp.csr_matrix:
    """Validate a document-term count matrix and return it as canonical int32 CSR.

    Rejects NaN/inf, negative and non-integer counts, naming the first offending
    document (row) and word (column).  Duplicate entries are summed.
    """
    if sp.issparse(X):
        M = sp.csr_matrix(X)
    else:
        arr = np.asarray(X)
        if arr.ndim != 2:
            raise DataError(f"{name} must be a 2-D document-term matrix, got shape {arr.shape}")
        if arr.dtype == object:
            raise DataError(f"{name} must be numeric, got dtype object")
        M = sp.csr_matrix(arr)
    if n_words is not None and M.shape[1] != n_words:
        raise DataError(f"{name} has {M.shape[1]} columns but the vocabulary has {n_words} words")
    M.sum_duplicates()
    data = M.data
    if data.dtype.kind not in "biuf":
        raise DataError(f"{name} must hold numbers, got dtype {data.dtype}")

    def _loc(pos: int) -> str:
        r = int(np.searchsorted(M.indptr, pos, side="right") - 1)
        label = f" (id {doc_ids[r]!r})" if doc_ids is not None else ""
        return f"document {r}{label}, word {int(M.indices[pos])}"

    if data.dtype.kind == "f":
        bad = ~np.isfinite(data)
        if bad.any():
            p = _first_bad(bad)
            raise DataError(f"{name}: non-finite count {data[p]} at {_loc(p)}")
        frac = data != np.round(data)
        if frac.any():
            p = _first_bad(frac)
            raise DataError(f"{name}: non-integer count {data[p]} at {_loc(p)}")
    neg = data < 0
    if neg.any():
        p = _first_bad(neg)
        raise DataError(f"{name}: negative count {data[p]} at {_loc(p)}")
    if data.size and data.max() > np.iinfo(np.int32).max:
        p = int(np.argmax(data))
        raise DataError(f"{name}: count {data[p]} at {_loc(p)} does not fit in int32")
    M = sp.csr_matrix((data.astype(np.int32), M.indices.astype(np.int32),
                       M.indptr.astype(np.int64)), shape=M.shape)
    M.eliminate_zeros()
    M.sort_indices()
    return M
