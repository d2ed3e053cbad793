"""benchmarks/kg_fb15k237_vs_pykeen.py: the budget clock, BPBFM's sample window and
scorer, the JSON / figure writers (always), and a ``--quick`` run where PyKEEN and the
FB15k-237 archive are available (skipped otherwise: CI has no PyKEEN)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from tests.benchmark_module import benchmark_module

from topiclink.data.tensor import RelationalTensor
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
from topiclink.families.bpbfm.estimator_em import (
    BilinearPoissonFactorModelEM,
    DegreeCorrectedPoissonFactorModel,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    with benchmark_module("kg_fb15k237_vs_pykeen") as module:
        yield module


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_checkpoints_are_log_spaced(bench):
    assert bench.checkpoint_times(600, 4) == [75.0, 150.0, 300.0, 600.0]
    assert bench.checkpoint_times(10, 1) == [10.0]
    with pytest.raises(ValueError):
        bench.checkpoint_times(0, 3)


def test_budget_clock_excludes_evaluations(bench):
    wall, cpu = FakeTime(), FakeTime()
    clock = bench.BudgetClock(8.0, [2.0, 4.0], timer=wall, cpu_timer=cpu)
    assert clock.checkpoints == [2.0, 4.0, 8.0]
    with pytest.raises(RuntimeError):
        clock.tick()
    wall.now = cpu.now = 100.0
    clock.start()
    wall.now = cpu.now = 101.0
    assert clock.tick() == (False, False)
    wall.now = cpu.now = 104.5            # past 2 and 4: one evaluation
    assert clock.tick() == (True, False)
    with clock.paused():
        wall.now, cpu.now = 110.5, 106.5   # a 6 s evaluation (2 s of CPU)
    assert clock.eval_seconds == 6.0 and clock.eval_cpu_seconds == 2.0
    assert clock.train_seconds == pytest.approx(4.5)
    assert clock.train_cpu_seconds == pytest.approx(4.5)
    assert clock.tick() == (False, False)
    wall.now = 114.1                       # 8.1 s of training: the budget
    assert clock.tick() == (True, True)
    frozen = clock.train_seconds
    wall.now = 200.0
    assert clock.train_seconds == frozen == pytest.approx(8.1)
    assert clock.tick() == (False, True)


def _state(U, G, eta=None):
    return SimpleNamespace(U=U, G=G, eta=np.zeros((0, 0)) if eta is None else eta)


def test_chain_samples_thin_and_window(bench):
    rng = np.random.default_rng(0)
    chain = bench.ChainSamples(max_samples=4)
    for sweep in range(1, 21):
        chain.offer(sweep, _state(np.full((3, 2), sweep), rng.random((2, 2, 2))))
        assert len(chain.items) <= 4
    kept = [it[0] for it in chain.items]
    assert all(s % chain.thin == 0 for s in kept) and chain.thin == 8
    assert kept == [8, 16]
    assert [it[0] for it in chain.window(20)] == [16]
    assert [it[0] for it in chain.window(40)] == [16]   # none past half: the latest
    # copies, not views of the state
    U = np.ones((3, 2))
    chain.offer(24, _state(U, np.ones((2, 2, 2))))
    U[:] = 5
    assert chain.items[-1][1].max() == 1
    # BPBFM-2: Lambda^r = sum_m eta[m, r] G[m]
    G, eta = rng.random((3, 2, 2)), rng.random((3, 4))
    U2, L2 = bench.state_factors(_state(U, G, eta))
    assert L2.shape == (4, 2, 2)
    np.testing.assert_allclose(L2[1], sum(eta[m, 1] * G[m] for m in range(3)))


def test_sample_scorer_is_the_models_score(bench):
    rng = np.random.default_rng(1)
    N, R = 15, 2
    h, r, t = rng.integers(0, N, 60), rng.integers(0, R, 60), rng.integers(0, N, 60)
    keep = np.unique((r * N + h) * N + t, return_index=True)[1]
    tensor = RelationalTensor(h[keep], r[keep], t[keep], np.ones(keep.size), N, R)
    model = BilinearPoissonFactorModel(3, max_iter=12, burn_in=6, thinning=2,
                                       random_state=0).fit(tensor)
    samples = [(i, U, L) for i, (U, L) in enumerate(zip(model.samples_embedding_,
                                                        model.samples_relation_matrices_,
                                                        strict=True))]
    scorer = bench.SampleScorer(samples)
    heads, rels = np.array([0, 4, 7]), np.array([1, 0, 1])
    np.testing.assert_allclose(scorer.score_tails_batch(heads, rels),
                               model.score_tails_batch(heads, rels))
    np.testing.assert_allclose(scorer.score_heads_batch(rels, heads),
                               model.score_heads_batch(rels, heads))


@pytest.mark.parametrize("degree_corrected", [False, True])
def test_estimate_scorer_is_the_models_score(bench, degree_corrected):
    """MAP-EM rows: the running fit's state, and the mean over finished restarts."""
    rng = np.random.default_rng(2)
    N, R = 15, 2
    h, r, t = rng.integers(0, N, 60), rng.integers(0, R, 60), rng.integers(0, N, 60)
    keep = np.unique((r * N + h) * N + t, return_index=True)[1]
    tensor = RelationalTensor(h[keep], r[keep], t[keep], np.ones(keep.size), N, R)
    em_class = DegreeCorrectedPoissonFactorModel if degree_corrected else \
        BilinearPoissonFactorModelEM
    fits = [em_class(3, max_iter=8, tol=0.0, random_state=s).fit(tensor)
            for s in (0, 1)]
    heads, rels = np.array([0, 4, 7]), np.array([1, 0, 1])
    alone = bench.EstimateScorer([], fits[0].state_)
    np.testing.assert_allclose(alone.score_tails_batch(heads, rels),
                               fits[0].score_tails_batch(heads, rels), rtol=1e-10)
    np.testing.assert_allclose(alone.score_heads_batch(rels, heads),
                               fits[0].score_heads_batch(rels, heads), rtol=1e-10)
    both = bench.EstimateScorer(fits)
    np.testing.assert_allclose(
        both.score_tails_batch(heads, rels),
        (fits[0].score_tails_batch(heads, rels) + fits[1].score_tails_batch(heads, rels))
        / 2, rtol=1e-12)
    assert both.n_samples == 2 and both.sweeps == [8, 8]


def test_em_restarts_run(bench, tmp_path):
    """``--em-restart-iterations``: restarts until the budget ends, the finished ones
    scored by their mean probability (no PyKEEN needed)."""
    from topiclink.datasets import load_dataset

    try:
        load_dataset("fb15k-237")
    except Exception as exc:  # noqa: BLE001 - no archive here
        pytest.skip(f"FB15k-237 is not available: {exc}")
    result = bench.main(["--quick", "--models", "BPBFM-DC-EM", "--budget-seconds", "4",
                         "--em-restart-iterations", "2", "--out",
                         str(tmp_path / "dc.json")])
    row = result["rows"][0]
    assert "error" not in row, row.get("error")
    assert row["model"] == "BPBFM-DC-EM" and row["hyper_parameters"]["degree_corrected"]
    assert row["em_restarts_finished"] >= 1
    assert row["kept_samples_final"] == row["em_restarts_finished"]
    assert row["sweeps"] >= 2 * row["em_restarts_finished"]
    assert 0.05 < row["test"]["mrr"] <= 1


def _row(model, K, curve, test_mrr, kind="BPBFM", published=None, **extra):
    metrics = {f"{m}{s}": test_mrr for s in ("", "_head", "_tail")
               for m in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10")}
    return {"model": model, "K": K, "kind": kind, "budget_seconds": 8.0,
            "train_seconds": curve[-1][0], "valid_eval_seconds": 1.0,
            "test_eval_seconds": 2.0, "peak_rss_mb": 500.0,
            "curve": [{"seconds": s, "valid_mrr": v} for s, v in curve],
            "test": metrics, "published": published, **extra}


def test_outputs_json_figure_table(bench, tmp_path):
    rows = [
        _row("BPBFM-1", 20, [(1, 0.05), (4, 0.10), (8, 0.12)], 0.11, sweeps=30,
             seconds_per_sweep_median=0.25),
        _row("BPBFM-1-online", 20, [(1, 0.03), (4, 0.12), (8.2, 0.13)], 0.12, sweeps=8,
             seconds_per_sweep_median=1.0),
        _row("DistMult", 128, [(2, 0.02), (8.1, 0.2)], 0.19, kind="PyKEEN",
             published=bench.PUBLISHED["DistMult"], epochs=1.5, seconds_per_epoch=5.4),
        {"model": "TuckER", "K": None, "error": "Traceback\nMemoryError: no"},
    ]
    cmp = bench.online_vs_batch(rows)
    assert len(cmp) == 1
    assert cmp[0]["online_seconds_to_batch_last"] == 4
    assert cmp[0]["batch_seconds_to_online_last"] is None
    result = {"benchmark": "kg_fb15k237_vs_pykeen", "protocol": {"valid_queries": 200},
              "rows": rows, "online_vs_batch": cmp, "x": np.float64(0.5),
              "n": np.int64(3), "nan": float("nan")}
    out = tmp_path / "r.json"
    bench.write_results(result, out)
    back = json.loads(out.read_text())
    assert back["rows"][0]["curve"][1] == {"seconds": 4, "valid_mrr": 0.10}
    assert back["x"] == 0.5 and back["n"] == 3 and back["nan"] is None
    png = bench.plot_curves(result, tmp_path / "r.png")
    assert png.stat().st_size > 10_000
    text = bench.summary_table(rows)
    assert "ERROR MemoryError: no" in text and "0.343 / 0.531" in text


def test_jobs_and_arguments(bench):
    assert bench.jobs_of(["BPBFM-1", "DistMult"], [20, 50]) == [
        ("BPBFM-1", 20), ("BPBFM-1", 50), ("DistMult", None)]
    with pytest.raises(SystemExit):
        bench.jobs_of(["TransE"], [20])
    args = bench.parse_args(["--quick"])
    assert args.budget_seconds == 5 and args.valid_queries == 200
    assert args.out.name == "kg_fb15k237_vs_pykeen_quick.json"
    assert args.figure.name == "kg_fb15k237_vs_pykeen_quick.png"
    assert set(bench.FB15K237_PEERS) == set(bench.PEERS) == set(bench.PUBLISHED)


@pytest.mark.slow  # about a minute, where PyKEEN and the FB15k-237 archive are present
def test_quick_run(bench, tmp_path):
    if importlib.util.find_spec("pykeen") is None:   # not imported: torch before a fork
        pytest.skip("PyKEEN is not installed")
    from topiclink.datasets import load_dataset

    try:
        load_dataset("fb15k-237")
    except Exception as exc:  # noqa: BLE001 - no archive here
        pytest.skip(f"FB15k-237 is not available: {exc}")
    out = tmp_path / "quick.json"
    result = bench.main(["--quick", "--models", "BPBFM-1,BPBFM-1-online,DistMult",
                         "--budget-seconds", "3", "--out", str(out)])
    assert out.is_file() and out.with_suffix(".png").is_file()
    rows = {r["model"]: r for r in result["rows"]}
    assert set(rows) == {"BPBFM-1", "BPBFM-1-online", "DistMult"}
    for row in rows.values():
        assert "error" not in row, row.get("error")
        assert 3 <= row["train_seconds"] < 30
        assert row["curve"] and 0 < row["test"]["mrr"] <= 1
        assert row["test"]["n_test"] == 500
    assert rows["DistMult"]["published"]["mrr"] == 0.343
    assert result["online_vs_batch"][0]["model"] == "BPBFM-1"


def test_loading_the_benchmark_keeps_its_folder_off_sys_path(bench):
    """benchmarks/distributed.py (now lda_dask.py) was named like Dask's ``distributed``
    package: with the folder on ``sys.path``, every Dask worker process started later in
    the same test run failed to start ("'distributed' is not a package"), as CI found."""
    folder = (ROOT / "benchmarks").resolve()
    assert all(Path(p or ".").resolve() != folder for p in sys.path)
    assert bench._cpu() and bench._clean(np.float64("nan")) is None


def test_the_guides_equal_time_claims_hold_in_the_recorded_run():
    """docs/results-knowledge-graphs.md, "The degree-corrected model at equal wall time",
    in each of the three recorded runs: at every checkpoint up to 120 s its valid MRR is
    at least RotatE's less 0.002 (and far ahead up to 60 s); at 240 s it is behind on the
    valid subsample by less than 0.01 and level on the test MRR (within 0.005), ahead on
    Hits@1 and behind on Hits@10."""
    results = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
    for name in ("kg_fb15k237_dc_vs_pykeen.json", "kg_fb15k237_dc_vs_pykeen_run1.json",
                 "kg_fb15k237_dc_vs_pykeen_seed1.json"):
        rows = {r["model"]: r for r in json.loads((results / name).read_text())["rows"]}
        ours, peer = rows["BPBFM-DC-EM"], rows["RotatE"]
        assert ours["budget_seconds"] == peer["budget_seconds"] == 240
        assert ours["hyper_parameters"]["degree_corrected"] and ours["K"] == 200
        for a, b in zip(ours["curve"], peer["curve"], strict=True):
            if b["seconds"] <= 121:
                assert a["valid_mrr"] >= b["valid_mrr"] - 0.002, (name, a, b)
            if b["seconds"] <= 61:
                assert a["valid_mrr"] > b["valid_mrr"] + 0.015, (name, a, b)
        last_ours, last_peer = ours["curve"][-1]["valid_mrr"], peer["curve"][-1]["valid_mrr"]
        assert 0 < last_peer - last_ours < 0.01, (name, last_ours, last_peer)
        t_ours, t_peer = ours["test"], peer["test"]
        assert abs(t_ours["mrr"] - t_peer["mrr"]) < 0.005, name
        assert t_ours["hits_at_1"] > t_peer["hits_at_1"] and \
            t_ours["hits_at_10"] < t_peer["hits_at_10"], name
        assert t_ours["n_test"] == t_peer["n_test"] == 20466


def test_pattern_rows_and_append_on_umls(bench, tmp_path):
    """``--dataset umls --clock cpu --test-at-checkpoints``: a BPBFM-PAT-EM row stops at
    its checkpoints, resumes, and ends converged or at the budget with a curve of valid
    and test scores; ``--append`` adds rows to the same file and refuses another
    protocol."""
    from topiclink.datasets import load_dataset

    try:
        load_dataset("umls")
    except Exception as exc:  # noqa: BLE001 - no archive here
        pytest.skip(f"UMLS is not available: {exc}")
    out = tmp_path / "umls.json"
    common = ["--dataset", "umls", "--clock", "cpu", "--test-at-checkpoints",
              "--budget-seconds", "2", "--checkpoints", "2", "--valid-queries", "0",
              "--topics", "5", "--out", str(out)]
    first = bench.main([*common, "--models", "BPBFM-PAT-EM-inverse,BPBFM-PAT-EM-inverse-C5"])
    row, constants = first["rows"]
    assert "error" not in row, row.get("error")
    assert row["budget_clock"] == "cpu" and row["hyper_parameters"]["patterns"] == "inverse"
    assert row["hyper_parameters"]["max_constant_rules"] == 0
    assert constants["hyper_parameters"]["max_constant_rules"] == 5
    assert constants["hyper_parameters"]["n_rules"] > row["hyper_parameters"]["n_rules"]
    assert bench.pattern_row("BPBFM-PAT-EM-paths-Cx") is None
    assert bench.pattern_row("BPBFM-PAT-EM-paths3-C100") == {"patterns": "paths3",
                                                             "max_constant_rules": 100}
    assert row["train_seconds"] <= 2.0 + 1.0
    assert row["curve"] and all("test_mrr" in p and 0 < p["valid_mrr"] <= 1
                                for p in row["curve"])
    assert row["curve"][-1]["test_mrr"] == pytest.approx(row["test"]["mrr"])
    both = bench.main([*common, "--models", "BPBFM-1-EM", "--append"])
    assert [r["model"] for r in both["rows"]] == ["BPBFM-PAT-EM-inverse",
                                                  "BPBFM-PAT-EM-inverse-C5", "BPBFM-1-EM"]
    assert len(both["commands"]) == 2
    assert both["rows"][1]["curve"][-1].get("converged") or len(both["rows"][1]["curve"])
    with pytest.raises(SystemExit, match="differ"):
        bench.main([*common[:-2], "--budget-seconds", "3", "--out", str(out),
                    "--models", "BPBFM-1-EM", "--append"])


def test_early_stopped_takes_each_rows_best_validation_checkpoint(bench):
    rows = [{"model": "A", "K": 5, "curve": [
        {"seconds": 1, "valid_mrr": 0.2, "test_mrr": 0.21},
        {"seconds": 2, "valid_mrr": 0.4, "test_mrr": 0.35, "test_hits_at_1": 0.3},
        {"seconds": 3, "valid_mrr": 0.3, "test_mrr": 0.5}]},
        {"model": "B", "curve": [{"seconds": 1, "valid_mrr": 0.1}]},
        {"model": "C", "error": "boom"}]
    out = bench.early_stopped(rows)
    assert out == [{"model": "A", "K": 5, "seconds": 2, "checkpoint": 1, "valid_mrr": 0.4,
                    "test_mrr": 0.35, "test_hits_at_1": 0.3}]
