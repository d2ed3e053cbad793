"""Knowledge-graph model selection on the validation triples (select_kg_model and
``topiclink select-kg``)."""

from __future__ import annotations

import numpy as np
import pytest

from topiclink.datasets import load_dataset
from topiclink.experiments import candidate_grid, select_kg_model
from topiclink.experiments.evaluation import evaluate_triples
from topiclink.families.bpbfm.estimator_em import BilinearPoissonFactorModelEM
from topiclink.families.bpbfm.estimator_patterns import PatternPoissonFactorModel


@pytest.fixture(scope="module")
def umls(shared_datasets):
    return load_dataset("umls")


def _candidates():
    return candidate_grid(
        {"bpbfm-em": BilinearPoissonFactorModelEM(4, max_iter=4, random_state=0),
         "bpbfm-patterns": PatternPoissonFactorModel(4, max_iter=4, random_state=0)},
        {"n_topics": [2, 6], "patterns": ["none", "inverse"]})


def test_grid_labels_and_parameters():
    cands = _candidates()
    labels = [label for label, _ in cands]
    # "patterns" is not a parameter of the plain EM model: 2 + 2 x 2 candidates
    assert labels == ["bpbfm-em n_topics=2", "bpbfm-em n_topics=6",
                      "bpbfm-patterns n_topics=2 patterns=none",
                      "bpbfm-patterns n_topics=2 patterns=inverse",
                      "bpbfm-patterns n_topics=6 patterns=none",
                      "bpbfm-patterns n_topics=6 patterns=inverse"]
    assert cands[5][1].get_params()["patterns"] == "inverse"
    assert cands[5][1].get_params()["n_topics"] == 6


def test_the_best_validation_mrr_is_chosen_and_scored_once_on_test(umls):
    cands = _candidates()
    result = select_kg_model(umls, cands)
    table = result.table
    assert (table["status"] == "fitted").all() and len(table) == len(cands)
    # independent refits give the same validation MRRs (the fits are seeded), and the
    # chosen label is their argmax
    for label, est in cands[:2]:
        from sklearn.base import clone

        model = clone(est).fit(umls.tensor["train"])
        valid = evaluate_triples(model, umls, "valid")
        mrr = valid[(valid.metric == "mrr") & (valid.queries == "both")]["value"].iloc[0]
        assert table.set_index("candidate").loc[label, "valid_mrr"] == pytest.approx(mrr)
    assert result.best_label == table.loc[table["valid_mrr"].idxmax(), "candidate"]
    expected = evaluate_triples(result.best_model, umls, "test")
    assert result.test_mrr() == pytest.approx(
        expected[(expected.metric == "mrr") & (expected.queries == "both")]["value"].iloc[0])
    # the rules help on UMLS: a pattern model with inverse rules wins
    assert "patterns=inverse" in result.best_label


def test_budget_skips_the_rest_and_errors_are_one_line(umls, caplog):
    cands = _candidates()
    result = select_kg_model(umls, cands, budget_seconds=1e-9)
    assert result.table["status"].tolist() == ["fitted"] + ["skipped"] * (len(cands) - 1)
    assert result.best_label == cands[0][0]
    assert np.isnan(result.table["valid_mrr"].iloc[1])
    assert "5 of 6 candidates skipped" in caplog.text
    with pytest.raises(ValueError, match="budget_seconds must be > 0"):
        select_kg_model(umls, cands, budget_seconds=0)
    with pytest.raises(ValueError, match="labels must be distinct"):
        select_kg_model(umls, [cands[0], cands[0]])
    with pytest.raises(ValueError, match="no candidate"):
        candidate_grid({})
    cora = load_dataset("cora")
    with pytest.raises(ValueError, match="has no train triples"):
        select_kg_model(cora, cands)


def test_select_kg_command(umls, tmp_path):
    from typer.testing import CliRunner

    from topiclink.cli.app import app

    out = tmp_path / "selection.csv"
    result = CliRunner().invoke(app, ["select-kg", "--dataset", "umls", "--models",
                                      "bpbfm-em,bpbfm-patterns", "-k", "4", "--patterns",
                                      "none,inverse", "-n", "4", "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "3 candidates on umls" in result.output
    assert "chosen: bpbfm-patterns n_topics=4 patterns=inverse; test MRR" in result.output
    assert out.exists()
    bad = CliRunner().invoke(app, ["select-kg", "--dataset", "umls", "--models", "lda"])
    assert bad.exit_code != 0 and "not a knowledge-graph model" in bad.output
    bad = CliRunner().invoke(app, ["select-kg", "--dataset", "umls", "--patterns", "loops"])
    assert bad.exit_code != 0 and "'loops' is not one of" in bad.output


def test_select_kg_tries_constant_rules(umls):
    from typer.testing import CliRunner

    from topiclink.cli.app import app

    result = CliRunner().invoke(app, ["select-kg", "--dataset", "umls", "--models",
                                      "bpbfm-em,bpbfm-patterns", "-k", "4", "--patterns",
                                      "inverse", "--constant-rules", "0,5", "-n", "3",
                                      "--quiet"])
    assert result.exit_code == 0, result.output
    assert "3 candidates on umls" in result.output
    assert "patterns=inverse max_constant_rules=5" in result.output
    bad = CliRunner().invoke(app, ["select-kg", "--dataset", "umls", "--constant-rules",
                                   "-1"])
    assert bad.exit_code != 0 and "--constant-rules" in bad.output


def test_select_kg_chooses_the_iterations_on_validation(umls):
    from typer.testing import CliRunner

    from topiclink.cli.app import app

    result = CliRunner().invoke(app, ["select-kg", "--dataset", "umls", "--models",
                                      "bpbfm-em", "-k", "4", "-n", "2,5", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "2 candidates on umls" in result.output
    assert "bpbfm-em n_topics=4 max_iter=2" in result.output
    assert "bpbfm-em n_topics=4 max_iter=5" in result.output
    bad = CliRunner().invoke(app, ["select-kg", "--dataset", "umls", "-n", "0"])
    assert bad.exit_code != 0 and "--iterations" in bad.output
