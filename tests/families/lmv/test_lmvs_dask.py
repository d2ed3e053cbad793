"""Stochastic LMV with the pair blocks on Dask (``VisibilityTopicModel(inference=
"stochastic", executor=client)``: the stochastic algorithm's executor is a
:class:`topiclink.execution.DaskExecutor`), the family's part: the fit is bit for bit the
fit in this process with publication times (and the threaded path), and with partial_fit;
only changed rows of the per-document table travel after the first minibatch.  The
executor contract (the same fit on any number of workers and on worker processes, the
current client and an address, resume, clone / pickle, the errors) is
``tests/test_executor_contract.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from topiclink.datasets import make_lmv_data  # noqa: E402
from topiclink.execution import DaskExecutor  # noqa: E402
from topiclink.families.lmv.algorithm import LMVData  # noqa: E402
from topiclink.families.lmv.estimator import VisibilityTopicModel  # noqa: E402
from topiclink.families.lmv.stochastic import StochasticLMV  # noqa: E402

STATE = ("gamma", "lam", "a", "b", "g", "h", "citation_topics", "previous_diagonal")


@pytest.fixture(scope="module")
def small():
    return make_lmv_data(n_docs=150, n_words=100, n_topics=6, random_state=5)


@pytest.fixture(scope="module")
def timed():
    return make_lmv_data(n_docs=120, n_words=100, n_topics=6, publication_time=True,
                         random_state=4)


def _lmvs(**kw):
    args = dict(inference="stochastic", max_iter=3, tol=0.0, batch_size=40, n0=10,
                random_state=0, n_jobs=1)
    return VisibilityTopicModel(6, **{**args, **kw})


def assert_same_fit(a, b):
    """Bit for bit: the state, the published estimates and the serial fit's trace (but for
    the timings)."""
    for name in STATE:
        np.testing.assert_array_equal(getattr(a.state_, name), getattr(b.state_, name),
                                      err_msg=name)
    assert a.state_.updates == b.state_.updates
    for name in ("components_", "doc_topic_", "blockmodel_", "visibility_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert set(a.trace_) - {"seconds"} < set(b.trace_)
    for key, values in a.trace_.items():
        if key.startswith("seconds"):
            continue
        np.testing.assert_array_equal(values, b.trace_[key], err_msg=key)
    assert a.n_iter_ == b.n_iter_


# ---------------------------------------------------------------------- the same fit
def test_dask_equals_serial_with_publication_times_and_threads(timed, client2):
    """LMV(t) (the times travel with the graph) and the threaded serial path (n_jobs=2)."""
    (corpus, links), truth = timed
    fit = dict(links=links, publication_time=truth.publication_time)
    want = _lmvs(n_jobs=2, batch_size=30).fit(corpus, **fit)
    got = _lmvs(executor=client2, batch_size=30).fit(corpus, **fit)
    assert_same_fit(want, got)


def test_only_changed_rows_travel(small, client2):
    """The first minibatch of a run broadcasts the graph and the whole (D, K + 2) table;
    each later one sends every worker only the rows of the previous minibatch (the only
    rows steps 4 and 7 change), plus the blocks' inputs."""
    (corpus, links), _ = small
    data = LMVData.build(corpus.counts, np.asarray(links.pairs, np.int64))
    executor = DaskExecutor(client2)
    algorithm = StochasticLMV(6, executor=executor, alpha=1 / 6, eta=0.1,
                              blockmodel_prior=(1.0, 1.0), visibility_prior=(1.0, 1.0),
                              batch_size=40, n0=10)
    state = algorithm.init(data, np.random.default_rng(0))
    D, K, W = data.n_docs, 6, 2
    graph = (2 * (D + 1) + 2 * data.cites.nnz) * 8 + D * 8

    def tasks(n):   # per block: the minibatch, vs_link, Bbar, 4 settings, 2 block bounds
        # (the bounds count as payload since the executor counts whole tasks: + 8 bytes
        # per block against the sampler's own count before the executor layer)
        return -(-n // 16) * (n * 8 + 2 * K * K * 8 + 48)

    sent = []
    with algorithm.session(state, data):
        for batch in (np.arange(0, 40), np.arange(40, 70), np.arange(100, 140)):
            before = executor.bytes_sent
            algorithm.minibatch_step(state, data, batch, 0.5)
            sent.append(executor.bytes_sent - before - tasks(batch.size))
    assert executor.client is None and executor.n_rounds == 3
    assert sent[0] == W * D * (K + 2) * 8 + W * graph
    assert sent[1] == W * 40 * (K + 3) * 8          # the rows of the first minibatch
    assert sent[2] == W * 30 * (K + 3) * 8          # those of the second


# ---------------------------------------------------------------------- partial_fit, files
def test_partial_fit_equals_serial(small, client2):
    (corpus, links), _ = small
    pairs = np.asarray(links.pairs)
    first = pairs[(pairs < 100).all(axis=1)]

    def grow(model):
        model.partial_fit(corpus.subset(np.arange(100)), links=first)
        model.partial_fit(corpus.subset(np.arange(100, corpus.n_docs)), links=pairs)
        return model.set_params(max_iter=1).fit(corpus, links=links, resume=True)

    want = grow(_lmvs())
    got = grow(_lmvs(executor=client2))
    assert_same_fit(want, got)
    assert got.doc_topic_.shape == (corpus.n_docs, 6) and got.n_iter_ == 3
