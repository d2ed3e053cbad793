"""A user's own files without silent loss or guessing (issue 42, item 8).

* Documents dropped without any vocabulary word (empty texts) and the links they take
  with them count against the same limit as edges naming unknown ids (``max_lost`` /
  ``--max-lost``): above it one line naming the counts, example ids and the value that
  accepts the loss; below it one warning with the counts.
* Prefixed ids (``hep-th/440`` vs ``hep-th/0440``) are matched by an explicit rule,
  ``after-slash:strip-zeros``, which the error message proposes and never applies.
* A header line on an edge list is detected (one log line), or declared either way.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from topiclink.cli.app import app
from topiclink.data import DataError, linked_corpus, normalize_ids, read_documents, read_edges
from topiclink.data.ids import id_normalizer, suggest_id_rule

runner = CliRunner()

WORDS = ("strings branes duality gauge", "citations graph networks links")

#: documents d0..d9: d3, d4 have an empty text, d5 only stop words
TEXTS = {3: "", 4: "   ", 5: "the of and"}
#: 10 edges, 4 of them touch d3, d4 or d5: (3, 0), (4, 3), (5, 1), (6, 5)
EDGES = [(1, 0), (2, 0), (2, 1), (3, 0), (4, 3), (5, 1), (6, 5), (7, 6), (8, 7), (9, 8)]


def _write(path: Path, text: str, newline: str = "\n", bom: bool = False) -> Path:
    data = text.replace("\n", newline).encode("utf-8")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    return path


def _documents(path: Path, ids: list[str] | None = None) -> Path:
    ids = ids or [f"d{i}" for i in range(10)]
    rows = ["id,abstract"] + [f"{d},{TEXTS.get(i, WORDS[i % 2])}" for i, d in enumerate(ids)]
    return _write(path, "\n".join(rows) + "\n")


def _edges(path: Path, pairs=EDGES, names: list[str] | None = None, sep: str = " ",
           extra: str = "") -> Path:
    names = names or [f"d{i}" for i in range(10)]
    return _write(path, "".join(f"{names[a]}{sep}{names[b]}\n" for a, b in pairs) + extra)


def _error_line(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error: "), result.output
    return lines[-1]


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


# ---------------------------------------------------------------------- lost links
def test_links_of_dropped_documents_count_against_the_limit(tmp_path):
    docs = read_documents(_documents(tmp_path / "p.csv"), text_column="abstract")
    edges = read_edges(_edges(tmp_path / "e.txt"))
    with pytest.raises(DataError) as info:
        linked_corpus(docs, edges)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{docs.source}: 4 of 10 edges (40.0%) would be lost, more "
                              "than max_lost=1.0%: dropped 3 of 10 documents (30.0%) "
                              "without any vocabulary word (2 with an empty text; e.g. "
                              "'d3', 'd4', 'd5') and their 4 links")
    assert message.endswith("pass max_lost=0.4 to drop them")
    with pytest.raises(DataError, match="4 of 10 edges"):
        linked_corpus(docs, edges, max_lost=0.39)
    with pytest.raises(TypeError, match="max_unknown"):   # no former name
        linked_corpus(docs, edges, max_unknown=0.3)
    # kept aligned: nothing is lost
    assert linked_corpus(docs, edges, drop_empty=False).report["links_lost"] == 0


def test_below_the_limit_one_warning_names_the_counts(tmp_path, caplog):
    docs = read_documents(_documents(tmp_path / "p.csv"), text_column="abstract")
    edges = read_edges(_edges(tmp_path / "e.txt"))
    with caplog.at_level(logging.INFO, logger="topiclink"):
        lc = linked_corpus(docs, edges, max_lost=0.4)
    assert lc.corpus.n_docs == 7 and lc.links.n_links == 6
    assert {k: lc.report[k] for k in ("empty_documents", "empty_texts",
                                      "links_of_empty_documents", "links_lost")} == \
        {"empty_documents": 3, "empty_texts": 2, "links_of_empty_documents": 4,
         "links_lost": 4}
    assert _warnings(caplog) == [
        f"{docs.source}: dropped 3 of 10 documents (30.0%) without any vocabulary word (2 "
        "with an empty text; e.g. 'd3', 'd4', 'd5') and their 4 links: lost 4 of 10 edges "
        "(40.0%, max_lost=40.0%)"]


def test_unknown_ids_and_dropped_documents_share_one_limit(tmp_path, caplog):
    docs = read_documents(_documents(tmp_path / "p.csv"), text_column="abstract")
    edges = read_edges(_edges(tmp_path / "e.txt", extra="d9 x99\n"))
    # 1 of 11 unknown (9.1%) is within 20%, with the 4 links of the dropped documents
    # 5 of 11 (45.5%) is not
    with pytest.raises(DataError) as info:
        linked_corpus(docs, edges, max_lost=0.2)
    message = str(info.value)
    assert "5 of 11 edges (45.5%) would be lost, more than max_lost=20.0%" in message
    assert "and their 4 links, and 1 edges naming 1 ids that are not documents (e.g. " \
        "'x99')" in message and "max_lost=0.46" in message
    with caplog.at_level(logging.WARNING, logger="topiclink"):
        lc = linked_corpus(docs, edges, max_lost=0.46)
    assert lc.report["unknown_id_edges"] == 1 and lc.report["links_lost"] == 5
    assert len(_warnings(caplog)) == 1 and "lost 5 of 11 edges" in _warnings(caplog)[0]


def test_documents_without_edges_are_counted_without_a_limit(tmp_path, caplog):
    from topiclink.data import EdgeList

    docs = read_documents(_documents(tmp_path / "p.csv"), text_column="abstract")
    none = np.zeros(0, dtype=str)
    with caplog.at_level(logging.WARNING, logger="topiclink"):
        lc = linked_corpus(docs, EdgeList(none, none, np.zeros(0, dtype=np.int64)))
    assert lc.corpus.n_docs == 7
    assert len(_warnings(caplog)) == 1
    assert "dropped 3 of 10 documents (30.0%) without any vocabulary word" in \
        _warnings(caplog)[0]


# ---------------------------------------------------------------------- id rules
def test_after_slash_rules_match_prefixed_ids():
    ids = ["hep-th/0440", "hep-th/440", "0440", "a/b/007", "hep-th/04x0", "hep-th/"]
    assert normalize_ids(ids, "after-slash:strip-zeros").tolist() == [
        "hep-th/440", "hep-th/440", "440", "a/b/7", "hep-th/04x0", "hep-th/"]
    assert normalize_ids(["hep-th/440", "hep-th/9201001"], "after-slash:zero-pad:7"
                         ).tolist() == ["hep-th/0000440", "hep-th/9201001"]
    assert normalize_ids(["HEP-TH/0440"], "lower+after-slash:strip-zeros").tolist() == \
        ["hep-th/440"]
    assert normalize_ids(["HEP-TH/X"], "after-slash:lower").tolist() == ["HEP-TH/x"]
    # the plain rules keep their meaning: an id with other characters is left alone
    assert normalize_ids(["hep-th/0440"], "strip-zeros").tolist() == ["hep-th/0440"]
    for bad in ("after-slash:", "after-slash:pad", "after-slash:after-slash:lower",
                "lower+", "zero-pad:0"):
        with pytest.raises(ValueError, match="normalize_ids"):
            id_normalizer(bad)


@pytest.mark.parametrize("rule", ["zero-pad:7", "strip-zeros", "lower",
                                  "after-slash:strip-zeros", "after-slash:zero-pad:4",
                                  "lower+after-slash:strip-zeros", "strip-zeros+zero-pad:3"])
def test_every_rule_string_is_idempotent(rule):
    ids = ["0001001", "1001", "HEP-TH/0440", "hep-th/440", "a/007", "x", "000", "ab/"]
    once = normalize_ids(ids, rule)
    assert normalize_ids(once, rule).tolist() == once.tolist()


def test_a_rule_is_suggested_never_applied(tmp_path):
    docs = ["hep-th/0440", "hep-th/0441", "hep-th/0442"]
    assert suggest_id_rule(docs, ["hep-th/440", "hep-th/441", "nope"]) == \
        ("after-slash:strip-zeros", 2, 3)
    assert suggest_id_rule(["0001001", "0001002"], ["1001"]) == ("zero-pad:7", 1, 1)
    assert suggest_id_rule(docs, ["elsewhere/1"]) is None
    names = [f"hep-th/{i + 440:04d}" for i in range(10)]
    path = _documents(tmp_path / "p.csv", ids=names)
    table = read_documents(path, text_column="abstract")
    edges = read_edges(_edges(tmp_path / "e.txt", names=[f"hep-th/{i + 440}"
                                                         for i in range(10)]))
    with pytest.raises(DataError, match=r"10 of 10 edges \(100.0%, more than max_lost=1.0%\) "
                                        r"name 10 ids that are not documents.*pass "
                                        r"normalize_ids='after-slash:strip-zeros' \(it "
                                        r"matches 10 of 10 of these ids\)"):
        linked_corpus(table, edges)
    lc = linked_corpus(table, edges, normalize_ids="after-slash:strip-zeros", max_lost=0.4)
    assert lc.report["unknown_id_edges"] == 0 and lc.links.n_links == 6
    assert lc.corpus.doc_ids.tolist()[:2] == ["hep-th/440", "hep-th/441"]


def test_a_rule_that_merges_two_documents_is_refused(tmp_path):
    path = _write(tmp_path / "p.csv", "id,text\nhep-th/0440,gauge\nhep-th/440,branes\n")
    edges = read_edges(_write(tmp_path / "e.txt", "hep-th/440 hep-th/0440\n"))
    with pytest.raises(DataError, match=r"makes ids 'hep-th/0440' and 'hep-th/440' \(rows 0 "
                                        r"and 1\) the same id 'hep-th/440'"):
        linked_corpus(read_documents(path), edges, normalize_ids="after-slash:strip-zeros")


def test_the_hepth_case_zero_padding_after_the_prefix(tmp_path):
    """SNAP's hep-th writes 1001 for paper 0001001; with the archive prefix too."""
    path = _write(tmp_path / "p.csv", "id,text\nhep-th/0001001,gauge\nhep-th/9201001,gauge\n")
    edges = read_edges(_write(tmp_path / "e.txt", "hep-th/1001 hep-th/9201001\n"),
                       normalize_ids="after-slash:zero-pad:7")
    assert edges.source.tolist() == ["hep-th/0001001"]
    lc = linked_corpus(read_documents(path), edges, normalize_ids="after-slash:zero-pad:7")
    assert lc.links.pairs.tolist() == [[0, 1]]


# ---------------------------------------------------------------------- edge-list headers
IDS = [f"d{i}" for i in range(10)]


@pytest.mark.parametrize("text, known, expected_names, first_line", [
    ("citing,cited\nd1,d0\nd2,d0\n", None, ["citing", "cited"], 2),
    ("Source , Target\nd1,d0\nd2,d0\n", IDS, ["Source", "Target"], 2),
    ('"citing_paper_id","cited_paper_id"\nd1,d0\nd2,d0\n', None,
     ["citing_paper_id", "cited_paper_id"], 2),
    ("# a comment\n\nfrom,to\nd1,d0\nd2,d0\n", None, ["from", "to"], 4),
    ("PaperA,PaperB\nd1,d0\nd2,d0\n", IDS, ["PaperA", "PaperB"], 2),   # not ids, below ids
    ("alpha,beta\nd1,d0\nd2,d0\n", None, ["alpha", "beta"], 2),        # no digits
    ("d1,d0\nd2,d0\nd3,d0\n", IDS, None, 1),                             # no header
    ("citing,cited\nd1,d0\n", ["citing", "cited", "d0", "d1"], None, 1),  # names are ids
])
def test_a_header_line_is_detected(tmp_path, caplog, text, known, expected_names,
                                   first_line):
    for name, kwargs in (("lf.csv", {}), ("crlf-bom.csv", {"newline": "\r\n", "bom": True})):
        path = _write(tmp_path / name, text, **kwargs)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="topiclink"):
            edges = read_edges(path, known_ids=known)
        assert edges.header == expected_names
        assert int(edges.lines[0]) == first_line
        said = [r.getMessage() for r in caplog.records if "as a header line" in r.getMessage()]
        assert len(said) == (expected_names is not None)
        assert not _warnings(caplog)


def test_a_header_is_declared_either_way(tmp_path):
    # a header whose names are document ids (pandas writes '0,1' over integer columns):
    # read as an edge unless declared
    path = _write(tmp_path / "e.csv", "0,1\n2,0\n2,1\n")
    assert len(read_edges(path, known_ids=["0", "1", "2"])) == 3
    declared = read_edges(path, header=True, known_ids=["0", "1", "2"])
    assert len(declared) == 2 and declared.header == ["0", "1"]
    named = _write(tmp_path / "n.csv", "citing,cited\nd1,d0\n")
    edges = read_edges(named, header=False)
    assert edges.source.tolist() == ["citing", "d1"] and edges.header is None


def test_a_single_line_file(tmp_path):
    with pytest.raises(DataError, match=r"only.csv: no edges found: its only line, line 1 "
                                        r"\('source target'\), reads as a header \(column "
                                        r"names\); pass header=False"):
        read_edges(_write(tmp_path / "only.csv", "source,target\n"))
    assert len(read_edges(_write(tmp_path / "one.csv", "source,target\n"), header=False)) == 1
    assert read_edges(_write(tmp_path / "edge.csv", "d1,d0\n")).source.tolist() == ["d1"]


def test_the_id_rule_applies_when_telling_a_header_from_an_edge(tmp_path):
    # ids of the documents '0001', '0002', edges written '1 2': an edge under zero-pad:4
    path = _write(tmp_path / "e.txt", "1 2\n2 1\n")
    edges = read_edges(path, known_ids=["0001", "0002"], normalize_ids="zero-pad:4")
    assert len(edges) == 2 and edges.normalized_by == "zero-pad:4"


def test_a_detected_header_is_not_an_unknown_edge(tmp_path, caplog):
    docs = read_documents(_documents(tmp_path / "p.csv"), text_column="abstract")
    path = _write(tmp_path / "e.csv", "citing,cited\n" + "".join(f"d{a},d{b}\n"
                                                                for a, b in EDGES))
    edges = read_edges(path, known_ids=docs.ids)
    with caplog.at_level(logging.WARNING, logger="topiclink"):
        lc = linked_corpus(docs, edges, max_lost=0.4)
    assert lc.report["edges_read"] == 10 and lc.report["unknown_id_edges"] == 0
    assert not any("not documents" in w for w in _warnings(caplog))


# ---------------------------------------------------------------------- the command line
def _fit(docs: Path, edges: Path, *extra: str):
    return runner.invoke(app, ["fit", "rtm", "--documents", str(docs), "--edges", str(edges),
                               "--text-column", "abstract", "-k", "2", "-n", "1", *extra])


def test_cli_dropped_documents_stop_above_the_limit(tmp_path):
    docs, edges = _documents(tmp_path / "p.csv"), _edges(tmp_path / "e.txt")
    result = _fit(docs, edges, "--quiet")
    assert result.exit_code == 1
    line = _error_line(result)
    assert "4 of 10 edges (40.0%) would be lost, more than --max-lost 1.0%: dropped 3 of 10 " \
        "documents (30.0%) without any vocabulary word (2 with an empty text; e.g. 'd3', " \
        "'d4', 'd5') and their 4 links" in line
    assert line.endswith("pass --max-lost 0.4 to drop them")
    result = _fit(docs, edges, "--quiet", "--max-lost", "0.4")
    assert result.exit_code == 0, result.output
    assert "read 10 documents and 10 edges; dropped 3 documents without a vocabulary " \
        "word, 4 links of those documents; kept 7 documents, 6 links" in result.output
    assert "lost 4 of 10 edges (40.0%, max_lost=40.0%)" in result.output


def test_cli_prefixed_ids(tmp_path):
    names = [f"hep-th/{i + 440:04d}" for i in range(10)]
    docs = _documents(tmp_path / "p.csv", ids=names)
    edges = _edges(tmp_path / "e.txt", names=[f"hep-th/{i + 440}" for i in range(10)])
    result = _fit(docs, edges, "--quiet")
    assert result.exit_code == 1
    assert "pass --id-rule 'after-slash:strip-zeros' (it matches 10 of 10 of these ids)" in \
        _error_line(result)
    result = _fit(docs, edges, "--quiet", "--id-rule", "after-slash:strip-zeros",
                  "--max-lost", "0.4")
    assert result.exit_code == 0, result.output
    assert "read 10 documents and 10 edges; dropped 3 documents" in result.output


def test_cli_edge_list_header(tmp_path):
    docs = _documents(tmp_path / "p.csv")
    edges = _write(tmp_path / "e.csv", "citing,cited\n" + "".join(
        f"d{a},d{b}\n" for a, b in EDGES), newline="\r\n", bom=True)
    result = _fit(docs, edges, "--max-lost", "0.4")
    assert result.exit_code == 0, result.output
    assert "e.csv:1: read 'citing cited' as a header line (neither is a document id, while " \
        "10 of the next 10 lines name two documents)" in result.output
    assert "read 10 documents and 10 edges (header line: citing, cited)" in result.output
    assert "not documents" not in result.output
    # declared not a header: an edge of two unknown ids (1 of 11 more), counted
    result = _fit(docs, edges, "--quiet", "--max-lost", "0.5", "--no-edges-header")
    assert result.exit_code == 0, result.output
    assert "read 10 documents and 11 edges; dropped 1 edges naming unknown ids" in \
        result.output
    # a header whose names are ids, declared
    ids = _write(tmp_path / "ids.csv", "d0,d1\n" + "".join(f"d{a},d{b}\n" for a, b in EDGES))
    result = _fit(docs, ids, "--quiet", "--max-lost", "0.4", "--edges-header")
    assert result.exit_code == 0, result.output
    assert "10 edges (header line: d0, d1)" in result.output
