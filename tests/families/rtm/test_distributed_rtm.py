"""Distributed gRTM Gibbs on Dask (``RelationalTopicModel(scheme="shards",
executor=client)``), the family's part: the shards on threads are the Dask chain, one
shard = the single-machine chain, counts consistent with the topics, the state complete
whenever read, the bytes a round moves, held-out link AUC and planted recovery as good as
the single-machine sampler's.  The executor contract (the same chain on any number of
workers and on worker processes, the current client and an address, resume, clone /
pickle, the errors) is ``tests/test_executor_contract.py``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

distributed = pytest.importorskip("distributed")

from topiclink.callbacks import LambdaCallback  # noqa: E402
from topiclink.data.splits import train_test_split_documents  # noqa: E402
from topiclink.datasets import make_rtm_data  # noqa: E402
from topiclink.execution import Shards  # noqa: E402
from topiclink.families.rtm.estimator import RelationalTopicModel  # noqa: E402
from topiclink.inference.engine import check_topic_counts  # noqa: E402
from topiclink.metrics import link_auc  # noqa: E402
from topiclink.random import generator_state  # noqa: E402

KW = {"n_topics": 4, "negative_ratio": 0.05, "max_iter": 8, "scheme": Shards("shards", 3),
      "evaluate_every": 1, "random_state": 2}
#: the two samplers of the augmentation, with the two losses
CONFIGS = [{"loss": "logistic", "augmentation": "reference"},
           {"loss": "hinge", "augmentation": "numba"}]


@pytest.fixture(scope="module")
def network():
    (corpus, links), _ = make_rtm_data(n_docs=120, n_topics=4, doc_length=50,
                                       random_state=3)
    return corpus, links


@pytest.fixture(scope="module")
def references(network, client2):
    """The dask chains of CONFIGS (3 shards) on two workers."""
    corpus, links = network
    return [RelationalTopicModel(executor=client2, **cfg, **KW).fit(
        corpus, links=links) for cfg in CONFIGS]


def assert_same_chain(a, b, omega: bool = True):
    names = ["z", "ndk", "nwk", "nk", "U", "a", "b", "kernel_rng"] + (["omega"] if omega
                                                                    else [])
    for name in names:
        np.testing.assert_array_equal(getattr(a.state_, name), getattr(b.state_, name),
                                      err_msg=name)
    assert ([generator_state(g) for g in a.state_.aug_rngs]
            == [generator_state(g) for g in b.state_.aug_rngs])
    assert generator_state(a.state_.weight_rng) == generator_state(b.state_.weight_rng)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.trace_["link_loglik"], b.trace_["link_loglik"])
    np.testing.assert_array_equal(a.trace_["log_likelihood"], b.trace_["log_likelihood"])


# ---------------------------------------------------------------------- the same chain
@pytest.mark.parametrize("config", range(len(CONFIGS)),
                         ids=[f"{c['loss']}-{c['augmentation']}" for c in CONFIGS])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_shards_on_threads_are_the_dask_chain(network, references, config, n_jobs):
    """scheme="shards" in this process: the same sharded sampler on this process's threads (or the
    calling thread), the dask chain bit for bit; no payload counters in the trace."""
    corpus, links = network
    model = RelationalTopicModel(n_jobs=n_jobs, **CONFIGS[config], **KW).fit(corpus,
                                                                             links=links)
    assert_same_chain(references[config], model)
    assert "bytes_sent" not in model.trace_ and "bytes_peer" not in model.trace_


@pytest.mark.parametrize("config", [*CONFIGS, {"loss": "logistic", "augmentation": "numba",
                                                "weights": "diagonal", "approx": True}],
                         ids=["logistic-reference", "hinge-numba", "approx-diagonal"])
def test_one_shard_is_the_single_machine_chain(network, client2, config):
    """One shard sweeps every document with the sweep stream and draws every pair with the
    first augmentation stream, as the single-machine sampler does with one chunk of pairs
    (< 4096 pairs here): the same chain bit for bit, which checks the sweep's inputs
    (U, zbar U^T, the pairs' CSRs and (a, b)) and the fresh discriminants of the draws."""
    corpus, links = network
    kw = {**KW, "scheme": Shards("shards", 1)}
    seq = RelationalTopicModel(**config, **{k: v for k, v in kw.items() if k != "scheme"}
                               ).fit(corpus, links=links)
    assert seq.n_pairs_ < 4096
    assert_same_chain(seq, RelationalTopicModel(executor=client2, **config, **kw).fit(
        corpus, links=links))


def test_shards_change_the_chain_but_not_the_counts(network, references):
    """Three shards see other shards' neighbours one iteration late: another chain; the
    counts must still be those implied by the topics, and the driver's (a, b) those of
    the pairs' last draws."""
    corpus, links = network
    tok = corpus.tokens()
    seq = RelationalTopicModel(**CONFIGS[0], **{k: v for k, v in KW.items()
                                                if k != "scheme"}).fit(corpus, links=links)
    model = references[0]
    assert not np.array_equal(seq.state_.z, model.state_.z)
    for m in references:
        s = m.state_
        check_topic_counts(s.z, s.ndk, s.nwk, s.nk, tok.docs, tok.words)
        assert np.all(s.b > 0) and np.all(np.isfinite(s.omega)) and np.any(s.omega != 0)
    # logistic: a = c (y - 1/2) never changes; b are Polya-Gamma draws, mean
    # E PG(1, omega) = tanh(omega / 2) / (2 omega) (<= 1/4)
    s = model.state_
    np.testing.assert_array_equal(s.a, s.pair_c * (s.pair_y - 0.5))
    omega = np.where(s.omega == 0, 1e-12, s.omega)
    expected = np.tanh(omega / 2) / (2 * omega)
    assert abs(s.b.mean() / expected.mean() - 1) < 0.1


def test_state_is_complete_whenever_read(network, client2, references):
    """A callback reading ``state_`` sees counts consistent with z after every iteration
    (z gathered every iteration), and the chain is unchanged by the gathering."""
    corpus, links = network
    tok = corpus.tokens()
    seen = []

    def look(model, iteration, info):
        s = model.state_
        check_topic_counts(s.z, s.ndk, s.nwk, s.nk, tok.docs, tok.words)
        seen.append(iteration)

    model = RelationalTopicModel(executor=client2, **CONFIGS[0],
                                 callbacks=[LambdaCallback(look)], **KW).fit(corpus,
                                                                             links=links)
    assert seen == list(range(KW["max_iter"]))
    assert_same_chain(references[0], model)


def test_bytes_are_counted(references):
    model = references[0]
    sent, received = model.trace_["bytes_sent"], model.trace_["bytes_received"]
    assert sent.shape == received.shape == (KW["max_iter"],)
    assert np.all(sent > 0) and np.all(received > 0)
    assert sent[0] > sent[1:].max()          # the first iteration scatters the shards
    # at least round one's broadcast to 2 workers (U, nwk, nk, ndk as int8)
    s = model.state_
    D, K = s.ndk.shape
    floor = 2 * (s.U.nbytes + s.nwk.nbytes + s.nk.nbytes + D * K)
    assert np.all(sent[1:] >= floor)
    # between workers: at most every shard's ndk rows (int8) to the one other worker
    peer = model.trace_["bytes_peer"]
    assert peer.shape == sent.shape and np.all((peer >= 0) & (peer <= D * K))
    # received: at least b of every pair and the ndk rows
    assert np.all(received >= 8 * model.n_pairs_ + D * K)


# ---------------------------------------------------------------------- quality
def test_heldout_link_auc_close_to_single_machine(client2):
    """Link AUC on held-out documents (the protocol of tests/families/rtm/test_rtm.py): 5 seeds
    each;
    the mean paired difference must lie within 2 standard errors of 0 or below 0.01."""
    (corpus, links), _ = make_rtm_data(n_docs=300, n_topics=5, doc_length=80,
                                       random_state=3)
    fold = train_test_split_documents(corpus, links, test_size=0.2, random_state=0)
    kw = {"n_topics": 5, "negative_ratio": 0.2, "c": 2.0, "max_iter": 60,
          "evaluate_every": 0}

    def auc(**extra):
        m = RelationalTopicModel(**kw, **extra).fit(fold.train_corpus,
                                                    links=fold.train_links)
        return link_auc(m.link_scores(fold.test_corpus), fold.test_links)["roc_auc"]

    seeds = range(5)
    seq = np.array([auc(random_state=s) for s in seeds])
    dsk = np.array([auc(random_state=s, scheme=Shards("shards", 3), executor=client2)
                    for s in seeds])
    diff = dsk - seq
    se = diff.std(ddof=1) / np.sqrt(diff.size)
    print(f"held-out link AUC: single machine {np.round(seq, 4)} (mean {seq.mean():.4f}), "
          f"dask 3 shards {np.round(dsk, 4)} (mean {dsk.mean():.4f}); paired difference "
          f"{diff.mean():+.4f} (se {se:.4f})")
    assert seq.mean() > 0.8 and dsk.mean() > 0.8
    assert abs(diff.mean()) < max(2 * se, 0.01)


@pytest.mark.slow
def test_logistic_recovers_planted_weights(client2):
    """As tests/families/rtm/test_rtm.py's planted recovery (all unobserved pairs as negatives, c =
    1,
    a vague prior): the topics are found and every entry of U lies within 4 Fisher
    standard deviations of the truth, with two shards.  Either sampler now and then sticks
    in a mode with two topics merged (seeds 0-11: the single-machine chain at seeds 5 and
    10, two shards at seed 0); seed 1 finds all topics with both."""
    (corpus, links), truth = make_rtm_data(n_docs=220, n_topics=5, doc_length=80,
                                           random_state=3)
    m = RelationalTopicModel(5, loss="logistic", negative_ratio=1.0, max_iter=80,
                             n_average=20, weight_prior_var=100.0, random_state=1,
                             scheme=Shards("shards", 2), executor=client2).fit(
        corpus, links=links)
    cos = m.components_ @ truth.topic_word.T
    cos /= np.linalg.norm(m.components_, axis=1)[:, None]
    cos /= np.linalg.norm(truth.topic_word, axis=1)[None, :]
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.9, "topics not recovered"
    perm = np.empty(len(cols), int)
    perm[cols] = rows
    U = m.weights_[np.ix_(perm, perm)]
    zbar = truth.zbar
    p = 1.0 / (1.0 + np.exp(-(zbar @ truth.weights @ zbar.T)))
    w = p * (1.0 - p)
    np.fill_diagonal(w, 0.0)
    sd = 1.0 / np.sqrt((zbar**2).T @ w @ zbar**2)
    assert np.corrcoef(U.ravel(), truth.weights.ravel())[0, 1] > 0.95
    assert (np.abs(U - truth.weights) / sd).max() < 4.0
