"""Multi-relational data: (head, relation, tail, value) triples with an observed mask."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from topiclink.data.checks import DataError, as_real

__all__ = ["RelationalTensor"]

logger = logging.getLogger(__name__)

Duplicates = Literal["merge", "error"]


@dataclass(eq=False)
class RelationalTensor:
    """A sparse ``n_entities x n_entities x n_relations`` tensor of counts or indicators.

    Entries listed in ``heads/relations/tails/values`` are observed with that value; every
    other entry is observed and zero, except the entries listed in ``missing`` (shape
    ``(m, 3)``: head, relation, tail), which are unobserved (held out or unknown).  An
    entry both listed with a value and in ``missing`` is unobserved (``missing`` wins):
    its value is kept, e.g. to score a held-out cell, but no fit sees it
    (:meth:`observed_mask` is False there, :meth:`empty_relations` does not count it, the
    estimators leave it out of the likelihood); :meth:`hold_out` removes the value too.

    Attributes
    ----------
    heads, relations, tails : ndarray of int32, shape (n_entries,)
    values : ndarray of float64, shape (n_entries,)
    n_entities, n_relations : int
    entity_names, relation_names : ndarray of str
    missing : ndarray of int32, shape (m, 3)
    """

    heads: np.ndarray
    relations: np.ndarray
    tails: np.ndarray
    values: np.ndarray
    n_entities: int
    n_relations: int
    entity_names: np.ndarray | None = None
    relation_names: np.ndarray | None = None
    missing: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.check()
        key = self._keys(self.heads, self.relations, self.tails)
        uniq, cnt = np.unique(key, return_counts=True)
        if (cnt > 1).any():
            r = int(np.flatnonzero(key == uniq[cnt > 1][0])[1])
            raise DataError(f"triple {r} repeats ({self.heads[r]}, {self.relations[r]}, "
                            f"{self.tails[r]})")

    def check(self, what: str = "tensor") -> None:
        """Validate (and canonicalise) every field: sizes are integers >= 1; indices are
        finite whole numbers in range (int32); values are real, finite and >= 0; names
        have one entry per entity / relation, each non-blank and distinct.  One-line
        :class:`DataError` naming the field and the first bad entry.  Run at construction
        and again by the estimators before any kernel (the fields of a dataclass can be
        reassigned)."""
        for name in ("n_entities", "n_relations"):
            n = getattr(self, name)
            if isinstance(n, bool | np.bool_) or not isinstance(n, int | np.integer) \
                    or int(n) < 1:
                raise DataError(f"{what}: {name} must be an integer >= 1, got {n!r}")
            if int(n) >= 2**31:
                raise DataError(f"{what}: {name} = {int(n)} does not fit the int32 indices")
            setattr(self, name, int(n))
        self.heads = _indices(self.heads, "head", self.n_entities, what)
        n = self.heads.shape[0]
        self.relations = _indices(self.relations, "relation", self.n_relations, what, n)
        self.tails = _indices(self.tails, "tail", self.n_entities, what, n)
        self.values = as_real(self.values, f"{what}: values")
        if self.values.shape != (n,):
            raise DataError(f"{what}: values has {self.values.size} entries, heads has {n}")
        bad = ~np.isfinite(self.values) | (self.values < 0)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise DataError(f"triple {r}: value {self.values[r]} is not a finite count >= 0")
        if self.missing is None:
            self.missing = np.zeros((0, 3), dtype=np.int32)
        else:
            self.missing = self._check_entries(self.missing, "missing")
        for name, size in (("entity_names", self.n_entities),
                           ("relation_names", self.n_relations)):
            names = getattr(self, name)
            if names is None:
                continue
            names = np.asarray(names)
            if names.ndim != 1 or names.dtype.kind == "c":
                raise DataError(f"{what}: {name} must be a 1-D array of names")
            names = names.astype(str)
            if names.size != size:
                raise DataError(f"{what}: {name} has {names.size} entries for {size} "
                                f"{name.split('_')[0].replace('entity', 'entities')}"
                                f"{'s' if name.startswith('relation') else ''}")
            _check_names(names, name, what)
            setattr(self, name, names)

    def _check_entries(self, entries: object, what: str) -> np.ndarray:
        try:
            arr = np.asarray(entries)
        except (TypeError, ValueError):
            raise DataError(f"{what} entries must be an (m, 3) array of indices") from None
        if arr.size and (arr.ndim != 2 or arr.shape[1] != 3):
            raise DataError(f"{what} entries must be an (m, 3) array of indices, got shape "
                            f"{arr.shape}")
        arr = _indices(arr.reshape(-1), what, None, "tensor", row=f"{what} value"
                       ).reshape(-1, 3)
        bounds = np.array([self.n_entities, self.n_relations, self.n_entities])
        bad = (arr < 0) | (arr >= bounds)
        if bad.any():
            r, c = map(int, np.argwhere(bad)[0])
            name = ("head", "relation", "tail")[c]
            raise DataError(f"{what} entry {r}: {name} index {arr[r, c]} outside "
                            f"[0, {bounds[c]})")
        return arr.astype(np.int32)

    def _keys(self, h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        E = np.int64(self.n_entities)
        return (np.asarray(r, np.int64) * E + h) * E + t

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_dataframe(cls, df: pd.DataFrame, head: str = "head", relation: str = "relation",
                       tail: str = "tail", value: str | None = None,
                       entities: Sequence[object] | None = None,
                       relations: Sequence[object] | None = None,
                       duplicates: Duplicates = "merge") -> RelationalTensor:
        """From a table of triples, one ``(head, relation, tail[, value])`` per row.

        Parameters
        ----------
        df : pandas.DataFrame
        head, relation, tail : str
            Columns holding the names (any hashable; compared as ``str``).
        value : str, optional
            Column of counts (integers >= 0, any numeric dtype).  ``None``: binary, every
            listed triple is a one.  Rows with count 0 are observed zeros and are dropped
            (logged).
        entities, relations : sequence, optional
            Fixed vocabularies (their order is the index order; names may be unused).
            Default: the sorted union of the names found (heads and tails for entities),
            as :func:`~topiclink.data.io.read_triples`.
        duplicates : {"merge", "error"}
            A repeated (head, relation, tail): ``"merge"`` keeps it once (binary) or sums
            the counts (``value`` given), logging the number merged; ``"error"`` raises
            naming both rows.

        Raises
        ------
        DataError
            One line naming the problem and the row (the DataFrame's index label): a
            missing column, a missing name, a name outside ``entities``/``relations``, a
            count that is NaN, infinite, negative or not an integer, no rows / no nonzero
            count, a repeated triple (``duplicates="error"``).
        """
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
        cols = [head, relation, tail] + ([] if value is None else [value])
        for c in cols:
            if c not in df.columns:
                raise DataError(f"DataFrame has no column {c!r} (columns: "
                                f"{[str(x) for x in df.columns]})")
        labels = df.index

        def at(k: int) -> str:
            label = labels[k]
            label = label.item() if isinstance(label, np.generic) else label
            return f"row {k}" if label == k else f"row {k} (index {label!r})"

        vals = None if value is None else df[value].to_numpy(dtype=object)
        return cls._from_names(df[head].to_numpy(dtype=object),
                               df[relation].to_numpy(dtype=object),
                               df[tail].to_numpy(dtype=object), vals, entities, relations,
                               duplicates, at, (head, relation, tail, value), "DataFrame")

    @classmethod
    def from_networkx(cls, graph: object, relation: str = "relation", value: str | None = None,
                      relations: Sequence[object] | None = None,
                      duplicates: Duplicates = "merge") -> RelationalTensor:
        """From a directed networkx graph (``MultiDiGraph``): one triple per edge.

        Nodes become the entities, in the graph's node order (isolated nodes included),
        named ``str(node)``; each edge ``u -> v`` is the triple ``(u, edge[relation], v)``
        and, with ``value``, carries the count ``edge[value]``.  ``relations`` and
        ``duplicates`` (parallel edges with the same relation) as in
        :meth:`from_dataframe`.

        Raises
        ------
        TypeError
            Not a networkx graph.
        DataError
            One line naming the edge (``edge k (u -> v)``): an undirected graph, an edge
            without the ``relation`` (or ``value``) attribute, a bad count or relation name,
            a graph without edges.
        """
        import networkx as nx

        if not isinstance(graph, nx.Graph):
            raise TypeError(f"expected a networkx graph, got {type(graph).__name__}")
        if not graph.is_directed():
            raise DataError("graph is undirected; a relational tensor needs directed edges "
                            "(use nx.MultiDiGraph)")
        edges = list(graph.edges(data=True))
        for k, (u, v, d) in enumerate(edges):
            for attr in (relation, value):
                if attr is not None and attr not in d:
                    raise DataError(f"edge {k} ({u!r} -> {v!r}): no {attr!r} attribute")

        def at(k: int) -> str:
            u, v, _ = edges[k]
            return f"edge {k} ({u!r} -> {v!r})"

        heads = np.empty(len(edges), dtype=object)
        heads[:] = [u for u, _, _ in edges]
        tails = np.empty(len(edges), dtype=object)
        tails[:] = [v for _, v, _ in edges]
        rels = np.empty(len(edges), dtype=object)
        rels[:] = [d[relation] for _, _, d in edges]
        vals = None
        if value is not None:
            vals = np.empty(len(edges), dtype=object)
            vals[:] = [d[value] for _, _, d in edges]
        return cls._from_names(heads, rels, tails, vals, list(graph.nodes), relations,
                               duplicates, at, ("head", relation, "tail", value), "graph")

    @classmethod
    def _from_names(cls, heads: np.ndarray, rels: np.ndarray, tails: np.ndarray,
                    values: np.ndarray | None, entities: Sequence[object] | None,
                    relations: Sequence[object] | None, duplicates: str,
                    at: Callable[[int], str], fields: tuple[str, str, str, str | None],
                    source: str) -> RelationalTensor:
        """Shared body of :meth:`from_dataframe` and :meth:`from_networkx` (object arrays)."""
        if duplicates not in ("merge", "error"):
            raise ValueError(f"duplicates must be 'merge' or 'error', got {duplicates!r}")
        n = heads.shape[0]
        if n == 0:
            raise DataError(f"{source} holds no triples (no entries)")
        names = {}
        for what, arr, col in (("head", heads, fields[0]), ("relation", rels, fields[1]),
                               ("tail", tails, fields[2])):
            isnull = pd.isna(arr)
            if isnull.any():
                k = int(np.flatnonzero(isnull)[0])
                raise DataError(f"{at(k)}: missing {what} ({col!r})")
            names[what] = pd.Series(arr, dtype=object).astype(str).to_numpy(dtype=object)
        e_vocab = _vocabulary(entities, "entities",
                              np.concatenate([names["head"], names["tail"]]))
        r_vocab = _vocabulary(relations, "relations", names["relation"])
        idx = {}
        unknown = []  # (first bad row, column) per column: report the earliest row
        for what, vocab, opt in (("head", e_vocab, "entities"), ("relation", r_vocab, "relations"),
                                 ("tail", e_vocab, "entities")):
            idx[what] = pd.Index(vocab).get_indexer(names[what]).astype(np.int64)
            if (idx[what] < 0).any():
                unknown.append((int(np.flatnonzero(idx[what] < 0)[0]), what, opt))
        if unknown:
            k, what, opt = min(unknown)
            raise DataError(f"{at(k)}: unknown {what} {names[what][k]!r} (not in {opt}=)")
        if values is None:
            vals = np.ones(n)
        else:
            vals = _counts(values, at, fields[3])
        E, R = len(e_vocab), len(r_vocab)
        key = (idx["relation"] * E + idx["head"]) * E + idx["tail"]
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        if first.size < n:
            n_dup = n - first.size
            if duplicates == "error":
                dup = np.ones(n, dtype=bool)
                dup[first] = False
                k = int(np.flatnonzero(dup)[0])
                raise DataError(f"{at(k)}: repeats the triple of {at(int(first[inverse[k]]))}; "
                                f"{n_dup} repeated triples in all (duplicates='merge' "
                                f"{'keeps one' if values is None else 'sums the counts'})")
            if values is not None:
                vals = np.bincount(inverse, weights=vals, minlength=first.size)[inverse]
            logger.info("%s: merged %d duplicate triples (%s)", source, n_dup,
                        "kept once" if values is None else "counts summed")
        keep = np.sort(first)
        zero = vals[keep] == 0
        if zero.any():
            logger.info("%s: dropped %d triples with count 0 (observed zeros)", source,
                        int(zero.sum()))
            keep = keep[~zero]
        if keep.size == 0:
            raise DataError(f"{source} holds no nonzero count (no entries)")
        return cls(idx["head"][keep], idx["relation"][keep], idx["tail"][keep], vals[keep],
                   E, R, entity_names=np.asarray(e_vocab, dtype=str),
                   relation_names=np.asarray(r_vocab, dtype=str))

    def to_dataframe(self, head: str = "head", relation: str = "relation", tail: str = "tail",
                     value: str | None = "value") -> pd.DataFrame:
        """The listed entries as a table of names (indices when the tensor has none).

        ``value`` names the count column (int64 when every value is an integer), ``None``
        leaves it out.  ``from_dataframe(t.to_dataframe(), value="value",
        entities=t.entity_names, relations=t.relation_names)`` gives back ``t``.
        """
        e = self.entity_names if self.entity_names is not None else np.arange(self.n_entities)
        r = (self.relation_names if self.relation_names is not None
             else np.arange(self.n_relations))
        out = {head: e[self.heads], relation: r[self.relations], tail: e[self.tails]}
        if value is not None:
            v = self.values
            out[value] = v.astype(np.int64) if np.array_equal(v, np.round(v)) else v
        return pd.DataFrame(out)

    def to_networkx(self, relation: str = "relation", value: str | None = "value") -> object:
        """A ``networkx.MultiDiGraph``: every entity a node (its name), every entry an edge
        ``head -> tail`` with attribute ``relation`` (the relation name) and, unless
        ``value`` is None, the count.  :meth:`from_networkx` reads it back."""
        import networkx as nx

        df = self.to_dataframe(value=value)
        g = nx.MultiDiGraph()
        g.add_nodes_from((self.entity_names if self.entity_names is not None
                          else np.arange(self.n_entities)).tolist())
        cols = [df["head"].tolist(), df["tail"].tolist(), df["relation"].tolist()]
        if value is None:
            g.add_edges_from((h, t, {relation: r}) for h, t, r in zip(*cols, strict=True))
        else:
            cols.append(df[value].tolist())
            g.add_edges_from((h, t, {relation: r, value: v})
                             for h, t, r, v in zip(*cols, strict=True))
        return g

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.n_entities, self.n_entities, self.n_relations)

    @property
    def n_entries(self) -> int:
        return int(self.heads.size)

    def __repr__(self) -> str:
        return (f"RelationalTensor({self.n_entities} entities, {self.n_relations} relations, "
                f"{self.n_entries} nonzero entries, {len(self.missing)} unobserved)")

    def to_dense(self) -> tuple[np.ndarray, np.ndarray]:
        """Dense ``(E, E, R)`` value array and boolean observed mask (small tensors only)."""
        Y = np.zeros(self.shape)
        Y[self.heads, self.tails, self.relations] = self.values
        observed = np.ones(self.shape, dtype=bool)
        m = self.missing
        observed[m[:, 0], m[:, 2], m[:, 1]] = False
        return Y, observed

    def observed_mask(self, heads: np.ndarray, relations: np.ndarray,
                      tails: np.ndarray) -> np.ndarray:
        """Whether each queried entry is observed (not in ``missing``)."""
        q = self._keys(heads, relations, tails)
        m = self._keys(self.missing[:, 0], self.missing[:, 1], self.missing[:, 2])
        return ~np.isin(q, m)

    def empty_relations(self) -> np.ndarray:
        """Indices (ascending) of the relations without any observed nonzero entry (an
        entry also listed in ``missing`` is held out and does not count)."""
        nonzero = self.values > 0
        if len(self.missing) and nonzero.any():
            nonzero &= self.observed_mask(self.heads, self.relations, self.tails)
        seen = np.bincount(self.relations[nonzero], minlength=self.n_relations)
        return np.flatnonzero(seen == 0)

    def check_relations_nonempty(self, what: str = "tensor") -> None:
        """Refuse relations without data: a one-line :class:`DataError` naming the first
        relation (and how many in all) that has neither an observed nonzero entry nor a
        held-out entry (``missing``) -- nothing can be learned or predicted about it, and a
        relation listed in a vocabulary but never used is usually a mistake (a wrong
        ``relations=`` list, or a split that lost its triples).  A relation whose only
        entries are held out (a random hold-out can take the single triple of a rare
        relation) is legitimate: a WARNING names those instead."""
        empty = self.empty_relations()
        if not empty.size:
            return
        names = (self.relation_names if self.relation_names is not None
                 else np.arange(self.n_relations).astype(str))
        held = np.isin(empty, np.asarray(self.missing)[:, 1])
        absent, held_only = empty[~held], empty[held]

        def listing(rels: np.ndarray) -> str:
            shown = ", ".join(repr(str(names[r])) for r in rels[:5])
            return shown + (f", ... ({rels.size} in all)" if rels.size > 5 else "")

        if held_only.size:
            logger.warning("%s: %d of %d relations have no observed nonzero triple (their "
                           "entries are all held out): %s", what, held_only.size,
                           self.n_relations, listing(held_only))
        if absent.size:
            first = int(absent[0])
            raise DataError(f"{what}: relation {str(names[first])!r} (index {first}) has no "
                            f"triple (no observed nonzero entry, nothing held out); "
                            f"{absent.size} of {self.n_relations} relations are empty: "
                            f"{listing(absent)}")

    def hold_out(self, entries: np.ndarray) -> RelationalTensor:
        """A copy with ``entries`` ((m, 3): head, relation, tail) unobserved and removed."""
        entries = self._check_entries(entries, "held-out").astype(np.int64)
        q = self._keys(entries[:, 0], entries[:, 1], entries[:, 2])
        keep = ~np.isin(self._keys(self.heads, self.relations, self.tails), q)
        return RelationalTensor(
            self.heads[keep], self.relations[keep], self.tails[keep], self.values[keep],
            self.n_entities, self.n_relations, self.entity_names, self.relation_names,
            np.concatenate([self.missing, entries.astype(np.int32)]),
        )


def _indices(values: object, name: str, n: int | None, what: str, size: int | None = None,
             row: str = "triple") -> np.ndarray:
    """``values`` as int32 indices in ``[0, n)``: a 1-D array of integers (or whole,
    finite floats); one-line :class:`DataError` naming the first bad entry."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise DataError(f"{what}: {name} indices must be a 1-D array of integers") from None
    if arr.ndim != 1 or (size is not None and arr.shape[0] != size):
        shape = arr.shape
        raise DataError(f"{what}: {name} indices must be a 1-D array"
                        + (f" of {size} entries (as heads)" if size is not None else "")
                        + f", got shape {shape}")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf" and arr.size:
        raise DataError(f"{what}: {name} indices must be integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise DataError(f"{row} {r}: {name} index {arr[r].item()!r} is not a whole number")
    if n is None:                       # the caller checks the range (int64 kept)
        return arr.astype(np.int64)
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataError(f"{row} {r}: {name} index {arr[r]} outside [0, {n})")
    return arr.astype(np.int32)


def _check_names(names: np.ndarray, field: str, what: str) -> None:
    """Entity / relation names: each non-blank and distinct (a name is how a triple, a
    score or a stream chunk refers to it); one-line DataError naming the first bad one."""
    blank = np.flatnonzero(np.char.strip(names) == "")
    if blank.size:
        raise DataError(f"{what}: {field} entry {int(blank[0])} is empty ({blank.size} empty "
                        "names in all); every name must be non-blank")
    repeat = _first_repeat(names)
    if repeat is not None:
        name, pos = repeat
        raise DataError(f"{what}: {field} repeats the name {str(name)!r} (positions {pos[0]} "
                        f"and {pos[1]}); names must be distinct")


def _first_repeat(names: np.ndarray) -> tuple[object, list[int]] | None:
    """The first name (in sorted order) that occurs twice, and its first two positions."""
    uniq, counts = np.unique(names, return_counts=True)
    if not (counts > 1).any():
        return None
    name = uniq[counts > 1][0]
    return name, np.flatnonzero(names == name)[:2].tolist()


def _vocabulary(given: Sequence[object] | None, what: str, found: np.ndarray) -> np.ndarray:
    """Names as an object array of str: ``given`` (checked unique) or sorted ``found``."""
    if given is None:
        return np.asarray(sorted(set(found.tolist())), dtype=object)
    vocab = np.asarray([str(x) for x in np.asarray(given, dtype=object).ravel()], dtype=object)
    if vocab.size == 0:
        raise DataError(f"{what}= is empty")
    repeat = _first_repeat(vocab)
    if repeat is not None:
        name, pos = repeat
        raise DataError(f"{what}=: name {name!r} appears twice (positions {pos[0]} and "
                        f"{pos[1]})")
    return vocab


def _counts(values: np.ndarray, at: Callable[[int], str], col: str | None) -> np.ndarray:
    """``values`` (object array) as float64 counts; a one-line error names the first bad row."""
    num = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan)
    bad = np.isnan(num)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        if pd.isna(values[k]):
            raise DataError(f"{at(k)}: count ({col!r}) is missing (NaN)")
        raise DataError(f"{at(k)}: count ({col!r}) {values[k]!r} is not a number")
    for test, msg in ((~np.isfinite(num), "is not finite"), (num < 0, "is negative"),
                      (num != np.round(num), "is not an integer")):
        if test.any():
            k = int(np.flatnonzero(test)[0])
            raise DataError(f"{at(k)}: count ({col!r}) {values[k]!r} {msg}")
    return num
