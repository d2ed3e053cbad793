"""The kernel topic model paper's State-of-the-Union protocol: LDA, DMR, GDMR, KTM.

Runs :func:`topiclink_reproductions.ktm.run_ktm_experiment` on the bundled ``sotu`` data
(addresses 1790-2011, K = 10, 5000 terms, seeded 20 % test split; every model the same
number of iterations -- Gibbs sweeps, KTM outer iterations) and writes, per model, the final
training perplexity, the held-out perplexity by document completion (our estimator for
every model), seconds per iteration and iterations, plus the ratios KTM / DMR (the paper:
training perplexity about 0.88) and GDMR / DMR, as JSON.  GDMR needs tomotopy; a model
that cannot run is recorded under ``skipped``.

    python benchmarks/ktm_sotu.py [--iterations 200] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path


def _clean(value: object) -> object:
    """NaN -> null; numpy scalars -> Python."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="sotu")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 10 iterations, 1000 terms (not the benchmark)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "ktm_sotu.json")
    args = ap.parse_args()

    import numpy as np

    import topiclink
    from topiclink_reproductions.ktm import PAPER, KTMSettings, run_ktm_experiment

    # the paper's number: the middle of its claim's interval (papers/ktm.toml)
    claim = PAPER.claims[0]
    PAPER_KTM_OVER_DMR = round((claim.low + claim.high) / 2, 2)

    iterations = 10 if args.quick else args.iterations
    settings = KTMSettings(max_iter=iterations, vocabulary=1000 if args.quick else 5000,
                           evaluate_every=max(1, min(10, iterations)),
                           burn_in=min(50, max(iterations // 4, 0)))
    t0 = time.perf_counter()
    result = run_ktm_experiment(args.dataset, models=["LDA", "DMR", "GDMR", "KTM"],
                                settings=settings, seed=args.seed)
    total = time.perf_counter() - t0
    table = result.summary.set_index("model")
    models = {}
    for name, row in table.iterrows():
        models[name] = {
            "train_perplexity": _clean(row.final_train_perplexity),
            "heldout_perplexity": _clean(row.heldout_perplexity),
            "seconds_per_iteration": _clean(row.seconds_per_iteration),
            "fit_seconds": _clean(row.fit_seconds),
            "iterations": int(row.n_iter),
            "note": str(row.note),
        }
        print(f"{name:>5s}: training perplexity {row.final_train_perplexity:8.1f}  held-out "
              f"{row.heldout_perplexity:8.1f}  {row.seconds_per_iteration:.4f} s/iteration "
              f"({int(row.n_iter)} iterations)")

    def ratio(a: str, b: str, col: str) -> float | None:
        if a in table.index and b in table.index:
            return _clean(float(table.loc[a, col] / table.loc[b, col]))
        return None

    ratios = {f"{a}/{b}": {"train_perplexity": ratio(a, b, "final_train_perplexity"),
                           "heldout_perplexity": ratio(a, b, "heldout_perplexity")}
              for a, b in (("KTM", "DMR"), ("GDMR", "DMR"), ("DMR", "LDA"))}
    try:
        import tomotopy
        tomotopy_version = tomotopy.__version__
    except ImportError:
        tomotopy_version = None
    d, s = result.data, result.data.settings
    out = {
        "benchmark": "ktm_sotu",
        "quick": bool(args.quick),
        "dataset": args.dataset,
        "n_docs": int(d.corpus.n_docs), "n_train": int(d.train.size),
        "n_test": int(d.test.size), "n_words": int(d.corpus.n_words),
        "n_presidents": int(d.speaker_names.size),
        "protocol": f"State of the Union {s.first_year}-{s.last_year}, K = {s.n_topics}, "
                    f"{s.max_iter} iterations per model (Gibbs sweeps; KTM outer "
                    "iterations), seeded split (test fraction "
                    f"{s.test_fraction:g}, seed {args.seed}); training perplexity = "
                    "exp(-sum n_dw log(theta_d . phi_w) / N) of the final estimates; "
                    "held-out = document completion (our estimator for every model, "
                    f"{s.completion_fraction:g} of each test document's tokens held out, "
                    f"prior from year and president); alpha {s.alpha:g}, beta {s.beta:g}",
        "paper_ktm_over_dmr_train_perplexity": PAPER_KTM_OVER_DMR,
        "topiclink_version": topiclink.__version__, "tomotopy_version": tomotopy_version,
        "numpy_version": np.__version__,
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "platform": platform.platform(), "processor": platform.processor()},
        "total_seconds": total,
        "models": models,
        "ratios": ratios,
        "skipped": dict(result.skipped),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"KTM/DMR training {ratios['KTM/DMR']['train_perplexity']}, held-out "
          f"{ratios['KTM/DMR']['heldout_perplexity']} (paper: ~{PAPER_KTM_OVER_DMR})")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
