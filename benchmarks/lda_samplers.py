"""Exact Gibbs against the O(1)-per-token Metropolis-Hastings kernel: log joint against CPU
time at large K (where ``LDA(sampler="auto")`` switches kernels).

The synthetic corpus of ``benchmarks/lda_throughput.py`` (1.5M tokens, V = 10,000, 50
Zipf topics); for each K both kernels start from the same random assignment and run for
the same CPU-time budget (``time.process_time`` of the sweeps only; the log joint is
computed outside the clock); JSON with each trajectory (CPU seconds, log joint per token),
the sweeps per second, and the CPU time each kernel needs to reach the log joint the
other ends at.

    python benchmarks/lda_samplers.py [--topics 1000,3000,5000] [--budget 90]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
from lda_throughput import make_corpus, start_state


def run(words, offsets, n_words, K, kernel, budget, seed, n_mh):
    from topiclink.topics.kernels import lda as kl
    from topiclink.topics.kernels.lda_mh import sweep_mh, word_index

    z, ndk, nwk, nk, states = start_state(words, offsets, n_words, K, 1, seed)
    state = states[0]
    alpha = np.full(K, 0.1)
    ptr, pos = word_index(words, n_words)
    # compile on a one-document copy
    w0, o0 = words[:offsets[1]], offsets[:2]
    z0 = z[:offsets[1]].copy()
    args0 = (ndk[:1].copy(), nwk.copy(), nk.copy(), alpha, 0.01, state.copy())
    if kernel == "gibbs":
        kl.sweep(w0, o0, z0, *args0)
    else:
        sweep_mh(w0, o0, z0, *args0, *word_index(w0, n_words), n_mh)
    used, trajectory = 0.0, []
    while used < budget:
        t0 = time.process_time()
        if kernel == "gibbs":
            kl.sweep(words, offsets, z, ndk, nwk, nk, alpha, 0.01, state)
        else:
            sweep_mh(words, offsets, z, ndk, nwk, nk, alpha, 0.01, state, ptr, pos, n_mh)
        used += time.process_time() - t0
        trajectory.append((used, kl.log_joint(ndk, nwk, nk, alpha, 0.01) / words.size))
    return trajectory


def time_to_reach(trajectory, level):
    for t, ll in trajectory:
        if ll >= level:
            return t
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default="1000,3000,5000")
    ap.add_argument("--budget", type=float, default=90.0, help="CPU seconds per kernel")
    ap.add_argument("--n-mh", type=int, default=2)
    ap.add_argument("--tokens", type=float, default=1.5e6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "lda_samplers.json")
    args = ap.parse_args()

    import topiclink

    n_docs = int(args.tokens) // 150
    words, offsets = make_corpus(n_docs, 150, 10_000, 50, args.seed)
    rows = []
    for K in [int(k) for k in args.topics.split(",")]:
        traj = {k: run(words, offsets, 10_000, K, k, args.budget, args.seed, args.n_mh)
                for k in ("gibbs", "mh")}
        final = {k: v[-1][1] for k, v in traj.items()}
        row = {"n_topics": K,
               "sweeps": {k: len(v) for k, v in traj.items()},
               "sweeps_per_cpu_second": {k: len(v) / v[-1][0] for k, v in traj.items()},
               "final_log_joint": final,
               "cpu_seconds_mh_to_reach_gibbs_final": time_to_reach(traj["mh"],
                                                                    final["gibbs"]),
               "cpu_seconds_gibbs_to_reach_mh_final": time_to_reach(traj["gibbs"],
                                                                    final["mh"]),
               "trajectory": {k: [[round(t, 3), round(ll, 5)] for t, ll in v]
                              for k, v in traj.items()}}
        rows.append(row)
        print(f"K={K}: gibbs {row['sweeps']['gibbs']} sweeps -> {final['gibbs']:.4f};  "
              f"mh {row['sweeps']['mh']} sweeps -> {final['mh']:.4f};  mh reaches gibbs' "
              f"final at {row['cpu_seconds_mh_to_reach_gibbs_final']} s, gibbs reaches "
              f"mh's at {row['cpu_seconds_gibbs_to_reach_mh_final']} s", flush=True)
    result = {"benchmark": "lda_samplers",
              "corpus": {"n_docs": n_docs, "n_tokens": int(words.size), "n_words": 10_000,
                         "generator": "LDA, 50 Zipf topics (lda_throughput.make_corpus)"},
              "protocol": f"same start per K; {args.budget} CPU s of sweeps per kernel; "
                          f"mh: {args.n_mh} Metropolis-Hastings steps per token",
              "topiclink_version": topiclink.__version__,
              "machine": {"python": platform.python_version(),
                          "processor": platform.machine()},
              "results": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
