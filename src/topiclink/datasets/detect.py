"""Recognise the format of a data folder from its file names, and load it generically.

Formats (the names are also data set names of :func:`~topiclink.datasets.load_dataset`,
for a folder that matches several):

``"linqs"``
    ``<name>.content`` + ``<name>.cites`` (Cora, CiteSeer, WebKB of the LINQS group).
``"rlda"``
    R save files in the layout of the R ``lda`` package: ``<stem>.documents.rda`` and a
    ``<prefix>.vocab.rda`` (``<prefix>`` is ``<stem>`` or a dot-prefix of it, so
    ``newsgroup.train.documents.rda`` uses ``newsgroup.vocab.rda``); optionally
    ``<stem>.cites.rda``, ``<stem>.titles.rda``, ``<stem>.labels.rda``,
    ``<stem>.ratings.rda``.
``"uci-bow"``
    UCI bag-of-words: ``docword.<name>.txt`` (or ``.txt.gz``) + ``vocab.<name>.txt``.
``"triples"``
    Knowledge-graph triples: ``train.txt`` (and ``valid.txt``, ``test.txt`` when present)
    with three TAB-separated fields per line, or four: a count (an integer >= 0) after
    head, relation and tail on every line of a file, for a tensor of counts (BPBFM is a
    Poisson model of counts).
"""

from __future__ import annotations

import gzip
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from topiclink.data.checks import DataError
from topiclink.data.io.rda import (
    DataFileNotFoundError,
    lda_link_pairs,
    read_lda_documents,
    read_rda_object,
)
from topiclink.data.io.triples import read_triples
from topiclink.data.io.uci_bow import read_uci_bow
from topiclink.data.links import Links
from topiclink.datasets.base import Dataset
from topiclink.datasets.linqs import load_linqs
from topiclink.datasets.registry import DatasetSpec, dataset_specs, register_dataset

__all__ = ["FORMATS", "detect_format", "load_folder", "load_rlda_folder", "load_triples_folder",
           "load_uci_folder"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

#: The format names :func:`detect_format` returns, in the order they are tried.
FORMATS = ("linqs", "rlda", "uci-bow", "triples")

_EXPECTED = ("LINQS <name>.content + <name>.cites; R lda <stem>.documents.rda + "
             "<stem>.vocab.rda; UCI docword.<name>.txt[.gz] + vocab.<name>.txt; "
             "triples train.txt/valid.txt/test.txt (head<TAB>relation<TAB>tail[<TAB>count])")
_DOCWORD = re.compile(r"^docword\.(.+)\.txt(?:\.gz)?$")
_VOCAB = re.compile(r"^vocab\.(.+)\.txt$")
_SPLITS = ("train", "valid", "test")
_MAX_LISTED = 12
_MAX_LABEL_VALUES = 20


# ---------------------------------------------------------------------- detection
def _folder(folder: PathLike) -> Path:
    root = Path(folder).expanduser()
    if not root.is_dir():
        what = "is a file, not a folder" if root.exists() else "no such folder"
        raise DataFileNotFoundError(f"{root}: {what}")
    return root


def _listing(root: Path) -> str:
    entries = sorted(p.name + ("/" if p.is_dir() else "") for p in root.iterdir())
    if not entries:
        return "nothing (the folder is empty)"
    shown = ", ".join(entries[:_MAX_LISTED])
    rest = len(entries) - _MAX_LISTED
    return shown + (f", ... ({rest} more)" if rest > 0 else "")


def _hint(root: Path) -> str:
    """A pointer to the data set name when the folder is a known data set or a data home."""
    listed = [n for n, spec in dataset_specs().items() if spec.location == "home"]
    if root.name in listed:
        return f"; it looks like the {root.name!r} data set: load it by name " \
               f"(--dataset {root.name})"
    inside = [n for n in listed if (root / n).is_dir()]
    if inside:
        return f"; it holds data set folders ({', '.join(inside)}): pass a data set name " \
               f"(--dataset NAME) with this folder as the data home"
    return ""


def _files(root: Path) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_file()}


def _linqs_names(files: set[str]) -> list[str]:
    return sorted(f[:-len(".content")] for f in files
                  if f.endswith(".content") and f[:-len(".content")] + ".cites" in files)


def _rlda_vocab(stem: str, files: set[str]) -> str | None:
    """``<prefix>.vocab.rda`` for the longest dot-prefix of ``stem`` that has one."""
    parts = stem.split(".")
    for k in range(len(parts), 0, -1):
        name = ".".join(parts[:k]) + ".vocab.rda"
        if name in files:
            return name
    return None


def _rlda_stems(files: set[str]) -> dict[str, str]:
    """Document stem -> its vocabulary file, for every ``<stem>.documents.rda``."""
    out = {}
    for f in sorted(files):
        if f.endswith(".documents.rda"):
            stem = f[:-len(".documents.rda")]
            vocab = _rlda_vocab(stem, files)
            if vocab is not None:
                out[stem] = vocab
    return out


def _uci_names(files: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    docwords = {m.group(1): f for f in sorted(files) if (m := _DOCWORD.match(f))}
    vocabs = {m.group(1): f for f in sorted(files) if (m := _VOCAB.match(f))}
    return docwords, vocabs


def _first_line(path: Path) -> str | None:
    """The first non-blank line of a (possibly gzip-compressed) text file, or None."""
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
    opener = gzip.open if gz else open
    try:
        with opener(path, "rb") as f:  # type: ignore[operator]
            for _, line in zip(range(1000), f, strict=False):
                text = line.decode("utf-8", errors="replace").lstrip("\ufeff").rstrip("\r\n")
                if text.strip():
                    return text
    except (OSError, EOFError):
        return None
    return None


def _is_triples(root: Path, files: set[str]) -> bool:
    if "train.txt" not in files:
        return False
    line = _first_line(root / "train.txt")
    # 3 fields, or 4 with a count: a bad count is then refused by the reader, naming the
    # file and line (a 4th field read as "no known format" would hide where the problem is)
    return line is not None and len(line.split("\t")) in (3, 4)


def _matches(root: Path) -> list[str]:
    files = _files(root)
    found = []
    if _linqs_names(files):
        found.append("linqs")
    if _rlda_stems(files):
        found.append("rlda")
    docwords, vocabs = _uci_names(files)
    if docwords and vocabs:
        found.append("uci-bow")
    if _is_triples(root, files):
        found.append("triples")
    return found


def detect_format(folder: PathLike) -> str:
    """The data format of a folder, from its file names (and the first line of triples).

    Parameters
    ----------
    folder : str or path-like

    Returns
    -------
    str
        One of :data:`FORMATS`: ``"linqs"``, ``"rlda"``, ``"uci-bow"`` or ``"triples"``
        (see the module docstring for the file layouts).

    Raises
    ------
    DataFileNotFoundError
        (a ``FileNotFoundError`` and a ``DataError``) The folder does not exist, or no
        format matches; the one-line message lists what the folder holds.
    DataError
        Several formats match (load one by name, e.g. ``load_dataset("linqs", data_dir)``).
    """
    root = _folder(folder)
    found = _matches(root)
    if not found:
        raise DataFileNotFoundError(f"{root}: no known data format (found: {_listing(root)}; "
                                    f"expected {_EXPECTED}){_hint(root)}")
    if len(found) > 1:
        raise DataError(f"{root}: matches several formats ({', '.join(found)}); load it by "
                        f"format name (e.g. --dataset {found[0]})")
    return found[0]


# ---------------------------------------------------------------------- loaders
def _label_codes(values: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """int64 codes into sorted distinct values (numeric order for numbers) and their names."""
    values = np.asarray(values).ravel()
    if values.dtype.kind in "iuf":
        if values.dtype.kind == "f" and not np.isfinite(values).all():
            r = int(np.flatnonzero(~np.isfinite(values))[0])
            raise DataError(f"{what}: value {r} is {values[r]}")
        uniq, codes = np.unique(values, return_inverse=True)
        names = np.array([f"{v:g}" if values.dtype.kind == "f" else str(v)
                          for v in uniq.tolist()])
    else:
        uniq, codes = np.unique(values.astype(str), return_inverse=True)
        names = uniq
    return codes.astype(np.int64), names


def _rlda_split(root: Path, stem: str, vocab_file: str, files: set[str], directed: bool,
                name: str) -> Dataset:
    def part(suffix: str) -> Any:
        f = f"{stem}.{suffix}.rda"
        return read_rda_object(root / f) if f in files else None

    what = f"{stem}.documents.rda"
    titles = part("titles")
    ratings = part("ratings")
    labels_raw = part("labels")
    metadata = None
    if ratings is not None:
        ratings = np.asarray(ratings, dtype=np.float64).ravel()
        metadata = pd.DataFrame({"rating": ratings})
    corpus = read_lda_documents(read_rda_object(root / what),
                                vocabulary=np.asarray(read_rda_object(root / vocab_file)).ravel(),
                                titles=None if titles is None else
                                np.asarray(titles, dtype=str).ravel(),
                                metadata=metadata, name=name, what=what)
    labels = label_names = None
    for raw, suffix in ((labels_raw, "labels"), (ratings, "ratings")):
        if raw is None:
            continue
        arr = np.asarray(raw).ravel()
        if arr.size != corpus.n_docs:
            raise DataError(f"{root / f'{stem}.{suffix}.rda'}: {arr.size} values for "
                            f"{corpus.n_docs} documents in {what}")
        if suffix == "ratings" and np.unique(arr).size > _MAX_LABEL_VALUES:
            logger.info("%s.ratings.rda: %d distinct ratings, kept in metadata['rating'] "
                        "only (not used as class labels)", stem, np.unique(arr).size)
            break
        labels, label_names = _label_codes(arr, str(root / f"{stem}.{suffix}.rda"))
        break
    links = None
    cites = part("cites")
    if cites is not None:
        src = f"{stem}.cites.rda"
        pairs = lda_link_pairs(cites, corpus.n_docs, what=src)
        links = Links.from_pairs(pairs, corpus.n_docs, directed=directed, self_links="drop",
                                 duplicates="drop", source_name=src)
    return Dataset(name, corpus=corpus, links=links, labels=labels, label_names=label_names,
                   source=f"R lda-package files in {root}", path=root)


def load_rlda_folder(data_dir: PathLike | None = None, documents: str | None = None,
                     directed: bool = False) -> Dataset:
    """A folder of R save files in the layout of the R ``lda`` package.

    Parameters
    ----------
    data_dir : str or path-like
        Holds ``<stem>.documents.rda`` and ``<prefix>.vocab.rda`` (required) and
        optionally ``<stem>.titles.rda`` (character vector), ``<stem>.cites.rda`` (list of
        0-based linked documents), ``<stem>.labels.rda`` (one class per document) and
        ``<stem>.ratings.rda`` (one number per document, kept in ``metadata["rating"]``
        and used as classes when there are at most 20 distinct values and no labels).
        Each file holds one R object.
    documents : str, optional
        Which ``<stem>`` to load when the folder has several.  Default: the only one, or
        ``<prefix>.train`` with ``<prefix>.test`` as the test split (20 Newsgroups).
    directed : bool
        Read ``cites[[i]]`` as links ``i -> j``, or (default, as the ``lda`` package's
        RTM) as undirected pairs; self-links and repeats are dropped with a logged count.

    Returns
    -------
    Dataset
        Named after the folder; ``labels`` are int64 codes into ``label_names`` (the
        distinct values, sorted).
    """
    root = _folder(_required(data_dir, "rlda"))
    files = _files(root)
    stems = _rlda_stems(files)
    if not stems:
        raise DataFileNotFoundError(f"{root}: no <stem>.documents.rda with a <stem>.vocab.rda "
                                    f"(found: {_listing(root)})")
    test_stem = None
    if documents is not None:
        if documents not in stems:
            raise DataFileNotFoundError(f"{root}: no {documents}.documents.rda with a "
                                        f"vocabulary (stems: {', '.join(stems)})")
        main = documents
    elif len(stems) == 1:
        main = next(iter(stems))
    else:
        trains = [s for s in stems if s.endswith(".train")]
        if len(trains) != 1:
            raise DataError(f"{root}: several document files ({', '.join(stems)}); pass "
                            f"documents=<stem>")
        main = trains[0]
    if main.endswith(".train") and main[:-len("train")] + "test" in stems:
        test_stem = main[:-len("train")] + "test"
    name = root.name
    ds = _rlda_split(root, main, stems[main], files, directed, name)
    if test_stem is not None:
        ds.test = _rlda_split(root, test_stem, stems[test_stem], files, directed,
                              f"{name}-test")
        if ds.corpus is not None and ds.test.corpus is not None and \
                ds.test.corpus.n_words != ds.corpus.n_words:
            raise DataError(f"{root}: {test_stem} has {ds.test.corpus.n_words} words, "
                            f"{main} {ds.corpus.n_words}")
    return ds


def load_uci_folder(data_dir: PathLike | None = None, name: str | None = None) -> Dataset:
    """A folder in the UCI bag-of-words format (``docword.<name>.txt[.gz]`` + vocabulary).

    Parameters
    ----------
    data_dir : str or path-like
    name : str, optional
        Which ``<name>`` when the folder holds several ``docword`` files.  The vocabulary
        is ``vocab.<name>.txt`` (or the only ``vocab.*.txt`` of the folder).
    """
    root = _folder(_required(data_dir, "uci-bow"))
    docwords, vocabs = _uci_names(_files(root))
    if name is None:
        if len(docwords) != 1:
            what = ", ".join(docwords.values()) if docwords else "none"
            raise DataFileNotFoundError(f"{root}: expected one docword.<name>.txt[.gz] "
                                        f"(found: {what}); pass name=")
        name = next(iter(docwords))
    if name not in docwords:
        raise DataFileNotFoundError(f"{root}: no docword.{name}.txt[.gz] (found: "
                                    f"{', '.join(docwords.values()) or 'none'})")
    if name in vocabs:
        vocab = vocabs[name]
    elif len(vocabs) == 1:
        vocab = next(iter(vocabs.values()))
    else:
        raise DataFileNotFoundError(f"{root}: no vocab.{name}.txt (found: "
                                    f"{', '.join(vocabs.values()) or 'none'})")
    corpus = read_uci_bow(root / docwords[name], root / vocab, name=name)
    return Dataset(root.name, corpus=corpus,
                   source=f"UCI bag-of-words files {docwords[name]}, {vocab} in {root}",
                   path=root)


def load_triples_folder(data_dir: PathLike | None = None,
                        duplicates: Literal["error", "drop"] = "error") -> Dataset:
    """A folder of knowledge-graph triples: ``train.txt`` and, if present, ``valid.txt``
    and ``test.txt`` (``head<TAB>relation<TAB>tail``, or with a 4th field, a count, on
    every line of a file), read with :func:`~topiclink.data.io.read_triples` into
    ``tensor`` by split.

    ``train.txt`` is required and must hold triples; the held-out splits are optional
    (fitting needs only ``train``): a folder of ``train.txt`` alone gives the one split
    ``train``, and a ``valid.txt`` or ``test.txt`` that holds no triple (empty, or blank
    lines only) gives an empty split (no entry) on the entities and relations of the
    others.  Either is logged; the ``kg`` protocol of ``experiment bpbfm`` refuses a
    folder without test triples."""
    from topiclink.data.io.rda import read_bytes
    from topiclink.data.tensor import RelationalTensor

    root = _folder(_required(data_dir, "triples"))
    files = _files(root)
    if "train.txt" not in files:
        raise DataFileNotFoundError(f"{root}: no train.txt (found: {_listing(root)})")
    paths = {s: root / f"{s}.txt" for s in _SPLITS if f"{s}.txt" in files}
    empty = [s for s in paths if s != "train" and paths[s].stat().st_size < 1 << 16
             and not read_bytes(paths[s]).strip()]
    tensor = read_triples({s: p for s, p in paths.items() if s not in empty},
                          duplicates=duplicates)
    train = tensor["train"]
    for split in empty:
        none = np.zeros(0, dtype=np.int64)
        tensor[split] = RelationalTensor(none, none, none, np.zeros(0), train.n_entities,
                                         train.n_relations, entity_names=train.entity_names,
                                         relation_names=train.relation_names)
    tensor = {s: tensor[s] for s in paths}
    absent = [f"{s}.txt " + ("holds no triple" if s in empty else "is missing")
              for s in _SPLITS if s not in paths or s in empty]
    if absent:
        logger.info("%s: %s: no held-out triples there (the train triples are read)", root,
                    ", ".join(absent))
    return Dataset(root.name, tensor=tensor,
                   source=f"triple files {', '.join(p.name for p in paths.values())} in {root}",
                   path=root)


def _load_linqs_folder(data_dir: PathLike | None = None, **kwargs: Any) -> Dataset:
    ds = load_linqs(_required(data_dir, "linqs"), **kwargs)
    ds.name = Path(ds.path).name if ds.path is not None else ds.name
    return ds


def _required(data_dir: PathLike | None, fmt: str) -> PathLike:
    if data_dir is None:
        raise FileNotFoundError(f"the {fmt!r} loader reads your own folder: pass data_dir= "
                                f"(CLI: --data DIR)")
    return data_dir


_FOLDER_LOADERS: dict[str, Callable[..., Dataset]] = {
    "linqs": _load_linqs_folder,
    "rlda": load_rlda_folder,
    "uci-bow": load_uci_folder,
    "triples": load_triples_folder,
}


def load_folder(folder: PathLike, format: str | None = None, **kwargs: Any) -> Dataset:
    """Load a folder in any format :func:`detect_format` recognises.

    Parameters
    ----------
    folder : str or path-like
    format : str, optional
        One of :data:`FORMATS`; default detected.
    **kwargs
        Options of the format's loader: LINQS :func:`~topiclink.datasets.linqs.load_linqs`
        (``names``, ``directed``, ``self_links``, ``duplicates``, ``unknown_ids``), R lda
        :func:`load_rlda_folder` (``documents``, ``directed``), UCI
        :func:`load_uci_folder` (``name``), triples :func:`load_triples_folder`
        (``duplicates``).

    Returns
    -------
    Dataset
        Named after the folder.

    Raises
    ------
    FileNotFoundError
        The folder does not exist or matches no format (one line listing its files).
    DataError
        A malformed file (``file:line`` or the document), or several formats match.
    """
    fmt = detect_format(folder) if format is None else format
    if fmt not in _FOLDER_LOADERS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    logger.info("%s: reading %s files", folder, fmt)
    return _FOLDER_LOADERS[fmt](data_dir=folder, **kwargs)


_USER_FORMATS = {
    "rlda": ("your own R lda-package folder: <stem>.documents.rda + <stem>.vocab.rda "
             "(+ cites, titles, labels, ratings)", "documents"),
    "uci-bow": ("your own UCI bag-of-words folder: docword.<name>.txt[.gz] + "
                "vocab.<name>.txt", "documents"),
    "triples": ("your own knowledge-graph folder: train.txt / valid.txt / test.txt "
                "(head<TAB>relation<TAB>tail[<TAB>count])", "triples"),
}
for _fmt, (_description, _kind) in _USER_FORMATS.items():
    register_dataset(DatasetSpec(_fmt, _FOLDER_LOADERS[_fmt],
                                 source=f"{_fmt} files of your own folder",
                                 description=_description, kind=_kind, location="user"))
