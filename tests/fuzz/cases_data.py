"""Data-layer cases: every entry point that takes an adjacency, a vocabulary, document ids,
a shard folder, labels, word ids or counts, fed each bad form of that input (generated
as entry point x bad value), plus the good forms it must accept unchanged."""

from __future__ import annotations

import functools
import json
import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tests.fuzz.harness import Case

AREA = "data"


def case(case_id: str, run: Callable[[], Any], expect: str = "error",
         check: Callable[[Any], bool] | None = None) -> Case:
    return Case(f"data/{case_id}", AREA, run, expect, check)


@functools.cache
def folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="topiclink-fuzz-data-"))


def fresh(name: str) -> Path:
    """A new, not yet existing path under the fuzz folder."""
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=folder())) / "out"


def corpus() -> Any:
    from topiclink.data import Corpus

    counts = np.array([[1, 2, 0, 1], [0, 1, 3, 0], [2, 0, 1, 1], [1, 1, 1, 0], [0, 0, 2, 2]])
    return Corpus(sp.csr_matrix(counts), vocabulary=["a", "b", "c", "d"])


# ---------------------------------------------------------------------- adjacency
ADJ_BAD = [("minus1", -1.0), ("minus_half", -0.5), ("nan", np.nan), ("inf", np.inf),
           ("minus_inf", -np.inf), ("minus_tiny", -1e-300)]
ADJ_AT = [("first", (0, 1)), ("last", (4, 3)), ("diagonal", (2, 2))]
ADJ_FORMS: list[tuple[str, Callable[[np.ndarray], Any]]] = [
    ("dense", lambda a: a), ("csr", sp.csr_matrix), ("coo", sp.coo_matrix),
    ("csc", sp.csc_matrix), ("list", lambda a: a.tolist())]


def _adjacency(value: float, at: tuple[int, int]) -> np.ndarray:
    A = np.zeros((5, 5))
    A[0, 2] = A[1, 3] = A[3, 4] = 1
    A[at] = value
    return A


def _adjacency_entry_points() -> list[tuple[str, Callable[[Any], Any]]]:
    from topiclink.data import Links, as_links

    return [("from_adjacency", Links.from_adjacency),
            ("from_adjacency_undirected", lambda a: Links.from_adjacency(a, directed=False)),
            ("as_links", lambda a: as_links(a, 5) if sp.issparse(a) else
             Links.from_adjacency(a))]


def adjacency_cases() -> list[Case]:
    out = []
    for entry, call in _adjacency_entry_points():
        for form, make in ADJ_FORMS:
            for label, value in ADJ_BAD:
                for where, at in ADJ_AT:
                    A = make(_adjacency(value, at))
                    out.append(case(f"adjacency/{entry}/{form}/{label}/{where}",
                                    lambda c=call, a=A: c(a)))
            for label, value in (("weight_2", 2.0), ("weight_0.3", 0.3), ("bool", True)):
                A = _adjacency(0, (0, 1))
                A[A != 0] = value
                A = make(A.astype(bool) if label == "bool" else A)
                out.append(case(f"adjacency/{entry}/{form}/{label}",
                                lambda c=call, a=A: c(a), "accept",
                                lambda r: r.n_links == 3))
    from topiclink.data import Links

    for label, A in (("text", "x"), ("none", None), ("ragged", [[0, 1], [1]]),
                     ("3d", np.zeros((2, 2, 2))), ("not_square", np.zeros((2, 3))),
                     ("strings", np.array([["0", "1"], ["1", "0"]])),
                     ("object", np.array([[0, None], [1, 0]], dtype=object))):
        out.append(case(f"adjacency/malformed/{label}", lambda a=A: Links.from_adjacency(a)))
    return out


# ---------------------------------------------------------------------- vocabularies
VOCAB_BAD = [("dup_first_last", ["a", "b", "c", "a"]), ("dup_adjacent", ["a", "b", "b", "c"]),
             ("all_same", ["z", "z", "z", "z"]), ("dup_unicode", ["é", "b", "c", "é"]),
             ("dup_ints", [1, 2, 3, 1]), ("none", ["a", None, "c", "d"]),
             ("floats", [0.5, 1.5, 2.5, 3.5]), ("nested", [["a"], ["b"], ["c"], ["d"]]),
             ("text", "abcd"), ("dict", {"a": 0}), ("sparse", sp.eye(4, format="csr"))]


def _vocab_entry_points() -> list[tuple[str, Callable[[Any], Any]]]:
    from topiclink.data import Corpus, as_corpus, write_shards

    c = corpus()
    return [
        ("Corpus", lambda v: Corpus(c.counts, vocabulary=v)),
        ("with_vocabulary", lambda v: c.with_vocabulary(v)),
        ("from_documents", lambda v: Corpus.from_documents([([0, 1], [1, 1])], vocabulary=v)),
        ("write_shards", lambda v: write_shards(c, fresh("vocab"), 1, vocab=v)),
        ("as_corpus_frame", lambda v: as_corpus(pd.DataFrame(c.counts.toarray(),
                                                             columns=list(v)))),
    ]


def _vocab_file(name: str, text: str, bom: bool = False, crlf: bool = False) -> Path:
    p = folder() / f"vocab.{name}.txt"
    body = text.replace("\n", "\r\n") if crlf else text
    p.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body.encode())
    return p


def _docword() -> Path:
    p = folder() / "docword.fuzz.txt"
    if not p.exists():
        p.write_text("3\n4\n5\n1 1 2\n1 2 1\n2 3 4\n3 4 1\n3 1 1\n")
    return p


def vocabulary_cases() -> list[Case]:
    out = []
    for entry, call in _vocab_entry_points():
        for label, words in VOCAB_BAD:
            if entry == "as_corpus_frame" and (not isinstance(words, list)
                                               or label == "nested"):
                continue                 # pandas itself refuses to build such a frame
            out.append(case(f"vocabulary/{entry}/{label}", lambda c=call, w=words: c(w)))
        out.append(case(f"vocabulary/{entry}/good", lambda c=call: c(["d", "c", "b", "a"]),
                        "accept"))
    from topiclink.data import write_shards
    from topiclink.data.io import read_uci_bow

    files = {"dup": "a\nb\na\nc\n", "dup_stripped": "a\nb\na \nc\n",
             "dup_last": "a\nb\nc\nc\n", "dup_tab": "a\nb\n\ta\nc\n"}
    readers: dict[str, Callable[[Path], Any]] = {
        "read_uci_bow": lambda v: read_uci_bow(_docword(), v),
        "write_shards_uci": lambda v: write_shards(_docword(), fresh("uci"), 2, vocab=v),
        "write_shards_corpus": lambda v: write_shards(corpus(), fresh("uci"), 2, vocab=v)}
    for name, text in files.items():
        for bom in (False, True):
            for crlf in (False, True):
                v = _vocab_file(f"{name}{int(bom)}{int(crlf)}", text, bom, crlf)
                for entry, read in readers.items():
                    out.append(case(f"vocabulary-file/{entry}/{name}/bom{int(bom)}/"
                                    f"crlf{int(crlf)}", lambda r=read, p=v: r(p)))
    for bom in (False, True):
        for crlf in (False, True):
            v = _vocab_file(f"good{int(bom)}{int(crlf)}", "a\nb\nc\nd\n", bom, crlf)
            for entry, read in readers.items():
                out.append(case(f"vocabulary-file/{entry}/good/bom{int(bom)}/crlf{int(crlf)}",
                                lambda r=read, p=v: r(p), "accept", _abcd))
    return out


def _abcd(result: Any) -> bool:
    words = result.vocabulary
    return list(words() if callable(words) else words) == ["a", "b", "c", "d"]


# ---------------------------------------------------------------------- ids
ID_BAD = [("dup_int", [0, 1, 2, 3, 0]), ("dup_str", ["a", "b", "a", "c", "d"]),
          ("dup_np", np.array([5, 6, 7, 5, 8])), ("float_frac", [0.5, 1.5, 2.5, 3.5, 4.5]),
          ("float_whole", np.arange(5.0)), ("nan", [0, 1, np.nan, 3, 4]),
          ("bool", [True, False, True, False, True]),
          ("mixed", np.array([0, "a", 2, 3, 4], dtype=object)),
          ("none", np.array([0, None, 2, 3, 4], dtype=object)),
          ("complex", np.arange(5) + 1j), ("short", [0, 1, 2]), ("2d", [[0, 1, 2, 3, 4]]),
          ("text", "abcde"), ("dict", {0: 1})]
ID_GOOD = [("ints", [10, 11, 12, 13, 14]), ("strings", ["p", "q", "r", "s", "t"]),
           ("uint8", np.arange(5, dtype=np.uint8)), ("object_str",
                                                       np.array(list("vwxyz"), dtype=object))]


def _id_entry_points() -> list[tuple[str, Callable[[Any], Any]]]:
    import networkx as nx

    from topiclink.data import Corpus, Links, as_corpus, as_links
    from topiclink.data.io import corpus_from_texts, read_linqs_cites

    c = corpus()
    cites = folder() / "ids.cites"
    cites.write_text("")

    def graph(ids: Any) -> Any:
        g = nx.Graph()
        try:
            seq = [v for v in np.asarray(ids).ravel().tolist() if v is not None]
        except (TypeError, ValueError):
            seq = []
        if len(seq) >= 2:
            g.add_edge(seq[1], seq[0])
        return g

    def linqs(ids: Any) -> Any:
        seq = list(np.asarray(ids).ravel().tolist()) if not isinstance(ids, dict) else [0, 1]
        cites.write_text(f"{seq[0]}\t{seq[1]}\n" if len(seq) >= 2 else "")
        return read_linqs_cites(cites, ids)

    return [
        ("Corpus", lambda ids: Corpus(c.counts, doc_ids=ids)),
        ("from_networkx", lambda ids: Links.from_networkx(graph(ids), doc_ids=ids)),
        ("as_links_graph", lambda ids: as_links(graph(ids), 5, doc_ids=ids)),
        ("read_linqs_cites", linqs),
        ("corpus_from_texts", lambda ids: corpus_from_texts(
            ["graph node", "topic word", "node word", "graph topic", "word word"],
            doc_ids=ids)),
        ("as_corpus_frame_index", lambda ids: as_corpus(pd.DataFrame(
            c.counts.toarray(), index=pd.Index(np.asarray(ids).ravel(), dtype=object)
            if np.ndim(ids) == 1 else ids))),
    ]


def _same_type(ids: Any) -> Callable[[Any], bool]:
    want = type(np.asarray(ids).tolist()[0])

    def check(r: Any) -> bool:
        got = getattr(r, "doc_ids", None)
        return got is None or isinstance(got.tolist()[0], want)
    return check


def id_cases() -> list[Case]:
    out = []
    for entry, call in _id_entry_points():
        for label, ids in ID_BAD:
            if entry == "as_corpus_frame_index" and label in ("text", "dict", "2d", "short"):
                continue                 # pandas itself refuses to build such a frame
            if entry in ("from_networkx", "read_linqs_cites") and label == "short":
                continue                 # fewer ids is fine where no length is implied
            out.append(case(f"ids/{entry}/{label}", lambda c=call, i=ids: c(i)))
        for label, ids in ID_GOOD:
            out.append(case(f"ids/{entry}/{label}", lambda c=call, i=ids: c(i), "accept",
                            _same_type(ids)))
    return out


# ---------------------------------------------------------------------- shards
def _shard_set(name: str, n_shards: int = 2) -> Any:
    """A shard set of :func:`corpus` with string ids and titles (so that every shard
    stores its own ``doc_ids`` and ``titles`` members)."""
    from topiclink.data import Corpus, write_shards

    c = corpus()
    c = Corpus(c.counts, vocabulary=c.vocabulary, doc_ids=[f"d{i}" for i in range(c.n_docs)],
               titles=[f"t{i}" for i in range(c.n_docs)])
    return write_shards(c, folder() / "shards" / name, n_shards, overwrite=True)


def _tampered(name: str, file: str | None = None, **arrays: Any) -> Path:
    """A shard set whose shard 0 has ``arrays`` replaced and a matching checksum."""
    from topiclink.data.shards import file_sha256

    ss = _shard_set(name)
    p = ss.path(0)
    with np.load(p, allow_pickle=False) as npz:
        members = {k: npz[k] for k in npz.files}
    members.update(arrays)
    with zipfile.ZipFile(p, "w") as zf:
        for k, v in members.items():
            with zf.open(f"{k}.npy", "w") as f:
                np.lib.format.write_array(f, np.asarray(v), allow_pickle=False)
    mp = ss.directory / "manifest.json"
    m = json.loads(mp.read_text())
    m["shards"][0]["sha256"] = file_sha256(p)
    mp.write_text(json.dumps(m))
    if file is not None:
        (ss.directory / "vocabulary.json").write_text(file)
    return ss.directory


def _shard0_words() -> np.ndarray:
    return _shard_set("words0").load(0)[0]


def _with(words: np.ndarray, pos: int, value: int) -> np.ndarray:
    w = words.copy()
    w[pos] = value
    return w


def shard_cases() -> list[Case]:
    from topiclink.data import ShardSet, write_shards

    out = []
    uci = _docword()
    for source_name, source in (("corpus", corpus), ("uci", lambda: uci)):
        for label, n in (("float", 1.5), ("whole_float", 2.0), ("text", "2"), ("true", True),
                         ("false", False), ("zero", 0), ("negative", -1), ("none", None),
                         ("np_float", np.float64(2)), ("list", [2]), ("huge_float", 1e30)):
            out.append(case(f"shards/write/{source_name}/n_shards_{label}",
                            lambda s=source, k=n: write_shards(s(), fresh("n"), k)))
            out.append(case(f"shards/write/{source_name}/read_rows_{label}",
                            lambda s=source, k=n: write_shards(s(), fresh("r"), 1,
                                                               read_rows=k)))
        out.append(case(f"shards/write/{source_name}/np_int", lambda s=source: write_shards(
            s(), fresh("i"), np.int64(2)), "accept", lambda r: r.n_shards == 2))
        for label, target in (("file", "file"), ("nonempty_dir", "dir"), ("symlink", "link"),
                              ("link_to_shards", "shardlink")):
            out.append(case(f"shards/overwrite/{source_name}/{label}",
                            lambda s=source, t=target: _overwrite(s(), t)))
        out.append(case(f"shards/overwrite/{source_name}/shard_dir",
                        lambda s=source: _overwrite(s(), "shards"), "accept"))
        out.append(case(f"shards/overwrite/{source_name}/empty_dir",
                        lambda s=source: _overwrite(s(), "empty"), "accept"))
        for label, path in (("none", None), ("int", 7), ("blank", ""), ("list", ["x"]),
                            ("bytes", b"x")):
            out.append(case(f"shards/write/{source_name}/directory_{label}",
                            lambda s=source, p=path: write_shards(s(), p, 1)))
        out.append(case(f"shards/write/{source_name}/overwrite_text",
                        lambda s=source: write_shards(s(), fresh("o"), 1, overwrite="yes")))
    for label, path in (("none", None), ("int", 7), ("blank", ""), ("float", 1.5),
                        ("missing", "/nonexistent/shards"), ("list", ["a"])):
        out.append(case(f"shards/open/{label}", lambda p=path: ShardSet.open(p)))
    out.append(case("shards/open/file", lambda: ShardSet.open(_docword())))
    for verb in ("load", "corpus", "path", "task_arguments"):
        for label, i in (("seven", 7), ("two", 2), ("minus1", -1), ("float", 1.0),
                         ("text", "0"), ("none", None), ("true", True), ("np_big",
                                                                         np.int64(9))):
            out.append(case(f"shards/{verb}/{label}",
                            lambda v=verb, k=i: getattr(_shard_set("idx"), v)(k)))
        out.append(case(f"shards/{verb}/np_int", lambda v=verb: getattr(
            _shard_set("idx"), v)(np.int64(1)), "accept"))
    tampers: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ("word_over", lambda: {"words": _with(_shard0_words(), 0, 4)}),
        ("word_far_over", lambda: {"words": _with(_shard0_words(), -1, 2**31 - 1)}),
        ("word_negative", lambda: {"words": _with(_shard0_words(), 1, -1)}),
        ("doc_range_reversed", lambda: {"doc_range": np.array([2, 0], dtype=np.int64)}),
        ("doc_range_shifted", lambda: {"doc_range": np.array([1, 3], dtype=np.int64)}),
        ("doc_range_negative", lambda: {"doc_range": np.array([-2, 0], dtype=np.int64)}),
        ("doc_range_float", lambda: {"doc_range": np.array([0.0, 2.0])}),
        ("doc_ids_dup", lambda: {"doc_ids": np.array(["d0", "d0"])}),
        ("doc_ids_float", lambda: {"doc_ids": np.array([0.5, 1.5])}),
        ("doc_ids_short", lambda: {"doc_ids": np.array(["d0"])}),
        ("titles_short", lambda: {"titles": np.array(["x"])}),
    ]
    for label, make in tampers:
        for verb in ("load", "corpus", "to_corpus"):
            # load reads only the tokens: ids and titles are checked where they are read
            expect = "accept" if verb == "load" and label.startswith(("doc_ids",
                                                                       "titles")) else "error"
            out.append(case(f"shards/tampered/{label}/{verb}",
                            lambda m=make, v=verb, n=label: _tampered_call(n, m, v), expect))
    for label, text in (("dup", json.dumps(["a", "b", "a", "c"])),
                        ("not_words", json.dumps([1, 2, 3, 4])),
                        ("short", json.dumps(["a"])), ("not_json", "[")):
        out.append(case(f"shards/vocabulary_json/{label}",
                        lambda t=text, n=label: ShardSet.open(
                            _tampered(f"voc-{n}", file=t)).vocabulary()))
    return out


def _tampered_call(name: str, make: Callable[[], dict[str, Any]], verb: str) -> Any:
    from topiclink.data import ShardSet

    ss = ShardSet.open(_tampered(f"t-{name}-{verb}", **make()))
    if verb == "to_corpus":
        return ss.to_corpus()
    return getattr(ss, verb)(0)


def _overwrite(source: Any, target: str) -> Any:
    from topiclink.data import write_shards

    base = fresh("ow").parent
    p = base / "target"
    if target == "file":
        p.write_text("precious")
    elif target == "dir":
        p.mkdir()
        (p / "notes.txt").write_text("precious")
    elif target == "empty":
        p.mkdir()
    elif target == "link":
        (base / "real.txt").write_text("precious")
        os.symlink(base / "real.txt", p)
    elif target == "shardlink":
        write_shards(corpus(), base / "real", 1)
        os.symlink(base / "real", p)
    elif target == "shards":
        write_shards(corpus(), p, 1)
    return write_shards(source, p, 1, overwrite=True)


# ---------------------------------------------------------------------- labels
def label_cases() -> list[Case]:
    from topiclink.data import Corpus, Links
    from topiclink.data.clean import drop_empty_documents

    c = Corpus(sp.csr_matrix(np.array([[1, 0], [0, 0], [1, 1], [0, 0], [2, 1]])))
    links = Links.from_pairs([[0, 2], [1, 4], [2, 4]], 5)
    out = []
    for label, y in (("short", [1, 2]), ("long", list(range(7))), ("empty", []),
                     ("scalar", 3), ("text", "abcde"), ("dict", {0: 1}),
                     ("sparse", sp.csr_matrix(np.ones((5, 1)))), ("2d_short", np.ones((2, 2))),
                     ("kept_length", [0, 1, 0])):
        for with_links in (False, True):
            out.append(case(f"labels/drop_empty_documents/{label}/links{int(with_links)}",
                            lambda yy=y, w=with_links: drop_empty_documents(
                                c, links if w else None, yy)))
    for label, lk in (("other_corpus", Links.from_pairs([[0, 1]], 9)), ("array", [[0, 1]])):
        out.append(case(f"labels/drop_empty_documents/links_{label}",
                        lambda x=lk: drop_empty_documents(c, x)))
    out.append(case("labels/drop_empty_documents/not_corpus",
                    lambda: drop_empty_documents(np.ones((2, 2)))))
    for label, y in (("list", [0, 1, 0, 1, 1]), ("strings", list("ababa")),
                     ("2d_rows", np.ones((5, 2)))):
        out.append(case(f"labels/drop_empty_documents/good_{label}",
                        lambda yy=y: drop_empty_documents(c, links, yy), "accept",
                        lambda r: len(r[2]) == 3 and r[1].pairs.tolist() == [[0, 1], [1, 2]]))
    return out


# ---------------------------------------------------------------------- from_documents
def from_documents_cases() -> list[Case]:
    from topiclink.data import Corpus

    out = []
    words = [("strings", ["a", "b"]), ("numeric_strings", ["0", "1"]), ("bytes", [b"0", b"1"]),
             ("fraction", [0.5, 1.0]), ("nan", [np.nan, 1.0]), ("inf", [np.inf, 0]),
             ("none", [None, 1]), ("negative", [-1, 0]), ("over", [0, 9]),
             ("nested", [[0], [1]]), ("bool", [True, False])]
    counts = [("negative", [1, -1]), ("nan", [1, np.nan]), ("fraction", [1, 0.5]),
              ("strings", ["1", "2"]), ("none", [None, 1]), ("inf", [np.inf, 1]),
              ("huge", [2**40, 1])]
    for n_words in (None, 4):
        for label, w in words:
            if label == "over" and n_words is None:
                continue                 # the vocabulary size is taken from the ids
            out.append(case(f"from_documents/word_ids_{label}/n_words_{n_words}",
                            lambda ww=w, n=n_words: Corpus.from_documents([(ww, [1, 2])], n)))
        for label, cc in counts:
            out.append(case(f"from_documents/counts_{label}/n_words_{n_words}",
                            lambda x=cc, n=n_words: Corpus.from_documents([([0, 1], x)], n)))
    for label, docs in (("not_pairs", [1, 2, 3]), ("triples", [([0], [1], [2])]),
                        ("text", "documents"), ("none", None), ("shape", [([0, 1], [1])]),
                        ("dict", {0: ([0], [1])})):
        out.append(case(f"from_documents/documents_{label}",
                        lambda d=docs: Corpus.from_documents(d)))
    for label, n in (("float", 2.5), ("text", "4"), ("negative", -1), ("true", True)):
        out.append(case(f"from_documents/n_words_{label}",
                        lambda k=n: Corpus.from_documents([([0, 1], [1, 1])], k)))
    for label, w in (("whole_floats", [0.0, 3.0]), ("uint8", np.array([0, 3], np.uint8)),
                     ("int", [3, 0])):
        out.append(case(f"from_documents/good_{label}",
                        lambda ww=w: Corpus.from_documents([(ww, [1, 2])], 4), "accept",
                        lambda r: r.n_words == 4 and r.n_tokens == 3))
    return out


# ---------------------------------------------------------------------- counts (siblings)
def _matrix(value: float, kind: str) -> Any:
    m = np.array([[1, 2, 0, 1], [0, 1, 3, 0], [2, 0, 1, 1]], dtype=float)
    m[1, 3] = value
    return {"dense": m, "csr": sp.csr_matrix(m), "frame": pd.DataFrame(m),
            "list": m.tolist()}[kind]


def count_cases() -> list[Case]:
    from topiclink.data import Corpus, as_corpus

    out = []
    for kind in ("dense", "csr", "frame", "list"):
        for label, value in (("negative", -1), ("nan", np.nan), ("inf", np.inf),
                             ("fraction", 0.5), ("huge", 2.0**40)):
            for entry, call in (("Corpus", Corpus), ("as_corpus", as_corpus)):
                if entry == "Corpus" and kind == "frame":
                    continue
                out.append(case(f"counts/{entry}/{kind}/{label}",
                                lambda c=call, k=kind, v=value: c(_matrix(v, k))))
    return out


# ---------------------------------------------------------------------- link readers
def _linqs_dir(name: str, cites: bytes, bom: bool = False, crlf: bool = False) -> Path:
    d = folder() / "linqs" / name
    d.mkdir(parents=True, exist_ok=True)
    rows = [f"d{i}\t" + "\t".join("1" if (i + j) % 3 == 0 else "0" for j in range(6))
            + f"\t{'ab'[i % 2]}" for i in range(10)]
    sep = "\r\n" if crlf else "\n"
    (d / "toy.content").write_bytes((b"\xef\xbb\xbf" if bom else b"")
                                    + sep.join(rows).encode() + sep.encode())
    body = cites.replace(b"\n", b"\r\n") if crlf else cites
    (d / "toy.cites").write_bytes((b"\xef\xbb\xbf" if bom else b"") + body)
    return d


LINQS_BAD = {"all_unknown": b"x1\tx2\nx3\tx4\n",
             "mostly_unknown": b"d1\td0\nx1\td0\nd2\tx2\nx3\tx4\n"}
# a .cites without links is a graph without links (warned): read, refused by links models
LINQS_NO_LINKS = {"empty": b"", "blank_lines": b"\n\n  \n"}
LINQS_GOOD = {"some_unknown": b"d1\td0\nd2\td0\nd3\td1\nx1\td0\n",
              "all_known": b"d1\td0\nd2\td0\nd3\td1\n"}


def link_reader_cases() -> list[Case]:
    from topiclink.data.io import read_linqs
    from topiclink.datasets import load_dataset

    out = []
    readers: dict[str, Callable[[Path], Any]] = {
        "read_linqs": lambda d: read_linqs(d / "toy.content", d / "toy.cites"),
        "read_linqs_undirected": lambda d: read_linqs(d / "toy.content", d / "toy.cites",
                                                      directed=False),
        "load_dataset_linqs": lambda d: load_dataset("linqs", data_dir=d)}
    for bom in (False, True):
        for crlf in (False, True):
            tag = f"bom{int(bom)}/crlf{int(crlf)}"
            for label, text in LINQS_BAD.items():
                d = _linqs_dir(f"{label}-{int(bom)}{int(crlf)}", text, bom, crlf)
                for entry, read in readers.items():
                    out.append(case(f"linqs/{entry}/{label}/{tag}", lambda r=read, p=d: r(p)))
            for label, text in LINQS_GOOD.items():
                d = _linqs_dir(f"{label}-{int(bom)}{int(crlf)}", text, bom, crlf)
                for entry, read in readers.items():
                    out.append(case(f"linqs/{entry}/{label}/{tag}", lambda r=read, p=d: r(p),
                                    "accept", _three_links))
            for label, text in LINQS_NO_LINKS.items():
                d = _linqs_dir(f"{label}-{int(bom)}{int(crlf)}", text, bom, crlf)
                for entry, read in readers.items():
                    out.append(case(f"linqs/{entry}/{label}/{tag}", lambda r=read, p=d: r(p),
                                    "accept", _no_links))
    return out


def _no_links(r: Any) -> bool:
    links = r[1] if isinstance(r, tuple) else r.links
    return links.n_links == 0


def _three_links(r: Any) -> bool:
    links = r[1] if isinstance(r, tuple) else r.links
    return links.n_links == 3


def cli_cases() -> list[Case]:
    from tests.fuzz.cases_cli import cli_case

    out = []
    for label, text in (("empty", LINQS_NO_LINKS["empty"]),
                        ("mostly_unknown", LINQS_BAD["mostly_unknown"])):
        d = _linqs_dir(f"cli-{label}", text)
        for command in ("rtm", "lmv", "lda"):
            # an LDA needs no links: a .cites without any is fitted (warned)
            expect = "accept" if (command, label) == ("lda", "empty") else "error"
            out.append(cli_case(f"data/cli/fit-{command}/linqs-{label}",
                                ["fit", command, "--dataset", "linqs", "--data", str(d),
                                 "-k", "2", "-n", "1"], expect))
    doc = _docword()
    for label, text in (("dup", "a\nb\na\nc\n"), ("dup_crlf_bom", "a\nb\nc\na\n")):
        v = _vocab_file(f"cli-{label}", text, bom=label != "dup", crlf=label != "dup")
        out.append(cli_case(f"data/cli/fit-lda/vocab-{label}",
                            ["fit", "lda", "--input", str(doc), "--vocab", str(v), "-k", "2",
                             "-n", "1"]))
    return out


# ---------------------------------------------------------------------- string options
OPTION_BAD = [("bogus", "bogus"), ("ignore", "ignore"), ("capitalised", "Drop"),
              ("padded", " drop"), ("none", None), ("true", True), ("zero", 0),
              ("list", ["drop"]), ("bytes", b"drop")]
FLAG_BAD = [("text_yes", "yes"), ("text_false", "False"), ("one", 1), ("zero", 0),
            ("list", [True])]


def _option_entry_points() -> list[tuple[str, str, tuple[str, ...],
                                         Callable[[Any], Any]]]:
    """(entry, option, allowed values, call with the option set): every data constructor
    taking a string option."""
    import networkx as nx

    from topiclink.data import Links
    from topiclink.data.tensor import RelationalTensor

    A = _adjacency(0, (0, 1))
    g = nx.DiGraph([(0, 1), (1, 2)])
    frame = pd.DataFrame({"head": ["a", "b"], "relation": ["r", "r"], "tail": ["b", "a"]})
    return [
        ("from_pairs", "self_links", ("error", "drop"),
         lambda v: Links.from_pairs([[0, 1], [2, 3]], 5, self_links=v)),
        ("from_pairs", "duplicates", ("error", "drop"),
         lambda v: Links.from_pairs([[0, 1], [2, 3]], 5, duplicates=v)),
        ("from_adjacency", "self_links", ("error", "drop"),
         lambda v: Links.from_adjacency(A, self_links=v)),
        ("from_networkx", "self_links", ("error", "drop"),
         lambda v: Links.from_networkx(g, self_links=v)),
        ("tensor_from_dataframe", "duplicates", ("merge", "error"),
         lambda v: RelationalTensor.from_dataframe(frame, duplicates=v)),
        ("tensor_from_networkx", "duplicates", ("merge", "error"),
         lambda v: RelationalTensor.from_networkx(nx.MultiDiGraph(
             [(0, 1, {"relation": "r"})]), duplicates=v)),
    ]


def option_cases() -> list[Case]:
    """Each string option of each data constructor: every value outside its allowed set
    refused (never read as one of them), every allowed value accepted; the ``directed``
    flags of the link constructors take True/False (None: inferred) only."""
    from topiclink.data import Links, as_links

    out = []
    for entry, option, allowed, call in _option_entry_points():
        for label, value in OPTION_BAD:
            out.append(case(f"options/{entry}/{option}/{label}", lambda c=call, v=value: c(v)))
        for value in allowed:
            out.append(case(f"options/{entry}/{option}/good_{value}",
                            lambda c=call, v=value: c(v), "accept"))
    flags: list[tuple[str, Callable[[Any], Any], bool]] = [
        ("from_pairs", lambda v: Links.from_pairs([[0, 1]], 3, directed=v), False),
        ("from_adjacency", lambda v: Links.from_adjacency(_adjacency(0, (0, 1)),
                                                          directed=v), True),
        ("as_links", lambda v: as_links(np.array([[0, 1]]), 3, directed=v), True)]
    for entry, call, none_ok in flags:
        for label, value in FLAG_BAD + ([] if none_ok else [("none", None)]):
            out.append(case(f"options/{entry}/directed/{label}", lambda c=call, v=value: c(v)))
        for label, value in (("true", True), ("false", False), ("np_true", np.True_)):
            out.append(case(f"options/{entry}/directed/good_{label}",
                            lambda c=call, v=value: c(v), "accept",
                            lambda r, v=value: r.directed == bool(v)))
    return out


def cases() -> list[Case]:
    return (adjacency_cases() + vocabulary_cases() + id_cases() + shard_cases()
            + label_cases() + from_documents_cases() + count_cases() + link_reader_cases()
            + cli_cases() + option_cases())
