"""Dirichlet-multinomial regression (the estimator): Mimno & McCallum (UAI 2008).

alpha_dk = exp(lambda_k0 + x_d^T lambda_k); collapsed Gibbs LDA for z with document d's
prior alpha_d, and every ``optimize_every`` sweeps (after ``burn_in``) lambda by L-BFGS on
the Dirichlet-multinomial likelihood of the document-topic counts plus a Gaussian prior.
The algorithm (state, step, objective, the L-BFGS objective and its gradient) is
:mod:`topiclink.families.dmr.algorithm`; this module validates, encodes the features, runs the
engine and publishes the estimates.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.checks import (
    POSITIVE,
    DataError,
    Integer,
    as_real,
    check_memory,
)
from topiclink.estimators.base import Estimator
from topiclink.estimators.capabilities import TopicsMixin
from topiclink.estimators.checkpoint import DEFAULT_EVERY
from topiclink.estimators.collapsed import doc_topic_estimate, topic_shares, topic_word_estimate
from topiclink.estimators.feature_prior import FeaturePriorTopicsMixin
from topiclink.estimators.fit_docs import documents_checkpoint
from topiclink.estimators.param_codecs import ParamCodec
from topiclink.estimators.schema import TOPIC_ARRAYS, ArraySpec
from topiclink.execution import ExecutorCodec, Shards, SharedClientMixin
from topiclink.families.dmr.algorithm import DMRData, DMRGibbs, DMRState, doc_priors
from topiclink.parameters import Options, SchemeCodec, SchemeForm, shared
from topiclink.random import RandomState
from topiclink.topics.lda import TokenData

__all__ = ["DMR"]

logger = logging.getLogger(__name__)


class DMR(SharedClientMixin, FeaturePriorTopicsMixin, TopicsMixin, Estimator):
    """Dirichlet-multinomial regression topic model (Mimno & McCallum 2008).

    Document d's topic proportions have the prior Dirichlet(alpha_d) with
    ``alpha_dk = exp(lambda_k0 + x_d^T lambda_k)``; ``lambda_kf ~ N(0, sigma^2)`` for the
    feature weights and ``N(0, intercept_sigma^2)`` for the intercepts (a separate, larger
    variance for the intercept, as in MALLET's DMR: variances 1 and 100).  The topics z are
    sampled by collapsed Gibbs (LDA's sweep with per-document priors); lambda is the
    L-BFGS maximum of the Dirichlet-multinomial likelihood of the counts n_dk plus the
    prior, recomputed every ``optimize_every`` sweeps after ``burn_in`` (stochastic EM).

    Parameters
    ----------
    n_topics : int, default 10
        K (>= 2).
    sigma : float, default 1.0
        Prior standard deviation of the feature weights lambda_kf.
    intercept_sigma : float, default 10.0
        Prior standard deviation of the intercepts lambda_k0.
    doc_topic_prior : float, default 0.1
        alpha of every document before the first optimisation (lambda_k0 = log alpha,
        feature weights 0).
    topic_word_prior : float, default 0.01
        beta, the symmetric Dirichlet prior of the topics.
    optimize_every : int, default 10
        Sweeps between optimisations of lambda: after sweep t when t >= ``burn_in`` and
        t % optimize_every == 0.
    burn_in : int, default 50
        Sweeps before the first optimisation of lambda.
    max_iter : int, default 200
        Gibbs sweeps per call of ``fit`` (``resume=True`` adds more).
    evaluate_every : int, default 1
        Record the collapsed log joint per token every this many sweeps.
    transform_iter : int, default 50
        Sweeps used by :meth:`transform` for new documents (second half averaged).
    scheme : "exact", "partition", "adlda" or Shards("partition" | "adlda", n_shards), \
default "exact"
        The statistical scheme of z (it fixes the chain).  ``"exact"``: the exact
        sequential sampler.  ``"partition"`` (the multi-core choice): document shards x
        vocabulary blocks on threads, as :class:`~topiclink.LDA`; ``"adlda"``: AD-LDA over
        fixed document shards (each shard its own RNG stream; a different chain, fixed by
        the seed and the shards).  A name alone is 2 shards;
        :class:`topiclink.execution.Shards` gives another count, at most the number of
        documents (more shards than documents is refused on one line, not clamped: the
        shards fix the chain).  lambda is optimised on the driver either way.
    executor : None, int, distributed.Client or str, default None
        Where the shards run; never changes the chain.  None: this process, ``n_jobs``
        threads; an integer: that many threads; a Dask client, a scheduler address or
        ``"dask"`` (the current client): the AD-LDA shards on the workers of a Dask
        cluster, bit for bit the threaded chain (``scheme="adlda"`` only).  Shared by
        ``clone``; a model file stores a thread count or an address, never a client.
    n_jobs : int or None, default 1
        Threads running the shards when ``executor`` is None; never changes the result.
    init : "random" or "spectral", default "random"
        The chain's start, as LDA's: ``"spectral"`` gives every token its most probable
        topic under the deterministic anchor-word topics (:mod:`topiclink.topics.spectral`).
    sampler : "gibbs" or "mh", default "gibbs"
        The token kernel of the sequential chain: ``"gibbs"``, the exact collapsed
        conditional (O(K) per token); ``"mh"``, exact Metropolis-Hastings with LightLDA's
        document and word proposals, the document proposal's prior part drawn from an
        alias table of the document's alpha_d (:mod:`topiclink.topics.kernels.lda_mh`;
        O(1) per token plus O(K) per document).  The parallel schemes use ``"gibbs"``.
    random_state : int, Generator or None
    verbose : bool
    callbacks : list, optional

    Notes
    -----
    Features (``fit(X, features=...)``): an array or scipy sparse matrix (D, F) of
    numbers, used as given -- put them on a scale of about one (the prior on lambda
    assumes it, and a raw feature such as a year, ~2000, sends alpha to its bounds on the
    first L-BFGS step); or a DataFrame, whose numeric columns are standardised (centred
    and divided by their standard deviation at fit, recorded in ``feature_encoding_``),
    boolean columns used as 0/1, and other columns one-hot encoded, one indicator per
    level seen at fit (named ``"column=level"``; a level unseen at fit gets all-zero
    indicators).  The same encoding is applied to the DataFrames given to
    :meth:`transform`, :meth:`predict_topics`, ...; an array given there must already be
    encoded (F columns in ``feature_names_`` order).

    Attributes
    ----------
    components_ : ndarray (K, V)
        phi-hat ``(C_kw + beta) / (C_k + V beta)``.
    doc_topic_ : ndarray (D, K)
        theta-hat ``(C_dk + alpha_dk) / (N_d + sum_k alpha_dk)`` of the training documents.
    lambda_ : ndarray (K, 1 + F)
        Column 0 the intercepts lambda_k0, column 1 + f the weight of feature f.
    alpha_ : ndarray (K,)
        The mean prior of the training documents, mean_d alpha_d: the prior
        :meth:`transform` uses for documents given without features.
    feature_names_ : ndarray of str (F,)
    topic_weights_ : ndarray (K,)
    vocabulary_ : ndarray of str (V,)
    trace_ : dict of ndarray
        ``"log_likelihood"``: collapsed log p(w, z | alpha, beta) per token;
        ``"lambda_objective_before"`` / ``"lambda_objective"``: L(lambda) before and after
        each optimisation (NaN at the other sweeps); ``"seconds"``.
    n_iter_ : int
    state_ : DMRState
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "features")
    paper_names: ClassVar[dict[str, dict[str, Any]]] = {"DMR": {}}
    posterior_chain: ClassVar[bool] = True
    _parameter_constraints: ClassVar[dict[str, list]] = {
        **shared("n_topics"), "sigma": POSITIVE, "intercept_sigma": POSITIVE,
        # a scalar alpha only (the intercepts start at log alpha)
        "doc_topic_prior": POSITIVE, **shared("topic_word_prior"),
        # optimise at least every sweep; burn_in: the glossary's homonym (not samples)
        "optimize_every": [Integer(1)], "burn_in": [Integer(0)],
        **shared("max_iter", "evaluate_every", "transform_iter"),
        "scheme": [SchemeForm("exact", "partition", "adlda",
                              sharded=("partition", "adlda"))],
        **shared("executor", "n_jobs", "init"), "sampler": [Options("gibbs", "mh")],
        **shared("random_state", "verbose", "callbacks"),
    }
    _param_codecs: ClassVar[dict[str, ParamCodec]] = {"scheme": SchemeCodec(),
                                                      "executor": ExecutorCodec()}
    _sharded_schemes = ("partition", "adlda")
    _local_schemes = ("exact", "partition")
    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "doc_topic_", "topic_weights_", "vocabulary_", "alpha_", "lambda_",
        "feature_names_")
    _array_specs: ClassVar[dict[str, ArraySpec]] = {
        **TOPIC_ARRAYS, "lambda_": ArraySpec(("K", "*"), "f", "finite"),
        "feature_names_": ArraySpec(("*",), "U", None)}
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_", "n_tokens_", "feature_encoding_")
    _scalar_specs: ClassVar[dict[str, str]] = {"feature_encoding_": "json"}
    _state_class = DMRState

    def __init__(self, n_topics: int = 10, *, sigma: float = 1.0,
                 intercept_sigma: float = 10.0, doc_topic_prior: float = 0.1,
                 topic_word_prior: float = 0.01, optimize_every: int = 10,
                 burn_in: int = 50, max_iter: int = 200, evaluate_every: int = 1,
                 transform_iter: int = 50, scheme: str | Shards = "exact",
                 executor: Any = None, n_jobs: int | None = 1, init: str = "random",
                 sampler: str = "gibbs", random_state: RandomState = None,
                 verbose: bool = False, callbacks: list[Any] | None = None) -> None:
        self._store_params(locals())

    # ------------------------------------------------------------------ fitting
    def _algorithm(self) -> DMRGibbs:
        plan = self._execution_plan()
        return DMRGibbs(int(self.n_topics), float(self.topic_word_prior), float(self.sigma),
                        float(self.intercept_sigma), float(self.doc_topic_prior),
                        int(self.optimize_every), int(self.burn_in),
                        scheme=plan.scheme, n_shards=plan.n_shards,
                        executor=plan.executor, n_threads=plan.n_threads,
                        init=self.init, sampler=str(self.sampler))

    @documents_checkpoint
    def fit(self, X: Any, y: None = None, *, features: Any = None, resume: bool = False,
            checkpoint: str | os.PathLike[str] | None = None,
            checkpoint_every: int | str | float = DEFAULT_EVERY) -> DMR:
        """Fit to documents ``X`` (Corpus or document-term matrix) with their ``features``
        (D, F): array, sparse matrix or DataFrame (see the class docstring).

        ``resume=True`` continues the chain for ``max_iter`` more sweeps on the same data.
        """
        if y is not None:
            raise TypeError("DMR.fit takes the features as a keyword: fit(X, features=...)")
        self._validate_params()
        corpus = self._training_corpus(X)
        if features is None:
            raise DataError("DMR.fit needs features=...: an (n_docs, n_features) array, "
                            "sparse matrix or DataFrame")
        values, names, encoding = _encode_features(features, corpus.n_docs, None, "fit",
                                                   corpus.doc_ids)
        algorithm = self._algorithm()
        data = DMRData(TokenData.from_corpus(corpus), _design(values))
        logger.info("DMR: %d documents, %d words, %d tokens, %d features, K=%d",
                    corpus.n_docs, corpus.n_words, data.n_tokens, values.shape[1],
                    algorithm.n_topics)

        def publish(state: DMRState, averaged: dict[str, np.ndarray] | None) -> None:
            algorithm.sync(state, ("ndk",))
            self._publish(state, algorithm, data, corpus.vocabulary)

        self.feature_names_ = names
        self.feature_encoding_ = encoding
        self._run_engine(algorithm, data, resume=resume, publish=publish,
                         checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                         evaluate_every=int(self.evaluate_every))
        self.n_tokens_ = data.n_tokens
        return self

    def _publish(self, state: DMRState, algorithm: DMRGibbs, data: DMRData,
                 vocabulary: np.ndarray) -> None:
        alpha = algorithm.alpha(state, data)
        self.components_ = topic_word_estimate(state.nwk, state.nk, algorithm.beta)
        self.doc_topic_ = doc_topic_estimate(state.ndk, alpha)
        self.topic_weights_ = topic_shares(state.nk)
        self.vocabulary_ = np.asarray(vocabulary, dtype=str)
        self.lambda_ = np.ascontiguousarray(state.lam.T)
        self.alpha_ = alpha.mean(axis=0)
        self.n_iter_ = state.iteration

    # ------------------------------------------------------------------ features
    def _features(self, features: Any, n_docs: int, what: str,
                  doc_ids: Any = None) -> np.ndarray:
        """New features encoded as at fit (n_docs, F)."""
        values, _, _ = _encode_features(features, n_docs, self.feature_encoding_, what,
                                        doc_ids, n_features=len(self.feature_names_))
        return values

    def _prior(self, values: np.ndarray) -> np.ndarray:
        return doc_priors(_design(values), np.ascontiguousarray(self.lambda_.T))

    def predict_alpha(self, features: Any) -> np.ndarray:
        """The Dirichlet prior alpha (n, K) of documents with these features."""
        self._check_fitted()
        n = _n_rows(features)
        return self._prior(self._features(features, n, "predict_alpha"))

    def summary(self, n_words: int = 8, n_features: int = 3) -> str:
        """Topics, then the strongest feature weights (largest |lambda_kf|) per topic."""
        text = super().summary(n_words)
        lam = np.asarray(self.lambda_)[:, 1:]
        names = np.asarray(self.feature_names_)
        if lam.shape[1] == 0:
            return text
        lines = [text, "strongest feature weights (lambda) per topic:"]
        for k in range(lam.shape[0]):
            order = np.argsort(-np.abs(lam[k]), kind="stable")[:n_features]
            shown = ", ".join(f"{names[f]} {lam[k, f]:+.2f}" for f in order)
            lines.append(f"  topic {k:2d} (intercept {self.lambda_[k, 0]:+.2f}): {shown}")
        return "\n".join(lines)

    def _check_loaded_fields(self, where: str) -> None:
        """The saved DataFrame encoding (``feature_encoding_``, JSON or None): its columns
        well formed and naming exactly ``feature_names_``."""
        super()._check_loaded_fields(where)
        encoding = getattr(self, "feature_encoding_", None)
        if encoding is None:
            return
        bad = f"{where}: attribute 'feature_encoding_'"
        spec = json.loads(encoding)
        columns = spec.get("columns") if isinstance(spec, dict) else None
        if not isinstance(columns, list):
            raise ValueError(f"{bad} must be an object with a list of 'columns'")
        for k, c in enumerate(columns):
            ok = isinstance(c, dict) and isinstance(c.get("name"), str)
            if ok and c.get("kind") == "numeric":
                ok = all(isinstance(c.get(f), int | float) and not isinstance(c.get(f), bool)
                         and np.isfinite(c.get(f)) for f in ("center", "scale")) \
                    and c["scale"] > 0
            elif ok and c.get("kind") == "categorical":
                ok = isinstance(c.get("levels"), list) and all(
                    isinstance(v, str) for v in c["levels"])
            else:
                ok = False
            if not ok:
                raise ValueError(f"{bad}: column {k} must be {{'name', 'kind': 'numeric', "
                                 f"'center', 'scale' > 0}} or {{'name', 'kind': "
                                 f"'categorical', 'levels': [text]}}, got {c!r}"[:300])
        names = _encoded_names(spec)
        if names != [str(n) for n in np.asarray(self.feature_names_).tolist()]:
            raise ValueError(f"{bad} encodes the features {names[:5]} but feature_names_ "
                             f"lists {np.asarray(self.feature_names_).tolist()[:5]}")

    @classmethod
    def _check_loaded(cls, where: str, arrays: dict[str, np.ndarray]) -> None:
        super()._check_loaded(where, arrays)
        lam, names = arrays.get("lambda_"), arrays.get("feature_names_")
        if lam is not None and names is not None and lam.shape[1] != names.size + 1:
            raise ValueError(f"{where}: lambda_ has {lam.shape[1]} columns for "
                             f"{names.size} features (expected {names.size + 1})")


# ---------------------------------------------------------------------- features
def _design(values: np.ndarray) -> np.ndarray:
    """(D, 1 + F): a column of ones (the intercept), then the features."""
    return np.ascontiguousarray(np.column_stack([np.ones(values.shape[0]), values]))


def _n_rows(features: Any) -> int:
    if isinstance(features, pd.DataFrame) or sp.issparse(features):
        return int(features.shape[0])
    try:
        arr = np.asarray(features)
    except (TypeError, ValueError):
        raise DataError("features must be an (n, n_features) array, sparse matrix or "
                        "DataFrame") from None
    return int(arr.shape[0]) if arr.ndim >= 1 else 1


def _doc_name(d: int, doc_ids: Any) -> str:
    if doc_ids is not None and len(doc_ids) > d and str(doc_ids[d]) != str(d):
        return f"document {d} (id {doc_ids[d]!r})"
    return f"document {d}"


def _check_finite(values: np.ndarray, names: list[str], what: str, doc_ids: Any) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        d, f = (int(i) for i in np.argwhere(bad)[0])
        kind = "NaN" if np.isnan(values[d, f]) else "infinite"
        raise DataError(f"{what}: features of {_doc_name(d, doc_ids)} are {kind} in "
                        f"column {names[f]!r}")


def _encode_features(features: Any, n_docs: int, encoding: str | None, what: str,
                     doc_ids: Any = None, n_features: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray, str | None]:
    """Features as float64 (n_docs, F), their names and the DataFrame encoding (JSON, or
    None for arrays).  ``encoding`` None at fit (learned here); at prediction the fitted
    one, and ``n_features`` the fitted F.  One-line DataError on bad input."""
    if features is None:
        raise DataError(f"{what}: features must be given")
    spec = json.loads(encoding) if encoding else None
    if isinstance(features, pd.DataFrame):
        if features.shape[0] != n_docs:
            raise DataError(f"{what}: features have {features.shape[0]} rows for {n_docs} "
                            "documents")
        labels = pd.Index([str(c) for c in features.columns])
        if labels.has_duplicates:
            name = labels[labels.duplicated()][0]
            raise DataError(f"{what}: features have {int((labels == name).sum())} columns "
                            f"named {name!r}; column names must be distinct (they name the "
                            "encoded features)")
        for name in features.columns:
            if features[name].dtype.kind == "c" or (
                    features[name].dtype == object
                    and features[name].map(lambda v: isinstance(v, complex)).any()):
                raise DataError(f"{what}: features column {str(name)!r} holds complex "
                                "numbers (real numbers or categories expected)")
        if spec is None and n_features is not None:      # fitted on an array: positional
            values = _frame_numbers(features, what)
            names = [str(c) for c in features.columns]
        else:
            if spec is None:
                spec = _learn_encoding(features)
                encoding = json.dumps(spec)
            values, names = _apply_encoding(features, spec, what, doc_ids)
    else:
        if sp.issparse(features):
            if features.dtype.kind not in "biuf":   # object, complex: before any scipy call
                raise DataError(f"{what}: features must hold real numbers, got a sparse "
                                f"matrix of dtype {features.dtype}")
            values = sp.csr_matrix(features)
            check_memory(16.0 * values.shape[0] * (values.shape[1] + 1),
                         f"{what}: features as a dense {values.shape[0]} x "
                         f"{values.shape[1]} design")
            values = values.astype(np.float64).toarray()
        else:
            try:
                values = as_real(features, f"{what}: features")
            except DataError as exc:
                raise DataError(f"{exc} (an (n_docs, n_features) array of numbers; pass "
                                "text columns in a DataFrame to one-hot encode them)"
                                ) from None
        if values.ndim == 1:
            values = values[:, None]
        if values.ndim != 2:
            raise DataError(f"{what}: features must be 2-D (n_docs, n_features), got "
                            f"{values.ndim} dimensions")
        if values.shape[0] != n_docs:
            raise DataError(f"{what}: features have {values.shape[0]} rows for {n_docs} "
                            "documents")
        names = ([f"x{j}" for j in range(values.shape[1])] if spec is None
                 else _encoded_names(spec))
        if encoding is None and n_features is None and values.size \
                and np.nanmax(np.abs(values)) > 50:
            logger.warning("%s: features reach |x| = %.3g; DMR's prior on lambda assumes "
                           "features of about unit scale (standardise them, or pass a "
                           "DataFrame, whose numeric columns are standardised)", what,
                           float(np.nanmax(np.abs(values))))
    if n_features is not None and values.shape[1] != n_features:
        raise DataError(f"{what}: features have {values.shape[1]} columns but the model "
                        f"was fitted on {n_features}")
    _check_finite(values, names, what, doc_ids)
    return np.ascontiguousarray(values), np.asarray(names, dtype=str), encoding


def _frame_numbers(frame: pd.DataFrame, what: str) -> np.ndarray:
    try:
        return frame.to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise DataError(f"{what}: the model was fitted on numeric features; this DataFrame "
                        "has non-numeric columns") from None


def _is_numeric(column: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column))


def _learn_encoding(frame: pd.DataFrame) -> dict[str, Any]:
    columns = []
    for name in frame.columns:
        col = frame[name]
        if pd.api.types.is_bool_dtype(col):
            columns.append({"name": str(name), "kind": "numeric", "center": 0.0,
                            "scale": 1.0})
        elif _is_numeric(col):
            x = col.to_numpy(dtype=np.float64, na_value=np.nan)
            x = x[np.isfinite(x)]
            center = float(x.mean()) if x.size else 0.0
            scale = float(x.std()) if x.size else 1.0
            columns.append({"name": str(name), "kind": "numeric", "center": center,
                            "scale": scale if scale > 0 else 1.0})
        else:
            levels = sorted({str(v) for v in col[col.notna()].tolist()})
            columns.append({"name": str(name), "kind": "categorical", "levels": levels})
    return {"columns": columns}


def _encoded_names(spec: dict[str, Any]) -> list[str]:
    names: list[str] = []
    for c in spec["columns"]:
        if c["kind"] == "numeric":
            names.append(c["name"])
        else:
            names.extend(f"{c['name']}={level}" for level in c["levels"])
    return names


def _apply_encoding(frame: pd.DataFrame, spec: dict[str, Any], what: str,
                    doc_ids: Any) -> tuple[np.ndarray, list[str]]:
    by_name = {str(c): c for c in frame.columns}
    blocks: list[np.ndarray] = []
    for c in spec["columns"]:
        if c["name"] not in by_name:
            raise DataError(f"{what}: features have no column {c['name']!r}")
        col = frame[by_name[c["name"]]]
        if c["kind"] == "numeric":
            try:
                x = col.to_numpy(dtype=np.float64, na_value=np.nan)
                blocks.append(((x - c["center"]) / c["scale"])[:, None])
            except (TypeError, ValueError):
                raise DataError(f"{what}: features column {c['name']!r} must hold numbers"
                                ) from None
            continue
        missing = np.flatnonzero(col.isna().to_numpy())
        if missing.size:
            raise DataError(f"{what}: features of {_doc_name(int(missing[0]), doc_ids)} "
                            f"are NaN in column {c['name']!r}")
        text = col.astype(str).to_numpy()
        levels = np.asarray(c["levels"], dtype=object)
        block = (text[:, None] == levels[None, :]).astype(np.float64)
        unseen = int(np.sum(block.sum(axis=1) == 0))
        if unseen:
            logger.info("%s: %d documents have a level of %r not seen at fit (all-zero "
                        "indicators)", what, unseen, c["name"])
        blocks.append(block)
    values = (np.hstack(blocks) if blocks else np.zeros((frame.shape[0], 0)))
    return values, _encoded_names(spec)
