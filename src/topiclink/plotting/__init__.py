"""Figures: functions ``(fitted_model_or_table, ax=None) -> Axes`` (grids of panels return
the Figure); matplotlib is lazy.  The families add their own figures (``plot_weight_matrix``,
``plot_blockmodel``, ``plot_dictionary``, ...: see :func:`topiclink.registry.public_names`)."""

from topiclink.plotting.experiments import plot_metric_vs_iteration, plot_metric_vs_topics
from topiclink.plotting.graph import plot_graph_topics, plot_topic_correlation
from topiclink.plotting.topics import plot_top_words, plot_topics_over_time, plot_trace
from topiclink.registry import exports, public_names

__all__ = [
    "plot_graph_topics", "plot_metric_vs_iteration", "plot_metric_vs_topics",
    "plot_top_words", "plot_topic_correlation", "plot_topics_over_time", "plot_trace"]
__getattr__, __dir__ = exports(__name__, __all__)
__all__ += public_names(__name__)   # the families' names
