"""Diagnostics shared by tests and users: moment checks (Geweke/SBC helpers follow)."""

from topiclink.diagnostics.moments import MomentCheck, assert_moments, moment_zscores

__all__ = ["MomentCheck", "assert_moments", "moment_zscores"]
