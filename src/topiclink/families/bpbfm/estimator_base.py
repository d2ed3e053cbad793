"""What the bilinear Poisson factor estimators share: the tensor checks, the chains, the
published arrays and prediction.

Three estimators fit rates ``u_i^T Lambda^r v_j`` of knowledge-graph triples (Hu, Rai &
Carin, AISTATS 2016; ``docs/design/bpbfm.md``):

- :class:`~topiclink.families.bpbfm.estimator.BilinearPoissonFactorModel`: BPBFM-1 / -2
  by batch or online Gibbs sampling (``v = u``);
- :class:`~topiclink.families.bpbfm.estimator_em.BilinearPoissonFactorModelEM`: BPBFM-1
  by MAP-EM;
- :class:`~topiclink.families.bpbfm.estimator_em.DegreeCorrectedPoissonFactorModel`: the
  degree-corrected likelihood ``a_ri b_rj u_i^T Lambda^r v_j`` by MAP-EM.

Each is one likelihood fitted one way; :class:`PoissonFactorBase` holds the rest: the
checks of a :class:`~topiclink.data.tensor.RelationalTensor`, ``n_chains`` (chains or
restarts pooled), the published estimates and kept samples (``samples_*``), and the
scores of triples averaged over them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import numpy as np

from topiclink.data.checks import DataError
from topiclink.data.tensor import RelationalTensor
from topiclink.estimators.base import Estimator, check_fit_memory
from topiclink.estimators.capabilities import EntityFactorsMixin
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.schema import ArraySpec
from topiclink.families.bpbfm import kernels as kernels
from topiclink.families.bpbfm.algorithm import BPBFMData
from topiclink.inference.engine import Algorithm, State

__all__ = ["chain_seed"]

logger = logging.getLogger(__name__)

#: a ``fit``'s ``checkpoint`` and ``checkpoint_every`` (:mod:`topiclink.estimators.checkpoint`)
Checkpoint = str | os.PathLike[str] | None
Every = int | str | float

#: the arrays every bilinear Poisson factor model publishes and saves
SAVED_ARRAYS = ("embedding_", "relation_matrices_", "factor_weights_", "entity_names_",
                "relation_names_", "samples_embedding_", "samples_relation_matrices_")

#: what each published array holds, for the checks of a model file
ARRAY_SPECS: dict[str, ArraySpec] = {
    "embedding_": ArraySpec(("N", "K"), "f", "colsimplex"),
    "relation_matrices_": ArraySpec(("R", "K", "K"), "f", "nonnegative"),
    "factor_weights_": ArraySpec(("K",), "f", "simplex"),
    "entity_names_": ArraySpec(("N",), "U", None),
    "relation_names_": ArraySpec(("R",), "U", None),
    "samples_embedding_": ArraySpec(("S", "N", "K"), "f", "colsimplex"),
    "samples_relation_matrices_": ArraySpec(("S", "R", "K", "K"), "f", "nonnegative"),
}


def chain_seed(seed: int | np.random.SeedSequence, chain: int) -> int:
    """The seed of chain ``chain`` >= 1 of a fit whose recorded seed (``random_state_``)
    is ``seed``: a child of it (``SeedSequence(seed, spawn_key=(chain,))``), as a 63-bit
    integer, so that ``n_chains`` fits are reproducible from ``random_state``."""
    entropy = seed.entropy if isinstance(seed, np.random.SeedSequence) else int(seed)
    words = np.random.SeedSequence(entropy, spawn_key=(int(chain),)).generate_state(
        2, np.uint32)
    return int((int(words[0]) << 31) ^ int(words[1]))


class PoissonFactorBase(EntityFactorsMixin, Estimator):
    """The shared body of the bilinear Poisson factor estimators (module docstring).

    A subclass gives its algorithm (:meth:`_algorithm`), its memory need
    (:meth:`_tensor_memory`), how one chain runs on the engine (:meth:`_run_algorithm`), its
    number of parameters (:meth:`_count_parameters`) and its ``summary`` title; its
    ``fit`` calls :meth:`_fit`.  The parameters ``n_topics``, ``max_iter``, ``binary``,
    ``n_chains`` and ``random_state`` are every subclass's.
    """

    _abstract: ClassVar[bool] = True

    fit_requires: ClassVar[tuple[str, ...]] = ("tensor",)
    #: a MAP point estimate (EM): its one "sample" per chain is the estimate itself
    _point_estimate: ClassVar[bool] = False
    _saved_arrays: ClassVar[tuple[str, ...]] = SAVED_ARRAYS
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "n_active_factors_",
                                                 "n_parameters_", "binary_")
    _scalar_specs: ClassVar[dict[str, str]] = {"binary_": "bool"}
    _array_specs: ClassVar[dict[str, ArraySpec]] = ARRAY_SPECS

    n_topics: int
    max_iter: int
    binary: bool | None
    n_chains: int

    # ------------------------------------------------------------------ the subclass's
    def _algorithm(self) -> Algorithm:
        raise NotImplementedError

    def _tensor_memory(self, tensor: RelationalTensor) -> int:
        raise NotImplementedError

    def _run_algorithm(self, algorithm: Algorithm, data: BPBFMData, resume: bool,
                       publish: Callable[[State, dict[str, np.ndarray] | None], None],
                       checkpoint: Checkpoint, checkpoint_every: Every) -> None:
        raise NotImplementedError

    def _count_parameters(self, N: int, K: int, R: int) -> int:
        raise NotImplementedError

    def _summary_title(self) -> str:
        raise NotImplementedError

    def _self_pairs_scaled(self) -> bool:
        """Whether the data carries the self-pairs as their own cells (Gibbs' ``"scaled"``)."""
        return False

    # ------------------------------------------------------------------ fitting
    def _check_tensor(self, tensor: Any) -> tuple[RelationalTensor, bool]:
        if not isinstance(tensor, RelationalTensor):
            raise TypeError(f"fit: expected a RelationalTensor, got {type(tensor).__name__}")
        tensor.check("fit: tensor")            # its fields may have been reassigned
        check_fit_memory(self._tensor_memory(tensor),
                         f"fit: {self.n_topics} factors over {tensor.n_entities} "
                         f"entities and {tensor.n_relations} relations")
        values = np.asarray(tensor.values, dtype=np.float64)
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise DataError(f"fit: tensor value {float(values[k])!r} at entry {k} is not a "
                            "finite count >= 0")
        if tensor.n_entities < 2 or tensor.n_relations < 1:
            raise DataError(f"fit: the tensor needs >= 2 entities and >= 1 relation, got "
                            f"{tensor.n_entities} and {tensor.n_relations}")
        if not np.any(values > 0):
            raise DataError("fit: the tensor has no nonzero entry (empty tensor)")
        binary = self.binary
        if binary is None:
            binary = bool(np.all(values[values > 0] == 1.0))
        if not binary:
            frac = values != np.round(values)
            if frac.any():
                k = int(np.flatnonzero(frac)[0])
                raise DataError(f"fit: count {float(values[k])!r} at entry {k} is not an "
                                "integer (binary=True reads every nonzero value as a one)")
        return tensor, bool(binary)

    def _fit(self, tensor: RelationalTensor, resume: bool, checkpoint: Checkpoint,
             checkpoint_every: Every) -> None:
        """The body of every ``fit``: chain 0 (``resume`` continues it; ``checkpoint``
        writes it), then the other ``n_chains - 1`` pooled after it."""
        self._validate_params()
        n_chains = int(self.n_chains)
        if n_chains > 1:
            if resume:
                raise ValueError(f"resume=True continues one chain; this model pools "
                                 f"{n_chains} (n_chains): fit again with a larger max_iter")
            if checkpoint is not None:
                raise ValueError(f"checkpoints keep one chain; n_chains={n_chains}: fit "
                                 "the chains separately to checkpoint them")
        self._fit_chain(tensor, resume, checkpoint, checkpoint_every)
        if n_chains > 1:
            self._pool_chains(tensor, n_chains)

    #: the sample arrays that restarts (``n_chains``) pool
    _pooled_samples: ClassVar[tuple[str, ...]] = (
        "samples_embedding_", "samples_relation_matrices_", "samples_self_scale_",
        "samples_tail_embedding_", "samples_head_degrees_", "samples_tail_degrees_")

    def _pool_chains(self, tensor: RelationalTensor, n_chains: int) -> None:
        """Fit chains 1 .. n_chains - 1 (each as chain 0 was fitted, seeded by
        :func:`chain_seed`) and pool their kept samples after chain 0's."""
        from sklearn.base import clone

        chains = [self]
        for c in range(1, n_chains):
            logger.info("%s: chain %d of %d", type(self).__name__, c + 1, n_chains)
            other = clone(self).set_params(n_chains=1,
                                           random_state=chain_seed(self.random_state_, c))
            other._validate_params()
            other._fit_chain(tensor, False)
            chains.append(other)
        for name in self._pooled_samples:
            if getattr(self, name, None) is not None:
                setattr(self, name, np.concatenate([getattr(m, name) for m in chains]))
        self._samples_published_ = False   # no longer chain 0's run's samples alone

    def _fit_chain(self, tensor: RelationalTensor, resume: bool,
                   checkpoint: Checkpoint = None,
                   checkpoint_every: Every = DEFAULT_EVERY) -> None:
        """One chain (or EM fit) on ``tensor``."""
        tensor, binary = self._check_tensor(tensor)
        tensor.check_relations_nonempty("fit")
        algorithm = self._algorithm()
        data = BPBFMData.from_tensor(tensor, binary, self._self_pairs_scaled())
        logger.info("%s: %d entities, %d relations, %d nonzero, %d held out, K=%d",
                    algorithm.name, data.n_entities, data.n_relations, data.n_observed,
                    data.n_missing, algorithm.K)  # type: ignore[attr-defined]
        names_e = (tensor.entity_names if tensor.entity_names is not None
                   else np.arange(data.n_entities).astype(str))
        names_r = (tensor.relation_names if tensor.relation_names is not None
                   else np.arange(data.n_relations).astype(str))

        def publish(state: State, averaged: dict[str, np.ndarray] | None) -> None:
            # the samples the engine has kept so far in this chain (the live progress)
            self._publish(state, algorithm, averaged, names_e, names_r, binary,
                          self._progress_.samples)

        self._run_algorithm(algorithm, data, resume, publish, checkpoint, checkpoint_every)

    def _publish(self, state: State, algorithm: Algorithm,
                 averaged: dict[str, np.ndarray] | None, names_e: np.ndarray,
                 names_r: np.ndarray, binary: bool,
                 kept: list[dict[str, np.ndarray]]) -> None:
        """Set the fitted attributes: the averaged estimates, and ``samples_*`` from the
        samples ``kept`` so far (copied by the engine; none yet, or no samples at all
        (``partial_fit``): the current state alone; a point estimate: the estimate
        alone)."""
        if averaged is None:
            averaged = algorithm.averaged(state, None)
        self.embedding_ = np.asarray(averaged["U"], dtype=np.float64)
        self.relation_matrices_ = np.asarray(averaged["relation_matrices"],
                                             dtype=np.float64)
        self._publish_unsampled(averaged)
        point = self._point_estimate
        samples = [] if point else kept or [algorithm.retained(state)]
        # samples_* are exactly the run's kept samples: save(full=True) stores them once
        self._samples_published_ = bool(kept) and not point

        def stacked(key: str, published: np.ndarray) -> np.ndarray:
            # EM: a point estimate, its one "sample" a view of the published array
            return published[None] if point else np.stack([s[key] for s in samples])

        self.samples_embedding_ = stacked("U", self.embedding_)
        self.samples_relation_matrices_ = stacked("relation_matrices",
                                                  self.relation_matrices_)
        for name, key in self._published_extras().items():
            published = (np.array(averaged[key], dtype=np.float64) if key in averaged
                         else None)
            setattr(self, name, published)
            setattr(self, f"samples_{name}", None if published is None
                    else stacked(key, published))
        self.entity_names_ = np.asarray(names_e, dtype=str)
        self.relation_names_ = np.asarray(names_r, dtype=str)
        self.binary_ = bool(binary)
        self._derived()
        self.n_iter_ = state.iteration

    def _publish_unsampled(self, averaged: dict[str, np.ndarray]) -> None:
        """Hook: publish the estimates that keep no samples (BPBFM-2's dictionary)."""

    def _published_extras(self) -> dict[str, str]:
        """Published array (each with its ``samples_`` twin) -> its key in the
        algorithm's estimates, beyond U and Lambda."""
        return {}

    def _derived(self) -> None:
        L = self.relation_matrices_
        strength = L.sum(axis=(0, 2)) + L.sum(axis=(0, 1))
        total = float(strength.sum())
        self.factor_weights_ = strength / total if total > 0 else np.full(
            strength.size, 1.0 / strength.size)
        self.n_active_factors_ = int(np.sum(self.factor_weights_ > 0.01))
        N, K = self.embedding_.shape
        self.n_parameters_ = int(self._count_parameters(N, K, L.shape[0]))

    def _after_load(self) -> None:
        for name in self._saved_optional:
            if not hasattr(self, name):
                setattr(self, name, None)

    # ------------------------------------------------------------------ prediction
    def _kept(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray,
                                      np.ndarray | None, np.ndarray | None]]:
        """Per kept sample: (U, Lambda, the tail factors, the head and tail degrees);
        the last three are (U, None, None) but for the degree-corrected model."""
        V = getattr(self, "samples_tail_embedding_", None)
        A = getattr(self, "samples_head_degrees_", None)
        B = getattr(self, "samples_tail_degrees_", None)
        for s, (U, L) in enumerate(zip(self.samples_embedding_,
                                       self.samples_relation_matrices_, strict=True)):
            U = np.ascontiguousarray(U, dtype=np.float64)
            yield (U, np.ascontiguousarray(L, dtype=np.float64),
                   U if V is None else np.ascontiguousarray(V[s], dtype=np.float64),
                   None if A is None else A[s], None if B is None else B[s])

    def _sample_probas(self, h: np.ndarray, r: np.ndarray, t: np.ndarray
                       ) -> Iterator[np.ndarray]:
        """Per kept sample, ``1 - exp(-u_h^T Lambda^r u_t)`` of the triples (a self-pair's
        rate times rho_r with ``self_pairs="scaled"``; ``a_rh b_rt u_h^T Lambda^r v_t``
        degree-corrected)."""
        h32, r32, t32 = (np.asarray(x, dtype=np.int32) for x in (h, r, t))
        rhos = getattr(self, "samples_self_scale_", None)
        diag = h32 == t32
        for s, (U, L, V, A, B) in enumerate(self._kept()):
            rate = kernels.bilinear_rates(h32, r32, t32, U, L, V)
            if rhos is not None:
                rate[diag] *= rhos[s][r32[diag]]
            if A is not None:
                rate *= A[r32, h32] * B[r32, t32]           # type: ignore[index]
            yield -np.expm1(-rate)

    def _triple_proba(self, h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Mean over the kept samples of :meth:`_sample_probas`."""
        out = np.zeros(np.size(h))
        for p in self._sample_probas(h, r, t):
            out += p
        return out / self.samples_embedding_.shape[0]

    def _scores(self, h: np.ndarray | None, r: np.ndarray, t: np.ndarray | None,
                axis: str) -> np.ndarray:
        N = self.embedding_.shape[0]
        every = np.arange(N)
        rr = np.full(N, int(r[0]))
        if axis == "tail":
            return self._triple_proba(np.full(N, int(h[0])), rr, every)  # type: ignore[index]
        return self._triple_proba(every, rr, np.full(N, int(t[0])))  # type: ignore[index]

    def _score_rows(self, a: np.ndarray, r: np.ndarray, axis: str) -> np.ndarray:
        """Mean over the kept samples of ``1 - exp(-rate)`` for a batch of queries, every
        entity a candidate, by matrix products: tail queries ``(u_a^T Lambda^r_a) U^T``,
        head queries ``(Lambda^r_a u_a)^T U^T`` (O(n K^2 + n N K) a sample, the second
        term one BLAS call).  Two (n, N) float64 arrays are allocated."""
        a = np.asarray(a, dtype=np.int64)
        r = np.asarray(r, dtype=np.int64)
        N = self.embedding_.shape[0]
        out = np.zeros((a.size, N))
        if a.size == 0:
            return out
        buf = np.empty((a.size, N))
        for U, L, V, A, B in self._kept():
            Lq = L[r]                                                 # (n, K, K)
            if axis == "tail":
                left = np.einsum("nk,nkl->nl", U[a], Lq)
                np.matmul(left, V.T, out=buf)
            else:
                left = np.einsum("nkl,nl->nk", Lq, V[a])
                np.matmul(left, U.T, out=buf)
            if A is not None:                       # the degrees: a_rh b_rt
                own, other = (A, B) if axis == "tail" else (B, A)
                buf *= other[r]                                       # type: ignore[index]
                buf *= own[r, a][:, None]                             # type: ignore[index]
            np.negative(buf, out=buf)
            np.expm1(buf, out=buf)
            out -= buf
        out /= self.samples_embedding_.shape[0]
        return out

    def summary(self, n_entities: int = 5, n_pairs: int = 3) -> str:
        """Each factor's top entities, each relation's strongest factor pairs, and the
        number of active factors."""
        self._check_fitted()
        U, L = self.embedding_, self.relation_matrices_
        K = U.shape[1]
        lines = [f"{self._summary_title()}: {U.shape[0]} entities, {L.shape[0]} relations, "
                 f"K={K}, {self.n_active_factors_} active factors, {self.n_parameters_} "
                 "parameters"]
        for k in np.argsort(-self.factor_weights_):
            top = np.argsort(-U[:, k])[:n_entities]
            lines.append(f"factor {k} ({100 * self.factor_weights_[k]:.1f}%): " + ", ".join(
                f"{self.entity_names_[i]} ({U[i, k]:.2f})" for i in top))
        for r in range(L.shape[0]):
            flat = np.argsort(-L[r].ravel())[:n_pairs]
            lines.append(f"relation {self.relation_names_[r]}: " + ", ".join(
                f"{c // K}->{c % K} ({L[r].flat[c]:.3g})" for c in flat))
        return "\n".join(lines)
