"""The one import rule: kernels -> inference -> topics -> relational -> estimators -> families
-> experiments/cli/plotting/report."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "topiclink"

# package -> topiclink sub-packages it must not import
FORBIDDEN = {
    "kernels": {"data", "datasets", "inference", "topics", "relational", "estimators",
                "experiments", "cli", "plotting",
                "metrics", "distributions", "persistence", "callbacks"},
    "data": {"estimators", "inference", "kernels", "experiments", "cli", "plotting"},
    "distributions": {"estimators", "inference", "experiments", "cli", "plotting", "data"},
    "metrics": {"estimators", "inference", "kernels", "experiments", "cli"},
    "inference": {"estimators", "topics", "relational", "families", "experiments", "cli",
                  "plotting"},
    # the token-level topic machinery (LDA sweeps, variational E-steps, prediction): under
    # the estimators and every family, beside the relational machinery, which builds on it
    "topics": {"relational", "estimators", "families", "experiments", "cli", "plotting",
               "report", "datasets"},
    # the link models' machinery (pairs, non-links, augmentation, link weights)
    "relational": {"estimators", "families", "experiments", "cli", "plotting", "report",
                   "datasets"},
    # the estimator base knows no display: a report or a figure takes the model
    "estimators": {"experiments", "cli", "report", "plotting"},
    # what a user does with a fitted model (labels, topic correlations): over the models
    "analysis": {"experiments", "cli", "report", "plotting", "kernels", "inference",
                 "execution"},
    # reports of fitted models: over models and data, never the experiments or the CLI
    "report": {"experiments", "cli", "kernels", "inference", "execution"},
    # top-level modules
    "persistence": {"estimators", "inference", "kernels", "data", "datasets", "experiments",
                    "cli", "plotting", "callbacks", "metrics"},
    "random": {"estimators", "inference", "kernels", "data", "datasets", "experiments", "cli",
               "plotting", "persistence", "callbacks"},
    "callbacks": {"estimators", "inference", "kernels", "experiments", "cli", "plotting",
                  "persistence"},
    # the glossary of shared parameters: over the constraint forms (data.checks) and the
    # executor's (execution) only, so models and inference can both use it
    "parameters": {"estimators", "inference", "kernels", "datasets", "experiments", "cli",
                   "plotting", "report", "persistence", "callbacks", "metrics"},
    # where the pieces of an iteration run (serial, threads, Dask): core, under every
    # family; it imports no other part of topiclink (everything may import it)
    "execution": {p.stem for p in SRC.iterdir()
                  if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"}
                 - {"execution", "__init__"},
    # the plugin seam (discover, public_names, exports) and the version: they import no
    # other part of topiclink, so every arrow to them points down
    "registry": {p.stem for p in SRC.iterdir()
                 if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"}
                - {"registry", "__init__"},
    "_version": {p.stem for p in SRC.iterdir()
                 if (p.is_dir() and (p / "__init__.py").exists()) or p.suffix == ".py"}
                - {"_version", "__init__"},
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


def _assert_numba_only(path: Path) -> None:
    """A kernel module imports numpy, numba, math and topiclink only."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [node.module] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names]
            for m in mods:
                assert (m or "").split(".")[0] in {"numpy", "numba", "math", "__future__",
                                                   "topiclink"}, f"{path.name} imports {m}"


def test_kernels_import_only_numpy_and_numba():
    for path in (SRC / "kernels").rglob("*.py"):
        _assert_numba_only(path)


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


def test_estimators_and_persistence_do_not_import_each_other():
    assert "estimators" not in _imports(SRC / "persistence.py")


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


def test_only_execution_constructs_executors():
    """An executor is built in ``topiclink.execution`` alone (the estimators resolve their
    ``executor`` once into a plan and hand its executor to their algorithm; grep level:
    no ``...Executor(`` call anywhere else in src)."""
    import re

    call = re.compile(r"\b\w*Executor\(")
    offenders = [f"{path.relative_to(SRC)}:{n}" for path in sorted(SRC.rglob("*.py"))
                 if "execution" not in path.relative_to(SRC).parts
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if call.search(line) and not line.lstrip().startswith(("#", "class "))]
    assert not offenders, offenders


def test_package_exports_come_from_the_estimator_registry():
    """``topiclink.NAME`` / ``topiclink.estimators.NAME`` resolve every library estimator
    through the registry (no hand-kept table to forget a family in), ``import *`` gives
    them all, and an estimator defined outside the library is not exported."""
    import subprocess
    import sys

    import topiclink
    import topiclink.estimators as models
    from topiclink.estimators.base import Estimator, library_estimators, registered_estimators

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
        from topiclink.estimators import base

        base._REGISTRY.pop("OutsideTheLibrary", None)
    code = ("from topiclink import *\nfrom topiclink.estimators import *\n"
            "print(sorted(k for k in dir() if k[:1].isupper()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert names <= set(eval(out))   # noqa: S307 - a list literal we printed


# ---------------------------------------------------------------- one folder per family
FAMILIES = SRC / "families"
#: surfaces over the whole library: they may name a family's modules
SURFACES = {"cli", "demo.py"}


def _imported_modules(path: Path) -> set[str]:
    """Every ``topiclink...`` module named by an import of ``path`` (``from a import b``
    gives ``a.b`` too, since ``b`` may be a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m.split(".")[0] == "topiclink"}


def _family(path: Path) -> str | None:
    parts = path.relative_to(SRC).parts
    return parts[1] if parts[0] == "families" and len(parts) > 2 else None


def _role(path: Path) -> str:
    """A family module's role, from its name: kernels, estimator, synthetic, plots, or
    algorithm (everything else: samplers, optimisers, their helpers, and the
    modules of a family's own sub-packages such as ``ktm/gp``)."""
    stem = path.stem
    if path.parent.parent != FAMILIES:
        return "algorithm"
    for role in ("kernels", "estimator", "synthetic", "plots"):
        if stem.startswith(role):
            return role
    return "index" if stem == "__init__" and path.parent.parent == FAMILIES else "algorithm"


def _family_modules() -> list[Path]:
    return sorted(p for p in FAMILIES.rglob("*.py") if _family(p) is not None)


def test_every_family_has_a_folder_with_an_estimator():
    from topiclink.registry import family_names

    names = family_names()
    assert {"lda", "dmr", "rtm", "slda", "lmv", "bpbfm", "ktm", "lda_regression"} <= set(names)
    for name in names:
        assert any(_role(p) == "estimator" for p in (FAMILIES / name).glob("*.py")), name


def test_the_core_never_imports_a_family():
    """Below the surfaces (cli, demo) nothing names ``topiclink.families.<family>``: the
    core finds the families through :func:`topiclink.registry.discover` and
    :func:`~topiclink.registry.public_names`, so a new family is one new folder."""
    from topiclink.registry import family_names

    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] in SURFACES or rel.parts[0] == "families":
            continue
        offenders += [f"{rel}: {m}" for m in _imported_modules(path)
                      if m.split(".")[:2] == ["topiclink", "families"] and len(m.split(".")) > 2
                      and m.split(".")[2] in family_names()]
    assert not offenders, offenders


def test_no_family_imports_another():
    """What two families share is core (a paper protocol comparing families lives in
    ``reproductions/``, outside the package)."""
    offenders = []
    for path in _family_modules():
        own = f"topiclink.families.{_family(path)}"
        offenders += [f"{path.relative_to(SRC)}: {m}" for m in _imported_modules(path)
                      if m.startswith("topiclink.families.")
                      and not (m == own or m.startswith(own + "."))]
    assert not offenders, offenders


#: what no module of the package imports: the reproductions and the libraries its peers wrap
OUTSIDE_THE_LIBRARY = ("topiclink_reproductions", "pykeen", "tomotopy")


def test_the_library_never_imports_the_reproductions_or_their_peers():
    """``reproductions/`` (paper protocols, PyKEEN and tomotopy peers) is outside the
    package: nothing under ``src/topiclink`` imports it or what it wraps, and no module
    of a family is a protocol."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom) else
                     [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.relative_to(SRC)}: {n}" for n in names
                          if n.split(".")[0] in OUTSIDE_THE_LIBRARY]
        text = path.read_text()
        offenders += [f"{path.relative_to(SRC)}: import_module({m!r})" for m in re.findall(
            r"import_module\(\s*[\"'](\w+)", text) if m in OUTSIDE_THE_LIBRARY]
    assert not offenders, offenders
    assert not sorted(FAMILIES.glob("*/protocol*.py"))


def test_the_reproductions_are_not_in_the_wheel():
    """The library's distribution finds its packages under ``src/`` only (``topiclink``);
    the reproductions are a distribution of their own, which depends on topiclink."""
    import tomllib

    root = SRC.parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["packages"]["find"]["where"] == ["src"]
    assert not (SRC.parent / "topiclink_reproductions").exists()
    assert not any((SRC.parent / name).exists() for name in ("reproductions", "benchmarks"))
    own = tomllib.loads((root / "reproductions" / "pyproject.toml").read_text())["project"]
    assert own["name"] == "topiclink-reproductions" and "topiclink" in own["dependencies"]
    assert set(own["entry-points"]["topiclink.experiments"].values()) <= {
        f"topiclink_reproductions.{p.stem}"
        for p in (root / "reproductions" / "src" / "topiclink_reproductions").glob("*.py")}


#: role -> what a family module of that role must not import (prefixes)
ROLE_FORBIDDEN = {
    # Numba only: numpy, numba, the core kernels and the family's own kernels
    "kernels": ("topiclink.data", "topiclink.datasets", "topiclink.inference",
                "topiclink.estimators", "topiclink.experiments", "topiclink.cli",
                "topiclink.plotting", "topiclink.metrics", "topiclink.execution"),
    # samplers and optimisers: never an estimator, a figure or a surface
    "algorithm": ("topiclink.estimators", "topiclink.experiments", "topiclink.cli",
                  "topiclink.plotting", "topiclink.report"),
    "synthetic": ("topiclink.estimators", "topiclink.inference", "topiclink.experiments",
                  "topiclink.cli", "topiclink.plotting"),
    "estimator": ("topiclink.experiments", "topiclink.cli"),
    "plots": ("topiclink.experiments", "topiclink.cli"),
}
#: the family-local modules a role must not import
ROLE_FORBIDDEN_LOCAL = {
    "kernels": ("algorithm", "estimator", "synthetic", "plots"),
    "algorithm": ("estimator", "plots"),
    "synthetic": ("estimator", "plots", "algorithm"),
}


@pytest.mark.parametrize("role", sorted(ROLE_FORBIDDEN))
def test_family_modules_import_by_role(role):
    offenders = []
    for path in _family_modules():
        if _role(path) != role:
            continue
        own = f"topiclink.families.{_family(path)}."
        for m in _imported_modules(path):
            local = m.removeprefix(own).split(".")[0] if m.startswith(own) else None
            if m.startswith(ROLE_FORBIDDEN[role]) or (
                    local is not None and local.startswith(ROLE_FORBIDDEN_LOCAL.get(role, ()))):
                offenders.append(f"{path.relative_to(SRC)}: {m}")
    assert not offenders, offenders


def test_family_kernels_import_only_numpy_numba_and_kernels():
    for path in _family_modules():
        if _role(path) != "kernels":
            continue
        for m in _imported_modules(path):
            own_kernels = f"topiclink.families.{_family(path)}.kernels"
            assert m.startswith(("topiclink.kernels", own_kernels)), \
                f"{path.relative_to(SRC)} imports {m}"
        _assert_numba_only(path)


def test_module_paths_of_before_the_family_folders_are_gone():
    """0.1.0 ships without the old layout: an old module path is an ordinary
    ImportError, and a kernel stored under an old module is refused like any other."""
    import importlib

    from topiclink.families.ktm.estimator import KernelTopicModel
    from topiclink.families.ktm.gp.kernels import CategoricalKernel

    for old in ("topiclink.estimators.rtm", "topiclink.gp.kernels", "topiclink.kernels.var_rtm"):
        with pytest.raises(ModuleNotFoundError) as caught:
            importlib.import_module(old)
        assert caught.value.name is not None and old.startswith(caught.value.name), old
    codec = KernelTopicModel._param_codecs["kernel"]
    encoded = codec.encode(CategoricalKernel(rho=0.3))
    assert encoded["module"] == "topiclink.families.ktm.gp.kernels"
    with pytest.raises(ValueError, match="refusing"):
        codec.decode({**encoded, "module": "topiclink.gp.kernels"})


def test_every_name_a_family_adds_to_a_package_resolves():
    """Each ``PUBLIC`` entry of a family folder is an attribute of its module, of the core
    package it names (``topiclink.datasets.make_rtm_data``) and of that package's
    ``__all__``."""
    import importlib

    from topiclink.registry import family_names, public_names

    packages = set()
    for family in family_names():
        folder = importlib.import_module(f"topiclink.families.{family}")
        packages.update(getattr(folder, "PUBLIC", {}))
    assert {"topiclink.datasets", "topiclink.plotting"} <= packages
    for package in sorted(packages):
        core = importlib.import_module(package)
        for name, module in public_names(package).items():
            value = getattr(importlib.import_module(module), name)
            assert getattr(core, name) is value, (package, name)
            assert name in dir(core), (package, name)
            if hasattr(core, "__all__") and package != "topiclink.estimators":
                assert name in core.__all__, (package, name)
    with pytest.raises(AttributeError, match="no attribute 'make_nothing'"):
        importlib.import_module("topiclink.datasets").make_nothing  # noqa: B018


REPO = SRC.parents[1]
#: Where the code cites a design note: a path under ``docs/design/`` of this repository.
NOTE_PATH = re.compile(r"[\w./-]*design/[\w./-]*")
OUTSIDE = re.compile(r"\.\./shared")
TRACKER = re.compile(r"\bissues?\s+\d+", re.IGNORECASE)


def _text_files() -> list[Path]:
    """Every file under ``src/topiclink`` that reads as UTF-8 text (no caches, no data)."""
    files = []
    for path in sorted(SRC.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return files


def test_src_cites_only_what_the_repository_holds():
    """No file under ``src`` points outside the repository (``../shared``), at the tracker
    (``issue NN``: say what the issue established instead) or at a design note that is not
    ``docs/design/<name>.md`` of this repository."""
    found = []
    for path in _text_files():
        where = path.relative_to(REPO)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{where}:{n}: {m.group()}" for pattern in (OUTSIDE, TRACKER)
                      for m in pattern.finditer(line)]
            for m in NOTE_PATH.finditer(line):
                cited = m.group().rstrip(".")
                if not cited.startswith("docs/design/") or not (REPO / cited).is_file():
                    found.append(f"{where}:{n}: {cited} (not a note in docs/design/)")
    assert not found, "\n".join(found)


def _module_graph() -> dict[str, set[str]]:
    """module -> the modules it imports, at any depth of the code (function-level imports
    too), between the modules of ``src/topiclink`` that are not a package's
    ``__init__`` (a package's face hands names on; its arrows are not the design's)."""
    modules = {}
    for path in SRC.rglob("*.py"):
        if path.name == "__init__.py":
            continue
        modules[".".join(("topiclink", *path.relative_to(SRC).with_suffix("").parts))] = path
    return {name: {m for m in _imported_modules(path) if m in modules and m != name}
            for name, path in modules.items()}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    import networkx as nx

    g = nx.DiGraph([(a, b) for a, targets in graph.items() for b in targets])
    return [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]


def test_no_import_circle():
    """No two modules import each other, directly or round a loop (the CLI's catalog,
    common options, generated commands and ``fit`` were one until 2026-12-03)."""
    assert _circles(_module_graph()) == []


def test_the_circle_check_can_fail():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
