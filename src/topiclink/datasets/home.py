"""Where the (non-bundled) data sets live on disk: the data home.

The data home is a folder holding one sub-folder per data set (``cora-linqs/``,
``20newsgroups/``, ...), each in the layout of the registry of sources
(:mod:`topiclink.datasets.sources`).  It is, in order:

1. the ``override`` argument (``data_dir=`` of the listing and fetching functions);
2. the environment variable ``TOPICLINK_DATA`` (:data:`DATA_HOME_ENV`);
3. ``~/topiclink_data`` (:data:`DEFAULT_HOME`, as scikit-learn's ``~/scikit_learn_data``),
   created when a data set is first fetched.

It never depends on the current directory or on where topiclink is installed.  A data
set missing from it is downloaded by ``load_dataset(name)`` or ``topiclink datasets
fetch NAME`` (:mod:`topiclink.datasets.fetch`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["DATA_HOME_ENV", "DEFAULT_HOME", "data_home", "dataset_dir", "default_candidates"]

#: Environment variable naming the data home.
DATA_HOME_ENV = "TOPICLINK_DATA"


#: The data home when neither an override nor :data:`DATA_HOME_ENV` is given.
DEFAULT_HOME = "~/topiclink_data"


def default_candidates() -> list[Path]:
    """The folders tried when neither an override nor the variable is set: the per-user
    folder :data:`DEFAULT_HOME` only."""
    return [Path(DEFAULT_HOME).expanduser()]


def data_home(override: str | os.PathLike[str] | None = None) -> Path:
    """The data home folder (see the module docstring for the order).

    Returns a path even when it does not exist; the loaders then fetch the missing data
    set or raise a :class:`FileNotFoundError` naming what is missing.
    """
    if override is not None:
        return Path(override).expanduser()
    env = os.environ.get(DATA_HOME_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    return default_candidates()[0]


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
        One line naming the folder, the missing files and the command that fetches them.
    """
    if data_dir is not None:
        folder = Path(data_dir).expanduser()
        if _missing(folder, files) and not _missing(folder / name, files):
            folder = folder / name
        hint = "check the folder given"
    else:
        folder = data_home() / name
        env = os.environ.get(DATA_HOME_ENV, "").strip()
        where = (f"{DATA_HOME_ENV}={env!r}" if env else
                 f"the data home {folder.parent} (set {DATA_HOME_ENV} to use another)")
        hint = f"download it with `topiclink datasets fetch {name}` into {where}"
    missing = _missing(folder, files) if folder.is_dir() else list(files)
    if not folder.is_dir() or missing:
        what = ", ".join(missing) if missing else "the folder"
        raise FileNotFoundError(f"data set {name!r} not found in {folder} (missing: {what}); "
                                f"{hint}")
    return folder


def _missing(folder: Path, files: Sequence[str]) -> list[str]:
    return [f for f in files if not (folder / f).is_file()]
