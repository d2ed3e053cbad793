"""Where the (non-bundled) data sets live on disk.  No network access, ever.

The data home is a folder holding one sub-folder per data set (``cora-linqs/``,
``20newsgroups/``, ...), each in the layout of the shared data sets.  It is, in order:

1. the ``override`` argument (``data_dir=`` of the loaders' listing functions);
2. the environment variable ``TOPICLINK_DATA`` (:data:`DATA_HOME_ENV`);
3. ``shared/datasets`` in the parent folder of the current directory, else in the parent
   folder of the repository (the checkout holding ``src/topiclink`` in an editable
   install): the first that exists.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["DATA_HOME_ENV", "data_home", "dataset_dir", "default_candidates"]

#: Environment variable naming the data home.
DATA_HOME_ENV = "TOPICLINK_DATA"


def default_candidates() -> list[Path]:
    """The folders tried, in order, when neither an override nor the variable is set."""
    repo = Path(__file__).resolve().parents[3]
    return [(Path.cwd() / ".." / "shared" / "datasets").resolve(),
            (repo / ".." / "shared" / "datasets").resolve()]


def data_home(override: str | os.PathLike[str] | None = None) -> Path:
    """The data home folder (see the module docstring for the search order).

    Returns a path even when it does not exist (the first candidate); the loaders then
    raise a :class:`FileNotFoundError` naming what is missing.
    """
    if override is not None:
        return Path(override).expanduser()
    env = os.environ.get(DATA_HOME_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    candidates = default_candidates()
    for c in candidates:
        if c.is_dir():
            return c
    return candidates[0]


def dataset_dir(name: str, data_dir: str | os.PathLike[str] | None = None,
                files: Sequence[str] = ()) -> Path:
    """The folder of data set ``name``, checked to hold ``files``.

    Parameters
    ----------
    name : str
        Folder name under the data home (e.g. ``"cora-linqs"``).
    data_dir : str or path-like, optional
        The data set's own folder (same file layout); default ``data_home() / name``.
        A folder that lacks the files but has a ``name`` sub-folder holding them (i.e. a
        data home) is accepted too.
    files : sequence of str
        File names that must exist in the folder.

    Raises
    ------
    FileNotFoundError
        One line naming the folder, the missing files and how to point to the data.
    """
    if data_dir is not None:
        folder = Path(data_dir).expanduser()
        if _missing(folder, files) and not _missing(folder / name, files):
            folder = folder / name
        hint = "check data_dir"
    else:
        folder = data_home() / name
        env = os.environ.get(DATA_HOME_ENV, "").strip()
        hint = (f"{DATA_HOME_ENV}={env!r} is set; put the {name!r} folder there" if env else
                f"set {DATA_HOME_ENV} to the folder holding the data set folders "
                f"or pass data_dir=")
    missing = _missing(folder, files) if folder.is_dir() else list(files)
    if not folder.is_dir() or missing:
        what = ", ".join(missing) if missing else "the folder"
        raise FileNotFoundError(f"data set {name!r} not found in {folder} (missing: {what}); "
                                f"{hint}")
    return folder


def _missing(folder: Path, files: Sequence[str]) -> list[str]:
    return [f for f in files if not (folder / f).is_file()]
