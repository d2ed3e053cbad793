"""Bokeh figures of the report (heat maps, the topic map, the network, stacked
prevalence, a scatter), each from plain arrays.

Bokeh (a dependency of topiclink) is imported here only.  A figure that lets
the reader pick a topic or a document calls the page's JavaScript API
(``window.topiclinkReport.selectTopic(k)`` / ``.selectDocument(d)``) when a glyph is
tapped; data sources the page updates are named (``"<figure>-source"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["require_bokeh", "topic_colors", "heatmap", "topic_map", "network",
           "stacked_prevalence", "scatter", "BOKEH_HINT"]

BOKEH_HINT = "the HTML report needs bokeh (a dependency of topiclink): pip install bokeh"


def require_bokeh() -> Any:
    """The bokeh module, or an ImportError naming the extra to install."""
    try:
        import bokeh
    except ImportError:
        raise ImportError(BOKEH_HINT) from None
    return bokeh


def topic_colors(n: int) -> list[str]:
    """``n`` distinct colours (Category10 / Category20, else spread over Turbo)."""
    from bokeh.palettes import Category10_10, Category20_20, Turbo256

    if n <= 10:
        return list(Category10_10[:n])
    if n <= 20:
        return list(Category20_20[:n])
    return [Turbo256[int(i)] for i in np.linspace(10, 245, n)]


def _tap_callback(source: Any, call: str, column: str) -> Any:
    from bokeh.models import CustomJS

    return CustomJS(args={"source": source}, code=(
        "const i = cb_obj.indices[0];"
        "if (i !== undefined && window.topiclinkReport) "
        f"window.topiclinkReport.{call}(source.data['{column}'][i]);"))


def heatmap(matrix: Any, row_labels: Sequence[str], col_labels: Sequence[str], *,
            name: str, title: str, x_title: str = "", y_title: str = "",
            diverging: bool = False, height: int | None = None,
            tap_topic: bool = False) -> Any:
    """A labelled heat map of ``matrix`` (rows top to bottom) with the value on hover.

    ``tap_topic``: the columns are the topics; a tap on a cell selects its topic (the
    page then selects the topic's whole column, the other cells dimmed)."""
    from bokeh.models import ColorBar, ColumnDataSource, HoverTool, LinearColorMapper
    from bokeh.palettes import RdBu11, Viridis256
    from bokeh.plotting import figure

    M = np.asarray(matrix, dtype=np.float64)
    rows, cols = [str(r) for r in row_labels], [str(c) for c in col_labels]
    r_idx, c_idx = np.meshgrid(np.arange(M.shape[0]), np.arange(M.shape[1]), indexing="ij")
    source = ColumnDataSource({"row": [rows[i] for i in r_idx.ravel()],
                               "col": [cols[j] for j in c_idx.ravel()],
                               "value": M.ravel()}, name=f"{name}-source")
    if tap_topic:
        source.data["topic"] = c_idx.ravel()
    finite = M[np.isfinite(M)]
    if diverging:
        bound = float(np.abs(finite).max()) if finite.size else 1.0
        low, high, palette = -bound or -1.0, bound or 1.0, list(RdBu11[::-1])
    else:
        low = float(finite.min()) if finite.size else 0.0
        high = float(finite.max()) if finite.size else 1.0
        palette = list(Viridis256)
    mapper = LinearColorMapper(palette=palette, low=low, high=max(high, low + 1e-12),
                               name=f"{name}-mapper")
    size = height or int(min(900, max(260, 18 * len(rows) + 120)))
    fig = figure(x_range=cols, y_range=list(reversed(rows)), height=size,
                 sizing_mode="stretch_width", title=title,
                 tools="tap,hover,save,reset" if tap_topic else "hover,save,reset",
                 toolbar_location="right", name=name)
    selection = ({"nonselection_fill_alpha": 0.55, "selection_line_color": "#000000",
                  "selection_line_width": 1.5} if tap_topic else {})
    fig.rect("col", "row", 1, 1, source=source, line_color=None,
             fill_color={"field": "value", "transform": mapper}, **selection)
    fig.select_one(HoverTool).tooltips = [(y_title or "row", "@row"),
                                          (x_title or "column", "@col"), ("value", "@value")]
    fig.add_layout(ColorBar(color_mapper=mapper, width=10), "right")
    fig.xaxis.major_label_orientation = 0.9
    fig.xaxis.axis_label, fig.yaxis.axis_label = x_title, y_title
    fig.grid.visible = False
    if tap_topic:
        source.selected.js_on_change("indices", _tap_callback(source, "selectTopic", "topic"))
    return fig


def topic_map(x: Sequence[float], y: Sequence[float], prevalence: Sequence[float],
              labels: Sequence[str], *, name: str = "topic-map") -> Any:
    """Topics as circles (area ~ prevalence) at their map positions; a tap selects.

    The circles are sized in screen pixels (up to 62 across), which Bokeh's automatic
    ranges do not allow for: the ranges are padded by 30% so that the outermost topics
    are drawn whole."""
    from bokeh.models import ColumnDataSource, DataRange1d, HoverTool, LabelSet
    from bokeh.plotting import figure

    prev = np.asarray(prevalence, dtype=np.float64)
    K = prev.size
    radius = 12 + 50 * np.sqrt(prev / max(float(prev.max()), 1e-12))
    source = ColumnDataSource({"x": np.asarray(x, float), "y": np.asarray(y, float),
                               "size": radius, "topic": np.arange(K),
                               "number": [str(k) for k in range(K)], "label": list(labels),
                               "share": [f"{100 * p:.1f}%" for p in prev],
                               "color": topic_colors(K)}, name=f"{name}-source")
    fig = figure(height=420, sizing_mode="stretch_width", tools="tap,hover,pan,wheel_zoom,reset",
                 title="topic map (tap a topic)", name=name, match_aspect=True,
                 x_range=DataRange1d(range_padding=0.3),
                 y_range=DataRange1d(range_padding=0.3))
    fig.scatter("x", "y", size="size", source=source, fill_color="color", fill_alpha=0.55,
                line_color="#333333", nonselection_fill_alpha=0.25,
                selection_fill_alpha=0.9, selection_line_width=3)
    fig.add_layout(LabelSet(x="x", y="y", text="number", source=source, text_align="center",
                            text_baseline="middle", text_font_size="10pt"))
    fig.select_one(HoverTool).tooltips = [("topic", "@label"), ("share", "@share")]
    fig.axis.visible = False
    fig.grid.visible = False
    source.selected.js_on_change("indices", _tap_callback(source, "selectTopic", "topic"))
    return fig


def topic_graph(x: Sequence[float], y: Sequence[float], prevalence: Sequence[float],
                labels: Sequence[str], source_idx: Sequence[int], target_idx: Sequence[int],
                correlation: Sequence[float], *, name: str = "topic-graph",
                title: str = "") -> Any:
    """Topics as circles (area ~ prevalence), an edge per correlated pair (width ~ the
    correlation); a tap selects the topic, as on the topic map."""
    from bokeh.models import ColumnDataSource, DataRange1d, HoverTool, LabelSet
    from bokeh.plotting import figure

    xa, ya = np.asarray(x, float), np.asarray(y, float)
    prev = np.asarray(prevalence, dtype=np.float64)
    K = prev.size
    s, t = np.asarray(source_idx, np.int64), np.asarray(target_idx, np.int64)
    corr = np.asarray(correlation, np.float64)
    edges = ColumnDataSource({"x0": xa[s], "y0": ya[s], "x1": xa[t], "y1": ya[t],
                              "width": 1.0 + 6.0 * corr / max(float(corr.max(initial=0)), 1e-12),
                              "pair": [f"{a} - {b}" for a, b in zip(s, t, strict=True)],
                              "correlation": [f"{c:.3f}" for c in corr]},
                             name=f"{name}-edges")
    nodes = ColumnDataSource({"x": xa, "y": ya, "topic": np.arange(K),
                              "size": 10 + 30 * np.sqrt(prev / max(float(prev.max()), 1e-12)),
                              "number": [str(k) for k in range(K)], "label": list(labels),
                              "share": [f"{100 * p:.1f}%" for p in prev],
                              "color": topic_colors(K)}, name=f"{name}-source")
    fig = figure(height=420, sizing_mode="stretch_width", title=title, name=name,
                 tools="tap,pan,wheel_zoom,reset,save", match_aspect=True,
                 x_range=DataRange1d(range_padding=0.2), y_range=DataRange1d(range_padding=0.2))
    lines = fig.segment("x0", "y0", "x1", "y1", source=edges, line_color="#777777",
                        line_alpha=0.5, line_width="width")
    glyph = fig.scatter("x", "y", size="size", source=nodes, fill_color="color",
                        fill_alpha=0.7, line_color="#333333", nonselection_fill_alpha=0.3,
                        selection_line_width=3)
    fig.add_layout(LabelSet(x="x", y="y", text="number", source=nodes, text_align="center",
                            text_baseline="middle", text_font_size="9pt"))
    fig.add_tools(HoverTool(renderers=[glyph], tooltips=[("topic", "@label"),
                                                         ("share", "@share")]),
                  HoverTool(renderers=[lines], tooltips=[("topics", "@pair"),
                                                         ("correlation", "@correlation")]))
    fig.axis.visible = False
    fig.grid.visible = False
    nodes.selected.js_on_change("indices", _tap_callback(nodes, "selectTopic", "topic"))
    return fig


def network(x: Sequence[float], y: Sequence[float], docs: Sequence[int],
            topics: Sequence[int], titles: Sequence[str], source_idx: Sequence[int],
            target_idx: Sequence[int], topic_labels: Sequence[str], *,
            name: str = "network", title: str = "") -> Any:
    """Nodes coloured by dominant topic, links as segments; a tap selects the document."""
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.plotting import figure

    xa, ya = np.asarray(x, float), np.asarray(y, float)
    s, t = np.asarray(source_idx, np.int64), np.asarray(target_idx, np.int64)
    colors = topic_colors(len(topic_labels))
    topics = np.asarray(topics, np.int64)
    nodes = ColumnDataSource({"x": xa, "y": ya, "doc": np.asarray(docs, np.int64),
                              "title": list(titles),
                              "topic": [topic_labels[k] for k in topics],
                              "color": [colors[k] for k in topics]}, name=f"{name}-source")
    edges = ColumnDataSource({"x0": xa[s], "y0": ya[s], "x1": xa[t], "y1": ya[t]})
    fig = figure(height=560, sizing_mode="stretch_width", title=title, name=name,
                 tools="tap,pan,wheel_zoom,box_zoom,reset,save", match_aspect=True)
    fig.segment("x0", "y0", "x1", "y1", source=edges, line_color="#999999", line_alpha=0.35,
                line_width=0.7)
    glyph = fig.scatter("x", "y", source=nodes, size=7, fill_color="color",
                        line_color="#222222", line_width=0.4, nonselection_fill_alpha=0.5,
                        selection_line_width=2.5, selection_line_color="black")
    fig.add_tools(HoverTool(renderers=[glyph], tooltips=[("document", "@title"),
                                                         ("dominant topic", "@topic")]))
    fig.axis.visible = False
    fig.grid.visible = False
    nodes.selected.js_on_change("indices", _tap_callback(nodes, "selectDocument", "doc"))
    return fig


def stacked_prevalence(x: Sequence[float], prevalence: Any, labels: Sequence[str], *,
                       name: str, title: str, x_title: str,
                       bands: dict[str, Any] | None = None, band_name: str = "group"
                       ) -> Any:
    """Topic prevalence stacked over ``x`` (rows of ``prevalence`` renormalised).

    ``bands`` (``start``, ``end``, ``label``, ``first``, ``last``, ``documents`` per band:
    :func:`~topiclink.report.views.covariate.group_bands`): the axis banded by group (e.g.
    the sitting president) in a strip under the stacked areas, in the same frame: each
    band shaded in turn and labelled with its group's name (vertical); a white line over
    the areas at each band's edge; hovering over the areas or the strip names the band's
    group (``band_name``), its span and documents (a band too narrow for its label is
    named on hover only).  The band source is named
    ``"<name>-bands-source"``."""
    from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, LabelSet, Legend
    from bokeh.plotting import figure

    P = np.asarray(prevalence, dtype=np.float64)
    total = P.sum(axis=1, keepdims=True)
    P = np.divide(P, total, out=np.full_like(P, 1.0 / P.shape[1]), where=total > 0)
    keys = [f"t{k}" for k in range(P.shape[1])]
    data: dict[str, Any] = {"x": np.asarray(x, float)}
    data.update({key: P[:, k] for k, key in enumerate(keys)})
    source = ColumnDataSource(data, name=f"{name}-source")
    banded = bands is not None and bool(bands["start"])
    strip = (-0.42, -0.02)                  # the band strip, under the areas (0 to 1)
    fig = figure(height=560 if banded else 420, sizing_mode="stretch_width", title=title,
                 name=name, tools="pan,wheel_zoom,box_zoom,reset,save",
                 y_range=(strip[0] - 0.01, 1) if banded else (0, 1))
    renderers = fig.varea_stack(keys, x="x", source=source, color=topic_colors(len(keys)),
                                fill_alpha=0.85)
    if len(keys) <= 20:
        legend = Legend(items=[(str(labels[k]), [r]) for k, r in enumerate(renderers)][::-1],
                        label_text_font_size="8pt", click_policy="hide")
        fig.add_layout(legend, "right")
    fig.xaxis.axis_label, fig.yaxis.axis_label = x_title, "topic share"
    if banded:
        assert bands is not None
        fig.yaxis.ticker = FixedTicker(ticks=[0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
        edges = np.asarray(bands["start"][1:], dtype=np.float64)
        fig.segment(edges, np.zeros(edges.size), edges, np.ones(edges.size),
                    line_color="#ffffff", line_alpha=0.9, line_width=1.2)
        bsource = _band_source(bands, f"{name}-bands-source")
        shaded = fig.quad(left="start", right="end", bottom=strip[0], top=strip[1],
                          source=bsource, fill_color="shade", line_color="#ffffff",
                          line_width=1)
        fig.add_layout(LabelSet(x="middle", y=strip[0] + 0.01, text="text", source=bsource,
                                angle=np.pi / 2, text_font_size="7.5pt",
                                text_baseline="middle", text_align="left",
                                text_color="#333333"))
        over = fig.quad(left="start", right="end", bottom=0, top=1, source=bsource,
                        fill_alpha=0.0, line_alpha=0.0)
        fig.add_tools(HoverTool(renderers=[shaded, over], tooltips=[
            (band_name, "@label"), (x_title, "@years"), ("documents", "@documents")]))
    return fig


def _band_source(bands: dict[str, Any], name: str) -> Any:
    from bokeh.models import ColumnDataSource

    def span(a: float, b: float) -> str:
        a_s, b_s = f"{a:g}", f"{b:g}"
        return a_s if a_s == b_s else f"{a_s}\u2013{b_s}"

    start, end = np.asarray(bands["start"], float), np.asarray(bands["end"], float)
    span_all = max(float(end.max() - start.min()), 1e-12) if start.size else 1.0
    # a band narrower than 0.8% of the axis is not labelled (its neighbours' labels
    # would overlap it); hovering still names it
    shown = [label if (b - a) >= 0.008 * span_all else ""
             for a, b, label in zip(start, end, bands["label"], strict=True)]
    return ColumnDataSource({
        "start": start, "end": end, "middle": 0.5 * (start + end),
        "label": list(bands["label"]), "text": shown, "documents": list(bands["documents"]),
        "years": [span(a, b) for a, b in zip(bands["first"], bands["last"], strict=True)],
        "shade": ["#d7dee8" if i % 2 else "#eef1f5" for i in range(start.size)]}, name=name)


def scatter(x: Sequence[float], y: Sequence[float], docs: Sequence[int],
            titles: Sequence[str], *, name: str, title: str, x_title: str, y_title: str,
            x_log: bool = False) -> Any:
    """Documents as points; hover shows the title, a tap selects the document."""
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.plotting import figure

    xa = np.asarray(x, float)
    source = ColumnDataSource({"x": xa + 1.0 if x_log else xa, "value": xa,
                               "y": np.asarray(y, float), "doc": np.asarray(docs, np.int64),
                               "title": list(titles)}, name=f"{name}-source")
    fig = figure(height=380, sizing_mode="stretch_width", title=title, name=name,
                 tools="tap,hover,pan,wheel_zoom,box_zoom,reset,save",
                 x_axis_type="log" if x_log else "linear")
    fig.scatter("x", "y", source=source, size=5, fill_alpha=0.5, line_color=None,
                selection_fill_color="black", selection_fill_alpha=1.0)
    fig.select_one(HoverTool).tooltips = [("document", "@title"), (x_title, "@value"),
                                          (y_title, "@y")]
    fig.xaxis.axis_label = x_title + (" + 1 (log scale)" if x_log else "")
    fig.yaxis.axis_label = y_title
    source.selected.js_on_change("indices", _tap_callback(source, "selectDocument", "doc"))
    return fig
