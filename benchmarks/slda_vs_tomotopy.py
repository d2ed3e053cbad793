"""gSLDA / Gibbs MedLDA against tomotopy's SLDAModel (binary response), same K, iterations.

20 Newsgroups alt.atheism vs talk.religion.misc (bydate split, the MedLDA benchmark): both
libraries train on the same documents for the same number of Gibbs iterations with one
thread, then predict the test split.  Accuracy and training / test time side by side,
JSON output.

    python benchmarks/slda_vs_tomotopy.py [--topics 10,20] [--iterations 200]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="20newsgroups")
    ap.add_argument("--topics", default="10,20")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--c", type=float, default=25.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "slda_vs_tomotopy.json")
    args = ap.parse_args()

    import tomotopy

    import topiclink
    from topiclink.datasets import load_dataset
    from topiclink_reproductions.slda import prepare_task, run_slda_experiment

    task = prepare_task(load_dataset(args.dataset), "binary", random_state=args.seed)
    table = run_slda_experiment(task, ["gSLDA", "gMedLDA", "tomotopy-SLDA"],
                                topics=[int(k) for k in args.topics.split(",")],
                                c_values=[args.c], max_iter=args.iterations,
                                random_state=args.seed)
    rows = table.drop(columns=["run"]).to_dict(orient="records")
    for row in rows:
        print(f"{row['model']:>14s} K={row['K']:<3d} accuracy {row['accuracy']:.3f}  "
              f"train {row['train_seconds']:6.1f} s  test {row['test_seconds']:5.1f} s")
    ratios = {}
    for K in sorted(table["K"].unique()):
        ours = table[(table.model == "gSLDA") & (table.K == K)].iloc[0]
        peer = table[(table.model == "tomotopy-SLDA") & (table.K == K)].iloc[0]
        ratios[int(K)] = {"accuracy_difference": float(ours.accuracy - peer.accuracy),
                          "train_time_ratio_tomotopy_over_ours":
                              float(peer.train_seconds / ours.train_seconds)}
    result = {
        "benchmark": "slda_vs_tomotopy",
        "task": task.name, "n_train": task.train.n_docs, "n_test": task.test.n_docs,
        "n_words": task.train.n_words,
        "protocol": f"{args.iterations} Gibbs iterations, one thread each, c = {args.c} for "
                    "gSLDA/gMedLDA (tomotopy has no c), alpha 0.1, beta 0.01",
        "topiclink_version": topiclink.__version__, "tomotopy_version": tomotopy.__version__,
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count()},
        "results": [{k: (None if isinstance(v, float) and v != v else v)
                     for k, v in row.items()} for row in rows],
        "gslda_vs_tomotopy": ratios,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
