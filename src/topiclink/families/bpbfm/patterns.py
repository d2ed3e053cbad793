"""Observable patterns of a knowledge graph: the rules BPBFM's additive relational effects
are made of (:mod:`topiclink.families.bpbfm.em_patterns`).

A pattern is an indicator ``phi(h, t)`` in {0, 1} computed from the training triples
alone, over the 2R *directed relations* of the graph: ``d < R`` is relation d forward
(``h -d-> t`` when ``(h, d, t)`` is a training triple), ``d >= R`` relation ``d - R``
reversed (``(t, d - R, h)`` is one).  A pattern's code is ``(d1, d2)``:

- ``(d, -1)``: the 1-hop pattern ``h -d-> t`` (another relation, or any relation
  reversed: a relation's own forward pattern is the cell itself and never a candidate);
- ``(d1, d2)``: the 2-hop path ``h -d1-> x -d2-> t`` for some entity x.

Self-pairs are never covered: ``phi(h, h) = 0``.  This is Nickel, Jiang & Tresp's
"observable patterns" (NIPS 2014), here as rules whose rates add to the factor model's.

:func:`mine_patterns` chooses each relation's patterns: candidates from a seeded sample of
its training triples (at most :data:`MAX_TRIPLES` a relation, at most
:data:`MAX_PATHS` intermediate entities a triple, so that FB15k-237's hubs stay
tractable), then, per candidate, the exact support (training triples of the relation the
pattern covers) and exposure (cells ``(h, t)``, ``h != t``, it covers; 2-hop patterns
with more than :data:`MAX_PATTERN_PATHS` paths are skipped).  A pattern is kept when its
support is at least ``min_support``; the ``max_patterns`` of highest smoothed confidence
``support / (exposure + 5)`` are kept per relation.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["PATTERN_KINDS", "DirectedGraph", "PatternSet", "mine_patterns", "rule_text"]

logger = logging.getLogger(__name__)

#: the ``patterns`` options: no pattern, 1-hop patterns only, 1- and 2-hop patterns
PATTERN_KINDS = ("none", "inverse", "paths")
#: training triples per relation the candidates are enumerated from (a seeded sample)
MAX_TRIPLES = 1000
#: intermediate entities x enumerated per triple for 2-hop candidates (a seeded sample)
MAX_PATHS = 50
#: candidates per relation whose exact support and exposure are computed, per kept one
CANDIDATES_PER_KEPT = 3
#: 2-hop patterns with more paths than this (``sum_x indeg_d1(x) outdeg_d2(x)``) skipped
MAX_PATTERN_PATHS = 5_000_000
#: the smoothing of the confidence ``support / (exposure + CONFIDENCE_SMOOTHING)``
CONFIDENCE_SMOOTHING = 5.0


def _binary(rows: np.ndarray, cols: np.ndarray, n: int) -> sp.csr_array:
    m = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=(n, n))
    m.sum_duplicates()
    m.data[:] = 1.0
    return m


def _drop_diagonal(m: sp.csr_array, rows: np.ndarray) -> sp.csr_array:
    """``m`` (row i: entity ``rows[i]``) without the entries (i, rows[i]), as 0/1."""
    m = sp.csr_array(m)
    m.sum_duplicates()
    own = np.repeat(np.asarray(rows, dtype=np.int64), np.diff(m.indptr))
    m.data = np.where(m.indices == own, 0.0, 1.0)
    m.eliminate_zeros()
    return m


class DirectedGraph:
    """The 2R directed binary adjacency matrices of the training triples (module
    docstring) and each entity's out-edges over all of them."""

    def __init__(self, heads: np.ndarray, rels: np.ndarray, tails: np.ndarray,
                 n_entities: int, n_relations: int) -> None:
        h, r, t = (np.asarray(x, dtype=np.int64) for x in (heads, rels, tails))
        N, R = int(n_entities), int(n_relations)
        self.N, self.R = N, R
        forward = [_binary(h[r == d], t[r == d], N) for d in range(R)]
        self.adj = forward + [a.T.tocsr() for a in forward]
        src = np.concatenate([h, t])
        dst = np.concatenate([t, h])
        lab = np.concatenate([r, r + R])
        order = np.lexsort((lab, dst, src))
        self.out_dst, self.out_lab = dst[order], lab[order]
        self.out_ptr = np.searchsorted(src[order], np.arange(N + 1))

    def inverse(self, d: int) -> int:
        """The directed relation d reversed."""
        return (int(d) + self.R) % (2 * self.R)

    def out_edges(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(targets, directed relations) of entity i's out-edges, sorted by target."""
        lo, hi = self.out_ptr[i], self.out_ptr[i + 1]
        return self.out_dst[lo:hi], self.out_lab[lo:hi]

    def n_paths(self, code: tuple[int, int]) -> int:
        """The number of paths (an upper bound of the cells) of a pattern."""
        d1, d2 = int(code[0]), int(code[1])
        if d2 < 0:
            return int(self.adj[d1].nnz)
        into = np.diff(self.adj[self.inverse(d1)].indptr)    # x's in-degree along d1
        out = np.diff(self.adj[d2].indptr)
        return int(into @ out)

    def rows(self, code: tuple[int, int], a: np.ndarray) -> sp.csr_array:
        """``phi(a_i, .)`` as a 0/1 (len(a), N) CSR matrix."""
        a = np.asarray(a, dtype=np.int64)
        d1, d2 = int(code[0]), int(code[1])
        m = self.adj[d1][a]
        if d2 >= 0:
            m = m @ self.adj[d2]
        return _drop_diagonal(m, a)

    def matrix(self, code: tuple[int, int]) -> sp.csr_array:
        """``phi`` as a 0/1 (N, N) CSR matrix."""
        return self.rows(code, np.arange(self.N))

    def pairs(self, code: tuple[int, int], h: np.ndarray, t: np.ndarray) -> np.ndarray:
        """``phi(h_i, t_i)`` (bool, one per pair)."""
        h = np.asarray(h, dtype=np.int64)
        t = np.asarray(t, dtype=np.int64)
        if h.size == 0:
            return np.zeros(0, dtype=bool)
        d1, d2 = int(code[0]), int(code[1])
        if d2 < 0:
            hit = np.asarray(self.adj[d1][h, t]).ravel() > 0
        else:
            left = self.adj[d1][h]
            right = self.adj[self.inverse(d2)][t]            # x -d2-> t_i
            hit = np.asarray(left.multiply(right).sum(axis=1)).ravel() > 0
        return hit & (h != t)


@dataclass
class PatternSet:
    """Every relation's patterns, relation by relation: pattern p belongs to relation
    ``relation[p]`` (sorted), has the code ``codes[p]`` (module docstring), covers
    ``support[p]`` training triples of that relation and ``exposure[p]`` cells."""

    relation: np.ndarray      # (P,) int64
    codes: np.ndarray         # (P, 2) int64
    support: np.ndarray       # (P,) int64
    exposure: np.ndarray      # (P,) int64
    n_relations: int

    @property
    def n_patterns(self) -> int:
        return int(self.relation.size)

    @property
    def ptr(self) -> np.ndarray:
        """Relation r's patterns are ``ptr[r]:ptr[r + 1]``."""
        return np.searchsorted(self.relation, np.arange(self.n_relations + 1))

    def confidence(self) -> np.ndarray:
        """The smoothed confidence ``support / (exposure + 5)`` of each pattern."""
        return self.support / (self.exposure + CONFIDENCE_SMOOTHING)

    @classmethod
    def empty(cls, n_relations: int) -> PatternSet:
        z = np.zeros(0, dtype=np.int64)
        return cls(z, np.zeros((0, 2), dtype=np.int64), z.copy(), z.copy(), int(n_relations))


def _candidates(graph: DirectedGraph, heads: np.ndarray, tails: np.ndarray, r: int,
                paths: bool, rng: np.random.Generator) -> Counter:
    """How many of the (sampled) triples (h, r, t) each candidate pattern covers."""
    counts: Counter = Counter()
    for h, t in zip(heads.tolist(), tails.tolist(), strict=True):
        found: set[tuple[int, int]] = set()
        xs_h, ls_h = graph.out_edges(h)
        found.update((int(d), -1) for d in ls_h[xs_h == t] if d != r)
        if paths:
            xs_t, ls_t = graph.out_edges(t)
            common = np.intersect1d(xs_h, xs_t)
            if common.size > MAX_PATHS:
                common = rng.choice(common, MAX_PATHS, replace=False)
            for x in common.tolist():
                for d1 in ls_h[xs_h == x].tolist():
                    for back in ls_t[xs_t == x].tolist():   # t -back-> x: x -inv-> t
                        found.add((int(d1), graph.inverse(back)))
        counts.update(found)
    return counts


def mine_patterns(graph: DirectedGraph, heads: np.ndarray, rels: np.ndarray,
                  tails: np.ndarray, kind: str = "paths", *, min_support: int = 2,
                  max_patterns: int = 30, seed: int = 0) -> PatternSet:
    """Every relation's patterns from its training triples (module docstring).

    Parameters
    ----------
    graph : the training triples' :class:`DirectedGraph`
    heads, rels, tails : the training triples (those of ``graph``)
    kind : ``"none"`` (no pattern), ``"inverse"`` (1-hop patterns), ``"paths"`` (1- and
        2-hop patterns)
    min_support : a kept pattern covers at least this many training triples of its
        relation (>= 1)
    max_patterns : at most this many patterns per relation, those of highest smoothed
        confidence
    seed : the seed of the samples of triples and of intermediate entities
    """
    if kind not in PATTERN_KINDS:
        raise ValueError(f"patterns must be one of {', '.join(PATTERN_KINDS)}, got {kind!r}")
    R = graph.R
    if kind == "none" or max_patterns < 1:
        return PatternSet.empty(R)
    h, r, t = (np.asarray(x, dtype=np.int64) for x in (heads, rels, tails))
    rng = np.random.default_rng(seed)
    exposures: dict[tuple[int, int], int] = {}
    kept: list[tuple[int, tuple[int, int], int, int]] = []
    n_candidates = n_skipped = 0
    for q in range(R):
        idx = np.flatnonzero(r == q)
        if idx.size == 0:
            continue
        sample = idx if idx.size <= MAX_TRIPLES else np.sort(
            rng.choice(idx, MAX_TRIPLES, replace=False))
        counts = _candidates(graph, h[sample], t[sample], q, kind == "paths", rng)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ranked = ranked[:CANDIDATES_PER_KEPT * max_patterns]
        n_candidates += len(ranked)
        rows = []
        for code, _ in ranked:
            if code not in exposures:
                if code[1] >= 0 and graph.n_paths(code) > MAX_PATTERN_PATHS:
                    exposures[code] = -1
                else:
                    exposures[code] = int(graph.matrix(code).nnz)
            if exposures[code] < 0:
                n_skipped += 1
                continue
            support = int(graph.pairs(code, h[idx], t[idx]).sum())
            if support >= max(int(min_support), 1):
                rows.append((support / (exposures[code] + CONFIDENCE_SMOOTHING), code,
                             support))
        rows.sort(key=lambda x: (-x[0], x[1]))
        kept.extend((q, code, s, exposures[code]) for _, code, s in rows[:max_patterns])
    logger.info("patterns (%s): %d candidates, %d skipped (over %d paths), %d kept over "
                "%d relations", kind, n_candidates, n_skipped, MAX_PATTERN_PATHS, len(kept),
                R)
    if not kept:
        return PatternSet.empty(R)
    return PatternSet(np.array([k[0] for k in kept], dtype=np.int64),
                      np.array([k[1] for k in kept], dtype=np.int64).reshape(-1, 2),
                      np.array([k[2] for k in kept], dtype=np.int64),
                      np.array([k[3] for k in kept], dtype=np.int64), R)


def rule_text(code: tuple[int, int], relation: str, names: np.ndarray) -> str:
    """A pattern as a readable rule, e.g. ``_hypernym(h, t) <- _derivationally_related_
    form(h, x), _hypernym(x, t)`` (a reversed relation's atom has its arguments
    swapped)."""
    R = len(names)

    def atom(d: int, a: str, b: str) -> str:
        return f"{names[d]}({a}, {b})" if d < R else f"{names[d - R]}({b}, {a})"

    d1, d2 = int(code[0]), int(code[1])
    body = atom(d1, "h", "t") if d2 < 0 else f"{atom(d1, 'h', 'x')}, {atom(d2, 'x', 't')}"
    return f"{relation}(h, t) <- {body}"
