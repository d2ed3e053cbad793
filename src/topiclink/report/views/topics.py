"""The topics view: term-score labels, prevalence, candidate words for the relevance
slider, a 2-D topic map, and the graph of topics that appear together (stm's
``topicCorr``).

Relevance (Sievert & Shirley 2014, pyLDAvis): ``r(w, k | lambda) = lambda log p(w|k) +
(1 - lambda) log(p(w|k) / p(w))``, with ``p(w) = sum_k pi_k p(w|k)`` the model's marginal
word distribution (``pi``: the topic prevalence).  The page ranks a topic's words for any
lambda in JavaScript; it embeds, per topic, the union of the ``n_words`` best words at
lambda = 0, 0.05, ..., 1 (relevance is linear in lambda, so the ranking between two grid
points changes little) with ``log p(w|k)`` and ``log p(w)``.

The topic map is classical multidimensional scaling (Torgerson) of the Jensen-Shannon
distances between the topics' word distributions, as pyLDAvis's default ``PCoA``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.analysis.correlation import topic_correlation
from topiclink.estimators.topic_display import top_word_indices

__all__ = ["topic_prevalence", "topic_labels", "relevance_candidates", "jensen_shannon",
           "classical_mds", "correlation_graph", "topics_view"]

#: lambda values whose top words are embedded (the slider interpolates between them)
LAMBDA_GRID = np.linspace(0.0, 1.0, 21)


def topic_prevalence(model: Any, doc_lengths: np.ndarray | None = None) -> np.ndarray:
    """Share of the corpus in each topic (K,): ``topic_weights_`` (the token share) where
    the model has it, else the document-length-weighted mean of ``doc_topic_`` (plain mean
    without lengths)."""
    weights = getattr(model, "topic_weights_", None)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
    else:
        theta = np.asarray(model.doc_topic_, dtype=np.float64)
        if doc_lengths is not None and len(doc_lengths) == theta.shape[0]:
            w = np.asarray(doc_lengths, dtype=np.float64) @ theta
        else:
            w = theta.mean(axis=0)
    total = float(w.sum())
    return w / total if total > 0 else np.full(w.size, 1.0 / w.size)


def topic_labels(model: Any, n_words: int = 3) -> tuple[list[str], list[list[str]]]:
    """("k: w1 w2 w3" labels by term-score, the 10 best term-score words of each topic)."""
    words = model.top_words(max(n_words, 10), by="term-score")
    labels = [f"{k}: {' '.join(w[:n_words])}" for k, w in enumerate(words)]
    return labels, [w[:10] for w in words]


def relevance_candidates(phi: np.ndarray, p_word: np.ndarray, n_words: int = 30,
                         grid: np.ndarray = LAMBDA_GRID) -> list[np.ndarray]:
    """Per topic, the word indices that are among the ``n_words`` most relevant at some
    lambda of ``grid`` (sorted by probability in the topic)."""
    K, V = phi.shape
    n = min(int(n_words), V)
    log_phi = np.log(np.maximum(phi, np.finfo(np.float64).tiny))
    log_lift = log_phi - np.log(np.maximum(p_word, np.finfo(np.float64).tiny))[None, :]
    chosen = np.zeros((K, V), dtype=bool)
    rows = np.arange(K)[:, None]
    for lam in grid:
        rel = lam * log_phi + (1.0 - lam) * log_lift
        top = np.argpartition(-rel, n - 1, axis=1)[:, :n] if n < V else \
            np.tile(np.arange(V), (K, 1))
        chosen[rows, top] = True
    out = []
    for k in range(K):
        idx = np.flatnonzero(chosen[k])
        out.append(idx[np.argsort(-phi[k, idx], kind="stable")])
    return out


def jensen_shannon(phi: np.ndarray) -> np.ndarray:
    """Jensen-Shannon distances (square roots of the divergences, natural log) between
    the rows of ``phi`` (K, V): (K, K), symmetric, zero diagonal."""
    p = np.asarray(phi, dtype=np.float64)
    p = p / p.sum(axis=1, keepdims=True)
    logp = np.log(np.maximum(p, np.finfo(np.float64).tiny))
    K = p.shape[0]
    out = np.zeros((K, K))
    for i in range(K):
        m = 0.5 * (p[i][None, :] + p[i:])
        logm = np.log(np.maximum(m, np.finfo(np.float64).tiny))
        kl_i = np.sum(p[i][None, :] * (logp[i][None, :] - logm), axis=1)
        kl_j = np.sum(p[i:] * (logp[i:] - logm), axis=1)
        js = np.sqrt(np.maximum(0.5 * (kl_i + kl_j), 0.0))
        out[i, i:] = js
        out[i:, i] = js
    np.fill_diagonal(out, 0.0)
    return out


def classical_mds(distances: np.ndarray, n_components: int = 2) -> np.ndarray:
    """Classical (Torgerson) MDS: coordinates (n, n_components) whose Euclidean distances
    approximate ``distances``; components with non-positive eigenvalues are zero."""
    d = np.asarray(distances, dtype=np.float64)
    n = d.shape[0]
    J = np.eye(n) - 1.0 / n
    B = -0.5 * J @ (d ** 2) @ J
    vals, vecs = np.linalg.eigh(B)
    order = np.argsort(vals)[::-1][:n_components]
    coords = np.zeros((n, n_components))
    for c, i in enumerate(order):
        if vals[i] > 1e-12:
            vec = vecs[:, i]
            vec = vec * (1.0 if vec[np.argmax(np.abs(vec))] >= 0 else -1.0)  # fixed sign
            coords[:, c] = vec * np.sqrt(vals[i])
    return coords


def correlation_graph(model: Any) -> dict[str, Any] | None:
    """stm's ``topicCorr`` graph of the training documents' proportions (edges above the
    0.01 cutoff, strongest first) with a seeded spring layout (networkx, weights = the
    correlations); None for a model without ``doc_topic_`` or with fewer than 3 topics
    or 2 documents."""
    theta = getattr(model, "doc_topic_", None)
    if theta is None or np.ndim(theta) != 2 or np.shape(theta)[0] < 2 \
            or np.shape(theta)[1] < 3:
        return None
    import networkx as nx

    graph = topic_correlation(np.asarray(theta, dtype=np.float64))
    edges = graph.edges()
    layout = nx.Graph()
    layout.add_nodes_from(range(graph.correlation.shape[0]))
    layout.add_weighted_edges_from(zip(edges["topic_a"], edges["topic_b"],
                                       edges["correlation"], strict=True))
    pos = nx.spring_layout(layout, seed=0)
    return {"x": [round(float(pos[k][0]), 5) for k in range(len(pos))],
            "y": [round(float(pos[k][1]), 5) for k in range(len(pos))],
            "source": edges["topic_a"].tolist(), "target": edges["topic_b"].tolist(),
            "correlation": np.round(edges["correlation"].to_numpy(), 4).tolist(),
            "cutoff": graph.cutoff}


def topics_view(model: Any, doc_lengths: np.ndarray | None = None, *,
                n_words: int = 30) -> dict[str, Any]:
    """The topics view's data (JSON-able): labels, prevalence, candidate words with their
    log probabilities, the topic map."""
    phi = np.asarray(model.components_, dtype=np.float64)
    phi = phi / phi.sum(axis=1, keepdims=True)
    prevalence = topic_prevalence(model, doc_lengths)
    p_word = prevalence @ phi
    labels, ts_words = topic_labels(model)
    candidates = relevance_candidates(phi, p_word, n_words)
    used = np.unique(np.concatenate(candidates))
    slot = np.full(phi.shape[1], -1, dtype=np.int64)
    slot[used] = np.arange(used.size)
    vocab = np.asarray(model.vocabulary_)
    coords = classical_mds(jensen_shannon(phi))
    by_probability = top_word_indices(phi, min(10, phi.shape[1]), "probability")
    return {
        "n_topics": int(phi.shape[0]),
        "n_vocabulary": int(phi.shape[1]),
        "labels": labels,
        "term_score_words": ts_words,
        "probability_words": [[str(vocab[j]) for j in row] for row in by_probability],
        "prevalence": np.round(prevalence, 5).tolist(),
        "words": [str(vocab[j]) for j in used],
        "log_p_word": np.round(np.log(np.maximum(p_word[used], 1e-300)), 4).tolist(),
        "topic_words": [slot[c].tolist() for c in candidates],
        "topic_log_p": [np.round(np.log(np.maximum(phi[k, c], 1e-300)), 4).tolist()
                        for k, c in enumerate(candidates)],
        "n_relevant": int(min(n_words, phi.shape[1])),
        "lambda": 0.6,
        "map": {"x": np.round(coords[:, 0], 5).tolist(), "y": np.round(coords[:, 1], 5).tolist(),
                "method": "classical MDS of the Jensen-Shannon distances between topics"},
        "correlation": correlation_graph(model),
    }
