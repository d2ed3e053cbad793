"""A grid's checkpoint folder: finished cells are not run again, unfinished fits resume.

``topiclink experiment NAME --checkpoint-dir DIR`` (or :func:`grid_checkpoint` around a
protocol call) makes :func:`topiclink.experiments.runner.run_grid` keep, in ``DIR``:

- ``grid.json``: the run's settings (the command's options); the folder is refused, with a
  one-line error naming the first difference, by a run with other settings;
- ``cells.jsonl``: one JSON line per finished cell (its coordinates and row), appended
  and flushed to disk as each cell ends; a line cut short by a kill is ignored;
- ``cell-<hash of the coordinates>/``: the checkpoints of that cell's fits
  (:func:`topiclink.estimators.checkpoint.checkpoint_folder`), every ``every`` iterations or
  seconds.

Run again after a kill, the same command skips the finished cells (their rows come from
``cells.jsonl``), resumes the interrupted cell's fits from their checkpoints and runs the
rest: the table equals an uninterrupted run's (the timings aside).

A plan (``--plan``) opens the folder read-only (``readonly=True``): it is checked against
the settings and its finished cells are read, but nothing is created or written.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from topiclink.estimators.checkpoint import DEFAULT_EVERY, parse_every
from topiclink.persistence import atomic_write, to_jsonable

__all__ = ["GridCheckpoint", "grid_checkpoint", "current_grid_checkpoint"]

logger = logging.getLogger(__name__)

_FORMAT = "topiclink-grid-checkpoint"


class GridCheckpoint:
    """The checkpoint folder of one grid run (see the module docstring)."""

    def __init__(self, folder: str | os.PathLike[str], settings: Mapping[str, Any],
                 every: int | str | float = DEFAULT_EVERY, readonly: bool = False) -> None:
        parse_every(every)
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise ValueError(f"checkpoint folder {self.folder} is a file")
        self.readonly = readonly
        if not readonly:
            self.folder.mkdir(parents=True, exist_ok=True)
        self.every = every
        self.settings = json.loads(json.dumps(to_jsonable(dict(settings)), default=str))
        manifest = self.folder / "grid.json"
        if manifest.exists():
            self._check_manifest(manifest)
        elif not readonly:
            atomic_write(manifest, json.dumps({"format": _FORMAT, "version": 1,
                                               "settings": self.settings},
                                              indent=1).encode())
        self.finished = self._read_rows()

    def _check_manifest(self, manifest: Path) -> None:
        try:
            saved = json.loads(manifest.read_text())
            theirs = saved["settings"] if saved.get("format") == _FORMAT else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            theirs = None
        if not isinstance(theirs, dict):
            raise ValueError(f"{manifest}: not a topiclink grid checkpoint; use another "
                             "--checkpoint-dir")
        for key in sorted(set(theirs) | set(self.settings)):
            if theirs.get(key) != self.settings.get(key):
                raise ValueError(f"checkpoint folder {self.folder} belongs to a run with "
                                 f"{key}={theirs.get(key)!r}, this run has "
                                 f"{self.settings.get(key)!r}; use another --checkpoint-dir "
                                 "or delete it")

    def _read_rows(self) -> dict[str, Any]:
        path = self.folder / "cells.jsonl"
        done: dict[str, Any] = {}
        if not path.exists():
            return done
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                done[self._key(entry["coords"])] = entry["row"]
            except (ValueError, KeyError, TypeError):
                if number >= len(lines) - 1:       # the last line, cut short by a kill
                    logger.warning("%s:%d: an unfinished line is ignored", path, number)
                    continue
                raise ValueError(f"{path}:{number}: not a finished-cell record") from None
        return done

    @staticmethod
    def _coords(coords: Mapping[str, Any]) -> Any:
        return json.loads(json.dumps(to_jsonable(dict(coords)), default=str))

    @classmethod
    def _key(cls, coords: Mapping[str, Any]) -> str:
        """A cell's identity: its coordinates as canonical JSON."""
        return json.dumps(cls._coords(coords), sort_keys=True)

    def row_of(self, coords: Mapping[str, Any]) -> tuple[bool, Any]:
        """(finished, its row) of the cell with ``coords``."""
        key = self._key(coords)
        return (key in self.finished), self.finished.get(key)

    def record(self, coords: Mapping[str, Any], row: Mapping[str, Any] | None) -> None:
        """Append the finished cell (flushed to disk before returning)."""
        if self.readonly:
            raise RuntimeError(f"checkpoint folder {self.folder} was opened read-only")
        row = None if row is None else json.loads(json.dumps(to_jsonable(dict(row)),
                                                             default=str))
        line = json.dumps({"coords": self._coords(coords), "row": row})
        with open(self.folder / "cells.jsonl", "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.finished[self._key(coords)] = row

    def cell_folder(self, coords: Mapping[str, Any]) -> Path:
        digest = hashlib.blake2b(self._key(coords).encode(), digest_size=8).hexdigest()
        return self.folder / f"cell-{digest}"


_CURRENT: contextvars.ContextVar[GridCheckpoint | None] = contextvars.ContextVar(
    "topiclink_grid_checkpoint", default=None)


@contextlib.contextmanager
def grid_checkpoint(folder: str | os.PathLike[str] | None, settings: Mapping[str, Any],
                    every: int | str | float = DEFAULT_EVERY, readonly: bool = False
                    ) -> Iterator[GridCheckpoint | None]:
    """Inside the block, :func:`run_grid` checkpoints into ``folder`` (None: no-op;
    ``readonly``: only reads which cells are finished, for a plan)."""
    if folder is None:
        yield None
        return
    token = _CURRENT.set(GridCheckpoint(folder, settings, every, readonly))
    try:
        yield _CURRENT.get()
    finally:
        _CURRENT.reset(token)


def current_grid_checkpoint() -> GridCheckpoint | None:
    return _CURRENT.get()
