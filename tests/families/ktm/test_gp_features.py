"""Features of topiclink.families.ktm.gp: radial basis functions, one-hot, shortest paths."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from topiclink.data.links import Links
from topiclink.families.ktm.gp.features import (
    one_hot,
    radial_basis_features,
    shortest_path_features,
)


def test_radial_basis_dmr_setting():
    years = np.array([1790.0, 1800.0, 1901.5, 2011.0])
    F = radial_basis_features(years, n_centers=100, low=1790, high=2011, width=5.0)
    assert F.shape == (4, 100)
    centers = np.linspace(1790, 2011, 100)
    assert F[0, 0] == 1.0 and F[3, 99] == 1.0
    assert np.allclose(F[1], np.exp(-0.5 * ((1800 - centers) / 5) ** 2))
    # one width away from a centre: exp(-1/2)
    G = radial_basis_features([centers[10] + 5.0], centers=centers, width=5.0)
    assert G[0, 10] == pytest.approx(np.exp(-0.5))
    # defaults: centres span the data
    H = radial_basis_features(np.array([0.0, 10.0]), n_centers=3, width=1.0)
    assert np.allclose(H, np.exp(-0.5 * (np.array([[0, 5, 10], [10, 5, 0]])) ** 2))
    with pytest.raises(ValueError, match="width"):
        radial_basis_features(years, width=0.0)


def test_one_hot_names_and_fixed_vocabulary():
    M, names = one_hot(["Lincoln", "Adams", "Lincoln", "Grant"])
    assert names.tolist() == ["Adams", "Grant", "Lincoln"]
    assert M.tolist() == [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]]
    M2, names2 = one_hot(["Grant"], names=names)
    assert M2.tolist() == [[0, 1, 0]] and names2 is not None
    with pytest.raises(ValueError, match="not in names"):
        one_hot(["Obama"], names=names)


def _expected():
    # 0 - 1 - 2 - 3 path (3 -> 2 given directed), 4 - 5 edge, 6 isolated
    inf = np.inf
    D = np.array([
        [0, 1, 2, 3, inf, inf, inf],
        [1, 0, 1, 2, inf, inf, inf],
        [2, 1, 0, 1, inf, inf, inf],
        [3, 2, 1, 0, inf, inf, inf],
        [inf, inf, inf, inf, 0, 1, inf],
        [inf, inf, inf, inf, 1, 0, inf],
        [inf, inf, inf, inf, inf, inf, 0],
    ])
    return D


def test_shortest_path_small_graph_by_hand():
    pairs = np.array([[0, 1], [1, 2], [3, 2], [4, 5]])
    links = Links.from_pairs(pairs, 7, directed=True)  # direction is ignored
    F = shortest_path_features(links)
    ref = _expected()
    ref[~np.isfinite(ref)] = 4.0  # 1 + the largest finite distance (3)
    assert np.array_equal(F, ref)
    # same from a sparse adjacency, a dense one, pairs with n_docs
    A = links.adjacency()
    assert np.array_equal(shortest_path_features(A), ref)
    assert np.array_equal(shortest_path_features(sp.csr_matrix(A.T)), ref)
    assert np.array_equal(shortest_path_features(A.toarray().astype(int)), ref)
    assert np.array_equal(shortest_path_features(pairs, n_docs=7), ref)
    # a chosen unreachable value
    F9 = shortest_path_features(links, unreachable=9.0)
    assert F9[0, 4] == 9.0 and F9[4, 6] == 9.0 and F9[0, 3] == 3.0
    # no links at all: every other document is "1 + 0" away
    assert np.array_equal(shortest_path_features(sp.csr_matrix((3, 3))), 1 - np.eye(3))
    with pytest.raises(ValueError, match="n_docs"):
        shortest_path_features(links, n_docs=8)
