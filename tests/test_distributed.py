"""Distributed Gibbs on Dask (``parallel="dask"``): bit for bit ``parallel="adlda"`` with
the same shards on 1, 2 or 4 workers (LDA and DMR), the state complete whenever it is
read, held-out quality, persistence / clone of a model holding a client, the errors."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import topiclink  # noqa: E402
from tests.dask_cluster import cluster  # noqa: E402
from topiclink.callbacks import LambdaCallback  # noqa: E402
from topiclink.datasets import make_lda_data  # noqa: E402
from topiclink.execution import Shards  # noqa: E402
from topiclink.families.dmr.estimator import DMR  # noqa: E402
from topiclink.families.lda.estimator import LDA  # noqa: E402
from topiclink.inference.chunked import ChunkedSweeper, DaskSweeper  # noqa: E402
from topiclink.inference.engine import check_topic_counts  # noqa: E402
from topiclink.kernels import lda as kernels  # noqa: E402
from topiclink.random import as_generator, kernel_state  # noqa: E402

LDA_KW = {"n_topics": 5, "max_iter": 15, "n_shards": 3, "random_state": 4}
#: LDA_KW in the new spelling (the AD-LDA scheme with its 3 shards)
LDA_NEW = {"n_topics": 5, "max_iter": 15, "scheme": Shards("adlda", 3), "random_state": 4}
DMR_KW = {"n_topics": 4, "max_iter": 14, "burn_in": 4, "optimize_every": 3, "n_shards": 3,
          "random_state": 2}


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
    return LDA(parallel="adlda", **LDA_KW).fit(corpus)


def assert_same_chain(a, b):
    for name in ("z", "ndk", "nwk", "nk", "kernel_rng"):
        np.testing.assert_array_equal(getattr(a.state_, name), getattr(b.state_, name),
                                      err_msg=name)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.doc_topic_, b.doc_topic_)
    np.testing.assert_array_equal(a.trace_["log_likelihood"], b.trace_["log_likelihood"])


# ---------------------------------------------------------------------- the same chain
def test_lda_dask_equals_adlda(corpus, client, lda_adlda):
    model = LDA(parallel="dask", client=client, **LDA_KW).fit(corpus)
    assert_same_chain(lda_adlda, model)


def test_dmr_dask_equals_adlda(corpus, features, client):
    ref = DMR(parallel="adlda", **DMR_KW).fit(corpus, features=features)
    model = DMR(parallel="dask", client=client, **DMR_KW).fit(corpus, features=features)
    assert_same_chain(ref, model)
    np.testing.assert_array_equal(ref.lambda_, model.lambda_)
    np.testing.assert_array_equal(ref.trace_["lambda_objective"],
                                  model.trace_["lambda_objective"])
    assert np.isfinite(model.trace_["lambda_objective"]).sum() == 3   # sweeps 6, 9, 12


def test_one_shard_is_the_sequential_sampler(corpus, features, client2):
    """One shard sweeps every document with the first stream: the exact sampler."""
    kw = {**LDA_KW, "n_shards": 1, "evaluate_every": 0}
    assert_same_chain(LDA(**kw).fit(corpus),
                      LDA(parallel="dask", client=client2, **kw).fit(corpus))
    kw = {**DMR_KW, "n_shards": 1}
    seq = DMR(**kw).fit(corpus, features=features)
    assert_same_chain(seq, DMR(parallel="dask", client=client2, **kw).fit(
        corpus, features=features))
    assert_same_chain(seq, DMR(parallel="adlda", **kw).fit(corpus, features=features))


def test_sweeper_equals_chunked_sweeper_with_changing_priors(corpus, client2):
    """The sweeper itself, with a (D, K) prior that changes between sweeps (as DMR's)."""
    tok = corpus.tokens()
    K, S = 4, 3
    rng = as_generator(0)
    z0 = rng.integers(0, K, tok.words.size).astype(np.int32)
    states0 = kernel_state(rng, S)
    alphas = [np.exp(rng.normal(size=(corpus.n_docs, K))) for _ in range(3)]

    def arrays():
        z = z0.copy()
        ndk = np.zeros((corpus.n_docs, K), np.int32)
        nwk = np.zeros((corpus.n_words, K), np.int32)
        nk = np.zeros(K, np.int32)
        kernels.init_counts(tok.words, tok.docs, z, ndk, nwk, nk)
        return z, ndk, nwk, nk, states0.copy()

    ref, got = arrays(), arrays()
    with ChunkedSweeper(tok.offsets, ref[4], 2) as chunked, \
            DaskSweeper(tok.offsets, got[4], client2) as sweeper:
        for it in range(6):
            alpha = alphas[it // 2]
            chunked.sweep(tok.words, tok.offsets, *ref[:4], alpha, 0.01)
            sweeper.sweep(tok.words, tok.offsets, *got[:4], alpha, 0.01)
            np.testing.assert_array_equal(ref[2], got[2])       # nwk: always current
            np.testing.assert_array_equal(ref[3], got[3])
        assert not np.array_equal(ref[1], got[1])              # ndk: still on the workers
        sweeper.sync(("ndk",))      # (the executor fetches whole shard states: z too)
        np.testing.assert_array_equal(ref[1], got[1])
        sent, received = sweeper.bytes_sent, sweeper.bytes_received
        assert sweeper.n_sweeps == 6 and sent > 0 and received > 0
    for a, b in zip(ref, got, strict=True):                    # leaving gathers the rest
        np.testing.assert_array_equal(a, b)
    check_topic_counts(got[0], got[1], got[2], got[3], tok.docs, tok.words)


def test_compact_deltas_are_exact():
    from topiclink.distributed.dask_sweeper import compact_dtype

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

    model = LDA(parallel="dask", client=client2, callbacks=[LambdaCallback(look)],
                **LDA_KW).fit(corpus)
    assert seen == list(range(LDA_KW["max_iter"]))
    assert_same_chain(lda_adlda, model)
    sparse = LDA(parallel="dask", client=client2, evaluate_every=4, **LDA_KW).fit(corpus)
    np.testing.assert_array_equal(sparse.components_, lda_adlda.components_)
    np.testing.assert_array_equal(sparse.state_.z, lda_adlda.state_.z)
    assert np.isfinite(sparse.trace_["log_likelihood"]).sum() == 4     # 4, 8, 12, 15


def test_current_client_and_scheduler_address(corpus, lda_adlda):
    with cluster(2) as c:
        with distributed.Client(c):                  # the current client (client=None)
            assert_same_chain(lda_adlda, LDA(parallel="dask", **LDA_KW).fit(corpus))
        # an address: connected for the fit, closed after it
        model = LDA(parallel="dask", client=c.scheduler_address, **LDA_KW).fit(corpus)
        assert_same_chain(lda_adlda, model)


def test_resume_across_save_and_load(corpus, client2, lda_adlda, tmp_path):
    half = {**LDA_NEW, "max_iter": LDA_KW["max_iter"] - 7}
    model = LDA(executor=client2, **half).fit(corpus)
    path = model.save(tmp_path / "lda.npz", full=True)
    loaded = topiclink.load(path)
    assert loaded.executor is None and loaded.scheme == Shards("adlda", 3)
    np.testing.assert_array_equal(loaded.components_, model.components_)
    np.testing.assert_array_equal(loaded.transform(corpus), model.transform(corpus))
    loaded.set_params(executor=client2, max_iter=7).fit(corpus, resume=True)
    assert_same_chain(lda_adlda, loaded)
    # an address survives a model file
    addressed = LDA(scheme="adlda", executor="tcp://127.0.0.1:8786")
    addressed.n_iter_ = 0
    assert addressed._encoded_params({})["executor"] == "tcp://127.0.0.1:8786"


def test_client_parameter_clone_repr_pickle(corpus, client2):
    from sklearn.base import clone

    model = LDA(scheme="adlda", executor=client2, n_topics=3)
    twin = clone(model)
    assert twin.executor is client2 and twin.get_params() == model.get_params()
    assert "executor=" in repr(model)
    copied = pickle.loads(pickle.dumps(model))
    assert copied.executor is None and copied.n_topics == 3 and model.executor is client2
    dmr = clone(DMR(scheme="adlda", executor=client2))
    assert dmr.executor is client2


def test_errors(corpus):
    with pytest.raises(ValueError):
        distributed.get_client()                    # no current client in this process
    with pytest.raises(ValueError, match=r"found no Dask client: pass executor="):
        LDA(executor="dask", **LDA_NEW).fit(corpus)
    with pytest.raises(ValueError, match=r"executor must be None or an integer"):
        LDA(executor=[5], **LDA_NEW).fit(corpus)
    with pytest.raises(ValueError, match=r"scheme must be one of 'exact', 'partition', "
                                         r"'adlda' or Shards"):
        DMR(scheme="spark").fit(corpus, features=np.zeros((corpus.n_docs, 1)))


def test_dask_imported_only_when_used():
    code = ("import sys, numpy as np; from topiclink import LDA; "
            "X = np.random.default_rng(0).integers(0, 3, (20, 30)); "
            "LDA(n_topics=2, max_iter=2, parallel='adlda').fit(X); "
            "assert 'distributed' not in sys.modules and 'dask' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


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
    dsk = [LDA(parallel="dask", n_shards=3, client=client2, random_state=s, **kw).fit(
        train).perplexity(test, random_state=0) for s in seeds]
    print(f"held-out perplexity: sequential {np.round(seq, 3)}, dask (3 shards) "
          f"{np.round(dsk, 3)}")
    assert abs(np.median(dsk) / np.median(seq) - 1) < 0.02


# ---------------------------------------------------------------------- real processes
def test_worker_processes(corpus, lda_adlda):
    with cluster(2, processes=True) as c, distributed.Client(c, set_as_default=False) as cl:
        model = LDA(parallel="dask", client=cl, **LDA_KW).fit(corpus)
    assert_same_chain(lda_adlda, model)


def test_finish_gathers_then_forgets_and_never_hides_the_first_error(caplog):
    """DaskConnection._finish: a gathering error is raised after a good run, logged (not
    raised) after a failed one; the shards are forgotten and the client dropped always."""
    from topiclink.distributed import DaskConnection

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


def test_old_dask_sweeper_path_still_resolves_with_a_warning():
    import topiclink.distributed as old_home
    from topiclink.inference import chunked

    with pytest.warns(DeprecationWarning, match="moved to topiclink.inference.chunked"):
        assert old_home.DaskSweeper is chunked.DaskSweeper
    with pytest.raises(AttributeError):
        old_home.NoSuchThing  # noqa: B018
