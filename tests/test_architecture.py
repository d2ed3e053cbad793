"""The one import rule: kernels -> inference -> models -> experiments/cli/plotting."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "topiclink"

# package -> topiclink sub-packages it must not import
FORBIDDEN = {
    "kernels": {"data", "datasets", "inference", "models", "experiments", "cli", "plotting",
                "metrics", "distributions", "persistence", "callbacks"},
    "data": {"models", "inference", "kernels", "experiments", "cli", "plotting"},
    "distributions": {"models", "inference", "experiments", "cli", "plotting", "data"},
    "metrics": {"models", "inference", "kernels", "experiments", "cli"},
    "inference": {"models", "experiments", "cli", "plotting"},
    # transport of the shard sweeps (Dask): kernels and data checks only
    "distributed": {"models", "inference", "experiments", "cli", "plotting", "datasets"},
    "models": {"experiments", "cli"},
    # reports of fitted models: over models and data, never the experiments or the CLI
    "report": {"experiments", "cli", "kernels", "inference", "distributed"},
    # top-level modules
    "persistence": {"models", "inference", "kernels", "data", "datasets", "experiments",
                    "cli", "plotting", "callbacks", "metrics"},
    "random": {"models", "inference", "kernels", "data", "datasets", "experiments", "cli",
               "plotting", "persistence", "callbacks"},
    "callbacks": {"models", "inference", "kernels", "experiments", "cli", "plotting",
                  "persistence"},
    "parallel": {"models", "inference", "kernels", "data", "experiments", "cli", "plotting"},
    # the glossary of shared parameters: over the constraint forms (data.checks) and the
    # client form (distributed.params) only, so models and inference can both use it
    "parameters": {"models", "inference", "kernels", "datasets", "experiments", "cli",
                   "plotting", "report", "persistence", "callbacks", "metrics"},
    # where the pieces of an iteration run (serial, threads): core, under every family;
    # it imports no other part of topiclink (everything may import it)
    "execution": {p.stem for p in SRC.iterdir()
                  if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"}
                 - {"execution", "__init__"},
}


def _sources(package: str) -> list[Path]:
    folder = SRC / package
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [SRC / f"{package}.py"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "topiclink" and len(parts) > 1:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_import_direction(package):
    paths = _sources(package)
    assert paths and all(p.exists() for p in paths), package
    for path in paths:
        bad = _imports(path) & FORBIDDEN[package]
        assert not bad, f"{path.relative_to(SRC)} imports topiclink.{sorted(bad)}"


def test_kernels_import_only_numpy_and_numba():
    for path in (SRC / "kernels").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = [node.module] if isinstance(node, ast.ImportFrom) else \
                    [a.name for a in node.names]
                for m in mods:
                    root = (m or "").split(".")[0]
                    assert root in {"numpy", "numba", "math", "__future__", "topiclink"}, \
                        f"{path.name} imports {m}"


def test_no_private_name_is_imported_across_modules():
    """``from topiclink.x import _name`` couples two modules through a private helper; a
    shared helper gets a public name in a neutral module instead."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("topiclink"):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        offenders.append(f"{path.relative_to(SRC)}: {node.module}.{alias.name}")
    assert not offenders, offenders


def test_models_and_persistence_do_not_import_each_other():
    assert "models" not in _imports(SRC / "persistence.py")


def test_execution_imports_only_the_standard_library_and_numpy():
    """``topiclink.execution`` is core: the standard library, numpy and itself; Dask's
    packages only in ``execution/dask.py`` and only inside functions (imported when a
    client is resolved, never at import time)."""
    import sys

    allowed = set(sys.stdlib_module_names) | {"numpy", "topiclink"}
    for path in (SRC / "execution").rglob("*.py"):
        tree = ast.parse(path.read_text())
        top = set(tree.body)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                mods = [node.module] if isinstance(node, ast.ImportFrom) else \
                    [a.name for a in node.names]
                for m in mods:
                    root = (m or "").split(".")[0]
                    if root == "topiclink":
                        assert m.startswith("topiclink.execution"), f"{path.name} imports {m}"
                    elif root in ("distributed", "dask"):
                        assert path.name == "dask.py" and node not in top, \
                            f"{path.name} imports {m} at module level"
                    else:
                        assert root in allowed, f"{path.name} imports {m}"


def test_only_execution_owns_thread_pools():
    """Thread pools and threads are made in ``topiclink.execution`` alone (grep level:
    no ``ThreadPoolExecutor`` or ``threading.Thread`` named anywhere else in src)."""
    offenders = [str(path.relative_to(SRC)) for path in sorted(SRC.rglob("*.py"))
                 if "execution" not in path.relative_to(SRC).parts
                 and any(word in path.read_text()
                         for word in ("ThreadPoolExecutor", "threading.Thread"))]
    assert not offenders, offenders


def test_package_exports_come_from_the_estimator_registry():
    """``topiclink.NAME`` / ``topiclink.models.NAME`` resolve every library estimator
    through the registry (no hand-kept table to forget a family in), ``import *`` gives
    them all, and an estimator defined outside the library is not exported."""
    import subprocess
    import sys

    import topiclink
    import topiclink.models as models
    from topiclink.models.base import Estimator, library_estimators, registered_estimators

    names = set(library_estimators())
    assert {"LDA", "DMR", "KernelTopicModel", "BilinearPoissonFactorModel"} <= names
    for name in names:
        assert getattr(topiclink, name) is getattr(models, name) is registered_estimators()[name]
        assert name in dir(topiclink) and name in dir(models)

    class OutsideTheLibrary(Estimator):   # registers itself, like a user's subclass
        pass

    try:
        assert "OutsideTheLibrary" not in library_estimators()
        with pytest.raises(AttributeError, match="no attribute 'OutsideTheLibrary'"):
            topiclink.OutsideTheLibrary  # noqa: B018
    finally:
        from topiclink.models import base

        base._REGISTRY.pop("OutsideTheLibrary", None)
    code = ("from topiclink import *\nfrom topiclink.models import *\n"
            "print(sorted(k for k in dir() if k[:1].isupper()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert names <= set(eval(out))   # noqa: S307 - a list literal we printed
