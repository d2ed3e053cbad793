"""Checkpoints of streams: ``partial_fit(..., checkpoint=PATH, checkpoint_every=...)``.

A stream is a sequence of ``partial_fit`` calls; each call is one pass over its chunk in
minibatches (:func:`topiclink.inference.engine.run_partial`).  A checkpointed call uses
the engine's checkpoint machinery as ``fit`` does -- the model saved with its full state
(``save(full=True)``) and a :class:`~topiclink.inference.engine.RunProgress` whose
``pass_`` says how far into the pass it is -- in two files:

- ``PATH.pass.npz`` (:func:`pass_path`): the call in progress, written at minibatch
  boundaries when due (every ``checkpoint_every`` minibatches or seconds);
- ``PATH``: the model after the last call that ended, written when a call ends (then the
  pass file is removed).  ``topiclink.load(PATH)`` is the stream so far, ready for the
  next call; ``len(model.state_.chunks) - 1`` counts the chunks it has seen.

Two files, because a call killed inside its pass is run again on the model as it was
*before* the call (the chunk is matched against that model's stream): that model must
survive the pass's writes.

Every checkpointed write carries the header member ``partial_fit``: ``before`` (a hash of
the state the call started from, :func:`~topiclink.inference.engine.state_key`; ``""``
for the first call of a stream), ``chunk`` (a hash of the chunk in the model's
numbering), ``complete`` and ``after`` (the hash of the state the call ended with).  A
call given ``PATH`` (:func:`plan`):

- returns the model of ``PATH`` without iterating when ``PATH`` is this very call, ended
  (killed after its last write, or run twice);
- resumes the pass file when it is the pass of this very call (same ``before``, same
  ``chunk``);
- starts a new pass when ``PATH`` is absent or holds this model (``after``, or, for a
  file written by ``fit(checkpoint=...)`` that ended, the same state);
- otherwise refuses with a one-line ValueError (another stream, another point of this
  stream, another chunk, a fit in progress).  A pass file left by a call that ended (a
  kill between writing ``PATH`` and removing it) is recognised and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from topiclink.inference.engine import State, state_key
from topiclink.persistence import read_header

__all__ = ["StreamCall", "pass_path", "position", "plan", "adopt", "RECORD"]

#: the header member of a checkpoint written by ``partial_fit``
RECORD = "partial_fit"

Action = Literal["start", "resume", "done"]


def pass_path(path: Path) -> Path:
    """The file of the call in progress beside the stream's checkpoint ``path``
    (``run.npz`` -> ``run.pass.npz``)."""
    stem = path.name[:-4] if path.name.endswith(".npz") else path.name
    return path.with_name(stem + ".pass.npz")


def position(model: Any) -> str:
    """Where in its stream ``model`` stands: the hash of its state, ``""`` without one."""
    state = getattr(model, "state_", None)
    return state_key(state) if isinstance(state, State) else ""


@dataclass(frozen=True)
class StreamCall:
    """One checkpointed ``partial_fit`` call: its checkpoint, where the stream stood
    before it and its chunk."""

    path: Path
    before: str
    chunk: str

    @property
    def pass_path(self) -> Path:
        return pass_path(self.path)

    def record(self, after: str | None = None) -> dict[str, Any]:
        """The header member of a write: in progress (``after`` None) or ended."""
        return {"before": self.before, "chunk": self.chunk, "complete": after is not None,
                "after": after or ""}


def _record(path: Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the header, its ``partial_fit`` member or None) of a checkpoint file; one-line
    ValueError for a malformed member."""
    header = read_header(path)
    record = header.get(RECORD)
    if record is None:
        return header, None
    if not (isinstance(record, dict)
            and all(isinstance(record.get(k), str) for k in ("before", "chunk", "after"))
            and isinstance(record.get("complete"), bool)):
        raise ValueError(f"checkpoint {path}: header member {RECORD!r} is malformed "
                         f"({record!r}); delete it or pass another checkpoint path")
    return header, record


def plan(model: Any, path: Path, chunk: str, load: Any
         ) -> tuple[StreamCall, Action, Any]:
    """What the call ``model.partial_fit(<chunk>, checkpoint=path)`` does: ``("start",
    None)``, ``("resume", the pass file's model)`` or ``("done", PATH's model)``, with its
    :class:`StreamCall`; ``load``: :func:`topiclink.load`.  One-line ValueError for a
    checkpoint this call must not touch (see the module docstring)."""
    call = StreamCall(path, position(model), chunk)
    advice = "delete it or pass another checkpoint path"
    ended = _record(path)[1] if path.is_file() else None
    if ended is not None and ended["complete"] and (ended["before"], ended["chunk"]) == (
            call.before, call.chunk):
        saved = load(path)                              # this call, ended
        model._check_checkpoint_owner(saved, path, advice)
        return call, "done", saved
    in_progress = call.pass_path
    if in_progress.is_file():
        _, record = _record(in_progress)
        if record is None:
            raise ValueError(f"checkpoint {in_progress} was not written by partial_fit "
                             f"(no {RECORD!r} header member); {advice}")
        if (record["before"], record["chunk"]) == (call.before, call.chunk) and \
                not record["complete"]:
            saved = load(in_progress)
            model._check_checkpoint_owner(saved, in_progress, advice)
            return call, "resume", saved
        stale = ended is not None and ended["complete"] and (
            ended["before"], ended["chunk"]) == (record["before"], record["chunk"])
        if not stale:
            what = ("another chunk" if record["before"] == call.before else
                    "this chunk from another point of the stream" if record["chunk"]
                    == call.chunk else "another chunk from another point of the stream")
            raise ValueError(
                f"checkpoint {in_progress} holds a partial_fit of {what} in progress; run "
                f"that call again (on topiclink.load({str(path)!r}) or, for a stream's "
                f"first call, an unfitted model) to finish it, or {advice}")
    if not path.is_file():
        return call, "start", None
    header, record = _record(path)
    if record is not None:
        if record["complete"] and record["after"] == call.before:
            return call, "start", None                  # the stream continues
        raise ValueError(f"checkpoint {path} holds another stream or another point of this "
                         "stream (neither this model nor this chunk on it); continue that "
                         f"stream from topiclink.load({str(path)!r}), or {advice}")
    run = header.get("run")
    if isinstance(run, dict) and not run.get("stopped") and \
            run.get("done") != run.get("n_iter"):
        raise ValueError(f"checkpoint {path} holds a fit in progress ({run.get('done')} of "
                         f"{run.get('n_iter')} iterations); finish it with the same "
                         f"fit(checkpoint=...), or {advice}")
    if call.before and position(load(path)) == call.before:
        return call, "start", None                      # e.g. fit(checkpoint=PATH) ended
    raise ValueError(f"checkpoint {path} holds another model than this one (not written by "
                     f"partial_fit on this stream); {advice}")


def adopt(model: Any, saved: Any) -> None:
    """``model`` becomes ``saved`` (a call that had ended): its fitted attributes, state
    and run; the parameters stay ``model``'s (equal where they matter)."""
    for name, value in vars(saved).items():
        if name.endswith("_") and not name.startswith("__"):
            setattr(model, name, value)
