"""The estimator base: declared parameter constraints, seeding, the fitted marker,
automatic registration, persistence hooks, resuming, and :func:`load`.

Every concrete subclass of :class:`Estimator` is registered under its class name when
its module is imported (no decorator, no hand-kept list); :func:`registered_estimators`
also imports every family's estimator modules (:func:`topiclink.registry.discover`), so a
new family module is found without being listed anywhere.  What a model *can do* comes
from the capability mixins in :mod:`topiclink.estimators.capabilities`; what its ``fit``
needs is declared in ``fit_requires``; the paper names it answers to in ``paper_names``.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from topiclink.data.analyzer import TextAnalyzer
from topiclink.data.checks import Constraint, DataError, available_memory, validate_params
from topiclink.data.corpus import Corpus, as_corpus
from topiclink.estimators import stream_checkpoint
from topiclink.estimators.checkpoint import (
    DEFAULT_EVERY,
    CheckpointRequest,
    check_progress_samples,
    check_progress_sums,
    checkpoint_lock,
    checkpoint_request,
    progress_from_saved,
    progress_to_saved,
    save_checkpoint,
)
from topiclink.estimators.param_codecs import ParamCodec
from topiclink.estimators.schema import ArraySpec, check_arrays
from topiclink.execution.dask import SchedulerLostError, WorkerLostError
from topiclink.execution.plan import Plan, execution_plan
from topiclink.inference.engine import (
    Algorithm,
    Checkpointing,
    RunProgress,
    RunResult,
    State,
    check_state,
    run,
    run_partial,
    state_from_saved,
    state_key,
    state_to_saved,
)
from topiclink.inference.online import OnlineAlgorithm
from topiclink.parameters import Averaging
from topiclink.persistence import read_header, read_model, save_model, to_jsonable
from topiclink.random import as_generator, resolve_seed

__all__ = ["Estimator", "registered_estimators", "library_estimators", "paper_models",
           "make_paper_model", "load", "FIT_INPUTS"]

logger = logging.getLogger(__name__)

#: what an estimator's ``fit`` may need besides the documents (``fit_requires``)
FIT_INPUTS = ("X", "links", "y", "tensor", "features")

_REGISTRY: dict[str, type[Estimator]] = {}


class Estimator(BaseEstimator):
    """Base of every topiclink estimator (scikit-learn conventions).

    Subclasses declare:

    - ``_parameter_constraints``: parameter name -> accepted forms
      (:mod:`topiclink.data.checks`); merged over the class hierarchy and checked at the
      start of ``fit`` with one-line errors;
    - ``fit_requires``: the inputs of ``fit`` (``"X"``, ``"links"``, ``"y"``,
      ``"tensor"``, ``"features"``), read by the contract test, the CLI and the
      experiments;
    - ``paper_names``: paper name -> constructor keywords (``{"Gibbs-gRTM": {...}}``);
    - ``cli_name``, ``cli_flags``, ``cli_defaults``: its
      ``topiclink fit NAME`` command (:mod:`topiclink.cli.estimator_commands`);
    - ``n_jobs_invariant``: True when the result never depends on ``n_jobs``;
    - ``_saved_arrays`` / ``_saved_scalars`` / ``_saved_optional``: the fitted attributes
      a model file stores; ``_param_codecs`` for parameters that are not JSON;
    - ``_state_class``: the State of its algorithm (for ``save(full=True)``);
    - ``_sample_attributes``: for a family that keeps posterior samples (``keep=`` of
      :meth:`_run_engine`), the published attribute holding each kept quantity stacked
      over the samples (``{"U": "samples_embedding_"}``); while ``_samples_published_``
      is True (set by the family's publish when those attributes are exactly the run's
      kept samples) ``save(full=True)`` stores the samples once.
    """

    _abstract: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, list[Constraint]]] = {}
    fit_requires: ClassVar[tuple[str, ...]] = ("X",)
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {}
    #: ``topiclink fit NAME`` (None: the class name in kebab case), more flags per
    #: parameter and the command's defaults that differ from the constructor's (a
    #: callable: derived from the other parameters)
    cli_name: ClassVar[str | None] = None
    cli_flags: ClassVar[dict[str, tuple[str, ...]]] = {}
    cli_defaults: ClassVar[dict[str, Any]] = {}
    n_jobs_invariant: ClassVar[bool] = True
    #: documents without words may be fitted (their topic proportions stay the prior's)
    allows_empty_documents: ClassVar[bool] = False
    #: a Markov chain whose ``fit(..., resume=True)`` draws further states with
    #: ``doc_topic_`` from the state reached (``analysis.estimate_effect`` draws along it)
    posterior_chain: ClassVar[bool] = False
    _saved_arrays: ClassVar[tuple[str, ...]] = ()
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_",)
    _saved_optional: ClassVar[tuple[str, ...]] = ()
    _param_codecs: ClassVar[dict[str, ParamCodec]] = {}
    _state_class: ClassVar[type[State] | None] = None
    _sample_attributes: ClassVar[dict[str, str]] = {}
    #: the families with ``scheme`` / ``executor``: the schemes with shards and the
    #: schemes that run in this process only, read by :meth:`_execution_plan`
    _sharded_schemes: ClassVar[tuple[str, ...]] = ()
    _local_schemes: ClassVar[tuple[str, ...]] = ()
    #: shapes, dtypes and value ranges of the saved arrays (checked by ``load``)
    _array_specs: ClassVar[dict[str, ArraySpec]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("_abstract", False) or cls.__name__.startswith("_"):
            return
        known = _REGISTRY.get(cls.__name__)
        if known is not None and (known.__module__, known.__qualname__) != (
                cls.__module__, cls.__qualname__):
            logger.warning("estimator class %s from %s replaces the one from %s",
                           cls.__name__, cls.__module__, known.__module__)
        _REGISTRY[cls.__name__] = cls
        for name in cls.fit_requires:
            if name not in FIT_INPUTS:
                raise TypeError(f"{cls.__name__}.fit_requires: unknown input {name!r}; "
                                f"known: {FIT_INPUTS}")

    # ------------------------------------------------------------------ parameters
    def _store_params(self, arguments: dict[str, Any]) -> None:
        """Store every argument of ``__init__`` under its own name, unchanged (what
        scikit-learn's ``get_params`` and ``clone`` read; ``__init__`` does nothing else,
        the checks run in ``fit``).  The first statement of ``__init__``:
        ``self._store_params(locals())``."""
        for name, value in arguments.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    @classmethod
    def parameter_constraints(cls) -> dict[str, list[Constraint]]:
        """The declared constraints of every parameter, merged over the hierarchy."""
        merged: dict[str, list[Constraint]] = {}
        for klass in reversed(cls.__mro__):
            merged.update(getattr(klass, "_parameter_constraints", {}) or {})
        return {k: v for k, v in merged.items() if k in cls._get_param_names()}

    def _n_shards(self) -> int:
        """The document shards of the ``scheme`` (1 without one, or for a bad value: the
        parameter check reports it)."""
        if not self._sharded_schemes:
            return 1
        try:
            return self._execution_plan().n_shards
        except (ValueError, TypeError):
            return 1

    def _execution_plan(self) -> Plan:
        """The ``scheme`` (None where the family has one) on the ``executor`` with
        ``n_jobs`` threads: :func:`topiclink.execution.execution_plan`."""
        return execution_plan(type(self).__name__, getattr(self, "scheme", None),
                              getattr(self, "executor", None), getattr(self, "n_jobs", None),
                              sharded=self._sharded_schemes, local=self._local_schemes)

    def _validate_params(self) -> None:
        validate_params(type(self).__name__, self.get_params(deep=False),
                        self.parameter_constraints())
        self._check_params()

    def _check_params(self) -> None:
        """Checks that involve several parameters (override; one-line ValueError)."""

    # ------------------------------------------------------------------ training data
    def _training_corpus(self, X: Any) -> Corpus:
        """The training documents, checked before any allocation: at least one document
        and one word; empty documents refused (or, where the model allows them, counted
        in the log); the model's arrays must fit in memory."""
        corpus = as_corpus(X)
        if corpus.n_docs == 0:
            raise DataError("fit: X has no documents")
        if corpus.n_words == 0 or corpus.n_tokens == 0:
            raise DataError("fit: X has no words (every document is empty)")
        if self.allows_empty_documents:
            empty = corpus.empty_documents()
            if empty.size:
                logger.info("%d of %d training documents are empty; their topic proportions "
                            "stay at the prior", empty.size, corpus.n_docs)
        else:
            corpus.check_no_empty("fit")
        shards = self._n_shards()
        K = getattr(self, "n_topics", None)
        if isinstance(K, int | np.integer):
            check_fit_memory(self._fit_memory(corpus), f"fit: {int(K)} topics over "
                          f"{corpus.n_docs} documents and {corpus.n_words} words"
                          + (f" in {shards} shards" if shards != 1 else ""))
        if shards > corpus.n_docs:      # one rule for every sharded scheme (no clamping)
            raise ValueError(f"fit: scheme {getattr(self, 'scheme', None)!r}: n_shards "
                             f"({shards}) exceeds the number of documents ({corpus.n_docs});"
                             " at most one shard per document, or scheme='exact'")
        return corpus

    def _fit_memory(self, corpus: Corpus) -> int:
        """Bytes of the arrays ``fit`` builds for ``corpus`` (checked before any of them
        is allocated): K x (D + V) counts, K x V topics, per-token assignments, K x K.
        Families with more (per-token variational parameters, D x D kernels, D x K x K
        pair statistics, several chains) add theirs."""
        K = int(self.n_topics)  # type: ignore[attr-defined]
        D, V, N = corpus.n_docs, corpus.n_words, corpus.n_tokens
        P = self._n_shards()
        # sharded sweeps: a stream per shard and per (shard, block) cell
        return 8 * K * (D + 2 * V) + 8 * N + 8 * K * K + 32 * P + 64 * P * P

    # ------------------------------------------------------------------ randomness
    def _fit_generator(self) -> np.random.Generator:
        """The fit's Generator; records the seed actually used in ``random_state_``."""
        seed = resolve_seed(getattr(self, "random_state", None))
        self.random_state_ = (int(seed.entropy) if isinstance(seed, np.random.SeedSequence)
                              else seed)
        return as_generator(seed)

    def _prediction_generator(self) -> np.random.Generator:
        """A fresh Generator from the recorded fit seed (predictions are repeatable)."""
        seed = getattr(self, "random_state_", None)
        if seed is None:
            seed = getattr(self, "random_state", None)
            if isinstance(seed, np.random.Generator):
                return seed
        return as_generator(seed)

    # ------------------------------------------------------------------ fitted marker
    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_iter_")

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit "
                                 "first")

    # ------------------------------------------------------------------ running the engine
    def _run_engine(self, algorithm: Algorithm, data: Any, *, resume: bool,
                    checkpoint: str | os.PathLike[str] | None = None,
                    checkpoint_every: int | str | float = DEFAULT_EVERY,
                    n_average: int = 0, evaluate_every: int = 1,
                    publish: Callable[[State, dict[str, np.ndarray] | None], None],
                    extra_callbacks: Sequence[Any] = (),
                    carry_average: bool = False, keep: Averaging | None = None
                    ) -> RunResult:
        """init (or resume) -> run ``max_iter`` iterations -> publish the estimates.

        ``publish(state, averaged)`` sets the fitted attributes; it also runs before
        callbacks that declare ``needs_estimates``.  With ``resume=True`` the chain
        continues from ``state_`` (after :meth:`fit`, or a ``save(full=True)`` + load);
        the trace and ``n_iter_`` then extend the previous ones.  ``extra_callbacks`` (the
        estimator's own, e.g. a stopping rule) run after the user's ``callbacks``.
        ``carry_average``: the averaging window is counted over the whole chain (it runs
        to the chain's end), so a resumed run continues the previous run's sums and
        10 + 10 iterations average exactly as 20 do.  ``keep``: the engine keeps the
        algorithm's ``retained`` quantities at the iterations this schedule keeps (see
        :func:`~topiclink.inference.engine.run`); with ``carry_average`` a resumed run
        continues the previous run's kept samples too.  The live progress is
        ``self._progress_`` while the run goes (set before it starts), so ``publish``
        reads the samples kept so far from ``self._progress_.samples``.

        ``checkpoint`` / ``checkpoint_every``: the fit's own (every ``fit`` declares them
        and passes them here; :func:`~topiclink.estimators.checkpoint.checkpoint_request`).
        Given ``checkpoint=PATH`` (or inside a
        :func:`~topiclink.estimators.checkpoint.checkpoint_folder` block) the run writes the
        model, its state and the run's progress to ``PATH`` as it goes, continues from
        ``PATH`` when the file exists, and holds ``PATH``'s lock from its start to its end
        (never two writers).
        """
        request = checkpoint_request(checkpoint, checkpoint_every, type(self).__name__)
        with checkpoint_lock(request.path) if request is not None else \
                contextlib.nullcontext():
            return self._run_chain(algorithm, data, request, resume=resume,
                                   n_average=n_average, evaluate_every=evaluate_every,
                                   publish=publish, extra_callbacks=extra_callbacks,
                                   carry_average=carry_average, keep=keep)

    def _run_chain(self, algorithm: Algorithm, data: Any, request: CheckpointRequest | None,
                   *, resume: bool, n_average: int, evaluate_every: int,
                   publish: Callable[[State, dict[str, np.ndarray] | None], None],
                   extra_callbacks: Sequence[Any], carry_average: bool,
                   keep: Averaging | None) -> RunResult:
        """The body of :meth:`_run_engine`, checkpointed as ``request`` says."""
        progress: RunProgress | None = None
        if request is not None and request.path.exists():
            state, progress, previous_trace, previous_iter = self._restore_checkpoint(
                request.path, algorithm, data, resume)
        elif resume:
            state = self._state_to_resume(algorithm, data)
            previous_trace = dict(getattr(self, "trace_", {}) or {})
            previous_iter = int(getattr(self, "n_iter_", 0))
            last: RunProgress | None = getattr(self, "_progress_", None)
            if carry_average and last is not None and (last.n_summed or last.samples):
                progress = RunProgress(n_iter=int(self.max_iter),
                                       sums={k: v.copy() for k, v in last.sums.items()},
                                       n_summed=last.n_summed,
                                       samples=[{k: v.copy() for k, v in s.items()}
                                                for s in last.samples])
        else:
            state = algorithm.init(data, self._fit_generator())
            previous_trace, previous_iter = {}, 0
        self.state_ = state
        if progress is None:
            progress = RunProgress(n_iter=int(self.max_iter))
        self._progress_, self._previous_iter_ = progress, previous_iter
        checkpointing = None
        if request is not None:
            def write(state: State, progress: RunProgress) -> None:
                publish(state, progress.averaged())
                self._set_run_attributes(previous_trace, previous_iter, progress)
                save_checkpoint(self, request.path)  # uncompressed: rewritten often
                logger.debug("checkpoint %s: iteration %d", request.path, state.iteration)

            if request.every_minibatches and not algorithm.minibatch_passes:
                raise ValueError(f"checkpoint_every in minibatches needs an online fit; "
                                 f"{algorithm.name} does not run its iterations in "
                                 "minibatches (give iterations or a duration)")
            checkpointing = Checkpointing(write, request.every_iterations,
                                          request.every_seconds, request.every_minibatches)
        try:
            result = run(algorithm, state, data, int(self.max_iter), model=self,
                         callbacks=[*(getattr(self, "callbacks", None) or []),
                                    *extra_callbacks],
                         verbose=getattr(self, "verbose", False),
                         evaluate_every=evaluate_every, n_average=n_average,
                         publish=publish, progress=progress, checkpoint=checkpointing,
                         keep=keep)
        except (WorkerLostError, SchedulerLostError) as exc:
            exc.args = (f"{exc.args[0]}; " + (
                f"run the same fit again to resume from the last checkpoint, {request.path}"
                if request is not None else
                "fit with checkpoint=PATH to be able to resume such a run"),)
            raise
        publish(state, result.averaged)
        self._set_run_attributes(previous_trace, previous_iter, progress)
        self._check_finite_fit()
        return result

    def _run_partial(self, algorithm: OnlineAlgorithm, new: Any,
                     publish: Callable[[State, Any], None], *,
                     checkpoint: str | os.PathLike[str] | None = None,
                     checkpoint_every: int | str | float = DEFAULT_EVERY
                     ) -> RunResult | None:
        """One ``partial_fit`` of an online family, through the engine.

        ``new``: the chunk in the family's form (its ``OnlineAlgorithm`` reads it).  The
        stream continues from ``state_`` (after a fit, an earlier ``partial_fit``, or a
        ``save(full=True)`` + load: the stream seen so far is in the state), or begins
        on ``new`` (``init`` + ``start``); the chunk's items get one pass
        (:func:`~topiclink.inference.engine.run_partial`: callbacks, progress bar, BLAS
        limit as a fit), then ``publish(state, data)`` sets the fitted attributes, the trace
        gains the pass's row and ``n_iter_`` counts it (the pass is ``_progress_``, a
        one-iteration run).  Returns None (and changes nothing) when the chunk holds no
        new item.

        Given ``checkpoint=PATH`` (the ``partial_fit``'s own; see
        :mod:`topiclink.estimators.stream_checkpoint`; an int ``checkpoint_every`` counts
        minibatches), the call holds ``PATH``'s lock and is planned against the files
        there (start, resume the pass file, or return the call that ended), the pass is
        written to the pass file at minibatch boundaries when due, the model after the
        call to ``PATH``; an exception inside the call restores the model as it was before
        it (the state is worked on as a copy).
        """
        request = checkpoint_request(checkpoint, checkpoint_every, type(self).__name__,
                                     partial=True)
        if request is None:
            return self._stream_pass(algorithm, new, publish)
        with checkpoint_lock(request.path):
            return self._checkpointed_pass(algorithm, new, publish, request)

    def _checkpointed_pass(self, algorithm: OnlineAlgorithm, new: Any,
                           publish: Callable[[State, Any], None],
                           request: CheckpointRequest) -> RunResult | None:
        """A ``partial_fit`` given a checkpoint: planned against its files, its pass
        written there; an exception restores the model as it was before the call."""
        call, action, saved = stream_checkpoint.plan(
            self, request.path, algorithm.chunk_fingerprint(new), load)
        if action == "done":
            logger.info("%s: partial_fit: the call in checkpoint %s had ended; its model "
                        "is returned", type(self).__name__, request.path)
            stream_checkpoint.adopt(self, saved)
            return None
        before = dict(self.__dict__)
        try:
            return self._stream_pass(algorithm, new, publish, request=request, call=call,
                                     resumed=saved)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise

    def _stream_pass(self, algorithm: OnlineAlgorithm, new: Any,
                     publish: Callable[[State, Any], None], *,
                     request: CheckpointRequest | None = None,
                     call: stream_checkpoint.StreamCall | None = None,
                     resumed: Estimator | None = None) -> RunResult | None:
        """The body of :meth:`_run_partial`: a new pass over chunk ``new``, or the pass of
        the pass file's model ``resumed``, checkpointed as ``call`` says."""
        progress = RunProgress(n_iter=1)
        items = None
        if resumed is not None:
            assert call is not None
            data = algorithm.chunk_data(new)
            self.state_, self._progress_ = resumed.state_, resumed._progress_
            try:
                state = self._state_to_resume(algorithm, data)
            except ValueError as exc:
                raise ValueError(f"checkpoint {call.pass_path}: {exc}; delete it or pass "
                                 "another checkpoint path") from None
            progress = resumed._progress_
            self.random_state_ = resumed.random_state_
            logger.info("%s: partial_fit resumes from checkpoint %s (%d of %d minibatches "
                        "done)", type(self).__name__, call.pass_path, progress.pass_.done,
                        progress.pass_.n_batches)
        else:
            state = getattr(self, "state_", None)
            if state is None:
                data = algorithm.chunk_data(new)
                if data is None:
                    return None
                state = algorithm.init(data, self._fit_generator())
                algorithm.start(state, new)
            else:
                if call is not None:        # the model keeps its state until the call ends
                    state = copy.deepcopy(state)
                data = algorithm.extend(state, algorithm.stream_data(state), new)
                if data is None:
                    return None
            items = algorithm.chunk_items(state, data)
        self.state_ = state
        previous_trace = dict(getattr(self, "trace_", {}) or {})
        rows_before = len(next(iter(previous_trace.values()))) if previous_trace else 0
        checkpointing = None
        if request is not None and call is not None:
            def write(state: State, progress: RunProgress) -> None:
                if progress.complete:          # the call's end writes PATH itself
                    return
                publish(state, data)
                self.trace_, self.n_iter_ = previous_trace, state.iteration
                self._progress_, self._previous_iter_ = progress, rows_before
                self._partial_fit_call_ = call.record()
                try:
                    save_checkpoint(self, call.pass_path, "partial_fit")
                finally:
                    del self._partial_fit_call_
                logger.debug("checkpoint %s: %d minibatches", call.pass_path,
                             progress.pass_.done if progress.pass_ is not None else -1)

            checkpointing = Checkpointing(write, None, request.every_seconds,
                                          request.every_minibatches)
        result = run_partial(algorithm, state, data, items, model=self,
                             callbacks=getattr(self, "callbacks", None),
                             verbose=getattr(self, "verbose", False),
                             publish=lambda state, averaged: publish(state, data),
                             progress=progress, checkpoint=checkpointing)
        publish(state, data)
        self._check_finite_fit()
        self.trace_ = _concat_traces(previous_trace, result.trace)
        self.n_iter_ = state.iteration
        self.stopped_early_ = bool(result.stopped_early)
        self._progress_, self._previous_iter_ = progress, rows_before
        if call is not None:
            self._partial_fit_call_ = call.record(after=state_key(state))
            try:
                save_checkpoint(self, call.path, "partial_fit")
            finally:
                del self._partial_fit_call_
            call.pass_path.unlink(missing_ok=True)
        return result

    def _set_run_attributes(self, previous_trace: dict[str, np.ndarray], previous_iter: int,
                            progress: RunProgress) -> None:
        keys = sorted({k for r in progress.rows for k in r})
        trace = {k: np.array([r.get(k, np.nan) for r in progress.rows], dtype=float)
                 for k in keys}
        self.trace_ = _concat_traces(previous_trace, trace)
        self.n_iter_ = previous_iter + progress.done
        self.stopped_early_ = bool(progress.stopped)
        self._progress_ = progress
        self._previous_iter_ = previous_iter

    def _comparable_params(self) -> dict[str, Any]:
        """The parameters a checkpoint must share with the fit resuming from it."""
        params = self._encoded_params({}, record_seed=False)
        for name in ("verbose", "executor"):
            params.pop(name, None)
        if self.n_jobs_invariant:
            params.pop("n_jobs", None)
        return params

    def _restore_checkpoint(self, path: Path, algorithm: Algorithm, data: Any, resume: bool
                            ) -> tuple[State, RunProgress, dict[str, np.ndarray], int]:
        """(state, progress, the trace and iterations before this run) from a checkpoint
        written by the same fit; one-line ValueError when it belongs to another."""
        saved = load(path)
        advice = "delete it or pass another checkpoint path"
        if "partial_fit" in read_header(path):
            raise ValueError(f"checkpoint {path} was written by partial_fit (a stream), not "
                             f"by fit; {advice}")
        progress: RunProgress | None = getattr(saved, "_progress_", None)
        if type(saved) is type(self) and (
                progress is None or not isinstance(getattr(saved, "state_", None), State)):
            raise ValueError(f"checkpoint {path} is a model file without a run in progress "
                             f"(not written by fit(checkpoint=...)); {advice}")
        self._check_checkpoint_owner(saved, path, advice)
        assert progress is not None
        previous_iter = int(saved._previous_iter_)
        if resume and previous_iter != int(getattr(self, "n_iter_", 0)):
            raise ValueError(f"checkpoint {path} continues a chain of {previous_iter} "
                             f"iterations, this model has {getattr(self, 'n_iter_', 0)}; "
                             f"{advice}")
        self.state_, self._progress_ = saved.state_, progress
        try:
            state = self._state_to_resume(algorithm, data)
        except ValueError as exc:
            raise ValueError(f"checkpoint {path}: {exc}; {advice}") from None
        self.random_state_ = saved.random_state_
        previous_trace = {k: v[:previous_iter] for k, v in saved.trace_.items()}
        logger.info("%s: resuming from checkpoint %s (%d of %d iterations done)",
                    type(self).__name__, path, progress.done, progress.n_iter)
        return state, progress, previous_trace, previous_iter

    def _check_checkpoint_owner(self, saved: Estimator, path: Path, advice: str) -> None:
        """A checkpoint resumed by this model must be of its class and written with the
        same parameters (:meth:`_comparable_params`); one-line ValueError."""
        if type(saved) is not type(self):
            raise ValueError(f"checkpoint {path} holds a {type(saved).__name__}, not a "
                             f"{type(self).__name__}; {advice}")
        mine, theirs = self._comparable_params(), saved._comparable_params()
        if getattr(self, "random_state", None) is None:
            mine.pop("random_state", None)
            theirs.pop("random_state", None)
        for name in sorted(set(mine) | set(theirs)):
            if mine.get(name) != theirs.get(name):
                raise ValueError(f"checkpoint {path} was written by a fit with {name}="
                                 f"{theirs.get(name)!r}, this fit has {mine.get(name)!r}; "
                                 f"{advice}")

    #: a hint appended when a fit ends with non-finite estimates (the likely parameter)
    _divergence_hint: ClassVar[str] = ""

    def _check_finite_fit(self) -> None:
        """Every fit ends with finite fitted arrays, or a one-line ValueError naming the
        first non-finite array, the first iteration whose trace went non-finite (when
        the trace shows it) and the likely parameter; the model is then left unfitted."""
        for name in (*self._saved_arrays, *self._saved_optional):
            value = getattr(self, name, None)
            if not isinstance(value, np.ndarray) or value.dtype.kind not in "fc":
                continue
            if np.all(np.isfinite(value)):
                continue
            first = ""
            for key, values in sorted((getattr(self, "trace_", None) or {}).items()):
                bad = np.flatnonzero(np.isinf(np.asarray(values, dtype=float)))
                if bad.size:            # (NaN in a trace may mean "not evaluated")
                    first = f"; the trace's {key!r} went non-finite at iteration " \
                            f"{int(bad[0]) + 1}"
                    break
            self.__dict__.pop("n_iter_", None)
            hint = f" ({self._divergence_hint})" if self._divergence_hint else ""
            raise ValueError(f"{type(self).__name__}: the fit diverged: {name} holds NaN or "
                             f"infinite values{first}{hint}")

    def _state_to_resume(self, algorithm: Algorithm, data: Any) -> State:
        state = getattr(self, "state_", None)
        if not isinstance(state, State):
            raise ValueError(f"{type(self).__name__}: nothing to resume; fit first, or load "
                             "a model saved with save(path, full=True)")
        if not isinstance(state, algorithm.state_class):
            raise ValueError(f"{type(self).__name__}: the saved state is a "
                             f"{type(state).__name__}, this configuration needs a "
                             f"{algorithm.state_class.__name__}")
        if state.data_fingerprint != algorithm.fingerprint(data):
            raise ValueError(f"{type(self).__name__}: resume needs the data of the first "
                             "fit (these documents/links differ)")
        try:
            check_state(algorithm, state, data)
            progress = getattr(self, "_progress_", None)
            if progress is not None:
                check_progress_sums(progress, algorithm.averaged(state, data), "state")
                if progress.samples:
                    check_progress_samples(progress, algorithm.retained(state), "state")
                if progress.pass_ is not None:
                    algorithm.check_pass(progress.pass_, data)
        except ValueError as exc:
            raise ValueError(f"{type(self).__name__}: cannot resume: {exc}") from None
        return state

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike[str], *, full: bool = False,
             compress: bool = True) -> Path:
        """Save to a ``.npz`` model file (atomic; no pickle).  Returns the path written.

        ``full=True`` also stores the sampler state (``state_``) and where the last run
        stood (its averaging sums, for a chain-long window), so that a loaded model
        continues training with ``fit(..., resume=True)`` draw for draw; this is also the
        checkpoint format.  ``compress=False`` writes the arrays uncompressed (faster,
        larger; how checkpoints are written).  A model with an ``analyzer_`` (the fitted
        :class:`~topiclink.data.analyzer.TextAnalyzer` that counted its training texts)
        stores it as the header member ``analyzer`` (its ``to_dict()`` JSON), restored
        and checked by :func:`load`.
        """
        self._check_fitted()
        arrays: dict[str, np.ndarray] = {name: getattr(self, name)
                                         for name in self._saved_arrays}
        for name in self._saved_optional:
            value = getattr(self, name, None)
            if value is not None:
                arrays[name] = value
        for key, values in (getattr(self, "trace_", None) or {}).items():
            arrays[f"trace_/{key}"] = values
        # a checkpoint is written before fit sets its last scalars (None until then)
        attributes = {name: getattr(self, name, None) for name in self._saved_scalars}
        attributes["random_state_"] = getattr(self, "random_state_", None)
        extra: dict[str, Any] = {"module": type(self).__module__,
                                 "param_schemas": {}}
        params = self._encoded_params(extra["param_schemas"])
        analyzer = getattr(self, "analyzer_", None)
        if analyzer is not None:  # the TextAnalyzer that counted the training texts
            vocabulary = getattr(self, "vocabulary_", None)
            if vocabulary is not None:  # e.g. refitted on other texts since set_analyzer
                analyzer.check_covers(vocabulary)
            extra["analyzer"] = analyzer.to_dict()
        if full:
            state = getattr(self, "state_", None)
            if not isinstance(state, State):
                raise ValueError(f"{type(self).__name__} has no sampler state to save")
            state_arrays, meta = state_to_saved(state)
            arrays.update({f"state_/{k}": v for k, v in state_arrays.items()})
            extra["state"] = meta
            progress = getattr(self, "_progress_", None)
            if progress is not None:
                # the kept samples are written once: when the published samples_* are
                # exactly them (the family's publish says so), the run's header only
                # points at those, and load rebuilds the progress from them
                run_arrays, extra["run"] = progress_to_saved(
                    progress, int(getattr(self, "_previous_iter_", 0)),
                    samples_published=bool(getattr(self, "_samples_published_", False)))
                arrays.update(run_arrays)
            record = getattr(self, "_partial_fit_call_", None)
            if record is not None:         # a checkpoint of partial_fit (stream_checkpoint)
                extra[stream_checkpoint.RECORD] = record
        return save_model(path, type(self).__name__, params, arrays, attributes, extra,
                          compress=compress)

    def _encoded_params(self, schemas: dict[str, str], record_seed: bool = True
                        ) -> dict[str, Any]:
        params = self.get_params(deep=False)
        params.pop("callbacks", None)
        if "random_state" in params and record_seed:
            recorded = getattr(self, "random_state_", None)
            params["random_state"] = recorded if recorded is not None else (
                params["random_state"] if _is_json_int(params["random_state"]) else None)
        for name, value in list(params.items()):
            codec = self._param_codecs.get(name)
            if codec is not None and value is not None:
                params[name] = codec.encode(value)
                schemas[name] = codec.schema
                continue
            try:
                params[name] = to_jsonable(value)
            except TypeError:
                raise TypeError(f"{type(self).__name__}: parameter {name!r} holds a "
                                f"{type(value).__name__}, which a model file cannot store; "
                                "declare a codec for it in _param_codecs") from None
        return params

    @classmethod
    def _from_saved(cls, header: dict[str, Any], arrays: dict[str, np.ndarray],
                    where: str = "model file") -> Estimator:
        """Rebuild a saved model after checking the file against the class's schema:
        known parameters that pass their constraints, known attributes, every required
        array with consistent shapes and valid values, no unknown member."""
        valid = cls._get_param_names()
        params = dict(header.get("params", {}))
        schemas = header.get("param_schemas", {}) or {}
        if not isinstance(schemas, dict):
            raise ValueError(f"{where}: header member 'param_schemas' is not an object")
        schemas = dict(schemas)
        for name, schema in schemas.items():
            codec = cls._param_codecs.get(name)
            if codec is None or codec.schema != schema or name not in params:
                raise ValueError(f"{where}: cannot decode parameter {name!r} "
                                 f"(schema {schema!r})")
            try:
                params[name] = codec.decode(params[name])
            except Exception as exc:  # noqa: BLE001 - any malformed description
                raise ValueError(f"{where}: parameter {name!r} cannot be rebuilt "
                                 f"({type(exc).__name__}: {exc})") from None
        unknown = sorted(set(params) - set(valid))
        if unknown:
            raise ValueError(f"{where}: unknown parameter {unknown[0]!r} for {cls.__name__}")
        model = cls(**params)
        try:
            model._validate_params()
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        plain = {k: v for k, v in arrays.items() if "/" not in k}
        trace = {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("trace_/")}
        state_arrays = {k.split("/", 1)[1]: v for k, v in arrays.items()
                        if k.startswith("state_/")}
        run_arrays = {k: v for k, v in arrays.items()
                      if k.startswith(("run_/sum/", "run_/samples/", "run_/pass/"))}
        others = sorted(set(arrays) - set(plain) - {f"trace_/{k}" for k in trace}
                        - {f"state_/{k}" for k in state_arrays} - set(run_arrays))
        allowed = set(cls._saved_arrays) | set(cls._saved_optional)
        unknown = sorted(set(plain) - allowed) + others
        if unknown:
            raise ValueError(f"{where}: unknown member {unknown[0]!r} for {cls.__name__}")
        missing = [name for name in cls._saved_arrays if name not in plain]
        if missing:
            raise ValueError(f"{where}: required array {missing[0]!r} is missing")
        sizes = cls._param_sizes(where, params, plain)
        check_arrays(where, plain, cls._array_specs, sizes)
        cls._check_loaded(where, plain)
        # traces hold NaN where the objective was not evaluated
        check_arrays(where, trace, {k: ArraySpec(("*",), "f", None) for k in trace})
        attributes = header.get("attributes", {})
        allowed_attributes = set(cls._saved_scalars) | {"random_state_"}
        for name, value in attributes.items():
            if name not in allowed_attributes:
                raise ValueError(f"{where}: unknown attribute {name!r} for {cls.__name__}")
            if value is not None and not isinstance(value, bool | int | float | str):
                raise ValueError(f"{where}: attribute {name!r} must be a number or text")
        cls._check_scalars(where, attributes)
        for name, value in plain.items():
            setattr(model, name, value)
        model.trace_ = trace
        for name, value in attributes.items():
            setattr(model, name, value)
        model._check_loaded_fields(where)
        if "analyzer" in header:
            model.analyzer_ = _saved_analyzer(header["analyzer"], plain.get("vocabulary_"),
                                              where)
        if "state" in header:
            try:
                state_class = cls._state_class_for(model)
                model.state_ = state_from_saved(state_class, state_arrays, header["state"])
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise ValueError(f"{where}: saved sampler state is invalid ({exc})") from None
        elif state_arrays:
            raise ValueError(f"{where}: state arrays without a state description")
        if "run" in header:
            if "state" not in header:
                raise ValueError(f"{where}: a run in progress without a sampler state")
            published = {key: plain[name] for key, name in cls._sample_attributes.items()
                         if name in plain}
            model._progress_, model._previous_iter_ = progress_from_saved(
                header["run"], run_arrays, trace, where, published)
            model._samples_published_ = bool(
                (header["run"].get("samples") or {}).get("published", False))
        elif run_arrays:
            raise ValueError(f"{where}: averaging sums or kept samples without a run "
                             "description")
        model._after_load()
        return model

    def _state_class_for(self) -> type[State]:
        if self._state_class is None:
            raise ValueError(f"{type(self).__name__} has no resumable state")
        return self._state_class

    def _after_load(self) -> None:
        """Hook: rebuild derived attributes after loading (override)."""

    def _check_loaded_fields(self, where: str) -> None:
        """Hook: checks across the loaded parameters, arrays and scalar attributes (set on
        ``self`` by now) that neither the array schema nor the scalar specs express (a
        kernel against the saved features, an encoding against the feature names);
        override, raising a one-line ValueError naming ``where`` and the field."""

    #: type and value checks of saved scalar attributes: numbers -- "finite",
    #: "positive", "nonnegative", "count" (an integer >= 0) -- or "bool" (True/False),
    #: "text", "json" (text holding JSON).  Undeclared: ``n_*`` a count, ``converged_``
    #: a bool, ``stop_reason_`` text, ``random_state_`` a count, any other a finite
    #: number.  None is allowed (a checkpoint written before fit sets its scalars).
    _scalar_specs: ClassVar[dict[str, str]] = {}
    _SCALAR_CONVENTIONS: ClassVar[dict[str, str]] = {
        "converged_": "bool", "stop_reason_": "text", "random_state_": "count"}

    @classmethod
    def _scalar_spec(cls, name: str) -> str:
        """The declared check of the saved scalar ``name`` (see ``_scalar_specs``)."""
        return cls._scalar_specs.get(name) or cls._SCALAR_CONVENTIONS.get(name) or (
            "count" if name.startswith("n_") else "finite")

    @classmethod
    def _check_scalars(cls, where: str, attributes: dict[str, Any]) -> None:
        """One-line ValueError for a saved scalar of the wrong type (text where a number is
        expected, a number where text is) or out of its range (a NaN intercept, a
        negative scale, a fractional count)."""
        for name, value in attributes.items():
            if value is None:
                continue
            check = cls._scalar_spec(name)
            if check in ("text", "json") or check == "bool":
                kind = str if check != "bool" else bool
                if not isinstance(value, kind):
                    raise ValueError(f"{where}: attribute {name!r} must be "
                                     f"{'True or False' if kind is bool else 'text'}, got "
                                     f"{value!r}")
                if check == "json":
                    try:
                        json.loads(value)
                    except ValueError:
                        raise ValueError(f"{where}: attribute {name!r} must be JSON text, "
                                         f"got {value[:40]!r}") from None
                continue
            if isinstance(value, bool | str):
                raise ValueError(f"{where}: attribute {name!r} must be a number, got "
                                 f"{value!r}")
            v = float(value)
            bad = (not np.isfinite(v) or (check == "positive" and v <= 0)
                   or (check == "nonnegative" and v < 0)
                   or (check == "count" and (v < 0 or v != int(v))))
            if bad:
                what = {"positive": "a finite number > 0", "nonnegative":
                        "a finite number >= 0", "count": "an integer >= 0"}.get(
                    check, "a finite number")
                raise ValueError(f"{where}: attribute {name!r} must be {what}, got {value!r}")

    @classmethod
    def _param_sizes(cls, where: str, params: dict[str, Any],
                     arrays: dict[str, np.ndarray]) -> dict[str, int]:
        """The array sizes the saved parameters fix (``{"K": n_topics}``), checked against
        the arrays' shapes; override to add others or to check that optional members
        agree with the parameters (one-line ValueError naming ``where``)."""
        if "n_topics" in params:
            return {"K": int(params["n_topics"])}
        return {}

    @classmethod
    def _check_loaded(cls, where: str, arrays: dict[str, np.ndarray]) -> None:
        """Hook: checks across members that shapes alone do not express (override;
        one-line ValueError naming ``where``)."""


def check_fit_memory(need: float, what: str) -> None:
    """Refuse, before allocating, a fit whose arrays need ``need`` bytes (one line:
    what, GiB needed, GiB available)."""
    have = available_memory()
    if need > have:
        raise ValueError(f"{what} need about {need / 2**30:.3g} GiB, more than this "
                         f"machine's {have / 2**30:.3g} GiB")


def _saved_analyzer(data: Any, vocabulary: np.ndarray | None, where: str) -> TextAnalyzer:
    """The :class:`TextAnalyzer` of a model file's ``analyzer`` header member, checked
    (a known format, valid settings, a vocabulary covering the model's); one line
    naming ``where`` otherwise."""
    try:
        analyzer = TextAnalyzer.from_dict(data)
        if vocabulary is not None:
            analyzer.check_covers(vocabulary)
    except ImportError as exc:
        raise ValueError(f"{where}: the saved text analyser needs {exc}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"{where}: the saved text analyser is invalid ({exc})") from None
    return analyzer


def _is_json_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _concat_traces(old: dict[str, np.ndarray], new: dict[str, np.ndarray]
                   ) -> dict[str, np.ndarray]:
    if not old:
        return new
    n_old = len(next(iter(old.values()))) if old else 0
    n_new = len(next(iter(new.values()))) if new else 0
    keys = sorted(set(old) | set(new))
    return {k: np.concatenate([np.asarray(old.get(k, np.full(n_old, np.nan)), dtype=float),
                               np.asarray(new.get(k, np.full(n_new, np.nan)), dtype=float)])
            for k in keys}


# ---------------------------------------------------------------------- the registry
def _discover() -> None:
    """Import every family's estimator modules (their classes register)."""
    from topiclink.registry import discover

    discover("estimator")


def registered_estimators() -> dict[str, type[Estimator]]:
    """Every estimator class, by class name (the library's and any imported subclass)."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def library_estimators() -> dict[str, type[Estimator]]:
    """The library's own estimator classes by name (those defined in ``topiclink``'s
    modules; what ``topiclink.NAME`` and ``topiclink.estimators.NAME`` resolve)."""
    return {name: cls for name, cls in registered_estimators().items()
            if cls.__module__.split(".")[0] == "topiclink"}


def paper_models() -> dict[str, tuple[type[Estimator], dict[str, Any]]]:
    """Paper name -> (estimator class, constructor keywords), over every estimator."""
    table: dict[str, tuple[type[Estimator], dict[str, Any]]] = {}
    for cls in registered_estimators().values():
        for name, kwargs in cls.paper_names.items():
            table[name] = (cls, dict(kwargs))
    return table


def make_paper_model(name: str, **kwargs: Any) -> Estimator:
    """The estimator a paper calls ``name`` (e.g. ``"Gibbs-gMMRTM"``), with ``kwargs``."""
    table = paper_models()
    if name not in table:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(sorted(table))}")
    cls, base = table[name]
    return cls(**{**base, **kwargs})


def load(path: str | os.PathLike[str]) -> Estimator:
    """Load any saved topiclink model (``.npz`` + JSON header, never a pickle)."""
    header, arrays = read_model(path)
    name = header.get("class")
    cls = _REGISTRY.get(name) if isinstance(name, str) else None
    if cls is None:
        _discover()
        cls = _REGISTRY.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"{path}: unknown model class {name!r} (import the module that "
                         "defines it first)")
    return cls._from_saved(header, arrays, where=str(path))
