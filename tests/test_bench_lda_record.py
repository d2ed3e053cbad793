"""benchmarks/lda_record.py: its scoring function on known topics, its helpers, quick mode."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("lda_record", ROOT / "benchmarks" / "lda_record.py")
lda_record = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lda_record)


def _disjoint_case() -> tuple[sp.csr_matrix, np.ndarray, float]:
    """Two topics on disjoint words; every document uses one topic's words only, so the
    completion inference puts all observed tokens on that topic with probability 1."""
    rng = np.random.default_rng(3)
    V, half = 12, 6
    phi = np.zeros((2, V))
    phi[0, :half] = rng.dirichlet(np.ones(half))
    phi[1, half:] = rng.dirichlet(np.ones(half))
    rows = []
    for d in range(8):
        k = d % 2
        words = rng.choice(V, size=30, p=phi[k])
        rows.append(np.bincount(words, minlength=V))
    return sp.csr_matrix(np.array(rows)), phi, 0.3


def test_heldout_log_likelihood_matches_brute_force() -> None:
    from topiclink.data.corpus import as_corpus
    from topiclink.random import as_generator, spawn
    from topiclink.topics.fixed_topics import completion_split

    X, phi, alpha = _disjoint_case()
    seed = 11
    got = lda_record.heldout_log_likelihood(X, phi, alpha, seed, n_iter=10)
    # the same split, then theta by hand: all observed tokens of document d on its topic
    split_rng, _ = spawn(as_generator(seed), 2)
    observed, held = completion_split(as_corpus(X), split_rng, 0.5)
    obs = observed.counts.toarray()
    hel = held.counts.toarray()
    total, n = 0.0, 0
    for d in range(X.shape[0]):
        k = d % 2
        c = np.zeros(2)
        c[k] = obs[d].sum()
        theta = (c + alpha) / (c.sum() + 2 * alpha)
        for w in range(X.shape[1]):
            for _ in range(hel[d, w]):
                total += np.log(sum(theta[j] * phi[j, w] for j in range(2)))
                n += 1
    assert n > 0
    assert got == pytest.approx(total / n, rel=1e-10)


def test_topics_from_counts_and_target() -> None:
    nkw = np.array([[3, 0, 1], [0, 0, 0]])
    phi = lda_record.topics_from_counts(nkw, 0.5)
    np.testing.assert_allclose(phi.sum(axis=1), 1.0)
    np.testing.assert_allclose(phi[0], [3.5 / 5.5, 0.5 / 5.5, 1.5 / 5.5])
    np.testing.assert_allclose(phi[1], [1 / 3] * 3)
    curves = {"a": [-9.0, -8.0, -7.0], "b": [-10.0, -7.5, -7.2]}
    target = lda_record.target_level(curves)
    assert target == pytest.approx(-7.2)        # b's best is below the 95 % level
    assert lda_record.seconds_to_target([1.0, 2.0, 4.0], curves["a"], -7.5) == \
        pytest.approx(3.0)      # halfway from (2 s, -8) to (4 s, -7)
    assert lda_record.seconds_to_target([1.0, 2.0], [-3.0, -2.0], -4.0) == 1.0
    assert lda_record.seconds_to_target([1.0, 2.0], [-3.0, -2.0], -1.0) is None


def test_split_documents_holds_out_a_tenth() -> None:
    X = sp.csr_matrix(np.random.default_rng(0).integers(0, 3, size=(50, 7)))
    train, test = lda_record.split_documents(X, 0.1, 0)
    n = int((np.asarray(X.sum(axis=1)).ravel() > 0).sum())
    assert test.shape[0] == round(0.1 * n) and train.shape[0] + test.shape[0] == n
    assert int(train.sum() + test.sum()) == int(X.sum())


def test_warplda_model_reader(tmp_path: Path) -> None:
    (tmp_path / "m.model").write_text("3 2 0.05 0.01\n2\t0:4 1:1 \n0\t\n1\t1:7 \n")
    word_ids = np.array([2, 0, 1])            # WarpLDA's word index -> our word id
    nkw = lda_record.read_warplda_model(tmp_path / "m.model", word_ids, 2, 3)
    np.testing.assert_array_equal(nkw, [[0, 0, 4], [0, 7, 1]])


@pytest.mark.slow
def test_quick_benchmark_runs(tmp_path: Path) -> None:
    binary = Path("/tmp/warplda-build/warplda")
    tools = "gibbs,mh,warp,tomotopy" + (",warplda" if binary.exists() else "")
    argv = ["--quick", "--tools", tools, "--out", str(tmp_path / "r.json")]
    if binary.exists():
        argv += ["--warplda", str(binary)]
    lda_record.main(argv)
    result = json.loads((tmp_path / "r.json").read_text())
    assert (tmp_path / "r.png").exists()
    entry = result["results"]["20"]
    ran = {t: r for t, r in entry["tools"].items() if "heldout_ll" in r}
    assert "gibbs" in ran
    for r in ran.values():
        assert len(r["heldout_ll"]) == 3 and all(np.isfinite(r["heldout_ll"]))
        assert r["seconds"] == sorted(r["seconds"])
    assert set(entry["seconds_to_target"]) == set(ran)


def test_quick_benchmark_on_two_threads_from_a_counts_file(tmp_path: Path) -> None:
    """--counts, --threads 2 (gibbs and warp on Shards("partition", 2)), a tool naming
    its shards (warp@3) and the checkpoints scored by two processes."""
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(0.3, size=(120, 80)))
    sp.save_npz(tmp_path / "X.npz", X)
    lda_record.main(["--counts", str(tmp_path / "X.npz"), "--topics", "5",
                     "--checkpoints", "2,4", "--score-iter", "5", "--threads", "2",
                     "--score-jobs", "2", "--tools", "gibbs,warp,warp@3",
                     "--out", str(tmp_path / "r.json")])
    result = json.loads((tmp_path / "r.json").read_text())
    tools = result["results"]["5"]["tools"]
    assert result["corpus"] == str(tmp_path / "X.npz")
    assert [tools[t]["shards"] for t in ("gibbs", "warp", "warp@3")] == [2, 2, 3]
    assert all(len(tools[t]["heldout_ll"]) == 2 for t in tools)
    assert all(np.isfinite(tools[t]["heldout_ll"]).all() for t in tools)


def test_scaling_summary_of_thread_records(tmp_path: Path) -> None:
    """benchmarks/lda_record_scaling.py: per tool and thread count the run's seconds to
    target and ratio, and the tokens-per-second speed-up over the tool's one-thread run;
    records of several K are refused."""
    spec = importlib.util.spec_from_file_location(
        "lda_record_scaling", ROOT / "benchmarks" / "lda_record_scaling.py")
    scaling = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scaling)

    def record(threads, warp_tps, warplda_tps, warp_s, warplda_s):
        tools = {"warp": {"tokens_per_second": warp_tps, "heldout_ll": [-8.0, -7.5]},
                 "warplda": {"tokens_per_second": warplda_tps, "heldout_ll": [-8.1, -7.6]}}
        if threads == 1:
            tools["gibbs"] = {"skipped": "not run"}
        return {"threads": threads, "corpus": "c", "checkpoints": [5, 10], "protocol": "p",
                "machine": {"processor": "cpu", "cpu_count": 16},
                "results": {"100": {"tools": tools, "target_heldout_ll": -7.6,
                                    "seconds_to_target": {"warp": warp_s,
                                                          "warplda": warplda_s},
                                    "ratio_to_warplda": {"warp": warp_s / warplda_s,
                                                         "warplda": 1.0}}}}

    paths = []
    for i, rec in enumerate([record(4, 12.0, 30.0, 2.0, 1.0), record(1, 4.0, 10.0, 6.0, 3.0)]):
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(json.dumps(rec))
    out = tmp_path / "s.json"
    summary = scaling.main([*map(str, paths), "--out", str(out)])
    assert summary["threads"] == [1, 4] and summary["K"] == 100
    assert summary["tools"]["warp"]["4"]["tokens_speedup_over_1_thread"] == pytest.approx(3.0)
    assert summary["tools"]["warp"]["4"]["ratio_to_warplda"] == pytest.approx(2.0)
    assert "gibbs" not in summary["tools"]
    assert out.with_suffix(".png").stat().st_size > 0
    other = record(2, 1.0, 1.0, 1.0, 1.0)
    other["results"] = {"50": other["results"]["100"]}
    paths[1].write_text(json.dumps(other))
    with pytest.raises(SystemExit, match="one K"):
        scaling.main([*map(str, paths), "--out", str(out)])
