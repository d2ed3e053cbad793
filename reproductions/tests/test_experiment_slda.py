"""The gSLDA / MedLDA protocol (topiclink_reproductions.slda): workers, the vSLDA baseline,
its paper file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from topiclink.datasets import make_slda_data


@pytest.fixture(scope="module")
def planted():
    return make_slda_data(n_docs=400, n_topics=5, random_state=0)


def test_experiment_configurations_in_processes_equal_sequential(planted):
    """``workers`` runs (model, K, c, run) configurations in processes: same rows, same
    order, as the sequential loop (only the timings may differ)."""
    from topiclink_reproductions.slda import SLDATask, run_slda_experiment

    (corpus, y), _ = planted
    task = SLDATask("planted", corpus.subset(range(150)), y[:150],
                    corpus.subset(range(150, 200)), y[150:200], np.array(["a", "b"]))
    kwargs = dict(topics=(3, 4), c_values=(1.0, 9.0), n_runs=2, max_iter=5)
    seq = run_slda_experiment(task, ["gSLDA", "LDA+SVM"], **kwargs)
    par = run_slda_experiment(task, ["gSLDA", "LDA+SVM"], workers=2, **kwargs)
    assert len(seq) == 2 * 2 * (2 + 1)
    same = ["model", "K", "c", "run", "accuracy", "n_iter"]
    pd.testing.assert_frame_equal(seq[same], par[same])
    with pytest.raises(ValueError, match="workers must be >= 1"):
        run_slda_experiment(task, ["gSLDA"], workers=0, **kwargs)


def test_slda_experiment_runs_vslda_as_a_baseline(planted, caplog):
    """vSLDA rows (one per c) with n_iter and seconds per iteration; skipped, with a
    warning, on a multiclass task."""
    from topiclink_reproductions.slda import SLDATask, run_slda_experiment

    (corpus, y), _ = planted
    task = SLDATask("planted", corpus.subset(range(100)), y[:100],
                    corpus.subset(range(100, 140)), y[100:140], np.array(["a", "b"]))
    table = run_slda_experiment(task, ["gSLDA", "vSLDA"], topics=(3,), c_values=(1.0, 4.0),
                                max_iter=4)
    assert list(table["model"]) == ["gSLDA", "gSLDA", "vSLDA", "vSLDA"]
    assert list(table["c"]) == [1.0, 4.0, 1.0, 4.0]
    assert table["n_iter"].between(1, 4).all() and (table["seconds_per_iteration"] > 0).all()
    np.testing.assert_allclose(table["seconds_per_iteration"],
                               table["train_seconds"] / table["n_iter"])
    multi = SLDATask("three", task.train, np.arange(100) % 3, task.test,
                     np.arange(40) % 3, np.array(["a", "b", "c"]))
    with caplog.at_level("WARNING", logger="topiclink_reproductions.slda"):
        table = run_slda_experiment(multi, ["vSLDA"], topics=(3,), max_iter=2)
    assert table.empty and "vSLDA is binary only" in caplog.text
