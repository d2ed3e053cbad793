"""Figures: functions ``(fitted_model_or_table, ax=None) -> Axes``; matplotlib is lazy."""

from topiclink.plotting.topics import plot_top_words, plot_trace

__all__ = ["plot_top_words", "plot_trace"]
