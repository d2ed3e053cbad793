"""The BPBFM protocols (experiments/bpbfm.py): filtered ranking metrics against a naive
loop, the data preparation, the trajectory's current-state probabilities, the protocol
table on Nations, and the CLI command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.data.tensor import RelationalTensor
from topiclink.experiments.bpbfm import (
    KG_METRICS,
    BPBFMSettings,
    current_proba,
    kg_task,
    paper_folds,
    run_bpbfm_experiment,
    summarise,
    summary_text,
    tensor_model_names,
    union_tensor,
)
from topiclink.metrics import filtered_ranks, mrr_hits
from topiclink.metrics.ranking import metrics_by_side

MODELS = ("BPBFM-1", "BPBFM-2")


# ---------------------------------------------------------------------- ranking metrics
def naive_rank(scores, true, remove):
    """Rank of ``true`` by descending score among entities not in ``remove`` (the true
    one always kept); a tie counts half (the mean rank of the tied group)."""
    s = scores[true]
    higher = tied = 0
    for e, v in enumerate(scores):
        if e == true or e in remove:
            continue
        if v > s:
            higher += 1
        elif v == s:
            tied += 1
    return 1 + higher + tied / 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_filtered_ranks_match_a_naive_loop(seed):
    rng = np.random.default_rng(seed)
    n_q, n_e = 40, 12
    scores = rng.integers(0, 4, size=(n_q, n_e)).astype(float)   # many ties
    true = rng.integers(0, n_e, size=n_q)
    lists = [rng.choice(n_e, size=rng.integers(0, 5), replace=False) for _ in range(n_q)]
    lists[0] = np.array([true[0]])           # the true entity listed: never removed
    expected = np.array([naive_rank(scores[q], true[q], set(lists[q].tolist()))
                         for q in range(n_q)])
    mask = np.zeros((n_q, n_e), dtype=bool)
    for q, ls in enumerate(lists):
        mask[q, ls] = True
    np.testing.assert_array_equal(filtered_ranks(scores, true, lists), expected)
    np.testing.assert_array_equal(filtered_ranks(scores, true, mask), expected)
    np.testing.assert_array_equal(filtered_ranks(scores, true, sp.csr_array(mask)), expected)
    raw = np.array([naive_rank(scores[q], true[q], set()) for q in range(n_q)])
    np.testing.assert_array_equal(filtered_ranks(scores, true), raw)
    assert (filtered_ranks(scores, true, lists) <= raw).all()


def test_filtered_ranks_ties_and_infinities():
    scores = np.array([[1.0, 1.0, 1.0, 1.0],      # all tied: (4 + 1) / 2
                       [0.0, 3.0, 3.0, -np.inf],   # tied with one better: 2.5 -> 2.5
                       [np.inf, 1.0, 2.0, 0.0]])
    ranks = filtered_ranks(scores, np.array([2, 1, 2]), [[], [], [0]])
    np.testing.assert_array_equal(ranks, [2.5, 1.5, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        filtered_ranks(np.array([[np.nan, 1.0]]), np.array([0]))
    with pytest.raises(ValueError, match="not in"):
        filtered_ranks(scores, np.array([0, 1, 4]))


def test_mrr_hits():
    out = mrr_hits([1, 2, 1.5, 4, 20])
    assert out["mrr"] == pytest.approx(np.mean([1, 1 / 2, 1 / 1.5, 1 / 4, 1 / 20]))
    assert out["hits_at_1"] == pytest.approx(1 / 5)        # 1.5 is not a hit at 1
    assert out["hits_at_3"] == pytest.approx(3 / 5)
    assert out["hits_at_10"] == pytest.approx(4 / 5)
    both = metrics_by_side({"head": [1, 2], "tail": [4]})
    assert both["mrr_head"] == pytest.approx(0.75) and both["mrr_tail"] == pytest.approx(0.25)
    assert both["mrr"] == pytest.approx((1 + 0.5 + 0.25) / 3)


# ---------------------------------------------------------------------- data
def _splits():
    def t(triples):
        h, r, tl = np.array(triples).T
        return RelationalTensor(h, r, tl, np.ones(len(triples)), 5, 2)

    return {"train": t([(0, 0, 1), (1, 0, 2), (2, 1, 3), (3, 1, 4), (0, 1, 4)]),
            "valid": t([(1, 0, 3)]),
            "test": t([(0, 0, 2), (4, 1, 0)])}


def test_union_and_kg_task():
    splits = _splits()
    full = union_tensor(splits)
    assert full.n_entries == 8 and full.missing.shape == (0, 3)
    task = kg_task(splits)
    assert task.train.n_entries == 5
    assert task.train.missing.shape == (0, 3)      # answers are zeros, not held out
    np.testing.assert_array_equal(task.test, [[0, 0, 2], [4, 1, 0]])
    N = 5
    # known tails of (0, r=0, ?): 1 (train) and 2 (test)
    assert set(np.flatnonzero(task.tails_of[[0 * N + 0]].toarray()[0])) == {1, 2}
    # known heads of (?, r=1, 4): 3 and 0
    assert set(np.flatnonzero(task.heads_of[[1 * N + 4]].toarray()[0])) == {0, 3}
    folds = paper_folds(full, [0, 3], 0.1, seed=0)
    again = paper_folds(full, [3], 0.1, seed=0)
    np.testing.assert_array_equal(folds[3].entries, again[3].entries)   # fold by index only
    assert not np.array_equal(folds[0].entries, folds[3].entries)
    assert folds[0].entries.shape[0] == round(0.1 * 5 * 5 * 2)


def test_current_proba_is_the_last_sample():
    from topiclink.experiments.runner import build_model

    rng = np.random.default_rng(0)
    h, r, t = rng.integers(0, 8, 60), rng.integers(0, 3, 60), rng.integers(0, 8, 60)
    key = np.unique((r * 8 + h) * 8 + t)
    r, rest = np.divmod(key, 64)
    h, t = np.divmod(rest, 8)
    tensor = RelationalTensor(h, r, t, np.ones(h.size), 8, 3)
    q = np.array(np.meshgrid(np.arange(8), np.arange(3), np.arange(8),
                             indexing="ij")).reshape(3, -1)
    for name in MODELS:
        params = {"n_dictionary": 2} if name == "BPBFM-2" else {}
        model = build_model(name, {"n_components": 3, "max_iter": 6, "burn_in": 5,
                                   "thinning": 1, "max_samples": 1, "random_state": 1,
                                   **params})
        model.fit(tensor)
        np.testing.assert_allclose(current_proba(model, q[0], q[1], q[2]),
                                   model.predict_proba(q[0], q[1], q[2]), rtol=1e-10)


def test_model_names():
    names = tensor_model_names()
    assert set(MODELS) <= set(names)
    assert "Gibbs-gRTM" not in names
    with pytest.raises(ValueError, match="not available"):
        run_bpbfm_experiment(_splits(), models=("Gibbs-gRTM",))


# ---------------------------------------------------------------------- protocols
@pytest.fixture(scope="module")
def nations_dir():
    from topiclink.datasets import data_home

    try:
        home = data_home()
    except FileNotFoundError:
        pytest.skip("no data home: set TOPICLINK_DATA to the shared datasets folder")
    path = home / "nations"
    if not (path / "train.txt").is_file():
        pytest.skip(f"no nations data in {home}")
    return path


@pytest.fixture(scope="module")
def nations_run(nations_dir, tmp_path_factory):
    from topiclink.datasets import load_nations

    out = tmp_path_factory.mktemp("bpbfm")
    settings = BPBFMSettings(max_iter=12, burn_in=6, thinning=2, trajectory_every=3)
    table = run_bpbfm_experiment(load_nations(), models=MODELS, topics=(3, 4), folds=10,
                                 only_folds=(0, 2), settings=settings, seed=0, out=out)
    return table, out


def test_protocol_table(nations_run):
    table, _ = nations_run
    assert len(table) == 2 * 2 * 2 * 2          # protocols x folds x K x models
    for col in ("protocol", "model", "K", "fold", "auc_roc", "auc_pr", "fit_seconds",
                "n_parameters", "n_active_factors", "n_iter", *KG_METRICS):
        assert col in table.columns, col
    assert set(table["fold"]) == {0, 2}
    paper = table[table["protocol"] == "paper"]
    kg = table[table["protocol"] == "kg"]
    assert paper["auc_roc"].between(0.5, 1).all() and paper["auc_pr"].between(0, 1).all()
    assert paper[list(KG_METRICS)].isna().all().all()
    assert (paper["n_heldout"] == round(0.1 * 14 * 14 * 55)).all()
    assert kg["auc_roc"].isna().all()
    for m in KG_METRICS:
        assert kg[m].between(0, 1).all(), m
    assert (kg["hits_at_1"] <= kg["hits_at_3"]).all()
    assert (kg["hits_at_3"] <= kg["hits_at_10"]).all()
    assert (kg["n_test"] == 201).all() and (table["n_iter"] == 12).all()
    k4 = table[(table["K"] == 4) & (table["model"] == "BPBFM-1")]
    assert (k4["n_parameters"] == 55 * 16 + 14 * 4).all()
    # models of one (protocol, fold, K) share their seed
    assert table.groupby(["protocol", "fold", "K"])["seed"].nunique().eq(1).all()
    traj = table.attrs["trajectory"]
    assert set(traj["model"]) == set(MODELS) and set(traj["fold"]) == {0}
    assert set(traj["iteration"]) == {3, 6, 9, 12}
    assert traj["auc_roc"].between(0, 1).all()
    assert (traj.groupby(["model", "K"])["seconds"].diff().dropna() > 0).all()


def test_outputs_and_summary(nations_run):
    table, out = nations_run
    for name in ("bpbfm_results.csv", "bpbfm_trajectory.csv", "bpbfm_summary.csv",
                 "bpbfm_summary.txt", "bpbfm_auc_roc.png", "bpbfm_auc_pr.png",
                 "bpbfm_mrr.png", "bpbfm_hits_at_10.png", "bpbfm_auc_vs_time.png"):
        assert (out / name).is_file(), name
    csv = pd.read_csv(out / "bpbfm_results.csv")
    assert len(csv) == len(table) and "trajectory" not in csv.columns
    s = summarise(table)
    assert len(s) == 2 * 2 * 2 and (s["folds"] == 2).all()
    assert {"auc_roc_mean", "auc_roc_std", "mrr_mean", "hits_at_10_std"} <= set(s)
    text = summary_text(table)
    assert "paper protocol" in text and "kg protocol" in text and "±" in text


def test_rows_do_not_depend_on_workers_or_other_folds(nations_run):
    from topiclink.datasets import load_nations

    table, _ = nations_run
    settings = BPBFMSettings(max_iter=12, burn_in=6, thinning=2, trajectory_every=0)
    other = run_bpbfm_experiment(load_nations(), models=("BPBFM-1",), topics=(3,),
                                 protocols=("paper", "kg"), folds=10, only_folds=(2,),
                                 settings=settings, seed=0, workers=2)
    mine = table[(table["model"] == "BPBFM-1") & (table["K"] == 3) & (table["fold"] == 2)]
    cols = ["auc_roc", "auc_pr", "mrr", "hits_at_10"]
    np.testing.assert_allclose(other.sort_values("protocol")[cols].to_numpy(),
                               mine.sort_values("protocol")[cols].to_numpy())
    assert other.attrs["trajectory"].empty


# ---------------------------------------------------------------------- CLI
def _triples_folder(path):
    rng = np.random.default_rng(0)
    ents = [f"e{i}" for i in range(10)]
    rows = {(ents[h], f"r{r}", ents[t]) for h, r, t in
            zip(rng.integers(0, 10, 160), rng.integers(0, 3, 160), rng.integers(0, 10, 160),
                strict=True)}
    rows = sorted(rows)
    rng.shuffle(rows)
    n = len(rows)
    path.mkdir()
    for name, part in (("train", rows[:int(0.8 * n)]), ("valid", rows[int(0.8 * n):
                                                                      int(0.9 * n)]),
                       ("test", rows[int(0.9 * n):])):
        (path / f"{name}.txt").write_text("".join("\t".join(x) + "\n" for x in part))
    return path


def test_cli_bpbfm(tmp_path):
    data = _triples_folder(tmp_path / "kg")
    out = tmp_path / "out"
    runner = CliRunner()
    args = ["experiment", "bpbfm", "--dataset", "triples", "--data", str(data),
            "--folds", "10", "--only-folds", "0,1", "--topics", "3", "--models",
            "BPBFM-1,BPBFM-2", "--iterations", "8", "--burn-in", "4",
            "--trajectory-every", "4", "--workers", "2", "--out", str(out), "--quiet"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    for name in ("bpbfm_results.csv", "bpbfm_trajectory.csv", "bpbfm_summary.txt",
                 "bpbfm_auc_roc.png", "bpbfm_mrr.png", "bpbfm_auc_vs_time.png"):
        assert (out / name).is_file(), name
    assert "paper protocol" in res.output and "kg protocol" in res.output
    table = pd.read_csv(out / "bpbfm_results.csv")
    assert len(table) == 2 * 2 * 2 and set(table["protocol"]) == {"paper", "kg"}
    res = runner.invoke(app, args)
    assert res.exit_code != 0 and "--force" in res.output
    res = runner.invoke(app, [*args[:-3], "--protocol", "paper", "--out",
                              str(tmp_path / "p"), "--quiet"])
    assert res.exit_code == 0, res.output
    assert set(pd.read_csv(tmp_path / "p" / "bpbfm_results.csv")["protocol"]) == {"paper"}
    res = runner.invoke(app, [*args[:-3], "--models", "Gibbs-gRTM", "--out",
                              str(tmp_path / "x")])
    assert res.exit_code != 0 and "unknown model" in res.output
    res = runner.invoke(app, [*args[:-3], "--protocol", "nope", "--out",
                              str(tmp_path / "y")])
    assert res.exit_code != 0 and "--protocol" in res.output
