"""What limits BPBFM's held-out AUC-PR on UMLS and Nations (the paper protocol)?

One factor at a time, on the same folds as ``benchmarks/bpbfm_vs_pykeen.py`` (the union of
train, valid and test triples; per fold an independent 10 % of *all* entries held out by
:func:`topiclink_reproductions.bpbfm.paper_folds`, seed 0; each fold's chain seeded as in
that benchmark, so the baseline reproduces its BPBFM-1 rows), BPBFM-1 with K = 20, 200
Gibbs iterations, burn-in 100, thinning 5 unless the variant says otherwise; AUC-ROC and
AUC-PR (sklearn ``roc_auc_score`` / ``average_precision_score``) of ``predict_proba`` over
the held-out entries (:func:`~topiclink_reproductions.bpbfm.evaluate_paper`).

Groups (``--groups``):

``prior_a``
    the Dirichlet parameter of U's columns: 0.01 (the authors' released code), 0.1 (the
    estimator's default), 1.
``shrinkage``
    the gamma-process hyper-parameters gamma0, c0, e0 / f0, beta one at a time, and the
    number of active factors (share of the posterior-mean relation matrices above 1 %,
    over all relations and per relation).
``mixing``
    one 1000-iteration chain per fold recording the held-out rates of every 5th
    iteration (and U, Lambda), from which: 200 iterations / burn-in 100 (= baseline),
    1000 / 100, 1000 / 500, the last sample alone, averaging the probabilities (what
    ``predict_proba`` does) against the probability of the averaged parameters; and 3
    chains of 200 iterations (3 seeds) with their probabilities averaged.
``heldout``
    how the held-out entries enter the fit: imputed every sweep (the sampler's
    ``missing`` handling, the default) against fitted as observed zeros; the link:
    ranking by the averaged probability ``1 - exp(-rate)`` against the averaged rate.
``evaluation``
    from the baseline's scores: ties, self-pairs (i == j) among the held-out entries,
    average precision against the trapezoidal area under the PR curve, the number of
    held-out ones, and each relation's share of the top-ranked false positives.
``fix``
    variants that change the model (``--groups fix``; see the module's VARIANTS):
    ``self_pairs="scaled"`` (a self-pair's rate thinned by a learned rho_r), with 1000
    iterations, and BPBFM-2 (M = 10) with and without it.
``kg``
    the baseline and ``self_pairs="scaled"`` on the kg protocol (train triples, filtered
    MRR / Hits@k over the test triples, :func:`~topiclink_reproductions.bpbfm.evaluate_kg`;
    repetitions 0-2 seeded as ``benchmarks/bpbfm_vs_pykeen.py``).

Every fit runs in this process, one thread (``NUMBA_NUM_THREADS=1``).  Results go to
``--out`` (default ``benchmarks/results/bpbfm_accuracy_diagnosis.json``): per variant the
per-fold rows and the mean over folds per data set.  Runs already in ``--out`` are reused
(``--fresh`` recomputes), so groups can be run one after the other.

    python benchmarks/bpbfm_diagnosis.py [--datasets umls,nations] [--folds 0,1,2]
        [--groups prior_a,shrinkage,mixing,heldout,evaluation,fix,kg] [--quick] [--fresh]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import (
    auc,
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
)

K = 20
ITER, BURN, THIN = 200, 100, 5
NOTES = [
    "one chain per fold and variant: the spread between chains of the baseline (chain=1, "
    "chain=2: other seeds) is as large as most single-factor effects (Nations fold 0: "
    "0.809 / 0.790 / 0.741), so only effects consistent over folds and data sets count",
    "PR-self0 (auc_pr_self0): the same fit with every self-pair (i, r, i) scored 0; "
    "UMLS and Nations hold no self-loop triple",
    "heldout=zeros: relations whose ones are all held out keep their held-out entries "
    "missing (the estimator refuses a relation without a triple)",
    "fit_seconds are wall times on a loaded shared machine (not comparable across runs)",
]
GROUPS = ("prior_a", "shrinkage", "mixing", "heldout", "evaluation", "fix", "kg")
#: variants also run on the kg protocol (group "kg")
KG_VARIANTS = ("baseline", "self_pairs=scaled")


@dataclass
class Variant:
    """A fit: estimator parameters over the baseline's, the chain's length, seed offset
    (another chain), and how the held-out entries enter the fit."""

    name: str
    group: str
    what: str
    params: dict[str, Any] = field(default_factory=dict)
    max_iter: int = ITER
    burn_in: int = BURN
    chain: int = 0
    heldout: str = "impute"   # "impute" (missing), "zeros" (observed), "impute+self"
    record: bool = False             # keep every 5th iteration's held-out rates, U, Lambda


def with_priors(params: dict[str, Any]) -> dict[str, Any]:
    """A variant's settings as the estimator's keywords: the paper's prior symbols
    (``a``, ``gamma0``, ...) become the fields of its ``priors``."""
    import dataclasses

    from topiclink.families.bpbfm.priors import BPBFMPriors

    fields = {f.name for f in dataclasses.fields(BPBFMPriors)}
    priors = {k: v for k, v in params.items() if k in fields}
    rest = {k: v for k, v in params.items() if k not in fields}
    return {**rest, "priors": BPBFMPriors(**priors)} if priors else rest


BASE = Variant("baseline", "baseline", "BPBFM-1, K = 20, 200 iterations, burn-in 100, "
               "a = 0.1, gamma0 = c0 = e0 = f0 = beta = 1 (the estimator's defaults)",
               record=True)

VARIANTS: list[Variant] = [
    Variant("a=0.01", "prior_a", "U[:, k] ~ Dir(0.01) (the authors' released code)",
            {"a": 0.01}),
    Variant("a=1", "prior_a", "U[:, k] ~ Dir(1) (uniform on the simplex)", {"a": 1.0}),
    Variant("gamma0=10", "shrinkage", "d_k ~ Ga(gamma0/K = 0.5, 1): weaker shrinkage",
            {"gamma0": 10.0}),
    Variant("gamma0=0.1", "shrinkage", "d_k ~ Ga(gamma0/K = 0.005, 1): stronger shrinkage",
            {"gamma0": 0.1}),
    Variant("c0=0.1", "shrinkage", "rate of d_k 0.1 (larger d, weaker shrinkage)",
            {"c0": 0.1}),
    Variant("e0=f0=0.1", "shrinkage", "eps ~ Ga(0.1, 0.1): vaguer diagonal scale",
            {"e0": 0.1, "f0": 0.1}),
    Variant("beta=0.1", "shrinkage", "Lambda ~ Ga(shape, rate 0.1): larger Lambda a priori",
            {"beta": 0.1}),
    Variant("beta=10", "shrinkage", "Lambda ~ Ga(shape, rate 10): smaller Lambda a priori",
            {"beta": 10.0}),
    Variant("iter=1000,burn=500", "mixing", "1000 iterations, burn-in 500, thinning 5 "
            "(the estimator keeps the latest 50 samples)", max_iter=1000, burn_in=500,
            record=True),
    Variant("chain=1", "mixing", "a second chain (seed + 1), 200 iterations", chain=1),
    Variant("chain=2", "mixing", "a third chain (seed + 2), 200 iterations", chain=2),
    Variant("self-pairs missing", "heldout", "the self-pairs (i, r, i) also marked "
            "missing in the fit (imputed: the model is fitted to the other cells alone)",
            heldout="impute+self"),
    Variant("self_pairs=scaled", "fix", "self-pair rate rho_r u_i^T Lambda^r u_i, rho_r ~ "
            "Beta(1, 1) learned per relation (the estimator's option)",
            {"self_pairs": "scaled"}),
    Variant("self_pairs=scaled,iter=1000,burn=500", "fix", "self_pairs='scaled' with 1000 "
            "iterations, burn-in 500", {"self_pairs": "scaled"}, max_iter=1000, burn_in=500),
    Variant("self_pairs=scaled,beta=0.1", "fix", "self_pairs='scaled' with beta = 0.1 "
            "(the best single prior change with self-pairs scored 0)",
            {"self_pairs": "scaled", "beta": 0.1}),
    Variant("BPBFM-2", "fix", "BPBFM-2 (M = 10), self_pairs='bilinear'",
            {"n_dictionary": 10}),
    Variant("BPBFM-2,self_pairs=scaled", "fix", "BPBFM-2 (M = 10), self_pairs='scaled'",
            {"n_dictionary": 10, "self_pairs": "scaled"}),
    Variant("heldout=zeros", "heldout", "held-out entries fitted as observed zeros "
            "(tensor without ``missing``) instead of imputed", heldout="zeros"),
]


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, float | np.floating):
        value = float(value)
        return None if value != value else value
    if isinstance(value, np.integer):
        return int(value)
    return value


class Recorder:
    """Callback: every ``every``-th iteration, the held-out rates, U and Lambda of the
    current state."""

    def __init__(self, entries: np.ndarray, every: int = THIN) -> None:
        self.entries = entries.astype(np.int32)
        self.every = every
        self.iterations: list[int] = []
        self.rates: list[np.ndarray] = []
        self.U: list[np.ndarray] = []
        self.L: list[np.ndarray] = []

    def on_iteration(self, model: Any, iteration: int, info: dict) -> bool:
        from topiclink.families.bpbfm import kernels as kernels

        if (iteration + 1) % self.every:
            return False
        state = model.state_
        eta = state.eta
        L = np.einsum("mr,mkl->rkl", eta, state.G) if eta.size else state.G
        e = self.entries
        self.iterations.append(iteration + 1)
        self.rates.append(kernels.entry_rates(e[:, 0], e[:, 1], e[:, 2], state.U,
                                              np.ascontiguousarray(L)))
        self.U.append(state.U.copy())
        self.L.append(np.array(L, copy=True))
        return False


def aucs(labels: np.ndarray, score: np.ndarray) -> dict[str, float]:
    """AUC-ROC and AUC-PR (average precision), as ``evaluate_paper``."""
    return {"auc_roc": float(roc_auc_score(labels, score)),
            "auc_pr": float(average_precision_score(labels, score))}


def active_factors(L: np.ndarray, threshold: float = 0.01) -> dict[str, float]:
    """Factors whose share of the mass of the relation matrices (rows + columns) is above
    ``threshold``: over all relations (the estimator's ``n_active_factors_``) and the mean
    over relations of each relation's own count."""
    strength = L.sum(axis=(0, 2)) + L.sum(axis=(0, 1))
    overall = int(np.sum(strength / strength.sum() > threshold))
    per = L.sum(axis=2) + L.sum(axis=1)                     # (R, K)
    tot = per.sum(axis=1, keepdims=True)
    share = np.divide(per, tot, out=np.zeros_like(per), where=tot > 0)
    return {"active_factors": overall,
            "active_factors_per_relation": float(np.mean((share > threshold).sum(axis=1)))}


class Runner:
    """Fits variants on the folds of each data set, caching the runs by (variant, data
    set, fold)."""

    def __init__(self, datasets: list[str], folds: list[int], cache: dict[str, Any]) -> None:
        from topiclink.datasets import load_dataset
        from topiclink_reproductions.bpbfm import cell_seed, paper_folds, union_tensor

        self.folds = folds
        self.data = {}
        self.full = {}
        self.splits = {}
        for ds in datasets:
            self.splits[ds] = load_dataset(ds).tensor
            full = union_tensor(self.splits[ds])
            self.full[ds] = full
            self.data[ds] = paper_folds(full, folds, 0.1, 0)
        self.seeds = {f: cell_seed(0, {"protocol": "paper", "fold": f, "K": 0},
                                   ("protocol", "fold", "K")) for f in folds}
        self.cache = cache
        self.records: dict[tuple[str, str, int], Recorder] = {}
        self.models: dict[tuple[str, str, int], Any] = {}

    def fit(self, v: Variant, ds: str, fold: int, keep: bool = False) -> dict[str, Any]:
        """The row of variant ``v`` on fold ``fold`` of ``ds`` (cached unless ``keep``
        asks for the fitted model and recorder too)."""
        from topiclink.data.tensor import RelationalTensor
        from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
        from topiclink_reproductions.bpbfm import evaluate_paper

        key = f"{v.name}|{ds}|{fold}"
        if key in self.cache and not keep:
            return self.cache[key]
        f = self.data[ds][fold]
        train = f.train
        if v.heldout == "zeros":
            # a relation whose ones are all held out keeps its held-out entries missing
            # (the estimator refuses a relation without any triple)
            miss = np.asarray(train.missing)
            empty = ~np.isin(miss[:, 1], train.relations[train.values > 0])
            train = RelationalTensor(train.heads, train.relations, train.tails, train.values,
                                     train.n_entities, train.n_relations, train.entity_names,
                                     train.relation_names, miss[empty])
        elif v.heldout == "impute+self":
            N, R = train.n_entities, train.n_relations
            ii, rr = np.meshgrid(np.arange(N), np.arange(R), indexing="ij")
            selfs = np.column_stack([ii.ravel(), rr.ravel(), ii.ravel()])
            cell = lambda a: (a[:, 1].astype(np.int64) * N + a[:, 0]) * N + a[:, 2]  # noqa
            selfs = selfs[~np.isin(cell(selfs), cell(np.asarray(train.missing)))]
            train = train.hold_out(selfs)
        params = {"n_topics": K, "max_iter": v.max_iter, "burn_in": v.burn_in,
                  "thinning": THIN, "random_state": int(self.seeds[fold]) + v.chain,
                  "n_jobs": 1, **v.params}
        rec = Recorder(f.entries) if (v.record or keep) else None
        model = BilinearPoissonFactorModel(**with_priors(params),
                                           callbacks=[rec] if rec else None)
        t0 = time.perf_counter()
        model.fit(train)
        seconds = time.perf_counter() - t0
        e = f.entries
        p = model.predict_proba(e[:, 0], e[:, 1], e[:, 2])
        p0 = np.where(e[:, 0] == e[:, 2], 0.0, p)
        row = {"variant": v.name, "dataset": ds, "fold": fold, **evaluate_paper(model, f),
               "auc_pr_self0": float(average_precision_score(f.labels, p0)),
               "fit_seconds": seconds, "n_samples": int(model.samples_embedding_.shape[0]),
               **active_factors(model.relation_matrices_)}
        self.cache[key] = row
        self.models[(v.name, ds, fold)] = model
        if rec is not None:
            self.records[(v.name, ds, fold)] = rec
        print(f"  {v.name:>22} {ds:>8} fold {fold}: AUC-PR {row['auc_pr']:.4f} AUC-ROC "
              f"{row['auc_roc']:.4f} active {row['active_factors']} "
              f"({row['active_factors_per_relation']:.1f}/rel) {seconds:.1f} s", flush=True)
        return row

    def fit_kg(self, v: Variant, ds: str, rep: int) -> dict[str, Any]:
        """The kg protocol's row of variant ``v``, repetition ``rep`` (cached)."""
        from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
        from topiclink_reproductions.bpbfm import cell_seed, evaluate_kg, kg_task

        key = f"kg:{v.name}|{ds}|{rep}"
        if key in self.cache:
            return self.cache[key]
        task = kg_task(self.splits[ds])
        seed = cell_seed(0, {"protocol": "kg", "fold": rep, "K": 0},
                         ("protocol", "fold", "K"))
        model = BilinearPoissonFactorModel(**with_priors(
            {"n_topics": K, "max_iter": v.max_iter, "burn_in": v.burn_in,
             "thinning": THIN, "random_state": int(seed) + v.chain, "n_jobs": 1,
             **v.params}))
        t0 = time.perf_counter()
        model.fit(task.train)
        seconds = time.perf_counter() - t0
        row = {"variant": f"kg: {v.name}", "dataset": ds, "fold": rep,
               **evaluate_kg(model, task), "fit_seconds": seconds}
        self.cache[key] = row
        print(f"  kg {v.name:>19} {ds:>8} rep {rep}: MRR {row['mrr']:.4f} Hits@10 "
              f"{row['hits_at_10']:.4f} {seconds:.1f} s", flush=True)
        return row

    def recorded(self, v: Variant, ds: str, fold: int) -> Recorder:
        """The recorder of a run, fitting again if the cached row has none."""
        if (v.name, ds, fold) not in self.records:
            self.fit(v, ds, fold, keep=True)
        return self.records[(v.name, ds, fold)]


def summarise(rows: list[dict[str, Any]], metrics: tuple[str, ...] = (
        "auc_pr", "auc_roc", "auc_pr_self0", "active_factors", "active_factors_per_relation",
        "fit_seconds")) -> dict[str, Any]:
    """Mean, sd and per-fold values of each metric per data set."""
    out: dict[str, Any] = {}
    for ds in sorted({r["dataset"] for r in rows}):
        part = sorted((r for r in rows if r["dataset"] == ds), key=lambda r: r["fold"])
        out[ds] = {}
        for m in metrics:
            vals = np.array([r[m] for r in part if r.get(m) is not None], dtype=float)
            if vals.size:
                out[ds][m] = {"mean": float(vals.mean()),
                              "sd": float(vals.std(ddof=1)) if vals.size > 1 else None,
                              "per_fold": [float(x) for x in vals]}
    return out


def window(rec: Recorder, burn: int, last: int, stat: Callable[[np.ndarray], np.ndarray]
           ) -> np.ndarray:
    """``stat`` of the recorded rates of iterations in (burn, last], shape (S, m)."""
    it = np.asarray(rec.iterations)
    sel = (it > burn) & (it <= last)
    return stat(np.stack([rec.rates[i] for i in np.flatnonzero(sel)]))


def param_mean_proba(rec: Recorder, entries: np.ndarray, burn: int, last: int
                     ) -> np.ndarray:
    """``1 - exp(-rate)`` of the posterior-mean U and Lambda over (burn, last]."""
    from topiclink.families.bpbfm import kernels as kernels

    it = np.asarray(rec.iterations)
    sel = np.flatnonzero((it > burn) & (it <= last))
    U = np.mean([rec.U[i] for i in sel], axis=0)
    L = np.mean([rec.L[i] for i in sel], axis=0)
    e = entries.astype(np.int32)
    return -np.expm1(-kernels.entry_rates(e[:, 0], e[:, 1], e[:, 2], U, L))


def mixing_rows(runner: Runner, ds: str, fold: int) -> list[dict[str, Any]]:
    """The derived mixing rows of one fold (from recorded chains)."""
    f = runner.data[ds][fold]
    y = f.labels
    long = next(v for v in VARIANTS if v.name == "iter=1000,burn=500")
    base = runner.recorded(BASE, ds, fold)
    rec = runner.recorded(long, ds, fold)
    prob = lambda r: (-np.expm1(-r)).mean(axis=0)       # noqa: E731
    rows = []

    def add(name: str, score: np.ndarray) -> None:
        rows.append({"variant": name, "dataset": ds, "fold": fold, **aucs(y, score)})

    add("mixing: 200/100 prob-avg (recorded; = baseline)", window(base, 100, 200, prob))
    add("mixing: 200/100 param-avg", param_mean_proba(base, f.entries, 100, 200))
    add("mixing: last sample (iter 200)", window(base, 195, 200, prob))
    add("mixing: 200/150 prob-avg", window(base, 150, 200, prob))
    add("mixing: 1000/100 prob-avg", window(rec, 100, 1000, prob))
    add("mixing: 1000/500 prob-avg (all 100 samples)", window(rec, 500, 1000, prob))
    add("mixing: 1000/500 param-avg", param_mean_proba(rec, f.entries, 500, 1000))
    add("mixing: last sample (iter 1000)", window(rec, 995, 1000, prob))
    add("link: 200/100 rate-avg (rank by mean rate)",
        window(base, 100, 200, lambda r: r.mean(axis=0)))
    add("link: 1000/500 rate-avg", window(rec, 500, 1000, lambda r: r.mean(axis=0)))
    # several chains: probabilities averaged over the chains' kept samples
    chains = [runner.models[(BASE.name, ds, fold)]]
    for c in (1, 2):
        v = next(v for v in VARIANTS if v.name == f"chain={c}")
        runner.fit(v, ds, fold, keep=True)
        chains.append(runner.models[(v.name, ds, fold)])
    e = f.entries
    probs = [m.predict_proba(e[:, 0], e[:, 1], e[:, 2]) for m in chains]
    add("mixing: 3 chains x 200/100, prob-avg", np.mean(probs, axis=0))
    return rows


def evaluation_rows(runner: Runner, ds: str, fold: int, v: Variant = BASE
                    ) -> list[dict[str, Any]]:
    """Checks of the evaluation on the scores of variant ``v`` (default the baseline),
    and where its top-ranked errors lie."""
    f = runner.data[ds][fold]
    model = runner.models.get((v.name, ds, fold))
    if model is None:
        runner.fit(v, ds, fold, keep=True)
        model = runner.models[(v.name, ds, fold)]
    e, y = f.entries, f.labels
    p = model.predict_proba(e[:, 0], e[:, 1], e[:, 2])
    prec, rec, _ = precision_recall_curve(y, p)
    self_pair = e[:, 0] == e[:, 2]
    _, counts = np.unique(p, return_counts=True)
    order = np.argsort(-p, kind="stable")
    top = order[:int(y.sum())]                   # as many as there are ones
    fp = top[~y[top]]
    full = runner.full[ds]
    true = set(zip(full.heads.tolist(), full.relations.tolist(), full.tails.tolist(),
                   strict=True))
    reverse = np.array([(int(t), int(r), int(h)) in true for h, r, t in e[fp]], dtype=bool)
    rel_fp = np.bincount(e[fp, 1], minlength=int(e[:, 1].max()) + 1)
    rel_pos = np.bincount(e[y, 1], minlength=rel_fp.size)
    worst = np.argsort(-rel_fp)[:5]
    name = "evaluation checks" + ("" if v is BASE else f" ({v.name})")
    row = {"variant": name, "dataset": ds, "fold": fold, **aucs(y, p),
           "auc_pr_trapezoid": float(auc(rec, prec)),
           "n_heldout": int(y.size), "n_heldout_true": int(y.sum()),
           "tied_entries": int(counts[counts > 1].sum()),
           "distinct_scores": int(counts.size),
           "self_pairs": int(self_pair.sum()), "self_pairs_true": int(y[self_pair].sum()),
           "auc_pr_without_self_pairs": float(average_precision_score(y[~self_pair],
                                                                        p[~self_pair])),
           "precision_at_n_true": float(y[top].mean()),
           "false_positives_in_top": int(fp.size),
           "top_fp_reverse_is_true": float(reverse.mean()) if fp.size else None,
           "top_fp_self_pairs": float(np.mean(self_pair[fp])) if fp.size else None,
           "top_fp_relations": [{"relation": str(full.relation_names[r]),
                                 "false_positives": int(rel_fp[r]),
                                 "heldout_true": int(rel_pos[r])} for r in worst]}
    # ranking by probability with the relation's held-out base rate removed: is the
    # error across relations (calibration between relations) or within them?
    within = []
    for r in np.unique(e[:, 1]):
        sel = e[:, 1] == r
        if y[sel].any() and not y[sel].all():
            within.append(average_precision_score(y[sel], p[sel]))
    row["mean_per_relation_auc_pr"] = float(np.mean(within))
    return [row]


def table_text(table: dict[str, Any]) -> str:
    """Variant -> mean AUC-PR (per fold) and mean AUC-ROC per data set, one line each."""
    lines = []
    for name, entry in table.items():
        parts = []
        for ds, summ in entry["summary"].items():
            pr = summ.get("auc_pr")
            if pr is None and "mrr" in summ:
                mrr = summ["mrr"]
                folds = " ".join(f"{x:.3f}" for x in mrr["per_fold"])
                parts.append(f"{ds} MRR {mrr['mean']:.3f} ({folds}) Hits@10 "
                             f"{summ['hits_at_10']['mean']:.3f}")
            if pr is None:
                continue
            folds = " ".join(f"{x:.3f}" for x in pr["per_fold"])
            s0 = summ.get("auc_pr_self0")
            parts.append(f"{ds} PR {pr['mean']:.3f} ({folds}) ROC "
                         f"{summ['auc_roc']['mean']:.3f}"
                         + (f" PR-self0 {s0['mean']:.3f}" if s0 else ""))
        lines.append(f"{name:>45}: " + "; ".join(parts))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="umls,nations")
    ap.add_argument("--folds", default="0,1,2")
    ap.add_argument("--groups", default=",".join(GROUPS))
    ap.add_argument("--quick", action="store_true",
                    help="nations, fold 0, groups prior_a and evaluation only")
    ap.add_argument("--fresh", action="store_true", help="ignore the runs in --out")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results"
                    / "bpbfm_accuracy_diagnosis.json")
    args = ap.parse_args()
    if args.quick:
        args.datasets, args.folds, args.groups = "nations", "0", "prior_a,evaluation"
    datasets = [d for d in args.datasets.split(",") if d]
    folds = [int(f) for f in args.folds.split(",") if f != ""]
    groups = [g for g in args.groups.split(",") if g]
    for g in groups:
        if g not in GROUPS:
            raise SystemExit(f"unknown group {g!r}; known: {', '.join(GROUPS)}")
    old: dict[str, Any] = {}
    if args.out.exists() and not args.fresh and not args.quick:
        old = json.loads(args.out.read_text())
    cache = old.get("runs", {})
    runner = Runner(datasets, folds, cache)
    derived: dict[str, Any] = old.get("derived", {})

    load0 = list(os.getloadavg())
    t0 = time.perf_counter()
    todo = [BASE] + [v for v in VARIANTS if v.group in groups]
    for v in todo:
        for ds in datasets:
            for fold in folds:
                runner.fit(v, ds, fold)
    if "kg" in groups:
        for v in [BASE, *VARIANTS]:
            if v.name in KG_VARIANTS:
                for ds in datasets:
                    for rep in folds:
                        runner.fit_kg(v, ds, rep)
    for ds in datasets:
        for fold in folds:
            if "mixing" in groups or "heldout" in groups:
                for row in mixing_rows(runner, ds, fold):
                    derived[f"{row['variant']}|{ds}|{fold}"] = row
            checked = ([BASE] if "evaluation" in groups else []) + (
                [v for v in VARIANTS if v.name == "self_pairs=scaled"]
                if "fix" in groups else [])
            for v in checked:
                for row in evaluation_rows(runner, ds, fold, v):
                    derived[f"{row['variant']}|{ds}|{fold}"] = row

    table: dict[str, Any] = {}
    for v in [BASE, *VARIANTS]:
        rows = [r for k, r in cache.items() if k.split("|")[0] == v.name]
        kg_rows = [r for k, r in cache.items() if k.split("|")[0] == f"kg:{v.name}"]
        if kg_rows:
            table[f"kg: {v.name}"] = {"group": "kg", "params": v.params, "summary": summarise(
                kg_rows, ("mrr", "hits_at_1", "hits_at_3", "hits_at_10", "fit_seconds"))}
        if rows:
            table[v.name] = {"group": v.group, "what": v.what, "params": v.params,
                             "max_iter": v.max_iter, "burn_in": v.burn_in,
                             "heldout": v.heldout, "summary": summarise(rows)}
    for name in sorted({k.split("|")[0] for k in derived}):
        rows = [r for k, r in derived.items() if k.split("|")[0] == name]
        table[name] = {"group": "derived", "summary": summarise(
            rows, ("auc_pr", "auc_roc", "auc_pr_trapezoid", "auc_pr_without_self_pairs",
                   "mean_per_relation_auc_pr", "precision_at_n_true", "top_fp_reverse_is_true",
                   "top_fp_self_pairs", "tied_entries",
                   "self_pairs", "self_pairs_true", "n_heldout_true"))}
    result = {
        "benchmark": "bpbfm_accuracy_diagnosis",
        "what": "what limits BPBFM-1's held-out AUC-PR on UMLS and Nations (paper protocol:"
                " 10 % of all entries held out per fold, folds of paper_folds(seed 0), "
                "chain seeds as benchmarks/bpbfm_vs_pykeen.py); one factor at a time",
        "commands": [*old.get("commands", []),
                     "python benchmarks/bpbfm_diagnosis.py --groups " + ",".join(groups)],
        "notes": NOTES,
        "settings": {"K": K, "max_iter": ITER, "burn_in": BURN, "thinning": THIN,
                     "n_jobs": 1, "datasets": datasets, "folds": folds},
        "machine": {**old.get("machine", {}), "description":
                    "shared 2-core AMD EPYC under load (other jobs running)",
                    "python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "load_average_at_start": load0,
                    "load_average_at_end": list(os.getloadavg())},
        "seconds_this_run": time.perf_counter() - t0,
        "table": table, "runs": cache, "derived": derived}
    print(table_text(table))
    if args.quick:
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(_clean(result), indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
