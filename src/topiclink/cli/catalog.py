"""What ``topiclink models`` lists, read from the families' source without importing it.

Importing an estimator module imports scikit-learn, SciPy and Numba (seconds); a listing
needs only class declarations.  :func:`estimator_catalog` parses every family's
``estimator*`` modules (:func:`topiclink.registry.family_names`, the modules that
:func:`~topiclink.registry.discover` would import) with :mod:`ast`, follows each class's
bases through the modules' imports (inside the ``topiclink`` package), and reads the
literal declarations ``fit_requires``, ``paper_names`` (its keys) and ``_abstract``
over the method resolution order.  A module it cannot read so (a declaration that is not
a literal, a base it cannot find) is imported instead, and classes already imported
(e.g. a user's own estimator) are read from the registry: the table is always the
registry's (``tests/test_cli_help.py`` compares them).
"""

from __future__ import annotations

import ast
import importlib
import logging
import pkgutil
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["EstimatorEntry", "estimator_catalog", "command_name", "CAPABILITIES"]

logger = logging.getLogger(__name__)

_BASE = ("topiclink.estimators.base", "Estimator")
#: capability -> its mixin
CAPABILITIES = {"topics": ("topiclink.estimators.capabilities", "TopicsMixin"),
                "links": ("topiclink.estimators.capabilities", "LinkPredictionMixin"),
                "classifier": ("topiclink.estimators.capabilities", "ClassifierCapability"),
                "entities": ("topiclink.estimators.capabilities", "EntityFactorsMixin")}


#: classes taken as known (not parsed): the estimator base (its declarations are the
#: defaults below) and the capability mixins
_LEAVES = frozenset({_BASE, *CAPABILITIES.values()})


@dataclass(frozen=True)
class EstimatorEntry:
    """One registered estimator as the listing shows it."""

    name: str
    paper_names: tuple[str, ...]
    fit_requires: tuple[str, ...]
    capabilities: tuple[str, ...]
    module: str
    #: its ``topiclink fit`` command (:func:`command_name`)
    command: str = ""
    #: the first paragraph of its docstring
    summary: str = ""


class _Unreadable(Exception):
    """A declaration this reader cannot evaluate without importing."""


class _Source:
    """The parsed modules of the ``topiclink`` package, by dotted name."""

    def __init__(self) -> None:
        import topiclink

        self.root = Path(topiclink.__file__).parent
        self.trees: dict[str, ast.Module | None] = {}

    def tree(self, module: str) -> ast.Module | None:
        if module not in self.trees:
            parts = module.split(".")
            self.trees[module] = None
            if parts[0] == "topiclink":
                base = self.root.joinpath(*parts[1:])
                for path in (base.with_suffix(".py"), base / "__init__.py"):
                    if path.is_file():
                        self.trees[module] = ast.parse(path.read_text(encoding="utf-8"))
                        break
        return self.trees[module]

    def resolve(self, module: str, name: str, depth: int = 0) -> tuple[str, str]:
        """Where ``name`` as seen in ``module`` is defined (a class of ours, or an
        outside name as is)."""
        if (module, name) in _LEAVES:
            return module, name
        tree = self.tree(module)
        if tree is None or depth > 10:
            return module, name
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return module, name
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        source = _absolute(module, node, self._is_package(module))
                        return self.resolve(source, alias.name, depth + 1)
        return module, name

    def _is_package(self, module: str) -> bool:
        parts = module.split(".")
        return (self.root.joinpath(*parts[1:]) / "__init__.py").is_file()

    def class_node(self, key: tuple[str, str]) -> ast.ClassDef | None:
        if key in _LEAVES:
            return None
        tree = self.tree(key[0])
        if tree is None:
            return None
        return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == key[1]),
                    None)

    def bases(self, key: tuple[str, str]) -> list[tuple[str, str]]:
        node = self.class_node(key)
        if node is None:
            return []
        found = []
        for base in node.bases:
            if isinstance(base, ast.Name):
                found.append(self.resolve(key[0], base.id))
            elif isinstance(base, ast.Attribute):
                found.append(("?", ast.unparse(base)))
            else:
                raise _Unreadable(f"{key[1]}: base {ast.unparse(base)}")
        return found

    def mro(self, key: tuple[str, str]) -> list[tuple[str, str]]:
        """C3 linearisation over the classes found (an outside base ends a line)."""
        parents = self.bases(key)
        lines = [self.mro(p) for p in parents] + [list(parents)]
        result = [key]
        while any(lines):
            lines = [line for line in lines if line]
            for line in lines:
                head = line[0]
                if not any(head in other[1:] for other in lines):
                    break
            else:
                raise _Unreadable(f"{key[1]}: no consistent method resolution order")
            result.append(head)
            lines = [line[1:] if line[0] == head else line for line in lines]
        return result

    def own(self, key: tuple[str, str], attribute: str) -> ast.expr | None:
        node = self.class_node(key)
        if node is None:
            return None
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == attribute for t in stmt.targets):
                return stmt.value
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and \
                    stmt.target.id == attribute and stmt.value is not None:
                return stmt.value
        return None

    def value(self, module: str, expr: ast.expr, depth: int = 0) -> Any:
        """A literal, or a module-level name bound to one (through imports)."""
        if isinstance(expr, ast.Name) and depth < 10:
            where, name = self.resolve(module, expr.id)
            tree = self.tree(where)
            for node in tree.body if tree is not None else []:
                targets = node.targets if isinstance(node, ast.Assign) else (
                    [node.target] if isinstance(node, ast.AnnAssign) and node.value else [])
                if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                    return self.value(where, node.value, depth + 1)  # type: ignore[union-attr]
            raise _Unreadable(f"{module}.{expr.id}")
        if isinstance(expr, ast.Dict):     # only the keys matter (paper names)
            return {self.value(module, k, depth): None for k in expr.keys if k is not None}
        try:
            return ast.literal_eval(expr)
        except ValueError:
            raise _Unreadable(ast.unparse(expr)) from None

    def declared(self, mro: list[tuple[str, str]], attribute: str, default: Any) -> Any:
        for key in mro:
            expr = self.own(key, attribute)
            if expr is not None:
                return self.value(key[0], expr)
        return default


def _absolute(module: str, node: ast.ImportFrom, package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if package else parts[:-1]
    base = base[:len(base) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _read_module(source: _Source, module: str) -> list[EstimatorEntry]:
    tree = source.tree(module)
    if tree is None:
        raise _Unreadable(module)
    entries = []
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
            continue
        key = (module, node.name)
        mro = source.mro(key)
        own_abstract = source.own(key, "_abstract")
        if _BASE not in mro or (own_abstract is not None and source.value(module,
                                                                         own_abstract)):
            continue
        command = source.own(key, "cli_name")
        entries.append(EstimatorEntry(
            command=_kebab(node.name) if command is None else str(source.value(module,
                                                                              command)),
            name=node.name, summary=_summary(ast.get_docstring(node)),
            paper_names=tuple(source.declared(mro, "paper_names", {})),
            fit_requires=tuple(source.declared(mro, "fit_requires", ("X",))),
            capabilities=tuple(c for c, mixin in CAPABILITIES.items() if mixin in mro),
            module=module))
    return entries


def _summary(doc: str | None) -> str:
    import inspect

    return (inspect.cleandoc(doc) if doc else "").split("\n\n")[0]


def command_name(cls: type) -> str:
    """The command of ``cls``: its own ``cli_name`` (a subclass does not inherit it) or
    its class name in kebab case."""
    name = vars(cls).get("cli_name")
    if name:
        return str(name)
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "-",
                  cls.__name__).lower()


def _kebab(name: str) -> str:
    return command_name(type(name, (), {}))


def _imported_entry(cls: type) -> EstimatorEntry:
    from topiclink.estimators import capabilities as cap

    mixins = {"topics": cap.TopicsMixin, "links": cap.LinkPredictionMixin,
              "classifier": cap.ClassifierCapability, "entities": cap.EntityFactorsMixin}
    return EstimatorEntry(cls.__name__, tuple(getattr(cls, "paper_names", {})),
                          tuple(getattr(cls, "fit_requires", ("X",))),
                          tuple(c for c, m in mixins.items() if issubclass(cls, m)),
                          cls.__module__, command_name(cls), _summary(cls.__doc__))


def _family_modules() -> list[str]:
    from topiclink.registry import FAMILIES

    folder = importlib.import_module(FAMILIES)
    modules = []
    for family in pkgutil.iter_modules(folder.__path__):
        if not family.ispkg or family.name.startswith("_"):
            continue
        path = [str(Path(folder.__path__[0]) / family.name)]
        modules += [f"{FAMILIES}.{family.name}.{info.name}"
                    for info in pkgutil.iter_modules(path) if info.name.startswith("estimator")]
    return sorted(modules)


def estimator_catalog() -> dict[str, EstimatorEntry]:
    """Every registered estimator (the families' and any class already imported), by
    class name, sorted; read from the source where the module is not imported yet."""
    source = _Source()
    entries: dict[str, EstimatorEntry] = {}
    for module in _family_modules():
        if module in sys.modules:
            continue
        try:
            for entry in _read_module(source, module):
                entries[entry.name] = entry
        except (_Unreadable, SyntaxError, OSError, RecursionError) as exc:
            logger.debug("reading %s by importing it (%s)", module, exc)
            importlib.import_module(module)
    base = sys.modules.get(_BASE[0])
    if base is not None:
        for name, cls in getattr(base, "_REGISTRY", {}).items():
            entries[name] = _imported_entry(cls)
    return dict(sorted(entries.items()))
