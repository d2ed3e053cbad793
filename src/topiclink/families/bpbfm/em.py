"""MAP-EM of BPBFM-1 (per-relation Lambda, tied factors v = u) as an engine algorithm.

The same likelihood as the Gibbs sampler (:mod:`topiclink.families.bpbfm.algorithm`),

    P(x_irj = 1) = 1 - exp(-u_i^T Lambda^r u_j)     (binary data; counts: Poisson),

with independent ``Gamma(1 + EPS, rate b)`` priors on every entry of U and of every
Lambda^r (``b``: the estimator's ``prior_rate``; ``EPS = 1e-6`` keeps every entry
positive), fitted to a MAP estimate by expectation-maximisation of the latent Poisson
counts: ``E[m_e | x_e = 1] = lam_e / (1 - exp(-lam_e))`` allocated to (k1, k2) in
proportion to ``u_ik1 Lambda^r_k1k2 u_jk2``.  This is ``benchmarks/bpbfm_em_probe.py``'s
algorithm (it measured UMLS held-out AUC-PR 0.90 at K = 20 where Gibbs reaches 0.81) on
the nonzero entries only; the authors' released code also fits the model by EM (online,
with mean updates), the paper reports Gibbs sampling.

One iteration (:meth:`BPBFMEM.step`) is one ECM cycle, each block after a fresh E-step
(:func:`estep`: per relation, the nonzero entries grouped by the entity they share on one
side; O(#groups K^2) in BLAS products plus O(#nonzero K)):

1. ``Lambda^r <- (Lambda^r * S^r + EPS) / (D^r + b)``: ``S^r = sum_{e in r} w_e u_i
   u_j^T``, the exposure ``D^r = sum_{observed (i, j)} u_i u_j^T = s s^T - sum_{held-out
   (i, r, j)} u_i u_j^T`` (``s = sum_i u_i``); the exact M-step of this block.
2. U: the expected counts ``n_ik = u_ik S_ik`` (as head and as tail) and the exposure
   ``D_ik = sum_r [(Lambda^r s)_k + (Lambda^r^T s)_k]`` minus the held-out cells'.  With
   tied factors the exposure is quadratic in U, so the probe's multiplicative step
   ``u <- (n + EPS) / (D + b)`` (every u_i updated with the others at their old values)
   is not an exact M-step and may, rarely, lower the posterior.  It is taken when it
   does not; otherwise the step maximises the minorizer given by
   ``u_ik1 u_jk2 <= (u'_jk2 / 2u'_ik1) u_ik1^2 + (u'_ik1 / 2u'_jk2) u_jk2^2``:
   ``u = 2 (n + EPS) / (b + sqrt(b^2 + 4 (D / u') (n + EPS)))`` (without the prior, the
   square-root multiplicative update of symmetric NMF).  Either way the log posterior
   never decreases (a generalised EM), and the fixed points are those of the probe.

The E-step that checks the U step (the objective at the new U) is the E-step of the next
cycle's Lambda block, at the same point: it is computed once, with Lambda's statistics,
so a cycle costs two passes over the nonzero entries, not three.

The held-out cells (``tensor.missing``) are left out of the likelihood (EM never sees
them): their exposures are taken out grouped by (relation, head) and (relation, tail)
(:class:`MissingIndex`: ``sum_j u_j`` over a group's tails by one sparse product, then
one K x K product per group), at O(#missing K + #groups K^2) an iteration; the paper
protocol holds out 10 % of all cells, 14 times UMLS's ones, in at most N R groups.
Every cell of the N x N x R tensor is otherwise in it, self-pairs (i, r, i) included
(the paper's model, ``self_pairs="bilinear"``).

The objective (:meth:`BPBFMEM.objective`) is the log posterior per observed nonzero entry:
``[sum_nonzero log p(x | lam) - sum_{observed zeros} lam + sum_{U, Lambda} (EPS log x - b
x)] / #nonzero``, the zeros' total rate in closed form (``sum_r s^T Lambda^r s`` minus the
nonzero and held-out cells').
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from topiclink.families.bpbfm import kernels_em as kernels
from topiclink.families.bpbfm.algorithm import BPBFMData
from topiclink.families.bpbfm.grouping import kept_on
from topiclink.inference.engine import Algorithm, State

__all__ = ["BPBFMEMState", "BPBFMEM", "EMAhead", "EPS", "normalised", "MissingIndex",
           "OnesByRelation", "RelationGroups", "relation_groups", "estep"]

#: the priors' shape is 1 + EPS (the probe's numerator floor)
EPS = 1e-6


@dataclass(kw_only=True)
class BPBFMEMState(State):
    """The MAP estimate so far: U (N, K) and Lambda (R, K, K), unnormalised (the priors
    are not invariant to rescaling U's columns)."""

    U: np.ndarray
    L: np.ndarray


@dataclass
class EMAhead:
    """What one EM step leaves to the next: the state's workspace
    (:attr:`~topiclink.inference.engine.State.workspace`).

    The objective at the point the step left (``U``, ``L`` at ``iteration``) and
    Lambda's E-step statistics there (``S``, ``D``), both computed by the step's check of
    its U block; the next step's Lambda block and the engine's objective read them
    instead of a third pass over the nonzero entries.  Valid while the state stands at
    ``iteration`` with these very arrays (:meth:`holds`); anything else recomputes them,
    to the same bits.
    """

    iteration: int
    U: np.ndarray
    L: np.ndarray
    S: np.ndarray
    D: np.ndarray
    objective: float

    def holds(self, state: BPBFMEMState) -> bool:
        """Whether this is what the last step left on ``state`` as it stands."""
        return (self.iteration == state.iteration and self.U is state.U
                and self.L is state.L)


def normalised(U: np.ndarray, L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(U with columns summing to 1, Lambda rescaled to the same rates): ``U / s`` and
    ``s_k1 Lambda^r_k1k2 s_k2`` (the published ``embedding_`` / ``relation_matrices_``
    have the Gibbs path's normalisation)."""
    s = U.sum(axis=0)
    s = np.where(s > 0, s, 1.0)
    return U / s, L * s[None, :, None] * s[None, None, :]


@dataclass
class MissingIndex:
    """The held-out cells grouped by (relation, head) and by (relation, tail), groups
    sorted by relation: ``head_sum @ U`` gives, per (r, i) group, ``sum_j u_j`` over the
    group's held-out tails (``tail_sum`` likewise per (r, j) over the heads);
    ``*_ptr[r]:*_ptr[r + 1]`` are relation r's groups and ``*_ent`` their entity."""

    head_sum: sp.csr_array
    head_ent: np.ndarray
    head_ptr: np.ndarray
    tail_sum: sp.csr_array
    tail_ent: np.ndarray
    tail_ptr: np.ndarray

    @classmethod
    def from_data(cls, data: BPBFMData) -> MissingIndex:
        n, N, R = data.n_observed, data.n_entities, data.n_relations
        mh, mr, mt = (np.asarray(a[n:], dtype=np.int64)
                      for a in (data.heads, data.rels, data.tails))

        def groups(own: np.ndarray, other: np.ndarray
                   ) -> tuple[sp.csr_array, np.ndarray, np.ndarray]:
            keys, inverse = np.unique(mr * N + own, return_inverse=True)
            summer = sp.csr_array((np.ones(own.size), (inverse.ravel(), other)),
                                  shape=(keys.size, N))
            ptr = np.searchsorted(keys // N, np.arange(R + 1))
            return summer, keys % N, ptr

        return cls(*groups(mh, mt), *groups(mt, mh))


@dataclass
class OnesByRelation:
    """The observed nonzero entries sorted by relation (stably): relation r's entries are
    ``ptr[r]:ptr[r + 1]``."""

    heads: np.ndarray
    tails: np.ndarray
    values: np.ndarray
    ptr: np.ndarray

    @classmethod
    def from_data(cls, data: BPBFMData) -> OnesByRelation:
        n = data.n_observed
        order = np.argsort(data.rels[:n], kind="stable")
        rels = data.rels[:n][order]
        return cls(data.heads[:n][order], data.tails[:n][order], data.values[:n][order],
                   np.searchsorted(rels, np.arange(data.n_relations + 1)))

    @classmethod
    def of(cls, data: BPBFMData) -> OnesByRelation:
        """Built once per data object and kept on it."""
        return kept_on(data, "_em_ones_by_relation", cls.from_data)


#: which side a relation's entries are grouped by: None (the side with fewer distinct
#: entities in that relation), or "head" / "tail" for every relation (the tests)
GROUP_SIDE: str | None = None


@dataclass
class RelationGroups:
    """One relation's nonzero entries grouped by the entity they share on one side.

    ``by_head``: grouped by head (else by tail); ``entities``: the distinct entities of
    that side, one group each; ``group[e]`` / ``other[e]`` / ``values[e]``: entry e's
    group, its entity on the other side, its value (sorted by group, then other)."""

    by_head: bool
    entities: np.ndarray
    group: np.ndarray
    other: np.ndarray
    values: np.ndarray


def relation_groups(data: BPBFMData) -> list[RelationGroups]:
    """Every relation's :class:`RelationGroups` (built once per data object, kept on it);
    the side is :data:`GROUP_SIDE`, by default the one with fewer groups."""
    return kept_on(data, f"_em_groups_{GROUP_SIDE}", _build_relation_groups)


def _build_relation_groups(data: BPBFMData) -> list[RelationGroups]:
    ones = OnesByRelation.of(data)
    groups = []
    for r in range(data.n_relations):
        lo, hi = int(ones.ptr[r]), int(ones.ptr[r + 1])
        heads, tails = ones.heads[lo:hi], ones.tails[lo:hi]
        uh, ut = np.unique(heads), np.unique(tails)
        by_head = (GROUP_SIDE == "head" if GROUP_SIDE is not None
                   else uh.size <= ut.size)
        own, other, entities = (heads, tails, uh) if by_head else (tails, heads, ut)
        order = np.lexsort((other, own))
        groups.append(RelationGroups(
            by_head, entities, np.searchsorted(entities, own[order]).astype(np.int64),
            other[order].astype(np.int64), ones.values[lo:hi][order]))
    return groups


def estep(U: np.ndarray, L: np.ndarray, data: BPBFMData, want_lam: bool, want_u: bool
          ) -> tuple[float, np.ndarray | None, np.ndarray | None]:
    """The E-step over the observed nonzero entries at (U, Lambda).

    Entry e = (i, r, j) with rate ``lam = u_i^T Lambda^r u_j`` has the expected latent
    count ``E[m_e] = lam w_e``, ``w_e = x_e / (1 - exp(-lam))`` for a one of binary data
    (zero-truncated Poisson) and ``w_e = x_e / lam`` for a count, allocated to (k1, k2) in
    proportion to ``u_ik1 Lambda^r_k1k2 u_jk2``.  With the factor of the block being
    updated taken out, the M-steps need

    - ``S_lam[r] = sum_{e in r} w_e u_i u_j^T`` (times Lambda^r: the expected counts of
      Lambda^r's cells), and
    - ``S_u[i] = sum_{e: head i} w_e Lambda^r u_j + sum_{e: tail i} w_e Lambda^r^T u_h``
      (times u_i: the expected counts of entity i per factor, as head and as tail).

    Per relation, the entries are grouped by the entity they share on one side
    (:func:`relation_groups`), say by tail j.  One product ``P = U[tails] Lambda^r^T``
    gives every group's ``Lambda^r u_j``; :func:`~topiclink.families.bpbfm.kernels_em.
    group_pass` gives each entry's rate ``u_i . P_j`` and weight, the heads' part of
    ``S_u`` (``w_e P_j``) and each group's ``B_j = sum_e w_e u_i`` (O(K) an entry); then
    ``S_lam[r] = B^T U[tails]`` and the tails' part of ``S_u``, ``B Lambda^r``, are one
    product each.  The O(K^2) work is per group, not per entry (FB15k-237: 56,317 groups
    for 272,115 triples), in BLAS.  The order of every sum is fixed, so the result
    depends on nothing but (U, Lambda, data).

    Returns
    -------
    (``sum_e [log p(x_e | lam_e) + lam_e]``, S_lam (R, K, K) or None, S_u (N, K) or None)
    """
    K = U.shape[1]
    S_lam = np.zeros_like(L) if want_lam else None
    S_u = np.zeros_like(U) if want_u else np.zeros((0, K))
    want_b = want_lam or want_u
    ll = 0.0
    for r, g in enumerate(relation_groups(data)):
        if g.entities.size == 0:
            continue
        Lr = L[r] if g.by_head else L[r].T
        Ug = U[g.entities]
        P = Ug @ Lr                     # rows: Lambda^r^T u_i (by head), Lambda^r u_j
        B = np.zeros_like(P) if want_b else np.zeros((0, K))
        ll += kernels.group_pass(g.other, g.group, g.values, data.binary, U, P, B, S_u,
                                 want_b, want_u)
        if S_lam is not None:
            S_lam[r] = Ug.T @ B if g.by_head else B.T @ Ug
        if want_u:
            S_u[g.entities] += B @ Lr.T
    return ll, S_lam, (S_u if want_u else None)


class BPBFMEM(Algorithm):
    """MAP-EM of BPBFM-1 with tied factors (module docstring).

    Parameters
    ----------
    n_topics : K
    prior_rate : b, the rate of the Gamma(1 + EPS, b) prior of every entry of U and
        Lambda
    """

    name = "BPBFM-1-EM"
    state_class = BPBFMEMState

    def __init__(self, n_topics: int, prior_rate: float = 5.0) -> None:
        self.K = int(n_topics)
        self.b = float(prior_rate)

    # ------------------------------------------------------------------ set-up
    def fingerprint(self, data: BPBFMData) -> str:
        return data.fingerprint()

    def init(self, data: BPBFMData, rng: np.random.Generator) -> BPBFMEMState:
        """``U ~ Gamma(1, 1)``, ``Lambda ~ Gamma(1, scale 0.1)`` from ``rng`` in this
        order (the probe's start for the same seed)."""
        N, R, K = data.n_entities, data.n_relations, self.K
        U = rng.gamma(1.0, 1.0, (N, K))
        L = rng.gamma(1.0, 0.1, (R, K, K))
        return BPBFMEMState(U=U, L=L, data_fingerprint=self.fingerprint(data))

    def check_values(self, state: BPBFMEMState, data: BPBFMData) -> None:
        for name in ("U", "L"):
            if np.any(getattr(state, name) <= 0):
                raise ValueError(f"state: {name} must be positive")

    def relation_matrices(self, state: BPBFMEMState) -> np.ndarray:
        return state.L

    # ------------------------------------------------------------------ statistics
    def missing_index(self, data: BPBFMData) -> MissingIndex:
        """The held-out cells' groups (built once per data object, kept on it)."""
        return kept_on(data, "_em_missing_index", MissingIndex.from_data)

    def _missing(self, U: np.ndarray, L: np.ndarray, data: BPBFMData,
                 d_lam: np.ndarray | None = None, d_u: np.ndarray | None = None) -> float:
        """Take the held-out cells' exposures out of ``d_lam`` (``u_i u_j^T`` per cell)
        and ``d_u`` (``Lambda^r u_j`` for head i, ``Lambda^r^T u_i`` for tail j), in
        place; return their total rate."""
        if data.n_missing == 0:
            return 0.0
        ix = self.missing_index(data)
        A = ix.head_sum @ U                      # per (r, i): sum of the tails' u_j
        total = 0.0
        for r in range(L.shape[0]):
            lo, hi = ix.head_ptr[r], ix.head_ptr[r + 1]
            if lo == hi:
                continue
            Ui = U[ix.head_ent[lo:hi]]
            LA = A[lo:hi] @ L[r].T               # rows Lambda^r a
            total += float(np.sum(Ui * LA))
            if d_lam is not None:
                d_lam[r] -= Ui.T @ A[lo:hi]
            if d_u is not None:
                d_u[ix.head_ent[lo:hi]] -= LA     # a relation's heads are distinct
        if d_u is not None:
            B = ix.tail_sum @ U                  # per (r, j): sum of the heads' u_i
            for r in range(L.shape[0]):
                lo, hi = ix.tail_ptr[r], ix.tail_ptr[r + 1]
                if lo < hi:
                    d_u[ix.tail_ent[lo:hi]] -= B[lo:hi] @ L[r]
        return total

    def lambda_statistics(self, U: np.ndarray, L: np.ndarray, data: BPBFMData
                          ) -> tuple[np.ndarray, np.ndarray]:
        """(S (R, K, K), D): Lambda's E-step sums and exposures; D is (R, K, K), or
        (1, K, K) where no cell is held out (the exposure is then the same for every
        relation: with K = 400 and 237 relations a copy per relation is 300 MB)."""
        S, D, _ = self._lambda_statistics_and_objective(U, L, data)
        return S, D

    def _lambda_statistics_and_objective(self, U: np.ndarray, L: np.ndarray,
                                         data: BPBFMData
                                         ) -> tuple[np.ndarray, np.ndarray, float]:
        """(S, D, objective at (U, L)): one pass over the nonzero entries."""
        ll, S, _ = estep(U, L, data, want_lam=True, want_u=False)
        s = U.sum(axis=0)
        D = np.outer(s, s)[None]
        if data.n_missing:
            D = np.broadcast_to(D, L.shape).copy()
        missing = self._missing(U, L, data, d_lam=D)
        return S, D, self._posterior(U, L, data, ll, missing)  # type: ignore[return-value]

    def u_statistics(self, U: np.ndarray, L: np.ndarray, data: BPBFMData
                     ) -> tuple[np.ndarray, np.ndarray, float]:
        """(S (N, K), D (N, K), objective at (U, L)): U's E-step sums and exposures."""
        ll, _, S = estep(U, L, data, want_lam=False, want_u=True)
        s = U.sum(axis=0)
        D = np.broadcast_to(np.einsum("rkl,l->k", L, s) + np.einsum("rkl,k->l", L, s),
                            U.shape).copy()
        missing = self._missing(U, L, data, d_u=D)
        return S, D, self._posterior(U, L, data, ll, missing)  # type: ignore[return-value]

    def _posterior(self, U: np.ndarray, L: np.ndarray, data: BPBFMData, ones: float,
                   missing: float) -> float:
        s = U.sum(axis=0)
        total = float(np.einsum("k,rkl,l->", s, L, s))
        prior = sum(float(EPS * np.log(x).sum() - self.b * x.sum()) for x in (U, L))
        return (ones - (total - missing) + prior) / max(data.n_observed, 1)

    def log_posterior(self, U: np.ndarray, L: np.ndarray, data: BPBFMData) -> float:
        """The objective at (U, L) (module docstring)."""
        ll, _, _ = estep(U, L, data, want_lam=False, want_u=False)
        return self._posterior(U, L, data, ll, self._missing(U, L, data))

    # ------------------------------------------------------------------ one iteration
    def step(self, state: BPBFMEMState, data: BPBFMData) -> dict[str, float]:
        U, L, b = state.U, state.L, self.b
        ahead = state.workspace
        if isinstance(ahead, EMAhead) and ahead.holds(state):
            S, D = ahead.S, ahead.D             # computed with the last U step's check
        else:
            S, D = self.lambda_statistics(U, L, data)
        state.workspace = None
        L = L * S
        L += EPS
        L /= D + b
        S, D, before = self.u_statistics(U, L, data)
        n = U * S + EPS
        U_new = n / (D + b)
        S_next, D_next, after = self._lambda_statistics_and_objective(U_new, L, data)
        mm = after < before
        if mm:                      # the minorizer's maximiser (never decreases)
            c = np.maximum(D, 0.0) / U
            U_new = 2.0 * n / (b + np.sqrt(b * b + 4.0 * c * n))
            S_next, D_next, after = self._lambda_statistics_and_objective(U_new, L, data)
        state.U, state.L = U_new, L
        state.workspace = EMAhead(state.iteration + 1, U_new, L, S_next, D_next, after)
        return {"minorizer_step": float(mm)}

    def objective(self, state: BPBFMEMState, data: BPBFMData) -> float:
        ahead = state.workspace
        if isinstance(ahead, EMAhead) and ahead.holds(state):
            return ahead.objective
        return self.log_posterior(state.U, state.L, data)

    def averaged(self, state: BPBFMEMState, data: BPBFMData) -> dict[str, np.ndarray]:
        U, L = normalised(state.U, state.L)
        return {"U": U, "relation_matrices": L}
