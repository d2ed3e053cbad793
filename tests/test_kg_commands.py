"""A knowledge-graph model is queried and judged with the ordinary verbs: the API
(``suggest_tails`` / ``suggest_heads``, the filtered ``evaluate_triples``) against dense
and hand computations, and ``topiclink suggest`` / ``topiclink evaluate`` on UMLS."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.data.checks import DataError
from topiclink.data.tensor import RelationalTensor
from topiclink.datasets.base import Dataset
from topiclink.estimators.capabilities import EntityFactorsMixin
from topiclink.experiments.evaluation import evaluate_model, evaluate_triples
from topiclink.families.bpbfm.estimator_em import BilinearPoissonFactorModelEM

runner = CliRunner()


def _one_line_error(result, *says: str) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    for word in says:
        assert word in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------------- a planted tensor
def _planted() -> RelationalTensor:
    """Two blocks of 4 entities; relation 'in' links within a block, 'out' across."""
    rng = np.random.default_rng(0)
    names = [f"e{i}" for i in range(8)]
    rows = []
    for h in range(8):
        for t in range(8):
            same = (h < 4) == (t < 4)
            if h != t and rng.random() < 0.7:
                rows.append((names[h], "in" if same else "out", names[t]))
    return RelationalTensor.from_dataframe(pd.DataFrame(rows, columns=["head", "relation",
                                                                       "tail"]))


@pytest.fixture(scope="module")
def planted():
    tensor = _planted()
    model = BilinearPoissonFactorModelEM(2, max_iter=20, random_state=0).fit(tensor)
    N, R = tensor.n_entities, tensor.n_relations
    h, r, t = np.meshgrid(np.arange(N), np.arange(R), np.arange(N), indexing="ij")
    dense = model.predict_proba(h.ravel(), r.ravel(), t.ravel()).reshape(N, R, N)
    return model, tensor, dense


def test_suggestions_are_the_argsort_of_the_dense_scores(planted):
    model, tensor, dense = planted
    names = np.asarray(model.entity_names_)
    for h in range(tensor.n_entities):
        for r in range(tensor.n_relations):
            table = model.suggest_tails(names[h], model.relation_names_[r], top=3)
            expected = np.argsort(-dense[h, r], kind="stable")[:3]
            assert list(table.columns) == ["rank", "entity", "name", "score", "probability"]
            assert table["rank"].tolist() == [1, 2, 3]
            assert table["entity"].tolist() == expected.tolist()
            assert table["name"].tolist() == names[expected].tolist()
            np.testing.assert_allclose(table["score"], dense[h, r, expected], rtol=1e-12)
            # the scores of these models are the triples' probabilities
            np.testing.assert_allclose(table["probability"], model.predict_proba(
                np.full(3, h), np.full(3, r), expected), rtol=1e-12)
            heads = model.suggest_heads(r, h, top=tensor.n_entities)      # by index
            assert heads["entity"].tolist() == np.argsort(-dense[:, r, h],
                                                          kind="stable").tolist()


def test_exclude_removes_exactly_the_known_answers(planted):
    model, tensor, dense = planted
    N = tensor.n_entities
    known = set(zip(tensor.heads.tolist(), tensor.relations.tolist(), tensor.tails.tolist(),
                    strict=True))
    for h in range(N):
        for r in range(tensor.n_relations):
            table = model.suggest_tails(h, r, top=N, exclude=tensor)
            kept = [e for e in np.argsort(-dense[h, r], kind="stable").tolist()
                    if (h, r, e) not in known]
            assert table["entity"].tolist() == kept
            assert table["rank"].tolist() == list(range(1, len(kept) + 1))
            heads = model.suggest_heads(r, h, top=N, exclude=tensor)
            assert set(heads["entity"]) == {e for e in range(N) if (e, r, h) not in known}
    # (heads, relations, tails) by name; a name the model lacks cannot be excluded
    some = model.suggest_tails("e0", "in", top=N)["name"].tolist()
    table = model.suggest_tails("e0", "in", top=N,
                                exclude=(["e0", "e0", "zz"], ["in", "in", "in"],
                                         [some[0], some[2], "e1"]))
    assert table["name"].tolist() == [some[1], *some[3:]]


def test_bad_queries_are_one_line_errors(planted):
    model, tensor, _ = planted
    with pytest.raises(DataError, match=r"^head: unknown name 'e00' .*did you mean 'e0"):
        model.suggest_tails("e00", "in")
    with pytest.raises(DataError, match=r"^relation: unknown name 'ot' .*did you mean 'out'"):
        model.suggest_heads("ot", "e1")
    with pytest.raises(ValueError, match="top must be an integer >= 1, got 0"):
        model.suggest_tails("e0", "in", top=0)
    with pytest.raises(DataError, match=r"exclude: tail index 99 is not in \[0, 8\)"):
        model.suggest_tails(0, 0, exclude=([0], [0], [99]))
    with pytest.raises(TypeError, match=r"tuple\(array.T\)"):
        model.suggest_tails(0, 0, exclude=np.zeros((4, 3), dtype=int))


# ---------------------------------------------------------------------- a hand computation
class _Fixed(EntityFactorsMixin):
    """Three entities a, b, c and one relation r: score(h, r, t) = S[h, t]."""

    S = np.array([[0.1, 0.9, 0.5],
                  [0.4, 0.2, 0.8],
                  [0.7, 0.3, 0.6]])
    entity_names_ = np.array(["a", "b", "c"])
    relation_names_ = np.array(["r"])
    embedding_ = np.ones((3, 1))

    def _check_fitted(self) -> None:
        pass

    def _triple_proba(self, h, r, t):
        return self.S[h, t]

    def _scores(self, h, r, t, axis):
        return self.S[h[0]].copy() if axis == "tail" else self.S[:, t[0]].copy()


def test_filtered_mrr_of_a_three_entity_example_by_hand(caplog):
    # the data name its entities in another order, and one the model does not know
    names = np.array(["c", "zz", "a", "b"])
    at = {n: i for i, n in enumerate(names)}

    def tensor(*triples):
        h, t = ([at[x[i]] for x in triples] for i in (0, 2))
        return RelationalTensor(np.array(h), np.zeros(len(h), dtype=int), np.array(t),
                                np.ones(len(h)), 4, 1, names, np.array(["r"]))

    ds = Dataset(name="toy", tensor={"train": tensor(("a", "r", "b")),
                                     "test": tensor(("a", "r", "c"), ("b", "r", "a"),
                                                    ("a", "r", "zz"))})
    with caplog.at_level(logging.WARNING, logger="topiclink"):
        table = evaluate_model(_Fixed(), ds)
    assert "1 of the 3 test triples name an entity or relation the model does not know: " \
           "ranked last (rank 3" in caplog.text
    # tails: (a, r, ?) b filtered, c above a -> 1; (b, r, ?) c above a -> 2; zz last -> 3
    # heads: (?, r, c) b and c above a -> 3; (?, r, a) c above b -> 2; zz last -> 3
    tail, head = np.array([1, 2, 3]), np.array([3, 2, 3])
    value = table.set_index(["metric", "queries"])["value"]
    assert value["mrr", "tail"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3, abs=1e-15)
    assert value["mrr", "head"] == pytest.approx((1 / 3 + 1 / 2 + 1 / 3) / 3, abs=1e-15)
    assert value["mrr", "both"] == pytest.approx(np.mean(1 / np.r_[tail, head]), abs=1e-15)
    assert value["mrr", "both"] == pytest.approx(0.5, abs=1e-15)
    assert value["hits_at_1", "tail"] == pytest.approx(1 / 3)
    assert value["hits_at_1", "head"] == 0.0
    assert value["hits_at_3", "both"] == 1.0
    assert set(table["split"]) == {"test"} and set(table["triples"]) == {3}
    with pytest.raises(ValueError, match="no valid triples"):
        evaluate_triples(_Fixed(), ds, "valid")
    with pytest.raises(ValueError, match="'test' .* or 'valid', got 'all'"):
        evaluate_model(_Fixed(), ds, documents="all")


# ---------------------------------------------------------------------- the commands, UMLS
@pytest.fixture(scope="module")
def umls_model(tmp_path_factory, shared_datasets) -> Path:
    out = tmp_path_factory.mktemp("kg") / "umls.npz"
    result = runner.invoke(app, ["fit", "bpbfm", "--dataset", "umls", "-k", "5", "-n", "5",
                                 "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _table(output: str, header: str) -> pd.DataFrame:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == header.split()[:2])
    rows = []
    for line in lines[start + 1:]:
        if len(line.split()) != len(header.split()):
            break                                  # the table ends ("written FILE")
        rows.append(line.split())
    return pd.DataFrame(rows, columns=header.split())


def test_suggest_tails_and_heads_on_umls(umls_model):
    from topiclink.datasets import load_dataset
    from topiclink.estimators.base import load

    model, train = load(umls_model), load_dataset("umls").tensor["train"]
    result = runner.invoke(app, ["suggest", str(umls_model), "--head", "virus",
                                 "--relation", "location_of", "--top", "4"])
    assert result.exit_code == 0, result.output
    assert "top tails of ('virus', 'location_of', ?)" in result.output
    assert "nothing left out" in result.output
    shown = _table(result.output, "rank entity name score probability")
    assert shown["name"].tolist() == model.suggest_tails("virus", "location_of",
                                                         4)["name"].tolist()
    # filtered by the training triples: none of them is listed, and it says how many
    result = runner.invoke(app, ["suggest", str(umls_model), "--tail", "virus",
                                 "--relation", "location_of", "--top", "200", "--dataset",
                                 "umls"])
    assert result.exit_code == 0, result.output
    h, r, t = model.model_indices(train)
    known = set(h[(r == list(model.relation_names_).index("location_of"))
                  & (t == list(model.entity_names_).index("virus"))].tolist())
    assert known and f"{len(known)} known heads left out (those in umls's 5216 training " \
                     "triples)" in result.output
    shown = _table(result.output, "rank entity name score probability")
    assert len(shown) == 135 - len(known)
    assert not known & set(shown["entity"].astype(int))


def test_evaluate_a_kg_model_on_umls(umls_model, tmp_path):
    from topiclink.datasets import load_dataset
    from topiclink.estimators.base import load

    out = tmp_path / "eval.csv"
    result = runner.invoke(app, ["evaluate", str(umls_model), "--dataset", "umls", "--out",
                                 str(out)])
    assert result.exit_code == 0, result.output
    shown = _table(result.output, "metric queries value split triples")
    assert len(shown) == 12 and set(shown["queries"]) == {"tail", "head", "both"}
    expected = evaluate_triples(load(umls_model), load_dataset("umls"), "test")
    written = pd.read_csv(out)
    assert list(written.columns[:3]) == ["model_file", "estimator", "dataset"]
    np.testing.assert_allclose(written["value"], expected["value"], rtol=1e-12)
    assert shown["value"].astype(float).tolist() == expected["value"].round(3).tolist()
    assert set(written["triples"]) == {661}
    valid = runner.invoke(app, ["evaluate", str(umls_model), "--dataset", "umls",
                                "--subset", "valid"])
    assert valid.exit_code == 0, valid.output
    assert set(_table(valid.output, "metric queries value split triples")["triples"]) \
        == {"652"}


def test_bad_kg_commands_are_one_line_errors(umls_model, tmp_path):
    model = str(umls_model)
    _one_line_error(runner.invoke(app, ["suggest", model, "--head", "virsu", "--relation",
                                        "location_of"]),
                    "unknown name 'virsu'", "did you mean 'virus'?")
    _one_line_error(runner.invoke(app, ["suggest", model, "--text", "virus"]),
                    "knowledge-graph model", "--head H --relation R")
    _one_line_error(runner.invoke(app, ["suggest", model]),
                    "knowledge-graph model: give --head H --relation R")
    _one_line_error(runner.invoke(app, ["suggest", model, "--head", "virus"]),
                    "a knowledge-graph query is --head H --relation R")
    _one_line_error(runner.invoke(app, ["suggest", model, "--head", "virus", "--relation",
                                        "location_of", "--text", "virus"]), "not both")
    _one_line_error(runner.invoke(app, ["suggest", model, "--head", "virus", "--relation",
                                        "location_of", "--direction", "in"]),
                    "--direction is for a link model's", "heads with --tail T")
    _one_line_error(runner.invoke(app, ["suggest", model, "--head", "virus", "--relation",
                                        "location_of", "--dataset", "cora-linqs"]),
                    "no training triples to leave out")
    texts = tmp_path / "texts.txt"
    texts.write_text("graph topic\nmodel words\n")
    _one_line_error(runner.invoke(app, ["evaluate", model, "--input", str(texts)]),
                    "evaluated on triples", "--dataset NAME or --data DIR")
    _one_line_error(runner.invoke(app, ["evaluate", model, "--dataset", "umls", "--subset",
                                        "all"]), "test (auto) or valid")


def test_a_link_model_refuses_a_kg_query(tmp_path):
    from topiclink.data import Links
    from topiclink.data.io import corpus_from_texts
    from topiclink.estimators.base import registered_estimators

    texts = [f"graph topic model citation {'linked' if i % 2 else 'words'}"
             for i in range(10)]
    rtm = registered_estimators()["RelationalTopicModel"](n_topics=2, max_iter=2,
                                                          random_state=0)
    links = Links.from_pairs(np.array([(i, (i + 1) % 10) for i in range(10)]), 10)
    path = rtm.fit(corpus_from_texts(texts, min_df=1), links=links).save(tmp_path / "r.npz")
    _one_line_error(runner.invoke(app, ["suggest", str(path), "--head", "a", "--relation",
                                        "r"]), "has no entities", "give the query "
                                                                  "documents as --text")
    assert runner.invoke(app, ["suggest", str(path), "--text", "graph topic"]).exit_code == 0
    (tmp_path / "texts.txt").write_text("graph topic\n")
    _one_line_error(runner.invoke(app, ["evaluate", str(path), "--input",
                                        str(tmp_path / "texts.txt"), "--subset", "valid"]),
                    "--subset valid is for a knowledge-graph model's triples")


def test_fit_prints_the_validation_metrics(shared_datasets, tmp_path):
    import re

    from topiclink.datasets import load_dataset
    from topiclink.estimators.base import load

    out = tmp_path / "em.npz"
    result = runner.invoke(app, ["fit", "bpbfm-em", "--dataset", "umls", "-k", "5", "-n",
                                 "5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    found = re.search(r"valid triples \(652\): filtered MRR ([0-9.]+) \(tails ([0-9.]+), "
                      r"heads ([0-9.]+)\), Hits@10 ([0-9.]+)", result.output)
    assert found, result.output
    table = evaluate_triples(load(out), load_dataset("umls"), "valid")
    keys = zip(table["metric"], table["queries"], strict=True)
    value = dict(zip(keys, table["value"], strict=True))
    expected = [value["mrr", "both"], value["mrr", "tail"], value["mrr", "head"],
                value["hits_at_10", "both"]]
    assert [float(x) for x in found.groups()] == [round(v, 3) for v in expected]
