"""Estimators (scikit-learn API), one family per module."""

from topiclink.models.lda import LDA

__all__ = ["LDA"]
