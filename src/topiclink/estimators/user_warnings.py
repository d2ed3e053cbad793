"""Warnings that point at the user's line, not at the library's.

:func:`warn_user` is :func:`warnings.warn` with the ``stacklevel`` computed at the call: the
first frame outside the ``topiclink`` package (the line of a script or notebook that
called ``fit``), however many library frames (``fit``, ``fit_transform``, the command
line's helpers, a checkpoint wrapper) lie between.  Python 3.12's ``skip_file_prefixes``
does the same; the library supports 3.11.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["user_stacklevel", "warn_user"]

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _inside_library(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_PACKAGE)


def user_stacklevel(skip: int = 1) -> int:
    """The ``stacklevel`` that makes a warning raised ``skip`` frames above this call name
    the first frame outside the package (1: the frame that calls this function).  When
    every frame is the library's (e.g. ``python -m topiclink``), the outermost one."""
    frame = sys._getframe(skip)
    level = 1
    while frame.f_back is not None and _inside_library(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` reported at the user's line (see the module
    docstring)."""
    warnings.warn(message, category, stacklevel=user_stacklevel(2) + 1)
