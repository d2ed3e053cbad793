"""FB15k-237, kg protocol, BPBFM-1 K = 20: the cost of a short batch chain and of an online
fit of about the same wall time, and of the filtered ranking of the 20,466 test triples.

Per model: seconds per sweep (the sampler's own ``trace_["seconds"]``), the wall time of
``fit`` and of :func:`~topiclink_reproductions.bpbfm.evaluate_kg` (head and tail prediction,
all 14,541 entities candidates, filtered by train + valid + test, ties at the mean rank),
the process's peak RSS before and after the evaluation (``ru_maxrss``), filtered MRR and
Hits@1/3/10.  The numba kernels are compiled by a 2-iteration K = 2 fit of each model
first (not timed).  Run it single-threaded::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src \\
        python benchmarks/bpbfm_fb15k237_probe.py --iterations 50 --online-iterations 16 \\
        --out benchmarks/results/bpbfm_fb15k237_probe.json
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from topiclink.datasets import load_dataset
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
from topiclink_reproductions.bpbfm import (
    HITS_AT,
    KGTask,
    evaluate_kg,
    kg_chunk,
    kg_task,
    peak_rss_mb,
)


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def probe(task: KGTask, name: str, params: dict[str, Any]) -> dict[str, Any]:
    """Fit one model on the train triples and evaluate it; the numbers of one row."""
    BilinearPoissonFactorModel(2, **{**params, "max_iter": 2, "burn_in": 0,
                                     "thinning": 1}).fit(task.train)      # compile
    model = BilinearPoissonFactorModel(20, **params)
    w0, c0 = time.perf_counter(), time.process_time()
    model.fit(task.train)
    fit_s, fit_cpu = time.perf_counter() - w0, time.process_time() - c0
    rss_fit = peak_rss_mb()
    w0, c0 = time.perf_counter(), time.process_time()
    metrics = evaluate_kg(model, task)
    eval_s, eval_cpu = time.perf_counter() - w0, time.process_time() - c0
    sweeps = np.asarray(model.trace_["seconds"], dtype=float)
    row = {"model": name, "K": 20, **params, "n_iter": int(model.n_iter_),
           "kept_samples": int(model.samples_embedding_.shape[0]),
           "sweep_seconds_mean": float(sweeps.mean()),
           "sweep_seconds_median": float(np.median(sweeps)),
           "fit_seconds": fit_s, "fit_cpu_seconds": fit_cpu,
           "cpu_seconds_per_sweep": fit_cpu / max(int(model.n_iter_), 1),
           "eval_seconds": eval_s, "eval_cpu_seconds": eval_cpu,
           "peak_rss_mb_after_fit": rss_fit, "peak_rss_mb_after_eval": peak_rss_mb(),
           "n_active_factors": int(model.n_active_factors_)}
    row.update({k: float(v) for k, v in metrics.items()})
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--thinning", type=int, default=5)
    ap.add_argument("--online-iterations", type=int, default=16)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    out: dict[str, Any] = {
        "benchmark": "bpbfm_fb15k237_probe",
        "what": (f"FB15k-237 (ConvE archive, read without unpacking), kg protocol: fit on "
                 f"the 272,115 train triples; filtered MRR / Hits@1/3/10 over the 20,466 "
                 f"test triples, head and tail prediction, all 14,541 entities candidates, "
                 f"filter = train + valid + test, ties at the mean rank. BPBFM-1 K=20 batch "
                 f"Gibbs {args.iterations} iterations (burn-in {args.iterations // 2}, "
                 f"thinning {args.thinning}) and online (BCDF, minibatches of 4096 "
                 f"entries) {args.online_iterations} sweeps (burn-in "
                 f"{args.online_iterations // 2}) for about the same fit time. "
                 "sweep_seconds = the sampler's trace (wall; held-out log-likelihood "
                 "evaluations excluded); fit_seconds / eval_seconds = wall time of fit / "
                 "evaluate_kg, *_cpu_seconds their process CPU time (the machine is shared: "
                 "compare CPU seconds); "
                 "peak RSS = getrusage ru_maxrss of the whole process (a high-water mark, "
                 "so after_eval - after_fit bounds the evaluation's own extra memory). "
                 "One short run, not converged: numbers show cost, not the models' "
                 "accuracy.")}
    w0 = time.perf_counter()
    ds = load_dataset("fb15k-237")
    out["load_seconds"] = time.perf_counter() - w0
    w0 = time.perf_counter()
    task = kg_task(ds.tensor)
    out["kg_task_seconds"] = time.perf_counter() - w0
    out["data"] = {s: int(t.n_entries) for s, t in ds.tensor.items()}
    out["n_entities"], out["n_relations"] = task.n_entities, int(task.train.n_relations)
    out["chunk_queries"] = kg_chunk(task.n_entities)
    out["peak_rss_mb_after_load"] = peak_rss_mb()
    print(json.dumps(out), flush=True)
    common = {"thinning": args.thinning, "random_state": 0, "n_jobs": 1}
    out["rows"] = [
        probe(task, "BPBFM-1", {**common, "max_iter": args.iterations,
                                "burn_in": args.iterations // 2}),
        probe(task, "BPBFM-1-online", {**common, "inference": "online",
                                       "max_iter": args.online_iterations,
                                       "burn_in": args.online_iterations // 2}),
    ]
    out["total_wall_seconds"] = time.perf_counter() - t0
    out["hits_at"] = list(HITS_AT)
    out["machine"] = (f"shared 2-core {_cpu()}, loaded (other jobs running); single thread "
                      "(NUMBA/OMP/OPENBLAS_NUM_THREADS=1); Python "
                      f"{platform.python_version()}")
    out["command"] = " ".join(["python", "benchmarks/bpbfm_fb15k237_probe.py", *sys.argv[1:]])
    text = json.dumps(out, indent=1)
    if args.out is not None:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
