"""Choosing the number of topics K as R's ``stm::searchK`` does (Roberts, Stewart &
Tingley 2019): fit the model at every K on the same training documents and compare the
held-out likelihood, semantic coherence, exclusivity and residual dispersion.

What is computed for each K (the estimator cloned with ``n_topics=K`` and fitted on the
training documents of one seeded document split):

- ``heldout_loglik``: the held-out log-likelihood per token by document completion on the
  held-out documents, the model's own :meth:`log_likelihood_completion` (stm's
  ``eval.heldout`` completes held-out *tokens* of documents in training instead);
- ``coherence``: NPMI coherence of the topics' 10 most probable words against the training
  documents, the mean over the topics, with gensim's conventions
  (:func:`topiclink.metrics.npmi_coherence` ``convention="gensim"``: the numbers of
  gensim's ``CoherenceModel(coherence="c_npmi")`` with one window per document); stm's
  ``semanticCoherence`` is Mimno et al.'s (2011) log conditional probability instead;
- ``exclusivity``: stm's ``exclusivity(model, M=10, frexw=0.7)`` (R/exclusivity.R), the mean
  over the topics of the sum of the FREX scores (weight 0.7 on exclusivity) of the topic's
  10 most probable words (:func:`exclusivity`);
- ``residual_dispersion``: stm's ``checkResiduals`` (R/residuals.R; Taddy 2012, after
  maptpx), the dispersion :math:`\\hat\\sigma^2` of the multinomial residuals of the
  training documents (:func:`residual_dispersion`): about 1 when the model fits, larger
  when K is too small;
- ``fit_seconds``: the wall time of ``fit``.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.corpus import Corpus, as_corpus

__all__ = ["SearchK", "exclusivity", "residual_dispersion", "search_k"]

#: the columns of :attr:`SearchK.table`, in order
COLUMNS = ("K", "heldout_loglik", "heldout_tokens", "coherence", "exclusivity",
           "residual_dispersion", "residual_df", "fit_seconds")

#: top words per topic of the coherence and the exclusivity (stm's ``M``)
TOP_WORDS = 10

#: stm's ``exclusivity`` weight on exclusivity against frequency (``frexw``)
EXCLUSIVITY_WEIGHT = 0.7

#: documents of the residuals computed at once (dense (chunk, V) expected frequencies)
_RESIDUAL_CHUNK = 256

#: the version of the checkpoint rows (a folder of another version is refused)
_CHECKPOINT_VERSION = 1

#: the panels of :meth:`SearchK.plot`: column, title
_PANELS = (("heldout_loglik", "Held-out log-likelihood per token"),
           ("coherence", "Semantic coherence (NPMI)"),
           ("exclusivity", "Exclusivity (FREX)"),
           ("residual_dispersion", "Residual dispersion"))


def _topic_word_probabilities(topic_word: Any, func: str) -> np.ndarray:
    """(K, V) rows normalised to sum to 1 (stm's ``exp(logbeta)``)."""
    beta = np.asarray(topic_word, dtype=np.float64)
    if beta.ndim != 2 or beta.size == 0 or not np.all(np.isfinite(beta)) \
            or (beta < 0).any():
        raise ValueError(f"{func}: topic-word weights must be a non-empty (K, V) array of "
                         f"finite numbers >= 0")
    total = beta.sum(axis=1, keepdims=True)
    if (total <= 0).any():
        raise ValueError(f"{func}: a topic has no weight on any word")
    return beta / total


def exclusivity(topic_word: Any, top_n: int = TOP_WORDS,
                frex_weight: float = EXCLUSIVITY_WEIGHT) -> np.ndarray:
    """stm's ``exclusivity(model, M, frexw)`` of every topic (R/exclusivity.R).

    With :math:`\\beta` the topic-word probabilities, the FREX of word :math:`v` in topic
    :math:`k` is :math:`1 / (w / E_{kv} + (1 - w) / F_{kv})`, :math:`E_{kv}` the rank of
    the exclusivity :math:`\\beta_{kv} / \\sum_j \\beta_{jv}` among the topic's words and
    :math:`F_{kv}` that of :math:`\\beta_{kv}`, both divided by V (ties at their mean
    rank, as R's ``rank``), :math:`w` = ``frex_weight`` (stm's ``frexw``, 0.7); a topic's
    exclusivity is the *sum* of the FREX of its ``top_n`` most probable words (ties to
    the lower word index).  :func:`search_k` reports the mean over the topics, as
    ``searchK`` does.

    Parameters
    ----------
    topic_word : array_like (K, V)
        Topic-word weights (a fitted model's ``components_``), normalised by row here.
    top_n : int
        stm's ``M``, ``1 <= top_n <= V``.
    frex_weight : float in [0, 1]
        The weight on exclusivity.

    Returns
    -------
    ndarray (K,)
    """
    from topiclink.estimators.topic_display import frex_scores

    beta = _topic_word_probabilities(topic_word, "exclusivity")
    if isinstance(top_n, bool) or not isinstance(top_n, numbers.Integral) \
            or not 1 <= top_n <= beta.shape[1]:
        raise ValueError(f"exclusivity: top_n must be an integer in 1..{beta.shape[1]}, "
                         f"got {top_n!r}")
    if not 0.0 <= float(frex_weight) <= 1.0:
        raise ValueError(f"exclusivity: frex_weight must be in [0, 1], got {frex_weight!r}")
    # frex_scores weighs frequency: stm's weight on exclusivity w is 1 - w on frequency
    frex = frex_scores(beta, weight=1.0 - float(frex_weight))
    top = np.argsort(-beta, axis=1, kind="stable")[:, :int(top_n)]
    return np.take_along_axis(frex, top, axis=1).sum(axis=1)


def residual_dispersion(topic_word: Any, doc_topic: Any,
                        counts: sp.sparray | sp.spmatrix | np.ndarray,
                        tol: float = 0.01) -> tuple[float, int]:
    """stm's ``checkResiduals`` (R/residuals.R; Taddy 2012, Section 4.1, as in maptpx):
    the dispersion of the multinomial residuals and its degrees of freedom.

    With :math:`q_d = \\theta_d \\beta` the fitted word probabilities of document
    :math:`d` of length :math:`m_d` and counts :math:`x_{dv}`,

    .. math::

        D = \\sum_d \\sum_v \\frac{(x_{dv} - m_d q_{dv})^2}{m_d q_{dv} (1 - q_{dv})},
        \\qquad \\hat\\sigma^2 = \\frac{D}{\\hat N - V - [n (K - 1) + K (V - 1)]},

    :math:`\\hat N` the number of pairs with :math:`m_d q_{dv} >` ``tol``, :math:`n` the
    number of documents.  Returns :math:`(\\hat\\sigma^2, \\text{df})`; the dispersion is
    NaN when the degrees of freedom are not positive (too many parameters for the data).

    Parameters
    ----------
    topic_word : array_like (K, V)
        Topic-word weights (normalised by row here).
    doc_topic : array_like (n, K)
        The documents' topic proportions (a fitted model's ``doc_topic_``).
    counts : sparse or dense (n, V)
        The documents' word counts.
    tol : float
        stm's ``tol``.
    """
    beta = _topic_word_probabilities(topic_word, "residual_dispersion")
    theta = np.asarray(doc_topic, dtype=np.float64)
    x = sp.csr_array(counts, dtype=np.float64)
    n, V = x.shape
    K = beta.shape[0]
    if theta.shape != (n, K) or V != beta.shape[1]:
        raise ValueError(f"residual_dispersion: doc_topic {theta.shape}, topic_word "
                         f"{beta.shape} and counts {x.shape} do not match")
    m = np.asarray(x.sum(axis=1)).ravel()
    total, n_hat = 0.0, 0
    for start in range(0, n, _RESIDUAL_CHUNK):
        stop = min(start + _RESIDUAL_CHUNK, n)
        q = theta[start:stop] @ beta                      # (chunk, V)
        mc = m[start:stop, None]
        n_hat += int(np.count_nonzero(q * mc > tol))
        block = x[start:stop].tocoo()
        qx = q[block.row, block.col]
        mx = mc[block.row, 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            # stm's sum((x^2 - 2 x q m) / (m q (1 - q))) + sum(m q / (1 - q)), the first
            # over the nonzero counts only (it is 0 elsewhere)
            seen = np.sum((block.data ** 2 - 2.0 * block.data * qx * mx)
                          / (mx * qx * (1.0 - qx)))
            total += float(seen) + float(np.sum(mc * q / (1.0 - q)))
    df = n_hat - V - (n * (K - 1) + K * (V - 1))
    return (total / df if df > 0 else float("nan")), int(df)


@dataclass
class SearchK:
    """The result of :func:`search_k`: one row per K in :attr:`table` (columns
    :data:`COLUMNS`, in the order of the K asked for) and the document split used
    (positions in the corpus)."""

    table: pd.DataFrame
    train_index: np.ndarray = field(repr=False)
    test_index: np.ndarray = field(repr=False)

    def plot(self, figsize: tuple[float, float] = (9.0, 6.5)) -> Any:
        """A matplotlib figure of the held-out likelihood, coherence, exclusivity and
        residual dispersion against K, one panel each (as stm's ``plot.searchK``)."""
        import matplotlib.pyplot as plt  # falls back to Agg when there is no display

        fig, axes = plt.subplots(2, 2, figsize=figsize, sharex=True)
        table = self.table.sort_values("K")
        for ax, (column, title) in zip(axes.ravel(), _PANELS, strict=True):
            ax.plot(table["K"], table[column], marker="o")
            ax.set_title(title, fontsize=10)
            ax.grid(alpha=0.3)
        for ax in axes[-1]:
            ax.set_xlabel("Number of topics K")
        fig.suptitle("Diagnostic values by number of topics")
        fig.tight_layout()
        return fig


# ------------------------------------------------------------------------ checks
def _check_ks(K: Any) -> list[int]:
    if isinstance(K, numbers.Integral) and not isinstance(K, bool):
        K = [K]
    try:
        values = list(K)
    except TypeError:
        raise ValueError(f"search_k: K must be a list of integers >= 2, got {K!r}") from None
    if not values:
        raise ValueError("search_k: K is empty; give the numbers of topics to compare")
    for k in values:
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise ValueError(f"search_k: K must be integers, got {k!r}")
        if k < 2:
            raise ValueError(f"search_k: every K must be >= 2, got {k}")
    seen = [k for i, k in enumerate(values) if k in values[:i]]
    if seen:
        raise ValueError(f"search_k: K {seen[0]} is given twice")
    return [int(k) for k in values]


def _check_share(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not 0.0 < float(value) < 1.0:
        raise ValueError(f"search_k: {name} must be in (0, 1), got {value!r}")
    return float(value)


def _check_estimator(estimator: Any) -> None:
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    if "n_topics" not in params:
        raise ValueError(f"search_k: {type(estimator).__name__} has no n_topics parameter; "
                         "give a topic model (e.g. LDA())")
    if not hasattr(estimator, "log_likelihood_completion"):
        raise ValueError(f"search_k: {type(estimator).__name__} has no "
                         "log_likelihood_completion (held-out likelihood)")


def _as_documents(X: Any) -> Corpus:
    corpus = getattr(X, "corpus", None)       # a Dataset
    return as_corpus(corpus if isinstance(corpus, Corpus) else X)


def split_documents(n_docs: int, held_out: float, random_state: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """The training and held-out document positions of :func:`search_k` (a permutation
    drawn from ``numpy.random.default_rng(random_state)``, each part sorted)."""
    n_held = int(round(held_out * n_docs))
    if n_held < 1 or n_docs - n_held < 2:
        raise ValueError(f"search_k: the corpus is too small: {n_docs} documents give "
                         f"{n_held} held out and {n_docs - n_held} for training at "
                         f"held_out={held_out:g} (need >= 1 and >= 2)")
    order = np.random.default_rng(random_state).permutation(n_docs)
    return np.sort(order[n_held:]), np.sort(order[:n_held])


# ------------------------------------------------------------------------ one K
def _evaluate_k(estimator: Any, k: int, train: Corpus, test: Corpus, fraction: float,
                random_state: int) -> dict[str, Any]:
    """Fit a clone of ``estimator`` with ``n_topics=k`` on ``train``; its row."""
    from sklearn.base import clone

    from topiclink.metrics import npmi_coherence

    model = clone(estimator).set_params(n_topics=k)
    if "random_state" in model.get_params(deep=False) \
            and model.get_params(deep=False)["random_state"] is None:
        model.set_params(random_state=random_state)
    start = time.perf_counter()
    model.fit(train)
    seconds = time.perf_counter() - start
    beta = np.asarray(model.components_, dtype=np.float64)
    ll, n_tokens = model.log_likelihood_completion(test, fraction, random_state)
    theta = getattr(model, "doc_topic_", None)
    if theta is None or np.shape(theta) != (train.n_docs, k):
        theta = model.transform(train)
    dispersion, df = residual_dispersion(beta, theta, train.counts)
    coherence = npmi_coherence(beta, train.counts, top_n=min(TOP_WORDS, beta.shape[1]),
                               convention="gensim")
    return {"K": k, "heldout_loglik": ll / max(n_tokens, 1), "heldout_tokens": n_tokens,
            "coherence": float(np.mean(coherence)),
            "exclusivity": float(np.mean(exclusivity(beta, min(TOP_WORDS, beta.shape[1])))),
            "residual_dispersion": dispersion, "residual_df": df, "fit_seconds": seconds}


# ------------------------------------------------------------------------ checkpoint
def _fingerprint(corpus: Corpus) -> str:
    counts = corpus.counts
    digest = hashlib.sha256()
    for part in (counts.indptr, counts.indices, counts.data):
        digest.update(np.ascontiguousarray(part).tobytes())
    digest.update(repr(counts.shape).encode())
    return digest.hexdigest()


def _settings(estimator: Any, corpus: Corpus, held_out: float, fraction: float,
              random_state: int) -> dict[str, Any]:
    params = {name: repr(value) for name, value in
              sorted(estimator.get_params(deep=False).items()) if name != "n_topics"}
    return {"version": _CHECKPOINT_VERSION, "estimator": type(estimator).__qualname__,
            "params": params, "data": _fingerprint(corpus), "held_out": held_out,
            "fraction": fraction, "random_state": random_state}


class _Checkpoint:
    """A folder of one search: ``settings.json`` and a ``K=<k>.json`` row per finished
    K, each written atomically (:func:`topiclink.persistence.atomic_write`)."""

    def __init__(self, folder: Path, settings: dict[str, Any]) -> None:
        from topiclink.persistence import atomic_write

        self.folder = folder
        self._write = atomic_write
        path = folder / "settings.json"
        if path.is_file():
            try:
                saved = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise ValueError(f"search_k: cannot read {path}: {exc}") from None
            if saved != settings:
                changed = sorted(k for k in settings if saved.get(k) != settings[k])
                raise ValueError(f"search_k: checkpoint_dir {folder} holds a search with "
                                 f"other settings ({', '.join(changed) or 'version'}); "
                                 "give another folder or remove it")
        else:
            self._dump(path, settings)

    def _dump(self, path: Path, value: dict[str, Any]) -> None:
        text = json.dumps(value, indent=1, sort_keys=True) + "\n"
        self._write(path, text.encode("utf-8"), what="the search_k checkpoint")

    def row(self, k: int) -> dict[str, Any] | None:
        path = self.folder / f"K={k}.json"
        if not path.is_file():
            return None
        row = json.loads(path.read_text(encoding="utf-8"))
        return {c: (float("nan") if row[c] is None else row[c]) for c in COLUMNS}

    def record(self, row: dict[str, Any]) -> None:
        clean = {c: (None if isinstance(row[c], float) and not np.isfinite(row[c])
                     else row[c]) for c in COLUMNS}
        self._dump(self.folder / f"K={row['K']}.json", clean)


# ------------------------------------------------------------------------ search
def _run(estimator: Any, ks: Sequence[int], train: Corpus, test: Corpus, fraction: float,
         random_state: int, n_jobs: int, prefer: str) -> Iterable[dict[str, Any]]:
    """The rows of ``ks`` as they finish (any order when parallel)."""
    if n_jobs == 1 or len(ks) <= 1:
        return (_evaluate_k(estimator, k, train, test, fraction, random_state) for k in ks)
    from joblib import Parallel, delayed

    return Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator_unordered")(
        delayed(_evaluate_k)(estimator, k, train, test, fraction, random_state)
        for k in ks)


def search_k(estimator: Any, X: Any, K: Iterable[int] = (5, 10, 20), *,
             held_out: float = 0.2, fraction: float = 0.5, random_state: int = 0,
             n_jobs: int = 1, prefer: str = "processes",
             checkpoint_dir: str | Path | None = None, progress: bool = True,
             on_row: Callable[[dict[str, Any]], None] | None = None) -> SearchK:
    """Fit ``estimator`` at every number of topics in ``K`` and compare them, as R's
    ``stm::searchK`` (the measures: :mod:`topiclink.analysis.search_k`).

    A seeded share ``held_out`` of the documents is held out (the same for every K); for
    each K a clone of ``estimator`` with ``n_topics=K`` (and ``random_state`` =
    ``random_state`` when the estimator's is None) is fitted on the others.  The held-out
    log-likelihood per token is the model's ``log_likelihood_completion(held-out
    documents, fraction, random_state)`` divided by the held-out token count; the
    coherence is the mean NPMI of the topics' 10 most probable words against the
    training documents with gensim's conventions (``npmi_coherence(...,
    convention="gensim")``, equal to gensim's ``c_npmi`` with one window per document);
    exclusivity and residual dispersion are stm's (:func:`exclusivity`,
    :func:`residual_dispersion` on the training documents).

    Parameters
    ----------
    estimator : topic model
        An unfitted estimator with an ``n_topics`` parameter (e.g. ``LDA(max_iter=100)``).
    X : Corpus, sparse matrix, array or DataFrame (documents x words), or a Dataset
    K : iterable of int
        Numbers of topics, each >= 2, no duplicates; the table keeps their order.
    held_out : float in (0, 1)
        Share of the documents held out for the held-out likelihood.
    fraction : float in (0, 1)
        Share of each held-out document's tokens predicted from the rest.
    random_state : int
        Seed of the split, of the completion and of the fits (estimator seed None).
    n_jobs : int
        K values fitted at once (-1: all cores); the table does not depend on it.
    prefer : "processes" or "threads"
        How ``n_jobs > 1`` runs (joblib).
    checkpoint_dir : path, optional
        Folder where each finished K's row is written (JSON, atomically); a rerun with
        the same estimator, data and settings skips them (other settings are refused).
    progress : bool
        A tqdm progress bar over K.
    on_row : callable, optional
        Called with each new row as it finishes.

    Returns
    -------
    SearchK
        ``.table`` (one row per K: :data:`COLUMNS`) and ``.plot()``.
    """
    _check_estimator(estimator)
    ks = _check_ks(K)
    held_out = _check_share(held_out, "held_out")
    fraction = _check_share(fraction, "fraction")
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral) \
            or random_state < 0:
        raise ValueError(f"search_k: random_state must be an integer >= 0, got "
                         f"{random_state!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) \
            or not (n_jobs >= 1 or n_jobs == -1):
        raise ValueError(f"search_k: n_jobs must be >= 1 or -1, got {n_jobs!r}")
    if prefer not in ("processes", "threads"):
        raise ValueError(f"search_k: prefer must be 'processes' or 'threads', got "
                         f"{prefer!r}")
    corpus = _as_documents(X)
    if corpus.n_words < 2:
        raise ValueError(f"search_k: the corpus is too small: {corpus.n_words} word(s)")
    train_index, test_index = split_documents(corpus.n_docs, held_out, int(random_state))
    train, test = corpus.subset(train_index), corpus.subset(test_index)
    if train.n_tokens == 0 or test.n_tokens == 0:
        raise ValueError("search_k: the corpus is too small: the training or the held-out "
                         "documents have no tokens")
    checkpoint = None if checkpoint_dir is None else _Checkpoint(
        Path(checkpoint_dir), _settings(estimator, corpus, held_out, fraction,
                                        int(random_state)))
    rows: dict[int, dict[str, Any]] = {}
    if checkpoint is not None:
        rows = {k: row for k in ks if (row := checkpoint.row(k)) is not None}
    todo = [k for k in ks if k not in rows]
    from tqdm.auto import tqdm

    with tqdm(total=len(ks), initial=len(rows), desc="search_k", unit="K",
              disable=not progress) as bar:
        for row in _run(estimator, todo, train, test, fraction, int(random_state),
                        int(n_jobs), prefer):
            rows[row["K"]] = row
            if checkpoint is not None:
                checkpoint.record(row)
            if on_row is not None:
                on_row(row)
            bar.update(1)
            bar.set_postfix(K=row["K"])
    table = pd.DataFrame([rows[k] for k in ks], columns=list(COLUMNS))
    return SearchK(table, train_index, test_index)
