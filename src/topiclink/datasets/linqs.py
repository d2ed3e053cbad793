"""The LINQS group's folders: Cora and WebKB, and any folder of LINQS files.

A LINQS folder holds ``<name>.content`` + ``<name>.cites`` files (Sen et al., Collective
classification in network data, AI Magazine 2008), read by
:mod:`topiclink.data.io.linqs`.  Each loader is registered next to it
(:func:`~topiclink.datasets.registry.register_dataset`): ``"cora-linqs"`` and
``"webkb-linqs"`` in the data home, ``"linqs"`` for a folder of your own, which
:func:`~topiclink.datasets.detect.load_folder` also reads when it detects the format.

Labels are integer codes (int64) into ``label_names``, in sorted order of the label strings.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import numpy as np

from topiclink.data.io.linqs import read_linqs, read_linqs_dir
from topiclink.datasets.base import Dataset
from topiclink.datasets.home import dataset_dir
from topiclink.datasets.registry import DatasetSpec, get_spec, register_dataset

__all__ = ["load_cora_linqs", "load_linqs", "load_webkb"]

PathLike = str | os.PathLike[str]
Policy = Literal["error", "drop"]


def _label_codes(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int64 codes into the sorted distinct label strings, and those strings."""
    names, codes = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
    return codes.astype(np.int64), names


def load_cora_linqs(data_dir: PathLike | None = None, directed: bool = True,
                    self_links: Policy = "drop", duplicates: Policy = "drop",
                    unknown_ids: Policy = "drop") -> Dataset:
    """Cora (LINQS): 2708 papers x 1433 binary words, 5429 citations, 7 classes.

    Parameters
    ----------
    data_dir : str or path-like, optional
        Folder with ``cora.content`` and ``cora.cites``.
    directed : bool
        Citing -> cited links (5429), or undirected (5278 pairs).
    self_links, duplicates, unknown_ids : {"drop", "error"}
        See :func:`topiclink.data.io.read_linqs`.
    """
    folder = dataset_dir("cora-linqs", data_dir, get_spec("cora-linqs").required_files)
    corpus, links, labels = read_linqs(folder / "cora.content", folder / "cora.cites",
                                       directed=directed, self_links=self_links,
                                       duplicates=duplicates, unknown_ids=unknown_ids)
    codes, names = _label_codes(labels)
    return Dataset("cora-linqs", corpus=corpus, links=links, labels=codes, label_names=names,
                   source=get_spec("cora-linqs").source, path=folder)


register_dataset(DatasetSpec(
    "cora-linqs", load_cora_linqs, required_files=("cora.content", "cora.cites"),
    source="LINQS Cora: McCallum et al., Information Retrieval 2000; Sen et al., "
           "Collective classification in network data, AI Magazine 2008",
    description="2708 papers x 1433 binary words, 5429 citations, 7 classes",
    kind="documents+links+labels"))


def load_webkb(data_dir: PathLike | None = None, universities: list[str] | None = None,
               directed: bool = True, self_links: Policy = "drop",
               duplicates: Policy = "drop", unknown_ids: Policy = "drop") -> Dataset:
    """WebKB (LINQS): 877 pages of 4 universities x 1703 binary words, 5 classes.

    The universities are stacked into one corpus (``metadata["university"]``); links
    stay inside each university.  The 92 self-links are dropped (logged): 1516 directed
    links remain (1388 undirected pairs).

    Parameters
    ----------
    universities : list of str, optional
        Subset of ``cornell, texas, washington, wisconsin`` (default all, in that order).
    directed, self_links, duplicates, unknown_ids
        See :func:`topiclink.data.io.read_linqs`.
    """
    names = universities or list(_WEBKB)
    files = tuple(f"{u}.{e}" for u in names for e in ("content", "cites"))
    folder = dataset_dir("webkb-linqs", data_dir, files)
    corpus, links, labels = read_linqs_dir(folder, names, directed=directed,
                                           self_links=self_links, duplicates=duplicates,
                                           unknown_ids=unknown_ids)
    codes, label_names = _label_codes(labels)
    return Dataset("webkb-linqs", corpus=corpus, links=links, labels=codes,
                   label_names=label_names, source=get_spec("webkb-linqs").source, path=folder)


_WEBKB = ("cornell", "texas", "washington", "wisconsin")
register_dataset(DatasetSpec(
    "webkb-linqs", load_webkb,
    required_files=tuple(f"{u}.{e}" for u in _WEBKB for e in ("content", "cites")),
    source="LINQS WebKB: Craven et al., Learning to extract symbolic knowledge from "
           "the World Wide Web, AAAI 1998; Sen et al., AI Magazine 2008",
    description="877 pages of 4 universities x 1703 binary words, 1516 links, 5 classes",
    kind="documents+links+labels"))


def load_linqs(data_dir: PathLike | None = None, names: list[str] | None = None,
               directed: bool = True, self_links: Policy = "drop",
               duplicates: Policy = "drop", unknown_ids: Policy = "drop") -> Dataset:
    """Any LINQS-format folder (``<name>.content`` + ``<name>.cites``, e.g. Citeseer).

    Every ``*.content`` with a matching ``.cites`` is read (or only ``names``) and stacked
    as for WebKB.  ``data_dir`` is required: there is no default copy.  Links to ids that
    are not in the ``.content`` file (17 in the real CiteSeer) are dropped with one logged
    warning (``unknown_ids="error"`` refuses them, naming ``file:line``).
    """
    if data_dir is None:
        raise FileNotFoundError("the 'linqs' loader reads your own LINQS-format folder: "
                                "pass data_dir= (CLI: --data DIR)")
    folder = Path(data_dir).expanduser()
    if not folder.is_dir() or not any(folder.glob("*.content")):
        raise FileNotFoundError(f"{folder}: no <name>.content / <name>.cites files found")
    corpus, links, labels = read_linqs_dir(folder, names, directed=directed,
                                           self_links=self_links, duplicates=duplicates,
                                           unknown_ids=unknown_ids)
    codes, label_names = _label_codes(labels)
    return Dataset("linqs", corpus=corpus, links=links, labels=codes,
                   label_names=label_names, source=f"LINQS-format files in {folder}",
                   path=folder)


register_dataset(DatasetSpec(
    "linqs", load_linqs, source="LINQS-format files (Sen et al., AI Magazine 2008)",
    description="your own LINQS folder: <name>.content + <name>.cites (e.g. CiteSeer)",
    kind="documents+links+labels", location="user"))
