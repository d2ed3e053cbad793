"""Supervised topic models by augment-and-collapse Gibbs: gSLDA (logistic) and Gibbs MedLDA
(hinge), binary and one-vs-all multiclass.

Zhu, Zheng & Zhang, "Improved Bayesian Logistic Supervised Topic Models with Data
Augmentation" (ACL 2013) and Zhu, Chen, Perkins & Zhang, "Gibbs Max-margin Topic Models
with Data Augmentation" (JMLR 2014).  LDA over the documents; the label of document d
enters through omega_d = eta^T zbar_d with the regularised pseudo-likelihood
psi(y_d) = exp(c y_d omega_d) / (1 + exp(omega_d))^c (logistic) or exp(-2c max(0, l -
ytil_d omega_d)) (hinge).  After augmentation (:mod:`topiclink.inference.augment`) each
label is one "pair" of the relational Z kernel whose neighbour vector is eta, so the Z step
is :func:`topiclink.kernels.rtm.sweep_relational` (exact, O(K) per token) and eta is drawn
from its Gaussian conditional: precision I/nu^2 + sum_d b_d zbar_d zbar_d^T, mean
P^{-1} sum_d a_d zbar_d.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np
from sklearn.preprocessing import LabelEncoder

from topiclink.data.checks import DataError, check_n_topics, check_positive
from topiclink.data.corpus import as_corpus
from topiclink.inference.augment import LOSSES, augment, initial_coefficients, pseudo_loglik
from topiclink.inference.gibbs import run_chain
from topiclink.inference.weights import draw_weights
from topiclink.kernels import lda as lda_kernels
from topiclink.kernels import rtm as rtm_kernels
from topiclink.models.base import TopicModelBase
from topiclink.models.lda import _alpha_vector, infer_doc_topics
from topiclink.parallel import n_threads, resolve_n_jobs
from topiclink.persistence import register
from topiclink.random import RandomState, as_generator, kernel_state, spawn

__all__ = ["SupervisedTopicModel", "encode_labels"]

logger = logging.getLogger(__name__)


def _fit_binary(params: dict[str, Any], corpus: Any, y: np.ndarray,
                seed: np.random.SeedSequence) -> dict[str, Any]:
    """One binary chain (module-level so that joblib can run classes in processes)."""
    K = int(params["n_topics"])
    alpha = _alpha_vector(params["doc_topic_prior"], K)
    beta = float(params["topic_word_prior"])
    loss, c, l_cost = params["loss"], float(params["c"]), float(params["hinge_cost"])
    nu2 = float(params["weight_prior_var"])
    init_rng, chain_rng, eta_rng, aug_rng = spawn(np.random.default_rng(seed), 4)
    tok = corpus.tokens()
    D, V, N = corpus.n_docs, corpus.n_words, tok.words.size
    z = init_rng.integers(0, K, size=N).astype(np.int32)
    ndk = np.zeros((D, K), np.int32)
    nwk = np.zeros((V, K), np.int32)
    nk = np.zeros(K, np.int32)
    lda_kernels.init_counts(tok.words, tok.docs, z, ndk, nwk, nk)
    lengths = np.diff(tok.offsets).astype(np.float64)
    state = kernel_state(chain_rng)[0]
    yf = y.astype(np.float64)
    cs = np.full(D, c)
    a, b = initial_coefficients(loss, yf, cs, l_cost)
    # every document has one out-pair to the virtual node D, whose vector is eta
    out_ptr = np.arange(D + 1, dtype=np.int64)
    out_nbr = np.full(D, D, dtype=np.int64)
    in_ptr = np.zeros(D + 1, dtype=np.int64)
    empty_i = np.zeros(0, dtype=np.int64)
    empty_f = np.zeros(0)
    Uz = np.zeros((D + 1, K))
    Vz = np.zeros((D + 1, K))
    zeros_U = np.zeros((K, K))
    acc = {"eta": np.zeros(K), "nwk": np.zeros((V, K)), "n": 0}
    n_average = int(params["n_average"])
    max_iter = int(params["max_iter"])
    eta = np.zeros(K)

    def step(it: int) -> dict[str, float]:
        nonlocal eta, a, b
        t0 = time.perf_counter()
        zbar = ndk / lengths[:, None]
        P = zbar.T @ (b[:, None] * zbar)
        P[np.diag_indices_from(P)] += 1.0 / nu2
        eta = draw_weights(eta_rng, P, zbar.T @ a)
        t1 = time.perf_counter()
        Uz[D] = eta
        rtm_kernels.sweep_relational(tok.words, tok.offsets, z, ndk, nwk, nk, alpha, beta,
                                     state, zeros_U, Uz, Vz, out_ptr, out_nbr, a, b,
                                     in_ptr, empty_i, empty_f, empty_f, False)
        t2 = time.perf_counter()
        omega = (ndk / lengths[:, None]) @ eta
        a, b = augment(aug_rng, loss, omega, yf, cs, l_cost)
        t3 = time.perf_counter()
        if it >= max_iter - n_average:
            acc["eta"] += eta
            acc["nwk"] += nwk
            acc["n"] += 1
        return {"seconds_weights": t1 - t0, "seconds_z": t2 - t1, "seconds_lambda": t3 - t2,
                "label_loglik": pseudo_loglik(loss, omega, yf, cs, l_cost),
                "train_accuracy": float(np.mean((omega > 0) == (yf > 0.5)))}

    def loglik() -> float:
        return lda_kernels.log_joint(ndk, nwk, nk, alpha, beta) / N

    result = run_chain(None, step, loglik, max_iter, params.get("callbacks"),
                       params["verbose"], int(params["evaluate_every"]),
                       desc=f"{'gSLDA' if loss == 'logistic' else 'Gibbs MedLDA'}")
    n_acc = max(acc["n"], 1)
    nwk_hat = acc["nwk"] / n_acc
    return {
        "eta": acc["eta"] / n_acc,
        "components": (nwk_hat.T + beta) / (nwk_hat.sum(axis=0)[:, None] + V * beta),
        "doc_topic": (ndk + alpha) / (ndk + alpha).sum(axis=1, keepdims=True),
        "trace": result.trace, "n_iter": result.n_iter,
    }


def encode_labels(y: Any, n_docs: int) -> tuple[LabelEncoder, np.ndarray]:
    """Validate the labels of ``n_docs`` documents and encode them as 0..n_classes-1.

    One-line :class:`DataError` for a length mismatch, a non-finite label or a single
    class.  Returns the fitted encoder (``classes_``) and the integer codes.
    """
    y = np.asarray(y)
    if y.shape != (n_docs,):
        raise DataError(f"y has {y.size} labels for {n_docs} documents")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        bad = int(np.flatnonzero(~np.isfinite(y))[0])
        raise DataError(f"y: label of document {bad} is {y[bad]}")
    encoder = LabelEncoder().fit(y)
    codes = encoder.transform(y)
    if encoder.classes_.size < 2:
        raise DataError(f"y has a single class {encoder.classes_[0]!r}; need at least 2")
    return encoder, codes


@register
class SupervisedTopicModel(TopicModelBase):
    """Supervised LDA with a logistic (gSLDA) or hinge (Gibbs MedLDA) label term.

    Binary labels train one chain; more classes train one binary chain per class
    (one-vs-all, run in ``n_jobs`` processes) and predict the arg-max decision value.

    Parameters
    ----------
    n_topics : int, default 10
    loss : {"logistic", "hinge"}
    c : float, default 1.0
        Regularisation constant: the weight of one label against the words (paper: 25
        binary, 256 multiclass; c = 1 is plain sLDA).
    hinge_cost : float, default 1.0
        l, the margin of the hinge loss.
    weight_prior_var : float, default 1.0
        nu^2 of the classifier prior eta ~ N(0, nu^2 I).
    doc_topic_prior, topic_word_prior : alpha (default 0.1) and beta (0.01)
    max_iter : int, default 200
    n_average : int, default 1
        Average eta and the topics over the last iterations.
    transform_iter : int, default 50
    n_jobs : int, default 1
        Processes for fitting the one-vs-all classes, threads for predicting them (results
        do not depend on it).
    evaluate_every, random_state, verbose, callbacks : as for LDA

    Attributes
    ----------
    classes_ : ndarray of the labels
    coef_ : (n_classifiers, K) eta of each binary classifier (one row when binary)
    components_ : (n_classifiers, K, V) topics of each classifier's chain; ``components_``
        of the first chain is also exposed as ``topic_word_`` for the usual verbs
    trace_ : per-iteration figures of the first chain (``train_accuracy``, ``label_loglik``,
        step timings, ``log_likelihood``)
    """

    _saved_arrays: ClassVar[tuple[str, ...]] = (
        "components_", "all_components_", "coef_", "classes_", "vocabulary_", "alpha_")
    _saved_scalars: ClassVar[tuple[str, ...]] = ("n_iter_",)

    def __init__(self, n_topics: int = 10, loss: str = "logistic", c: float = 1.0,
                 hinge_cost: float = 1.0, weight_prior_var: float = 1.0,
                 doc_topic_prior: float | None = None, topic_word_prior: float = 0.01,
                 max_iter: int = 200, n_average: int = 1, transform_iter: int = 50,
                 n_jobs: int = 1, evaluate_every: int = 10, random_state: RandomState = None,
                 verbose: bool = False, callbacks: list[Any] | None = None) -> None:
        self.n_topics = n_topics
        self.loss = loss
        self.c = c
        self.hinge_cost = hinge_cost
        self.weight_prior_var = weight_prior_var
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.max_iter = max_iter
        self.n_average = n_average
        self.transform_iter = transform_iter
        self.n_jobs = n_jobs
        self.evaluate_every = evaluate_every
        self.random_state = random_state
        self.verbose = verbose
        self.callbacks = callbacks

    def _validate(self) -> None:
        K = check_n_topics(self.n_topics)
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be 'logistic' or 'hinge', got {self.loss!r}")
        _alpha_vector(self.doc_topic_prior, K)
        check_positive(self.topic_word_prior, "topic_word_prior")
        check_positive(self.c, "c")
        check_positive(self.weight_prior_var, "weight_prior_var")
        if check_positive(self.hinge_cost, "hinge_cost") < 1 and self.loss == "hinge":
            raise ValueError(f"hinge_cost must be >= 1, got {self.hinge_cost}")
        for name in ("max_iter", "n_average", "transform_iter"):
            v = getattr(self, name)
            if not isinstance(v, int | np.integer) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.n_average > self.max_iter:
            raise ValueError("n_average must not exceed max_iter")

    def fit(self, X: Any, y: Any) -> SupervisedTopicModel:
        """Fit to documents ``X`` with labels ``y`` (any hashable labels, >= 2 classes)."""
        self._validate()
        corpus = as_corpus(X)
        corpus.check_no_empty("fit")
        encoder, codes = encode_labels(y, corpus.n_docs)
        n_classes = encoder.classes_.size
        targets = [codes == 1] if n_classes == 2 else [codes == k for k in range(n_classes)]
        seeds = as_generator(self.random_state).bit_generator.seed_seq.spawn(len(targets)) \
            if not isinstance(self.random_state, np.random.Generator) \
            else [np.random.SeedSequence(int(v)) for v in
                  self.random_state.integers(0, 2**63 - 1, size=len(targets))]
        params = self.get_params(deep=False)
        params["callbacks"] = self.callbacks if len(targets) == 1 else None
        params["verbose"] = bool(self.verbose) and len(targets) == 1
        if len(targets) > 1 and self.n_jobs not in (None, 1):
            from joblib import Parallel, delayed

            fits = Parallel(n_jobs=resolve_n_jobs(self.n_jobs))(
                delayed(_fit_binary)(params, corpus, t.astype(np.int8), s)
                for t, s in zip(targets, seeds, strict=True))
        else:
            fits = [_fit_binary(params, corpus, t.astype(np.int8), s)
                    for t, s in zip(targets, seeds, strict=True)]
        self.classes_ = encoder.classes_
        self.coef_ = np.stack([f["eta"] for f in fits])
        self.all_components_ = np.stack([f["components"] for f in fits])
        self.components_ = self.all_components_[0]
        self.doc_topic_ = fits[0]["doc_topic"]
        self.trace_ = fits[0]["trace"]
        self.n_iter_ = fits[0]["n_iter"]
        self.vocabulary_ = np.asarray(corpus.vocabulary, dtype=str)
        self.alpha_ = _alpha_vector(self.doc_topic_prior, int(self.n_topics))
        return self

    # ------------------------------------------------------------------ prediction
    def _zbar(self, corpus: Any, m: int, rng: np.random.Generator) -> np.ndarray:
        return infer_doc_topics(corpus, np.ascontiguousarray(self.all_components_[m].T),
                                np.asarray(self.alpha_), rng, n_iter=self.transform_iter,
                                smooth=False)

    def transform(self, X: Any) -> np.ndarray:
        """Topic proportions (n_docs, K) of new documents under the first chain's topics."""
        self._check_fitted()
        corpus = self._as_model_corpus(X)
        return infer_doc_topics(corpus, np.ascontiguousarray(self.components_.T),
                                np.asarray(self.alpha_), as_generator(self.random_state),
                                n_iter=self.transform_iter)

    def decision_function(self, X: Any) -> np.ndarray:
        """eta^T zbar of each document: (n_docs,) when binary, else (n_docs, n_classes);
        each classifier infers zbar under its own topics."""
        self._check_fitted()
        corpus = self._as_model_corpus(X)
        n_models = self.coef_.shape[0]
        rngs = spawn(as_generator(self.random_state), n_models)
        threads = min(n_threads(resolve_n_jobs(self.n_jobs)), n_models)

        def score(m: int) -> np.ndarray:
            return self._zbar(corpus, m, rngs[m]) @ self.coef_[m]

        if threads > 1:     # the inference kernel releases the GIL; one stream per class
            with ThreadPoolExecutor(threads, thread_name_prefix="topiclink") as pool:
                columns = list(pool.map(score, range(n_models)))
        else:
            columns = [score(m) for m in range(n_models)]
        scores = np.column_stack(columns)
        return scores[:, 0] if self.classes_.size == 2 else scores

    def predict(self, X: Any) -> np.ndarray:
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (logistic loss only): sigmoid for binary, normalised
        one-vs-all sigmoids for more classes."""
        if self.loss != "logistic":
            raise ValueError("the hinge loss gives decision values, not probabilities; "
                             "use decision_function()")
        scores = self.decision_function(X)
        p = 0.5 * (1.0 + np.tanh(0.5 * scores))
        if self.classes_.size == 2:
            return np.column_stack([1.0 - p, p])
        return p / p.sum(axis=1, keepdims=True)

    def score(self, X: Any, y: Any) -> float:
        """Accuracy."""
        from topiclink.metrics import accuracy

        return float(accuracy(np.asarray(y), self.predict(X)))

    def summary(self, n_words: int = 8) -> str:
        text = super().summary(n_words)
        lines = [f"{'gSLDA' if self.loss == 'logistic' else 'Gibbs MedLDA'} (c={self.c}), "
                 f"classes {list(self.classes_)}", text]
        names = [str(self.classes_[1])] if self.classes_.size == 2 else \
            [str(c) for c in self.classes_]
        for m, name in enumerate(names):
            eta = self.coef_[m]
            order = np.argsort(eta)
            words = [" ".join(w[:3]) for w in self._top_words_of(m)]
            lines.append(f"class {name}: most positive topics "
                         + ", ".join(f"{k} ({eta[k]:+.2f}: {words[k]})" for k in order[::-1][:2])
                         + "; most negative "
                         + ", ".join(f"{k} ({eta[k]:+.2f}: {words[k]})" for k in order[:2]))
        return "\n".join(lines)

    def _top_words_of(self, m: int, n: int = 3) -> list[list[str]]:
        comps = self.all_components_[m]
        order = np.argsort(-comps, axis=1, kind="stable")[:, :n]
        return [[str(self.vocabulary_[j]) for j in row] for row in order]
