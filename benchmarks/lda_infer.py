"""Topic proportions of new documents with the topics fixed: topiclink's dense Gibbs,
sparse Gibbs and Metropolis-Hastings inference against tomotopy's ``infer``, in one run.

The same topics for everyone: a tomotopy LDAModel is trained on the training documents
(``--train-iter`` sweeps, one worker) and its topic-word distributions are handed to
topiclink.  The held-out documents are split by document completion (each token observed
with probability 1/2, ``topiclink.topics.fixed_topics.completion_split``); every tool infers
theta from the observed halves with ``--iter`` sweeps (and MH also with four times
as many, "mh-4x") on 1 and 2 threads, and the other
halves are scored by our code, ``sum log sum_k theta_dk phi_kw`` per held-out token (so a
faster sampler that mixes worse shows as a lower log-likelihood).  Documents per second are
the best of ``--repeats`` runs of the inference alone (tomotopy: ``infer`` on prepared
documents, ``together=True``: the documents in one sampler, which is ~100x faster at
K = 1000 than its default ``together=False``, timed as "tomotopy-separate" on
:data:`SEPARATE_DOCS` documents; topiclink: ``infer_doc_topics`` on a prepared corpus,
every document its own chain).

    TOPICLINK_DATA=../shared/datasets python benchmarks/lda_infer.py --dataset 20newsgroups
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import logging
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

logger = logging.getLogger("lda_infer")
HERE = Path(__file__).resolve().parent


def _sibling(name: str) -> Any:
    """A sibling benchmark loaded from its file: this folder never goes on ``sys.path``."""
    spec = importlib.util.spec_from_file_location(f"_topiclink_bench_{name}",
                                                  HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


record = _sibling("lda_record")        # the data, the document split, the token lists
#: tomotopy's default ``infer(together=False)`` (each document on its own) costs ~0.3 s a
#: document at K = 1000: timed on this many documents (its held-out score on them only)
SEPARATE_DOCS = 40


def train_topics(X: sp.csr_matrix, K: int, alpha: float, beta: float, n_iter: int,
                 seed: int) -> tuple[np.ndarray, Any]:
    """phi (K, V) of a tomotopy LDAModel trained on ``X`` (zero for unused words), and the
    model; without tomotopy, topiclink's LDA gives phi and the model is None."""
    try:
        import tomotopy as tp
    except ImportError:
        from topiclink import LDA

        lda = LDA(n_topics=K, doc_topic_prior=alpha, topic_word_prior=beta,
                  max_iter=n_iter, random_state=seed).fit(X)
        return lda.components_, None
    model = tp.LDAModel(k=K, alpha=alpha, eta=beta, seed=seed)
    for d in range(X.shape[0]):
        model.add_doc([f"w{w}" for w in record.doc_tokens(X, d)])
    model.train(n_iter, workers=1)
    used = np.array([int(w[1:]) for w in model.used_vocabs], dtype=np.int64)
    phi = np.zeros((K, X.shape[1]))
    for k in range(K):
        phi[k, used] = model.get_topic_word_dist(k)
    return phi, model


def heldout_ll(held: Any, theta: np.ndarray, phi_wk: np.ndarray) -> float:
    """Log-likelihood per held-out token, ``log sum_k theta_dk phi_kw``."""
    from topiclink.topics.kernels import lda as kl

    tok = held.tokens()
    return kl.token_log_likelihood(tok.words, tok.offsets, theta, phi_wk) / max(
        tok.words.size, 1)


def time_topiclink(observed: Any, phi_wk: np.ndarray, alpha: float, sampler: str,
                   threads: int, n_iter: int, repeats: int, seed: int
                   ) -> tuple[float, np.ndarray]:
    from topiclink.topics.fixed_topics import infer_doc_topics

    prior = np.full(phi_wk.shape[1], alpha)
    from topiclink.data.corpus import as_corpus

    infer_doc_topics(as_corpus(observed.counts[:4]), phi_wk, prior,
                     np.random.default_rng(seed), n_iter=2, sampler=sampler)   # compiled
    best, theta = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        theta = infer_doc_topics(observed, phi_wk, prior, np.random.default_rng(seed),
                                 n_iter=n_iter, sampler=sampler, n_threads=threads)
        best = min(best, time.perf_counter() - t0)
    return best, theta


def time_tomotopy(model: Any, observed: Any, threads: int, n_iter: int, repeats: int,
                  together: bool, limit: int | None = None) -> tuple[float, np.ndarray, int]:
    """Best seconds of ``model.infer`` on the first ``limit`` (default all) observed
    documents, their theta, and how many documents that was."""
    counts = sp.csr_matrix(observed.counts)
    vocab = set(model.used_vocabs)
    n = counts.shape[0] if limit is None else min(limit, counts.shape[0])
    docs = [model.make_doc([t for t in (f"w{w}" for w in record.doc_tokens(counts, d))
                            if t in vocab]) for d in range(n)]
    best, theta = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        dists, _ = model.infer(docs, iterations=n_iter, workers=threads, together=together)
        best = min(best, time.perf_counter() - t0)
        theta = np.array([np.asarray(d, dtype=np.float64) for d in dists])
    return best, theta, n


def run(X: sp.csr_matrix, K: int, alpha: float, beta: float, train_iter: int, n_iter: int,
        threads: list[int], repeats: int, heldout: float, seed: int) -> dict[str, Any]:
    from topiclink.data.corpus import as_corpus
    from topiclink.topics.fixed_topics import completion_split

    train, test = record.split_documents(X, heldout, seed)
    t0 = time.perf_counter()
    phi, model = train_topics(train, K, alpha, beta, train_iter, seed)
    train_seconds = time.perf_counter() - t0
    phi_wk = np.ascontiguousarray(phi.T)
    known = (phi.sum(axis=0) > 0).astype(test.dtype)        # the training set's words
    test = sp.csr_matrix(test.multiply(known[None, :]))
    test.eliminate_zeros()
    observed, held = completion_split(as_corpus(test), np.random.default_rng(seed + 1))
    seen = np.flatnonzero(observed.doc_lengths > 0)        # tomotopy refuses empty documents
    observed, held = as_corpus(observed.counts[seen]), as_corpus(held.counts[seen])
    rows = []
    for n_threads in threads:
        for tool in ("gibbs", "sparse", "mh", "mh-4x", "tomotopy", "tomotopy-separate"):
            n_docs, scored = observed.n_docs, held
            if tool.startswith("tomotopy"):
                if model is None:
                    continue
                separate = tool == "tomotopy-separate"
                seconds, theta, n_docs = time_tomotopy(
                    model, observed, n_threads, n_iter, 1 if separate else repeats,
                    together=not separate, limit=SEPARATE_DOCS if separate else None)
                scored = as_corpus(held.counts[:n_docs])
            else:           # "mh-4x": MH at four times the sweeps (it mixes less a sweep)
                sweeps = 4 * n_iter if tool == "mh-4x" else n_iter
                seconds, theta = time_topiclink(observed, phi_wk, alpha, tool[:2] if
                                                tool == "mh-4x" else tool, n_threads,
                                                sweeps, repeats, seed)
            rows.append({"tool": tool, "threads": n_threads, "documents": n_docs,
                         "seconds": seconds, "docs_per_second": n_docs / seconds,
                         "heldout_ll": heldout_ll(scored, theta, phi_wk)})
            logger.info("K=%d %s %d thread(s): %.1f docs/s (%d documents), held-out LL "
                        "%.4f", K, tool, n_threads, rows[-1]["docs_per_second"], n_docs,
                        rows[-1]["heldout_ll"])
    by = {(r["tool"], r["threads"]): r for r in rows}
    ratios = {f"{ours}_over_{peer}_{t}_threads": by[(ours, t)]["docs_per_second"]
              / by[(peer, t)]["docs_per_second"]
              for t in threads for ours in ("sparse", "mh")
              for peer in ("gibbs", "tomotopy", "tomotopy-separate") if (peer, t) in by}
    return {"K": K, "n_test_docs": observed.n_docs,
            "observed_tokens": int(observed.counts.sum()),
            "heldout_tokens": int(held.counts.sum()), "train_seconds": train_seconds,
            "topics_from": "tomotopy" if model is not None else "topiclink LDA",
            "rows": rows, "ratios": ratios}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="20newsgroups")
    ap.add_argument("--topics", default="1000")
    ap.add_argument("--train-iter", type=int, default=30)
    ap.add_argument("--iter", type=int, default=50, help="inference sweeps of every tool")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--alpha", type=float, default=0.1)
    ap.add_argument("--beta", type=float, default=0.01)
    ap.add_argument("--heldout", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="a small synthetic corpus, K=20")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "lda_infer.json")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.quick:
        X = record.synthetic_counts(20_000, 100, 500, 10, args.seed)
        args.topics, args.train_iter, args.iter, args.repeats = "20", 5, 10, 1
    else:
        X = record.dataset_counts(args.dataset)
    threads = [int(t) for t in args.threads.split(",")]
    results = [run(X, int(K), args.alpha, args.beta, args.train_iter, args.iter, threads,
                   args.repeats, args.heldout, args.seed) for K in args.topics.split(",")]
    import topiclink

    out = {"benchmark": "lda_infer", "corpus": "synthetic" if args.quick else args.dataset,
           "protocol": (f"topics of a tomotopy LDAModel ({args.train_iter} sweeps); "
                        f"{args.heldout:.0%} of documents held out, half of each one's "
                        f"tokens observed; {args.iter} inference sweeps per tool; best of "
                        f"{args.repeats}; held-out LL per token by our code"),
           "quick": bool(args.quick), "results": results,
           "topiclink_version": topiclink.__version__,
           "machine": {"processor": platform.processor(), "cpu_count": os.cpu_count(),
                       "platform": platform.platform(), "python": platform.python_version(),
                       "date": datetime.datetime.now(datetime.UTC).isoformat()}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=1))
    tmp.replace(args.out)
    return out


if __name__ == "__main__":
    main()
