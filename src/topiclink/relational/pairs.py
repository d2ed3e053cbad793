"""Training pairs of the relational models and their per-document CSR views."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PairSet", "PairIndex"]


@dataclass
class PairIndex:
    """Pairs grouped by one endpoint: pair ``order[e]`` has neighbour ``nbr[e]``; the pairs
    of document d are ``ptr[d]:ptr[d + 1]``."""

    ptr: np.ndarray
    nbr: np.ndarray
    order: np.ndarray

    @classmethod
    def build(cls, key: np.ndarray, other: np.ndarray, n_docs: int) -> PairIndex:
        order = np.argsort(key, kind="stable")
        ptr = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(np.bincount(key, minlength=n_docs), out=ptr[1:])
        return cls(ptr, other[order].astype(np.int64), order.astype(np.int64))


@dataclass
class PairSet:
    """Labelled document pairs (source, target, y) with their regularisation constants.

    Attributes
    ----------
    source, target : int64 (n_pairs,)
    y : int8 (n_pairs,) in {0, 1}
    c : float64 (n_pairs,) — c_pos where y = 1, c_neg where y = 0
    out, into : PairIndex by source and by target
    """

    source: np.ndarray
    target: np.ndarray
    y: np.ndarray
    c: np.ndarray
    n_docs: int

    def __post_init__(self) -> None:
        self.out = PairIndex.build(self.source, self.target, self.n_docs)
        self.into = PairIndex.build(self.target, self.source, self.n_docs)

    @property
    def n_pairs(self) -> int:
        return int(self.source.size)

    def by_source(self, values: np.ndarray) -> np.ndarray:
        """Per-pair values in the order of :attr:`out`."""
        return np.ascontiguousarray(values[self.out.order])

    def by_target(self, values: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(values[self.into.order])
