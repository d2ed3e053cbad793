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

ROOT = Path(__file__).resolve().parents[1]
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
    from topiclink.experiments.bpbfm import paper_folds

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
