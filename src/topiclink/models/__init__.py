"""Estimators (scikit-learn API), one family per module."""

from topiclink.models.lda import LDA
from topiclink.models.rtm import PAPER_VARIANTS, RelationalTopicModel
from topiclink.models.slda import SupervisedTopicModel
from topiclink.models.var_rtm import VariationalRTM
from topiclink.models.var_slda import VariationalSLDA

__all__ = ["LDA", "PAPER_VARIANTS", "RelationalTopicModel", "SupervisedTopicModel",
           "VariationalRTM", "VariationalSLDA"]
