"""LMV scaling: batch VB (all D^2 pairs) vs stochastic LMVS, time and memory against D.

For ``make_lmv_data`` networks of D = 1k, 3k, 10k, 30k documents (K = 6: the paper's
simulation design, supplement S7, V = 100 words, 100 words per document) this measures

- batch LMV (``inference="batch"``): seconds per outer iteration;
- LMVS (``inference="stochastic"``, minibatch 200, n0 = 100): seconds per sweep and the
  pairs sampled per sweep (``trace_["pairs"]``);
- the peak memory of each fit, against 8 D^2 bytes (one dense D x D float64 array);

and fits the growth exponents (log-log slope of time against D).

**Citation density.**  With the paper's B, ``make_lmv_data`` links every ordered pair with
probability tau_d' theta_d^T B theta_d' (mean about 0.5 * sum(B) / K^2 = 0.025), so the
mean out-degree grows like 0.025 D: 750 citations per document (22 M links) at D = 30k.
Here B is the paper's B times ``degree / (0.025 (D - 1))`` (capped so that B <= 1) so the
mean out-degree stays at ``--degree`` (default 25, a realistic reference list) at every D;
the JSON records the scale and the realised link counts.

**Protocol.**  Every measurement (one size, one method) runs in its own subprocess: it
draws the network (same seed for both methods), warms the Numba kernels up on a 200-document
problem, resets the peak-RSS counter (``/proc/self/clear_refs``; where that is not
available the whole process's ``ru_maxrss`` is used and the JSON says so), fits with
``tol=0`` for ``--iterations`` outer iterations / sweeps on ``--n-jobs`` threads, and
reports ``trace_["seconds"]`` and the peak RSS above the RSS before the fit.  Seconds per
iteration are the median over iterations 2..n (the first, from the uniform start, is
cheaper for batch and is recorded separately; the minimum over 2..n, less sensitive to
other load on the machine, and the inner fixed-point rounds per pair are recorded too).
Before a size is run, its time is projected from the previous measured size with D^2
scaling (``iterations x t_prev x (D / D_prev)^2``); when that exceeds the budget
(``--batch-budget-s``, ``--lmvs-budget-s``, default 600 s per size and method) the size
is skipped and the reason recorded.

    python benchmarks/lmv_scale.py            # 1k, 3k, 10k, 30k: ~5 min (30k over budget)
    python benchmarks/lmv_scale.py --quick    # 500, 1000 (< 1 min)
    python benchmarks/lmv_scale.py --sizes 1000,3000 --out /tmp/x.json
    python benchmarks/lmv_scale.py --time --degree 5 --methods stochastic \
        --out benchmarks/results/lmv_scale_sparse_dag.json   # citations to older papers only

``--time`` draws publication times and lets a document cite only older ones (a DAG, as
real citation networks), fitted as LMV(t): the non-links to newer documents carry no
likelihood term and are never sampled, and a document reaches only its ancestors, so far
fewer pairs fall within n0 steps than in the dense undirected-in-time default.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from memory_probes import reset_peak, status_kb

_status_kb, _reset_peak = status_kb, reset_peak


def draw(n_docs: int, degree: float, seed: int, times: bool = False):
    """The network of one size: make_lmv_data with the paper's B scaled to ``degree``;
    ``times``: publication times, citations only to older documents (half the pairs)."""
    from topiclink.datasets import make_lmv_data
    from topiclink.datasets.synthetic import paper_blockmodel

    B = paper_blockmodel()
    base_rate = 0.5 * B.sum() / B.shape[0] ** 2          # E tau = 1/2, E theta = 1/K
    if times:
        base_rate *= 0.5                                 # only older documents are cited
    scale = min(1.0 / B.max(), degree / (base_rate * (n_docs - 1)))  # entries stay <= 1
    (corpus, links), truth = make_lmv_data(n_docs=n_docs, blockmodel=B * scale,
                                           publication_time=times, random_state=seed)
    return corpus, links, truth, scale


def child(spec: dict) -> dict:
    """One measurement (runs in a subprocess)."""
    from topiclink.families.lmv.estimator import VisibilityTopicModel

    def model(max_iter: int) -> VisibilityTopicModel:
        return VisibilityTopicModel(spec["n_topics"], inference=spec["method"],
                                    max_iter=max_iter, tol=0.0,
                                    batch_size=spec["batch_size"], n0=spec["n0"],
                                    n_jobs=spec["n_jobs"], random_state=0)

    t0 = time.perf_counter()
    times = bool(spec.get("time", False))
    corpus, links, truth, scale = draw(spec["n_docs"], spec["degree"], spec["seed"], times)
    when = truth.publication_time if times else None
    gen_s = time.perf_counter() - t0
    # Numba warm-up (compilation or cache load) on a small problem
    wc, wl, _, _ = draw(200, min(spec["degree"], 20.0), spec["seed"] + 1)
    model(2).fit(wc, links=wl)
    exact = _reset_peak()
    rss0 = _status_kb("VmRSS") if exact else None
    maxrss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    m = model(spec["iterations"])
    t0 = time.perf_counter()
    m.fit(corpus, links=links, publication_time=when)
    fit_s = time.perf_counter() - t0
    if exact:
        peak_kb = _status_kb("VmHWM") - rss0
        how = "VmHWM after fit - VmRSS before fit (peak reset via /proc/self/clear_refs)"
    else:
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - maxrss0
        how = "ru_maxrss delta (lower bound: the high-water mark was not reset)"
    seconds = [float(s) for s in m.trace_["seconds"]]
    out = {
        "n_docs": spec["n_docs"], "method": spec["method"], "n_links": int(links.n_links),
        "mean_out_degree": links.n_links / spec["n_docs"],
        "expected_n_links": float(truth.expected_n_links), "blockmodel_scale": scale,
        "n_tokens": int(corpus.n_tokens), "generate_s": gen_s, "fit_s": fit_s,
        "iterations": len(seconds), "seconds": seconds,
        "first_iteration_s": seconds[0],
        "per_iteration_s": float(np.median(seconds[1:] if len(seconds) > 1 else seconds)),
        "min_iteration_s": float(np.min(seconds[1:] if len(seconds) > 1 else seconds)),
        "peak_rss_mib": peak_kb / 1024.0, "peak_rss_method": how,
    }
    if "pairs" in m.trace_:
        pairs = [float(p) for p in m.trace_["pairs"]]
        out["pairs_per_sweep"] = pairs
        out["mean_pairs_per_sweep"] = float(np.mean(pairs))
        # the last minibatch's mean inner fixed-point rounds per pair, for each sweep
        out["inner_rounds_per_pair"] = [float(r) for r in m.trace_["pair_rounds"]]
    else:
        n_pairs = spec["n_docs"] * (spec["n_docs"] - 1)
        out["mean_pairs_per_sweep"] = float(n_pairs)
        out["inner_rounds_per_pair"] = [float(r) / n_pairs for r in m.trace_["pair_rounds"]]
    return out


def run_child(spec: dict) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"n_docs": spec["n_docs"], "method": spec["method"],
                "error": proc.stderr.strip().splitlines()[-5:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def slope(rows: list[dict], key: str) -> float | None:
    pts = [(r["n_docs"], r[key]) for r in rows if r.get(key)]
    if len(pts) < 2:
        return None
    x, y = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,3000,10000,30000")
    ap.add_argument("--topics", type=int, default=6,
                    help="K; the default 6 uses the paper's simulation B (only K = 6)")
    ap.add_argument("--degree", type=float, default=25.0,
                    help="mean out-degree (citations per document) kept fixed over D")
    ap.add_argument("--iterations", type=int, default=3,
                    help="outer iterations (batch) / sweeps (LMVS) per measurement")
    ap.add_argument("--batch-size", type=int, default=200, help="LMVS minibatch |S|")
    ap.add_argument("--n0", type=int, default=100)
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--batch-budget-s", type=float, default=600.0)
    ap.add_argument("--lmvs-budget-s", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time", action="store_true",
                    help="publication times: citations only to older documents (a DAG, "
                         "as real citation networks), fitted as LMV(t)")
    ap.add_argument("--methods", default="stochastic,batch",
                    help="comma-separated: stochastic, batch")
    ap.add_argument("--quick", action="store_true", help="sizes 500,1000 (< 1 min)")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "lmv_scale.json")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    if args.topics != 6:
        ap.error("--topics: only K = 6 (the paper's simulation blockmodel) is supported")
    sizes = [500, 1000] if args.quick else [int(s) for s in args.sizes.split(",")]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods or set(methods) - {"stochastic", "batch"}:
        ap.error(f"--methods: stochastic and/or batch, got {args.methods!r}")

    import topiclink

    t_start = time.perf_counter()
    budgets = {"batch": args.batch_budget_s, "stochastic": args.lmvs_budget_s}
    rows: dict[str, list[dict]] = {"batch": [], "stochastic": []}
    skipped: list[dict] = []
    for D in sizes:
        for method in methods:
            done = [r for r in rows[method] if "per_iteration_s" in r]
            if done:
                prev = done[-1]
                projected = (args.iterations * prev["per_iteration_s"]
                             * (D / prev["n_docs"]) ** 2)
                if projected > budgets[method]:
                    reason = (f"projected {projected:.0f} s for {args.iterations} iterations "
                              f"(from {prev['per_iteration_s']:.2f} s at D={prev['n_docs']}"
                              f", D^2 scaling) > budget {budgets[method]:.0f} s")
                    skipped.append({"n_docs": D, "method": method, "reason": reason})
                    print(f"D={D:6d} {method:10s} skipped: {reason}", flush=True)
                    continue
            spec = {"n_docs": D, "method": method, "n_topics": args.topics,
                    "degree": args.degree, "iterations": args.iterations,
                    "batch_size": args.batch_size, "n0": args.n0, "n_jobs": args.n_jobs,
                    "seed": args.seed, "time": bool(args.time)}
            r = run_child(spec)
            r["dense_d2_mib"] = 8.0 * D * D / 2**20
            if "error" in r:
                print(f"D={D:6d} {method:10s} FAILED: {r['error']}", flush=True)
            else:
                r["pairs_fraction_of_d2"] = r["mean_pairs_per_sweep"] / (D * (D - 1))
                r["peak_over_dense_d2"] = r["peak_rss_mib"] / r["dense_d2_mib"]
                print(f"D={D:6d} {method:10s} {r['per_iteration_s']:8.2f} s/iter "
                      f"(first {r['first_iteration_s']:.2f})  pairs/iter "
                      f"{r['mean_pairs_per_sweep']:.3g} ({r['pairs_fraction_of_d2']:.2f} "
                      f"D^2)  peak {r['peak_rss_mib']:7.1f} MiB vs 8D^2 "
                      f"{r['dense_d2_mib']:8.1f} MiB  links {r['n_links']} "
                      f"(mean out-degree {r['mean_out_degree']:.1f})", flush=True)
            rows[method].append(r)
    ok = {m: [r for r in rs if "per_iteration_s" in r] for m, rs in rows.items()}
    exponents = {
        "batch_seconds_per_iteration": slope(ok["batch"], "per_iteration_s"),
        "lmvs_seconds_per_sweep": slope(ok["stochastic"], "per_iteration_s"),
        "lmvs_pairs_per_sweep": slope(ok["stochastic"], "mean_pairs_per_sweep"),
        "batch_peak_rss": slope(ok["batch"], "peak_rss_mib"),
        "lmvs_peak_rss": slope(ok["stochastic"], "peak_rss_mib"),
    }
    print("growth exponents (log-log slope against D): "
          + ", ".join(f"{k} {v:.2f}" for k, v in exponents.items() if v is not None))
    result = {
        "benchmark": "lmv_scale",
        "data": {
            "generator": "topiclink.datasets.make_lmv_data (supplement S7 design: V=100, "
                         "100 words/doc, alpha=0.05, eta=0.1, tau~Beta(1,1)) "
                         + ("with publication times: citations only to older documents, "
                            "fitted as LMV(t)" if args.time else "without publication "
                            "times (any ordered pair may link)"),
            "publication_times": bool(args.time),
            "n_topics": args.topics,
            "blockmodel": "paper_blockmodel() * degree / (0.025 (D - 1)) (capped at B <= 1) "
                          "so the mean out-degree stays fixed (unscaled, make_lmv_data's "
                          "density is ~0.025 D citations per document: 750 at D = 30k)",
            "target_mean_out_degree": args.degree, "seed": args.seed,
        },
        "protocol": (f"each (D, method) in its own subprocess; Numba warm-up on D=200 first; "
                     f"{args.iterations} outer iterations/sweeps with tol=0; per-iteration "
                     f"time = median over iterations 2..{args.iterations}; n_jobs="
                     f"{args.n_jobs}; LMVS batch_size={args.batch_size}, n0={args.n0}; "
                     "batch pairs per iteration = D (D - 1); peak memory = peak RSS of the "
                     "fit above the RSS before it; dense reference 8 D^2 bytes"),
        "budgets_s": {"batch": args.batch_budget_s, "lmvs": args.lmvs_budget_s},
        "sizes": sizes,
        "batch": rows["batch"], "lmvs": rows["stochastic"], "skipped": skipped,
        "growth_exponents": exponents,
        "total_seconds": time.perf_counter() - t_start,
        "topiclink_version": topiclink.__version__,
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "platform": platform.platform()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out} ({result['total_seconds']:.0f} s)")


if __name__ == "__main__":
    main()
