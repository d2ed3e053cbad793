"""Latency of the commands that compute nothing (``topiclink --help``, ``models``,
``fit --help``) and of ``suggest`` on a saved model: best of N runs, wall and CPU time,
and whether the run imported Numba or scikit-learn.

    python benchmarks/cli_latency.py [--repeats 3] [--out benchmarks/results/cli_latency.json]

``suggest`` needs a saved relational model: one is fitted on the bundled Cora first
(``fit rtm -k 5 -n 5``), and its Numba cache warmed by a first, untimed call.  CPU time
(user + system) is reported next to wall time because a loaded machine stretches the
wall time of the same work.

Two references are timed in the same run: ``import sklearn.base`` and the dependency
floor of ``suggest`` (typer, NumPy, SciPy's sparse matrices, pandas, scikit-learn's base
class and one call of a cached Numba kernel), the time no loading of a model can go under.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = ("import runpy, sys; sys.argv = ['topiclink', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('topiclink.cli.app', run_name='__main__')\n"
         "except SystemExit:\n    pass\n"
         "print('\\nMODULES', int('numba' in sys.modules), int('sklearn' in sys.modules),"
         " file=sys.stderr)")


#: the same commands before the catalog and the help changes (commit 04f0d9a, this
#: machine: 2 cores shared with other jobs, load average 6-8 for all but --help), best of
#: 3 with /usr/bin/time; CPU is user + system time
BEFORE = {
    "topiclink --help": {"wall_s": 0.15, "cpu_s": None, "load_average_1min": "~2"},
    "topiclink models": {"wall_s": 3.24, "cpu_s": 2.90, "first_call_cold_cache_wall_s": 213.7},
    "topiclink fit --help": {"wall_s": 11.05, "cpu_s": 4.29},
    "topiclink suggest MODEL --text ...": {"wall_s": 9.23, "cpu_s": 3.6},
}


def _run(args: list[str]) -> dict[str, float | bool]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "80"})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if "MODULES" not in proc.stderr:
        raise RuntimeError(f"{args}: {proc.stderr[-500:]}")
    numba, sklearn = proc.stderr.rsplit("MODULES", 1)[1].split()
    return {"wall_s": wall, "cpu_s": (after.ru_utime - before.ru_utime)
            + (after.ru_stime - before.ru_stime),
            "imports_numba": numba == "1", "imports_sklearn": sklearn == "1"}


#: what ``suggest`` cannot avoid: the CLI framework, the array stack, scikit-learn's
#: base class and one call of a cached Numba kernel
FLOOR = """import numba, numpy as np, pandas, scipy.sparse, sklearn.base, typer


@numba.njit(cache=True)
def total(x):
    return x.sum()


total(np.ones(3))
"""


def _reference(args: list[str], repeats: int) -> dict[str, float]:
    """Best wall and CPU seconds of ``python ARGS`` over ``repeats`` runs."""
    runs = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *args], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        runs.append((time.perf_counter() - t0, after.ru_utime - before.ru_utime
                     + after.ru_stime - before.ru_stime))
    return {"wall_s": round(min(w for w, _ in runs), 3),
            "cpu_s": round(min(c for _, c in runs), 3)}


def measure(args: list[str], repeats: int) -> dict[str, float | bool]:
    runs = [_run(args) for _ in range(repeats)]
    return {"wall_s": round(min(r["wall_s"] for r in runs), 3),
            "cpu_s": round(min(r["cpu_s"] for r in runs), 3),
            "imports_numba": runs[0]["imports_numba"],
            "imports_sklearn": runs[0]["imports_sklearn"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent / "results" / "cli_latency.json")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        model = Path(folder) / "rtm.npz"
        subprocess.run([sys.executable, "-m", "topiclink.cli.app", "fit", "rtm", "--dataset",
                        "cora", "-k", "5", "-n", "5", "--out", str(model), "--quiet"],
                       check=True, capture_output=True)
        suggest = ["suggest", str(model), "--text", "graph neural network learning",
                   "--top", "3"]
        _run(suggest)                       # warm the Numba cache
        commands = {"topiclink --help": ["--help"], "topiclink models": ["models"],
                    "topiclink fit --help": ["fit", "--help"],
                    "topiclink fit rtm --help": ["fit", "rtm", "--help"],
                    "topiclink suggest MODEL --text ...": suggest}
        results = {name: measure(args, options.repeats) for name, args in commands.items()}
    # the floor of every command that loads a model: the estimator base subclasses
    # scikit-learn's BaseEstimator, whose import pulls SciPy and pandas; a prediction
    # also pays Numba's first dispatch of a cached kernel
    results["python -c 'import sklearn.base' (reference)"] = _reference(
        ["-c", "import sklearn.base"], options.repeats)
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "floor.py"
        script.write_text(FLOOR)
        subprocess.run([sys.executable, str(script)], check=True)   # write Numba's cache
        results["dependency floor of suggest (reference)"] = _reference(
            [str(script)], options.repeats)
    record = {"what": "best of N runs of each command (wall and CPU seconds)",
              "repeats": options.repeats, "python": platform.python_version(),
              "cpus": os.cpu_count(), "load_average_1min": round(os.getloadavg()[0], 2),
              "commands": results, "before": BEFORE}
    options.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = options.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    os.replace(tmp, options.out)
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
