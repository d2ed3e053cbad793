"""The page's sections, one per view: static HTML (headings, notes, tables, the
containers the page's JavaScript fills) and the Bokeh figures placed in it.

Every section is ``<section id="view-<name>">``; a figure's place is marked
``{{figure:<name>}}`` and filled by :mod:`topiclink.report.html`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

import numpy as np

from topiclink.report import figures

__all__ = ["Section", "build_sections", "SECTION_TITLES"]

#: the weight share above which a BPBFM factor counts as active (as the model's
#: ``n_active_factors_``)
ACTIVE_FACTOR_WEIGHT = 0.01

SECTION_TITLES = {"summary": "Model", "topics": "Topics", "documents": "Documents",
                  "relational": "Links", "visibility": "Visibility",
                  "supervised": "Labels", "entities": "Entities and relations",
                  "covariate": "Topics over the covariate"}


@dataclass
class Section:
    """One view of the page: its id, title, HTML and figures."""

    name: str
    title: str
    html: str
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def element_id(self) -> str:
        return f"view-{self.name}"


def _note(text: str | None) -> str:
    return f'<p class="note">{escape(text)}</p>' if text else ""


def _doc_names(data: dict[str, Any]) -> list[str]:
    docs = data["views"].get("documents")
    if docs is None:
        return []
    titles = docs["titles"]
    return [f"{t} ({i})" if t else str(i) for t, i in
            zip(titles or [""] * len(docs["ids"]), docs["ids"], strict=True)]


def _summary(data: dict[str, Any]) -> Section:
    model = data["model"]
    params = "".join(f"<tr><td>{escape(str(k))}</td><td>{escape(str(v))}</td></tr>"
                     for k, v in sorted(model["params"].items()))
    notes = "".join(_note(n) for n in model["notes"])
    body = (f'<p><b>{escape(model["name"])}</b> ({escape(model["class"])}, '
            f'{model["n_iter"]} iterations); {escape(model["data"] or "no data attached")}</p>'
            f'{notes}<details><summary>parameters</summary><table class="params">{params}'
            f'</table></details><pre class="summary">{escape(model["summary"])}</pre>')
    return Section("summary", SECTION_TITLES["summary"], body)


def _topics(data: dict[str, Any]) -> Section:
    t = data["views"]["topics"]
    body = (
        '<p class="note">Topics are labelled by their words of highest term-score (a '
        "word's probability in the topic against its geometric mean over the topics). "
        "Relevance of a word w to topic k: &lambda; log p(w|k) + (1 - &lambda;) log "
        "p(w|k)/p(w); &lambda; = 1 ranks by probability, small &lambda; by lift (Sievert "
        f"&amp; Shirley 2014). Map: {escape(t['map']['method'])}.</p>"
        '<div class="row"><div class="col">{{figure:topic-map}}</div>'
        '<div class="col"><label>topic <select id="topic-select"></select></label> '
        '<label class="slider">relevance &lambda; = <span id="lambda-value"></span> '
        '<input type="range" id="lambda-slider" min="0" max="1" step="0.01"></label>'
        '<div id="topic-words"></div></div></div>'
        '<h3>All topics</h3><div id="topic-table"></div>')
    figs = {"topic-map": figures.topic_map(t["map"]["x"], t["map"]["y"], t["prevalence"],
                                           t["labels"])}
    graph = t.get("correlation")
    if graph is not None:
        body += (
            '<h3>Topics that appear together</h3><p class="note">An edge joins two topics '
            "whose proportions are correlated across the training documents above "
            f"{graph['cutoff']:g} (R stm's topicCorr); its width grows with the "
            f"correlation. {len(graph['source'])} edges.</p>{{{{figure:topic-graph}}}}")
        figs["topic-graph"] = figures.topic_graph(
            graph["x"], graph["y"], t["prevalence"], t["labels"], graph["source"],
            graph["target"], graph["correlation"],
            title="topic correlation graph (tap a topic)")
    return Section("topics", SECTION_TITLES["topics"], body, figs)


def _documents(data: dict[str, Any]) -> Section:
    d = data["views"]["documents"]
    body = (f'{_note(d["note"])}<input id="doc-search" type="search" '
            'placeholder="search titles, ids or words" size="50"> '
            '<span id="doc-count"></span><div id="doc-results"></div>'
            '<div id="doc-detail"><p class="note">choose a document (search, or tap one in '
            "a figure)</p></div>")
    return Section("documents", SECTION_TITLES["documents"], body)


def _relational(data: dict[str, Any]) -> Section:
    r = data["views"]["relational"]
    labels = data["views"]["topics"]["labels"]
    figs: dict[str, Any] = {}
    parts = []
    if r["matrix"] is not None:
        M = np.asarray(r["matrix"])
        figs["link-matrix"] = figures.heatmap(
            M, labels, labels, name="link-matrix", title=r["matrix_title"],
            x_title="topic (cited / second document)", y_title="topic (citing / first)",
            diverging=bool((M < 0).any()))
        parts.append("{{figure:link-matrix}}")
    held = r["held_out"]
    if held is not None:
        scores = ", ".join(f"{k} = {v:.3f}" for k, v in held.items() if k != "n_documents")
        scores += f" ({held['n_documents']} documents)"
        parts.append(f'<p id="held-out" class="result">held-out {escape(scores)}</p>')
    parts.append(_note(r["held_out_note"]))
    parts.append('<h3>Suggested links for the chosen document</h3>'
                 f'{_note(r["suggestions"]["note"])}<div id="doc-suggestions">'
                 '<p class="note">choose a document</p></div>')
    parts.append(_note(r["links_note"]))
    net = r["network"]
    if net is not None:
        names = _doc_names(data)
        figs["network"] = figures.network(
            net["x"], net["y"], net["nodes"], net["topic"], [names[i] for i in net["nodes"]],
            net["source"], net["target"], labels,
            title="network, coloured by dominant topic (tap a document)")
        parts.append(f'<h3>Network</h3>{_note(net["note"])}{{{{figure:network}}}}')
    return Section("relational", SECTION_TITLES["relational"], "".join(parts), figs)


def _doc_table(rows: list[list[Any]], header: list[str]) -> str:
    """A table whose rows select a document (first cell: its position)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(f'<tr class="doc-row" data-doc="{int(r[0])}">' + "".join(
        f"<td>{escape(str(c))}</td>" for c in r[1:]) + "</tr>" for r in rows)
    return f'<table class="docs"><tr>{head}</tr>{body}</table>'


def _visibility(data: dict[str, Any]) -> Section:
    v = data["views"]["visibility"]
    names = _doc_names(data)
    tau, cited = v["visibility"], v["cited"]
    header = ["document", "visibility"] + (["cited"] if cited is not None else [])

    def rows(docs: list[int]) -> list[list[Any]]:
        return [[d, names[d], f"{tau[d]:.3f}"] + ([cited[d]] if cited is not None else [])
                for d in docs]

    # the least visible are those not listed as most visible: none when every document is
    least = (_doc_table(rows(v["bottom"]), header) if v["bottom"] else
             _note("every document is listed under the most visible"))
    figs: dict[str, Any] = {}
    parts = [_note(v["note"]), _note(v["cited_note"]),
             '<div class="row"><div class="col"><h3>Most visible</h3>'
             f'{_doc_table(rows(v["top"]), header)}</div><div class="col"><h3>Least '
             f'visible</h3>{least}</div></div>']
    if cited is not None:
        pts = v["points"]
        figs["visibility-scatter"] = figures.scatter(
            [cited[d] for d in pts], [tau[d] for d in pts], pts, [names[d] for d in pts],
            name="visibility-scatter", title="visibility against citations (tap a document)",
            x_title="times cited", y_title="visibility", x_log=True)
        parts.append(_note(v["points_note"]) + "{{figure:visibility-scatter}}")
    if v["citation_topics"] is not None:
        labels = data["views"]["topics"]["labels"]
        figs["citation-topics"] = figures.heatmap(
            v["citation_topics"], labels, labels, name="citation-topics",
            title="who cites whom: training citations by (citing topic, cited topic)",
            x_title="cited topic", y_title="citing topic")
        parts.append("<h3>Who cites whom</h3>{{figure:citation-topics}}")
    return Section("visibility", SECTION_TITLES["visibility"], "".join(parts), figs)


def _supervised(data: dict[str, Any]) -> Section:
    s = data["views"]["supervised"]
    labels = data["views"]["topics"]["labels"]
    fig = figures.heatmap(s["weights"], s["rows"], labels, name="decision-weights",
                          title="decision weight eta of every topic", x_title="topic",
                          y_title="classifier", diverging=True,
                          height=max(200, 40 * len(s["rows"]) + 160))
    parts = ["{{figure:decision-weights}}", _note(s.get("note"))]
    if s["misclassified"] is not None:
        names = _doc_names(data)
        parts.append(f'<p class="result">training accuracy {s["accuracy"]:.3f} '
                     f'({s["n_predicted"]} documents, {s["n_misclassified"]} '
                     "misclassified)</p>")
        rows = [[d, names[d], true, pred] for d, true, pred in s["misclassified"]]
        parts.append("<h3>Misclassified documents</h3>" + _doc_table(
            rows, ["document", "label", "predicted"]))
    return Section("supervised", SECTION_TITLES["supervised"], "".join(parts),
                   {"decision-weights": fig})


def _entities(data: dict[str, Any]) -> Section:
    e = data["views"]["entities"]
    K = e["n_factors"]
    factor_labels = [f"factor {k}" for k in range(K)]
    fig = figures.heatmap(e["matrices"][0], factor_labels, factor_labels,
                          name="relation-matrix",
                          title=f"relation matrix of {e['relations'][0]}",
                          x_title="factor of the tail", y_title="factor of the head")
    # a factor's loadings sum to 1 over the entities: shown as shares of the factor;
    # factors with under 1 % of the weight (the model's inactive ones) are counted only
    active = [f for f in e["factors"] if f["weight"] > ACTIVE_FACTOR_WEIGHT]
    rows = "".join(
        f"<tr><td>{f['factor']}</td><td>{100 * f['weight']:.1f}%</td><td>"
        + escape(", ".join(f"{n} ({100 * w:.2g}%)" for n, w in zip(
            f["entities"], f["loadings"], strict=True)))
        + "</td></tr>" for f in active)
    inactive = len(e["factors"]) - len(active)
    inactive_note = _note(f"{inactive} of the {len(e['factors'])} factors carry under "
                          f"{100 * ACTIVE_FACTOR_WEIGHT:.0f}% of the weight each and are "
                          "not listed" if inactive else None)
    body = ('<label>relation <select id="relation-select"></select></label>'
            "{{figure:relation-matrix}}<h3>Entities of each factor</h3>"
            f'{inactive_note}<table class="docs"><tr><th>factor</th><th>weight</th><th>top '
            f"entities (share of the factor)</th></tr>{rows}</table><h3>Predicted tails</h3>"
            f'{_note(e["queries"]["note"])}{_note(e["interval_note"])}'
            '<label>head <input id="head-input" list="head-list" size="30"></label>'
            '<datalist id="head-list"></datalist> <label>relation <select '
            'id="query-relation"></select></label><div id="tails"></div>')
    return Section("entities", SECTION_TITLES["entities"], body, {"relation-matrix": fig})


def _covariate(data: dict[str, Any]) -> Section:
    c = data["views"]["covariate"]
    labels = data["views"]["topics"]["labels"]
    groups = c.get("groups")
    bands = groups["bands"] if groups is not None else None
    figs: dict[str, Any] = {}
    parts = []
    for key, name in (("empirical", "covariate-empirical"), ("model", "covariate-model")):
        part = c[key]
        if part is None:
            continue
        banded = key == "empirical" and bands is not None
        figs[name] = figures.stacked_prevalence(
            part["x"], part["prevalence"], labels, name=name, title=part["note"],
            x_title=part["name"], bands=bands if banded else None,
            band_name=groups["name"] if banded else "group")
        parts.append(f"{{{{figure:{name}}}}}")
    if groups is not None:
        name = groups["name"]
        figs["group-topics"] = figures.heatmap(
            groups["shares"], groups["groups"], labels, name="group-topics",
            title=f"mean topic share by {name} (tap a cell: its topic)",
            x_title="topic", y_title=name, tap_topic=True)
        parts.append(f'<h3 id="group-heading">Topics by {escape(name)}</h3>'
                     f'{_note(groups["note"])}<div class="row"><div class="col">'
                     '{{figure:group-topics}}</div><div class="col" id="group-topic">'
                     '<p class="note">choose a topic</p></div></div>')
    return Section("covariate", SECTION_TITLES["covariate"], "".join(parts), figs)


_BUILDERS: dict[str, Callable[[dict[str, Any]], Section]] = {
    "topics": _topics, "documents": _documents, "relational": _relational,
    "visibility": _visibility, "supervised": _supervised, "entities": _entities,
    "covariate": _covariate}


def build_sections(data: dict[str, Any]) -> list[Section]:
    """The summary, then one section per view of ``data`` (in the page's order)."""
    out = [_summary(data)]
    out += [build(data) for name, build in _BUILDERS.items() if name in data["views"]]
    return out
