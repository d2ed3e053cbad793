"""hep-th KDD protocol, K = 20, eta = 0.5, LMVS(t): the cost of the pieces (a subset of the
full run: the shared LDA start, minibatches of the first sweep, the chunked test ranking).

Usage: PYTHONPATH=src python benchmarks/lmv_hepth_probe.py OUT.json N_MINIBATCHES
(writes benchmarks/results/lmv_hepth_kdd_probe.json when OUT is that path)."""
import json
import resource
import sys
import time

import numpy as np

from topiclink.datasets.hepth import hepth_kdd_split
from topiclink.families.lmv.algorithm import LMVData, start_lda
from topiclink.families.lmv.estimator import VisibilityTopicModel
from topiclink.metrics.chunked import rank_in_chunks

n_batches = int(sys.argv[2])
out = {"K": 20, "eta": 0.5, "model": "LMVS(t)", "batch_size": 2000}
w0 = time.perf_counter()
c0 = time.process_time()
split = hepth_kdd_split()
out["split"] = dict(n_train=split.n_train, train_links=split.train_links.n_links,
                    n_test=split.n_test, test_citations=int(split.test_citations.nnz),
                    vocabulary=split.train_corpus.n_words, tokens=int(split.train_corpus.n_tokens))
out["load_wall_s"] = time.perf_counter() - w0
print(out, flush=True)
c = time.process_time()
_, S = start_lda(split.train_corpus.counts, 20, 1 / 20, 0.5, np.random.default_rng(0),
                 n_iter=100, restarts=1)
out["start_lda_one_chain_100_sweeps_cpu_s"] = time.process_time() - c
print(out, flush=True)
m = VisibilityTopicModel(20, inference="stochastic", topic_word_prior=0.5, doc_topic_prior=0.05,
                         batch_size=2000, tol=0.1, max_iter=1, init_topics=S, n_jobs=1,
                         random_state=0)
# the estimator's own path, one minibatch at a time
alg = m._algorithm()
alg.init_topics = S
t, pairs = m._times(split.train_times, split.n_train,
                    np.asarray(split.train_links.pairs, np.int64), "keep")
data = LMVData.build(split.train_corpus.counts, pairs, t)
state = alg.init(data, np.random.default_rng(0))
batches = alg._sweep(state, data)
out["minibatches_per_sweep"] = len(batches)
times = []
for b in batches[:n_batches]:
    c = time.process_time()
    info = alg.minibatch_step(state, data, b, alg.step_size(state, data))
    state.updates += 1
    times.append(time.process_time() - c)
    out.setdefault("pairs_per_minibatch", []).append(info["pairs"])
    out["minibatch_cpu_s"] = times
    print(out, flush=True)
m.state_ = state
m._publish(state, alg, split.train_corpus, data)
c = time.process_time()
rank = rank_in_chunks(lambda rows: m.link_scores(split.test_corpus.subset(rows), direction="out"),
                      split.n_test, split.n_train, split.test_citations)
out["rank_cpu_s"] = time.process_time() - c
out["predictive_rank_after_minibatches"] = rank
out["random_rank"] = (split.n_train + 1) / 2
out["improvement_after_minibatches"] = 1 - rank / out["random_rank"]
out["extrapolated_sweep_cpu_s"] = float(np.mean(times)) * len(batches)
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["total_cpu_s"] = time.process_time() - c0
out["total_wall_s"] = time.perf_counter() - w0
print(out, flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=1)
