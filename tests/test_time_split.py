"""split_by_time on a hand-made example, and the chunked predictive rank."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from topiclink.data import Corpus, DataError, Links, split_by_time
from topiclink.metrics import link_rank, link_rank_per_query, rank_in_chunks


def _example() -> tuple[Corpus, Links, np.ndarray]:
    """Documents 0-2 before 2000 (train), 3-5 after; 3 cites 0 and 1, 4 cites 3 only
    (a later document), 5 cites 2; 1 cites 0; 0 cites 4 (a revised version citing a
    newer paper); words: w3 occurs only in later documents."""
    X = np.array([[2, 1, 0, 0],
                  [0, 1, 1, 0],
                  [1, 0, 1, 0],
                  [1, 0, 0, 3],
                  [0, 1, 0, 1],
                  [0, 0, 2, 0]])
    corpus = Corpus(X, vocabulary=["w0", "w1", "w2", "w3"],
                    doc_ids=["a", "b", "c", "d", "e", "f"])
    links = Links.from_pairs([[3, 0], [3, 1], [4, 3], [5, 2], [1, 0], [0, 4]], 6)
    times = np.array([1998.0, 1999.5, 1999.9, 2000.0, 2001.0, 2002.5])
    return corpus, links, times


def test_split_by_time_known_answer():
    corpus, links, times = _example()
    s = split_by_time(corpus, links, times, 2000.0)
    assert s.train_index.tolist() == [0, 1, 2]
    assert s.test_index.tolist() == [3, 5]          # 4 cites no training document
    assert s.train_links.pairs.tolist() == [[1, 0]]
    assert s.test_citations.toarray().tolist() == [[True, True, False],
                                                   [False, False, True]]
    assert s.test_citations.dtype == bool
    np.testing.assert_array_equal(s.train_times, [1998.0, 1999.5, 1999.9])
    np.testing.assert_array_equal(s.test_times, [2000.0, 2002.5])
    # test corpus in the training vocabulary: w3 dropped (3 tokens of document 3)
    assert s.train_corpus.vocabulary.tolist() == ["w0", "w1", "w2"]
    assert s.test_corpus.vocabulary.tolist() == ["w0", "w1", "w2"]
    assert s.test_corpus.counts.toarray().tolist() == [[1, 0, 0], [0, 0, 2]]
    assert s.test_corpus.doc_ids.tolist() == ["d", "f"]
    assert s.report == {"train_documents": 3, "train_links": 1, "later_documents": 3,
                        "test_documents": 2, "test_citations": 3,
                        "later_without_citations": 1, "train_citing_later": 1,
                        "later_later_links": 1, "dropped_words": 1,
                        "dropped_test_tokens": 3}


def test_split_by_time_options():
    corpus, links, times = _example()
    s = split_by_time(corpus, links, times, 2000.0, inclusive=True)  # time <= cutoff
    assert s.train_index.tolist() == [0, 1, 2, 3]
    assert s.test_index.tolist() == [4, 5]
    s = split_by_time(corpus, links, times, 2000.0, test_until=2002.0)
    assert s.test_index.tolist() == [3]
    s = split_by_time(corpus, links, times, 2000.0, train_vocabulary=False)
    assert s.test_corpus.n_words == 4 and s.report["dropped_words"] == 0
    und = Links.from_pairs([[0, 3]], 6, directed=False)
    assert split_by_time(corpus, und, times, 2000.0).test_index.tolist() == [3]


def test_split_by_time_errors():
    corpus, links, times = _example()
    bad = times.copy()
    bad[4] = np.nan
    with pytest.raises(DataError, match=r"document 4 \(id 'e'\) has no time"):
        split_by_time(corpus, links, bad, 2000.0)
    with pytest.raises(DataError, match="no document is before the cutoff"):
        split_by_time(corpus, links, times, 1990.0)
    with pytest.raises(DataError, match="cites a training document"):
        split_by_time(corpus, links, times, 2003.0)
    with pytest.raises(DataError, match="times has 5 entries"):
        split_by_time(corpus, links, times[:5], 2000.0)


# ---------------------------------------------------------------------- chunked rank
def _scores_and_truth(n_q: int, n_c: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(n_q, n_c))
    scores[:, ::7] = 0.0  # ties
    truth = sp.random(n_q, n_c, density=0.05, random_state=seed, format="csr") > 0
    truth = sp.lil_matrix(truth)
    truth[3] = 0  # a query without links
    truth = sp.csr_matrix(truth)
    truth.eliminate_zeros()
    return scores, truth


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000])
def test_rank_in_chunks_equals_unchunked(chunk):
    scores, truth = _scores_and_truth(53, 40)
    calls = []

    def score_fn(rows):
        calls.append(rows.size)
        return scores[rows]

    full = link_rank(scores, truth)
    assert rank_in_chunks(score_fn, 53, 40, truth, chunk_size=chunk) == pytest.approx(
        full, rel=1e-12)
    assert max(calls) <= chunk
    per = rank_in_chunks(lambda r: scores[r], 53, 40, truth, chunk_size=chunk, reduce=None)
    np.testing.assert_allclose(per, link_rank_per_query(scores, truth), equal_nan=True)
    assert np.isnan(per[3])


def test_rank_in_chunks_bounds_memory():
    n_q, n_c, chunk = 600, 5000, 50
    rng = np.random.default_rng(1)
    w = rng.normal(size=(n_c, 4))
    q = rng.normal(size=(n_q, 4))
    truth = sp.csr_matrix((np.ones(n_q, bool), (np.arange(n_q), rng.integers(0, n_c, n_q))),
                          shape=(n_q, n_c))

    def score_fn(rows):
        return q[rows] @ w.T

    def peak_of(chunk_size):
        tracemalloc.start()
        try:
            value = rank_in_chunks(score_fn, n_q, n_c, truth, chunk_size=chunk_size)
            return value, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    chunked, peak = peak_of(chunk)
    whole, peak_whole = peak_of(n_q)
    assert chunked == pytest.approx(whole, rel=1e-12)
    full_matrix = n_q * n_c * 8  # 24 MB of scores at once
    block = chunk * n_c * 8       # 2 MB per block
    assert peak_whole > full_matrix  # the unchunked run holds the whole matrix
    # blocks of 1/12 of the rows: the peak is a few blocks (ranking copies a block a few
    # times), far below one full matrix and the unchunked peak
    assert block < peak < full_matrix, peak
    assert 4 * peak < peak_whole, (peak, peak_whole)


def test_rank_in_chunks_errors():
    scores, truth = _scores_and_truth(10, 5)
    with pytest.raises(ValueError, match=r"score_fn returned shape \(2, 4\)"):
        rank_in_chunks(lambda r: scores[r][:, :4], 10, 5, truth, chunk_size=2)
    with pytest.raises(ValueError, match="chunk_size"):
        rank_in_chunks(lambda r: scores[r], 10, 5, truth, chunk_size=0)
    with pytest.raises(ValueError, match="true_links has shape"):
        rank_in_chunks(lambda r: scores[r], 10, 6, truth)
    with pytest.raises(ValueError, match="no non-zero entry"):
        rank_in_chunks(lambda r: scores[r], 10, 5, sp.csr_matrix((10, 5)))
