"""Checks of downloaded files: the sha256 of a file, and the digest of an archive's members.

Standard library only (the listing of ``topiclink datasets`` must stay fast).

An archive whose bytes differ from the copy the registry was made from (a repack of the
same files) is verified by its members: :func:`members_digest` hashes the sorted list of
``(name, sha256 of the content)`` of its regular files, names taken relative to a top
folder common to all of them (so ``cit-HepTh-abstracts/1992/9201001.abs`` and
``1992/9201001.abs`` are the same member), hidden files (``.DS_Store``, ``._x``) left out.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import BinaryIO

__all__ = ["file_sha256", "members_digest", "open_member"]

_CHUNK = 1 << 20


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 (hex) of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _stream_sha256(f: BinaryIO) -> str:
    h = hashlib.sha256()
    for block in iter(lambda: f.read(_CHUNK), b""):
        h.update(block)
    return h.hexdigest()


def _members(path: str | os.PathLike[str]) -> Iterator[tuple[str, BinaryIO]]:
    """``(name, readable)`` of each regular file of a tar (any compression) or zip archive."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if not info.is_dir():
                    with z.open(info) as f:
                        yield info.filename, f
        return
    with tarfile.open(path, "r:*") as tar:
        for m in tar:
            if m.isfile():
                f = tar.extractfile(m)
                assert f is not None
                yield m.name, f


def _visible(name: str) -> bool:
    return not any(part.startswith(".") for part in PurePosixPath(name).parts)


def members_digest(path: str | os.PathLike[str]) -> tuple[int, str]:
    """``(number of members, sha256 hex)`` of an archive's regular, non-hidden files.

    Raises
    ------
    tarfile.TarError, zipfile.BadZipFile, OSError
        The file is not a readable archive.
    """
    hashed = {name: _stream_sha256(f) for name, f in _members(path) if _visible(name)}
    names = sorted(hashed)
    parts = [PurePosixPath(n).parts for n in names]
    strip = 1 if parts and all(len(p) > 1 and p[0] == parts[0][0] for p in parts) else 0
    h = hashlib.sha256()
    for n, p in sorted(zip(names, parts, strict=True), key=lambda t: t[1][strip:]):
        h.update(f"{'/'.join(p[strip:])}\0{hashed[n]}\n".encode())
    return len(names), h.hexdigest()


def open_member(path: str | os.PathLike[str], member: str,
                out: BinaryIO) -> None:
    """Copy the member named ``member`` of a tar or zip archive to the open file ``out``.

    Raises
    ------
    KeyError
        No such member.
    """
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z, z.open(member) as f:
            for block in iter(lambda: f.read(_CHUNK), b""):
                out.write(block)
        return
    with tarfile.open(path, "r:*") as tar:
        info = tar.getmember(member)
        f = tar.extractfile(info)
        if f is None:
            raise KeyError(f"{member} is not a regular file")
        for block in iter(lambda: f.read(_CHUNK), b""):
            out.write(block)
