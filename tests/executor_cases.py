"""The cases of the executor contract (``tests/test_executor_contract.py``): each
estimator that runs on Dask in a configuration that does, with the kind of its data.

A module of its own, importing neither dask nor pytest, so that a fresh interpreter can
fit every case in this process and check that dask was never imported.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from topiclink.datasets import make_lda_data, make_lmv_data, make_rtm_data
from topiclink.execution import Shards

__all__ = ["Case", "CASES", "IDS", "IN_PROCESS", "small_data"]


@dataclasses.dataclass(frozen=True)
class Case:
    """An estimator on Dask: ``kw`` its configuration (an even ``max_iter``: the resume
    test fits half of it twice), ``data`` the key of its data, ``local``: settings that
    run in this process only, with the start of their one-line error."""

    name: str
    variant: str
    kw: dict[str, Any]
    data: str
    local: tuple[tuple[dict[str, Any], str], ...] = ()

    @property
    def id(self) -> str:
        return f"{self.name}-{self.variant}" if self.variant else self.name


IN_PROCESS = "runs in this process"
CASES = [
    Case("LDA", "", {"n_topics": 5, "max_iter": 8, "scheme": Shards("adlda", 3),
                     "random_state": 4}, "corpus",
         (({"scheme": "exact"}, IN_PROCESS), ({"scheme": "partition"}, IN_PROCESS))),
    Case("DMR", "", {"n_topics": 4, "max_iter": 8, "burn_in": 2, "optimize_every": 3,
                     "scheme": Shards("adlda", 3), "random_state": 2}, "features",
         (({"scheme": "exact"}, IN_PROCESS),)),
    Case("RelationalTopicModel", "logistic-reference",
         {"n_topics": 4, "negative_ratio": 0.05, "max_iter": 6, "evaluate_every": 1,
          "scheme": Shards("shards", 3), "random_state": 2, "loss": "logistic",
          "augmentation": "reference"}, "links", (({"scheme": "exact"}, IN_PROCESS),)),
    Case("RelationalTopicModel", "hinge-numba",
         {"n_topics": 4, "negative_ratio": 0.05, "max_iter": 6, "evaluate_every": 1,
          "scheme": Shards("shards", 3), "random_state": 2, "loss": "hinge",
          "augmentation": "numba"}, "links"),
    Case("SupervisedTopicModel", "binary",
         {"n_topics": 4, "c": 4.0, "max_iter": 10, "evaluate_every": 5,
          "scheme": Shards("shards", 3), "random_state": 5}, "labels"),
    Case("SupervisedTopicModel", "multiclass-hinge",
         {"n_topics": 5, "loss": "hinge", "c": 2.0, "max_iter": 8, "evaluate_every": 4,
          "scheme": Shards("shards", 3), "random_state": 7}, "classes"),
    Case("VisibilityTopicModel", "",
         {"n_topics": 6, "inference": "stochastic", "max_iter": 4, "tol": 0.0,
          "batch_size": 40, "n0": 10, "random_state": 0, "n_jobs": 1}, "lmv",
         (({"inference": "batch"}, "executor: a Dask executor needs "
           "inference='stochastic'"),)),
    Case("BilinearPoissonFactorModel", "bpbfm1",
         {"n_topics": 3, "inference": "online", "batch_size": 300, "max_iter": 4,
          "burn_in": 2, "evaluate_every": 2, "random_state": 3}, "tensor1",
         (({"inference": "batch"}, "executor: a Dask executor needs inference='online'"),)),
    Case("BilinearPoissonFactorModel", "bpbfm2",
         {"n_topics": 3, "n_dictionary": 3, "inference": "online", "batch_size": 300,
          "max_iter": 4, "burn_in": 2, "evaluate_every": 2, "random_state": 3}, "tensor2"),
    Case("DirichletMultinomialMixture", "", {"n_topics": 4, "max_iter": 6,
                                            "scheme": Shards("shards", 3),
                                            "random_state": 1}, "corpus",
         (({"scheme": "exact"}, IN_PROCESS),)),
]
IDS = [c.id for c in CASES]


def small_data() -> dict[str, tuple[tuple, dict]]:
    """Tiny data of every case's kind (for a fresh interpreter: no dask imported)."""
    from topiclink.datasets import make_bpbfm_data

    corpus, truth = make_lda_data(n_docs=40, n_words=40, n_topics=3, doc_length=20,
                                  random_state=0)
    (rtm_corpus, links), _ = make_rtm_data(n_docs=30, n_topics=2, doc_length=20,
                                           random_state=0)
    y = np.arange(corpus.n_docs) % 2
    classes = np.array(["a", "b", "c"])[np.arange(corpus.n_docs) % 3]
    (lmv_corpus, lmv_links), _ = make_lmv_data(n_docs=40, random_state=0)
    tensor, _ = make_bpbfm_data(20, 2, 2, random_state=0, density=0.1)
    return {"corpus": ((corpus,), {}),
            "features": ((corpus,), {"features": np.ones((corpus.n_docs, 1))}),
            "links": ((rtm_corpus,), {"links": links}), "labels": ((corpus, y), {}),
            "classes": ((corpus, classes), {}), "lmv": ((lmv_corpus,), {"links": lmv_links}),
            "tensor1": ((tensor,), {}), "tensor2": ((tensor,), {})}
