"""The library's version: one place, read by the package, the model files and the reports.

The single source is ``version`` in ``pyproject.toml``; an installed topiclink (a wheel, an
sdist or ``pip install -e .``) reads it from the distribution's metadata.  Only where the
distribution is not installed (``src/`` put on ``sys.path`` by hand) is the version unknown:
it is then ``"0+unknown"``, a valid PEP 440 version that no release carries.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

#: the version of a source tree whose distribution is not installed
UNKNOWN_VERSION = "0+unknown"


def _metadata_version(distribution: str = "topiclink") -> str:
    """The installed version of ``distribution``, or :data:`UNKNOWN_VERSION` if it is absent.

    Parameters
    ----------
    distribution : str
        The distribution's name, as in ``pyproject.toml``.

    Returns
    -------
    str
        The version from the distribution's metadata, or ``"0+unknown"``.
    """
    try:
        return version(distribution)
    except PackageNotFoundError:
        return UNKNOWN_VERSION


__version__: str = _metadata_version()
