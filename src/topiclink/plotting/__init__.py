"""Figures: functions ``(fitted_model_or_table, ax=None) -> Axes``; matplotlib is lazy."""

from topiclink.plotting.experiments import plot_metric_vs_topics
from topiclink.plotting.relational import plot_weight_matrix
from topiclink.plotting.topics import plot_top_words, plot_trace

__all__ = ["plot_metric_vs_topics", "plot_top_words", "plot_trace", "plot_weight_matrix"]
