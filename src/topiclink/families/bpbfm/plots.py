"""Pictures of a fitted bilinear Poisson factor model (BPBFM-1 / BPBFM-2).

:func:`plot_relation_matrices`: a grid of heat maps of the relation matrices
``Lambda^r`` (rows: the head's factor k1, columns: the tail's factor k2) on one colour
scale; :func:`plot_dictionary`: BPBFM-2's shared matrices ``G^m`` and the weights
``eta`` (M x R) that mix them into the relations.  Both return the Figure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["plot_relation_matrices", "plot_dictionary"]


def _check_fitted_bpbfm(model: Any, func: str) -> None:
    """One-line error unless ``model`` is a fitted BPBFM-like model."""
    missing = [a for a in ("relation_matrices_", "relation_names_", "embedding_")
               if getattr(model, a, None) is None]
    if missing:
        name = type(model).__name__
        if name in ("BilinearPoissonFactorModel", "BilinearPoissonFactorModelEM",
                    "DegreeCorrectedPoissonFactorModel"):
            raise ValueError(f"{func}: the {name} is not fitted (no {missing[0]}); fit "
                             "it first")
        raise ValueError(f"{func}: needs a fitted BilinearPoissonFactorModel; {name} has no "
                         f"{missing[0]}")


def _relation_positions(model: Any, relations: Sequence[Any] | None, max_panels: int
                        ) -> np.ndarray:
    names = np.asarray(model.relation_names_, dtype=str)
    L = np.asarray(model.relation_matrices_)
    if isinstance(max_panels, bool) or not isinstance(max_panels, int | np.integer) \
            or max_panels < 1:
        raise ValueError(f"plot_relation_matrices: max_panels must be an integer >= 1, got "
                         f"{max_panels!r}")
    if relations is None:
        if names.size <= max_panels:
            return np.arange(names.size)
        # the relations with the largest expected count (mass of Lambda^r), in index order
        return np.sort(np.argsort(-L.sum(axis=(1, 2)), kind="stable")[:max_panels])
    items = [relations] if isinstance(relations, str | int | np.integer) else list(relations)
    if not items:
        raise ValueError("plot_relation_matrices: relations is empty; give relation names "
                         "or indices, or None for all")
    lookup = {n: i for i, n in enumerate(names.tolist())}
    out = []
    for item in items:
        if isinstance(item, int | np.integer) and not isinstance(item, bool):
            if not 0 <= int(item) < names.size:
                raise ValueError(f"plot_relation_matrices: relation index {int(item)} is not "
                                 f"in [0, {names.size})")
            out.append(int(item))
        elif str(item) in lookup:
            out.append(lookup[str(item)])
        else:
            raise ValueError(f"plot_relation_matrices: unknown relation {item!r} (not one of "
                             f"the model's {names.size} relations)")
    if len(out) > max_panels:
        raise ValueError(f"plot_relation_matrices: {len(out)} relations asked for, more than "
                         f"max_panels={max_panels}; raise max_panels or choose fewer")
    return np.asarray(out, dtype=np.int64)


def _factor_ticks(ax: Any, K: int) -> None:
    step = max(1, int(np.ceil(K / 10)))
    ticks = list(range(0, K, step))
    ax.set_xticks(ticks, [str(k) for k in ticks], fontsize=7)
    ax.set_yticks(ticks, [str(k) for k in ticks], fontsize=7)


def plot_relation_matrices(model: Any, relations: Sequence[Any] | None = None,
                           max_panels: int = 12) -> Any:
    """A grid of heat maps of the posterior mean relation matrices ``Lambda^r``.

    Parameters
    ----------
    model : fitted BilinearPoissonFactorModel (BPBFM-1 or BPBFM-2)
    relations : names or indices, optional
        The relations to show, in that order.  None: every relation when there are at most
        ``max_panels``, else the ``max_panels`` relations with the largest total
        ``sum Lambda^r`` (the expected count), in index order.
    max_panels : int, default 12
        At most this many panels.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per relation, titled with its name; rows the head's factor k1, columns
        the tail's factor k2; one colour scale (0 to the largest entry shown) and one
        colour bar for all panels.
    """
    import matplotlib.pyplot as plt

    _check_fitted_bpbfm(model, "plot_relation_matrices")
    chosen = _relation_positions(model, relations, max_panels)
    L = np.asarray(model.relation_matrices_)[chosen]
    names = np.asarray(model.relation_names_, dtype=str)[chosen]
    K = L.shape[1]
    n = chosen.size
    ncols = min(4, n)
    nrows = -(-n // ncols)
    side = 1.2 + 0.12 * K
    fig, axes = plt.subplots(nrows, ncols, figsize=(side * ncols + 1.2, side * nrows + 0.6),
                             squeeze=False)
    vmax = float(L.max()) if L.size and L.max() > 0 else 1.0
    image = None
    for i, ax in enumerate(axes.ravel()):
        if i >= n:
            ax.set_axis_off()
            continue
        image = ax.imshow(L[i], cmap="viridis", vmin=0.0, vmax=vmax)
        ax.set_title(str(names[i]), fontsize=8)
        _factor_ticks(ax, K)
        if i % ncols == 0:
            ax.set_ylabel("head factor k1", fontsize=7)
        if i // ncols == nrows - 1 or i + ncols >= n:
            ax.set_xlabel("tail factor k2", fontsize=7)
    fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8, label="Lambda^r (k1, k2)")
    total = np.asarray(model.relation_names_).size
    fig.suptitle(f"relation matrices Lambda^r ({n} of {total} relations)", fontsize=10)
    return fig


def plot_dictionary(model: Any) -> Any:
    """BPBFM-2's dictionary: a heat map of every shared matrix ``G^m`` (one colour scale)
    and of the weights ``eta`` (M x R: how much matrix m contributes to relation r,
    ``Lambda^r = sum_m eta_mr G^m``), relations named on the x axis.

    Raises ValueError for a BPBFM-1 model (``n_dictionary=None``: no dictionary).
    Returns the matplotlib Figure.
    """
    import matplotlib.pyplot as plt

    _check_fitted_bpbfm(model, "plot_dictionary")
    G = getattr(model, "dictionary_", None)
    eta = getattr(model, "relation_weights_", None)
    if G is None or eta is None:
        raise ValueError("plot_dictionary: the model is BPBFM-1 (n_dictionary=None) and has "
                         "no dictionary; plot_relation_matrices shows its relation matrices")
    G, eta = np.asarray(G), np.asarray(eta)
    M, K = G.shape[0], G.shape[1]
    R = eta.shape[1]
    names = np.asarray(model.relation_names_, dtype=str)
    side = 1.4 + 0.12 * K
    width = max(side * M + 1.2, 0.18 * R + 2.5)
    fig = plt.figure(figsize=(width, side + 0.35 * M + 2.6))
    grid = fig.add_gridspec(2, M, height_ratios=[side, 0.35 * M + 1.2])
    vmax = float(G.max()) if G.max() > 0 else 1.0
    g_axes = []
    image = None
    for m in range(M):
        ax = fig.add_subplot(grid[0, m])
        image = ax.imshow(G[m], cmap="viridis", vmin=0.0, vmax=vmax)
        ax.set_title(f"G^{m}", fontsize=9)
        _factor_ticks(ax, K)
        ax.set_xlabel("tail factor k2", fontsize=7)
        if m == 0:
            ax.set_ylabel("head factor k1", fontsize=7)
        g_axes.append(ax)
    fig.colorbar(image, ax=g_axes, shrink=0.8, label="G^m (k1, k2)")
    ax = fig.add_subplot(grid[1, :])
    weights = ax.imshow(eta, cmap="magma", aspect="auto", vmin=0.0)
    ax.set_yticks(range(M), [f"G^{m}" for m in range(M)], fontsize=7)
    step = max(1, int(np.ceil(R / 60)))
    ax.set_xticks(range(0, R, step), names[::step], rotation=90, fontsize=6)
    ax.set_title("weights eta (matrix m x relation r)", fontsize=9)
    fig.colorbar(weights, ax=ax, shrink=0.8, label="eta_mr")
    fig.suptitle(f"BPBFM-2 dictionary: {M} shared matrices for {R} relations", fontsize=10)
    return fig
