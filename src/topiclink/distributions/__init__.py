"""Augmentation distributions: Polya-Gamma and inverse Gaussian draws with their moments."""

from __future__ import annotations

from topiclink.distributions.inverse_gaussian import (
    ig_mean,
    ig_var,
    sample_hinge_augmentation,
    sample_inverse_gaussian,
)
from topiclink.distributions.polya_gamma import pg_mean, pg_var, sample_pg

__all__ = [
    "sample_pg",
    "pg_mean",
    "pg_var",
    "sample_inverse_gaussian",
    "ig_mean",
    "ig_var",
    "sample_hinge_augmentation",
]
