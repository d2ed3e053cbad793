"""LINQS ``.content`` / ``.cites`` files (Cora, CiteSeer, WebKB of Sen et al. 2008).

``<name>.content`` holds one document per line, ``<id> <V binary word indicators> <label>``
(TAB-separated in the LINQS releases; whitespace-separated files are accepted too).
``<name>.cites`` holds one link per line, ``<cited id> <citing id>`` separated by a TAB
(Cora) or a space (WebKB); the link goes from the second column to the first.
Links naming an id missing from ``.content`` (17 ids in the real CiteSeer) are dropped with
one logged warning unless ``unknown_ids="error"``; a leading UTF-8 BOM is ignored.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.checks import DataError, check_ids, where
from topiclink.data.corpus import Corpus
from topiclink.data.io.rda import check_file, check_text, read_bytes
from topiclink.data.links import Links

__all__ = ["read_linqs", "read_linqs_content", "read_linqs_cites", "read_linqs_dir"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]
Policy = Literal["error", "drop"]

_ZERO, _ONE = ord("0"), ord("1")


_BOM = b"\xef\xbb\xbf"

#: How many unknown ids the dropped-links warning names.
_SHOW_IDS = 5


def _read_lines(path: Path) -> list[bytes]:
    """The lines of a (possibly gzip-compressed) file, without a leading UTF-8 BOM; a file
    that is not UTF-8 text (or holds a NUL byte) raises naming the line."""
    raw = read_bytes(path)
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    check_text(raw, path)
    return raw.split(b"\n")


def _decode(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


def read_linqs_content(path: PathLike) -> tuple[Corpus, np.ndarray, np.ndarray]:
    """Read a LINQS ``.content`` file of binary word indicators.

    Parameters
    ----------
    path : str or path-like
        ``<id> <V values in {0, 1}> <label>`` per line; TAB- or whitespace-separated,
        optionally gzip-compressed.  Blank lines are skipped.

    Returns
    -------
    corpus : Corpus
        ``n_docs x V`` binary counts; ``doc_ids`` are the string ids, the vocabulary is
        ``"word_0" .. "word_<V-1>"`` (LINQS ships no word strings), ``metadata["label"]``.
    labels : ndarray of str, shape (n_docs,)
    line_numbers : ndarray of int64, shape (n_docs,)
        1-based line of each document in the file.

    Raises
    ------
    DataError
        ``file:line`` of the first line with a wrong column count, a value other than 0
        or 1, or a repeated document id.
    """
    p = check_file(path)
    lines = _read_lines(p)
    ids: list[bytes] = []
    labels: list[bytes] = []
    mids: list[bytes] = []
    linenos: list[int] = []
    sep: bytes | None = None
    n_values = -1
    for k, line in enumerate(lines, start=1):
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        if sep is None:
            sep = b"\t" if b"\t" in line else b" "
        if sep == b" ":
            parts = line.split()
            if len(parts) < 3:
                raise DataError(f"{where(p, k)}: expected <id> <word values> <label>, "
                                f"found {len(parts)} columns")
            ids.append(parts[0])
            labels.append(parts[-1])
            mids.append(b" ".join(parts[1:-1]))
        else:
            first, last = line.find(sep), line.rfind(sep)
            if first == last:
                n_cols = 1 if first < 0 else 2
                raise DataError(f"{where(p, k)}: expected <id> <word values> <label>, "
                                f"found {n_cols} columns")
            ids.append(line[:first].strip())
            labels.append(line[last + 1:].strip())
            mids.append(line[first + 1:last])
        linenos.append(k)
        if n_values < 0:
            n_values = mids[-1].count(sep) + 1
    if not ids:
        raise DataError(f"{p}: no documents (the file is empty)")
    assert sep is not None
    n_docs, V = len(ids), n_values
    width = 2 * V - 1
    lens = np.fromiter((len(m) for m in mids), dtype=np.int64, count=n_docs)
    bad = lens != width
    good = np.flatnonzero(~bad)
    buf = np.frombuffer(b"".join([mids[i] + sep for i in good]), dtype=np.uint8)
    buf = buf.reshape(good.size, 2 * V)
    vals, seps = buf[:, 0::2], buf[:, 1::2]
    content_bad = (seps != sep[0]).any(axis=1) | ((vals != _ZERO) & (vals != _ONE)).any(axis=1)
    bad[good[content_bad]] = True
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        _raise_bad_row(p, linenos[r], mids[r], sep, V)
    dense = (vals == _ONE).astype(np.int32)
    doc_ids = np.array([_decode(i) for i in ids])
    uniq, first_pos, cnt = np.unique(doc_ids, return_index=True, return_counts=True)
    if (cnt > 1).any():
        dup_rows = np.flatnonzero(np.isin(doc_ids, uniq[cnt > 1]))
        # the first row that repeats an earlier id
        seen: dict[str, int] = {}
        for r in dup_rows:
            if doc_ids[r] in seen:
                raise DataError(f"{where(p, linenos[r])}: duplicate document id "
                                f"{str(doc_ids[r])!r} (first at line "
                                f"{linenos[seen[doc_ids[r]]]})")
            seen[doc_ids[r]] = int(r)
    label_arr = np.array([_decode(b) for b in labels])
    vocab = np.array([f"word_{j}" for j in range(V)])
    corpus = Corpus(sp.csr_matrix(dense), vocabulary=vocab, doc_ids=doc_ids,
                    metadata=pd.DataFrame({"label": label_arr}), name=p.stem)
    n_empty = corpus.empty_documents().size
    if n_empty:
        logger.info("%s: %d documents without any word (kept)", p.name, n_empty)
    return corpus, label_arr, np.asarray(linenos, dtype=np.int64)


def _raise_bad_row(path: Path, line: int, mid: bytes, sep: bytes, V: int) -> None:
    tokens = mid.split(sep)
    if len(tokens) != V:
        raise DataError(f"{where(path, line)}: expected {V + 2} columns (<id>, {V} word "
                        f"values, <label>) as on the first line, found {len(tokens) + 2}")
    for j, t in enumerate(tokens):
        if t not in (b"0", b"1"):
            raise DataError(f"{where(path, line)}: word column {j} has value "
                            f"{_decode(t)!r}; expected 0 or 1")
    raise DataError(f"{where(path, line)}: malformed line")  # pragma: no cover


def read_linqs_cites(path: PathLike, doc_ids: np.ndarray | Sequence[str], directed: bool = True,
                     self_links: Policy = "drop", duplicates: Policy = "drop",
                     content_name: str = "the .content file",
                     unknown_ids: Policy = "drop") -> Links:
    """Read a LINQS ``.cites`` file into :class:`Links` over ``doc_ids``.

    Parameters
    ----------
    path : str or path-like
        ``<cited id> <citing id>`` per line (TAB or spaces).  The link is citing ->
        cited, so ``Links.source`` is the second column and ``Links.target`` the first.
    doc_ids : sequence of str
        Document ids in corpus order.
    directed : bool
        Undirected links merge ``a -> b`` and ``b -> a`` into one pair (the second is a
        duplicate).
    self_links, duplicates : {"drop", "error"}
        ``"drop"`` removes self-links / repeated pairs and logs how many; ``"error"``
        raises naming the line.
    content_name : str
        How to name the id source in the unknown-id warning / error.
    unknown_ids : {"drop", "error"}
        A link to (or from) an id that is not in ``doc_ids`` (the real CiteSeer files
        cite 17 such ids): ``"drop"`` (default) removes those links and logs one warning
        with their count and the first few ids; ``"error"`` raises naming the line.
        Either way, a file where more than half of the links name unknown ids (the wrong
        ``.content`` file) is refused with the counts and the first unknown ids.

    Returns
    -------
    Links
        A file without any link (empty, or blank lines only) gives no links, with a
        logged warning: the documents are still a corpus (an LDA needs no links), and
        the models of links refuse it when fitted.

    Raises
    ------
    DataError
        ``file:line`` of a line without exactly two ids or (policy ``"error"``) of an id
        missing from ``doc_ids``, of a self-link or of a repeated link; more than half of
        the links to unknown ids; ``doc_ids`` not distinct.
    """
    if unknown_ids not in ("error", "drop"):
        raise ValueError(f"unknown_ids must be 'error' or 'drop', got {unknown_ids!r}")
    p = check_file(path)
    ids = check_ids(doc_ids, "read_linqs_cites: doc_ids").tolist()
    lookup = {str(v): i for i, v in enumerate(ids)}
    if len(lookup) != len(ids):
        raise DataError("read_linqs_cites: doc_ids hold ids that are equal as text (e.g. 1 "
                        "and '1')")
    pairs: list[tuple[int, int]] = []
    linenos: list[int] = []
    n_dropped = 0
    unknown: dict[str, None] = {}  # insertion-ordered set
    for k, line in enumerate(_read_lines(p), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2:
            raise DataError(f"{where(p, k)}: expected 2 columns (<cited id> <citing id>), "
                            f"found {len(parts)}")
        keys = [_decode(part) for part in parts]
        missing = [key for key in keys if key not in lookup]
        if missing:
            if unknown_ids == "error":
                raise DataError(f"{where(p, k)}: document id {missing[0]!r} is not in "
                                f"{content_name} (unknown_ids='drop' drops such links)")
            n_dropped += 1
            unknown.update(dict.fromkeys(missing))
            continue
        pairs.append((lookup[keys[1]], lookup[keys[0]]))  # citing -> cited
        linenos.append(k)
    if not pairs and not n_dropped:
        # a graph without edges is still a valid corpus (a topic model of the documents
        # needs no links); the models of links refuse it when they are fitted
        logger.warning("%s: no links (the file is empty or blank): the %d documents have "
                       "no citations; a model of links cannot be fitted to them", p.name,
                       len(lookup), extra={"topiclink_no_links": True})
    if n_dropped:
        shown = ", ".join(repr(u) for u in list(unknown)[:_SHOW_IDS])
        more = ", ..." if len(unknown) > _SHOW_IDS else ""
        if n_dropped > len(pairs):
            raise DataError(f"{p}: {n_dropped} of {n_dropped + len(pairs)} links name ids "
                            f"not in {content_name} ({len(unknown)} unknown ids, first: "
                            f"{shown}{more}); is this the .cites file of that .content "
                            f"file? (at most half may be unknown)")
        logger.warning("%s: dropped %d links to %d ids not in %s (first: %s%s)", p.name,
                       n_dropped, len(unknown), content_name, shown, more)
    arr = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    lines = np.asarray(linenos, dtype=np.int64)
    _check_pairs(p, arr, lines, len(lookup), directed, self_links, duplicates)
    return Links.from_pairs(arr, len(lookup), directed=directed, self_links=self_links,
                            duplicates=duplicates, source_name=p.name)


def _check_pairs(path: Path, arr: np.ndarray, lines: np.ndarray, n_docs: int, directed: bool,
                 self_links: Policy, duplicates: Policy) -> None:
    """Raise ``file:line`` errors for self-links / duplicates under the "error" policy."""
    for name, policy in (("self_links", self_links), ("duplicates", duplicates)):
        if policy not in ("error", "drop"):
            raise ValueError(f"{name} must be 'error' or 'drop', got {policy!r}")
    selfs = arr[:, 0] == arr[:, 1]
    if self_links == "error" and selfs.any():
        r = int(np.flatnonzero(selfs)[0])
        raise DataError(f"{where(path, int(lines[r]))}: self-link (a document citing itself); "
                        f"{int(selfs.sum())} self-links in all (self_links='drop' removes them)")
    if duplicates == "error":
        keep = ~selfs
        a, ln = arr[keep], lines[keep]
        if not directed:
            a = np.sort(a, axis=1)
        key = a[:, 0] * n_docs + a[:, 1]
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        if first.size < key.size:
            dup = np.ones(key.size, dtype=bool)
            dup[first] = False
            r = int(np.flatnonzero(dup)[0])
            how = "" if directed else " (in either direction, links are undirected)"
            raise DataError(f"{where(path, int(ln[r]))}: repeats the link of line "
                            f"{int(ln[first[inverse[r]]])}{how}; {int(dup.sum())} repeated "
                            f"links in all (duplicates='drop' removes them)")


def read_linqs(content_path: PathLike, cites_path: PathLike, directed: bool = True,
               self_links: Policy = "drop", duplicates: Policy = "drop",
               unknown_ids: Policy = "drop") -> tuple[Corpus, Links, np.ndarray]:
    """Read a LINQS data set (``.content`` + ``.cites``).

    Parameters
    ----------
    content_path, cites_path : str or path-like
    directed : bool
        Keep the citing -> cited direction (default), or merge reciprocal links.
    self_links, duplicates : {"drop", "error"}
        Policy for self-links and repeated links in the ``.cites`` file; drops are logged
        with their count.
    unknown_ids : {"drop", "error"}
        Policy for links to ids missing from ``.content`` (see :func:`read_linqs_cites`):
        dropped with one logged warning by default.

    Returns
    -------
    corpus : Corpus
        Binary counts, string ``doc_ids``, vocabulary ``"word_<j>"`` (column j of the
        LINQS file), ``metadata["label"]``.
    links : Links
        ``source`` = citing document, ``target`` = cited document (positions in corpus).
    labels : ndarray of str, shape (n_docs,)

    Raises
    ------
    DataError
        ``file:line`` of the first malformed line (wrong column count, a value not 0/1,
        a duplicate id in ``.content``, or with ``unknown_ids="error"`` an unknown id in
        ``.cites``).

    Examples
    --------
    >>> corpus, links, labels = read_linqs("cora/cora.content", "cora/cora.cites")  # doctest: +SKIP
    """
    corpus, labels, _ = read_linqs_content(content_path)
    links = read_linqs_cites(cites_path, corpus.doc_ids, directed=directed,
                             self_links=self_links, duplicates=duplicates,
                             content_name=Path(content_path).name, unknown_ids=unknown_ids)
    return corpus, links, labels


def read_linqs_dir(folder: PathLike, names: Sequence[str] | None = None, directed: bool = True,
                   self_links: Policy = "drop", duplicates: Policy = "drop",
                   unknown_ids: Policy = "drop") -> tuple[Corpus, Links, np.ndarray]:
    """Read several LINQS data sets of one folder into one corpus (WebKB's universities).

    Parameters
    ----------
    folder : str or path-like
        Holds ``<name>.content`` and ``<name>.cites`` for each name.
    names : sequence of str, optional
        Which data sets, in this order; default every ``*.content`` with a matching
        ``.cites``, sorted by name.
    directed, self_links, duplicates, unknown_ids
        As in :func:`read_linqs`, applied to each data set.

    Returns
    -------
    corpus : Corpus
        The data sets stacked in order (they must have the same number of word columns);
        doc ids unchanged, ``metadata`` columns ``"label"`` and ``"university"`` (the name).
    links : Links
        Links only inside each data set, re-indexed to the stacked corpus.
    labels : ndarray of str

    Raises
    ------
    DataError
        A malformed line (see :func:`read_linqs`), different word-column counts, or a
        document id present in two data sets.
    """
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such directory")
    if names is None:
        names = sorted(c.stem for c in root.glob("*.content")
                       if c.with_suffix(".cites").is_file())
        if not names:
            raise DataError(f"{root}: no <name>.content / <name>.cites pairs")
    names = list(names)
    parts = [read_linqs(root / f"{n}.content", root / f"{n}.cites", directed=directed,
                        self_links=self_links, duplicates=duplicates, unknown_ids=unknown_ids)
             for n in names]
    V = parts[0][0].n_words
    for n, (c, _, _) in zip(names, parts, strict=True):
        if c.n_words != V:
            raise DataError(f"{root / (n + '.content')}: {c.n_words} word columns, but "
                            f"{names[0]}.content has {V}")
    owner: dict[str, str] = {}
    for n, (c, _, _) in zip(names, parts, strict=True):
        for i in c.doc_ids.tolist():
            if i in owner:
                raise DataError(f"{root / (n + '.content')}: document id {i!r} also appears "
                                f"in {owner[i]}.content")
            owner[i] = n
    offsets = np.cumsum([0] + [c.n_docs for c, _, _ in parts])
    pairs = np.concatenate([lk.pairs.astype(np.int64) + off
                            for (_, lk, _), off in zip(parts, offsets[:-1], strict=True)])
    labels = np.concatenate([lab for _, _, lab in parts])
    university = np.repeat(np.array(names), [c.n_docs for c, _, _ in parts])
    corpus = Corpus(sp.vstack([c.counts for c, _, _ in parts]).tocsr(),
                    vocabulary=parts[0][0].vocabulary,
                    doc_ids=np.concatenate([c.doc_ids for c, _, _ in parts]),
                    metadata=pd.DataFrame({"label": labels, "university": university}),
                    name=root.name)
    links = Links.from_pairs(pairs, int(offsets[-1]), directed=directed, self_links="error",
                             duplicates="error", source_name=str(root))
    return corpus, links, labels
