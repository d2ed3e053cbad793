"""The LMV protocols' shared start (topiclink_reproductions.lmv): the models of one cell
start from one fitted LDA."""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.datasets import make_lmv_data
from topiclink_reproductions.paper_models import PaperModels


@pytest.fixture(scope="module")
def small():
    return make_lmv_data(n_docs=120, n_words=60, n_topics=6, random_state=3)


def test_the_models_of_a_cell_share_their_start(small, monkeypatch):
    """Cora protocol (and the simulation's, same helper): LMV, LMVS, PLLDA, RTM and LDA+Reg
    of one (fold, K, eta) get the same ``init_topics`` (one fitted LDA); another eta gets
    another; RTM has variational topics and tol 1e-5; the batch cap is raised."""
    import topiclink_reproductions.lmv as proto

    (corpus, links), _ = small
    seen: list[tuple[str, float, np.ndarray, dict]] = []
    real = proto.build_model

    def spy(name, required, optional):
        seen.append((name, required["topic_word_prior"], required.get("init_topics"),
                     {**optional, **required}))
        return real(name, required, optional)

    monkeypatch.setattr(proto, "build_model", spy)
    batch = {m: {"max_iter": 3} for m in ("LMV", "PLLDA", "RTM", "LDA+Reg")}
    settings = PaperModels.of(proto.PAPER, start={"n_iter": 10, "restarts": 1},
                              model_params={**batch, "LMVS": {"max_iter": 2}})
    table = proto.run_lmv_experiment((corpus, links), folds=2, only_folds=[0], topics=(6,),
                                     etas=(0.5, 0.1),
                                     models=("LMV", "LMVS", "PLLDA", "RTM", "LDA+Reg"),
                                     settings=settings)
    assert len(seen) == 10 and {"converged", "stop_reason"} <= set(table.columns)
    for eta in (0.5, 0.1):
        starts = [s for _, e, s, _ in seen if e == eta]
        assert all(s is not None for s in starts)
        for s in starts[1:]:
            np.testing.assert_array_equal(s, starts[0])
    one = [s for _, e, s, _ in seen if e == 0.5][0]
    other = [s for _, e, s, _ in seen if e == 0.1][0]
    assert not np.array_equal(one, other)
    params = {name: p for name, e, _, p in seen if e == 0.5}
    assert params["Var-RTM"]["topic_inference"] == "variational"
    assert params["Var-RTM"]["tol"] == 1e-5
    assert params["LMV"]["max_iter"] == 3 and params["LDA+Reg"]["max_iter"] == 3
    assert not table.loc[table["model"] == "LMV", "converged"].any()
