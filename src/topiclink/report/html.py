"""One self-contained HTML page from the report data: opens offline.

Everything the page needs is inlined: the BokehJS library (``bokeh.min.js``, about
1.3 MB), the figures (Bokeh's JSON, arrays compressed), the view data as JSON in
``<script type="application/json" id="topiclink-data">``, and the page's own script and
style sheet (``static/report.js``, ``static/report.css``); nothing is fetched.

The page's script exposes ``window.topiclinkReport`` (``selectTopic(k)``,
``selectDocument(d)``, ``setLambda(x)``, ``search(text)``, ``nearest(d)``,
``selectRelation(r)``, ``selectQuery(head, relation)``, ``data``, ``state``, ``ready``)
for a browser test or the reader's console.
"""

from __future__ import annotations

import json
from html import escape
from importlib import resources
from typing import Any

from topiclink.report.figures import require_bokeh
from topiclink.report.sections import build_sections

__all__ = ["render_html", "embed_json", "DATA_ELEMENT_ID"]

DATA_ELEMENT_ID = "topiclink-data"


def embed_json(value: Any) -> str:
    """JSON that is safe inside a ``<script>`` element (``<``, ``>``, ``&`` escaped)."""
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _static(name: str) -> str:
    return resources.files("topiclink.report").joinpath("static", name).read_text("utf-8")


def _bokeh_parts(sections: list[Any]) -> tuple[str, str, dict[str, str]]:
    """(library script, figures script, figure name -> div)."""
    require_bokeh()
    from bokeh.embed import components
    from bokeh.resources import Resources

    figs = {name: fig for s in sections for name, fig in s.figures.items()}
    library = Resources(mode="inline", components=["bokeh"]).render_js()
    if not figs:
        return library, "", {}
    script, divs = components(figs)
    return library, script, divs


def render_html(data: dict[str, Any], title: str | None = None) -> str:
    """The page (a complete HTML document) of :func:`~topiclink.report.data.report_data`'s
    output."""
    sections = build_sections(data)
    library, figure_script, divs = _bokeh_parts(sections)
    model = data["model"]
    title = title or f"topiclink report: {model['name']}"
    nav = " ".join(f'<a href="#{s.element_id}">{escape(s.title)}</a>' for s in sections)
    body = []
    for s in sections:
        html = s.html
        for name, div in divs.items():
            html = html.replace(f"{{{{figure:{name}}}}}", f'<div class="figure">{div}</div>')
        body.append(f'<section id="{s.element_id}" class="view"><h2>{escape(s.title)}</h2>'
                    f"{html}</section>")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>", f"<style>{_static('report.css')}</style>",
        library, "</head>", "<body>",
        f'<header id="report-header"><h1>{escape(title)}</h1><nav>{nav}</nav>'
        '<div id="chosen"></div></header>',
        "<main>", *body, "</main>",
        f'<script type="application/json" id="{DATA_ELEMENT_ID}">{embed_json(data)}</script>',
        f"<script>{_static('report.js')}</script>",
        figure_script, "</body>", "</html>", ""])
