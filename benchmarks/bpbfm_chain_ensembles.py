"""BPBFM on the kg protocol with its predictions averaged over independent chains.

The converged comparison (``bpbfm_vs_pykeen.py --peer-training converged``,
``benchmarks/results/bpbfm_kg_converged_vs_pykeen.json``) scores one chain per fold: the
Gibbs chain's kept samples, or one MAP-EM fit.  Its rows vary a lot between seeds (UMLS
BPBFM-1-EM K = 160 fold 0: 0.85-0.89 test MRR over four seeds), which says one chain does
not cover the posterior (Gibbs) or lands on one of many modes (EM).  This script trains
``--chains`` chains per fold exactly as that comparison trains its one (the same chosen
setting, the same validation stopper on the filtered MRR with the train + valid filter,
the model of the best validation check), and scores the *average of their filtered-rank
scores* (each chain's probabilities; an EM fit is one point) as the chains grow: the
validation MRR (what a user could choose the number of chains on) and the test MRR.
Chain 0 of a fold is that comparison's chain (same seed), so the first row repeats its
number.  The peers' test MRR of the same folds are copied beside for reference.

::

    python benchmarks/bpbfm_chain_ensembles.py [--datasets umls,nations] [--folds 0,1,2]
        [--chains 4] [--out benchmarks/results/bpbfm_chain_ensembles.json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
#: per data set: the converged comparison's chosen BPBFM variant and setting
CHOSEN = {"umls": ("BPBFM-1-EM", {"n_topics": 160}),
          "nations": ("BPBFM-1", {"n_topics": 20})}
#: the converged comparison's stopper (its defaults)
STOPPER = dict(check_iterations=25, check_iterations_em=10, patience=10,
               max_iterations=2000, relative_delta=0.002, burn_in=150, iterations=300)


def _comparison():
    spec = importlib.util.spec_from_file_location("bpbfm_vs_pykeen",
                                                  HERE / "bpbfm_vs_pykeen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ChainAverage:
    """Scores of several fitted models averaged (what ``evaluate_kg`` ranks with)."""

    def __init__(self, models: list[Any]) -> None:
        self.models = models

    def __getattr__(self, name: str) -> Any:
        return getattr(self.models[0], name)

    def score_tails_batch(self, a: np.ndarray, r: np.ndarray) -> np.ndarray:
        return sum(m.score_tails_batch(a, r) for m in self.models) / len(self.models)

    def score_heads_batch(self, r: np.ndarray, a: np.ndarray) -> np.ndarray:
        return sum(m.score_heads_batch(r, a) for m in self.models) / len(self.models)


def peer_mrr(path: Path, ds: str) -> dict[str, list[float]]:
    """Per fold test MRR of the peers in the converged comparison's result file."""
    if not path.exists():
        return {}
    models = json.loads(path.read_text())["datasets"].get(ds, {}).get(
        "protocols", {}).get("kg", {}).get("models", {})
    return {name: [round(float(r["mrr"]), 4) for r in v["per_fold"]]
            for name, v in models.items()}


def run_fold(bvp: Any, ds: str, fold: int, n_chains: int, splits: dict) -> dict[str, Any]:
    from topiclink_reproductions.bpbfm import cell_seed, evaluate_kg, kg_task

    variant, setting = CHOSEN[ds]
    args = argparse.Namespace(topics=setting["n_topics"], topics_em=setting["n_topics"],
                              **STOPPER)
    task, vtask = kg_task(splits), bvp.valid_task(splits)
    models, rows = [], []
    for c in range(n_chains):
        seed = cell_seed(c, {"protocol": "kg", "fold": fold, "K": 0},
                         ("protocol", "fold", "K"))
        model, stopper, timings = bvp.fit_converged(variant, setting, args, seed,
                                                    splits["train"], vtask)
        models.append(model)
        avg = ChainAverage(models)
        test = evaluate_kg(avg, task)
        row = {"chains": c + 1, "seed": seed,
               "chain_test_mrr": float(evaluate_kg(model, task)["mrr"]),
               "chain_valid_mrr": float(stopper.summary()["best_valid"]),
               "chain_train_seconds": float(timings["train_seconds"]),
               "valid_mrr": float(evaluate_kg(avg, vtask)["mrr"]),
               **{k: float(test[k]) for k in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10")}}
        rows.append(row)
        print(f"{ds} fold {fold} {variant} {setting}: {c + 1} chain(s): valid MRR "
              f"{row['valid_mrr']:.4f}, test MRR {row['mrr']:.4f} (this chain alone "
              f"{row['chain_test_mrr']:.4f}), H@1 {row['hits_at_1']:.4f}", flush=True)
    return {"fold": fold, "variant": variant, "setting": setting, "rows": rows}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default="umls,nations")
    ap.add_argument("--folds", default="0,1,2")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--out", type=Path, default=HERE / "results" / "bpbfm_chain_ensembles.json")
    ap.add_argument("--peers", type=Path,
                    default=HERE / "results" / "bpbfm_kg_converged_vs_pykeen.json")
    args = ap.parse_args(argv)
    from topiclink.datasets import load_dataset

    bvp = _comparison()
    result: dict[str, Any] = {
        "benchmark": "bpbfm_chain_ensembles", "args": {k: str(v) for k, v in vars(args).items()},
        "protocol": __doc__.split("::")[0].strip(), "stopper": STOPPER,
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "platform": platform.platform(),
                    "load_average_at_start": list(os.getloadavg())},
        "datasets": {}}
    t0 = time.perf_counter()
    for ds in [d for d in args.datasets.split(",") if d]:
        splits = load_dataset(ds).tensor
        entry = result["datasets"][ds] = {"peers_test_mrr": peer_mrr(args.peers, ds),
                                          "folds": []}
        for fold in [int(f) for f in args.folds.split(",") if f]:
            entry["folds"].append(run_fold(bvp, ds, fold, args.chains, splits))
            last = [f["rows"][-1] for f in entry["folds"]]
            entry["mean_test_mrr"] = float(np.mean([r["mrr"] for r in last]))
            entry["mean_single_chain_test_mrr"] = float(np.mean(
                [f["rows"][0]["mrr"] for f in entry["folds"]]))
            result["seconds"] = time.perf_counter() - t0
            args.out.parent.mkdir(parents=True, exist_ok=True)
            tmp = args.out.with_suffix(".tmp")
            tmp.write_text(json.dumps(result, indent=1))
            tmp.replace(args.out)
    return result


if __name__ == "__main__":
    main()
