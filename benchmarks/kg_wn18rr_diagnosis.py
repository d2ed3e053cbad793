"""WN18RR, kg protocol: a measured diagnosis of BPBFM's filtered MRR (issue 43, item 1).

Every number is a filtered rank of the library's own code
(:func:`topiclink.metrics.ranking.filtered_ranks`: ties at the mean rank of the tied group;
the filter is every known triple of train, valid and test, built by
:func:`topiclink_reproductions.bpbfm.kg_task`, the kg protocol's), head and tail queries
of every triple, every entity a candidate.  Choices are read on the valid split; the test
split is scored once per row and never used to pick anything.

Groups of rows (``rows`` of the JSON, one number each column):

- ``baseline``: rules with no parameters fitted.  ``reverse_any``: score e for the tail
  query (h, r, ?) by whether (e, r', h) is a training triple for any r' (head query
  (?, r, t): (t, r', e)); ``reverse_same``: the same with r' = r; ``frequency``: how often
  e is a tail (head) of r in training; ``reverse+frequency``: reverse_same first, then
  reverse_any, then frequency (a lexicographic score); ``constant``: every entity tied.
- ``bpbfm``: :class:`~topiclink.families.bpbfm.estimator_em.BilinearPoissonFactorModelEM`
  (``em``) and :class:`~topiclink.families.bpbfm.estimator_em.
  DegreeCorrectedPoissonFactorModel` (``dc``) at each K, ``--iterations`` EM iterations
  (``tol=0``), as is (``plain``) and with reciprocal relations (``reciprocal``: each
  training triple (h, r, t) also as (t, r + R, h); tail queries scored by relation r, head
  queries (?, r, t) as the tail query (t, r + R, ?)); ``reciprocal_both`` is the same fit
  scoring each query both ways and averaging the two scores.
- every row, for the valid split, the test split and ``train_sample`` (``--train-sample``
  training triples ranked the same way: does the fit reproduce what it was given?): MRR
  and Hits@1/10 pooled, head and tail; the optimistic MRR (ties ranked first:
  ``1 + #higher``); the share of queries whose true entity is tied with another
  candidate; the MRR over the triples whose head and tail both occur in training, over
  those whose reverse (t, r, h) is a training triple and over the others; the MRR per
  relation (``mrr_relation_<index>``, names in ``counts``).  Fits add fit seconds
  (numba compiled beforehand), active factors per entity, dead factors and the last
  relative change of the log posterior.

Run it (one thread, about 6 minutes; the second, 100 EM iterations at K = 100, about 8)::

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 TOPICLINK_DATA=/work/shared/datasets \\
        python benchmarks/kg_wn18rr_diagnosis.py --topics 50,100 --iterations 25 \\
        --out benchmarks/results/kg_wn18rr_diagnosis.json
    ... --topics 100 --iterations 100 --out benchmarks/results/kg_wn18rr_diagnosis_100it.json

``--replot`` rewrites the findings and the figure from a JSON's rows without fitting.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from topiclink.data.tensor import RelationalTensor
from topiclink.datasets import load_dataset
from topiclink.families.bpbfm.estimator_em import (
    BilinearPoissonFactorModelEM,
    DegreeCorrectedPoissonFactorModel,
)
from topiclink.metrics.ranking import filter_mask, filtered_ranks, mrr_hits
from topiclink_reproductions.bpbfm import KGTask, kg_chunk, kg_task

logger = logging.getLogger("kg_wn18rr_diagnosis")
HITS = (1, 10)


# ---------------------------------------------------------------------- ranking
def side_ranks(model: Any, task: KGTask, side: str) -> dict[str, np.ndarray]:
    """Filtered ranks of one side of every test triple of ``task`` (the chunked loop of
    :func:`topiclink_reproductions.bpbfm.kg_ranks`): ``mean`` by
    :func:`~topiclink.metrics.ranking.filtered_ranks` (ties at the mean rank),
    ``optimistic`` (``1 + #higher``, the same filter mask) and ``tied`` (others tied with
    the true entity)."""
    N = task.n_entities
    h, r, t = (np.ascontiguousarray(c) for c in task.test.T)
    given, answer = (h, t) if side == "tail" else (t, h)
    known = task.tails_of if side == "tail" else task.heads_of
    rows = r * N + given
    # relation-major: a chunk holds few relations, so a rule model builds each
    # relation's rule rows once for many queries (FB15k-237, 6,495 rules: 3x faster)
    order = np.argsort(rows, kind="stable")
    out = {k: np.empty(rows.size) for k in ("mean", "optimistic", "tied")}
    size = kg_chunk(N)
    for lo in range(0, rows.size, size):
        idx = order[lo:lo + size]
        scores = np.asarray(model.score_tails_batch(given[idx], r[idx]) if side == "tail"
                            else model.score_heads_batch(r[idx], given[idx]),
                            dtype=np.float64)
        filt = known[rows[idx]]
        out["mean"][idx] = filtered_ranks(scores, answer[idx], filt)
        keep = ~filter_mask(filt, scores.shape)
        q = np.arange(idx.size)
        keep[q, answer[idx]] = False
        true = scores[q, answer[idx]][:, None]
        out["optimistic"][idx] = 1.0 + np.count_nonzero((scores > true) & keep, axis=1)
        out["tied"][idx] = np.count_nonzero((scores == true) & keep, axis=1)
    return out


def metrics(model: Any, task: KGTask, seen: np.ndarray, reverse: np.ndarray
            ) -> dict[str, float]:
    """MRR, Hits@1/10 (pooled, head, tail), optimistic MRR, tie share, the MRR over the
    triples whose entities were both seen in training (``seen``: (n_test,) bool), over
    those whose reverse (t, r, h) is a training triple and over the others
    (``reverse``: (n_test,) bool), and per relation."""
    ranks = {side: side_ranks(model, task, side) for side in ("head", "tail")}
    mean = np.concatenate([ranks["head"]["mean"], ranks["tail"]["mean"]])
    opt = np.concatenate([ranks["head"]["optimistic"], ranks["tail"]["optimistic"]])
    tied = np.concatenate([ranks["head"]["tied"], ranks["tail"]["tied"]])
    both_seen = np.concatenate([seen, seen])
    out = mrr_hits(mean, HITS)
    for side in ("head", "tail"):
        out.update({f"{k}_{side}": v for k, v in mrr_hits(ranks[side]["mean"], HITS).items()})
    out["mrr_optimistic"] = float(np.mean(1.0 / opt))
    out["share_tied"] = float(np.mean(tied > 0))
    out["mrr_seen_only"] = float(np.mean(1.0 / mean[both_seen]))
    out["mrr_unseen_only"] = float(np.mean(1.0 / mean[~both_seen])) if (~seen).any() \
        else float("nan")
    out["median_rank_unseen"] = float(np.median(mean[~both_seen])) if (~seen).any() \
        else float("nan")
    rev = np.concatenate([reverse, reverse])
    for name, mask in (("reverse_in_train", rev), ("no_reverse", ~rev)):
        out[f"mrr_{name}"] = float(np.mean(1.0 / mean[mask])) if mask.any() \
            else float("nan")
    rel = np.concatenate([task.test[:, 1], task.test[:, 1]])
    for r in np.unique(rel):
        out[f"mrr_relation_{int(r)}"] = float(np.mean(1.0 / mean[rel == r]))
    return out


# ---------------------------------------------------------------------- rules
def _indicator(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> sp.csr_array:
    m = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=shape)
    m.data[:] = 1.0                        # duplicates summed: back to 0/1
    return m


class RuleScorer:
    """The parameter-free rules of the module docstring, from the training triples."""

    def __init__(self, train: RelationalTensor, rule: str) -> None:
        N, R = int(train.n_entities), int(train.n_relations)
        h, r, t = (np.asarray(x, np.int64) for x in (train.heads, train.relations,
                                                     train.tails))
        self.rule, self.N = rule, N
        self.any_in = _indicator(t, h, (N, N))          # [h, e]: (e, *, h) in train
        self.any_out = _indicator(h, t, (N, N))         # [t, e]: (t, *, e) in train
        self.same_in = _indicator(r * N + t, h, (R * N, N))   # [r N + x, e]: (e, r, x)
        self.same_out = _indicator(r * N + h, t, (R * N, N))  # [r N + x, e]: (x, r, e)
        self.tail_freq = np.zeros((R, N))
        np.add.at(self.tail_freq, (r, t), 1.0)
        self.head_freq = np.zeros((R, N))
        np.add.at(self.head_freq, (r, h), 1.0)

    def _score(self, given: np.ndarray, rel: np.ndarray, side: str) -> np.ndarray:
        given, rel = np.asarray(given, np.int64), np.asarray(rel, np.int64)
        if self.rule == "constant":
            return np.zeros((given.size, self.N))
        rev_any = (self.any_in if side == "tail" else self.any_out)[given].toarray()
        rev_same = (self.same_in if side == "tail" else self.same_out)[
            rel * self.N + given].toarray()
        freq = (self.tail_freq if side == "tail" else self.head_freq)[rel]
        if self.rule == "reverse_any":
            return rev_any
        if self.rule == "reverse_same":
            return rev_same
        if self.rule == "frequency":
            return freq
        scaled = freq / (freq.max(axis=1, keepdims=True) + 1.0)      # in [0, 1)
        return rev_same + rev_any + scaled

    def score_tails_batch(self, heads: np.ndarray, relations: np.ndarray) -> np.ndarray:
        return self._score(heads, relations, "tail")

    def score_heads_batch(self, relations: np.ndarray, tails: np.ndarray) -> np.ndarray:
        return self._score(tails, relations, "head")


# ---------------------------------------------------------------------- reciprocal
def with_reciprocals(train: RelationalTensor) -> RelationalTensor:
    """The training tensor with (t, r + R, h) added for every (h, r, t)."""
    R = int(train.n_relations)
    names = None if train.relation_names is None else np.concatenate(
        [train.relation_names, np.char.add(np.asarray(train.relation_names, str), "_inv")])
    return RelationalTensor(
        np.concatenate([train.heads, train.tails]),
        np.concatenate([train.relations, train.relations + R]),
        np.concatenate([train.tails, train.heads]),
        np.concatenate([train.values, train.values]), train.n_entities, 2 * R,
        train.entity_names, names)


class Reciprocal:
    """A model fitted with reciprocal relations, ranking the original queries: tail
    query (h, r, ?) as is, head query (?, r, t) as the tail query (t, r + R, ?);
    ``both``: each side the mean of its two ways."""

    def __init__(self, model: Any, n_relations: int, both: bool = False) -> None:
        self.model, self.R, self.both = model, int(n_relations), both

    def score_tails_batch(self, heads: np.ndarray, relations: np.ndarray) -> np.ndarray:
        s = self.model.score_tails_batch(heads, relations)
        if self.both:
            s = 0.5 * (s + self.model.score_heads_batch(np.asarray(relations) + self.R,
                                                        heads))
        return s

    def score_heads_batch(self, relations: np.ndarray, tails: np.ndarray) -> np.ndarray:
        s = self.model.score_tails_batch(tails, np.asarray(relations) + self.R)
        if self.both:
            s = 0.5 * (s + self.model.score_heads_batch(relations, tails))
        return s


# ---------------------------------------------------------------------- factors
def factor_use(model: Any) -> dict[str, float]:
    """Active factors per entity (factors with >= 1 % of the entity's row of U, over
    entities with any mass), entities per factor (the same cells counted by column),
    and the factors the library counts active (``n_active_factors_``: > 1 % share)."""
    out: dict[str, float] = {}
    K = int(model.embedding_.shape[1])
    mats = {"U": model.embedding_}
    if hasattr(model, "tail_embedding_"):
        mats["V"] = model.tail_embedding_
    for name, U in mats.items():
        U = np.asarray(U, dtype=np.float64)
        mass = U.sum(axis=1, keepdims=True)
        live = mass[:, 0] > 0
        share = np.divide(U, mass, out=np.zeros_like(U), where=mass > 0)
        on = share >= 0.01
        out[f"median_active_per_entity_{name}"] = float(np.median(on[live].sum(axis=1)))
        out[f"median_entities_per_factor_{name}"] = float(np.median(on.sum(axis=0)))
    out["active_factors"] = int(model.n_active_factors_)
    out["dead_factors"] = K - int(model.n_active_factors_)
    return out


def convergence(model: Any) -> dict[str, float]:
    """The last log posterior per nonzero entry of the fit's trace and its relative
    change over the last iteration (what ``tol`` compares)."""
    ll = np.asarray(getattr(model, "trace_", {}).get("log_likelihood", []), dtype=float)
    ll = ll[np.isfinite(ll)]
    if ll.size < 2:
        return {"log_posterior_last": float("nan"), "log_posterior_rel_change": float("nan")}
    return {"log_posterior_last": float(ll[-1]),
            "log_posterior_rel_change": float(abs(ll[-1] - ll[-2]) / abs(ll[-1]))}


# ---------------------------------------------------------------------- main
def warm_up(train: RelationalTensor) -> None:
    """Compile both EM fits (numba) on a small slice, so fit seconds exclude it."""
    n = 2000
    small = RelationalTensor(train.heads[:n], train.relations[:n], train.tails[:n],
                             train.values[:n], train.n_entities, train.n_relations)
    for cls in (BilinearPoissonFactorModelEM, DegreeCorrectedPoissonFactorModel):
        m = cls(4, max_iter=2, tol=0.0, random_state=0).fit(small)
        m.score_tails_batch(np.array([0]), np.array([0]))
        m.score_heads_batch(np.array([0]), np.array([0]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", default="50,100", help="K values, comma-separated")
    ap.add_argument("--iterations", type=int, default=25, help="EM iterations per fit")
    ap.add_argument("--models", default="em,dc", help="em and/or dc")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train-sample", type=int, default=3000,
                    help="training triples ranked as a fit check (train_sample_* columns)")
    ap.add_argument("--out", default="benchmarks/results/kg_wn18rr_diagnosis.json")
    ap.add_argument("--png", default=None, help="figure path (default: --out as .png)")
    ap.add_argument("--replot", action="store_true",
                    help="no fitting: rewrite the findings and redraw the figure from the "
                         "rows of the JSON at --out")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args.replot:
        out = Path(args.out)
        result = json.loads(out.read_text())
        result["findings"] = findings(result["rows"], result["counts"])
        tmp = out.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(result, indent=1))
        os.replace(tmp, out)
        plot(result["rows"], Path(args.png) if args.png else out.with_suffix(".png"))
        return
    t_start = time.perf_counter()

    splits = load_dataset("wn18rr").tensor
    train, valid, test = splits["train"], splits["valid"], splits["test"]
    pick = np.sort(np.random.default_rng(args.seed).choice(
        train.n_entries, size=min(args.train_sample, train.n_entries), replace=False))
    sample = RelationalTensor(train.heads[pick], train.relations[pick], train.tails[pick],
                              train.values[pick], train.n_entities, train.n_relations)
    tasks = {"valid": kg_task({"train": train, "test": valid, "other": test}),
             "test": kg_task({"train": train, "test": test, "other": valid}),
             "train_sample": kg_task({"train": train, "test": sample, "v": valid,
                                      "t": test})}
    in_train = np.zeros(train.n_entities, dtype=bool)
    in_train[train.heads] = in_train[train.tails] = True
    seen = {s: in_train[tk.test[:, 0]] & in_train[tk.test[:, 2]] for s, tk in tasks.items()}
    train_keys_r = set(zip(train.heads.tolist(), train.relations.tolist(),
                           train.tails.tolist(), strict=True))
    reverse = {s: np.fromiter(((int(t), int(r), int(h)) in train_keys_r
                               for h, r, t in tk.test), dtype=bool, count=tk.test.shape[0])
               for s, tk in tasks.items()}
    train_keys = set(zip(train.tails.tolist(), train.heads.tolist(), strict=True))
    counts: dict[str, Any] = {
        "n_entities": int(train.n_entities), "n_relations": int(train.n_relations),
        "n_train": int(train.n_entries), "n_valid": int(valid.n_entries),
        "n_test": int(test.n_entries),
        "entities_in_train": int(in_train.sum()),
        "relation_names": [str(x) for x in train.relation_names],
        "valid_triples_per_relation": np.bincount(valid.relations,
                                                  minlength=train.n_relations).tolist(),
        "test_triples_per_relation": np.bincount(test.relations,
                                                 minlength=train.n_relations).tolist()}
    for s, tk in tasks.items():
        if s == "train_sample":
            continue
        h, r, t = tk.test.T
        counts[f"{s}_triples_with_unseen_entity"] = int((~seen[s]).sum())
        counts[f"{s}_reverse_any_r_in_train"] = int(sum(
            (a, b) in train_keys for a, b in zip(h.tolist(), t.tolist(), strict=True)))
        counts[f"{s}_reverse_same_r_in_train"] = int(reverse[s].sum())
    counts["n_train_sample"] = int(pick.size)
    logger.info("counts %s", counts)

    rows: list[dict[str, Any]] = []

    def record(group: str, name: str, model: Any, extra: dict[str, Any]) -> None:
        row: dict[str, Any] = {"group": group, "name": name, **extra}
        for s, tk in tasks.items():
            t0 = time.perf_counter()
            for k, v in metrics(model, tk, seen[s], reverse[s]).items():
                row[f"{s}_{k}"] = v
            row[f"{s}_eval_seconds"] = time.perf_counter() - t0
        logger.info("%s %s valid MRR %.4f (head %.4f tail %.4f) test MRR %.4f, train "
                    "sample %.4f", group, name, row["valid_mrr"], row["valid_mrr_head"],
                    row["valid_mrr_tail"], row["test_mrr"], row["train_sample_mrr"])
        rows.append(row)

    for rule in ("constant", "frequency", "reverse_any", "reverse_same",
                 "reverse+frequency"):
        record("baseline", rule, RuleScorer(train, rule), {})

    t0 = time.perf_counter()
    warm_up(train)
    compile_seconds = time.perf_counter() - t0
    recip = with_reciprocals(train)
    classes = {"em": BilinearPoissonFactorModelEM, "dc": DegreeCorrectedPoissonFactorModel}
    for key in args.models.split(","):
        for K in (int(k) for k in args.topics.split(",")):
            for variant, tensor in (("plain", train), ("reciprocal", recip)):
                model = classes[key](K, max_iter=args.iterations, tol=0.0,
                                     random_state=args.seed)
                t0 = time.perf_counter()
                model.fit(tensor)
                fit_s = time.perf_counter() - t0
                extra = {"model": key, "K": K, "variant": variant,
                         "iterations": int(model.n_iter_), "fit_seconds": fit_s,
                         "n_train_triples": int(tensor.n_entries), **factor_use(model),
                         **convergence(model)}
                if variant == "plain":
                    record("bpbfm", f"{key} K={K} plain", model, extra)
                else:
                    record("bpbfm", f"{key} K={K} reciprocal",
                           Reciprocal(model, train.n_relations), extra)
                    record("bpbfm", f"{key} K={K} reciprocal_both",
                           Reciprocal(model, train.n_relations, both=True),
                           {**extra, "variant": "reciprocal_both"})

    chosen = {}
    for group in ("baseline", "bpbfm"):
        best = max((r for r in rows if r["group"] == group), key=lambda r: r["valid_mrr"])
        chosen[group] = best["name"]
    result = {
        "what": ("WN18RR kg protocol (filtered, ties at the mean rank, head and tail "
                 "queries): parameter-free baselines, the evaluation's share (unseen "
                 "entities, ties, head vs tail) and BPBFM-EM / degree-corrected EM "
                 "ablations (K, reciprocal relations), valid for choices, test once per "
                 "row"),
        "settings": {"topics": args.topics, "iterations": args.iterations,
                     "models": args.models, "seed": args.seed, "tol": 0.0,
                     "numba_threads": os.environ.get("NUMBA_NUM_THREADS"),
                     "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
                     "machine": platform.processor() or platform.machine(),
                     "python": platform.python_version()},
        "counts": counts, "compile_seconds": compile_seconds,
        "chosen_by_valid_mrr": chosen, "rows": rows, "findings": findings(rows, counts),
        "total_seconds": time.perf_counter() - t_start}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1))
    os.replace(tmp, out)
    plot(rows, Path(args.png) if args.png else out.with_suffix(".png"))
    logger.info("wrote %s in %.0f s", out, result["total_seconds"])


def findings(rows: list[dict[str, Any]], counts: dict[str, Any]) -> list[str]:
    """Statements read off the numbers (valid split unless named)."""
    by = {r["name"]: r for r in rows}
    fits = [r for r in rows if r["group"] == "bpbfm"]
    out = []
    rule = by["reverse+frequency"]
    out.append(f"rule reverse+frequency: valid MRR {rule['valid_mrr']:.3f} (head "
               f"{rule['valid_mrr_head']:.3f}, tail {rule['valid_mrr_tail']:.3f}), test "
               f"{rule['test_mrr']:.3f}; reverse_any alone {by['reverse_any']['valid_mrr']:.3f}"
               f", frequency alone {by['frequency']['valid_mrr']:.3f}")
    out.append(f"{counts['test_reverse_any_r_in_train']} of {counts['n_test']} test triples "
               f"have their reverse (t, r', h) in train, "
               f"{counts['test_reverse_same_r_in_train']} with r' = r")
    out.append(f"{counts['test_triples_with_unseen_entity']} test triples have an entity "
               "unseen in training")
    if fits:
        best = max(fits, key=lambda r: r["valid_mrr"])
        out.append(f"best BPBFM row by valid MRR: {best['name']} valid {best['valid_mrr']:.3f}"
                   f" (head {best['valid_mrr_head']:.3f}, tail {best['valid_mrr_tail']:.3f}),"
                   f" test {best['test_mrr']:.3f}, seen-only test "
                   f"{best['test_mrr_seen_only']:.3f}, optimistic-tie test "
                   f"{best['test_mrr_optimistic']:.3f}")
        for r in fits:
            if r["variant"] != "plain":
                continue
            pair = by.get(r["name"].replace("plain", "reciprocal"))
            if pair:
                out.append(f"{r['model']} K={r['K']}: valid MRR plain {r['valid_mrr']:.3f} "
                           f"-> reciprocal {pair['valid_mrr']:.3f} (head "
                           f"{r['valid_mrr_head']:.3f} -> {pair['valid_mrr_head']:.3f}); "
                           f"median active factors per entity "
                           f"{r['median_active_per_entity_U']:.0f}, dead factors "
                           f"{r['dead_factors']} of {r['K']}, fit {r['fit_seconds']:.0f} s, "
                           f"last relative change of the log posterior "
                           f"{r['log_posterior_rel_change']:.1e}")
        out.append(f"{best['name']}: test MRR {best['test_mrr_reverse_in_train']:.3f} on the "
                   f"triples whose reverse is in train (rule "
                   f"{rule['test_mrr_reverse_in_train']:.3f}), {best['test_mrr_no_reverse']:.3f}"
                   f" on the others (rule {rule['test_mrr_no_reverse']:.3f})")
        out.append(f"fit check, {best['name']}: filtered MRR of {counts['n_train_sample']} "
                   f"training triples {best['train_sample_mrr']:.3f} (reverse+frequency rule"
                   f" {rule['train_sample_mrr']:.3f}: a training triple's own reverse is "
                   "often in train too)")
        names = counts["relation_names"]
        per = ", ".join(f"{names[r]} {rule[f'valid_mrr_relation_{r}']:.2f}/"
                        f"{best[f'valid_mrr_relation_{r}']:.2f}"
                        for r in range(len(names)) if f"valid_mrr_relation_{r}" in best)
        out.append(f"valid MRR per relation, rule/{best['name']}: {per}")
        n_rev = counts["test_reverse_same_r_in_train"]
        share = n_rev / counts["n_test"]
        gap_rev = share * (rule["test_mrr_reverse_in_train"] - best["test_mrr_reverse_in_train"])
        gap_rest = (1 - share) * (rule["test_mrr_no_reverse"] - best["test_mrr_no_reverse"])
        out.append(f"test MRR gap rule - {best['name']} = {rule['test_mrr'] - best['test_mrr']:.3f}"
                   f" = {gap_rev:.3f} from the {n_rev} triples whose reverse is in train "
                   f"+ {gap_rest:.3f} from the other {counts['n_test'] - n_rev}")
        gap_seen = max(abs(r["test_mrr_seen_only"] - r["test_mrr"]) for r in fits)
        gap_tie = max(r["test_mrr_optimistic"] - r["test_mrr"] for r in fits)
        out.append(f"evaluation's share on BPBFM rows: dropping unseen-entity triples moves "
                   f"test MRR by at most {gap_seen:.3f}; optimistic instead of mean ties by "
                   f"at most {gap_tie:.3f}")
        gap = rule["test_mrr"] - best["test_mrr"]
        plain = next(r["valid_mrr"] for r in fits if r["variant"] == "plain"
                     and r["model"] == best["model"] and r["K"] == best["K"])
        if gap > 0 and gap_rev / gap > 0.8:
            out.append(f"dominant cause in these numbers: {gap_rev / gap:.0%} of the gap to the "
                       "rule is on the triples whose reverse is a training triple, where BPBFM "
                       f"scores {best['test_mrr_reverse_in_train']:.3f} against the rule's "
                       f"{rule['test_mrr_reverse_in_train']:.3f}; on the other triples BPBFM "
                       f"({best['test_mrr_no_reverse']:.3f}) is at the level of the frequency "
                       f"rule ({by['frequency']['test_mrr_no_reverse']:.3f}); its filtered MRR "
                       f"on its own training triples is {best['train_sample_mrr']:.3f}, so the "
                       "fit does not reproduce the entity-specific links it was given; the "
                       "evaluation (unseen entities, ties) moves it by <= "
                       f"{max(gap_seen, gap_tie):.3f}; {best['name']} against the plain fit "
                       f"of the same model and K: {best['valid_mrr'] - plain:+.3f} valid MRR")
    return out


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Left: valid MRR, head and tail; right: valid MRR on the triples whose reverse is
    in train and on the others; one pair of bars per row."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [r["name"] for r in rows]
    x = np.arange(len(rows))
    fig, axes = plt.subplots(1, 2, figsize=(max(10.0, 0.8 * len(rows)), 3.8), sharey=True)
    panels = ((("valid_mrr_head", "head queries"), ("valid_mrr_tail", "tail queries")),
              (("valid_mrr_reverse_in_train", "reverse (t, r, h) in train"),
               ("valid_mrr_no_reverse", "the other triples")))
    for ax, pair in zip(axes, panels, strict=True):
        for shift, (key, label) in zip((-0.2, 0.2), pair, strict=True):
            ax.bar(x + shift, [r[key] for r in rows], 0.4, label=label)
        ax.set_xticks(x, names, rotation=60, ha="right", fontsize=7)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("valid filtered MRR")
    fig.suptitle("WN18RR: parameter-free rules and BPBFM ablations", fontsize=9)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
