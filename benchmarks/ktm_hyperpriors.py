"""KTM's hyper-parameter fit over iterations: held-out perplexity after 20 and 100.

The kernel topic model maximises the summed evidence of its messages over the kernel's
hyper-parameters (and tau) every ``optimize_every`` iterations.  Without a hyper-prior
and with tau fitted (the defaults before 2026-12-03) that fit got worse the longer it
ran: on hep-th abstracts with their year as the one feature, held-out perplexity after
100 iterations was 5-7 % above that after 20, as tau drifted upwards.  This benchmark runs
each configuration for 20 and for 100 iterations (two fits, same seed) on

- ``hepth-800/s``: 800 abstracts of hep-th drawn with seed s (terms in >= 5 of them),
  K = 20, feature = the submission time in years; s = 0 chose the defaults, s = 1 checks;
- ``hepth-300/s``: 300 abstracts, K = 10 (the size of the test in
  ``tests/families/ktm/test_ktm_hyperpriors.py``), s = 2, 3, 4;
- ``sotu/s``: the State of the Union addresses 1790-2011 over their 5,000 most frequent
  terms, K = 10, ``SOTUKernel`` on (year, president), seeds 0 and 1 of the split;
- ``20newsgroups/0``: the training posts and 2,000 test posts, K = 20, a categorical
  kernel on the newsgroup with FITC GPs on 100 documents (``benchmarks/ktm_inducing.py``'s
  setting; run on its own: ``--corpora 20newsgroups/0 --out
  benchmarks/results/ktm_hyperpriors_20newsgroups.json``);

80/20 documents, held-out perplexity by document completion (half of each held-out
document's tokens, seed 0).  Configurations: ``ml-ii`` (no hyper-prior, tau fitted: the
old default), ``default`` (the estimator's defaults), ``fixed`` (``optimize_every=0``);
``--configs`` takes more as ``name=JSON`` (e.g. ``'s2={"hyperprior_scale": 2.0,
"fit_tau": true}'``).  JSON in ``benchmarks/results/ktm_hyperpriors.json``.

    TOPICLINK_DATA=../shared/datasets python benchmarks/ktm_hyperpriors.py [--quick]
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

CONFIGS: dict[str, dict[str, Any]] = {
    "ml-ii": {"hyperprior_scale": None, "fit_tau": True},
    "default": {},
    "fixed": {"optimize_every": 0},
}
ITERATIONS = (20, 100)


def hepth_sample(n_docs: int, seed: int) -> dict[str, Any]:
    """``n_docs`` hep-th abstracts drawn with ``seed``, their times, an 80/20 split."""
    from topiclink.datasets import load_dataset

    corpus = load_dataset("hepth").corpus
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(corpus.n_docs, n_docs, replace=False))
    X = corpus.counts[rows].tocsr()
    times = corpus.metadata["time"].to_numpy(float)[rows]
    X = X[:, np.asarray(X.sum(axis=0)).ravel() >= 5]
    keep = np.asarray(X.sum(axis=1)).ravel() > 0
    X, times = X[keep], times[keep]
    perm = rng.permutation(X.shape[0])
    n_test = int(0.2 * perm.size)
    test, train = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    return {"X": X, "features": times[:, None], "train": train, "test": test,
            "params": {}}


def sotu_split(seed: int) -> dict[str, Any]:
    """The State of the Union as the KTM reproduction prepares it, split with ``seed``."""
    from topiclink.families.ktm.gp.kernels import SOTUKernel
    from topiclink_reproductions.ktm import KTMSettings, prepare_sotu

    data = prepare_sotu("sotu", KTMSettings(), seed=seed)
    every = np.arange(data.corpus.n_docs)
    return {"X": data.corpus.counts.tocsr(),
            "features": data.ktm_features(data.years[every], data.presidents[every]),
            "train": data.train, "test": data.test, "params": {"kernel": SOTUKernel()}}


def newsgroups_split(n_test: int = 2000, vocabulary: int = 5000) -> dict[str, Any]:
    """20 Newsgroups as ``benchmarks/ktm_inducing.py`` reads it: the 11,269 training posts
    over the 5,000 most frequent words, the first 2,000 test posts with two known words,
    the newsgroup as the feature of a categorical kernel, FITC GPs on 100 documents."""
    import scipy.sparse as sp

    from topiclink.datasets import load_dataset
    from topiclink.families.ktm.gp.kernels import CategoricalKernel, ConstantKernel

    ds = load_dataset("20newsgroups")
    freq = np.asarray(ds.corpus.counts.sum(axis=0)).ravel()
    keep = np.sort(np.argsort(-freq)[:vocabulary])
    Xtr = ds.corpus.counts[:, keep].tocsr()
    ok = np.asarray(Xtr.sum(axis=1)).ravel() > 0
    Xtr, ytr = Xtr[ok], ds.labels[ok].astype(float)
    Xte = ds.test.corpus.counts[:, keep].tocsr()
    okt = np.asarray(Xte.sum(axis=1)).ravel() > 1
    Xte, yte = Xte[okt][:n_test], ds.test.labels[okt][:n_test].astype(float)
    n = Xtr.shape[0]
    return {"X": sp.vstack([Xtr, Xte]).tocsr(),
            "features": np.concatenate([ytr, yte])[:, None],
            "train": np.arange(n), "test": np.arange(n, n + Xte.shape[0]),
            "params": {"kernel": ConstantKernel(1.0) * CategoricalKernel(0.5),
                       "n_inducing": 100}}


def run_cell(data: dict[str, Any], n_topics: int, config: dict[str, Any]) -> dict[str, Any]:
    from topiclink.families.ktm.estimator import KernelTopicModel

    X, F, tr, te = data["X"], data["features"], data["train"], data["test"]
    out: dict[str, Any] = {}
    for n_iter in ITERATIONS:
        t0 = time.perf_counter()
        model = KernelTopicModel(n_topics=n_topics, max_iter=n_iter, random_state=0,
                                 **data["params"], **config).fit(X[tr], features=F[tr])
        out[str(n_iter)] = {
            "heldout_perplexity": float(model.perplexity(X[te], features=F[te],
                                                         random_state=0)),
            "kernel": repr(model.kernel_), "tau": float(model.tau_),
            "seconds": time.perf_counter() - t0}
    out["ratio_100_over_20"] = (out["100"]["heldout_perplexity"]
                                / out["20"]["heldout_perplexity"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default="hepth-800/0,hepth-800/1,hepth-300/2,hepth-300/3,"
                    "hepth-300/4,sotu/0,sotu/1")
    ap.add_argument("--configs", nargs="*", default=[],
                    help="more configurations, name=JSON of KernelTopicModel parameters")
    ap.add_argument("--only", default=None, help="comma-separated configurations to run")
    ap.add_argument("--quick", action="store_true", help="hepth-300/2 and sotu/0 only")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "ktm_hyperpriors.json")
    args = ap.parse_args()
    configs = dict(CONFIGS)
    for item in args.configs:
        name, _, value = item.partition("=")
        configs[name] = json.loads(value)
    if args.only:
        configs = {k: configs[k] for k in args.only.split(",")}
    corpora = "hepth-300/2,sotu/0" if args.quick else args.corpora
    rows = []
    t0 = time.perf_counter()
    for spec in corpora.split(","):
        name, _, seed = spec.partition("/")
        if name == "sotu":
            data, K = sotu_split(int(seed)), 10
        elif name == "20newsgroups":
            data, K = newsgroups_split(), 20
        else:
            n_docs = int(name.split("-")[1])
            data, K = hepth_sample(n_docs, int(seed)), 20 if n_docs >= 800 else 10
        for label, config in configs.items():
            cell = run_cell(data, K, config)
            rows.append({"corpus": spec, "n_topics": K, "config": label,
                         "params": config, **cell})
            print(f"{spec:12s} {label:10s} 20: {cell['20']['heldout_perplexity']:8.1f}  "
                  f"100: {cell['100']['heldout_perplexity']:8.1f}  "
                  f"ratio {cell['ratio_100_over_20']:.3f}", flush=True)
    result = {"benchmark": "ktm_hyperpriors", "iterations": list(ITERATIONS),
              "rows": rows, "seconds": time.perf_counter() - t0,
              "machine": {"cpu": platform.processor() or platform.machine(),
                          "cores": os.cpu_count(), "python": platform.python_version()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(args.out)
    print(f"wrote {args.out} ({result['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
