"""Calibration of BPBFM's held-out probabilities (issue 24, item 5).

The paper protocol (10 % of all entries held out, folds 0-2, seed 0) on UMLS and
Nations; BPBFM-1, K = 20, 200 iterations, burn-in 100, thinning 5, with the paper's
self-pairs and ``self_pairs="scaled"``.  Per fold: expected calibration error (10 equal
bins), AUC-PR, the mean width of the 90 % posterior interval of each held-out entry's
probability, and the reliability table.  The PyKEEN peers' calibration is not measured
here (PyKEEN is not installed in this environment; ``benchmarks/bpbfm_vs_pykeen.py``).

    python benchmarks/bpbfm_calibration.py [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import average_precision_score

from topiclink.datasets import load_dataset
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
from topiclink.metrics import expected_calibration_error, reliability_table
from topiclink_reproductions.bpbfm import paper_folds, union_tensor


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one fold, 60 iterations")
    ap.add_argument("--out", default="benchmarks/results/bpbfm_calibration.json")
    args = ap.parse_args()
    folds = (0,) if args.quick else (0, 1, 2)
    iters, burn = (60, 30) if args.quick else (200, 100)
    rows = []
    t_start = time.perf_counter()
    for name in ("umls", "nations"):
        full = union_tensor(load_dataset(name).tensor)
        for f, fold in paper_folds(full, folds, 0.1, 0).items():
            for variant in ("bilinear", "scaled"):
                model = BilinearPoissonFactorModel(20, max_iter=iters, burn_in=burn,
                                                   thinning=5, self_pairs=variant,
                                                   random_state=f).fit(fold.train)
                h, r, t = fold.entries.T
                mean, lo, hi = model.proba_interval(h, r, t, level=0.9)
                y = fold.labels.astype(float)
                table = reliability_table(y, mean)
                rows.append({"data": name, "fold": f, "self_pairs": variant,
                             "ece": expected_calibration_error(y, mean),
                             "auc_pr": float(average_precision_score(y, mean)),
                             "mean_proba": float(mean.mean()), "observed": float(y.mean()),
                             "interval90_mean_width": float(np.mean(hi - lo)),
                             "reliability": table.round(4).to_dict(orient="records")})
                print(f"{name} fold {f} {variant}: ECE {rows[-1]['ece']:.4f} AUC-PR "
                      f"{rows[-1]['auc_pr']:.3f} width {rows[-1]['interval90_mean_width']:.3f}")
    summary = {}
    for name in ("umls", "nations"):
        for variant in ("bilinear", "scaled"):
            sel = [r for r in rows if r["data"] == name and r["self_pairs"] == variant]
            summary[f"{name}/{variant}"] = {k: float(np.mean([r[k] for r in sel]))
                                            for k in ("ece", "auc_pr", "interval90_mean_width")}
    out = {"benchmark": "bpbfm_calibration", "what": __doc__.split("\n\n")[1].replace("\n", " "),
           "command": "python benchmarks/bpbfm_calibration.py" + (" --quick" if args.quick else ""),
           "machine": f"{platform.processor() or platform.machine()}, shared 2-core AMD EPYC",
           "seconds": round(time.perf_counter() - t_start, 1), "summary": summary,
           "rows": rows}
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
