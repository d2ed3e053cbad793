"""LMVS on Cora (folds 0-1 of 5): blockmodel_change and predictive rank after every sweep.

Usage: PYTHONPATH=src python benchmarks/lmv_stop_rule.py OUT.json (the runs behind
benchmarks/results/lmv_stop_rule_cora.json and the ``stopping`` docstring of
VisibilityTopicModel; the rules are compared offline on the recorded trajectories)."""
import json
import sys
import time

from topiclink.callbacks import LambdaCallback
from topiclink.data.splits import kfold_documents
from topiclink.datasets import load_dataset
from topiclink.families.lmv.estimator import VisibilityTopicModel
from topiclink.metrics import link_rank

ds = load_dataset("cora-rlda", directed=True)
folds = kfold_documents(ds.corpus, ds.links, n_folds=5, random_state=0)
out = []
for fold in (0, 1):
    f = folds[fold]
    for K in (5, 9, 13):
        for seed in (0, 1):
            ranks = []
            def rank(model, it, info, f=f, ranks=ranks):
                s = model.link_scores(f.test_corpus, direction="out")
                ranks.append(float(link_rank(s, f.test_out)))
            cb = LambdaCallback(rank)
            cb.needs_estimates = True
            m = VisibilityTopicModel(K, inference="stochastic", topic_word_prior=0.5,
                                     batch_size=200, step_a1=1.0, step_a2=5.0, step_v=0.501,
                                     tol=0.0, max_iter=40, random_state=seed, n_jobs=1,
                                     callbacks=[cb])
            t0 = time.process_time()
            m.fit(f.train_corpus, links=f.train_links)
            rec = dict(fold=fold, K=K, seed=seed, change=m.trace_["blockmodel_change"].tolist(),
                       rank=ranks, cpu=time.process_time() - t0)
            out.append(rec)
            print(json.dumps(rec), flush=True)
json.dump(out, open(sys.argv[1], "w"))
