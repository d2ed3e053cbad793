"""Topics on graphs over several Cora subgraphs: is the graph-kernel KTM's lead over LDA
robust, and how much of it is the graph's?

``topiclink experiment ktm --kernel graph`` (the issue-13 protocol: a BFS ball of 350
Cora documents around a seeded start, a seeded 80/20 split, held-out perplexity by
document completion, K = 10, 200 iterations) is run for each seed -- each seed draws
another subgraph and split -- with the KTMs' estimator defaults (a MAP fit of the
kernel's hyper-parameters every 10 iterations, tau kept at 1) and with nothing fitted
(hyper-parameters kept at their start
values: amplitude 1, the median-heuristic length scale, tau 1).  JSON with the held-out
perplexities of LDA, the constant-kernel KTM and the graph-kernel KTM, their ratios, and
the fitted hyper-parameters.

    python benchmarks/ktm_graph_seeds.py [--seeds 0,1,2,3] [--iterations 200]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="cora")
    ap.add_argument("--seeds", default="0,1,2,3")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "ktm_graph_seeds.json")
    args = ap.parse_args()

    import topiclink
    from topiclink_reproductions.ktm_graph import GraphKTMSettings, run_ktm_graph_experiment

    rows = []
    t0 = time.perf_counter()
    for seed in [int(s) for s in args.seeds.split(",")]:
        for label, every in (("estimator defaults: evidence + hyper-prior every 10 "
                               "iterations, tau 1", None),
                             ("hyper-parameters fixed at their start values", 0)):
            settings = GraphKTMSettings(max_iter=args.iterations, optimize_every=every)
            res = run_ktm_graph_experiment(args.dataset, settings=settings, seed=seed)
            table = res.summary.set_index("model")
            held = table["heldout_perplexity"].astype(float)
            row = {
                "seed": seed, "setting": label, "optimize_every": every,
                "n_docs": int(res.data.corpus.n_docs),
                "n_links": int(res.data.links.n_links),
                "heldout_perplexity": {m: float(v) for m, v in held.items()},
                "ktm_graph_over_lda": float(held["KTM-graph"] / held["LDA"]),
                "ktm_const_over_lda": float(held["KTM-const"] / held["LDA"]),
                "ktm_graph_over_ktm_const": float(held["KTM-graph"] / held["KTM-const"]),
                "fitted": {m: res.runs[m].note for m in ("KTM-const", "KTM-graph")},
            }
            rows.append(row)
            print(f"seed {seed} {label:>46}: LDA {held['LDA']:8.1f}  "
                  f"KTM-const {held['KTM-const']:8.1f}  KTM-graph {held['KTM-graph']:8.1f}"
                  f"  graph/LDA {row['ktm_graph_over_lda']:.3f}"
                  f"  graph/const {row['ktm_graph_over_ktm_const']:.3f}", flush=True)
    summary = {}
    for every in (None, 0):
        sel = [r for r in rows if r["optimize_every"] == every]
        summary["optimised" if every is None else "fixed"] = {
            key: {"min": float(np.min([r[key] for r in sel])),
                  "max": float(np.max([r[key] for r in sel])),
                  "below_1": int(sum(r[key] < 1 for r in sel)), "n": len(sel)}
            for key in ("ktm_graph_over_lda", "ktm_const_over_lda",
                        "ktm_graph_over_ktm_const")}
    result = {"benchmark": "ktm_graph_seeds", "issue": 13, "dataset": args.dataset,
              "protocol": "experiment ktm --kernel graph per seed (subgraph, split and "
                          "chains seeded), K = 10, 350-document BFS ball, "
                          f"{args.iterations} iterations; evidence maximisation on / off",
              "rows": rows, "summary": summary,
              "seconds": time.perf_counter() - t0,
              "topiclink_version": topiclink.__version__,
              "machine": {"python": platform.python_version(),
                          "cpu_count": os.cpu_count()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
