"""KTM beyond a few thousand documents: inducing points on 20 Newsgroups.

The exact GP of a kernel topic model costs O(D^3) per topic and iteration; with
``n_inducing=M`` the GPs are FITC approximations on M seeded documents (O(D M^2)).  This
fits KTM (K topics, the 5,000 most frequent words, a categorical kernel on the newsgroup
label, M inducing documents) and collapsed Gibbs LDA on the 11,269 training posts and
reports held-out document-completion perplexity on the first 2,000 test posts with more
than one known word (the same estimator and seed for both) and the time.

    python benchmarks/ktm_inducing.py [--topics 20] [--inducing 100] [--iterations 30]
        [--lda-iterations 200] [--out benchmarks/results/ktm_20newsgroups_inducing.json]

Needs the 20 Newsgroups data (``TOPICLINK_DATA``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import topiclink
from topiclink.datasets import load_dataset
from topiclink.families.ktm.gp.kernels import CategoricalKernel, ConstantKernel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--inducing", type=int, default=100)
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--lda-iterations", type=int, default=200)
    ap.add_argument("--vocabulary", type=int, default=5000)
    ap.add_argument("--n-test", type=int, default=2000)
    ap.add_argument("--out", type=Path,
                    default=Path("benchmarks/results/ktm_20newsgroups_inducing.json"))
    args = ap.parse_args()
    ds = load_dataset("20newsgroups")
    freq = np.asarray(ds.corpus.counts.sum(axis=0)).ravel()
    keep = np.sort(np.argsort(-freq)[:args.vocabulary])
    Xtr = ds.corpus.counts[:, keep].tocsr()
    ok = np.asarray(Xtr.sum(axis=1)).ravel() > 0
    Xtr, ytr = Xtr[ok], ds.labels[ok].astype(float)
    Xte = ds.test.corpus.counts[:, keep].tocsr()
    okt = np.asarray(Xte.sum(axis=1)).ravel() > 1
    Xte, yte = Xte[okt][:args.n_test], ds.test.labels[okt][:args.n_test].astype(float)
    K = args.topics
    t0 = time.perf_counter()
    ktm = topiclink.KernelTopicModel(K, kernel=ConstantKernel(1.0) * CategoricalKernel(0.5),
                                     n_inducing=args.inducing, max_iter=args.iterations,
                                     random_state=0).fit(Xtr, features=ytr[:, None])
    t_ktm = time.perf_counter() - t0
    p_ktm = ktm.perplexity(Xte, features=yte[:, None], random_state=0)
    t0 = time.perf_counter()
    lda = topiclink.LDA(K, max_iter=args.lda_iterations, random_state=0).fit(Xtr)
    t_lda = time.perf_counter() - t0
    p_lda = lda.perplexity(Xte, random_state=0)
    result = {
        "benchmark": "ktm_inducing", "n_train": int(Xtr.shape[0]),
        "n_test": int(Xte.shape[0]), "K": K, "vocabulary": args.vocabulary,
        "topiclink_version": topiclink.__version__,
        "ktm": {"n_inducing": args.inducing, "iterations": args.iterations,
                "seconds": t_ktm, "seconds_per_iteration": t_ktm / args.iterations,
                "heldout_perplexity": p_ktm, "kernel": repr(ktm.kernel_), "tau": ktm.tau_},
        "lda": {"iterations": args.lda_iterations, "seconds": t_lda,
                "heldout_perplexity": p_lda},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
