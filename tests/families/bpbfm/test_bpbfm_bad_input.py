"""Bad input around the BPBFM estimator, each a one-line error naming where it is:
unknown names in test triples, malformed triple files (with a count column), bad counts
in a DataFrame or graph, relations without data, too few factors."""

from __future__ import annotations

import logging

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from topiclink.data.checks import DataError
from topiclink.data.io import read_triples
from topiclink.data.tensor import RelationalTensor
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel

TRIPLES = pd.DataFrame({"head": ["a", "b", "c", "a", "d"],
                        "relation": ["likes", "likes", "hates", "hates", "likes"],
                        "tail": ["b", "c", "a", "c", "a"]})


def _one_line(info: pytest.ExceptionInfo) -> str:
    msg = str(info.value)
    assert "\n" not in msg, msg
    return msg


@pytest.fixture(scope="module")
def model():
    tensor = RelationalTensor.from_dataframe(TRIPLES)
    return BilinearPoissonFactorModel(2, max_iter=4, burn_in=1, random_state=0).fit(tensor)


# ---------------------------------------------------------------------- (a) test triples
def test_unknown_names_in_test_triples_name_the_triple(model):
    p = model.predict_proba(["a", "b"], ["likes", "hates"], ["b", "c"])
    assert p.shape == (2,) and ((p > 0) & (p < 1)).all()
    heads, rels, tails = ["a", "b", "c", "a"], ["likes"] * 4, ["b", "c", "a", "zz"]
    with pytest.raises(DataError, match=r"^triple 3 \('a', 'likes', 'zz'\): unknown tail "
                                        r"'zz' \(not one of the model's 4 entities") as info:
        model.predict_proba(heads, rels, tails)
    _one_line(info)
    # the first bad triple, its first bad part; the number of bad triples
    with pytest.raises(DataError, match=r"^triple 1 \('q', 'x', 'b'\): unknown head 'q'.*"
                                        r"2 bad triples in all$") as info:
        model.predict_proba(["a", "q", "b"], ["likes", "x", "x"], ["b", "b", "c"])
    _one_line(info)
    with pytest.raises(DataError, match=r"^triple 0 \('a', 'loves', 'b'\): unknown relation "
                                        r"'loves' \(not one of the model's 2 relations"):
        model.predict_proba(["a"], ["loves"], ["b"])
    # indices out of range
    with pytest.raises(DataError, match=r"^triple 1 \(1, 5, 1\): relation index 5 is not in "
                                        r"\[0, 2\)$"):
        model.predict_proba([0, 1], [0, 5], [1, 1])
    with pytest.raises(DataError, match=r"^triple 0 \(-1, 0, 1\): head index -1"):
        model.predict_proba(np.array([-1]), np.array([0]), np.array([1]))
    with pytest.raises(ValueError, match="same length, got 1, 2 and 1"):
        model.predict_proba(["a"], ["likes", "hates"], ["b"])


def test_unknown_names_in_score_queries(model):
    assert model.score_tails("a", "likes").shape == (4,)
    with pytest.raises(DataError, match=r"^head: unknown name 'zz' \(not one of the model's "
                                        r"4 entities") as info:
        model.score_tails("zz", "likes")
    _one_line(info)
    with pytest.raises(DataError, match=r"^relation: unknown name 'nope'.*2 relations"):
        model.score_heads("nope", "a")
    with pytest.raises(DataError, match=r"^tail: tail index 9 is not in \[0, 4\)$"):
        model.score_heads(0, 9)


# ---------------------------------------------------------------------- (b) triple files
def _write(path, text):
    path.write_text(text)
    return path


def test_triple_file_with_counts(tmp_path, caplog):
    p = _write(tmp_path / "train.txt", "a\tr\tb\t3\nb\tr\tc\t1\nc\ts\ta\t0\nc\ts\tb\t2.0\n")
    caplog.set_level(logging.INFO, logger="topiclink")
    t = read_triples([p])["train"]
    assert t.values.tolist() == [3.0, 1.0, 2.0]
    assert t.relation_names.tolist() == ["r", "s"]
    assert "train.txt: dropped 1 triples with count 0" in caplog.text
    m = BilinearPoissonFactorModel(2, max_iter=3, burn_in=1, random_state=0).fit(t)
    assert m.binary_ is False
    # three fields: ones, as before
    assert (read_triples([_write(tmp_path / "train.txt", "a\tr\tb\n")])["train"].values
            == 1).all()


@pytest.mark.parametrize(("line", "message"), [
    ("c\tr\ta\t-2", r"count '-2' \(4th field\) is negative"),
    ("c\tr\ta\tnan", r"count 'nan' \(4th field\) is missing \(NaN\)"),
    ("c\tr\ta\tinf", r"count 'inf' \(4th field\) is not finite"),
    ("c\tr\ta\t1.5", r"count '1.5' \(4th field\) is not an integer"),
    ("c\tr\ta\tmany", r"count 'many' \(4th field\) is not a number"),
    ("c\tr\ta\t", r"empty count"),
    ("c\tr", r"expected 3 or 4 '\\t'-separated fields .*found 2"),
    ("c\tr\ta\t1\tx", r"expected 3 or 4 .*found 5"),
    ("c\tr\ta", r"3 fields, but line 1 has 4"),
])
def test_bad_triple_file_lines_name_file_and_line(tmp_path, line, message):
    p = _write(tmp_path / "train.txt", f"a\tr\tb\t1\n\nb\tr\tc\t2\n{line}\n")
    with pytest.raises(DataError, match=r"train\.txt:4: " + message) as info:
        read_triples([p])
    assert str(tmp_path) in _one_line(info)


def test_triple_file_of_zero_counts_only(tmp_path):
    p = _write(tmp_path / "train.txt", "a\tr\tb\t0\n")
    with pytest.raises(DataError, match=r"train\.txt: no triple with a count > 0"):
        read_triples([p])


# ---------------------------------------------------------------------- (c) DataFrame
def test_dataframe_bad_counts_name_the_row():
    df = TRIPLES.assign(n=[1, 2, -1, 1, 1])
    with pytest.raises(DataError, match=r"^row 2: count \('n'\) -1 is negative$") as info:
        RelationalTensor.from_dataframe(df, value="n")
    _one_line(info)
    df = TRIPLES.assign(n=[1.0, np.nan, 2.0, 1.0, 1.0]).set_index(pd.Index(list("vwxyz")))
    with pytest.raises(DataError, match=r"^row 1 \(index 'w'\): count \('n'\) is missing "
                                        r"\(NaN\)$"):
        RelationalTensor.from_dataframe(df, value="n")
    df = TRIPLES.assign(n=[1, 1, 1, 1, np.inf])
    with pytest.raises(DataError, match=r"^row 4: count \('n'\) inf is not finite$"):
        RelationalTensor.from_dataframe(df, value="n")
    g = nx.MultiDiGraph()
    g.add_edge("a", "b", relation="likes", n=1)
    g.add_edge("b", "c", relation="likes", n=-3)
    with pytest.raises(DataError, match=r"^edge 1 \('b' -> 'c'\): count \('n'\) -3 is "
                                        r"negative$"):
        RelationalTensor.from_networkx(g, value="n")
    # the constructor itself names the entry
    with pytest.raises(DataError, match=r"^triple 1: value nan is not a finite count"):
        RelationalTensor([0, 1], [0, 0], [1, 0], [1.0, np.nan], 2, 1)


# ---------------------------------------------------------------------- (d) empty relation
def test_relation_without_triples_is_named(caplog):
    t = RelationalTensor.from_dataframe(TRIPLES, relations=["likes", "hates", "loves",
                                                            "owns"])
    np.testing.assert_array_equal(t.empty_relations(), [2, 3])
    with pytest.raises(DataError, match=r"^fit: relation 'loves' \(index 2\) has no triple "
                                        r".*2 of 4 relations are empty: 'loves', 'owns'$"):
        t.check_relations_nonempty("fit")
    full = RelationalTensor.from_dataframe(TRIPLES)
    full.check_relations_nonempty("fit")                      # every relation has data
    # a relation whose only triples are held out: a warning, not an error
    hates = np.flatnonzero(full.relations == list(full.relation_names).index("hates"))
    held = full.hold_out(np.column_stack([full.heads, full.relations, full.tails])[hates])
    np.testing.assert_array_equal(held.empty_relations(), [0])
    caplog.set_level(logging.WARNING, logger="topiclink")
    held.check_relations_nonempty("fit")
    assert "fit: 1 of 2 relations have no observed nonzero triple" in caplog.text
    assert "'hates'" in caplog.text
    # zeros listed explicitly are not data either
    zeros = RelationalTensor([0, 1], [0, 1], [1, 0], [1.0, 0.0], 2, 2)
    with pytest.raises(DataError, match=r"relation '1' \(index 1\)"):
        zeros.check_relations_nonempty()


def test_fit_refuses_a_relation_without_triples():
    t = RelationalTensor.from_dataframe(TRIPLES, relations=["likes", "hates", "loves"])
    with pytest.raises(DataError, match=r"relation 'loves'"):
        BilinearPoissonFactorModel(2, max_iter=2, burn_in=1).fit(t)


# ---------------------------------------------------------------------- (e) n_topics
@pytest.mark.parametrize("k", [0, 1, -3, 2.5, True])
def test_too_few_factors_one_line(k):
    t = RelationalTensor.from_dataframe(TRIPLES)
    with pytest.raises(ValueError, match=r"^BilinearPoissonFactorModel: n_topics must be "
                                         r"an integer >= 2, got ") as info:
        BilinearPoissonFactorModel(k).fit(t)
    _one_line(info)
    with pytest.raises(ValueError, match=r"n_dictionary must be .*got 0") as info:
        BilinearPoissonFactorModel(2, n_dictionary=0).fit(t)
    _one_line(info)
