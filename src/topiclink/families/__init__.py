"""One folder per model family, over the core.

A family folder holds everything of one model family, by role:

===========================  ==========================================================
``kernels*.py``              Numba kernels (numpy, numba and the core ``topiclink.kernels``)
``algorithm.py``, others     the sampler / optimiser: state, steps (the engine runs them)
``estimator*.py``            the scikit-learn estimators (they register themselves)
``synthetic*.py``            data drawn from the family's generative process, with the truth
``protocol*.py``             the papers' evaluation protocols (they register a ProtocolSpec)
``plots.py``                 the family's figures
===========================  ==========================================================

The core below the families: :mod:`topiclink.inference` (engine, online driver, sharded
runs, the collapsed-Gibbs and variational token machinery that every topic family builds
on), :mod:`topiclink.execution`, :mod:`topiclink.kernels` (shared sampling, special
functions, the LDA token sweeps), :mod:`topiclink.data`, :mod:`topiclink.models` (the
estimator base, capabilities, persistence of states), :mod:`topiclink.experiments` (the
protocol registry and runner) and the rest.  No family imports another; what two families
share is core.  The core finds the families through :func:`discover`, never by a static
import, so a new family is one new folder here.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any


def family_names() -> list[str]:
    """The family folders, sorted."""
    return sorted(info.name for info in pkgutil.iter_modules(__path__)
                  if info.ispkg and not info.name.startswith("_"))


def discover(role: str) -> list[ModuleType]:
    """Import every family module whose name starts with ``role`` (``"estimator"``,
    ``"protocol"``): their estimators and protocol specs register on import."""
    found = []
    for family in family_names():
        package = importlib.import_module(f"{__name__}.{family}")
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith(role):
                found.append(importlib.import_module(f"{package.__name__}.{info.name}"))
    return found


@functools.cache
def public_names(package: str) -> dict[str, str]:
    """The names the families add to a core package (``"topiclink.datasets"``,
    ``"topiclink.plotting"``, ...), each with the module that defines it.

    A family declares them in its ``__init__.py`` as
    ``PUBLIC = {"topiclink.datasets": {"make_rtm_data": "synthetic"}, ...}`` (module names
    relative to the family folder), so the core package needs no entry for a new family.
    """
    names: dict[str, str] = {}
    for family in family_names():
        folder = importlib.import_module(f"{__name__}.{family}")
        for name, module in getattr(folder, "PUBLIC", {}).get(package, {}).items():
            if name in names:
                raise RuntimeError(f"{package}.{name} is declared by two families "
                                   f"({names[name]} and {folder.__name__}.{module})")
            names[name] = f"{folder.__name__}.{module}"
    return names


def exports(package: str, own: Iterable[str]) -> tuple[Callable[[str], Any],
                                                         Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for a core package: its ``own`` names plus the names the
    families add to it (:func:`public_names`), resolved on first use (PEP 562)."""
    own = list(own)

    def __getattr__(name: str) -> Any:
        module = public_names(package).get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted({*own, *public_names(package), *vars(sys.modules[package])})

    return __getattr__, __dir__
