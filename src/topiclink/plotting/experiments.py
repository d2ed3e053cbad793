"""Figures of experiment tables: a metric against K, mean and sd over folds (paper Figs. 1-5)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from topiclink.plotting.topics import new_axes

__all__ = ["plot_metric_vs_topics", "LABELS"]

LABELS = {"link_rank": "link rank (lower is better)", "word_rank": "word rank (lower is better)",
          "auc": "link AUC", "pr_auc": "link PR AUC", "train_seconds": "training time (s)",
          "test_seconds": "test time (s)", "accuracy": "accuracy"}


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
