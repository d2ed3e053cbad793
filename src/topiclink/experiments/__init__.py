"""The papers' evaluation protocols as functions returning tidy tables (pandas)."""

from topiclink.experiments.grtm import GRTMSettings, run_grtm_experiment, summarise

__all__ = ["GRTMSettings", "run_grtm_experiment", "summarise"]
