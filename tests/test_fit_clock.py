"""``topiclink fit`` reports the training time without Numba's compilation."""

from __future__ import annotations

import time

import numba
import numpy as np

from topiclink.cli.common import FitClock, fit_clock


def test_compilation_is_timed_apart():
    @numba.njit  # a new function: compiled inside the block, never cached
    def doubled_sum(x):
        total = 0.0
        for value in x:
            total += 2.0 * value
        return total

    with fit_clock() as clock:
        assert doubled_sum(np.ones(4)) == 8.0
        time.sleep(0.2)
    assert clock.compiling > 0.0
    assert clock.total >= clock.compiling + 0.2
    assert abs(clock.training - (clock.total - clock.compiling)) < 1e-12


def test_no_compilation_no_note():
    with fit_clock() as clock:
        time.sleep(0.05)
    assert clock.compiling == 0.0
    assert clock.describe() == f"trained in {clock.total:.1f} s"


def test_describe_names_the_compilation():
    text = FitClock(total=40.0, compiling=22.4).describe()
    assert text.startswith("trained in 17.6 s (+ 22.4 s compiling Numba kernels")
