"""Observable patterns of a knowledge graph: the rules BPBFM's additive relational effects
are made of (:mod:`topiclink.families.bpbfm.em_patterns`).

A pattern is an indicator ``phi(h, t)`` in {0, 1} computed from the training triples
alone, over the 2R *directed relations* of the graph: ``d < R`` is relation d forward
(``h -d-> t`` when ``(h, d, t)`` is a training triple), ``d >= R`` relation ``d - R``
reversed (``(t, d - R, h)`` is one).  A pattern's code is ``(d1, d2, d3)``, unused hops
-1:

- ``(d, -1, -1)``: the 1-hop pattern ``h -d-> t`` (another relation, or any relation
  reversed: a relation's own forward pattern is the cell itself and never a candidate);
- ``(d1, d2, -1)``: the 2-hop path ``h -d1-> x -d2-> t`` for some entity x;
- ``(d1, d2, d3)``: the 3-hop walk ``h -d1-> x -d2-> y -d3-> t`` with ``y != h`` and
  ``x != t`` (``patterns="paths3"``), e.g. a sibling's edge ``h -p-> x <-p- y -q-> t``.
  Without the two exclusions a training triple (h, r, t) would cover itself through the
  walk back to its own head (``h -p-> x <-p- h -r-> t``) or tail.

A *constant rule* (AnyBURL's AC1 / AC2 rules and its empty-body rule; Meilicke et al.,
IJCAI 2019) fixes one argument of the relation to an entity c, the *anchor*, and reads a
body of at most :data:`MAX_CONSTANT_HOPS` hops from the other, the *variable* entity v:

- tail-anchored (side :data:`TAIL_ANCHOR`): ``phi(h, t) = [t = c] g(h)``, e.g.
  ``nationality(h, USA) <- born_in(h, New_York)``;
- head-anchored (side :data:`HEAD_ANCHOR`): ``phi(h, t) = [h = c] g(t)``;

with ``g(v)`` 1 when a walk ``v -d1-> ... -dn-> e`` reaches the body's end entity e
(``e >= 0``: AC1), when any walk of those hops leaves v (``e = -1``: AC2), or always
(no hop: the anchor's frequency in that position of the relation).  Its code is
``(d1, d2, d3, side, c, e)``; a path rule's last three entries are -1.  The mining never
proposes a body that contains the covered cell's own edge (``h -r-> c`` read from h, or
its reverse read from t), so a training triple never covers itself.

Self-pairs are never covered: ``phi(h, h) = 0``.  This is Nickel, Jiang & Tresp's
"observable patterns" (NIPS 2014), here as rules whose rates add to the factor model's.

:func:`mine_patterns` chooses each relation's patterns: candidates from a seeded sample of
its training triples (at most :data:`MAX_TRIPLES` a relation, at most
:data:`MAX_PATHS` intermediate entities a triple; 3-hop walks from fewer, see
:data:`MAX_TRIPLES_3`; so that FB15k-237's hubs and Nations' dense relations stay
tractable), then, per candidate, the exact support (training triples of the relation the
pattern covers) and exposure (cells ``(h, t)``, ``h != t``, it covers; patterns of 2 or 3
hops with more than :data:`MAX_PATTERN_PATHS` walks are skipped).  A pattern is kept when
its support is at least ``min_support``; per relation and rule length, the
``max_patterns`` of highest smoothed confidence ``support / (exposure + 5)`` are kept
(lengths apart, so that many long rules cannot crowd the short ones out).  Constant rules
(``max_constant_rules > 0``) are chosen the same way, per relation, side and body kind
(empty, AC2, AC1), their candidates counted with sparse products over all anchors at
once (AC1 ones from the seeded sample of triples), then counted exactly.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["AUTO_MAX_WALKS", "CODE_WIDTH", "HEAD_ANCHOR", "MAX_HOPS", "PATTERN_KINDS",
           "TAIL_ANCHOR", "DirectedGraph", "PatternSet", "code_hops", "graph_walks",
           "mine_patterns", "pad", "resolve_kind", "rule_text", "split_code"]

logger = logging.getLogger(__name__)

#: the ``patterns`` options: no pattern, 1-hop patterns only, 1- and 2-hop patterns, 1-,
#: 2- and 3-hop patterns, and "auto": "paths3" where the graph's 3-hop walks are at most
#: :data:`AUTO_MAX_WALKS`, "paths" beyond (:func:`resolve_kind`)
PATTERN_KINDS = ("auto", "none", "inverse", "paths", "paths3")
#: the longest rule of each option
HOPS = {"none": 0, "inverse": 1, "paths": 2, "paths3": 3}
#: "auto" mines 3-hop rules up to this many 3-hop walks of the graph (all relations, both
#: directions, ``1^T A^3 1``): a cost bound, about a minute of mining on one CPU.  Measured
#: (``benchmarks/results/kg_patterns.json``): Nations 3.1e4, UMLS 2.2e7 and WN18RR 1.8e7
#: walks (mining 22, 11 and 6 CPU s; 3-hop rules raise their mean valid MRR from 0.746 to
#: 0.769); FB15k-237 8.3e9 (mining alone 6 CPU minutes, and scoring its 13,413 rules
#: slower than the fit), so "paths" there
AUTO_MAX_WALKS = 1e8
#: the hops a code holds (shorter rules padded with -1)
MAX_HOPS = 3
#: a code's entries: the hops, then a constant rule's side, anchor and body end
CODE_WIDTH = MAX_HOPS + 3
#: a constant rule's side: the tail is the anchor (the body read from the head), or the head
TAIL_ANCHOR, HEAD_ANCHOR = 0, 1
#: the longest body a constant rule is mined with
MAX_CONSTANT_HOPS = 1
#: training triples per relation the candidates are enumerated from (a seeded sample)
MAX_TRIPLES = 1000
#: intermediate entities enumerated per triple for 2-hop candidates (a seeded sample)
MAX_PATHS = 50
#: 3-hop candidates come from a seeded sample of at most this many of a relation's
#: (sampled) triples, at most :data:`MAX_WALKS` intermediate entities a triple and hop and
#: at most :data:`MAX_LABELS` relations an edge: on dense multi-relational graphs (Nations:
#: 14 entities, ~15 relations between two of them) the walks of one triple number in the
#: millions, and the candidates of largest support, which the mining keeps, are found in a
#: sample
MAX_TRIPLES_3 = 200
MAX_WALKS = 10
MAX_LABELS = 2
#: candidates per relation whose exact support and exposure are computed, per kept one
CANDIDATES_PER_KEPT = 3
#: longer patterns with more walks than this (``1^T A_d1 A_d2 (A_d3) 1``) are skipped
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
        self._returns: dict[tuple[int, int], np.ndarray] = {}

    def inverse(self, d: int) -> int:
        """The directed relation d reversed."""
        return (int(d) + self.R) % (2 * self.R)

    def out_edges(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(targets, directed relations) of entity i's out-edges, sorted by target."""
        lo, hi = self.out_ptr[i], self.out_ptr[i + 1]
        return self.out_dst[lo:hi], self.out_lab[lo:hi]

    def reverse(self, code: tuple[int, ...]) -> tuple[int, ...]:
        """The code of the same pattern read from t to h (a head query's), padded: a
        path's hops reversed, a constant rule's side swapped (its body, read from the
        variable entity, is the same)."""
        hops, side, anchor, end = split_code(code)
        if side >= 0:
            return pad(tuple(hops), HEAD_ANCHOR + TAIL_ANCHOR - side, anchor, end)
        back = [self.inverse(d) for d in hops][::-1]
        return tuple(back + [-1] * (len(code) - len(back)))

    def body_entities(self, code: tuple[int, ...]) -> np.ndarray:
        """A constant rule's variable entities: the v (sorted) with ``g(v) = 1`` (module
        docstring)."""
        hops, _, _, end = split_code(code)
        if not hops:
            return np.arange(self.N)
        if len(hops) == 1:
            col = (self._columns("adj", hops[0]), end) if end >= 0 else \
                (self._columns("has", 0), hops[0])
            m, j = col
            return m.indices[m.indptr[j]:m.indptr[j + 1]].astype(np.int64)
        v = np.ones(self.N)
        if end >= 0:
            v = np.zeros(self.N)
            v[end] = 1.0
        for d in hops[::-1]:
            v = self.adj[d] @ v
        return np.flatnonzero(v > 0.5)

    def body(self, code: tuple[int, ...]) -> np.ndarray:
        """(N,) bool: a constant rule's ``g(v)`` over the variable entity v."""
        out = np.zeros(self.N, dtype=bool)
        out[self.body_entities(code)] = True
        return out

    def _columns(self, what: str, d: int) -> sp.csc_array:
        """Column access (sorted indices) to ``adj[d]`` or to the has-edge table (N, 2R):
        entity v has an out-edge of directed relation d (built once)."""
        key = f"_csc_{what}_{d if what == 'adj' else ''}"
        if key not in self.__dict__:
            if what == "adj":
                m = self.adj[d].tocsc()
            else:
                v = np.repeat(np.arange(self.N), np.diff(self.out_ptr))
                m = sp.csc_array((np.ones(v.size), (v, self.out_lab)),
                                 shape=(self.N, 2 * self.R))
                m.sum_duplicates()
                m.data[:] = 1.0
            m.sort_indices()
            self.__dict__[key] = m
        return self.__dict__[key]

    def _has_edge(self) -> sp.csr_array:
        """(N, 2R) 0/1: entity v has an out-edge of directed relation d (built once)."""
        if "_has_csr" not in self.__dict__:
            self.__dict__["_has_csr"] = sp.csr_array(self._columns("has", 0).tocsr())
        return self.__dict__["_has_csr"]

    def body_values(self, codes: np.ndarray, v: np.ndarray, j: np.ndarray) -> np.ndarray:
        """``g_{j_k}(v_k)`` (bool, one per pair) of the constant rules ``codes`` (J,
        CODE_WIDTH) at entities v: vectorised for bodies of at most one hop (AC1: the
        d-edge (v, e); AC2: any d-edge of v; empty: always), rule by rule beyond."""
        codes = np.asarray(codes, dtype=np.int64).reshape(-1, CODE_WIDTH)
        v = np.asarray(v, dtype=np.int64)
        j = np.asarray(j, dtype=np.int64)
        out = np.zeros(v.size, dtype=bool)
        d, end = codes[j, 0], codes[j, MAX_HOPS + 2]
        longer = codes[j, 1] >= 0
        out[d < 0] = True                                   # empty body
        ac2 = (d >= 0) & (end < 0) & ~longer
        if ac2.any():
            out[ac2] = np.asarray(self._has_edge()[v[ac2], d[ac2]]).ravel() > 0
        ac1 = (d >= 0) & (end >= 0) & ~longer
        for dd in np.unique(d[ac1]):                          # one lookup per relation
            at = np.flatnonzero(ac1 & (d == dd))
            out[at] = np.asarray(self.adj[int(dd)][v[at], end[at]]).ravel() > 0
        for jj in np.unique(j[longer]):
            at = np.flatnonzero(longer & (j == jj))
            out[at] = self.body(tuple(codes[jj]))[v[at]]
        return out

    @staticmethod
    def _by_anchor(codes: np.ndarray, side: int, entities: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
        """The pairs (i, j): rule j of side ``side`` anchored at ``entities[i]``."""
        j_side = np.flatnonzero(codes[:, MAX_HOPS] == side)
        anchor = codes[j_side, MAX_HOPS + 1]
        order = np.argsort(anchor, kind="stable")
        anchor, j_side = anchor[order], j_side[order]
        lo = np.searchsorted(anchor, entities, side="left")
        hi = np.searchsorted(anchor, entities, side="right")
        i = np.repeat(np.arange(entities.size), hi - lo)
        starts = np.repeat(lo, hi - lo)
        offset = np.arange(i.size) - np.repeat(np.cumsum(hi - lo) - (hi - lo), hi - lo)
        return i, j_side[starts + offset]

    def constant_pairs(self, codes: list[tuple[int, ...]] | np.ndarray, h: np.ndarray,
                       t: np.ndarray) -> sp.csr_array:
        """(len(h), J) 0/1: ``phi_j(h_i, t_i)`` of the constant rules ``codes`` (what
        :meth:`pairs` gives rule by rule): a tail-anchored rule at the pairs whose tail
        is its anchor, where ``g(h_i)``; a head-anchored one likewise."""
        codes = np.asarray(codes, dtype=np.int64).reshape(-1, CODE_WIDTH)
        h = np.asarray(h, dtype=np.int64)
        t = np.asarray(t, dtype=np.int64)
        rows, cols = [], []
        for side, at, var in ((TAIL_ANCHOR, t, h), (HEAD_ANCHOR, h, t)):
            i, j = self._by_anchor(codes, side, at)
            on = (h[i] != t[i]) & self.body_values(codes, var[i], j)
            rows.append(i[on])
            cols.append(j[on])
        i, j = np.concatenate(rows), np.concatenate(cols)
        return sp.csr_array((np.ones(i.size), (i, j)), shape=(h.size, codes.shape[0]))

    def constant_factors(self, codes: list[tuple[int, ...]] | np.ndarray, a: np.ndarray
                         ) -> tuple[sp.csr_array, sp.csr_array]:
        """(A (len(a), J), B (J, N)), 0/1, with ``sum_j w_j phi_j(a_i, .) = (A diag(w)
        B)[i]`` for the constant rules ``codes`` (one matrix product for all of them:
        a tail-anchored rule's row is its anchor's column where ``g(a_i)``, a
        head-anchored one's is ``g`` where ``a_i`` is its anchor; only the head-anchored
        rules anchored at some ``a_i`` are read)."""
        codes = np.asarray(codes, dtype=np.int64).reshape(-1, CODE_WIDTH)
        a = np.asarray(a, dtype=np.int64)
        J, N = codes.shape[0], self.N
        tail = np.flatnonzero(codes[:, MAX_HOPS] == TAIL_ANCHOR)
        anchor = codes[:, MAX_HOPS + 1]
        # tail-anchored: A[i, j] = g_j(a_i), a_i != c_j; B[j] = e_{c_j}
        i = np.repeat(np.arange(a.size), tail.size)
        j = np.tile(tail, a.size)
        on = (a[i] != anchor[j]) & self.body_values(codes, a[i], j)
        # head-anchored: A[i, j] = [a_i = c_j]; B[j] = g_j less c_j
        hi_, hj = self._by_anchor(codes, HEAD_ANCHOR, a)
        A = sp.csr_array((np.ones(int(on.sum()) + hi_.size),
                          (np.concatenate([i[on], hi_]), np.concatenate([j[on], hj]))),
                         shape=(a.size, J))
        used = np.unique(hj)
        bodies = [self.body_entities(tuple(codes[k])) for k in used]
        b_rows = np.repeat(used, [x.size for x in bodies])
        b_cols = np.concatenate(bodies) if bodies else np.zeros(0, dtype=np.int64)
        keep = b_cols != anchor[b_rows]
        B = sp.csr_array((np.ones(tail.size + int(keep.sum())),
                          (np.concatenate([tail, b_rows[keep]]),
                           np.concatenate([anchor[tail], b_cols[keep]]))), shape=(J, N))
        return A, B

    def n_paths(self, code: tuple[int, ...]) -> int:
        """The number of walks (an upper bound of the cells) of a pattern; a constant
        rule's: the variable entities its body holds for."""
        hops, side, _, _ = split_code(code)
        if side >= 0:
            return int(self.body_entities(code).size)
        if len(hops) == 1:
            return int(self.adj[hops[0]].nnz)
        v = np.ones(self.N)
        for d in hops[::-1]:
            v = self.adj[d] @ v
        return int(round(float(v.sum())))

    def rows(self, code: tuple[int, ...], a: np.ndarray) -> sp.csr_array:
        """``phi(a_i, .)`` as a 0/1 (len(a), N) CSR matrix."""
        a = np.asarray(a, dtype=np.int64)
        hops, side, anchor, _ = split_code(code)
        if side == TAIL_ANCHOR:               # column c where g(a_i), a_i != c
            on = self.body(code)[a] & (a != anchor)
            return sp.csr_array((np.ones(int(on.sum())), np.full(int(on.sum()), anchor),
                                 np.concatenate([[0], np.cumsum(on)])), shape=(a.size, self.N))
        if side == HEAD_ANCHOR:               # row g(.) where a_i = c, less (c, c)
            cols = np.flatnonzero(self.body(code))
            cols = cols[cols != anchor]
            at = a == anchor
            ptr = np.concatenate([[0], np.cumsum(at * cols.size)])
            return sp.csr_array((np.ones(int(ptr[-1])), np.tile(cols, int(at.sum())), ptr),
                                shape=(a.size, self.N))
        m = self.adj[hops[0]][a]
        for d in hops[1:]:
            m = m @ self.adj[d]
        if len(hops) == 3:
            m = self._drop_returns(m, hops, a)
        return _drop_diagonal(m, a)

    def _drop_returns(self, walks: sp.csr_array, hops: list[int], a: np.ndarray
                      ) -> sp.csr_array:
        """3-hop walk counts of rows ``a`` less the walks with y = h or x = t (module
        docstring): ``- diag(A1 A2)_h A3[h, t] - A1[h, t] diag(A2 A3)_t
        + A1[h, t] A2[t, h] A3[h, t]`` (the last: walks with both, subtracted twice)."""
        A1, A2, A3 = (self.adj[d] for d in hops)
        back_h = self.returns(hops[0], hops[1])[a]        # walks h -> x -> h
        back_t = self.returns(hops[1], hops[2])           # walks t -> y -> t
        first, last = A1[a], A3[a]
        both = first.multiply(A2.T.tocsr()[a]).multiply(last)
        out = (walks - sp.diags_array(back_h) @ last - first @ sp.diags_array(back_t)
               + both)
        out = sp.csr_array(out)
        out.data = np.where(out.data > 0.5, 1.0, 0.0)
        out.eliminate_zeros()
        return out

    def returns(self, d1: int, d2: int) -> np.ndarray:
        """(N,) the walks ``i -d1-> x -d2-> i`` of each entity: ``diag(A_d1 A_d2)``
        (computed once per pair)."""
        key = (int(d1), int(d2))
        if key not in self._returns:
            both = self.adj[key[0]].multiply(self.adj[key[1]].T)
            self._returns[key] = np.asarray(both.sum(axis=1)).ravel()
        return self._returns[key]

    def matrix(self, code: tuple[int, ...]) -> sp.csr_array:
        """``phi`` as a 0/1 (N, N) CSR matrix."""
        return self.rows(code, np.arange(self.N))

    def pairs(self, code: tuple[int, ...], h: np.ndarray, t: np.ndarray) -> np.ndarray:
        """``phi(h_i, t_i)`` (bool, one per pair)."""
        h = np.asarray(h, dtype=np.int64)
        t = np.asarray(t, dtype=np.int64)
        if h.size == 0:
            return np.zeros(0, dtype=bool)
        hops, side, anchor, _ = split_code(code)
        if side >= 0:
            at, var = (t, h) if side == TAIL_ANCHOR else (h, t)
            return (at == anchor) & self.body(code)[var] & (h != t)
        if len(hops) == 1:
            return (np.asarray(self.adj[hops[0]][h, t]).ravel() > 0) & (h != t)
        left = self.adj[hops[0]][h]
        for d in hops[1:-1]:
            left = left @ self.adj[d]
        right = self.adj[self.inverse(hops[-1])][t]          # the last hop, into t_i
        walks = np.asarray(left.multiply(right).sum(axis=1)).ravel()
        if len(hops) == 3:
            A1, A2, A3 = (self.adj[d] for d in hops)
            a1, a3 = np.asarray(A1[h, t]).ravel(), np.asarray(A3[h, t]).ravel()
            walks = (walks - self.returns(hops[0], hops[1])[h] * a3
                     - a1 * self.returns(hops[1], hops[2])[t]
                     + a1 * np.asarray(A2[t, h]).ravel() * a3)
        return (walks > 0.5) & (h != t)


def graph_walks(graph: DirectedGraph, hops: int = 3) -> float:
    """The walks of ``hops`` hops over every relation in both directions (``1^T A^hops 1``,
    A the 0/1 adjacency of any training triple between two entities, either way)."""
    A = sp.csr_array(sum(graph.adj[: graph.R]) + sum(graph.adj[graph.R:]))
    A.data[:] = 1.0
    v = np.ones(graph.N)
    for _ in range(int(hops)):
        v = A @ v
    return float(v.sum())


def resolve_kind(kind: str, graph: DirectedGraph) -> str:
    """The pattern kind ``kind`` means on ``graph``: "auto" is "paths3" up to
    :data:`AUTO_MAX_WALKS` 3-hop walks, "paths" beyond; any other kind itself."""
    if kind not in PATTERN_KINDS:
        raise ValueError(f"patterns must be one of {', '.join(PATTERN_KINDS)}, got {kind!r}")
    if kind != "auto":
        return kind
    walks = graph_walks(graph, 3)
    chosen = "paths3" if walks <= AUTO_MAX_WALKS else "paths"
    logger.info("patterns='auto': %.2g 3-hop walks (limit %.0e): %s", walks, AUTO_MAX_WALKS,
                chosen)
    return chosen


def split_code(code: tuple[int, ...]) -> tuple[list[int], int, int, int]:
    """(the hops without their -1 padding, side, anchor, end) of a code (module
    docstring); a code of :data:`MAX_HOPS` entries is a path rule's."""
    c = [int(x) for x in code]
    side, anchor, end = (c[MAX_HOPS:] + [-1, -1, -1])[:3]
    return [d for d in c[:MAX_HOPS] if d >= 0], side, anchor, end


def code_hops(code: tuple[int, ...]) -> list[int]:
    """The directed relations of a code, without its -1 padding."""
    return split_code(code)[0]


def pad(hops: tuple[int, ...], side: int = -1, anchor: int = -1, end: int = -1
        ) -> tuple[int, ...]:
    """A code of :data:`CODE_WIDTH` entries."""
    return (tuple(int(d) for d in hops) + (-1,) * (MAX_HOPS - len(hops))
            + (int(side), int(anchor), int(end)))


@dataclass
class PatternSet:
    """Every relation's patterns, relation by relation: pattern p belongs to relation
    ``relation[p]`` (sorted), has the code ``codes[p]`` (module docstring), covers
    ``support[p]`` training triples of that relation and ``exposure[p]`` cells."""

    relation: np.ndarray      # (P,) int64
    codes: np.ndarray         # (P, CODE_WIDTH) int64, -1 padded
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
        return cls(z, np.zeros((0, CODE_WIDTH), dtype=np.int64), z.copy(), z.copy(),
                   int(n_relations))


def _sample(xs: np.ndarray, rng: np.random.Generator, most: int = MAX_PATHS
            ) -> np.ndarray:
    return xs if xs.size <= most else rng.choice(xs, most, replace=False)


def _candidates(graph: DirectedGraph, heads: np.ndarray, tails: np.ndarray, r: int,
                hops: int, rng: np.random.Generator) -> Counter:
    """How many of the (sampled) triples (h, r, t) each candidate pattern of at most
    ``hops`` hops covers (module docstring)."""
    counts: Counter = Counter()
    walked = (set(rng.choice(heads.size, min(heads.size, MAX_TRIPLES_3),
                             replace=False).tolist()) if hops >= 3 else set())
    for i, (h, t) in enumerate(zip(heads.tolist(), tails.tolist(), strict=True)):
        found: set[tuple[int, ...]] = set()
        xs_h, ls_h = graph.out_edges(h)
        found.update(pad((int(d),)) for d in ls_h[xs_h == t] if d != r)
        if hops < 2:
            counts.update(found)
            continue
        xs_t, ls_t = graph.out_edges(t)
        for x in _sample(np.intersect1d(xs_h, xs_t), rng).tolist():
            for d1 in ls_h[xs_h == x].tolist():
                for back in ls_t[xs_t == x].tolist():   # t -back-> x: x -inv-> t
                    found.add(pad((int(d1), graph.inverse(back))))
        if hops >= 3 and (i in walked):
            for x in _sample(np.unique(xs_h[xs_h != t]), rng, MAX_WALKS).tolist():
                xs_x, ls_x = graph.out_edges(x)
                ys = np.intersect1d(xs_x, xs_t)
                d1s = _sample(ls_h[xs_h == x], rng, MAX_LABELS).tolist()
                for y in _sample(ys[ys != h], rng, MAX_WALKS).tolist():
                    for d2 in _sample(ls_x[xs_x == y], rng, MAX_LABELS).tolist():
                        for back in _sample(ls_t[xs_t == y], rng, MAX_LABELS).tolist():
                            found.update(pad((d1, int(d2), graph.inverse(back)))
                                         for d1 in d1s)
        counts.update(found)
    return counts


def _best_rules(q: int, codes: np.ndarray, support: np.ndarray, exposure: np.ndarray,
                min_support: int, most: int) -> list[tuple[int, tuple[int, ...], int, int]]:
    """Of the candidates ``codes`` (n, CODE_WIDTH), the ``most`` of highest smoothed
    confidence with support >= ``min_support`` (ties: the smaller code), as (relation,
    code, support, exposure)."""
    support = np.asarray(support, dtype=np.int64)
    exposure = np.asarray(exposure, dtype=np.int64)
    ok = np.flatnonzero(support >= max(int(min_support), 1))
    if ok.size == 0 or most < 1:
        return []
    conf = support[ok] / (exposure[ok] + CONFIDENCE_SMOOTHING)
    keys = np.asarray(codes, dtype=np.int64).reshape(-1, CODE_WIDTH)[ok]
    order = np.lexsort((*keys.T[::-1], -conf))[:most]
    return [(q, tuple(int(x) for x in keys[i]), int(support[ok[i]]),
             int(exposure[ok[i]])) for i in order]


def _codes(hop: np.ndarray | None, side: int, anchor: np.ndarray, end: np.ndarray | None
           ) -> np.ndarray:
    """(n, CODE_WIDTH) codes of constant rules with at most one hop."""
    out = np.full((np.size(anchor), CODE_WIDTH), -1, dtype=np.int64)
    if hop is not None:
        out[:, 0] = hop
    out[:, MAX_HOPS] = side
    out[:, MAX_HOPS + 1] = anchor
    if end is not None:
        out[:, MAX_HOPS + 2] = end
    return out


def _constant_rules(graph: DirectedGraph, q: int, side: int, var: np.ndarray,
                    anchor: np.ndarray, min_support: int, most: int,
                    rng: np.random.Generator, stats: dict[str, Any]
                    ) -> list[tuple[int, tuple[int, ...], int, int]]:
    """Relation q's constant rules of one side (module docstring): ``var`` and
    ``anchor`` the variable and anchored entities of its training triples (no
    self-pair); ``stats`` the graph's has-edge table and stacked adjacency
    (:func:`_constant_stats`)."""
    N = graph.N
    own = q if side == TAIL_ANCHOR else graph.inverse(q)   # the cell's edge, from v
    anchors, row = np.unique(anchor, return_inverse=True)
    T = sp.csr_array((np.ones(var.size), (row, var)), shape=(anchors.size, N))
    # empty body: every v but the anchor
    kept = _best_rules(q, _codes(None, side, anchors, None),
                       np.bincount(row, minlength=anchors.size),
                       np.full(anchors.size, N - 1), min_support, most)
    # AC2: any d-edge leaves v (never the cell's own relation)
    has = stats["has"]
    S = sp.coo_array(T @ has)
    ok = (S.col != own) & (S.data >= min_support)
    ci, di = S.row[ok], S.col[ok]
    exposure = stats["has_count"][di] - np.asarray(has[anchors[ci], di]).ravel()
    kept += _best_rules(q, _codes(di, side, anchors[ci], None), S.data[ok], exposure,
                        min_support, most)
    # AC1: a d-edge from v to e; candidates counted on a seeded sample of the triples
    pick = (np.arange(var.size) if var.size <= MAX_TRIPLES
            else np.sort(rng.choice(var.size, MAX_TRIPLES, replace=False)))
    sample = sp.csr_array((np.ones(pick.size), (row[pick], var[pick])),
                          shape=(anchors.size, N))
    C = sp.coo_array(sample @ stats["stacked"])
    ok = ~((C.col // N == own) & (C.col % N == anchors[C.row]))   # the cell itself
    rc, cc, n = C.row[ok], C.col[ok], C.data[ok]
    top = np.lexsort((cc, rc, -n))[:CANDIDATES_PER_KEPT * most]
    rc, cc = rc[top], cc[top]
    if rc.size:
        support = np.asarray(T[rc].multiply(stats["stacked_csc"][:, cc].T.tocsr())
                             .sum(axis=1)).ravel()
        exposure = (stats["stacked_count"][cc]
                    - np.asarray(stats["stacked"][anchors[rc], cc]).ravel())
        kept += _best_rules(q, _codes(cc // N, side, anchors[rc], cc % N), support,
                            exposure, min_support, most)
    return kept


def _constant_stats(graph: DirectedGraph) -> dict[str, Any]:
    """The has-edge table (N, 2R), the adjacency stacked by relation (N, 2R N) and
    their column counts (what :func:`_constant_rules` reads)."""
    N = graph.N
    has = sp.csr_array((np.ones(graph.out_lab.size),
                        (np.repeat(np.arange(N), np.diff(graph.out_ptr)), graph.out_lab)),
                       shape=(N, 2 * graph.R))
    has.sum_duplicates()
    has.data[:] = 1.0
    stacked = sp.csr_array(sp.hstack(graph.adj, format="csr"))
    return {"has": has, "has_count": np.asarray(has.sum(axis=0), dtype=np.int64).ravel(),
            "stacked": stacked, "stacked_csc": stacked.tocsc(),
            "stacked_count": np.asarray(stacked.sum(axis=0), dtype=np.int64).ravel()}


def mine_patterns(graph: DirectedGraph, heads: np.ndarray, rels: np.ndarray,
                  tails: np.ndarray, kind: str = "paths", *, min_support: int = 2,
                  max_patterns: int = 30, max_constant_rules: int = 0, seed: int = 0
                  ) -> PatternSet:
    """Every relation's patterns from its training triples (module docstring).

    Parameters
    ----------
    graph : the training triples' :class:`DirectedGraph`
    heads, rels, tails : the training triples (those of ``graph``)
    kind : ``"none"`` (no pattern), ``"inverse"`` (1-hop patterns), ``"paths"`` (1- and
        2-hop patterns), ``"paths3"`` (1-, 2- and 3-hop patterns) or ``"auto"``
        (:func:`resolve_kind`)
    min_support : a kept pattern covers at least this many training triples of its
        relation (>= 1)
    max_patterns : at most this many patterns per relation and rule length, those of
        highest smoothed confidence
    max_constant_rules : at most this many constant rules per relation, side and body
        kind (empty, AC2, AC1; 0: none), those of highest smoothed confidence
    seed : the seed of the samples of triples and of intermediate entities
    """
    kind = resolve_kind(kind, graph)
    R = graph.R
    if max_patterns < 1:
        kind = "none"
    if kind == "none" and max_constant_rules < 1:
        return PatternSet.empty(R)
    h, r, t = (np.asarray(x, dtype=np.int64) for x in (heads, rels, tails))
    rng = np.random.default_rng(seed)
    exposures: dict[tuple[int, ...], int] = {}
    kept: list[tuple[int, tuple[int, ...], int, int]] = []
    n_candidates = n_skipped = n_constant = 0
    stats = _constant_stats(graph) if max_constant_rules > 0 else {}
    for q in range(R):
        idx = np.flatnonzero(r == q)
        if idx.size == 0:
            continue
        if max_constant_rules > 0:
            pairs = idx[h[idx] != t[idx]]
            for side, (var, anchor) in ((TAIL_ANCHOR, (h, t)), (HEAD_ANCHOR, (t, h))):
                found = _constant_rules(graph, q, side, var[pairs], anchor[pairs],
                                        min_support, int(max_constant_rules), rng, stats)
                n_constant += len(found)
                kept.extend(found)
        if kind == "none":
            continue
        sample = idx if idx.size <= MAX_TRIPLES else np.sort(
            rng.choice(idx, MAX_TRIPLES, replace=False))
        counts = _candidates(graph, h[sample], t[sample], q, HOPS[kind], rng)
        for length in range(1, HOPS[kind] + 1):
            ranked = sorted(((c, n) for c, n in counts.items()
                             if len(code_hops(c)) == length), key=lambda kv: (-kv[1], kv[0]))
            ranked = ranked[:CANDIDATES_PER_KEPT * max_patterns]
            n_candidates += len(ranked)
            rows = []
            for code, _ in ranked:
                if code not in exposures:
                    if length > 1 and graph.n_paths(code) > MAX_PATTERN_PATHS:
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
    logger.info("patterns (%s): %d candidates, %d skipped (over %d walks), %d kept over "
                "%d relations, %d of them constant rules", kind, n_candidates, n_skipped,
                MAX_PATTERN_PATHS, len(kept), R, n_constant)
    if not kept:
        return PatternSet.empty(R)
    kept.sort(key=lambda k: k[0])           # relation by relation (stable)
    return PatternSet(np.array([k[0] for k in kept], dtype=np.int64),
                      np.array([k[1] for k in kept], dtype=np.int64).reshape(-1, CODE_WIDTH),
                      np.array([k[2] for k in kept], dtype=np.int64),
                      np.array([k[3] for k in kept], dtype=np.int64), R)


def rule_text(code: tuple[int, ...], relation: str, names: np.ndarray,
              entities: np.ndarray | None = None) -> str:
    """A pattern as a readable rule, e.g. ``_hypernym(h, t) <- _derivationally_related_
    form(h, x), _hypernym(x, t)`` (a reversed relation's atom has its arguments
    swapped); a constant rule with its entities' names (``entities``; else ``e<i>``),
    e.g. ``nationality(h, USA) <- born_in(h, New_York)``, ``gender(h, male) <- true``."""
    R = len(names)

    def atom(d: int, a: str, b: str) -> str:
        return f"{names[d]}({a}, {b})" if d < R else f"{names[d - R]}({b}, {a})"

    def entity(i: int) -> str:
        return str(entities[i]) if entities is not None else f"e{i}"

    hops, side, anchor, end = split_code(code)
    if side >= 0:
        v = "h" if side == TAIL_ANCHOR else "t"
        head = (f"{relation}(h, {entity(anchor)})" if side == TAIL_ANCHOR
                else f"{relation}({entity(anchor)}, t)")
        nodes = [v, *("xyz"[: max(len(hops) - 1, 0)]), entity(end) if end >= 0 else "y"]
        body = ", ".join(atom(d, nodes[i], nodes[i + 1]) for i, d in enumerate(hops))
        return f"{head} <- {body or 'true'}"
    nodes = ["h", *("xyz"[: len(hops) - 1]), "t"]
    body = ", ".join(atom(d, nodes[i], nodes[i + 1]) for i, d in enumerate(hops))
    return f"{relation}(h, t) <- {body}"
