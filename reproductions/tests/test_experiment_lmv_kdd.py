"""The hep-th (KDD) protocol of the LMV paper (Sec. 7.2) on a small synthetic time-stamped
corpus through the same code path (the real run is long: see the report in
benchmarks/results/experiments/)."""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.data.time_split import split_by_time
from topiclink.datasets import make_lmv_data
from topiclink.metrics import link_rank
from topiclink_reproductions.lmv_kdd import (
    PAPER,
    kdd_findings,
    run_lmv_kdd_experiment,
    summarise_kdd,
)
from topiclink_reproductions.paper_models import PaperModels


@pytest.fixture(scope="module")
def split():
    (corpus, links), truth = make_lmv_data(n_docs=240, n_words=60, n_topics=6,
                                           publication_time=True, random_state=0)
    t = truth.publication_time
    return split_by_time(corpus, links, t, float(np.quantile(t, 0.8)))


def _settings():
    return PaperModels.of(PAPER, stochastic={"batch_size": 80, "tol": 0.1, "max_iter": 6},
                          start={"n_iter": 10, "restarts": 1},
                          model_params={"Gibbs-gRTM": {"max_iter": 10},
                                        "RTM": {"max_iter": 20}})


def test_kdd_protocol_rows_outputs_and_claims(split, tmp_path):
    rows = []
    table = run_lmv_kdd_experiment(split, topics=(4, 6), etas=(0.5,),
                                   settings=_settings(), chunk_size=7, out=tmp_path,
                                   on_row=rows.append)
    assert len(table) == 10 == len(rows)
    assert set(table["model"]) == {"LMVS(t)", "LMVS", "PLLDA", "RTM", "Gibbs-gRTM"}
    assert (table["random_rank"] == (split.n_train + 1) / 2).all()
    np.testing.assert_allclose(table["improvement"],
                               1 - table["predictive_rank"] / table["random_rank"])
    assert (table["n_test_citations"] == split.test_citations.nnz).all()
    assert (table["cpu_seconds"] > 0).all()
    for name in ("lmv_kdd_results.csv", "lmv_kdd_summary.csv", "lmv_kdd_findings.md",
                 "lmv_kdd_figure7.png"):
        assert (tmp_path / name).is_file(), name
    lines = kdd_findings(table)
    assert any(line.startswith("LMVS(t) 73-83 % better than random") for line in lines)
    assert any(line.startswith("publication times help") for line in lines)
    assert any("best at K=20" in line for line in lines)
    assert len(summarise_kdd(table)) == 10


def test_chunked_rank_is_the_full_rank_and_times_are_used(split, monkeypatch):
    """The chunked rank (7 test papers per block) equals link_rank of the full score
    matrix; LMVS(t) is fitted with the training times (newer citations kept), LMVS
    without; both start from the same LDA."""
    import topiclink_reproductions.lmv_kdd as kdd

    fits: dict[str, dict] = {}
    models = {}
    real_fit, real_build = kdd.fit_model, kdd.build_model

    def fit(model, X, links=None, **options):
        fits[model.random_state, id(model)] = options
        return real_fit(model, X, links=links, **options)

    def build(name, required, optional):
        m = real_build(name, required, optional)
        models[len(models)] = (name, required.get("init_topics"), m)
        return m

    monkeypatch.setattr(kdd, "fit_model", fit)
    monkeypatch.setattr(kdd, "build_model", build)
    table = run_lmv_kdd_experiment(split, topics=(6,), etas=(0.5,),
                                   models=("LMVS(t)", "LMVS"), settings=_settings(),
                                   chunk_size=7)
    (_, s0, m0), (_, s1, _) = models[0], models[1]
    np.testing.assert_array_equal(s0, s1)
    opts = list(fits.values())
    assert opts[0]["newer_citations"] == "keep"
    np.testing.assert_array_equal(opts[0]["publication_time"], split.train_times)
    assert opts[1] == {}
    full = link_rank(m0.link_scores(split.test_corpus, direction="out"),
                     split.test_citations)
    assert table.loc[0, "predictive_rank"] == pytest.approx(full, rel=1e-12)


def test_unknown_model_is_refused(split):
    with pytest.raises(ValueError, match="not in the KDD protocol"):
        run_lmv_kdd_experiment(split, models=("LMV",))
