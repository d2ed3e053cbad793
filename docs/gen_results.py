"""Results pages generated from ``benchmarks/results`` at build time (an MkDocs hook).

Every ``benchmarks/results/*.json`` becomes one page ``results/benchmarks/<stem>.md``:
the title from the JSON's ``benchmark`` key (else the file name), its long strings
(``what``, ``protocol``, notes) as paragraphs, its scalar leaves as key / value tables and
its lists of records as tables, in the order of the file; a PNG named after the JSON is
shown below.  The files of ``benchmarks/results/experiments/`` (the papers' protocols,
written by ``topiclink experiment ...``) become one page per protocol prefix (``grtm``,
``lmv``, ...): summary CSVs as tables, findings, text summaries and figures.  Nothing is
hand-copied: a rerun benchmark changes its page at the next build.  Nothing is special-
cased per file; the renderer follows the structure of the data.

MkDocs runs this as a hook (``hooks:`` in ``mkdocs.yml``): ``on_config`` adds the pages
to the "Results" section of the nav, ``on_files`` adds them (and the figures) to the
site.  ``python docs/gen_results.py OUT_DIR`` writes the same markdown to a folder.
"""

from __future__ import annotations

import csv
import json
import math
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
EXPERIMENTS = RESULTS / "experiments"
PREFIX = "results"  # where the generated pages live in the site
NAV_SECTION = "Results"  # the nav section the generated pages are appended to
LONG_TEXT = 100  # strings longer than this are paragraphs, not table cells
SHORT_LIST = 8  # lists of scalars up to this long are shown whole
WIDE = 14  # record tables with more columns and few rows are transposed
CSV_ROWS = 60  # CSVs with more rows are linked, not shown
TEXT_KEYS = ("what", "protocol", "note", "notes", "description")

PROTOCOL_TITLES = {  # one short human title per experiment prefix; others use the prefix
    "grtm": "Relational topic models (gRTM)",
    "slda": "Supervised topic models (gSLDA, MedLDA)",
    "lmv": "Visibility (LMV)",
    "bpbfm": "Knowledge graphs (BPBFM)",
    "sotu": "Metadata: State of the Union (KTM, DMR)",
    "cora": "Metadata: topics on a graph (KTM)",
}


# ---------------------------------------------------------------------------- formatting
def esc(text: str) -> str:
    """Text for a markdown paragraph or table cell: nothing in it is markup."""
    text = str(text).replace("\\", "\\\\")
    for ch in "`*_[]<>|#":
        text = text.replace(ch, "\\" + ch)
    return text.replace("\r", " ").replace("\n", " ")


def fmt(value: Any) -> str:
    """One scalar as a table cell (floats to 4 significant digits)."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        return f"{value:.4g}"
    return esc(value)


def is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def summarise_list(values: list) -> str:
    """A list of scalars as one cell: whole when short, else its count and range."""
    if len(values) <= SHORT_LIST:
        return ", ".join(fmt(v) for v in values) if values else "(empty)"
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) == len(values):
        return (f"{len(values)} values: first {fmt(values[0])}, last {fmt(values[-1])}, "
                f"min {fmt(min(numbers))}, max {fmt(max(numbers))}")
    return f"{len(values)} values: {', '.join(fmt(v) for v in values[:SHORT_LIST])}, ..."


def cell(value: Any) -> str:
    if is_scalar(value):
        return fmt(value)
    if isinstance(value, list) and all(is_scalar(v) for v in value):
        return summarise_list(value)
    if isinstance(value, list):
        return f"{len(value)} items"
    return esc(json.dumps(value, default=str))[:200]


def flatten(record: dict, prefix: str = "") -> dict[str, Any]:
    """A nested dict as dotted keys -> scalars or lists (one table row)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def table(header: list[str], rows: Iterable[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines + [""]


def records_table(records: list[dict]) -> list[str]:
    flat = [flatten(r) for r in records]
    columns: list[str] = []
    for row in flat:
        columns += [c for c in row if c not in columns]
    if len(columns) > WIDE and len(flat) <= 12:  # transpose: one column per record
        labels = []
        for i, row in enumerate(flat):
            first = next((v for v in row.values() if isinstance(v, str) and v), None)
            labels.append(esc(first) if first and len(first) <= 40 else f"#{i}")
        return table(["field", *labels],
                      ([esc(c), *(cell(row.get(c, "")) for row in flat)] for c in columns))
    return table([esc(c) for c in columns],
                 ([cell(row.get(c, "")) for c in columns] for row in flat))


# ---------------------------------------------------------------------------- JSON pages
def _walk(value: Any, path: tuple[str, ...], texts: list, scalars: list, tables: list) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _walk(item, (*path, str(key)), texts, scalars, tables)
    elif isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            tables.append((path, value))
        elif all(is_scalar(v) for v in value):
            scalars.append((path, summarise_list(value)))
        else:
            for i, item in enumerate(value):
                _walk(item, (*path, str(i)), texts, scalars, tables)
    elif isinstance(value, str) and (len(value) > LONG_TEXT or (path and path[-1] in TEXT_KEYS)):
        texts.append((path, value))
    else:
        scalars.append((path, fmt(value)))


def render_section(value: Any, path: tuple[str, ...], level: int) -> list[str]:
    """Paragraphs, then a key / value table, then the record tables of one subtree."""
    texts: list = []
    scalars: list = []
    tables: list = []
    _walk(value, path, texts, scalars, tables)
    strip = len(path)
    lines: list[str] = []
    for p, text in texts:
        lines += [f"**{esc('.'.join(p[strip:]) or p[-1])}**: {esc(text)}", ""]
    if scalars:
        lines += table(["key", "value"], ([esc(".".join(p[strip:]) or p[-1]), v]
                                          for p, v in scalars))
    for p, records in tables:
        sub = ".".join(p[strip:])
        if sub:
            lines += [f"{'#' * (level + 1)} {esc(sub)}", ""]
        lines += records_table(records)
    return lines


def render_json(path: Path) -> tuple[str, str]:
    """(title, markdown) of one results JSON."""
    data = json.loads(path.read_text(encoding="utf-8"))
    name = data.get("benchmark") if isinstance(data, dict) else None
    title = path.stem if not name or name == path.stem else f"{path.stem} ({name})"
    lines = [f"# {esc(title)}", ""]
    source = f"benchmarks/results/{path.name}"
    script = ROOT / "benchmarks" / f"{name or path.stem}.py"
    lines += [f"*Generated at build time from `{source}`"
              + (f", written by `python benchmarks/{script.name}`" if script.is_file() else "")
              + "; rerun the benchmark to change this page.*", ""]
    if not isinstance(data, dict):
        return title, "\n".join(lines + render_section(data, (), 1))
    head = {k: v for k, v in data.items() if is_scalar(v) or k in TEXT_KEYS}
    rest = {k: v for k, v in data.items() if k not in head}
    texts = [k for k in TEXT_KEYS if isinstance(head.get(k), str)]
    for key in texts:
        lines += [esc(head.pop(key)), ""]
    head.pop("benchmark", None)
    if head:
        lines += render_section(head, (), 1)
    for key, value in rest.items():
        lines += [f"## {esc(key)}", ""]
        lines += render_section(value, (key,), 2)
    for figure in sorted(RESULTS.glob(f"{path.stem}*.png")):
        lines += [f"![{figure.stem}]({figure.name})", ""]
    return title, "\n".join(lines)


def json_pages() -> list[tuple[str, str, str]]:
    """(uri, title, markdown) of every results JSON, plus the index."""
    pages = []
    index = ["# Benchmarks (generated)", "",
             "Every page of this section is rendered at build time from the JSON a "
             "benchmark script writes to `benchmarks/results/` (`docs/gen_results.py`); "
             "the narrative around the numbers is on the "
             "[protocol results](../../results.md) page.", ""]
    rows = []
    for path in sorted(RESULTS.glob("*.json")):
        title, text = render_json(path)
        uri = f"{PREFIX}/benchmarks/{path.stem}.md"
        pages.append((uri, path.stem, text))
        data = json.loads(path.read_text(encoding="utf-8"))
        what = ""
        if isinstance(data, dict):
            what = next((data[k] for k in TEXT_KEYS if isinstance(data.get(k), str)), "")
        what = what if len(what) <= 160 else what[:157] + "..."
        rows.append([f"[{esc(path.stem)}]({path.stem}.md)", esc(what)])
    index += table(["benchmark", "what / protocol"], rows)
    pages.insert(0, (f"{PREFIX}/benchmarks/index.md", "Overview", "\n".join(index)))
    return pages


# ---------------------------------------------------------------------------- experiments
def demote(markdown: str) -> str:
    """Headings one level down (the page has its own title), code blocks untouched."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        out.append("#" + line if not fenced and re.match(r"#+ ", line) else line)
    return "\n".join(out)


def csv_table(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    if not rows:
        return ["(empty)", ""]
    if len(rows) - 1 > CSV_ROWS:
        return [f"{len(rows) - 1} rows (columns: {esc(', '.join(rows[0]))}); "
                f"in `benchmarks/results/experiments/{path.name}`.", ""]

    def num(text: str) -> str:
        try:
            return fmt(float(text)) if re.search(r"[.eE]", text) else esc(text)
        except ValueError:
            return esc(text)

    return table([esc(c) for c in rows[0]], ([num(c) for c in row] for row in rows[1:]))


def experiment_pages() -> tuple[list[tuple[str, str, str]], list[Path]]:
    """(uri, title, markdown) per protocol prefix, and the figures those pages show."""
    if not EXPERIMENTS.is_dir():
        return [], []
    groups: dict[str, list[Path]] = {}
    for path in sorted(EXPERIMENTS.iterdir()):
        if path.is_file():
            groups.setdefault(path.name.split("_")[0], []).append(path)
    pages, figures = [], []
    for prefix, paths in groups.items():
        title = PROTOCOL_TITLES.get(prefix, prefix)
        lines = [f"# {esc(title)}", "",
                 f"*Generated at build time from `benchmarks/results/experiments/{prefix}_*` "
                 "(written by `topiclink experiment ...`); the commands and the reading of "
                 "these numbers are on the [protocol results](../../results.md) page.*", ""]
        for path in paths:
            body: list[str] = []
            if path.suffix == ".md":
                body = [demote(path.read_text(encoding="utf-8")), ""]
            elif path.suffix == ".txt":
                body = ["```text", path.read_text(encoding="utf-8").rstrip(), "```", ""]
            elif path.suffix == ".csv" and re.search(r"(summary|findings|table|models)", path.stem):
                body = csv_table(path)
            elif path.suffix == ".csv":
                with path.open(encoding="utf-8") as f:
                    n = sum(1 for _ in f) - 1
                body = [f"{n} rows: `benchmarks/results/experiments/{path.name}`.", ""]
            elif path.suffix == ".png":
                figures.append(path)
                body = [f"![{path.stem}]({path.name})", ""]
            else:
                continue
            lines += [f"## {esc(path.name)}", "", *body]
        pages.append((f"{PREFIX}/experiments/{prefix}.md", title, "\n".join(lines)))
    index = ["# Protocol outputs (generated)", "",
             "The files `topiclink experiment ...` wrote to `benchmarks/results/experiments/`, "
             "one page per protocol, rendered at build time (`docs/gen_results.py`); the "
             "commands and the reading of the numbers are on the "
             "[protocol results](../../results.md) page.", ""]
    index += table(["protocol", "files"],
                   ([f"[{esc(title)}]({Path(uri).name})", str(len(groups[Path(uri).stem]))]
                    for uri, title, _ in pages))
    pages.insert(0, (f"{PREFIX}/experiments/index.md", "Overview", "\n".join(index)))
    return pages, figures


# ---------------------------------------------------------------------------- MkDocs hook
def _nav_entries() -> list:
    bench = json_pages()
    experiments, _ = experiment_pages()
    return [{"Benchmarks (generated)": [{title: uri} for uri, title, _ in bench]},
            {"Protocol outputs (generated)": [{title: uri} for uri, title, _ in experiments]}]


def on_config(config):
    nav = config.get("nav") or []
    for entry in nav:
        if isinstance(entry, dict) and NAV_SECTION in entry:
            section = entry[NAV_SECTION]
            have = {next(iter(e)) for e in section if isinstance(e, dict)}
            section += [e for e in _nav_entries() if next(iter(e)) not in have]
            break
    return config


def on_files(files, config):
    from mkdocs.structure.files import File

    experiments, figures = experiment_pages()
    for uri, _, text in json_pages() + experiments:
        files.append(File.generated(config, uri, content=text))
    for figure in figures:
        files.append(File.generated(config, f"{PREFIX}/experiments/{figure.name}",
                                    abs_src_path=str(figure)))
    for figure in sorted(RESULTS.glob("*.png")):
        files.append(File.generated(config, f"{PREFIX}/benchmarks/{figure.name}",
                                    abs_src_path=str(figure)))
    return files


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python docs/gen_results.py OUT_DIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    experiments, _ = experiment_pages()
    for uri, _, text in json_pages() + experiments:
        target = out / uri
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
