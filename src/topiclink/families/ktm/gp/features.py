"""Document features for kernel topic models and Dirichlet-multinomial regression.

* :func:`radial_basis_features` -- Gaussian radial basis functions of a real feature (the
  DMR paper's 100 RBFs of the year, evenly spaced over 1790-2011, width 5 years);
* :func:`one_hot` -- indicator columns of a categorical feature (e.g. the speaker);
* :func:`shortest_path_features` -- each document's vector of shortest-path distances to
  every document in the (undirected) link graph, the input of the KTM graph kernel
  :class:`topiclink.families.ktm.gp.kernels.ShortestPathKernel`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from topiclink.data.links import Links

__all__ = ["radial_basis_features", "one_hot", "shortest_path_features"]


def radial_basis_features(values: object, centers: object = None, n_centers: int = 100,
                          low: float | None = None, high: float | None = None,
                          width: float = 5.0) -> np.ndarray:
    r"""Gaussian radial basis functions ``exp(-(v - c_j)^2 / (2 width^2))`` of ``values``.

    Parameters
    ----------
    values : array-like, shape (n,)
        A real feature per document (e.g. the year).
    centers : array-like, optional
        The centres :math:`c_j`.  Default: ``n_centers`` centres evenly spaced over
        ``[low, high]`` (both included), whose defaults are the min and max of ``values``.
        Pass the same ``centers`` (or ``low``/``high``) for held-out documents.
    width : float
        The standard deviation of each Gaussian bump (DMR on the State of the Union:
        ``n_centers=100, low=1790, high=2011, width=5``).

    Returns
    -------
    ndarray, shape (n, n_centers)
        Unnormalised bumps: 1 at the centre.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1:
        raise ValueError(f"radial_basis_features: values must be 1-D, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("radial_basis_features: values must be finite")
    if not (np.isfinite(width) and width > 0):
        raise ValueError(f"radial_basis_features: width must be > 0, got {width!r}")
    if centers is None:
        if int(n_centers) < 1:
            raise ValueError(f"radial_basis_features: n_centers must be >= 1, got {n_centers}")
        if v.size == 0 and (low is None or high is None):
            raise ValueError("radial_basis_features: give low and high (or centers) "
                             "for empty values")
        lo = float(v.min()) if low is None else float(low)
        hi = float(v.max()) if high is None else float(high)
        if hi < lo:
            raise ValueError(f"radial_basis_features: high ({hi}) < low ({lo})")
        c = np.linspace(lo, hi, int(n_centers))
    else:
        c = np.asarray(centers, dtype=np.float64).ravel()
        if c.size == 0 or not np.isfinite(c).all():
            raise ValueError("radial_basis_features: centers must be finite and non-empty")
    return np.exp(-0.5 * ((v[:, None] - c[None, :]) / width) ** 2)


def one_hot(categories: object, names: object = None) -> tuple[np.ndarray, np.ndarray]:
    """Indicator matrix of a categorical feature.

    Parameters
    ----------
    categories : array-like, shape (n,)
        One label per document (strings or integers).
    names : array-like, optional
        The column labels, in order.  Default: the sorted distinct labels of
        ``categories``.  Pass the training ``names`` for held-out documents; a label not
        in ``names`` raises.

    Returns
    -------
    matrix : ndarray of float64, shape (n, len(names))
        ``matrix[i, j] = 1`` iff ``categories[i] == names[j]``.
    names : ndarray, shape (n_categories,)
    """
    cats = np.asarray(categories)
    if cats.ndim != 1:
        raise ValueError(f"one_hot: categories must be 1-D, got shape {cats.shape}")
    if names is None:
        names_arr, codes = np.unique(cats, return_inverse=True)
    else:
        names_arr = np.asarray(names)
        if names_arr.ndim != 1:
            raise ValueError("one_hot: names must be 1-D")
        lookup = {v: j for j, v in enumerate(names_arr.tolist())}
        if len(lookup) != names_arr.size:
            raise ValueError("one_hot: names repeat a label")
        codes = np.empty(cats.size, dtype=np.int64)
        for i, v in enumerate(cats.tolist()):
            if v not in lookup:
                raise ValueError(f"one_hot: category {v!r} (row {i}) is not in names")
            codes[i] = lookup[v]
    matrix = np.zeros((cats.size, names_arr.size), dtype=np.float64)
    matrix[np.arange(cats.size), codes.ravel()] = 1.0
    return matrix, names_arr


def shortest_path_features(links: object, n_docs: int | None = None,
                           unreachable: float | None = None) -> np.ndarray:
    """Shortest-path (hop-count) distances between all documents of a link graph.

    Links are read as undirected, unweighted edges (Hennig et al. 2012, sec. 4.2), and
    the distances come from :func:`scipy.sparse.csgraph.shortest_path` (``O(D (D + E))``
    breadth-first searches; the result is a dense ``D x D`` matrix).

    Parameters
    ----------
    links : Links, scipy sparse matrix, 2-D array
        A :class:`topiclink.data.links.Links`, a square (sparse or dense) adjacency
        matrix whose nonzeros are links, or an ``(n, 2)`` integer array of linked pairs
        (then ``n_docs`` is required).
    n_docs : int, optional
        Number of documents; checked against ``links`` when it has its own.
    unreachable : float, optional
        The distance given to pairs not joined by any path.  The paper uses infinity, but
        infinite features break the kernel: two documents in the same component share
        their infinite entries and ``inf - inf`` is NaN, while documents in different
        components would get distance ``inf``.  Default: ``1 + the largest finite
        distance`` (1 for a graph without links) -- farther than any reachable document,
        and the same for all unreachable pairs, so that documents in one component do not
        differ in the coordinates of another component.

    Returns
    -------
    ndarray of float64, shape (n_docs, n_docs)
        Row ``d`` is the feature vector ``x_d``; symmetric with a zero diagonal.
    """
    if isinstance(links, Links):
        if n_docs is not None and int(n_docs) != links.n_docs:
            raise ValueError(f"shortest_path_features: n_docs={n_docs} but the links are "
                             f"over {links.n_docs} documents")
        A = links.adjacency()
    elif sp.issparse(links):
        A = sp.csr_matrix(links)
    else:
        arr = np.asarray(links)
        if arr.ndim == 2 and arr.shape[0] == arr.shape[1] and (
                n_docs is None or arr.shape[0] == int(n_docs)) and arr.shape[1] != 2:
            A = sp.csr_matrix(arr)
        elif arr.ndim == 2 and arr.shape[1] == 2 and n_docs is not None:
            A = Links.from_pairs(arr, int(n_docs), directed=False,
                                 duplicates="drop", self_links="drop").adjacency()
        else:
            raise ValueError("shortest_path_features: expected Links, a square adjacency "
                             "matrix, or an (n, 2) array of pairs with n_docs")
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"shortest_path_features: adjacency must be square, got {A.shape}")
    if n_docs is not None and A.shape[0] != int(n_docs):
        raise ValueError(f"shortest_path_features: n_docs={n_docs} but the adjacency is "
                         f"{A.shape[0]} x {A.shape[1]}")
    A = (A != 0).astype(np.float64)
    dist = shortest_path(A, method="D", directed=False, unweighted=True)
    finite = np.isfinite(dist)
    if unreachable is None:
        unreachable = 1.0 + (float(dist[finite].max()) if finite.any() else 0.0)
    elif not (np.isfinite(unreachable) and unreachable >= 0):
        raise ValueError(f"shortest_path_features: unreachable must be finite and >= 0, "
                         f"got {unreachable!r}")
    dist[~finite] = float(unreachable)
    return dist
