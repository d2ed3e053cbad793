"""A corpus on disk as document shards (``topiclink.data.shards``): round trips from a
Corpus and from UCI files (plain and gzip, streamed with a bounded memory), the one-line
errors, and ``LDA(scheme="adlda", executor=client).fit(shardset)`` bit for bit the
in-memory chain."""

from __future__ import annotations

import gzip
import json
import logging
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from topiclink.data import Corpus, DataError, ShardSet, write_shards
from topiclink.data.io import read_uci_bow
from topiclink.data.shards import FORMAT_VERSION
from topiclink.datasets import make_lda_data
from topiclink.execution import Shards
from topiclink.execution.shards import balanced_chunks


@pytest.fixture(scope="module")
def corpus():
    corpus, _ = make_lda_data(n_docs=120, n_words=200, n_topics=5, doc_length=50,
                              random_state=1)
    return corpus


def assert_same_corpus(a: Corpus, b: Corpus) -> None:
    assert a.counts.shape == b.counts.shape
    assert (a.counts != b.counts).nnz == 0
    np.testing.assert_array_equal(a.vocabulary, b.vocabulary)
    np.testing.assert_array_equal(a.doc_ids, b.doc_ids)
    assert a.name == b.name
    assert (a.titles is None) == (b.titles is None)
    if a.titles is not None:
        np.testing.assert_array_equal(a.titles, b.titles)


def assert_shards_of(shards: ShardSet, corpus: Corpus, n_shards: int) -> None:
    """Every shard holds exactly the in-memory sharding of ``corpus``'s tokens."""
    tok = corpus.tokens()
    chunks = balanced_chunks(tok.offsets, n_shards)
    assert shards.n_shards == chunks.size - 1
    np.testing.assert_array_equal(shards.doc_bounds(), chunks)
    np.testing.assert_array_equal(shards.doc_lengths(), corpus.doc_lengths)
    np.testing.assert_array_equal(shards.offsets(), tok.offsets)
    assert (shards.n_docs, shards.n_words, shards.n_tokens) == (
        corpus.n_docs, corpus.n_words, corpus.n_tokens)
    for s in range(shards.n_shards):
        words, offsets, d0 = shards.load(s)
        lo, hi = tok.offsets[chunks[s]], tok.offsets[chunks[s + 1]]
        assert d0 == chunks[s] and words.dtype == np.int32 and offsets.dtype == np.int64
        np.testing.assert_array_equal(words, tok.words[lo:hi])
        np.testing.assert_array_equal(offsets, tok.offsets[chunks[s]:chunks[s + 1] + 1] - lo)


def uci_text(counts: sp.csr_matrix, seed: int = 0, extra_docs: int = 0) -> str:
    """A UCI docword text of ``counts``: sorted by docID, words shuffled within a doc."""
    M = counts.tocoo()
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(M.nnz), M.row))
    lines = [f"{M.row[i] + 1} {M.col[i] + 1} {M.data[i]}\n" for i in order]
    return (f"{counts.shape[0] + extra_docs}\n{counts.shape[1]}\n{M.nnz}\n"
            + "".join(lines))


# ---------------------------------------------------------------------- round trips
def test_corpus_round_trip(corpus, tmp_path):
    shards = write_shards(corpus, tmp_path / "a", 4)
    assert_shards_of(shards, corpus, 4)
    assert_same_corpus(shards.to_corpus(), corpus)
    reopened = ShardSet.open(tmp_path / "a")
    assert_same_corpus(reopened.to_corpus(), corpus)
    m = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert m["format"] == "topiclink-shards" and m["version"] == FORMAT_VERSION
    assert [s["n_tokens"] for s in m["shards"]] == [
        int(np.diff(shards.offsets()[shards.doc_bounds()[i:i + 2]])[0]) for i in range(4)]
    with np.load(shards.path(0), allow_pickle=False) as npz:
        assert set(npz.files) == {"words", "offsets", "doc_range"}
    # string ids, titles, a name and empty documents survive too
    X = corpus.counts.tolil()
    X[[0, 7, 119]] = 0
    named = Corpus(X.tocsr(), vocabulary=corpus.vocabulary,
                   doc_ids=[f"doc{i}" for i in range(corpus.n_docs)],
                   titles=[f"title {i}" for i in range(corpus.n_docs)], name="named")
    shards = write_shards(named, tmp_path / "b", 3)
    assert_shards_of(shards, named, 3)
    assert_same_corpus(shards.to_corpus(), named)
    # more shards than documents: one per document, as balanced_chunks
    small = corpus.subset(np.arange(3))
    assert write_shards(small, tmp_path / "c", 8).n_shards == 3
    # no partial directory, no overwrite by accident
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]
    with pytest.raises(FileExistsError, match="already exists"):
        write_shards(corpus, tmp_path / "a", 2)
    assert write_shards(corpus, tmp_path / "a", 2, overwrite=True).n_shards == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c"]


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_uci_file_equals_reader(corpus, tmp_path, compressed, caplog):
    """Streamed in blocks of 7 lines (documents cut across blocks), with words out of
    order within a document, empty documents in the middle and at the end."""
    X = corpus.counts.tolil()
    X[[0, 5, 6, 50]] = 0
    text = uci_text(X.tocsr(), extra_docs=2)
    path = tmp_path / ("docword.toy.txt.gz" if compressed else "docword.toy.txt")
    if compressed:
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    vocab = tmp_path / "vocab.toy.txt"
    vocab.write_text("".join(f"word{i}\n" for i in range(corpus.n_words)))
    ref = read_uci_bow(path, vocab)
    with caplog.at_level(logging.INFO, logger="topiclink"):
        shards = write_shards(path, tmp_path / "s", 5, vocab=vocab, read_rows=7)
    assert "6 of 122 documents have no entries (kept)" in caplog.text
    assert_shards_of(shards, ref, 5)
    assert_same_corpus(shards.to_corpus(), ref)
    assert shards.name == "toy"
    default = write_shards(path, tmp_path / "t", 5)
    assert default.vocabulary() is None
    assert_shards_of(default, ref, 5)


def test_streaming_memory_is_bounded(tmp_path):
    """~2M tokens in 8 shards: the writer's peak allocation stays far below the token
    array (8 MB) -- about one shard (1 MB) plus the read buffer."""
    rng = np.random.default_rng(0)
    D, W, per_doc = 20_000, 5_000, 40
    docs = np.repeat(np.arange(1, D + 1), per_doc)
    words = np.concatenate([rng.choice(W, per_doc, replace=False) + 1 for _ in range(D)])
    counts = rng.integers(1, 5, size=docs.size)          # mean 2.5: ~2M tokens
    n_tokens = int(counts.sum())
    assert n_tokens > 1_900_000
    path = tmp_path / "docword.big.txt"
    with open(path, "w") as f:
        f.write(f"{D}\n{W}\n{docs.size}\n")
        np.savetxt(f, np.column_stack([docs, words, counts]), fmt="%d")
    del docs, words, counts
    warm = tmp_path / "docword.warm.txt"               # lazy imports and caches first
    warm.write_text("2\n3\n2\n1 1 1\n2 2 2\n")
    write_shards(warm, tmp_path / "w", 2)
    tracemalloc.start()
    try:
        shards = write_shards(path, tmp_path / "s", 8, read_rows=4096)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    token_bytes = 4 * n_tokens
    shard_bytes = 4 * max(s.n_tokens for s in shards.shards)
    print(f"peak {peak / 2**20:.2f} MiB for {token_bytes / 2**20:.2f} MiB of tokens, "
          f"{shard_bytes / 2**20:.2f} MiB in the largest shard")
    assert shards.n_tokens == n_tokens and shards.n_shards == 8
    assert peak < token_bytes / 2.5
    assert peak < shard_bytes + 250 * 4096 + (1 << 20)  # a shard + the read buffer
    words, _, _ = shards.load(3)
    assert words.size == shards.shards[3].n_tokens


# ---------------------------------------------------------------------- errors
BAD = [
    ("2\n3\n2\n1 1 1\n1 2\n", r"docword.bad.txt:5: expected 3 numbers"),
    ("2\n3\n2\n1 1 1\n1 x 2\n", r"docword.bad.txt:5: non-integer value"),
    ("2\n3\n2\n1 1 1\n3 2 2\n", r"docword.bad.txt:5: docID 3 outside \[1, 2\]"),
    ("2\n3\n2\n1 1 1\n2 4 2\n", r"docword.bad.txt:5: wordID 4 outside \[1, 3\]"),
    ("2\n3\n2\n1 1 1\n2 2 0\n", r"docword.bad.txt:5: count 0 must be a positive"),
    ("2\n3\n2\n1 1 1\n2 2 -3\n", r"docword.bad.txt:5: count -3 must be a positive"),
    ("2\n3\n3\n2 1 1\n1 2 2\n2 3 1\n", r"docword.bad.txt:5: docID 1 after docID 2 \(line 4\)"),
    ("2\n3\n3\n1 1 1\n1 2 2\n1 1 1\n", r"docword.bad.txt:6: repeats \(docID 1, wordID 1\) "
                                       r"of line 4"),
    ("2\n3\n3\n1 1 1\n1 2 2\n", r"docword.bad.txt:3: the header says NNZ = 3 but the file "
                                r"has 2 entries"),
    ("2\n3\n0\n", r"no non-empty documents"),
    ("2\nx\n0\n", r"docword.bad.txt:2: header line 2 must be the integer W"),
]


@pytest.mark.parametrize("text,message", BAD, ids=range(len(BAD)))
@pytest.mark.parametrize("rows", [1, 1000], ids=["rows1", "rows1000"])
def test_bad_uci_files(tmp_path, text, message, rows):
    """One-line errors naming file and line, also when the problem spans read blocks;
    nothing is left behind."""
    path = tmp_path / "docword.bad.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=message) as info:
        write_shards(path, tmp_path / "out", 2, read_rows=rows)
    assert "\n" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docword.bad.txt"]


def test_bad_vocabulary_and_arguments(corpus, tmp_path):
    path = tmp_path / "docword.v.txt"
    path.write_text(uci_text(corpus.counts))
    (tmp_path / "vocab.v.txt").write_text("a\nb\n")
    with pytest.raises(DataError, match=r"vocab.v.txt: 2 words, but docword.v.txt has W = 200"):
        write_shards(path, tmp_path / "out", 2, vocab=tmp_path / "vocab.v.txt")
    with pytest.raises(ValueError, match="n_shards must be an integer >= 1, got 0"):
        write_shards(corpus, tmp_path / "out", 0)
    with pytest.raises(FileNotFoundError, match="no such file"):
        write_shards(tmp_path / "missing.txt", tmp_path / "out", 2)


def test_open_errors(corpus, tmp_path):
    def fresh(name):
        write_shards(corpus, tmp_path / name, 3)
        return tmp_path / name

    with pytest.raises(DataError, match="no shard manifest"):
        ShardSet.open(tmp_path)
    d = fresh("version")
    m = json.loads((d / "manifest.json").read_text())
    m["version"] = FORMAT_VERSION + 1
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(DataError, match=f"format version {FORMAT_VERSION + 1}, this "
                                        f"topiclink reads version {FORMAT_VERSION}"):
        ShardSet.open(d)
    d = fresh("corrupt")
    (d / "manifest.json").write_text("{not json")
    with pytest.raises(DataError, match="corrupt manifest"):
        ShardSet.open(d)
    d = fresh("missing")
    (d / "shard-00001.npz").unlink()
    with pytest.raises(DataError, match=r"shard-00001.npz: shard file missing"):
        ShardSet.open(d)
    d = fresh("changed")
    shards = ShardSet.open(d)
    raw = bytearray((d / "shard-00002.npz").read_bytes())
    raw[-30] ^= 0xFF
    (d / "shard-00002.npz").write_bytes(bytes(raw))
    with pytest.raises(DataError, match=r"shard-00002.npz: checksum mismatch"):
        shards.load(2)
    (d / "shard-00002.npz").write_bytes(b"garbage")
    with pytest.raises(DataError, match=r"shard-00002.npz: not a readable shard"):
        shards.load(2, verify=False)


# ---------------------------------------------------------------------- Dask training
distributed = pytest.importorskip("distributed")

LDA_KW = {"n_topics": 5, "max_iter": 12, "scheme": Shards("adlda", 3), "random_state": 4}


@pytest.fixture(scope="module", params=[1, 2], ids=lambda w: f"{w}workers")
def client(request):
    with distributed.LocalCluster(n_workers=request.param, threads_per_worker=1,
                                  processes=False, dashboard_address=":0") as c, \
            distributed.Client(c, set_as_default=False) as cl:
        yield cl


@pytest.fixture(scope="module")
def shard_dir(corpus, tmp_path_factory):
    d = tmp_path_factory.mktemp("shards") / "set"
    write_shards(corpus, d, LDA_KW["scheme"].n_shards)
    return d


def assert_same_chain(a, b):
    for name in ("z", "ndk", "nwk", "nk", "kernel_rng"):
        np.testing.assert_array_equal(getattr(a.state_, name), getattr(b.state_, name),
                                      err_msg=name)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.doc_topic_, b.doc_topic_)
    np.testing.assert_array_equal(a.trace_["log_likelihood"], b.trace_["log_likelihood"])
    np.testing.assert_array_equal(a.vocabulary_, b.vocabulary_)


def test_dask_fit_from_shards_equals_in_memory(corpus, shard_dir, client, monkeypatch):
    from topiclink.families.lda.estimator import LDA

    ref = LDA(executor=client, **LDA_KW).fit(corpus)
    shards = ShardSet.open(shard_dir)

    def refuse(*args, **kwargs):
        raise AssertionError("the driver loaded a shard's words")

    monkeypatch.setattr(ShardSet, "load", refuse)       # the driver never reads tokens
    monkeypatch.setattr(ShardSet, "to_corpus", refuse)
    model = LDA(executor=client, **LDA_KW).fit(shards)
    assert_same_chain(ref, model)
    assert model.n_tokens_ == corpus.n_tokens
    # resume: checks the state against the shards on the workers, then the same chain
    ref.set_params(max_iter=4).fit(corpus, resume=True)
    model.set_params(max_iter=4).fit(shards, resume=True)
    assert_same_chain(ref, model)
    with pytest.raises(ValueError, match="resume needs the data of the first fit"):
        LDA(executor=client, **LDA_KW).fit(corpus).fit(shards, resume=True)


def test_worker_processes_read_the_files(corpus, shard_dir):
    """Workers in other processes read the shard files by path: the same chain."""
    from topiclink.families.lda.estimator import LDA

    kw = {**LDA_KW, "max_iter": 6}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as c, \
            distributed.Client(c, set_as_default=False) as cl:
        ref = LDA(executor=cl, **kw).fit(corpus)
        model = LDA(executor=cl, **kw).fit(ShardSet.open(shard_dir))
    assert_same_chain(ref, model)
    np.testing.assert_array_equal(model.transform(corpus), ref.transform(corpus))


def test_prediction_reads_a_shard_set_shard_by_shard(corpus, tmp_path):
    """transform / perplexity / score of a ShardSet stream its shards and equal those of
    the corpus in memory (transform exactly; the held-out log-likelihood up to the order
    of a float sum); a ShardSet's shards come back as corpora, with their ids."""
    from topiclink.families.lda.estimator import LDA

    model = LDA(n_topics=4, max_iter=15, random_state=1).fit(corpus)
    shards = write_shards(corpus, tmp_path / "s", 3)
    parts = list(shards.corpora())
    assert [c.n_docs for c in parts] == np.diff(shards.doc_bounds()).tolist()
    np.testing.assert_array_equal(np.concatenate([c.doc_ids for c in parts]),
                                  corpus.doc_ids)
    np.testing.assert_array_equal(model.transform(shards), model.transform(corpus))
    a, n_a = model.log_likelihood_completion(shards, random_state=5)
    b, n_b = model.log_likelihood_completion(corpus, random_state=5)
    assert n_a == n_b and a == pytest.approx(b, rel=1e-12)
    assert model.perplexity(shards) == pytest.approx(model.perplexity(corpus), rel=1e-12)
    # a different split is a different number (the comparison above can fail)
    c, _ = model.log_likelihood_completion(corpus, random_state=6)
    assert abs(c - b) > 1e-6 * abs(b)


def test_sweeper_reading_shards_equals_scattered(corpus, shard_dir, client):
    """The AD-LDA sweeps on Dask reading the shard files are those of the tokens sent
    from here (the tokens never travel); a ShardSet of other shards is refused."""
    from topiclink.execution import DaskExecutor
    from topiclink.inference.engine import run
    from topiclink.random import as_generator
    from topiclink.topics.lda import CollapsedGibbsLDA, ShardTokenData, TokenData

    tok = corpus.tokens()
    K, S = 4, LDA_KW["scheme"].n_shards

    def sweeps(data, n_shards=S):
        executor = DaskExecutor(client)
        algorithm = CollapsedGibbsLDA(K, np.full(K, 0.1), 0.01, scheme="adlda",
                                      n_shards=n_shards, executor=executor)
        state = algorithm.init(data, as_generator(0))
        run(algorithm, state, data, 4)
        return state, executor

    (ref, a), (got, b) = sweeps(TokenData.from_corpus(corpus)), sweeps(
        ShardTokenData.from_shards(ShardSet.open(shard_dir)))
    for name in ("z", "ndk", "nwk", "nk", "kernel_rng"):
        np.testing.assert_array_equal(getattr(ref, name), getattr(got, name), err_msg=name)
    assert a.bytes_sent - b.bytes_sent >= tok.words.nbytes      # the tokens were not sent
    with pytest.raises(ValueError, match="the ShardSet has 3 shards but the scheme 2"):
        sweeps(ShardTokenData.from_shards(ShardSet.open(shard_dir)), 2)


def test_dask_fit_from_shards_errors(corpus, shard_dir, client, tmp_path):
    from topiclink.families.lda.estimator import LDA

    shards = ShardSet.open(shard_dir)
    kw = {k: v for k, v in LDA_KW.items() if k != "scheme"}
    with pytest.raises(ValueError, match=r"the ShardSet has 3 shards but the scheme 2: use "
                                         r"scheme=Shards\('adlda', 3\)"):
        LDA(scheme="adlda", executor=client, **kw).fit(shards)
    with pytest.raises(ValueError, match="fitting a ShardSet needs a Dask executor and "
                                         "scheme 'adlda'"):
        LDA(scheme=Shards("adlda", 3), **kw).fit(shards)
    d = tmp_path / "gone"
    write_shards(corpus, d, 3)
    broken = ShardSet.open(d)
    (d / "shard-00001.npz").unlink()                    # disappears after open
    with pytest.raises(DataError, match="shard-00001.npz: shard file missing"):
        LDA(executor=client, **LDA_KW).fit(broken)
