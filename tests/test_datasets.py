"""Data set loaders: counts of the shared data sets (skipped without a data home),
the data-home logic and the bundled Cora."""

from __future__ import annotations

import io
import logging
import tarfile
from pathlib import Path

import numpy as np
import pytest

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.datasets import (
    DATA_HOME_ENV,
    LOADERS,
    Dataset,
    data_home,
    dataset_dir,
    list_datasets,
    load_20newsgroups,
    load_bundled_cora,
    load_cora_linqs,
    load_cora_rlda,
    load_dataset,
    load_fb15k237,
    load_nations,
    load_poliblog,
    load_sampson,
    load_sotu,
    load_umls,
    load_webkb,
)
from topiclink.datasets.home import default_candidates
from topiclink.datasets.loaders import REQUIRED_FILES


@pytest.fixture(scope="session")
def home() -> Path:
    """The shared data home (../shared/datasets or $TOPICLINK_DATA); skip when absent."""
    path = data_home()
    if not path.is_dir():
        pytest.skip(f"no data home at {path}; set {DATA_HOME_ENV}")
    return path


@pytest.fixture
def need(home):
    """need(name) -> the data set folder, or skip when its files are absent."""

    def _need(name: str) -> Path:
        folder = home / name
        missing = [f for f in REQUIRED_FILES[name] if not (folder / f).is_file()]
        if missing:
            pytest.skip(f"{name}: missing {missing} in {folder}")
        return folder

    return _need


def _same_corpus(a: Corpus, b: Corpus) -> None:
    assert a.counts.shape == b.counts.shape
    assert (a.counts != b.counts).nnz == 0
    np.testing.assert_array_equal(a.counts.indptr, b.counts.indptr)
    np.testing.assert_array_equal(a.counts.indices, b.counts.indices)
    np.testing.assert_array_equal(a.counts.data, b.counts.data)
    np.testing.assert_array_equal(a.vocabulary, b.vocabulary)
    np.testing.assert_array_equal(a.doc_ids, b.doc_ids)
    np.testing.assert_array_equal(a.titles, b.titles)


def _same_links(a: Links, b: Links) -> None:
    assert (a.n_docs, a.directed) == (b.n_docs, b.directed)
    np.testing.assert_array_equal(a.pairs, b.pairs)


# ---------------------------------------------------------------------- real data sets


def test_cora_linqs(need, caplog):
    need("cora-linqs")
    ds = load_cora_linqs()
    c = ds.corpus
    assert (c.n_docs, c.n_words, c.counts.nnz) == (2708, 1433, 49216)
    assert c.counts.data.max() == 1
    assert ds.links.directed and ds.links.n_links == 5429
    assert len(ds.label_names) == 7 and ds.labels.shape == (2708,)
    counts = dict(zip(ds.label_names, np.bincount(ds.labels), strict=True))
    assert counts["Neural_Networks"] == 818 and counts["Rule_Learning"] == 180
    assert c.doc_ids[0] == "31336"
    caplog.set_level(logging.INFO, logger="topiclink")
    und = load_dataset("cora-linqs", directed=False)
    assert und.links.n_links == 5278
    assert "dropped 151 duplicate pairs" in caplog.text


def test_webkb(need, caplog):
    need("webkb-linqs")
    caplog.set_level(logging.INFO, logger="topiclink")
    ds = load_webkb()
    c = ds.corpus
    assert (c.n_docs, c.n_words) == (877, 1703)
    assert ds.links.n_links == 1608 - 92
    for uni, n in (("cornell", 3), ("texas", 18), ("washington", 51), ("wisconsin", 20)):
        assert f"{uni}.cites: dropped {n} self-links" in caplog.text
    uni = c.metadata["university"].to_numpy()
    assert (uni[ds.links.source] == uni[ds.links.target]).all()
    assert dict(zip(*np.unique(uni, return_counts=True), strict=True)) == {
        "cornell": 195, "texas": 187, "washington": 230, "wisconsin": 265}
    assert ds.label_names.tolist() == ["course", "faculty", "project", "staff", "student"]
    assert np.bincount(ds.labels).tolist() == [218, 125, 80, 39, 415]
    assert load_webkb(directed=False).links.n_links == 1388


def test_cora_rlda(need, caplog):
    need("cora-rlda")
    ds = load_cora_rlda(directed=True)
    c = ds.corpus
    assert (c.n_docs, c.n_words, c.n_tokens, c.counts.nnz) == (2410, 2961, 136394, 103699)
    assert c.vocabulary[:3].tolist() == ["computer", "algorithms", "discovering"]
    assert c.titles.shape == (2410,)
    assert ds.links.directed and ds.links.n_links == 4356
    caplog.set_level(logging.INFO, logger="topiclink")
    und = load_cora_rlda()
    assert not und.links.directed and und.links.n_links == 4231
    assert "dropped 125 duplicate pairs" in caplog.text


def test_poliblog(need):
    need("poliblog-rlda")
    ds = load_poliblog()
    c = ds.corpus
    assert (c.n_docs, c.n_words, c.n_tokens) == (773, 1290, 105225)
    assert ds.label_names.tolist() == ["liberal", "conservative"]
    assert np.bincount(ds.labels).tolist() == [464, 309]
    np.testing.assert_array_equal(c.metadata["rating"].to_numpy() > 0, ds.labels == 1)


def test_20newsgroups_counts(need):
    need("20newsgroups")
    ds = load_20newsgroups()
    c, t = ds.corpus, ds.test.corpus
    assert (c.n_docs, c.n_words, c.n_tokens, c.counts.nnz) == (11269, 61188, 2765300, 1467345)
    assert (t.n_docs, t.n_words, t.n_tokens) == (7505, 61188, 1796919)
    np.testing.assert_array_equal(c.vocabulary, t.vocabulary)
    assert c.counts.indices.max() == 53974 and t.counts.indices.max() == 61187
    assert ds.labels.min() == 0 and ds.labels.max() == 19 and ds.test.labels.shape == (7505,)
    assert ds.label_names[0] == "alt.atheism" and ds.label_names[19] == "talk.religion.misc"
    assert ds.summary()["test_documents"] == 7505
    with pytest.raises(ValueError, match="form must be"):
        load_20newsgroups(form="words")


def test_sotu(need):
    need("sotu")
    ds = load_sotu()
    c = ds.corpus
    assert c.n_docs == 240
    assert c.metadata["year"].min() == 1790 and c.metadata["year"].max() == 2020
    assert set(c.metadata.columns) >= {"president", "year", "party", "sotu_type"}
    assert c.titles[0] == "George Washington (1790, speech)"
    assert c.n_words > 5000 and "union" in c.vocabulary.tolist()
    assert c.empty_documents().size == 0


@pytest.mark.parametrize(("name", "loader", "counts"), [
    ("nations", load_nations, (14, 55, 1592, 199, 201)),
    ("umls", load_umls, (135, 46, 5216, 652, 661)),
    ("fb15k-237", load_fb15k237, (14541, 237, 272115, 17535, 20466)),
])
def test_triples(need, name, loader, counts):
    need(name)
    ds = loader()
    tr = ds.tensor["train"]
    assert (tr.n_entities, tr.n_relations) == counts[:2]
    assert [ds.tensor[s].n_entries for s in ("train", "valid", "test")] == list(counts[2:])
    assert tr.entity_names.tolist() == sorted(tr.entity_names.tolist())
    assert all(t.entity_names.tolist() == tr.entity_names.tolist() for t in ds.tensor.values())


def test_fb15k237_from_its_archive(need, caplog):
    """The ConvE archive as distributed (CRLF lines): every entity indexed, the entities
    of held-out triples never in train counted in the log (README: 9 valid, 28 test)."""
    need("fb15k-237")
    caplog.set_level(logging.INFO, logger="topiclink")
    ds = load_dataset("fb15k-237")
    tr = ds.tensor["train"]
    assert not any(n.endswith("\r") for n in tr.entity_names.tolist())
    assert all(n.startswith("/m/") for n in tr.entity_names.tolist())
    assert int((tr.heads == tr.tails).sum()) == 1625
    assert np.unique(np.concatenate([tr.heads, tr.tails])).size == 14505
    assert np.unique(tr.relations).size == 237
    assert "valid.txt: 9 of 17535 triples mention" in caplog.text
    assert "test.txt: 28 of 20466 triples mention" in caplog.text
    assert ds.summary()["triples"] == 310116


def test_sampson(need):
    need("sampson-rlda")
    ds = load_sampson()
    t = ds.tensor["train"]
    assert t.shape == (18, 18, 10)
    assert t.relation_names[0] == "SAMPLK1" and t.relation_names[-1] == "SAMNPR"
    assert t.entity_names[0] == "ROMUL_10" and t.entity_names[-1] == "SIMP_18"
    assert np.bincount(t.relations).tolist() == [55, 57, 56, 47, 54, 58, 53, 50, 39, 41]
    assert set(np.unique(t.values).tolist()) <= {1.0, 2.0, 3.0}


@pytest.mark.parametrize("name", ["cora.vocab", "cora.titles", "cora.cites",
                                  "cora.documents"])
def test_fast_rda_reader_matches_rdata_on_shared_files(need, name):
    import warnings

    import rdata

    from topiclink.data.io.rda import _fast_read_rda

    path = need("cora-rlda") / f"{name}.rda"
    fast = _fast_read_rda(path)
    assert fast is not None, "the fast reader should handle the lda package files"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = rdata.read_rda(path)
    a, b = fast[name], ref[name]
    if isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert x.dtype == y.dtype and x.shape == y.shape
            np.testing.assert_array_equal(x, y)
    else:
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_list_datasets(home):
    df = list_datasets()
    assert df["name"].tolist() == list(LOADERS)
    assert {"name", "found", "path", "documents", "words", "tokens", "links", "labels",
            "entities", "relations"} <= set(df.columns)
    row = df.set_index("name").loc["cora-linqs"]
    if row["found"]:
        assert (row["documents"], row["words"], row["links"]) == (2708, 1433, 5429)
    assert bool(df.set_index("name").loc["cora", "found"])


# ---------------------------------------------------------------------- bundled Cora


def test_bundled_cora_without_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_HOME_ENV, str(tmp_path))
    ds = load_dataset("cora")
    assert ds.name == "cora"
    c = ds.corpus
    assert (c.n_docs, c.n_words, c.n_tokens) == (2410, 2961, 136394)
    assert c.titles.shape == (2410,) and not ds.links.directed and ds.links.n_links == 4231
    assert load_bundled_cora(directed=True).links.n_links == 4356
    with pytest.raises(ValueError, match="no data_dir"):
        load_dataset("cora", data_dir=tmp_path)


@pytest.mark.parametrize("directed", [False, True])
def test_bundled_cora_equals_cora_rlda(need, directed):
    need("cora-rlda")
    a, b = load_bundled_cora(directed=directed), load_cora_rlda(directed=directed)
    _same_corpus(a.corpus, b.corpus)
    _same_links(a.links, b.links)


def test_bundled_file_is_pickle_free():
    from topiclink.datasets.bundled_cora import bundled_cora_path

    with bundled_cora_path().open("rb") as f, np.load(f, allow_pickle=False) as z:
        assert all(z[k].dtype != object for k in z.files)


# ---------------------------------------------------------------------- data home


def test_missing_data_home_error(tmp_path, monkeypatch):
    monkeypatch.setenv(DATA_HOME_ENV, str(tmp_path))
    assert data_home() == tmp_path
    with pytest.raises(FileNotFoundError, match=DATA_HOME_ENV) as err:
        load_dataset("cora-linqs", download_if_missing=False)
    assert "cora.content" in str(err.value) and "\n" not in str(err.value)
    df = list_datasets()
    assert df.set_index("name")["found"].to_dict() == {n: n == "cora" for n in LOADERS}


def test_data_home_precedence(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_HOME_ENV, raising=False)
    assert data_home(tmp_path / "x") == tmp_path / "x"
    assert data_home() in default_candidates()
    monkeypatch.setenv(DATA_HOME_ENV, str(tmp_path / "env"))
    assert data_home() == tmp_path / "env"
    assert data_home(tmp_path / "x") == tmp_path / "x"


def test_dataset_dir_accepts_folder_or_home(tmp_path):
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "a.txt").write_text("x")
    assert dataset_dir("toy", tmp_path / "toy", ["a.txt"]) == tmp_path / "toy"
    assert dataset_dir("toy", tmp_path, ["a.txt"]) == tmp_path / "toy"
    with pytest.raises(FileNotFoundError, match=r"missing: b\.txt"):
        dataset_dir("toy", tmp_path / "toy", ["a.txt", "b.txt"])


def test_unknown_dataset():
    with pytest.raises(ValueError, match="unknown data set 'kora'.*cora-linqs.*sampson-rlda"):
        load_dataset("kora")


def test_loader_on_user_folder(tmp_path):
    """A user folder in the same format: Cora LINQS and the raw 20 Newsgroups."""
    folder = tmp_path / "mycora"
    folder.mkdir()
    (folder / "cora.content").write_text("1\t1\t0\tA\n2\t0\t1\tB\n3\t1\t1\tA\n")
    (folder / "cora.cites").write_text("1\t2\n1\t3\n2\t2\n")
    ds = load_dataset("cora-linqs", data_dir=folder)
    assert ds.path == folder and ds.links.pairs.tolist() == [[1, 0], [2, 0]]
    assert ds.label_names.tolist() == ["A", "B"] and ds.labels.tolist() == [0, 1, 0]

    news = tmp_path / "news"
    news.mkdir()
    msgs = {"20news-bydate-train/a.grp/1": "From: x\n\nalpha beta gamma",
            "20news-bydate-train/b.grp/2": "From: y\n\nbeta delta",
            "20news-bydate-test/a.grp/3": "From: z\n\nalpha omega"}
    with tarfile.open(news / "20news-bydate.tar.gz", "w:gz") as tar:
        for name, text in msgs.items():
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text.encode()))
    ds = load_20newsgroups(news, form="raw", strip_headers=True)
    assert ds.corpus.vocabulary.tolist() == ["alpha", "beta", "delta", "gamma"]
    np.testing.assert_array_equal(ds.test.corpus.vocabulary, ds.corpus.vocabulary)
    assert ds.test.corpus.counts.toarray().tolist() == [[1, 0, 0, 0]]
    assert ds.labels.tolist() == [0, 1] and ds.test.labels.tolist() == [0]
    assert ds.label_names.tolist() == ["a.grp", "b.grp"]


def test_dataset_summary_and_repr():
    c = Corpus(np.array([[1, 2], [0, 3]]))
    links = Links.from_pairs([[0, 1]], 2)
    ds = Dataset("toy", corpus=c, links=links, labels=np.array([0, 1]),
                 label_names=np.array(["a", "b"]))
    s = ds.summary()
    assert (s["documents"], s["words"], s["tokens"], s["links"], s["labels"]) == (2, 2, 6, 1, 2)
    assert s["entities"] is None
    assert repr(ds) == ("Dataset('toy': 2 documents x 2 words (6 tokens); 1 directed links; "
                        "2 classes)")


def test_generic_linqs_loader_reads_any_folder(tmp_path):
    from topiclink.datasets import load_dataset

    rows = ["p1\t1\t0\t1\tAI", "p2\t0\t1\t1\tML", "p3\t1\t1\t0\tAI"]
    (tmp_path / "citeseer.content").write_text("\n".join(rows) + "\n")
    (tmp_path / "citeseer.cites").write_text("p1\tp2\np3\tp1\n")
    ds = load_dataset("linqs", data_dir=tmp_path)
    assert ds.corpus.n_docs == 3 and ds.links.n_links == 2
    assert sorted(map(tuple, ds.links.pairs.tolist())) == [(0, 2), (1, 0)]
    import pytest

    with pytest.raises(FileNotFoundError, match="data_dir"):
        load_dataset("linqs")


# ---------------------------------------------------------------------- registry


def test_registry_derives_the_public_tables():
    from topiclink.datasets import dataset_specs
    from topiclink.datasets.loaders import SOURCES, USER_FORMAT_LOADERS

    specs = dataset_specs()
    assert list(LOADERS) == [n for n, s in specs.items() if s.location != "user"]
    assert list(LOADERS)[:2] == ["cora", "cora-linqs"]
    assert set(USER_FORMAT_LOADERS) == {"linqs", "rlda", "uci-bow", "triples"}
    assert set(REQUIRED_FILES) == {n for n, s in specs.items() if s.location == "home"}
    assert REQUIRED_FILES["cora-linqs"] == ("cora.content", "cora.cites")
    assert LOADERS["cora-linqs"] is load_cora_linqs
    for name, spec in specs.items():
        assert spec.source and spec.description and spec.kind, name
        assert SOURCES[name] == spec.source
    with pytest.raises(KeyError):
        LOADERS["linqs"]  # a user format: loadable by name, not listed
    with pytest.raises(TypeError):
        LOADERS["x"] = load_cora_linqs  # read-only views


def test_register_a_toy_dataset(tmp_path):
    from topiclink.datasets import DatasetSpec, register_dataset, unregister_dataset
    from topiclink.datasets.loaders import SOURCES

    def load_toy(data_dir=None, scale: int = 1) -> Dataset:
        folder = dataset_dir("toy", data_dir, ("toy.txt",))
        counts = np.loadtxt(folder / "toy.txt", dtype=np.int64, ndmin=2) * scale
        return Dataset("toy", corpus=Corpus(counts), source=SOURCES["toy"], path=folder)

    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "toy.txt").write_text("1 2\n0 3\n")
    spec = register_dataset(DatasetSpec("toy", load_toy, required_files=["toy.txt"],
                                        source="a toy", description="2 x 2 counts"))
    try:
        assert spec.required_files == ("toy.txt",)  # normalised to a tuple
        assert "toy" in LOADERS and REQUIRED_FILES["toy"] == ("toy.txt",)
        df = list_datasets(data_dir=tmp_path, counts=False).set_index("name")
        assert bool(df.loc["toy", "found"]) and df.loc["toy", "kind"] == "documents"
        assert df.loc["toy", "path"] == str(tmp_path / "toy")
        counted = list_datasets(data_dir=tmp_path).set_index("name")
        assert (counted.loc["toy", "documents"], counted.loc["toy", "tokens"]) == (2, 6)
        ds = load_dataset("toy", data_dir=tmp_path / "toy", scale=2)
        assert ds.corpus.n_tokens == 12 and ds.source == "a toy"
        with pytest.raises(ValueError, match="already registered"):
            register_dataset(spec)
        register_dataset(DatasetSpec("toy", load_toy, required_files=("toy.txt",),
                                     source="another", description="d"), replace=True)
        assert SOURCES["toy"] == "another"
    finally:
        unregister_dataset("toy")
    assert "toy" not in LOADERS and "toy" not in list_datasets(counts=False)["name"].tolist()
    with pytest.raises(ValueError, match="unknown data set 'toy'"):
        load_dataset("toy")


def test_dataset_spec_validation():
    from topiclink.datasets import DatasetSpec, register_dataset

    with pytest.raises(ValueError, match="non-empty"):
        DatasetSpec("", load_cora_linqs)
    with pytest.raises(TypeError, match="callable"):
        DatasetSpec("x", "not a loader")
    with pytest.raises(ValueError, match="location"):
        DatasetSpec("x", load_cora_linqs, location="web")
    with pytest.raises(TypeError, match="not a string"):
        DatasetSpec("x", load_cora_linqs, required_files="x.txt")
    with pytest.raises(ValueError, match="reserved"):
        register_dataset(DatasetSpec("auto", load_cora_linqs))
    spec = DatasetSpec("x", load_cora_linqs)
    with pytest.raises(AttributeError):
        spec.name = "y"  # frozen
