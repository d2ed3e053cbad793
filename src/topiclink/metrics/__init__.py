"""Evaluation metrics: link and word ranks, link AUCs, perplexity, accuracy, coherence,
knowledge-graph filtered ranks (MRR, Hits@k), calibration (ECE, reliability table)."""

from __future__ import annotations

from topiclink.metrics.calibration import expected_calibration_error, reliability_table
from topiclink.metrics.chunked import rank_in_chunks
from topiclink.metrics.classification import accuracy, perplexity
from topiclink.metrics.coherence import npmi_coherence
from topiclink.metrics.links import link_auc, link_rank, link_rank_per_query, predictive_rank
from topiclink.metrics.ranking import filtered_ranks, mrr_hits
from topiclink.metrics.words import word_rank, word_rank_per_doc

__all__ = [
    "link_rank",
    "link_rank_per_query",
    "predictive_rank",
    "rank_in_chunks",
    "link_auc",
    "word_rank",
    "word_rank_per_doc",
    "perplexity",
    "accuracy",
    "npmi_coherence",
    "filtered_ranks",
    "mrr_hits",
    "expected_calibration_error",
    "reliability_table",
]
