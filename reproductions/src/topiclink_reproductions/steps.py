"""The steps every protocol's command shares, written once: the options every command has
checked last (``--workers``, the data folder, the output folder) and the data set read
(the paper file's default, checked for what the protocol needs)."""

from __future__ import annotations

from typing import Any

from topiclink.experiments.registry import Session
from topiclink_reproductions.spec import PaperSpec

__all__ = ["finish_check", "read_dataset"]

_NEEDS = {"corpus": "documents", "links": "documents with links",
          "labels": "labelled documents", "tensor": "a tensor"}


def finish_check(o: Any, ui: Session, prefix: str) -> None:
    """The checks that end every ``check`` step: ``--workers`` (when the command has it),
    the data folder given, and the output folder (no ``prefix_*`` results unless
    ``--force``)."""
    if hasattr(o, "workers"):
        ui.check(o.workers >= 1, f"--workers must be >= 1, got {o.workers}")
    ui.check_input_paths(o.data)
    ui.check_out(o.out, prefix, o.force)


def read_dataset(paper: PaperSpec, o: Any, ui: Session, data: Any = None,
                 needs: tuple[str, ...] = (), default: str | None = None) -> Any:
    """The data set of ``--dataset`` / ``--data`` (``data`` when a ``choose`` step read
    it; else the paper file's default, or ``default``), refused in one line unless it
    has each of ``needs`` (``"corpus"``, ``"links"``, ``"labels"``, ``"tensor"``)."""
    ds = data if data is not None else ui.load_data(o.dataset, o.data,
                                                    default=default or paper.dataset)
    missing = [n for n in needs if getattr(ds, n, None) is None]
    if missing:
        what = _NEEDS["links"] if "links" in needs else _NEEDS[missing[0]]
        raise ui.fail(f"dataset {ds.name!r} has no {what}")
    return ds
