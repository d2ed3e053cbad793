"""The paper files (spec.py), the one claim checker (claims.py) and the entry points that
make each protocol a ``topiclink experiment`` command."""

from __future__ import annotations

import importlib.metadata

import pandas as pd
import pytest

from topiclink_reproductions.claims import check_claims, claim_lines, select
from topiclink_reproductions.spec import ClaimSpec, SpecError, load_paper, paper_names


def test_every_paper_file_loads_and_names_its_protocol():
    names = paper_names()
    assert {"grtm", "slda", "ktm", "ktm_graph"} <= set(names)
    for name in names:
        paper = load_paper(name)
        assert paper.name.replace("-", "_") == name, (name, paper.name)
        assert paper.title and paper.source.name == f"{name}.toml"


def test_every_entry_point_registers_its_protocol():
    from topiclink.experiments.registry import get_protocol

    points = importlib.metadata.entry_points(group="topiclink.experiments")
    found = {ep.name: ep.module for ep in points}
    assert {"grtm", "slda", "lmv", "lmv-kdd", "lmv-simulation", "bpbfm", "ktm",
            "ktm-graph"} <= set(found)
    for name in ("grtm", "slda", "ktm", "ktm-graph"):
        spec = get_protocol(name)
        assert spec.run.__module__ == found[name]
        assert found[name].startswith("topiclink_reproductions.")


def _write(tmp_path, text):
    path = tmp_path / "p.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ('[paper]\nname = "x"\ntitle = "t"\n[extra]\n', r"p.toml: unknown key 'extra'"),
    ('[paper]\nname = "x"\ntitle = "t"\nyear = 1\n', r"unknown key paper.'year'"),
    ('[split]\nkind = "k"\n', r"missing table \[paper\]"),
    ('[paper]\nname = "x"\ntitle = "t"\n[grid]\nK = []\n', r"grid.K must be a non-empty"),
    ('[paper]\nname = "x"\ntitle = "t"\n[[claims]]\nname = "c"\nkind = "vote"\n'
     'metric = "m"\na = {}\n', r"claims\[0\].kind must be one of"),
    ('[paper]\nname = "x"\ntitle = "t"\n[[claims]]\nname = "c"\nkind = "compare"\n'
     'metric = "m"\na = {}\n', r"claims\[0\] \(compare\) needs 'b'"),
    ('[paper]\nname = "x"\ntitle = "t"\n[[claims]]\nname = "c"\nkind = "range"\n'
     'metric = "m"\na = {}\n', r"needs 'low' or 'high'"),
    ('[paper\n', r"not valid TOML"),
])
def test_a_bad_paper_file_is_one_line_naming_file_and_key(tmp_path, text, message):
    with pytest.raises(SpecError, match=message) as info:
        load_paper(_write(tmp_path, text))
    assert "\n" not in str(info.value)


def test_an_unknown_paper_names_the_known_ones():
    with pytest.raises(SpecError, match="no paper file .*nope.toml .*grtm"):
        load_paper("nope")


TABLE = pd.DataFrame({
    "model": ["A", "A", "A", "B", "B", "B", "C"],
    "K": [5, 10, 15, 5, 10, 15, 5],
    "c": [1.0, 1.0, 1.0, float("nan"), float("nan"), float("nan"), 1.0],
    "auc": [0.8, 0.7, 0.6, 0.7, 0.75, 0.5, 0.9]})


def _claim(**kw):
    base = {"name": "claim", "kind": "compare", "metric": "auc", "a": {"model": "A"},
            "b": {"model": "B"}, "op": ">", "on": ("K",)}
    base.update(kw)
    return ClaimSpec(**base)


def test_compare_claims_count_the_pairs():
    rows = check_claims(TABLE, [_claim(), _claim(agree=0.6), _claim(op="<", factor=0.5),
                                _claim(statistic="mean")])
    assert list(rows.verdict) == ["PARTLY", "AGREES", "DISAGREES", "AGREES"]
    assert rows.loc[0, "cells"] == 3 and rows.loc[0, "share"] == pytest.approx(2 / 3)
    assert rows.loc[3, "mean_a"] == pytest.approx(0.7)
    assert "holds in 2/3 (K) pairs" in rows.loc[0, "detail"]


def test_ratio_and_range_claims():
    ratio = _claim(kind="ratio", low=0.95, high=1.05)            # 0.7 / 0.65 = 1.077
    near = _claim(kind="ratio", low=0.9, high=1.1)
    rng = _claim(kind="range", a={"model": "A", "c": 1.0}, low=0.55, high=0.85)
    above = _claim(kind="range", a={"model": "C"}, low=0.1, high=0.5)
    rows = check_claims(TABLE, [ratio, near, rng, above])
    assert list(rows.verdict) == ["PARTLY", "AGREES", "AGREES", "DISAGREES (ours higher)"]
    assert rows.loc[1, "value"] == pytest.approx(0.7 / 0.65)


def test_a_claim_whose_rows_did_not_run_is_not_checked():
    rows = check_claims(TABLE, [_claim(b={"model": "Z"}), _claim(metric="rank"),
                                _claim(a={"model": "C"}, on=("K", "c"))])
    assert list(rows.verdict) == ["NOT CHECKED"] * 3
    assert "model=Z not run" in rows.loc[0, "detail"]
    lines = claim_lines(rows, [_claim(note="a note")])
    assert lines[0].startswith("claim: NOT CHECKED; model=Z not run (a note)")


def test_select_compares_numbers_by_value_and_nan_as_nan():
    assert len(select(TABLE, {"c": 1})) == 4
    assert len(select(TABLE, {"model": "B", "c": float("nan")})) == 3
    assert select(TABLE, {"eta": 0.5}).empty


def test_the_grtm_claims_read_the_recorded_results():
    """The recorded Cora grid (alpha 0.5) through the paper file's claims: full U beats
    diagonal in every (K, fold) cell at c = 1 and 4, as the recorded findings say."""
    from pathlib import Path

    from topiclink_reproductions.grtm import paper_findings

    results = (Path(__file__).resolve().parents[2] / "benchmarks" / "results" /
               "experiments" / "grtm_cora-linqs_alpha0.5_results.csv")
    findings = paper_findings(pd.read_csv(results)).set_index("claim")
    for c in ("1", "4"):
        for metric in ("AUC", "link rank"):
            row = findings.loc[f"Gibbs-gRTM beats Gibbs-RTM (c={c}): {metric}"]
            assert row.verdict == "AGREES" and row.cells == 25
    assert findings.loc["Gibbs-gRTM (c=4) beats Gibbs-RTM (c=36): AUC", "verdict"] == \
        "NOT CHECKED"      # the recorded grid ran c = 1 and 4 only
