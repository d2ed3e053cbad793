"""Plots of a fitted topic model: the sampler trace and the top words of each topic."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["plot_trace", "plot_top_words", "new_axes"]


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
                   ax: Any = None) -> Any:
    """A table-like picture of each topic's top words, sized by probability."""
    check_is_fitted(model)
    comps = model.components_
    topics = list(range(comps.shape[0])) if topics is None else topics
    ax = new_axes(ax, figsize=(1.6 * n_words, 0.45 * len(topics) + 0.8))
    order = np.argsort(-comps, axis=1)[:, :n_words]
    pmax = comps[topics][:, None].max() if len(topics) else 1.0
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
    ax.set_title("top words per topic (size ~ probability)")
    return ax
