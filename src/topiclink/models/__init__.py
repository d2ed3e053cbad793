"""Estimators (scikit-learn API), one family per module.

Every concrete :class:`~topiclink.models.base.Estimator` subclass registers itself;
:func:`~topiclink.models.base.registered_estimators` lists them all (importing every
module of this package), so a new family needs no entry here.
"""

from topiclink.models.base import (
    Estimator,
    load,
    make_paper_model,
    paper_models,
    registered_estimators,
)
from topiclink.models.bpbfm import BilinearPoissonFactorModel
from topiclink.models.lda import LDA
from topiclink.models.lda_regression import LDARegression
from topiclink.models.lmv import VisibilityTopicModel
from topiclink.models.rtm import PAPER_VARIANTS, RelationalTopicModel
from topiclink.models.slda import SupervisedTopicModel
from topiclink.models.var_rtm import VariationalRTM
from topiclink.models.var_slda import VariationalSLDA

__all__ = ["BilinearPoissonFactorModel", "LDA", "LDARegression", "PAPER_VARIANTS", "Estimator",
           "RelationalTopicModel",
           "SupervisedTopicModel", "VariationalRTM", "VariationalSLDA",
           "VisibilityTopicModel", "load", "make_paper_model", "paper_models",
           "registered_estimators"]
