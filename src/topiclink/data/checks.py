"""Input validation with one-line errors that name the problem and where it is."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

__all__ = ["DataError", "available_memory", "check_counts_matrix", "check_flag", "check_ids",
           "check_index", "check_memory", "check_n_topics", "check_option", "check_positive",
           "check_vocabulary", "as_1d", "as_real", "where"]


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


def check_option(value: object, name: str, allowed: Sequence[str]) -> str:
    """``value`` when it is one of the strings ``allowed`` (an option such as
    ``duplicates="drop"``); a one-line ValueError naming ``name`` and the allowed values
    otherwise (an unknown option is never read as one of them)."""
    if not isinstance(value, str) or value not in allowed:
        listed = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return value


def check_flag(value: object, name: str, allow_none: bool = False) -> bool | None:
    """``value`` as a bool when it is True or False (or None with ``allow_none``); a
    one-line ValueError naming ``name`` otherwise (``"no"`` is not read as True)."""
    if value is None and allow_none:
        return None
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False{' or None' if allow_none else ''}, "
                         f"got {value!r}")
    return bool(value)


def available_memory() -> int:
    """Bytes this process may still allocate: the smaller of the memory the system reports
    available (``MemAvailable``, else free physical pages) and the address-space limit
    (``ulimit -v``) less what the process already maps.  ``2**62`` when unknown."""
    limit = 2 ** 62
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    limit = min(limit, int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        try:
            limit = min(limit, os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (OSError, ValueError, AttributeError):
            pass
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and soft > 0:
            used = 0
            try:
                with open("/proc/self/statm") as f:
                    used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError, IndexError):
                pass
            limit = min(limit, max(soft - used, 0))
    except (ImportError, OSError, ValueError):
        pass
    return int(limit)


def _gib(n: float) -> str:
    return f"{n / 2 ** 30:.3g} GiB"


def check_memory(n_bytes: float, what: str, advice: str = "") -> None:
    """Refuse, before allocating, a request of ``n_bytes`` that cannot fit in memory.

    One-line :class:`DataError` ``"<what>: needs about X GiB, but only Y GiB of memory is
    available[; <advice>]"``.  Call it with an estimate of the arrays about to be built
    (``what`` names the cause, e.g. ``"docword.x.txt:2: W = 1000000000"`` or the call,
    ``"link_scores: 5000 queries x 25000 targets"``; ``advice`` what to do instead).
    """
    avail = available_memory()
    if n_bytes > avail:
        raise DataError(f"{what}: needs about {_gib(n_bytes)}, but only {_gib(avail)} of "
                        f"memory is available" + (f"; {advice}" if advice else ""))


def as_1d(values: object, name: str, n: int, what: str = "documents",
          dtype: type | None = None) -> np.ndarray:
    """``values`` as a 1-D array of ``n`` entries (``dtype`` str for names); one-line
    :class:`DataError` for a ragged, sparse, scalar or wrongly sized input."""
    if sp.issparse(values) or isinstance(values, str | bytes | dict | set):
        raise DataError(f"{name} must be a 1-D sequence, got {type(values).__name__}")
    try:
        arr = np.asarray(values) if dtype is None else np.asarray(values, dtype=dtype)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be a 1-D sequence of {n} entries, got "
                        f"{type(values).__name__} of uneven or mixed items") from None
    if arr.shape != (n,):
        raise DataError(f"{name} has {arr.size} entries (shape {arr.shape}) for {n} {what}")
    return arr


def as_real(values: object, name: str) -> np.ndarray:
    """``values`` as a float64 array of real numbers (booleans and integers converted).

    Refuses, with a one-line :class:`DataError` naming ``name``, what NumPy would convert
    silently or with a traceback: complex numbers (their imaginary part would be
    dropped), text (``"1.5"`` would be parsed), dates, and object arrays holding anything
    but real numbers (the first bad entry is named).  Finiteness is the caller's check.
    """
    if sp.issparse(values):
        raise DataError(f"{name} must be a dense array of numbers, got a sparse matrix")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be an array of numbers (got {type(values).__name__} "
                        "of uneven or mixed items)") from None
    kind = arr.dtype.kind
    if kind == "O":
        flat = arr.ravel()
        for i, item in enumerate(flat.tolist()):
            if isinstance(item, bool | np.bool_) or not isinstance(
                    item, int | float | np.integer | np.floating):
                at = f"entry {i}" if arr.ndim == 1 else \
                    f"entry {tuple(int(j) for j in np.unravel_index(i, arr.shape))}"
                raise DataError(f"{name} must be numbers: {at} is "
                                f"{type(item).__name__} {str(item)[:40]!r}")
        kind = "f"
    if kind == "c":
        raise DataError(f"{name} must be numbers, got complex values (real numbers "
                        f"expected; dtype {arr.dtype})")
    if kind not in "biuf":
        what = {"U": "text", "S": "bytes", "M": "dates", "m": "time spans",
                "V": "records"}.get(kind, str(arr.dtype))
        raise DataError(f"{name} must be numbers, got {what} (dtype {arr.dtype})")
    return arr.astype(np.float64)


def check_index(index: object, n: int, name: str = "index",
                what: str = "documents") -> np.ndarray:
    """Validate positions into ``n`` items; return them as an int64 array.

    A boolean array of length ``n`` is a mask (its true positions); otherwise a 1-D array of
    integers (or whole floats) in ``[0, n)`` (negative positions are refused).
    One-line :class:`DataError` naming the first bad entry.
    """
    expected = f"{name}: expected a 1-D array of {what[:-1]} positions or a boolean mask"
    if sp.issparse(index) or isinstance(index, str | bytes | dict | set):
        raise DataError(f"{expected}, got {type(index).__name__}")
    try:
        idx = np.asarray(index)
    except (TypeError, ValueError):
        raise DataError(expected) from None
    if idx.ndim == 0:
        shown = (repr(index).splitlines() or [""])[0][:40]
        raise DataError(f"{expected}, got {type(index).__name__} {shown}")
    if idx.ndim != 1:
        raise DataError(f"{name}: expected a 1-D array of positions, got shape {idx.shape}")
    if idx.dtype == bool:
        if idx.size != n:
            raise DataError(f"{name}: boolean mask has {idx.size} entries for {n} {what}")
        return np.flatnonzero(idx).astype(np.int64)
    if idx.size == 0:
        return np.zeros(0, dtype=np.int64)
    if idx.dtype.kind == "f":
        bad = ~np.isfinite(idx) | (idx != np.round(idx))
        if bad.any():
            p = _first_bad(bad)
            raise DataError(f"{name}: {what[:-1]} positions must be integers, entry {p} is "
                            f"{idx[p]!r}")
    elif idx.dtype.kind not in "iu":
        raise DataError(f"{name}: {what[:-1]} positions must be integers, got dtype "
                        f"{idx.dtype}")
    out = idx.astype(np.int64)
    bad = (out < 0) | (out >= n)
    if bad.any():
        p = _first_bad(bad)
        raise DataError(f"{name}: entry {p}: index {int(out[p])} is outside [0, {n}) "
                        f"({n} {what})")
    return out


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _plain(value: object) -> object:
    """A NumPy scalar as the Python value, for messages (``0``, not ``np.int64(0)``)."""
    return value.item() if isinstance(value, np.generic) else value


def check_ids(ids: object, name: str = "doc_ids", n: int | None = None,
              what: str = "documents") -> np.ndarray:
    """Validate external identifiers: a 1-D array of distinct integers or strings.

    Integers come back as int64, strings as a str array (an object array of only ints or
    only strings is converted).  Floats, booleans, None, NaN and mixed types are refused:
    ids must round-trip with their type, and ``19.5`` or ``NaN`` is not a usable key.
    One-line :class:`DataError` naming the first bad entry, or a repeated id and both of
    its positions (``n``: the expected number of entries).
    """
    if sp.issparse(ids) or isinstance(ids, str | bytes | dict | set):
        raise DataError(f"{name} must be a 1-D sequence of ids, got {type(ids).__name__}")
    try:
        arr = np.asarray(ids)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be a 1-D sequence of ids, got "
                        f"{type(ids).__name__} of uneven or mixed items") from None
    if arr.ndim != 1 or (n is not None and arr.size != n):
        size = f" for {n} {what}" if n is not None else ""
        raise DataError(f"{name} has {arr.size} entries (shape {arr.shape}){size}; "
                        f"expected a 1-D sequence")
    if arr.dtype.kind == "O":
        kinds = np.array([0 if isinstance(v, str) else 1 if _is_int(v) else 2
                          for v in arr.tolist()], dtype=np.int8)
        if arr.size and (kinds == 2).any():
            p = _first_bad(kinds == 2)
            raise DataError(f"{name}: entry {p} is {arr[p]!r} ({type(arr[p]).__name__}); "
                            f"ids must be integers or strings")
        if arr.size and (kinds != kinds[0]).any():
            p = _first_bad(kinds != kinds[0])
            raise DataError(f"{name}: entry {p} is {arr[p]!r} but entry 0 is {arr[0]!r}; "
                            f"ids must be all integers or all strings")
        arr = (np.asarray(arr.tolist(), dtype=np.int64) if arr.size and kinds[0] == 1
               else arr.astype(str))
    elif arr.dtype.kind == "S":
        arr = arr.astype(str)
    elif arr.dtype.kind not in "iuU":
        p = 0
        if arr.dtype.kind in "fc":
            bad = ~np.isfinite(arr)
            if bad.any():
                p = _first_bad(bad)
                raise DataError(f"{name}: {what[:-1]} {p} has id {arr[p].item()!r}; ids must "
                                f"be finite integers or strings")
        shown = f"; entry {p} is {arr[p].item()!r}" if arr.size else ""
        hint = " (convert whole numbers with .astype(int))" if arr.dtype.kind == "f" else ""
        raise DataError(f"{name}: ids must be integers or strings, got dtype "
                        f"{arr.dtype}{shown}{hint}")
    if arr.dtype.kind == "u":
        arr = arr.astype(np.int64) if arr.dtype.itemsize < 8 else arr
    _check_distinct(arr, name, "id")
    return arr


def _check_distinct(arr: np.ndarray, name: str, noun: str, path: object | None = None,
                    lines: Sequence[int] | None = None) -> None:
    """One-line DataError naming the first repeated value of ``arr`` and its two
    positions: ``entry i and entry j``, or ``file:line (first at line k)`` when ``path``
    and ``lines`` (the file line of each entry) are given."""
    if arr.size < 2:
        return
    order = np.argsort(arr, kind="stable")
    s = arr[order]
    rep = s[1:] == s[:-1]
    if not rep.any():
        return
    j = int(order[1:][rep].min())              # the earliest entry that repeats a value
    i = int(np.flatnonzero(arr == arr[j])[0])
    value, n_rep = arr[j].item(), int(rep.sum())
    if path is not None and lines is not None:
        raise DataError(f"{where(str(path), int(lines[j]))}: duplicate {noun} {value!r} "
                        f"(first at line {int(lines[i])}); {n_rep} repeats in all")
    raise DataError(f"{name}: duplicate {noun} {value!r} at entry {i} and entry {j}; "
                    f"{n_rep} repeats in all")


def check_vocabulary(words: object, name: str = "vocabulary", n: int | None = None,
                     path: object | None = None,
                     lines: Sequence[int] | None = None) -> np.ndarray:
    """Validate a vocabulary: a 1-D sequence of distinct words; returns a str array.

    ``n``: the expected number of words.  A repeated word is a one-line
    :class:`DataError` naming it and its two positions (``file:line`` of both when
    ``path`` and ``lines``, the file line of each word, are given).
    """
    if sp.issparse(words) or isinstance(words, str | bytes | dict | set):
        raise DataError(f"{name} must be a 1-D sequence of words, got {type(words).__name__}")
    try:
        arr = np.asarray(words)
        if arr.dtype.kind not in "US":
            if arr.dtype.kind not in "iuO" or any(v is None or isinstance(v, float)
                                                  for v in arr.ravel().tolist()):
                raise TypeError
        arr = arr.astype(str)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be a 1-D sequence of words (strings)") from None
    if arr.ndim != 1:
        raise DataError(f"{name} must be 1-D, got shape {arr.shape}")
    if n is not None and arr.size != n:
        raise DataError(f"{name} has {arr.size} words but counts has {n} columns")
    _check_distinct(arr, name, "word", path, lines)
    return arr


def check_counts_matrix(X: object, n_words: int | None = None,
                        doc_ids: Sequence[object] | None = None,
                        name: str = "X") -> sp.csr_matrix:
    """Validate a document-term count matrix and return it as canonical int32 CSR.

    Rejects NaN/inf, negative and non-integer counts, naming the first offending
    document (row) and word (column).  Duplicate entries are summed.
    """
    if sp.issparse(X):
        if X.dtype.kind not in "biuf":
            raise DataError(f"{name} must be numeric, got dtype {X.dtype}")
        M = sp.csr_matrix(X)
    else:
        if hasattr(X, "to_numpy"):  # pandas
            X = X.to_numpy()
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError):
            raise DataError(f"{name} must be a 2-D document-term matrix of numbers "
                            f"(got {type(X).__name__} of uneven rows or mixed items)") from None
        if arr.ndim != 2:
            raise DataError(f"{name} must be a 2-D document-term matrix, got shape {arr.shape}")
        if arr.dtype.kind not in "biuf":
            raise DataError(f"{name} must be numeric, got dtype {arr.dtype}")
        M = sp.csr_matrix(arr)
    if n_words is not None and M.shape[1] != n_words:
        raise DataError(f"{name} has {M.shape[1]} columns but the vocabulary has {n_words} words")
    M.sum_duplicates()
    data = M.data
    if data.dtype.kind not in "biuf":
        raise DataError(f"{name} must hold numbers, got dtype {data.dtype}")

    def _loc(pos: int) -> str:
        r = int(np.searchsorted(M.indptr, pos, side="right") - 1)
        label = f" (id {_plain(doc_ids[r])!r})" if doc_ids is not None else ""
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


# ---------------------------------------------------------------------- parameter constraints
class Constraint:
    """One accepted form of an estimator parameter; ``describe`` names it in errors."""

    def accepts(self, value: object) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _is_real(value: object) -> bool:
    return (isinstance(value, int | float | np.integer | np.floating)
            and not isinstance(value, bool | np.bool_))


def _bounds_text(low: float | None, high: float | None, low_open: bool, high_open: bool
                 ) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    return " and ".join(parts)


def _in_bounds(v: float, low: float | None, high: float | None, low_open: bool,
               high_open: bool) -> bool:
    if low is not None and (v < low or (low_open and v == low)):
        return False
    return not (high is not None and (v > high or (high_open and v == high)))


class Integer(Constraint):
    """An integer (never a bool) in ``[low, high]``; ``exclude`` lists forbidden values."""

    def __init__(self, low: int | None = None, high: int | None = None,
                 exclude: tuple[int, ...] = ()) -> None:
        self.low, self.high, self.exclude = low, high, exclude

    def accepts(self, value: object) -> bool:
        return (_is_int(value) and _in_bounds(int(value), self.low, self.high, False, False)
                and int(value) not in self.exclude)

    def describe(self) -> str:
        text = " ".join(p for p in ("an integer", _bounds_text(self.low, self.high, False,
                                                                False)) if p)
        if self.exclude:
            text += " other than " + ", ".join(str(e) for e in self.exclude)
        return text


class Real(Constraint):
    """A finite number (never a bool) in the interval given by ``low``/``high``."""

    def __init__(self, low: float | None = None, high: float | None = None, *,
                 low_open: bool = False, high_open: bool = False) -> None:
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open

    def accepts(self, value: object) -> bool:
        return (_is_real(value) and bool(np.isfinite(float(value)))
                and _in_bounds(float(value), self.low, self.high, self.low_open,
                               self.high_open))

    def describe(self) -> str:
        bounds = _bounds_text(self.low, self.high, self.low_open, self.high_open)
        return "a finite number" + (f" {bounds}" if bounds else "")


class Options(Constraint):
    """One of a fixed set of values (strings, or True/False)."""

    def __init__(self, *values: object) -> None:
        self.values = values

    def accepts(self, value: object) -> bool:
        return any(value is v or (type(value) is type(v) and value == v) for v in self.values)

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


class Boolean(Options):
    def __init__(self) -> None:
        super().__init__(True, False)

    def accepts(self, value: object) -> bool:
        return isinstance(value, bool | np.bool_)

    def describe(self) -> str:
        return "True or False"


class NoneValue(Constraint):
    def accepts(self, value: object) -> bool:
        return value is None

    def describe(self) -> str:
        return "None"


def _real_array_or_none(value: object) -> np.ndarray | None:
    """``value`` as an array of real numbers, or None when it is not an array of them
    (text, a bool, a single number, None, complex or object values)."""
    if isinstance(value, str | bytes | bool) or _is_real(value) or value is None:
        return None
    try:
        return as_real(value, "value")
    except DataError:
        return None


class PositiveVector(Constraint):
    """A 1-D (or, with ``per_row``, 2-D) array of finite numbers > 0."""

    def __init__(self, per_row: bool = False) -> None:
        self.per_row = per_row

    def accepts(self, value: object) -> bool:
        a = _real_array_or_none(value)
        return a is not None and (a.ndim in ((1, 2) if self.per_row else (1,)) and a.size > 0
                and bool(np.all(np.isfinite(a))) and bool(np.all(a > 0)))

    def describe(self) -> str:
        return ("an array (K,) or (D, K) of numbers > 0" if self.per_row
                else "an array of numbers > 0")


class TopicStatistics(Constraint):
    """A 2-D array (K, V) of finite numbers >= 0 with every row summing to > 0: topic-word
    statistics (expected counts) a model starts its topics from (``init_topics``)."""

    def accepts(self, value: object) -> bool:
        a = _real_array_or_none(value)
        return a is not None and (a.ndim == 2 and a.size > 0 and bool(np.all(np.isfinite(a)))
                and bool(np.all(a >= 0)) and bool(np.all(a.sum(axis=1) > 0)))

    def describe(self) -> str:
        return "an array (K, V) of numbers >= 0, every row with a positive sum"


def check_init_topics(value: object, n_topics: int, n_words: int, where: str) -> np.ndarray:
    """``init_topics`` as a float64 (K, V) array; one-line DataError for another shape."""
    a = as_real(value, "init_topics")
    if a.shape != (int(n_topics), int(n_words)):
        raise DataError(f"{where}: init_topics has shape {a.shape}, expected (n_topics, "
                        f"n_words) = ({n_topics}, {n_words})")
    return np.array(a, dtype=np.float64)


#: ``init_topics`` of the estimators that accept one
INIT_TOPICS = [NoneValue(), TopicStatistics()]


class InstanceOf(Constraint):
    def __init__(self, *types: type, name: str | None = None) -> None:
        self.types, self.name = types, name

    def accepts(self, value: object) -> bool:
        return isinstance(value, self.types)

    def describe(self) -> str:
        return self.name or "an instance of " + " or ".join(t.__name__ for t in self.types)


class RandomStateLike(Constraint):
    def accepts(self, value: object) -> bool:
        return (value is None or (_is_int(value) and int(value) >= 0)
                or isinstance(value, np.random.Generator | np.random.SeedSequence))

    def describe(self) -> str:
        return "None, an integer >= 0, a SeedSequence or a numpy Generator"


class CallbackList(Constraint):
    def accepts(self, value: object) -> bool:
        return value is None or (isinstance(value, list | tuple) and all(
            callable(getattr(cb, "on_iteration", None)) for cb in value))

    def describe(self) -> str:
        return "None or a list of callbacks (objects with on_iteration)"


#: the usual forms of the common parameters, for the estimators' constraint tables
N_TOPICS = [Integer(2)]
N_JOBS = [NoneValue(), Integer(exclude=(0,))]
RANDOM_STATE = [RandomStateLike()]
VERBOSE = [Boolean(), Integer(0)]
CALLBACKS = [CallbackList()]
POSITIVE = [Real(0, low_open=True)]
NON_NEGATIVE = [Real(0)]
PRIOR = [NoneValue(), Real(0, low_open=True), PositiveVector()]


def validate_params(owner: str, params: dict[str, object],
                    constraints: dict[str, list[Constraint]]) -> None:
    """Check every parameter against its declared forms; one-line ``ValueError`` naming
    the parameter, what it must be and what it was (``owner`` names the estimator)."""
    for name, forms in constraints.items():
        if name not in params:
            continue
        value = params[name]
        if not any(form.accepts(value) for form in forms):
            allowed = " or ".join(form.describe() for form in forms)
            raise ValueError(f"{owner}: {name} must be {allowed}, got {value!r}")


def doc_topic_prior_vector(doc_topic_prior: object, n_topics: int,
                           default: float = 0.1) -> np.ndarray:
    """alpha as a float64 vector (K,): None -> ``default``; a scalar -> K copies; an array
    must have K entries, finite and > 0 (one-line ValueError otherwise)."""
    if doc_topic_prior is None:
        return np.full(n_topics, default)
    a = np.asarray(doc_topic_prior, dtype=np.float64)
    if a.ndim == 0:
        check_positive(float(a), "doc_topic_prior")
        return np.full(n_topics, float(a))
    if a.shape != (n_topics,):
        raise ValueError(f"doc_topic_prior has {a.size} entries for {n_topics} topics")
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError("doc_topic_prior must be finite and > 0 for every topic")
    return a


def encode_labels(y: object, n_docs: int) -> tuple[object, np.ndarray]:
    """Validate the labels of ``n_docs`` documents and encode them as 0..n_classes-1.

    One-line :class:`DataError` for a length mismatch, a non-finite label or a single
    class.  Returns the fitted :class:`sklearn.preprocessing.LabelEncoder` (``classes_``)
    and the integer codes.
    """
    from sklearn.preprocessing import LabelEncoder

    y = np.asarray(y)
    if y.shape != (n_docs,):
        shape = f" (shape {y.shape})" if y.ndim != 1 else ""
        raise DataError(f"y has {y.size} labels{shape} for {n_docs} documents")
    if y.dtype.kind == "c":
        raise DataError(f"y: labels must be numbers or text, got complex values (dtype "
                        f"{y.dtype})")
    if y.dtype.kind == "O":                 # no missing labels, one kind (numbers or text)
        kinds = set()
        for d, label in enumerate(y.tolist()):
            if label is None or (isinstance(label, float) and not np.isfinite(label)):
                raise DataError(f"y: label of document {d} is {label!r}")
            kind = ("text" if isinstance(label, str) else "number"
                    if isinstance(label, int | float | np.integer | np.floating)
                    and not isinstance(label, complex) else type(label).__name__)
            if kind not in ("text", "number"):
                raise DataError(f"y: label of document {d} is a {kind} (numbers or text "
                                "expected)")
            kinds.add(kind)
            if len(kinds) > 1:
                raise DataError(f"y mixes numbers and text (document {d}: {label!r})")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        bad = int(np.flatnonzero(~np.isfinite(y))[0])
        raise DataError(f"y: label of document {bad} is {y[bad]}")
    encoder = LabelEncoder().fit(y)
    codes = encoder.transform(y)
    if encoder.classes_.size < 2:
        raise DataError(f"y has a single class {encoder.classes_[0]!r}; need at least 2")
    return encoder, codes
