"""Time to quality of the token-level families' two Z steps (issue 44, item 3: what
``sampler="auto"`` takes): gRTM, gSLDA and DMR with ``sampler="gibbs"`` and ``"mh"`` for
the same CPU budget on :mod:`token_family_sweeps`' corpus, the collapsed word log joint
per token (``log_likelihood`` of the trace: both chains target the same posterior, so the
higher after equal time is ahead) recorded along the way.

Each chain runs ``fit(..., resume=True)`` in rounds of iterations (the round's size grows
so that the curve has points from the first seconds) until ``--budget`` CPU seconds of
fitting; numba is compiled beforehand.  The JSON has every curve and, per family and K,
the log joint each sampler reached at the end (just past the budget) and by half of it.

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/token_family_auto.py \\
        --topics 100,1000 --out benchmarks/results/token_family_auto.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent


def _sibling(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"_topiclink_bench_{name}",
                                                  HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sweeps = _sibling("token_family_sweeps")


def curve(family: str, sampler: str, K: int, data: dict[str, Any], budget: float
          ) -> list[dict[str, float]]:
    """(CPU seconds, iterations, log joint per token) after each round of the chain."""
    model = sweeps.estimator(family, sampler, K, 1)
    points: list[dict[str, float]] = []
    spent, done, size, first = 0.0, 0, 1, True
    while spent < budget:
        model.set_params(max_iter=size)
        t0 = time.process_time()
        if first:
            sweeps.fit(model, family, data)
            first = False
        elif family == "DMR":
            model.fit(data["X"], features=data["features"], resume=True)
        elif family == "gSLDA":
            model.fit(data["X"], data["y"], resume=True)
        elif family == "gRTM":
            model.fit(data["X"], links=data["links"], resume=True)
        else:
            model.fit(data["X"], resume=True)
        spent += time.process_time() - t0
        done += size
        loglik = float(np.asarray(model.trace_["log_likelihood"])[-1])
        points.append({"cpu_seconds": spent, "iterations": done, "log_joint": loglik})
        print(f"K={K} {family:5s} {sampler:5s} {spent:7.1f} s {done:5d} it "
              f"{loglik:.4f}", flush=True)
        size = min(2 * size, 50)
    return points


def at(points: list[dict[str, float]], seconds: float) -> float | None:
    """The log joint of the last point at or before ``seconds`` (None before the first)."""
    done = [p["log_joint"] for p in points if p["cpu_seconds"] <= seconds]
    return done[-1] if done else None


def ahead(row: dict[str, Any]) -> str:
    """The sampler with the higher log joint at half the budget (a chain with no point by
    then counts as behind)."""
    half = {k: (-np.inf if row[k]["at_half"] is None else row[k]["at_half"])
            for k in ("gibbs", "mh")}
    return "mh" if half["mh"] > half["gibbs"] else "gibbs"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default="100,1000")
    ap.add_argument("--families", default="DMR,gSLDA,gRTM")
    ap.add_argument("--budget", type=float, default=40.0, help="CPU seconds per chain")
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--out", default="benchmarks/results/token_family_auto.json")
    args = ap.parse_args()
    data = sweeps.make_data(args.docs, 125, 10_000, 50, 6, 0)
    small = sweeps.make_data(60, 20, 200, 5, 2, 1)
    families = args.families.split(",")
    for family in families:
        for sampler in ("gibbs", "mh"):
            sweeps.fit(sweeps.estimator(family, sampler, 5, 2), family, small)
    rows = []
    for K in (int(k) for k in args.topics.split(",")):
        for family in families:
            row: dict[str, Any] = {"K": K, "family": family}
            for sampler in ("gibbs", "mh"):
                points = curve(family, sampler, K, data, args.budget)
                row[sampler] = {"curve": points, "final_log_joint": points[-1]["log_joint"],
                                "final_seconds": points[-1]["cpu_seconds"],
                                "at_half": at(points, args.budget / 2)}
            row["ahead_at_half"] = ahead(row)
            rows.append(row)
    out = {"what": __doc__.splitlines()[0], "rows": rows,
           "settings": {**vars(args), "n_tokens": data["n_tokens"],
                        "machine": platform.processor() or platform.machine(),
                        "cpus": os.cpu_count()}}
    path = Path(args.out)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=1))
    tmp.replace(path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
