"""The BPBFM protocols (topiclink_reproductions.bpbfm): filtered ranking metrics against a naive
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
from topiclink.metrics import filtered_ranks, mrr_hits
from topiclink.metrics.ranking import metrics_by_side
from topiclink_reproductions.bpbfm import (
    KG_METRICS,
    PAPER,
    BPBFMSettings,
    check_paper_protocol,
    current_proba,
    evaluate_kg,
    findings,
    kg_ranks,
    kg_task,
    paper_folds,
    run_bpbfm_experiment,
    summarise,
    summary_text,
    tensor_model_names,
    union_tensor,
)

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


def _random_splits(seed, n=30, n_rel=3, n_triples=260):
    rng = np.random.default_rng(seed)
    key = np.unique(rng.integers(0, n_rel * n * n, n_triples))
    key = key[rng.permutation(key.size)]
    r, rest = np.divmod(key, n * n)
    h, t = np.divmod(rest, n)
    parts = np.array_split(np.arange(key.size), [int(0.7 * key.size), int(0.8 * key.size)])
    return {name: RelationalTensor(h[i], r[i], t[i], np.ones(i.size), n, n_rel)
            for name, i in zip(("train", "valid", "test"), parts, strict=True)}


class _TiedScorer:
    """Scores from a fixed table of small integers: many ties; one query at a time."""

    def __init__(self, n, n_rel, seed):
        self.table = np.random.default_rng(seed).integers(0, 4, (n_rel, n, n)).astype(float)

    def score_tails(self, head, relation):
        return self.table[relation, head, :]

    def score_heads(self, relation, tail):
        return self.table[relation, :, tail]


class _BatchTiedScorer(_TiedScorer):
    """The same scores, a batch of queries at a time."""

    def score_tails_batch(self, heads, relations):
        return self.table[relations, heads, :]

    def score_heads_batch(self, relations, tails):
        return self.table[relations, :, tails]


@pytest.mark.parametrize("seed", [0, 1])
def test_chunked_filtered_ranks_equal_an_unchunked_reference(seed):
    """kg_ranks / evaluate_kg, whatever the chunk of queries, with and without batch
    scoring, equal the naive loop over the whole score table with the filter built from
    the triples of every split."""
    splits = _random_splits(seed)
    n, n_rel = 30, 3
    task = kg_task(splits)
    triples = {(int(a), int(b), int(c)) for p in splits.values()
               for a, b, c in zip(p.heads, p.relations, p.tails, strict=True)}
    test = task.test
    scorer = _TiedScorer(n, n_rel, seed)
    ref = {"tail": np.array([naive_rank(scorer.score_tails(h, r), t,
                                        {e for e in range(n) if (h, r, e) in triples})
                             for h, r, t in test]),
           "head": np.array([naive_rank(scorer.score_heads(r, t), h,
                                        {e for e in range(n) if (e, r, t) in triples})
                             for h, r, t in test])}
    assert (ref["tail"] % 1 == 0.5).any()           # ties occur
    expected = metrics_by_side(ref, (1, 3, 10))
    for model in (scorer, _BatchTiedScorer(n, n_rel, seed)):
        for chunk in (1, 2, 7, test.shape[0], None):
            for side in ("head", "tail"):
                np.testing.assert_array_equal(kg_ranks(model, task, side, chunk), ref[side])
            got = evaluate_kg(model, task, chunk=chunk)
            assert got.pop("n_test") == test.shape[0]
            assert got == expected
    with pytest.raises(ValueError, match="chunk must be an integer >= 1"):
        evaluate_kg(scorer, task, chunk=0)


def test_bpbfm_batch_scores_are_the_single_query_scores():
    """BPBFM scores a batch of queries by matrix products: the rows equal score_tails /
    score_heads (one query, the per-entry kernel), and the ranks do not depend on the
    chunk."""
    from topiclink.experiments.runner import build_model

    splits = _random_splits(3)
    task = kg_task(splits)
    for name in MODELS:
        params = {"n_dictionary": 2} if name == "BPBFM-2" else {}
        model = build_model(name, {"n_topics": 4, "max_iter": 8, "burn_in": 4,
                                   "thinning": 2, "random_state": 0, **params})
        model.fit(task.train)
        h, r, t = task.test.T
        tails = model.score_tails_batch(h, r)
        heads = model.score_heads_batch(r, t)
        assert tails.shape == heads.shape == (h.size, 30)
        for i in range(h.size):
            np.testing.assert_allclose(tails[i], model.score_tails(int(h[i]), int(r[i])),
                                       rtol=1e-12, atol=1e-300)
            np.testing.assert_allclose(heads[i], model.score_heads(int(r[i]), int(t[i])),
                                       rtol=1e-12, atol=1e-300)
        names = model.entity_names_[h]
        np.testing.assert_array_equal(model.score_tails_batch(names, r), tails)
        assert model.score_tails_batch([], []).shape == (0, 30)
        ranks = [kg_ranks(model, task, "tail", c) for c in (1, 5, None)]
        np.testing.assert_array_equal(ranks[0], ranks[1])
        np.testing.assert_array_equal(ranks[0], ranks[2])
        with pytest.raises(ValueError, match="same length"):
            model.score_heads_batch([0, 1], [0])


def test_paper_protocol_is_refused_at_fb15k237_scale(monkeypatch):
    """14,541 x 14,541 x 237 cells: 10 % held out is 5e9 entries; refused in one line
    before anything is drawn (the kg protocol is the sparse one)."""
    import topiclink_reproductions.bpbfm as protocols

    monkeypatch.setattr(protocols, "available_memory", lambda: 128 * 2 ** 30)
    big = RelationalTensor(np.array([0, 1]), np.array([0, 236]), np.array([2, 3]),
                           np.ones(2), 14541, 237)
    with pytest.raises(ValueError, match=r"paper protocol holds out 0\.1 of all 14541 x "
                                         r"14541 x 237 = 5\.01e\+10 entries of 'fb'") as info:
        check_paper_protocol(big, 0.1, "fb")
    assert "\n" not in str(info.value) and "--protocol kg" in str(info.value)
    splits = {"train": big, "test": big}
    with pytest.raises(ValueError, match="paper protocol holds out"):
        run_bpbfm_experiment(splits, models=("BPBFM-1",), topics=(2,), folds=1)
    check_paper_protocol(union_tensor(_splits()), 0.1)          # small: accepted


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
        model = build_model(name, {"n_topics": 3, "max_iter": 6, "burn_in": 5,
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
                "n_parameters", "n_active_factors", "n_iter", "test_seconds",
                "peak_rss_mb", *KG_METRICS):
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
    assert (table["peak_rss_mb"] > 0).all() and (table["test_seconds"] >= 0).all()
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
    lines = findings(table)
    assert len(lines) == len(PAPER.claims)
    assert lines[0].startswith("BPBFM-1 held-out AUC-ROC above 0.9 (paper protocol): ")
    # BPBFM-2's dictionary of M = 10 matrices (M K^2 + M R + N K numbers against
    # R K^2 + N K): more parameters than BPBFM-1 at K = 3 on Nations, fewer at K = 4
    assert lines[1].startswith("BPBFM-2 fewer parameters than BPBFM-1 (shared dictionary): "
                               "PARTLY; holds in 2/4 (protocol, K) pairs"), lines[1]
    assert (out / "bpbfm_findings.md").read_text().count("\n- ") == len(PAPER.claims)


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
    assert "the paper's claims:" in res.output and (out / "bpbfm_findings.md").is_file()
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


def test_cli_refuses_the_paper_protocol_on_fb15k237_before_making_the_folder(
        shared_datasets, tmp_path):
    if not (shared_datasets / "fb15k-237" / "FB15k-237.tar.gz").is_file():
        pytest.skip("FB15k-237 archive not in the data home")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["experiment", "bpbfm", "--dataset", "fb15k-237",
                                   "--protocol", "paper", "-o", str(out), "--quiet"])
    assert res.exit_code == 1
    assert res.output.strip().splitlines()[-1].startswith("error: the paper protocol holds "
                                                          "out 0.1 of all 14541 x 14541")
    assert not out.exists()


def test_cli_burn_in_defaults_to_half_the_iterations(tmp_path):
    """``-n 6`` alone runs (the burn-in was a fixed 150, refused for any -n <= 150, even
    for MAP-EM, which has no burn-in); a burn-in given is still checked."""
    data = _triples_folder(tmp_path / "kg")
    args = ["experiment", "bpbfm", "--dataset", "triples", "--data", str(data), "--folds",
            "1", "--topics", "3", "--models", "BPBFM-1,BPBFM-1-EM", "--protocol", "kg",
            "-n", "6", "--quiet"]
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(tmp_path / "a" / "bpbfm_results.csv")) == 2
    res = CliRunner().invoke(app, [*args, "--burn-in", "6", "--out", str(tmp_path / "b")])
    assert res.exit_code != 0 and "--burn-in must be in [0, --iterations), got 6" in res.output


def test_each_protocol_has_its_own_default_folds_and_models(shared_datasets):
    """The paper protocol: its 10 folds of BPBFM-1 and BPBFM-2; kg: one fit of the EM
    models with patterns and degree-corrected on the data set's split (a fold there only
    repeats the fit)."""
    runner = CliRunner()
    result = runner.invoke(app, ["experiment", "bpbfm", "--dataset", "umls", "--topics", "3",
                                 "--plan"])
    assert result.exit_code == 0, result.output
    cells = [line for line in result.output.splitlines() if line.startswith("cell ")]
    paper = [c for c in cells if "protocol=paper" in c]
    kg = [c for c in cells if "protocol=kg" in c]
    assert len(paper) == 10 * 2 and {c.split("model=")[1].split()[0] for c in paper} == {
        "BPBFM-1", "BPBFM-2"}
    assert [c.split("model=")[1].split()[0] for c in kg] == ["BPBFM-PAT-EM", "BPBFM-DC-EM"]
    assert all("fold=0" in c for c in kg)
    given = runner.invoke(app, ["experiment", "bpbfm", "--dataset", "umls", "--topics", "3",
                                "--folds", "2", "--models", "BPBFM-1-scaled", "--plan"])
    assert given.exit_code == 0, given.output
    cells = [line for line in given.output.splitlines() if line.startswith("cell ")]
    assert len(cells) == 2 * 2 and all("model=BPBFM-1-scaled" in c for c in cells)
    refused = runner.invoke(app, ["experiment", "bpbfm", "--dataset", "umls", "--topics",
                                  "3", "--only-folds", "3", "--plan"])
    assert refused.exit_code != 0 and "not in [0, 1) of the kg protocol" in refused.output
