"""Bad inputs of the data layer end in one-line errors naming the problem and where it is:
adjacency entries, repeated words and ids, id types, shard files and folders, label
lengths, word ids of ``from_documents``, links a relational fit cannot do without."""

from __future__ import annotations

import json
import logging
import re
import zipfile
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.data import Corpus, DataError, Links, ShardSet, as_links, write_shards
from topiclink.data.clean import drop_empty_documents
from topiclink.data.io import read_linqs, read_linqs_cites, read_uci_bow
from topiclink.data.shards import file_sha256


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert text and "\n" not in text.strip()
    return text


def small_corpus() -> Corpus:
    return Corpus(sp.csr_matrix(np.array([[1, 2, 0], [0, 1, 3], [2, 0, 1], [1, 1, 1]])),
                  vocabulary=["a", "b", "c"])


# ---------------------------------------------------------------------- 1. adjacency
@pytest.mark.parametrize("sparse", [False, True])
def test_negative_adjacency_entries_are_refused_with_count_and_position(sparse):
    A = np.zeros((5, 5))
    A[4, 2] = A[1, 3] = -1
    A[0, 1] = 1
    with pytest.raises(DataError) as exc:
        Links.from_adjacency(sp.csr_matrix(A) if sparse else A)
    assert one_line(exc) .startswith("adjacency: 2 negative entries, first -1.0 at (1, 3)")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_adjacency_entries_name_the_position(bad):
    A = np.zeros((4, 4))
    A[2, 1] = bad
    for M in (A, sp.csr_matrix(A)):
        with pytest.raises(DataError, match=r"1 NaN or infinite entries, first .* at \(2, 1\)"):
            Links.from_adjacency(M)


def test_positive_weights_are_one_link_each_and_the_estimators_path_refuses_negatives():
    A = sp.csr_matrix(np.array([[0, 2.5, 0], [0, 0, 0.3], [1, 0, 0]]))
    assert Links.from_adjacency(A, directed=True).pairs.tolist() == [[0, 1], [1, 2], [2, 0]]
    with pytest.raises(DataError, match="negative"):
        as_links(sp.csr_matrix(np.array([[0, -1], [0, 0]])), 2)


# ---------------------------------------------------------------------- 2, 3. vocabularies
def test_corpus_refuses_a_repeated_word_naming_both_positions():
    with pytest.raises(DataError) as exc:
        Corpus(sp.csr_matrix(np.ones((2, 3))), vocabulary=["a", "b", "a"])
    assert one_line(exc) == ("vocabulary: duplicate word 'a' at entry 0 and entry 2; "
                             "1 repeats in all")


def test_with_vocabulary_refuses_a_repeated_target_word():
    with pytest.raises(DataError, match="with_vocabulary: duplicate word 'a' at entry 1 and "
                                        "entry 2"):
        small_corpus().with_vocabulary(["c", "a", "a", "b"])


def _uci(tmp_path: Path, vocab: str) -> tuple[Path, Path]:
    doc = tmp_path / "docword.t.txt"
    doc.write_text("2\n3\n3\n1 1 2\n1 2 1\n2 3 4\n")
    voc = tmp_path / "vocab.t.txt"
    voc.write_bytes(vocab.encode())
    return doc, voc


def test_uci_vocabulary_file_with_a_repeated_word_names_both_lines(tmp_path):
    doc, voc = _uci(tmp_path, "\ufeffgraph\r\nnode\r\ngraph \r\n")
    with pytest.raises(DataError) as exc:
        read_uci_bow(doc, voc)
    assert one_line(exc) == f"{voc}:3: duplicate word 'graph' (first at line 1); 1 repeats " \
                            "in all"


def test_uci_vocabulary_with_bom_and_crlf_is_read(tmp_path):
    doc, voc = _uci(tmp_path, "\ufeffgraph\r\nnode\r\nedge\r\n")
    assert read_uci_bow(doc, voc).vocabulary.tolist() == ["graph", "node", "edge"]


def test_cli_vocab_with_a_repeated_word_is_one_line(tmp_path):
    doc, voc = _uci(tmp_path, "x\ny\nx\n")
    result = CliRunner().invoke(app, ["fit", "lda", "--input", str(doc), "--vocab", str(voc),
                                      "-k", "2", "-n", "1"])
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == [f"error: {voc}:3: duplicate word 'x' (first at line 1); 1 repeats in all"]


def test_write_shards_refuses_a_repeated_word(tmp_path):
    with pytest.raises(DataError, match="vocab: duplicate word 'q'"):
        write_shards(small_corpus(), tmp_path / "s", 1, vocab=["q", "r", "q"])


# ---------------------------------------------------------------------- 4, 5. ids
def test_from_networkx_refuses_repeated_doc_ids():
    g = nx.Graph([(0, 1)])
    with pytest.raises(DataError) as exc:
        Links.from_networkx(g, doc_ids=[0, 0, 1])
    assert one_line(exc) == ("from_networkx: doc_ids: duplicate id 0 at entry 0 and entry 1; "
                             "1 repeats in all")


def test_read_linqs_cites_refuses_repeated_doc_ids(tmp_path):
    cites = tmp_path / "x.cites"
    cites.write_text("a\tb\n")
    with pytest.raises(DataError, match="duplicate id 'a' at entry 0 and entry 2"):
        read_linqs_cites(cites, ["a", "b", "a"])


@pytest.mark.parametrize("ids, match", [
    (np.arange(4) + 0.5, "ids must be integers or strings, got dtype float64; entry 0 is 0.5"),
    (np.array([1.0, np.nan, 3.0, 4.0]), "doc_ids: document 1 has id nan; ids must be finite"),
    (np.array([True, False, True, False]), "got dtype bool"),
    (np.array([1, "a", 2, 3], dtype=object), "entry 1 is 'a' but entry 0 is 1"),
    (np.array([1, None, 2, 3], dtype=object), r"entry 1 is None \(NoneType\)"),
    (np.array([1.5, 2, 3, 4], dtype=object), r"entry 0 is 1.5 \(float\)"),
])
def test_corpus_refuses_ids_that_would_not_round_trip(ids, match):
    with pytest.raises(DataError, match=match):
        Corpus(small_corpus().counts, doc_ids=ids)


def test_ids_keep_their_type():
    from topiclink.data.checks import check_ids

    assert check_ids(np.array([3, 1], dtype=np.uint16)).dtype == np.int64
    assert check_ids(np.array(["x", "y"], dtype=object)).tolist() == ["x", "y"]
    assert check_ids(np.array([7, 8], dtype=object)).dtype == np.int64
    c = Corpus(small_corpus().counts, doc_ids=[10, 11, 12, 13])
    assert c.subset([2]).doc_ids.tolist() == [12]
    assert isinstance(c.doc_ids.tolist()[0], int)


def test_check_vocabulary_refuses_floats_and_none():
    from topiclink.data.checks import check_vocabulary

    for bad in ([1.5, 2.0], ["a", None]):
        with pytest.raises(DataError, match="words"):
            check_vocabulary(bad)


# ---------------------------------------------------------------------- 6. shards
def _tamper(ss: ShardSet, **arrays: np.ndarray) -> None:
    """Rewrite shard 0 with some arrays replaced, and fix the manifest's checksum (a
    consistent but wrong set)."""
    p = ss.path(0)
    with np.load(p, allow_pickle=False) as npz:
        members = {k: npz[k] for k in npz.files}
    members.update(arrays)
    with zipfile.ZipFile(p, "w") as zf:
        for k, v in members.items():
            with zf.open(f"{k}.npy", "w") as f:
                np.lib.format.write_array(f, v, allow_pickle=False)
    mp = ss.directory / "manifest.json"
    m = json.loads(mp.read_text())
    m["shards"][0]["sha256"] = file_sha256(p)
    mp.write_text(json.dumps(m))


def test_shard_with_word_ids_outside_the_vocabulary_is_refused_on_load(tmp_path):
    ss = write_shards(small_corpus(), tmp_path / "s", 2)
    words, _, _ = ss.load(0)
    bad = words.copy()
    bad[1] = 3
    _tamper(ss, words=bad)
    ss = ShardSet.open(tmp_path / "s")
    for load in (lambda: ss.load(0), lambda: ss.corpus(0), lambda: ss.to_corpus()):
        with pytest.raises(DataError, match=r"token 1 has word id 3, outside the vocabulary "
                                            r"\[0, 3\)"):
            load()


def test_shard_with_a_reversed_doc_range_is_refused_on_load(tmp_path):
    ss = write_shards(small_corpus(), tmp_path / "s", 2)
    s0 = ss.shards[0]
    _tamper(ss, doc_range=np.array([s0.doc_stop, s0.doc_start], dtype=np.int64))
    with pytest.raises(DataError, match=r"doc_range is \[2, 0\], but the manifest says "
                                        r"\[0, 2\]"):
        ShardSet.open(tmp_path / "s").load(0)


@pytest.mark.parametrize("n_shards", [1.5, "2", True, None, 0, np.float64(2.0)])
def test_write_shards_refuses_non_integer_shard_counts(tmp_path, n_shards):
    with pytest.raises(ValueError, match=re.escape(f"write_shards: n_shards must be an "
                                                   f"integer >= 1, got {n_shards!r}")):
        write_shards(small_corpus(), tmp_path / "s", n_shards)
    assert not (tmp_path / "s").exists()


def test_overwrite_replaces_only_a_shard_folder(tmp_path):
    f = tmp_path / "file"
    f.write_text("keep me")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("keep me too")
    for target in (f, other):
        with pytest.raises(DataError, match="not a shard directory"):
            write_shards(small_corpus(), target, 1, overwrite=True)
    assert f.read_text() == "keep me" and (other / "notes.txt").read_text() == "keep me too"
    write_shards(small_corpus(), tmp_path / "s", 1)
    assert write_shards(small_corpus(), tmp_path / "s", 2, overwrite=True).n_shards == 2
    (tmp_path / "empty").mkdir()
    assert write_shards(small_corpus(), tmp_path / "empty", 1, overwrite=True).n_docs == 4


@pytest.mark.parametrize("directory", [None, 7, ""])
def test_shardset_open_and_write_need_a_path(tmp_path, directory):
    with pytest.raises((TypeError, ValueError), match="must be a"):
        ShardSet.open(directory)
    with pytest.raises((TypeError, ValueError), match="write_shards: directory must be a"):
        write_shards(small_corpus(), directory, 1)


def test_shardset_open_on_a_file_is_one_line(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(DataError, match="not a shard directory"):
        ShardSet.open(tmp_path / "f")


@pytest.mark.parametrize("i", [7, -1, 2])
def test_shard_index_out_of_range_is_one_line(tmp_path, i):
    ss = write_shards(small_corpus(), tmp_path / "s", 2)
    for call in (ss.load, ss.corpus, ss.path, ss.task_arguments):
        with pytest.raises(ValueError, match=rf"shard {i} is outside \[0, 2\)"):
            call(i)
    for bad in ("0", 1.0, None):
        with pytest.raises(TypeError, match="shard index must be an integer"):
            ss.load(bad)


def test_shard_vocabulary_file_with_a_repeated_word_is_refused(tmp_path):
    ss = write_shards(small_corpus(), tmp_path / "s", 1)
    (ss.directory / "vocabulary.json").write_text(json.dumps(["a", "b", "a"]))
    with pytest.raises(DataError, match="duplicate word 'a'"):
        ss.vocabulary()


# ---------------------------------------------------------------------- 7. labels
@pytest.mark.parametrize("labels", [[1, 2], [1, 2, 3, 4, 5], 3])
def test_drop_empty_documents_names_both_lengths(labels):
    c = Corpus(sp.csr_matrix(np.array([[1, 0], [0, 0], [1, 1]])))
    with pytest.raises(DataError, match=r"labels has \d entries for 3 documents"):
        drop_empty_documents(c, labels=labels)


def test_drop_empty_documents_refuses_links_of_another_corpus():
    c = Corpus(sp.csr_matrix(np.array([[1, 0], [0, 0], [1, 1]])))
    with pytest.raises(DataError, match="links cover 5 documents, the corpus has 3"):
        drop_empty_documents(c, Links.from_pairs([[0, 1]], 5))


# ---------------------------------------------------------------------- 8. from_documents
@pytest.mark.parametrize("words, match", [
    (["a", "b"], "document 0: word ids must be integer positions, got 'a'"),
    (["1", "0"], "got '1'"),
    ([0.5, 1.0], "document 0: word id 0.5 is not an integer position"),
    ([np.nan, 1.0], "word id nan"),
    ([None, 1], "got None"),
])
def test_from_documents_refuses_non_integer_word_ids(words, match):
    with pytest.raises(DataError, match=match):
        Corpus.from_documents([(words, [1, 2])])


def test_from_documents_whole_float_ids_and_the_vocabulary_size():
    c = Corpus.from_documents([([0.0, 2.0], [1, 2])], vocabulary=["a", "b", "c", "d"])
    assert c.n_words == 4 and c.counts.toarray().tolist() == [[1, 0, 2, 0]]
    with pytest.raises(DataError, match="counts must be numbers"):
        Corpus.from_documents([([0, 1], ["x", "y"])])
    with pytest.raises(DataError, match=r"negative count -1 at document 0 \(id 0\), word 1"):
        Corpus.from_documents([([0, 1], [1, -1])])


# ---------------------------------------------------------------------- 9. links needed
def _linqs(folder: Path, cites: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [f"d{i}\t" + "\t".join("1" if (i + j) % 3 == 0 else "0" for j in range(6))
            + f"\t{'ab'[i % 2]}" for i in range(8)]
    (folder / "toy.content").write_text("\n".join(rows) + "\n")
    (folder / "toy.cites").write_text(cites)
    return folder


def test_an_empty_cites_file_gives_no_links_with_a_warning(tmp_path, caplog):
    """A graph without edges is still a corpus (an LDA needs no links): read, warned
    about; the models of links refuse it (below)."""
    d = _linqs(tmp_path / "toy", "")
    with caplog.at_level(logging.WARNING, logger="topiclink"):
        corpus, links, _ = read_linqs(d / "toy.content", d / "toy.cites")
    assert corpus.n_docs == 8 and links.n_links == 0
    assert "toy.cites: no links (the file is empty" in caplog.text


def test_a_cites_file_of_mostly_unknown_ids_is_refused_with_counts(tmp_path, caplog):
    d = _linqs(tmp_path / "toy", "d1\td0\nx1\td0\nx2\td3\nd5\tx3\n")
    with pytest.raises(DataError) as exc:
        read_linqs(d / "toy.content", d / "toy.cites")
    assert "3 of 4 links name ids not in toy.content (3 unknown ids, first: 'x1', 'x2', " \
           "'x3')" in one_line(exc)
    (d / "toy.cites").write_text("d1\td0\nd2\td0\nx2\td3\n")
    with caplog.at_level(logging.WARNING, logger="topiclink"):
        _, links, _ = read_linqs(d / "toy.content", d / "toy.cites")
    assert links.n_links == 2 and "dropped 1 links to 1 ids" in caplog.text


@pytest.mark.parametrize("command", ["rtm", "lmv"])
def test_cli_fit_of_a_relational_model_without_links_exits_non_zero(tmp_path, command):
    d = _linqs(tmp_path / "toy", "")
    result = CliRunner().invoke(app, ["fit", command, "--dataset", "linqs", "--data", str(d),
                                      "-k", "2", "-n", "1"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no links" in lines[0]


def test_prepare_fit_data_refuses_zero_links_and_links_lost_to_empty_documents():
    import typer

    from topiclink.cli.common import prepare_fit_data
    from topiclink.datasets.base import Dataset

    counts = sp.csr_matrix(np.array([[1, 0], [0, 0], [0, 0], [1, 1]]))
    c = Corpus(counts)
    none = Dataset("toy", corpus=c, links=Links.from_pairs(np.zeros((0, 2), int), 4))
    lost = Dataset("toy", corpus=c, links=Links.from_pairs([[0, 1], [1, 2], [2, 3]], 4))
    for ds in (none, lost):
        with pytest.raises(typer.Exit):
            prepare_fit_data(ds, ("X", "links"))
    kept = Dataset("toy", corpus=c, links=Links.from_pairs([[0, 3], [3, 0]], 4))
    assert prepare_fit_data(kept, ("X", "links")).links.n_links == 2
    assert prepare_fit_data(none, ("X",)).links.n_links == 0      # LDA does not need them
