"""MAP-EM of BPBFM-1 with observable patterns (additive relational effects).

The rate of cell (h, r, t) is the factor model's plus the rates of the relation's
patterns that cover the cell (:mod:`topiclink.families.bpbfm.patterns`),

    lam_hrt = u_h^T Lambda^r u_t + sum_p w_rp phi_p(h, t),    P(x = 1) = 1 - exp(-lam),

``phi_p`` in {0, 1} computed from the training triples, ``w_rp >= 0`` with a
``Gamma(1 + EPS, pattern_prior)`` prior: Nickel, Jiang & Tresp's "additive relational
effects" (NIPS 2014) in BPBFM's Poisson form, each ``w_rp`` a rule's rate
(``1 - exp(-w_rp)``: the probability of a cell the rule alone covers).  The likelihood
is :mod:`topiclink.families.bpbfm.em`'s with the total rate.

The latent count of an observed one is allocated between the factor cells and the
patterns in proportion to their rates: with ``w_e = x_e / (1 - exp(-lam_e))`` (binary)
or ``x_e / lam_e`` (counts) at the total rate, the factor blocks' statistics are
:func:`topiclink.families.bpbfm.em.estep`'s with these weights, and pattern p's expected
count is ``w_rp sum_{e in r} w_e phi_p(e)``.  One iteration (:meth:`BPBFMPatternsEM.step`):

1. one E-step, then Lambda and W together (the expected complete-data log posterior is
   separable in the two at fixed U, so both updates are exact M-steps):
   ``Lambda^r <- (Lambda^r S^r + EPS) / (D^r + b)`` and ``w_rp <- (EPS + w_rp sum_{e in
   r} w_e phi_p(e)) / (b_w + exposure_rp)``, ``exposure_rp`` the cells ``(h, t)``,
   ``h != t``, the pattern covers, less relation r's held-out ones;
2. a fresh E-step, then U as in :mod:`topiclink.families.bpbfm.em` (the multiplicative
   step, or the minorizer's maximiser where it would lower the posterior).

So the log posterior never decreases (a generalised EM).  With no pattern the iterates
are :class:`~topiclink.families.bpbfm.em.BPBFMEM`'s, to the bit.

The objective is :mod:`topiclink.families.bpbfm.em`'s with the total rates, the patterns'
total rate ``sum_rp w_rp exposure_rp`` among the zeros' and the prior of W.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from topiclink.families.bpbfm import kernels_em as kernels
from topiclink.families.bpbfm.algorithm import BPBFMData
from topiclink.families.bpbfm.em import (
    BPBFMEM,
    EPS,
    BPBFMEMState,
    EMAhead,
    relation_groups,
)
from topiclink.families.bpbfm.grouping import kept_on
from topiclink.families.bpbfm.patterns import (
    DirectedGraph,
    PatternSet,
    mine_patterns,
    split_code,
)

__all__ = ["PatternEMState", "PatternIndex", "BPBFMPatternsEM", "pattern_estep",
           "rule_columns", "training_triples"]


@dataclass(kw_only=True)
class PatternEMState(BPBFMEMState):
    """U, Lambda and the pattern weights W (P,), in the order of the fit's
    :class:`~topiclink.families.bpbfm.patterns.PatternSet`."""

    W: np.ndarray


@dataclass
class PatternAhead(EMAhead):
    """:class:`~topiclink.families.bpbfm.em.EMAhead` with W and its E-step statistic."""

    W: np.ndarray
    SW: np.ndarray

    def holds(self, state: BPBFMEMState) -> bool:
        return super().holds(state) and self.W is getattr(state, "W", None)


def training_triples(data: BPBFMData) -> np.ndarray:
    """The observed nonzero entries (n, 3) as (head, relation, tail), int64."""
    n = data.n_observed
    return np.stack([np.asarray(a[:n], dtype=np.int64)
                     for a in (data.heads, data.rels, data.tails)], axis=1)


@dataclass
class PatternIndex:
    """The patterns on the entries: per relation, ``features[r]`` (n_r, P_r) 0/1 CSR,
    ``phi_p`` of its observed entries in :func:`~topiclink.families.bpbfm.em.
    relation_groups` order; ``exposure`` (P,) each pattern's covered cells, less its
    relation's held-out ones; ``triples`` the training triples the patterns read."""

    patterns: PatternSet
    features: list[sp.csr_array]
    exposure: np.ndarray
    triples: np.ndarray

    @classmethod
    def build(cls, data: BPBFMData, patterns: PatternSet, graph: DirectedGraph,
              triples: np.ndarray) -> PatternIndex:
        ptr = patterns.ptr
        exposure = patterns.exposure.astype(np.float64)
        n = data.n_observed
        mh, mr, mt = (np.asarray(a[n:], dtype=np.int64)
                      for a in (data.heads, data.rels, data.tails))
        features = []
        for r, g in enumerate(relation_groups(data)):
            own = g.entities[g.group]
            heads, tails = (own, g.other) if g.by_head else (g.other, own)
            lo, hi = int(ptr[r]), int(ptr[r + 1])
            codes = [tuple(int(x) for x in patterns.codes[p]) for p in range(lo, hi)]
            features.append(rule_columns(graph, codes, heads, tails))
            held = mr == r
            if held.any() and hi > lo:
                exposure[lo:hi] -= np.asarray(
                    rule_columns(graph, codes, mh[held], mt[held]).sum(axis=0)).ravel()
        return cls(patterns, features, exposure, triples)


def rule_columns(graph: DirectedGraph, codes: list[tuple[int, ...]], h: np.ndarray,
                 t: np.ndarray) -> sp.csr_array:
    """(len(h), len(codes)) 0/1 CSR: ``phi`` of each rule at the pairs ``(h_i, t_i)``
    (path rules one by one, constant rules in one batch)."""
    constant = np.array([split_code(c)[1] >= 0 for c in codes], dtype=bool)
    paths, consts = np.flatnonzero(~constant), np.flatnonzero(constant)
    blocks = [sp.csr_array(graph.pairs(codes[j], h, t).astype(np.float64)[:, None])
              for j in paths]
    blocks.append(graph.constant_pairs([codes[j] for j in consts], h, t))
    order = np.argsort(np.concatenate([paths, consts]), kind="stable")
    return sp.csr_array(sp.csr_array(sp.hstack(blocks, format="csr"))[:, order])


def pattern_estep(U: np.ndarray, L: np.ndarray, W: np.ndarray, data: BPBFMData,
                  index: PatternIndex, want_lam: bool, want_u: bool
                  ) -> tuple[float, np.ndarray | None, np.ndarray | None, np.ndarray]:
    """:func:`topiclink.families.bpbfm.em.estep` at the total rates (module docstring).

    Returns
    -------
    (``sum_e [log p(x_e | lam_e) + lam_e]``, S_lam (R, K, K) or None, S_u (N, K) or None,
    SW (P,): ``sum_{e in r} w_e phi_p(e)`` per pattern)
    """
    K = U.shape[1]
    S_lam = np.zeros_like(L) if want_lam else None
    S_u = np.zeros_like(U) if want_u else np.zeros((0, K))
    SW = np.zeros(W.size)
    ptr = index.patterns.ptr
    ll = 0.0
    for r, g in enumerate(relation_groups(data)):
        if g.entities.size == 0:
            continue
        Lr = L[r] if g.by_head else L[r].T
        Ug = U[g.entities]
        P = Ug @ Lr
        B = np.zeros_like(P)
        lo, hi = int(ptr[r]), int(ptr[r + 1])
        F = index.features[r]
        offset = F @ W[lo:hi] if hi > lo else np.zeros(g.other.size)
        weight = np.empty(g.other.size)
        ll += kernels.offset_group_pass(g.other, g.group, g.values, data.binary, U, P,
                                        np.ascontiguousarray(offset), B, S_u, weight,
                                        want_lam or want_u, want_u)
        if hi > lo:
            SW[lo:hi] = F.T @ weight
        if S_lam is not None:
            S_lam[r] = Ug.T @ B if g.by_head else B.T @ Ug
        if want_u:
            S_u[g.entities] += B @ Lr.T
    return ll, S_lam, (S_u if want_u else None), SW


class BPBFMPatternsEM(BPBFMEM):
    """MAP-EM of BPBFM-1 with observable patterns (module docstring).

    Parameters
    ----------
    n_topics : K
    prior_rate : b, the rate of the Gamma(1 + EPS, b) prior of U and Lambda
    pattern_prior : b_w, the rate of the Gamma(1 + EPS, b_w) prior of every pattern weight
    patterns, min_support, max_patterns, max_constant_rules, seed : the mining's
        (:func:`~topiclink.families.bpbfm.patterns.mine_patterns`)
    """

    name = "BPBFM-1-EM+patterns"
    state_class = PatternEMState

    def __init__(self, n_topics: int, prior_rate: float = 5.0, pattern_prior: float = 1.0,
                 patterns: str = "auto", min_support: int = 2, max_patterns: int = 30,
                 max_constant_rules: int = 0, seed: int = 0) -> None:
        super().__init__(n_topics, prior_rate)
        self.b_w = float(pattern_prior)
        self.mining = (str(patterns), int(min_support), int(max_patterns),
                       int(max_constant_rules), int(seed))
        self.pattern_set: PatternSet | None = None
        self.triples: np.ndarray | None = None
        #: (fingerprint, index) of an earlier fit of the same model (the estimator's, so
        #: that ``resume=True`` does not mine again: mining is deterministic)
        self.known: tuple[str, PatternIndex] | None = None

    # ------------------------------------------------------------------ set-up
    def _key(self) -> str:
        return "_em_patterns_" + "_".join(map(str, self.mining))

    def pattern_index(self, data: BPBFMData) -> PatternIndex:
        """The mined patterns on ``data``'s entries (built once per data object and
        mining options, kept on it); also kept as :attr:`pattern_set` / :attr:`triples`
        (what the estimator publishes)."""
        def build(d: BPBFMData) -> PatternIndex:
            if self.known is not None and self.known[0] == self.fingerprint(d):
                return self.known[1]
            kind, min_support, max_patterns, max_constant, seed = self.mining
            triples = training_triples(d)
            graph = DirectedGraph(triples[:, 0], triples[:, 1], triples[:, 2],
                                  d.n_entities, d.n_relations)
            found = mine_patterns(graph, triples[:, 0], triples[:, 1], triples[:, 2],
                                  kind, min_support=min_support, max_patterns=max_patterns,
                                  max_constant_rules=max_constant, seed=seed)
            return PatternIndex.build(d, found, graph, triples)

        index = kept_on(data, self._key(), build)
        if self.known is None or self.known[1] is not index:
            self.known = (self.fingerprint(data), index)
        self.pattern_set, self.triples = index.patterns, index.triples
        return index

    def fingerprint(self, data: BPBFMData) -> str:
        return f"{data.fingerprint()}:patterns={self.mining}"

    def init(self, data: BPBFMData, rng: np.random.Generator) -> PatternEMState:
        """U and Lambda as :meth:`BPBFMEM.init` (the same draws), W at the patterns'
        smoothed confidences."""
        base = super().init(data, rng)
        W = self.pattern_index(data).patterns.confidence().astype(np.float64)
        return PatternEMState(U=base.U, L=base.L, W=W,
                              data_fingerprint=self.fingerprint(data))

    def check_values(self, state: PatternEMState, data: BPBFMData) -> None:
        super().check_values(state, data)
        n = self.pattern_index(data).patterns.n_patterns
        if state.W.shape != (n,) or np.any(state.W <= 0):
            raise ValueError(f"state: W must be {n} positive weights")

    # ------------------------------------------------------------------ statistics
    def _lw_statistics(self, U: np.ndarray, L: np.ndarray, W: np.ndarray, data: BPBFMData
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(S, D, SW, objective at (U, L, W)): Lambda's and W's statistics, one pass."""
        index = self.pattern_index(data)
        ll, S, _, SW = pattern_estep(U, L, W, data, index, want_lam=True, want_u=False)
        s = U.sum(axis=0)
        D = np.outer(s, s)[None]
        if data.n_missing:
            D = np.broadcast_to(D, L.shape).copy()
        missing = self._missing(U, L, data, d_lam=D)
        return S, D, SW, self._total_posterior(U, L, W, data, ll, missing)  # type: ignore

    def _u_statistics(self, U: np.ndarray, L: np.ndarray, W: np.ndarray, data: BPBFMData
                      ) -> tuple[np.ndarray, np.ndarray, float]:
        """(S (N, K), D (N, K), objective at (U, L, W)): U's statistics."""
        index = self.pattern_index(data)
        ll, _, S, _ = pattern_estep(U, L, W, data, index, want_lam=False, want_u=True)
        s = U.sum(axis=0)
        D = np.broadcast_to(np.einsum("rkl,l->k", L, s) + np.einsum("rkl,k->l", L, s),
                            U.shape).copy()
        missing = self._missing(U, L, data, d_u=D)
        return S, D, self._total_posterior(U, L, W, data, ll, missing)  # type: ignore

    def _total_posterior(self, U: np.ndarray, L: np.ndarray, W: np.ndarray,
                         data: BPBFMData, ones: float, missing: float) -> float:
        exposure = self.pattern_index(data).exposure
        pattern_total = float(W @ exposure)
        prior = float(EPS * np.log(W).sum() - self.b_w * W.sum()) if W.size else 0.0
        base = self._posterior(U, L, data, ones, missing)
        return base + (prior - pattern_total) / max(data.n_observed, 1)

    def pattern_log_posterior(self, U: np.ndarray, L: np.ndarray, W: np.ndarray,
                              data: BPBFMData) -> float:
        """The objective at (U, L, W) (module docstring)."""
        index = self.pattern_index(data)
        ll, _, _, _ = pattern_estep(U, L, W, data, index, want_lam=False, want_u=False)
        return self._total_posterior(U, L, W, data, ll, self._missing(U, L, data))

    # ------------------------------------------------------------------ one iteration
    def step(self, state: PatternEMState, data: BPBFMData) -> dict[str, float]:
        U, L, W, b = state.U, state.L, state.W, self.b
        exposure = self.pattern_index(data).exposure
        ahead = state.workspace
        if isinstance(ahead, PatternAhead) and ahead.holds(state):
            S, D, SW = ahead.S, ahead.D, ahead.SW
        else:
            S, D, SW, _ = self._lw_statistics(U, L, W, data)
        state.workspace = None
        L = L * S
        L += EPS
        L /= D + b
        W = (W * SW + EPS) / (exposure + self.b_w)
        S, D, before = self._u_statistics(U, L, W, data)
        n = U * S + EPS
        U_new = n / (D + b)
        S_next, D_next, SW_next, after = self._lw_statistics(U_new, L, W, data)
        mm = after < before
        if mm:                      # the minorizer's maximiser (never decreases)
            c = np.maximum(D, 0.0) / U
            U_new = 2.0 * n / (b + np.sqrt(b * b + 4.0 * c * n))
            S_next, D_next, SW_next, after = self._lw_statistics(U_new, L, W, data)
        state.U, state.L, state.W = U_new, L, W
        state.workspace = PatternAhead(state.iteration + 1, U_new, L, S_next, D_next,
                                       after, W, SW_next)
        return {"minorizer_step": float(mm)}

    def objective(self, state: PatternEMState, data: BPBFMData) -> float:
        ahead = state.workspace
        if isinstance(ahead, PatternAhead) and ahead.holds(state):
            return ahead.objective
        return self.pattern_log_posterior(state.U, state.L, state.W, data)

    def averaged(self, state: PatternEMState, data: BPBFMData) -> dict[str, np.ndarray]:
        out = super().averaged(state, data)
        out["W"] = np.array(state.W, dtype=np.float64)
        return out
