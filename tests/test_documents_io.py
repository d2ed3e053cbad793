"""Users' own documents and edge lists: readers, id rules, dates, the analyser, the join."""

from __future__ import annotations

import gzip
import io
import json
import logging
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from topiclink.data import (
    DataError,
    TextAnalyzer,
    linked_corpus,
    normalize_ids,
    parse_times,
    read_documents,
    read_edges,
)
from topiclink.data.dates import yymm_to_year

BOM = "\ufeff"


def _write(path: Path, text: str, newline: str = "\r\n") -> Path:
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


# ---------------------------------------------------------------------- dates
def test_parse_times_formats():
    assert parse_times(["2001-05-17"], "iso")[0] == pytest.approx(2001 + 136 / 365)
    assert parse_times(["2001-01-01T10:00"], "iso")[0] == 2001.0
    np.testing.assert_allclose(parse_times(["1999", 2003], "year"), [1999, 2003])
    # arXiv YYMM: January 2000 comes after December 1999 (the number 1 would not)
    t = parse_times(["9912", "0001", "9201"], "yymm")
    np.testing.assert_allclose(t, [1999 + 11 / 12, 2000.0, 1992.0])
    assert t[1] > t[0] > t[2]
    assert parse_times(["200105"], "yyyymm")[0] == pytest.approx(2001 + 4 / 12)
    np.testing.assert_allclose(parse_times(["3.5", 7], "number"), [3.5, 7.0])
    assert parse_times(["17/05/2001"], "%d/%m/%Y")[0] == pytest.approx(2001 + 136 / 365)
    assert yymm_to_year("9108") == pytest.approx(1991 + 7 / 12)
    assert yymm_to_year("8912", pivot=80) == pytest.approx(1989 + 11 / 12)


def test_parse_times_errors_name_first_bad_row_and_count():
    with pytest.raises(DataError, match=r"col: row 1 has value '0013', not a 'yymm' date; "
                                        r"2 of 4 values unparsable"):
        parse_times(["0001", "0013", "9912", "x"], "yymm", what="col")
    with pytest.raises(DataError, match="row 0 has a missing value"):
        parse_times([None, "1999"], "year")
    with pytest.raises(DataError, match="row 0"):
        parse_times(["2001-02-30"], "iso")
    with pytest.raises(ValueError, match="unknown time_format"):
        parse_times(["1"], "julian")


# ---------------------------------------------------------------------- ids
def test_normalize_ids_rules():
    np.testing.assert_array_equal(normalize_ids(["1001", "9201001", "ab"], "zero-pad:7"),
                                  ["0001001", "9201001", "ab"])
    np.testing.assert_array_equal(normalize_ids(["0001001", "000"], "strip-zeros"),
                                  ["1001", "0"])
    np.testing.assert_array_equal(normalize_ids(["HEP/1"], "lower"), ["hep/1"])
    np.testing.assert_array_equal(normalize_ids(["a1"], lambda s: s.upper()), ["A1"])
    np.testing.assert_array_equal(normalize_ids(["01", "1"], None), ["01", "1"])
    with pytest.raises(ValueError, match="unknown normalize_ids rule"):
        normalize_ids(["1"], "pad")
    with pytest.raises(TypeError, match="must return a string"):
        normalize_ids(["1"], lambda s: 1)


# ---------------------------------------------------------------------- read_documents
CSV = (BOM + 'id,text,date,venue\n'
       '0001,"Strings, branes\nand dualities",0001,A\n'
       '0002,"Black holes ""and"" entropy",9912,B\n'
       '0003,,9905,A\n')


def test_read_csv_crlf_bom_quoted_newlines(tmp_path, caplog):
    p = _write(tmp_path / "docs.csv", CSV)
    with caplog.at_level(logging.INFO, logger="topiclink"):
        t = read_documents(p, time_column="date", time_format="yymm",
                           metadata_columns=["venue"])
    assert t.ids.tolist() == ["0001", "0002", "0003"]  # strings with their zeros
    assert t.texts[0] == "Strings, branes\nand dualities"
    assert t.texts[1] == 'Black holes "and" entropy'
    np.testing.assert_allclose(t.times, [2000.0, 1999 + 11 / 12, 1999 + 4 / 12])
    assert t.metadata["venue"].tolist() == ["A", "B", "A"]
    assert t.metadata["time"].tolist() == ["0001", "9912", "9905"]
    assert t.empty_texts.tolist() == [2]
    assert "1 of 3 documents have an empty text" in caplog.text


def test_read_tsv_jsonl_and_positions(tmp_path):
    tsv = _write(tmp_path / "h.tsv", "key\tbody\n7\thello, world\n")
    t = read_documents(tsv, id_column="key", text_column="body")
    assert t.ids.tolist() == ["7"] and t.texts == ["hello, world"]
    t = read_documents(tsv, id_column=0, text_column=1)
    assert t.ids.tolist() == ["7"]
    t = read_documents(_write(tmp_path / "h.txt", "id\ttext\n1\ta\n"), format="tsv")
    assert t.texts == ["a"]
    lines = [json.dumps({"id": 12, "text": "one"}), "",
             json.dumps({"id": "x", "text": None, "year": 1999})]
    j = _write(tmp_path / "d.jsonl", BOM + "\n".join(lines) + "\n")
    t = read_documents(j, metadata_columns=["year"])
    assert t.ids.tolist() == ["12", "x"] and t.texts == ["one", ""]
    assert t.metadata["year"].tolist() == [None, 1999]


def test_read_documents_errors(tmp_path):
    p = _write(tmp_path / "d.csv", "id,text\na,x\nb,y\na,z\nb,w\n")
    with pytest.raises(DataError, match=r"duplicate document id 'a' at rows 0 and 2; 2 ids "
                                        r"repeated \('a', 'b'\)"):
        read_documents(p)
    with pytest.raises(DataError, match=r"no text column 'body' \(columns: 'id', 'text'\)"):
        read_documents(p, text_column="body")
    p2 = _write(tmp_path / "t.csv", "id,text,when\na,x,2001-01-01\nb,y,yesterday\n")
    with pytest.raises(DataError, match=r"t.csv: column 'when': row 1 has value "
                                        r"'yesterday'"):
        read_documents(p2, time_column="when", time_format="iso")
    with pytest.raises(ValueError, match="without time_format"):
        read_documents(p2, time_column="when")
    p3 = _write(tmp_path / "e.csv", "id,text\n,x\n")
    with pytest.raises(DataError, match="row 0: empty id"):
        read_documents(p3)
    j = _write(tmp_path / "bad.jsonl", '{"id": 1, "text": "a"}\n{"id": 2, "text": \n')
    with pytest.raises(DataError, match=r"bad.jsonl:2: not a JSON object"):
        read_documents(j)
    with pytest.raises(DataError, match="cannot tell the format"):
        read_documents(_write(tmp_path / "d.xyz", "x"))
    with pytest.raises(FileNotFoundError):
        read_documents(tmp_path / "missing.csv")


def test_normalize_ids_on_documents(tmp_path):
    p = _write(tmp_path / "d.csv", "id,text\n1,x\n01,y\n")
    assert read_documents(p).ids.tolist() == ["1", "01"]
    with pytest.raises(DataError, match="duplicate document id '0000001'"):
        read_documents(p, normalize_ids="zero-pad:7")


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "texts"
    (d / "2001").mkdir(parents=True)
    _write(d / "2001" / "0101001.txt", BOM + "first paper\nabout strings\n")
    _write(d / "2001" / "0101002.txt", "second paper\n")
    _write(d / ".DS_Store", "junk")
    _write(d / "README.md", "not a document")
    return d


def test_read_folder_and_tar(tmp_path):
    d = _folder(tmp_path)
    t = read_documents(d, suffix=".txt")
    assert t.ids.tolist() == ["0101001", "0101002"]
    assert t.texts[0] == "first paper\nabout strings\n"  # BOM and CRLF gone
    assert t.metadata["path"].tolist() == ["2001/0101001.txt", "2001/0101002.txt"]
    tar_path = tmp_path / "texts.tar.gz"
    with tarfile.open(tar_path, "w:gz") as tar:
        tar.add(d, arcname="texts")
    t2 = read_documents(tar_path, id_pattern=r"/(\d{7})\.txt$")
    assert t2.ids.tolist() == t.ids.tolist() and t2.texts == t.texts
    with pytest.raises(DataError, match="duplicate document id '010' from files"):
        read_documents(tar_path, suffix=".txt", id_pattern=lambda rel: rel.split("/")[-1][:3])
    with pytest.raises(ValueError, match="apply to tables only"):
        read_documents(d, time_column="x", time_format="iso")


def test_parquet_without_pyarrow_is_a_clear_import_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "fastparquet", None)
    p = tmp_path / "d.parquet"
    p.write_bytes(b"PAR1")
    with pytest.raises(ImportError, match="pip install pyarrow"):
        read_documents(p)


def test_parquet_table_with_typed_columns(tmp_path):
    """Parquet keeps types: integer and zero-padded string ids, a timestamp column, an
    integer year column, nulls in text and metadata; a corrupt file is one line."""
    pytest.importorskip("pyarrow")
    import pandas as pd

    p = tmp_path / "d.parquet"
    pd.DataFrame({"id": [1001, 9201001, 3], "text": ["a b", "gauge strings", None],
                  "date": pd.to_datetime(["2001-05-17", "1999-12-01", "2000-01-01"]),
                  "year": [2001, 1999, 2000], "venue": ["x", "y", None]}).to_parquet(p)
    t = read_documents(p, time_column="date", time_format="iso", metadata_columns=["venue"])
    assert t.ids.tolist() == ["1001", "9201001", "3"]
    assert t.texts == ["a b", "gauge strings", ""]
    np.testing.assert_allclose(t.times, [2001 + 136 / 365, 1999 + 334 / 365, 2000.0])
    assert t.metadata["venue"].tolist()[:2] == ["x", "y"]
    assert pd.isna(t.metadata["venue"].tolist()[2])
    years = read_documents(p, time_column="year", time_format="year").times
    assert years.tolist() == [2001.0, 1999.0, 2000.0]
    padded = tmp_path / "padded.parquet"
    pd.DataFrame({"id": ["0001001", "0001002"], "text": ["a", "b"]}).to_parquet(padded)
    assert read_documents(padded).ids.tolist() == ["0001001", "0001002"]
    missing = tmp_path / "missing.parquet"
    pd.DataFrame({"id": pd.array([1, None], dtype="Int64"), "text": ["a", "b"]}
                 ).to_parquet(missing)
    with pytest.raises(DataError, match="missing.parquet: row 1: id None is not a usable id"):
        read_documents(missing)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match="bad.parquet: not a readable Parquet file"):
        read_documents(bad)


# ---------------------------------------------------------------------- read_edges
def test_read_edges_snap_gzip_crlf(tmp_path):
    p = tmp_path / "cit.txt.gz"
    with gzip.open(p, "wb") as f:
        f.write(b"# Directed graph\r\n# FromNodeId\tToNodeId\r\n1001\t9201001\r\n\r\n"
                b"9201001\t9201002\r\n")
    e = read_edges(p)
    assert e.source.tolist() == ["1001", "9201001"]  # as written: no padding
    assert e.target.tolist() == ["9201001", "9201002"]
    assert e.lines.tolist() == [3, 5] and e.directed
    e2 = read_edges(p, normalize_ids="zero-pad:7")
    assert e2.source.tolist() == ["0001001", "9201001"]


def test_read_edges_csv_direction_header_and_errors(tmp_path):
    p = _write(tmp_path / "c.csv", BOM + 'cited,citing\n"a 1",b\nc,d\n')
    e = read_edges(p, source_column="citing", target_column="cited")
    assert e.source.tolist() == ["b", "d"] and e.target.tolist() == ["a 1", "c"]
    e = read_edges(p, header=True, direction="target-cites-source")
    assert e.source.tolist() == ["b", "d"] and e.lines.tolist() == [2, 3]
    assert not read_edges(p, header=True, direction="undirected").directed
    bad = _write(tmp_path / "bad.txt", "1 2\n3\n")
    with pytest.raises(DataError, match=r"bad.txt:2: expected at least 2 fields, found 1"):
        read_edges(bad)
    with pytest.raises(DataError, match="no column 'src'"):
        read_edges(p, source_column="src", target_column="cited")
    with pytest.raises(DataError, match="no edges"):
        read_edges(_write(tmp_path / "empty.txt", "# nothing\n"))
    with pytest.raises(ValueError, match="direction"):
        read_edges(p, direction="cites")


# ---------------------------------------------------------------------- analyser
TRAIN = ["Strings and branes in string theory", "Black holes and branes",
         "Running couplings of gauge theories", "Gauge theory of strings"]


def test_analyzer_fit_transform_and_unknown_words(caplog):
    pytest.importorskip("snowballstemmer")
    a = TextAnalyzer(stemmer="english", min_df=2)
    X = a.fit_transform(TRAIN)
    assert a.vocabulary_.tolist() == ["brane", "gaug", "string", "theori"]
    assert X.toarray().tolist() == [[1, 0, 2, 1], [1, 0, 0, 0], [0, 1, 0, 1], [0, 1, 1, 1]]
    with caplog.at_level(logging.INFO, logger="topiclink.data.analyzer"):
        Y = a.transform(["new strings of quantum gravity theory"])
    assert Y.toarray().tolist() == [[0, 0, 1, 1]]
    assert a.last_unknown_ == 3  # new, quantum, graviti
    assert "3 of 5 terms" in caplog.text
    b = TextAnalyzer(stop_words=None, min_count=2).fit(TRAIN + ["holes holes"])
    # min_count counts tokens, min_df documents: "holes" occurs 3 times in 2 texts
    assert b.vocabulary_.tolist() == ["and", "branes", "gauge", "holes", "of", "strings",
                                      "theory"]
    c = TextAnalyzer(stop_words=None, min_count=3).fit(TRAIN + ["holes holes"])
    assert c.vocabulary_.tolist() == ["holes"]


def test_analyzer_round_trip_is_json_and_identical():
    pytest.importorskip("snowballstemmer")
    a = TextAnalyzer(stemmer="porter", stop_words=["of", "the"], min_df=1, max_features=6)
    a.fit(TRAIN)
    d = json.loads(json.dumps(a.to_dict()))
    b = TextAnalyzer.from_dict(d)
    new = ["strings of the running gauge", "nothing known here"]
    assert (a.transform(new) != b.transform(new)).nnz == 0
    np.testing.assert_array_equal(a.vocabulary_, b.vocabulary_)
    assert b.get_params() == a.get_params()
    with pytest.raises(RuntimeError, match="not fitted"):
        TextAnalyzer().transform(["x"])
    with pytest.raises(DataError, match="not a saved TextAnalyzer"):
        TextAnalyzer.from_dict({"vocabulary": []})


def test_stemmer_missing_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "snowballstemmer", None)
    with pytest.raises(ImportError, match=r"pip install 'topiclink\[text\]'"):
        TextAnalyzer(stemmer="english")
    TextAnalyzer(stemmer=None)  # no stemmer needed


# ---------------------------------------------------------------------- linked_corpus
DOCS = ("id,text,year\n"
        "0000001,strings branes strings,1999\n"
        "0000002,branes black holes,2000\n"
        "0000003,gauge theory strings,2001\n"
        "0000004,the of and,2001\n"   # empty after stop words
        "0000005,black holes gauge,2002\n")
EDGES = ("# citing cited\n"
         "2 1\n3 1\n3 2\n3 2\n5 3\n5 5\n4 1\n")


def _files(tmp_path: Path) -> tuple[Path, Path]:
    return _write(tmp_path / "docs.csv", DOCS), _write(tmp_path / "cites.txt", EDGES)


def test_linked_corpus_accounts_for_everything(tmp_path, caplog):
    d, e = _files(tmp_path)
    docs = read_documents(d, time_column="year", time_format="year")
    edges = read_edges(e)
    with caplog.at_level(logging.INFO, logger="topiclink"):
        lc = linked_corpus(docs, edges, normalize_ids="zero-pad:7", max_lost=0.15)
    assert lc.report == {"documents_read": 5, "edges_read": 7, "unknown_id_edges": 0,
                         "self_citations": 1, "duplicate_edges": 1, "empty_documents": 1,
                         "empty_texts": 0, "links_of_empty_documents": 1, "links_lost": 1,
                         "documents": 4, "links": 4}
    assert lc.corpus.doc_ids.tolist() == ["0000001", "0000002", "0000003", "0000005"]
    np.testing.assert_allclose(lc.times, [1999, 2000, 2001, 2002])
    assert lc.metadata["time"].tolist() == ["1999", "2000", "2001", "2002"]
    assert sorted(map(tuple, lc.links.pairs.tolist())) == [(1, 0), (2, 0), (2, 1), (3, 2)]
    assert lc.links.directed
    assert "dropped 1 self-citations" in caplog.text
    assert "dropped 1 of 5 documents (20.0%) without any vocabulary word" in caplog.text


def test_linked_corpus_unknown_ids_over_threshold_is_an_error(tmp_path):
    d, e = _files(tmp_path)
    docs, edges = read_documents(d), read_edges(e)
    # without the zero-padding rule every edge misses: a hard error suggesting the rule
    with pytest.raises(DataError, match=r"7 of 7 edges \(100.0%, more than "
                                        r"max_lost=1.0%\) name 5 ids that are not "
                                        r"documents, e.g. '2', '3', '5' \(first at line 2\).*"
                                        r"normalize_ids='zero-pad:7'"):
        linked_corpus(docs, edges)
    extra = _write(tmp_path / "more.txt", EDGES + "9 1\n")
    # 1 unknown + 1 link of the empty document '0000004': 2 of 8 lost
    lc = linked_corpus(docs, read_edges(extra), normalize_ids="zero-pad:7", max_lost=0.25)
    assert lc.report["unknown_id_edges"] == 1 and lc.report["links_lost"] == 2
    with pytest.raises(DataError, match="1 of 8 edges"):
        linked_corpus(docs, read_edges(extra), normalize_ids="zero-pad:7", max_lost=0.1)


def test_linked_corpus_error_policies_name_the_line(tmp_path):
    d, e = _files(tmp_path)
    docs, edges = read_documents(d), read_edges(e, normalize_ids="zero-pad:7")
    with pytest.raises(DataError, match=r"cites.txt:7: document '0000005' cites itself"):
        linked_corpus(docs, edges, self_citations="error")
    with pytest.raises(DataError, match=r"cites.txt:5: repeats an earlier edge"):
        linked_corpus(docs, edges, duplicates="error")
    lc = linked_corpus(docs, edges, drop_empty=False)
    assert lc.corpus.n_docs == 5 and lc.links.n_links == 5


def test_linked_corpus_with_fitted_analyzer_keeps_its_vocabulary(tmp_path):
    d, e = _files(tmp_path)
    a = TextAnalyzer().fit(["black holes", "gauge"])
    lc = linked_corpus(read_documents(d), read_edges(e, normalize_ids="zero-pad:7"),
                       analyzer=a, max_lost=0.5)
    assert lc.corpus.vocabulary.tolist() == ["black", "gauge", "holes"]
    assert lc.corpus.doc_ids.tolist() == ["0000002", "0000003", "0000005"]
    assert lc.analyzer is a


def test_io_package_exports():
    from topiclink.data.io import DocumentTable, EdgeList, read_documents, read_edges

    assert callable(read_documents) and callable(read_edges)
    assert DocumentTable and EdgeList and io


def test_linked_corpus_fit_on_a_subset(tmp_path):
    d, e = _files(tmp_path)
    docs = read_documents(d)
    edges = read_edges(e, normalize_ids="zero-pad:7")
    lc = linked_corpus(docs, edges, fit_on=[0, 1], drop_empty=False)
    assert lc.corpus.vocabulary.tolist() == ["black", "branes", "holes", "strings"]
    # document 2 ("gauge theory strings") is counted over the vocabulary of 0 and 1 only
    assert lc.corpus.counts.toarray().tolist()[:3] == [[0, 1, 0, 2], [1, 1, 1, 0],
                                                      [0, 0, 0, 1]]
    full = linked_corpus(docs, edges, drop_empty=False)
    assert "gauge" in full.corpus.vocabulary.tolist()
    with pytest.raises(ValueError, match="already fitted"):
        linked_corpus(docs, edges, analyzer=lc.analyzer, fit_on=[0])
