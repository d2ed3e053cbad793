"""Bilinear Poisson factor models for knowledge graphs (BPBFM-1, BPBFM-2): the estimator.

Hu, Rai & Carin (AISTATS 2016); ``design/models/bpbfm.md``.  The algorithm (state, step,
objective) is :mod:`topiclink.families.bpbfm.algorithm`; this module validates, builds the data,
runs the engine (which keeps the thinned post-burn-in samples, ``BPBFMGibbs.retained``)
and publishes the estimates and the kept samples for prediction.

Priors: the supplement gives the conditionals but no numerical values; the defaults here
are the usual weakly informative choices of the gamma-process edge partition models
(Zhou 2015): ``gamma0 = c0 = e0 = f0 = h0 = q0 = beta = 1`` and a sparse Dirichlet
``a = 0.1`` for U's columns.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from topiclink.callbacks import RelativeTolerance
from topiclink.data.checks import (
    POSITIVE,
    Boolean,
    DataError,
    Integer,
    NoneValue,
    Options,
)
from topiclink.data.tensor import RelationalTensor
from topiclink.distributed import ExecutorCodec, SharedClientMixin
from topiclink.execution import DaskExecutor
from topiclink.families.bpbfm import kernels as kernels
from topiclink.families.bpbfm.algorithm import BPBFMData, BPBFMGibbs, BPBFMState
from topiclink.families.bpbfm.em import BPBFMEM, BPBFMEMState
from topiclink.families.bpbfm.em_degrees import DegreeCorrectedEM, DegreeEMState
from topiclink.families.bpbfm.online import BPBFMChunk, BPBFMOnline, BPBFMOnlineState
from topiclink.inference.engine import State
from topiclink.models.base import Estimator, check_fit_memory
from topiclink.models.capabilities import EntityFactorsMixin
from topiclink.models.param_codecs import ParamCodec
from topiclink.models.schema import ArraySpec
from topiclink.parameters import (
    Averaging,
    RobbinsMonro,
    accepts_renamed,
    shared,
    warn_renamed,
)
from topiclink.random import RandomState

__all__ = ["BilinearPoissonFactorModel"]

#: the degree-corrected model's arrays (``degree_corrected=True``, else None)
DEGREE_ARRAYS = ("tail_embedding_", "head_degrees_", "tail_degrees_",
                 "samples_tail_embedding_", "samples_head_degrees_",
                 "samples_tail_degrees_")

logger = logging.getLogger(__name__)


def chain_seed(seed: int | np.random.SeedSequence, chain: int) -> int:
    """The seed of chain ``chain`` >= 1 of a fit whose recorded seed (``random_state_``)
    is ``seed``: a child of it (``SeedSequence(seed, spawn_key=(chain,))``), as a 63-bit
    integer, so that ``n_chains`` fits are reproducible from ``random_state``."""
    entropy = seed.entropy if isinstance(seed, np.random.SeedSequence) else int(seed)
    words = np.random.SeedSequence(entropy, spawn_key=(int(chain),)).generate_state(
        2, np.uint32)
    return int((int(words[0]) << 31) ^ int(words[1]))


def _chunk_names(given: np.ndarray | None, n: int, fitted: np.ndarray,
                 what: str) -> np.ndarray:
    """The names of a stream chunk's ``n`` entities (or relations): its own, or for an
    unnamed chunk those of the fitted ones by index (see ``partial_fit``)."""
    if given is not None:
        return np.asarray(given, dtype=str)
    default = np.arange(n).astype(str)
    if n <= fitted.size:
        return fitted[:n]
    if np.array_equal(fitted, default[:fitted.size]):
        return default                  # an unnamed stream grows: index i is "i"
    raise DataError(f"partial_fit: this chunk has no {what[:-1]} names and {n} {what}, the "
                    f"fit has {fitted.size} named ones: an unnamed chunk is matched by "
                    f"index, so it cannot add {what} (give the chunk's names)")


def _half_of_max_iter(params: dict[str, Any]) -> int:
    """half of --iterations"""
    return int(params["max_iter"]) // 2


class BilinearPoissonFactorModel(SharedClientMixin, EntityFactorsMixin, Estimator):
    """BPBFM-1 / BPBFM-2 fitted by batch or online Gibbs sampling, or BPBFM-1 and the
    degree-corrected model (``degree_corrected=True``) by MAP-EM.

    Parameters
    ----------
    n_topics : int, default 10
        K (>= 2), the number of latent factors (the shrinkage prior switches off those not
        needed).  Called ``n_components`` before 0.1.0: that name is still accepted (by
        the constructor, ``set_params`` and ``topiclink.load``) with a DeprecationWarning,
        until 0.2.0.
    n_dictionary : int or None, default None
        None: BPBFM-1 (a K x K matrix per relation); M: BPBFM-2 (M shared K x K matrices,
        ``Lambda^r = sum_m eta_mr G^m``).
    inference : "batch", "online" or "em"
        Batch Gibbs sampling, or online Gibbs by Bayesian conditional density filtering
        (supplement section 2): minibatches of ``batch_size`` entries update decaying
        statistics with step ``rho_t = (t + step_a2)^-step_v`` and redraw the parameters
        they touch, at a cost per step independent of the numbers of entities and
        relations (:mod:`topiclink.families.bpbfm.online`); ``partial_fit`` feeds a
        stream of new triples.  ``"em"`` (BPBFM-1 only, ``n_dictionary=None``): the
        same likelihood fitted to a MAP point estimate by expectation-maximisation of the
        latent Poisson counts, with ``Gamma(1, rate em_prior_rate)`` priors on every
        entry of U and Lambda instead of the paper's Dirichlet and gamma-process priors
        (:mod:`topiclink.families.bpbfm.em`; the authors' released code fits by EM too).
        O(#nonzero K^2 + #held-out K^2) an iteration; stops when the log posterior
        changes by less than ``tol``.  On the paper protocol (fold 0, 10 % of the cells
        held out, K = 20) it raised UMLS's held-out AUC-PR from Gibbs' 0.81 to 0.90
        (``benchmarks/bpbfm_em_probe.py``, issue 24), but it overfits a small graph such
        as Nations (14 entities), where Gibbs does better: not the default.  No
        posterior samples: ``proba_interval`` refuses; no BPBFM-2, ``self_pairs="scaled"``,
        Dask ``executor`` or ``partial_fit``.  With ``degree_corrected=True``: the
        degree-corrected model (below), the one that ranks best on FB15k-237.
    max_iter : int, default 500
        Gibbs iterations per call of ``fit`` (``resume=True`` adds more); online: sweeps,
        each visiting every entry once in minibatches; EM: at most this many iterations.
    tol : float, default 1e-5
        ``inference="em"`` only: stop when the log posterior per nonzero entry changes by
        less than ``tol`` relative to its value in one iteration (0: run ``max_iter``).
    burn_in : int, default 250
        Iterations (counted over the whole chain) before samples are kept.
    thinning : int, default 5
        Keep every ``thinning``-th post-burn-in sample.
    max_samples : int, default 50
        Keep at most this many samples (the latest); prediction averages over them.
    n_chains : int, default 1
        Independent chains (``inference="batch"``) or restarts (``"em"``) fitted one
        after the other; prediction, ``score_*`` and ``proba_interval`` (Gibbs) average
        over the kept samples of all of them (``samples_*`` holds them, chain 0 first).
        Chain 0 is the chain of ``random_state``; chain c >= 1 is seeded from the fit's
        recorded seed and c (:func:`chain_seed`).  The point estimates (``embedding_``,
        ``relation_matrices_``, ...) are chain 0's: factors are not aligned between
        chains (label switching), probabilities are.  One chain does not cover the
        posterior (Gibbs) or lands on one of many modes (EM): on UMLS, averaging 8 EM
        restarts raised the test filtered MRR from 0.870 to 0.919
        (``benchmarks/bpbfm_chain_ensembles.py``).  No ``resume``, checkpoints or
        ``partial_fit`` with more than one chain.
    binary : bool or None, default None
        True: the tensor's nonzero entries are ones (Bernoulli-Poisson link); False:
        counts; None: binary when every nonzero value is 1.
    a, gamma0, c0, e0, f0, beta, h0, q0 : float
        The priors' names in the paper: ``U[:, k] ~ Dir(a)``, ``d_k ~ Ga(gamma0/K, rate
        c0)``, ``eps ~ Ga(e0, rate f0)``, ``Lambda ~ Ga(shape, rate beta)``, ``eta_mr ~
        Ga(h0, rate q0)`` (BPBFM-2).
    em_prior_rate : float, default 5.0
        ``inference="em"`` only: the rate b of the ``Gamma(1, b)`` prior of every entry of
        U and of every Lambda^r (the MAP estimate shrinks each by b per unit of
        exposure: ``x <- (x S + 1e-6) / (D + b)``, :mod:`topiclink.families.bpbfm.em`);
        ``benchmarks/bpbfm_em_probe.py``'s ``--b``, where b = 5 gave UMLS's 0.90
        AUC-PR at K = 20.  Larger: stronger shrinkage (smaller graphs).
    degree_corrected : bool, default False
        The degree-corrected model (not in the paper; ``inference="em"`` only), rate
        ``a_ri b_rj u_i^T Lambda^r v_j``: separate head and tail factors and a head and
        a tail degree per relation and entity.  U (``embedding_``) serves the heads and
        V (``tail_embedding_``) the tails, so that a relation's heads and tails can be
        entities of different kinds, and the degrees let a few entities hold most of a
        relation's links (:mod:`topiclink.families.bpbfm.em_degrees`).  Fitted by block
        ECM (the log posterior never decreases).  Twice the entity factors and 2 R N
        degrees; pays on large knowledge graphs: FB15k-237, K = 200, valid filtered MRR
        0.225 -> 0.268 (``docs/guide/knowledge-graphs.md``).
    degree_prior : float, default 0.5
        ``degree_corrected=True`` only: alpha of the ``Gamma(1 + alpha, rate alpha)``
        prior of every degree (mode 1; smaller lets the data move the degrees more).
    self_pairs : "bilinear" or "scaled", default "bilinear"
        How a self-pair (i, r, i) is modelled.  "bilinear" (the paper): like any pair,
        rate ``u_i^T Lambda^r u_i``.  "scaled" (not in the paper; batch inference only):
        rate ``rho_r u_i^T Lambda^r u_i`` with ``rho_r ~ Beta(1, 1)`` learned per relation
        (exact Gibbs by Poisson thinning; :mod:`topiclink.families.bpbfm.algorithm`), at O(N R K^2)
        more per sweep.  The bilinear rate of a self-pair is as high as that of two
        entities sharing a factor, so the paper's model predicts self-loops wherever a
        relation links entities of one factor; knowledge graphs rarely hold self-loops
        (UMLS and Nations hold none), and the self-pairs are 7 % of Nations' cells.  With
        K = 20 and 200 iterations (3 folds), "scaled" raised the paper protocol's held-out
        AUC-PR from 0.81 to 0.84 on UMLS and from 0.79 to 0.83 on Nations, and the kg
        protocol's filtered MRR from 0.75 to 0.83 and from 0.68 to 0.76, on every fold
        (``benchmarks/bpbfm_diagnosis.py``; ``docs/user-guide.md``, "What limits BPBFM's
        accuracy").  Not the default: it is not the paper's model, the N R self-pairs
        cost more than the ones on large sparse graphs, and online inference lacks it.
    evaluate_every : int, default 10
        Record the training log-likelihood per observed cell every this many iterations.
    batch_size : int, default 4096
        Online: entries per minibatch.
    step_a2, step_v : float, default 1, 0.51
        Online: the step sizes ``rho_t = (t + step_a2)^-step_v`` (the supplement's t0 and
        w; ``0.5 < step_v <= 1``).  The defaults were the best of the settings tried on
        UMLS (K = 10, fold 0 of the paper protocol, 60 sweeps; held-out AUC-ROC / AUC-PR):
        (4096, 0.51) 0.992 / 0.70, (8192, 0.51) 0.990 / 0.60, (8192, 0.7) 0.988 / 0.54,
        (1024, 0.7) 0.991 / 0.59, (256, 0.51) 0.990 / 0.61; batch Gibbs, 300 iterations,
        0.993 / 0.71.
    n_jobs : int or None, default 1
        Threads running the entry chunks; never changes the result.
    executor : None, int, distributed.Client or str, default None
        Where the entry chunks run; never changes the fit.  None: ``n_jobs`` threads
        here; an integer: that many threads; a Dask client, a scheduler address or
        ``"dask"`` (the current client; ``inference="online"`` only): the entry chunks of
        every minibatch draw their latent counts as tasks on the workers of a Dask cluster
        (the folding of the statistics and the global draws stay here;
        :class:`topiclink.execution.DaskExecutor`); bit for bit the fit in this process
        for any number of workers.  ``trace_`` adds ``"bytes_sent"`` and
        ``"bytes_received"`` per sweep.  Shared by ``clone``, dropped by pickling; a model
        file stores a thread count or an address, never a client (loaded: None).  BPBFM
        has one scheme per ``inference`` (no ``scheme``).
    random_state, verbose, callbacks : as every estimator

    Attributes
    ----------
    embedding_ : (N, K) posterior mean of U (columns are distributions over entities);
        EM: the MAP estimate of U, its columns rescaled to sum to 1
    relation_matrices_ : (R, K, K) posterior mean of Lambda^r; EM: the MAP estimate,
        rescaled by U's column sums (``s_k1 Lambda^r_k1k2 s_k2``: the same rates)
    dictionary_ : (M, K, K) posterior mean of G (BPBFM-2, else None)
    relation_weights_ : (M, R) posterior mean of eta (BPBFM-2, else None)
    self_scale_ : (R,) posterior mean of rho_r (``self_pairs="scaled"``, else None)
    tail_embedding_ : (N, K) the tail factors V, columns summing to 1
        (``degree_corrected=True``; else None: U serves both sides)
    head_degrees_, tail_degrees_ : (R, N) the degrees a and b (``degree_corrected=True``,
        else None)
    factor_weights_ : (K,) share of the expected count carried by each factor (rows and
        columns of the relation matrices)
    n_active_factors_ : factors with a share above 1%
    n_parameters_ : R K^2 + N K (BPBFM-1), M K^2 + M R + N K (BPBFM-2) or R K^2 + 2 N K
        + 2 R N (degree-corrected)
    samples_embedding_, samples_relation_matrices_ : the kept samples (EM: the estimate
        alone, one per restart); ``samples_self_scale_`` (S, R) with
        ``self_pairs="scaled"``, ``samples_tail_embedding_``, ``samples_head_degrees_``,
        ``samples_tail_degrees_`` with ``degree_corrected=True``, else None
    entity_names_, relation_names_ : ndarray of str
    trace_ : ``"log_likelihood"`` (training log-likelihood per observed cell; EM: the log
        posterior per observed nonzero entry, every iteration), ``"latent_count"``
        (Gibbs), ``"minorizer_step"`` (EM), ``"seconds"``
    state_ : BPBFMState, BPBFMOnlineState or BPBFMEMState (``fit(tensor, resume=True)``
        continues it)
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("tensor",)
    #: ``topiclink fit bpbfm`` (:mod:`topiclink.cli.estimator_commands`)
    cli_name: ClassVar[str] = "bpbfm"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {
        "n_dictionary": ("--dictionary", "-m"), "n_chains": ("--chains",)}
    cli_defaults: ClassVar[dict[str, Any]] = {"burn_in": _half_of_max_iter}
    cli_deprecated_flags: ClassVar[dict[str, str]] = {"--components": "n_topics"}
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {
        "BPBFM-1": {"n_dictionary": None}, "BPBFM-2": {"n_dictionary": 10},
        "BPBFM-1-online": {"n_dictionary": None, "inference": "online"},
        "BPBFM-2-online": {"n_dictionary": 10, "inference": "online"},
        "BPBFM-1-EM": {"n_dictionary": None, "inference": "em"},
        "BPBFM-DC-EM": {"n_dictionary": None, "inference": "em", "degree_corrected": True}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics"), "n_dictionary": [NoneValue(), Integer(1)],
        "inference": [Options("batch", "online", "em")],
        **shared("max_iter", "tol", "burn_in", "thinning", "max_samples"),
        "binary": [NoneValue(), Boolean()],
        "a": POSITIVE, "gamma0": POSITIVE, "c0": POSITIVE, "e0": POSITIVE, "f0": POSITIVE,
        "beta": POSITIVE, "h0": POSITIVE, "q0": POSITIVE, "em_prior_rate": POSITIVE,
        "degree_corrected": [Boolean()], "degree_prior": POSITIVE,
        **shared("evaluate_every", "batch_size", "step_a2", "step_v"),
        "self_pairs": [Options("bilinear", "scaled")], "n_chains": [Integer(1)],
        **shared("n_jobs", "executor", "random_state", "verbose", "callbacks"),
    }
    _param_codecs: ClassVar[dict[str, ParamCodec]] = {"executor": ExecutorCodec()}
    _old_parallel = {None: None, "dask": None}
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "embedding_", "relation_matrices_", "factor_weights_", "entity_names_",
        "relation_names_", "samples_embedding_", "samples_relation_matrices_")
    _saved_optional: ClassVar[tuple[str, ...]] = (
        "dictionary_", "relation_weights_", "self_scale_", "samples_self_scale_",
        *DEGREE_ARRAYS)
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "n_active_factors_",
                                                 "n_parameters_", "binary_")
    _scalar_specs: ClassVar[dict[str, str]] = {"binary_": "bool"}
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        "embedding_": ArraySpec(("N", "K"), "f", "colsimplex"),
        "relation_matrices_": ArraySpec(("R", "K", "K"), "f", "nonnegative"),
        "factor_weights_": ArraySpec(("K",), "f", "simplex"),
        "entity_names_": ArraySpec(("N",), "U", None),
        "relation_names_": ArraySpec(("R",), "U", None),
        "samples_embedding_": ArraySpec(("S", "N", "K"), "f", "colsimplex"),
        "samples_relation_matrices_": ArraySpec(("S", "R", "K", "K"), "f", "nonnegative"),
        "dictionary_": ArraySpec(("M", "K", "K"), "f", "nonnegative"),
        "relation_weights_": ArraySpec(("M", "R"), "f", "nonnegative"),
        "self_scale_": ArraySpec(("R",), "f", "probability"),
        "samples_self_scale_": ArraySpec(("S", "R"), "f", "probability"),
        "tail_embedding_": ArraySpec(("N", "K"), "f", "colsimplex"),
        "head_degrees_": ArraySpec(("R", "N"), "f", "nonnegative"),
        "tail_degrees_": ArraySpec(("R", "N"), "f", "nonnegative"),
        "samples_tail_embedding_": ArraySpec(("S", "N", "K"), "f", "colsimplex"),
        "samples_head_degrees_": ArraySpec(("S", "R", "N"), "f", "nonnegative"),
        "samples_tail_degrees_": ArraySpec(("S", "R", "N"), "f", "nonnegative"),
    }
    _state_class = BPBFMState
    #: the engine's kept samples (``BPBFMGibbs.retained``) as published
    _sample_attributes: ClassVar[dict[str, str]] = {
        "U": "samples_embedding_", "relation_matrices": "samples_relation_matrices_",
        "rho": "samples_self_scale_"}

    @classmethod
    def _param_sizes(cls, where: str, params: dict[str, Any],
                     arrays: dict[str, np.ndarray]) -> dict[str, int]:
        """K from ``n_topics``; BPBFM-2 (``n_dictionary`` M) needs ``dictionary_`` and
        ``relation_weights_`` with M rows, BPBFM-1 has neither."""
        sizes = {"K": int(params.get("n_topics", 10))}
        M = params.get("n_dictionary")
        present = [n for n in ("dictionary_", "relation_weights_") if n in arrays]
        if M is None and present:
            raise ValueError(f"{where}: array {present[0]!r} belongs to BPBFM-2, but "
                             "n_dictionary is None (BPBFM-1)")
        if M is not None:
            missing = [n for n in ("dictionary_", "relation_weights_") if n not in arrays]
            if missing:
                raise ValueError(f"{where}: required array {missing[0]!r} is missing "
                                 f"(n_dictionary = {M})")
            sizes["M"] = int(M)
        scaled = params.get("self_pairs", "bilinear") == "scaled"
        for name in ("self_scale_", "samples_self_scale_"):
            if (name in arrays) != scaled:
                raise ValueError(f"{where}: array {name!r} " + (
                    "is missing (self_pairs = 'scaled')" if scaled else
                    "belongs to self_pairs = 'scaled'"))
        corrected = bool(params.get("degree_corrected", False))
        for name in DEGREE_ARRAYS:
            if (name in arrays) != corrected:
                raise ValueError(f"{where}: array {name!r} " + (
                    "is missing (degree_corrected = True)" if corrected else
                    "belongs to degree_corrected = True"))
        return sizes

    @accepts_renamed                    # n_components (until 0.2.0)
    def __init__(self, n_topics: int = 10, *, n_dictionary: int | None = None,
                 inference: str = "batch", max_iter: int = 500, tol: float = 1e-5,
                 burn_in: int = 250,
                 thinning: int = 5, max_samples: int = 50, binary: bool | None = None,
                 a: float = 0.1, gamma0: float = 1.0, c0: float = 1.0, e0: float = 1.0,
                 f0: float = 1.0, beta: float = 1.0, h0: float = 1.0, q0: float = 1.0,
                 em_prior_rate: float = 5.0, degree_corrected: bool = False,
                 degree_prior: float = 0.5, evaluate_every: int = 10,
                 batch_size: int = 4096, step_a2: float = 1.0, step_v: float = 0.51,
                 self_pairs: str = "bilinear", n_chains: int = 1,
                 n_jobs: int | None = 1, executor: Any = None,
                 random_state: RandomState = None,
                 verbose: bool = False, callbacks: list[Any] | None = None) -> None:
        self.n_topics = n_topics
        self.n_dictionary = n_dictionary
        self.inference = inference
        self.max_iter = max_iter
        self.tol = tol
        self.burn_in = burn_in
        self.thinning = thinning
        self.max_samples = max_samples
        self.binary = binary
        self.a = a
        self.gamma0 = gamma0
        self.c0 = c0
        self.e0 = e0
        self.f0 = f0
        self.beta = beta
        self.h0 = h0
        self.q0 = q0
        self.em_prior_rate = em_prior_rate
        self.degree_corrected = degree_corrected
        self.degree_prior = degree_prior
        self.evaluate_every = evaluate_every
        self.batch_size = batch_size
        self.step_a2 = step_a2
        self.step_v = step_v
        self.self_pairs = self_pairs
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.executor = executor
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks

    @property
    def n_components(self) -> int:
        """Deprecated (until 0.2.0): ``n_topics``."""
        warn_renamed(type(self).__name__, "n_components", stacklevel=3)
        return self.n_topics

    @n_components.setter
    def n_components(self, value: int) -> None:
        warn_renamed(type(self).__name__, "n_components", stacklevel=3)
        self.n_topics = value

    # ------------------------------------------------------------------ fitting
    @property
    def _online(self) -> bool:
        return self.inference == "online"

    @property
    def _em(self) -> bool:
        return self.inference == "em"

    def _check_params(self) -> None:
        if self.degree_corrected and not self._em:
            raise ValueError(f"degree_corrected=True needs inference='em', not "
                             f"{self.inference!r}")
        if self._em:
            for bad, why in ((self.n_dictionary is not None, "n_dictionary=None (BPBFM-1)"),
                             (self._execution_plan().dask,
                              "executor=None or a thread count"),
                             (self.self_pairs != "bilinear", "self_pairs='bilinear'")):
                if bad:
                    raise ValueError(f"inference='em' needs {why}")
        if self._execution_plan().dask and not self._online:
            raise ValueError("executor: a Dask executor needs inference='online'")
        if self.self_pairs == "scaled" and self._online:
            raise ValueError("self_pairs='scaled' needs inference='batch'")
        if int(self.n_chains) > 1 and self._online:
            raise ValueError("n_chains > 1 needs inference='batch' or 'em' (an online fit "
                             "is one stream)")

    def _algorithm(self) -> BPBFMGibbs:
        if self._em and self.degree_corrected:
            return DegreeCorrectedEM(int(self.n_topics), float(self.em_prior_rate),  # type: ignore[return-value]
                                     float(self.degree_prior))
        if self._em:
            return BPBFMEM(int(self.n_topics), float(self.em_prior_rate))  # type: ignore[return-value]
        plan = self._execution_plan()
        priors = dict(a=self.a, gamma0=self.gamma0, c0=self.c0, e0=self.e0, f0=self.f0,
                      beta=self.beta, h0=self.h0, q0=self.q0,
                      n_threads=plan.n_threads)
        if self._online:
            online = dict(batch_size=int(self.batch_size),
                          schedule=RobbinsMonro.from_params(self.get_params(deep=False)))
            if plan.dask:                           # the minibatch chunks as Dask tasks
                online["executor"] = DaskExecutor(plan.client)
            return BPBFMOnline(int(self.n_topics), self.n_dictionary, **online,
                               **priors)
        return BPBFMGibbs(int(self.n_topics), self.n_dictionary,
                          self_pairs=self.self_pairs, **priors)

    def _state_class_for(self) -> type[State]:
        if self._em:
            return DegreeEMState if self.degree_corrected else BPBFMEMState
        return BPBFMOnlineState if self._online else BPBFMState

    def _tensor_memory(self, tensor: RelationalTensor) -> int:
        """Bytes of the sampler's arrays: U and its counts (N x K, per thread), the K x K
        matrices (R or M, with their counts), the kept samples, the entries."""
        N, R, K = tensor.n_entities, tensor.n_relations, int(self.n_topics)
        M = R if self.n_dictionary is None else int(self.n_dictionary)
        n_self = N * R if self.self_pairs == "scaled" else 0
        kept = max(1, (int(self.max_iter) - int(self.burn_in)) // int(self.thinning) + 1)
        S = min(int(self.max_samples), kept) * int(self.n_chains) + 2
        T = self._execution_plan().n_threads + 3
        # degree-corrected: V, the degrees (the state, the estimate, their statistics
        # and exposures) and, per kept estimate, V and the degrees again
        degrees = (N * K * (3 + S) + 2 * R * N * (4 + S) + 2 * R * K * K
                   if self.degree_corrected else 0)
        return 8 * (N * K * (T + S) + M * K * K * (T + 1) + R * K * K * S
                    + 2 * M * R + 6 * (tensor.n_entries + len(tensor.missing))
                    + 3 * n_self + R * S + degrees)

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

    def fit(self, tensor: RelationalTensor, *, resume: bool = False) -> BilinearPoissonFactorModel:
        """Fit to a :class:`~topiclink.data.tensor.RelationalTensor` (its ``missing``
        entries are held out: imputed every sweep by Gibbs, left out of the likelihood
        by EM).  ``resume=True`` continues the
        chain for ``max_iter`` more iterations on the same tensor.  With ``n_chains``
        above 1 the other chains follow chain 0 and their samples are pooled."""
        self._validate_params()
        n_chains = int(self.n_chains)
        if n_chains > 1:
            if resume:
                raise ValueError(f"resume=True continues one chain; this model pools "
                                 f"{n_chains} (n_chains): fit again with a larger max_iter")
            if getattr(self, "_checkpoint_request", None) is not None:
                raise ValueError(f"checkpoints keep one chain; n_chains={n_chains}: fit "
                                 "the chains separately to checkpoint them")
        self._fit_chain(tensor, resume)
        if n_chains > 1:
            self._pool_chains(tensor, n_chains)
        return self

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
        self.samples_embedding_ = np.concatenate([m.samples_embedding_ for m in chains])
        self.samples_relation_matrices_ = np.concatenate(
            [m.samples_relation_matrices_ for m in chains])
        for name in ("samples_tail_embedding_", "samples_head_degrees_",
                     "samples_tail_degrees_"):
            if getattr(self, name, None) is not None:
                setattr(self, name, np.concatenate([getattr(m, name) for m in chains]))
        if getattr(self, "samples_self_scale_", None) is not None:
            self.samples_self_scale_ = np.concatenate(
                [m.samples_self_scale_ for m in chains])
        self._samples_published_ = False   # no longer chain 0's run's samples alone

    def _fit_chain(self, tensor: RelationalTensor, resume: bool) -> None:
        """One chain (or EM fit) on ``tensor``: the body of :meth:`fit`."""
        tensor, binary = self._check_tensor(tensor)
        tensor.check_relations_nonempty("fit")
        algorithm = self._algorithm()
        data = BPBFMData.from_tensor(tensor, binary, self.self_pairs == "scaled")
        logger.info("%s: %d entities, %d relations, %d nonzero, %d held out, K=%d",
                    algorithm.name, data.n_entities, data.n_relations, data.n_observed,
                    data.n_missing, algorithm.K)
        names_e = (tensor.entity_names if tensor.entity_names is not None
                   else np.arange(data.n_entities).astype(str))
        names_r = (tensor.relation_names if tensor.relation_names is not None
                   else np.arange(data.n_relations).astype(str))

        def publish(state: BPBFMState, averaged: dict[str, np.ndarray] | None) -> None:
            # the samples the engine has kept so far in this chain (the live progress)
            self._publish(state, algorithm, averaged, names_e, names_r, binary,
                          self._progress_.samples)

        if self._em:
            tolerance = RelativeTolerance(float(self.tol), algorithm.name)
            previous = getattr(self, "state_", None)
            if resume and isinstance(previous, self._state_class_for()) and \
                    previous.data_fingerprint == algorithm.fingerprint(data):
                tolerance.last = algorithm.objective(previous, data)
            self._run_engine(algorithm, data, resume=resume, publish=publish,
                             evaluate_every=1, extra_callbacks=[tolerance])
            return
        n_average = max(0, min(int(self.max_iter), int(self.max_iter) + (
            int(getattr(self, "n_iter_", 0)) if resume else 0) - int(self.burn_in)))
        self._run_engine(algorithm, data, resume=resume, publish=publish,
                         n_average=n_average, evaluate_every=int(self.evaluate_every),
                         carry_average=True, keep=self._averaging())

    def _averaging(self) -> Averaging:
        """The kept samples' schedule: ``burn_in``, ``thinning``, ``max_samples``."""
        return Averaging.from_params(self.get_params(deep=False))

    def partial_fit(self, tensor: RelationalTensor) -> BilinearPoissonFactorModel:
        """Fold a chunk of new triples (a stream) into the fit (``inference="online"``).

        The chunk's entities and relations are matched to the fitted ones by name; new
        names add entities (a prior draw of their factor weights) and relations.  A chunk
        without names (``entity_names`` / ``relation_names`` None) is matched by index:
        its entity i is the fitted entity i (whatever its name).  Such a chunk can add
        entities only when the fit's own names are the default ``"0", "1", ...`` (an
        unnamed stream): index i >= N then becomes the new entity ``str(i)``; against a
        named fit an index beyond the fitted entities is a one-line DataError (name the
        chunk's entities to add some). Relations likewise. Triples seen in an earlier chunk
        of the stream are dropped (their count is logged; the triples seen are kept in the
        sampler state, so a model saved with ``save(path, full=True)`` and loaded
        continues its stream exactly). The chunk's entries, shuffled,
        are folded in by minibatches of ``batch_size`` with the continuing step sizes;
        ``|I|`` (the scale of the statistics) counts every entry seen so far. The estimates
        published after each call are those of the current state (no averaging over
        samples).
        """
        if not self._online:
            raise ValueError(f"partial_fit needs inference='online', not {self.inference!r}")
        self._validate_params()
        tensor, binary = self._check_tensor(tensor)
        state = getattr(self, "state_", None)
        if hasattr(self, "n_iter_") and not isinstance(state, BPBFMOnlineState):
            raise ValueError("partial_fit continues an online fit: this model has no online "
                             "sampler state (fit with inference='online', or load a model "
                             "saved with save(path, full=True))")
        if hasattr(self, "binary_") and bool(self.binary_) != binary:
            raise DataError(f"partial_fit: this chunk is {'binary' if binary else 'counts'}, "
                            f"the fit is {'binary' if self.binary_ else 'counts'}")
        names_e, names_r, chunk, seen = self._stream_chunk(tensor, state)
        algorithm = self._algorithm()
        data = BPBFMData.from_tensor(chunk, binary)
        if data.n_entries == 0:
            logger.info("partial_fit: no new triple in this chunk")
            return self

        def publish(state: BPBFMOnlineState, data: BPBFMData) -> None:
            self._publish(state, algorithm, None, names_e, names_r, binary, [])

        self._run_partial(algorithm, BPBFMChunk(data, seen, int(chunk.n_entities)), publish)
        return self

    def _stream_chunk(self, tensor: RelationalTensor, state: BPBFMOnlineState | None
                      ) -> tuple[np.ndarray, np.ndarray, RelationalTensor, np.ndarray]:
        """(entity names, relation names, the chunk in the fit's numbering, the keys of
        every triple seen with it) with names the fit has not seen appended, and triples
        seen before (kept in the state) dropped."""
        old_e = np.asarray(getattr(self, "entity_names_", np.zeros(0, str)), dtype=str)
        old_r = np.asarray(getattr(self, "relation_names_", np.zeros(0, str)), dtype=str)
        new_e = _chunk_names(tensor.entity_names, tensor.n_entities, old_e, "entities")
        new_r = _chunk_names(tensor.relation_names, tensor.n_relations, old_r, "relations")

        def merge(old: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            index = {n: i for i, n in enumerate(old.tolist())}
            for n in new.tolist():
                index.setdefault(n, len(index))
            mapping = np.array([index[n] for n in new.tolist()], dtype=np.int64)
            return np.array(list(index), dtype=str), mapping

        all_e, map_e = merge(old_e, new_e)
        all_r, map_r = merge(old_r, new_r)
        N, R = all_e.size, all_r.size
        h = map_e[tensor.heads]
        r = map_r[tensor.relations]
        t = map_e[tensor.tails]
        v = np.asarray(tensor.values, dtype=np.float64)
        key = (r * N + h) * N + t
        seen = (state.seen_keys(N) if state is not None
                else np.zeros(0, np.int64))   # renumbered for the grown N
        repeat = np.isin(key, seen)
        if repeat.any():
            logger.info("partial_fit: dropped %d triples seen in an earlier chunk",
                        int(repeat.sum()))
        keep = ~repeat & (v > 0)
        miss = np.asarray(tensor.missing, dtype=np.int64).reshape(-1, 3)
        chunk = RelationalTensor(h[keep], r[keep], t[keep], v[keep], N, R, all_e, all_r,
                                 missing=np.column_stack([map_e[miss[:, 0]],
                                                          map_r[miss[:, 1]],
                                                          map_e[miss[:, 2]]]))
        return all_e, all_r, chunk, np.union1d(seen, key[keep])

    def _publish(self, state: BPBFMState, algorithm: BPBFMGibbs,
                 averaged: dict[str, np.ndarray] | None, names_e: np.ndarray,
                 names_r: np.ndarray, binary: bool,
                 kept: list[dict[str, np.ndarray]]) -> None:
        """Set the fitted attributes: the averaged estimates, and ``samples_*`` from the
        samples ``kept`` so far (:meth:`BPBFMGibbs.retained` copied by the engine; none
        yet, or no samples at all (``partial_fit``): the current state alone; EM: the
        estimate alone)."""
        if averaged is None:
            averaged = algorithm.averaged(state, None)
        self.embedding_ = np.asarray(averaged["U"], dtype=np.float64)
        self.relation_matrices_ = np.asarray(averaged["relation_matrices"],
                                             dtype=np.float64)
        self.dictionary_ = averaged.get("G")
        self.relation_weights_ = averaged.get("eta")
        em = isinstance(state, (BPBFMEMState, DegreeEMState))
        samples = [] if em else kept or [algorithm.retained(state)]
        # samples_* are exactly the run's kept samples: save(full=True) stores them once
        self._samples_published_ = bool(kept) and not em

        def stacked(key: str, published: np.ndarray) -> np.ndarray:
            # EM: a point estimate, its one "sample" a view of the published array
            return published[None] if em else np.stack([s[key] for s in samples])

        self.samples_embedding_ = stacked("U", self.embedding_)
        self.samples_relation_matrices_ = stacked("relation_matrices",
                                                  self.relation_matrices_)
        scaled = getattr(algorithm, "scaled", False)
        self.self_scale_ = (np.asarray(averaged["rho"], dtype=np.float64) if scaled
                            else None)
        self.samples_self_scale_ = (stacked("rho", self.self_scale_) if scaled else None)
        for name, key in (("tail_embedding_", "V"), ("head_degrees_", "head_degrees"),
                          ("tail_degrees_", "tail_degrees")):
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

    def _derived(self) -> None:
        L = self.relation_matrices_
        strength = L.sum(axis=(0, 2)) + L.sum(axis=(0, 1))
        total = float(strength.sum())
        self.factor_weights_ = strength / total if total > 0 else np.full(
            strength.size, 1.0 / strength.size)
        self.n_active_factors_ = int(np.sum(self.factor_weights_ > 0.01))
        N, K = self.embedding_.shape
        R = L.shape[0]
        if getattr(self, "tail_embedding_", None) is not None:
            self.n_parameters_ = int(R * K * K + 2 * N * K + 2 * R * N)
        elif self.n_dictionary is None:
            self.n_parameters_ = int(R * K * K + N * K)
        else:
            M = int(self.n_dictionary)
            self.n_parameters_ = int(M * K * K + M * R + N * K)

    def _after_load(self) -> None:
        if not hasattr(self, "dictionary_"):
            self.dictionary_ = None
        if not hasattr(self, "relation_weights_"):
            self.relation_weights_ = None
        for name in ("self_scale_", "samples_self_scale_", *DEGREE_ARRAYS):
            if not hasattr(self, name):
                setattr(self, name, None)
        self._samples_of_an_older_file()

    def _samples_of_an_older_file(self) -> None:
        """A Gibbs run saved (``save(full=True)``, a checkpoint) before the engine kept
        the samples with its progress: its kept samples are the published ``samples_*``
        (the schedule says some were kept, the progress has none); they go back into the
        progress, so that resuming continues them as the run would have."""
        progress = getattr(self, "_progress_", None)
        if (progress is None or progress.samples or self.inference != "batch"
                or self._averaging().n_kept(int(getattr(self, "n_iter_", 0))) == 0):
            return
        scaled = getattr(self, "samples_self_scale_", None) is not None
        progress.samples = [
            {"U": u.copy(), "relation_matrices": lam.copy(),
             **({"rho": self.samples_self_scale_[s].copy()} if scaled else {})}
            for s, (u, lam) in enumerate(zip(self.samples_embedding_,
                                             self.samples_relation_matrices_, strict=True))]
        self._samples_published_ = True

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

    def proba_interval(self, heads: Any, relations: Any, tails: Any, level: float = 0.9
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Posterior mean and equal-tailed credible interval of each triple's probability
        ``1 - exp(-u_h^T Lambda^r u_t)`` over the kept samples (what an embedding model
        has no way to give).

        Parameters
        ----------
        heads, relations, tails : array_like, same length
            Entity and relation names or indices (as :meth:`predict_proba`).
        level : float in (0, 1)
            Posterior mass inside the interval (0.9: the 5 % and 95 % quantiles).

        Returns
        -------
        mean, lower, upper : ndarray of float64
            ``mean`` is :meth:`predict_proba`'s value; with one kept sample the interval
            is the point (keep more: ``thinning``, ``burn_in``).

        Raises
        ------
        ValueError
            With ``inference="em"``: a MAP point estimate has no posterior to take an
            interval from (a zero-width interval would claim certainty it does not have).
        """
        if self.inference == "em":
            raise ValueError("proba_interval: inference='em' fits a point estimate (no "
                             "posterior samples); use predict_proba, or Gibbs inference")
        level = float(level)
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level}")
        h, r, t = self._triple_indices(heads, relations, tails)
        draws = np.stack(list(self._sample_probas(h, r, t)))
        tail = (1.0 - level) / 2
        lower, upper = np.quantile(draws, [tail, 1.0 - tail], axis=0)
        return draws.mean(axis=0), lower, upper

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
        name = "BPBFM-1" if self.n_dictionary is None else f"BPBFM-2 (M={self.n_dictionary})"
        if getattr(self, "tail_embedding_", None) is not None:
            name = "degree-corrected BPBFM (MAP-EM; factors below: heads)"
        elif self.inference == "em":
            name += " (MAP-EM)"
        lines = [f"{name}: {U.shape[0]} entities, {L.shape[0]} relations, K={K}, "
                 f"{self.n_active_factors_} active factors, {self.n_parameters_} parameters"]
        for k in np.argsort(-self.factor_weights_):
            top = np.argsort(-U[:, k])[:n_entities]
            lines.append(f"factor {k} ({100 * self.factor_weights_[k]:.1f}%): " + ", ".join(
                f"{self.entity_names_[i]} ({U[i, k]:.2f})" for i in top))
        for r in range(L.shape[0]):
            flat = np.argsort(-L[r].ravel())[:n_pairs]
            lines.append(f"relation {self.relation_names_[r]}: " + ", ".join(
                f"{c // K}->{c % K} ({L[r].flat[c]:.3g})" for c in flat))
        return "\n".join(lines)
