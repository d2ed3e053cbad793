"""Property-based edge cases (hypothesis): whatever a user hands in, the answer is a
correct acceptance or a one-line error raised by topiclink -- never a traceback from
inside numpy/scipy, never a silently altered value."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.fuzz.harness import Case, classify
from topiclink.data import Corpus, Links

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
CELLS = st.one_of(st.integers(-3, 50), st.floats(allow_nan=True, allow_infinity=True,
                                                 width=64), st.just(2**40))


@SETTINGS
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                  elements=CELLS))
def test_any_count_matrix_is_read_exactly_or_refused(X):
    def build() -> Corpus:
        return Corpus(X)

    def exact(corpus: Corpus) -> bool:
        return corpus.counts.shape == X.shape and np.array_equal(corpus.counts.toarray(), X)

    outcome, detail = classify(Case("corpus", "api", build, "any", exact))
    assert outcome in ("clean error", "correct acceptance"), detail
    valid = (X.ndim == 2 and np.all(np.isfinite(X)) and np.all(X >= 0)
             and np.all(X == np.round(X)) and np.all(X < 2**31))
    assert (outcome == "correct acceptance") == bool(valid), (outcome, detail)


@SETTINGS
@given(st.integers(0, 8), hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2,
                                                                   max_side=5),
                                     elements=st.one_of(st.integers(-2, 10),
                                                        st.floats(allow_nan=True))))
def test_any_pair_array_gives_valid_links_or_a_clean_error(n_docs, pairs):
    def build() -> Links:
        return Links.from_pairs(pairs, n_docs)

    def valid(links: Links) -> bool:
        p = links.pairs
        return (p.ndim == 2 and p.shape[1] == 2 and (p.size == 0 or (
            p.min() >= 0 and p.max() < n_docs and np.all(p[:, 0] != p[:, 1]))))

    outcome, detail = classify(Case("links", "api", build, "any", valid))
    assert outcome in ("clean error", "correct acceptance"), detail


@pytest.fixture(scope="module")
def model_bytes():
    from topiclink import LDA
    from topiclink.datasets import make_lda_data

    corpus, _ = make_lda_data(n_docs=20, n_words=15, n_topics=2, doc_length=10,
                              random_state=0)
    buf = io.BytesIO()
    model = LDA(2, max_iter=2, random_state=0).fit(corpus)
    path = model.save(__import__("tempfile").mkdtemp() + "/m.npz")
    buf.write(open(path, "rb").read())
    return buf.getvalue()


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1,
                      max_size=4), cut=st.integers(0, 10**6))
def test_any_corrupted_model_file_loads_equal_or_is_refused(model_bytes, edits, cut,
                                                            tmp_path_factory):
    import topiclink

    data = bytearray(model_bytes[: max(1, len(model_bytes) - cut % len(model_bytes))])
    for pos, value in edits:
        data[pos % len(data)] = value
    path = tmp_path_factory.mktemp("p") / "m.npz"
    path.write_bytes(bytes(data))
    outcome, detail = classify(Case("file", "model-files", lambda: topiclink.load(path),
                                    "any"))
    assert outcome in ("clean error", "correct acceptance"), detail


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(params=st.dictionaries(st.text(max_size=8), st.one_of(
    st.integers(), st.text(max_size=5), st.none(), st.floats()), max_size=4))
def test_any_edited_header_params_are_refused_or_valid(model_bytes, params, tmp_path_factory):
    import topiclink

    with np.load(io.BytesIO(model_bytes), allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "__header__"}
        header = json.loads(npz["__header__"].tobytes().decode())
    header["params"] = {**header["params"], **params}
    buf = io.BytesIO()
    np.savez(buf, __header__=np.frombuffer(json.dumps(header).encode(), np.uint8), **arrays)
    path = tmp_path_factory.mktemp("h") / "m.npz"
    path.write_bytes(buf.getvalue())
    outcome, detail = classify(Case("header", "model-files", lambda: topiclink.load(path),
                                    "any"))
    assert outcome in ("clean error", "correct acceptance"), detail
