"""Plots of a fitted topic model: the sampler trace, the top words of each topic and topic
proportions over time."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["plot_trace", "plot_top_words", "plot_topics_over_time", "new_axes"]


def new_axes(ax: Any = None, figsize: tuple[float, float] = (6, 4)) -> Any:
    """Return ``ax`` or the Axes of a new figure."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt  # falls back to Agg when there is no display

    _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_trace(model: Any, key: str = "log_likelihood", ax: Any = None) -> Any:
    """Per-iteration trace (default: log-likelihood per token) of a fitted Gibbs model."""
    trace = getattr(model, "trace_", None)
    if not trace or key not in trace:
        raise ValueError(f"the model has no trace {key!r}; fit it first")
    values = np.asarray(trace[key], dtype=float)
    it = np.arange(1, values.size + 1)
    ok = np.isfinite(values)
    ax = new_axes(ax)
    ax.plot(it[ok], values[ok], lw=1.5)
    ax.set_xlabel("iteration")
    ax.set_ylabel(key.replace("_", " ") + (" per token" if key == "log_likelihood" else ""))
    ax.set_title(f"{type(model).__name__} trace")
    ax.grid(alpha=0.3)
    return ax


def plot_top_words(model: Any, n_words: int = 8, topics: list[int] | None = None,
                   ax: Any = None, *, by: str = "term-score") -> Any:
    """A table-like picture of each topic's top words, ranked and sized by term-score
    (default), probability, FREX or lift (``by``, as :meth:`top_words`)."""
    from topiclink.estimators.topic_display import ranking_scores, top_word_indices

    check_is_fitted(model)
    beta, weights = np.asarray(model.components_), getattr(model, "topic_weights_", None)
    order = top_word_indices(beta, n_words, by, "plot_top_words", weights)
    comps = np.maximum(ranking_scores(beta, by, "plot_top_words", weights), 0.0)
    topics = list(range(comps.shape[0])) if topics is None else topics
    ax = new_axes(ax, figsize=(1.6 * n_words, 0.45 * len(topics) + 0.8))
    pmax = max(float(comps[topics].max()), 1e-300) if len(topics) else 1.0
    for row, k in enumerate(topics):
        for col, j in enumerate(order[k]):
            p = comps[k, j]
            ax.text(col, -row, str(model.vocabulary_[j]), ha="center", va="center",
                    fontsize=7 + 7 * p / pmax)
    ax.set_xlim(-0.6, n_words - 0.4)
    ax.set_ylim(-len(topics) + 0.4, 0.6)
    ax.set_yticks([-r for r in range(len(topics))], [f"topic {k}" for k in topics])
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_title(f"top words per topic (size ~ {by})")
    return ax


def plot_topics_over_time(years: Any, proportions: Any, topic_labels: Any = None,
                          ax: Any = None) -> Any:
    """Stacked topic proportions against time (Hennig et al. 2012, Fig. 5).

    Parameters
    ----------
    years : array (T,)
        Increasing time points (e.g. every year 1790-2011).
    proportions : array (T, K)
        Topic proportions at each time point (rows are normalised to sum to 1).
    topic_labels : sequence of K str, optional
        Legend entries, e.g. each topic's top words (default ``"topic k"``).
    """
    t = np.asarray(years, dtype=float).ravel()
    p = np.asarray(proportions, dtype=float)
    if p.ndim != 2 or p.shape[0] != t.size:
        raise ValueError(f"proportions must be ({t.size}, K), got shape {p.shape}")
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("proportions must be finite and non-negative")
    if t.size > 1 and (np.diff(t) <= 0).any():
        raise ValueError("years must be increasing")
    K = p.shape[1]
    labels = ([f"topic {k}" for k in range(K)] if topic_labels is None
              else [str(label) for label in topic_labels])
    if len(labels) != K:
        raise ValueError(f"topic_labels must have {K} entries, got {len(labels)}")
    total = p.sum(axis=1, keepdims=True)
    p = np.divide(p, total, out=np.full_like(p, 1.0 / K), where=total > 0)
    ax = new_axes(ax, figsize=(11, 4.5))
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab20" if K > 10 else "tab10")
    colors = [cmap(k % cmap.N) for k in range(K)]
    ax.stackplot(t, p.T, labels=labels, colors=colors, linewidth=0)
    ax.set_xlim(t.min(), t.max())
    ax.set_ylim(0, 1)
    ax.set_xlabel("year")
    ax.set_ylabel("topic proportion")
    handles, names = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], names[::-1], fontsize=7, loc="center left",
              bbox_to_anchor=(1.01, 0.5), frameon=False)
    return ax
