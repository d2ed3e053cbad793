"""Run one small cell of every paper's ``topiclink experiment`` in two source trees and
compare the recorded numbers (everything but timings).

A refactor of the library must leave each protocol's numbers unchanged; this script is
the check, one cell per paper, cheap enough to run by hand::

    git worktree add /tmp/before <commit>
    TOPICLINK_DATA=../shared/datasets python reproductions/compare_cells.py \
        --before /tmp/before/src --after src --out /tmp/cells

Each side runs in its own process with ``PYTHONPATH`` set to its ``src``; a side whose
command fails is reported, not hidden.  Exit status 1 when any cell differs.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

#: one cell per paper protocol: (name, arguments after ``topiclink experiment``,
#: results file written into the output folder)
CELLS: list[tuple[str, list[str], str]] = [
    ("grtm", ["grtm", "-d", "cora-linqs", "--only-folds", "0", "--topics", "5",
              "--models", "Gibbs-gRTM", "--c", "1", "-n", "100"], "grtm_results.csv"),
    ("slda", ["slda", "-d", "20newsgroups", "--task", "binary", "--topics", "5",
              "--models", "gSLDA", "--c", "1", "-n", "40"], "slda_results.csv"),
    ("lmv", ["lmv", "-d", "cora-rlda", "--only-folds", "0", "--topics", "5",
             "--models", "LMVS", "--max-iter", "10"], "lmv_results.csv"),
    ("lmv-kdd", ["lmv", "--protocol", "kdd", "-d", "hepth", "--topics", "5",
                 "--models", "LMVS", "--max-iter", "2"], "lmv_kdd_results.csv"),
    ("lmv-simulation", ["lmv-simulation", "--replicates", "1", "--models", "LMV",
                        "--n-docs", "300", "--n-train", "200", "--max-iter", "10"],
     "lmv_sim_results.csv"),
    ("ktm", ["ktm", "-d", "sotu", "--models", "DMR,KTM", "-n", "10"], "ktm_trajectory.csv"),
    ("ktm-graph", ["ktm", "--kernel", "graph", "-d", "cora", "--models", "KTM-graph", "-n", "3",
                   "--subgraph-size", "100"], "ktm_graph_summary.csv"),
    ("bpbfm", ["bpbfm", "-d", "umls", "--protocol", "paper", "--only-folds", "0",
               "--topics", "5", "--models", "BPBFM-1", "-n", "40", "--burn-in", "20"],
     "bpbfm_results.csv"),
    ("bpbfm-kg", ["bpbfm", "-d", "nations", "--protocol", "kg", "--folds", "1", "--topics", "5",
                  "--models", "BPBFM-1-EM", "-n", "20"], "bpbfm_results.csv"),
]

#: columns that measure the run, not the model: left out of the comparison
TIMING_WORDS = ("seconds", "hours", "time", "elapsed", "rss")


def run_side(src: Path, args: list[str], out: Path) -> tuple[int, float, str]:
    """Run ``topiclink experiment ARGS -o OUT`` with ``src`` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(src.resolve()), MPLBACKEND="Agg")
    command = [sys.executable, "-c",
               "import sys; from topiclink.cli.app import main; sys.argv[0] = 'topiclink';"
               " main()", "experiment", *args, "-o", str(out), "-q", "--force"]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    return done.returncode, time.perf_counter() - start, (done.stderr or done.stdout)[-600:]


def results_file(folder: Path, name: str) -> Path | None:
    path = folder / name
    if path.exists():
        return path
    found = sorted(folder.glob("*results*.csv"))
    return found[0] if found else None


def numbers(path: Path) -> list[dict[str, float | str]]:
    """The rows of a results CSV without timing columns; numbers parsed."""
    rows = []
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            kept: dict[str, float | str] = {}
            for key, value in row.items():
                if any(word in key for word in TIMING_WORDS):
                    continue
                try:
                    kept[key] = float(value)
                except (TypeError, ValueError):
                    kept[key] = value
            rows.append(kept)
    return rows


def compare(before: list[dict], after: list[dict]) -> tuple[bool, float, list[str]]:
    """Equal rows? The largest relative difference of shared numeric columns and the
    columns only one side has."""
    if len(before) != len(after):
        return False, math.inf, [f"{len(before)} rows vs {len(after)}"]
    largest = 0.0
    equal = True
    one_sided: set[str] = set()
    for a, b in zip(before, after, strict=True):
        one_sided |= set(a) ^ set(b)
        for key in set(a) & set(b):
            x, y = a[key], b[key]
            if isinstance(x, float) and isinstance(y, float):
                if math.isnan(x) and math.isnan(y):
                    continue
                if x != y:
                    equal = False
                    largest = max(largest, abs(x - y) / max(abs(x), abs(y), 1e-300))
            elif x != y:
                equal = False
                largest = math.inf
    return equal, largest, sorted(one_sided)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="src of the old tree")
    parser.add_argument("--after", type=Path, required=True, help="src of the new tree")
    parser.add_argument("--out", type=Path, default=Path("cells"))
    parser.add_argument("--only", default="", help="comma-separated paper names")
    parser.add_argument("--json", type=Path, default=None, help="write the report here")
    parser.add_argument("--reuse", action="store_true",
                        help="compare the results already in --out instead of running a side"
                             " whose results file is there")
    options = parser.parse_args()
    chosen = {name for name in options.only.split(",") if name}
    report = []
    failed = False
    for name, args, result_name in CELLS:
        if chosen and name not in chosen:
            continue
        entry: dict = {"paper": name, "command": "topiclink experiment " + " ".join(args)}
        tables = {}
        for side, src in (("before", options.before), ("after", options.after)):
            folder = options.out / name / side
            path = results_file(folder, result_name) if options.reuse and folder.exists() else None
            if path is None:
                code, seconds, tail = run_side(src, args, folder)
                entry[f"{side}_seconds"] = round(seconds, 2)
                path = results_file(folder, result_name) if code == 0 else None
            if path is None:
                entry[f"{side}_error"] = tail.strip().splitlines()[-1:] or [f"rc {code}"]
            else:
                tables[side] = numbers(path)
        if len(tables) == 2:
            equal, largest, one_sided = compare(tables["before"], tables["after"])
            entry.update(equal=equal, largest_relative_difference=largest,
                         columns_on_one_side=one_sided, rows=len(tables["after"]))
        else:
            entry["equal"] = False
        failed |= not entry["equal"]
        print(json.dumps(entry), flush=True)
        report.append(entry)
    if options.json is not None:
        options.json.write_text(json.dumps(report, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
