"""AD-LDA on Dask (LDA and DMR, ``scheme="adlda"``, ``executor=client``), the token
samplers' part: one shard is the sequential sampler, DMR's optimisations of lambda on the
gathered counts, the state complete whenever it is read, exact count deltas, held-out
quality, a connection's finish.  The executor contract (the same chain on any number of
workers and on worker processes, the current client and an address, resume, clone /
pickle, the errors) is ``tests/test_executor_contract.py``."""

from __future__ import annotations

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from topiclink.callbacks import LambdaCallback  # noqa: E402
from topiclink.datasets import make_lda_data  # noqa: E402
from topiclink.execution import Shards  # noqa: E402
from topiclink.families.dmr.estimator import DMR  # noqa: E402
from topiclink.families.lda.estimator import LDA  # noqa: E402
from topiclink.inference.engine import check_topic_counts  # noqa: E402

LDA_KW = {"n_topics": 5, "max_iter": 15, "scheme": Shards("adlda", 3), "random_state": 4}
DMR_KW = {"n_topics": 4, "max_iter": 14, "burn_in": 4, "optimize_every": 3,
          "scheme": Shards("adlda", 3), "random_state": 2}


@pytest.fixture(scope="module")
def corpus():
    corpus, _ = make_lda_data(n_docs=120, n_words=200, n_topics=5, doc_length=50,
                              random_state=1)
    return corpus


@pytest.fixture(scope="module")
def features(corpus):
    rng = np.random.default_rng(3)
    return np.column_stack([rng.random(corpus.n_docs), rng.normal(size=corpus.n_docs)])


@pytest.fixture(scope="module")
def lda_adlda(corpus):
    return LDA(**LDA_KW).fit(corpus)


def assert_same_chain(a, b):
    for name in ("z", "ndk", "nwk", "nk", "kernel_rng"):
        np.testing.assert_array_equal(getattr(a.state_, name), getattr(b.state_, name),
                                      err_msg=name)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.doc_topic_, b.doc_topic_)
    np.testing.assert_array_equal(a.trace_["log_likelihood"], b.trace_["log_likelihood"])


# ---------------------------------------------------------------------- the same chain
def test_dmr_optimises_lambda_on_the_gathered_counts(corpus, features, client2):
    """lambda is optimised on the shards' counts gathered to the driver, at sweeps 6, 9
    and 12: the in-process chain."""
    ref = DMR(**DMR_KW).fit(corpus, features=features)
    model = DMR(executor=client2, **DMR_KW).fit(corpus, features=features)
    assert_same_chain(ref, model)
    np.testing.assert_array_equal(ref.lambda_, model.lambda_)
    np.testing.assert_array_equal(ref.trace_["lambda_objective"],
                                  model.trace_["lambda_objective"])
    assert np.isfinite(model.trace_["lambda_objective"]).sum() == 3   # sweeps 6, 9, 12


def test_one_shard_is_the_sequential_sampler(corpus, features, client2):
    """One shard sweeps every document with the first stream: the exact sampler."""
    kw = {**LDA_KW, "scheme": Shards("adlda", 1), "evaluate_every": 0}
    assert_same_chain(LDA(**{**kw, "scheme": "exact"}).fit(corpus),
                      LDA(executor=client2, **kw).fit(corpus))
    kw = {**DMR_KW, "scheme": Shards("adlda", 1)}
    seq = DMR(**{**kw, "scheme": "exact"}).fit(corpus, features=features)
    assert_same_chain(seq, DMR(executor=client2, **kw).fit(corpus, features=features))
    assert_same_chain(seq, DMR(**kw).fit(corpus, features=features))


def test_compact_deltas_are_exact():
    from topiclink.execution import compact_dtype

    assert compact_dtype(np.zeros((0, 3), np.int32)) is np.int8
    assert compact_dtype(np.array([[-127, 127]])) is np.int8
    assert compact_dtype(np.array([[-128, 5]])) is np.int16
    assert compact_dtype(np.array([[40_000, 0]])) is np.int32
    for values in (np.array([[3, -7]]), np.array([[300, -7]]), np.array([[-70_000, 1]])):
        assert np.array_equal(values.astype(compact_dtype(values)), values)


def test_state_is_complete_whenever_read(corpus, client2, lda_adlda):
    """A callback reading ``state_`` sees consistent counts after every sweep; the
    objective is recorded only every 4 sweeps (ndk gathered only then)."""
    tok = corpus.tokens()
    seen = []

    def look(model, iteration, info):
        s = model.state_
        check_topic_counts(s.z, s.ndk, s.nwk, s.nk, tok.docs, tok.words)
        seen.append(iteration)

    model = LDA(executor=client2, callbacks=[LambdaCallback(look)], **LDA_KW).fit(corpus)
    assert seen == list(range(LDA_KW["max_iter"]))
    assert_same_chain(lda_adlda, model)
    sparse = LDA(executor=client2, evaluate_every=4, **LDA_KW).fit(corpus)
    np.testing.assert_array_equal(sparse.components_, lda_adlda.components_)
    np.testing.assert_array_equal(sparse.state_.z, lda_adlda.state_.z)
    assert np.isfinite(sparse.trace_["log_likelihood"]).sum() == 4     # 4, 8, 12, 15


# ---------------------------------------------------------------------- quality
def test_heldout_perplexity_close_to_sequential(client2):
    """Medians over 5 seeds (a chain of either sampler now and then sticks in a local
    mode with two topics merged: perplexity ~12-13 instead of ~10.6)."""
    corpus, _ = make_lda_data(n_docs=240, n_words=300, n_topics=6, doc_length=60,
                              random_state=11)
    train, test = corpus.subset(np.arange(200)), corpus.subset(np.arange(200, 240))
    kw = {"n_topics": 6, "max_iter": 50, "evaluate_every": 0}
    seeds = range(5)
    seq = [LDA(random_state=s, **kw).fit(train).perplexity(test, random_state=0)
           for s in seeds]
    dsk = [LDA(scheme=Shards("adlda", 3), executor=client2, random_state=s, **kw).fit(
        train).perplexity(test, random_state=0) for s in seeds]
    print(f"held-out perplexity: sequential {np.round(seq, 3)}, dask (3 shards) "
          f"{np.round(dsk, 3)}")
    assert abs(np.median(dsk) / np.median(seq) - 1) < 0.02


def test_finish_gathers_then_forgets_and_never_hides_the_first_error(caplog):
    """DaskConnection._finish: a gathering error is raised after a good run, logged (not
    raised) after a failed one; the shards are forgotten and the client dropped always."""
    from topiclink.execution.dask import DaskConnection

    class Sampler(DaskConnection):
        pass

    def broken():
        raise RuntimeError("worker gone")

    for failed in (False, True):
        sampler, forgotten = Sampler(), []
        sampler._init_connection(None)
        sampler.client = object()            # a client this sampler does not own
        if failed:
            with caplog.at_level("WARNING", logger="topiclink"):
                sampler._finish(broken, True, "z is stale", lambda f=forgotten: f.append(1))
            assert "Sampler: could not gather the shards after an error; z is stale" \
                in caplog.text
        else:
            with pytest.raises(RuntimeError, match="worker gone"):
                sampler._finish(broken, False, "z is stale", lambda f=forgotten: f.append(1))
        assert forgotten == [1] and sampler.client is None
