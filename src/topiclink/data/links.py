"""Links between documents: directed or undirected pairs with a CSR adjacency."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import DataError, check_flag, check_ids, check_index, check_option
from topiclink.random import RandomState, as_generator

__all__ = ["Links", "as_links"]

logger = logging.getLogger(__name__)

Policy = Literal["error", "drop"]
POLICIES = ("error", "drop")


@dataclass(eq=False)
class Links:
    """Pairs of documents ``(source, target)``.

    Directed links read "source links to (cites) target".  Undirected links are stored
    once in canonical order ``source < target``.  Build with :meth:`from_pairs` (which
    validates) rather than the constructor.

    Attributes
    ----------
    source, target : ndarray of int32, shape (n_links,)
    n_docs : int
    directed : bool
    """

    source: np.ndarray
    target: np.ndarray
    n_docs: int
    directed: bool = True
    _adj: sp.csr_matrix | None = field(default=None, init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_pairs(cls, pairs: object, n_docs: int, directed: bool = True,
                   self_links: Policy = "error", duplicates: Policy = "error",
                   source_name: str = "links") -> Links:
        """Validate and build from an ``(n, 2)`` array of 0-based document positions.

        Parameters
        ----------
        self_links, duplicates : {"error", "drop"}
            What to do with a pair ``(i, i)`` / a repeated pair (for undirected links,
            ``(i, j)`` and ``(j, i)`` are the same pair).  ``"drop"`` logs the count.
            Any other value is refused (one line naming the option).
        """
        check_flag(directed, "directed")
        check_option(self_links, "self_links", POLICIES)
        check_option(duplicates, "duplicates", POLICIES)
        n_docs = _check_n_docs(n_docs, source_name)
        try:
            arr = np.asarray(pairs)
        except (TypeError, ValueError):
            raise DataError(f"{source_name}: expected an (n, 2) array of pairs") from None
        if arr.size == 0:
            arr = arr.reshape(0, 2)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise DataError(f"{source_name}: expected an (n, 2) array of pairs, "
                            f"got shape {arr.shape}")
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr).all(axis=1) | (arr != np.round(arr)).any(axis=1)
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                raise DataError(f"{source_name}: row {r} is not a pair of integer "
                                f"document positions: {arr[r].tolist()}")
            out = (arr < 0) | (arr >= n_docs)  # before the cast: 1e30 does not fit int64
            if out.any():
                r, c = map(int, np.argwhere(out)[0])
                raise DataError(f"{source_name}: row {r} refers to document {arr[r, c]:g}, "
                                f"which is not in [0, {n_docs})")
        elif arr.dtype.kind not in "iu":
            raise DataError(f"{source_name}: pairs must be integers, got dtype {arr.dtype}")
        if arr.dtype.kind == "u" and arr.size and arr.max() >= n_docs:
            r, c = map(int, np.argwhere(arr >= n_docs)[0])
            raise DataError(f"{source_name}: row {r} refers to document {arr[r, c]}, "
                            f"which is not in [0, {n_docs})")
        arr = arr.astype(np.int64)
        out = (arr < 0) | (arr >= n_docs)
        if out.any():
            r, c = map(int, np.argwhere(out)[0])
            raise DataError(f"{source_name}: row {r} refers to document {arr[r, c]}, "
                            f"which is not in [0, {n_docs})")
        selfs = arr[:, 0] == arr[:, 1]
        if selfs.any():
            if self_links == "error":
                r = int(np.flatnonzero(selfs)[0])
                raise DataError(f"{source_name}: row {r} is a self-link ({arr[r, 0]} -> "
                                f"{arr[r, 0]}); {int(selfs.sum())} self-links in all")
            logger.info("%s: dropped %d self-links", source_name, int(selfs.sum()))
            arr = arr[~selfs]
        if not directed:
            arr = np.sort(arr, axis=1)
        key = arr[:, 0] * n_docs + arr[:, 1]
        _, first = np.unique(key, return_index=True)
        if first.size < arr.shape[0]:
            if duplicates == "error":
                dup_mask = np.ones(arr.shape[0], bool)
                dup_mask[first] = False
                r = int(np.flatnonzero(dup_mask)[0])
                raise DataError(f"{source_name}: row {r} repeats the pair "
                                f"({arr[r, 0]}, {arr[r, 1]}); "
                                f"{arr.shape[0] - first.size} duplicates in all")
            logger.info("%s: dropped %d duplicate pairs", source_name,
                        arr.shape[0] - first.size)
        first = np.sort(first)
        arr = arr[first]
        return cls(arr[:, 0].astype(np.int32), arr[:, 1].astype(np.int32), int(n_docs),
                   bool(directed))

    @classmethod
    def from_adjacency(cls, A: object, directed: bool | None = None,
                       self_links: Policy = "error") -> Links:
        """From a square (sparse) adjacency matrix; nonzeros are links.

        Entries are link indicators: ``0`` (or an explicitly stored zero) is no link and
        any positive value is one link -- weights such as ``2`` or ``0.3`` are not used
        (the models take binary links).  NaN, infinite and negative entries are refused
        with a one-line :class:`DataError` naming their count and the first position.
        ``directed=None`` infers undirected when the matrix is symmetric.
        """
        check_flag(directed, "directed", allow_none=True)
        check_option(self_links, "self_links", POLICIES)
        M = _adjacency_coo(A, "adjacency")
        if directed is None:
            directed = (abs(sp.csr_matrix(M) - sp.csr_matrix(M).T) != 0).nnz > 0
        pairs = np.column_stack([M.row, M.col])
        if not directed:
            pairs = pairs[pairs[:, 0] <= pairs[:, 1]]
        return cls.from_pairs(pairs, M.shape[0], directed=directed, self_links=self_links,
                              duplicates="drop", source_name="adjacency")

    @classmethod
    def from_networkx(cls, graph: object, doc_ids: np.ndarray | None = None,
                      self_links: Policy = "error") -> Links:
        """From a networkx (Di)Graph whose nodes are document ids.

        ``doc_ids`` fixes the node order (e.g. ``corpus.doc_ids``: distinct integers or
        strings, a repeated id raises naming both positions); a node that is not a
        document raises naming it.  Default: the graph's node order.
        """
        import networkx as nx

        check_option(self_links, "self_links", POLICIES)
        if not isinstance(graph, nx.Graph):
            raise TypeError(f"expected a networkx graph, got {type(graph).__name__}")
        ids = (list(graph.nodes) if doc_ids is None
               else check_ids(doc_ids, "from_networkx: doc_ids").tolist())
        lookup = {v: i for i, v in enumerate(ids)}
        pairs = []
        for k, (u, v) in enumerate(graph.edges()):
            for node in (u, v):
                if node not in lookup:
                    raise DataError(f"graph edge {k} ({u!r}, {v!r}): node {node!r} "
                                    f"is not a document")
            pairs.append((lookup[u], lookup[v]))
        return cls.from_pairs(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), len(ids),
                              directed=graph.is_directed(), self_links=self_links,
                              duplicates="drop", source_name="graph")

    # ------------------------------------------------------------------ views
    @property
    def n_links(self) -> int:
        return int(self.source.size)

    def __len__(self) -> int:
        return self.n_links

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"Links({self.n_links} {kind} links over {self.n_docs} documents)"

    @property
    def pairs(self) -> np.ndarray:
        """``(n_links, 2)`` int32 array of ``(source, target)``."""
        return np.column_stack([self.source, self.target])

    def adjacency(self) -> sp.csr_matrix:
        """Boolean CSR adjacency (n_docs x n_docs); symmetric when undirected."""
        if self._adj is None:
            n = self.n_docs
            ones = np.ones(self.n_links, dtype=bool)
            A = sp.csr_matrix((ones, (self.source, self.target)), shape=(n, n))
            if not self.directed:
                A = (A + A.T).tocsr()
            A.sort_indices()
            self._adj = A
        return self._adj

    def undirected_pairs(self) -> tuple[np.ndarray, sp.csr_matrix]:
        """Unordered linked pairs and the symmetric adjacency (direction ignored).

        Returns
        -------
        pairs : ndarray of int64, shape (M, 2)
            Each unordered pair once, ``pairs[:, 0] < pairs[:, 1]``, in row-major order
            (sorted by first, then second column).  ``a -> b`` and ``b -> a`` give one pair.
        adjacency : csr_matrix of bool, shape (n_docs, n_docs)
            Symmetric, sorted indices; row d lists the neighbours of d.
        """
        A = self.adjacency()
        S = ((A + A.T) > 0).tocsr()
        S.sort_indices()
        upper = sp.triu(S, k=1).tocoo()
        pairs = np.column_stack([upper.row, upper.col]).astype(np.int64)
        return pairs, S

    def degrees(self) -> np.ndarray:
        """Number of links touching each document (in + out)."""
        deg = np.bincount(self.source, minlength=self.n_docs)
        deg += np.bincount(self.target, minlength=self.n_docs)
        return deg

    def to_networkx(self) -> object:
        import networkx as nx

        g = nx.DiGraph() if self.directed else nx.Graph()
        g.add_nodes_from(range(self.n_docs))
        g.add_edges_from(self.pairs.tolist())
        return g

    # ------------------------------------------------------------------ operations
    def subgraph(self, keep: np.ndarray) -> Links:
        """Links among the documents at positions ``keep``, re-indexed to ``0..len(keep)-1``.

        ``keep``: distinct positions in ``[0, n_docs)`` or a boolean mask of length
        ``n_docs``.
        """
        keep = check_index(keep, self.n_docs, name="subgraph")
        uniq, cnt = np.unique(keep, return_counts=True)
        if (cnt > 1).any():
            raise DataError(f"subgraph: keep repeats document {int(uniq[cnt > 1][0])}")
        new = np.full(self.n_docs, -1, dtype=np.int64)
        new[keep] = np.arange(keep.size)
        s, t = new[self.source], new[self.target]
        ok = (s >= 0) & (t >= 0)
        pairs = np.column_stack([s[ok], t[ok]])
        return Links.from_pairs(pairs, keep.size, directed=self.directed,
                                duplicates="drop", source_name="subgraph")

    def between(self, rows: np.ndarray, cols: np.ndarray) -> sp.csr_matrix:
        """Boolean matrix (len(rows) x len(cols)) of links from ``rows`` to ``cols``.

        For undirected links both orientations count.
        """
        r = check_index(rows, self.n_docs, name="rows")
        c = check_index(cols, self.n_docs, name="cols")
        return self.adjacency()[r][:, c].tocsr()

    def sample_negatives(self, n: int | None = None, ratio: float | None = None,
                         random_state: RandomState = None, max_tries: int = 50) -> np.ndarray:
        """Sample unobserved, non-self pairs uniformly without replacement.

        Give either ``n`` (number of pairs) or ``ratio`` (fraction of all unobserved
        pairs, e.g. 0.01 as in the gRTM paper).  Directed: ordered pairs; undirected:
        ``i < j``.  Memory: O(n) by rejection sampling, except for a dense request
        (more than a quarter of the unobserved pairs) on a graph of at most 2e7 pairs,
        which enumerates every pair (an n_docs x n_docs boolean mask and int64 keys: at
        most ~0.6 GB).  Note that n itself is ``ratio`` x D^2 (1% of a 100k-document
        network is 1e8 pairs); :func:`topiclink.relational.negatives.negatives_per_document` draws
        O(#links) negatives instead.

        Returns
        -------
        pairs : ndarray of int32, shape (n, 2)
        """
        D = self.n_docs
        total = D * (D - 1) if self.directed else D * (D - 1) // 2
        n_unobserved = total - self.n_links
        if (n is None) == (ratio is None):
            raise ValueError("give exactly one of n and ratio")
        if n is not None and (isinstance(n, bool | np.bool_)
                              or not isinstance(n, int | np.integer)):
            raise ValueError(f"n must be an integer >= 0, got {type(n).__name__}")
        if ratio is not None:
            if isinstance(ratio, bool | np.bool_) or not isinstance(
                    ratio, int | float | np.integer | np.floating):
                raise ValueError(f"ratio must be a number in [0, 1], got "
                                 f"{type(ratio).__name__}")
            if not 0 <= ratio <= 1:
                raise ValueError(f"ratio must be in [0, 1], got {ratio}")
            n = int(round(ratio * n_unobserved))
        assert n is not None
        if n < 0 or n > n_unobserved:
            raise ValueError(f"cannot sample {n} negative pairs: only {n_unobserved} "
                             f"unobserved pairs exist")
        rng = as_generator(random_state)
        pos_keys = np.sort(self.source.astype(np.int64) * D + self.target)
        if n > 0.25 * n_unobserved and total <= 20_000_000:
            # dense request on a small graph: enumerate the unobserved pairs and choose
            i, j = (np.nonzero(~np.eye(D, dtype=bool)) if self.directed
                    else np.triu_indices(D, k=1))
            keys = np.setdiff1d(i.astype(np.int64) * D + j, pos_keys, assume_unique=True)
            chosen = rng.choice(keys, size=n, replace=False)
            return np.column_stack([chosen // D, chosen % D]).astype(np.int32)
        chosen = np.zeros(0, dtype=np.int64)
        for _ in range(max_tries):
            need = n - chosen.size
            if need <= 0:
                break
            m = int(need * 1.2) + 16
            i = rng.integers(0, D, size=m)
            j = rng.integers(0, D, size=m)
            if not self.directed:
                i, j = np.minimum(i, j), np.maximum(i, j)
            keys = i * D + j
            keys = keys[i != j]
            hit = np.searchsorted(pos_keys, keys)
            hit = np.minimum(hit, max(pos_keys.size - 1, 0))
            if pos_keys.size:
                keys = keys[pos_keys[hit] != keys]
            # keep first occurrences, in draw order, excluding ones already chosen
            _, first = np.unique(keys, return_index=True)
            keys = keys[np.sort(first)]
            keys = keys[~np.isin(keys, chosen)]
            chosen = np.concatenate([chosen, keys[:need]])
        if chosen.size < n:
            raise RuntimeError(f"could not sample {n} negative pairs in {max_tries} rounds "
                               f"(the graph is nearly complete)")
        return np.column_stack([chosen // D, chosen % D]).astype(np.int32)


def as_links(links: object, n_docs: int, doc_ids: np.ndarray | None = None,
             directed: bool | None = None) -> Links:
    """Accept :class:`Links`, an ``(n, 2)`` array, a SciPy adjacency or a networkx graph."""
    check_flag(directed, "directed", allow_none=True)
    if isinstance(links, Links):
        if links.n_docs != n_docs:
            raise DataError(f"links cover {links.n_docs} documents but the corpus has {n_docs}")
        return links
    if sp.issparse(links):
        if links.shape != (n_docs, n_docs):
            raise DataError(f"adjacency has shape {links.shape} for {n_docs} documents")
        return Links.from_adjacency(links, directed=directed)
    try:
        import networkx as nx

        if isinstance(links, nx.Graph):
            out = Links.from_networkx(links, doc_ids=doc_ids)
            if out.n_docs != n_docs:
                raise DataError(f"graph has {out.n_docs} nodes for {n_docs} documents")
            return out
    except ImportError:  # pragma: no cover
        pass
    if links is None or isinstance(links, str | bytes | dict | set):
        raise DataError(f"links must be Links, an (n, 2) array of document positions, a "
                        f"scipy.sparse adjacency or a networkx graph, got "
                        f"{type(links).__name__}")
    return Links.from_pairs(links, n_docs, directed=True if directed is None else directed)


def _adjacency_coo(A: object, name: str) -> sp.coo_matrix:
    """A square adjacency as canonical COO without zeros; one-line DataError for a
    non-numeric, non-square matrix or a NaN, infinite or negative entry."""
    if sp.issparse(A):
        if A.dtype.kind not in "biuf":
            raise DataError(f"{name} must hold numbers, got dtype {A.dtype}")
        M = sp.coo_matrix(A)
    else:
        if isinstance(A, str | bytes | dict | set) or A is None:
            raise DataError(f"{name} must be a square matrix of numbers, got "
                            f"{type(A).__name__}")
        try:
            dense = np.asarray(A)
        except (TypeError, ValueError):
            raise DataError(f"{name} must be a square matrix of numbers") from None
        if dense.ndim != 2 or dense.dtype.kind not in "biuf":
            raise DataError(f"{name} must be a square 2-D matrix of numbers, got shape "
                            f"{dense.shape} and dtype {dense.dtype}")
        M = sp.coo_matrix(dense)
    if M.shape[0] != M.shape[1]:
        raise DataError(f"{name} must be square, got shape {M.shape}")
    M.sum_duplicates()
    data = M.data
    for bad, what in ((~np.isfinite(data) if data.dtype.kind == "f" else None,
                       "NaN or infinite"), (data < 0, "negative")):
        if bad is not None and bad.any():
            p = int(np.flatnonzero(bad)[0])
            raise DataError(f"{name}: {int(bad.sum())} {what} entries, first {data[p].item()!r} at "
                            f"({int(M.row[p])}, {int(M.col[p])}); entries must be 0 (no "
                            f"link) or positive (a link)")
    M.eliminate_zeros()
    return M


def _check_n_docs(n_docs: object, source_name: str) -> int:
    if (isinstance(n_docs, bool | np.bool_) or not isinstance(n_docs, int | np.integer)
            or n_docs < 0):
        raise DataError(f"{source_name}: n_docs must be an integer >= 0, got {n_docs!r}")
    return int(n_docs)
