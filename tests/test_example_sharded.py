"""The worked example's sharded scheme (issue 25's must-show): the throwaway GSDMM family
of ``tests/examples/`` declares its sharded Gibbs step by its pieces (``ShardedDMM``:
split / shared / a pure local sweep / merge in shard order / write back) in its own
files, and :class:`topiclink.inference.sharded.ShardedAlgorithm` runs it on the calling
thread, on threads and on a Dask ``LocalCluster`` with the same chain; the estimator
takes ``scheme=`` / ``executor=`` like the library's."""

from __future__ import annotations

import numpy as np
import pytest

import tests.examples.dmm.estimator  # noqa: F401  (registers the class)
from tests.examples.dmm.algorithm import CollapsedGibbsDMM, ShardedDMM
from topiclink import load
from topiclink.datasets import make_lda_data
from topiclink.estimators.base import registered_estimators
from topiclink.execution import Shards
from topiclink.topics.lda import TokenData

DMM = registered_estimators()["DirichletMultinomialMixture"]


@pytest.fixture(scope="module")
def corpus():
    c, _ = make_lda_data(n_docs=90, n_words=40, n_topics=4, doc_length=25, random_state=2)
    return c


def _fit(corpus, **kw):
    return DMM(4, max_iter=6, random_state=5, **kw).fit(corpus)


def _chain(m):
    return (m.state_.z.copy(), m.state_.nkw.copy(), m.components_.copy())


def _same(a, b):
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_sharded_chain_is_the_same_on_any_number_of_threads(corpus):
    one = _fit(corpus, scheme=Shards("shards", 3))
    _same(_chain(one), _chain(_fit(corpus, scheme=Shards("shards", 3), executor=2)))
    _same(_chain(one), _chain(_fit(corpus, scheme=Shards("shards", 3), executor=3)))
    assert one.state_.nkw.sum() == corpus.n_tokens          # the merged counts add up
    assert np.array_equal(one.state_.m, np.bincount(one.state_.z, minlength=4))


def test_sharded_chain_is_the_same_on_a_dask_cluster(corpus, client2):
    threads = _fit(corpus, scheme=Shards("shards", 3), executor=2)
    dask = _fit(corpus, scheme=Shards("shards", 3), executor=client2)
    _same(_chain(threads), _chain(dask))


def test_one_shard_is_the_exact_sampler_draw_for_draw_in_counts(corpus):
    """The scheme is a statistical choice: one shard sweeps every document against
    counts that include its own moves, as the exact sampler does (its stream differs:
    the shard's own, so the chains differ but both are valid GSDMM); more shards change
    the chain."""
    exact = _fit(corpus)
    shards1 = _fit(corpus, scheme=Shards("shards", 1))
    shards3 = _fit(corpus, scheme=Shards("shards", 3))
    for m in (exact, shards1, shards3):
        assert m.state_.nkw.sum() == corpus.n_tokens
    assert not np.array_equal(shards1.state_.z, shards3.state_.z)


def test_sharded_fit_resumes_and_saves_its_shard_streams(corpus, tmp_path):
    whole = DMM(4, max_iter=6, random_state=5, scheme=Shards("shards", 2)).fit(corpus)
    half = DMM(4, max_iter=3, random_state=5, scheme=Shards("shards", 2)).fit(corpus)
    back = load(half.save(tmp_path / "dmm.npz", full=True))
    assert len(back.state_.shard_rngs) == 2
    back.fit(corpus, resume=True)
    _same(_chain(whole), _chain(back))


def test_the_algorithm_alone_steps_in_a_session(corpus):
    """Engine-free use (as a Geweke test drives ``step``): a lone step opens and closes
    its own session and leaves the state complete."""
    data = TokenData.from_corpus(corpus)
    alg = ShardedDMM(4, 0.1, 0.1, 2)
    state = alg.init(data, np.random.default_rng(0))
    info = alg.step(state, data)
    assert info["occupied_topics"] >= 1
    assert np.array_equal(state.m, np.bincount(state.z, minlength=4))
    np.add.at(counts := np.zeros_like(state.nkw), (state.z[data.docs], data.words), 1)
    np.testing.assert_array_equal(counts, state.nkw)
    assert isinstance(alg, CollapsedGibbsDMM)


def test_a_dask_executor_needs_the_sharded_scheme(corpus, client2):
    with pytest.raises(ValueError, match="executor"):
        DMM(4, max_iter=1, executor=client2).fit(corpus)
