"""benchmarks/lda_infer.py: the held-out score against a direct computation, and a quick
run (without tomotopy the topics come from topiclink's LDA and tomotopy's rows are left
out)."""

from __future__ import annotations

import json

import numpy as np
import scipy.sparse as sp

from tests.benchmark_module import benchmark_module
from topiclink.data.corpus import as_corpus


def test_heldout_ll_is_the_mean_log_mixture():
    with benchmark_module("lda_infer") as bench:
        rng = np.random.default_rng(0)
        phi = rng.dirichlet(np.ones(6), size=3)               # (K, V)
        theta = rng.dirichlet(np.ones(3), size=2)
        counts = sp.csr_matrix(np.array([[2, 0, 1, 0, 0, 3], [0, 1, 0, 4, 1, 0]]))
        got = bench.heldout_ll(as_corpus(counts), theta, np.ascontiguousarray(phi.T))
    dense = counts.toarray()
    want = sum(dense[d, w] * np.log(theta[d] @ phi[:, w])
               for d in range(2) for w in range(6)) / dense.sum()
    np.testing.assert_allclose(got, want)


def test_quick_run_writes_rates_scores_and_ratios(tmp_path):
    out = tmp_path / "infer.json"
    with benchmark_module("lda_infer") as bench:
        result = bench.main(["--quick", "--threads", "1,2", "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    (run,) = result["results"]
    rows = {(r["tool"], r["threads"]): r for r in run["rows"]}
    assert {("gibbs", 1), ("mh", 1), ("gibbs", 2), ("mh", 2)} <= set(rows)
    for row in rows.values():
        assert row["docs_per_second"] > 0 and -20 < row["heldout_ll"] < 0
    # the same chains on any thread count: the same scores
    assert rows[("mh", 1)]["heldout_ll"] == rows[("mh", 2)]["heldout_ll"]
    assert abs(rows[("mh", 1)]["heldout_ll"] - rows[("gibbs", 1)]["heldout_ll"]) < 0.1
    assert "mh_over_gibbs_1_threads" in run["ratios"]
