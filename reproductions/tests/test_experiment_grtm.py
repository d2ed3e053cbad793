"""The gRTM paper's protocol (topiclink_reproductions.grtm): default c, workers, fold
subsets, and its paper file's claims."""

from __future__ import annotations

import pandas as pd
import pytest

from topiclink.datasets import make_rtm_data


@pytest.fixture(scope="module")
def linked():
    (corpus, links), _ = make_rtm_data(n_docs=60, n_words=80, n_topics=3, doc_length=25,
                                       random_state=3)
    return corpus, links


def test_grtm_protocol_default_c_workers_and_fold_subsets(linked, tmp_path):
    from topiclink_reproductions.grtm import DEFAULT_C, GRTMSettings, run_grtm_experiment

    corpus, links = linked
    settings = GRTMSettings(max_iter=4, var_rtm_iter=3)
    kwargs = dict(topics=(2, 3), n_folds=3, settings=settings, random_state=5)
    models = ["Gibbs-gRTM", "Gibbs-RTM", "Var-RTM"]
    seq = run_grtm_experiment(corpus, links, models, csv_path=tmp_path / "g.csv", **kwargs)
    assert settings.alpha == 0.5
    assert list(seq.columns) == [
        "model", "K", "c", "fold", "link_rank", "word_rank", "auc", "pr_auc",
        "random_link_rank", "test_seconds", "train_seconds", "z_seconds", "lambda_seconds",
        "weights_seconds", "n_pairs"]
    assert len(seq) == 3 * 2 * 3
    c_of = seq.groupby("model")["c"].first()
    assert c_of["Gibbs-gRTM"] == DEFAULT_C["Gibbs-gRTM"] == 4.0
    assert c_of["Gibbs-RTM"] == DEFAULT_C["Gibbs-RTM"] > 4.0
    assert seq.loc[seq.model == "Var-RTM", "c"].isna().all()
    same = ["model", "K", "c", "fold", "link_rank", "word_rank", "auc", "n_pairs"]
    one = run_grtm_experiment(corpus, links, models, folds=[2], workers=2, **kwargs)
    pd.testing.assert_frame_equal(one[same],
                                  seq.loc[seq.fold == 2, same].reset_index(drop=True))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "g.csv")[same], seq[same])
    grid_c = run_grtm_experiment(corpus, links, ["Gibbs-RTM"], c_values=(1, 2),
                                 folds=[0], **kwargs)
    assert list(grid_c["c"]) == [1.0, 2.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="unknown model 'LDA'"):
        run_grtm_experiment(corpus, links, ["LDA"], **kwargs)
    with pytest.raises(ValueError, match="fold 7 is not in"):
        run_grtm_experiment(corpus, links, ["Gibbs-RTM"], folds=[7], **kwargs)
