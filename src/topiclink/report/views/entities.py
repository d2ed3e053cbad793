"""The entities view of BPBFM (knowledge graphs): the relation matrices, the entities
that carry each factor, and the predicted tails of (head, relation) queries with the
posterior mean probability and a 90% interval over the kept posterior samples."""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.data.tensor import RelationalTensor

__all__ = ["top_entities", "query_pairs", "predicted_tails", "entities_view"]


def top_entities(model: Any, n: int = 10) -> list[dict[str, Any]]:
    """Factors by decreasing weight, each with its ``n`` entities of largest loading."""
    U = np.asarray(model.embedding_, dtype=np.float64)
    names = np.asarray(model.entity_names_)
    weights = np.asarray(model.factor_weights_, dtype=np.float64)
    out = []
    for k in np.argsort(-weights, kind="stable"):
        best = np.argsort(-U[:, k], kind="stable")[:n]
        out.append({"factor": int(k), "weight": round(float(weights[k]), 5),
                    "entities": [str(names[i]) for i in best],
                    "loadings": [round(float(U[i, k]), 5) for i in best]})
    return out


def _in_model(model: Any, tensor: RelationalTensor) -> tuple[np.ndarray, ...]:
    """The tensor's nonzero (heads, relations, tails) as the model's indices
    (:meth:`~topiclink.estimators.capabilities.EntityFactorsMixin.model_indices`), the
    triples with an entity or relation the model does not know dropped."""
    h, r, t = model.model_indices(tensor)
    keep = (h >= 0) & (r >= 0) & (t >= 0)
    return h[keep], r[keep], t[keep]


def query_pairs(model: Any, tensor: RelationalTensor | None, max_pairs: int
                ) -> tuple[np.ndarray, np.ndarray, str]:
    """(heads, relations) of the queries whose tails are precomputed, and how they were
    chosen: every pair when there are at most ``max_pairs``; else the most frequent
    (head, relation) pairs of the attached tensor, or the heads of largest loading with
    every relation."""
    N = int(np.shape(model.embedding_)[0])
    R = int(np.shape(model.relation_matrices_)[0])
    if N * R <= max_pairs:
        h, r = np.meshgrid(np.arange(N), np.arange(R), indexing="ij")
        return h.ravel(), r.ravel(), f"every (head, relation) pair ({N * R})"
    found = _in_model(model, tensor) if tensor is not None else None
    if found is not None and found[0].size:
        key = found[0] * R + found[1]
        uniq, count = np.unique(key, return_counts=True)
        keep = uniq[np.argsort(-count, kind="stable")[:max_pairs]]
        keep = np.sort(keep)
        return keep // R, keep % R, (f"the {keep.size} most frequent (head, relation) "
                                     f"pairs of the data (of {N * R})")
    n_heads = max(1, max_pairs // R)
    mass = np.asarray(model.embedding_).sum(axis=1)
    heads = np.sort(np.argsort(-mass, kind="stable")[:n_heads])
    h, r = np.meshgrid(heads, np.arange(R), indexing="ij")
    return h.ravel(), r.ravel(), (f"the {heads.size} entities of largest loading with "
                                  f"every relation (of {N} entities)")


def predicted_tails(model: Any, heads: np.ndarray, relations: np.ndarray, *, top: int = 10,
                    max_samples: int = 30, block: int = 4_000_000
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """For each query (heads[i], relations[i]): the ``top`` tails by posterior mean
    probability ``mean_s 1 - exp(-u_h^s Lambda_r^s u_t^s)`` over the kept samples (at most
    ``max_samples``, evenly spaced), the mean, and the (5%, 95%) quantiles (None with a
    single sample).  Returns (tails, mean, interval) of shapes (n, top), (n, top),
    (n, top, 2)."""
    U_all = np.asarray(model.samples_embedding_, dtype=np.float64)
    L_all = np.asarray(model.samples_relation_matrices_, dtype=np.float64)
    pick = np.unique(np.linspace(0, U_all.shape[0] - 1, min(max_samples, U_all.shape[0]))
                     .round().astype(int))
    U_all, L_all = U_all[pick], L_all[pick]
    S, N = U_all.shape[0], U_all.shape[1]
    top = min(int(top), N)
    n = heads.size
    tails = np.zeros((n, top), dtype=np.int64)
    mean = np.zeros((n, top))
    interval = np.zeros((n, top, 2)) if S > 1 else None
    step = max(1, block // max(S * N, 1))
    for r in np.unique(relations):
        rows = np.flatnonzero(relations == r)
        for start in range(0, rows.size, step):
            idx = rows[start:start + step]
            h = heads[idx]
            probs = np.stack([-np.expm1(-(U_all[s][h] @ L_all[s][r]) @ U_all[s].T)
                              for s in range(S)])                   # (S, len(idx), N)
            avg = probs.mean(axis=0)
            best = np.argsort(-avg, axis=1, kind="stable")[:, :top]
            tails[idx] = best
            mean[idx] = np.take_along_axis(avg, best, axis=1)
            if interval is not None:
                chosen = np.take_along_axis(probs, best[None, :, :].repeat(S, axis=0), axis=2)
                interval[idx, :, 0] = np.quantile(chosen, 0.05, axis=0)
                interval[idx, :, 1] = np.quantile(chosen, 0.95, axis=0)
    return tails, mean, interval


def _true_tails(model: Any, tensor: RelationalTensor | None, R: int
                ) -> dict[int, set[int]]:
    if tensor is None:
        return {}
    out: dict[int, set[int]] = {}
    for h, r, t in zip(*(a.tolist() for a in _in_model(model, tensor)), strict=True):
        out.setdefault(h * R + r, set()).add(t)
    return out


def entities_view(model: Any, tensor: RelationalTensor | None, *, max_pairs: int = 3000,
                  top: int = 10) -> dict[str, Any]:
    """The entities view's data (JSON-able)."""
    L = np.asarray(model.relation_matrices_, dtype=np.float64)
    R = L.shape[0]
    heads, relations, how = query_pairs(model, tensor, max_pairs)
    tails, mean, interval = predicted_tails(model, heads, relations, top=top)
    truth = _true_tails(model, tensor, R)
    marks = [[int(t in truth.get(int(h) * R + int(r), ())) for t in row]
             for h, r, row in zip(heads.tolist(), relations.tolist(), tails.tolist(),
                                  strict=True)]
    return {
        "entities": [str(e) for e in np.asarray(model.entity_names_).tolist()],
        "relations": [str(r) for r in np.asarray(model.relation_names_).tolist()],
        "n_factors": int(L.shape[1]),
        "matrices": [[[float(f"{v:.4g}") for v in row] for row in m] for m in L.tolist()],
        "factors": top_entities(model),
        "queries": {"heads": heads.tolist(), "relations": relations.tolist(),
                    "tails": tails.tolist(),
                    "mean": [[round(v, 4) for v in row] for row in mean.tolist()],
                    "interval": (None if interval is None else
                                 np.round(interval, 4).tolist()),
                    "true": marks if tensor is not None else None,
                    "note": f"tails precomputed for {how}"},
        "interval_note": ("90% interval: the 5% and 95% quantiles of the probability over "
                          f"{min(30, int(np.shape(model.samples_embedding_)[0]))} kept "
                          "posterior samples" if interval is not None else
                          "the model kept one posterior sample: no interval"),
    }
