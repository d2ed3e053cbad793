"""Reader cases: every reader fed malformed, truncated, mis-encoded and huge-header files
(the generators live with the reader tests in ``tests/test_reader_robustness.py``), and
the readers of users' own files: text files of one document per line (a line ends at a
newline only; text that is not UTF-8 refused naming file, line and byte offset), LINQS
folders without links, triples folders without held-out splits or with a count column."""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fuzz.harness import Case


@functools.cache
def folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="topiclink-fuzz-readers-"))


def _file(name: str, raw: bytes) -> Path:
    path = folder() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return path


def _refused_saying(run: Callable[[], Any], *says: str) -> Callable[[], Any]:
    """``run`` must raise an error whose message holds each of ``says`` (else an
    AssertionError: a traceback, not a clean error)."""
    def call() -> Any:
        try:
            result = run()
        except Exception as exc:  # noqa: BLE001 - re-raised when it says what it must
            missing = [s for s in says if s not in str(exc)]
            if missing:
                raise AssertionError(f"the error does not say {missing[0]!r}: {exc}") from exc
            raise
        return result
    return call


#: the characters :meth:`str.splitlines` ends a line at that are not a newline
LINE_LIKE = {"vt": "\v", "ff": "\f", "fs": "\x1c", "gs": "\x1d", "rs": "\x1e",
             "nel": "\x85", "ls": "\u2028", "ps": "\u2029", "cr": "\r"}


def text_line_cases() -> list[Case]:
    from topiclink.data.io import read_text_lines

    out = []
    for label, sep in LINE_LIKE.items():
        for ending in ("\n", "\r\n"):
            name = f"lines-{label}-{'crlf' if ending == chr(13) + chr(10) else 'lf'}"
            lines = [f"word{i} left{sep}right {i}" for i in range(12)]
            for final in ("", "no-final-newline"):
                text = ending.join(lines) + ("" if final else ending)
                path = _file(f"{name}{'-' + final if final else ''}.txt",
                             ("\ufeff" + text).encode())
                out.append(Case(f"readers/text-lines/{path.stem}", "readers",
                                lambda p=path: read_text_lines(p), "accept",
                                lambda r, want=lines: r == want))
    encoded = {
        "latin1": ("café\n".encode("latin-1"), (":1:", "not valid UTF-8", "byte offset 3")),
        "latin1-line2": (b"ok\ncaf\xe9\n", (":2:", "byte offset 6")),
        "utf16": ("text\n".encode("utf-16"), (":1:", "NUL byte")),
        "nul": (b"a\nb\x00c\n", (":2:", "NUL byte", "byte offset 3")),
        "cp1252": ("\u2018a\u2019\n".encode("cp1252"), (":1:", "not valid UTF-8")),
    }
    for label, (raw, says) in encoded.items():
        path = _file(f"enc-{label}.txt", raw)
        out.append(Case(f"readers/text-lines/encoding-{label}", "readers",
                        _refused_saying(lambda p=path: read_text_lines(p), path.name, *says)))
    out.append(Case("readers/text-lines/missing", "readers",
                    lambda: read_text_lines(folder() / "none.txt")))
    out.append(Case("readers/text-lines/directory", "readers",
                    lambda: read_text_lines(folder())))
    out.append(Case("readers/text-lines/empty", "readers",
                    lambda: read_text_lines(_file("empty.txt", b"")), "accept",
                    lambda r: r == []))
    return out


def _linqs(label: str, cites: bytes) -> Path:
    rows = "".join(f"d{i}\t" + "\t".join("1" if (i + j) % 3 == 0 else "0" for j in range(6))
                   + f"\t{'ab'[i % 2]}\n" for i in range(8))
    root = folder() / f"linqs-{label}"
    _file(f"linqs-{label}/toy.content", rows.encode())
    _file(f"linqs-{label}/toy.cites", cites)
    return root


def linqs_cases() -> list[Case]:
    """A ``.cites`` without links is a graph without edges: accepted (logged), 0 links."""
    from topiclink.data.io import read_linqs
    from topiclink.datasets import load_dataset

    out = []
    for label, cites in (("empty", b""), ("blank", b"\n \n\t\n"), ("bom", b"\xef\xbb\xbf"),
                         ("crlf-blank", b"\r\n\r\n")):
        root = _linqs(f"cites-{label}", cites)
        out.append(Case(f"readers/linqs-cites-{label}/read_linqs", "readers",
                        lambda r=root: read_linqs(r / "toy.content", r / "toy.cites"),
                        "accept", lambda res: res[1].n_links == 0 and res[0].n_docs == 8))
        out.append(Case(f"readers/linqs-cites-{label}/load_dataset", "readers",
                        lambda r=root: load_dataset(data_dir=r), "accept",
                        lambda ds: ds.links.n_links == 0 and ds.corpus.n_docs == 8))
    root = _linqs("cites-one-column", b"d1\n")
    out.append(Case("readers/linqs-cites-one-column", "readers", _refused_saying(
        lambda: read_linqs(root / "toy.content", root / "toy.cites"), "toy.cites:1")))
    return out


TRIPLES = "a\tr\tb\nb\tr\tc\nc\ts\ta\nb\ts\ta\n"
COUNTS = "a\tr\tb\t2\nb\tr\tc\t1\nc\ts\ta\t3\nb\ts\ta\t1\n"


def _triples(label: str, files: dict[str, str]) -> Path:
    for name, text in files.items():
        _file(f"triples-{label}/{name}", text.encode())
    return folder() / f"triples-{label}"


def _splits(ds: Any) -> dict[str, int]:
    return {split: t.n_entries for split, t in ds.tensor.items()}


def triples_cases() -> list[Case]:
    """``load_dataset(data_dir=...)`` of triples folders: train alone, empty held-out
    files, a 4th column of counts (kept as the values), a 4th column that is not a count
    (refused naming file:line)."""
    from topiclink.datasets import detect_format, load_dataset

    accepted: dict[str, tuple[dict[str, str], Callable[[Any], bool]]] = {
        "train-only": ({"train.txt": TRIPLES}, lambda ds: _splits(ds) == {"train": 4}),
        "train-valid": ({"train.txt": TRIPLES, "valid.txt": "a\tr\tc\n"},
                        lambda ds: _splits(ds) == {"train": 4, "valid": 1}),
        "empty-valid-test": ({"train.txt": TRIPLES, "valid.txt": "", "test.txt": "\n \n"},
                             lambda ds: _splits(ds) == {"train": 4, "valid": 0, "test": 0}
                             and ds.tensor["test"].n_entities == 3),
        "counts": ({"train.txt": COUNTS},
                   lambda ds: sorted(ds.tensor["train"].values.tolist()) == [1, 1, 2, 3]),
        "counts-crlf-bom": ({"train.txt": "\ufeff" + COUNTS.replace("\n", "\r\n")},
                            lambda ds: ds.tensor["train"].values.sum() == 7),
        "counts-zero": ({"train.txt": COUNTS + "c\tr\tb\t0\n"},
                        lambda ds: ds.tensor["train"].n_entries == 4),
        "counts-float-text": ({"train.txt": "a\tr\tb\t2.0\nb\tr\tc\t1e1\n"},
                              lambda ds: ds.tensor["train"].values.tolist() == [2, 10]),
    }
    out = []
    for label, (files, check) in accepted.items():
        root = _triples(label, files)
        out.append(Case(f"readers/triples-{label}/load_dataset", "readers",
                        lambda r=root: load_dataset(data_dir=r), "accept", check))
        out.append(Case(f"readers/triples-{label}/detect", "readers",
                        lambda r=root: detect_format(r), "accept", lambda f: f == "triples"))
    refused = {
        "count-text": ({"train.txt": "a\tr\tb\t2\nb\tr\tc\tmany\n"}, ("train.txt:2", "count")),
        "count-negative": ({"train.txt": "a\tr\tb\t-1\n"}, ("train.txt:1", "negative")),
        "count-nan": ({"train.txt": "a\tr\tb\tnan\n"}, ("train.txt:1", "NaN")),
        "count-inf": ({"train.txt": "a\tr\tb\tinf\n"}, ("train.txt:1", "finite")),
        "count-fraction": ({"train.txt": "a\tr\tb\t0.5\n"}, ("train.txt:1", "integer")),
        "count-empty": ({"train.txt": "a\tr\tb\t\n"}, ("train.txt:1", "empty count")),
        "count-mixed": ({"train.txt": "a\tr\tb\nb\tr\tc\t2\n"}, ("train.txt:2",)),
        "count-test": ({"train.txt": TRIPLES, "test.txt": "a\tr\tc\tx\n"}, ("test.txt:1",)),
        "train-empty": ({"train.txt": "", "valid.txt": TRIPLES}, ()),
        "five-fields": ({"train.txt": "a\tr\tb\t1\t2\n"}, ()),
    }
    for label, (files, says) in refused.items():
        root = _triples(label, files)
        out.append(Case(f"readers/triples-{label}/load_dataset", "readers", _refused_saying(
            lambda r=root: load_dataset("triples", data_dir=r), *says)))
    return out


def hepth_cases() -> list[Case]:
    """An arXiv ``.abs`` header whose title holds a line-like character keeps it whole."""
    from topiclink.datasets.hepth import parse_abs_record

    out = []
    for label, sep in LINE_LIKE.items():
        record = (f"\\\\\nPaper: hep-th/9201001\nTitle: Strings{sep}and branes\n"
                  "Authors: A. Author\n\\\\\n  An abstract.\n\\\\\n")
        out.append(Case(f"readers/hepth-title/{label}", "readers",
                        lambda r=record: parse_abs_record(r), "accept",
                        lambda rec, s=sep: rec.fields.get("Title") == f"Strings{s}and branes"
                        and rec.fields.get("Authors") == "A. Author"))
    return out


def cases() -> list[Case]:
    from tests.test_reader_robustness import fuzz_cases

    return (fuzz_cases() + text_line_cases() + linqs_cases() + triples_cases()
            + hepth_cases())
