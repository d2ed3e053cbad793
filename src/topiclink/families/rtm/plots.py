"""The learned link weight matrix U with each topic's top words (the paper's Tables 1-2)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from topiclink.plotting.topics import new_axes

__all__ = ["plot_weight_matrix"]


def plot_weight_matrix(model: Any, n_words: int = 3, ax: Any = None) -> Any:
    """Heat map of ``model.weights_`` (rows: citing topic, columns: cited topic), labelled
    with the top words of every topic; a diverging colour scale centred at 0."""
    check_is_fitted(model)
    U = np.asarray(model.weights_)
    if U.ndim == 1:
        U = np.diag(U)
    K = U.shape[0]
    labels = [f"{k}: " + " ".join(words) for k, words in enumerate(model.top_words(n_words))]
    ax = new_axes(ax, figsize=(0.45 * K + 4.5, 0.4 * K + 1.8))
    lim = float(np.abs(U).max()) or 1.0
    image = ax.imshow(U, cmap="RdBu_r", vmin=-lim, vmax=lim)
    ax.set_yticks(range(K), labels, fontsize=7)
    ax.set_xticks(range(K), [str(k) for k in range(K)], fontsize=7)
    ax.set_xlabel("topic of the linked (cited) document")
    ax.set_ylabel("topic of the linking document")
    ax.set_title("link weights U (red: links likely, blue: unlikely)")
    ax.figure.colorbar(image, ax=ax, shrink=0.8)
    return ax
