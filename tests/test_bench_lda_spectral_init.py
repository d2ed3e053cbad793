"""benchmarks/lda_spectral_init.py: a quick run writes curves for both starts, seconds
to the target and the figure."""

from __future__ import annotations

import json

from tests.benchmark_module import benchmark_module


def test_quick_run_writes_both_starts(tmp_path):
    out = tmp_path / "spectral.json"
    with benchmark_module("lda_spectral_init") as bench:
        bench.main(["--quick", "--out", str(out)])
    result = json.loads(out.read_text())
    assert {r["init"] for r in result["rows"]} == {"random", "spectral"}
    for row in result["rows"]:
        assert len(row["seconds"]) == len(row["heldout_ll"]) == 3
        assert row["seconds"] == sorted(row["seconds"])
    assert set(result["summary"]["10"]["median_seconds_to_target"]) == {"random", "spectral"}
    assert out.with_suffix(".png").is_file()
