"""LDA time to a held-out log-likelihood: topiclink's samplers vs tomotopy and WarpLDA.

Every tool trains on the same training documents (90 % of a corpus) on ``--threads``
threads (default one; on more, topiclink's Gibbs and warp samplers run
``scheme=Shards("partition", threads)`` and its "mh" sampler stays sequential), with the
same symmetric priors (alpha per topic, beta 0.01) and K topics.  At checkpoints (a
doubling schedule of iteration counts) the tool's topic-word counts are saved, outside the
timed training; afterwards phi = (n_kw + beta) / (n_k + V beta) over the full vocabulary is
scored by ONE function, :func:`heldout_log_likelihood` (document completion on the 10 %
held-out documents, :func:`topiclink.topics.completion.completion_log_likelihood`: the same
split and the same inference chains for every tool).

- topiclink (``sampler`` gibbs, mh, warp) and tomotopy: one run up to the last checkpoint;
  the seconds are the training seconds so far (topiclink: a callback reads the clock every
  iteration and copies the counts at checkpoints, the copy not timed; tomotopy:
  ``train(n)`` in steps, the counts read between them).  topiclink's Numba kernels are
  compiled on a small corpus before the clock starts.
- WarpLDA (C++, no per-iteration hook): one run per checkpoint, ``--niter n``, its model
  dump read back; the seconds are the sum of its printed per-iteration times.

Every tool runs in its own subprocess; its peak memory is that process's high-water
resident size (``VmHWM``; WarpLDA's: its binary's, read while it runs).  Each checkpoint's
counts go to a file as soon as they are taken, so no process holds more than its own.

Target per K: 95 % of the way from the worst first-checkpoint value to the best final
value, lowered to the worst tool's best value when some tool does not reach it; seconds to
the target are interpolated linearly between checkpoints.

    python benchmarks/lda_record.py                  # synthetic 1 M tokens, K = 50, 1000
    python benchmarks/lda_record.py --quick          # tiny corpus, K = 20, < 60 s
    python benchmarks/lda_record.py --dataset 20newsgroups --topics 50
    python benchmarks/lda_record.py --counts X.npz --threads 16 --score-jobs 16
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import logging
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

logger = logging.getLogger("lda_record")

HERE = Path(__file__).resolve().parent
WARPLDA_SRC = Path("/work/shared/peers/warplda/src-c97265d/src")
TOOLS = ("gibbs", "mh", "warp", "tomotopy", "warplda")
SOURCES = ("AdjList.cpp", "Bigraph.cpp", "NumaArray.cpp", "Vocab.cpp", "clock.cpp")


# ----------------------------------------------------------------------------- data
def _sibling(name: str) -> Any:
    """A sibling benchmark loaded from its file: this folder never goes on ``sys.path``
    (a benchmark named like a package would shadow it for the rest of the process)."""
    spec = importlib.util.spec_from_file_location(f"_topiclink_bench_{name}",
                                                  HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def synthetic_counts(n_tokens: int, doc_length: int, n_words: int, true_topics: int,
                     seed: int) -> sp.csr_matrix:
    """Document-term counts (D, V) of ``make_corpus`` from benchmarks/lda_throughput.py."""
    make_corpus = _sibling("lda_throughput").make_corpus
    n_docs = max(2, n_tokens // doc_length)
    words, offsets = make_corpus(n_docs, doc_length, n_words, true_topics, seed)
    docs = np.repeat(np.arange(n_docs), np.diff(offsets))
    X = sp.csr_matrix((np.ones(words.size, np.int32), (docs, words)),
                      shape=(n_docs, n_words))
    X.sum_duplicates()
    return X


def dataset_counts(name: str) -> sp.csr_matrix:
    """The training documents' counts of a registered data set (``TOPICLINK_DATA``)."""
    from topiclink.datasets import load_dataset

    return sp.csr_matrix(load_dataset(name).corpus.counts)


def split_documents(X: sp.csr_matrix, fraction: float, seed: int
                    ) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """(train, held-out) rows: ``fraction`` of the non-empty documents held out at random."""
    X = X[np.flatnonzero(np.asarray(X.sum(axis=1)).ravel() > 0)]
    order = np.random.default_rng(seed).permutation(X.shape[0])
    n_test = max(1, int(round(fraction * X.shape[0])))
    return X[np.sort(order[n_test:])], X[np.sort(order[:n_test])]


def doc_tokens(X: sp.csr_matrix, d: int) -> np.ndarray:
    """Word ids of document ``d``, each repeated by its count."""
    lo, hi = X.indptr[d], X.indptr[d + 1]
    return np.repeat(X.indices[lo:hi], X.data[lo:hi])


# ----------------------------------------------------------------------------- scoring
def topics_from_counts(nkw: np.ndarray, beta: float) -> np.ndarray:
    """phi (K, V) = (n_kw + beta) / (n_k + V beta) from topic-word counts (K, V)."""
    n = np.asarray(nkw, dtype=np.float64)
    return (n + beta) / (n.sum(axis=1, keepdims=True) + n.shape[1] * beta)


def heldout_log_likelihood(X_test: Any, phi: np.ndarray, alpha: float, seed: int,
                           n_iter: int = 50) -> float:
    """Held-out log-likelihood per held-out token by document completion (half of every
    test document's tokens observed, theta inferred from them with ``phi`` fixed, the
    other half scored); the split and the chains depend on ``seed`` only."""
    from topiclink.topics.completion import completion_log_likelihood

    K = phi.shape[0]
    ll, n = completion_log_likelihood(X_test, phi, np.full(K, float(alpha)), fraction=0.5,
                                      random_state=seed, n_iter=n_iter)
    return ll / n


def seconds_to_target(seconds: list[float], lls: list[float], target: float) -> float | None:
    """First time the (seconds, LL) curve reaches ``target``, interpolated linearly between
    checkpoints (from 0 s when the first checkpoint already reaches it); None if never."""
    prev_t, prev_ll = 0.0, None
    for t, ll in zip(seconds, lls, strict=True):
        if ll >= target:
            if prev_ll is None or prev_ll >= target:
                return float(t) if prev_ll is None else float(prev_t)
            return float(prev_t + (t - prev_t) * (target - prev_ll) / (ll - prev_ll))
        prev_t, prev_ll = t, ll
    return None


def target_level(curves: dict[str, list[float]], fraction: float = 0.95) -> float:
    """``fraction`` of the way from the worst first value to the best last value, lowered to
    the lowest of the tools' best values so that every tool reaches it."""
    worst_start = min(c[0] for c in curves.values())
    best_final = max(c[-1] for c in curves.values())
    level = worst_start + fraction * (best_final - worst_start)
    return float(min(level, min(max(c) for c in curves.values())))


# ----------------------------------------------------------------------------- WarpLDA
def build_warplda(dest: Path, src: Path = WARPLDA_SRC) -> Path:
    """Compile ``warplda`` and ``format`` into ``dest`` (the g++ lines of the peer's
    sources; its build.sh needs a CMakeLists the copy lacks).  Returns ``dest/warplda``."""
    dest = dest.resolve()        # g++ runs in the peer's source folder
    dest.mkdir(parents=True, exist_ok=True)
    flags = ["g++", "-O3", "-std=c++14", "-fopenmp", "-include", "stdexcept"]
    libs = ["-lgflags", "-lnuma", "-lpthread"]
    for name, main in (("warplda", ["main.cpp", "lda.cpp", "warplda.cpp"]),
                       ("format", ["format.cpp"])):
        if not (dest / name).exists():
            cmd = [*flags, "-o", str(dest / name), *main, *SOURCES, *libs]
            logger.info("building %s: %s", name, " ".join(cmd))
            subprocess.run(cmd, cwd=src, check=True)
    return dest / "warplda"


def warplda_prepare(X: sp.csr_matrix, workdir: Path, fmt: Path) -> np.ndarray:
    """Write the training documents in WarpLDA's text form and run ``format``; returns
    WarpLDA's word index -> our word id (from the vocabulary it wrote)."""
    with open(workdir / "train.txt", "w") as f:
        for d in range(X.shape[0]):
            f.write(f"{d} {d} " + " ".join(f"w{w}" for w in doc_tokens(X, d)) + "\n")
    subprocess.run([str(fmt), "-input", str(workdir / "train.txt"), "-prefix",
                    str(workdir / "train")], check=True, stdout=subprocess.DEVNULL)
    vocab = (workdir / "train.vocab").read_text().split()
    return np.array([int(w[1:]) for w in vocab], dtype=np.int64)


def read_warplda_model(path: Path, word_ids: np.ndarray, K: int, V: int) -> np.ndarray:
    """Topic-word counts (K, V) from WarpLDA's dump (a header ``V K alpha beta``, then per
    word ``n\\tk:c k:c ...``)."""
    nkw = np.zeros((K, V), np.int64)
    with open(path) as f:
        f.readline()
        for v, line in enumerate(f):
            for kc in line.split("\t", 1)[1].split():
                k, c = kc.split(":")
                nkw[int(k), word_ids[v]] += int(c)
    return nkw


# ----------------------------------------------------------------------------- memory
def peak_kib_of(pid: int) -> int:
    """The high-water resident size (``VmHWM``, KiB) of a live process; 0 when gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmHWM:\s+(\d+)", status, re.MULTILINE)
    return int(found.group(1)) if found else 0


def watch_peak_kib(proc: subprocess.Popen, every: float = 0.01) -> int:
    """Wait for ``proc``, reading its ``VmHWM`` every ``every`` seconds; the last value
    read (the high-water mark only grows, so at most the last interval is missed)."""
    peak = 0
    while proc.poll() is None:
        peak = max(peak, peak_kib_of(proc.pid))
        time.sleep(every)
    return peak


# ----------------------------------------------------------------------------- one tool
def run_topiclink(X: sp.csr_matrix, K: int, sampler: str, checkpoints: list[int],
                  alpha: float, beta: float, seed: int, keep: Any,
                  threads: int = 1) -> dict[str, Any]:
    """Fit ``LDA(sampler=...)`` up to the last checkpoint; seconds at each, the counts
    handed to ``keep`` (written to disk, so that no tool's peak memory holds them).
    ``sampler`` may carry the Metropolis-Hastings steps per token: ``"warp:2"`` (set as
    the sampler's default in this child process only; the estimator has no such knob),
    and the partition scheme's shards when they differ from ``threads``: ``"warp@32"``.
    With ``threads`` > 1, ``"gibbs"`` and ``"warp"`` run the multi-core scheme,
    ``scheme=Shards("partition", threads)`` on ``threads`` threads; ``"mh"`` is
    sequential (one thread, said in the record's ``threads_used``)."""
    from topiclink import LDA
    from topiclink.execution import Shards
    from topiclink.topics import lda as lda_algorithm

    shards = threads
    if "@" in sampler:
        sampler, count = sampler.split("@")
        shards = int(count)
    if ":" in sampler:
        sampler, steps = sampler.split(":")
        lda_algorithm.MH_STEPS[sampler] = int(steps)
    last = checkpoints[-1]
    parallel = ({"scheme": Shards("partition", shards), "n_jobs": threads}
                if (threads > 1 or shards != threads) and sampler in ("gibbs", "warp")
                else {})
    try:  # compile the kernels before the clock starts
        LDA(n_topics=K, max_iter=2, sampler=sampler, doc_topic_prior=alpha,
            topic_word_prior=beta, random_state=seed,
            **parallel).fit(X[: min(200, X.shape[0])])
    except ValueError as exc:
        return {"skipped": f"LDA(sampler={sampler!r}): {exc}"}

    class Record:
        reads_state = True

        def __init__(self) -> None:
            self.t0 = 0.0
            self.paused = 0.0
            self.seconds: list[float] = []

        def on_train_begin(self, model: Any, n_iter: int) -> None:
            self.t0 = time.perf_counter()

        def on_iteration(self, model: Any, iteration: int, info: dict[str, float]) -> None:
            now = time.perf_counter()
            if iteration + 1 in checkpoints:
                self.seconds.append(now - self.t0 - self.paused)
                keep(model.state_.nwk, words_first=True)    # saved without a copy
                self.paused += time.perf_counter() - now

    rec = Record()
    LDA(n_topics=K, max_iter=last, evaluate_every=last, sampler=sampler,
        doc_topic_prior=alpha, topic_word_prior=beta, random_state=seed,
        callbacks=[rec], **parallel).fit(X)
    return {"iterations": checkpoints, "seconds": rec.seconds,
            "threads_used": threads if parallel else 1,
            "shards": parallel["scheme"].n_shards if parallel else 1}


def run_tomotopy(X: sp.csr_matrix, K: int, checkpoints: list[int], alpha: float,
                 beta: float, seed: int, keep: Any, threads: int = 1) -> dict[str, Any]:
    """tomotopy's LDAModel, ``train`` in steps between checkpoints, ``threads``
    workers."""
    try:
        import tomotopy as tp
    except ImportError:
        return {"skipped": "tomotopy is not installed (pip install tomotopy)"}
    V = X.shape[1]
    model = tp.LDAModel(k=K, alpha=alpha, eta=beta, seed=seed)
    for d in range(X.shape[0]):
        model.add_doc([f"w{w}" for w in doc_tokens(X, d)])
    model.train(0, workers=threads)
    seconds, done, total = [], 0, 0.0
    for n in checkpoints:
        t0 = time.perf_counter()
        model.train(n - done, workers=threads)
        total += time.perf_counter() - t0
        done = n
        # n_kw back from p_kw = (n_kw + eta) / (n_k + V_used eta)
        used = np.array([int(w[1:]) for w in model.used_vocabs], dtype=np.int64)
        nk = np.asarray(model.get_count_by_topics(), dtype=np.float64)
        nkw = np.zeros((K, V), np.int32)
        for k in range(K):
            p = np.asarray(model.get_topic_word_dist(k), dtype=np.float64)
            nkw[k, used] = np.rint(np.maximum(p * (nk[k] + used.size * beta) - beta, 0.0))
        seconds.append(total)
        keep(nkw)
        del nkw
    return {"iterations": checkpoints, "seconds": seconds,
            "version": tp.__version__, "threads_used": threads}


def run_warplda(X: sp.csr_matrix, K: int, checkpoints: list[int], alpha: float,
                beta: float, binary: Path, keep: Any, threads: int = 1) -> dict[str, Any]:
    """WarpLDA once per checkpoint (``--niter n``), ``threads`` OpenMP threads; seconds = the sum of
    its per-iteration times."""
    fmt = binary.parent / "format"
    workdir = Path(tempfile.mkdtemp(prefix="warplda_"))
    try:
        word_ids = warplda_prepare(X, workdir, fmt)
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
        seconds, peak_kib = [], 0
        for n in checkpoints:
            model = workdir / f"k{K}_n{n}.model"
            log = workdir / "warplda.log"
            with log.open("w") as sink:
                proc = subprocess.Popen(
                    [str(binary), "--prefix", str(workdir / "train"), "--k", str(K),
                     "--niter", str(n), "--alpha", str(alpha * K), "--beta", str(beta),
                     "--model", str(model), "--dumpz=false", "--writeinfo=false"],
                    env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
                peak_kib = max(peak_kib, watch_peak_kib(proc))
            out = log.read_text()
            if proc.returncode:
                raise RuntimeError(f"warplda failed ({proc.returncode}): {out[-2000:]}")
            times = [float(t) for t in re.findall(r"Iteration \d+, ([0-9.eE+-]+) s", out)]
            seconds.append(float(sum(times)))
            keep(read_warplda_model(model, word_ids, K, X.shape[1]))
            model.unlink()
        return {"iterations": checkpoints, "seconds": seconds, "peak_rss_kib": peak_kib,
                "threads_used": threads}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def child_main(spec: dict[str, Any]) -> None:
    """Run one tool on the training counts in ``spec["data"]``; write seconds, and the
    counts of checkpoint i to ``<out>_<i>.npy`` as soon as they are taken."""
    X = sp.load_npz(spec["data"]).tocsr()
    K, tool, cps = int(spec["K"]), spec["tool"], [int(c) for c in spec["checkpoints"]]
    written: list[str] = []

    def keep(counts: np.ndarray, words_first: bool = False) -> None:
        """Counts (K, V), or (V, K) with ``words_first``, to the checkpoint's file."""
        path = f"{spec['out']}_{len(written)}{'_vk' if words_first else ''}.npy"
        np.save(path, counts)
        written.append(path)

    threads = int(spec.get("threads", 1))
    if tool == "tomotopy":
        out = run_tomotopy(X, K, cps, spec["alpha"], spec["beta"], spec["seed"], keep,
                           threads)
    elif tool == "warplda":
        out = run_warplda(X, K, cps, spec["alpha"], spec["beta"], Path(spec["warplda"]),
                          keep, threads)
    else:
        out = run_topiclink(X, K, tool, cps, spec["alpha"], spec["beta"], spec["seed"],
                            keep, threads)
    out["counts_files"] = written
    out.setdefault("peak_rss_kib", peak_kib_of(os.getpid()))
    Path(spec["out"] + ".json").write_text(json.dumps(out))


def run_child(spec: dict[str, Any]) -> tuple[dict[str, Any], list[str], float]:
    """Run :func:`child_main` in a subprocess; (record, the checkpoints' counts files,
    wall seconds).  The record's ``peak_rss_kib`` is the tool's own: the child's
    ``VmHWM``, or for WarpLDA its binary's.  (Not ``os.wait4``'s ``ru_maxrss``: a child
    forked from this process starts from this process's resident size, so it reported
    the scorer's memory, not the tool's.)"""
    t0 = time.perf_counter()
    threads = str(spec.get("threads", 1))
    env = {**os.environ, "NUMBA_NUM_THREADS": threads, "OMP_NUM_THREADS": threads,
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, __file__, "--child", json.dumps(spec)], env=env)
    _, status, _ = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(f"{spec['tool']} K={spec['K']} failed "
                           f"({os.waitstatus_to_exitcode(status)})")
    record = json.loads(Path(spec["out"] + ".json").read_text())
    return record, record.pop("counts_files", []), wall


# ----------------------------------------------------------------------------- driver
def cpu_model() -> str:
    """The processor's model name (``/proc/cpuinfo``), else :func:`platform.processor`."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def score_checkpoint(path: str, test_path: str, alpha: float, beta: float, seed: int,
                     score_iter: int) -> float:
    """Held-out LL of one checkpoint's counts file (deleted once read): the unit of work
    of the scoring processes."""
    counts = np.load(path)
    counts = counts.T if path.endswith("_vk.npy") else counts
    test = sp.load_npz(test_path).tocsr()
    ll = heldout_log_likelihood(test, topics_from_counts(counts, beta), alpha, seed,
                                score_iter)
    Path(path).unlink()
    return ll


def score_in_subprocess(path: str, test_path: str, alpha: float, beta: float, seed: int,
                        score_iter: int) -> float:
    """:func:`score_checkpoint` in a child process of this script (``--score``), one
    thread: the scoring processes of ``--score-jobs``."""
    spec = {"path": path, "test": test_path, "alpha": alpha, "beta": beta, "seed": seed,
            "score_iter": score_iter, "out": path + ".ll.json"}
    env = {**os.environ, "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    subprocess.run([sys.executable, __file__, "--score", json.dumps(spec)], env=env,
                   check=True)
    out = Path(spec["out"])
    ll = float(json.loads(out.read_text()))
    out.unlink()
    return ll


def run_benchmark(X: sp.csr_matrix, topics: list[int], tools: list[str],
                  checkpoints: list[int], *, alpha: float, beta: float, seed: int,
                  heldout: float, score_iter: int, warplda: Path | None,
                  scratch: Path, threads: int = 1, score_jobs: int = 1) -> dict[str, Any]:
    """All tools at every K: curves (seconds, held-out LL per token), targets, ratios.
    Each K's checkpoints are scored after all its tools trained, in ``score_jobs``
    processes (one: in this process, one file at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    train, test = split_documents(X, heldout, seed)
    data = scratch / "train.npz"
    sp.save_npz(data, train)
    test_path = scratch / "test.npz"
    sp.save_npz(test_path, test)
    n_tokens = int(train.sum())
    results: dict[str, Any] = {}
    for K in topics:
        rows: dict[str, Any] = {}
        pending: dict[str, list[str]] = {}
        for tool in tools:
            if tool == "warplda" and warplda is None:
                logger.info("K=%d warplda: skipped (not built)", K)
                rows[tool] = {"skipped": "WarpLDA not built"}
                continue
            spec = {"data": str(data), "K": K, "tool": tool, "checkpoints": checkpoints,
                    "alpha": alpha, "beta": beta, "seed": seed,
                    "warplda": str(warplda) if warplda else "", "threads": threads,
                    "out": str(scratch / f"{tool}_k{K}")}
            record, files, wall = run_child(spec)
            if "skipped" in record:
                logger.info("K=%d %s: skipped: %s", K, tool, record["skipped"])
                rows[tool] = record
                continue
            record["tokens_per_second"] = (n_tokens * checkpoints[-1]
                                           / max(record["seconds"][-1], 1e-12))
            record["process_wall_seconds"] = wall
            peak = record.pop("peak_rss_kib", 0)     # 0: a run too short to be read
            record["peak_rss_mib"] = peak / 1024 if peak else None
            rows[tool] = record
            pending[tool] = files
            logger.info("K=%d %-8s trained: %s", K, tool, "  ".join(
                f"{n}it {s:.3f}s" for n, s in zip(checkpoints, record["seconds"],
                                                  strict=True)))
        t0 = time.perf_counter()
        jobs = [(tool, path) for tool, files in pending.items() for path in files]
        args = (str(test_path), alpha, beta, seed, score_iter)
        if score_jobs > 1 and len(jobs) > 1:
            with ThreadPoolExecutor(min(score_jobs, len(jobs))) as pool:
                lls = list(pool.map(lambda p, a=args: score_in_subprocess(p, *a),
                                    [p for _, p in jobs]))
        else:    # K x V per checkpoint (1.2 GB each at K = 5000): one at a time
            lls = [score_checkpoint(p, *args) for _, p in jobs]
        scoring = time.perf_counter() - t0
        for tool in pending:
            rows[tool]["heldout_ll"] = [ll for (t, _), ll in zip(jobs, lls, strict=True)
                                        if t == tool]
            rows[tool]["scoring_seconds"] = scoring / max(len(pending), 1)
            logger.info("K=%d %-8s  %s", K, tool, "  ".join(
                f"{n}it {s:.3f}s {ll:.4f}" for n, s, ll in
                zip(checkpoints, rows[tool]["seconds"], rows[tool]["heldout_ll"],
                    strict=True)))
        curves = {t: r["heldout_ll"] for t, r in rows.items() if "heldout_ll" in r}
        summary: dict[str, Any] = {}
        if curves:
            target = target_level(curves)
            reach = {t: seconds_to_target(rows[t]["seconds"], c, target)
                     for t, c in curves.items()}
            ref = reach.get("warplda")
            summary = {"target_heldout_ll": target, "seconds_to_target": reach,
                       "ratio_to_warplda": {t: (s / ref if s is not None and ref else None)
                                            for t, s in reach.items()}}
        results[str(K)] = {"tools": rows, **summary}
    return {"n_train_docs": train.shape[0], "n_test_docs": test.shape[0],
            "n_train_tokens": n_tokens, "n_test_tokens": int(test.sum()),
            "n_words": X.shape[1], "results": results}


def plot(result: dict[str, Any], path: Path) -> None:
    """Held-out LL per token against training seconds, one panel per K."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    Ks = list(result["results"])
    fig, axes = plt.subplots(1, len(Ks), figsize=(5.5 * len(Ks), 4), squeeze=False)
    for ax, K in zip(axes[0], Ks, strict=True):
        entry = result["results"][K]
        for tool, r in entry["tools"].items():
            if "heldout_ll" in r:
                ax.plot(r["seconds"], r["heldout_ll"], marker="o", label=tool)
        if "target_heldout_ll" in entry:
            ax.axhline(entry["target_heldout_ll"], color="grey", ls="--", lw=0.8,
                       label="target")
        ax.set_xscale("log")
        ax.set_title(f"K = {K}")
        ax.set_xlabel(f"training seconds ({result.get('threads', 1)} thread(s))")
        ax.set_ylabel("held-out log-likelihood per token")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=float, default=1e6)
    ap.add_argument("--doc-length", type=int, default=100)
    ap.add_argument("--words", type=int, default=10_000)
    ap.add_argument("--true-topics", type=int, default=100,
                    help="topics of the synthetic corpus's generating model")
    ap.add_argument("--dataset", default=None, help="e.g. 20newsgroups instead of synthetic")
    ap.add_argument("--counts", type=Path, default=None,
                    help="a document-term matrix (scipy.sparse.save_npz) instead of synthetic")
    ap.add_argument("--corpus-name", default=None,
                    help="the name the record gives the --counts corpus")
    ap.add_argument("--topics", default="50,1000")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--checkpoints", default="5,10,20,40,80",
                    help="iteration counts at which the topics are scored")
    ap.add_argument("--alpha", type=float, default=0.1, help="alpha per topic")
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--heldout", type=float, default=0.1, help="fraction of documents")
    ap.add_argument("--score-iter", type=int, default=50,
                    help="Gibbs sweeps of the completion inference")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of every tool (topiclink: gibbs and warp on "
                         "Shards('partition', threads); mh stays sequential)")
    ap.add_argument("--score-jobs", type=int, default=1,
                    help="processes scoring the checkpoints (after each K's training)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warplda", type=Path, default=None,
                    help="a built warplda binary (format next to it); else built here")
    ap.add_argument("--quick", action="store_true", help="tiny corpus, K=20, few iterations")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "lda_record.json")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--score", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child is not None:
        child_main(json.loads(args.child))
        return None
    if args.score is not None:
        job = json.loads(args.score)
        ll = score_checkpoint(job["path"], job["test"], job["alpha"], job["beta"],
                              job["seed"], job["score_iter"])
        Path(job["out"]).write_text(json.dumps(ll))
        return None
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.threads < 1:
        raise SystemExit("--threads must be >= 1")
    if args.quick:
        args.tokens, args.words, args.true_topics = 2e4, 500, 10
        args.topics, args.checkpoints, args.score_iter = "20", "2,4,8", 20
    topics = [int(k) for k in args.topics.split(",")]
    tools = [t for t in args.tools.split(",") if t]
    checkpoints = sorted({int(c) for c in args.checkpoints.split(",")})
    if args.dataset and args.counts:
        raise SystemExit("give --dataset or --counts, not both")
    X = (dataset_counts(args.dataset) if args.dataset else
         sp.load_npz(args.counts).tocsr() if args.counts else
         synthetic_counts(int(args.tokens), args.doc_length, args.words, args.true_topics,
                          args.seed))
    with tempfile.TemporaryDirectory(prefix="lda_record_") as tmp:
        scratch = Path(tmp)
        warplda = args.warplda
        if warplda is None and "warplda" in tools:
            try:
                warplda = build_warplda(scratch / "warplda")
            except (OSError, subprocess.CalledProcessError) as exc:
                logger.info("warplda: skipped (build failed: %s)", exc)
        t0 = time.perf_counter()
        result = run_benchmark(X, topics, tools, checkpoints, alpha=args.alpha,
                               beta=args.beta, seed=args.seed, heldout=args.heldout,
                               score_iter=args.score_iter, warplda=warplda,
                               scratch=scratch, threads=args.threads,
                               score_jobs=args.score_jobs)
    import topiclink

    result = {
        "benchmark": "lda_record",
        "corpus": args.dataset or args.corpus_name or (
            str(args.counts) if args.counts else
            f"synthetic make_corpus({int(args.tokens)} tokens, doc length "
            f"{args.doc_length}, {args.true_topics} generating topics)"),
        "threads": args.threads,
        "protocol": (f"{args.threads} thread(s) (topiclink's gibbs and warp on "
                     f"Shards('partition', {args.threads}) when above 1, mh on 1); "
                     f"alpha {args.alpha} per topic, beta {args.beta}; "
                     f"{args.heldout:.0%} of documents held out; document completion "
                     f"(half observed, {args.score_iter} inference sweeps) on phi = "
                     "(n_kw + beta) / (n_k + V beta) from every tool's counts"),
        "checkpoints": checkpoints, "quick": bool(args.quick),
        **result,
        "total_seconds": time.perf_counter() - t0,
        "topiclink_version": topiclink.__version__,
        "machine": {"processor": cpu_model(), "cpu_count": os.cpu_count(),
                    "platform": platform.platform(), "python": platform.python_version(),
                    "date": datetime.datetime.now(datetime.UTC).isoformat()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    plot(result, args.out.with_suffix(".png"))
    for K, entry in result["results"].items():
        for tool, r in entry["tools"].items():
            if "heldout_ll" not in r:
                print(f"K={K:>5} {tool:>9}: skipped ({r['skipped']})")
                continue
            s = entry["seconds_to_target"].get(tool)
            ratio = entry["ratio_to_warplda"].get(tool)
            peak = r.get("peak_rss_mib")
            memory = "-" if not peak else f"{peak:.0f}"
            print(f"K={K:>5} {tool:>9}: final LL {r['heldout_ll'][-1]:.4f}  "
                  f"{r['tokens_per_second'] / 1e6:.2f} M tok/s  "
                  f"to target {'-' if s is None else f'{s:.2f} s'}  "
                  f"x WarpLDA {'-' if ratio is None else f'{ratio:.2f}'}  "
                  f"RSS {memory} MiB")
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}")
    return result


if __name__ == "__main__":
    main()
