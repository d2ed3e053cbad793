"""The glossary of parameters (``topiclink.parameters``) and the shared configs.

The glossary's forms are those the estimators validated with before it (same one-line
errors).  0.1.0 ships without the names of before the glossary: an old name
(``n_components``, ``parallel``) is refused like any unknown parameter, by the
constructor, ``set_params``, the CLI and ``topiclink.load``.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

import topiclink
from topiclink.data.checks import N_TOPICS, PRIOR
from topiclink.datasets import make_bpbfm_data
from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
from topiclink.parameters import (
    ALIASES,
    GLOSSARY,
    glossary_table,
    shared,
)


@pytest.fixture(scope="module")
def tensor():
    return make_bpbfm_data(20, 2, 2, random_state=0, density=0.1)[0]


# ---------------------------------------------------------------------- the glossary
def test_glossary_forms_are_the_ones_the_estimators_used():
    assert [f.describe() for f in GLOSSARY["n_topics"].forms] == [f.describe()
                                                                  for f in N_TOPICS]
    assert GLOSSARY["doc_topic_prior"].describe() == " or ".join(f.describe() for f in PRIOR)
    assert GLOSSARY["max_iter"].describe() == "an integer >= 1"
    assert GLOSSARY["step_v"].describe() == "a finite number > 0.5 and <= 1"
    table = shared("n_topics", "max_iter")
    assert list(table) == ["n_topics", "max_iter"]
    table["max_iter"].append(None)                       # a fresh list every time
    assert len(shared("max_iter")["max_iter"]) == 1
    with pytest.raises(KeyError, match="inference"):
        shared("inference")                              # forms left to each family
    with pytest.raises(KeyError):
        shared("no_such_parameter")


def test_every_entry_has_a_doc_and_no_alias_is_a_glossary_name():
    for entry in GLOSSARY.values():
        assert entry.doc.endswith(".") and entry.group, entry.name
    assert not set(ALIASES) & set(GLOSSARY)
    assert set(ALIASES.values()) <= set(GLOSSARY)
    assert ALIASES["n_components"] == "n_topics"         # a spelling no signature uses
    assert "| `n_topics` | an integer >= 2 | K |" in glossary_table()


# ---------------------------------------------------------------------- old names
def test_old_parameter_names_fail_like_any_unknown_name():
    """No renamed-parameter layer: Python's TypeError, scikit-learn's ValueError."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'n_components'"):
        BilinearPoissonFactorModel(n_components=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'parallel'"):
        topiclink.LDA(parallel="adlda")
    with pytest.raises(ValueError, match="Invalid parameter 'n_components'"):
        BilinearPoissonFactorModel().set_params(n_components=3)


def test_the_synthetic_generator_takes_n_topics():
    _, truth = make_bpbfm_data(20, 2, n_topics=3, random_state=0, density=0.1)
    assert truth.n_topics == 3
    with pytest.raises(ValueError, match="n_topics must be >= 2"):
        make_bpbfm_data(20, 2, n_topics=1)


def _rewrite_params(path, out, edit):
    """A copy of a model file with its header's parameters edited the way the loader
    reads them (the JSON member ``__header__``)."""
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files}
    header = json.loads(arrays.pop("__header__").tobytes().decode("utf-8"))
    header["params"] = edit(header["params"])
    buffer = io.BytesIO()
    np.savez(buffer, __header__=np.frombuffer(json.dumps(header).encode("utf-8"),
                                              dtype=np.uint8), **arrays)
    out.write_bytes(buffer.getvalue())
    return out


def test_a_model_file_with_an_old_parameter_name_is_refused(tensor, tmp_path):
    model = BilinearPoissonFactorModel(n_topics=2, max_iter=3, burn_in=1,
                                       random_state=0).fit(tensor)
    saved = model.save(tmp_path / "new.npz", full=True)

    def rename(params):
        params["n_components"] = params.pop("n_topics")
        return params

    old = _rewrite_params(saved, tmp_path / "old.npz", rename)
    with pytest.raises(ValueError, match="unknown parameter 'n_components' for "
                       "BilinearPoissonFactorModel"):
        topiclink.load(old)


def test_the_cli_option_is_topics_and_components_is_no_option():
    from typer.testing import CliRunner

    from topiclink.cli.app import app

    runner = CliRunner()
    result = runner.invoke(app, ["fit", "bpbfm", "--help"])
    assert "--topics" in result.output and "--components" not in result.output
    result = runner.invoke(app, ["fit", "bpbfm", "--components", "3", "--dataset", "nations"])
    assert result.exit_code == 2 and "No such option: --components" in result.output


# ---------------------------------------------------------------------- shared configs
def test_the_step_size_schedule_is_built_from_the_glossary_names():
    from topiclink.parameters import RobbinsMonro

    bp = BilinearPoissonFactorModel(step_a2=3.0, step_v=0.6)
    assert RobbinsMonro.from_params(bp.get_params()) == RobbinsMonro(1.0, 3.0, 0.6)
    lmv = topiclink.VisibilityTopicModel(step_a1=2.0, step_a2=5.0, step_v=0.501)
    s = RobbinsMonro.from_params(lmv.get_params())
    assert s == RobbinsMonro(2.0, 5.0, 0.501) and s(0) == 2.0 / 5.0 ** 0.501
    # the estimators' online algorithms get exactly that schedule
    assert bp.set_params(inference="online")._algorithm().schedule == RobbinsMonro(1.0, 3.0,
                                                                                 0.6)
    assert lmv.set_params(inference="stochastic")._algorithm().schedule == s


# ---------------------------------------------------------------------- Averaging, Negatives
def test_averaging_last_is_the_engines_window():
    """``Averaging.last(n_average, n_iter)`` keeps exactly the iterations the engine
    averaged before (``local >= n_iter - n_average``, local counted from 0)."""
    from topiclink.parameters import Averaging

    for n_iter in range(0, 7):
        for n_average in range(0, 9):
            window = Averaging.last(n_average, n_iter)
            kept = [local for local in range(n_iter) if window.keeps(local + 1)]
            assert kept == [local for local in range(n_iter) if local >= n_iter - n_average]
            assert window.n_kept(n_iter) == len(kept)


def test_averaging_thinned_samples_and_their_count():
    from topiclink.parameters import Averaging

    rule = Averaging(burn_in=3, thinning=2, max_samples=2)
    assert [i for i in range(1, 12) if rule.keeps(i)] == [5, 7, 9, 11]
    assert [rule.n_kept(n) for n in (0, 4, 5, 7, 11)] == [0, 0, 1, 2, 2]   # capped at 2
    assert Averaging.from_params({"burn_in": 3, "thinning": 2, "max_samples": 2}) == rule
    assert Averaging.from_params({"n_average": 2, "max_iter": 10}) == Averaging(8, 1, None)
    for bad, match in (({"burn_in": -1}, "burn_in"), ({"thinning": 0}, "thinning"),
                       ({"max_samples": 0}, "max_samples")):
        with pytest.raises(ValueError, match=match):
            Averaging(**bad)


def test_negatives_from_the_estimators_parameters():
    from topiclink import RelationalTopicModel
    from topiclink.parameters import Negatives

    params = RelationalTopicModel(negative_ratio=0.02, c_neg=0.5).get_params()
    assert Negatives.from_params(params) == Negatives(0.02, None, 0.5)
    params = RelationalTopicModel(negatives_per_link=3).get_params()
    assert Negatives.from_params(params) == Negatives(0.01, 3.0, 1.0)
    for bad, match in (({"ratio": 1.5}, "negative_ratio"), ({"per_link": 0.0}, "per_link"),
                       ({"weight": 0.0}, "c_neg")):
        with pytest.raises(ValueError, match=match):
            Negatives(**bad)


def test_draw_negatives_is_the_gRTM_draw():
    """Ratio: ``Links.sample_negatives`` (undirected: to be mirrored); per link:
    ``negatives_per_document`` (one orientation) -- the same streams as before."""
    from topiclink.data.links import Links
    from topiclink.parameters import Negatives
    from topiclink.relational.negatives import draw_negatives, negatives_per_document

    links = Links.from_pairs(np.array([[0, 1], [1, 2], [3, 4], [2, 5]]), n_docs=8,
                             directed=False)
    pairs, mirrored = draw_negatives(links, Negatives(ratio=0.2), np.random.default_rng(3))
    expected = links.sample_negatives(ratio=0.2, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(pairs, expected)
    assert mirrored and pairs.dtype == np.int64
    pairs, mirrored = draw_negatives(links, Negatives(per_link=2.0), np.random.default_rng(3))
    np.testing.assert_array_equal(pairs, negatives_per_document(
        links, 2.0, random_state=np.random.default_rng(3)))
    assert not mirrored
    pairs, mirrored = draw_negatives(links, Negatives(ratio=0.0), np.random.default_rng(3))
    assert pairs.shape == (0, 2)
