"""Predictive link rank over many queries in bounded memory.

Scoring every test document against every training document at once needs a dense
``n_test x n_train`` matrix (4,064 x 25,224 float64 for hep-th is 820 MB, and ranking it
doubles that).  :func:`rank_in_chunks` asks a scoring function for a few rows at a time
and ranks each block with :func:`~topiclink.metrics.links.link_rank_per_query`, so the peak
is a few times ``chunk_size x n_train`` floats; the result is identical to ranking the full
matrix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from topiclink.metrics.links import link_rank_per_query

__all__ = ["default_chunk_size", "rank_in_chunks"]

#: Target number of score entries per block (4M float64 = 32 MiB).
_BLOCK_ENTRIES = 1 << 22


def default_chunk_size(n_candidates: int) -> int:
    """Rows per block so that one block of scores holds about 4 million entries (32 MiB)."""
    return max(1, _BLOCK_ENTRIES // max(int(n_candidates), 1))


def rank_in_chunks(score_fn: Callable[[NDArray[np.int64]], ArrayLike], n_queries: int,
                   n_candidates: int, true_links: ArrayLike | sp.spmatrix | sp.sparray, *,
                   chunk_size: int | None = None,
                   reduce: Literal["mean"] | None = "mean") -> float | NDArray[np.float64]:
    """Predictive link rank of all queries, scoring ``chunk_size`` queries at a time.

    Parameters
    ----------
    score_fn : callable
        ``score_fn(rows) -> scores`` of shape ``(len(rows), n_candidates)``: link scores
        (higher = more likely) of the queries at positions ``rows`` (an int64 array of
        consecutive positions) against every candidate.
    n_queries, n_candidates : int
        E.g. test and training documents.
    true_links : array_like or sparse, shape (n_queries, n_candidates)
        The true links (non-zero entries), e.g. :attr:`TimeSplit.test_citations`.
    chunk_size : int, optional
        Queries per block; default :func:`default_chunk_size` (about 32 MiB of scores).
    reduce : {"mean", None}
        ``"mean"``: the predictive rank, the mean over queries with a true link of the
        mean rank of their true links (:func:`~topiclink.metrics.links.link_rank`);
        ``None``: the per-query ranks (NaN for queries without a true link).

    Returns
    -------
    float or ndarray of float64, shape (n_queries,)

    Raises
    ------
    ValueError
        A score block of the wrong shape, or (``reduce="mean"``) no true link at all.
    """
    n_q, n_c = int(n_queries), int(n_candidates)
    if n_q < 1 or n_c < 1:
        raise ValueError(f"rank_in_chunks: need at least one query and one candidate, got "
                         f"{n_q} x {n_c}")
    if chunk_size is None:
        chunk_size = default_chunk_size(n_c)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int | np.integer) \
            or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
    if reduce not in ("mean", None):
        raise ValueError(f"reduce must be 'mean' or None, got {reduce!r}")
    truth = sp.csr_matrix(true_links) if sp.issparse(true_links) else \
        sp.csr_matrix(np.asarray(true_links))
    if truth.shape != (n_q, n_c):
        raise ValueError(f"rank_in_chunks: true_links has shape {truth.shape}, expected "
                         f"({n_q}, {n_c})")
    out = np.full(n_q, np.nan)
    for start in range(0, n_q, int(chunk_size)):
        rows = np.arange(start, min(start + int(chunk_size), n_q), dtype=np.int64)
        block_truth = truth[rows]
        if block_truth.nnz == 0:
            continue
        scores = np.asarray(score_fn(rows), dtype=np.float64)
        if scores.shape != (rows.size, n_c):
            raise ValueError(f"rank_in_chunks: score_fn returned shape {scores.shape} for "
                             f"{rows.size} queries, expected ({rows.size}, {n_c})")
        out[rows] = link_rank_per_query(scores, block_truth)
        del scores
    if reduce is None:
        return out
    has = ~np.isnan(out)
    if not has.any():
        raise ValueError("rank_in_chunks: true_links has no non-zero entry, so no query can "
                         "be ranked")
    return float(np.mean(out[has]))
