"""The estimator base that every family's estimators build on; the models themselves live
in :mod:`topiclink.families`, one folder per family.

- :mod:`~topiclink.estimators.base`: :class:`Estimator` (parameter constraints, seeding, the
  engine run, saving and resuming), the registry of estimators and :func:`load`;
- :mod:`~topiclink.estimators.capabilities`: the contracts an estimator has (topics, links,
  labels, ...), one mixin each; :mod:`~topiclink.estimators.variational` and
  :mod:`~topiclink.estimators.feature_prior`: what groups of families share;
- :mod:`~topiclink.estimators.checkpoint` and :mod:`~topiclink.estimators.stream_checkpoint`:
  checkpoints of fits and of ``partial_fit`` streams;
- :mod:`~topiclink.estimators.schema` and :mod:`~topiclink.estimators.param_codecs`: what a model
  file holds, checked on load;
- :mod:`~topiclink.estimators.topic_display`: the words that display a topic (term-score).

Every concrete :class:`~topiclink.estimators.base.Estimator` subclass registers itself;
:func:`~topiclink.estimators.base.registered_estimators` lists them all (importing every
family's estimator modules through :func:`topiclink.registry.discover`), and the
estimator names of this package (``topiclink.estimators.LDA``, ``from topiclink.estimators import
DMR``) are resolved from that registry on first use, so a new family needs no entry here.
"""

from __future__ import annotations

import importlib
from typing import Any

from topiclink.estimators.base import Estimator as Estimator
from topiclink.estimators.base import library_estimators as library_estimators
from topiclink.estimators.base import load as load
from topiclink.estimators.base import make_paper_model as make_paper_model
from topiclink.estimators.base import paper_models as paper_models
from topiclink.estimators.base import registered_estimators as registered_estimators
from topiclink.registry import public_names

_BASE = ["Estimator", "load", "make_paper_model", "paper_models", "registered_estimators",
         "library_estimators"]


def __getattr__(name: str) -> Any:
    if name == "__all__":   # ``from topiclink.estimators import *``
        return [*_BASE, *library_estimators()]
    family_name = public_names(__name__).get(name)   # e.g. PAPER_VARIANTS (gRTM)
    if family_name is not None:
        return getattr(importlib.import_module(family_name), name)
    if name[:1].isupper():
        cls = library_estimators().get(name)
        if cls is not None:
            return cls
    raise AttributeError(f"module 'topiclink.estimators' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_BASE, *library_estimators(), *public_names(__name__)})
