"""benchmarks/bpbfm_vs_pykeen.py: the calibration fields of a paper row (ECE, Platt
scaling on training cells), ``--resume`` and the reliability figure, on a small planted
tensor in place of UMLS / Nations (seconds); the PyKEEN peer's row where PyKEEN is
installed (skipped otherwise: CI has no PyKEEN)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from tests.benchmark_module import benchmark_module

from topiclink.datasets import make_bpbfm_data
from topiclink.metrics import expected_calibration_error

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--datasets", "tiny", "--protocols", "paper", "--topics", "3", "--topics-em", "3",
        "--iterations", "12", "--burn-in", "6", "--epochs", "2", "--fraction", "0.1"]


@pytest.fixture(scope="module")
def bench():
    with benchmark_module("bpbfm_vs_pykeen") as module:
        yield module


@pytest.fixture
def tiny(bench, monkeypatch):
    """``load_dataset("tiny")``: a planted 16-entity, 3-relation tensor (one split)."""
    tensor, _ = make_bpbfm_data(16, 3, 3, density=0.15, random_state=4)
    monkeypatch.setattr(bench, "load_dataset",
                        lambda name: SimpleNamespace(tensor={"train": tensor}))
    return tensor


def test_platt_calibrates_a_misscaled_score(bench):
    rng = np.random.default_rng(0)
    z = rng.normal(-2.0, 1.5, size=20000)
    y = rng.random(z.size) < bench._expit(z)
    score = 4.0 * z + 3.0                       # the true logit, stretched and shifted
    fit, test = slice(0, 10000), slice(10000, None)
    slope, intercept = bench.platt_scaling(score[fit], y[fit])
    assert slope == pytest.approx(0.25, rel=0.1)
    assert intercept == pytest.approx(-0.75, abs=0.15)
    before = expected_calibration_error(y[test], bench._expit(score[test]))
    after = expected_calibration_error(y[test], bench.platt_apply(score[test], slope,
                                                                   intercept))
    assert before > 0.05 and after < 0.02 and after < before / 4
    with pytest.raises(ValueError, match="both ones and zeros"):
        bench.platt_scaling(score[:10], np.zeros(10))


def test_platt_sample_is_training_cells_only(bench, tiny):
    from topiclink_reproductions.bpbfm import paper_folds

    fold = paper_folds(tiny, [0], 0.1, 0)[0]
    entries, labels = bench.platt_sample(fold.train, 0.1, 7)
    N = tiny.n_entities

    def keys(e):
        return (e[:, 1] * N + e[:, 0]) * N + e[:, 2]

    assert not np.isin(keys(entries), keys(fold.entries)).any()
    assert entries.shape[0] == round(0.1 * (N * N * tiny.n_relations - len(fold.entries)))
    ones = np.column_stack([fold.train.heads, fold.train.relations, fold.train.tails])
    np.testing.assert_array_equal(labels, np.isin(keys(entries), keys(ones)))
    again, _ = bench.platt_sample(fold.train, 0.1, 7)
    np.testing.assert_array_equal(entries, again)


def test_calibration_fields(bench):
    y = np.array([0, 0, 1, 0, 1, 1, 0, 0], dtype=bool)
    p = np.array([0.01, 0.02, 0.9, 0.15, 0.6, 0.95, 0.001, 0.3])
    out = bench.calibration_fields(y, p, p / 2)
    assert out["ece"] == pytest.approx(expected_calibration_error(y, p))
    assert out["observed"] == pytest.approx(3 / 8)
    assert out["mean_proba"] == pytest.approx(p.mean())
    assert sum(b["count"] for b in out["reliability"]) == 8
    assert set(out["reliability"][0]) == {"lower", "upper", "count", "mean_proba", "observed"}
    assert out["ece_platt"] == pytest.approx(expected_calibration_error(y, p / 2))
    fine = out["reliability_fine"]
    assert sum(fine["count"]) == 8 and sum(fine["ones"]) == 3


def test_rows_resume_and_figure(bench, tiny, tmp_path, monkeypatch):
    out = tmp_path / "res.json"
    args = [*TINY, "--models", "BPBFM-1,BPBFM-1-EM", "--out", str(out)]
    bench.main([*args, "--folds", "0"])
    result = json.loads(out.read_text())
    assert not out.with_suffix(".json.tmp").exists()
    models = result["datasets"]["tiny"]["protocols"]["paper"]["models"]
    for name in ("BPBFM-1", "BPBFM-1-EM"):
        (row,) = models[name]["per_fold"]
        for key in ("auc_pr", "ece", "ece_platt", "mean_proba", "mean_proba_platt",
                    "observed", "reliability", "reliability_platt", "reliability_fine",
                    "platt"):
            assert row[key] is not None, (name, key)
        assert 0 <= row["ece"] <= 1 and 0 < row["observed"] < 1
        assert set(models[name]["summary"]) >= {"ece", "ece_platt", "auc_pr"}

    # --resume adds fold 1 only
    fitted = []
    real_build = bench._build

    def counting_build(name, *a, **k):
        fitted.append(name)
        return real_build(name, *a, **k)

    monkeypatch.setattr(bench, "_build", counting_build)
    bench.main([*args, "--folds", "0,1", "--resume"])
    result = json.loads(out.read_text())
    models = result["datasets"]["tiny"]["protocols"]["paper"]["models"]
    assert [r["fold"] for r in models["BPBFM-1"]["per_fold"]] == [0, 1]
    assert models["BPBFM-1"]["summary"]["ece"]["sd"] is not None
    assert len(result["sessions"]) == 2 and result["sessions"][1]["skipped_rows"] == 2
    assert "BPBFM-1" in fitted

    # complete: no fitting at all (nor loading the data), the figure redrawn
    def no_fit(*a, **k):
        raise AssertionError("fitted on --resume of a complete file")

    monkeypatch.setattr(bench, "_build", no_fit)
    monkeypatch.setattr(bench, "load_dataset", no_fit)
    figure = tmp_path / "fig.png"
    bench.main([*args, "--folds", "0,1", "--resume", "--figure", str(figure)])
    assert figure.stat().st_size > 10000
    assert out.with_suffix(".png").stat().st_size > 10000      # the default, first run

    # other settings: refused in one line naming the setting
    with pytest.raises(SystemExit, match=r"iterations=12, this run 13"):
        other = [*TINY]
        other[other.index("--iterations") + 1] = "13"
        bench.main([*other, "--models", "BPBFM-1", "--out", str(out), "--folds", "0",
                    "--resume"])


def test_peer_row_has_calibration(bench, tiny, tmp_path):
    pytest.importorskip("pykeen")
    out = tmp_path / "peer.json"
    bench.main([*TINY, "--models", "DistMult", "--folds", "0", "--out", str(out)])
    (row,) = json.loads(out.read_text())["datasets"]["tiny"]["protocols"]["paper"][
        "models"]["DistMult"]["per_fold"]
    assert row["ece"] is not None and row["ece_platt"] is not None
    assert row["platt"]["n"] > 0


# ---------------------------------------------------------------------- trained to convergence
CONV = ["--datasets", "tinykg", "--peer-training", "converged", "--topics-grid", "2,4",
        "--topics-em-grid", "3", "--check-iterations", "5", "--check-iterations-em", "4",
        "--max-iterations", "40", "--patience", "2", "--burn-in", "5",
        "--learning-rates", "0.01", "--check-epochs", "2", "--max-epochs", "6"]


@pytest.fixture
def tinykg(bench, monkeypatch):
    """``load_dataset("tinykg")``: a planted 16-entity, 3-relation tensor's ones split
    70 / 15 / 15 % into train / valid / test."""
    from topiclink.data.tensor import RelationalTensor

    tensor, _ = make_bpbfm_data(16, 3, 3, density=0.2, random_state=4)
    order = np.random.default_rng(0).permutation(tensor.n_entries)
    cut = np.split(order, [int(0.7 * order.size), int(0.85 * order.size)])

    def part(idx):
        idx = np.sort(idx)
        return RelationalTensor(tensor.heads[idx], tensor.relations[idx], tensor.tails[idx],
                                np.ones(idx.size), tensor.n_entities, tensor.n_relations)

    splits = dict(zip(("train", "valid", "test"), map(part, cut), strict=True))
    monkeypatch.setattr(bench, "load_dataset", lambda name: SimpleNamespace(tensor=splits))
    return splits


def test_valid_task_never_sees_the_test_triples(bench, tinykg):
    task = bench.valid_task(tinykg)
    N = tinykg["train"].n_entities
    for name, inside in (("train", True), ("valid", True), ("test", False)):
        t = tinykg[name]
        rows = t.relations.astype(np.int64) * N + t.heads
        known = np.asarray(task.tails_of[rows, t.tails]).ravel()
        # a test triple is in the filter only where it is also a train/valid one (never)
        assert known.all() if inside else not known.any(), name
    np.testing.assert_array_equal(task.test[:, 2], tinykg["valid"].tails)


def test_converged_rows_choose_on_validation_and_resume(bench, tinykg, tmp_path,
                                                        monkeypatch):
    out = tmp_path / "conv.json"
    args = [*CONV, "--models", "BPBFM-1,BPBFM-1-EM", "--out", str(out)]
    bench.main([*args, "--folds", "0"])
    result = json.loads(out.read_text())
    part = result["datasets"]["tinykg"]["protocols"]["kg"]
    assert set(result["datasets"]["tinykg"]["protocols"]) == {"kg"}
    res = part["models"]["BPBFM-1"]
    (row,) = res["per_fold"]
    cands = res["tuning"]["candidates"]
    assert [c["setting"] for c in cands] == [{"n_topics": 2}, {"n_topics": 4}]
    best = max(cands, key=lambda c: c["valid_mrr"])
    assert res["tuning"]["selected"] == best["setting"] == row["setting"]
    assert row["valid_mrr"] == best["valid_mrr"] == max(p["value"] for p in row["curve"])
    assert row["best_step"] == max(row["curve"], key=lambda p: p["value"])["step"]
    assert row["steps"] == row["curve"][-1]["step"] <= 40
    assert row["cap_hit"] == (row["stopped_by"] == "cap")
    assert row["stopped_by"] in ("patience", "cap")
    assert [p["step"] for p in row["curve"]][:2] == [5, 10]
    for key in ("mrr", "hits_at_10", "train_seconds", "fit_wall_seconds", "n_parameters"):
        assert row[key] is not None, key
    assert row["n_parameters"] == 3 * best["setting"]["n_topics"] ** 2 \
        + 16 * best["setting"]["n_topics"]
    em = part["models"]["BPBFM-1-EM"]["per_fold"][0]
    assert em["step_unit"] == "iteration" and em["curve"][0]["step"] == 4
    assert part["verdict"] is None                  # no peer: no verdict
    assert out.with_suffix(".png").exists()

    # fold 1 reuses fold 0's choice: one fit, no candidates, nothing of fold 0 refitted
    built = []
    real = bench.fit_converged

    def counting(name, setting, *a, **k):
        built.append((name, setting))
        return real(name, setting, *a, **k)

    monkeypatch.setattr(bench, "fit_converged", counting)
    bench.main([*args, "--folds", "0,1", "--resume"])
    assert built == [("BPBFM-1", res["tuning"]["selected"]),
                     ("BPBFM-1-EM", {"n_topics": 3})]
    result = json.loads(out.read_text())
    rows = result["datasets"]["tinykg"]["protocols"]["kg"]["models"]["BPBFM-1"]["per_fold"]
    assert [r["fold"] for r in rows] == [0, 1] and "candidates" not in rows[1]
    assert rows[1]["setting"] == res["tuning"]["selected"]

    # the tuning fold (0) interrupted before its choice, then another fold: refused
    partial = json.loads(out.read_text())
    partial["datasets"]["tinykg"]["protocols"]["kg"]["models"]["BPBFM-1-scaled"] = {
        "per_fold": [], "tuning": {"fold": 0, "seed": 1, "candidates": []}}
    out.write_text(json.dumps(partial))
    with pytest.raises(SystemExit, match="fold 0 .* is the tuning fold"):
        bench.main([*CONV, "--models", "BPBFM-1-scaled", "--out", str(out), "--folds",
                    "1", "--resume"])
    # other convergence settings: refused
    with pytest.raises(SystemExit, match="patience=2, this run 3"):
        other = [*CONV]
        other[other.index("--patience") + 1] = "3"
        bench.main([*other, "--models", "BPBFM-1", "--out", str(out), "--folds", "0",
                    "--resume"])
    with pytest.raises(SystemExit, match="kg protocol only"):
        bench.main([*CONV, "--protocols", "paper,kg", "--out", str(tmp_path / "x.json")])


def test_fixed_mode_resumes_a_file_written_before_peer_training(bench, tiny, tmp_path):
    out = tmp_path / "old.json"
    args = [*TINY, "--models", "BPBFM-1", "--out", str(out)]
    bench.main([*args, "--folds", "0"])
    old = json.loads(out.read_text())
    del old["args"]["peer_training"]                 # as files written before it
    out.write_text(json.dumps(old))
    bench.main([*args, "--folds", "0,1", "--resume"])
    models = json.loads(out.read_text())["datasets"]["tiny"]["protocols"]["paper"]["models"]
    assert [r["fold"] for r in models["BPBFM-1"]["per_fold"]] == [0, 1]


def test_verdict_compares_the_validation_choice_with_the_best_peer_on_test(bench):
    def res(valid, test):
        rows = [{"fold": f, "mrr": m, "valid_mrr": valid, "hits_at_10": 0.9}
                for f, m in enumerate(test)]
        return {"per_fold": rows, "summary": bench._summary(rows, bench.CONVERGED_METRICS)}

    part = {"models": {"BPBFM-1": res(0.70, [0.80, 0.82]),      # best on test, not valid
                       "BPBFM-1-EM": res(0.75, [0.70, 0.72]),   # best on valid: chosen
                       "ComplEx": res(0.6, [0.74, 0.70]),
                       "DistMult": res(0.6, [0.71, 0.71])}}
    v = bench.verdict(part)
    assert v["bpbfm"] == "BPBFM-1-EM" and v["best_peer"] == "ComplEx"
    assert v["bpbfm_at_least_best_peer"] is False
    assert v["paired_mrr_differences"] == pytest.approx([-0.04, 0.02])
    assert v["folds_bpbfm_ahead"] == 1


def test_converged_peer_restores_its_best_weights(bench, tinykg):
    pytest.importorskip("pykeen")
    from argparse import Namespace

    from topiclink_reproductions.bpbfm import evaluate_kg

    args = Namespace(check_epochs=1, patience=3, max_epochs=8, relative_delta=0.0)
    vtask = bench.valid_task(tinykg)
    model, stopper, timings = bench.fit_converged(
        "DistMult", {"learning_rate": 0.1}, args, 3, tinykg["train"], vtask)
    assert [p["step"] for p in stopper.curve] == list(range(1, stopper.last_step + 1))
    # this seed peaks at epoch 4 and falls for 3 epochs: stopped by patience at 7
    assert stopper.stopped_by == "patience" and stopper.best_step < stopper.last_step
    # the model scored is the best evaluation's, not the last one's
    mrr = evaluate_kg(model, vtask)["mrr"]
    assert mrr == pytest.approx(stopper.best_value, abs=1e-12)
    assert mrr != pytest.approx(stopper.curve[-1]["value"], abs=1e-6)
    assert 0 <= timings["train_seconds"] <= timings["fit_wall_seconds"]
