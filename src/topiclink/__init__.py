"""topiclink: Bayesian topic and latent-factor models of linked data.

Estimators are imported lazily so that ``import topiclink`` stays fast (no Numba
compilation until a model is used).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "LDA": "topiclink.models.lda",
    "RelationalTopicModel": "topiclink.models.rtm",
    "VariationalRTM": "topiclink.models.var_rtm",
    "SupervisedTopicModel": "topiclink.models.slda",
    "VariationalSLDA": "topiclink.models.var_slda",
    "VisibilityTopicModel": "topiclink.models.lmv",
    "LDARegression": "topiclink.models.lda_regression",
    "BilinearPoissonFactorModel": "topiclink.models.bpbfm",
    "DMR": "topiclink.models.dmr",
    "KernelTopicModel": "topiclink.models.ktm",
    "load": "topiclink.models.base",
    "registered_estimators": "topiclink.models.base",
    "make_paper_model": "topiclink.models.base",
    "Corpus": "topiclink.data.corpus",
    "Links": "topiclink.data.links",
    "RelationalTensor": "topiclink.data.tensor",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'topiclink' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
