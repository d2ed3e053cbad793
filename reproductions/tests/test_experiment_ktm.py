"""The KTM paper's State-of-the-Union protocol (topiclink_reproductions.ktm) on a tiny
synthetic corpus with years and presidents, and its CLI command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.data.corpus import Corpus
from topiclink_reproductions.ktm import (
    KTMSettings,
    prepare_sotu,
    run_ktm_experiment,
    sitting_presidents,
    summary_text,
)

K = 3


@pytest.fixture(scope="module")
def sotu_like():
    """60 'addresses' 1790-2026 (every 4 years), a president per 2 addresses, topics
    drifting with time."""
    rng = np.random.default_rng(0)
    D, V = 60, 80
    years = 1790 + 4 * np.arange(D)
    presidents = np.array([f"P{i // 2:02d}" for i in range(D)])
    topics = rng.dirichlet(np.full(V, 0.1), size=K)
    t = (years - years.min()) / np.ptp(years)
    weights = np.column_stack([1 - t, 4 * t * (1 - t), t]) + 0.05
    theta = weights / weights.sum(axis=1, keepdims=True)
    counts = np.vstack([rng.multinomial(60, theta[d] @ topics) for d in range(D)])
    meta = pd.DataFrame({"year": years, "president": presidents})
    return Corpus(sp.csr_matrix(counts), vocabulary=[f"w{j}" for j in range(V)],
                  metadata=meta, name="tiny-sotu")


def _settings(**kw):
    base = {"n_topics": K, "vocabulary": 60, "max_iter": 6, "burn_in": 2,
            "optimize_every": 2, "evaluate_every": 3, "n_centers": 10, "rbf_width": 20.0,
            "last_year": 2011}
    base.update(kw)
    return KTMSettings(**base)


def test_sitting_presidents_fill_gaps_and_transitions():
    grid, who = sitting_presidents([1790, 1792, 1792, 1795], ["A", "A", "B", "C"], 1790,
                                   1796)
    assert grid.tolist() == list(range(1790, 1797))
    assert who.tolist() == ["A", "A", "B", "B", "B", "C", "C"]


def test_prepare_split_and_features(sotu_like):
    data = prepare_sotu(sotu_like, _settings(test_fraction=0.25), seed=3)
    assert data.corpus.n_docs == int((sotu_like.metadata.year <= 2011).sum()) == 56
    assert data.corpus.n_words <= 60
    assert data.test.size == 14 and np.intersect1d(data.train, data.test).size == 0
    again = prepare_sotu(sotu_like, _settings(test_fraction=0.25), seed=3)
    np.testing.assert_array_equal(again.test, data.test)
    F = data.dmr_features(data.years[:3], data.presidents[:3])
    assert F.shape == (3, 10 + data.speaker_names.size)
    np.testing.assert_array_equal(F[:, 10:].sum(axis=1), 1.0)
    G = data.ktm_features(data.years[:3], data.presidents[:3])
    np.testing.assert_array_equal(G[:, 0], data.years[:3])
    assert data.speaker_names[int(G[2, 1])] == data.presidents[2]


def test_protocol_lda_dmr(sotu_like, tmp_path):
    result = run_ktm_experiment(sotu_like, ["LDA", "DMR"], settings=_settings(), seed=0,
                                out=tmp_path)
    s = result.summary
    assert s["model"].tolist() == ["LDA", "DMR"]
    assert (s["heldout_perplexity"] > 1).all() and (s["final_train_perplexity"] > 1).all()
    assert (s["heldout_perplexity"] < 80).all()       # better than uniform over V <= 60... 80
    assert (s["seconds_per_iteration"] > 0).all()
    t = result.trajectory
    assert t.groupby("model")["iteration"].apply(list).to_dict() == {
        "DMR": [3, 6], "LDA": [3, 6]}
    assert t["native_perplexity"].notna().all()
    frame = result.over_time["DMR"]
    assert frame["year"].tolist() == list(range(1790, 2012))
    props = frame[[f"topic_{k}" for k in range(K)]].to_numpy()
    np.testing.assert_allclose(props.sum(axis=1), 1.0)
    assert len(result.labels["DMR"]) == K and "LDA" not in result.over_time
    text = summary_text(result)
    assert "NOT CHECKED" in text and "DMR / LDA" in text
    for name in ("ktm_trajectory.csv", "ktm_summary.csv", "ktm_summary.txt",
                 "ktm_perplexity.png", "ktm_topics_over_time_DMR.png",
                 "ktm_topics_over_time_DMR.csv"):
        assert (tmp_path / name).is_file(), name


def test_protocol_gdmr_uses_our_estimator(sotu_like):
    pytest.importorskip("tomotopy")
    result = run_ktm_experiment(sotu_like, ["GDMR"], settings=_settings(), seed=0)
    row = result.summary.iloc[0]
    assert row["model"] == "GDMR" and 1 < row["heldout_perplexity"] < 80
    t = result.trajectory
    assert t["iteration"].tolist() == [3, 6] and t["native_perplexity"].notna().all()
    props = result.over_time["GDMR"].filter(like="topic_").to_numpy()
    np.testing.assert_allclose(props.sum(axis=1), 1.0)


def test_unknown_model_raises(sotu_like):
    with pytest.raises(ValueError, match="unknown model"):
        run_ktm_experiment(sotu_like, ["CTM"], settings=_settings())


def test_cli_ktm(tmp_path, monkeypatch, sotu_like):
    import topiclink.datasets as datasets
    from topiclink.datasets.base import Dataset

    monkeypatch.setattr(datasets, "load_dataset",
                        lambda name=None, data_dir=None, **kw: Dataset(name="tiny-sotu",
                                                                       corpus=sotu_like))
    runner = CliRunner()
    out = tmp_path / "ktm"
    args = ["experiment", "ktm", "--dataset", "tiny-sotu", "--topics", "3", "--vocabulary",
            "60", "--iterations", "4", "--evaluate-every", "2", "--models", "LDA,DMR",
            "--out", str(out), "--quiet"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "held-out" in res.output and "NOT CHECKED" in res.output
    for name in ("ktm_trajectory.csv", "ktm_summary.csv", "ktm_summary.txt",
                 "ktm_perplexity.png", "ktm_topics_over_time_DMR.png"):
        assert (out / name).is_file(), name
    res = runner.invoke(app, args)
    assert res.exit_code != 0 and "--force" in res.output
    res = runner.invoke(app, ["experiment", "ktm", "--models", "XYZ", "--out",
                              str(tmp_path / "x")])
    assert res.exit_code != 0 and "unknown model" in res.output
