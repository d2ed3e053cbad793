"""One loader per data set folder, each registered next to it, and a listing.

Every loader takes ``data_dir`` (the data set's own folder, in the layout of the shared
data sets; default ``data_home() / <name>``, see :mod:`topiclink.datasets.home`) and
returns a :class:`~topiclink.datasets.base.Dataset`.  :func:`load_dataset` downloads what is
missing from the data home first (``download_if_missing=True``, as scikit-learn's
``fetch_*``; :func:`~topiclink.datasets.fetch.fetch_dataset`, sources in
:mod:`~topiclink.datasets.sources`); the ``load_*`` functions themselves never download.

Each data set is described once, by the :class:`~topiclink.datasets.registry.DatasetSpec`
registered after its loader; :data:`LOADERS`, :data:`REQUIRED_FILES`, :data:`SOURCES`,
:func:`list_datasets` and :func:`load_dataset` read that registry.

The bundled Cora (:mod:`~topiclink.datasets.bundled_cora`) and the LINQS folders
(:mod:`~topiclink.datasets.linqs`) are registered in their own modules.  Labels are
integer codes (int64) into ``label_names``.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from topiclink.data.checks import DataError
from topiclink.data.io.rda import lda_link_pairs, read_lda_documents, read_rda_object
from topiclink.data.io.text import corpus_from_texts, default_vectorizer, read_newsgroups_tar
from topiclink.data.io.triples import read_triples, read_triples_archive
from topiclink.data.tensor import RelationalTensor
from topiclink.datasets.base import SUMMARY_KEYS, Dataset
from topiclink.datasets.bundled_cora import cora_rlda_dataset
from topiclink.datasets.detect import load_folder
from topiclink.datasets.fetch import fetch_dataset, missing_files
from topiclink.datasets.hepth import HEPTH_FILES, HEPTH_SOURCE, count_hepth, load_hepth
from topiclink.datasets.home import data_home, dataset_dir
from topiclink.datasets.registry import (
    DatasetSpec,
    RegistryView,
    dataset_specs,
    register_dataset,
)
from topiclink.datasets.sources import dataset_sources

__all__ = ["LOADERS", "REQUIRED_FILES", "SOURCES", "USER_FORMAT_LOADERS", "fetch_dataset",
           "list_datasets", "load_20newsgroups", "load_cora_rlda", "load_dataset",
           "load_fb15k237", "load_hepth", "load_nations", "load_poliblog", "load_sampson",
           "load_sotu", "load_umls", "load_wn18rr"]

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]
Policy = Literal["error", "drop"]

#: Loader of each listed data set (home folders and the bundled "cora"), by name: a live
#: read-only view of the registry.
LOADERS: Mapping[str, Callable[..., Dataset]] = RegistryView(
    "loader", lambda spec: spec.listed)

#: Loaders of a user's own files in a known format (no shared copy; ``data_dir`` required).
USER_FORMAT_LOADERS: Mapping[str, Callable[..., Dataset]] = RegistryView(
    "loader", lambda spec: spec.location == "user")

#: Files that must exist in each data set folder (the default form for 20newsgroups).
REQUIRED_FILES: Mapping[str, tuple[str, ...]] = RegistryView(
    "required_files", lambda spec: spec.location == "home")

#: Citation / provenance string of each data set.
SOURCES: Mapping[str, str] = RegistryView("source")

_LDA_PKG = "CRAN package lda 1.5.2 (J. Chang; cran/lda mirror, LGPL >= 2.1)"
_CONVE = ("train/valid/test split of Rocktaschel & Riedel (NIPS 2017) as redistributed by "
          "Dettmers et al., ConvE (AAAI 2018)")


# ---------------------------------------------------------------------- R lda package
def _rda(folder: Path, obj: str) -> Any:
    return read_rda_object(folder / f"{obj}.rda", obj)


def load_cora_rlda(data_dir: PathLike | None = None, directed: bool = False) -> Dataset:
    """Cora of the R ``lda`` package: 2410 abstracts, 2961 words, titles, citation links.

    Parameters
    ----------
    directed : bool
        ``cora.cites[[i]]`` lists the documents that cite ``i``: read as ``j -> i``
        (4356 links) or, by default, undirected as in the package's RTM (the 125
        reciprocal pairs are dropped as duplicates with a logged count: 4231 links).

    See Also
    --------
    topiclink.datasets.load_bundled_cora : the same data shipped inside the package.
    """
    folder = dataset_dir("cora-rlda", data_dir, REQUIRED_FILES["cora-rlda"])
    corpus = read_lda_documents(_rda(folder, "cora.documents"),
                                vocabulary=_rda(folder, "cora.vocab"),
                                titles=_rda(folder, "cora.titles"), name="cora-rlda",
                                what="cora.documents.rda")
    pairs = lda_link_pairs(_rda(folder, "cora.cites"), corpus.n_docs, what="cora.cites.rda")
    ds = cora_rlda_dataset(corpus, pairs, directed=directed, path=folder)
    ds.source = SOURCES["cora-rlda"]
    return ds


register_dataset(DatasetSpec(
    "cora-rlda", load_cora_rlda,
    required_files=("cora.documents.rda", "cora.vocab.rda", "cora.titles.rda",
                    "cora.cites.rda"),
    source=f"Cora abstracts of the {_LDA_PKG}; McCallum et al., Information Retrieval 2000",
    description="2410 abstracts x 2961 words with titles, 4231 undirected citations",
    kind="documents+links"))


def load_poliblog(data_dir: PathLike | None = None) -> Dataset:
    """Political blog posts of the R ``lda`` package (sLDA demo): 773 posts, 1290 words.

    ``labels`` is 0 (liberal, rating -100) or 1 (conservative, rating 100); the raw
    rating is in ``corpus.metadata["rating"]``.
    """
    folder = dataset_dir("poliblog-rlda", data_dir, REQUIRED_FILES["poliblog-rlda"])
    ratings = np.asarray(_rda(folder, "poliblog.ratings"), dtype=np.float64).ravel()
    bad = ~np.isin(ratings, (-100.0, 100.0))
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataError(f"{folder / 'poliblog.ratings.rda'}: rating {r} is {ratings[r]}, "
                        f"expected -100 or 100")
    corpus = read_lda_documents(_rda(folder, "poliblog.documents"),
                                vocabulary=_rda(folder, "poliblog.vocab"),
                                metadata=pd.DataFrame({"rating": ratings}),
                                name="poliblog", what="poliblog.documents.rda")
    return Dataset("poliblog-rlda", corpus=corpus, labels=(ratings > 0).astype(np.int64),
                   label_names=np.array(["liberal", "conservative"]),
                   source=SOURCES["poliblog-rlda"], path=folder)


register_dataset(DatasetSpec(
    "poliblog-rlda", load_poliblog,
    required_files=("poliblog.documents.rda", "poliblog.vocab.rda", "poliblog.ratings.rda"),
    source=f"Political blogs of the {_LDA_PKG}; Blei & McAuliffe, Supervised topic models, "
           f"NIPS 2008",
    description="773 blog posts x 1290 words, liberal / conservative",
    kind="documents+labels"))


def _news_labels(folder: Path, split: str, n_docs: int, n_classes: int) -> np.ndarray:
    raw = np.asarray(_rda(folder, f"newsgroup.{split}.labels")).ravel()
    if raw.shape != (n_docs,):
        raise DataError(f"{folder / f'newsgroup.{split}.labels.rda'}: {raw.size} labels for "
                        f"{n_docs} documents")
    bad = (raw < 1) | (raw > n_classes)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataError(f"{folder / f'newsgroup.{split}.labels.rda'}: label {r} is {raw[r]}, "
                        f"outside 1..{n_classes}")
    return raw.astype(np.int64) - 1


def load_20newsgroups(data_dir: PathLike | None = None,
                      form: Literal["counts", "raw"] = "counts", strip_headers: bool = False,
                      **vectorizer_kwargs: Any) -> Dataset:
    """20 Newsgroups (bydate): training corpus with labels 0..19, test split in ``.test``.

    Parameters
    ----------
    form : {"counts", "raw"}
        ``"counts"``: the word counts of the R ``lda`` package (11,269 train / 7,505
        test documents over the full 61,188-word vocabulary; the test split uses words
        beyond the 53,975 seen in training).  ``"raw"``: the messages of
        ``20news-bydate.tar.gz`` (11,314 / 7,532), vectorised with a vectorizer fitted on
        the training split (:func:`~topiclink.data.io.default_vectorizer` with
        ``vectorizer_kwargs``) and applied to the test split.
    strip_headers : bool
        ``form="raw"`` only: drop the e-mail headers.

    Returns
    -------
    Dataset
        ``label_names`` are the newsgroups in alphabetical order.
    """
    if form == "counts":
        if strip_headers or vectorizer_kwargs:
            raise ValueError("strip_headers and vectorizer options apply to form='raw' only")
        folder = dataset_dir("20newsgroups", data_dir, REQUIRED_FILES["20newsgroups"])
        label_map = _rda(folder, "newsgroup.label.map")
        try:
            lm = pd.DataFrame(label_map).sort_values("V2")
            label_names = lm["V1"].astype(str).to_numpy()
            ids = lm["V2"].to_numpy()
        except (KeyError, TypeError, ValueError):
            raise DataError(f"{folder / 'newsgroup.label.map.rda'}: expected a data frame "
                            f"with columns V1 (group name) and V2 (label id)") from None
        if not np.array_equal(ids, np.arange(1, len(ids) + 1)):
            raise DataError(f"{folder / 'newsgroup.label.map.rda'}: label ids are not "
                            f"1..{len(ids)}")
        vocab = _rda(folder, "newsgroup.vocab")
        splits = {}
        for split in ("train", "test"):
            corpus = read_lda_documents(_rda(folder, f"newsgroup.{split}.documents"),
                                        vocabulary=vocab, name=f"20newsgroups-{split}",
                                        what=f"newsgroup.{split}.documents.rda")
            splits[split] = (corpus, _news_labels(folder, split, corpus.n_docs,
                                                  len(label_names)))
    elif form == "raw":
        folder = dataset_dir("20newsgroups", data_dir, ("20news-bydate.tar.gz",))
        frames, label_names = read_newsgroups_tar(folder / "20news-bydate.tar.gz",
                                                  strip_headers=strip_headers)
        vec = default_vectorizer(len(frames["train"]), **vectorizer_kwargs)
        splits = {}
        for split in ("train", "test"):
            df = frames[split]
            corpus = corpus_from_texts(df["text"].tolist(), vectorizer=vec,
                                       doc_ids=df["doc_id"].to_numpy(),
                                       metadata=df[["group", "label"]],
                                       name=f"20newsgroups-{split}")
            splits[split] = (corpus, df["label"].to_numpy())
    else:
        raise ValueError(f"form must be 'counts' or 'raw', got {form!r}")
    test = Dataset("20newsgroups-test", corpus=splits["test"][0], labels=splits["test"][1],
                   label_names=label_names, source=SOURCES["20newsgroups"], path=folder)
    return Dataset("20newsgroups", corpus=splits["train"][0], labels=splits["train"][1],
                   label_names=label_names, test=test, source=SOURCES["20newsgroups"],
                   path=folder)


register_dataset(DatasetSpec(
    "20newsgroups", load_20newsgroups,
    required_files=("newsgroup.train.documents.rda", "newsgroup.test.documents.rda",
                    "newsgroup.train.labels.rda", "newsgroup.test.labels.rda",
                    "newsgroup.vocab.rda", "newsgroup.label.map.rda"),
    source="20 Newsgroups bydate (J. Rennie); Lang, NewsWeeder: learning to filter "
           f"netnews, ICML 1995; word counts of the {_LDA_PKG}",
    description="11,269 train / 7,505 test messages x 61,188 words, 20 groups",
    kind="documents+labels"))


def load_sotu(data_dir: PathLike | None = None, **vectorizer_kwargs: Any) -> Dataset:
    """US State of the Union addresses 1790-2020 (240 texts) with year/president/party.

    The texts are vectorised with :func:`~topiclink.data.io.corpus_from_texts`
    (``vectorizer_kwargs`` override the defaults: English stop words, words of 2+ letters,
    ``min_df=2``).  ``corpus.metadata`` has columns ``president``, ``year``,
    ``years_active``, ``party``, ``sotu_type``; titles read ``"<president> (<year>,
    <type>)"``.
    """
    folder = dataset_dir("sotu", data_dir, REQUIRED_FILES["sotu"])
    texts = [str(t) for t in np.asarray(_rda(folder, "sotu_text"), dtype=object).tolist()]
    meta = pd.DataFrame(_rda(folder, "sotu_meta")).reset_index(drop=True)
    meta = meta.drop(columns=[c for c in ("X",) if c in meta.columns])
    for col in meta.columns:
        if col == "year":
            meta[col] = meta[col].astype(np.int64)
        else:
            meta[col] = meta[col].astype(str)
    if len(meta) != len(texts):
        raise DataError(f"{folder}: sotu_meta has {len(meta)} rows for {len(texts)} texts")
    titles = [f"{p} ({y}, {t})" for p, y, t in
              zip(meta["president"], meta["year"], meta["sotu_type"], strict=True)]
    corpus = corpus_from_texts(texts, titles=titles, metadata=meta, name="sotu",
                               **vectorizer_kwargs)
    return Dataset("sotu", corpus=corpus, source=SOURCES["sotu"], path=folder)


register_dataset(DatasetSpec(
    "sotu", load_sotu, required_files=("sotu_text.rda", "sotu_meta.rda"),
    source="State of the Union addresses 1790-2020, CRAN package sotu 1.0.4 (T. B. Arnold), "
           "from The American Presidency Project; public domain",
    description="240 State of the Union addresses 1790-2020 with year, president, party",
    kind="documents"))


# ---------------------------------------------------------------------- citations
register_dataset(DatasetSpec(
    "hepth", load_hepth, required_files=HEPTH_FILES, source=HEPTH_SOURCE,
    counter=count_hepth,
    description="arXiv hep-th 1992-2003: 29,555 abstracts, 352,768 dated citations; "
                "protocol='kdd': the LMV paper's split by time",
    kind="documents+links"))


# ---------------------------------------------------------------------- relational
def _load_triples(name: str, data_dir: PathLike | None, duplicates: Policy,
                  archive: str | None = None) -> Dataset:
    """The train/valid/test triples of a data set folder: ``<split>.txt`` files, or the
    members of the same names in ``archive`` (read without unpacking)."""
    folder = dataset_dir(name, data_dir, REQUIRED_FILES[name])
    splits = ("train", "valid", "test")
    if archive is None:
        tensor = read_triples({s: folder / f"{s}.txt" for s in splits},
                              duplicates=duplicates)
    else:
        tensor = read_triples_archive(folder / archive, {s: f"{s}.txt" for s in splits},
                                      duplicates=duplicates)
    return Dataset(name, tensor=tensor, source=SOURCES[name], path=folder)


def load_nations(data_dir: PathLike | None = None, duplicates: Policy = "error") -> Dataset:
    """Nations: 14 countries x 55 relations; ``tensor`` splits train/valid/test (1592/199/201)."""
    return _load_triples("nations", data_dir, duplicates)


def load_umls(data_dir: PathLike | None = None, duplicates: Policy = "error") -> Dataset:
    """UMLS: 135 concepts x 46 relations; ``tensor`` splits train/valid/test (5216/652/661)."""
    return _load_triples("umls", data_dir, duplicates)


def load_wn18rr(data_dir: PathLike | None = None, duplicates: Policy = "error") -> Dataset:
    """WN18RR: 40,943 WordNet synsets x 11 relations; ``tensor`` splits train/valid/test
    (86,835/3,034/3,134).  Entities are 8-digit synset offsets, kept as strings."""
    return _load_triples("wn18rr", data_dir, duplicates)


_FB15K237_ARCHIVE = "FB15k-237.tar.gz"


def load_fb15k237(data_dir: PathLike | None = None, duplicates: Policy = "error") -> Dataset:
    """FB15k-237: 14,541 Freebase entities x 237 relations; ``tensor`` splits
    train/valid/test (272,115/17,535/20,466), read from the ConvE archive
    ``FB15k-237.tar.gz`` without unpacking it.

    Every entity of every split is indexed (14,541; 36 entities of 9 valid and 28 test
    triples never occur in train: they stay candidates, as in LibKGE, PyKEEN and ConvE;
    the counts are logged).
    """
    return _load_triples("fb15k-237", data_dir, duplicates, archive=_FB15K237_ARCHIVE)


_SPLIT_FILES = ("train.txt", "valid.txt", "test.txt")
register_dataset(DatasetSpec(
    "nations", load_nations, required_files=_SPLIT_FILES,
    source=f"Nations (Rummel; Kemp et al. 2006; Kok & Domingos 2007), {_CONVE}",
    description="14 countries x 55 relations, 1592/199/201 train/valid/test triples",
    kind="triples"))
register_dataset(DatasetSpec(
    "umls", load_umls, required_files=_SPLIT_FILES,
    source=f"UMLS semantic network (McCray 2003; Kemp et al. 2006), {_CONVE}",
    description="135 concepts x 46 relations, 5216/652/661 train/valid/test triples",
    kind="triples"))
register_dataset(DatasetSpec(
    "wn18rr", load_wn18rr, required_files=_SPLIT_FILES,
    source="WN18RR (Dettmers et al., ConvE, AAAI 2018): WN18 (Bordes et al. 2013; Princeton "
           "WordNet) without inverse relations, WN18RR.tar.gz of TimDettmers/ConvE",
    description="40,943 synsets x 11 relations, 86,835/3,034/3,134 train/valid/test triples",
    kind="triples"))
register_dataset(DatasetSpec(
    "fb15k-237", load_fb15k237, required_files=(_FB15K237_ARCHIVE,),
    source="FB15k-237 (Toutanova & Chen 2015), the FB15k subset of Freebase (Bordes et al. "
           "2013; Freebase CC-BY) without inverse-duplicate relations, as redistributed by "
           "Dettmers et al., ConvE (AAAI 2018): FB15k-237.tar.gz of TimDettmers/ConvE",
    description="14,541 entities x 237 relations, 272,115/17,535/20,466 train/valid/test "
                "triples (one .tar.gz)",
    kind="triples"))


def _axis_names(mat: Any, axis: int) -> np.ndarray | None:
    dims = getattr(mat, "dims", None)
    coords = getattr(mat, "coords", None)
    if not dims or coords is None or dims[axis] not in coords:
        return None
    return np.asarray(coords[dims[axis]].values).astype(str)


def tensor_from_matrices(matrices: Mapping[str, Any], what: str = "matrices"
                         ) -> RelationalTensor:
    """A :class:`RelationalTensor` of the nonzero entries of square relation matrices.

    Parameters
    ----------
    matrices : mapping relation name -> (E, E) array or xarray.DataArray
        Row = head, column = tail.  Entity names come from the DataArray coordinates
        (identical rows/columns and across relations), else ``"e0", ...``.
    """
    if not matrices:
        raise DataError(f"{what}: no relation matrices")
    names: np.ndarray | None = None
    heads, rels, tails, vals = [], [], [], []
    shape: tuple[int, ...] | None = None
    for r, (rel, mat) in enumerate(matrices.items()):
        a = np.asarray(mat, dtype=np.float64)
        if a.ndim != 2 or a.shape[0] != a.shape[1] or (shape is not None and a.shape != shape):
            raise DataError(f"{what}: relation {rel!r} has shape {a.shape}; expected a square "
                            f"matrix {shape or ''}".rstrip())
        shape = a.shape
        rows, cols = _axis_names(mat, 0), _axis_names(mat, 1)
        if rows is not None:
            if cols is not None and not np.array_equal(rows, cols):
                raise DataError(f"{what}: relation {rel!r} has different row and column names")
            if names is None:
                names = rows
            elif not np.array_equal(names, rows):
                raise DataError(f"{what}: relation {rel!r} orders the entities differently")
        bad = ~np.isfinite(a) | (a < 0)
        if bad.any():
            i, j = map(int, np.argwhere(bad)[0])
            raise DataError(f"{what}: relation {rel!r} entry ({i}, {j}) is {a[i, j]}, "
                            f"not a finite value >= 0")
        i, j = np.nonzero(a)
        heads.append(i)
        tails.append(j)
        rels.append(np.full(i.size, r))
        vals.append(a[i, j])
    assert shape is not None
    return RelationalTensor(np.concatenate(heads), np.concatenate(rels), np.concatenate(tails),
                            np.concatenate(vals), shape[0], len(matrices),
                            entity_names=names if names is not None
                            else np.array([f"e{i}" for i in range(shape[0])]),
                            relation_names=np.array([str(k) for k in matrices]))


def load_sampson(data_dir: PathLike | None = None) -> Dataset:
    """Sampson's monks: 18 x 18 x 10 relations of ranks 1-3 (``tensor["train"]``).

    Relation order as in the R list (SAMPLK1, SAMPLK2, SAMPLK3, SAMPDLK, SAMPES, SAMPDES,
    SAMPIN, SAMPNIN, SAMPPR, SAMNPR); head = row monk (the nominator), tail = column monk.
    """
    folder = dataset_dir("sampson-rlda", data_dir, REQUIRED_FILES["sampson-rlda"])
    obj = read_rda_object(folder / "sampson.rda", "sampson")
    if not isinstance(obj, Mapping):
        raise DataError(f"{folder / 'sampson.rda'}: expected a named list of matrices, got "
                        f"{type(obj).__name__}")
    tensor = tensor_from_matrices(obj, what=str(folder / "sampson.rda"))
    return Dataset("sampson-rlda", tensor={"train": tensor}, source=SOURCES["sampson-rlda"],
                   path=folder)


register_dataset(DatasetSpec(
    "sampson-rlda", load_sampson, required_files=("sampson.rda",),
    source=f"Sampson's monastery data of the {_LDA_PKG}; Sampson, A novitiate in a "
           f"period of change, PhD thesis, Cornell 1968",
    description="18 monks x 10 relations (ranked nominations), one tensor",
    kind="triples"))


# ---------------------------------------------------------------------- registry
def load_dataset(name: str | None = None, data_dir: PathLike | None = None,
                 download_if_missing: bool = True, **kwargs: Any) -> Dataset:
    """Load a data set by name, or detect the format of ``data_dir``.

    Parameters
    ----------
    name : str, optional
        A registered data set (:func:`~topiclink.datasets.dataset_specs`; ``"cora"`` is
        bundled and needs no data), a generic format (``"linqs"``, ``"rlda"``,
        ``"uci-bow"``, ``"triples"``: your own folder, ``data_dir`` required), or
        ``None`` / ``"auto"``: detect the format of ``data_dir``
        (:func:`~topiclink.datasets.detect.load_folder`).
    data_dir : str or path-like, optional
        The data set's folder; default ``data_home() / name``.
    download_if_missing : bool
        With ``data_dir=None`` and a file of the data set missing: download the data
        set's missing files into the data home first
        (:func:`~topiclink.datasets.fetch.fetch_dataset`, with its defaults:
        ``$TOPICLINK_DATA_MIRROR``, a progress bar).  ``False``: a missing file is a
        ``FileNotFoundError`` naming the fetch command.
    **kwargs
        Options of the data set's loader.

    Raises
    ------
    ValueError
        Unknown name (the message lists the known names).
    FileNotFoundError
        The data set's files are missing (and could not be downloaded:
        :class:`~topiclink.datasets.fetch.DatasetUnavailableError`), or (``name=None``)
        no known format was found in ``data_dir``.
    topiclink.datasets.fetch.FetchError
        A download failed otherwise (checksum, unwritable data home).
    """
    if name is None or name == "auto":
        if data_dir is None:
            raise FileNotFoundError("no data set name: pass data_dir= (CLI: --data DIR) to "
                                    "detect the format of your folder, or a name")
        return load_folder(data_dir, **kwargs)
    specs = dataset_specs()
    if name not in specs:
        known = ", ".join(specs)
        raise ValueError(f"unknown data set {name!r}; known: {known} (or none, with "
                         f"data_dir, to detect the format)")
    spec = specs[name]
    if (download_if_missing and data_dir is None and spec.location == "home"
            and name in dataset_sources()):
        source = dataset_sources()[name]
        needed = list(spec.required_files)
        if kwargs.get("form") == "raw":  # 20newsgroups' messages: the optional archive
            needed += [f.name for f in source.files if f.optional]
        needed = [n for n in needed if any(f.name == n for f in source.files)]
        if missing_files(source, data_home() / name, needed):
            # the whole data set (as listed by `topiclink datasets`), plus what is needed
            fetch_dataset(name, files=[f.name for f in source.files
                                       if not f.optional or f.name in needed])
    return spec.loader(data_dir=data_dir, **kwargs)


def _located(spec: DatasetSpec, home: Path) -> tuple[Path, bool]:
    """Where a listed data set is and whether its files are there."""
    if spec.location == "bundled":
        ref = spec.bundled_path() if spec.bundled_path is not None else None
        return Path(str(ref)), ref is not None and ref.is_file()
    path = home / spec.name
    return path, all((path / f).is_file() for f in spec.required_files)


def list_datasets(data_dir: PathLike | None = None, counts: bool = True) -> pd.DataFrame:
    """Which data sets are available, with their counts.

    Parameters
    ----------
    data_dir : str or path-like, optional
        The data home (folder of data set folders); default :func:`data_home`.
    counts : bool
        Load each found data set to fill the counts (about 5 s for all the shared ones;
        a data set with a ``counter`` -- hep-th -- is counted without its text analysis,
        its word and token counts left missing); ``False`` only checks that the files
        exist.

    Returns
    -------
    DataFrame
        One row per listed data set (:data:`LOADERS`, in registration order): ``name``,
        ``kind``, ``found`` (bool), ``path``, the keys of :meth:`Dataset.summary`
        (nullable integers; missing when not found or not applicable) and ``seconds``
        (load time).
    """
    home = data_home(data_dir)
    rows = []
    for spec in dataset_specs().values():
        if not spec.listed:
            continue
        name = spec.name
        path, found = _located(spec, home)
        row: dict[str, Any] = {"name": name, "kind": spec.kind, "found": found,
                               "path": str(path)}
        row.update(dict.fromkeys(SUMMARY_KEYS))
        row["seconds"] = None
        if found and counts:
            t0 = time.perf_counter()
            try:
                if spec.counter is not None:
                    row.update(spec.counter(path))
                else:
                    ds = (load_dataset(name) if spec.location == "bundled"
                          else load_dataset(name, path))
                    row.update(ds.summary())
            except (DataError, OSError, ValueError) as exc:
                logger.warning("data set %r found in %s but failed to load: %s", name, path,
                               exc)
            else:
                row["seconds"] = round(time.perf_counter() - t0, 3)
        rows.append(row)
    df = pd.DataFrame(rows, columns=["name", "kind", "found", "path", *SUMMARY_KEYS,
                                     "seconds"])
    for key in SUMMARY_KEYS:
        df[key] = df[key].astype("Int64")
    df["seconds"] = df["seconds"].astype("Float64")
    return df
