"""Time to a held-out log-likelihood from LDA's two starts: init="random" / "spectral".

The anchor-word start (``topiclink.topics.spectral``) costs a co-occurrence matrix of the
3,000 most frequent words and K anchor searches before the first sweep; the question is
whether it reaches a given held-out quality sooner than random topics, counting that
cost.  For each K and each start, ``LDA(sampler="gibbs")`` runs to the last checkpoint
over several seeds (the spectral start is the same for every seed, the chain after it is
not); at each checkpoint the topics ``(n_kw + beta) / (n_k + V beta)`` are scored by
document completion on held-out documents (``benchmarks/lda_record.py``'s scorer), and
the clock includes the start.  The target is 95 % of the way from the worst first score
to the best last one (``lda_record.target_level``); seconds to it are interpolated
between checkpoints.  JSON (+ PNG) in ``benchmarks/results/``.

    TOPICLINK_DATA=../shared/datasets python benchmarks/lda_spectral_init.py \\
        --dataset 20newsgroups --topics 20,50,200 [--seeds 0,1,2]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
INITS = ("random", "spectral")


def _record() -> Any:
    """benchmarks/lda_record.py, loaded from its file (this folder stays off sys.path)."""
    spec = importlib.util.spec_from_file_location("_topiclink_bench_lda_record",
                                                  HERE / "lda_record.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_start(X: Any, K: int, init: str, checkpoints: list[int], alpha: float,
              beta: float, seed: int) -> dict[str, Any]:
    """Seconds (from the call of fit, the start included) and topic-word counts at each
    checkpoint of one chain."""
    from topiclink import LDA

    LDA(n_topics=K, max_iter=2, init=init, sampler="gibbs",        # compile first
        random_state=seed).fit(X[: min(50, X.shape[0])])

    class Record:
        reads_state = True

        def __init__(self) -> None:
            self.paused = 0.0
            self.seconds: list[float] = []
            self.counts: list[np.ndarray] = []

        def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> None:
            now = time.perf_counter()
            if iteration + 1 in checkpoints:
                self.seconds.append(now - t0 - self.paused)
                self.counts.append(np.ascontiguousarray(model.state_.nwk.T))
                self.paused += time.perf_counter() - now

    rec = Record()
    last = checkpoints[-1]
    t0 = time.perf_counter()
    LDA(n_topics=K, max_iter=last, evaluate_every=last, sampler="gibbs", init=init,
        doc_topic_prior=alpha, topic_word_prior=beta, random_state=seed,
        callbacks=[rec]).fit(X)
    return {"seconds": rec.seconds, "counts": rec.counts}


def run(X: Any, topics: list[int], seeds: list[int], checkpoints: list[int], alpha: float,
        beta: float, heldout: float, score_iter: int) -> dict[str, Any]:
    record = _record()
    train, test = record.split_documents(X, heldout, 0)
    rows = []
    for K in topics:
        curves: dict[tuple[str, int], dict[str, Any]] = {}
        for init in INITS:
            for seed in seeds:
                got = run_start(train, K, init, checkpoints, alpha, beta, seed)
                lls = [record.heldout_log_likelihood(test, record.topics_from_counts(c, beta),
                                                     alpha, 0, n_iter=score_iter)
                       for c in got["counts"]]
                curves[init, seed] = {"seconds": got["seconds"], "heldout_ll": lls}
                print(f"K={K} {init:8s} seed {seed}: " + "  ".join(
                    f"{t:.1f}s {ll:.4f}" for t, ll in zip(got["seconds"], lls, strict=True)),
                    flush=True)
        target = record.target_level({f"{i}/{s}": c["heldout_ll"]
                                      for (i, s), c in curves.items()})
        for (init, seed), c in curves.items():
            rows.append({"K": K, "init": init, "seed": seed, **c,
                         "seconds_to_target": record.seconds_to_target(
                             c["seconds"], c["heldout_ll"], target), "target": target})
    summary: dict[str, Any] = {}
    for K in topics:
        per = {init: [r["seconds_to_target"] for r in rows if r["K"] == K
                      and r["init"] == init] for init in INITS}
        med = {init: (float(np.median(v)) if all(x is not None for x in v) else None)
               for init, v in per.items()}
        summary[str(K)] = {"median_seconds_to_target": med,
                           "first_checkpoint_ll": {init: float(np.mean(
                               [r["heldout_ll"][0] for r in rows if r["K"] == K
                                and r["init"] == init])) for init in INITS},
                           "spectral_over_random": (med["spectral"] / med["random"]
                                                    if None not in med.values() else None)}
    return {"rows": rows, "summary": summary, "n_train": int(train.shape[0]),
            "n_test": int(test.shape[0]), "train_tokens": int(train.sum())}


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    topics = sorted({r["K"] for r in result["rows"]})
    fig, axes = plt.subplots(1, len(topics), figsize=(4.2 * len(topics), 3.4), squeeze=False)
    for ax, K in zip(axes[0], topics, strict=True):
        for r in (r for r in result["rows"] if r["K"] == K):
            ax.plot(r["seconds"], r["heldout_ll"], marker="o", markersize=3,
                    color="C1" if r["init"] == "spectral" else "C0", alpha=0.8,
                    label=r["init"] if r["seed"] == 0 else None)
        ax.axhline(next(r["target"] for r in result["rows"] if r["K"] == K),
                   color="grey", linestyle=":", linewidth=1)
        ax.set_title(f"K = {K}")
        ax.set_xlabel("seconds (start included)")
    axes[0][0].set_ylabel("held-out log-likelihood per token")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="20newsgroups")
    ap.add_argument("--topics", default="20,50,200")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--checkpoints", default="1,2,5,10,20,40,80")
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--heldout", type=float, default=0.1)
    ap.add_argument("--score-iter", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="a synthetic corpus, K = 10")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    record = _record()
    if args.quick:
        X = record.synthetic_counts(20_000, 100, 500, 10, 0)
        args.topics, args.seeds, args.checkpoints, args.score_iter = "10", "0", "1,2,4", 10
        name = "synthetic"
    else:
        X = record.dataset_counts(args.dataset)
        name = args.dataset
    t0 = time.perf_counter()
    result = run(X, [int(k) for k in args.topics.split(",")],
                 [int(s) for s in args.seeds.split(",")],
                 sorted({int(c) for c in args.checkpoints.split(",")}), args.alpha,
                 args.beta, args.heldout, args.score_iter)
    result = {"benchmark": "lda_spectral_init", "corpus": name, "quick": bool(args.quick),
              "protocol": (f"LDA(sampler='gibbs'), 1 thread, alpha {args.alpha}, beta "
                           f"{args.beta}; {args.heldout:.0%} of documents held out, "
                           f"document completion with {args.score_iter} sweeps"),
              **result, "seconds": time.perf_counter() - t0,
              "machine": {"cpu": platform.processor() or platform.machine(),
                          "cores": os.cpu_count(), "python": platform.python_version()}}
    out = args.out or HERE / "results" / f"lda_spectral_init_{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(out)
    plot(result, out.with_suffix(".png"))
    print(json.dumps(result["summary"], indent=1))
    return result


if __name__ == "__main__":
    main()
