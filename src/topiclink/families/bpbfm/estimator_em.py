"""Bilinear Poisson factor models fitted to a MAP point estimate by EM: BPBFM-1
(:class:`BilinearPoissonFactorModelEM`) and the degree-corrected model
(:class:`DegreeCorrectedPoissonFactorModel`).

Not the paper's inference (Hu, Rai & Carin report Gibbs sampling; their released code fits
by EM): independent ``Gamma(1, rate prior_rate)`` priors on every entry of the factors and
of every Lambda^r replace the Dirichlet and gamma-process priors, so neither class takes
the Gibbs samplers' ``priors``, ``burn_in`` / ``thinning`` / ``max_samples``, the online
parameters, BPBFM-2's dictionary, ``self_pairs`` or an executor; in exchange they stop at
``tol``.  The algorithms are :mod:`topiclink.families.bpbfm.em` and
:mod:`topiclink.families.bpbfm.em_degrees`; what all three BPBFM estimators share is
:mod:`topiclink.families.bpbfm.estimator_base`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from topiclink.callbacks import RelativeTolerance
from topiclink.data.checks import POSITIVE, Boolean, Integer, NoneValue
from topiclink.data.tensor import RelationalTensor
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.schema import ArraySpec
from topiclink.families.bpbfm.algorithm import BPBFMData
from topiclink.families.bpbfm.em import BPBFMEM, BPBFMEMState
from topiclink.families.bpbfm.em_degrees import DegreeCorrectedEM, DegreeEMState
from topiclink.families.bpbfm.estimator_base import (
    SAVED_ARRAYS,
    Checkpoint,
    Every,
    PoissonFactorBase,
)
from topiclink.inference.engine import Algorithm, State
from topiclink.parameters import shared
from topiclink.random import RandomState

__all__ = ["BilinearPoissonFactorModelEM", "DegreeCorrectedPoissonFactorModel"]

#: the degree-corrected model's arrays beyond BPBFM-1's
DEGREE_ARRAYS = ("tail_embedding_", "head_degrees_", "tail_degrees_",
                 "samples_tail_embedding_", "samples_head_degrees_",
                 "samples_tail_degrees_")


class _PoissonFactorEM(PoissonFactorBase):
    """The MAP-EM fit both EM estimators share: the engine run to ``tol``, restarts
    pooled, the estimate its own one "sample" per restart."""

    _point_estimate: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics", "max_iter", "tol"), "binary": [NoneValue(), Boolean()],
        "prior_rate": POSITIVE, "n_chains": [Integer(1)],
        **shared("random_state", "verbose", "callbacks"),
    }

    tol: float
    prior_rate: float

    def _run_algorithm(self, algorithm: Algorithm, data: BPBFMData, resume: bool,
                       publish: Callable[[State, dict[str, np.ndarray] | None], None],
                       checkpoint: Checkpoint, checkpoint_every: Every) -> None:
        tolerance = RelativeTolerance(float(self.tol), algorithm.name)
        previous = getattr(self, "state_", None)
        if resume and isinstance(previous, self._state_class_for()) and \
                previous.data_fingerprint == algorithm.fingerprint(data):
            tolerance.last = algorithm.objective(previous, data)
        self._run_engine(algorithm, data, resume=resume, checkpoint=checkpoint,
                         checkpoint_every=checkpoint_every, publish=publish,
                         evaluate_every=1, extra_callbacks=[tolerance])

    def _memory(self, tensor: RelationalTensor, degrees: int) -> int:
        """Bytes of U (the state, the estimate and its statistics), the K x K matrices
        (with their statistics), one estimate per restart and the entries, plus
        ``degrees`` (the degree-corrected model's own arrays)."""
        N, R, K = tensor.n_entities, tensor.n_relations, int(self.n_topics)
        S = int(self.n_chains) + 2
        return 8 * (N * K * (4 + S) + R * K * K * (5 + S)
                    + 6 * (tensor.n_entries + len(tensor.missing)) + degrees)


class BilinearPoissonFactorModelEM(_PoissonFactorEM):
    """BPBFM-1 fitted to a MAP point estimate by expectation-maximisation.

    The Gibbs samplers' likelihood (:class:`~topiclink.families.bpbfm.estimator.
    BilinearPoissonFactorModel`, ``P(x_irj = 1) = 1 - exp(-u_i^T Lambda^r u_j)``) with
    ``Gamma(1, rate prior_rate)`` priors on every entry of U and Lambda instead of the
    paper's Dirichlet and gamma-process priors, fitted by EM of the latent Poisson counts
    (:mod:`topiclink.families.bpbfm.em`).  O(#nonzero K^2 + #held-out K^2) an iteration;
    stops when the log posterior changes by less than ``tol``.  On the paper protocol
    (fold 0, 10 % of the cells held out, K = 20) it raised UMLS's held-out AUC-PR from
    Gibbs' 0.81 to 0.90 (measured by ``benchmarks/bpbfm_em_probe.py``), but it overfits a
    small graph such as Nations (14 entities), where Gibbs does better.  No posterior
    samples (no ``proba_interval``), no BPBFM-2, no ``partial_fit``.

    Parameters
    ----------
    n_topics : int, default 10
        K (>= 2), the number of latent factors.
    max_iter : int, default 500
        At most this many iterations per call of ``fit`` (``resume=True`` adds more).
    tol : float, default 1e-5
        Stop when the log posterior per nonzero entry changes by less than ``tol``
        relative to its value in one iteration (0: run ``max_iter``).
    binary : bool or None, default None
        True: the tensor's nonzero entries are ones (Bernoulli-Poisson link); False:
        counts; None: binary when every nonzero value is 1.
    prior_rate : float, default 5.0
        The rate b of the ``Gamma(1, b)`` prior of every entry of U and of every
        Lambda^r (the MAP estimate shrinks each by b per unit of exposure:
        ``x <- (x S + 1e-6) / (D + b)``, :mod:`topiclink.families.bpbfm.em`);
        ``benchmarks/bpbfm_em_probe.py``'s ``--b``, where b = 5 gave UMLS's 0.90 AUC-PR
        at K = 20.  Larger: stronger shrinkage (smaller graphs).
    n_chains : int, default 1
        Restarts fitted one after the other; prediction and ``score_*`` average over
        their estimates (``samples_*`` holds them, restart 0 first).  Restart 0 is the
        fit of ``random_state``; restart c >= 1 is seeded from the fit's recorded seed
        and c (:func:`~topiclink.families.bpbfm.estimator_base.chain_seed`).  The point
        estimates (``embedding_``, ``relation_matrices_``) are restart 0's.  One fit
        lands on one of many modes: on UMLS, averaging 8 restarts raised the test
        filtered MRR from 0.870 to 0.919 (``benchmarks/bpbfm_chain_ensembles.py``).  No
        ``resume`` or checkpoints with more than one.
    random_state, verbose, callbacks : as every estimator

    Attributes
    ----------
    embedding_ : (N, K) the MAP estimate of U, its columns rescaled to sum to 1
    relation_matrices_ : (R, K, K) the MAP estimate of Lambda^r, rescaled by U's column
        sums (``s_k1 Lambda^r_k1k2 s_k2``: the same rates)
    factor_weights_ : (K,) share of the expected count carried by each factor
    n_active_factors_ : factors with a share above 1%
    n_parameters_ : R K^2 + N K
    samples_embedding_, samples_relation_matrices_ : the estimate of each restart
    entity_names_, relation_names_ : ndarray of str
    trace_ : ``"log_likelihood"`` (the log posterior per observed nonzero entry, every
        iteration), ``"minorizer_step"``, ``"seconds"``
    state_ : BPBFMEMState (``fit(tensor, resume=True)`` continues it)
    """

    cli_name: ClassVar[str] = "bpbfm-em"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {"n_chains": ("--chains",)}
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"BPBFM-1-EM": {}}
    _state_class = BPBFMEMState

    def __init__(self, n_topics: int = 10, *, max_iter: int = 500, tol: float = 1e-5,
                 binary: bool | None = None, prior_rate: float = 5.0, n_chains: int = 1,
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    def _algorithm(self) -> BPBFMEM:
        return BPBFMEM(int(self.n_topics), float(self.prior_rate))

    def _tensor_memory(self, tensor: RelationalTensor) -> int:
        return self._memory(tensor, 0)

    def fit(self, tensor: RelationalTensor, *, resume: bool = False,
            checkpoint: Checkpoint = None, checkpoint_every: Every = DEFAULT_EVERY
            ) -> BilinearPoissonFactorModelEM:
        """Fit to a :class:`~topiclink.data.tensor.RelationalTensor` (its ``missing``
        entries are held out: left out of the likelihood).  ``resume=True`` continues
        for ``max_iter`` more iterations on the same tensor.  With ``n_chains`` above 1
        the other restarts follow restart 0 and their estimates are pooled.
        ``checkpoint=PATH`` writes the fit to ``PATH`` every ``checkpoint_every``
        (iterations, or a duration such as ``"10min"``) and continues from it
        (:mod:`topiclink.estimators.checkpoint`; one restart only)."""
        self._fit(tensor, resume, checkpoint, checkpoint_every)
        return self

    def _count_parameters(self, N: int, K: int, R: int) -> int:
        return R * K * K + N * K

    def _summary_title(self) -> str:
        return "BPBFM-1 (MAP-EM)"


class DegreeCorrectedPoissonFactorModel(_PoissonFactorEM):
    """The degree-corrected bilinear Poisson factor model, fitted by MAP-EM.

    Not in the paper: rate ``a_ri b_rj u_i^T Lambda^r v_j``, separate head and tail
    factors and a head and a tail degree per relation and entity.  U (``embedding_``)
    serves the heads and V (``tail_embedding_``) the tails, so that a relation's heads and
    tails can be entities of different kinds, and the degrees let a few entities hold most
    of a relation's links (:mod:`topiclink.families.bpbfm.em_degrees`).  Fitted by block
    ECM (the log posterior never decreases).  Twice the entity factors and 2 R N degrees;
    pays on large knowledge graphs: FB15k-237, K = 200, valid filtered MRR 0.225 -> 0.268
    (``docs/results-knowledge-graphs.md``).

    Parameters
    ----------
    n_topics : int, default 10
        K (>= 2), the number of latent factors.
    max_iter : int, default 500
        At most this many iterations per call of ``fit`` (``resume=True`` adds more).
    tol : float, default 1e-5
        Stop when the log posterior per nonzero entry changes by less than ``tol``
        relative to its value in one iteration (0: run ``max_iter``).
    binary : bool or None, default None
        True: the tensor's nonzero entries are ones (Bernoulli-Poisson link); False:
        counts; None: binary when every nonzero value is 1.
    prior_rate : float, default 5.0
        The rate b of the ``Gamma(1, b)`` prior of every entry of U, V and every
        Lambda^r (as :class:`BilinearPoissonFactorModelEM`'s).
    degree_prior : float, default 0.5
        alpha of the ``Gamma(1 + alpha, rate alpha)`` prior of every degree (mode 1;
        smaller lets the data move the degrees more).
    n_chains : int, default 1
        Restarts fitted one after the other and pooled, as
        :class:`BilinearPoissonFactorModelEM`'s.
    random_state, verbose, callbacks : as every estimator

    Attributes
    ----------
    embedding_ : (N, K) the head factors U, columns summing to 1
    tail_embedding_ : (N, K) the tail factors V, columns summing to 1
    relation_matrices_ : (R, K, K) Lambda^r, rescaled by U's and V's column sums
    head_degrees_, tail_degrees_ : (R, N) the degrees a and b
    factor_weights_, n_active_factors_ : as :class:`BilinearPoissonFactorModelEM`'s
    n_parameters_ : R K^2 + 2 N K + 2 R N
    samples_embedding_, samples_relation_matrices_, samples_tail_embedding_,
    samples_head_degrees_, samples_tail_degrees_ : the estimate of each restart
    entity_names_, relation_names_ : ndarray of str
    trace_ : ``"log_likelihood"`` (the log posterior per observed nonzero entry, every
        iteration), ``"seconds"``
    state_ : DegreeEMState (``fit(tensor, resume=True)`` continues it)
    """

    cli_name: ClassVar[str] = "bpbfm-dc"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {"n_chains": ("--chains",)}
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"BPBFM-DC-EM": {}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **_PoissonFactorEM._parameter_constraints, "degree_prior": POSITIVE}
    _saved_arrays: ClassVar[tuple[str, ...]] = (*SAVED_ARRAYS, *DEGREE_ARRAYS)
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **PoissonFactorBase._array_specs,
        "tail_embedding_": ArraySpec(("N", "K"), "f", "colsimplex"),
        "head_degrees_": ArraySpec(("R", "N"), "f", "nonnegative"),
        "tail_degrees_": ArraySpec(("R", "N"), "f", "nonnegative"),
        "samples_tail_embedding_": ArraySpec(("S", "N", "K"), "f", "colsimplex"),
        "samples_head_degrees_": ArraySpec(("S", "R", "N"), "f", "nonnegative"),
        "samples_tail_degrees_": ArraySpec(("S", "R", "N"), "f", "nonnegative"),
    }
    _state_class = DegreeEMState

    def __init__(self, n_topics: int = 10, *, max_iter: int = 500, tol: float = 1e-5,
                 binary: bool | None = None, prior_rate: float = 5.0,
                 degree_prior: float = 0.5, n_chains: int = 1,
                 random_state: RandomState = None, verbose: bool = False,
                 callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    def _algorithm(self) -> DegreeCorrectedEM:
        return DegreeCorrectedEM(int(self.n_topics), float(self.prior_rate),
                                 float(self.degree_prior))

    def _tensor_memory(self, tensor: RelationalTensor) -> int:
        """:meth:`_PoissonFactorEM._memory` plus V and the degrees (the state, the
        estimate, their statistics and exposures) and, per kept estimate, V and the
        degrees again."""
        N, R, K = tensor.n_entities, tensor.n_relations, int(self.n_topics)
        S = int(self.n_chains) + 2
        return self._memory(tensor, N * K * (3 + S) + 2 * R * N * (4 + S) + 2 * R * K * K)

    def fit(self, tensor: RelationalTensor, *, resume: bool = False,
            checkpoint: Checkpoint = None, checkpoint_every: Every = DEFAULT_EVERY
            ) -> DegreeCorrectedPoissonFactorModel:
        """Fit to a :class:`~topiclink.data.tensor.RelationalTensor` (its ``missing``
        entries are held out: left out of the likelihood).  ``resume=True`` continues
        for ``max_iter`` more iterations on the same tensor.  With ``n_chains`` above 1
        the other restarts follow restart 0 and their estimates are pooled.
        ``checkpoint=PATH`` writes the fit to ``PATH`` every ``checkpoint_every``
        (iterations, or a duration such as ``"10min"``) and continues from it
        (:mod:`topiclink.estimators.checkpoint`; one restart only)."""
        self._fit(tensor, resume, checkpoint, checkpoint_every)
        return self

    def _published_extras(self) -> dict[str, str]:
        return {"tail_embedding_": "V", "head_degrees_": "head_degrees",
                "tail_degrees_": "tail_degrees"}

    def _count_parameters(self, N: int, K: int, R: int) -> int:
        return R * K * K + 2 * N * K + 2 * R * N

    def _summary_title(self) -> str:
        return "degree-corrected BPBFM (MAP-EM; factors below: heads)"
