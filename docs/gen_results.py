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
site, ``on_pre_build`` warns (an error under ``mkdocs build --strict``) when a rendered
page (below) is not current, and ``on_page_markdown`` expands any placeholder left in a
page.  ``python docs/gen_results.py OUT_DIR`` writes the generated pages to a folder.

Rendered pages: the written pages that quote numbers (``docs/index.md``,
``docs/results.md``, ...) copy no figure by hand.  Each is written as a template,
``docs/templates/<page>.md.tmpl``, in which every number is a placeholder (below), and
``python docs/gen_results.py --render`` expands the placeholders from
``benchmarks/results`` into the committed page ``docs/<page>.md`` (first line: an HTML
comment naming its template), so the Markdown reads the same on a code host as on the
site.  ``python docs/gen_results.py --check`` lists the pages that are not current
(exit 1); ``tests/test_docs_rendered.py`` runs the same check.  Edit the template, then
render; a rerun benchmark needs a render too.

A placeholder of a template::

    {{ value("lda_throughput.json", "results[n_topics=10,threads=1].ratio", ".2f") }}
    {{ value("experiments/sotu_ktm_summary.csv", "[model=KTM].heldout_perplexity", ".1f") }}
    {{ pct(1 - value("ktm_sotu.json", "ratios.KTM/DMR.train_perplexity"), ".1f") }}
    {{ table("grtm_scale.json", "results", ["n_docs", "{seconds_per_iteration:.3f}"],
             ["documents", "s / iteration"]) }}
    {{ pivot("experiments/grtm_cora-linqs_alpha0.5_summary.csv", "", row=["model", "c"],
             col="K", cell="{auc_mean:.3f} / {link_rank_mean:.0f}",
             row_label="{model} c = {c:g}", col_label="K = {K}") }}

A placeholder is ``{{ EXPR }}`` where EXPR is a Python expression (numbers, strings,
lists, dicts, + - * /, calls) over these functions only (nothing else is evaluated):

- ``value(file, key, spec=None)``: the value at ``key`` in ``benchmarks/results/<file>``
  (a JSON, or a CSV read as a list of rows), formatted with the format ``spec`` when one
  is given (else the number itself, for arithmetic).  A key is a path of parts joined by
  dots: a dict's key, a list's index, or ``[field=value,...]``: the one record of a list
  with those fields (``[model=KTM]``; values compared as numbers where both are);
- ``fmt(x, spec)``, ``pct(x, spec)`` (100 x), ``abs``, ``min``, ``max``, ``round``;
- ``table(file, key, columns, header=None, where=None, group=None)``: a markdown table of
  the records at ``key`` (a list of dicts, or a dict of dicts: its keys become the field
  ``name``), one row each (``where``: a dict of field values they must have; ``group``:
  fields whose records share one row, aggregated as in ``pivot``); a column is a field
  (a dotted path in the record) or a template such as ``"{auc:.3f}"``;
- ``pivot(file, key, row, col, cell, row_label=None, col_label=None, rows=None,
  cols=None, corner="", where=None, row_labels=None)``: one row per value of the
  field(s) ``row``, one column per value of ``col``, the cell template over the records
  that fall in it (a numeric field is their mean, ``<field>_sd`` their standard
  deviation, ``n`` their count); ``rows`` / ``cols`` choose and order them (default: all,
  in the order of the file); ``row_labels``: the rows' labels as text.

A file, key or function that does not exist, or a key that matches no record or several,
stops the render with an error that names the template and the placeholder.
"""

from __future__ import annotations

import ast
import csv
import json
import logging
import math
import operator
import os
import re
import statistics
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
TEMPLATES = DOCS / "templates"  # <page>.md.tmpl -> docs/<page>.md (--render)
TEMPLATE_SUFFIX = ".tmpl"
RENDER_COMMAND = "python docs/gen_results.py --render"
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


# ---------------------------------------------------------------------------- placeholders
#: ``{{ name(...) ... }}`` where name is one of the functions below: other ``{{`` text
#: (a template shown in a code block) is left alone
PLACEHOLDER = re.compile(r"\{\{\s*((?:value|fmt|pct|table|pivot|abs|min|max|round)\s*\(.*?)"
                         r"\s*\}\}", re.S)
_KEY_PART = re.compile(r"\[[^\]]*\]|[^.\[\]]+")


class PlaceholderError(ValueError):
    """A placeholder that cannot be expanded (its page and text in the message)."""


def _number(text: str) -> Any:
    """A CSV cell: an int, a float, None (empty) or the text."""
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


_FILES: dict[Path, Any] = {}


def load_result(name: str) -> Any:
    """``benchmarks/results/<name>``: a JSON's data, a CSV's rows (dicts of numbers)."""
    path = (RESULTS / name).resolve()
    if RESULTS.resolve() not in path.parents or not path.is_file():
        raise PlaceholderError(f"no results file {name!r} in benchmarks/results")
    if path not in _FILES:
        if path.suffix == ".json":
            _FILES[path] = json.loads(path.read_text(encoding="utf-8"))
        elif path.suffix == ".csv":
            with path.open(newline="", encoding="utf-8") as f:
                _FILES[path] = [{k: _number(v) for k, v in row.items()}
                                for row in csv.DictReader(f)]
        else:
            raise PlaceholderError(f"{name}: only .json and .csv files hold values")
    return _FILES[path]


def _same(cell: Any, wanted: str) -> bool:
    if str(cell) == wanted:
        return True
    try:
        return float(cell) == float(wanted)
    except (TypeError, ValueError):
        return False


def _select(records: Any, part: str, where: str) -> Any:
    if not isinstance(records, list):
        raise PlaceholderError(f"{where}: {part} selects from a list, found "
                               f"{type(records).__name__}")
    conditions = []
    for term in part[1:-1].split(","):
        field, sep, wanted = term.partition("=")
        if not sep:
            raise PlaceholderError(f"{where}: {part}: write [field=value,...]")
        conditions.append((field.strip(), wanted.strip()))
    found = [r for r in records if isinstance(r, dict) and all(
        f in r and _same(r[f], w) for f, w in conditions)]
    if len(found) != 1:
        raise PlaceholderError(f"{where}: {part} matches {len(found)} records, not one")
    return found[0]


def lookup(data: Any, key: str, where: str = "") -> Any:
    """The value at ``key`` (see the module docstring) in ``data``."""
    value = data
    for part in _KEY_PART.findall(key):
        if part.startswith("["):
            value = _select(value, part, where or key)
        elif isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and re.fullmatch(r"-?\d+", part) and (
                -len(value) <= int(part) < len(value)):
            value = value[int(part)]
        else:
            raise PlaceholderError(f"{where or key}: no {part!r} (in {key!r})")
    return value


def show(value: Any, spec: str | None = None) -> str:
    """A value as text: formatted with ``spec``; lists joined with commas."""
    if isinstance(value, list):
        return ", ".join(show(v, spec) for v in value)
    if value is None:
        return "–"
    if spec is not None:
        return format(value, spec)
    if isinstance(value, float):
        return fmt(value)
    return str(value) if not isinstance(value, str) else value


class _Missing:
    """A missing value (None, an empty CSV cell) in a template: a dash, whatever the
    format."""

    def __format__(self, spec: str) -> str:
        return "–"

    def __str__(self) -> str:
        return "–"


class _Record(dict):
    """A record whose nested dicts are attributes too (``"{full.seconds:.1f}"``) and
    whose missing values show as a dash."""

    def __getitem__(self, name: str) -> Any:
        value = dict.__getitem__(self, name)
        if value is None:
            return _Missing()
        return _Record(value) if isinstance(value, dict) else value

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _fill(template: str, record: dict, where: str) -> str:
    try:
        return template.format_map(_Record(record))
    except (KeyError, AttributeError, IndexError) as exc:
        raise PlaceholderError(f"{where}: {template!r}: no field {exc}") from None
    except (TypeError, ValueError) as exc:
        raise PlaceholderError(f"{where}: {template!r}: {exc}") from None


def _records(file: str, key: str, where: dict | None, what: str) -> list[dict]:
    records = lookup(load_result(file), key, what) if key else load_result(file)
    if isinstance(records, dict) and records and all(isinstance(v, dict)
                                                     for v in records.values()):
        records = [{"name": k, **v} for k, v in records.items()]   # name -> record
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise PlaceholderError(f"{what}: {key or file!r} is not a list of records")
    for field, wanted in (where or {}).items():
        records = [r for r in records if field in r and _same(r[field], str(wanted))]
    if not records:
        raise PlaceholderError(f"{what}: no record matches {where}")
    return records


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def make_table(file: str, key: str, columns: list[str], header: list[str] | None = None,
               where: dict | None = None, group: list[str] | None = None) -> str:
    what = f"table({file!r}, {key!r})"
    records = _records(file, key, where, what)
    if group:
        groups: dict[tuple, list[dict]] = {}
        for r in records:
            groups.setdefault(tuple(str(r.get(f)) for f in group), []).append(r)
        records = [_aggregate(rs) for rs in groups.values()]
    header = header or columns
    if len(header) != len(columns):
        raise PlaceholderError(f"{what}: {len(header)} headers for {len(columns)} columns")
    rows = [[_fill(c, r, what) if "{" in c else show(lookup(r, c, what)) for c in columns]
            for r in records]
    return "\n".join(table([_md_cell(h) for h in header],
                           ([_md_cell(c) for c in row] for row in rows))).rstrip("\n")


def _aggregate(records: list[dict]) -> dict:
    out: dict[str, Any] = {"n": len(records)}
    for field in records[0]:
        values = [r.get(field) for r in records]
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        if len(numbers) == len(values):
            out[field] = statistics.fmean(numbers) if len(numbers) > 1 else numbers[0]
            out[f"{field}_sd"] = statistics.stdev(numbers) if len(numbers) > 1 else 0.0
        else:
            out[field] = values[0] if len(set(map(str, values))) == 1 else None
    return out


def make_pivot(file: str, key: str, row: str | list[str], col: str, cell: str,
               row_label: str | None = None, col_label: str | None = None,
               rows: list | None = None, cols: list | None = None, corner: str = "",
               where: dict | None = None, row_labels: list[str] | None = None) -> str:
    what = f"pivot({file!r}, {key!r})"
    records = _records(file, key, where, what)
    row_fields = [row] if isinstance(row, str) else list(row)
    for r in records:
        for f in [*row_fields, col]:
            if f not in r:
                raise PlaceholderError(f"{what}: no field {f!r}")
    row_keys: list[tuple] = []
    col_keys: list[str] = []
    cells: dict[tuple, list[dict]] = {}
    for r in records:
        rk = tuple(str(r[f]) for f in row_fields)
        ck = str(r[col])
        row_keys += [rk] if rk not in row_keys else []
        col_keys += [ck] if ck not in col_keys else []
        cells.setdefault((rk, ck), []).append(r)
    if rows is not None:
        wanted = [tuple(str(v) for v in ([k] if isinstance(k, str | int | float) else k))
                  for k in rows]
        chosen = []
        for w in wanted:
            match = [rk for rk in row_keys if all(_same(a, b) for a, b in zip(rk, w,
                                                                             strict=True))]
            if not match:
                raise PlaceholderError(f"{what}: no row {w}")
            chosen.append(match[0])
        row_keys = chosen
    if cols is not None:
        chosen_cols = []
        for c in cols:
            match = [ck for ck in col_keys if _same(ck, str(c))]
            if not match:
                raise PlaceholderError(f"{what}: no column {c!r}")
            chosen_cols.append(match[0])
        col_keys = chosen_cols
    first_of_col = {ck: next(r for (rk, c), rs in cells.items() if c == ck for r in rs)
                    for ck in col_keys}
    header = [corner] + [_fill(col_label, first_of_col[ck], what) if col_label else ck
                         for ck in col_keys]
    if row_labels is not None and len(row_labels) != len(row_keys):
        raise PlaceholderError(f"{what}: {len(row_labels)} row labels for {len(row_keys)} rows")
    lines = []
    for i, rk in enumerate(row_keys):
        first = next(rs[0] for (k, _), rs in cells.items() if k == rk)
        label = (row_labels[i] if row_labels is not None else
                 _fill(row_label, first, what) if row_label else " ".join(rk))
        line = [label]
        for ck in col_keys:
            group = cells.get((rk, ck))
            line.append(_fill(cell, _aggregate(group), what) if group else "–")
        lines.append(line)
    return "\n".join(table([_md_cell(h) for h in header],
                           ([_md_cell(c) for c in row] for row in lines))).rstrip("\n")


def _value(file: str, key: str, spec: str | None = None) -> Any:
    found = lookup(load_result(file), key, f"{file}: {key}")
    return show(found, spec) if spec is not None else found


def _format(value: Any, spec: str) -> str:
    return show(value, spec)


def _pct(value: Any, spec: str = ".1f") -> str:
    return show(100 * value, spec)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "value": _value, "fmt": _format, "pct": _pct, "table": make_table, "pivot": make_pivot,
    "abs": abs, "min": min, "max": max, "round": round}
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
              ast.Div: operator.truediv}


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        return [_evaluate(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_evaluate(k): _evaluate(v) for k, v in zip(node.keys, node.values,
                                                            strict=True)}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id not in FUNCTIONS:
            raise PlaceholderError(f"unknown function {node.func.id!r}; known: "
                                   f"{', '.join(FUNCTIONS)}")
        args = [_evaluate(a) for a in node.args]
        kwargs = {k.arg: _evaluate(k.value) for k in node.keywords}
        try:
            return FUNCTIONS[node.func.id](*args, **kwargs)
        except TypeError as exc:
            raise PlaceholderError(f"{node.func.id}: {exc}") from None
    raise PlaceholderError(f"not allowed in a placeholder: {ast.dump(node)[:80]}")


def expand(markdown: str, page: str = "") -> str:
    """Every placeholder of ``markdown`` replaced by what it reads (PlaceholderError,
    naming ``page`` and the placeholder, when one cannot be)."""

    def one(match: re.Match) -> str:
        expr = " ".join(match.group(1).split())
        try:
            result = _evaluate(ast.parse(match.group(1).strip(), mode="eval"))
        except PlaceholderError as exc:
            raise PlaceholderError(f"{page}: {{{{ {expr} }}}}: {exc}") from None
        except (SyntaxError, ArithmeticError, TypeError, ValueError) as exc:
            raise PlaceholderError(f"{page}: {{{{ {expr} }}}}: {type(exc).__name__}: "
                                   f"{exc}") from None
        return show(result)

    return PLACEHOLDER.sub(one, markdown)


def on_page_markdown(markdown, page, config, files):
    return expand(markdown, page.file.src_uri)


# ---------------------------------------------------------------------------- rendered pages
def templates() -> list[Path]:
    """Every ``docs/templates/**/*.md.tmpl``, sorted."""
    return sorted(TEMPLATES.rglob(f"*.md{TEMPLATE_SUFFIX}"))


def rendered_path(template: Path) -> Path:
    """Where a template's page is committed: ``docs/templates/a/b.md.tmpl`` ->
    ``docs/a/b.md``."""
    relative = template.relative_to(TEMPLATES)
    return DOCS / relative.with_name(relative.name[: -len(TEMPLATE_SUFFIX)])


def header(template: Path) -> str:
    """The first line of a rendered page."""
    return (f"<!-- generated from {template.relative_to(ROOT).as_posix()} by "
            f"{RENDER_COMMAND}; edit the template -->")


def render(template: Path) -> str:
    """The page a template renders to today (PlaceholderError naming the template and
    the placeholder when one cannot be expanded)."""
    text = template.read_text(encoding="utf-8")
    body = expand(text, template.relative_to(ROOT).as_posix())
    return header(template) + "\n" + body.rstrip("\n") + "\n"


def stale_pages() -> list[Path]:
    """The rendered pages that differ from what their templates render today (or are
    missing)."""
    _FILES.clear()  # read the results files as they are now
    stale = []
    for template in templates():
        target = rendered_path(template)
        if not target.is_file() or target.read_text(encoding="utf-8") != render(template):
            stale.append(target)
    return stale


def write_atomic(path: Path, text: str) -> None:
    """``text`` into ``path`` through a temporary file in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def render_all() -> list[Path]:
    """Write every template's page; the pages that changed."""
    _FILES.clear()
    changed = []
    for template in templates():
        target, text = rendered_path(template), render(template)
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            write_atomic(target, text)
            changed.append(target)
    return changed


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


def on_pre_build(config):
    stale = stale_pages()
    if stale:
        names = ", ".join(p.relative_to(ROOT).as_posix() for p in stale)
        logging.getLogger("mkdocs.hooks.gen_results").warning(
            "%s not current with its template and benchmarks/results: run %s",
            names, RENDER_COMMAND)


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


USAGE = ("usage: python docs/gen_results.py --render | --check | OUT_DIR\n"
         "  --render  write docs/<page>.md from every docs/templates/<page>.md.tmpl\n"
         "  --check   list the rendered pages that are not current (exit 1 if any)\n"
         "  OUT_DIR   write the generated benchmark and protocol pages to a folder")


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if len(argv) != 1 else sys.stdout)
        return 2 if len(argv) != 1 else 0
    try:
        if argv[0] == "--render":
            for path in render_all():
                print(f"wrote {path.relative_to(ROOT).as_posix()}")
            return 0
        if argv[0] == "--check":
            stale = stale_pages()
            for path in stale:
                print(f"{path.relative_to(ROOT).as_posix()}: not current; run "
                      f"{RENDER_COMMAND}", file=sys.stderr)
            return 1 if stale else 0
    except PlaceholderError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if argv[0].startswith("-"):
        print(f"error: unknown option {argv[0]}\n{USAGE}", file=sys.stderr)
        return 2
    out = Path(argv[0])
    experiments, _ = experiment_pages()
    for uri, _, text in json_pages() + experiments:
        write_atomic(out / uri, text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
