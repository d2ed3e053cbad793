"""The protocol runner (experiments/runner.py) and the protocols built on it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from topiclink.datasets import make_lda_data, make_rtm_data
from topiclink.experiments import runner
from topiclink.experiments.runner import (
    Cell,
    build_model,
    cell_seed,
    fit_model,
    grid,
    register_model,
    run_grid,
    unregister_model,
    write_csv,
)


@pytest.fixture(scope="module")
def linked():
    (corpus, links), _ = make_rtm_data(n_docs=60, n_words=80, n_topics=3, doc_length=25,
                                       random_state=3)
    return corpus, links


def _lda_cell(cell: Cell, corpus) -> dict:
    """A module-level cell function (workers > 1 send it to other processes)."""
    model = build_model("LDA", {"n_topics": cell["K"], "max_iter": 3,
                                "random_state": cell.seed})
    fit_model(model, corpus)
    return {"K": cell["K"], "run": cell["run"], "seed": cell.seed,
            "ll": float(model.trace_["log_likelihood"][-1])}


def test_grid_order_and_dependent_axes():
    cells = grid({"fold": [0, 1], "model": ["a", "b"],
                  "c": lambda cell: [1.0, 2.0] if cell["model"] == "a" else [np.nan]})
    assert [(c["fold"], c["model"]) for c in cells] == [
        (0, "a"), (0, "a"), (0, "b"), (1, "a"), (1, "a"), (1, "b")]
    assert [c["c"] for c in cells[:2]] == [1.0, 2.0] and np.isnan(cells[2]["c"])


def test_cell_seed_depends_only_on_its_coordinates():
    a = cell_seed(0, {"fold": 1, "K": 5, "model": "x"}, ("fold", "K"))
    assert a == cell_seed(0, {"K": 5, "fold": 1, "model": "y"}, ("fold", "K"))
    assert 0 <= a < 2**63
    others = {cell_seed(0, {"fold": 0, "K": 5}), cell_seed(0, {"fold": 1, "K": 6}),
              cell_seed(1, {"fold": 1, "K": 5}), cell_seed(0, {"fold": 1, "K": 5})}
    assert len(others) == 4            # base seed and every coordinate matter
    assert cell_seed(0, {"c": 4.0}) == cell_seed(0, {"c": 4}) == cell_seed(0, {"c": np.int64(4)})
    assert cell_seed(0, {"c": 0.5}) == cell_seed(0, {"c": np.float64(0.5)})
    assert cell_seed(0, {"c": float("nan")}) == cell_seed(0, {"c": float("nan")})
    with pytest.raises(KeyError, match="seed axis 'run'"):
        cell_seed(0, {"fold": 0}, ("run",))


def test_run_grid_same_rows_for_any_workers_and_any_subset(tmp_path):
    corpus, _ = make_lda_data(n_docs=40, n_words=50, n_topics=3, doc_length=20,
                              random_state=1)
    cells = grid({"run": [0, 1], "K": [2, 3]})
    seq = run_grid(cells, _lda_cell, corpus, base_seed=7, csv_path=tmp_path / "a.csv")
    par = run_grid(cells, _lda_cell, corpus, base_seed=7, workers=2)
    pd.testing.assert_frame_equal(seq, par)
    assert list(seq["K"]) == [2, 3, 2, 3] and seq["seed"].nunique() == 4
    # one cell alone: the same seed and the same row as in the full grid
    alone = run_grid([{"run": 1, "K": 3}], _lda_cell, corpus, base_seed=7)
    pd.testing.assert_frame_equal(alone, seq.iloc[[3]].reset_index(drop=True))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "a.csv"), seq)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        run_grid(cells, _lda_cell, corpus, workers=0)


def test_write_csv_is_atomic_and_rows_are_rewritten(tmp_path):
    path = tmp_path / "sub" / "t.csv"
    write_csv([{"a": 1, "b": "x"}], path)
    assert path.read_text().splitlines() == ["a,b", "1,x"]
    sink = runner.CSVRows(path)
    sink.add({"a": 2, "b": "y"})
    sink.add({"a": 3, "b": "z"})
    assert pd.read_csv(path)["a"].tolist() == [2, 3]
    assert sorted(p.name for p in path.parent.iterdir()) == ["t.csv"]   # no temp files


class _NeedsLinks:
    fit_requires = ("X", "links")

    def fit(self, X, *, links):
        self.got = (X, links)
        return self


def test_build_model_by_paper_name_or_local_factory_and_fit_by_declaration():
    m = build_model("Gibbs-MMRTM", {"n_topics": 4, "c": 9.0},
                    {"evaluate_every": 0, "no_such_option": 1})
    assert (m.loss, m.weights, m.c, m.evaluate_every) == ("hinge", "diagonal", 9.0, 0)
    with pytest.raises(ValueError, match="has no parameter 'bogus'"):
        build_model("LDA", {"bogus": 1})
    with pytest.raises(ValueError, match="unknown model 'Nope'"):
        build_model("Nope")
    register_model("needs-links", _NeedsLinks, params=())
    try:
        assert "needs-links" in runner.model_names()
        model = build_model("needs-links", optional={"n_topics": 3})
        fit_model(model, "docs", links="edges", y="ignored")
        assert model.got == ("docs", "edges")
        with pytest.raises(ValueError, match="_NeedsLinks needs links"):
            fit_model(_NeedsLinks(), "docs")
    finally:
        unregister_model("needs-links")
    assert "needs-links" not in runner.model_names()
