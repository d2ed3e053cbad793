"""The relational view of a link model (gRTM, Var-RTM, LDA + Regression, LMV): the
topic-by-topic link matrix, suggested links of the training documents with the true
links marked, held-out precision@k, and the network coloured by dominant topic."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.report.network import force_layout, sample_network

__all__ = ["link_matrix", "suggestions", "precision_at_k", "network_view",
           "relational_view"]


def link_matrix(model: Any) -> tuple[np.ndarray, str] | None:
    """The model's (K, K) topic-by-topic link matrix and what it is, or None."""
    weights = getattr(model, "weights_", None)
    if weights is not None:
        W = np.asarray(weights, dtype=np.float64)
        if W.ndim == 1:
            return np.diag(W), ("link weights eta_k (diagonal: a link between two documents "
                                "is likely when they share topic k)")
        return W, ("link weights U[k, l] (topic k of one document with topic l of the "
                   "other; large = linked)")
    blocks = getattr(model, "blockmodel_", None)
    if blocks is not None:
        return (np.asarray(blocks, dtype=np.float64),
                "blockmodel B[i, j]: probability that a document of topic i cites one of "
                "topic j")
    coef = getattr(model, "coef_", None)
    if coef is not None and np.ndim(coef) == 1:
        return (np.diag(np.asarray(coef, dtype=np.float64)),
                "regression coefficients on the products of the two documents' topic "
                "shares (diagonal)")
    return None


def suggestions(model: Any, queries: np.ndarray, *, top: int = 10, chunk: int | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """The ``top`` training documents with the highest link score (``direction=
    "either"``) for each training document in ``queries``, itself excluded: (targets,
    scores), both (len(queries), top).  Scored ``chunk`` queries at a time (default: at
    most 256, and about 4 million scores a block)."""
    from topiclink.metrics.chunked import default_chunk_size

    n_train = int(np.shape(model.train_zbar_)[0])
    chunk = chunk or min(256, default_chunk_size(n_train))
    top = min(int(top), max(n_train - 1, 1))
    targets = np.zeros((queries.size, top), dtype=np.int64)
    scores = np.zeros((queries.size, top))
    for start in range(0, queries.size, chunk):
        q = queries[start:start + chunk]
        s = np.asarray(model.link_scores(None, queries=q, direction="either"),
                       dtype=np.float64)
        s[np.arange(q.size), q] = -np.inf
        # the top-th score of each row; every target at least as good is a candidate,
        # ranked by score then position (as a stable sort of the whole row would)
        kth = -np.partition(-s, top - 1, axis=1)[:, top - 1]
        for i, row in enumerate(s):
            cand = np.flatnonzero(row >= kth[i])
            best = cand[np.lexsort((cand, -row[cand]))][:top]
            targets[start + i] = best
            scores[start + i] = row[best]
    return targets, scores


def precision_at_k(model: Any, corpus: Corpus, truth: sp.csr_matrix,
                   ks: tuple[int, ...] = (1, 5, 10)) -> dict[str, float]:
    """Mean precision@k of the links suggested for held-out documents (``corpus``, known
    by their words) among the training documents; ``truth`` (n_held, n_train) marks
    their true links.  Documents without a true link are left out; ``"n_documents"``
    counts the others."""
    truth = sp.csr_matrix(truth, dtype=bool)
    linked = np.flatnonzero(np.asarray(truth.sum(axis=1)).ravel() > 0)
    if linked.size == 0:
        return {"n_documents": 0}
    truth = truth[linked]
    part = corpus if linked.size == corpus.n_docs else corpus.subset(linked)
    out: dict[str, float] = {"n_documents": int(linked.size)}
    kmax = min(max(ks), truth.shape[1])
    # the kmax best of each document, scored in blocks (never the n_held x n_train matrix)
    table = model.suggest_links(part, top=kmax, direction="either")
    best = table["target"].to_numpy(dtype=np.int64).reshape(linked.size, kmax)
    hits = np.asarray(truth[np.arange(linked.size)[:, None], best].todense(), dtype=bool)
    for k in ks:
        if k <= kmax:
            out[f"precision@{k}"] = float(hits[:, :k].mean())
    return out


def network_view(links: Links, theta: np.ndarray, topic_xy: np.ndarray, *,
                 max_nodes: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Nodes (document positions, layout, dominant topic) and edges of the network drawn
    (the ``max_nodes`` most connected documents when there are more)."""
    net = sample_network(links.adjacency(), max_nodes)
    dominant = np.argmax(theta, axis=1)
    noise = np.random.default_rng(seed).normal(scale=0.05, size=(net.nodes.size, 2))
    start = topic_xy[dominant[net.nodes]] + noise * np.ptp(topic_xy, axis=0).clip(1e-3)
    xy = force_layout(net.nodes.size, net.source, net.target, start, seed=seed)
    sampled = net.nodes.size < net.n_docs_linked
    return {
        "nodes": net.nodes.tolist(),
        "x": np.round(xy[:, 0], 4).tolist(),
        "y": np.round(xy[:, 1], 4).tolist(),
        "topic": dominant[net.nodes].tolist(),
        "source": net.source.tolist(),
        "target": net.target.tolist(),
        "n_docs_linked": net.n_docs_linked,
        "n_links": net.n_links,
        "note": (f"the {net.nodes.size} most connected of the {net.n_docs_linked} linked "
                 f"documents and the {net.source.size} links among them"
                 if sampled else
                 f"all {net.n_docs_linked} linked documents and their {net.n_links} links"),
    }


def _neighbours(links: Links) -> list[list[int]]:
    S = links.adjacency()
    S = ((S + S.T) > 0).tocsr()
    S.sort_indices()
    return [S.indices[S.indptr[d]:S.indptr[d + 1]].tolist() for d in range(S.shape[0])]


def relational_view(model: Any, *, links: Links | None, held_out: Corpus | None,
                    held_out_links: sp.csr_matrix | None, topic_xy: np.ndarray,
                    max_nodes: int = 2000, max_suggestion_pairs: int = 20_000_000,
                    top: int = 10, seed: int = 0) -> dict[str, Any]:
    """The relational view's data (JSON-able)."""
    n_train = int(np.shape(model.train_zbar_)[0])
    found = link_matrix(model)
    view: dict[str, Any] = {"matrix": None, "matrix_title": None}
    if found is not None:
        view["matrix"] = np.round(found[0], 5).tolist()
        view["matrix_title"] = found[1]
    network = None
    if links is not None and links.n_links:
        network = network_view(links, np.asarray(model.doc_topic_), topic_xy,
                               max_nodes=max_nodes, seed=seed)
    view["network"] = network
    view["neighbours"] = _neighbours(links) if links is not None else None
    view["links_note"] = ("" if links is not None else
                          "the model file holds no links: attach the data (--dataset, "
                          "--data or --documents --edges) to mark the true links and draw "
                          "the network")
    n_queries = max(1, min(n_train, int(max_suggestion_pairs // max(n_train, 1))))
    if n_queries >= n_train:
        queries = np.arange(n_train)
        note = f"suggestions for all {n_train} training documents"
    elif links is not None and links.n_links:
        queries = np.sort(np.argsort(-links.degrees(), kind="stable")[:n_queries])
        note = (f"suggestions for the {n_queries} most connected of the {n_train} training "
                f"documents (at most {max_suggestion_pairs:,} pairs are scored)")
    else:
        queries = np.sort(np.random.default_rng(seed).choice(n_train, n_queries,
                                                             replace=False))
        note = (f"suggestions for {n_queries} training documents drawn at random of "
                f"{n_train} (at most {max_suggestion_pairs:,} pairs are scored)")
    targets, scores = suggestions(model, queries, top=top)
    view["suggestions"] = {
        "queries": queries.tolist(), "targets": targets.tolist(),
        "scores": [[float(f"{v:.4g}") for v in row] for row in scores.tolist()],
        "note": note + " (top by the model's link score, either direction)"}
    held = (precision_at_k(model, held_out, held_out_links)
            if held_out is not None and held_out_links is not None else {"n_documents": 0})
    if held["n_documents"]:
        view["held_out"] = held
        view["held_out_note"] = (f"held-out precision@k over {held['n_documents']} documents "
                                 "not in training, with at least one link to a training "
                                 "document: the share of their k best suggestions (of all "
                                 f"{n_train} training documents) that are true links")
    else:
        view["held_out"] = None
        view["held_out_note"] = ("no held-out precision@k: the model file holds no "
                                 "held-out documents; attach data (--dataset, --data or "
                                 "--documents) that has documents not in training, with "
                                 "their links")
    return view
