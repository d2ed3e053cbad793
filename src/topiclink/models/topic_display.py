"""Words that display a topic: the term-score of Blei & Lafferty (2009).

The LMV paper (Tan, Chan & Zheng 2016; ``design/models/lmv.md``, "Prediction and outputs")
labels its topics by term-score rather than raw probability: a word frequent in every
topic (``paper``, ``method``) is down-weighted, a word frequent in one topic only rises.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["term_scores", "top_words_by_term_score"]


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
    if isinstance(n_words, bool) or not isinstance(n_words, int | np.integer) or n_words < 1:
        raise ValueError(f"top_words_by_term_score: n_words must be an integer >= 1, "
                         f"got {n_words!r}")
    scores = term_scores(model)
    vocab = getattr(model, "vocabulary_", None)
    if vocab is None or len(vocab) != scores.shape[1]:
        raise ValueError("top_words_by_term_score: the model has no vocabulary_ matching its "
                         "components_; fit it first")
    order = np.argsort(-scores, axis=1, kind="stable")[:, :int(n_words)]
    return [[str(vocab[j]) for j in row] for row in order]
