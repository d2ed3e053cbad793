"""Load a benchmark script (``benchmarks/<name>.py``) as a module for the tests, from its
file: the benchmarks folder never goes on ``sys.path`` (a benchmark named like a package,
as ``benchmarks/distributed.py`` was, would shadow it in every worker process started
later; ``tests/test_docs.py`` checks that none is)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextmanager
def benchmark_module(name: str) -> Iterator[ModuleType]:
    """``benchmarks/<name>.py`` imported under its own name for the block (registered in
    ``sys.modules`` while it lasts: dataclasses and pickling look modules up there)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)
