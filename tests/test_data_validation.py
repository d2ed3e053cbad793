"""Edge inputs of the data layer (issue 10): UCI sizes and column counts, empty corpora,
index arguments of Corpus / Links, and the counts / ids they accept."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from topiclink.data import Corpus, DataError, Links, as_corpus, as_links
from topiclink.data.io import read_uci_bow


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _one_line(exc: pytest.ExceptionInfo) -> str:
    msg = str(exc.value)
    assert "\n" not in msg, msg
    return msg


# ---------------------------------------------------------------------- UCI: column counts
@pytest.mark.parametrize("body", ["1 2 3 4\n2 3 1 1\n", "1 2 3 4 \n2 3 1 1\n"])
def test_uci_four_columns_on_every_line_is_refused(tmp_path, body):
    dw = _write(tmp_path / "docword.x.txt", "3\n5\n2\n" + body)
    with pytest.raises(DataError, match=r"docword\.x\.txt:4: expected 3 numbers "
                                        r"\(doc word count\), found 4") as exc:
        read_uci_bow(dw)
    _one_line(exc)


def test_uci_two_columns_on_every_line_is_refused(tmp_path):
    dw = _write(tmp_path / "docword.x.txt", "3\n5\n2\n1 2\n2 3\n")
    with pytest.raises(DataError, match=r"docword\.x\.txt:4: expected 3 numbers "
                                        r"\(doc word count\), found 2"):
        read_uci_bow(dw)


def test_uci_four_columns_after_good_lines(tmp_path):
    dw = _write(tmp_path / "docword.x.txt", "3\n5\n3\n1 2 3\n2 3 1\n3 1 1 9\n")
    with pytest.raises(DataError, match=r"docword\.x\.txt:6: expected 3 numbers .*found 4"):
        read_uci_bow(dw)


# ---------------------------------------------------------------------- UCI: header sizes
@pytest.mark.parametrize(("header", "pattern"), [
    ("3\n1000000000000000\n1\n", r"docword\.x\.txt:2: W = 1000000000000000 .*memory|"
                                 r"docword\.x\.txt:2: W = 1000000000000000 .*exceeds"),
    ("1000000000000000\n5\n1\n", r"docword\.x\.txt:1: D = 1000000000000000"),
    ("3\n5\n-1\n", r"docword\.x\.txt:3: NNZ .* must be >= 0"),
    ("3\n5\n1.5\n", r"docword\.x\.txt:3: header line 3 must be the integer NNZ"),
    ("3\n5\n100\n", r"docword\.x\.txt:3: the header says NNZ = 100 but the file has 1"),
])
def test_uci_header_sizes(tmp_path, header, pattern):
    dw = _write(tmp_path / "docword.x.txt", header + "1 2 3\n")
    with pytest.raises(DataError, match=pattern) as exc:
        read_uci_bow(dw)
    _one_line(exc)


def test_uci_huge_w_with_machine_memory_refused_before_allocating(tmp_path, monkeypatch):
    # W = 10^9: 10^9 default word strings need tens of GiB; refuse from the memory check
    import topiclink.data.checks as checks

    monkeypatch.setattr(checks, "available_memory", lambda: 4 * 2 ** 30)
    dw = _write(tmp_path / "docword.x.txt", "3\n1000000000\n1\n1 2 3\n")
    with pytest.raises(DataError, match=r"docword\.x\.txt:2: W = 1000000000 .*GiB"):
        read_uci_bow(dw)


def test_uci_w_checked_against_vocab_before_reading_body(tmp_path):
    dw = _write(tmp_path / "docword.x.txt", "3\n1000000000\n1\n1 2 3\n")
    vocab = _write(tmp_path / "vocab.x.txt", "a\nb\nc\n")
    with pytest.raises(DataError, match=r"vocab\.x\.txt: 3 words, but docword\.x\.txt has "
                                        r"W = 1000000000"):
        read_uci_bow(dw, vocab)


def test_check_memory():
    from topiclink.data.checks import check_memory

    check_memory(1000, "small")
    with pytest.raises(DataError, match=r"big: needs about .* GiB"):
        check_memory(2 ** 70, "big")


# ---------------------------------------------------------------------- zero documents
def test_uci_all_documents_empty(tmp_path):
    dw = _write(tmp_path / "docword.e.txt", "2\n3\n0\n")
    with pytest.raises(DataError, match=r"no non-empty documents in .*docword\.e\.txt") as exc:
        read_uci_bow(dw)
    _one_line(exc)


def test_uci_zero_documents(tmp_path):
    dw = _write(tmp_path / "docword.e.txt", "0\n3\n0\n")
    with pytest.raises(DataError, match=r"no non-empty documents in .*docword\.e\.txt"):
        read_uci_bow(dw)


def test_corpus_without_documents_is_refused_by_checks():
    c = Corpus(sp.csr_matrix((0, 5)))
    with pytest.raises(DataError, match=r"^fit: the corpus has no documents$"):
        c.check_has_documents("fit")
    with pytest.raises(DataError, match=r"^fit: the corpus has no documents$"):
        c.check_no_empty("fit")
    with pytest.raises(DataError, match=r"has no words"):
        Corpus(sp.csr_matrix((3, 0))).check_has_documents("fit")
    Corpus(sp.csr_matrix([[1, 0]])).check_has_documents("fit")


def test_lda_on_zero_documents_is_a_data_error():
    import topiclink

    with pytest.raises(DataError, match="no documents"):
        topiclink.LDA(n_topics=2, max_iter=2).fit(Corpus(sp.csr_matrix((0, 5))))


# ---------------------------------------------------------------------- Corpus indices
@pytest.fixture
def corpus():
    return Corpus(sp.csr_matrix(np.array([[1, 2, 0], [0, 1, 1], [3, 0, 0]])))


def test_subset_accepts_a_boolean_mask(corpus):
    sub = corpus.subset(np.array([True, False, True]))
    assert sub.doc_ids.tolist() == [0, 2]
    with pytest.raises(DataError, match=r"mask has 2 entries for 3 documents"):
        corpus.subset(np.array([True, False]))


@pytest.mark.parametrize(("index", "pattern"), [
    ([5], r"index 5 .* outside \[0, 3\)"),
    ([-4], r"index -4 .* outside \[0, 3\)"),
    ([0.5], r"document positions must be integers"),
    ([np.nan], r"document positions must be integers"),
    (["a"], r"document positions must be integers"),
    ([[0, 1]], r"1-D"),
])
def test_subset_refuses_bad_indices(corpus, index, pattern):
    with pytest.raises(DataError, match=pattern) as exc:
        corpus.subset(index)
    _one_line(exc)


def test_subset_accepts_integral_floats_only_when_whole(corpus):
    assert corpus.subset([1, 0]).doc_ids.tolist() == [1, 0]
    assert corpus.subset(np.array([], dtype=np.int64)).n_docs == 0


@pytest.mark.parametrize("doc_ids", [[0, np.nan, 2], [0, np.inf, 2]])
def test_corpus_refuses_non_finite_doc_ids(doc_ids):
    with pytest.raises(DataError, match=r"doc_ids: document 1 has id"):
        Corpus(sp.csr_matrix(np.ones((3, 2))), doc_ids=doc_ids)


def test_counts_of_strings_are_a_data_error():
    with pytest.raises(DataError, match=r"X must be numeric"):
        as_corpus([[1, "a"]])
    with pytest.raises(DataError, match=r"X must be numeric"):
        as_corpus(np.array([[1, 2]], dtype=complex))


# ---------------------------------------------------------------------- Links
@pytest.mark.parametrize("n_docs", [-1, 2.5, np.nan, "3", True])
def test_links_refuse_bad_n_docs(n_docs):
    with pytest.raises(DataError, match=r"n_docs must be an integer >= 0"):
        Links.from_pairs([[0, 1]], n_docs)


def test_subgraph_accepts_a_boolean_mask():
    lk = Links.from_pairs([[0, 1], [1, 2], [0, 2]], 3)
    sub = lk.subgraph(np.array([True, False, True]))
    assert sub.n_docs == 2
    assert sub.pairs.tolist() == [[0, 1]]
    with pytest.raises(DataError, match=r"mask has 2 entries for 3 documents"):
        lk.subgraph(np.array([True, False]))


@pytest.mark.parametrize(("keep", "pattern"), [
    ([7], r"index 7 .* outside \[0, 3\)"),
    ([0.5], r"integers"),
    ([0, 0], r"repeats document 0"),
])
def test_subgraph_refuses_bad_indices(keep, pattern):
    with pytest.raises(DataError, match=pattern):
        Links.from_pairs([[0, 1]], 3).subgraph(keep)


def test_between_checks_indices():
    lk = Links.from_pairs([[0, 1], [1, 2]], 3)
    assert lk.between(np.array([True, True, False]), [1]).toarray().tolist() == [[True], [False]]
    with pytest.raises(DataError, match=r"outside \[0, 3\)"):
        lk.between([5], [0])


def test_as_links_refuses_dense_square_and_wrong_types():
    with pytest.raises(DataError, match=r"links must be"):
        as_links("abc", 3)
    with pytest.raises(DataError, match=r"links must be"):
        as_links(None, 3)
    with pytest.raises(DataError, match=r"adjacency has shape"):
        as_links(sp.csr_matrix((2, 2)), 3)


def test_links_bool_pairs_refused():
    with pytest.raises(DataError, match=r"pairs must be integers"):
        Links.from_pairs(np.array([[True, False]]), 3)


def test_uci_with_some_empty_documents_still_logged(tmp_path, caplog):
    dw = _write(tmp_path / "docword.toy.txt", "3\n2\n2\n1 1 2\n3 2 1\n")
    caplog.set_level(logging.INFO, logger="topiclink")
    assert read_uci_bow(dw).n_docs == 3


# ---------------------------------------------------------------------- metrics
def _metrics():
    from topiclink import metrics

    return metrics


@pytest.mark.parametrize("func", ["link_auc", "link_rank", "link_rank_per_query", "word_rank",
                                  "word_rank_per_doc", "npmi_coherence"])
@pytest.mark.parametrize("which", [0, 1])
def test_metrics_refuse_complex_input(func, which):
    args = [np.array([[0.9, 0.1], [0.2, 0.8]]), np.eye(2)]
    args[which] = args[which] * (1 + 1j)
    with pytest.raises(ValueError, match=rf"{func}: .* must hold real numbers"):
        getattr(_metrics(), func)(*args)


def test_word_rank_huge_counts_do_not_overflow_to_nan():
    m = _metrics()
    probs = np.array([[0.9, 0.1], [0.2, 0.8]])
    big = np.full((2, 2), 1e308)
    assert m.word_rank(probs, big) == pytest.approx(1.5)
    assert m.word_rank(probs, [[3e307, 1e307], [0, 1e308]]) == pytest.approx(1.125)


@pytest.mark.parametrize(("y_true", "y_pred", "pattern"), [
    ([1, 2], [np.nan, 1], r"y_pred\[0\] is nan"),
    ([np.inf, 1], [1, 2], r"y_true\[0\] is inf"),
    ([1, None], [1, 2], r"y_true\[1\] is None"),
    (np.array([1, "a"], dtype=object), [1, 2], r"accuracy: labels cannot be compared"),
])
def test_accuracy_refuses_nan_and_none_labels(y_true, y_pred, pattern):
    with pytest.raises(ValueError, match=pattern) as exc:
        _metrics().accuracy(y_true, y_pred)
    _one_line(exc)


# ---------------------------------------------------------------------- constructors
@pytest.mark.parametrize("counts", [None, "abc", 3, {"a": 1}, [[1], [1, 2]]])
def test_corpus_refuses_non_matrices(counts):
    with pytest.raises(DataError, match=r"counts must be a 2-D document-term matrix") as exc:
        Corpus(counts)
    _one_line(exc)


def test_corpus_accepts_a_nested_list():
    assert Corpus([[1, 0], [0, 2]]).n_tokens == 3


def test_as_corpus_ragged_and_string_frame():
    import pandas as pd

    with pytest.raises(DataError, match=r"X must be a 2-D document-term matrix"):
        as_corpus([[1], [1, 2]])
    with pytest.raises(DataError, match=r"X must be numeric"):
        as_corpus(pd.DataFrame({"a": ["x", "y"]}))


@pytest.mark.parametrize("arg", ["vocabulary", "doc_ids", "titles"])
@pytest.mark.parametrize("value", [[[1], [1, 2]], sp.csr_matrix(np.eye(2))])
def test_corpus_refuses_ragged_or_sparse_names(arg, value):
    with pytest.raises(DataError, match=arg) as exc:
        Corpus(sp.csr_matrix(np.eye(2)), **{arg: value})
    _one_line(exc)


@pytest.mark.parametrize("A", [np.array([["1", "0"], ["0", "1"]]), np.array([[np.nan, 1], [1, 0]]),
                               sp.csr_matrix(np.array([[np.nan, 0], [0, 1]])), None, "ab"])
def test_from_adjacency_refuses_non_numeric(A):
    with pytest.raises(DataError, match=r"adjacency"):
        Links.from_adjacency(A)


@pytest.mark.parametrize("pairs", [np.array([[1e30, 1]]), np.array([[2 ** 63, 1]], np.uint64)])
def test_from_pairs_huge_positions(pairs):
    with pytest.raises(DataError, match=r"row 0 refers to document .* not in \[0, 2\)"):
        Links.from_pairs(pairs, 2)


@pytest.mark.parametrize(("kw", "pattern"), [
    ({"n": np.array([1, 2])}, r"n must be an integer"),
    ({"n": 1.5}, r"n must be an integer"),
    ({"ratio": np.zeros(2)}, r"ratio must be a number"),
    ({"ratio": float("nan")}, r"ratio must be in \[0, 1\]"),
])
def test_sample_negatives_arguments(kw, pattern):
    with pytest.raises(ValueError, match=pattern):
        Links.from_pairs([[0, 1]], 3).sample_negatives(**kw)


def test_index_errors_are_one_line():
    c = Corpus(sp.csr_matrix(np.eye(2)))
    with pytest.raises(DataError) as exc:
        c.subset(sp.csr_matrix(np.eye(2)))
    _one_line(exc)


def test_perplexity_refuses_a_positive_log_likelihood():
    with pytest.raises(ValueError, match=r"log_likelihood must be <= 0"):
        _metrics().perplexity(5.0, 10)
