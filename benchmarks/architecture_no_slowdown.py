"""Whole-process workloads for the "no slowdown" check of an architecture change, old tree
against new: the same script runs both (``PYTHONPATH``) and prints a hash of the fitted
values, which must agree between the trees (the chains are unchanged).  The estimators are
spelled in the API both trees accept (``scheme=`` / ``executor=``; BPBFM by paper name).
Run pairs with farm-bench, for example::

    git archive c0c1ab5 src | tar -x -C /tmp/old
    NUMBA_NUM_THREADS=1 TOPICLINK_DATA=... farm-bench -n 3 --timeout 900 \\
        --vs "env PYTHONPATH=/tmp/old/src python benchmarks/architecture_no_slowdown.py lda1" \\
        -- env PYTHONPATH=src python benchmarks/architecture_no_slowdown.py lda1

Workloads: lda1, lda2 (partition, 2 threads), lda_dask (AD-LDA, 2 shards on a 2-process
LocalCluster), grtm (bundled Cora), lmvs, bpbfm_em_fb15k237 (BPBFM-1-EM on FB15k-237's
training triples, through the paper-name table).
"""
from __future__ import annotations

import hashlib
import sys
import warnings

import numpy as np


def digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:12]


def main(workload: str) -> str:
    warnings.simplefilter("ignore")
    if workload.startswith("lda"):
        from topiclink import LDA
        from topiclink.datasets import make_lda_data

        X, _ = make_lda_data(n_docs=3000, n_words=3000, n_topics=20, doc_length=120,
                             random_state=1)
        if workload == "lda_dask":
            from distributed import Client, LocalCluster

            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                model = LDA(20, max_iter=40, random_state=0, scheme="adlda",
                            executor=client).fit(X)
        elif workload == "lda2":
            model = LDA(20, max_iter=60, random_state=0, scheme="partition",
                        executor=2).fit(X)
        else:
            model = LDA(20, max_iter=60, random_state=0).fit(X)
        return digest(model.components_)
    if workload == "grtm":
        from topiclink import RelationalTopicModel
        from topiclink.datasets import load_bundled_cora

        ds = load_bundled_cora()
        model = RelationalTopicModel(10, max_iter=40, negative_ratio=0.01,
                                     random_state=0).fit(ds.corpus, links=ds.links)
        return digest(model.components_, model.weights_)
    if workload == "lmvs":
        from topiclink import VisibilityTopicModel
        from topiclink.datasets import make_lmv_data

        data, _ = make_lmv_data(n_docs=1500, random_state=2)
        model = VisibilityTopicModel(8, inference="stochastic", max_iter=6, batch_size=300,
                                     random_state=0).fit(data[0], links=data[1])
        return digest(model.components_)
    if workload == "bpbfm_em_fb15k237":
        from topiclink.datasets import load_dataset
        from topiclink.experiments.runner import build_model

        ds = load_dataset("fb15k-237")
        train = ds.tensor["train"]
        model = build_model("BPBFM-1-EM", {"n_topics": 50, "max_iter": 15,
                                           "random_state": 0})
        model.fit(train)
        return digest(model.embedding_)
    raise SystemExit(f"unknown workload {workload!r}")


if __name__ == "__main__":
    print(sys.argv[1], main(sys.argv[1]))
