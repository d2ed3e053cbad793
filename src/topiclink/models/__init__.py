"""The estimator base that every family's estimators build on; the models themselves live
in :mod:`topiclink.families`, one folder per family.

- :mod:`~topiclink.models.base`: :class:`Estimator` (parameter constraints, seeding, the
  engine run, saving and resuming), the registry of estimators and :func:`load`;
- :mod:`~topiclink.models.capabilities`: the contracts an estimator has (topics, links,
  labels, ...), one mixin each; :mod:`~topiclink.models.variational` and
  :mod:`~topiclink.models.feature_prior`: what groups of families share;
- :mod:`~topiclink.models.checkpoint` and :mod:`~topiclink.models.stream_checkpoint`:
  checkpoints of fits and of ``partial_fit`` streams;
- :mod:`~topiclink.models.schema` and :mod:`~topiclink.models.param_codecs`: what a model
  file holds, checked on load;
- :mod:`~topiclink.models.topic_display`: the words that display a topic (term-score).

Every concrete :class:`~topiclink.models.base.Estimator` subclass registers itself;
:func:`~topiclink.models.base.registered_estimators` lists them all (importing every
family's estimator modules through :func:`topiclink.registry.discover`), and the
estimator names of this package (``topiclink.models.LDA``, ``from topiclink.models import
DMR``) are resolved from that registry on first use, so a new family needs no entry here.
"""

from __future__ import annotations

import importlib
from typing import Any

from topiclink.models.base import Estimator as Estimator
from topiclink.models.base import library_estimators as library_estimators
from topiclink.models.base import load as load
from topiclink.models.base import make_paper_model as make_paper_model
from topiclink.models.base import paper_models as paper_models
from topiclink.models.base import registered_estimators as registered_estimators
from topiclink.registry import public_names

_BASE = ["Estimator", "load", "make_paper_model", "paper_models", "registered_estimators",
         "library_estimators"]


def __getattr__(name: str) -> Any:
    if name == "__all__":   # ``from topiclink.models import *``
        return [*_BASE, *library_estimators()]
    family_name = public_names(__name__).get(name)   # e.g. PAPER_VARIANTS (gRTM)
    if family_name is not None:
        return getattr(importlib.import_module(family_name), name)
    if name[:1].isupper():
        cls = library_estimators().get(name)
        if cls is not None:
            return cls
    raise AttributeError(f"module 'topiclink.models' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_BASE, *library_estimators(), *public_names(__name__)})
