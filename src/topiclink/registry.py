"""How the core finds what the model families add to it: the one plugin seam.

Every model family is a folder of :mod:`topiclink.families`.  The core never imports a
family by name: it asks this module, which walks the family folders at run time.

- :func:`discover` imports every family module of one role (``"estimator"``,
  ``"protocol"``), whose classes and specs register themselves on import;
- :func:`public_names` lists the names a family adds to a core package (its ``PUBLIC``
  table), and :func:`exports` serves them from that package (PEP 562).

So every arrow of the seam points down to this module, and a new family is one new folder.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

#: the package whose sub-folders are the model families
FAMILIES = "topiclink.families"


def family_names() -> list[str]:
    """The family folders, sorted."""
    folder = importlib.import_module(FAMILIES)
    return sorted(info.name for info in pkgutil.iter_modules(folder.__path__)
                  if info.ispkg and not info.name.startswith("_"))


def discover(role: str) -> list[ModuleType]:
    """Import every family module whose name starts with ``role`` (``"estimator"``,
    ``"protocol"``): their estimators and protocol specs register on import."""
    found = []
    for family in family_names():
        package = importlib.import_module(f"{FAMILIES}.{family}")
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
        folder = importlib.import_module(f"{FAMILIES}.{family}")
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
