"""LDA Gibbs throughput: topiclink's sweep vs tomotopy's LDAModel (one worker each).

Both samplers train on the same synthetic corpus (drawn from an LDA model with Zipf-shaped
topics) for the same number of warm-up sweeps, then the next sweeps are timed; tokens per
second = tokens x sweeps / seconds.  Results go to JSON with the ratio ours / tomotopy.
With more than one thread ours is the sweep of ``LDA(scheme=Shards("partition", t),
executor=t)`` (t document shards x t vocabulary blocks on t threads, the PartitionSweeper
that estimator runs, timed here sweep by sweep; tomotopy's default with several workers
is its own partition scheme); ``--schemes partition,adlda`` adds the AD-LDA sweeper.

    python benchmarks/lda_throughput.py                 # K = 10, 50, 100; ~1.5 M tokens
    python benchmarks/lda_throughput.py --tokens 4e6 --topics 50 --out results/x.json
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def make_corpus(n_docs: int, doc_len: int, n_words: int, n_topics: int, seed: int):
    """Tokens of an LDA corpus: Zipf-weighted Dirichlet topics, alpha = 0.1."""
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n_words + 1) ** 1.05
    phi = rng.dirichlet(base / base.sum() * n_words * 0.05 + 1e-3, size=n_topics)
    cphi = np.cumsum(phi, axis=1)
    theta = rng.dirichlet(np.full(n_topics, 0.1), size=n_docs)
    z = np.concatenate([rng.choice(n_topics, size=doc_len, p=t) for t in theta])
    u = rng.random(z.size) * cphi[z, -1]
    words = np.empty(z.size, dtype=np.int32)
    for k in range(n_topics):
        m = z == k
        words[m] = np.minimum(np.searchsorted(cphi[k], u[m]), n_words - 1)
    offsets = np.arange(0, z.size + 1, doc_len, dtype=np.int64)
    return words, offsets


def start_state(words, offsets, n_words, K, n_streams, seed):
    """A uniformly random topic per token, its counts, and ``n_streams`` RNG streams
    (shared by the LDA benchmarks: the same start for every kernel they compare)."""
    from topiclink.random import as_generator, kernel_state
    from topiclink.topics.kernels import lda as kl

    rng = as_generator(seed)
    n_docs = offsets.size - 1
    docs = np.repeat(np.arange(n_docs, dtype=np.int32), np.diff(offsets))
    z = rng.integers(0, K, size=words.size).astype(np.int32)
    ndk = np.zeros((n_docs, K), np.int32)
    nwk = np.zeros((n_words, K), np.int32)
    nk = np.zeros(K, np.int32)
    kl.init_counts(words, docs, z, ndk, nwk, nk)
    return z, ndk, nwk, nk, kernel_state(rng, n_streams)


def adlda_sweeps(words, offsets, n_words, z, ndk, nwk, nk, states, alpha, threads):
    """AD-LDA over ``threads`` shards on ``threads`` threads (the sampler of
    ``LDA(scheme=Shards("adlda", t), executor=t)``) over these arrays: ``(algorithm,
    state, data)``; in process the shards sweep z and ndk in place and the RNG rows are
    written back to ``states`` by every step."""
    from topiclink.topics.lda import CollapsedGibbsLDA, LDAState, TokenData

    n_docs = offsets.size - 1
    docs = np.repeat(np.arange(n_docs, dtype=np.int32), np.diff(offsets))
    data = TokenData(words, docs, offsets, n_docs, n_words)
    state = LDAState(z=z, ndk=ndk, nwk=nwk, nk=nk, kernel_rng=states,
                     data_fingerprint=data.fingerprint())
    algorithm = CollapsedGibbsLDA(alpha.size, alpha, 0.01, scheme="adlda", n_shards=threads,
                                  n_threads=threads)
    return algorithm, state, data


def time_ours(words, offsets, n_words, K, warmup, timed, seed, threads=1,
              scheme="partition"):
    from topiclink.topics.kernels import lda as kl
    from topiclink.topics.partition import PartitionSweeper

    z, ndk, nwk, nk, states = start_state(words, offsets, n_words, K, threads, seed)
    alpha = np.full(K, 0.1)
    if scheme == "partition":
        pool = PartitionSweeper(words, offsets, n_words, states, threads)

        def sweep():
            pool.sweep(words, offsets, z, ndk, nwk, nk, alpha, 0.01)
    else:
        algorithm, state, data = adlda_sweeps(words, offsets, n_words, z, ndk, nwk, nk,
                                              states, alpha, threads)
        pool = algorithm.session(state, data)

        def sweep():
            algorithm.step(state, data)

    with pool:
        def one_sweep():
            if threads == 1:
                kl.sweep(words, offsets, z, ndk, nwk, nk, alpha, 0.01, states[0])
            else:
                sweep()

        for _ in range(warmup):
            one_sweep()
        times = []
        for _ in range(timed):
            t0 = time.perf_counter()
            one_sweep()
            times.append(time.perf_counter() - t0)
    ll = kl.log_joint(ndk, nwk, nk, alpha, 0.01) / words.size
    return times, ll


def time_tomotopy(words, offsets, n_words, K, warmup, timed, seed, threads=1):
    import tomotopy as tp

    vocab = np.array([f"w{i}" for i in range(n_words)])
    model = tp.LDAModel(k=K, alpha=0.1, eta=0.01, seed=seed)
    for d in range(offsets.size - 1):
        model.add_doc(vocab[words[offsets[d]:offsets[d + 1]]].tolist())
    model.train(warmup, workers=threads)
    times = []
    for _ in range(timed):
        t0 = time.perf_counter()
        model.train(1, workers=threads)
        times.append(time.perf_counter() - t0)
    return times, float(model.ll_per_word), tp.__version__


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=float, default=1.5e6)
    ap.add_argument("--doc-length", type=int, default=150)
    ap.add_argument("--words", type=int, default=10_000)
    ap.add_argument("--topics", type=str, default="10,50,100")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--timed", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=str, default="1,2",
                    help="thread counts (ours: 1 = the exact sweep, t > 1 = --schemes "
                         "with t shards on t threads; tomotopy: workers)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="tomotopy / topiclink process pairs per case, alternated; the "
                         "ratio reported is the median of the pairs' ratios")
    ap.add_argument("--one", type=str, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--schemes", type=str, default="partition",
                    help="our multi-thread schemes timed at t > 1 threads (partition, adlda)")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "lda_throughput.json")
    args = ap.parse_args()

    import topiclink

    n_docs = int(args.tokens) // args.doc_length
    if args.one is not None:
        # a worker process: one measurement, printed as JSON (each timing runs in a fresh
        # process: tomotopy's worker pool outlives train() and shares the cores otherwise)
        who, threads, K, scheme = args.one.split(":")
        words, offsets = make_corpus(n_docs, args.doc_length, args.words, 50, args.seed)
        if who == "ours":
            times, ll = time_ours(words, offsets, args.words, int(K), args.warmup,
                                  args.timed, args.seed, int(threads), scheme)
            version = topiclink.__version__
        else:
            times, ll, version = time_tomotopy(words, offsets, args.words, int(K),
                                               args.warmup, args.timed, args.seed,
                                               int(threads))
        print(json.dumps({"times": times, "ll": ll, "version": version,
                          "n_tokens": int(words.size)}))
        return

    def measure(who: str, threads: int, K: int, scheme: str) -> dict:
        cmd = [sys.executable, __file__, "--one", f"{who}:{threads}:{K}:{scheme}",
               "--tokens", str(args.tokens), "--doc-length", str(args.doc_length),
               "--words", str(args.words), "--warmup", str(args.warmup),
               "--timed", str(args.timed), "--seed", str(args.seed)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    def write_result(rows: list, n_tokens: int, tp_version: str) -> None:
        """Write what is measured so far (after every row: a long run cut off keeps it)."""
        result = {
            "benchmark": "lda_throughput",
            "corpus": {"n_docs": n_docs, "n_tokens": n_tokens, "n_words": args.words,
                       "doc_length": args.doc_length, "generator": "LDA, 50 Zipf topics"},
            "protocol": f"{args.warmup} warm-up sweeps, median of {args.timed} timed sweeps; "
                        "threads=1: our exact sequential sweep vs tomotopy workers=1; threads=t: "
                        "our scheme with t shards on t threads (partition: t document shards x "
                        "t vocabulary blocks; adlda: t document chunks) vs tomotopy workers=t "
                        "(its default parallel scheme); every timing in its own process, "
                        f"{args.repeats} tomotopy/topiclink process pairs per case, the ratio "
                        "the median of the pairs' ratios",
            "topiclink_version": topiclink.__version__,
            "tomotopy_version": tp_version,
            "machine": {"python": platform.python_version(), "processor": platform.machine(),
                        "cpu_count": __import__("os").cpu_count()},
            "results": rows,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n")
        tmp.replace(args.out)

    rows = []
    cases = [(t, int(k)) for t in map(int, args.threads.split(","))
             for k in args.topics.split(",")]
    schemes = [x.strip() for x in args.schemes.split(",") if x.strip()]
    n_tokens = 0
    tp_version = ""
    for threads, K in cases:
        for scheme in (["sequential"] if threads == 1 else schemes):
            pairs = []
            for _ in range(args.repeats):
                theirs_run = measure("tomotopy", threads, K, "-")
                ours_run = measure("ours", threads, K, scheme)
                pairs.append((theirs_run, ours_run))
            n_tokens = pairs[0][0]["n_tokens"]
            tp_version = pairs[0][0]["version"]
            ours_rates = [n_tokens / float(np.median(o["times"])) for _, o in pairs]
            theirs_rates = [n_tokens / float(np.median(t["times"])) for t, _ in pairs]
            ratios = [a / b for a, b in zip(ours_rates, theirs_rates, strict=True)]
            row = {
                "n_topics": K,
                "threads": threads,
                "scheme": scheme,
                "topiclink_mtokens_per_s": float(np.median(ours_rates)) / 1e6,
                "tomotopy_mtokens_per_s": float(np.median(theirs_rates)) / 1e6,
                "ratio": float(np.median(ratios)),
                "ratio_per_pair": ratios,
                "topiclink_mtokens_per_s_per_pair": [r / 1e6 for r in ours_rates],
                "tomotopy_mtokens_per_s_per_pair": [r / 1e6 for r in theirs_rates],
                "topiclink_log_joint_per_token": pairs[-1][1]["ll"],
                "tomotopy_ll_per_word": pairs[-1][0]["ll"],
            }
            rows.append(row)
            write_result(rows, n_tokens, tp_version)
            print(f"threads={threads} K={K:4d} {scheme:>10}  "
                  f"topiclink {row['topiclink_mtokens_per_s']:6.2f} M tok/s   "
                  f"tomotopy {row['tomotopy_mtokens_per_s']:6.2f} M tok/s   "
                  f"ratio {row['ratio']:.2f} (pairs {', '.join(f'{r:.2f}' for r in ratios)})",
                  flush=True)
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
