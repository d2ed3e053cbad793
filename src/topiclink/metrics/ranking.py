"""Knowledge-graph completion metrics: filtered ranks, mean reciprocal rank, Hits@k.

For a test triple (h, r, t), tail prediction ranks t among all entities by the model's
score of (h, r, e); head prediction ranks h by the score of (e, r, t).  In the *filtered*
setting (Bordes et al. 2013) every other entity e that forms a known true triple
((h, r, e), resp. (e, r, t), in train, valid or test) is removed from the ranking, so that
a model is not penalised for ranking another true answer first.

Ties: an entity tied with the true one counts half, so the rank is the mean of the ranks
the tied group spans (``1 + #higher + #tied / 2``, the tied others not counting the true
entity itself).  A constant scorer thus gets the rank of random guessing,
``(n_candidates + 1) / 2``, not the optimistic 1 nor the pessimistic ``n_candidates``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from topiclink.metrics._validate import refuse_complex

__all__ = ["filtered_ranks", "mrr_hits", "filter_mask", "metrics_by_side"]


def filter_mask(filter_: ArrayLike | Sequence[ArrayLike] | sp.sparray | sp.spmatrix | None,
                shape: tuple[int, int], func: str = "filtered_ranks") -> NDArray[np.bool_]:
    """The filter as a dense boolean (n_queries, n_entities) array.

    ``filter_`` is None (raw setting: nothing removed), a boolean array or scipy sparse
    matrix of that shape (True: a known true answer to remove), or a sequence of
    ``n_queries`` integer arrays (the entities to remove for each query).
    """
    n_q, n_e = shape
    if filter_ is None:
        return np.zeros(shape, dtype=bool)
    if sp.issparse(filter_):
        if filter_.shape != shape:
            raise ValueError(f"{func}: scores has shape {shape} but the filter has shape "
                             f"{filter_.shape}")
        return np.asarray(sp.csr_array(filter_).toarray() != 0)
    if isinstance(filter_, np.ndarray) and filter_.ndim == 2:
        if filter_.shape != shape:
            raise ValueError(f"{func}: scores has shape {shape} but the filter has shape "
                             f"{filter_.shape}")
        if filter_.dtype != bool:
            raise ValueError(f"{func}: a filter array must be boolean, got {filter_.dtype}")
        return filter_
    lists = list(filter_)  # type: ignore[arg-type]
    if len(lists) != n_q:
        raise ValueError(f"{func}: the filter has {len(lists)} lists for {n_q} queries")
    mask = np.zeros(shape, dtype=bool)
    sizes = np.fromiter((np.size(x) for x in lists), dtype=np.int64, count=n_q)
    if sizes.sum():
        cols = np.concatenate([np.asarray(x, dtype=np.int64).ravel() for x in lists])
        if cols.min() < 0 or cols.max() >= n_e:
            bad = cols[(cols < 0) | (cols >= n_e)][0]
            raise ValueError(f"{func}: filtered entity {bad} is not in [0, {n_e})")
        mask[np.repeat(np.arange(n_q), sizes), cols] = True
    return mask


def filtered_ranks(scores: ArrayLike, true_index: ArrayLike,
                   filter_: ArrayLike | Sequence[ArrayLike] | sp.sparray | sp.spmatrix
                   | None = None) -> NDArray[np.float64]:
    """The rank of each query's true entity among the unfiltered candidates.

    .. math::

        \\mathrm{rank}_q = 1 + \\#\\{e \\in C_q : s_{qe} > s_{q t_q}\\}
        + \\tfrac12 \\#\\{e \\in C_q : s_{qe} = s_{q t_q}\\},

    with :math:`C_q` every entity except the true one :math:`t_q` and the filtered ones
    (rank 1 = best; ties at the mean rank of the tied group).

    Parameters
    ----------
    scores : array_like of float, shape (n_queries, n_entities)
        Higher = more likely; NaN is rejected (``inf``/``-inf`` allowed).
    true_index : array_like of int, shape (n_queries,)
        The true entity of each query.
    filter_ : bool array / sparse matrix of shape (n_queries, n_entities), or a sequence
        of n_queries integer arrays, or None
        Known true answers removed from the ranking (the true entity itself is never
        removed, whether it is listed or not).  None: the raw setting.

    Returns
    -------
    ndarray of float64, shape (n_queries,)
        Ranks in ``[1, n_entities]`` (halves on ties).
    """
    func = "filtered_ranks"
    refuse_complex(func, "scores", scores)
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 2:
        raise ValueError(f"{func}: scores must be 2-D (n_queries, n_entities), got "
                         f"{s.ndim}-D")
    if np.isnan(s).any():
        q, e = (int(i) for i in np.argwhere(np.isnan(s))[0])
        raise ValueError(f"{func}: scores contains NaN at [{q}, {e}]")
    n_q, n_e = s.shape
    idx = np.asarray(true_index)
    if idx.shape != (n_q,) or (idx.size and idx.dtype.kind not in "iu"):
        raise ValueError(f"{func}: true_index must be {n_q} integers, got shape {idx.shape} "
                         f"dtype {idx.dtype}")
    idx = idx.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n_e):
        raise ValueError(f"{func}: true index {idx[(idx < 0) | (idx >= n_e)][0]} is not in "
                         f"[0, {n_e})")
    keep = ~filter_mask(filter_, s.shape, func)
    rows = np.arange(n_q)
    keep[rows, idx] = False          # the true entity is counted apart (the 1)
    true_score = s[rows, idx][:, None]
    higher = np.count_nonzero((s > true_score) & keep, axis=1)
    tied = np.count_nonzero((s == true_score) & keep, axis=1)
    return 1.0 + higher + 0.5 * tied


def mrr_hits(ranks: ArrayLike, ks: Iterable[int] = (1, 3, 10)) -> dict[str, float]:
    """Mean reciprocal rank and Hits@k of a set of ranks.

    Returns ``{"mrr": mean(1 / rank), "hits_at_k": share of ranks <= k, ...}`` (a rank
    of 1.5, half-tied with the best, is not a hit at 1).  NaN everywhere for no ranks.
    """
    r = np.asarray(ranks, dtype=np.float64).ravel()
    if r.size and (np.isnan(r).any() or r.min() < 1):
        raise ValueError("mrr_hits: ranks must be numbers >= 1")
    out: dict[str, float] = {"mrr": float(np.mean(1.0 / r)) if r.size else float("nan")}
    for k in ks:
        out[f"hits_at_{int(k)}"] = float(np.mean(r <= k)) if r.size else float("nan")
    return out


def metrics_by_side(ranks: Mapping[str, ArrayLike], ks: Iterable[int] = (1, 3, 10)
                    ) -> dict[str, float]:
    """:func:`mrr_hits` of head and tail ranks, separately (suffix ``_head``/``_tail``) and
    pooled (no suffix): ``ranks = {"head": ..., "tail": ...}``."""
    ks = tuple(ks)
    out = mrr_hits(np.concatenate([np.ravel(ranks["head"]), np.ravel(ranks["tail"])]), ks)
    for side in ("head", "tail"):
        out.update({f"{k}_{side}": v for k, v in mrr_hits(ranks[side], ks).items()})
    return out
