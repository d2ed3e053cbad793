"""Bilinear Poisson factor models for knowledge graphs (BPBFM-1, BPBFM-2) by Gibbs
sampling: the estimator.

Hu, Rai & Carin (AISTATS 2016); ``docs/design/bpbfm.md``.  The algorithms (state, step,
objective) are :mod:`topiclink.families.bpbfm.algorithm` (batch) and
:mod:`topiclink.families.bpbfm.online` (online); this module validates, builds the data,
runs the engine (which keeps the thinned post-burn-in samples, ``BPBFMGibbs.retained``)
and publishes the estimates and the kept samples for prediction.  The priors are one
config, :class:`~topiclink.families.bpbfm.priors.BPBFMPriors`.  The MAP-EM fits are
:mod:`topiclink.families.bpbfm.estimator_em`; what the three share,
:mod:`topiclink.families.bpbfm.estimator_base`.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import numpy as np

from topiclink.data.checks import Boolean, DataError, InstanceOf, Integer, NoneValue, Options
from topiclink.data.tensor import RelationalTensor
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.param_codecs import ParamCodec
from topiclink.estimators.schema import ArraySpec
from topiclink.execution import ExecutorCodec, SharedClientMixin
from topiclink.families.bpbfm.algorithm import BPBFMData, BPBFMGibbs, BPBFMState
from topiclink.families.bpbfm.estimator_base import Checkpoint, Every, PoissonFactorBase
from topiclink.families.bpbfm.online import BPBFMChunk, BPBFMOnline, BPBFMOnlineState
from topiclink.families.bpbfm.priors import BPBFMPriors, PriorsCodec
from topiclink.inference.engine import State
from topiclink.parameters import Averaging, RobbinsMonro, shared
from topiclink.random import RandomState

__all__ = ["BilinearPoissonFactorModel"]

logger = logging.getLogger(__name__)

#: the priors of a model given ``priors=None``
DEFAULT_PRIORS = BPBFMPriors()


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


class BilinearPoissonFactorModel(SharedClientMixin, PoissonFactorBase):
    """BPBFM-1 / BPBFM-2 fitted by batch or online Gibbs sampling.

    Parameters
    ----------
    n_topics : int, default 10
        K (>= 2), the number of latent factors (the shrinkage prior switches off those not
        needed).
    n_dictionary : int or None, default None
        None: BPBFM-1 (a K x K matrix per relation); M: BPBFM-2 (M shared K x K matrices,
        ``Lambda^r = sum_m eta_mr G^m``).
    inference : "batch" or "online", default "batch"
        Batch Gibbs sampling, or online Gibbs by Bayesian conditional density filtering
        (supplement section 2): minibatches of ``batch_size`` entries update decaying
        statistics with step ``rho_t = (t + step_a2)^-step_v`` and redraw the parameters
        they touch, at a cost per step independent of the numbers of entities and
        relations (:mod:`topiclink.families.bpbfm.online`); ``partial_fit`` feeds a
        stream of new triples.  Both publish the same attributes.  A MAP point
        estimate of BPBFM-1 is
        :class:`~topiclink.families.bpbfm.estimator_em.BilinearPoissonFactorModelEM`.
    max_iter : int, default 500
        Gibbs iterations per call of ``fit`` (``resume=True`` adds more); online: sweeps,
        each visiting every entry once in minibatches.
    burn_in : int, default 250
        Iterations (counted over the whole chain) before samples are kept.
    thinning : int, default 5
        Keep every ``thinning``-th post-burn-in sample.
    max_samples : int, default 50
        Keep at most this many samples (the latest); prediction averages over them.
    n_chains : int, default 1
        Independent chains (``inference="batch"`` only) fitted one after the other;
        prediction, ``score_*`` and ``proba_interval`` average over the kept samples of
        all of them (``samples_*`` holds them, chain 0 first).  Chain 0 is the chain of
        ``random_state``; chain c >= 1 is seeded from the fit's recorded seed and c
        (:func:`~topiclink.families.bpbfm.estimator_base.chain_seed`).  The point
        estimates (``embedding_``, ``relation_matrices_``, ...) are chain 0's: factors
        are not aligned between chains (label switching), probabilities are.  One chain
        does not cover the posterior.  No ``resume``, checkpoints or ``partial_fit``
        with more than one chain.
    binary : bool or None, default None
        True: the tensor's nonzero entries are ones (Bernoulli-Poisson link); False:
        counts; None: binary when every nonzero value is 1.
    priors : BPBFMPriors or None, default None
        The priors' hyper-parameters by their names in the paper (``U[:, k] ~ Dir(a)``,
        ``d_k ~ Ga(gamma0/K, rate c0)``, ``eps ~ Ga(e0, rate f0)``, ``Lambda ~ Ga(shape,
        rate beta)``, ``eta_mr ~ Ga(h0, rate q0)``):
        :class:`~topiclink.families.bpbfm.priors.BPBFMPriors`; None: its defaults
        (``a = 0.1``, every other 1).  ``topiclink fit bpbfm`` sets its fields with
        ``--a``, ``--gamma0``, ...
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
        (``benchmarks/bpbfm_diagnosis.py``; ``docs/results-knowledge-graphs.md``).  Not
        the default: it is not the paper's model, the N R self-pairs cost more than the
        ones on large sparse graphs, and online inference lacks it.
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
    embedding_ : (N, K) posterior mean of U (columns are distributions over entities)
    relation_matrices_ : (R, K, K) posterior mean of Lambda^r
    dictionary_ : (M, K, K) posterior mean of G (BPBFM-2, else None)
    relation_weights_ : (M, R) posterior mean of eta (BPBFM-2, else None)
    self_scale_ : (R,) posterior mean of rho_r (``self_pairs="scaled"``, else None)
    factor_weights_ : (K,) share of the expected count carried by each factor (rows and
        columns of the relation matrices)
    n_active_factors_ : factors with a share above 1%
    n_parameters_ : R K^2 + N K (BPBFM-1) or M K^2 + M R + N K (BPBFM-2)
    samples_embedding_, samples_relation_matrices_ : the kept samples;
        ``samples_self_scale_`` (S, R) with ``self_pairs="scaled"``, else None
    entity_names_, relation_names_ : ndarray of str
    trace_ : ``"log_likelihood"`` (training log-likelihood per observed cell),
        ``"latent_count"``, ``"seconds"``
    state_ : BPBFMState or BPBFMOnlineState (``fit(tensor, resume=True)`` continues it)
    """

    #: ``topiclink fit bpbfm`` (:mod:`topiclink.cli.estimator_commands`)
    cli_name: ClassVar[str] = "bpbfm"
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {
        "n_dictionary": ("--dictionary",), "n_chains": ("--chains",)}
    cli_defaults: ClassVar[dict[str, Any]] = {"burn_in": _half_of_max_iter}
    #: config parameters whose fields are options of ``fit bpbfm`` (``--gamma0 2``)
    cli_configs: ClassVar[dict[str, type]] = {"priors": BPBFMPriors}
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {
        "BPBFM-1": {"n_dictionary": None}, "BPBFM-2": {"n_dictionary": 10},
        "BPBFM-1-scaled": {"n_dictionary": None, "self_pairs": "scaled"},
        "BPBFM-1-online": {"n_dictionary": None, "inference": "online"},
        "BPBFM-2-online": {"n_dictionary": 10, "inference": "online"}}
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics"), "n_dictionary": [NoneValue(), Integer(1)],
        "inference": [Options("batch", "online")],
        **shared("max_iter", "burn_in", "thinning", "max_samples"),
        "binary": [NoneValue(), Boolean()],
        "priors": [NoneValue(), InstanceOf(BPBFMPriors, name="a BPBFMPriors")],
        **shared("evaluate_every", "batch_size", "step_a2", "step_v"),
        "self_pairs": [Options("bilinear", "scaled")], "n_chains": [Integer(1)],
        **shared("n_jobs", "executor", "random_state", "verbose", "callbacks"),
    }
    _param_codecs: ClassVar[dict[str, ParamCodec]] = {"executor": ExecutorCodec(),
                                                      "priors": PriorsCodec()}
    _saved_optional: ClassVar[tuple[str, ...]] = (
        "dictionary_", "relation_weights_", "self_scale_", "samples_self_scale_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **PoissonFactorBase._array_specs,
        "dictionary_": ArraySpec(("M", "K", "K"), "f", "nonnegative"),
        "relation_weights_": ArraySpec(("M", "R"), "f", "nonnegative"),
        "self_scale_": ArraySpec(("R",), "f", "probability"),
        "samples_self_scale_": ArraySpec(("S", "R"), "f", "probability"),
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
        return sizes

    def __init__(self, n_topics: int = 10, *, n_dictionary: int | None = None,
                 inference: str = "batch", max_iter: int = 500, burn_in: int = 250,
                 thinning: int = 5, max_samples: int = 50, binary: bool | None = None,
                 priors: BPBFMPriors | None = None, self_pairs: str = "bilinear",
                 evaluate_every: int = 10, batch_size: int = 4096, step_a2: float = 1.0,
                 step_v: float = 0.51, n_chains: int = 1, n_jobs: int | None = 1,
                 executor: Any = None, random_state: RandomState = None,
                 verbose: bool = False, callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    # ------------------------------------------------------------------ fitting
    @property
    def _online(self) -> bool:
        return self.inference == "online"

    def _check_params(self) -> None:
        if self._execution_plan().dask and not self._online:
            raise ValueError("executor: a Dask executor needs inference='online'")
        if self.self_pairs == "scaled" and self._online:
            raise ValueError("self_pairs='scaled' needs inference='batch'")
        if int(self.n_chains) > 1 and self._online:
            raise ValueError("n_chains > 1 needs inference='batch' (an online fit is one "
                             "stream)")

    def _self_pairs_scaled(self) -> bool:
        return self.self_pairs == "scaled"

    def _algorithm(self) -> BPBFMGibbs:
        plan = self._execution_plan()
        priors = (DEFAULT_PRIORS if self.priors is None else self.priors).as_kwargs()
        if self._online:
            online = dict(batch_size=int(self.batch_size),
                          schedule=RobbinsMonro.from_params(self.get_params(deep=False)))
            if plan.dask:                           # the minibatch chunks as Dask tasks
                online["executor"] = plan.executor
            return BPBFMOnline(int(self.n_topics), self.n_dictionary, **online,
                               **priors, n_threads=plan.n_threads)
        return BPBFMGibbs(int(self.n_topics), self.n_dictionary,
                          self_pairs=self.self_pairs, **priors, n_threads=plan.n_threads)

    def _state_class_for(self) -> type[State]:
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
        return 8 * (N * K * (T + S) + M * K * K * (T + 1) + R * K * K * S
                    + 2 * M * R + 6 * (tensor.n_entries + len(tensor.missing))
                    + 3 * n_self + R * S)

    def fit(self, tensor: RelationalTensor, *, resume: bool = False,
            checkpoint: Checkpoint = None, checkpoint_every: Every = DEFAULT_EVERY
            ) -> BilinearPoissonFactorModel:
        """Fit to a :class:`~topiclink.data.tensor.RelationalTensor` (its ``missing``
        entries are held out: imputed every sweep).  ``resume=True`` continues the chain
        for ``max_iter`` more iterations on the same tensor.  With ``n_chains`` above 1
        the other chains follow chain 0 and their samples are pooled.
        ``checkpoint=PATH`` writes the chain to ``PATH`` every ``checkpoint_every``
        (iterations, a duration such as ``"10min"`` or, online, ``"N minibatches"``) and
        continues from it (:mod:`topiclink.estimators.checkpoint`; one chain only)."""
        self._fit(tensor, resume, checkpoint, checkpoint_every)
        return self

    def _run_algorithm(self, algorithm: Any, data: BPBFMData, resume: bool,
                       publish: Any, checkpoint: Checkpoint, checkpoint_every: Every
                       ) -> None:
        n_average = max(0, min(int(self.max_iter), int(self.max_iter) + (
            int(getattr(self, "n_iter_", 0)) if resume else 0) - int(self.burn_in)))
        self._run_engine(algorithm, data, resume=resume, checkpoint=checkpoint,
                         checkpoint_every=checkpoint_every, publish=publish,
                         n_average=n_average, evaluate_every=int(self.evaluate_every),
                         carry_average=True, keep=self._averaging())

    def _averaging(self) -> Averaging:
        """The kept samples' schedule: ``burn_in``, ``thinning``, ``max_samples``."""
        return Averaging.from_params(self.get_params(deep=False))

    def partial_fit(self, tensor: RelationalTensor, *, checkpoint: Checkpoint = None,
                    checkpoint_every: Every = DEFAULT_EVERY) -> BilinearPoissonFactorModel:
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
        samples).  ``checkpoint=PATH`` keeps the stream on disk
        (:mod:`topiclink.estimators.stream_checkpoint`; an int ``checkpoint_every`` counts
        minibatches).
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

        self._run_partial(algorithm, BPBFMChunk(data, seen, int(chunk.n_entities)), publish,
                          checkpoint=checkpoint, checkpoint_every=checkpoint_every)
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

    def _publish_unsampled(self, averaged: dict[str, np.ndarray]) -> None:
        self.dictionary_ = averaged.get("G")
        self.relation_weights_ = averaged.get("eta")

    def _published_extras(self) -> dict[str, str]:
        return {"self_scale_": "rho"}

    def _count_parameters(self, N: int, K: int, R: int) -> int:
        if self.n_dictionary is None:
            return R * K * K + N * K
        M = int(self.n_dictionary)
        return M * K * K + M * R + N * K

    def _summary_title(self) -> str:
        return ("BPBFM-1" if self.n_dictionary is None
                else f"BPBFM-2 (M={self.n_dictionary})")

    def _after_load(self) -> None:
        super()._after_load()
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
            ``level`` outside (0, 1).  (The MAP-EM estimators have no such method: a point
            estimate has no posterior to take an interval from.)
        """
        level = float(level)
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level}")
        h, r, t = self._triple_indices(heads, relations, tails)
        draws = np.stack(list(self._sample_probas(h, r, t)))
        tail = (1.0 - level) / 2
        lower, upper = np.quantile(draws, [tail, 1.0 - tail], axis=0)
        return draws.mean(axis=0), lower, upper

