"""Users' own documents + citations on the command line, and the text analyser saved
with the model (issue 23): ``fit lda|rtm|lmv|model --documents FILE --edges FILE ...``,
``suggest --text`` with the stored analyser, and the analyser's round trip in a model
file (``analyzer`` header member, no pickle)."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import topiclink
from tests.fuzz.cases_files import members, write
from topiclink.cli.app import app
from topiclink.data import Corpus, TextAnalyzer
from topiclink.families.lda.estimator import LDA

runner = CliRunner()

TOPICS = (("citations", "networks", "cited", "papers", "graph", "links"),
          ("gauge", "strings", "branes", "duality", "theory", "supersymmetry"),
          ("neural", "learning", "training", "models", "gradient", "layers"))


def _write_dirty_files(folder: Path, n: int = 36) -> tuple[Path, Path]:
    """A CSV of documents (BOM, CRLF, ids zero-padded to 4 digits, ISO dates, titles) and
    an edge list (CRLF, '#' comment, ids without their zeros: '12' is '0012'); documents
    cite older documents of their own topic."""
    rng = random.Random(0)
    docs = folder / "papers.csv"
    lines = ["\ufeffid,title,date,abstract"]
    for i in range(n):
        words = " ".join(rng.choice(TOPICS[i % 3]) for _ in range(25))
        lines.append(f"{i + 1:04d},Paper {i + 1},{2000 + i // 12}-{i % 12 + 1:02d}-15,{words}")
    docs.write_bytes("\r\n".join(lines).encode() + b"\r\n")
    edges = folder / "cites.txt"
    pairs = [(i + 1, j + 1) for i in range(n) for j in range(i)
             if i % 3 == j % 3 and rng.random() < 0.4]
    edges.write_bytes(("# citing cited\r\n" + "".join(f"{a}\t{b}\r\n" for a, b in pairs))
                      .encode())
    return docs, edges


def _fit_args(docs: Path, edges: Path, *extra: str) -> list[str]:
    return ["--documents", str(docs), "--edges", str(edges), "--text-column", "abstract",
            "--title-column", "title", "--id-rule", "zero-pad:4", "-k", "3", "-n", "3",
            "--quiet", *extra]


def _error_line(result) -> str:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error: "), result.output
    return lines[-1]


# ---------------------------------------------------------------------- the analyser
@pytest.fixture(scope="module")
def stemmed_lda(tmp_path_factory):
    texts = [" ".join(TOPICS[i % 3]) for i in range(12)]
    analyzer = TextAnalyzer(stemmer="english")
    counts = analyzer.fit_transform(texts)
    corpus = Corpus(counts, vocabulary=analyzer.vocabulary_)
    model = LDA(n_topics=3, max_iter=5, random_state=0).fit(corpus)
    return model.set_analyzer(analyzer), corpus


def test_the_analyser_is_saved_with_the_model_and_restored(stemmed_lda, tmp_path):
    model, corpus = stemmed_lda
    path = model.save(tmp_path / "lda.npz")
    header, _ = members(path)
    assert header["analyzer"] == model.analyzer_.to_dict()          # plain JSON
    loaded = topiclink.load(path)
    assert loaded.analyzer_.to_dict() == model.analyzer_.to_dict()
    text = ["Citations of cited papers: networks and their links"]
    assert np.array_equal(loaded.transform(text), model.transform(text))


def test_a_stemmed_word_of_new_text_is_matched(stemmed_lda, tmp_path):
    model, _ = stemmed_lda
    loaded = topiclink.load(model.save(tmp_path / "lda.npz"))
    queries = loaded.count_texts(["citations", "Citations unknownword"])
    column = list(loaded.vocabulary_).index("citat")
    assert queries.counts[:, column].toarray().ravel().tolist() == [1, 1]
    assert queries.n_tokens == 2 and loaded.analyzer_.last_unknown_ == 1
    # the same proportions as the counts of the stem
    stem = np.zeros((1, len(loaded.vocabulary_)), dtype=np.int64)
    stem[0, column] = 1
    assert np.allclose(loaded.transform(["citations"]), loaded.transform(stem))


def test_a_model_without_an_analyser_behaves_as_before(stemmed_lda, tmp_path):
    _, corpus = stemmed_lda
    model = LDA(n_topics=3, max_iter=5, random_state=0).fit(corpus)
    path = model.save(tmp_path / "plain.npz")
    assert "analyzer" not in members(path)[0]
    loaded = topiclink.load(path)
    assert getattr(loaded, "analyzer_", None) is None
    assert np.array_equal(loaded.transform(corpus), model.transform(corpus))
    with pytest.raises(TypeError, match="no text analyser"):
        loaded.transform(["citations"])


@pytest.mark.parametrize("edit, message", [
    (lambda a: {**a, "format": "pickle"}, "not a saved TextAnalyzer"),
    (lambda a: {**a, "version": 99}, "version 99"),
    (lambda a: {**a, "params": {**a["params"], "stemmer": "klingon"}}, "unknown stemmer"),
    (lambda a: {**a, "params": {**a["params"], "colour": 1}}, "unknown settings"),
    (lambda a: {**a, "vocabulary": a["vocabulary"][1:]}, "lacks 1 of the model's"),
    (lambda a: {**a, "vocabulary": None}, "not fitted"),
    (lambda a: "analyser", "not a saved TextAnalyzer"),
])
def test_a_tampered_analyser_is_a_one_line_error(stemmed_lda, tmp_path, edit, message):
    model, _ = stemmed_lda
    header, arrays = members(model.save(tmp_path / "lda.npz"))
    bad = write(tmp_path / "bad.npz", {**header, "analyzer": edit(header["analyzer"])},
                arrays)
    with pytest.raises(ValueError, match=message) as info:
        topiclink.load(bad)
    assert "saved text analyser" in str(info.value) and "\n" not in str(info.value)
    result = runner.invoke(app, ["info", str(bad)])
    assert result.exit_code == 1 and message.split()[0] in _error_line(result)


def test_set_analyzer_refuses_an_analyser_of_other_words(stemmed_lda, tmp_path):
    _, corpus = stemmed_lda
    model = LDA(n_topics=3, max_iter=2, random_state=0).fit(corpus)
    other = TextAnalyzer().fit(["entirely different words"])
    with pytest.raises(ValueError, match="lacks"):
        model.set_analyzer(other)
    with pytest.raises(TypeError, match="fitted TextAnalyzer"):
        model.set_analyzer({"format": "topiclink.TextAnalyzer"})
    # refitted on other words after set_analyzer: save refuses to write an unloadable file
    model.analyzer_ = other
    with pytest.raises(ValueError, match="lacks"):
        model.save(tmp_path / "stale.npz")
    assert not (tmp_path / "stale.npz").exists()


# ---------------------------------------------------------------------- the command line
def test_fit_lmv_with_times_then_suggest_end_to_end(tmp_path):
    """CSV of documents + edge list -> fit lmv --time-column -> suggest --text ranks the
    documents of the query's topic, with the model's analysis (stemming)."""
    docs, edges = _write_dirty_files(tmp_path)
    out = tmp_path / "lmv.npz"
    result = runner.invoke(app, ["fit", "lmv", *_fit_args(
        docs, edges, "--time-column", "date", "--time-format", "iso", "--stemmer",
        "english", "--n-jobs", "1", "--out", str(out))])
    assert result.exit_code == 0, result.output
    assert "read 36 documents and" in result.output and "dropped nothing" in result.output
    assert "model written to" in result.output
    model = topiclink.load(out)
    assert model.analyzer_.stemmer == "english" and "citat" in model.vocabulary_
    assert model.train_doc_ids_[0] == "0001" and model.train_titles_[0] == "Paper 1"
    result = runner.invoke(app, ["suggest", str(out), "--text",
                                 "Citations of the cited papers and their citation graph "
                                 "in flibbertigibbet", "--top", "5"])
    assert result.exit_code == 0, result.output
    assert "warning: 1 of the 6 words of the query (stop words aside) are not in the " \
        "model's vocabulary of 18 terms" in result.output
    rows = [line.split() for line in result.output.splitlines()
            if line.split()[:1] == ["0"]]
    assert [int(r[1]) for r in rows] == [1, 2, 3, 4, 5]
    # the ranked documents are papers of the citation topic (ids 1, 4, 7, ...)
    assert all(int(r[3]) % 3 == 1 for r in rows), result.output


def test_times_are_passed_to_lmv_and_a_newer_citation_is_named(tmp_path):
    docs, edges = _write_dirty_files(tmp_path)
    with edges.open("a") as f:
        f.write("1\t4\n")                    # 0001 (January 2000) cites 0004 (April)
    args = _fit_args(docs, edges, "--time-column", "date", "--time-format", "iso")
    result = runner.invoke(app, ["fit", "lmv", *args])
    assert result.exit_code == 1
    assert "newer" in _error_line(result) and "--newer-citations drop" in _error_line(result)
    assert "keep" not in _error_line(result)      # no such choice on the command line
    result = runner.invoke(app, ["fit", "lmv", *args, "--newer-citations", "drop"])
    assert result.exit_code == 0, result.output
    # the times follow the documents through a held-out split
    result = runner.invoke(app, ["fit", "lmv", *args, "--newer-citations", "drop",
                                 "--holdout", "0.2", "--n-jobs", "1"])
    assert result.exit_code == 0, result.output
    assert "link_auc" in result.output


def test_fit_rtm_lda_and_model_read_documents(tmp_path):
    docs, edges = _write_dirty_files(tmp_path)
    out = tmp_path / "rtm.npz"
    result = runner.invoke(app, ["fit", "rtm", *_fit_args(docs, edges, "-o", str(out))])
    assert result.exit_code == 0, result.output
    assert topiclink.load(out).analyzer_ is not None
    result = runner.invoke(app, ["fit", "lda", "--documents", str(docs), "--text-column",
                                 "abstract", "-k", "3", "-n", "3", "--quiet", "--min-df",
                                 "2", "--max-features", "10"])
    assert result.exit_code == 0, result.output
    assert "read 36 documents; dropped nothing; kept 36 documents, 10 terms" in result.output
    result = runner.invoke(app, ["fit", "model", "Gibbs-gRTM", *_fit_args(
        docs, edges, "--time-column", "date", "--time-format", "iso")])
    assert result.exit_code == 0, result.output
    assert "does not use publication times" in result.output


@pytest.mark.parametrize("args, expected", [
    (["fit", "rtm", "--documents", "{docs}"], "give the edge list with --edges"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--dataset", "cora"],
     "not both"),
    (["fit", "lmv", "--documents", "{missing}", "--edges", "{edges}"],
     "--documents file not found"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{missing}"],
     "--edges file not found"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--time-column", "date"],
     "needs --time-format"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--time-column", "date",
      "--time-format", "mmyy"], "unknown time_format 'mmyy'"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--id-rule", "pad"],
     "--id-rule: unknown rule 'pad'"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--edge-direction",
      "up"], "--edge-direction must be"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--stemmer", "xx"],
     "--stemmer must be"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--min-df", "0"],
     "--min-df must be >= 1"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--max-lost", "2"],
     "--max-lost must be a fraction"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--max-lost", "-1"],
     "--max-lost must be a fraction"),
    (["fit", "lmv", "--documents", "{docs}", "--edges", "{edges}", "--id-rule",
      "after-slash:pad"],
     "--id-rule: unknown rule 'after-slash:pad'"),
    (["fit", "lda", "--documents", "{docs}", "--no-edges-header"],
     "--no-edges-header describes --edges FILE, which was not given"),
    (["fit", "lda", "--dataset", "cora", "--max-lost", "0.5"],
     "--max-lost describes --documents FILE"),
    (["fit", "model", "SupervisedTopicModel", "--documents", "{docs}"],
     "this model learns from labels: name the column of each document's class with "
     "--label-column"),
    (["fit", "lda", "--dataset", "cora", "--id-rule", "zero-pad:7"],
     "--id-rule describes --documents FILE"),
])
def test_options_are_checked_before_any_data_is_read(tmp_path, monkeypatch, args, expected):
    import topiclink.data.io.documents as readers

    def never(*a, **k):
        raise AssertionError("data read before the options were checked")

    monkeypatch.setattr(readers, "read_documents", never)
    docs, edges = _write_dirty_files(tmp_path)
    paths = {"docs": docs, "edges": edges, "missing": tmp_path / "missing.csv"}
    result = runner.invoke(app, [a.format(**paths) for a in args])
    assert result.exit_code == 1, result.output
    assert expected in _error_line(result)


def test_bad_input_is_one_line_naming_what_and_where(tmp_path):
    docs, edges = _write_dirty_files(tmp_path)
    base = ["fit", "lmv", "--documents", str(docs), "--edges", str(edges), "--quiet"]
    # a missing column: the columns there are
    result = runner.invoke(app, [*base, "--text-column", "abstrct"])
    assert result.exit_code == 1
    assert "no text column 'abstrct' (columns: 'id', 'title', 'date', 'abstract')" \
        in _error_line(result)
    # unpadded ids in the edge list without --id-rule: every edge is unknown
    result = runner.invoke(app, [*base, "--text-column", "abstract"])
    assert result.exit_code == 1
    line = _error_line(result)
    assert "edges (100.0%, more than --max-lost 1.0%)" in line
    assert "e.g. '" in line and "--id-rule 'zero-pad:4'" in line
    # an unparsable date: its value and row
    text = docs.read_bytes().replace(b"2000-03-15", b"March 2000")
    docs.write_bytes(text)
    result = runner.invoke(app, [*base, "--text-column", "abstract", "--id-rule",
                                 "zero-pad:4", "--time-column", "date", "--time-format",
                                 "iso"])
    assert result.exit_code == 1
    assert "row 2 has value 'March 2000', not a 'iso' date; 1 of 36" in _error_line(result)


def test_unknown_ids_below_the_threshold_are_dropped_and_counted(tmp_path):
    docs, edges = _write_dirty_files(tmp_path)
    n_edges = sum(1 for line in edges.read_text().splitlines() if line[:1].isdigit())
    with edges.open("a") as f:
        f.write("1\t9999\n")
    args = _fit_args(docs, edges)
    result = runner.invoke(app, ["fit", "lmv", *args, "--max-lost", "0"])
    assert result.exit_code == 1 and f"1 of {n_edges + 1} edges" in _error_line(result)
    result = runner.invoke(app, ["fit", "lmv", *args, "--max-lost", "0.05"])
    assert result.exit_code == 0, result.output
    assert f"read 36 documents and {n_edges + 1} edges; dropped 1 edges naming unknown " \
        f"ids; kept 36 documents, {n_edges} links" in result.output


def _labelled_csv(path: Path, blank: int | None = None, one_class: bool = False) -> Path:
    rng = random.Random(1)
    lines = ["id,venue,abstract"]
    for i in range(40):
        venue = "" if i == blank else ("net" if one_class or i % 2 == 0 else "hep")
        words = " ".join(rng.choice(TOPICS[i % 2]) for _ in range(20))
        lines.append(f"{i},{venue},{words}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fit_slda_reads_labels_from_a_documents_column(tmp_path):
    """`fit slda --documents --label-column`: the classes are the column's names, saved
    with the model and its analyser; the documents of each venue are told apart."""
    docs = _labelled_csv(tmp_path / "p.csv")
    out = tmp_path / "m.npz"
    result = runner.invoke(app, ["fit", "slda", "--documents", str(docs), "--text-column",
                                 "abstract", "--label-column", "venue", "-k", "2", "-n",
                                 "30", "--quiet", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "training accuracy 1.000" in result.output
    model = topiclink.load(out)
    assert model.classes_.tolist() == ["hep", "net"]
    assert model.predict(["gauge strings branes duality", "citations graph links"]
                         ).tolist() == ["hep", "net"]


@pytest.mark.parametrize("case, message", [
    ("no-column", "this model learns from labels: name the column of each document's "
                  "class with --label-column"),
    ("blank", "1 of 40 documents have no label in column 'venue' (e.g. 5)"),
    ("one-class", "column 'venue' holds one class ('net')"),
    ("bad-column", "venu"),
])
def test_bad_labels_are_one_line(tmp_path, case, message):
    docs = _labelled_csv(tmp_path / "p.csv", blank=5 if case == "blank" else None,
                         one_class=case == "one-class")
    args = ["fit", "slda", "--documents", str(docs), "--text-column", "abstract", "-k", "2",
            "-n", "3", "--quiet"]
    if case != "no-column":
        args += ["--label-column", "venu" if case == "bad-column" else "venue"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert message in _error_line(result)
