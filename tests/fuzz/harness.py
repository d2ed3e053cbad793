"""The fuzzing harness: generated bad and edge inputs, each classified automatically.

A case is a thunk plus what it should do (``expect="error"``: refuse; ``"accept"``:
succeed, optionally passing ``check(result)``).  Its outcome is one of

- ``clean error``: refused with a one-line ValueError/TypeError/FileNotFoundError/
  NotFittedError (DataError included) raised by topiclink's own code;
- ``correct acceptance``: accepted, and the check (if any) holds;
- ``traceback``: any other exception, a multi-line message, or an error raised from inside
  numpy/scipy/pandas/zipfile instead of a topiclink check; an expected acceptance that
  was refused counts here too;
- ``crash``: the process died, ran out of memory or time (decided by the parent);
- ``silent wrong``: accepted where it should have refused, or a failed check.

Cases run in child processes (``python -m tests.fuzz.harness AREA START STOP``) with a
memory and a time cap, one JSON line per case, so a crash cannot take the suite down.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLEAN_TYPES = ("ValueError", "TypeError", "FileNotFoundError", "NotFittedError",
               "DataError", "DataFileNotFoundError", "IsADirectoryError", "PermissionError",
               "NotADirectoryError", "SaveError", "CheckpointInUseError")
GOOD = ("clean error", "correct acceptance")


@dataclass
class Case:
    id: str
    area: str
    run: Callable[[], Any]
    expect: str = "error"                         # "error" | "accept" | "any"
    check: Callable[[Any], bool] | None = None


def _raised_by_topiclink(exc: BaseException) -> bool:
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    return f"{os.sep}topiclink{os.sep}" in frames[-1].filename


def _is_clean(exc: BaseException) -> bool:
    from sklearn.exceptions import NotFittedError

    names = {cls.__name__ for cls in type(exc).__mro__}
    if not names & set(CLEAN_TYPES) and not isinstance(exc, NotFittedError):
        return False
    message = str(exc)
    return bool(message) and "\n" not in message.strip() and _raised_by_topiclink(exc)


def classify(case: Case) -> tuple[str, str]:
    judge = getattr(case, "judge", None)
    if judge is not None:                 # the CLI: judged from exit code and output
        try:
            return judge()
        except Exception as exc:  # noqa: BLE001
            return "traceback", f"judge raised {type(exc).__name__}: {exc}"[:300]
    try:
        result = case.run()
    except MemoryError as exc:
        return "crash", f"MemoryError: {exc}"
    except Exception as exc:  # noqa: BLE001 - classifying is the point
        detail = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        if _is_clean(exc):
            return ("clean error" if case.expect != "accept" else "traceback",
                    detail if case.expect != "accept" else f"wrongly refused: {detail}")
        where = traceback.extract_tb(exc.__traceback__)
        frame = f" at {Path(where[-1].filename).name}:{where[-1].lineno}" if where else ""
        return "traceback", detail[:300] + frame
    if case.expect == "error":
        return "silent wrong", f"accepted: {type(result).__name__}"
    if case.check is not None:
        try:
            ok = bool(case.check(result))
        except Exception as exc:  # noqa: BLE001
            return "silent wrong", f"check raised {type(exc).__name__}: {exc}"
        if not ok:
            return "silent wrong", "check failed"
    return "correct acceptance", ""


def all_cases(area: str) -> list[Case]:
    if area == "api":
        from tests.fuzz.cases_api import cases
    elif area == "model-files":
        from tests.fuzz.cases_files import cases
    elif area == "readers":
        from tests.fuzz.cases_readers import cases
    elif area == "cli":
        from tests.fuzz.cases_cli import cases
    elif area == "data":
        from tests.fuzz.cases_data import cases
    else:
        raise ValueError(f"unknown area {area!r}")
    found = cases()
    from tests.fuzz.cases_models import cases as model_cases

    found = found + model_cases(area)
    ids = [c.id for c in found]
    assert len(ids) == len(set(ids)), "case ids must be unique"
    return found


def main(argv: list[str]) -> None:
    import logging
    import warnings

    logging.disable(logging.CRITICAL)
    warnings.simplefilter("ignore")
    if argv[1:] == ["count"]:             # the number of cases a fresh process builds
        print(len(all_cases(argv[0])), flush=True)
        return
    area, start, stop = argv[0], int(argv[1]), int(argv[2])
    cases = all_cases(area)[start:stop]
    for case in cases:
        outcome, detail = classify(case)
        print(json.dumps({"id": case.id, "outcome": outcome, "detail": detail}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
