"""Distributed gRTM Gibbs on Dask: seconds per iteration, bytes moved, held-out link AUC.

One planted network (:func:`topiclink.datasets.make_rtm_data`), one held-out split of its
documents (:func:`topiclink.data.splits.train_test_split_documents`), the same estimator
settings and seed for every case, ``--iters`` iterations each:

- ``single``: ``RelationalTopicModel()`` (``scheme="exact"``), the single-machine sampler;
- ``dask``: ``scheme=Shards("shards", S)`` (S = ``--shards`` document shards) on a Dask
  ``executor``, a ``LocalCluster(processes=True, threads_per_worker=1)`` per ``--workers``.

Per case: the median seconds per iteration (the first iteration, which scatters the
shards, apart), the bytes sent to / received from the workers and moved between workers
per iteration (the sampler's payload counters), link ROC AUC of the held-out documents
against the training documents (``link_scores``), and for the Dask runs whether every
worker count gave the same chain bit for bit.

    python benchmarks/distributed_grtm.py                  # 8000 documents, K = 10
    python benchmarks/distributed_grtm.py --docs 3000 --links 15000 --iters 20
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# a benchmark named like a package (benchmarks/distributed.py was) would shadow it: keep
# this folder off the path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # worker processes inherit it
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def fit_case(fold, kw, **extra):
    """Fit one case; returns (row, model)."""
    from topiclink.families.rtm.estimator import RelationalTopicModel
    from topiclink.metrics import link_auc

    t0 = time.perf_counter()
    model = RelationalTopicModel(**kw, **extra).fit(fold.train_corpus, links=fold.train_links)
    fit_seconds = time.perf_counter() - t0
    trace = model.trace_
    secs = trace["seconds"]
    row = {"fit_seconds": fit_seconds,
           "seconds_per_iteration": {"first": float(secs[0]),
                                     "median_rest": float(np.median(secs[1:])),
                                     "min_rest": float(np.min(secs[1:]))},
           "seconds_split_median": {k: float(np.median(trace[k][1:]))
                                    for k in ("seconds_weights", "seconds_z",
                                              "seconds_lambda")},
           "final_link_loglik": float(trace["link_loglik"][-1]),
           "n_pairs": int(model.n_pairs_)}
    if "bytes_sent" in trace:
        row["bytes_per_iteration"] = {
            "sent_first": int(trace["bytes_sent"][0]),
            "sent_median_rest": int(np.median(trace["bytes_sent"][1:])),
            "received_median_rest": int(np.median(trace["bytes_received"][1:])),
            "between_workers_median_rest": int(np.median(trace["bytes_peer"][1:]))}
    scores = model.link_scores(fold.test_corpus)
    row["heldout_link_auc"] = float(link_auc(scores, fold.test_links)["roc_auc"])
    return row, model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=8000)
    parser.add_argument("--links", type=int, default=40000)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--words", type=int, default=2000)
    parser.add_argument("--doc-length", type=int, default=100)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(HERE / "results" / "distributed_grtm.json"))
    args = parser.parse_args()

    import distributed

    from topiclink.data.splits import train_test_split_documents
    from topiclink.datasets import make_rtm_data
    from topiclink.execution import Shards

    t0 = time.perf_counter()
    (corpus, links), _ = make_rtm_data(n_docs=args.docs, n_words=args.words,
                                       n_topics=args.topics, doc_length=args.doc_length,
                                       n_links=args.links, random_state=args.seed)
    fold = train_test_split_documents(corpus, links, test_size=0.1, random_state=args.seed)
    print(f"data: {corpus.n_docs} documents, {links.n_links} links, "
          f"{int(corpus.counts.sum())} tokens ({time.perf_counter() - t0:.1f} s)", flush=True)
    kw = {"n_topics": args.topics, "negatives_per_link": 1.0, "c": 2.0,
          "max_iter": args.iters, "evaluate_every": 0, "augmentation": "numba",
          "random_state": args.seed}
    cases = []
    row, single = fit_case(fold, kw)
    cases.append({"case": "single", "workers": 0, "n_shards": 1, **row})
    print(json.dumps(cases[-1]), flush=True)
    chains = []
    for n in (int(w) for w in args.workers.split(",")):
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, \
                distributed.Client(cluster, set_as_default=False) as client:
            row, model = fit_case(fold, kw, scheme=Shards("shards", args.shards),
                                  executor=client)
        cases.append({"case": "dask", "workers": n, "n_shards": args.shards, **row})
        chains.append(model.state_)
        print(json.dumps(cases[-1]), flush=True)
    same = all(np.array_equal(chains[0].z, c.z) and np.array_equal(chains[0].U, c.U)
               and np.array_equal(chains[0].b, c.b) for c in chains[1:])
    result = {
        "benchmark": "distributed_grtm",
        "note": ("timings are indicative: the machine (2 cores) was shared with other "
                 "jobs while this ran; 2 workers on 2 shared cores cannot show a clean "
                 "speed-up"),
        "machine": {"platform": platform.platform(), "cpu_count": os.cpu_count(),
                    "python": platform.python_version()},
        "data": {"n_docs": corpus.n_docs, "n_links": int(links.n_links),
                 "n_train_docs": fold.n_train, "n_test_docs": fold.n_test,
                 "n_tokens": int(corpus.counts.sum()), "n_words": corpus.n_words,
                 "generator": f"make_rtm_data(n_docs={args.docs}, n_words={args.words}, "
                              f"n_topics={args.topics}, doc_length={args.doc_length}, "
                              f"n_links={args.links}, random_state={args.seed})"},
        "settings": {**kw, "shards": args.shards},
        "dask_chains_identical_across_workers": bool(same),
        "cases": cases,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
