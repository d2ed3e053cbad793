"""Memory checks before the big allocations of prediction (issue 40, item 5).

Every call that builds an O(N K), O(D^2) or O(V K) array up front checks its estimate
against :func:`topiclink.data.checks.available_memory` first, as ``fit`` does: with the
available memory made small, each refuses on one line naming the call, the size and what
to do instead.  ``suggest_links`` scores its queries in blocks and keeps each one's top
links: exactly the result of ranking the full :meth:`link_scores` matrix, in far less
memory.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import topiclink
from tests.test_contract import fit, make
from topiclink.data import DataError
from topiclink.data import checks as data_checks
from topiclink.report import build_report

LINK_MODELS = ["LDARegression", "RelationalTopicModel", "VariationalRTM",
               "VisibilityTopicModel"]


@pytest.fixture(scope="module")
def data():
    from topiclink.datasets import make_bpbfm_data, make_rtm_data

    (corpus, links), _ = make_rtm_data(n_docs=60, n_words=80, n_topics=3, doc_length=30,
                                       random_state=9)
    tensor, _ = make_bpbfm_data(30, 3, 3, random_state=9, density=0.05)
    return {"X": corpus, "links": links, "y": np.arange(corpus.n_docs) % 2,
            "tensor": tensor, "features": np.random.default_rng(9).random((corpus.n_docs, 3))}


@pytest.fixture(scope="module")
def models(data):
    names = {"LDA", "BilinearPoissonFactorModel", "DMR", "KernelTopicModel", *LINK_MODELS}
    return {name: fit(make(name), data) for name in sorted(names)}


def small_memory(monkeypatch, n_bytes: int = 1024) -> None:
    monkeypatch.setattr(data_checks, "available_memory", lambda: n_bytes)


def _shards(data, tmp_path):
    from topiclink.data import write_shards

    return write_shards(data["X"], tmp_path / "shards", 3)


def _links_out(data):
    return np.eye(4, data["X"].n_docs)


CALLS = {
    "transform": ("LDA", lambda m, d, p: m.transform(d["X"]),
                  "transform: 60 documents x 3 topics", "transform fewer documents"),
    "transform-shards": ("LDA", lambda m, d, p: m.transform(_shards(d, p)),
                         "transform: the ShardSet's 60 documents x 3 topics",
                         "transform its shards one at a time"),
    "perplexity": ("LDA", lambda m, d, p: m.perplexity(d["X"]),
                   "log_likelihood_completion: 60 documents x 3 topics",
                   "score fewer documents at a time"),
    "link_scores": ("RelationalTopicModel", lambda m, d, p: m.link_scores(d["X"].subset(
        np.arange(10))), "link_scores: 10 queries x 60 training documents (direction "
        "'either')", "use suggest_links"),
    "link_scores-training": ("VisibilityTopicModel", lambda m, d, p: m.link_scores(
        None, queries=np.arange(60), direction="out"),
        "link_scores: 60 queries x 60 training documents (direction 'out')",
        "use suggest_links"),
    "predict_link_proba": ("LDARegression", lambda m, d, p: m.predict_link_proba(
        d["X"], targets=np.arange(5)), "predict_link_proba: 60 queries x 5 training "
        "documents (direction 'either')",
        "use suggest_links"),
    "suggest_links": ("VariationalRTM", lambda m, d, p: m.suggest_links(d["X"]),
                      "suggest_links: 60 queries x 60 training documents (direction "
                      "'either', 60 queries a block)",
                      "give a smaller block_size, a smaller top or fewer documents"),
    "predict_words_from_links": ("RelationalTopicModel", lambda m, d, p:
                                 m.predict_words_from_links(_links_out(d)),
                                 "predict_words_from_links: 4 new documents x 80 words",
                                 "pass fewer new documents"),
    "score_tails_batch": ("BilinearPoissonFactorModel", lambda m, d, p: m.score_tails_batch(
        [0, 1, 2], [0, 1, 2]), "score_tails_batch: 3 queries x 30 entities",
        "score fewer queries at a time"),
    "score_heads_batch": ("BilinearPoissonFactorModel", lambda m, d, p: m.score_heads_batch(
        [0, 1], [0, 1]), "score_heads_batch: 2 queries x 30 entities",
        "score fewer queries at a time"),
    "transform-features": ("DMR", lambda m, d, p: m.transform(d["X"], d["features"]),
                           "transform: 60 documents x 3 topics", "transform fewer documents"),
    "predict_alpha": ("KernelTopicModel", lambda m, d, p: m.predict_alpha(d["features"]),
                      "predict_alpha: 60 documents x 3 topics' GPs over 60 training "
                      "documents", "predict fewer documents at a time"),
    "report": ("RelationalTopicModel", lambda m, d, p: build_report(
        m, d["X"], links=d["links"]), "report of a RelationalTopicModel",
        "give smaller Limits"),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_each_call_refuses_on_one_line_before_allocating(models, data, tmp_path,
                                                         monkeypatch, call):
    name, run, what, advice = CALLS[call]
    model = models[name]
    if call == "transform-shards":                 # written before memory is made small
        shards = _shards(data, tmp_path)
        run = lambda m, d, p: m.transform(shards)  # noqa: E731
    small_memory(monkeypatch)
    with pytest.raises(DataError) as info:
        run(model, data, tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{what}: needs about "), message
    assert "GiB, but only 9.54e-07 GiB of memory is available; " in message, message
    assert advice in message.split("; ", 1)[1], message
    monkeypatch.undo()
    run(model, data, tmp_path)                     # with the memory there, it runs


def test_the_estimates_are_not_tiny(models, data, monkeypatch):
    """The checks count what the calls build: 60 x 60 scores (five copies of 28 KiB) do
    not fit in 100 KiB, 60 x 3 proportions do."""
    small_memory(monkeypatch, 100 * 1024)
    rtm = models["RelationalTopicModel"]
    with pytest.raises(DataError, match="^link_scores: 60 queries x 60"):
        rtm.link_scores(None, queries=np.arange(60))
    rtm.link_scores(None, queries=np.arange(10))
    models["LDA"].transform(data["X"].subset(np.arange(20)))


def full_suggestions(model, X, top: int, direction: str) -> pd.DataFrame:
    """The full computation: every score at once, each row ranked by a stable sort (the
    table built as suggest_links built it before it scored in blocks)."""
    scores = model.link_scores(X, direction=direction)
    top = min(top, scores.shape[1])
    order = np.argsort(-scores, axis=1, kind="stable")[:, :top]
    ids, titles = model.train_doc_ids_, getattr(model, "train_titles_", None)
    rows = [{"query": q, "rank": rank, "target": int(t),
             "doc_id": ids[t].item() if hasattr(ids[t], "item") else ids[t],
             "title": str(titles[t]) if titles is not None and len(titles) else "",
             "score": float(scores[q, t])}
            for q in range(scores.shape[0]) for rank, t in enumerate(order[q], start=1)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("name", LINK_MODELS)
@pytest.mark.parametrize("direction", ["out", "in", "either"])
def test_suggest_links_in_blocks_equals_the_full_computation(models, data, name,
                                                             direction):
    model = models[name]
    queries = data["X"].subset(np.arange(23))
    expected = full_suggestions(model, queries, 7, direction)
    for block in (1, 2, 5, 23, None):
        got = model.suggest_links(queries, top=7, direction=direction, block_size=block)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
    everything = model.suggest_links(queries, top=500, direction=direction, block_size=4)
    pd.testing.assert_frame_equal(everything, full_suggestions(model, queries, 500,
                                                               direction), check_exact=True)


def test_suggest_links_streams_where_the_full_matrix_does_not_fit(monkeypatch):
    """300 training documents: the 300 x 300 scores (five copies, 3.4 MiB) do not fit in
    1 MiB; suggest_links, 10 queries at a time, does, with the same result."""
    from topiclink.datasets import make_rtm_data

    (corpus, links), _ = make_rtm_data(n_docs=300, n_words=50, n_topics=3, doc_length=12,
                                       random_state=4)
    rtm = topiclink.RelationalTopicModel(n_topics=3, max_iter=3, negative_ratio=0.1,
                                         random_state=0).fit(corpus, links=links)
    expected = full_suggestions(rtm, corpus, 5, "either")
    small_memory(monkeypatch, 1 << 20)
    with pytest.raises(DataError, match="^link_scores: 300 queries x 300 training"):
        rtm.link_scores(corpus)
    got = rtm.suggest_links(corpus, top=5, block_size=10)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    with pytest.raises(DataError, match="^suggest_links: 300 queries x 300 training"):
        rtm.suggest_links(corpus, top=5, block_size=300)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_block_size_is_checked(models, data, bad):
    with pytest.raises(ValueError, match="^suggest_links: block_size must be an integer >= 1"):
        models["RelationalTopicModel"].suggest_links(data["X"], block_size=bad)


def test_row_products_do_not_depend_on_the_batch():
    """The same bits for a row scored alone or with others (a BLAS product need not give
    them), and a @ b.T up to rounding."""
    from topiclink.kernels.scores import row_products

    rng = np.random.default_rng(0)
    a, b = rng.random((37, 11)), rng.random((300, 11))
    whole = row_products(a, b)
    np.testing.assert_allclose(whole, a @ b.T, rtol=1e-13)
    for size in (1, 2, 5, 16):
        parts = np.vstack([row_products(a[i:i + size], b) for i in range(0, 37, size)])
        np.testing.assert_array_equal(parts, whole)
    assert row_products(a[:0], b).shape == (0, 300)
    with pytest.raises(ValueError, match="do not match"):
        row_products(a, b[:, :3])
