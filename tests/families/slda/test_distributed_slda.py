"""Supervised topic models on Dask (``SupervisedTopicModel(scheme="shards",
executor=client)``), the family's part: one shard = the sequential chain (both losses),
counts consistent with z, the state complete whenever read, only count deltas moved,
held-out accuracy of sequential training.  The executor contract (the same chain on any
number of workers and on worker processes, the current client and an address, resume,
clone / pickle, the errors) is ``tests/test_executor_contract.py``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

distributed = pytest.importorskip("distributed")

from topiclink.callbacks import LambdaCallback  # noqa: E402
from topiclink.datasets import make_lda_data, make_slda_data  # noqa: E402
from topiclink.execution import DaskExecutor, Shards  # noqa: E402
from topiclink.families.slda.algorithm import (  # noqa: E402
    SupervisedData,
    SupervisedGibbs,
    shard_statistics,
)
from topiclink.families.slda.estimator import SupervisedTopicModel  # noqa: E402
from topiclink.inference.engine import check_topic_counts, run  # noqa: E402
from topiclink.random import generator_state  # noqa: E402
from topiclink.topics.lda import TokenData  # noqa: E402

BIN_KW = {"n_topics": 4, "c": 4.0, "max_iter": 12, "evaluate_every": 5,
          "scheme": Shards("shards", 3), "random_state": 5}
MULTI_KW = {"n_topics": 5, "loss": "hinge", "c": 2.0, "max_iter": 10, "evaluate_every": 4,
            "scheme": Shards("shards", 3), "random_state": 7}
STATE = ("eta", "z", "ndk", "nwk", "nk", "a", "b", "kernel_rng")


@pytest.fixture(scope="module")
def binary():
    (corpus, y), _ = make_slda_data(n_docs=150, n_words=200, n_topics=4, doc_length=40,
                                    random_state=2)
    return corpus, y


@pytest.fixture(scope="module")
def multi():
    corpus, truth = make_lda_data(n_docs=150, n_words=200, n_topics=6, doc_length=40,
                                  random_state=4)
    labels = np.array(["a", "b", "c"])[np.argmax(truth.doc_topic, axis=1) // 2]
    return corpus, labels


@pytest.fixture(scope="module")
def ref_binary(binary, client2):
    return SupervisedTopicModel(executor=client2, **BIN_KW).fit(*binary)


@pytest.fixture(scope="module")
def ref_multi(multi, client2):
    return SupervisedTopicModel(executor=client2, **MULTI_KW).fit(*multi)


def assert_same_chain(a, b):
    for name in STATE:
        np.testing.assert_array_equal(getattr(a.state_, name), getattr(b.state_, name),
                                      err_msg=name)
    for name in ("eta_rngs", "aug_rngs"):
        assert [generator_state(g) for g in getattr(a.state_, name)] == \
            [generator_state(g) for g in getattr(b.state_, name)], name
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.all_components_, b.all_components_)
    np.testing.assert_array_equal(a.doc_topic_, b.doc_topic_)
    for key in ("log_likelihood", "train_accuracy", "label_loglik"):
        np.testing.assert_array_equal(a.trace_[key], b.trace_[key], err_msg=key)


def assert_counts_match_z(model, corpus):
    tok = corpus.tokens()
    s = model.state_
    for m in range(s.z.shape[0]):
        check_topic_counts(s.z[m], s.ndk[m], s.nwk[m], s.nk[m], tok.docs, tok.words)
    assert np.all(s.b > 0) and np.all(np.isfinite(s.a))


def test_counts_consistent_with_z(binary, multi, ref_binary, ref_multi):
    assert_counts_match_z(ref_binary, binary[0])
    assert_counts_match_z(ref_multi, multi[0])
    # the shards really are separate chains' pieces: not the sequential chain
    seq = SupervisedTopicModel(**{**BIN_KW, "scheme": "exact"}).fit(*binary)
    assert not np.array_equal(seq.state_.z, ref_binary.state_.z)


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_one_shard_is_the_sequential_chain(binary, multi, client2, loss):
    """One shard sweeps every document against the current counts with the chain's own
    streams: the sequential sampler draw for draw (eta, z, counts, a, b)."""
    kw = {**BIN_KW, "loss": loss, "scheme": Shards("shards", 1)}
    assert_same_chain(SupervisedTopicModel(**{**kw, "scheme": "exact"}).fit(*binary),
                      SupervisedTopicModel(executor=client2, **kw).fit(*binary))
    kw = {**MULTI_KW, "loss": loss, "scheme": Shards("shards", 1), "max_iter": 6}
    assert_same_chain(SupervisedTopicModel(**{**kw, "scheme": "exact"}).fit(*multi),
                      SupervisedTopicModel(executor=client2, **kw).fit(*multi))


def test_state_is_complete_whenever_read(binary, client2, ref_binary):
    """A callback reading ``state_`` sees counts consistent with z after every
    iteration; gathering every iteration does not change the chain."""
    tok = binary[0].tokens()
    seen = []

    def look(model, iteration, info):
        s = model.state_
        check_topic_counts(s.z[0], s.ndk[0], s.nwk[0], s.nk[0], tok.docs, tok.words)
        seen.append(iteration)

    model = SupervisedTopicModel(executor=client2, callbacks=[LambdaCallback(look)],
                                 **BIN_KW).fit(*binary)
    assert seen == list(range(BIN_KW["max_iter"]))
    assert_same_chain(ref_binary, model)


def test_algorithm_moves_only_deltas_and_steps_outside_a_session(binary, client2):
    corpus, y = binary
    data = SupervisedData(TokenData.from_corpus(corpus), (y == 1)[None].astype(np.int8))
    K = 4

    def algorithm():
        return SupervisedGibbs(K, np.full(K, 0.1), 0.01, loss="logistic", c=4.0,
                               hinge_cost=1.0, weight_prior_var=1.0, n_shards=3,
                               executor=DaskExecutor(client2))

    alg = algorithm()
    state = alg.init(data, np.random.default_rng(0))
    z0 = state.z.copy()
    with alg.session(state, data):
        for _ in range(3):
            info = alg.step(state, data)
        assert np.array_equal(state.z, z0)          # z still on the workers
        assert 0 <= info["train_accuracy"] <= 1 and np.isfinite(info["label_loglik"])
        ex = alg.executor
        sent, received = ex.bytes_sent, ex.bytes_received
        nwk_bytes = state.nwk.nbytes * ex.n_workers
        assert alg.n_rounds == 3 and sent > 3 * nwk_bytes and received > 0
        # the shards' reports: the statistics of eta and the figures of all documents
        alg.sync(state)
        assert not np.array_equal(state.z, z0)
        zbar = state.ndk[0] / data.tokens.lengths[:, None]
        P_full, s_full = shard_statistics(state.ndk[0], data.tokens.lengths, state.a[0],
                                          state.b[0])
        np.testing.assert_allclose(sum(P for P, _ in alg._stats[0]), P_full, rtol=1e-12)
        np.testing.assert_allclose(sum(s for _, s in alg._stats[0]), s_full, rtol=1e-12)
        omega = zbar @ state.eta[0]
        assert info["train_accuracy"] == np.mean((omega > 0) == (y == 1))
        z_synced = state.z.copy()
        alg.step(state, data)
        assert np.array_equal(state.z, z_synced)    # stale again until the next sync
    assert not np.array_equal(state.z, z_synced)    # leaving gathers everything
    assert ex.bytes_received > received
    # a step outside a session is one gathered iteration: 4 + 1 = 5 in one run
    alg.step(state, data)
    other = algorithm()
    fresh = other.init(data, np.random.default_rng(0))
    run(other, fresh, data, 5)
    for name in STATE:
        np.testing.assert_array_equal(getattr(state, name), getattr(fresh, name))


# ---------------------------------------------------------------------- quality
def matched_eta_correlation(model, truth):
    cos = model.components_ @ truth.topic_word.T
    rows, cols = linear_sum_assignment(-cos)
    perm = np.empty(cos.shape[0], int)
    perm[cols] = rows
    return float(np.corrcoef(model.coef_[0][perm], truth.eta)[0, 1])


@pytest.mark.parametrize("loss", ["logistic", "hinge"])
def test_heldout_accuracy_close_to_sequential(client2, loss):
    """5 seeds, 300 training / 100 held-out documents: the mean paired difference of
    held-out accuracy is within 2 standard errors or 0.02; eta is recovered as well."""
    (corpus, y), truth = make_slda_data(n_docs=400, n_topics=5, random_state=0)
    train, test = corpus.subset(range(300)), corpus.subset(range(300, 400))
    kw = {"n_topics": 5, "loss": loss, "max_iter": 60, "evaluate_every": 0}
    seq = [SupervisedTopicModel(random_state=s, **kw).fit(train, y[:300]) for s in range(5)]
    dsk = [SupervisedTopicModel(scheme=Shards("shards", 3), executor=client2, random_state=s,
                                **kw).fit(train, y[:300]) for s in range(5)]
    acc_seq = np.array([m.score(test, y[300:]) for m in seq])
    acc_dsk = np.array([m.score(test, y[300:]) for m in dsk])
    corr_seq = np.array([matched_eta_correlation(m, truth) for m in seq])
    corr_dsk = np.array([matched_eta_correlation(m, truth) for m in dsk])
    diff = acc_dsk - acc_seq
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    print(f"{loss}: held-out accuracy sequential {acc_seq}, dask (3 shards) {acc_dsk}; "
          f"mean difference {diff.mean():+.4f} (SE {se:.4f}); eta correlation sequential "
          f"{np.round(corr_seq, 3)}, dask {np.round(corr_dsk, 3)}")
    assert abs(diff.mean()) < max(2 * se, 0.02)
    assert np.median(corr_dsk) > 0.8 and np.median(corr_dsk) > np.median(corr_seq) - 0.1
