"""The documents view: each training document's id, title, a few words, and its topic
mix (sparse, rounded), from which the page searches documents and finds the nearest
ones (cosine of the topic mixes, in JavaScript)."""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus

__all__ = ["sparse_topic_mix", "document_keywords", "documents_view"]


def sparse_topic_mix(theta: np.ndarray, decimals: int = 3,
                     min_share: float = 0.005) -> list[list[float]]:
    """Each row as a flat list ``[k1, p1, k2, p2, ...]`` of the topics with a share of at
    least ``min_share``, shares rounded to ``decimals`` (largest first)."""
    theta = np.asarray(theta, dtype=np.float64)
    rounded = np.round(theta, decimals)
    out: list[list[float]] = []
    for row in rounded:
        keep = np.flatnonzero(row >= min_share)
        keep = keep[np.argsort(-row[keep], kind="stable")]
        out.append([v for pair in zip(keep.tolist(), row[keep].tolist(), strict=True)
                    for v in pair])
    return out


def document_keywords(corpus: Corpus, n: int = 6) -> list[list[str]]:
    """The ``n`` words of each document with the highest count x idf (its most
    characteristic words, for the search box)."""
    counts = corpus.counts.tocsr()
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    idf = np.log((1.0 + counts.shape[0]) / (1.0 + df)) + 1.0
    vocab = np.asarray(corpus.vocabulary)
    out = []
    for d in range(counts.shape[0]):
        start, end = counts.indptr[d], counts.indptr[d + 1]
        cols = counts.indices[start:end]
        score = counts.data[start:end] * idf[cols]
        best = cols[np.argsort(-score, kind="stable")[:n]]
        out.append([str(vocab[j]) for j in best])
    return out


def _titles(model: Any, corpus: Corpus | None, n_docs: int, max_chars: int) -> list[str] | None:
    titles = None
    if corpus is not None and corpus.titles is not None:
        titles = np.asarray(corpus.titles)
    else:
        saved = getattr(model, "train_titles_", None)
        if saved is not None and len(saved) == n_docs:
            titles = np.asarray(saved)
    if titles is None:
        return None
    return [str(t)[:max_chars] for t in titles.tolist()]


def _ids(model: Any, corpus: Corpus | None, n_docs: int) -> list[str]:
    ids = getattr(model, "train_doc_ids_", None)
    if ids is None or len(ids) != n_docs:
        ids = corpus.doc_ids if corpus is not None else np.arange(n_docs)
    return [str(v) for v in np.asarray(ids).tolist()]


def documents_view(model: Any, corpus: Corpus | None, *, decimals: int = 3,
                   n_keywords: int = 6, max_title_chars: int = 140) -> dict[str, Any]:
    """The documents view's data (JSON-able)."""
    theta = np.asarray(model.doc_topic_)
    n_docs = int(theta.shape[0])
    return {
        "n_docs": n_docs,
        "ids": _ids(model, corpus, n_docs),
        "titles": _titles(model, corpus, n_docs, max_title_chars),
        "keywords": document_keywords(corpus, n_keywords) if corpus is not None else None,
        "lengths": (corpus.doc_lengths.astype(int).tolist() if corpus is not None else None),
        "theta": sparse_topic_mix(theta, decimals),
        "theta_decimals": int(decimals),
        "note": ("" if corpus is not None else
                 "the documents' words are not in the model file: search by title or id, "
                 "or attach the data (--dataset, --data or --documents) to search by words"),
    }
