"""What one does with a fitted topic model after fitting it, as R's ``stm`` offers: words
that label a topic (term-score, FREX, lift), which topics appear together, and how many
topics to fit (``searchK``), how topic prevalence changes with metadata
(``estimateEffect``)."""

from topiclink.analysis.correlation import TopicCorrelation, topic_correlation
from topiclink.analysis.effects import TopicEffects, estimate_effect
from topiclink.analysis.search_k import SearchK, exclusivity, residual_dispersion, search_k
from topiclink.estimators.topic_display import (
    frex_scores,
    lift_scores,
    term_scores,
    top_word_indices,
)

__all__ = ["SearchK", "TopicCorrelation", "TopicEffects", "estimate_effect", "exclusivity",
           "frex_scores", "lift_scores", "residual_dispersion", "search_k", "term_scores",
           "top_word_indices", "topic_correlation"]
