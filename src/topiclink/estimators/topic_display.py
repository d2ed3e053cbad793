"""Words that display a topic: term-score, probability, FREX and lift.

The LMV paper (Tan, Chan & Zheng 2016; ``docs/design/lmv.md``, "Prediction and outputs")
labels its topics by term-score (Blei & Lafferty 2009) rather than raw probability: a word
frequent in every topic (``paper``, ``method``) is down-weighted, a word frequent in one
topic only rises.  FREX (Bischof & Airoldi 2012) and lift (Taddy 2013) are the other two
labels of R's ``stm`` (``labelTopics``; Roberts, Stewart & Tingley 2019), computed as its
``calcfrex`` and ``calclift`` do.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["RANKINGS", "frex_scores", "lift_scores", "ranking_scores", "term_scores",
           "top_word_indices", "top_words_by_term_score"]

#: how topic-displaying functions rank a topic's words (``by=``); the first is the default
RANKINGS = ("term-score", "probability", "frex", "lift")

#: FREX's weight on frequency against exclusivity (stm's ``frexweight``)
FREX_WEIGHT = 0.5


def _topic_word_means(model_or_topics: Any, func: str) -> np.ndarray:
    comps = getattr(model_or_topics, "components_", None)
    if comps is None:
        if hasattr(model_or_topics, "fit") and hasattr(model_or_topics, "get_params"):
            raise ValueError(f"{func}: {type(model_or_topics).__name__} is not fitted (no "
                             f"components_); fit it first")
        comps = model_or_topics
    try:
        lbar = np.asarray(comps, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{func}: expected a fitted topic model or a (K, V) array of "
                         f"topic-word means, got {type(model_or_topics).__name__}") from None
    if lbar.ndim != 2 or lbar.size == 0:
        raise ValueError(f"{func}: topic-word means must be a non-empty (K, V) array, got "
                         f"shape {lbar.shape}")
    if not np.all(np.isfinite(lbar)) or (lbar < 0).any():
        raise ValueError(f"{func}: topic-word means must be finite and >= 0")
    return lbar


def term_scores(model_or_topics: Any) -> np.ndarray:
    """Term-scores ``lbar_kv * log(lbar_kv / (prod_j lbar_jv)^(1/K))`` of every topic and word.

    Parameters
    ----------
    model_or_topics : fitted topic model (its ``components_``) or array (K, V)
        lbar, the topic-word means (rows are used as given, not renormalised).

    Returns
    -------
    ndarray of float64, shape (K, V)
        ``lbar * (log lbar - mean_k log lbar)``.  A zero mean scores 0 (x log x -> 0); a
        word with a zero mean in some other topic has a geometric mean of 0, and is
        scored as if that mean were the smallest positive float (very large scores).
    """
    lbar = _topic_word_means(model_or_topics, "term_scores")
    log_l = np.log(np.maximum(lbar, np.finfo(np.float64).tiny))
    return lbar * (log_l - log_l.mean(axis=0, keepdims=True))


def _average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..V of every row's values (ties at their mean rank, as R's ``frank``)."""
    order = np.argsort(values, axis=1, kind="stable")
    sorted_values = np.take_along_axis(values, order, axis=1)
    ranks = np.empty(values.shape)
    for k in range(values.shape[0]):
        row = sorted_values[k]
        starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
        ends = np.r_[starts[1:], row.size]
        mean_rank = (starts + ends + 1) / 2.0            # ranks starts+1 .. ends
        ranks[k, order[k]] = np.repeat(mean_rank, ends - starts)
    return ranks


def frex_scores(model_or_topics: Any, weight: float = FREX_WEIGHT) -> np.ndarray:
    """FREX of every topic and word: the weighted harmonic mean of the word's rank in the
    topic by probability and by exclusivity (Bischof & Airoldi 2012; stm's ``calcfrex``),

        FREX_kv = 1 / (w / F_kv + (1 - w) / E_kv),

    ``F_kv`` the rank of ``beta_kv`` among the topic's words divided by V (its empirical
    CDF), ``E_kv`` the same of the exclusivity ``beta_kv / sum_j beta_jv``; ``w`` weighs
    frequency (stm's default 0.5).  stm's ``labelTopics`` also shrinks the exclusivity of
    rare words towards uniform (James-Stein, from the corpus counts); these scores do not.
    """
    if not 0.0 <= float(weight) <= 1.0:
        raise ValueError(f"frex_scores: weight must be in [0, 1], got {weight!r}")
    beta = _topic_word_means(model_or_topics, "frex_scores")
    V = beta.shape[1]
    column = beta.sum(axis=0, keepdims=True)
    exclusivity = np.divide(beta, column, out=np.zeros_like(beta), where=column > 0)
    frequency_rank = _average_ranks(beta) / V
    exclusivity_rank = _average_ranks(exclusivity) / V
    return 1.0 / (weight / frequency_rank + (1.0 - weight) / exclusivity_rank)


def lift_scores(model_or_topics: Any, weights: Any = None) -> np.ndarray:
    """Lift of every topic and word: ``beta_kv / p_v``, the word's probability in the topic
    against its frequency in the corpus (Taddy 2013; stm's ``calclift``).  ``p_v`` is
    ``sum_k w_k beta_kv`` with ``w`` the topics' shares of the training tokens (a fitted
    model's ``topic_weights_``, taken from the model when given one), which is the
    corpus's word frequency up to the topics' smoothing; equal shares when unknown.
    Rare words rise: lift favours words seen almost only in one topic."""
    beta = _topic_word_means(model_or_topics, "lift_scores")
    K = beta.shape[0]
    if weights is None:
        weights = getattr(model_or_topics, "topic_weights_", None)
    w = np.full(K, 1.0 / K) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (K,) or not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"lift_scores: weights must be {K} non-negative shares of the "
                         f"topics, got shape {w.shape}")
    marginal = (w / w.sum()) @ beta
    return np.divide(beta, marginal, out=np.zeros_like(beta), where=marginal > 0)


def top_words_by_term_score(model: Any, n_words: int = 10) -> list[list[str]]:
    """The ``n_words`` words of highest term-score of every topic, best first.

    ``model`` needs ``components_`` and ``vocabulary_`` (any fitted topic model).
    """
    order = top_word_indices(model, n_words, "term-score", "top_words_by_term_score")
    vocab = getattr(model, "vocabulary_", None)
    if vocab is None or len(vocab) != np.shape(model.components_)[1]:
        raise ValueError("top_words_by_term_score: the model has no vocabulary_ matching its "
                         "components_; fit it first")
    return [[str(vocab[j]) for j in row] for row in order]


def top_word_indices(topics: Any, n_words: int = 10, by: str = "term-score",
                     func: str = "top_words", weights: Any = None) -> np.ndarray:
    """(K, n_words) word indices of every topic, best first: by term-score (the default;
    words frequent in every topic sink), probability, FREX or lift (:data:`RANKINGS`).

    ``topics``: a fitted topic model (its ``components_``) or a (K, V) array;
    ``weights``: the topics' shares of the tokens, for lift (:func:`lift_scores`).
    """
    if isinstance(n_words, bool) or not isinstance(n_words, int | np.integer) or n_words < 1:
        raise ValueError(f"{func}: n_words must be an integer >= 1, got {n_words!r}")
    scores = ranking_scores(topics, by, func, weights)
    return np.argsort(-scores, axis=1, kind="stable")[:, :int(n_words)]


def ranking_scores(topics: Any, by: str = "term-score", func: str = "top_words",
                   weights: Any = None) -> np.ndarray:
    """(K, V) scores that rank every topic's words ``by`` one of :data:`RANKINGS`
    (``topics`` and ``weights`` as :func:`top_word_indices`)."""
    if by not in RANKINGS:
        raise ValueError(f"{func}: by must be one of {', '.join(RANKINGS)}, got {by!r}")
    if by == "term-score":
        return term_scores(topics)
    if by == "frex":
        return frex_scores(topics)
    if by == "lift":
        return lift_scores(topics, weights)
    return _topic_word_means(topics, func)
