"""Our DMR against tomotopy's DMRModel (categorical metadata: the president), same run.

State of the Union addresses 1790-2011 over the 5,000 most frequent terms, the seeded
80/20 split of :func:`topiclink_reproductions.ktm.prepare_sotu` (issue 13: "our DMR at least
as good as tomotopy's DMR at equal iterations, and its time per iteration side by side").
For each number of iterations and each seed both models are fitted from scratch on the
training addresses with the president as their only metadata, K = 10:

* ours: ``topiclink.DMR(features=DataFrame({"president": ...}))`` -- one indicator per
  president seen in training plus an intercept; lambda_kf ~ N(0, sigma^2 = 1), intercept
  ~ N(0, intercept_sigma^2 = 10^2), lambda_k0 initialised to log(alpha = 0.1), beta 0.01,
  lambda optimised after sweep t when t >= burn_in (50) and t % 10 == 0;
* tomotopy: ``DMRModel(k=10, alpha=0.1, eta=0.01, sigma=1.0)`` (its prior on lambda is
  N(log alpha, sigma^2), one lambda column per president and no intercept; document prior
  exp(lambda[:, president]) + alpha_epsilon), ``burn_in = 50``, ``optim_interval = 10``,
  ``train(iterations, workers=1)``.

Measured, the same way for both: seconds per iteration = wall time of the whole training
call (``fit`` / ``train``, initialisation included, corpus loading into tomotopy not) over
the iterations, one thread (our DMR is sequential; BLAS limited to one thread);
the training perplexity ``exp(-sum n_dw log(theta_d . phi_w) / N)`` of the point
estimates (:func:`topiclink.topics.completion.training_perplexity`); the held-out
perplexity by *our* document-completion estimator
(:func:`topiclink.topics.completion.completion_perplexity`, half of each test address
observed, same seed for both models) from each model's topics and each test address's
prior.  tomotopy's topics are rebuilt over our vocabulary from its topic-word counts,
``(n_kw + eta) / (n_k + V eta)``; its prior for a test address of a known president is
``exp(lambda[:, president]) + alpha_epsilon``, for a president without training addresses
the mean of that prior over the known presidents; ours gives such a president all-zero
indicators, i.e. the prior ``exp(intercept)``.

    python benchmarks/dmr_vs_tomotopy.py [--iterations 200,500] [--seeds 0,1,2]
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
import pandas as pd  # noqa: E402

MODELS = ("topiclink-DMR", "tomotopy-DMR")


def fit_ours(data: Any, iterations: int, seed: int, args: argparse.Namespace
             ) -> dict[str, Any]:
    from topiclink import DMR
    from topiclink.topics.completion import completion_perplexity, training_perplexity

    train, test = data.part(data.train), data.part(data.test)
    model = DMR(args.topics, sigma=args.sigma, intercept_sigma=args.intercept_sigma,
                doc_topic_prior=args.alpha, topic_word_prior=args.beta,
                optimize_every=args.optimize_every,
                burn_in=min(args.burn_in, iterations - 1), max_iter=iterations,
                evaluate_every=0, random_state=seed)
    features = pd.DataFrame({"president": data.presidents[data.train]})
    t0 = time.perf_counter()
    model.fit(train, features=features)
    seconds = time.perf_counter() - t0
    alpha_test = model.predict_alpha(pd.DataFrame({"president": data.presidents[data.test]}))
    return {
        "train_perplexity": training_perplexity(train, model.doc_topic_, model.components_),
        "heldout_perplexity": completion_perplexity(test, model.components_, alpha_test,
                                                    fraction=args.fraction,
                                                    random_state=seed),
        "fit_seconds": seconds, "seconds_per_iteration": seconds / iterations,
        "n_iter": int(model.n_iter_)}


def fit_tomotopy(data: Any, iterations: int, seed: int, args: argparse.Namespace
                 ) -> dict[str, Any]:
    import tomotopy as tp

    from topiclink.topics.completion import completion_perplexity, training_perplexity
    from topiclink_reproductions.peers.tomotopy import tomotopy_words

    train, test = data.part(data.train), data.part(data.test)
    K, V = int(args.topics), train.n_words
    mdl = tp.DMRModel(k=K, alpha=args.alpha, eta=args.beta, sigma=args.sigma,
                      seed=int(seed))
    mdl.burn_in = int(min(args.burn_in, iterations - 1))
    mdl.optim_interval = int(args.optimize_every)
    words_of = [tomotopy_words(train, d) for d in range(train.n_docs)]
    for words, p in zip(words_of, data.presidents[data.train], strict=True):
        mdl.add_doc(words, metadata=str(p))
    t0 = time.perf_counter()
    mdl.train(iterations, workers=1)
    seconds = time.perf_counter() - t0
    # documents are kept in the order they were added; topics over our vocabulary
    index = {w: j for j, w in enumerate(np.asarray(train.vocabulary, dtype=str).tolist())}
    cols = np.array([index[w] for w in mdl.used_vocabs], dtype=np.int64)
    raw = np.array([mdl.get_topic_word_dist(k, normalize=False) for k in range(K)])
    n = np.zeros((K, V))
    n[:, cols] = np.maximum(raw - mdl.eta, 0.0)
    phi = (n + args.beta) / (n.sum(axis=1, keepdims=True) + V * args.beta)
    theta = np.array([d.get_topic_dist() for d in list(mdl.docs)], dtype=float)
    levels = list(mdl.metadata_dict)
    prior = np.exp(np.asarray(mdl.lambdas, dtype=float)).T + float(mdl.alpha_epsilon)
    mean_prior = prior.mean(axis=0)
    alpha_test = np.array([prior[levels.index(str(p))] if str(p) in levels else mean_prior
                           for p in data.presidents[data.test]])
    return {
        "train_perplexity": training_perplexity(train, theta, phi),
        "heldout_perplexity": completion_perplexity(test, phi, alpha_test,
                                                    fraction=args.fraction,
                                                    random_state=seed),
        "native_perplexity": float(mdl.perplexity),
        "fit_seconds": seconds, "seconds_per_iteration": seconds / iterations,
        "n_iter": int(mdl.global_step)}


def _stats(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=float)
    return {"mean": float(a.mean()), "sd": float(a.std(ddof=1)) if a.size > 1 else 0.0}


def _cell(stats: dict[str, float], metric: str) -> str:
    digits = 4 if metric == "seconds_per_iteration" else 2
    return f"{stats['mean']:>11.{digits}f} +- {stats['sd']:<6.{digits}f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="sotu")
    ap.add_argument("--iterations", default="200,500")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--split-seed", type=int, default=0)
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--intercept-sigma", type=float, default=10.0)
    ap.add_argument("--burn-in", type=int, default=50)
    ap.add_argument("--optimize-every", type=int, default=10)
    ap.add_argument("--fraction", type=float, default=0.5)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "dmr_vs_tomotopy.json")
    args = ap.parse_args()

    import tomotopy

    import topiclink
    from topiclink_reproductions.ktm import KTMSettings, prepare_sotu

    settings = KTMSettings(n_topics=args.topics, alpha=args.alpha, beta=args.beta,
                           burn_in=args.burn_in, optimize_every=args.optimize_every,
                           completion_fraction=args.fraction)
    data = prepare_sotu(args.dataset, settings, seed=args.split_seed)
    unseen = sorted(set(data.presidents[data.test].tolist())
                    - set(data.presidents[data.train].tolist()))
    iterations = [int(i) for i in args.iterations.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    fitters = {"topiclink-DMR": fit_ours, "tomotopy-DMR": fit_tomotopy}
    runs: list[dict[str, Any]] = []
    for it in iterations:
        for seed in seeds:
            for name in MODELS:
                row = {"model": name, "iterations": it, "seed": seed,
                       **fitters[name](data, it, seed, args)}
                runs.append(row)
                print(f"{name:>14s} {it:4d} it seed {seed}: train {row['train_perplexity']:8.2f}"
                      f"  held-out {row['heldout_perplexity']:8.2f}  "
                      f"{row['seconds_per_iteration']:.4f} s/it", flush=True)

    frame = pd.DataFrame(runs)
    metrics = ("train_perplexity", "heldout_perplexity", "seconds_per_iteration")
    summary: dict[str, Any] = {}
    for it in iterations:
        block: dict[str, Any] = {}
        for name in MODELS:
            sub = frame[(frame.model == name) & (frame.iterations == it)]
            block[name] = {m: _stats(sub[m].tolist()) for m in metrics}
        ours, peer = (frame[(frame.model == m) & (frame.iterations == it)]
                      .sort_values("seed") for m in MODELS)
        block["ratio_ours_over_tomotopy"] = {
            m: {"of_means": block[MODELS[0]][m]["mean"] / block[MODELS[1]][m]["mean"],
                "per_seed": _stats((ours[m].to_numpy() / peer[m].to_numpy()).tolist())}
            for m in metrics}
        summary[str(it)] = block

    print()
    print(f"{'iterations':>10s} {'model':>14s} {'train perplexity':>20s} "
          f"{'held-out perplexity':>20s} {'s/iteration':>18s}")
    for it in iterations:
        for name in MODELS:
            s = summary[str(it)][name]
            print(f"{it:>10d} {name:>14s} " + " ".join(_cell(s[m], m) for m in metrics))
        r = summary[str(it)]["ratio_ours_over_tomotopy"]
        print(f"{it:>10d} {'ours/tomotopy':>14s} " + " ".join(
            f"{r[m]['of_means']:>20.3f}" for m in metrics))

    result = {
        "benchmark": "dmr_vs_tomotopy",
        "issue": 13,
        "data": {"dataset": args.dataset, "years": f"{settings.first_year}-"
                 f"{settings.last_year}", "n_docs": data.corpus.n_docs,
                 "n_train": int(data.train.size), "n_test": int(data.test.size),
                 "n_words": data.corpus.n_words,
                 "n_train_tokens": int(data.part(data.train).counts.sum()),
                 "split_seed": args.split_seed,
                 "n_presidents_train": int(np.unique(data.presidents[data.train]).size),
                 "test_presidents_without_training_addresses": unseen},
        "protocol": {
            "K": args.topics, "iterations": iterations, "seeds": seeds,
            "metadata": "president only (categorical)",
            "ours": f"topiclink.DMR(sigma={args.sigma}, intercept_sigma="
                    f"{args.intercept_sigma}, doc_topic_prior={args.alpha}, "
                    f"topic_word_prior={args.beta}, optimize_every={args.optimize_every}, "
                    f"burn_in={args.burn_in}, evaluate_every=0), features = "
                    "DataFrame({'president'}) one-hot + intercept; unseen president: "
                    "all-zero indicators (prior exp(intercept))",
            "tomotopy": f"tomotopy.DMRModel(k={args.topics}, alpha={args.alpha}, "
                        f"eta={args.beta}, sigma={args.sigma}) (lambda ~ N(log alpha, "
                        f"sigma^2), no intercept), burn_in={args.burn_in}, "
                        f"optim_interval={args.optimize_every}, train(iterations, "
                        "workers=1); test prior exp(lambda[:, president]) + "
                        "alpha_epsilon, unseen president: mean of that prior over the "
                        "known presidents; topics (n_kw + eta) / (n_k + V eta) over our "
                        "vocabulary",
            "seconds_per_iteration": "wall time of the one training call (fit / train, "
                                     "initialisation included) / iterations, one thread",
            "train_perplexity": "exp(-sum n_dw log(theta_d . phi_w) / N) of the point "
                                "estimates (topiclink training_perplexity)",
            "heldout_perplexity": f"topiclink completion_perplexity, fraction "
                                  f"{args.fraction}, random_state = run seed, same for "
                                  "both models",
        },
        "topiclink_version": topiclink.__version__, "tomotopy_version": tomotopy.__version__,
        "tomotopy_isa": getattr(tomotopy, "isa", None),
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "processor": platform.processor() or platform.machine()},
        "summary": summary,
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
