"""Distributed Gibbs on Dask: tokens per second against workers, bytes moved per sweep.

One synthetic corpus (the generator of ``benchmarks/lda_throughput.py``), a fixed shard
count; every case starts from the same topics and streams and runs the same AD-LDA sweeps
(``LDA(scheme=Shards("adlda", n), executor=...)``'s sampler, timed sweep by sweep):

- ``sequential``: the exact sweep (:func:`topiclink.topics.kernels.lda.sweep`), for reference;
- ``adlda``: :class:`~topiclink.topics.lda.CollapsedGibbsLDA` with ``scheme="adlda"``
  over the shards on 1 and 2 threads;
- ``dask``: the same sampler handed a :class:`~topiclink.execution.DaskExecutor` on a
  ``LocalCluster(processes=True, threads_per_worker=1)`` of 1 and 2 workers.

A Dask sweep moves nwk/nk out (broadcast to every worker) and the changed nwk rows back;
z and ndk stay on the workers.  The executor's byte counters give the payload per sweep;
the cost of gathering ndk (what the objective needs) and the whole state is timed apart.
After the timed sweeps each Dask run is checked bit for bit against the threads' chain.

    python benchmarks/lda_dask.py                       # ~1 M tokens, K = 10, 50
    python benchmarks/lda_dask.py --tokens 3e5 --topics 20 --workers 1,2,4
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# this file is named like the ``distributed`` package: keep its folder off the path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def _throughput_module():
    """benchmarks/lda_throughput.py (its corpus generator and start state)."""
    spec = importlib.util.spec_from_file_location("lda_throughput", HERE / "lda_throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _make_corpus():
    return _throughput_module().make_corpus


def start_state(words, offsets, n_words, K, n_shards, seed):
    return _throughput_module().start_state(words, offsets, n_words, K, n_shards, seed)


def timed_sweeps(sweep, warmup, timed):
    for _ in range(warmup):
        sweep()
    times = []
    for _ in range(timed):
        t0 = time.perf_counter()
        sweep()
        times.append(time.perf_counter() - t0)
    return times


def summary(times, n_tokens):
    med = float(np.median(times))
    return {"mtokens_per_s": n_tokens / med / 1e6,
            "sweep_seconds": {"min": min(times), "median": med, "max": max(times)}}


def adlda_sweeps(words, offsets, n_words, z, ndk, nwk, nk, states, alpha, n_shards, *,
                 threads=1, executor=None):
    """AD-LDA over ``n_shards`` shards of these arrays (the sampler of
    ``LDA(scheme=Shards("adlda", n_shards), executor=...)``): ``(algorithm, state,
    data)``, on ``threads`` threads or on ``executor``."""
    from topiclink.topics.lda import CollapsedGibbsLDA, LDAState, TokenData

    n_docs = offsets.size - 1
    docs = np.repeat(np.arange(n_docs, dtype=np.int32), np.diff(offsets))
    data = TokenData(words, docs, offsets, n_docs, n_words)
    state = LDAState(z=z, ndk=ndk, nwk=nwk, nk=nk, kernel_rng=states,
                     data_fingerprint=data.fingerprint())
    algorithm = CollapsedGibbsLDA(alpha.size, alpha, 0.01, scheme="adlda", n_shards=n_shards,
                                  executor=executor, n_threads=threads)
    return algorithm, state, data


def run_case(kind, n, words, offsets, n_words, K, n_shards, args):
    """One case; returns (row, final state arrays)."""
    from topiclink.topics.kernels import lda as kl

    z, ndk, nwk, nk, states = start_state(words, offsets, n_words, K, n_shards, args.seed)
    alpha, beta = np.full(K, 0.1), 0.01
    row = {"n_topics": K, "case": kind, "n_shards": n_shards if kind != "sequential" else 1}
    if kind == "sequential":
        times = timed_sweeps(lambda: kl.sweep(words, offsets, z, ndk, nwk, nk, alpha, beta,
                                              states[0]), args.warmup, args.timed)
    elif kind == "adlda":
        row["threads"] = n
        algorithm, state, data = adlda_sweeps(words, offsets, n_words, z, ndk, nwk, nk,
                                              states, alpha, n_shards, threads=n)
        with algorithm.session(state, data):
            times = timed_sweeps(lambda: algorithm.step(state, data), args.warmup,
                                 args.timed)
    else:
        import distributed

        from topiclink.execution import resolve_executor

        row["workers"] = n
        t0 = time.perf_counter()
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, \
                distributed.Client(cluster) as client:
            row["cluster_start_seconds"] = time.perf_counter() - t0
            ex = resolve_executor(client)
            algorithm, state, data = adlda_sweeps(words, offsets, n_words, z, ndk, nwk, nk,
                                                  states, alpha, n_shards, executor=ex)
            with algorithm.session(state, data):
                t0 = time.perf_counter()
                algorithm.step(state, data)
                row["first_sweep_seconds (scatter + numba load)"] = time.perf_counter() - t0
                row["bytes_scattered_at_start"] = ex.bytes_sent - (
                    nwk.nbytes + nk.nbytes) * ex.n_workers - alpha.nbytes * n_shards
                timed_sweeps(lambda: algorithm.step(state, data), args.warmup - 1, 0)
                sent0, recv0 = ex.bytes_sent, ex.bytes_received
                times = timed_sweeps(lambda: algorithm.step(state, data), 0, args.timed)
                row["bytes_sent_per_sweep"] = (ex.bytes_sent - sent0) / args.timed
                row["bytes_received_per_sweep"] = (ex.bytes_received - recv0) / args.timed
                t0 = time.perf_counter()
                recv0 = ex.bytes_received
                algorithm.sync(state)       # (the executor fetches whole shard states)
                row["gather_state"] = {"seconds": time.perf_counter() - t0,
                                       "bytes": ex.bytes_received - recv0}
    row.update(summary(times, words.size))
    return row, (z, ndk, nwk, nk, states)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=float, default=1e6)
    ap.add_argument("--doc-length", type=int, default=150)
    ap.add_argument("--words", type=int, default=10_000)
    ap.add_argument("--topics", type=str, default="10,50")
    ap.add_argument("--shards", type=int, default=4, help="AD-LDA shards (all cases)")
    ap.add_argument("--threads", type=str, default="1,2", help="adlda thread counts")
    ap.add_argument("--workers", type=str, default="1,2", help="Dask worker processes")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timed", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "distributed.json")
    args = ap.parse_args()

    import dask
    import distributed

    import topiclink

    n_docs = int(args.tokens) // args.doc_length
    words, offsets = _make_corpus()(n_docs, args.doc_length, args.words, 50, args.seed)
    n_tokens = int(words.size)
    rows = []
    load_at_start = os.getloadavg()[0]      # the machine may be shared: read with care
    t_start = time.perf_counter()
    for K in map(int, args.topics.split(",")):
        cases = ([("sequential", 1)] + [("adlda", int(t)) for t in args.threads.split(",")]
                 + [("dask", int(w)) for w in args.workers.split(",")])
        reference = None
        for kind, n in cases:
            row, final = run_case(kind, n, words, offsets, args.words, K, args.shards, args)
            if kind == "adlda" and reference is None:
                reference = final
            if kind == "dask" and reference is not None:
                row["identical_to_adlda"] = all(np.array_equal(a, b)
                                                for a, b in zip(final, reference, strict=True))
            rows.append(row)
            extra = (f"  sent {row['bytes_sent_per_sweep'] / 1e6:.2f} MB, received "
                     f"{row['bytes_received_per_sweep'] / 1e6:.2f} MB per sweep"
                     if kind == "dask" else "")
            print(f"K={K:3d} {kind:10s} n={n}  {row['mtokens_per_s']:6.2f} M tok/s  "
                  f"(median sweep {row['sweep_seconds']['median'] * 1e3:7.1f} ms){extra}")
    result = {
        "benchmark": "distributed",
        "corpus": {"n_docs": n_docs, "n_tokens": n_tokens, "n_words": args.words,
                   "doc_length": args.doc_length, "generator": "LDA, 50 Zipf topics"},
        "protocol": (f"{args.shards} AD-LDA shards (sequential: the exact sweep); the same "
                     f"start state in every case; {args.warmup} warm-up sweeps, median of "
                     f"{args.timed} timed sweeps; dask: LocalCluster(processes=True, "
                     "threads_per_worker=1), the AD-LDA step only (nwk/nk current, z/ndk "
                     "left on the workers), gathers timed apart; bytes = payload sizes "
                     "counted by the executor (nwk/nk broadcast to each worker out, changed "
                     "nwk rows + nk deltas back), not wire bytes"),
        "topiclink_version": topiclink.__version__,
        "dask_version": dask.__version__,
        "distributed_version": distributed.__version__,
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count(),
                    "load_average_1min_at_start": load_at_start},
        "total_seconds": time.perf_counter() - t_start,
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
