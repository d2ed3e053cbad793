"""Gibbs-gRTM at scale: seconds per iteration, peak memory and planted-U recovery.

Synthetic directed networks from the model (``make_rtm_data``: K topics, planted U of
``planted_rtm_weights``, ``--degree`` links per document on average, i.e. ``n_links = degree
x D``, shifted to hit that count, drawn by its sparse thinning path beyond 5k documents)
are fitted by ``RelationalTopicModel`` (Gibbs-gRTM: logistic loss, full U, exact Z step)
with the per-document negatives (``negatives_per_link``, default 1) and the Numba
augmentation draws (``augmentation="numba"``).  Measured per size in ``--sizes`` (default
2k, 10k, 30k, 100k documents):

1. seconds to draw the data, and its peak RSS;
2. seconds per Gibbs iteration: median over ``--iterations`` iterations after
   ``--warmup`` (the trace's ``seconds`` and its parts: U step, Z sweep, augmentation);
3. peak RSS of the fit above the RSS before it (``/proc/self/status`` VmHWM after
   ``/proc/self/clear_refs``, see ``memory_probes.py``; a lower bound, memory the
   allocator kept from drawing the data is reused), the process's peak RSS, and the
   tracemalloc peak of a separate 2-iteration fit (NumPy's allocations, exact), with the
   number of training pairs.

For the largest size (unless ``--no-full``) one fit of ``--full-iterations`` (200)
iterations averages U over the last ``--n-average`` and reports the recovery of the
planted U: topics matched to the truth by the Hungarian assignment on the cosine between
the fitted and true topic-word distributions (as tests/families/rtm/test_rtm.py does), then the
Pearson correlation of the matched fitted U with the planted one, the same after removing
each matrix's mean (the per-document negatives are a case-control sample, which shifts
every entry of U by about log(#unobserved pairs / #negatives): an intercept, since zbar
lies on the simplex), and the mean shift itself.  If ``--full-iterations`` would not fit
in ``--budget`` seconds (projected from the timed iterations), the fit is cut to what fits
and the JSON says so, with the projection.

Every size runs in its own subprocess (fresh peak-memory counter; Numba kernels warmed up
on a tiny problem first, compilation excluded).  Results: ``benchmarks/results/
grtm_scale.json``.

    python benchmarks/grtm_scale.py [--sizes 2000,10000,30000,100000] [--topics 10]
        [--iterations 5] [--full-iterations 200] [--out benchmarks/results/grtm_scale.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from memory_probes import reset_peak, status_kb  # noqa: E402


def _mib(kb: int | None) -> float | None:
    return None if kb is None else round(kb / 1024.0, 1)


def _draw(spec: dict):
    from topiclink.datasets import make_rtm_data

    D = spec["n_docs"]
    return make_rtm_data(n_docs=D, n_words=spec["vocab"], n_topics=spec["topics"],
                         doc_length=spec["doc_length"], n_links=int(spec["degree"] * D),
                         directed=True, random_state=spec["seed"])


def _model(spec: dict, max_iter: int, n_average: int = 1):
    from topiclink.families.rtm.estimator import RelationalTopicModel

    return RelationalTopicModel(
        spec["topics"], loss="logistic", weights="full", approx=False,
        negatives_per_link=spec["negatives_per_link"], augmentation=spec["augmentation"],
        doc_topic_prior=spec["alpha"], weight_prior_var=spec["weight_prior_var"],
        max_iter=max_iter, n_average=n_average, evaluate_every=0, n_jobs=spec["n_jobs"],
        random_state=spec["seed"] + 1)


def _warm_up(spec: dict) -> None:
    small = dict(spec, n_docs=200, degree=5)
    (corpus, links), _ = _draw(small)
    _model(small, 2).fit(corpus, links=links)


def _recovery(model, truth) -> dict:
    from scipy.optimize import linear_sum_assignment

    cos = model.components_ @ truth.topic_word.T
    cos /= np.linalg.norm(model.components_, axis=1)[:, None]
    cos /= np.linalg.norm(truth.topic_word, axis=1)[None, :]
    rows, cols = linear_sum_assignment(-cos)
    perm = np.empty(len(cols), int)
    perm[cols] = rows                      # true topic t -> learned topic perm[t]
    U = model.weights_[np.ix_(perm, perm)]
    T = truth.weights
    centred = np.corrcoef((U - U.mean()).ravel(), (T - T.mean()).ravel())[0, 1]
    return {
        "topic_match_min_cosine": round(float(cos[rows, cols].min()), 4),
        "corr_U": round(float(np.corrcoef(U.ravel(), T.ravel())[0, 1]), 4),
        "corr_U_centred": round(float(centred), 4),
        "mean_shift_fitted_minus_true": round(float((U - T).mean()), 3),
        "rmse_after_shift": round(float(np.sqrt(np.mean((U - T - (U - T).mean()) ** 2))), 3),
        "fitted_U": np.round(U, 2).tolist(),
        "planted_U": np.round(T, 2).tolist(),
    }


def child(spec: dict) -> dict:
    _warm_up(spec)
    out: dict = {"n_docs": spec["n_docs"], "topics": spec["topics"]}
    reset_peak()
    rss0 = status_kb("VmRSS")
    t0 = time.perf_counter()
    (corpus, links), truth = _draw(spec)
    out["seconds_data"] = round(time.perf_counter() - t0, 2)
    out["peak_rss_data_mib"] = _mib((status_kb("VmHWM") or 0) - (rss0 or 0))
    out["n_links"] = int(links.n_links)
    out["mean_out_degree"] = round(links.n_links / spec["n_docs"], 2)
    out["n_tokens"] = int(corpus.n_tokens) if hasattr(corpus, "n_tokens") else None
    out["expected_n_links"] = round(float(truth.expected_n_links), 1)

    n_iter = spec["warmup"] + spec["iterations"]
    full = spec.get("full_iterations", 0)
    reset_peak()
    rss1 = status_kb("VmRSS")
    t0 = time.perf_counter()
    model = _model(spec, n_iter).fit(corpus, links=links)
    wall = time.perf_counter() - t0
    out["peak_rss_fit_mib"] = _mib((status_kb("VmHWM") or 0) - (rss1 or 0))
    out["peak_rss_process_mib"] = _mib(status_kb("VmHWM"))
    # NumPy's allocations of a fit (set-up and 2 iterations), exact whatever the allocator
    # keeps mapped: tracemalloc on a separate, untimed fit
    tracemalloc.start()
    _model(spec, 2).fit(corpus, links=links)
    out["tracemalloc_peak_fit_mib"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
    tracemalloc.stop()
    tr = model.trace_
    timed = slice(spec["warmup"], None)

    def med(key: str) -> float | None:
        vals = tr.get(key)
        return None if vals is None else round(float(np.median(vals[timed])), 4)

    out.update({
        "n_pairs": int(model.n_pairs_), "n_negatives": int(model.n_negatives_),
        "seconds_per_iteration": med("seconds"),
        "seconds_per_iteration_min": round(float(np.min(tr["seconds"][timed])), 4),
        "seconds_weights": med("seconds_weights"), "seconds_z": med("seconds_z"),
        "seconds_lambda": med("seconds_lambda"),
        "seconds_fit_wall": round(wall, 2),
        "seconds_setup": round(wall - float(np.sum(tr["seconds"])), 2),
    })
    if full:
        per_iter = out["seconds_per_iteration"]
        projected = out["seconds_setup"] + full * per_iter
        out["full_projected_seconds"] = round(projected, 1)
        n_full = full
        if projected > spec["budget"]:
            n_full = max(spec["n_average"] + 1,
                         int((spec["budget"] - out["seconds_setup"]) / per_iter))
        t0 = time.perf_counter()
        fitted = _model(spec, n_full, n_average=min(spec["n_average"], n_full)).fit(
            corpus, links=links)
        out["full"] = {
            "iterations": n_full, "requested_iterations": full,
            "cut_to_budget": n_full < full,
            "seconds": round(time.perf_counter() - t0, 1),
            "seconds_per_iteration_median": round(float(np.median(fitted.trace_["seconds"])), 4),
            "n_average": min(spec["n_average"], n_full),
            "link_loglik_last": round(float(fitted.trace_["link_loglik"][-1]), 4),
            "peak_rss_process_mib": _mib(status_kb("VmHWM")),
            "expected_shift_log_unobserved_over_negatives": round(float(np.log(
                (spec["n_docs"] * (spec["n_docs"] - 1) - links.n_links)
                / max(fitted.n_negatives_, 1))), 3),
            **_recovery(fitted, truth),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,10000,30000,100000")
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--degree", type=float, default=10.0)
    ap.add_argument("--doc-length", type=int, default=50)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--weight-prior-var", type=float, default=100.0)
    ap.add_argument("--negatives-per-link", type=float, default=1.0)
    ap.add_argument("--augmentation", default="numba", choices=["numba", "reference"])
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--full-iterations", type=int, default=200)
    ap.add_argument("--n-average", type=int, default=20)
    ap.add_argument("--budget", type=float, default=1500.0,
                    help="seconds allowed for the full fit of the largest size")
    ap.add_argument("--no-full", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "grtm_scale.json")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return

    sizes = [int(s) for s in args.sizes.split(",")]
    base = {"topics": args.topics, "degree": args.degree, "doc_length": args.doc_length,
            "vocab": args.vocab, "alpha": args.alpha,
            "weight_prior_var": args.weight_prior_var,
            "negatives_per_link": args.negatives_per_link,
            "augmentation": args.augmentation, "n_jobs": args.n_jobs,
            "warmup": args.warmup, "iterations": args.iterations, "seed": args.seed,
            "n_average": args.n_average, "budget": args.budget}
    results = []
    for D in sizes:
        spec = dict(base, n_docs=D,
                    full_iterations=0 if args.no_full or D != max(sizes)
                    else args.full_iterations)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            results.append({"n_docs": D, "error": proc.stderr.strip().splitlines()[-1]})
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["seconds_subprocess"] = round(time.perf_counter() - t0, 1)
        results.append(res)
        print(f"D={D}: {res['n_links']} links, {res['n_pairs']} pairs, "
              f"{res['seconds_per_iteration']:.3f} s/iteration (U {res['seconds_weights']}, "
              f"Z {res['seconds_z']}, lambda {res['seconds_lambda']}), fit peak "
              f"{res['peak_rss_fit_mib']} MiB, data {res['seconds_data']} s", flush=True)
        if "full" in res:
            f = res["full"]
            print(f"  full fit: {f['iterations']} iterations in {f['seconds']} s, "
                  f"corr(U) {f['corr_U']}, centred {f['corr_U_centred']}", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(_document(args, results), indent=2) + "\n")
    args.out.write_text(json.dumps(_document(args, results), indent=2) + "\n")


def _document(args: argparse.Namespace, results: list) -> dict:
    ok = [r for r in results if "seconds_per_iteration" in r]
    slope = None
    if len(ok) >= 2:
        x = np.log([r["n_links"] for r in ok])
        y = np.log([r["seconds_per_iteration"] for r in ok])
        slope = round(float(np.polyfit(x, y, 1)[0]), 3)
    return {
        "benchmark": "grtm_scale",
        "model": "Gibbs-gRTM (logistic, full U, exact Z step)",
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "child")},
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg")
                    else None},
        "loglog_slope_seconds_vs_links": slope,
        "results": results,
    }


if __name__ == "__main__":
    main()
