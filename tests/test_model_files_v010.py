"""Model files written by topiclink 0.1.0 load in this version and give the same answers.

The files in ``tests/fixtures/v0.1.0/`` were written once by 0.1.0
(``tests/fixtures/v0.1.0/make.py``; never regenerate them with a later version).  Each is
loaded with :func:`topiclink.load` and checked for its class, the parameters it was fitted
with, and what 0.1.0 computed from it on fixed inputs (``expected.npz``).  A change to the
file format or to a family's saved arrays that breaks an old file fails here: keep reading
the old layout (or convert it on load) rather than editing these files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import topiclink
from topiclink.persistence import read_header

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "v0.1.0"

#: file -> (class name, the parameters make.py set)
FILES = {
    "lda": ("LDA", {"n_topics": 3, "max_iter": 20, "random_state": 0}),
    "rtm": ("RelationalTopicModel", {"n_topics": 3, "max_iter": 20, "negative_ratio": 0.1,
                                     "random_state": 0}),
    "slda": ("SupervisedTopicModel", {"n_topics": 3, "max_iter": 20, "random_state": 0}),
    "bpbfm": ("BilinearPoissonFactorModel", {"n_topics": 2, "max_iter": 20, "burn_in": 10,
                                             "random_state": 0}),
    "lda_full": ("LDA", {"n_topics": 3, "max_iter": 20, "random_state": 0}),
}

#: equal up to floating-point reassociation (a different BLAS or CPU); a changed
#: algorithm or a misread array is off by far more
RTOL, ATOL = 1e-9, 1e-12


@pytest.fixture(scope="module")
def expected() -> dict[str, np.ndarray]:
    with np.load(FIXTURES / "expected.npz", allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_010_file_loads_as_its_class_with_its_parameters(name):
    path = FIXTURES / f"{name}.npz"
    header = read_header(path)
    assert (header["library_version"], header["format_version"]) == ("0.1.0", 1)
    cls_name, params = FILES[name]
    model = topiclink.load(path)
    assert type(model).__name__ == cls_name
    assert type(model) is getattr(topiclink, cls_name)
    got = model.get_params(deep=False)
    assert {k: got[k] for k in params} == params
    assert model.n_iter_ == 20


def test_lda_010_transform(expected):
    model = topiclink.load(FIXTURES / "lda.npz")
    assert model.components_.shape == (3, 30)
    np.testing.assert_allclose(model.components_.sum(axis=1), 1.0, rtol=1e-12)
    got = model.transform(expected["query_counts"])
    np.testing.assert_allclose(got, expected["lda_transform"], rtol=RTOL, atol=ATOL)


def test_rtm_010_link_scores(expected):
    model = topiclink.load(FIXTURES / "rtm.npz")
    got = model.link_scores(queries=expected["link_queries"],
                            targets=expected["link_targets"])
    np.testing.assert_allclose(got, expected["rtm_link_scores"], rtol=RTOL, atol=ATOL)


def test_slda_010_predict_proba(expected):
    model = topiclink.load(FIXTURES / "slda.npz")
    np.testing.assert_array_equal(model.classes_, [0, 1])
    got = model.predict_proba(expected["query_counts"])
    np.testing.assert_allclose(got, expected["slda_predict_proba"], rtol=RTOL, atol=ATOL)


def test_bpbfm_010_predict_proba(expected):
    model = topiclink.load(FIXTURES / "bpbfm.npz")
    got = model.predict_proba(expected["triples_h"], expected["triples_r"],
                              expected["triples_t"])
    np.testing.assert_allclose(got, expected["bpbfm_predict_proba"], rtol=RTOL, atol=ATOL)


def test_a_010_checkpoint_resumes_draw_for_draw(expected):
    """``save(full=True)`` of 0.1.0 (the checkpoint format) continues the chain as 0.1.0
    did: the same topics after 20 more sweeps."""
    model = topiclink.load(FIXTURES / "lda_full.npz")
    corpus = topiclink.Corpus(sp.csr_matrix(expected["train_counts"]),
                              vocabulary=model.vocabulary_)
    model.fit(corpus, resume=True)
    assert model.n_iter_ == 40
    np.testing.assert_allclose(model.components_, expected["lda_resumed_components"],
                               rtol=RTOL, atol=ATOL)
