"""BPBFM-1 / BPBFM-2 against PyKEEN's RESCAL, DistMult and ComplEx, same data, same run.

Two protocols per data set (UMLS, Nations), both from :mod:`topiclink.experiments.bpbfm`:

* paper (RESCAL's and the BPBFM paper's): the full tensor is the union of the train, valid
  and test triples; each fold holds out an independent random 10 % of *all* entries, ones
  and zeros alike (``holdout_tensor_entries`` seeded from the fold index only); every model
  is fitted on the same remaining tensor (the held-out entries are ``missing``: BPBFM
  imputes them, the peers never sample them as negatives: without that, 200 epochs of 10
  negatives per positive memorise every cell and Nations' held-out AUC-ROC of RESCAL /
  ComplEx falls from 0.87 / 0.95 to 0.65 / 0.78) and scored by sklearn's
  ``roc_auc_score`` / ``average_precision_score`` of ``predict_proba`` on the same
  held-out entries;
* kg: fit on the data set's train triples alone (every other cell a zero for BPBFM; the
  peers sample negatives from every corruption but the training triples, PyKEEN's usual
  setting), filtered MRR and Hits@1/3/10 over the test triples, head and tail
  prediction, ties at the mean rank (``topiclink.metrics.ranking.filtered_ranks``); a
  "fold" is a repetition with another seed.  Marking the valid and test cells unobserved
  would point every model to the answers.

Needs the bench extra (``pip install "topiclink[bench]"``: PyKEEN and torch).

    python benchmarks/bpbfm_vs_pykeen.py [--datasets umls,nations] [--folds 0,1,2]
        [--models BPBFM-1,BPBFM-2,BPBFM-1-EM,RESCAL,DistMult,ComplEx] [--protocols paper,kg]
        [--topics 20] [--topics-em 40] [--iterations 300] [--burn-in 150] [--epochs 200] [--quick]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import time
from pathlib import Path

import numpy as np

PEERS = ("RESCAL", "DistMult", "ComplEx")
OURS = ("BPBFM-1", "BPBFM-2", "BPBFM-1-EM")
METRICS = {"paper": ("auc_roc", "auc_pr"),
           "kg": ("mrr", "hits_at_1", "hits_at_3", "hits_at_10", "mrr_head", "mrr_tail")}


def _clean(value):
    if isinstance(value, float | np.floating):
        value = float(value)
        return None if value != value else value
    if isinstance(value, np.integer):
        return int(value)
    return value


def _build(name: str, args: argparse.Namespace, seed: int, protocol: str = "paper"):
    from topiclink.experiments.kge_peers import KGEmbeddingPeer
    from topiclink.models.bpbfm import BilinearPoissonFactorModel

    if name == "BPBFM-1-EM":   # MAP-EM (inference="em"): no burn-in, tol-stopped
        return BilinearPoissonFactorModel(
            n_topics=args.topics_em, inference="em", max_iter=500, random_state=seed,
            n_jobs=1)
    if name in OURS:
        return BilinearPoissonFactorModel(
            n_topics=args.topics, n_dictionary=None if name == "BPBFM-1" else 10,
            max_iter=args.iterations, burn_in=args.burn_in, random_state=seed, n_jobs=1)
    # paper: the held-out cells are random (label-free), so the peers, like BPBFM, leave
    # them out of training (never sampled as negatives); kg: they are the test triples,
    # so the peers sample negatives as PyKEEN users do (training triples filtered only)
    return KGEmbeddingPeer(name, num_epochs=args.epochs, random_state=seed, n_jobs=1,
                           exclude_missing=protocol == "paper")


def _fit(model, tensor) -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    model.fit(tensor)
    return time.perf_counter() - w0, time.process_time() - c0


def _summary(rows: list[dict], keys: tuple[str, ...]) -> dict:
    out = {}
    for key in (*keys, "fit_seconds"):
        vals = np.array([r[key] for r in rows if r.get(key) is not None], dtype=float)
        if vals.size:
            out[key] = {"mean": float(vals.mean()),
                        "sd": float(vals.std(ddof=1)) if vals.size > 1 else None,
                        "per_fold": [float(v) for v in vals]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="umls,nations")
    ap.add_argument("--folds", default=",".join(map(str, range(10))),
                    help="fold indices (paper: independent 10 %% draws; kg: repetitions)")
    ap.add_argument("--models", default=",".join(OURS + PEERS))
    ap.add_argument("--protocols", default="paper,kg")
    ap.add_argument("--topics", type=int, default=20, help="K of BPBFM")
    ap.add_argument("--topics-em", type=int, default=40, help="K of BPBFM-1-EM")
    ap.add_argument("--iterations", type=int, default=300, help="BPBFM Gibbs iterations")
    ap.add_argument("--burn-in", type=int, default=150)
    ap.add_argument("--epochs", type=int, default=200, help="PyKEEN training epochs")
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="one fold, nations, 60 Gibbs iterations (burn-in 30), 40 epochs")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "bpbfm_vs_pykeen.json")
    args = ap.parse_args()
    if args.quick:
        args.datasets, args.folds = "nations", "0"
        args.iterations, args.burn_in, args.epochs = 60, 30, 40
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("pykeen").setLevel(logging.ERROR)

    import pykeen
    import torch

    import topiclink
    from topiclink.datasets import load_dataset
    from topiclink.experiments.bpbfm import (
        cell_seed,
        evaluate_kg,
        evaluate_paper,
        kg_task,
        paper_folds,
        union_tensor,
    )
    from topiclink.experiments.kge_peers import PEER_DEFAULTS, register_pykeen_peers

    register_pykeen_peers()
    datasets = [d for d in args.datasets.split(",") if d]
    folds = [int(f) for f in args.folds.split(",") if f != ""]
    models = [m for m in args.models.split(",") if m]
    protocols = [p for p in args.protocols.split(",") if p]
    for m in models:
        if m not in OURS + PEERS:
            raise SystemExit(f"unknown model {m!r}; known: {', '.join(OURS + PEERS)}")

    result: dict = {
        "benchmark": "bpbfm_vs_pykeen",
        "protocol": {
            "paper": f"union of train+valid+test; per fold {args.fraction:g} of all entries "
                     "held out (holdout_tensor_entries, seed from the fold only); AUC-ROC "
                     "and AUC-PR (sklearn) of predict_proba on the same held-out entries",
            "kg": "train triples (valid+test missing); filtered MRR, Hits@1/3/10 over the "
                  "test triples, head and tail, ties at the mean rank; a fold is a "
                  "repetition with another seed",
            "BPBFM": f"K = {args.topics}, {args.iterations} Gibbs iterations, burn-in "
                     f"{args.burn_in}, thinning 5, one thread; BPBFM-2 with M = 10; "
                     f"BPBFM-1-EM: inference='em', K = {args.topics_em}, tol 1e-5, at most "
                     "500 iterations, em_prior_rate 5",
            "peers": f"PyKEEN sLCWA, BCEWithLogits, Adam, {args.epochs} epochs, batch 512, "
                     "10 negatives per positive (training triples filtered; held-out entries "
                     "too in paper, not in kg), one torch thread; "
                     + "; ".join(f"{m}: {v}" for m, v in PEER_DEFAULTS.items()),
            "fit_seconds": "wall time of fit (PyKEEN: the training loop; BPBFM: the chain, "
                           "numba compilation excluded by a warm-up fit)",
        },
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "topiclink_version": topiclink.__version__, "pykeen_version": pykeen.get_version(),
        "torch_version": torch.__version__,
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "platform": platform.platform(), "processor": platform.processor(),
                    "load_average_at_start": list(os.getloadavg())},
        "datasets": {},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)

    def write() -> None:
        tmp = args.out.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(result, indent=2, default=_clean) + "\n")
        tmp.replace(args.out)

    warmed = set()
    for ds_name in datasets:
        ds = load_dataset(ds_name)
        splits = ds.tensor
        train = splits["train"]
        entry = {"n_entities": int(train.n_entities), "n_relations": int(train.n_relations),
                 "n_triples": {s: int(t.n_entries) for s, t in splits.items()},
                 "protocols": {}}
        result["datasets"][ds_name] = entry
        data = {}
        if "paper" in protocols:
            data["paper"] = paper_folds(union_tensor(splits), folds, args.fraction, args.seed)
        if "kg" in protocols:
            data["kg"] = kg_task(splits)
        for protocol in protocols:
            rows: dict[str, list[dict]] = {m: [] for m in models}
            entry["protocols"][protocol] = {"models": {}}
            for fold in folds:
                seed = cell_seed(args.seed, {"protocol": protocol, "fold": fold, "K": 0},
                                 ("protocol", "fold", "K"))
                fdata = data[protocol][fold] if protocol == "paper" else data[protocol]
                for name in models:
                    if name in OURS and name not in warmed:   # numba compilation
                        warm = _build(name, args, 0)
                        warm.set_params(max_iter=2, burn_in=0)
                        warm.fit(fdata.train)
                        warmed.add(name)
                    model = _build(name, args, seed, protocol)
                    wall, cpu = _fit(model, fdata.train)
                    fit_seconds = getattr(model, "fit_seconds_", wall)
                    t0 = time.perf_counter()
                    metrics = (evaluate_paper(model, fdata) if protocol == "paper"
                               else evaluate_kg(model, fdata))
                    row = {"fold": fold, "seed": seed,
                           **{k: _clean(v) for k, v in metrics.items()},
                           "fit_seconds": fit_seconds, "fit_wall_seconds": wall,
                           "fit_cpu_seconds": cpu,
                           "test_seconds": time.perf_counter() - t0,
                           "n_parameters": _clean(getattr(model, "n_parameters_", None))}
                    rows[name].append(row)
                    shown = "  ".join(f"{k} {row[k]:.4f}" for k in METRICS[protocol][:4])
                    print(f"{ds_name:>8s} {protocol:>5s} fold {fold} {name:>9s}: {shown}  "
                          f"fit {fit_seconds:.1f} s", flush=True)
                    entry["protocols"][protocol]["models"][name] = {
                        "n_parameters": row["n_parameters"],
                        "summary": _summary(rows[name], METRICS[protocol]),
                        "per_fold": rows[name]}
                    write()
    result["machine"]["load_average_at_end"] = list(os.getloadavg())
    write()
    print()
    print(table(result))
    print(f"written {args.out}")


def table(result: dict) -> str:
    """The results as text: mean ± sd over folds per data set, protocol and model."""
    lines = []
    for ds_name, entry in result["datasets"].items():
        for protocol, part in entry["protocols"].items():
            cols = (*METRICS[protocol][:4], "fit_seconds")
            lines.append(f"{ds_name} / {protocol}")
            lines.append(f"{'model':>9s}  {'folds':>5s}  " + "  ".join(f"{c:>15s}" for c in cols)
                         + f"  {'params':>8s}")
            for name, res in part["models"].items():
                cells = []
                for c in cols:
                    s = res["summary"].get(c)
                    if s is None:
                        cells.append(f"{'-':>15s}")
                        continue
                    d = 1 if c == "fit_seconds" else 3
                    sd = "" if s["sd"] is None else f" ± {s['sd']:.{d}f}"
                    cells.append(f"{s['mean']:.{d}f}{sd}".rjust(15))
                n = len(res["per_fold"])
                lines.append(f"{name:>9s}  {n:>5d}  " + "  ".join(cells)
                             + f"  {res['n_parameters'] or 0:>8d}")
            lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
