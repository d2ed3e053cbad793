"""Pictures of a fitted LMV model (topic-adjusted visibility, Tan, Chan & Zheng 2016).

``docs/design/lmv.md``, "Pictures people expect": the blockmodel as a heat map with
top words per topic, visibility against citation count, visibility by topic, and the
recommendation list for a query document.  Topics are labelled by term-score
(:func:`~topiclink.estimators.topic_display.top_words_by_term_score`), as in the paper.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links, as_links
from topiclink.estimators.topic_display import term_scores, top_words_by_term_score
from topiclink.plotting.topics import new_axes

__all__ = ["plot_blockmodel", "plot_visibility_vs_citations", "plot_visibility_by_topic",
           "recommendation_table", "term_scores", "top_words_by_term_score",
           "citation_counts"]

_NEEDED = ("components_", "doc_topic_", "blockmodel_", "visibility_", "vocabulary_")


def _check_lmv(model: Any, func: str) -> None:
    """One-line error unless ``model`` is a fitted VisibilityTopicModel-like object."""
    missing = [a for a in _NEEDED if getattr(model, a, None) is None]
    if not missing:
        return
    name = type(model).__name__
    if name == "VisibilityTopicModel":
        raise ValueError(f"{func}: the VisibilityTopicModel is not fitted (no "
                         f"{missing[0]}); fit it first")
    raise ValueError(f"{func}: needs a fitted VisibilityTopicModel (LMV); {name} has no "
                     f"{missing[0]}")


def _topic_labels(model: Any, n_words: int) -> list[str]:
    if n_words <= 0:
        return [str(k) for k in range(np.asarray(model.components_).shape[0])]
    return [f"{k}: " + " ".join(words)
            for k, words in enumerate(top_words_by_term_score(model, n_words))]


def _doc_names(model: Any) -> np.ndarray:
    titles = getattr(model, "train_titles_", None)
    if titles is not None and len(titles):
        return np.asarray(titles, dtype=str)
    return np.asarray(model.train_doc_ids_, dtype=str)


def _shorten(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1].rstrip() + "\u2026"


def citation_counts(links_or_in_degree: Any, n_docs: int) -> np.ndarray:
    """Times each of ``n_docs`` documents is cited: the in-degree of directed citations.

    Accepts what ``fit`` accepts for ``links`` (:class:`~topiclink.data.links.Links`, an
    ``(n, 2)`` array of (citing, cited) positions, a SciPy adjacency, a networkx graph)
    or an in-degree array of length ``n_docs``.
    """
    x = links_or_in_degree
    if x is None:
        raise ValueError("citation counts need the training citations (links) or an "
                         "in-degree array; the model does not store them")
    if not isinstance(x, Links) and not sp.issparse(x) and isinstance(
            x, list | tuple | np.ndarray | pd.Series):
        arr = np.asarray(x)
        if arr.ndim == 1:
            if arr.shape != (n_docs,):
                raise ValueError(f"in-degree array has {arr.size} values for {n_docs} "
                                 f"training documents")
            if not np.issubdtype(arr.dtype, np.number) or not np.all(np.isfinite(arr)) \
                    or (arr < 0).any():
                raise ValueError("in-degree array must hold finite numbers >= 0")
            return arr.astype(np.float64)
    lk = as_links(x, n_docs)
    if not lk.directed:
        raise ValueError("citation counts need directed citations (d cites d'); these "
                         "links are undirected")
    return np.bincount(lk.target, minlength=n_docs).astype(np.float64)


def plot_blockmodel(model: Any, n_words: int = 4, ax: Any = None, log: bool = False) -> Any:
    """Heat map of ``model.blockmodel_`` (row: citing topic i, column: cited topic j,
    colour: E[B_ij], the rate at which topic i cites topic j), with each topic's top
    term-score words; ``log=True`` uses a logarithmic colour scale."""
    _check_lmv(model, "plot_blockmodel")
    B = np.asarray(model.blockmodel_, dtype=np.float64)
    K = B.shape[0]
    labels = _topic_labels(model, n_words)
    ax = new_axes(ax, figsize=(0.5 * K + 4.5 + 0.25 * n_words, 0.5 * K + 2.5 + 0.2 * n_words))
    norm = None
    if log:
        from matplotlib.colors import LogNorm

        positive = B[B > 0]
        low = float(positive.min()) if positive.size else 1e-6
        norm = LogNorm(vmin=low, vmax=max(float(B.max()), low * 10))
    image = ax.imshow(B, cmap="viridis", norm=norm, interpolation="nearest")
    ax.set_yticks(range(K), labels, fontsize=7)
    ax.set_xticks(range(K), labels, fontsize=7, rotation=60, ha="right",
                  rotation_mode="anchor")
    ax.set_ylabel("citing topic")
    ax.set_xlabel("cited topic")
    ax.set_title("topic blockmodel: rate at which topic i cites topic j")
    bar = ax.figure.colorbar(image, ax=ax, shrink=0.8)
    bar.set_label("E[B_ij]" + (" (log scale)" if log else ""))
    return ax


def plot_visibility_vs_citations(model: Any, links_or_in_degree: Any = None,
                                 n_labels: int = 5, ax: Any = None) -> Any:
    """Scatter of each training document's visibility against its citation count.

    ``links_or_in_degree``: the training citations (any form ``fit`` accepts) or an
    in-degree array (the model does not store the links).  The ``n_labels`` most visible
    documents are labelled with their (truncated) title, or doc id without titles.
    Citation counts above 20 put the x axis on a symlog scale (0 stays visible).
    """
    _check_lmv(model, "plot_visibility_vs_citations")
    tau = np.asarray(model.visibility_, dtype=np.float64)
    counts = citation_counts(links_or_in_degree, tau.size)
    ax = new_axes(ax, figsize=(6.5, 4.5))
    ax.scatter(counts, tau, s=10, alpha=0.5, edgecolors="none")
    if counts.size and counts.max() > 20:
        from matplotlib.ticker import FuncFormatter

        ax.set_xscale("symlog", linthresh=1.0)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.set_xlim(left=-0.5)
    ax.set_xlabel("citation count (in-degree, training citations)")
    ax.set_ylabel("visibility E[tau_d]")
    ax.set_title("visibility against citation count")
    ax.grid(alpha=0.3)
    if n_labels > 0:
        names = _doc_names(model)
        order = np.lexsort((-counts, -tau))[:int(n_labels)]
        for i, d in enumerate(order):  # a stacked list of labels, arrows to the points
            ax.annotate(_shorten(names[d], 40), (counts[d], tau[d]), fontsize=6,
                        xytext=(-10, -12 * (i + 1)), textcoords="offset points", ha="right",
                        arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "0.5"})
    return ax


def plot_visibility_by_topic(model: Any, ax: Any = None, *, n_words: int = 3) -> Any:
    """Box plots of visibility grouped by each training document's dominant topic
    (argmax of ``doc_topic_``); one box per topic that dominates some document."""
    _check_lmv(model, "plot_visibility_by_topic")
    tau = np.asarray(model.visibility_, dtype=np.float64)
    dominant = np.argmax(np.asarray(model.doc_topic_), axis=1)
    K = np.asarray(model.components_).shape[0]
    topics = [k for k in range(K) if (dominant == k).any()]
    labels = _topic_labels(model, n_words)
    ax = new_axes(ax, figsize=(0.7 * K + 3.0, 4.5))
    ax.boxplot([tau[dominant == k] for k in topics], positions=range(len(topics)),
               widths=0.6, patch_artist=True, showfliers=True,
               flierprops={"markersize": 2, "alpha": 0.5})
    ax.set_xticks(range(len(topics)),
                  [f"{labels[k]} (n={int((dominant == k).sum())})" for k in topics],
                  fontsize=7, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_xlabel("dominant topic")
    ax.set_ylabel("visibility E[tau_d]")
    ax.set_title("visibility by dominant topic")
    ax.grid(axis="y", alpha=0.3)
    return ax


def _query_corpus(model: Any, text_or_X: Any) -> Any:
    if isinstance(text_or_X, str):
        from topiclink.data.io import corpus_from_texts

        if not text_or_X.strip():
            raise ValueError("recommendation_table: the query text is empty")
        query = corpus_from_texts([text_or_X], vocabulary=list(model.vocabulary_))
        if query.empty_documents().size:
            raise ValueError("recommendation_table: the query text has no word of the "
                             "model's vocabulary")
        return query
    if isinstance(text_or_X, Corpus):
        n = text_or_X.n_docs
    else:
        if not sp.issparse(text_or_X):
            text_or_X = np.asarray(text_or_X)
            if text_or_X.ndim == 1:
                text_or_X = text_or_X.reshape(1, -1)
        n = text_or_X.shape[0]
    if n != 1:
        raise ValueError(f"recommendation_table: give one query document (a text or one "
                         f"document-term row), got {n}")
    return text_or_X


def _topics_text(theta: np.ndarray, top: int = 3, min_share: float = 0.1) -> str:
    order = np.argsort(-theta, kind="stable")[:top]
    keep = [k for i, k in enumerate(order) if i == 0 or theta[k] >= min_share]
    return ", ".join(f"T{k} {theta[k]:.2f}" for k in keep)


def recommendation_table(model: Any, text_or_X: Any, n: int = 10, links: Any = None,
                         publication_year: Any = None) -> pd.DataFrame:
    """The ``n`` training documents the query most likely cites (paper eq. 6.1).

    Parameters
    ----------
    model : fitted VisibilityTopicModel
    text_or_X : str, or one document-term row (1-D or (1, V) array, sparse row, Corpus)
        A raw text is tokenised with the model's vocabulary (as ``topiclink suggest``).
    n : int
        Rows.
    links : optional
        Training citations (or an in-degree array): adds a ``citations`` column.
    publication_year : array (n_train,), optional
        Adds a ``year`` column.

    Returns
    -------
    DataFrame
        ``rank`` (1 = best), ``target`` (training position), ``title`` (or doc id),
        ``topics`` (largest topic proportions, e.g. ``"T3 0.62, T1 0.20"``), ``citations``,
        ``year``, ``visibility``, ``score`` (``model.link_scores(query, direction="out")``),
        sorted by score descending.  ``attrs["query_topics"]`` describes the query.
    """
    _check_lmv(model, "recommendation_table")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"recommendation_table: n must be an integer >= 1, got {n!r}")
    tau = np.asarray(model.visibility_, dtype=np.float64)
    D = tau.size
    counts = None if links is None else citation_counts(links, D)
    years = None
    if publication_year is not None:
        years = np.asarray(publication_year)
        if years.shape != (D,):
            raise ValueError(f"publication_year has {years.size} values for {D} training "
                             f"documents")
    query = _query_corpus(model, text_or_X)
    scores = np.asarray(model.link_scores(query, direction="out"))[0]
    order = np.argsort(-scores, kind="stable")[:int(n)]
    names = _doc_names(model)
    theta = np.asarray(model.doc_topic_)
    table: dict[str, Any] = {
        "rank": np.arange(1, order.size + 1),
        "target": order,
        "title": [str(names[d]) for d in order],
        "topics": [_topics_text(theta[d]) for d in order],
    }
    if counts is not None:
        table["citations"] = counts[order].astype(np.int64)
    if years is not None:
        table["year"] = years[order]
    table["visibility"] = tau[order]
    table["score"] = scores[order]
    frame = pd.DataFrame(table)
    frame.attrs["query_topics"] = _topics_text(np.asarray(model.transform(query))[0])
    return frame
