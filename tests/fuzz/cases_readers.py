"""Reader cases: every reader fed malformed, truncated, mis-encoded and huge-header files
(the generators live with the reader tests in ``tests/test_reader_robustness.py``)."""

from __future__ import annotations

from tests.fuzz.harness import Case


def cases() -> list[Case]:
    from tests.test_reader_robustness import fuzz_cases

    return fuzz_cases()
