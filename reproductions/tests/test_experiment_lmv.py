"""The LMV paper's protocols: Cora predictive rank (topiclink_reproductions.lmv) and the
simulation study (topiclink_reproductions.lmv_simulation), at tiny sizes, and their CLI commands."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.datasets.synthetic import make_lmv_data, paper_blockmodel
from topiclink_reproductions.lmv import (
    PAPER,
    paper_findings,
    resolve_model,
    run_lmv_experiment,
    summarise,
)
from topiclink_reproductions.lmv_simulation import (
    PAPER_TABLE_S1,
    blockmodel_entries,
    findings,
    match_topics,
    run_lmv_simulation,
    table_s1,
    zero_entries,
)

MODELS = ("LMV", "PLLDA", "RTM")


@pytest.fixture(scope="module")
def directed():
    B = np.full((3, 3), 0.02) + np.diag([0.3, 0.3, 0.3])
    (corpus, links), _ = make_lmv_data(n_docs=120, n_words=50, n_topics=3, blockmodel=B,
                                       doc_length=30, random_state=0)
    return corpus, links


@pytest.fixture(scope="module")
def cora_table(directed):
    return run_lmv_experiment(directed, folds=2, topics=(3,), etas=(0.1, 0.5),
                              models=MODELS, max_iter=5, seed=0)


def test_cora_protocol_table(cora_table):
    t = cora_table
    assert len(t) == 2 * 2 * len(MODELS)        # folds x etas x models
    for col in ("model", "estimator", "K", "eta", "fold", "predictive_rank", "random_rank",
                "improvement", "cpu_seconds", "wall_seconds", "n_iter"):
        assert col in t.columns
    assert set(t["model"]) == set(MODELS)
    assert set(t.loc[t["model"] == "RTM", "estimator"]) == {"Var-RTM"}
    np.testing.assert_allclose(t["random_rank"], (t["n_train"] + 1) / 2)
    assert ((t["predictive_rank"] >= 1) & (t["predictive_rank"] <= t["n_train"])).all()
    np.testing.assert_allclose(t["improvement"], 1 - t["predictive_rank"] / t["random_rank"])
    assert (t["cpu_seconds"] >= 0).all() and (t["n_iter"] >= 1).all()


def test_cora_summary_and_findings(cora_table):
    s = summarise(cora_table)
    assert len(s) == 2 * len(MODELS)
    assert (s["folds"] == 2).all()
    assert {"predictive_rank_mean", "predictive_rank_std", "cpu_seconds_mean"} <= set(s)
    lines = paper_findings(s)
    assert len(lines) == len(PAPER.claims) + 1          # the file's claims and the plateau
    assert any(line.startswith("LMV 60-76 % better than random (eta=0.5): ")
               for line in lines)
    assert any(line.startswith("LMV > 30 % better than LDA+Reg") and "NOT CHECKED" in line
               for line in lines)
    assert any(line.startswith("LMVS close to LMV") and "NOT CHECKED" in line
               for line in lines)
    assert any(line.startswith("LMV stabilises around K=9-11") and "NOT CHECKED" in line
               for line in lines)
    verdicts = ("AGREES", "PARTLY", "DISAGREES", "NOT CHECKED")
    assert all(line.split(": ", 1)[1].startswith(verdicts) for line in lines)


def test_cora_claims_agree_and_disagree(cora_table):
    """The claims are checked on numbers: LMV's improvement over random moved into and
    out of the paper's 60-76 % gives AGREES and DISAGREES (ours lower)."""
    s = summarise(cora_table)
    lmv = (s["model"] == "LMV") & (s["eta"] == 0.5)
    for value, verdict in ((0.7, "AGREES"), (0.1, "DISAGREES (ours lower)")):
        s.loc[lmv, "improvement_mean"] = value
        line = next(x for x in paper_findings(s) if x.startswith("LMV 60-76 %"))
        assert line.split(": ", 1)[1].startswith(verdict), line


def test_rtm_alias_is_local():
    assert resolve_model("RTM") == "Var-RTM" == PAPER.models["RTM"].settings["estimator"]
    assert resolve_model("LMV") == "LMV"
    with pytest.raises(ValueError, match="not available"):
        run_lmv_experiment(("x", None), models=("no-such-model",))


def test_match_topics_recovers_a_permutation():
    rng = np.random.default_rng(1)
    true = rng.dirichlet(np.full(100, 0.1), size=6)
    q = rng.permutation(6)
    estimated = true[q]                           # estimated[j] = true[q[j]]
    perm = match_topics(true, estimated)
    np.testing.assert_array_equal(perm, np.argsort(q))
    np.testing.assert_array_equal(estimated[perm], true)
    B = paper_blockmodel()
    B_est = B[np.ix_(q, q)]                       # the blockmodel in the estimated order
    np.testing.assert_array_equal(B_est[np.ix_(perm, perm)], B)


@pytest.fixture(scope="module")
def simulation():
    return run_lmv_simulation(2, models=MODELS, n_docs=160, n_train=100, doc_length=40,
                              max_iter=5, seed=0)


def test_simulation_table_s1(simulation):
    t = simulation.table
    assert len(t) == 2 * len(MODELS)
    assert set(t["replicate"]) == {0, 1}
    s1 = table_s1(t)
    assert len(s1) == 15 == int((paper_blockmodel() > 0).sum())
    # the paper columns hold the published numbers
    assert s1.loc[0, "entry"] == "B[1,1]"
    assert s1.loc[0, "paper_LMV_mean"] == 0.298 and s1.loc[0, "paper_LMV_sd"] == 0.005
    assert s1.loc[0, "paper_LMVS_mean"] == 0.279 and s1.loc[0, "paper_PLLDA_mean"] == 0.146
    for (s, r, true, _), row in zip(PAPER_TABLE_S1, s1.itertuples(), strict=True):
        assert paper_blockmodel()[s - 1, r - 1] == true == row.true
    assert s1["ours_LMV_mean"].notna().all() and s1["ours_PLLDA_mean"].notna().all()
    assert s1["ours_LMVS_mean"].isna().all()      # LMVS not run here
    assert set(zero_entries(t)["model"]) == {"LMV", "PLLDA"}
    assert t.loc[t["model"] == "LMV", "visibility_corr"].between(-1, 1).all()
    assert t.loc[t["model"] == "PLLDA", "visibility_corr"].isna().all()
    vis = simulation.visibility
    assert set(vis["model"]) == {"LMV"} and len(vis) == 100
    entries = blockmodel_entries(t)
    assert set(entries["model"]) == {"LMV", "PLLDA"}
    assert (entries["zero_max"].notna() == (entries["true"] == 0)).all()
    assert (entries["paper_z"].notna() == (entries["true"] > 0)).all()
    lines = findings(simulation)
    assert lines[0].startswith("2 replicate(s), 100 training / 60 test documents")
    assert any(line.startswith("LMV visibility correlation with the truth above 0.8")
               for line in lines)
    assert any(line.startswith("LMVS zero entries") and "NOT CHECKED" in line
               for line in lines)
    verdicts = ("AGREES", "PARTLY", "DISAGREES", "NOT CHECKED")
    assert all(line.split(": ", 1)[1].startswith(verdicts) for line in lines[1:])


def test_cli_lmv_and_simulation(tmp_path, monkeypatch, directed):
    import topiclink.datasets as datasets
    from topiclink.datasets.base import Dataset

    corpus, links = directed

    def fake_load(name=None, data_dir=None, **kwargs):
        assert kwargs.get("directed") is True
        return Dataset(name="tiny", corpus=corpus, links=links)

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    runner = CliRunner()
    out = tmp_path / "cora"
    res = runner.invoke(app, ["experiment", "lmv", "--dataset", "tiny", "--folds", "2",
                              "--topics", "3", "--eta", "0.5", "--models", "LMV,RTM",
                              "--max-iter", "3", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    for name in ("lmv_results.csv", "lmv_summary.csv", "lmv_findings.md",
                 "lmv_predictive_rank.png", "lmv_cpu_seconds.png"):
        assert (out / name).is_file(), name
    assert "the paper's claims" in res.output
    sim = tmp_path / "sim"
    res = runner.invoke(app, ["experiment", "lmv-simulation", "--replicates", "1",
                              "--models", "LMV,PLLDA", "--n-docs", "120", "--n-train", "80",
                              "--doc-length", "30", "--max-iter", "3", "--out", str(sim),
                              "--quiet"])
    assert res.exit_code == 0, res.output
    for name in ("lmv_sim_results.csv", "lmv_sim_table_s1.csv", "lmv_sim_models.csv",
                 "lmv_sim_figure_s4.png", "lmv_sim_visibility.png", "findings.md"):
        assert (sim / name).is_file(), name
    assert "0.298 ± 0.005" in res.output             # the paper's column
    res = runner.invoke(app, ["experiment", "lmv-simulation", "--replicates", "1",
                              "--out", str(sim), "--quiet"])
    assert res.exit_code != 0 and "--force" in res.output
