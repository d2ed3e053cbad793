"""gRTM speed on Cora (LINQS, one of 5 folds, 1% negatives): time of each Gibbs step.

For K in {10, 25, 50}: median seconds per iteration of the U (weights) step, the exact
and the approximate Z sweep, the lambda (augmentation) step for both losses, and a plain
LDA sweep on the same training corpus (the peer the relational sweep is compared to);
then the total training time of Gibbs-gRTM for one Cora fold at K = 10 with 400 iterations.
WebKB (LINQS) is timed too: there the tokens outnumber the pair visits five to one (the
regime the design note's "exact sweep ~ 2 LDA sweeps" assumes), on Cora the pair visits
outnumber the tokens.

    python benchmarks/grtm_speed.py [--iterations 30] [--out benchmarks/results/grtm_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np


def per_step(model_kwargs, fold, iterations):
    from topiclink.families.rtm.estimator import RelationalTopicModel

    m = RelationalTopicModel(max_iter=iterations, evaluate_every=0, random_state=0,
                             **model_kwargs)
    m.fit(fold.train_corpus, links=fold.train_links)
    skip = min(3, iterations - 1)      # compilation and start-up
    return {k.replace("seconds_", ""): float(np.median(v[skip:]))
            for k, v in m.trace_.items() if k.startswith("seconds")}, m.n_pairs_


def lda_sweep(fold, K, iterations):
    from topiclink.families.lda.estimator import LDA

    m = LDA(n_topics=K, max_iter=iterations, evaluate_every=0, random_state=0)
    m.fit(fold.train_corpus)
    return float(np.median(m.trace_["seconds"][min(3, iterations - 1):]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="cora-linqs,webkb-linqs",
                    help="comma-separated; the full 400-iteration fit runs on the first")
    ap.add_argument("--topics", default="10,25,50")
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--full-iterations", type=int, default=400)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "grtm_speed.json")
    args = ap.parse_args()

    import topiclink
    from topiclink.data.splits import kfold_documents
    from topiclink.datasets import load_dataset

    rows = []
    folds = {}
    for name in args.datasets.split(","):
        ds = load_dataset(name)
        fold = kfold_documents(ds.corpus, ds.links, n_folds=5, random_state=0)[0]
        folds[name] = fold
        n_tokens = fold.train_corpus.n_tokens
        for K in [int(k) for k in args.topics.split(",")]:
            exact, n_pairs = per_step({"n_topics": K, "c": 4.0}, fold, args.iterations)
            approx, _ = per_step({"n_topics": K, "c": 4.0, "approx": True}, fold,
                                 args.iterations)
            hinge, _ = per_step({"n_topics": K, "c": 4.0, "loss": "hinge"}, fold,
                                args.iterations)
            lda = lda_sweep(fold, K, args.iterations)
            row = {
                "dataset": name, "n_topics": K, "n_pairs": n_pairs, "n_tokens": n_tokens,
                "pair_visits_per_token": 2 * n_pairs / n_tokens,
                "weights_step_s": exact["weights"], "z_exact_s": exact["z"],
                "z_approx_s": approx["z"], "lambda_pg_s": exact["lambda"],
                "lambda_hinge_s": hinge["lambda"],
                "lda_sweep_s": lda,
                "z_exact_over_lda": exact["z"] / lda,
                "z_exact_over_approx": exact["z"] / approx["z"],
                "pg_over_hinge_lambda": exact["lambda"] / hinge["lambda"],
                "iteration_s": exact["seconds"],
            }
            rows.append(row)
            print(f"{name} K={K:3d}  U {row['weights_step_s']*1e3:7.1f} ms  Z exact "
                  f"{row['z_exact_s']*1e3:6.1f} ms  Z approx {row['z_approx_s']*1e3:6.1f} ms"
                  f"  lambda PG {row['lambda_pg_s']*1e3:6.1f} ms  hinge "
                  f"{row['lambda_hinge_s']*1e3:5.1f} ms  LDA sweep {lda*1e3:5.1f} ms  "
                  f"(Z/LDA {row['z_exact_over_lda']:.1f})")
    fold = folds[args.datasets.split(",")[0]]
    from topiclink.families.rtm.estimator import RelationalTopicModel

    totals = {}
    for n_jobs in (1, 2):    # n_jobs: threads of the augmentation draws (same chain)
        t0 = time.perf_counter()
        RelationalTopicModel(n_topics=10, c=4.0, max_iter=args.full_iterations,
                             evaluate_every=0, random_state=0, n_jobs=n_jobs).fit(
            fold.train_corpus, links=fold.train_links)
        totals[n_jobs] = time.perf_counter() - t0
        print(f"Gibbs-gRTM, K=10, {args.full_iterations} iterations, one fold, n_jobs="
              f"{n_jobs}: {totals[n_jobs]:.1f} s")
    result = {
        "benchmark": "grtm_speed",
        "datasets": args.datasets.split(","),
        "fold": {"dataset": args.datasets.split(",")[0], "n_train_docs": fold.n_train,
                 "n_train_links": fold.train_links.n_links,
                 "n_tokens": fold.train_corpus.n_tokens},
        "protocol": f"median over iterations 4..{args.iterations} of each step's wall time; "
                    "c = 4, 1% negatives; peer: topiclink's plain LDA sweep on the same "
                    "training corpus",
        "topiclink_version": topiclink.__version__,
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count()},
        "per_iteration": rows,
        "full_fit": {"dataset": args.datasets.split(",")[0], "n_topics": 10,
                     "iterations": args.full_iterations, "seconds": totals[1],
                     "seconds_n_jobs_2": totals[2]},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
