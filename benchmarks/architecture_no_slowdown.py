"""Whole-process workloads for issue 25's "no slowdown" check, old tree against new.

The estimators are spelled so that the code before the executor work (86ef0bb) and today's
run them alike; each run prints a hash of the fitted values, which must agree between the
trees (the chains are unchanged).  Run pairs with farm-bench, for example::

    git archive 86ef0bb src | tar -x -C /tmp/old_src
    NUMBA_NUM_THREADS=1 farm-bench -n 6 --timeout 500 \\
        --vs "env PYTHONPATH=/tmp/old_src/src python benchmarks/architecture_no_slowdown.py lda1" \\
        -- env PYTHONPATH=src python benchmarks/architecture_no_slowdown.py lda1

Workloads: ``lda1`` (LDA, 1 thread), ``lda2`` (2-thread partition), ``lda_adlda`` (AD-LDA,
2 shards on 2 threads), ``lda_dask`` (2 shards on a 2-process LocalCluster), ``grtm``
(bundled Cora), ``lmvs``, ``bpbfm_online``, ``bpbfm_batch`` (Gibbs with 50 kept samples);
an optional second argument sets the iterations of ``lda*``, ``grtm`` and
``bpbfm_batch``.
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


def main(workload: str, iterations: int | None = None) -> str:
    warnings.simplefilter("ignore")   # the old parameter names warn on the new tree
    if workload.startswith("lda"):
        from topiclink import LDA
        from topiclink.datasets import make_lda_data

        X, _ = make_lda_data(n_docs=3000, n_words=3000, n_topics=20, doc_length=120,
                             random_state=1)
        if workload == "lda_dask":
            from distributed import Client, LocalCluster

            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                model = LDA(20, max_iter=iterations or 40, random_state=0, scheme="adlda",
                            executor=client).fit(X)
        elif workload == "lda_adlda":
            from topiclink.execution.shards import Shards

            model = LDA(20, max_iter=iterations or 60, random_state=0,
                        scheme=Shards("adlda", 2), executor=2).fit(X)
        else:
            extra = {"parallel": "partition", "n_jobs": 2} if workload == "lda2" else {}
            model = LDA(20, max_iter=iterations or 60, random_state=0, **extra).fit(X)
        return digest(model.components_)
    if workload == "grtm":
        from topiclink import RelationalTopicModel
        from topiclink.datasets import load_bundled_cora

        ds = load_bundled_cora()
        model = RelationalTopicModel(10, max_iter=iterations or 40, negative_ratio=0.01,
                                     random_state=0).fit(ds.corpus, links=ds.links)
        return digest(model.components_, model.weights_)
    if workload == "lmvs":
        from topiclink import VisibilityTopicModel
        from topiclink.datasets import make_lmv_data

        data, _ = make_lmv_data(n_docs=1500, random_state=2)   # (corpus, links, ...)
        model = VisibilityTopicModel(8, inference="stochastic", max_iter=6, batch_size=300,
                                     random_state=0).fit(data[0], links=data[1])
        return digest(model.components_)
    if workload == "bpbfm_online":
        from topiclink import BilinearPoissonFactorModel
        from topiclink.datasets import make_bpbfm_data

        tensor, _ = make_bpbfm_data(n_entities=400, n_relations=20, random_state=3)
        model = BilinearPoissonFactorModel(10, inference="online", max_iter=30, burn_in=15,
                                           random_state=0).fit(tensor)
        return digest(model.embedding_)
    if workload == "bpbfm_batch":       # kept samples (engine-owned since d24e52a)
        from topiclink import BilinearPoissonFactorModel
        from topiclink.datasets import make_bpbfm_data

        tensor, _ = make_bpbfm_data(n_entities=300, n_relations=15, random_state=3)
        model = BilinearPoissonFactorModel(10, max_iter=iterations or 200, burn_in=100,
                                           thinning=2, random_state=0).fit(tensor)
        return digest(model.samples_embedding_, model.samples_relation_matrices_)
    raise SystemExit(f"unknown workload {workload!r}")


if __name__ == "__main__":
    name = sys.argv[1]
    print(name, main(name, int(sys.argv[2]) if len(sys.argv) > 2 else None))
