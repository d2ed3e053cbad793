"""Augmentation distributions: Polya-Gamma, inverse Gaussian, zero-truncated Poisson and CRT
draws with their moments."""

from __future__ import annotations

from topiclink.distributions.counts import (
    crt_mean,
    crt_variance,
    sample_crt,
    sample_zero_truncated_poisson,
    ztp_mean,
    ztp_variance,
)
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
    "sample_zero_truncated_poisson",
    "ztp_mean",
    "ztp_variance",
    "sample_crt",
    "crt_mean",
    "crt_variance",
]
