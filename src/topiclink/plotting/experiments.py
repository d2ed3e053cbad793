"""Figures of experiment tables: a metric against K, mean and sd over folds (paper Figs. 1-5)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from topiclink.plotting.topics import new_axes

__all__ = ["plot_metric_vs_topics", "plot_metric_panels", "plot_model_bars",
           "plot_estimate_vs_truth", "plot_metric_vs_iteration", "save_figure", "LABELS"]

LABELS = {"link_rank": "link rank (lower is better)", "word_rank": "word rank (lower is better)",
          "auc": "link AUC", "pr_auc": "link PR AUC", "train_seconds": "training time (s)",
          "test_seconds": "test time (s)", "accuracy": "accuracy",
          "predictive_rank": "predictive rank (lower is better)",
          "cpu_seconds": "CPU time of the fit (s)", "wall_seconds": "wall time of the fit (s)",
          "improvement": "improvement over random rank",
          "train_perplexity": "training perplexity (lower is better)",
          "native_perplexity": "perplexity the sampler reports (collapsed joint)"}


def plot_metric_vs_topics(table: pd.DataFrame, metric: str, ax: Any = None,
                          by: str = "model", x: str = "K") -> Any:
    """One line per model (and c, when several were run and ``x`` is not c; and K, when
    several were run and ``x`` is c): mean over folds or runs with +-1 sd, against ``x``
    (K by default, or c)."""
    if metric not in table.columns:
        raise ValueError(f"the table has no column {metric!r}")
    ax = new_axes(ax)
    split = None
    if x != "c" and "c" in table and table["c"].nunique(dropna=True) > 1:
        split = "c"
    elif x == "c" and "K" in table and table["K"].nunique() > 1:
        split = "K"
    keys = [by] + ([split] if split else [])
    for key, group in table.groupby(keys, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        stats = group.groupby(x)[metric].agg(["mean", "std"]).reset_index()
        label = str(key[0]) + (f" ({split}={key[1]:g})" if len(key) > 1 and pd.notna(key[1])
                               else "")
        ax.errorbar(stats[x], stats["mean"], yerr=stats["std"].fillna(0), marker="o",
                    capsize=3, label=label)
    if metric == "link_rank" and "random_link_rank" in table:
        ax.axhline(table["random_link_rank"].mean(), color="grey", ls="--", label="random")
    ax.set_xlabel("number of topics K" if x == "K" else x)
    if x == "c":
        ax.set_xscale("log")
    ax.set_ylabel(LABELS.get(metric, metric))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def plot_metric_panels(table: pd.DataFrame, metric: str, panel: str = "eta",
                       reference: str | None = None, by: str = "model") -> Any:
    """One panel per value of ``panel`` (e.g. eta), each :func:`plot_metric_vs_topics`
    (one line per model, mean +- sd over folds against K); ``reference`` names a column
    drawn as a dashed horizontal line (e.g. the random rank).  Returns the Figure."""
    import matplotlib.pyplot as plt

    values = sorted(table[panel].unique()) if panel in table else [None]
    fig, axes = plt.subplots(1, len(values), figsize=(5.5 * len(values), 4), sharey=True,
                             squeeze=False)
    for ax, value in zip(axes[0], values, strict=True):
        part = table if value is None else table[table[panel] == value]
        plot_metric_vs_topics(part, metric, ax=ax, by=by)
        if reference is not None and reference in part:
            ax.axhline(part[reference].mean(), color="grey", ls="--", label="random")
            ax.legend(fontsize=8)
        if value is not None:
            ax.set_title(f"{panel} = {value:g}")
    return fig


def plot_model_bars(table: pd.DataFrame, metric: str, ax: Any = None, by: str = "model"
                    ) -> Any:
    """Bars of the mean of ``metric`` per model with +-1 sd (e.g. the LMV paper's Figure
    S4 over simulated replicates), in the table's model order."""
    if metric not in table.columns:
        raise ValueError(f"the table has no column {metric!r}")
    ax = new_axes(ax)
    stats = table.groupby(by, sort=False)[metric].agg(["mean", "std"])
    ax.bar(range(len(stats)), stats["mean"], yerr=stats["std"].fillna(0), capsize=4,
           color="tab:blue", alpha=0.8)
    ax.set_xticks(range(len(stats)), [str(i) for i in stats.index])
    ax.set_ylabel(LABELS.get(metric, metric))
    ax.grid(axis="y", alpha=0.3)
    return ax


def plot_estimate_vs_truth(truth: Any, estimate: Any, ax: Any = None,
                           label: str = "estimate") -> Any:
    """Scatter of estimates against true values with the line y = x (e.g. visibility)."""
    import numpy as np

    ax = new_axes(ax)
    t, e = np.asarray(truth, dtype=float), np.asarray(estimate, dtype=float)
    ax.scatter(t, e, s=6, alpha=0.5)
    lo, hi = float(min(t.min(), e.min())), float(max(t.max(), e.max()))
    ax.plot([lo, hi], [lo, hi], color="grey", ls="--", lw=1)
    ax.set_xlabel("true value")
    ax.set_ylabel(label)
    ax.grid(alpha=0.3)
    return ax


def plot_metric_vs_iteration(table: pd.DataFrame, metric: str = "train_perplexity",
                             ax: Any = None, by: str = "model", x: str = "iteration",
                             log_y: bool = False) -> Any:
    """One line per ``by`` value (e.g. model): ``metric`` against ``x`` (the iteration),
    NaN entries skipped (e.g. the training perplexity against iteration, Hennig et al.
    2012, Fig. 6)."""
    for col in (metric, by, x):
        if col not in table.columns:
            raise ValueError(f"the table has no column {col!r}")
    ax = new_axes(ax)
    for key, group in table.groupby(by, sort=False):
        g = group[[x, metric]].dropna().sort_values(x)
        if g.empty:
            continue
        ax.plot(g[x], g[metric], marker="o" if len(g) < 30 else None, ms=3, lw=1.5,
                label=str(key))
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(LABELS.get(metric, metric.replace("_", " ")))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def save_figure(fig: Any, path: Any) -> Any:
    """Save a Figure (dpi 120, tight) and close it; returns the path."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path
