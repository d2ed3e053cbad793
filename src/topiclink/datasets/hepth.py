"""arXiv hep-th (KDD Cup 2003) as distributed: abstracts tarball + SNAP citation list.

Files (folder ``hepth`` under the data home, read without extracting anything):

* ``cit-HepTh-abstracts.tar.gz``: one arXiv record per paper,
  ``cit-HepTh-abstracts/<year>/<id>.abs``; :func:`parse_abs_record` reads its header
  (``Paper``, ``Date``, ``Title``, ``Authors``...) and abstract;
* ``cit-HepTh.txt.gz``: SNAP edge list, ``#`` comment lines, ``citing<TAB>cited``, CRLF,
  ids with their leading zeros dropped (``1001`` is paper ``0001001``): read with the
  explicit rule ``normalize_ids="zero-pad:7"``.

Time of a paper: the ``YYMM`` prefix of its arXiv id (``0001001`` -> January 2000 =
2000.0 in fractional years, :mod:`topiclink.data.dates`).  The paper's SLAC dates are not
distributed; the ``Date:`` line (v1 submission, free format) is parsed into
``metadata["date"]`` (ISO text, empty when unparsable, the count logged).

:func:`hepth_kdd_split` reproduces the split of Tan, Chan & Zheng (2016), §7.2.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from topiclink.data.analyzer import TextAnalyzer
from topiclink.data.checks import DataError
from topiclink.data.corpus import Corpus
from topiclink.data.dates import yymm_to_year
from topiclink.data.io.documents import DocumentTable, read_documents, read_edges
from topiclink.data.io.text import text_lines
from topiclink.data.linked import LinkedCorpus, linked_corpus
from topiclink.data.time_split import TimeSplit, split_by_time
from topiclink.datasets.base import Dataset
from topiclink.datasets.home import dataset_dir

__all__ = ["HEPTH_FILES", "HEPTH_SOURCE", "KDD_ANALYZER", "count_hepth", "hepth_analyzer",
           "hepth_kdd_split", "load_hepth", "parse_abs_record", "read_hepth_abstracts"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]

HEPTH_FILES = ("cit-HepTh-abstracts.tar.gz", "cit-HepTh.txt.gz")
HEPTH_SOURCE = ("arXiv hep-th, KDD Cup 2003 (Gehrke, Ginsparg & Kleinberg, SIGKDD Explorations "
                "2003), SNAP cit-HepTh (Leskovec, Kleinberg & Faloutsos, KDD 2005); the LMV "
                "benchmark of Tan, Chan & Zheng (2016), Sec. 7.2")

#: Settings of the analyser of the KDD protocol, fitted on the training abstracts only:
#: words of 2+ letters, scikit-learn's English stop words, the Snowball English (Porter2)
#: stemmer, terms in at least 2 training abstracts: 7,714 terms (Snowball 3 stemmers:
#: snowballstemmer 3.1 and PyStemmer 3.1 agree).  The paper reports 7,211
#: "after stemming and removal of stop words and infrequent terms" without the rule; no
#: standard combination tried (stop lists of scikit-learn / Snowball / old tm / NLTK-like,
#: Porter or Porter2, letters-only or punctuation-stripped tokens, title + abstract or
#: abstract, fitted on training / training + test / all papers, document or token counts
#: 1..60) gives 7,211 except isolated coincidences, so none is claimed to be the paper's.
KDD_ANALYZER: dict[str, Any] = {
    "token_pattern": r"(?u)\b[^\W\d_]{2,}\b",
    "stop_words": "english",
    "stemmer": "english",
    "min_df": 2,
}

#: Papers added up to this month (inclusive) train; December 2001 = 2001 + 11/12.
KDD_CUTOFF = 2002.0

_SEP = re.compile(r"^\\\\\s*$", re.M)
_FIELD = re.compile(r"^([A-Za-z][\w\- ()]*?):\s?(.*)$")
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                       "sep", "oct", "nov", "dec"), 1)}
_DATE_DMY = re.compile(r"\b(\d{1,2})[ -]([A-Za-z]{3})[a-z]*[ -](\d{2,4})\b")
_DATE_MDY = re.compile(r"\b([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})\s+\d{1,2}:\d{2}(?::\d{2})?"
                       r"(?:\s+[A-Z]{2,5})?(?:\s+[+-]\d{4})?\s+(\d{4})\b")
_ID = re.compile(r"(?:^|/)(\d{7})\.abs$")


@dataclass(frozen=True)
class AbsRecord:
    """One parsed ``.abs`` record: ``fields`` of the header (first occurrence of each key,
    continuation lines joined) and the abstract text."""

    fields: dict[str, str]
    abstract: str


def parse_abs_record(text: str, where: str = "record") -> AbsRecord:
    """Parse an arXiv ``.abs`` record: header between the first and second ``\\\\`` line,
    abstract between the second and third.  One-line DataError when the separators are
    missing."""
    parts = _SEP.split(text)
    if len(parts) < 3:
        raise DataError(f"{where}: expected '\\\\' separator lines around the header and "
                        f"the abstract, found {len(parts) - 1}")
    fields: dict[str, str] = {}
    key = None
    # lines end at newlines only: a form feed or U+2028 inside a title stays in the field
    for line in text_lines(parts[1]):
        if line[:1].isspace() and key is not None:
            if line.strip():
                fields[key] += " " + line.strip()
            continue
        m = _FIELD.match(line)
        if m:
            key = m.group(1).strip()
            if key in fields:  # keep the first (e.g. several 'Date (revised ...)' keys)
                key = None
                continue
            fields[key] = m.group(2).strip()
        else:
            key = None
    return AbsRecord(fields, parts[2].strip())


def parse_abs_date(value: str) -> str:
    """The ``Date:`` line of an ``.abs`` record as ``YYYY-MM-DD``; ``""`` when it shows no
    day, month name and year (two-digit years: 9x -> 199x)."""
    for rx, order in ((_DATE_DMY, "dmy"), (_DATE_MDY, "mdy")):
        m = rx.search(value)
        if not m:
            continue
        a, b, c = m.groups()
        day, mon, year = (a, b, c) if order == "dmy" else (b, a, c)
        month = _MONTHS.get(mon.lower()[:3])
        if month is None:
            continue
        y = int(year)
        if len(year) == 2:
            y += 1900 if y >= 50 else 2000
        if not 1 <= int(day) <= 31:
            continue
        return f"{y:04d}-{month:02d}-{int(day):02d}"
    return ""


def read_hepth_abstracts(path: PathLike) -> DocumentTable:
    """Read ``cit-HepTh-abstracts.tar.gz`` without extracting it.

    Returns
    -------
    DocumentTable
        ``ids``: 7-digit arXiv numbers (``"9201001"``), sorted by time then number;
        ``texts``: the abstracts; ``titles``; ``times``: the id's ``YYMM`` as fractional
        years; ``metadata`` columns ``paper`` (``hep-th/<id>``), ``date`` (the ``Date:``
        line as ``YYYY-MM-DD``, ``""`` when unparsable), ``authors``, ``path``.

    Raises
    ------
    DataError
        A record without separators, or whose ``Paper:`` line does not match its file.
    """
    table = read_documents(path, format="tar", id_pattern=_ID)
    titles, papers, dates, authors, abstracts = [], [], [], [], []
    for doc_id, text, rel in zip(table.ids.tolist(), table.texts,
                                 table.metadata["path"].tolist(), strict=True):
        rec = parse_abs_record(text, f"{table.source}: member {rel}")
        paper = rec.fields.get("Paper", "")
        if not paper.endswith(doc_id):
            raise DataError(f"{table.source}: member {rel}: 'Paper: {paper}' does not match "
                            f"the file name")
        papers.append(paper)
        titles.append(rec.fields.get("Title", ""))
        authors.append(rec.fields.get("Authors", rec.fields.get("Author", "")))
        dates.append(parse_abs_date(rec.fields.get("Date", "")))
        abstracts.append(rec.abstract)
    n_bad = sum(not d for d in dates)
    if n_bad:
        logger.info("%s: %d of %d 'Date:' lines show no day, month and year (date left "
                    "empty; the time comes from the arXiv id)", table.source, n_bad,
                    len(dates))
    times = np.array([yymm_to_year(i[:4]) for i in table.ids.tolist()])
    order = np.lexsort((table.ids, times))
    meta = pd.DataFrame({"paper": papers, "date": dates, "authors": authors,
                         "path": table.metadata["path"].tolist()}).iloc[order]
    return DocumentTable(ids=table.ids[order], texts=[abstracts[i] for i in order],
                         times=times[order], metadata=meta.reset_index(drop=True),
                         titles=np.asarray(titles, dtype=str)[order], source=table.source)


def hepth_analyzer(**overrides: Any) -> TextAnalyzer:
    """An unfitted :class:`TextAnalyzer` with the KDD protocol's settings
    (:data:`KDD_ANALYZER`), ``overrides`` replacing any of them."""
    params = dict(KDD_ANALYZER)
    params.update(overrides)
    return TextAnalyzer(**params)


def _read(data_dir: PathLike | None) -> tuple[Path, DocumentTable, Any]:
    folder = dataset_dir("hepth", data_dir, HEPTH_FILES)
    docs = read_hepth_abstracts(folder / HEPTH_FILES[0])
    edges = read_edges(folder / HEPTH_FILES[1], direction="source-cites-target",
                       normalize_ids="zero-pad:7")
    return folder, docs, edges


def _with_time(corpus: Corpus, times: np.ndarray) -> Corpus:
    meta = corpus.metadata.copy() if corpus.metadata is not None else pd.DataFrame()
    meta.insert(0, "time", times)
    return Corpus(corpus.counts, vocabulary=corpus.vocabulary, doc_ids=corpus.doc_ids,
                  titles=corpus.titles, metadata=meta, name=corpus.name)


def hepth_kdd_split(data_dir: PathLike | None = None, *,
                    analyzer: TextAnalyzer | None = None,
                    cutoff: float = KDD_CUTOFF) -> TimeSplit:
    """The training / test split of the LMV paper (Tan, Chan & Zheng 2016, §7.2).

    Training: the 25,224 papers added in 1992-2001 (arXiv id ``YYMM`` before
    ``cutoff`` = January 2002) and the 271,838 citations among them; test: the 4,064
    papers of 2002-2003 that cite at least one training paper, with their 60,914
    citations to training papers as ``test_citations``.

    Rule (what reproduces the counts): all 352,807 SNAP edges are kept except the 39
    self-citations (25 of them among training papers); the 1,005 reciprocal pairs and
    the 943 edges citing a newer paper are kept (the paper's graph has them too).  The
    vocabulary is fitted on the **training abstracts** only with
    :data:`KDD_ANALYZER` (see :func:`hepth_analyzer`), and the test abstracts are counted
    over it (7,714 terms; the paper's 7,211 could not be reproduced: see
    :data:`KDD_ANALYZER`).  No document is dropped for being empty (none is).

    Parameters
    ----------
    data_dir : str or path-like, optional
        The ``hepth`` folder (default ``data_home() / "hepth"``).
    analyzer : TextAnalyzer, optional
        Unfitted: fitted on the training abstracts (default :func:`hepth_analyzer`);
        fitted: used as it is.
    cutoff : float
        Fractional year; training papers have ``time < cutoff``.

    Returns
    -------
    TimeSplit
        ``train_corpus.metadata`` / ``test_corpus.metadata`` hold ``time``, ``paper``,
        ``date``, ``authors``, ``path``; corpora carry titles and the 7-digit ids.
    """
    _, docs, edges = _read(data_dir)
    assert docs.times is not None
    analyzer = analyzer if analyzer is not None else hepth_analyzer()
    fit_on = docs.times < cutoff if analyzer.vocabulary_ is None else None
    linked = linked_corpus(docs, edges, analyzer=analyzer, max_lost=0.0,
                           self_citations="drop", duplicates="drop", drop_empty=False,
                           fit_on=fit_on, name="hepth")
    assert linked.times is not None
    corpus = _with_time(linked.corpus, linked.times)
    split = split_by_time(corpus, linked.links, linked.times, cutoff,
                          train_vocabulary=False)
    split.report.update({f"input_{k}": v for k, v in linked.report.items()})
    return split


def count_hepth(folder: PathLike) -> dict[str, int]:
    """The listing's counts without the text analysis (about 2 s instead of 15 s):
    ``documents`` = the ``.abs`` records of the tarball, ``links`` = the distinct
    citations between two of them, self-citations dropped (as :func:`load_hepth`)."""
    import gzip
    import tarfile

    folder = Path(folder)
    with tarfile.open(folder / HEPTH_FILES[0], "r:*") as tar:
        ids = np.array(sorted({int(m.group(1)) for m in map(_ID.search, tar.getnames())
                               if m}), dtype=np.int64)
    with gzip.open(folder / HEPTH_FILES[1], "rt") as f:  # ids as numbers = zero-pad:7
        edges = np.loadtxt(f, dtype=np.int64, comments="#", ndmin=2).reshape(-1, 2)
    known = np.isin(edges[:, 0], ids) & np.isin(edges[:, 1], ids) & (edges[:, 0] != edges[:, 1])
    return {"documents": int(ids.size), "links": int(np.unique(edges[known], axis=0).shape[0])}


def load_hepth(data_dir: PathLike | None = None,
               protocol: Literal["kdd"] | None = None,
               analyzer: TextAnalyzer | None = None) -> Dataset:
    """arXiv hep-th: 29,555 abstracts and 352,768 citations (self-citations dropped).

    Parameters
    ----------
    data_dir : str or path-like, optional
        The ``hepth`` folder (``cit-HepTh-abstracts.tar.gz``, ``cit-HepTh.txt.gz``).
    protocol : {None, "kdd"}
        ``None``: every paper, vocabulary fitted on all abstracts.  ``"kdd"``: the LMV
        paper's split (:func:`hepth_kdd_split`): ``corpus``/``links`` are the training
        papers, ``test`` the test papers, ``test_links`` the test -> training citations.
    analyzer : TextAnalyzer, optional
        Default :func:`hepth_analyzer` (fitted on the abstracts used for training).

    Returns
    -------
    Dataset
        ``corpus.metadata["time"]`` is the publication month (fractional years, from the
        arXiv id); links are directed (citing -> cited).
    """
    if protocol == "kdd":
        split = hepth_kdd_split(data_dir, analyzer=analyzer)
        folder = dataset_dir("hepth", data_dir, HEPTH_FILES)
        test = Dataset("hepth-test", corpus=split.test_corpus, source=HEPTH_SOURCE,
                       path=folder)
        return Dataset("hepth", corpus=split.train_corpus, links=split.train_links,
                       test=test, test_links=split.test_citations, source=HEPTH_SOURCE,
                       path=folder)
    if protocol is not None:
        raise ValueError(f"protocol must be None or 'kdd', got {protocol!r}")
    folder, docs, edges = _read(data_dir)
    linked: LinkedCorpus = linked_corpus(
        docs, edges, analyzer=analyzer if analyzer is not None else hepth_analyzer(),
        max_lost=0.0, drop_empty=False, name="hepth")
    assert linked.times is not None
    return Dataset("hepth", corpus=_with_time(linked.corpus, linked.times),
                   links=linked.links, source=HEPTH_SOURCE, path=folder)
