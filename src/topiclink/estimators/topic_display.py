"""Words that display a topic: the term-score of Blei & Lafferty (2009).

The LMV paper (Tan, Chan & Zheng 2016; ``docs/design/lmv.md``, "Prediction and outputs")
labels its topics by term-score rather than raw probability: a word frequent in every
topic (``paper``, ``method``) is down-weighted, a word frequent in one topic only rises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["RANKINGS", "term_scores", "top_word_indices", "top_words_by_term_score"]

#: how topic-displaying functions rank a topic's words (``by=``); the first is the default
RANKINGS = ("term-score", "probability")


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
                     func: str = "top_words") -> np.ndarray:
    """(K, n_words) word indices of every topic, best first: by term-score (the default;
    words frequent in every topic sink) or by probability (``by="probability"``).

    ``topics``: a fitted topic model (its ``components_``) or a (K, V) array.
    """
    if isinstance(n_words, bool) or not isinstance(n_words, int | np.integer) or n_words < 1:
        raise ValueError(f"{func}: n_words must be an integer >= 1, got {n_words!r}")
    if by not in RANKINGS:
        raise ValueError(f"{func}: by must be one of {', '.join(RANKINGS)}, got {by!r}")
    scores = term_scores(topics) if by == "term-score" else _topic_word_means(topics, func)
    return np.argsort(-scores, axis=1, kind="stable")[:, :int(n_words)]
