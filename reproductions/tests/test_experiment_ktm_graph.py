"""Topics on graphs (topiclink_reproductions.ktm_graph): the BFS ball, the features of the test
documents (distances to the training documents), the three models, the graph figure and
``topiclink experiment ktm --kernel graph``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.datasets.base import Dataset
from topiclink.families.ktm.gp.features import shortest_path_features
from topiclink.plotting.graph import plot_graph_topics
from topiclink_reproductions.ktm_graph import (
    GRAPH_MODEL_NAMES,
    GraphKTMSettings,
    bfs_ball,
    graph_summary_text,
    prepare_graph,
    run_ktm_graph_experiment,
)

K = 3


@pytest.fixture(scope="module")
def linked():
    """Three communities of 20 documents (a ring each plus a few chords), joined by a
    bridge, with words from the community's topic; two isolated documents."""
    rng = np.random.default_rng(0)
    V, n_comm, size = 60, 3, 20
    topics = rng.dirichlet(np.full(V, 0.1), size=K)
    pairs = []
    for c in range(n_comm):
        base = c * size
        pairs += [(base + i, base + (i + 1) % size) for i in range(size)]
        pairs += [(base + i, base + (i + 7) % size) for i in range(0, size, 5)]
        if c:
            pairs.append((base - 1, base))
    D = n_comm * size + 2
    theta = np.full((D, K), 0.1)
    for d in range(D):
        theta[d, min(d // size, K - 1)] += 1.0
    theta /= theta.sum(axis=1, keepdims=True)
    counts = np.vstack([rng.multinomial(40, theta[d] @ topics) for d in range(D)])
    corpus = Corpus(sp.csr_matrix(counts), vocabulary=[f"w{j}" for j in range(V)],
                    name="tiny-graph")
    links = Links.from_pairs(np.array(pairs), D, directed=False)
    return Dataset(name="tiny-graph", corpus=corpus, links=links)


def _settings(**kw):
    base = {"n_topics": K, "n_docs": 40, "max_iter": 4, "test_fraction": 0.2}
    base.update(kw)
    return GraphKTMSettings(**base)


def test_bfs_ball_is_connected_and_seeded(linked):
    nodes, start = bfs_ball(linked.links, 25, seed=3)
    assert nodes.size == 25 and nodes[0] == start and np.unique(nodes).size == 25
    assert start < 60                                   # not an isolated document
    sub = linked.links.subgraph(nodes).adjacency()
    assert connected_components(sub, directed=False)[0] == 1
    again, _ = bfs_ball(linked.links, 25, seed=3)
    np.testing.assert_array_equal(nodes, again)


def test_test_features_are_distances_to_the_training_documents(linked):
    data = prepare_graph(linked, _settings(), seed=1)
    n = data.corpus.n_docs
    assert n == 40 and data.test.size == 8 and data.train.size == 32
    assert np.intersect1d(data.train, data.test).size == 0
    # distances over the whole subgraph, its columns of the training documents
    full = shortest_path_features(data.links)
    np.testing.assert_array_equal(data.distances, full)
    assert np.isfinite(full).all() and full.max() < n       # connected
    f_test = data.features(data.test)
    assert f_test.shape == (8, 32)
    np.testing.assert_array_equal(f_test, full[np.ix_(data.test, data.train)])
    np.testing.assert_array_equal(np.diag(data.features(data.train)), 0.0)
    # the subgraph's documents are the data set's documents at data.nodes
    np.testing.assert_array_equal(data.corpus.counts.sum(axis=1),
                                  linked.corpus.counts[data.nodes].sum(axis=1))


def test_prepare_graph_rejects_data_without_links(linked):
    with pytest.raises(ValueError, match="needs documents with links"):
        prepare_graph(Dataset(name="x", corpus=linked.corpus), _settings())
    with pytest.raises(ValueError, match="test_fraction"):
        prepare_graph(linked, _settings(test_fraction=1.0))


def test_experiment_runs_three_models_and_writes_outputs(linked, tmp_path):
    result = run_ktm_graph_experiment(linked, settings=_settings(), seed=0, out=tmp_path)
    s = result.summary
    assert list(s.model) == list(GRAPH_MODEL_NAMES)
    assert np.isfinite(s.heldout_perplexity).all() and (s.heldout_perplexity > 1).all()
    assert np.isfinite(s.final_train_perplexity).all() and (s.n_iter == 4).all()
    assert (s.n_docs == 40).all()
    docs = result.documents
    assert len(docs) == 40 and set(docs.split) == {"train", "test"}
    for name in GRAPH_MODEL_NAMES:
        assert docs[f"topic_{name}"].between(0, K - 1).all()
    text = graph_summary_text(result)
    assert "KTM (graph kernel) held-out perplexity below LDA's: " in text
    assert ("AGREES" in text) or ("DISAGREES" in text)
    for name in ("ktm_graph_summary.csv", "ktm_graph_summary.txt",
                 "ktm_graph_documents.csv", "ktm_graph_topics_KTM-graph.png",
                 "ktm_graph_topics_LDA.png", "ktm_graph_topics_KTM-const.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert len(pd.read_csv(tmp_path / "ktm_graph_summary.csv")) == 3


def test_held_out_estimates_share_the_seed(linked):
    """Same split and completion seed: a rerun reproduces every number."""
    a = run_ktm_graph_experiment(linked, ["LDA", "KTM-graph"], settings=_settings(), seed=2)
    b = run_ktm_graph_experiment(linked, ["LDA", "KTM-graph"], settings=_settings(), seed=2)
    np.testing.assert_allclose(a.summary.heldout_perplexity, b.summary.heldout_perplexity)
    with pytest.raises(ValueError, match="unknown model"):
        run_ktm_graph_experiment(linked, ["DMR"], settings=_settings())


def test_plot_graph_topics_accepts_links_pairs_and_checks_shapes(linked):
    import matplotlib.pyplot as plt

    theta = np.random.default_rng(0).dirichlet(np.ones(K), size=62)
    ax = plot_graph_topics(linked.links, theta, ["a", "b", "c"], highlight=[0, 5])
    assert ax.get_legend() is not None
    plt.close(ax.figure)
    ax = plot_graph_topics(linked.links.pairs, theta, seed=1)
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="topic labels"):
        plot_graph_topics(linked.links, theta, ["a"])
    with pytest.raises(ValueError, match="doc_topic"):
        plot_graph_topics(linked.links, np.ones(5))


def test_cli_graph_kernel(linked, tmp_path, monkeypatch):
    import topiclink.cli.experiment as experiment

    monkeypatch.setattr(experiment, "load_data", lambda *a, **kw: linked)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["experiment", "ktm", "--dataset", "tiny", "--topics",
                                   "3", "--iterations", "3", "--subgraph-size", "30",
                                   "--optimize-every", "0",
                                   "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "below LDA's" in res.output
    assert (out / "ktm_graph_summary.csv").is_file()
    assert (out / "ktm_graph_topics_KTM-graph.png").is_file()
    # results already there are refused
    res = CliRunner().invoke(app, ["experiment", "ktm", "--kernel", "graph", "--dataset",
                                   "tiny", "--topics", "3", "--iterations", "3",
                                   "--out", str(out), "--quiet"])
    assert res.exit_code != 0 and "--force" in res.output
    res = CliRunner().invoke(app, ["experiment", "ktm", "--kernel", "tree", "--out",
                                   str(tmp_path / "x")])
    assert res.exit_code != 0 and "sotu or graph" in res.output


def test_cli_graph_kernel_needs_links(linked, tmp_path, monkeypatch):
    import topiclink.cli.experiment as experiment

    monkeypatch.setattr(experiment, "load_data",
                        lambda *a, **kw: Dataset(name="nolinks", corpus=linked.corpus))
    res = CliRunner().invoke(app, ["experiment", "ktm", "--kernel", "graph", "--dataset",
                                   "x", "--out", str(tmp_path / "o"), "--quiet"])
    assert res.exit_code != 0 and "no documents with links" in res.output
