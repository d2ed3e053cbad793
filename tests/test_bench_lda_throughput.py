"""``benchmarks/lda_throughput.py`` is what a lent 16-core host runs (the guide names it): its
timing of our sweep must run for every scheme, else a device session is spent on a
traceback (the script once called ``sweeper.__exit__()`` with no arguments)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.benchmark_module import benchmark_module


@pytest.mark.parametrize(("threads", "scheme"),
                         [(1, "sequential"), (2, "partition"), (2, "adlda")])
def test_time_ours_runs_each_scheme(threads: int, scheme: str) -> None:
    with benchmark_module("lda_throughput") as module:
        words, offsets = module.make_corpus(200, 30, 300, 5, seed=0)
        times, ll = module.time_ours(words, offsets, 300, 5, warmup=1, timed=2, seed=0,
                                     threads=threads, scheme=scheme)
    assert len(times) == 2 and all(t > 0 for t in times)
    # a log joint per token of a 300-word vocabulary: finite, below 0, above -log(300) - 5
    assert np.isfinite(ll) and -np.log(300) - 5 < ll < 0
