"""topiclink: Bayesian topic and latent-factor models of linked data.

Estimators are imported lazily so that ``import topiclink`` stays fast (no Numba
compilation until a model is used).  An estimator name (``topiclink.LDA``,
``from topiclink import DMR``) is resolved from the estimator registry
(:func:`~topiclink.estimators.base.library_estimators`): a new family needs no entry here.
"""

from __future__ import annotations

import importlib
from typing import Any

from topiclink._version import __version__ as __version__

#: the names that are not estimators, and where they live
_LAZY = {
    "load": "topiclink.estimators.base",
    "registered_estimators": "topiclink.estimators.base",
    "make_paper_model": "topiclink.estimators.base",
    "Corpus": "topiclink.data.corpus",
    "Links": "topiclink.data.links",
    "RelationalTensor": "topiclink.data.tensor",
}


def _estimators() -> dict[str, Any]:
    from topiclink.estimators.base import library_estimators

    return library_estimators()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name == "__all__":   # ``from topiclink import *``
        return ["__version__", *_LAZY, *_estimators()]
    if name[:1].isupper():
        cls = _estimators().get(name)
        if cls is not None:
            return cls
    raise AttributeError(f"module 'topiclink' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({"__version__", *_LAZY, *_estimators()})
