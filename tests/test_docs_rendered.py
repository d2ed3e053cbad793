"""The committed Markdown reads as the site does: no template placeholder in it, and
every page rendered from a template (``docs/templates/<page>.md.tmpl`` ->
``docs/<page>.md``, ``python docs/gen_results.py --render``) equal to what its template
renders today from ``benchmarks/results`` -- a rerun benchmark without a re-render
fails here, naming the command to run."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_results_rendered",
                                                  DOCS / "gen_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()
TEMPLATES = gen.templates()


def test_the_pages_that_quote_numbers_are_templates():
    names = {gen.rendered_path(t).relative_to(DOCS).as_posix() for t in TEMPLATES}
    assert {"index.md", "results.md", "results-knowledge-graphs.md",
            "results-visibility.md"} <= names, names


@pytest.mark.parametrize("template", TEMPLATES, ids=[t.name for t in TEMPLATES])
def test_every_rendered_page_is_current(template):
    target = gen.rendered_path(template)
    want = gen.render(template)
    assert target.is_file(), (f"{target.relative_to(ROOT)} is missing: run "
                              f"{gen.RENDER_COMMAND}")
    have = target.read_text(encoding="utf-8")
    assert have == want, (f"{target.relative_to(ROOT)} is not what "
                          f"{template.relative_to(ROOT)} renders from benchmarks/results "
                          f"today: run {gen.RENDER_COMMAND} (and edit the template, not "
                          "the page)")
    assert have.splitlines()[0] == (
        f"<!-- generated from docs/templates/{template.relative_to(gen.TEMPLATES).as_posix()}"
        f" by {gen.RENDER_COMMAND}; edit the template -->")


def test_no_placeholder_in_any_committed_markdown():
    pages = sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]
    found = [f"{p.relative_to(ROOT)}:{n}" for p in pages
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if "{{" in line]
    assert not found, f"template placeholders in committed Markdown: {found[:10]}"


def test_every_template_has_placeholders_or_a_reason():
    """A template without a placeholder would be a page edited in two places."""
    for template in TEMPLATES:
        assert gen.PLACEHOLDER.search(template.read_text(encoding="utf-8")), template.name


def _tiny_tree(tmp_path, monkeypatch, value):
    docs, results = tmp_path / "docs", tmp_path / "benchmarks" / "results"
    (docs / "templates" / "guide").mkdir(parents=True)
    results.mkdir(parents=True)
    (results / "x.json").write_text(json.dumps({"rows": [{"K": 5, "mrr": value}]}))
    (docs / "templates" / "guide" / "p.md.tmpl").write_text(
        '# P\n\nMRR {{ value("x.json", "rows[K=5].mrr", ".3f") }}.\n')
    for name, path in (("ROOT", tmp_path), ("DOCS", docs), ("TEMPLATES", docs / "templates"),
                       ("RESULTS", results)):
        monkeypatch.setattr(gen, name, path)
    return docs / "guide" / "p.md", results / "x.json"


def test_a_rerun_benchmark_makes_its_page_stale(tmp_path, monkeypatch):
    page, result = _tiny_tree(tmp_path, monkeypatch, 0.25)
    assert gen.stale_pages() == [page]                  # never rendered
    assert gen.render_all() == [page]
    assert page.read_text().splitlines() == [
        "<!-- generated from docs/templates/guide/p.md.tmpl by python docs/gen_results.py "
        "--render; edit the template -->", "# P", "", "MRR 0.250."]
    assert gen.stale_pages() == [] and gen.render_all() == []
    result.write_text(json.dumps({"rows": [{"K": 5, "mrr": 0.3}]}))   # the benchmark reran
    assert gen.stale_pages() == [page]
    gen.render_all()
    assert page.read_text().endswith("MRR 0.300.\n") and gen.stale_pages() == []
    page.write_text(page.read_text().replace("0.300", "0.299"))       # edited by hand
    assert gen.stale_pages() == [page]


def test_a_bad_placeholder_names_the_template(tmp_path, monkeypatch):
    page, result = _tiny_tree(tmp_path, monkeypatch, 0.25)
    result.write_text(json.dumps({"rows": []}))
    with pytest.raises(gen.PlaceholderError, match=r"^docs/templates/guide/p\.md\.tmpl: "
                                                   r"\{\{ value.*matches 0 records"):
        gen.render_all()
    assert not page.exists()


def test_the_check_command_agrees():
    proc = subprocess.run([sys.executable, str(DOCS / "gen_results.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_the_site_build_warns_about_a_stale_page(tmp_path, monkeypatch, caplog):
    """``mkdocs build --strict`` turns this warning into a failed build."""
    page, result = _tiny_tree(tmp_path, monkeypatch, 0.25)
    gen.render_all()
    with caplog.at_level("WARNING", logger="mkdocs"):
        gen.on_pre_build({})
    assert not caplog.records
    result.write_text(json.dumps({"rows": [{"K": 5, "mrr": 0.5}]}))
    with caplog.at_level("WARNING", logger="mkdocs"):
        gen.on_pre_build({})
    assert [r.name for r in caplog.records] == ["mkdocs.hooks.gen_results"]
    assert "docs/guide/p.md not current" in caplog.text and gen.RENDER_COMMAND in caplog.text
