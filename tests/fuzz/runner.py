"""Run an area's cases in capped child processes; a crash costs one case, not the suite."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MEMORY_CAP = 6 * 2**30           # bytes of address space per child
CASE_SECONDS = 60                # per case, on average, before the child is killed


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src"),
                                                          os.environ.get("PYTHONPATH", "")]),
            "MPLBACKEND": "Agg", "NUMBA_NUM_THREADS": "1"}


def count_cases(area: str) -> int:
    """How many cases of ``area`` a fresh process builds: the children's case list, which
    a pytest process may not share (test modules imported at collection can register
    commands or classes that some generators enumerate)."""
    proc = subprocess.run([sys.executable, "-m", "tests.fuzz.harness", area, "count"],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=900,
                          check=True)
    return int(proc.stdout.strip().splitlines()[-1])


def run_area(area: str, n_cases: int, shard: int = 400) -> list[dict]:
    """Outcomes of every case of ``area`` (in order)."""
    results: list[dict] = []
    env = _env()
    start = 0
    while start < n_cases:
        stop = min(start + shard, n_cases)
        try:
            proc = subprocess.run([sys.executable, "-m", "tests.fuzz.harness", area,
                                   str(start), str(stop)], cwd=ROOT, env=env,
                                  capture_output=True, text=True, preexec_fn=_limits,
                                  timeout=CASE_SECONDS * (stop - start) + 120)
            out, code, err = proc.stdout, proc.returncode, proc.stderr
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            code, err = "timeout", ""
        done = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        results.extend(done)
        start += len(done)
        if start < stop:                  # the child died on case `start`: record, go on
            results.append({"id": f"{area}#{start}", "outcome": "crash",
                            "detail": f"child exit {code}: {err.strip()[-300:]}"})
            start += 1
    return results


def summary(results: list[dict]) -> Counter:
    return Counter(r["outcome"] for r in results)
