"""Links.undirected_pairs: the unordered pairs and symmetric adjacency of any Links."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from topiclink.data.links import Links


def test_undirected_pairs_of_directed_links_by_hand():
    # 0 -> 1, 1 -> 0 (reciprocal: one pair), 3 -> 1, 2 -> 4, 4 -> 0
    links = Links.from_pairs([[0, 1], [1, 0], [3, 1], [2, 4], [4, 0]], 5, directed=True)
    pairs, adj = links.undirected_pairs()
    assert pairs.dtype == np.int64 and pairs.shape == (4, 2)
    assert pairs.tolist() == [[0, 1], [0, 4], [1, 3], [2, 4]]
    assert sp.isspmatrix_csr(adj) or isinstance(adj, sp.csr_array)
    assert adj.dtype == bool and adj.shape == (5, 5) and adj.has_sorted_indices
    expected = np.zeros((5, 5), dtype=bool)
    for i, j in pairs:
        expected[i, j] = expected[j, i] = True
    np.testing.assert_array_equal(adj.toarray(), expected)
    assert [adj.indices[adj.indptr[d]:adj.indptr[d + 1]].tolist() for d in range(5)] == \
        [[1, 4], [0, 3], [4], [1], [0, 2]]
    # the directed adjacency itself is unchanged
    assert links.adjacency().nnz == 5


def test_undirected_pairs_of_undirected_links_and_no_links():
    links = Links.from_pairs([[3, 0], [1, 2], [0, 3]], 4, directed=False, duplicates="drop")
    pairs, adj = links.undirected_pairs()
    assert pairs.tolist() == [[0, 3], [1, 2]]
    assert (adj != adj.T).nnz == 0 and adj.nnz == 4
    empty = Links.from_pairs(np.zeros((0, 2), dtype=np.int64), 3)
    pairs, adj = empty.undirected_pairs()
    assert pairs.shape == (0, 2) and pairs.dtype == np.int64 and adj.nnz == 0


@pytest.mark.parametrize("directed", [True, False])
def test_undirected_pairs_matches_a_dense_reference(directed):
    rng = np.random.default_rng(5)
    raw = rng.integers(0, 30, size=(120, 2))
    links = Links.from_pairs(raw, 30, directed=directed, self_links="drop", duplicates="drop")
    pairs, adj = links.undirected_pairs()
    dense = np.zeros((30, 30), dtype=bool)
    dense[links.source, links.target] = True
    dense |= dense.T
    i, j = np.nonzero(np.triu(dense, k=1))
    np.testing.assert_array_equal(pairs, np.column_stack([i, j]))
    np.testing.assert_array_equal(adj.toarray(), dense)
