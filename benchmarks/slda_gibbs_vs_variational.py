"""gSLDA (Gibbs) against variational logistic sLDA (vSLDA): training time and accuracy.

The gSLDA paper (Zhu et al., ACL 2013) claims its Gibbs sampler trains an order of
magnitude faster than a variational sLDA.  On 20 Newsgroups alt.atheism vs
talk.religion.misc (bydate split) both train on the same documents with one thread:
gSLDA for a fixed number of Gibbs iterations (the protocol's 200), vSLDA by variational
EM until the bound per token changes by less than ``tol`` relative (lda-c's EM criterion
is 1e-4; a tighter 1e-5 is also run).  Reported per (model, K, c): accuracy, total
training time, iterations, seconds per iteration, test time; for vSLDA also the mean
E-step sweeps per document.  JSON output.

    python benchmarks/slda_gibbs_vs_variational.py [--topics 10,20] [--c 1,25]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="20newsgroups")
    ap.add_argument("--topics", default="10,20")
    ap.add_argument("--c", default="1,25")
    ap.add_argument("--iterations", type=int, default=200, help="gSLDA Gibbs iterations")
    ap.add_argument("--tols", default="1e-4,1e-5", help="vSLDA EM tolerances")
    ap.add_argument("--max-em", type=int, default=200, help="vSLDA EM iteration cap")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results"
                    / "slda_gibbs_vs_variational.json")
    args = ap.parse_args()

    import topiclink
    from topiclink.datasets import load_dataset
    from topiclink.estimators import SupervisedTopicModel, VariationalSLDA
    from topiclink_reproductions.slda import prepare_task

    task = prepare_task(load_dataset(args.dataset), "binary", random_state=args.seed)
    # compile the kernels outside the timings
    SupervisedTopicModel(3, max_iter=2, random_state=0).fit(task.train, task.y_train)
    VariationalSLDA(3, max_iter=2, random_state=0).fit(task.train, task.y_train)

    rows = []

    def record(row: dict) -> None:
        rows.append(row)
        print(f"{row['model']:>6s} K={row['K']:<3d} c={row['c']:<4g} {row['setting']:>10s}: "
              f"accuracy {row['accuracy']:.3f}  train {row['train_seconds']:6.1f} s  "
              f"{row['n_iter']:4d} it  {row['seconds_per_iteration']:.4f} s/it  "
              f"test {row['test_seconds']:.1f} s", flush=True)

    for K in [int(k) for k in args.topics.split(",")]:
        seed = args.seed + K
        for c in [float(v) for v in args.c.split(",")]:
            t0 = time.perf_counter()
            g = SupervisedTopicModel(K, c=c, max_iter=args.iterations, evaluate_every=0,
                                     random_state=seed).fit(task.train, task.y_train)
            train_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            acc = float(np.mean(g.predict(task.test) == task.y_test))
            record({"model": "gSLDA", "K": K, "c": c, "setting": f"{g.n_iter_} it",
                    "accuracy": acc, "train_seconds": train_s, "n_iter": int(g.n_iter_),
                    "seconds_per_iteration": train_s / g.n_iter_,
                    "test_seconds": time.perf_counter() - t0})
            for tol in [float(v) for v in args.tols.split(",")]:
                t0 = time.perf_counter()
                v = VariationalSLDA(K, c=c, max_iter=args.max_em, tol=tol,
                                    random_state=seed).fit(task.train, task.y_train)
                train_s = time.perf_counter() - t0
                t0 = time.perf_counter()
                acc = float(np.mean(v.predict(task.test) == task.y_test))
                J = v.trace_["log_likelihood"]
                record({"model": "vSLDA", "K": K, "c": c, "setting": f"tol {tol:g}",
                        "accuracy": acc, "train_seconds": train_s, "n_iter": int(v.n_iter_),
                        "seconds_per_iteration": train_s / v.n_iter_,
                        "test_seconds": time.perf_counter() - t0,
                        "converged": bool(v.converged_),
                        "final_relative_change": float(abs(J[-1] - J[-2]) / abs(J[-2]))
                        if J.size > 1 else None,
                        "mean_e_step_sweeps": float(v.trace_["e_step_sweeps"].mean()),
                        "bound_per_token": float(J[-1])})
    ratios = []
    for r in rows:
        if r["model"] != "vSLDA":
            continue
        g = next(x for x in rows if x["model"] == "gSLDA" and x["K"] == r["K"]
                 and x["c"] == r["c"])
        ratios.append({"K": r["K"], "c": r["c"], "vslda": r["setting"],
                       "train_time_ratio_vslda_over_gslda":
                           r["train_seconds"] / g["train_seconds"],
                       "accuracy_difference_gslda_minus_vslda":
                           g["accuracy"] - r["accuracy"]})
    for q in ratios:
        print(f"K={q['K']} c={q['c']:g} vSLDA {q['vslda']}: vSLDA/gSLDA train time "
              f"{q['train_time_ratio_vslda_over_gslda']:.2f}, accuracy gSLDA - vSLDA "
              f"{q['accuracy_difference_gslda_minus_vslda']:+.3f}")
    result = {
        "benchmark": "slda_gibbs_vs_variational",
        "task": task.name, "n_train": task.train.n_docs, "n_test": task.test.n_docs,
        "n_words": task.train.n_words, "n_train_tokens": task.train.n_tokens,
        "protocol": f"gSLDA {args.iterations} Gibbs iterations; vSLDA variational EM to the "
                    f"relative tolerances {args.tols} (cap {args.max_em}), e_step_iter 20, "
                    "e_step_tol 1e-4; alpha 0.1, beta 0.01, nu^2 1, one thread, kernels "
                    "compiled before timing",
        "topiclink_version": topiclink.__version__,
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count()},
        "results": rows, "ratios": ratios,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
