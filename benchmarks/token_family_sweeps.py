"""Seconds per iteration of the token-level families (gRTM, gSLDA, DMR) with the exact
Gibbs Z step and the Metropolis-Hastings one, against plain LDA's sweeps, same corpus and K
(issue 44, item 2: "their sweeps within 1.5x of plain LDA's at the same K").

The corpus is :func:`lda_throughput.make_corpus` (Zipf topics, alpha = 0.1), with
* links for gRTM: each document cites ``--links`` others, half of them among the documents
  of its own dominant planted topic (diagonal weights; the estimator's default negatives,
  ``negative_ratio=0.01``);
* a binary label for gSLDA: whether the document's share of tokens from the first half of
  the vocabulary is above the median;
* one feature for DMR: that share, plus noise.

Each configuration is fitted with ``max_iter`` 1 (twice, the faster kept) and
1 + ``--iterations`` (one thread,
numba compiled beforehand, the objective evaluated only at the end): the difference per
iteration is the iteration's cost, its whole step (U / eta draws, augmentation, counts).
DMR's optimisation of lambda is not due within these iterations (burn-in 50), so its
iteration is the sweep.  The JSON holds seconds per iteration, tokens per second and the
ratio to LDA's sweep with the same kernel and with the best LDA kernel of that K.

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/token_family_sweeps.py \\
        --topics 100,1000 --out benchmarks/results/token_family_sweeps.json
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
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent


def _sibling(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"_topiclink_bench_{name}",
                                                  HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_data(n_docs: int, doc_len: int, n_words: int, n_planted: int, n_links: int,
              seed: int) -> dict[str, Any]:
    """The counts (CSR), links (n, 2), labels and features of the module docstring."""
    words, offsets = _sibling("lda_throughput").make_corpus(n_docs, doc_len, n_words,
                                                            n_planted, seed)
    docs = np.repeat(np.arange(n_docs), np.diff(offsets))
    X = sp.csr_matrix((np.ones(words.size), (docs, words)), shape=(n_docs, n_words))
    X.sum_duplicates()
    rng = np.random.default_rng(seed + 1)
    # the planted topic of a document: its most frequent words' topic is not kept by
    # make_corpus, so group documents by their commonest word's rank instead
    group = np.asarray(X.argmax(axis=1)).ravel() % n_planted
    members = [np.flatnonzero(group == g) for g in range(n_planted)]
    src, dst = [], []
    for d in range(n_docs):
        own = members[group[d]]
        for j in range(n_links):
            pool = own if (j % 2 == 0 and own.size > 1) else None
            t = int(rng.choice(pool)) if pool is not None else int(rng.integers(n_docs))
            if t != d:
                src.append(d)
                dst.append(t)
    links = np.unique(np.column_stack([src, dst]), axis=0)
    first = np.asarray(X[:, : n_words // 2].sum(axis=1)).ravel() / doc_len
    y = (first > np.median(first)).astype(int)
    features = (first + rng.normal(0, 0.1, n_docs))[:, None]
    return {"X": X, "links": links, "y": y, "features": features,
            "n_tokens": int(words.size)}


def estimator(family: str, sampler: str, K: int, max_iter: int) -> Any:
    from topiclink import DMR, LDA, RelationalTopicModel, SupervisedTopicModel

    common = {"max_iter": max_iter, "random_state": 0}
    if family == "LDA":
        return LDA(K, sampler=sampler, evaluate_every=0, **common)
    if family == "DMR":
        return DMR(K, sampler=sampler, evaluate_every=0, **common)
    if family == "gSLDA":
        return SupervisedTopicModel(K, sampler=sampler, evaluate_every=0, **common)
    return RelationalTopicModel(K, weights="diagonal", sampler=sampler, evaluate_every=0,
                                n_jobs=1, **common)


def fit(model: Any, family: str, data: dict[str, Any]) -> float:
    t0 = time.perf_counter()
    if family == "DMR":
        model.fit(data["X"], features=data["features"])
    elif family == "gSLDA":
        model.fit(data["X"], data["y"])
    elif family == "gRTM":
        model.fit(data["X"], links=data["links"])
    else:
        model.fit(data["X"])
    return time.perf_counter() - t0


CONFIGS = [("LDA", "gibbs"), ("LDA", "mh"), ("LDA", "warp"), ("DMR", "gibbs"),
           ("DMR", "mh"), ("gSLDA", "gibbs"), ("gSLDA", "mh"), ("gRTM", "gibbs"),
           ("gRTM", "mh")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default="100,1000")
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--doc-len", type=int, default=125)
    ap.add_argument("--words", type=int, default=10_000)
    ap.add_argument("--links", type=int, default=6)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--configs", default=",".join(f"{f}:{s}" for f, s in CONFIGS))
    ap.add_argument("--out", default="benchmarks/results/token_family_sweeps.json")
    args = ap.parse_args()
    data = make_data(args.docs, args.doc_len, args.words, 50, args.links, 0)
    configs = [tuple(c.split(":")) for c in args.configs.split(",")]
    small = make_data(60, 20, 200, 5, 2, 1)
    for family, sampler in configs:                 # compile outside the timings
        fit(estimator(family, sampler, 5, 2), family, small)
    rows = []
    for K in (int(k) for k in args.topics.split(",")):
        for family, sampler in configs:
            # the shorter fit twice (the first may still compile a specialisation)
            one = min(fit(estimator(family, sampler, K, 1), family, data) for _ in range(2))
            more = fit(estimator(family, sampler, K, 1 + args.iterations), family, data)
            per = (more - one) / args.iterations
            row = {"K": K, "family": family, "sampler": sampler,
                   "seconds_per_iteration": per,
                   "tokens_per_second": data["n_tokens"] / per}
            rows.append(row)
            print(f"K={K} {family:5s} {sampler:5s} {per:7.3f} s/iteration "
                  f"({row['tokens_per_second'] / 1e6:.2f} M tok/s)", flush=True)
    for row in rows:
        lda = {r["sampler"]: r["seconds_per_iteration"] for r in rows
               if r["family"] == "LDA" and r["K"] == row["K"]}
        if row["sampler"] in lda:
            row["ratio_to_lda_same_kernel"] = row["seconds_per_iteration"] / lda[row["sampler"]]
        if lda:
            row["ratio_to_fastest_lda"] = row["seconds_per_iteration"] / min(lda.values())
    out = {"what": __doc__.splitlines()[0], "rows": rows,
           "settings": {**vars(args), "n_tokens": data["n_tokens"],
                        "n_links": int(data["links"].shape[0]),
                        "machine": platform.processor() or platform.machine(),
                        "cpus": os.cpu_count(),
                        "threads": os.environ.get("NUMBA_NUM_THREADS", "")}}
    path = Path(args.out)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=1))
    tmp.replace(path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
