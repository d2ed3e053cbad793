"""A child process for the SIGKILL tests of tests/test_checkpoint.py.

``python -m tests.checkpoint_child FAMILY CHECKPOINT OUT [SLOW]`` fits FAMILY (lda, grtm,
lmvs, bpbfm_online, ktm) on fixed small data with ``checkpoint=CHECKPOINT,
checkpoint_every=1``, prints ``iteration i`` after every iteration (flushed; the parent
kills the process after one of them), sleeps SLOW seconds per iteration, and saves the
finished model to OUT with its full state.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

N_ITER = 8


def _corpus_and_links() -> tuple[Any, Any]:
    from topiclink.datasets import make_rtm_data

    (corpus, links), _ = make_rtm_data(n_docs=60, n_words=80, n_topics=3, doc_length=30,
                                       random_state=9)
    return corpus, links


def build(family: str, callbacks: list[Any]) -> tuple[Any, tuple, dict[str, Any]]:
    """(estimator, fit arguments, fit keywords) of a family."""
    import topiclink
    from topiclink.data import Links
    from topiclink.datasets import make_bpbfm_data

    common = {"max_iter": N_ITER, "random_state": 4, "callbacks": callbacks}
    if family == "lda":
        corpus, _ = _corpus_and_links()
        return topiclink.LDA(n_topics=3, **common), (corpus,), {}
    if family == "grtm":
        corpus, links = _corpus_and_links()
        return (topiclink.RelationalTopicModel(n_topics=3, negative_ratio=0.2, n_average=3,
                                               **common), (corpus,), {"links": links})
    if family == "lmvs":
        corpus, links = _corpus_and_links()
        directed = Links.from_pairs(links.pairs, links.n_docs, directed=True)
        return (topiclink.VisibilityTopicModel(n_topics=3, inference="stochastic", tol=0.0,
                                               batch_size=16, **common),
                (corpus,), {"links": directed})
    if family == "bpbfm_online":
        tensor, _ = make_bpbfm_data(30, 3, 3, random_state=9, density=0.05)
        return (topiclink.BilinearPoissonFactorModel(n_topics=3, inference="online",
                                                     batch_size=64, burn_in=2, thinning=1,
                                                     **common), (tensor,), {})
    if family == "ktm":
        corpus, _ = _corpus_and_links()
        features = np.random.default_rng(9).random((corpus.n_docs, 3))
        return (topiclink.KernelTopicModel(n_topics=3, optimize_every=3, **common),
                (corpus,), {"features": features})
    raise SystemExit(f"unknown family {family!r}")


def main(argv: list[str]) -> None:
    from topiclink.callbacks import LambdaCallback

    family, checkpoint, out = argv[:3]
    slow = float(argv[3]) if len(argv) > 3 else 0.0

    def report(model: Any, iteration: int, info: dict[str, float]) -> None:
        print(f"iteration {iteration + 1}", flush=True)
        if slow:
            time.sleep(slow)

    est, args, kwargs = build(family, [LambdaCallback(report)])
    est.fit(*args, **kwargs, checkpoint=checkpoint, checkpoint_every=1)
    est.set_params(callbacks=None).save(out, full=True)


if __name__ == "__main__":
    main(sys.argv[1:])
