"""Figures: functions ``(fitted_model_or_table, ax=None) -> Axes`` (grids of panels return
the Figure); matplotlib is lazy."""

from topiclink.plotting.bpbfm import plot_dictionary, plot_relation_matrices
from topiclink.plotting.experiments import plot_metric_vs_iteration, plot_metric_vs_topics
from topiclink.plotting.graph import plot_graph_topics
from topiclink.plotting.relational import plot_weight_matrix
from topiclink.plotting.topics import plot_top_words, plot_topics_over_time, plot_trace
from topiclink.plotting.visibility import (
    plot_blockmodel,
    plot_visibility_by_topic,
    plot_visibility_vs_citations,
    recommendation_table,
    term_scores,
    top_words_by_term_score,
)

__all__ = ["plot_blockmodel", "plot_dictionary", "plot_metric_vs_iteration",
           "plot_metric_vs_topics", "plot_graph_topics", "plot_relation_matrices",
           "plot_top_words",
           "plot_topics_over_time", "plot_trace",
           "plot_visibility_by_topic", "plot_visibility_vs_citations", "plot_weight_matrix",
           "recommendation_table", "term_scores", "top_words_by_term_score"]
