"""The machine's own thread-scaling ceiling, to read LDA thread scaling against.

Before calling a sampler's speed-up on t threads poor, measure what t threads of this
machine give to work that shares nothing: each thread runs the same Numba loop (releasing
the GIL) on data of its own, and the speed-up at t threads is t x (one thread's time) /
(t threads' time) (weak scaling: the same work per thread).  Three loops:

- ``compute``: a xorshift generator and a float sum (registers only);
- ``cache``: random increments into a private 1 MiB array (each core's own cache);
- ``memory``: random increments into a private 64 MiB array (touched before timing).

A virtual machine whose vCPUs share physical cores, or whose memory bandwidth is shared,
shows it here.  JSON in ``benchmarks/results/thread_ceiling.json``.

    python benchmarks/thread_ceiling.py                       # 1, 2 threads
    python benchmarks/thread_ceiling.py --threads 1,2,4,8,16 --out results/x.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def compute_loop(n: int, seed: int) -> float:
    """``n`` xorshift steps and a float sum (no memory traffic)."""
    x = np.uint64(seed) | np.uint64(1)
    s = 0.0
    for _ in range(n):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        s += float(x & np.uint64(0xFFFF)) * 1e-5
    return s


@njit(cache=True, nogil=True)
def increment_loop(a: np.ndarray, n: int, seed: int) -> int:
    """``n`` increments of random entries of ``a``."""
    x = np.uint64(seed) | np.uint64(1)
    m = np.uint64(a.size)
    for _ in range(n):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        a[x % m] += 1
    return int(a[0])


def timed(threads: int, run, args: list) -> float:
    """Seconds for ``threads`` threads each running ``run(*args[i])`` once."""
    with ThreadPoolExecutor(threads) as pool:
        t0 = time.perf_counter()
        list(pool.map(lambda a: run(*a), args[:threads]))
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=str, default="1,2")
    ap.add_argument("--repeats", type=int, default=3, help="timings per case (median)")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "thread_ceiling.json")
    args = ap.parse_args()
    counts = [int(t) for t in args.threads.split(",")]
    top = max(counts)
    loops = {
        "compute": (compute_loop, [(40_000_000, i + 1) for i in range(top)]),
        "cache": (increment_loop,
                  [(np.ones(1 << 18, np.int32), 20_000_000, i + 1) for i in range(top)]),
        "memory": (increment_loop,
                   [(np.ones(1 << 24, np.int32), 5_000_000, i + 1) for i in range(top)]),
    }
    rows = []
    for name, (run, inputs) in loops.items():
        run(*inputs[0][:-2], 1000, 1)       # compile (a short run)
        base = None
        for t in counts:
            seconds = float(np.median([timed(t, run, inputs) for _ in range(args.repeats)]))
            base = seconds if base is None and t == counts[0] else base
            speedup = t * base / (counts[0] * seconds)
            rows.append({"loop": name, "threads": t, "seconds": seconds,
                         "speedup": speedup})
            print(f"{name:8s} threads={t:3d}  {seconds:7.3f} s  speed-up {speedup:5.2f}",
                  flush=True)
    result = {"benchmark": "thread_ceiling",
              "protocol": f"weak scaling, median of {args.repeats}; speed-up = t x the "
                          f"first count's time / t threads' time (per first-count thread)",
              "machine": {"python": platform.python_version(), "processor": platform.machine(),
                          "cpu_count": os.cpu_count()},
              "results": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
