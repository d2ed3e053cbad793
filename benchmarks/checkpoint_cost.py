"""What a checkpoint costs: time to write one, its size, and a fit's slowdown when it
checkpoints every iteration, against the same fit without checkpoints (same process).

Fits (each timed with and without ``checkpoint_every=1``, alternated ``--repeats`` times):

- LDA, K = 50, ``--tokens`` tokens (``make_lda_data``; default 1M);
- Gibbs-gRTM, K = 20, 2,000 documents with their links (``make_rtm_data``);
- LMVS (stochastic LMV), K = 10, 3,000 documents (``make_lmv_data``).

Reported per fit: seconds per iteration without / with checkpoints (median over repeats),
the ratio, the file size, and the time of one write (``save(full=True)``, compressed npz,
temporary file + rename) measured on its own.  The default ``checkpoint_every="5min"``
writes once per five minutes, so the per-iteration ratio is the worst case.

    python benchmarks/checkpoint_cost.py                  # ~2 min on 2 cores
    python benchmarks/checkpoint_cost.py --tokens 2e5 --repeats 1 --out /tmp/x.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

import topiclink
from topiclink.data import Links
from topiclink.datasets import make_lda_data, make_lmv_data, make_rtm_data


def _cases(tokens: float) -> dict:
    n_docs = max(100, int(tokens // 200))
    corpus, _ = make_lda_data(n_docs=n_docs, n_words=5000, n_topics=50, doc_length=200,
                              random_state=0)
    (rcorpus, links), _ = make_rtm_data(n_docs=2000, n_words=2000, n_topics=20,
                                        doc_length=100, random_state=0)
    (lcorpus, llinks), _ = make_lmv_data(n_docs=3000, random_state=0)
    directed = Links.from_pairs(llinks.pairs, llinks.n_docs, directed=True) \
        if not llinks.directed else llinks
    return {
        "LDA K=50": (lambda: topiclink.LDA(n_topics=50, max_iter=10, random_state=0),
                     (corpus,), {}),
        "Gibbs-gRTM K=20": (lambda: topiclink.RelationalTopicModel(
            n_topics=20, max_iter=10, random_state=0), (rcorpus,), {"links": links}),
        "LMVS K=10": (lambda: topiclink.VisibilityTopicModel(
            n_topics=10, inference="stochastic", max_iter=4, tol=0.0, random_state=0),
            (lcorpus,), {"links": directed}),
    }


def _per_iteration(make, args, kwargs, checkpoint: Path | None) -> float:
    if checkpoint is not None and checkpoint.exists():
        checkpoint.unlink()
    extra = {} if checkpoint is None else {"checkpoint": checkpoint, "checkpoint_every": 1}
    t0 = time.perf_counter()
    model = make().fit(*args, **kwargs, **extra)
    return (time.perf_counter() - t0) / model.n_iter_


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=float, default=1e6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "checkpoint_cost.json")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (make, args, kwargs) in _cases(a.tokens).items():
            make().set_params(max_iter=1).fit(*args, **kwargs)          # compile
            plain, with_ck = [], []
            path = Path(tmp) / "ck.npz"
            for _ in range(a.repeats):
                plain.append(_per_iteration(make, args, kwargs, None))
                with_ck.append(_per_iteration(make, args, kwargs, path))
            model = topiclink.load(path)
            t0 = time.perf_counter()
            model.save(Path(tmp) / "again.npz", full=True)
            write = time.perf_counter() - t0
            row = {"fit": name, "seconds_per_iteration": float(np.median(plain)),
                   "seconds_per_iteration_checkpoint_every_1": float(np.median(with_ck)),
                   "ratio": float(np.median(with_ck) / np.median(plain)),
                   "write_seconds": write, "file_mb": path.stat().st_size / 2**20}
            rows.append(row)
            print(json.dumps(row), flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"cpu": platform.processor() or platform.machine(),
                                 "cores": os.cpu_count(), "tokens": a.tokens,
                                 "repeats": a.repeats, "rows": rows}, indent=1))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
