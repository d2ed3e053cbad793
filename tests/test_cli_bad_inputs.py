"""The command line and the readers of users' files on the inputs an external fuzz run
found mishandled (issue 40): ``info`` on every model class, every seed option and every
file or folder option checked on one line, text files split at newlines only, files
that are not UTF-8 refused, and valid data folders accepted (a LINQS folder without
links for an LDA, triples without held-out splits or with a count column)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.fuzz.cases_cli import (
    command_tree,
    path_parameters,
    required_arguments,
    seed_flags,
)
from tests.fuzz.cases_models import fitted, names
from topiclink.cli.app import app

runner = CliRunner()

#: every character :meth:`str.splitlines` ends a line at, but the newline
LINE_LIKE = ("\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
WORDS = ("graph citation network topic model words linked data bayesian inference sampler "
         "gibbs paper author journal review").split()


def _texts(n: int, per: int = 6, offset: int = 0) -> list[str]:
    return [" ".join(WORDS[(i + j + offset) % len(WORDS)] for j in range(per))
            for i in range(n)]


def _error_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def _one_line_error(result, *says: str, code: int = 1) -> str:
    lines = _error_lines(result)
    assert result.exit_code == code, (result.exit_code, result.output)
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    for word in says:
        assert word in lines[0], (word, lines[0])
    return lines[0]


# ---------------------------------------------------------------------- info
@pytest.mark.parametrize("name", names())
def test_info_describes_a_model_of_every_registered_class(tmp_path, name):
    path = fitted(name).save(tmp_path / f"{name}.npz")
    plain = runner.invoke(app, ["info", str(path)])
    assert plain.exit_code == 0, plain.output
    assert f"class: {name}(" in plain.stdout
    one = runner.invoke(app, ["info", str(path), "--words", "1"])
    five = runner.invoke(app, ["info", str(path), "--words", "5"])
    assert one.exit_code == 0 and five.exit_code == 0, (one.output, five.output)
    assert one.stdout != five.stdout, "--words changes nothing"
    _one_line_error(runner.invoke(app, ["info", str(path), "--words", "0"]), "--words")


def test_info_words_lists_the_top_entities_of_each_bpbfm_factor(tmp_path):
    path = fitted("BilinearPoissonFactorModel").save(tmp_path / "bpbfm.npz")
    for words in (1, 3):
        result = runner.invoke(app, ["info", str(path), "--words", str(words)])
        assert result.exit_code == 0, result.output
        factors = [line for line in result.stdout.splitlines() if line.startswith("factor ")]
        assert factors
        for line in factors:
            listed = line.split(": ", 1)[1]
            assert listed.count(" (") == words, line


# ---------------------------------------------------------------------- every command
def test_every_seed_option_of_every_command_refuses_a_negative_seed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    checked, wrong = [], []
    for path, cmd in command_tree():
        for flag in seed_flags(cmd):
            result = runner.invoke(app, [*path, *required_arguments(cmd), flag, "-1"])
            lines = _error_lines(result)
            if not (result.exit_code == 2 and len(lines) == 1
                    and lines[0].startswith("error: ") and flag in lines[0]
                    and "an integer >= 0" in lines[0]):
                wrong.append((path, flag, result.exit_code, lines))
            checked.append(path)
    assert not wrong, wrong
    # every fit and experiment command, evaluate and demo
    assert {("evaluate",), ("demo",), ("fit", "lda"), ("fit", "model"), ("fit", "bpbfm"),
            ("experiment", "bpbfm"), ("experiment", "ktm")} <= set(checked)
    assert len(checked) >= 19
    assert not list(tmp_path.iterdir())


def test_every_file_and_folder_option_refuses_an_empty_name(tmp_path, monkeypatch):
    """``--out ''`` (and every other path option or argument) is one line, exit 2, and
    nothing is written into the current folder (an empty name used to be read as it)."""
    monkeypatch.chdir(tmp_path)
    checked, wrong = [], []
    for path, cmd in command_tree():
        for flag, is_argument in path_parameters(cmd):
            rest = required_arguments(cmd, skip=flag if is_argument else None)
            for blank in ("", " "):
                args = [*path, blank, *rest] if is_argument else [*path, *rest, flag, blank]
                result = runner.invoke(app, args)
                lines = _error_lines(result)
                if not (result.exit_code == 2 and len(lines) == 1
                        and lines[0].startswith("error: ") and "empty name" in lines[0]):
                    wrong.append((args, result.exit_code, lines))
            checked.append((path, flag))
    assert not wrong, wrong[:5]
    outs = {path for path, flag in checked if flag == "--out"}
    assert {("experiment", name) for name in ("bpbfm", "ktm", "grtm", "slda", "lmv",
                                              "lmv-simulation")} <= outs
    assert {("fit", "lda"), ("evaluate",), ("report",), ("demo",)} <= outs
    assert len(checked) >= 80
    assert not list(tmp_path.iterdir()), sorted(p.name for p in tmp_path.iterdir())


# ---------------------------------------------------------------------- text files
def test_text_lines_end_at_newlines_only():
    from topiclink.data.io import text_lines

    text = "".join(f"a{sep}b\n" for sep in LINE_LIKE) + "c\r\nd\re\n\nlast"
    assert text_lines(text) == [f"a{sep}b" for sep in LINE_LIKE] + ["c", "d\re", "", "last"]
    assert text_lines("") == [] and text_lines("\n") == [""]
    assert len(text.splitlines()) > len(text_lines(text))   # what it replaces


def _separated_lines(path: Path, n: int = 12) -> Path:
    left, right = _texts(n, 3), _texts(n, 3, offset=5)
    seps = ("\f", "\u2028")
    path.write_text("".join(f"{a}{seps[i % 2]}{b}{seps[(i + 1) % 2]}graph\n"
                            for i, (a, b) in enumerate(zip(left, right, strict=True))),
                    encoding="utf-8")
    return path


def test_twelve_lines_with_form_feeds_and_line_separators_are_twelve_documents(tmp_path):
    from topiclink.cli.common import load_input
    from topiclink.estimators.base import load

    path = _separated_lines(tmp_path / "docs.txt")
    assert len(path.read_text(encoding="utf-8").splitlines()) == 36   # what went wrong
    assert load_input(path, None).n_docs == 12
    out = tmp_path / "lda.npz"
    result = runner.invoke(app, ["fit", "lda", "--input", str(path), "-k", "2", "-n", "2",
                                 "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    assert load(out).doc_topic_.shape == (12, 2)


@pytest.fixture(scope="module")
def words_rtm(tmp_path_factory) -> Path:
    """A relational topic model of :data:`WORDS` (queries of those words are known)."""
    from topiclink.data import Links
    from topiclink.data.io import corpus_from_texts
    from topiclink.estimators.base import registered_estimators

    corpus = corpus_from_texts(_texts(30), min_df=1)
    links = Links.from_pairs(np.array([(i, (i + 1) % 30) for i in range(30)]), 30)
    model = registered_estimators()["RelationalTopicModel"](n_topics=2, max_iter=3,
                                                            random_state=0)
    return model.fit(corpus, links=links).save(tmp_path_factory.mktemp("rtm") / "rtm.npz")


def test_twelve_query_lines_with_form_feeds_and_line_separators_are_twelve_queries(
        tmp_path, words_rtm):
    path = _separated_lines(tmp_path / "queries.txt")
    result = runner.invoke(app, ["suggest", str(words_rtm), "--file", str(path), "--top",
                                 "1"])
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()]
    assert rows[0][:2] == ["query", "rank"]
    assert sorted(int(row[0]) for row in rows[1:]) == list(range(12))


ENCODINGS = {
    "latin1": (b"graph network\ncaf\xe9 graph\n", ":2:", "not valid UTF-8 text (byte 0xe9 "
               "at byte offset 17)"),
    "nul": (b"graph network\ngra\x00ph\n", ":2:", "NUL byte at byte offset 17"),
    "utf16": ("graph network\n".encode("utf-16"), ":1:", "NUL byte"),
}


@pytest.mark.parametrize("label", sorted(ENCODINGS))
def test_a_query_file_that_is_not_utf8_is_refused_naming_file_line_and_offset(
        tmp_path, words_rtm, label):
    raw, line, what = ENCODINGS[label]
    path = tmp_path / f"{label}.txt"
    path.write_bytes(raw)
    _one_line_error(runner.invoke(app, ["suggest", str(words_rtm), "--file", str(path)]),
                    f"{path}{line}", what, "--file")
    _one_line_error(runner.invoke(app, ["fit", "lda", "--input", str(path), "-k", "2",
                                        "-n", "1", "-q"]), f"{path}{line}", what, "--input")


def test_read_text_lines_refuses_what_is_not_utf8_text(tmp_path):
    from topiclink.data.checks import DataError
    from topiclink.data.io import read_text_lines

    path = tmp_path / "x.txt"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\x0cstill two\n")
    assert read_text_lines(path) == ["one", "two\x0cstill two"]
    path.write_bytes(b"ok\nno\xff\n")
    with pytest.raises(DataError, match=r"x\.txt:2: not valid UTF-8 text \(byte 0xff at "
                                        r"byte offset 5\)"):
        read_text_lines(path)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_text_lines(tmp_path / "none.txt")


# ---------------------------------------------------------------------- data folders
def _linqs(folder: Path, cites: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [f"d{i}\t" + "\t".join("1" if (i + j) % 3 == 0 else "0" for j in range(6))
            + f"\t{'ab'[i % 2]}" for i in range(8)]
    (folder / "toy.content").write_text("\n".join(rows) + "\n")
    (folder / "toy.cites").write_text(cites)
    return folder


@pytest.mark.parametrize("cites", ["", "\n \n"])
def test_a_linqs_folder_without_links_fits_an_lda_and_is_refused_by_a_links_model(
        tmp_path, cites, caplog):
    from topiclink.datasets import load_dataset

    folder = _linqs(tmp_path / "toy", cites)
    with caplog.at_level(logging.WARNING, logger="topiclink"):
        ds = load_dataset(data_dir=folder)
    assert ds.corpus.n_docs == 8 and ds.links.n_links == 0
    assert "toy.cites: no links" in caplog.text
    lda = runner.invoke(app, ["fit", "lda", "--data", str(folder), "-k", "2", "-n", "1"])
    assert lda.exit_code == 0, lda.output
    assert "no links" in lda.stderr                     # the logged warning
    for command in ("rtm", "lmv"):     # the reader's warning is not shown before it
        for data in (["--dataset", "linqs", "--data", str(folder)], ["--data", str(folder),
                                                                      "-q"]):
            _one_line_error(runner.invoke(app, ["fit", command, *data, "-k", "2", "-n",
                                                "1"]), "has no links")


def _folder(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


TRIPLES = "a\tr\tb\nb\tr\tc\nc\ts\ta\nb\ts\ta\n"


def test_a_triples_folder_without_held_out_splits_is_read_and_logged(tmp_path, caplog):
    from topiclink.datasets import load_dataset

    only = _folder(tmp_path / "only", {"train.txt": TRIPLES})
    with caplog.at_level(logging.INFO, logger="topiclink"):
        ds = load_dataset(data_dir=only)
    assert {s: t.n_entries for s, t in ds.tensor.items()} == {"train": 4}
    assert "valid.txt is missing, test.txt is missing" in caplog.text
    caplog.clear()
    empty = _folder(tmp_path / "empty", {"train.txt": TRIPLES, "valid.txt": "",
                                         "test.txt": "\n\n"})
    with caplog.at_level(logging.INFO, logger="topiclink"):
        ds = load_dataset(data_dir=empty)
    assert {s: t.n_entries for s, t in ds.tensor.items()} == {"train": 4, "valid": 0,
                                                               "test": 0}
    assert ds.tensor["test"].entity_names.tolist() == ["a", "b", "c"]
    assert "valid.txt holds no triple, test.txt holds no triple" in caplog.text
    result = runner.invoke(app, ["fit", "bpbfm", "--data", str(empty), "-k", "2", "-n",
                                 "2", "-q"])
    assert result.exit_code == 0, result.output
    assert "4 train triples" in result.stdout
    bad = _folder(tmp_path / "no-train", {"train.txt": "", "test.txt": TRIPLES})
    with pytest.raises(ValueError, match=r"train\.txt: no triples"):
        load_dataset("triples", data_dir=bad)


def test_a_fourth_column_of_counts_is_read_as_counts_and_fitted(tmp_path):
    from topiclink.datasets import load_dataset
    from topiclink.estimators.base import load

    counts = "a\tr\tb\t2\nb\tr\tc\t1\nc\ts\ta\t3\nb\ts\ta\t1\n"
    folder = _folder(tmp_path / "counts", {"train.txt": counts})
    values = load_dataset(data_dir=folder).tensor["train"].values
    assert sorted(values.tolist()) == [1.0, 1.0, 2.0, 3.0]
    out = tmp_path / "bpbfm.npz"
    result = runner.invoke(app, ["fit", "bpbfm", "--data", str(folder), "-k", "2", "-n",
                                 "2", "-q", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert not bool(load(out).binary_)                  # a model of counts, not 0/1


@pytest.mark.parametrize(("text", "says"), [
    ("a\tr\tb\t2\nb\tr\tc\tmany\n", ("train.txt:2", "'many' (4th field) is not a number")),
    ("a\tr\tb\t-1\n", ("train.txt:1", "negative")),
    ("a\tr\tb\t1.5\n", ("train.txt:1", "not an integer")),
])
def test_a_fourth_column_that_is_not_a_count_is_refused_naming_file_and_line(
        tmp_path, text, says):
    folder = _folder(tmp_path / "kg", {"train.txt": text})
    _one_line_error(runner.invoke(app, ["fit", "bpbfm", "--data", str(folder), "-k", "2",
                                        "-n", "2", "-q"]), *says)
