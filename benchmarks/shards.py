"""Shards on disk: time and peak memory of writing, reading and training from them.

One synthetic UCI bag-of-words file (``docword.synthetic.txt[.gz]``: D documents of
lognormal lengths, W words with Zipf frequencies, written streaming in blocks of
documents), then each case in its own subprocess, so that the peak resident set size
(``ru_maxrss`` of the child itself) is that case's alone:

- ``imports``: only ``import topiclink, numpy, pandas, dask`` (the baseline: read the
  other peaks "above imports"); ``imports_distributed`` adds ``distributed`` (the
  baseline of the fits);
- ``generate``: the generator (its peak shows it stays small);
- ``write_shards``: :func:`topiclink.data.shards.write_shards` of the file into 8 shards
  (two streaming passes);
- ``read_uci_bow``: :func:`topiclink.data.io.uci_bow.read_uci_bow` and ``.tokens()``
  (what one does without shards);
- ``fit_shards`` / ``fit_corpus``: ``LDA(n_topics=20, scheme=Shards("adlda", 8),
  max_iter=3)`` on the ShardSet, and on the corpus read inside the child, with a
  ``distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` started
  in the child (the workers are other processes: the child's peak is the driver's, the
  scheduler included; the workers' peaks are asked from them).  The two fits must give
  the same ``components_`` and log-likelihood trace, bit for bit.

    python benchmarks/shards.py                         # ~10 M tokens, D = 50k, W = 20k
    python benchmarks/shards.py --tokens 2e6 --gzip --workdir /tmp/shards-bench
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# a benchmark named like a package (benchmarks/distributed.py was) shadows it: keep this folder
# off the path (in this process, in the children and in the Dask workers it spawns)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]

CASES = ("imports", "imports_distributed", "generate", "write_shards", "read_uci_bow",
         "fit_shards", "fit_corpus")
MARK = "SHARDS-BENCH-RESULT "


def maxrss_mb() -> float:
    """Peak resident set size of this process so far, MB (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    """Current resident set size, MB (/proc/self/status; NaN elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def docword_path(args: argparse.Namespace) -> Path:
    return args.workdir / ("docword.synthetic.txt" + (".gz" if args.gzip else ""))


# ---------------------------------------------------------------------- the cases
def generate(args: argparse.Namespace) -> dict:
    """A UCI docword file written streaming: the body goes to a temporary file block of
    documents by block (NNZ is known only at the end), then the header and the body are
    copied into the final file."""
    import gzip

    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(args.seed)
    D, W = args.docs, args.words
    mean = args.tokens / D
    sigma = 0.5                                  # lognormal lengths with mean ``mean``
    ranks = np.arange(1, W + 1, dtype=np.float64)
    cdf = np.cumsum(ranks ** -args.zipf)
    cdf /= cdf[-1]
    word_of_rank = rng.permutation(W)            # frequent words spread over the ids
    t0 = time.perf_counter()
    out = docword_path(args)
    body = args.workdir / "body.tmp"
    nnz = n_tokens = 0
    with open(body, "w", encoding="ascii") as f:
        for d0 in range(0, D, args.gen_block):
            d1 = min(D, d0 + args.gen_block)
            lengths = np.maximum(1, np.rint(rng.lognormal(np.log(mean) - sigma ** 2 / 2,
                                                          sigma, d1 - d0))).astype(np.int64)
            docs = np.repeat(np.arange(d0, d1, dtype=np.int64), lengths)
            words = word_of_rank[np.searchsorted(cdf, rng.random(docs.size), side="right")
                                 .clip(max=W - 1)]
            key, count = np.unique(docs * W + words, return_counts=True)
            pd.DataFrame({"d": key // W + 1, "w": key % W + 1, "c": count}).to_csv(
                f, sep=" ", header=False, index=False, lineterminator="\n")
            nnz += key.size
            n_tokens += int(lengths.sum())
    opener = gzip.open if args.gzip else open
    with opener(out, "wb") as dst, open(body, "rb") as src:
        dst.write(f"{D}\n{W}\n{nnz}\n".encode())
        shutil.copyfileobj(src, dst, 1 << 20)
    body.unlink()
    return {"seconds": time.perf_counter() - t0, "path": str(out), "n_docs": D,
            "n_words": W, "nnz": nnz, "n_tokens": n_tokens, "file_bytes": out.stat().st_size}


def write(args: argparse.Namespace) -> dict:
    from topiclink.data.shards import write_shards

    shard_dir = args.workdir / "shards"
    shutil.rmtree(shard_dir, ignore_errors=True)
    t0 = time.perf_counter()
    s = write_shards(docword_path(args), shard_dir, args.shards)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "n_shards": s.n_shards, "n_tokens": s.n_tokens,
            "bytes_on_disk": sum(p.stat().st_size for p in shard_dir.iterdir())}


def read(args: argparse.Namespace) -> dict:
    from topiclink.data.io.uci_bow import read_uci_bow

    t0 = time.perf_counter()
    corpus = read_uci_bow(docword_path(args))
    t_read = time.perf_counter() - t0
    maxrss_read = maxrss_mb()
    tok = corpus.tokens()
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "read_seconds": t_read, "n_tokens": int(tok.words.size),
            "peak_rss_mb_after_read": maxrss_read, "rss_mb_holding_corpus_and_tokens": rss_mb()}


def fit(args: argparse.Namespace, on: str) -> dict:
    import distributed
    import numpy as np

    from topiclink import LDA
    from topiclink.data.io.uci_bow import read_uci_bow
    from topiclink.data.shards import ShardSet
    from topiclink.execution import Shards

    row: dict = {}
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                  processes=True, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        row["cluster_start_seconds"] = time.perf_counter() - t0
        row["peak_rss_mb_after_cluster_start"] = maxrss_mb()
        t0 = time.perf_counter()
        data = (ShardSet.open(args.workdir / "shards") if on == "shards"
                else read_uci_bow(docword_path(args)))
        row["load_seconds"] = time.perf_counter() - t0
        row["peak_rss_mb_after_load"] = maxrss_mb()
        model = LDA(n_topics=args.topics, scheme=Shards("adlda", args.shards),
                    executor=client, max_iter=args.iters, random_state=args.seed)
        t0 = time.perf_counter()
        model.fit(data)
        row["fit_seconds"] = time.perf_counter() - t0
        row["worker_peak_rss_mb"] = sorted(client.run(maxrss_mb).values())
    np.save(args.workdir / f"components_{on}.npy", model.components_)
    row["log_likelihood"] = [float(x) for x in model.trace_["log_likelihood"]]
    row["n_iter"] = int(model.n_iter_)
    row["n_tokens"] = int(model.n_tokens_)
    return row


def child(args: argparse.Namespace) -> None:
    case = args.child
    start = time.perf_counter()
    if case.startswith("imports"):
        import dask  # noqa: F401
        import numpy  # noqa: F401
        import pandas  # noqa: F401

        import topiclink  # noqa: F401
        if case == "imports_distributed":
            import distributed  # noqa: F401
        row: dict = {}
    elif case == "generate":
        row = generate(args)
    elif case == "write_shards":
        row = write(args)
    elif case == "read_uci_bow":
        row = read(args)
    else:
        row = fit(args, case.removeprefix("fit_"))
    row["process_seconds"] = time.perf_counter() - start   # from after interpreter start
    row["peak_rss_mb"] = maxrss_mb()
    print(MARK + json.dumps(row), flush=True)


# ---------------------------------------------------------------------- the driver
def run_child(case: str, argv: list[str]) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", case,
                           *argv], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARK)]
    if proc.returncode != 0 or not lines:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"case {case} failed (exit {proc.returncode})")
    row = json.loads(lines[-1][len(MARK):])
    row["subprocess_wall_seconds"] = wall
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=float, default=1e7, help="expected tokens")
    ap.add_argument("--docs", type=int, default=50_000)
    ap.add_argument("--words", type=int, default=20_000)
    ap.add_argument("--zipf", type=float, default=1.07, help="Zipf exponent of words")
    ap.add_argument("--gzip", action="store_true", help="write docword...txt.gz")
    ap.add_argument("--gen-block", type=int, default=2000, help="documents per block")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=None,
                    help="scratch folder (default: a new temporary folder, removed)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch files")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "shards.json")
    ap.add_argument("--child", choices=CASES, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return

    own = args.workdir is None
    workdir = Path(tempfile.mkdtemp(prefix="topiclink-shards-")) if own else args.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [a for a in sys.argv[1:] if a != "--keep"]
    argv = [*argv, "--workdir", str(workdir)] if own else argv
    load_at_start = os.getloadavg()[0]      # the machine may be shared: read with care
    t_start = time.perf_counter()
    rows = {}
    try:
        for case in CASES:
            rows[case] = run_child(case, argv)
            print(f"{case:19s} done in {rows[case]['subprocess_wall_seconds']:6.1f} s, "
                  f"peak {rows[case]['peak_rss_mb']:7.1f} MB", flush=True)
        parent_peak = maxrss_mb()
        import numpy as np

        a = np.load(workdir / "components_shards.npy")
        b = np.load(workdir / "components_corpus.npy")
        same_components = bool(np.array_equal(a, b))
        same_ll = rows["fit_shards"]["log_likelihood"] == rows["fit_corpus"]["log_likelihood"]
    finally:
        if own and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    for case, row in rows.items():
        base = rows["imports_distributed" if case.startswith("fit") else "imports"]
        row["peak_rss_mb_above_imports"] = row["peak_rss_mb"] - base["peak_rss_mb"]

    import dask
    import distributed

    import topiclink

    gen = rows["generate"]
    result = {
        "benchmark": "shards",
        "corpus": {"n_docs": gen["n_docs"], "n_words": gen["n_words"],
                   "n_tokens": gen["n_tokens"], "nnz": gen["nnz"], "gzip": args.gzip,
                   "file_bytes": gen["file_bytes"],
                   "generator": (f"lognormal(sigma=0.5) document lengths of mean "
                                 f"{args.tokens / args.docs:g} (at least 1), words Zipf "
                                 f"(exponent {args.zipf}) over permuted ids, seed "
                                 f"{args.seed}")},
        "protocol": (f"each case in its own subprocess (python {Path(__file__).name} "
                     f"--child CASE); peak_rss_mb = the child's own "
                     f"getrusage(RUSAGE_SELF).ru_maxrss (the parent stays small and "
                     f"imports only the standard library while the children run: peak "
                     f"{parent_peak:.1f} MB, as forked children inherit it); 'imports' is "
                     f"the baseline child that only imports topiclink, numpy, pandas and "
                     f"dask, 'imports_distributed' adds distributed (the baseline of the "
                     f"fit_* cases for peak_rss_mb_above_imports); write_shards: {args.shards} "
                     f"shards, default read_rows; read_uci_bow: read the whole file into a "
                     f"Corpus, then .tokens(); fit_*: LDA(n_topics={args.topics}, "
                     f"scheme=Shards('adlda', {args.shards}), executor=client, "
                     f"max_iter={args.iters}, "
                     f"random_state={args.seed}) on a LocalCluster(n_workers={args.workers}, "
                     f"threads_per_worker=1, processes=True) started in the child (its "
                     f"scheduler runs in the child: the driver's peak includes it); "
                     f"fit_corpus reads the file inside the child; worker peaks from "
                     f"client.run(ru_maxrss). Timings are single runs and only indicative: "
                     f"2-core machine, shared with a test suite running at the same time"),
        "identical_fits": {"components_equal": same_components,
                           "log_likelihood_trace_equal": same_ll},
        "topiclink_version": topiclink.__version__,
        "dask_version": dask.__version__,
        "distributed_version": distributed.__version__,
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpu_count": os.cpu_count(),
                    "load_average_1min_at_start": load_at_start,
                    "load_average_1min_at_end": os.getloadavg()[0]},
        "total_seconds": time.perf_counter() - t_start,
        "results": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"\n{gen['n_tokens']:,} tokens, {gen['nnz']:,} entries, D = {gen['n_docs']:,}, "
          f"W = {gen['n_words']:,}; file {gen['file_bytes'] / 1e6:.0f} MB")
    print(f"{'case':19s} {'seconds':>8s} {'peak MB':>8s} {'above imports':>14s}")
    for case, row in rows.items():
        secs = row.get("fit_seconds", row.get("seconds", row["process_seconds"]))
        print(f"{case:19s} {secs:8.1f} {row['peak_rss_mb']:8.1f} "
              f"{row['peak_rss_mb_above_imports']:14.1f}")
    print("(fit_*: seconds of fit() alone; cluster start and loading apart in the JSON)")
    print(f"fits identical: components_ {same_components}, log-likelihood {same_ll}")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
