"""``topiclink experiment lmv`` on the user's own files (issue 23): ``--documents`` /
``--edges`` with ``--split time --cutoff DATE`` (the hep-th protocol on any citation data)
or the k-fold protocol, and (slow) hep-th through the front door from plain files giving
the same split and the same ranks as the tarball."""

from __future__ import annotations

import csv
import gzip
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app

runner = CliRunner()

TOPICS = (("citations", "networks", "cited", "papers", "graph", "links"),
          ("gauge", "strings", "branes", "duality", "theory", "supersymmetry"),
          ("neural", "learning", "training", "models", "gradient", "layers"))


def _write_files(folder: Path, n: int = 60, order: list[int] | None = None
                 ) -> tuple[Path, Path]:
    """Documents (CSV: BOM, CRLF, ids zero-padded to 4 digits, ISO dates 2000-2004) in
    the row ``order`` given, and an edge list (ids without their zeros) in which each
    document cites older documents of its own topic."""
    rng = random.Random(0)
    rows = []
    for i in range(n):
        words = " ".join(rng.choice(TOPICS[i % 3]) for _ in range(25))
        rows.append(f"{i + 1:04d},Paper {i + 1},{2000 + i // 12}-{i % 12 + 1:02d}-15,{words}")
    order = list(range(n)) if order is None else order
    docs = folder / "papers.csv"
    docs.write_bytes(("\ufeffid,title,date,abstract\r\n"
                      + "".join(rows[i] + "\r\n" for i in order)).encode())
    pairs = [(i + 1, j + 1) for i in range(n) for j in range(i)
             if i % 3 == j % 3 and rng.random() < 0.4]
    edges = folder / "cites.txt"
    edges.write_bytes(("# citing cited\r\n" + "".join(f"{a}\t{b}\r\n" for a, b in pairs))
                      .encode())
    return docs, edges


def _args(docs: Path, edges: Path, *extra: str) -> list[str]:
    return ["experiment", "lmv", "--documents", str(docs), "--edges", str(edges),
            "--text-column", "abstract", "--title-column", "title", "--id-rule", "zero-pad:4",
            "--time-column", "date", "--time-format", "iso", "--quiet", *extra]


TIME_RUN = ("--split", "time", "--cutoff", "2003-07", "--models", "LMVS(t),LMVS",
            "--topics", "3", "--eta", "0.5", "--max-iter", "2")


def _error_line(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 1 and lines and lines[-1].startswith("error: "), result.output
    return lines[-1]


def test_time_split_protocol_from_files(tmp_path):
    docs, edges = _write_files(tmp_path)
    out = tmp_path / "out"
    result = runner.invoke(app, _args(docs, edges, *TIME_RUN, "-o", str(out)))
    assert result.exit_code == 0, result.output
    # 2000-01 .. 2003-06 train (42 papers), the 18 later ones cite them
    assert "papers split at 2003-07: 42 training papers" in result.output
    assert "18 test papers" in result.output
    assert "checked on this data" in result.output
    table = pd.read_csv(out / "lmv_kdd_results.csv")
    assert sorted(table["model"]) == ["LMVS", "LMVS(t)"]
    assert (table["n_train"] == 42).all() and (table["n_test"] == 18).all()
    assert (table["random_rank"] == 21.5).all()
    # documents of one topic cite each other: far better than random
    assert (table["improvement"] > 0.3).all(), table
    for name in ("lmv_kdd_summary.csv", "lmv_kdd_findings.md", "lmv_kdd_figure7.png"):
        assert (out / name).is_file()


def test_the_row_order_of_the_file_does_not_change_the_results(tmp_path):
    """Documents are ordered by time then id before the split, so a shuffled file gives
    the same fits and ranks (checks the order, not the numbers: a fit whose minibatches
    depended on the file order would differ)."""
    results = []
    for k, order in enumerate((None, random.Random(1).sample(range(60), 60))):
        folder = tmp_path / f"run{k}"
        folder.mkdir()
        docs, edges = _write_files(folder, order=order)
        result = runner.invoke(app, _args(docs, edges, *TIME_RUN, "-o", str(folder / "o")))
        assert result.exit_code == 0, result.output
        results.append(pd.read_csv(folder / "o" / "lmv_kdd_results.csv"))
    cols = ["model", "predictive_rank", "n_iter", "n_train", "n_test", "n_test_citations"]
    pd.testing.assert_frame_equal(results[0][cols], results[1][cols])


def test_a_parquet_table_gives_the_same_split_and_ranks_as_the_csv(tmp_path):
    """The same documents as a Parquet table with a timestamp column (types kept, no
    text dates) and as the CSV: the same protocol rows."""
    pytest.importorskip("pyarrow")
    docs, edges = _write_files(tmp_path)
    table = pd.read_csv(docs, dtype=str, encoding="utf-8-sig")
    table["date"] = pd.to_datetime(table["date"])
    parquet = tmp_path / "papers.parquet"
    table.to_parquet(parquet)
    results = []
    for name, path in (("csv", docs), ("parquet", parquet)):
        result = runner.invoke(app, _args(path, edges, *TIME_RUN, "-o", str(tmp_path / name)))
        assert result.exit_code == 0, result.output
        results.append(pd.read_csv(tmp_path / name / "lmv_kdd_results.csv"))
    cols = ["model", "predictive_rank", "n_iter", "n_train", "n_test", "n_test_citations"]
    pd.testing.assert_frame_equal(results[0][cols], results[1][cols])


def test_kfold_protocol_from_files(tmp_path):
    docs, edges = _write_files(tmp_path)
    result = runner.invoke(app, _args(docs, edges, "--folds", "2", "--only-folds", "0",
                                      "--models", "LMV,RTM", "--topics", "3", "--eta", "0.5",
                                      "--max-iter", "3"))
    assert result.exit_code == 0, result.output
    assert "LMV K=3" in result.output and "RTM K=3" in result.output


@pytest.mark.parametrize("extra, expected", [
    (("--split", "time", "--cutoff", "2003-07"), "--time-column"),
    (("--time-column", "date", "--time-format", "iso", "--split", "time"), "--cutoff"),
    (("--cutoff", "2003-07"), "--cutoff needs --split time"),
    (("--time-column", "date", "--time-format", "iso", "--protocol", "kdd"),
     "--protocol kdd is the hep-th protocol"),
    (("--time-column", "date", "--time-format", "iso", "--split", "time", "--cutoff",
      "July 2003"), "--cutoff: cutoff 'July 2003' is not a date"),
    (("--time-column", "date", "--time-format", "iso", "--split", "later"),
     "--split must be kfold or time"),
    (("--time-column", "date", "--time-format", "iso", "--split", "time", "--cutoff",
      "1990-01"), "no document of"),
    (("--time-column", "date", "--time-format", "iso", "--split", "time", "--cutoff",
      "2010-01"), "no document after the cutoff 2010 cites a training document"),
    (("--dataset", "cora-rlda", "--split", "kfold"), "either --documents or --dataset"),
])
def test_bad_time_split_options_are_one_line(tmp_path, extra, expected):
    docs, edges = _write_files(tmp_path)
    args = ["experiment", "lmv", "--documents", str(docs), "--edges", str(edges),
            "--text-column", "abstract", "--id-rule", "zero-pad:4", "--quiet",
            "--topics", "3", "--models", "LMVS", *extra]
    line = _error_line(runner.invoke(app, args))
    assert expected in line, line


def test_split_time_on_a_dataset_other_than_hepth_is_refused():
    line = _error_line(runner.invoke(app, ["experiment", "lmv", "--dataset", "cora-rlda",
                                           "--split", "time", "--cutoff", "2000"]))
    assert "--split time runs on --dataset hepth or on your own --documents" in line


# ---------------------------------------------------------------------- hep-th, real files
def _hepth_as_plain_files(folder: Path, out: Path) -> tuple[Path, Path]:
    """The tarball's abstracts written out as a CSV (id, yymm time code, title, abstract;
    rows shuffled), the SNAP edge list copied as distributed."""
    from topiclink.datasets.hepth import HEPTH_FILES, read_hepth_abstracts

    docs = read_hepth_abstracts(folder / HEPTH_FILES[0])
    order = np.random.default_rng(0).permutation(len(docs))
    path = out / "hepth.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "month", "title", "abstract"])
        for i in order.tolist():
            w.writerow([docs.ids[i], docs.ids[i][:4], docs.titles[i], docs.texts[i]])
    edges = out / "cit-HepTh.txt"
    with gzip.open(folder / HEPTH_FILES[1], "rb") as src:
        edges.write_bytes(src.read())
    return path, edges


FRONT_DOOR = ("--text-column", "abstract", "--title-column", "title", "--time-column",
              "month", "--time-format", "yymm", "--id-rule", "zero-pad:7", "--stemmer",
              "english", "--min-df", "2")


@pytest.mark.slow
def test_hepth_through_the_front_door_gives_the_same_split_and_ranks(shared_datasets,
                                                                      tmp_path):
    """Issue 23: the tarball's texts as a CSV (shuffled rows) + the SNAP list as
    distributed, read by ``--documents`` with ``--split time``, give the paper's split
    (same papers, vocabulary, counts, citations) and, fitted, the same ranks as
    ``--dataset hepth`` (an early cutoff keeps the fits short)."""
    pytest.importorskip("snowballstemmer")
    from topiclink.cli.documents import TIME_COLUMN, DocumentSource
    from topiclink.data.time_split import split_by_time
    from topiclink.datasets.hepth import HEPTH_FILES, hepth_kdd_split

    folder = shared_datasets / "hepth"
    if not all((folder / f).is_file() for f in HEPTH_FILES):
        pytest.skip(f"hep-th files not in {folder}")
    docs, edges = _hepth_as_plain_files(folder, tmp_path)

    # the paper's split (cutoff January 2002), through the command line's own loader
    source = DocumentSource(documents=docs, edges=edges, id_column="id",
                            text_column="abstract", title_column="title",
                            time_column="month", time_format="yymm", id_rule="zero-pad:7",
                            stemmer="english", min_df=2)
    ds = source.load(fit_before=2002.0)
    plain = split_by_time(ds.corpus, ds.links, ds.corpus.metadata[TIME_COLUMN].to_numpy(),
                          2002.0, train_vocabulary=False)
    tar = hepth_kdd_split(folder)
    assert (plain.n_train, plain.train_links.n_links, plain.n_test,
            plain.test_citations.nnz) == (25224, 271838, 4064, 60914)
    np.testing.assert_array_equal(plain.train_corpus.doc_ids, tar.train_corpus.doc_ids)
    np.testing.assert_array_equal(plain.test_corpus.doc_ids, tar.test_corpus.doc_ids)
    np.testing.assert_array_equal(plain.train_corpus.vocabulary, tar.train_corpus.vocabulary)
    assert (plain.train_corpus.counts != tar.train_corpus.counts).nnz == 0
    assert (plain.test_corpus.counts != tar.test_corpus.counts).nnz == 0
    assert (plain.test_citations != tar.test_citations).nnz == 0
    np.testing.assert_array_equal(plain.train_links.source, tar.train_links.source)
    np.testing.assert_array_equal(plain.train_links.target, tar.train_links.target)
    np.testing.assert_array_equal(plain.train_times, tar.train_times)

    # the same ranks, fitted: the two years before 1994 train, 1994's papers are tested
    common = ("--split", "time", "--cutoff", "1994-01", "--models", "LMVS(t),RTM",
              "--topics", "5", "--eta", "0.5", "--max-iter", "2", "--quiet")
    tables = []
    for name, args in (("plain", ["--documents", str(docs), "--edges", str(edges),
                                  *FRONT_DOOR]),
                       ("tar", ["--dataset", "hepth", "--data", str(folder)])):
        out = tmp_path / name
        result = runner.invoke(app, ["experiment", "lmv", *args, *common, "-o", str(out)])
        assert result.exit_code == 0, result.output
        tables.append(pd.read_csv(out / "lmv_kdd_results.csv"))
    cols = ["model", "n_train", "n_test", "n_test_citations", "predictive_rank", "n_iter"]
    pd.testing.assert_frame_equal(tables[0][cols], tables[1][cols])
    assert (tables[0]["improvement"] > 0.3).all(), tables[0]
