"""A document graph coloured by each document's dominant topic (the kernel topic model
paper's graph figure, Hennig et al. 2012, Fig. 7)."""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.plotting.topics import new_axes

__all__ = ["plot_graph_topics", "plot_topic_correlation"]


def _graph(graph_or_links: Any, n_docs: int) -> Any:
    import networkx as nx

    if isinstance(graph_or_links, nx.Graph):
        g = nx.Graph(graph_or_links)          # undirected copy
    elif hasattr(graph_or_links, "to_networkx"):
        g = nx.Graph(graph_or_links.to_networkx())
    else:
        arr = np.asarray(graph_or_links)
        if arr.ndim == 2 and arr.shape == (n_docs, n_docs) and arr.shape[1] != 2:
            g = nx.from_numpy_array((arr != 0).astype(int))
        elif arr.ndim == 2 and arr.shape[1] == 2:
            g = nx.Graph()
            g.add_edges_from(arr.astype(int).tolist())
        elif hasattr(graph_or_links, "tocoo"):
            coo = graph_or_links.tocoo()
            g = nx.Graph()
            g.add_edges_from(zip(coo.row.tolist(), coo.col.tolist(), strict=True))
        else:
            raise ValueError("plot_graph_topics: expected a networkx graph, Links, an "
                             "adjacency matrix or an (n, 2) array of linked pairs")
    g.add_nodes_from(range(n_docs))
    extra = [v for v in g.nodes if not (isinstance(v, (int, np.integer)) and 0 <= v < n_docs)]
    if extra:
        raise ValueError(f"plot_graph_topics: node {extra[0]!r} is not a document position "
                         f"0..{n_docs - 1}")
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    return g


def plot_graph_topics(graph_or_links: Any, doc_topic: Any, topic_labels: Any = None, *,
                      highlight: Any = None, seed: int = 0, ax: Any = None,
                      node_size: float = 40.0, legend: bool = True) -> Any:
    """Draw the graph (networkx spring layout, seeded) with each document coloured by its
    dominant topic ``argmax_k doc_topic[d, k]``.

    Parameters
    ----------
    graph_or_links : networkx graph, Links, (n, n) adjacency or (M, 2) pairs
        Over documents ``0..n_docs-1`` (read as undirected).
    doc_topic : array (n_docs, K)
        Topic proportions per document (or any scores; only the argmax is used).
    topic_labels : list of K strings, optional
        Legend entries (e.g. ``"3: learning neural network"``); default ``"topic k"``.
        Only topics that are some document's dominant one appear in the legend.
    highlight : positions, optional
        Documents drawn as squares (e.g. the test documents).
    seed : int
        Seed of the spring layout.

    Returns
    -------
    matplotlib Axes
    """
    import matplotlib.pyplot as plt
    import networkx as nx

    theta = np.asarray(doc_topic, dtype=float)
    if theta.ndim != 2 or theta.shape[0] < 1 or theta.shape[1] < 1:
        raise ValueError(f"plot_graph_topics: doc_topic must be (n_docs, K), got "
                         f"{theta.shape}")
    n, K = theta.shape
    labels = [f"topic {k}" for k in range(K)] if topic_labels is None else \
        [str(s) for s in topic_labels]
    if len(labels) != K:
        raise ValueError(f"plot_graph_topics: {len(labels)} topic labels for K = {K}")
    g = _graph(graph_or_links, n)
    dominant = theta.argmax(axis=1)
    square = np.zeros(n, dtype=bool)
    if highlight is not None:
        square[np.asarray(highlight, dtype=np.int64)] = True
    pos = nx.spring_layout(g, seed=int(seed))
    ax = new_axes(ax, figsize=(9, 7.5))
    cmap = plt.get_cmap("tab10" if K <= 10 else "tab20", max(K, 1))
    colours = [cmap(k % cmap.N) for k in range(K)]
    nx.draw_networkx_edges(g, pos, ax=ax, width=0.6, alpha=0.35, edge_color="0.4")
    for shape, mask in (("o", ~square), ("s", square)):
        nodes = np.flatnonzero(mask)
        if nodes.size:
            nx.draw_networkx_nodes(g, pos, nodelist=nodes.tolist(), ax=ax,
                                   node_color=[colours[k] for k in dominant[nodes]],
                                   node_shape=shape, node_size=node_size,
                                   edgecolors="k", linewidths=0.3)
    if legend:
        from matplotlib.lines import Line2D

        used = np.unique(dominant)
        handles = [Line2D([], [], marker="o", ls="", color=colours[k], markeredgecolor="k",
                          markersize=7, label=f"{labels[k]} ({int((dominant == k).sum())})")
                   for k in used]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                  fontsize=8, frameon=False, title="dominant topic (documents)")
    ax.set_axis_off()
    return ax


def plot_topic_correlation(model_or_correlation: Any, ax: Any = None, *,
                           cutoff: float = 0.01, seed: int = 0) -> Any:
    """The topics' correlation graph (R's ``stm::plot.topicCorr``): a node per topic,
    labelled by its top words and sized by its share of the tokens where the model has
    ``topic_weights_``; an edge per pair whose proportions correlate above ``cutoff``
    (:func:`topiclink.analysis.topic_correlation`), wider for a stronger correlation.
    The layout is a spring layout seeded by ``seed``."""
    import networkx as nx

    from topiclink.analysis import TopicCorrelation, topic_correlation

    result = (model_or_correlation if isinstance(model_or_correlation, TopicCorrelation)
              else topic_correlation(model_or_correlation, cutoff=cutoff))
    graph = result.to_networkx()
    K = graph.number_of_nodes()
    ax = new_axes(ax, figsize=(7, 6))
    pos = nx.spring_layout(graph, seed=seed, weight="weight")
    weights = getattr(model_or_correlation, "topic_weights_", None)
    sizes = (300 + 3000 * np.asarray(weights) / max(float(np.max(weights)), 1e-300)
             if weights is not None and len(weights) == K else np.full(K, 600.0))
    widths = [1.0 + 6.0 * d["weight"] for _, _, d in graph.edges(data=True)]
    nx.draw_networkx_edges(graph, pos, ax=ax, width=widths, edge_color="0.6")
    nx.draw_networkx_nodes(graph, pos, ax=ax, node_size=sizes, node_color="#9ecae1",
                           edgecolors="#3182bd")
    nx.draw_networkx_labels(graph, pos, ax=ax, font_size=7,
                            labels={k: f"{k}: {graph.nodes[k]['label']}" for k in graph})
    ax.set_axis_off()
    ax.set_title(f"topics whose proportions correlate above {result.cutoff:g} "
                 f"({graph.number_of_edges()} pairs)")
    return ax
