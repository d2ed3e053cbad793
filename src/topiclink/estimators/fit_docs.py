"""The documentation of ``fit``'s ``checkpoint`` and ``checkpoint_every``, written once
and appended to the docstring of every ``fit`` that takes them."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["CHECKPOINT_PARAGRAPH", "CHECKPOINT_PARAMETERS", "documents_checkpoint",
           "documents_checkpoint_parameters"]

Method = TypeVar("Method", bound=Callable[..., Any])

#: the two keywords as a paragraph (:func:`documents_checkpoint`)
CHECKPOINT_PARAGRAPH = """\
``checkpoint=PATH`` writes the model with its full state to ``PATH`` every
``checkpoint_every`` (iterations, or a duration such as ``"10min"``; default
``"5min"``) and when the fit ends; a fit given an existing ``PATH`` resumes from it
and returns what an uninterrupted fit returns, draw for draw
(:mod:`topiclink.estimators.checkpoint`).  ``checkpoint=None`` inside a
:func:`~topiclink.estimators.checkpoint.checkpoint_folder` block: that folder's file."""

#: the two keywords as numpydoc entries (:func:`documents_checkpoint_parameters`)
CHECKPOINT_PARAMETERS = """\
checkpoint : str or path-like, optional
    Checkpoint file: the model with its full state is written there every
    ``checkpoint_every`` and when the fit ends; a fit given an existing file
    resumes from it and returns what an uninterrupted fit returns, iteration for
    iteration (:mod:`topiclink.estimators.checkpoint`).  None: the file of an enclosing
    :func:`~topiclink.estimators.checkpoint.checkpoint_folder` block, if any.
checkpoint_every : int or str, default "5min"
    Iterations (an int) or a duration (``"30s"``, ``"10min"``, ``"2h"``) between
    checkpoints."""


def documents_checkpoint(method: Method) -> Method:
    """Append :data:`CHECKPOINT_PARAGRAPH` to ``method``'s docstring."""
    method.__doc__ = inspect.cleandoc(method.__doc__ or "") + "\n\n" + CHECKPOINT_PARAGRAPH
    return method


def documents_checkpoint_parameters(method: Method) -> Method:
    """Append :data:`CHECKPOINT_PARAMETERS` to ``method``'s docstring, which ends with its
    ``Parameters`` section."""
    method.__doc__ = inspect.cleandoc(method.__doc__ or "") + "\n" + CHECKPOINT_PARAMETERS
    return method
