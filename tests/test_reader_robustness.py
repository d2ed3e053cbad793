"""Every file reader against malformed, truncated, mis-encoded and huge-header inputs.

Cases are generated: each reader (a valid sample file and how to call it) x each mutation
of that file.  The outcome of every case must be one of

* a clean error: :class:`DataError` or :class:`FileNotFoundError` whose message is one
  line and names the file;
* a correct acceptance: for mutations that keep the content (CRLF line ends, a UTF-8 BOM,
  gzip compression, no final newline) the result equals the original file's; for others
  the result must pass the reader's sanity check (no replacement characters or NUL bytes
  in names, sizes consistent with the file).

Any other exception (ValueError from numpy, UnicodeDecodeError, EOFError, zlib.error,
struct.error, IndexError, KeyError, MemoryError, ...) fails the case.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.test_io import _lda_rda, _news_tar, _RWriter
from topiclink.data import Corpus, DataError, Links
from topiclink.data.io import (
    read_linqs,
    read_linqs_cites,
    read_linqs_content,
    read_newsgroups_tar,
    read_rda_object,
    read_triples,
    read_uci_bow,
)
from topiclink.datasets.detect import load_folder

DOCWORD = b"3\n4\n5\n1 1 2\n1 3 1\n2 2 4\n3 4 1\n3 1 1\n"
VOCAB = b"apple\nbanana\ncherry\ndate\n"
CONTENT = b"p1\t1\t0\t1\t0\tA\np2\t0\t1\t0\t0\tB\np3\t1\t1\t1\t1\tA\np4\t0\t0\t1\t0\tC\n"
CITES = b"p1\tp2\np3\tp1\np2\tp4\np4\tp3\n"
TRIPLES = b"alice\tknows\tbob\nbob\tknows\tcarol\ncarol\tlikes\talice\n"


def _rda_bytes(tmp: Path) -> bytes:
    return _lda_rda(tmp / "sample.rda").read_bytes()


def _tar_bytes(tmp: Path) -> bytes:
    return _news_tar(tmp / "sample.tar.gz").read_bytes()


# ---------------------------------------------------------------------- summaries
def _strings(x: Any) -> list[str]:
    """Every string inside a result (names, ids, labels, vocabularies)."""
    out: list[str] = []
    if isinstance(x, str):
        out.append(x)
    elif isinstance(x, Corpus):
        out += [str(v) for v in x.vocabulary.tolist()] + [str(v) for v in x.doc_ids.tolist()]
    elif isinstance(x, np.ndarray) and x.dtype.kind in "UO":
        out += [str(v) for v in x.ravel().tolist()]
    elif isinstance(x, dict):
        for k, v in x.items():
            out += _strings(k) + _strings(v)
    elif isinstance(x, list | tuple):
        for v in x:
            out += _strings(v)
    elif hasattr(x, "entity_names"):
        out += _strings(x.entity_names) + _strings(x.relation_names)
    elif hasattr(x, "to_dict"):  # DataFrame
        out += _strings(x.to_dict("list"))
    return out


def _summary(x: Any) -> Any:
    """A comparable form of a reader's result."""
    if isinstance(x, Corpus):
        return ("corpus", x.counts.toarray().tolist(), x.doc_ids.tolist(),
                x.vocabulary.tolist())
    if hasattr(x, "corpus") and hasattr(x, "source"):  # a datasets.Dataset
        return ("dataset", _summary(x.corpus), _summary(getattr(x, "links", None)))
    if isinstance(x, Links):
        return ("links", x.pairs.tolist(), x.n_docs)
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, dict):
        return {k: _summary(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_summary(v) for v in x]
    if hasattr(x, "entity_names"):
        return ("tensor", x.heads.tolist(), x.relations.tolist(), x.tails.tolist(),
                x.entity_names.tolist(), x.relation_names.tolist())
    if hasattr(x, "to_dict"):
        return x.to_dict("list")
    return x


def _sane(x: Any) -> None:
    for s in _strings(x):
        assert "\ufffd" not in s, f"silently mis-decoded string {s!r}"
        assert "\x00" not in s, f"NUL byte kept in {s!r}"


# ---------------------------------------------------------------------- readers
@dataclass
class Reader:
    name: str
    filename: str
    sample: Callable[[Path], bytes]
    call: Callable[[Path, Path], Any]  # (path of the mutated file, a folder for helpers)
    text: bool = True  # a line-based text format (CRLF, BOM, gzip keep the content)
    huge: tuple[bytes, ...] = ()  # files declaring sizes that cannot fit


def _call_vocab(p: Path, tmp: Path) -> Any:
    dw = tmp / "helper" / "docword.toy.txt"
    dw.parent.mkdir(exist_ok=True)
    dw.write_bytes(DOCWORD)
    return read_uci_bow(dw, p)


def _call_cites(p: Path, tmp: Path) -> Any:
    return read_linqs_cites(p, ["p1", "p2", "p3", "p4"])


def _call_linqs_pair(p: Path, tmp: Path) -> Any:
    cites = tmp / "helper" / "x.cites"
    cites.parent.mkdir(exist_ok=True)
    cites.write_bytes(CITES)
    return read_linqs(p, cites)


def _call_rda(p: Path, tmp: Path) -> Any:
    return read_rda_object(p, "toy.documents"), read_rda_object(p, "toy.vocab")


def _call_folder(p: Path, tmp: Path) -> Any:
    # the mutated file is docword.toy.txt inside a UCI folder with its vocabulary
    if p.parent.exists() and p.parent.is_dir():
        (p.parent / "vocab.toy.txt").write_bytes(VOCAB)
    return load_folder(p.parent)


def _huge_rda() -> bytes:
    w = _RWriter()
    body = b"RDX2\nX\n" + w.i(2) + w.i(0x040200) + w.i(0x020300)
    body += w.i(0x402) + w.sym("x") + w.i(13) + w.i(2 ** 31 - 1) + b"\x00" * 16 + w.i(254)
    return gzip.compress(body)


def _huge_rda_list() -> bytes:
    w = _RWriter()
    body = b"RDX2\nX\n" + w.i(2) + w.i(0x040200) + w.i(0x020300)
    body += w.i(0x402) + w.sym("x") + w.i(19) + w.i(2 ** 31 - 1) + w.i(254)
    return body


def _huge_tar() -> bytes:
    info = tarfile.TarInfo("20news-bydate-train/sci.space/1")
    info.size = 10 ** 11
    header = info.tobuf(format=tarfile.GNU_FORMAT)
    return header + b"orbit" * 100


READERS = [
    Reader("uci_docword", "docword.toy.txt", lambda t: DOCWORD,
           lambda p, t: read_uci_bow(p),
           huge=(b"3\n1000000000000\n5\n1 1 2\n1 3 1\n2 2 4\n3 4 1\n3 1 1\n",
                 b"1000000000000\n4\n5\n1 1 2\n1 3 1\n2 2 4\n3 4 1\n3 1 1\n",
                 b"3\n4\n1000000000000\n1 1 2\n1 3 1\n2 2 4\n3 4 1\n3 1 1\n",
                 b"3000000000\n3000000000\n1\n1 1 1\n",
                 b"3\n4\n" + b"9" * 5000 + b"\n1 1 2\n")),
    Reader("uci_vocab", "vocab.toy.txt", lambda t: VOCAB, _call_vocab),
    Reader("uci_folder", "docword.toy.txt", lambda t: DOCWORD, _call_folder,
           huge=(b"3\n1000000000000\n5\n1 1 2\n1 3 1\n2 2 4\n3 4 1\n3 1 1\n",)),
    Reader("linqs_content", "x.content", lambda t: CONTENT,
           lambda p, t: read_linqs_content(p)),
    Reader("linqs_cites", "x.cites", lambda t: CITES, _call_cites),
    Reader("linqs_pair", "x.content", lambda t: CONTENT, _call_linqs_pair),
    Reader("triples", "train.txt", lambda t: TRIPLES, lambda p, t: read_triples([p])),
    Reader("rda", "toy.rda", _rda_bytes, _call_rda, text=False,
           huge=(_huge_rda(), _huge_rda_list())),
    Reader("newsgroups_tar", "20news-bydate.tar.gz", _tar_bytes,
           lambda p, t: read_newsgroups_tar(p), text=False, huge=(_huge_tar(),)),
]


# ---------------------------------------------------------------------- mutations
def _rand(seed: int, n: int = 300) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def _line2(b: bytes, f: Callable[[bytes], bytes]) -> bytes:
    lines = b.split(b"\n")
    if len(lines) > 1:
        lines[1] = f(lines[1])
    return b"\n".join(lines)


EQUAL, ERROR, EITHER = "equal", "error", "either"

#: name -> (mutation of the sample bytes, expected outcome for text / binary formats)
MUTATIONS: dict[str, tuple[Callable[[bytes], bytes], str, str]] = {
    "empty": (lambda b: b"", ERROR, ERROR),
    "blank_lines": (lambda b: b"\n \n\t\n", ERROR, ERROR),
    "truncated_half": (lambda b: b[: len(b) // 2], EITHER, ERROR),
    "truncated_third": (lambda b: b[: len(b) // 3], EITHER, ERROR),
    "truncated_last_byte": (lambda b: b[:-1], EQUAL, EITHER),
    "truncated_10_bytes": (lambda b: b[:10], EITHER, ERROR),
    "random_bytes_0": (lambda b: _rand(0), ERROR, ERROR),
    "random_bytes_1": (lambda b: _rand(1, 5000), ERROR, ERROR),
    "random_ascii": (lambda b: bytes(np.random.default_rng(2).integers(32, 127, 400,
                                                                      dtype=np.uint8)),
                     ERROR, ERROR),
    "random_tail": (lambda b: b + _rand(3), EITHER, EITHER),
    "latin1_in_line": (lambda b: _line2(b, lambda s: b"caf\xe9" + s), EITHER, EITHER),
    "latin1_whole": (lambda b: b.decode("latin-1").encode("latin-1") + b"\xe9\xff\n",
                     EITHER, EITHER),
    "utf16": (lambda b: b.decode("latin-1").encode("utf-16"), ERROR, ERROR),
    "nul_in_line": (lambda b: _line2(b, lambda s: s[:2] + b"\x00" + s[2:]), EITHER, EITHER),
    "nul_line": (lambda b: b + b"\x00\n", EITHER, EITHER),
    "all_nul": (lambda b: b"\x00" * len(b), ERROR, ERROR),
    "crlf": (lambda b: b.replace(b"\n", b"\r\n"), EQUAL, EITHER),
    "bom": (lambda b: b"\xef\xbb\xbf" + b, EQUAL, EITHER),
    "gzip": (lambda b: gzip.compress(b), EQUAL, EITHER),
    "gzip_truncated": (lambda b: gzip.compress(b)[: len(gzip.compress(b)) // 2], ERROR, ERROR),
    "gzip_garbage": (lambda b: b"\x1f\x8b\x08\x00" + _rand(4), ERROR, ERROR),
    "gzip_empty_stream": (lambda b: gzip.compress(b""), ERROR, ERROR),
    "long_line": (lambda b: b + b"x" * 2_000_000 + b"\n", EITHER, EITHER),
    "doubled": (lambda b: b + b, EITHER, EITHER),
    "tabs_to_spaces": (lambda b: b.replace(b"\t", b"  "), EITHER, EITHER),
    "extra_column": (lambda b: b.replace(b"\n", b" 7\n"), EITHER, EITHER),
    "drop_column": (lambda b: b"\n".join(ln.rsplit(None, 1)[0] if ln.split() else ln
                                          for ln in b.split(b"\n")), EITHER, EITHER),
    "negative_numbers": (lambda b: b.replace(b"1", b"-1"), EITHER, EITHER),
    "big_numbers": (lambda b: b.replace(b"1", b"99999999999999999999999"), EITHER, EITHER),
    "float_numbers": (lambda b: b.replace(b"1", b"1.5"), EITHER, EITHER),
}

#: overrides of the expected outcome: (reader, mutation) -> outcome
EXPECT: dict[tuple[str, str], str] = {
    # a .cites file without links is a graph without links
    ("linqs_cites", "empty"): EITHER,
    ("linqs_cites", "blank_lines"): EITHER,
    ("linqs_cites", "gzip_empty_stream"): EITHER,
    # a vocabulary of one extra line: its words are counted, so W must match
    ("uci_vocab", "random_ascii"): EITHER,
}

CASES: list[tuple[str, str]] = (
    [(r.name, m) for r in READERS for m in MUTATIONS]
    + [(r.name, f"huge_{i}") for r in READERS for i in range(len(r.huge))]
    + [(r.name, special) for r in READERS for special in ("directory", "missing")]
)
_BY_NAME = {r.name: r for r in READERS}


def _names_file(msg: str, path: Path) -> bool:
    return any(n in msg for n in {path.name, path.parent.name, "docword.toy.txt"})


def _run(reader: Reader, path: Path, tmp: Path) -> tuple[str, Any]:
    try:
        result = reader.call(path, tmp)
    except (DataError, FileNotFoundError) as exc:
        msg = str(exc)
        assert msg and "\n" not in msg.strip(), f"error message is not one line: {msg!r}"
        assert _names_file(msg, path), f"error does not name the file: {msg!r}"
        return "error", msg
    return "ok", result


def _prepare(reader_name: str, case: str, tmp: Path) -> tuple[Reader, Path, str, bytes]:
    """Write the case's file under ``tmp``; return the reader, the path, the expected
    outcome (EQUAL / ERROR / EITHER) and the valid sample."""
    reader = _BY_NAME[reader_name]
    sample = reader.sample(tmp)
    folder = tmp / "data"
    folder.mkdir()
    path = folder / reader.filename
    if case == "directory":
        path.mkdir()
        return reader, path, ERROR, sample
    if case == "missing":
        return reader, path, ERROR, sample
    if case.startswith("huge_"):
        path.write_bytes(reader.huge[int(case.split("_")[1])])
        return reader, path, ERROR, sample
    mutate, text_expect, binary_expect = MUTATIONS[case]
    path.write_bytes(mutate(sample))
    expected = EXPECT.get((reader_name, case), text_expect if reader.text else binary_expect)
    return reader, path, expected, sample


def _reference(reader: Reader, sample: bytes, tmp: Path) -> Any:
    ref = tmp / "ref" / "data" / reader.filename
    ref.parent.mkdir(parents=True)
    ref.write_bytes(sample)
    _, want = _run(reader, ref, tmp)
    return want


@pytest.mark.parametrize(("reader_name", "case"), CASES, ids=[f"{r}-{m}" for r, m in CASES])
def test_reader_robustness(tmp_path, reader_name, case):
    reader, path, expected, sample = _prepare(reader_name, case, tmp_path)
    outcome, result = _run(reader, path, tmp_path)
    if expected == ERROR:
        assert outcome == "error", f"accepted a bad file: {_summary(result)!r}"[:500]
    elif outcome == "ok":
        _sane(result)
        if expected == EQUAL:
            assert _summary(result) == _summary(_reference(reader, sample, tmp_path))
    elif expected == EQUAL:
        pytest.fail(f"refused a file with the same content: {result}")


# ---------------------------------------------------------------------- the fuzzing suite
@dataclass
class _Accepted:
    summary: Any
    reference: Any  # the original file's summary (EQUAL cases), else None
    insane: str  # why the result is not sane ("" when it is)


def _fuzz_run(reader_name: str, case: str) -> _Accepted:
    """One case in a fresh folder: the reader's exception propagates (the harness judges
    it; an error that does not name the file becomes an AssertionError)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        reader, path, expected, sample = _prepare(reader_name, case, tmp)
        try:
            result = reader.call(path, tmp)
        except (DataError, FileNotFoundError) as exc:
            if not _names_file(str(exc), path):
                raise AssertionError(f"error does not name the file: {exc}") from None
            raise
        try:
            _sane(result)
            insane = ""
        except AssertionError as exc:
            insane = str(exc)
        ref = _summary(_reference(reader, sample, tmp)) if expected == EQUAL else None
        return _Accepted(_summary(result), ref, insane)


def _fuzz_check(accepted: _Accepted) -> bool:
    if accepted.insane:
        return False
    return accepted.reference is None or accepted.summary == accepted.reference


TEXTS: dict[str, tuple[Any, str]] = {
    "two_texts": (["rocket orbit launch", "orbit moon rocket"], "accept"),
    "empty_list": ([], "error"),
    "none_item": (["rocket orbit", None], "error"),
    "bytes_item": ([b"rocket orbit"], "error"),
    "float_item": (["rocket orbit", 1.5], "error"),
    "one_string": ("rocket orbit launch", "error"),
    "only_stop_words": (["the and of", "a an the"], "error"),
    "only_digits": (["123 456", "789"], "error"),
    "nul_text": (["\x00\x00", "rocket orbit"], "any"),
    "replacement_chars": (["caf\ufffd orbit", "orbit moon"], "any"),
    "empty_strings": (["", ""], "error"),
    "one_empty": (["rocket orbit", ""], "accept"),
}


def _texts_run(texts: Any) -> Any:
    from topiclink.data.io import corpus_from_texts

    return corpus_from_texts(texts)


def fuzz_cases() -> list[Any]:
    """The reader cases as :class:`tests.fuzz.harness.Case` (area ``readers``): the same
    generated files as :func:`test_reader_robustness`, plus raw-text inputs."""
    from tests.fuzz.harness import Case

    expect_of = {ERROR: "error", EQUAL: "accept", EITHER: "any"}
    out = []
    for reader_name, case in CASES:
        reader = _BY_NAME[reader_name]
        if case in MUTATIONS:
            _, text_expect, binary_expect = MUTATIONS[case]
            expected = EXPECT.get((reader_name, case),
                                  text_expect if reader.text else binary_expect)
        else:
            expected = ERROR
        out.append(Case(f"reader/{reader_name}/{case}", "readers",
                        lambda r=reader_name, c=case: _fuzz_run(r, c),
                        expect_of[expected], _fuzz_check))
    for label, (texts, expect) in TEXTS.items():
        out.append(Case(f"reader/texts/{label}", "readers",
                        lambda t=texts: _texts_run(t), expect,
                        lambda c: not _strings_insane(c)))
    return out


def _strings_insane(x: Any) -> bool:
    try:
        _sane(x)
    except AssertionError:
        return True
    return False


@pytest.mark.parametrize("label", list(TEXTS))
def test_texts(label):
    from tests.fuzz.harness import Case, classify

    texts, expect = TEXTS[label]
    outcome, detail = classify(Case(label, "readers", lambda: _texts_run(texts), expect,
                                    lambda c: not _strings_insane(c)))
    assert outcome in ("clean error", "correct acceptance"), detail


def test_case_count():
    assert len(CASES) >= 100


def test_sample_files_are_valid(tmp_path):
    for reader in READERS:
        folder = tmp_path / reader.name
        folder.mkdir()
        p = folder / reader.filename
        p.write_bytes(reader.sample(tmp_path))
        outcome, result = _run(reader, p, tmp_path)
        assert outcome == "ok", result


def test_io_buffer_not_a_path():
    with pytest.raises((TypeError, DataError, FileNotFoundError)):
        read_uci_bow(io.BytesIO(DOCWORD))  # type: ignore[arg-type]
