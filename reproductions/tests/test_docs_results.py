"""No hand-copied figure in the documentation: ``docs/results.md`` reads every number
from ``benchmarks/results`` through the placeholders of its template
(``docs/templates/results.md.tmpl``, rendered by ``python docs/gen_results.py
--render``), and the README's headline numbers equal the values in the files they cite
(to the rounding shown)."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import statistics
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_results", ROOT / "docs" /
                                                  "gen_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


def _json(name: str):
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


def _csv(name: str) -> list[dict]:
    with (RESULTS / "experiments" / name).open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# ---------------------------------------------------------------------- the placeholders
def test_results_page_expands_without_a_placeholder_left():
    text = (ROOT / "docs" / "templates" / "results.md.tmpl").read_text(encoding="utf-8")
    assert len(gen.PLACEHOLDER.findall(text)) > 100        # the numbers are placeholders
    out = gen.expand(text, "results.md")
    assert "{{" not in out and "}}" not in out
    # every table the placeholders wrote is a well-formed markdown table
    for block in re.findall(r"((?:^\|.*\|\n)+)", out, re.M):
        rows = block.strip("\n").split("\n")
        widths = {row.count("|") - row.count("\\|") for row in rows}
        assert len(widths) == 1, block[:300]
        assert re.fullmatch(r"\|(---\|)+", rows[1]), rows[1]


def test_a_value_resolves_to_the_number_in_the_file():
    data = _json("lda_throughput.json")
    row = next(r for r in data["results"] if r["n_topics"] == 10 and r["threads"] == 1)
    text = '{{ value("lda_throughput.json", "results[n_topics=10,threads=1].ratio", ".2f") }}'
    assert gen.expand(text) == f"{row['ratio']:.2f}"
    # arithmetic over raw values, a percentage, a list, a CSV row by its fields
    ktm = _json("ktm_sotu.json")
    ratio = ktm["ratios"]["KTM/DMR"]["train_perplexity"]
    assert gen.expand('{{ pct(1 - value("ktm_sotu.json", "ratios.KTM/DMR.train_perplexity"), '
                      '".1f") }}') == f"{100 * (1 - ratio):.1f}"
    assert gen.expand('{{ value("lmv_hepth_kdd_converged.json", '
                      '"paper.improvement_range_over_K_eta", ".2f") }}') == "0.73, 0.83"
    summary = _csv("sotu_ktm_summary.csv")
    held = float(next(r for r in summary if r["model"] == "KTM")["heldout_perplexity"])
    assert gen.expand('{{ value("experiments/sotu_ktm_summary.csv", '
                      '"[model=KTM].heldout_perplexity", ".1f") }}') == f"{held:.1f}"
    # text that is not a placeholder (a template in a code block) is left alone
    assert gen.expand("{{figure:topic-map}} and {{ x }}") == "{{figure:topic-map}} and {{ x }}"


def test_tables_and_pivots_follow_the_file():
    grid = _csv("slda_20newsgroups_binary_grid_results.csv")
    cell = [float(r["accuracy"]) for r in grid
            if r["model"] == "gSLDA" and r["K"] == "10" and float(r["c"] or 0) == 25]
    out = gen.expand('{{ pivot("experiments/slda_20newsgroups_binary_grid_results.csv", "", '
                     'row=["model", "c"], col="K", cell="{accuracy:.3f} ± {accuracy_sd:.3f}", '
                     'rows=[["gSLDA", 25]], cols=[5, 10], corner="model", '
                     'col_label="K = {K}", row_labels=["gSLDA c = 25"]) }}')
    lines = out.splitlines()
    assert lines[0] == "| model | K = 5 | K = 10 |"
    want = f"{statistics.fmean(cell):.3f} ± {statistics.stdev(cell):.3f}"
    assert lines[2].startswith("| gSLDA c = 25 |") and lines[2].endswith(f"| {want} |")
    scale = _json("grtm_scale.json")["results"]
    out = gen.expand('{{ table("grtm_scale.json", "results", ["{n_docs:,}", "n_links"], '
                     '["documents", "links"]) }}')
    assert out.splitlines()[2:] == [f"| {r['n_docs']:,} | {r['n_links']} |" for r in scale]


@pytest.mark.parametrize("placeholder, message", [
    ('{{ value("lda_throughput.json", "results[n_topics=10,threads=1].nope") }}', "no 'nope'"),
    ('{{ value("lda_throughput.json", "results[n_topics=7].ratio") }}', "matches 0 records"),
    ('{{ value("no_such_file.json", "x") }}', "no results file 'no_such_file.json'"),
    ('{{ table("grtm_scale.json", "results", ["{nope:.1f}"]) }}', "no field 'nope'"),
    ('{{ value("lda_throughput.json", __import__("os")) }}', "unknown function '__import__'"),
    ('{{ value("lda_throughput.json", "benchmark").upper() }}', "not allowed"),
    ('{{ value("lda_throughput.json", "benchmark") + open("x") }}', "unknown function 'open'"),
])
def test_a_bad_placeholder_fails_naming_itself(placeholder, message):
    with pytest.raises(gen.PlaceholderError) as info:
        gen.expand(f"text {placeholder} text", "results.md")
    text = str(info.value)
    assert text.startswith("results.md: {{ ") and message in text
    assert placeholder.split("(")[0].strip("{ ") in text      # the placeholder is named


def test_the_hook_expands_the_page_markdown():
    class File:
        src_uri = "results.md"

    class Page:
        file = File()

    out = gen.on_page_markdown('K = {{ value("ktm_sotu.json", "n_train") }}', Page(), {}, [])
    assert out == f"K = {_json('ktm_sotu.json')['n_train']}"


# ---------------------------------------------------------------------- the README
def _headlines() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Headline results")
    return " ".join(text[start:text.index("\n## ", start + 5)].split())


def test_readme_headlines_equal_the_files_they_cite():
    text = _headlines()
    # LDA throughput: the range of the ratios to tomotopy on one and two threads
    found = re.search(r"against tomotopy on the same corpus: ([\d.]+)-([\d.]+)x", text)
    assert found and "lda_throughput.json" in text
    ratios = [r["ratio"] for r in _json("lda_throughput.json")["results"]
              if r["threads"] in (1, 2)]
    assert (found.group(1), found.group(2)) == (f"{min(ratios):.2f}", f"{max(ratios):.2f}")
    # gRTM on Cora: Gibbs-gRTM's AUC at K, ahead of the three others at that K
    found = re.search(r"Gibbs-gRTM AUC ([\d.]+) at K = (\d+), ahead of ([^(]+?) \(", text)
    assert found and "grtm_cora-linqs_alpha0.5_summary.csv" in text
    rows = _csv("grtm_cora-linqs_alpha0.5_summary.csv")

    def auc(model: str, k: str) -> float:
        return max(float(r["auc_mean"]) for r in rows if r["model"] == model and r["K"] == k)

    k = found.group(2)
    assert found.group(1) == f"{auc('Gibbs-gRTM', k):.3f}"
    others = re.split(r", | and ", found.group(3))
    assert others == ["Gibbs-RTM", "Gibbs-gMMRTM", "Var-RTM"]
    assert all(auc(m, k) < auc("Gibbs-gRTM", k) for m in others)
    # LMV on hep-th: the split, the sweeps, the improvement, CPU minutes and memory
    lmv = _json("lmv_hepth_kdd_converged.json")
    assert "lmv_hepth_kdd_converged.json" in text
    found = re.search(r"split \(([\d,]+) / ([\d,]+) / ([\d,]+) / ([\d,]+) exactly\)", text)
    split = lmv["split"]
    assert found and [int(g.replace(",", "")) for g in found.groups()] == [
        split["n_train"], split["train_links"], split["n_test"], split["test_citations"]]
    assert re.search(rf"converged after {lmv['result']['n_iter']} sweeps", text)
    found = re.search(r"([\d.]+) % better than random \(paper: (\d+)-(\d+) %\) in (\d+) "
                      r"minutes on 2 cores and ([\d.]+) GB", text)
    assert found
    low, high = lmv["paper"]["improvement_range_over_K_eta"]
    assert found.group(1) == f"{100 * lmv['result']['improvement']:.1f}"
    assert (found.group(2), found.group(3)) == (f"{100 * low:.0f}", f"{100 * high:.0f}")
    quiet = lmv["quiet_run"]  # the whole command's wall time on the quiet machine
    assert quiet["predictive_rank"] == lmv["result"]["predictive_rank"]
    assert found.group(4) == f"{quiet['wall_seconds'] / 60:.0f}"
    assert found.group(5) == f"{quiet['peak_rss_mb'] / 1000:.1f}"
