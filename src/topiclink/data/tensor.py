"""Multi-relational data: (head, relation, tail, value) triples with an observed mask."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from topiclink.data.checks import DataError

__all__ = ["RelationalTensor"]


@dataclass(eq=False)
class RelationalTensor:
    """A sparse ``n_entities x n_entities x n_relations`` tensor of counts or indicators.

    Entries listed in ``heads/relations/tails/values`` are observed with that value; every
    other entry is observed and zero, except the entries listed in ``missing`` (shape
    ``(m, 3)``: head, relation, tail), which are unobserved (held out or unknown).

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
        self.heads = np.asarray(self.heads)
        self.relations = np.asarray(self.relations)
        self.tails = np.asarray(self.tails)
        self.values = np.asarray(self.values, dtype=np.float64)
        n = self.heads.shape[0]
        for name in ("relations", "tails", "values"):
            if getattr(self, name).shape != (n,):
                raise DataError(f"{name} has {getattr(self, name).size} entries, heads has {n}")
        for name, arr, hi in (("head", self.heads, self.n_entities),
                              ("relation", self.relations, self.n_relations),
                              ("tail", self.tails, self.n_entities)):
            bad = (arr < 0) | (arr >= hi)
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                raise DataError(f"triple {r}: {name} index {arr[r]} outside [0, {hi})")
        bad = ~np.isfinite(self.values) | (self.values < 0)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise DataError(f"triple {r}: value {self.values[r]} is not a finite count >= 0")
        self.heads = self.heads.astype(np.int32)
        self.relations = self.relations.astype(np.int32)
        self.tails = self.tails.astype(np.int32)
        key = self._keys(self.heads, self.relations, self.tails)
        uniq, cnt = np.unique(key, return_counts=True)
        if (cnt > 1).any():
            r = int(np.flatnonzero(key == uniq[cnt > 1][0])[1])
            raise DataError(f"triple {r} repeats ({self.heads[r]}, {self.relations[r]}, "
                            f"{self.tails[r]})")
        if self.missing is None:
            self.missing = np.zeros((0, 3), dtype=np.int32)
        else:
            self.missing = self._check_entries(self.missing, "missing")
        if self.entity_names is not None:
            self.entity_names = np.asarray(self.entity_names, dtype=str)
        if self.relation_names is not None:
            self.relation_names = np.asarray(self.relation_names, dtype=str)

    def _check_entries(self, entries: object, what: str) -> np.ndarray:
        arr = np.asarray(entries, dtype=np.int64).reshape(-1, 3)
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
