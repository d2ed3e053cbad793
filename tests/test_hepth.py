"""The hep-th data set: .abs records, the loader on a tiny copy, and (slow) the real split."""

from __future__ import annotations

import gzip
import io
import tarfile
import time
from pathlib import Path

import numpy as np
import pytest

from topiclink.data import DataError
from topiclink.datasets import hepth_kdd_split, load_dataset, read_hepth_abstracts
from topiclink.datasets.hepth import (
    HEPTH_FILES,
    hepth_analyzer,
    parse_abs_date,
    parse_abs_record,
)

RECORD = """------------------------------------------------------------------------------
\\\\
Paper: hep-th/{id}
From: someone <a@b.c>
Date: {date}   (37kb)
Date (revised v2): Mon, 17 Jan 2000 14:52:43 GMT   (85kb)

Title: {title}
  continued
Authors: A. Author and
  B. Author
Comments: 4 pages
\\\\
  {abstract}
\\\\
"""

PAPERS = [  # id, date line, abstract
    ("9201001", "Tue Dec 31 23:54:17 MET 1991 +0100", "strings and branes in gauge theory"),
    ("9912001", "Wed, 1 Dec 1999 10:00:00 GMT", "branes and black holes in string theory"),
    ("0001001", "Sat, 1 Jan 2000 00:02:31 GMT", "gauge theory of strings and branes"),
    ("0201001", "2 Jan 02 10:00:00", "black holes and gauge strings"),
    ("0301001", "no date here", "strings strings branes"),
]
EDGES = [("9912001", "9201001"), ("1001", "9201001"), ("1001", "9912001"), ("1001", "1001"),
         ("201001", "1001"), ("201001", "9201001"), ("301001", "201001"),
         ("9201001", "1001")]  # the last: a revised version citing a newer paper


def _hepth_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "hepth"
    folder.mkdir()
    with tarfile.open(folder / HEPTH_FILES[0], "w:gz") as tar:
        for pid, date, abstract in PAPERS:
            year = ("19" if pid[0] == "9" else "20") + pid[:2]
            data = RECORD.format(id=pid, date=date, title=f"Title {pid}",
                                 abstract=abstract).encode()
            info = tarfile.TarInfo(f"cit-HepTh-abstracts/{year}/{pid}.abs")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    lines = "# Directed graph\r\n# FromNodeId\tToNodeId\r\n" + "".join(
        f"{int(a)}\t{int(b)}\r\n" for a, b in EDGES)
    with gzip.open(folder / HEPTH_FILES[1], "wb") as f:
        f.write(lines.encode())
    return folder


def test_parse_abs_record_and_dates():
    rec = parse_abs_record(RECORD.format(id="9201001", date="x", title="A title",
                                         abstract="We study things."))
    assert rec.fields["Paper"] == "hep-th/9201001"
    assert rec.fields["Title"] == "A title continued"
    assert rec.fields["Authors"] == "A. Author and B. Author"
    assert rec.abstract == "We study things."
    assert parse_abs_date("Tue Dec 31 23:54:17 MET 1991 +0100   (37kb)") == "1991-12-31"
    assert parse_abs_date("Sat, 1 Jan 2000 00:02:31 GMT") == "2000-01-01"
    assert parse_abs_date("2 Jan 92 10:00") == "1992-01-02"
    assert parse_abs_date("unknown") == ""
    with pytest.raises(DataError, match="separator"):
        parse_abs_record("Paper: x\n", "f.abs")


def test_read_hepth_abstracts_sorted_by_time(tmp_path):
    folder = _hepth_folder(tmp_path)
    t = read_hepth_abstracts(folder / HEPTH_FILES[0])
    assert t.ids.tolist() == ["9201001", "9912001", "0001001", "0201001", "0301001"]
    np.testing.assert_allclose(t.times, [1992.0, 1999 + 11 / 12, 2000.0, 2002.0, 2003.0])
    assert t.metadata["date"].tolist() == ["1991-12-31", "1999-12-01", "2000-01-01",
                                           "2002-01-02", ""]
    assert t.titles[0] == "Title 9201001 continued"
    assert t.texts[2] == "gauge theory of strings and branes"


def test_load_hepth_tiny_copy(tmp_path):
    pytest.importorskip("snowballstemmer")
    folder = _hepth_folder(tmp_path)
    ds = load_dataset("hepth", data_dir=folder, analyzer=hepth_analyzer(min_df=1))
    assert ds.corpus.doc_ids.tolist()[:3] == ["9201001", "9912001", "0001001"]
    assert ds.links.n_links == 7  # the self-citation of 0001001 dropped
    assert ds.corpus.metadata["time"].iloc[2] == 2000.0
    kdd = load_dataset("hepth", data_dir=folder, protocol="kdd",
                       analyzer=hepth_analyzer(min_df=1))
    assert kdd.corpus.n_docs == 3 and kdd.links.n_links == 4  # incl. 9201001 -> 0001001
    assert kdd.test.corpus.doc_ids.tolist() == ["0201001"]  # 0301001 cites no training paper
    assert kdd.test_links.toarray().tolist() == [[True, False, True]]
    assert kdd.test.corpus.n_words == kdd.corpus.n_words
    split = hepth_kdd_split(folder, analyzer=hepth_analyzer(min_df=1))
    assert split.report["later_without_citations"] == 1
    assert split.report["input_self_citations"] == 1
    with pytest.raises(ValueError, match="protocol"):
        load_dataset("hepth", data_dir=folder, protocol="paper")


def test_missing_hepth_files_say_where(tmp_path):
    with pytest.raises(FileNotFoundError, match="cit-HepTh-abstracts.tar.gz"):
        load_dataset("hepth", data_dir=tmp_path)


@pytest.mark.slow
def test_hepth_kdd_split_counts(shared_datasets):
    """The LMV paper, Sec. 7.2: 25,224 / 271,838 training papers / citations, 4,064 test
    papers citing 60,914 times into the training set."""
    pytest.importorskip("snowballstemmer")
    folder = shared_datasets / "hepth"
    if not all((folder / f).is_file() for f in HEPTH_FILES):
        pytest.skip(f"hep-th files not in {folder}")
    t0 = time.perf_counter()
    split = hepth_kdd_split(folder)
    seconds = time.perf_counter() - t0
    assert split.n_train == 25224
    assert split.train_links.n_links == 271838
    assert split.n_test == 4064
    assert split.test_citations.nnz == 60914
    assert split.report["input_self_citations"] == 39
    assert split.test_corpus.n_words == split.train_corpus.n_words
    assert split.train_corpus.doc_ids[0] == "9201001"
    assert split.train_corpus.empty_documents().size == 0
    # the documented vocabulary rule (the paper's 7,211 is not reproduced, see KDD_ANALYZER)
    assert split.train_corpus.n_words == 7714
    assert seconds < 120, seconds


def test_listing_counts_without_the_text_analysis_match_the_load(tmp_path):
    """The listing counts hep-th from the tarball's names and the edge list (no text
    analysis): the same documents and links as the full load (self-citation, unpadded ids
    and a citation of a newer paper included)."""
    from topiclink.datasets.hepth import count_hepth

    folder = _hepth_folder(tmp_path)
    ds = load_dataset("hepth", data_dir=folder)
    assert count_hepth(folder) == {"documents": ds.corpus.n_docs, "links": ds.links.n_links}
    assert count_hepth(folder) == {"documents": 5, "links": 7}
