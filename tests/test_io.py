"""Readers of topiclink.data.io on small files written to tmp_path."""

from __future__ import annotations

import gzip
import io
import logging
import struct
import tarfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from topiclink.data.checks import DataError
from topiclink.data.io import (
    DataFileNotFoundError,
    corpus_from_newsgroups_tar,
    corpus_from_texts,
    default_vectorizer,
    lda_link_pairs,
    read_lda_documents,
    read_linqs,
    read_linqs_dir,
    read_newsgroups_tar,
    read_rda_object,
    read_triples,
    read_triples_archive,
    read_uci_bow,
)
from topiclink.data.io.rda import _fast_read_rda

# ---------------------------------------------------------------------- LINQS

CONTENT = [
    ("p1", "1 0 1 0", "A"),
    ("p2", "0 1 0 0", "B"),
    ("p3", "1 1 1 1", "A"),
    ("p4", "0 0 0 0", "C"),
]


def _content(path: Path, rows=CONTENT, sep: str = "\t") -> Path:
    lines = [sep.join([i, *v.split(), lab]) for i, v, lab in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def _cites(path: Path, pairs, sep: str = "\t") -> Path:
    path.write_text("".join(f"{a}{sep}{b}\n" for a, b in pairs))
    return path


def test_linqs_reads_counts_labels_and_direction(tmp_path):
    c = _content(tmp_path / "x.content")
    # "<cited> <citing>": p2 cites p1, p3 cites p1, p1 cites p4
    k = _cites(tmp_path / "x.cites", [("p1", "p2"), ("p1", "p3"), ("p4", "p1")])
    corpus, links, labels = read_linqs(c, k)
    assert corpus.n_docs == 4 and corpus.n_words == 4
    assert corpus.vocabulary.tolist() == ["word_0", "word_1", "word_2", "word_3"]
    assert corpus.doc_ids.tolist() == ["p1", "p2", "p3", "p4"]
    np.testing.assert_array_equal(corpus.counts.toarray(),
                                  [[1, 0, 1, 0], [0, 1, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]])
    assert labels.tolist() == ["A", "B", "A", "C"]
    assert corpus.metadata["label"].tolist() == ["A", "B", "A", "C"]
    assert links.directed
    # source = citing (second column), target = cited (first column)
    assert links.pairs.tolist() == [[1, 0], [2, 0], [0, 3]]


def test_linqs_space_separated_cites_and_content(tmp_path):
    c = _content(tmp_path / "x.content", sep=" ")
    k = _cites(tmp_path / "x.cites", [("p1", "p2")], sep=" ")
    corpus, links, _ = read_linqs(c, k)
    assert corpus.n_words == 4 and links.pairs.tolist() == [[1, 0]]


def test_linqs_self_link_and_duplicate_dropped_with_log(tmp_path, caplog):
    c = _content(tmp_path / "x.content")
    k = _cites(tmp_path / "x.cites", [("p1", "p2"), ("p3", "p3"), ("p1", "p2"), ("p2", "p1")])
    caplog.set_level(logging.INFO, logger="topiclink")
    _, links, _ = read_linqs(c, k)
    assert links.pairs.tolist() == [[1, 0], [0, 1]]
    assert "dropped 1 self-links" in caplog.text
    assert "dropped 1 duplicate pairs" in caplog.text
    assert "x.cites" in caplog.text
    caplog.clear()
    _, links, _ = read_linqs(c, k, directed=False)
    assert links.pairs.tolist() == [[0, 1]]
    assert "dropped 2 duplicate pairs" in caplog.text


def test_linqs_error_policies_name_the_line(tmp_path):
    c = _content(tmp_path / "x.content")
    k = _cites(tmp_path / "x.cites", [("p1", "p2"), ("p3", "p3")])
    with pytest.raises(DataError, match=r"x\.cites:2: self-link"):
        read_linqs(c, k, self_links="error")
    k = _cites(tmp_path / "y.cites", [("p1", "p2"), ("p3", "p4"), ("p2", "p1")])
    read_linqs(c, k, duplicates="error")  # directed: no duplicate
    with pytest.raises(DataError, match=r"y\.cites:3: repeats the link of line 1"):
        read_linqs(c, k, directed=False, duplicates="error")


@pytest.mark.parametrize(("rows", "pattern"), [
    ([("p1", "1 0 1 0", "A"), ("p2", "0 1 0", "B")], r"x\.content:2: expected 6 columns"),
    ([("p1", "1 0 1 0", "A"), ("p2", "0 1 0 0 1", "B")], r"x\.content:2: expected 6 columns"),
    ([("p1", "1 0 1 0", "A"), ("p2", "0 1 2 0", "B")],
     r"x\.content:2: word column 2 has value '2'"),
    ([("p1", "1 0 1 0", "A"), ("p2", "0 1 0.5 0", "B")],
     r"x\.content:2: word column 2 has value '0\.5'"),
    ([("p1", "1 0 1 0", "A"), ("p2", "0 1 0 0", "B"), ("p1", "0 0 0 1", "A")],
     r"x\.content:3: duplicate document id 'p1' \(first at line 1\)"),
])
def test_linqs_content_errors(tmp_path, rows, pattern):
    c = _content(tmp_path / "x.content", rows=rows)
    k = _cites(tmp_path / "x.cites", [])
    with pytest.raises(DataError, match=pattern):
        read_linqs(c, k)


def test_linqs_content_two_columns(tmp_path):
    c = tmp_path / "x.content"
    c.write_text("p1\t1\t0\tA\n\np2\tB\n")
    with pytest.raises(DataError, match=r"x\.content:3: .*found 2 columns"):
        read_linqs(c, _cites(tmp_path / "x.cites", []))


def test_linqs_cites_errors(tmp_path):
    c = _content(tmp_path / "x.content")
    k = tmp_path / "x.cites"
    k.write_text("p1\tp2\np1\tp9\n")
    with pytest.raises(DataError, match=r"x\.cites:2: document id 'p9' is not in x\.content"):
        read_linqs(c, k, unknown_ids="error")
    with pytest.raises(ValueError, match="unknown_ids must be"):
        read_linqs(c, k, unknown_ids="skip")
    k.write_text("p1\tp2\n\np1 p2 p3\n")
    with pytest.raises(DataError, match=r"x\.cites:3: expected 2 columns"):
        read_linqs(c, k)


def _dangling_folder(folder: Path) -> Path:
    """A CiteSeer-like LINQS folder: 2 of 5 links name ids missing from .content."""
    folder.mkdir()
    _content(folder / "citeseer.content")
    # line 2: cited 'ghost' unknown; line 4: citing 'phantom' unknown
    _cites(folder / "citeseer.cites", [("p1", "p2"), ("ghost", "p3"), ("p4", "p1"),
                                       ("p2", "phantom"), ("p3", "p4")])
    return folder


def test_linqs_dangling_links_dropped_with_one_warning(tmp_path, caplog):
    folder = _dangling_folder(tmp_path / "citeseer")
    caplog.set_level(logging.WARNING, logger="topiclink")
    corpus, links, _ = read_linqs(folder / "citeseer.content", folder / "citeseer.cites")
    assert corpus.n_docs == 4
    assert links.pairs.tolist() == [[1, 0], [0, 3], [3, 2]]
    warnings_ = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings_) == 1
    msg = warnings_[0].getMessage()
    assert msg == ("citeseer.cites: dropped 2 links to 2 ids not in citeseer.content "
                   "(first: 'ghost', 'phantom')")


def test_linqs_dangling_links_in_loaders(tmp_path, caplog):
    from topiclink.datasets import load_dataset, load_folder

    folder = _dangling_folder(tmp_path / "citeseer")
    caplog.set_level(logging.WARNING, logger="topiclink")
    ds = load_dataset("linqs", data_dir=folder)
    assert ds.links.n_links == 3 and ds.corpus.n_docs == 4
    assert "dropped 2 links to 2 ids" in caplog.text
    _, links, _ = read_linqs_dir(folder)
    assert links.n_links == 3
    assert load_folder(folder).links.n_links == 3
    for call in (lambda: read_linqs_dir(folder, unknown_ids="error"),
                 lambda: load_dataset("linqs", data_dir=folder, unknown_ids="error"),
                 lambda: load_folder(folder, unknown_ids="error")):
        with pytest.raises(DataError, match=r"citeseer\.cites:2: document id 'ghost' is not "
                                            r"in citeseer\.content") as err:
            call()
        assert "\n" not in str(err.value)


def test_linqs_warning_names_the_first_few_ids(tmp_path, caplog):
    c = _content(tmp_path / "x.content")
    unknown = [(f"g{i}", "p1") for i in range(8)] + [("g0", "p2")]
    k = _cites(tmp_path / "x.cites", unknown)
    with pytest.raises(DataError, match=r"x.cites: 9 of 9 links name ids not in x.content "
                                        r"\(8 unknown ids, first: 'g0', 'g1', 'g2', 'g3', "
                                        r"'g4', ...\)"):
        read_linqs(c, k)           # most links lost: the wrong .cites file, refused
    ids = ["p1", "p2", "p3", "p4"]
    known = [(a, b) for a in ids for b in ids if a != b][:9]
    k = _cites(tmp_path / "x.cites", known + unknown)
    caplog.set_level(logging.WARNING, logger="topiclink")
    _, links, _ = read_linqs(c, k)
    assert links.n_links == 9
    assert ("x.cites: dropped 9 links to 8 ids not in x.content (first: 'g0', 'g1', 'g2', "
            "'g3', 'g4', ...)") in caplog.text


def test_linqs_utf8_bom_is_not_part_of_the_first_id(tmp_path):
    c = tmp_path / "x.content"
    c.write_bytes(b"\xef\xbb\xbfp1\t1\t0\tA\np2\t0\t1\tB\n")
    k = tmp_path / "x.cites"
    k.write_bytes(b"\xef\xbb\xbfp1\tp2\n")
    corpus, links, labels = read_linqs(c, k, unknown_ids="error")
    assert corpus.doc_ids.tolist() == ["p1", "p2"]
    assert links.pairs.tolist() == [[1, 0]] and labels.tolist() == ["A", "B"]
    # gzip-compressed files with a BOM too
    cz = tmp_path / "z.content"
    cz.write_bytes(gzip.compress(c.read_bytes()))
    corpus, _, _ = read_linqs(cz, k, unknown_ids="error")
    assert corpus.doc_ids.tolist() == ["p1", "p2"]


def test_linqs_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.content"):
        read_linqs(tmp_path / "nope.content", tmp_path / "nope.cites")


def test_linqs_dir_stacks_universities(tmp_path, caplog):
    _content(tmp_path / "a.content", rows=[("u1", "1 0 1", "X"), ("u2", "0 1 1", "Y")])
    _cites(tmp_path / "a.cites", [("u1", "u2"), ("u1", "u1")], sep=" ")
    _content(tmp_path / "b.content", rows=[("v1", "1 1 1", "Y"), ("v2", "0 0 1", "X"),
                                           ("v3", "1 0 0", "X")])
    _cites(tmp_path / "b.cites", [("v3", "v1")], sep=" ")
    caplog.set_level(logging.INFO, logger="topiclink")
    corpus, links, labels = read_linqs_dir(tmp_path)
    assert corpus.doc_ids.tolist() == ["u1", "u2", "v1", "v2", "v3"]
    assert corpus.metadata["university"].tolist() == ["a", "a", "b", "b", "b"]
    assert labels.tolist() == ["X", "Y", "Y", "X", "X"]
    assert links.pairs.tolist() == [[1, 0], [2, 4]]
    assert "a.cites: dropped 1 self-links" in caplog.text
    corpus, links, _ = read_linqs_dir(tmp_path, names=["b"])
    assert corpus.n_docs == 3 and links.pairs.tolist() == [[0, 2]]


def test_linqs_dir_errors(tmp_path):
    _content(tmp_path / "a.content", rows=[("u1", "1 0 1", "X"), ("u2", "0 1 1", "X")])
    _cites(tmp_path / "a.cites", [("u1", "u2")])
    _content(tmp_path / "b.content", rows=[("u1", "1 0 1", "X"), ("u3", "0 1 1", "X")])
    _cites(tmp_path / "b.cites", [("u1", "u3")])
    with pytest.raises(DataError, match="'u1' also appears in a.content"):
        read_linqs_dir(tmp_path)
    _content(tmp_path / "b.content", rows=[("u1", "1 0", "X"), ("u3", "0 1", "X")])
    with pytest.raises(DataError, match="2 word columns, but a.content has 3"):
        read_linqs_dir(tmp_path)


# ---------------------------------------------------------------------- R save files


class _RWriter:
    """Minimal XDR (format 2) writer, enough to test both the fast reader and rdata."""

    def __init__(self) -> None:
        self.symbols: list[str] = []

    @staticmethod
    def i(v: int) -> bytes:
        return struct.pack(">i", v)

    def sym(self, name: str) -> bytes:
        if name in self.symbols:
            return self.i(((self.symbols.index(name) + 1) << 8) | 255)
        self.symbols.append(name)
        b = name.encode()
        return self.i(1) + self.i(0x00040009) + self.i(len(b)) + b

    def ints(self, a, dim=None) -> bytes:
        a = np.asarray(a)
        out = self.i(13 | ((1 << 9) if dim else 0)) + self.i(a.size)
        out += np.asarray(a, ">i4").ravel(order="F").tobytes()
        if dim:
            out += self.i(0x402) + self.sym("dim") + self.ints(dim) + self.i(254)
        return out

    def reals(self, a) -> bytes:
        a = np.asarray(a, ">f8")
        return self.i(14) + self.i(a.size) + a.tobytes()

    def strs(self, strings) -> bytes:
        out = self.i(16) + self.i(len(strings))
        for s in strings:
            b = s.encode()
            levels = 64 if s.isascii() else 8  # ASCII_MASK or UTF8_MASK
            out += self.i((levels << 12) | 9) + self.i(len(b)) + b
        return out

    def list(self, items) -> bytes:
        return self.i(19) + self.i(len(items)) + b"".join(items)

    def rda(self, objects: dict[str, Callable[[], bytes]]) -> bytes:
        """Objects are built lazily, in stream order, so symbol references are right."""
        body = b"RDX2\nX\n" + self.i(2) + self.i(0x040200) + self.i(0x020300)
        for name, obj in objects.items():
            body += self.i(0x402) + self.sym(name) + obj()
        return gzip.compress(body + self.i(254))


def _lda_rda(path: Path) -> Path:
    w = _RWriter()
    def docs() -> bytes:
        return w.list([w.ints([[0, 2], [3, 1]], dim=[2, 2]), w.ints([[1], [5]], dim=[2, 1]),
                       w.ints(np.zeros((2, 0), int), dim=[2, 0])])

    path.write_bytes(w.rda({"toy.documents": docs,
                            "toy.vocab": lambda: w.strs(["alpha", "beta", "gé"]),
                            "toy.ratings": lambda: w.reals([1.5, -2.0, 0.0])}))
    return path


def test_fast_rda_reader_matches_rdata(tmp_path):
    import rdata

    p = _lda_rda(tmp_path / "toy.rda")
    fast = _fast_read_rda(p)
    assert fast is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = rdata.read_rda(p)
    assert list(fast) == list(ref) == ["toy.documents", "toy.vocab", "toy.ratings"]
    for a, b in zip(fast["toy.documents"], ref["toy.documents"], strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fast["toy.vocab"], ref["toy.vocab"])
    np.testing.assert_array_equal(fast["toy.ratings"], ref["toy.ratings"])


def test_read_rda_object_names_and_errors(tmp_path):
    p = _lda_rda(tmp_path / "toy.rda")
    assert read_rda_object(p, "toy.vocab").tolist() == ["alpha", "beta", "gé"]
    with pytest.raises(DataError, match="holds 3 objects .*pass name="):
        read_rda_object(p)
    with pytest.raises(DataError, match="no object named 'x'.*toy.vocab"):
        read_rda_object(p, "x")
    with pytest.raises(DataFileNotFoundError, match="missing.rda: no such file"):
        read_rda_object(tmp_path / "missing.rda")
    with pytest.raises(FileNotFoundError):  # also a FileNotFoundError
        read_rda_object(tmp_path / "missing.rda")
    bad = tmp_path / "bad.rda"
    bad.write_text("hello\tworld\n")
    with pytest.raises(DataError, match=r"bad\.rda: not a readable R save file"):
        read_rda_object(bad)


def test_read_lda_documents(tmp_path, caplog):
    p = _lda_rda(tmp_path / "toy.rda")
    caplog.set_level(logging.INFO, logger="topiclink")
    corpus = read_lda_documents(read_rda_object(p, "toy.documents"),
                                vocabulary=read_rda_object(p, "toy.vocab"))
    np.testing.assert_array_equal(corpus.counts.toarray(), [[3, 0, 1], [0, 5, 0], [0, 0, 0]])
    assert corpus.vocabulary.tolist() == ["alpha", "beta", "gé"]
    assert "1 empty documents of 3" in caplog.text
    docs = [np.array([[0, 1], [1, 1]]), np.array([[0, 7], [1, 2]])]
    with pytest.raises(DataError, match=r"toy: document 1: word index 7 outside the "
                                        r"vocabulary \[0, 3\)"):
        read_lda_documents(docs, n_words=3, what="toy")
    with pytest.raises(DataError, match=r"document 0 has shape \(3, 2\)"):
        read_lda_documents([np.zeros((3, 2), int)], n_words=3)
    with pytest.raises(DataError, match="negative count"):
        read_lda_documents([np.array([[0], [-1]])], n_words=3)
    with pytest.raises(DataError, match="n_words=4 but the vocabulary has 3"):
        read_lda_documents(docs, n_words=4, vocabulary=["a", "b", "c"])


def test_lda_link_pairs():
    pairs = lda_link_pairs([np.array([1, 2]), np.zeros(0, int), np.array([0])])
    assert pairs.tolist() == [[0, 1], [0, 2], [2, 0]]
    with pytest.raises(DataError, match=r"cites: document 1 links to document 5, outside "
                                        r"\[0, 3\)"):
        lda_link_pairs([np.array([1]), np.array([5]), np.zeros(0, int)], what="cites")


# ---------------------------------------------------------------------- triples


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_read_triples_shared_sorted_index(tmp_path):
    tr = _write(tmp_path / "train.txt", "b\tlikes\ta\na\thates\tc\n")
    te = _write(tmp_path / "test.txt", "c\tlikes\td\n")
    out = read_triples({"train": tr, "test": te})
    assert list(out) == ["train", "test"]
    t = out["train"]
    assert t.entity_names.tolist() == ["a", "b", "c", "d"]
    assert t.relation_names.tolist() == ["hates", "likes"]
    assert out["test"].n_entities == 4 and out["test"].n_relations == 2
    assert np.column_stack([t.heads, t.relations, t.tails]).tolist() == [[1, 1, 0], [0, 0, 2]]
    assert t.values.tolist() == [1.0, 1.0]
    by_list = read_triples([tr, te])
    assert list(by_list) == ["train", "test"]
    np.testing.assert_array_equal(by_list["test"].heads, out["test"].heads)


def test_read_triples_errors_and_duplicates(tmp_path, caplog):
    bad = _write(tmp_path / "train.txt", "a\tr\tb\na\tr\n")
    with pytest.raises(DataError, match=r"train\.txt:2: expected 3 .*found 2"):
        read_triples([bad])
    bad = _write(tmp_path / "train.txt", "a\tr\tb\n\ta\tr\n")
    with pytest.raises(DataError, match=r"train\.txt:2: empty head"):
        read_triples([bad])
    dup = _write(tmp_path / "train.txt", "a\tr\tb\nb\tr\ta\na\tr\tb\n")
    with pytest.raises(DataError, match=r"train\.txt:3: repeats the triple of line 1"):
        read_triples([dup])
    caplog.set_level(logging.INFO, logger="topiclink")
    out = read_triples([dup], duplicates="drop")
    assert out["train"].n_entries == 2
    assert "train.txt: dropped 1 duplicate triples" in caplog.text
    te = _write(tmp_path / "test.txt", "a\tr\tb\n")
    read_triples({"train": dup, "test": te}, duplicates="drop")
    assert "test.txt: 1 triples also appear in split 'train'" in caplog.text


_SPLITS = {"train": "a\tr\tb\nb\ts\tc\nc\tr\ta\n",
           "valid": "a\ts\tc\n",
           "test": "b\tr\tc\nd\ts\ta\n"}          # d: only in test


def _archive(path: Path, files: dict[str, bytes]) -> Path:
    """A .zip or tar archive (compression from the name) holding ``files``."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, data in files.items():
                zf.writestr(name, data)
        return path
    mode = "w:gz" if path.name.endswith((".tar.gz", ".tgz")) else "w"
    with tarfile.open(path, mode) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _same(a: dict, b: dict) -> None:
    assert list(a) == list(b)
    for k in a:
        assert a[k].entity_names.tolist() == b[k].entity_names.tolist()
        assert a[k].relation_names.tolist() == b[k].relation_names.tolist()
        for f in ("heads", "relations", "tails", "values"):
            np.testing.assert_array_equal(getattr(a[k], f), getattr(b[k], f))


@pytest.mark.parametrize("name", ["kg.tar.gz", "kg.tgz", "kg.zip", "kg.tar"])
def test_read_triples_archive_crlf_and_an_entity_only_in_test(tmp_path, caplog, name):
    """Members read without unpacking: CRLF lines, valid listed first in the archive (as
    in the ConvE FB15k-237 archive), an entity of the test split alone kept in the index
    and logged."""
    plain = {k: _write(tmp_path / f"{k}.txt", v) for k, v in _SPLITS.items()}
    expected = read_triples(plain)
    members = {f"{k}.txt": v.replace("\n", "\r\n").encode() for k, v in
               (("valid", _SPLITS["valid"]), ("train", _SPLITS["train"]),
                ("test", _SPLITS["test"]))}
    arch = _archive(tmp_path / name, members)
    caplog.set_level(logging.INFO, logger="topiclink")
    out = read_triples_archive(arch)                 # default: train, valid, test first
    _same(out, expected)
    assert out["train"].entity_names.tolist() == ["a", "b", "c", "d"]
    assert f"{name}:test.txt: 1 of 2 triples mention one of 1 entities never in split " \
        "'train'" in caplog.text
    _same(read_triples(arch), expected)              # one archive path: delegated
    _same(read_triples([arch]), expected)
    picked = read_triples_archive(arch, {"fit": "train.txt", "eval": "test.txt"})
    assert list(picked) == ["fit", "eval"] and picked["fit"].n_entities == 4


def test_read_triples_archive_members_and_errors(tmp_path):
    data = {"FB/train.txt": b"a\tr\tb\r\n", "FB/test.txt": b"a\tr\tc\r\nb\tr\r\n",
            "FB/README.md": b"# x\n", "._train.txt": b"\x00junk"}
    arch = _archive(tmp_path / "fb.tgz", data)
    out = read_triples_archive(arch, ["train.txt"])   # by base name, in a sub-folder
    assert list(out) == ["train"] and out["train"].n_entries == 1
    with pytest.raises(DataError, match=r"fb\.tgz:FB/test\.txt:2: expected 3 or 4 "):
        read_triples_archive(arch)
    with pytest.raises(DataError, match=r"fb\.tgz: no member 'valid\.txt' \(members: "
                                        r"FB/train\.txt, FB/test\.txt, FB/README\.md\)"):
        read_triples_archive(arch, {"valid": "valid.txt"})
    dup = _archive(tmp_path / "dup.zip", {"x/train.txt": b"a\tr\tb\n",
                                          "y/train.txt": b"a\tr\tb\n"})
    with pytest.raises(DataError, match="2 members are called 'train.txt'"):
        read_triples_archive(dup, ["train.txt"])
    with pytest.raises(ValueError, match="split names are not unique"):
        read_triples_archive(dup)
    bad = _write(tmp_path / "bad.tar.gz", "not an archive\n")
    with pytest.raises(DataError, match=r"bad\.tar\.gz: not a readable tar or zip archive"):
        read_triples_archive(bad)
    empty = _archive(tmp_path / "none.zip", {"notes.md": b"x"})
    with pytest.raises(DataError, match=r"none\.zip: no \.txt member \(members: notes\.md\)"):
        read_triples_archive(empty)
    plain = _write(tmp_path / "train.txt", "a\tr\tb\n")
    with pytest.raises(ValueError, match=r"fb\.tgz is an archive: pass it alone"):
        read_triples({"train": plain, "test": arch})
    zipped = _archive(tmp_path / "dup2.zip", {"train.txt": b"a\tr\tb\na\tr\tb\n"})
    with pytest.raises(DataError, match=r"dup2\.zip:train\.txt:2: repeats the triple of "
                                        r"line 1"):
        read_triples(zipped)
    gz_member = _archive(tmp_path / "gz.tar", {"train.txt.gz": gzip.compress(b"a\tr\tb\n")})
    assert read_triples_archive(gz_member, {"train": "train.txt.gz"})["train"].n_entries == 1


def test_read_triples_fast_and_line_by_line_paths_agree(tmp_path):
    """A file of three fields on every line (the fast path) and the same file with a blank
    line and stray spaces (the line-by-line parser) give the same tensors."""
    lines = [f"e{i % 7}\tr{i % 3}\te{i % 2}" for i in range(50)]   # line 43 = line 1
    fast = _write(tmp_path / "train.txt", "\r\n".join(lines) + "\r\n")
    slow_text = "\n".join(lines[:10]) + "\n\n" + "\n".join(
        f" {x.replace(chr(9), ' ' + chr(9) + ' ')} " for x in lines[10:])
    (tmp_path / "slow").mkdir()
    slow = _write(tmp_path / "slow" / "train.txt", slow_text)
    _same(read_triples([fast], duplicates="drop"), read_triples([slow], duplicates="drop"))
    with pytest.raises(DataError, match=r"train\.txt:44: repeats the triple of line 1;"):
        read_triples([slow])                         # the blank line 11 shifts it
    with pytest.raises(DataError, match=r"train\.txt:43: repeats the triple of line 1;"):
        read_triples([fast])


# ---------------------------------------------------------------------- text


TEXTS = ["The cat sat on the mat", "A dog and a cat", "Dogs 42 bark_loud x"]


def test_corpus_from_texts_defaults():
    corpus = corpus_from_texts(TEXTS, doc_ids=["a", "b", "c"])
    vocab = corpus.vocabulary.tolist()
    assert "the" not in vocab and "and" not in vocab  # English stop words
    assert "42" not in vocab and "x" not in vocab  # 2+ letters, no digits
    assert {"cat", "mat", "dog", "dogs"} <= set(vocab)
    assert "bark" not in vocab and "bark_loud" not in vocab  # "_" joins a word
    assert corpus.counts[:, vocab.index("cat")].sum() == 2
    assert corpus.doc_ids.tolist() == ["a", "b", "c"]
    # min_df=2 once there are >= 10 texts
    many = corpus_from_texts(TEXTS * 3 + ["zebra crossing"])
    assert "zebra" not in many.vocabulary.tolist()
    assert "cat" in many.vocabulary.tolist()


def test_corpus_from_texts_shared_vectorizer(caplog):
    vec = default_vectorizer(len(TEXTS), min_df=1)
    train = corpus_from_texts(TEXTS, vectorizer=vec)
    caplog.set_level(logging.INFO, logger="topiclink")
    test = corpus_from_texts(["cat cat unicorn", "unicorn"], vectorizer=vec)
    assert test.vocabulary.tolist() == train.vocabulary.tolist()
    assert test.counts[0].sum() == 2
    assert "1 of 2 texts have no word in the vocabulary" in caplog.text
    with pytest.raises(ValueError, match="vectorizer options"):
        corpus_from_texts(TEXTS, vectorizer=vec, min_df=3)
    with pytest.raises(DataError, match=r"texts\[1\] is int"):
        corpus_from_texts(["a b", 3])


def _news_tar(path: Path) -> Path:
    msgs = {
        "20news-bydate-train/sci.space/10": "From: a\nSubject: orbit\n\nrocket orbit launch",
        "20news-bydate-train/sci.space/9": "From: b\n\nrocket moon",
        "20news-bydate-train/alt.atheism/5": "From: c\n\ngod belief caf\xe9",
        "20news-bydate-test/alt.atheism/7": "From: d\n\nbelief rocket",
        "20news-bydate-test/sci.space/11": "From: e\n\nmoon orbit",
    }
    with tarfile.open(path, "w:gz") as tar:
        for name, text in msgs.items():
            data = text.encode("latin-1")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_read_newsgroups_tar(tmp_path):
    p = _news_tar(tmp_path / "20news-bydate.tar.gz")
    frames, names = read_newsgroups_tar(p)
    assert names.tolist() == ["alt.atheism", "sci.space"]
    tr = frames["train"]
    assert tr["doc_id"].tolist() == ["alt.atheism/5", "sci.space/9", "sci.space/10"]
    assert tr["label"].tolist() == [0, 1, 1]
    assert "café" in tr["text"].iloc[0]
    frames, _ = read_newsgroups_tar(p, splits=("test",), strip_headers=True)
    assert frames["test"]["text"].tolist() == ["belief rocket", "moon orbit"]
    corpus, labels, names = corpus_from_newsgroups_tar(p, "train", strip_headers=True)
    assert corpus.n_docs == 3 and labels.tolist() == [0, 1, 1]
    assert "from" not in corpus.vocabulary.tolist()
    assert corpus.metadata["group"].tolist() == ["alt.atheism", "sci.space", "sci.space"]
    with pytest.raises(ValueError, match="unknown split"):
        read_newsgroups_tar(p, splits=("dev",))


# ---------------------------------------------------------------------- UCI bag of words

DOCWORD = "3\n4\n5\n1 1 2\n1 3 1\n2 2 4\n3 4 1\n3 1 1\n"


def test_read_uci_bow(tmp_path):
    dw = _write(tmp_path / "docword.toy.txt", DOCWORD)
    vocab = _write(tmp_path / "vocab.toy.txt", "apple\nbanana\ncherry\ndate\n")
    corpus = read_uci_bow(dw, vocab)
    np.testing.assert_array_equal(corpus.counts.toarray(),
                                  [[2, 0, 1, 0], [0, 4, 0, 0], [1, 0, 0, 1]])
    assert corpus.vocabulary.tolist() == ["apple", "banana", "cherry", "date"]
    assert corpus.doc_ids.tolist() == [1, 2, 3]
    assert corpus.name == "toy"
    gz = tmp_path / "docword.toy.txt.gz"
    gz.write_bytes(gzip.compress(DOCWORD.encode()))
    np.testing.assert_array_equal(read_uci_bow(gz).counts.toarray(), corpus.counts.toarray())


def test_read_uci_bow_empty_document_logged(tmp_path, caplog):
    dw = _write(tmp_path / "docword.toy.txt", "3\n2\n2\n1 1 2\n3 2 1\n")
    caplog.set_level(logging.INFO, logger="topiclink")
    assert read_uci_bow(dw).n_docs == 3
    assert "1 of 3 documents have no entries" in caplog.text


@pytest.mark.parametrize(("text", "pattern"), [
    ("3\nfour\n5\n", r"docword\.toy\.txt:2: header line 2 must be the integer W"),
    ("3\n4\n", r"ends inside the 3-line header"),
    ("3\n4\n2\n1 1 2\n1 3\n", r"docword\.toy\.txt:5: expected 3 numbers"),
    ("3\n4\n2\n1 1 2\n1 3 1 7\n", r"docword\.toy\.txt:5: expected 3 numbers"),
    ("3\n4\n2\n1 1 2\n4 3 1\n", r"docword\.toy\.txt:5: docID 4 outside \[1, 3\]"),
    ("3\n4\n2\n1 1 2\n1 0 1\n", r"docword\.toy\.txt:5: wordID 0 outside \[1, 4\]"),
    ("3\n4\n2\n1 1 2\n1 2 0\n", r"docword\.toy\.txt:5: count 0 must be a positive"),
    ("3\n4\n2\n1 1 2\n1 2 a\n", r"docword\.toy\.txt:5: non-integer value"),
    ("3\n4\n3\n1 1 2\n2 2 1\n1 1 5\n", r"docword\.toy\.txt:6: repeats \(docID 1, wordID 1\) "
                                        r"of line 4"),
    ("3\n4\n3\n1 1 2\n2 2 1\n", r"docword\.toy\.txt:3: the header says NNZ = 3 but the file "
                                r"has 2 entries"),
])
def test_read_uci_bow_errors(tmp_path, text, pattern):
    dw = _write(tmp_path / "docword.toy.txt", text)
    with pytest.raises(DataError, match=pattern):
        read_uci_bow(dw)


def test_read_uci_bow_vocab_mismatch(tmp_path):
    dw = _write(tmp_path / "docword.toy.txt", DOCWORD)
    vocab = _write(tmp_path / "vocab.toy.txt", "apple\nbanana\n")
    with pytest.raises(DataError, match=r"vocab\.toy\.txt: 2 words, but docword\.toy\.txt has "
                                        r"W = 4"):
        read_uci_bow(dw, vocab)


def test_corrupt_gzip_is_a_data_error(tmp_path):
    bad = tmp_path / "docword.bad.txt.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(DataError, match=r"docword\.bad\.txt\.gz: cannot read"):
        read_uci_bow(bad)
    content = tmp_path / "x.content"
    content.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(DataError, match=r"x\.content: corrupt gzip data"):
        read_linqs(content, _cites(tmp_path / "x.cites", []))
    with pytest.raises(DataError, match=r"x\.content: corrupt gzip data"):
        read_triples([content])


def test_triples_utf8_bom_is_not_part_of_the_first_head(tmp_path):
    p = tmp_path / "train.txt"
    p.write_bytes(b"\xef\xbb\xbfa\tr\tb\n")
    t = read_triples([p])["train"]
    assert t.entity_names.tolist() == ["a", "b"]
