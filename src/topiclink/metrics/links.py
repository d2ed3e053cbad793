"""Link-prediction metrics: predictive link rank and ROC/PR areas over node pairs."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from scipy.stats import rankdata
from sklearn.metrics import average_precision_score, roc_auc_score

from topiclink.metrics._validate import real_matrix, refuse_complex

__all__ = ["link_rank", "link_rank_per_query", "predictive_rank", "link_auc"]


def _positive_pairs(func: str, true_links: ArrayLike | sp.sparray | sp.spmatrix,
                    shape: tuple[int, int]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Row and column indices of the non-zero entries of ``true_links`` (dense or sparse)."""
    refuse_complex(func, "true_links", true_links)
    if sp.issparse(true_links):
        if true_links.shape != shape:
            raise ValueError(f"{func}: scores has shape {shape} but true_links has shape "
                             f"{true_links.shape}")
        coo = sp.coo_array(true_links)
        coo.sum_duplicates()
        data = np.asarray(coo.data)
        if data.dtype != bool and np.isnan(data.astype(np.float64)).any():
            raise ValueError(f"{func}: true_links contains NaN")
        keep = data != 0
        return coo.row[keep].astype(np.intp), coo.col[keep].astype(np.intp)
    arr = np.asarray(true_links)
    if arr.ndim != 2 or arr.shape != shape:
        raise ValueError(f"{func}: scores has shape {shape} but true_links has shape {arr.shape}")
    if arr.dtype != bool:
        try:
            num = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{func}: true_links must be boolean or numeric") from None
        if np.isnan(num).any():
            raise ValueError(f"{func}: true_links contains NaN")
        arr = num != 0
    rows, cols = np.nonzero(arr)
    return rows.astype(np.intp), cols.astype(np.intp)


def _rank_per_query(func: str, scores: ArrayLike,
                    true_links: ArrayLike | sp.sparray | sp.spmatrix) -> NDArray[np.float64]:
    refuse_complex(func, "scores", scores)
    s = real_matrix(func, "scores", scores, "n_query, n_candidates")
    rows, cols = _positive_pairs(func, true_links, s.shape)
    # rank 1 = highest score; tied candidates share the average of their ranks
    ranks = rankdata(-s, method="average", axis=1)
    n_query = s.shape[0]
    n_true = np.bincount(rows, minlength=n_query)
    rank_sum = np.bincount(rows, weights=ranks[rows, cols], minlength=n_query)
    out = np.full(n_query, np.nan)
    has = n_true > 0
    out[has] = rank_sum[has] / n_true[has]
    return out


def link_rank_per_query(scores: ArrayLike,
                        true_links: ArrayLike | sp.sparray | sp.spmatrix) -> NDArray[np.float64]:
    """Mean rank of each query's true links among all its candidates.

    For query :math:`i` with true candidate set :math:`T_i \\neq \\emptyset`,

    .. math::

        r_i = \\frac{1}{|T_i|} \\sum_{j \\in T_i} \\mathrm{rank}_i(j),

    where :math:`\\mathrm{rank}_i` ranks the candidates by descending ``scores[i]`` (rank 1 =
    highest score; tied candidates all get the average of the ranks they span).

    Parameters
    ----------
    scores : array_like of float, shape (n_query, n_candidates)
        Link scores, higher = more likely linked; NaN is rejected, ``-inf``/``inf`` rank last
        and first.
    true_links : array_like or scipy sparse matrix, shape (n_query, n_candidates)
        True links; every non-zero entry is a link.

    Returns
    -------
    ndarray of float64, shape (n_query,)
        :math:`r_i`, NaN for queries without any true link.
    """
    return _rank_per_query("link_rank_per_query", scores, true_links)


def link_rank(scores: ArrayLike, true_links: ArrayLike | sp.sparray | sp.spmatrix) -> float:
    """Predictive link rank: mean over queries of the mean rank of their true links.

    .. math::

        \\mathrm{LR} = \\frac{1}{|Q|} \\sum_{i \\in Q} \\frac{1}{|T_i|}
        \\sum_{j \\in T_i} \\mathrm{rank}_i(j), \\qquad Q = \\{i : T_i \\neq \\emptyset\\},

    with ranks as in :func:`link_rank_per_query` (1 = best, average ranks for ties). Lower
    is better; random scores give :math:`(n_{\\text{candidates}} + 1)/2` in expectation and
    a query whose :math:`m` true links are scored highest gets :math:`(m + 1)/2`.

    Parameters
    ----------
    scores : array_like of float, shape (n_query, n_candidates)
        Link scores, higher = more likely linked.
    true_links : array_like or scipy sparse matrix, shape (n_query, n_candidates)
        True links (non-zero entries).

    Returns
    -------
    float
        The predictive link rank.

    Raises
    ------
    ValueError
        On shape mismatch, empty or NaN scores, or when no query has a true link.
    """
    per_query = _rank_per_query("link_rank", scores, true_links)
    has = ~np.isnan(per_query)
    if not has.any():
        raise ValueError("link_rank: true_links has no non-zero entry, so no query can be ranked")
    return float(np.mean(per_query[has]))


predictive_rank = link_rank


def link_auc(scores: ArrayLike, true_links: ArrayLike | sp.sparray | sp.spmatrix,
             mask: ArrayLike | sp.sparray | sp.spmatrix | None = None) -> dict[str, float]:
    """Areas under the ROC and precision-recall curves over (query, candidate) pairs.

    Every pair :math:`(i, j)` (or every pair with ``mask[i, j]`` true) is one binary
    prediction with label ``true_links[i, j] != 0`` and score ``scores[i, j]``. The ROC AUC
    is :func:`sklearn.metrics.roc_auc_score`; the PR AUC is the average precision
    :math:`\\sum_k (R_k - R_{k-1}) P_k` of :func:`sklearn.metrics.average_precision_score`.
    Both depend on the scores only through their order, so the scores are replaced by their
    ranks (ties kept), which also admits ``-inf``/``inf`` scores.

    Parameters
    ----------
    scores : array_like of float, shape (n_query, n_candidates)
        Link scores, higher = more likely linked.
    true_links : array_like or scipy sparse matrix, shape (n_query, n_candidates)
        True links (non-zero entries).
    mask : array_like of bool or scipy sparse matrix, shape (n_query, n_candidates), optional
        Pairs to evaluate (e.g. held-out pairs, or all pairs but self-links).

    Returns
    -------
    dict
        ``{"roc_auc": float, "pr_auc": float}``.

    Raises
    ------
    ValueError
        On shape mismatch, empty or NaN scores, an empty mask, or when the evaluated pairs
        contain no positive or no negative.
    """
    func = "link_auc"
    refuse_complex(func, "scores", scores)
    s = real_matrix(func, "scores", scores, "n_query, n_candidates")
    rows, cols = _positive_pairs(func, true_links, s.shape)
    labels = np.zeros(s.shape, dtype=bool)
    labels[rows, cols] = True
    if mask is not None:
        m = mask.toarray() if sp.issparse(mask) else np.asarray(mask)
        if m.shape != s.shape:
            raise ValueError(f"{func}: scores has shape {s.shape} but mask has shape {m.shape}")
        if m.dtype != bool:
            raise ValueError(f"{func}: mask must be boolean, got dtype {m.dtype}")
        y, score = labels[m], s[m]
        where = " among the masked pairs"
        if y.size == 0:
            raise ValueError(f"{func}: mask selects no pair")
    else:
        y, score = labels.ravel(), s.ravel()
        where = ""
    n_pos = int(np.count_nonzero(y))
    if n_pos == 0:
        raise ValueError(f"{func}: true_links has no positive pair{where}, AUC is undefined")
    if n_pos == y.size:
        raise ValueError(f"{func}: true_links has no negative pair{where}, AUC is undefined")
    ranked = rankdata(score, method="average")
    return {
        "roc_auc": float(roc_auc_score(y, ranked)),
        "pr_auc": float(average_precision_score(y, ranked)),
    }
