"""Where each data set of the data home comes from: the one registry of sources.

The registry is the packaged file ``bundled/sources.json`` (data only, read with the
standard library, so that ``topiclink datasets`` lists it without importing the loaders).
Per data set it holds the licence, the citation, a note on provenance and, per file of
the data set's folder, its size and sha256 (computed from the lab's copies, whose
``README.md`` name the sources and commits; ``python scripts/make_sources.py DATA_HOME``
rewrites the file from them) and its sources, tried in order:

- ``{"url": U}``: a direct download of exactly these bytes;
- ``{"url": U, "member": M}``: member ``M`` of the archive at ``U`` (tar of any
  compression, or zip), extracted and verified by its own size and sha256 (the archive is
  not kept: e.g. Cora of the LINQS ``cora.tgz``, the split files of ConvE's
  ``nations.tar.gz``).

A file with ``members`` (``{"count": N, "sha256": D}``) is an archive whose bytes at the
source differ from the copy the registry was made from (a repack of the same files): it
is accepted when its sha256 matches *or* its members do
(:func:`~topiclink.datasets.verify.members_digest`).  ``optional`` files are not needed by
the default load (``20news-bydate.tar.gz``, for ``form="raw"`` only).

URLs are the original distribution where it still serves the files, else the mirror the
lab's copy came from, at a fixed commit.  They were recorded from the READMEs and could
not be reached from the machine that computed the hashes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["DatasetSource", "FileSource", "Origin", "dataset_sources", "get_source"]

SOURCES_FILE = "sources.json"


@dataclass(frozen=True)
class Origin:
    """One place a file can be downloaded from: a URL, or a member of the archive at it."""

    url: str
    member: str | None = None


@dataclass(frozen=True)
class FileSource:
    """One file of a data set folder: its name, size, sha256 and origins (tried in order)."""

    name: str
    size: int
    sha256: str
    origins: tuple[Origin, ...]
    optional: bool = False
    members_count: int | None = None
    members_sha256: str | None = None

    @property
    def by_members(self) -> bool:
        """Also accepted when its archive members match (``members`` in the registry)."""
        return self.members_sha256 is not None


@dataclass(frozen=True)
class DatasetSource:
    """Licence, citation, provenance note and files of one data set of the data home."""

    name: str
    licence: str
    citation: str
    note: str
    files: tuple[FileSource, ...]

    @property
    def size(self) -> int:
        """Bytes of all the files (optional ones included)."""
        return sum(f.size for f in self.files)

    def file(self, name: str) -> FileSource:
        """The file named ``name`` (``KeyError`` when the data set has none)."""
        for f in self.files:
            if f.name == name:
                return f
        raise KeyError(name)


def _file(raw: dict[str, Any]) -> FileSource:
    members = raw.get("members") or {}
    return FileSource(name=raw["name"], size=int(raw["size"]), sha256=raw["sha256"],
                      origins=tuple(Origin(o["url"], o.get("member"))
                                    for o in raw.get("sources", ())),
                      optional=bool(raw.get("optional", False)),
                      members_count=members.get("count"), members_sha256=members.get("sha256"))


@cache
def dataset_sources() -> dict[str, DatasetSource]:
    """name -> :class:`DatasetSource` of every data set with a source, in registry order."""
    text = resources.files("topiclink").joinpath("datasets", "bundled",
                                                 SOURCES_FILE).read_text("utf-8")
    raw = json.loads(text)["datasets"]
    return {name: DatasetSource(name, d["licence"], d["citation"], d.get("note", ""),
                                tuple(_file(f) for f in d["files"]))
            for name, d in raw.items()}


def get_source(name: str) -> DatasetSource:
    """The sources of data set ``name``.

    Raises
    ------
    ValueError
        No data set of that name can be fetched (the message lists those that can).
    """
    sources = dataset_sources()
    if name not in sources:
        raise ValueError(f"no source is known for data set {name!r}; fetchable: "
                         f"{', '.join(sources)}")
    return sources[name]
