"""The fuzzing suite: every generated bad or edge input must end in a clean one-line error
or a correct acceptance -- no traceback, no crash, no silently wrong result.

Each area runs in capped child processes (``tests/fuzz/runner.py``); the counts per area
and outcome are written to ``$TOPICLINK_FUZZ_SUMMARY`` when that is set (the closing
notes quote them).
"""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest

from tests.fuzz.harness import GOOD
from tests.fuzz.runner import count_cases, run_area

AREAS = ("api", "model-files", "readers", "cli", "data")


@pytest.mark.slow
@pytest.mark.parametrize("area", AREAS)
def test_no_traceback_crash_or_silent_misreading(area):
    n_cases = count_cases(area)
    assert n_cases >= 50, f"{area}: only {n_cases} cases"
    results = run_area(area, n_cases)
    assert len(results) == n_cases
    counts = Counter(r["outcome"] for r in results)
    path = os.environ.get("TOPICLINK_FUZZ_SUMMARY")
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps({"area": area, "cases": n_cases, **counts}) + "\n")
    bad = [f"{r['outcome']}: {r['id']}: {r['detail']}" for r in results
           if r["outcome"] not in GOOD]
    assert not bad, f"{area}: {len(bad)} of {n_cases} cases failed:\n" + "\n".join(bad[:40])


def test_the_classifier_can_fail():
    """The harness itself: a numpy traceback, a silent acceptance and a failed check are
    each caught."""
    import numpy as np

    from tests.fuzz.harness import Case, classify

    assert classify(Case("a", "x", lambda: np.zeros(2).reshape(3)))[0] == "traceback"
    assert classify(Case("b", "x", lambda: 1))[0] == "silent wrong"
    assert classify(Case("c", "x", lambda: 1, "accept", lambda r: r == 2))[0] == \
        "silent wrong"

    def clean() -> None:
        from topiclink.data.checks import check_n_topics

        check_n_topics(1)

    assert classify(Case("d", "x", clean))[0] == "clean error"
    assert classify(Case("e", "x", clean, "accept"))[0] == "traceback"
