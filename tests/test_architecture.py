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
    "models": {"experiments", "cli"},
}


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
    for path in (SRC / package).rglob("*.py"):
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
