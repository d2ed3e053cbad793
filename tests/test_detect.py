"""Format detection of a data folder and the generic folder loaders (load_folder)."""

from __future__ import annotations

import gzip
import logging
from pathlib import Path

import numpy as np
import pytest

from tests.test_io import _RWriter
from topiclink.data.checks import DataError
from topiclink.datasets import FORMATS, detect_format, load_dataset, load_folder

# ---------------------------------------------------------------------- tiny folders


def _linqs(folder: Path) -> Path:
    folder.mkdir()
    (folder / "toy.content").write_text("a\t1\t0\t1\tX\nb\t0\t1\t1\tY\nc\t1\t1\t0\tX\n")
    (folder / "toy.cites").write_text("a\tb\nc\ta\n")
    return folder


def _rda_file(path: Path, name: str, build) -> None:
    w = _RWriter()
    path.write_bytes(w.rda({name: lambda: build(w)}))


def _rlda(folder: Path) -> Path:
    """toy.{documents,vocab,titles,cites,labels}.rda: 3 documents over 3 words."""
    folder.mkdir()
    _rda_file(folder / "toy.documents.rda", "toy.documents", lambda w: w.list([
        w.ints([[0, 2], [3, 1]], dim=[2, 2]), w.ints([[1], [5]], dim=[2, 1]),
        w.ints([[0, 1, 2], [1, 1, 1]], dim=[2, 3])]))
    _rda_file(folder / "toy.vocab.rda", "toy.vocab", lambda w: w.strs(["alpha", "beta", "gé"]))
    _rda_file(folder / "toy.titles.rda", "toy.titles",
              lambda w: w.strs(["first", "second", "third"]))
    # document 0 links to 1 and 2, document 1 back to 0 (a reciprocal pair)
    _rda_file(folder / "toy.cites.rda", "toy.cites",
              lambda w: w.list([w.ints([1, 2]), w.ints([0]), w.ints([])]))
    _rda_file(folder / "toy.labels.rda", "toy.labels", lambda w: w.ints([2, 10, 2]))
    return folder


def _rlda_train_test(folder: Path) -> Path:
    """20 Newsgroups layout: news.{train,test}.documents.rda sharing news.vocab.rda."""
    folder.mkdir()
    _rda_file(folder / "news.train.documents.rda", "news.train.documents", lambda w: w.list([
        w.ints([[0], [2]], dim=[2, 1]), w.ints([[1], [1]], dim=[2, 1])]))
    _rda_file(folder / "news.test.documents.rda", "news.test.documents", lambda w: w.list([
        w.ints([[2], [4]], dim=[2, 1])]))
    _rda_file(folder / "news.vocab.rda", "news.vocab", lambda w: w.strs(["x", "y", "z"]))
    _rda_file(folder / "news.train.labels.rda", "news.train.labels", lambda w: w.ints([1, 2]))
    _rda_file(folder / "news.test.labels.rda", "news.test.labels", lambda w: w.ints([2]))
    _rda_file(folder / "news.train.ratings.rda", "news.train.ratings",
              lambda w: w.reals([-1.0, 1.0]))
    return folder


DOCWORD = "3\n4\n5\n1 1 2\n1 3 1\n2 2 1\n3 4 3\n3 1 1\n"


def _uci(folder: Path, gz: bool = False) -> Path:
    folder.mkdir()
    if gz:
        (folder / "docword.toy.txt.gz").write_bytes(gzip.compress(DOCWORD.encode()))
    else:
        (folder / "docword.toy.txt").write_text(DOCWORD)
    (folder / "vocab.toy.txt").write_text("apple\nbanana\ncherry\ndate\n")
    return folder


def _triples(folder: Path, splits=("train", "valid", "test")) -> Path:
    folder.mkdir()
    rows = {"train": "a\tlikes\tb\nb\tlikes\tc\nc\thates\ta\n", "valid": "a\thates\tc\n",
            "test": "c\tlikes\tb\n"}
    for s in splits:
        (folder / f"{s}.txt").write_text(rows[s])
    return folder


# ---------------------------------------------------------------------- detection + loading


def test_detect_and_load_linqs(tmp_path):
    folder = _linqs(tmp_path / "mylinqs")
    assert detect_format(folder) == "linqs"
    ds = load_folder(folder)
    assert ds.name == "mylinqs" and ds.path == folder
    assert ds.corpus.doc_ids.tolist() == ["a", "b", "c"]
    assert ds.links.pairs.tolist() == [[1, 0], [0, 2]]
    assert ds.label_names.tolist() == ["X", "Y"] and ds.labels.tolist() == [0, 1, 0]
    assert load_folder(folder, directed=False).links.directed is False


def test_detect_and_load_rlda(tmp_path, caplog):
    folder = _rlda(tmp_path / "myrlda")
    assert detect_format(folder) == "rlda"
    caplog.set_level(logging.INFO, logger="topiclink")
    ds = load_folder(folder)
    c = ds.corpus
    assert ds.name == "myrlda" and c.vocabulary.tolist() == ["alpha", "beta", "gé"]
    np.testing.assert_array_equal(c.counts.toarray(), [[3, 0, 1], [0, 5, 0], [1, 1, 1]])
    assert c.titles.tolist() == ["first", "second", "third"]
    assert not ds.links.directed and ds.links.pairs.tolist() == [[0, 1], [0, 2]]
    assert "toy.cites.rda: dropped 1 duplicate pairs" in caplog.text
    assert ds.label_names.tolist() == ["2", "10"] and ds.labels.tolist() == [0, 1, 0]
    assert load_folder(folder, directed=True).links.pairs.tolist() == [[0, 1], [0, 2], [1, 0]]


def test_rlda_train_test_layout(tmp_path):
    folder = _rlda_train_test(tmp_path / "news")
    assert detect_format(folder) == "rlda"
    ds = load_folder(folder)
    assert ds.corpus.n_docs == 2 and ds.corpus.vocabulary.tolist() == ["x", "y", "z"]
    assert ds.labels.tolist() == [0, 1] and ds.label_names.tolist() == ["1", "2"]
    assert ds.corpus.metadata["rating"].tolist() == [-1.0, 1.0]
    assert ds.links is None
    assert ds.test.corpus.counts.toarray().tolist() == [[0, 0, 4]]
    assert ds.test.labels.tolist() == [0] and ds.test.label_names.tolist() == ["2"]
    only_test = load_folder(folder, documents="news.test")
    assert only_test.corpus.n_docs == 1 and only_test.test is None
    with pytest.raises(FileNotFoundError, match="no news.valid.documents.rda"):
        load_folder(folder, documents="news.valid")


def test_rlda_labels_of_the_wrong_length(tmp_path):
    folder = _rlda(tmp_path / "bad")
    _rda_file(folder / "toy.labels.rda", "toy.labels", lambda w: w.ints([1, 2]))
    with pytest.raises(DataError, match=r"toy\.labels\.rda: 2 values for 3 documents"):
        load_folder(folder)


@pytest.mark.parametrize("gz", [False, True])
def test_detect_and_load_uci(tmp_path, gz):
    folder = _uci(tmp_path / "myuci", gz=gz)
    assert detect_format(folder) == "uci-bow"
    ds = load_folder(folder)
    assert ds.name == "myuci" and ds.corpus.name == "toy"
    assert ds.corpus.vocabulary.tolist() == ["apple", "banana", "cherry", "date"]
    np.testing.assert_array_equal(ds.corpus.counts.toarray(),
                                  [[2, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 3]])


def test_uci_with_several_docword_files_needs_a_name(tmp_path):
    folder = _uci(tmp_path / "two")
    (folder / "docword.other.txt").write_text("1\n4\n1\n1 2 1\n")
    assert detect_format(folder) == "uci-bow"
    with pytest.raises(FileNotFoundError, match="pass name="):
        load_folder(folder)
    ds = load_folder(folder, name="other")  # vocab.other.txt absent: the only vocab file
    assert ds.corpus.n_docs == 1 and ds.corpus.vocabulary[1] == "banana"


def test_detect_and_load_triples(tmp_path):
    folder = _triples(tmp_path / "kg")
    assert detect_format(folder) == "triples"
    ds = load_folder(folder)
    assert list(ds.tensor) == ["train", "valid", "test"]
    assert ds.tensor["train"].n_entries == 3 and ds.tensor["test"].n_entries == 1
    assert ds.tensor["train"].entity_names.tolist() == ["a", "b", "c"]
    only_train = load_folder(_triples(tmp_path / "kg1", splits=("train",)))
    assert list(only_train.tensor) == ["train"]


def test_space_separated_train_txt_is_not_triples(tmp_path):
    folder = tmp_path / "spaces"
    folder.mkdir()
    (folder / "train.txt").write_text("a likes b\n")
    with pytest.raises(FileNotFoundError, match="no known data format"):
        detect_format(folder)


def test_load_dataset_without_a_name_detects(tmp_path):
    folders = {"linqs": _linqs(tmp_path / "l"), "rlda": _rlda(tmp_path / "r"),
               "uci-bow": _uci(tmp_path / "u"), "triples": _triples(tmp_path / "t")}
    assert set(folders) == set(FORMATS)
    for fmt, folder in folders.items():
        for name in (None, "auto", fmt):
            ds = load_dataset(name, data_dir=folder)
            assert ds.path == folder, (fmt, name)
        assert load_dataset(data_dir=folder).summary() == load_folder(folder).summary()
    with pytest.raises(FileNotFoundError, match="data_dir"):
        load_dataset()
    with pytest.raises(FileNotFoundError, match="data_dir"):
        load_dataset("uci-bow")


def test_detection_errors_are_one_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such folder") as err:
        detect_format(tmp_path / "absent")
    assert isinstance(err.value, DataError)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"found: nothing \(the folder is empty\)"):
        load_folder(empty)
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "notes.md").write_text("x")
    (junk / "data.csv").write_text("1,2\n")
    (junk / "sub").mkdir()
    with pytest.raises(FileNotFoundError, match=r"found: data\.csv, notes\.md, sub/;") as err:
        load_dataset(data_dir=junk)
    assert "\n" not in str(err.value) and "expected LINQS" in str(err.value)
    # a data set folder of another layout points to its name
    sotu = tmp_path / "sotu"
    sotu.mkdir()
    (sotu / "sotu_text.rda").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="--dataset sotu"):
        detect_format(sotu)
    with pytest.raises(ValueError, match="unknown format 'csv'"):
        load_folder(junk, format="csv")


def test_folder_matching_two_formats(tmp_path):
    folder = _linqs(tmp_path / "both")
    (folder / "train.txt").write_text("a\tr\tb\n")
    with pytest.raises(DataError, match=r"several formats \(linqs, triples\)") as err:
        detect_format(folder)
    assert "\n" not in str(err.value)
    assert load_folder(folder, format="triples").tensor["train"].n_entries == 1
    assert load_dataset("linqs", data_dir=folder).corpus.n_docs == 3


# ---------------------------------------------------------------------- shared data sets

SHARED = [
    ("cora-linqs", "linqs", {"documents": 2708, "words": 1433, "links": 5429, "labels": 7}),
    ("webkb-linqs", "linqs", {"documents": 877, "words": 1703, "links": 1516, "labels": 5}),
    ("cora-rlda", "rlda", {"documents": 2410, "words": 2961, "links": 4231}),
    ("poliblog-rlda", "rlda", {"documents": 773, "words": 1290, "labels": 2}),
    ("20newsgroups", "rlda", {"documents": 11269, "words": 61188, "labels": 20,
                              "test_documents": 7505}),
    ("nations", "triples", {"entities": 14, "relations": 55, "triples": 1992}),
    ("umls", "triples", {"entities": 135, "relations": 46, "triples": 6529}),
]


@pytest.mark.parametrize(("name", "fmt", "counts"), SHARED, ids=[s[0] for s in SHARED])
def test_shared_folders(shared_datasets, name, fmt, counts):
    folder = shared_datasets / name
    if not folder.is_dir():
        pytest.skip(f"{folder} absent")
    assert detect_format(folder) == fmt
    summary = load_dataset(data_dir=folder).summary()
    assert {k: summary[k] for k in counts} == counts


def test_shared_folders_of_other_layouts_name_themselves(shared_datasets):
    for name in ("sotu", "sampson-rlda"):
        if (shared_datasets / name).is_dir():
            with pytest.raises(FileNotFoundError, match=f"--dataset {name}"):
                detect_format(shared_datasets / name)
    if any((shared_datasets / name).is_dir() for name, _, _ in SHARED):
        with pytest.raises(FileNotFoundError, match="data set folders"):
            detect_format(shared_datasets)
