"""A paper's models and their settings, as its TOML file states them, with a run's overrides.

A paper file (:mod:`topiclink_reproductions.spec`) gives constructor settings in two places:
``[settings]`` (every model that accepts a key gets it) and ``[models.NAME]`` (that model's
own, over ``[settings]``).  Three keys of a model table are read here, not passed on:

``estimator``
    The runner's name of the paper's name (the LMV paper's ``RTM`` is our ``Var-RTM``),
    local to that paper; default: the paper's name itself.
``use``
    Names of sub-tables of ``[settings]`` merged into the model's own settings (first),
    so that one block (e.g. the stochastic models' step sizes) is written once.
``fit``
    Options of that model's ``fit`` (e.g. ``newer_citations = "keep"``).

A sub-table of ``[settings]`` (``[settings.start]``, ``[settings.stochastic]``) is never
a constructor setting itself: the protocol reads it by name (:meth:`PaperModels.group`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from topiclink.experiments.runner import model_params
from topiclink_reproductions.spec import PaperSpec

__all__ = ["PaperModels", "accepts"]

#: the keys of a model table that are not constructor settings
_RESERVED = ("estimator", "use", "fit")


def accepts(name: str, param: str) -> bool:
    """Whether runner model ``name`` takes constructor keyword ``param`` (a factory
    taking any keyword does)."""
    accepted = model_params(name)
    return accepted is None or param in accepted


def _plain(value: Any) -> Any:
    """A read-only TOML value as plain Python (mappings to dicts, tuples kept)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


@dataclass
class PaperModels:
    """The constructor parameters of a paper's models, overridable per run.

    Parameters
    ----------
    shared : dict
        ``[settings]`` without its sub-tables: optional parameters, given to every model
        that accepts them.
    models : dict
        Paper name -> its ``[models.NAME]`` table (with ``use`` resolved).
    groups : dict
        The sub-tables of ``[settings]`` by name (``start``, ``stochastic``, ...).
    max_iter : int, optional
        Overrides every model's iteration limit (the command's ``--max-iter``).
    """

    shared: dict[str, Any]
    models: dict[str, dict[str, Any]]
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    max_iter: int | None = None

    @classmethod
    def of(cls, paper: PaperSpec, *, model_params: Mapping[str, Mapping[str, Any]]
           | None = None, max_iter: int | None = None, **groups: Mapping[str, Any]
           ) -> PaperModels:
        """The paper file's models and settings; ``model_params`` adds to or overrides a
        model's own settings, ``groups`` a sub-table of ``[settings]`` (e.g.
        ``start={"n_iter": 10}``), ``max_iter`` every model's iteration limit."""
        settings = _plain(paper.settings)
        subtables = {k: v for k, v in settings.items() if isinstance(v, dict)}
        for name, values in groups.items():
            subtables[name] = {**subtables.get(name, {}), **dict(values)}
        shared = {k: v for k, v in settings.items() if not isinstance(v, dict)}
        models: dict[str, dict[str, Any]] = {}
        for name in paper.model_names:
            own = _plain(paper.models[name].settings)
            merged: dict[str, Any] = {}
            for group in own.get("use", ()):
                if group not in subtables:
                    raise ValueError(f"{paper.source}: models.{name}.use names "
                                     f"[settings.{group}], which the file does not have")
                merged.update(subtables[group])
            merged.update(own)
            models[name] = merged
        for name, extra in (model_params or {}).items():
            models[name] = {**models.get(name, {}), **dict(extra)}
        return cls(shared, models, subtables, max_iter)

    def estimator(self, name: str) -> str:
        """The runner's name of paper model ``name``."""
        return str(self.models.get(name, {}).get("estimator", name))

    def fit_options(self, name: str) -> dict[str, Any]:
        """The ``fit`` options of paper model ``name`` (its ``fit`` table)."""
        return dict(self.models.get(name, {}).get("fit", {}))

    def group(self, name: str) -> dict[str, Any]:
        """A sub-table of ``[settings]`` (empty when the file has none)."""
        return dict(self.groups.get(name, {}))

    def uses(self, name: str, group: str) -> bool:
        """Whether paper model ``name``'s table merges ``[settings.<group>]``."""
        return group in self.models.get(name, {}).get("use", ())

    def params(self, name: str, required: Mapping[str, Any] | None = None,
               optional: Mapping[str, Any] | None = None
               ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """(runner name, required, optional) constructor parameters of paper model
        ``name``: the protocol's ``required`` (e.g. ``n_topics``) under the model's own
        settings, and ``[settings]`` with the protocol's ``optional`` as optional
        (given where accepted); ``max_iter`` set overrides both."""
        own = {k: v for k, v in self.models.get(name, {}).items() if k not in _RESERVED}
        req = {**dict(required or {}), **own}
        opt = {**self.shared, **dict(optional or {})}
        if self.max_iter is not None:
            req.pop("max_iter", None)
            opt["max_iter"] = int(self.max_iter)
        return self.estimator(name), req, opt
