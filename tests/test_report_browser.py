"""The report page in a real browser (issue 26): every family's page opened from a file in
headless Chromium (Debian's ``chromium``, driven by Playwright) with the network cut off.

Each page must render without a console error, warning or uncaught exception and fetch
nothing (any request that is not ``file:`` or ``data:`` fails the test); its views must be
there and filled, Bokeh must have drawn every figure (pixels on a canvas), and choosing a
document, moving the relevance slider, tapping a topic on the map, following the header's
links (and, for BPBFM, choosing a relation and a query; for KTM and DMR, whose documents are
grouped by "president", choosing a topic) must change what the page shows.

With ``TOPICLINK_SCREENSHOTS=<folder>`` each test also saves a full-page screenshot of its
family's page (``<folder>/<family>.png``; ``benchmarks/results/report_screenshots/`` keeps a
set). The module is skipped when the browser or Playwright is missing; CI installs both
(``.ci/run``: the ``chromium`` package; the ``test`` extra: ``playwright``).
"""

from __future__ import annotations

import importlib.util
import io
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("TOPICLINK_CHROMIUM", "/usr/bin/chromium"))
if not CHROMIUM.exists() or importlib.util.find_spec("playwright") is None:
    pytest.skip(f"a real-browser test: needs headless Chromium at {CHROMIUM} (Debian: "
                "apt-get install chromium) and the playwright package (pip install "
                "playwright; no browser download)", allow_module_level=True)

from playwright.sync_api import (  # noqa: E402
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Request,
    Route,
    sync_playwright,
)

from tests.report_fixtures import (  # noqa: E402
    FAMILIES,
    GROUPED,
    family_inputs,
    fit_family,
    make_report_data,
)
from topiclink.report import build_report  # noqa: E402

VIEWPORT = {"width": 1280, "height": 800}
LOCAL = ("file:", "data:")
FIGURE_VIEWS = {"topics", "relational", "visibility", "supervised", "entities", "covariate"}
SCREENSHOTS = os.environ.get("TOPICLINK_SCREENSHOTS")


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium (the system's, never a downloaded one)."""
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    """The documents, links, labels, features and tensor the models are fitted on."""
    return make_report_data()


@pytest.fixture(scope="module")
def fitted(data: dict[str, Any]) -> Callable[[str], Any]:
    """name -> the family fitted (once per module, only when a test asks for it)."""
    cache: dict[str, Any] = {}

    def get(name: str) -> Any:
        if name not in cache:
            cache[name] = fit_family(name, data)
        return cache[name]

    return get


@dataclass
class Watch:
    """What a page did that it must not: console errors and warnings, uncaught
    exceptions, requests that leave the file system."""

    problems: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def console(self, message: ConsoleMessage) -> None:
        if message.type in ("error", "warning", "assert"):
            self.problems.append(f"console {message.type}: {message.text}")

    def request(self, request: Request) -> None:
        if not request.url.startswith(LOCAL):
            self.outside.append(request.url)

    def route(self, route: Route) -> None:
        if route.request.url.startswith(LOCAL):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()


def open_report(context: BrowserContext, path: Path) -> tuple[Page, Watch]:
    """The page at ``path`` opened offline, every outside request refused and recorded,
    after ``topiclinkReport.ready`` (which must say that Bokeh drew the figures)."""
    watch = Watch()
    context.route("**/*", watch.route)
    page = context.new_page()
    page.on("console", watch.console)
    page.on("pageerror", lambda error: watch.problems.append(f"page error: {error}"))
    page.on("request", watch.request)
    page.on("requestfailed", lambda r: watch.problems.append(f"request failed: {r.url}"))
    page.on("websocket", lambda ws: watch.outside.append(ws.url))
    page.goto(path.as_uri(), wait_until="load")
    assert page.evaluate("() => window.topiclinkReport.ready") is True, "Bokeh never drew"
    return page, watch


def state(page: Page, key: str) -> Any:
    """``topiclinkReport.state[key]``."""
    return page.evaluate("(key) => window.topiclinkReport.state[key]", key)


# ---------------------------------------------------------------------- checks
_DRAWN = """(canvases) => canvases.some((c) => {
  const ctx = c.width && c.height ? c.getContext("2d") : null;
  if (!ctx) return false;
  const px = ctx.getImageData(0, 0, c.width, c.height).data;
  for (let i = 4; i < px.length; i += 4) {
    if (px[i] !== px[0] || px[i + 1] !== px[1] || px[i + 2] !== px[2] || px[i + 3] !== px[3])
      return true;
  }
  return false;
})"""


def check_views(page: Page, name: str) -> None:
    """The family's views, each filled; every figure laid out and drawn by Bokeh."""
    wanted = {"summary", *FAMILIES[name]}
    ids = page.eval_on_selector_all("section.view", "nodes => nodes.map(n => n.id)")
    assert sorted(ids) == sorted(f"view-{v}" for v in wanted)
    for view in wanted:
        section = page.locator(f"#view-{view}")
        heading = section.locator("h2").inner_text()
        roots = section.locator("[data-root-id]")
        filled = len(section.inner_text()) > len(heading) + 20 or roots.count() > 0
        assert section.is_visible() and filled, f"{view} is empty"
        if view in FIGURE_VIEWS:
            assert roots.count() >= 1, f"no figure in {view}"
        for i in range(roots.count()):
            canvases = roots.nth(i).locator("canvas")      # in Bokeh's shadow DOM
            assert canvases.count() >= 1, f"figure {i} of {view} has no canvas"
            box = canvases.first.bounding_box()
            assert box and box["width"] > 200 and box["height"] > 150, (view, box)
            assert canvases.evaluate_all(_DRAWN), f"figure {i} of {view} is blank"
    empty = page.eval_on_selector_all("table", "ts => ts.filter(t => t.rows.length < 2)"
                                      ".map(t => t.closest('section').id)")
    assert not empty, f"a table with a header only in {empty}"


def check_topics(page: Page) -> None:
    """The topic select, the relevance slider (and ``setLambda``) and a tap on the map."""
    topics = page.evaluate("() => window.topiclinkReport.data.views.topics")
    # a topic whose ranking differs between the page's lambda and 0.2
    k = page.evaluate("""(lam) => {
      const r = window.topiclinkReport, T = r.data.views.topics;
      const order = (k, x) => r.relevance(k, x).map((row) => row.word).join(" ");
      for (let k = 0; k < T.n_topics; k++) if (order(k, T.lambda) !== order(k, lam)) return k;
      return null; }""", 0.2)
    assert k is not None
    page.select_option("#topic-select", str(k))
    assert state(page, "topic") == k
    words = page.locator("#topic-words .bar-label")
    assert page.locator("#topic-words .note").inner_text().startswith(topics["labels"][k])
    before = words.all_inner_texts()
    assert before == [r["word"] for r in page.evaluate(
        "([k, x]) => window.topiclinkReport.relevance(k, x)", [k, topics["lambda"]])]
    page.locator("#lambda-slider").fill("0.2")          # the reader drags the slider
    after = words.all_inner_texts()
    assert page.locator("#lambda-value").inner_text() == "0.20"
    assert after != before
    assert after == [r["word"] for r in page.evaluate(
        "([k, x]) => window.topiclinkReport.relevance(k, x)", [k, 0.2])]
    assert page.evaluate("() => window.topiclinkReport.setLambda(1)")
    assert page.locator("#lambda-slider").input_value() == "1"
    assert words.all_inner_texts() != after
    # every topic's circle is drawn whole inside the map's frame
    outside = page.evaluate("""() => {
      const doc = Bokeh.documents[0], fig = doc.get_model_by_name("topic-map");
      const s = doc.get_model_by_name("topic-map-source").data, view = Bokeh.index[fig.id];
      const f = view.frame.bbox, out = [];
      for (let i = 0; i < s.topic.length; i++) {
        const x = view.frame.x_scale.compute(s.x[i]), y = view.frame.y_scale.compute(s.y[i]);
        const r = s.size[i] / 2;
        if (x - r < f.left || x + r > f.right || y - r < f.top || y + r > f.bottom)
          out.push(s.topic[i]);
      }
      return out; }""")
    assert not outside, f"topics {outside} are cut by the map's edge"
    # tap another topic's circle on the map (a real click on Bokeh's canvas)
    page.locator("#view-topics [data-root-id]").first.scroll_into_view_if_needed()
    target = page.evaluate("""(k) => {
      const doc = Bokeh.documents[0], fig = doc.get_model_by_name("topic-map");
      const s = doc.get_model_by_name("topic-map-source").data, view = Bokeh.index[fig.id];
      const box = view.el.getBoundingClientRect(), n = s.topic.length;
      const at = [];
      for (let i = 0; i < n; i++) at.push([box.left + view.frame.x_scale.compute(s.x[i]),
                                            box.top + view.frame.y_scale.compute(s.y[i])]);
      for (let i = 0; i < n; i++) {        // a circle whose centre no other circle covers
        if (i === k) continue;
        const clear = at.every((p, j) => j === i ||
          Math.hypot(p[0] - at[i][0], p[1] - at[i][1]) > s.size[j] / 2 + 2);
        if (clear) return { topic: s.topic[i], x: at[i][0], y: at[i][1] };
      }
      return null; }""", k)
    if target is not None:
        page.mouse.click(target["x"], target["y"])
        page.wait_for_function("(k) => window.topiclinkReport.state.topic === k",
                               arg=target["topic"], timeout=5000)
        assert page.locator("#topic-select").input_value() == str(target["topic"])
        assert page.locator("tr.topic-row.selected").get_attribute("data-topic") == str(
            target["topic"])


def check_documents(page: Page, views: set[str]) -> None:
    """Choosing a document (``selectDocument``, then a click in the list) changes the
    document panel, the header, the suggestions and the network's selection; search."""
    docs = page.evaluate("() => window.topiclinkReport.data.views.documents")
    name = page.evaluate("(d) => { const D = window.topiclinkReport.data.views.documents;"
                         " return D.titles && D.titles[d] ? D.titles[d] : 'document ' + "
                         "D.ids[d]; }", 1)
    assert page.evaluate("() => window.topiclinkReport.selectDocument(0)")
    detail = page.locator("#doc-detail")
    first = detail.inner_text()
    assert "topic mix" in first
    page.locator("#doc-results li.doc-link").nth(1).click()
    assert state(page, "doc") == 1
    assert detail.inner_text() != first
    assert detail.locator("h3").first.inner_text() == name
    assert page.locator("#chosen").inner_text() == f"chosen document: {name}"
    assert detail.locator(".bar-row").count() >= 1 and detail.locator("li.doc-link").count()
    if "relational" in views:
        suggestions = page.locator("#doc-suggestions")
        assert suggestions.inner_text().startswith(f"for: {name}")
        assert suggestions.locator("li.doc-link").count() >= 1
        selected = page.evaluate("""() => { const s = Bokeh.documents[0]
          .get_model_by_name("network-source"); return s ? s.selected.indices : null; }""")
        nodes = page.evaluate("() => { const n = window.topiclinkReport.data.views"
                              ".relational.network; return n ? n.nodes : null; }")
        if nodes is not None and 1 in nodes:
            assert selected == [nodes.index(1)]
        other = suggestions.locator("li.doc-link").first
        pick = int(other.get_attribute("data-doc"))
        other.click()
        assert state(page, "doc") == pick
    word = str(docs["titles"][0] if docs["titles"] else docs["ids"][0]).split()[0]
    page.fill("#doc-search", word)
    found = page.evaluate("(w) => window.topiclinkReport.search(w).length", word)
    assert found >= 1
    assert page.locator("#doc-count").inner_text().startswith(f"{found} documents")
    assert page.locator("#doc-results li.doc-link").count() == min(found, 50)
    for view in ("visibility", "supervised"):         # tables whose rows choose a document
        rows = page.locator(f"#view-{view} tr.doc-row")
        if view in views and rows.count():
            row = rows.nth(min(1, rows.count() - 1))
            d = int(row.get_attribute("data-doc"))
            row.click()
            assert state(page, "doc") == d and "selected" in (row.get_attribute("class") or "")
            points = page.evaluate("() => { const v = window.topiclinkReport.data.views"
                                   ".visibility; return v && v.cited ? v.points : null; }")
            if view == "visibility" and points is not None and d in points:
                assert page.evaluate("""() => Bokeh.documents[0].get_model_by_name(
                  "visibility-scatter-source").selected.indices""") == [points.index(d)]


def check_entities(page: Page) -> None:
    """Choosing a relation redraws the heat map; choosing a head and a relation (the
    page's inputs, then ``selectQuery``) changes the shown tails."""
    ent = page.evaluate("() => window.topiclinkReport.data.views.entities")
    matrix = """() => { const doc = Bokeh.documents[0];
      return [doc.get_model_by_name("relation-matrix").title.text,
              Array.from(doc.get_model_by_name("relation-matrix-source").data.value)]; }"""
    title, values = page.evaluate(matrix)
    last = len(ent["relations"]) - 1
    page.select_option("#relation-select", str(last))
    assert state(page, "relation") == last
    title2, values2 = page.evaluate(matrix)
    assert title2 == f"relation matrix of {ent['relations'][last]}" and title2 != title
    flat = [v for row in ent["matrices"][last] for v in row]
    assert values2 == pytest.approx(flat) and values2 != values
    tails = page.locator("#tails")
    before = tails.inner_text()
    q = ent["queries"]
    i = next(i for i, (h, r) in enumerate(zip(q["heads"], q["relations"], strict=True))
             if h != q["heads"][0] and r != q["relations"][0])
    head, rel = ent["entities"][q["heads"][i]], q["relations"][i]
    page.fill("#head-input", head)
    page.locator("#head-input").dispatch_event("change")
    page.select_option("#query-relation", str(rel))
    after = tails.inner_text()
    assert after != before and f"({head}, {ent['relations'][rel]}, ?)" in after
    assert tails.locator("tr").count() == len(q["tails"][i]) + 1
    assert page.evaluate("([h, r]) => window.topiclinkReport.selectQuery(h, r)",
                         [q["heads"][0], q["relations"][0]])
    assert tails.inner_text() == before


_GROUP_SELECTION = """() => Array.from(Bokeh.documents[0].get_model_by_name(
  "group-topics-source").selected.indices)"""


def check_groups(page: Page) -> None:
    """The president view (KTM, DMR: the documents grouped by "president"): the strip
    under the topics over time (in the same figure) names the presidents band by band;
    the chosen topic's column of the president-by-topic heat map is selected and its
    shares by president listed, highest first; choosing another topic (the select, then
    a real tap on a cell of the heat map) moves both."""
    groups = page.evaluate("() => window.topiclinkReport.data.views.covariate.groups")
    K = page.evaluate("() => window.topiclinkReport.data.views.topics.n_topics")
    labels = page.evaluate("() => window.topiclinkReport.data.views.topics.labels")
    assert page.locator("#group-heading").inner_text() == f"Topics by {groups['name']}"
    bands = page.evaluate("""() => Array.from(Bokeh.documents[0].get_model_by_name(
      "covariate-empirical-bands-source").data.label)""")
    assert bands == groups["bands"]["label"] and len(bands) >= 2

    def column(k: int) -> list[int]:
        return [g * K + k for g in range(len(groups["groups"]))]

    def listed(k: int) -> list[str]:
        order = sorted(range(len(groups["groups"])),
                       key=lambda g: (-groups["shares"][g][k], g))
        return [groups["groups"][g] for g in order][:15]

    box = page.locator("#group-topic")
    k = state(page, "topic")
    assert page.evaluate(_GROUP_SELECTION) == column(k)
    assert box.locator(".note").inner_text().startswith(labels[k])
    assert [t.split(" (")[0] for t in box.locator(".bar-label").all_inner_texts()] == listed(k)
    other = (k + 1) % K
    page.select_option("#topic-select", str(other))
    assert page.evaluate(_GROUP_SELECTION) == column(other)
    assert box.locator(".note").inner_text().startswith(labels[other])
    assert [t.split(" (")[0] for t in box.locator(".bar-label").all_inner_texts()] == (
        listed(other))
    # a real tap on the heat map's cell (first president, a third topic)
    third = (other + 1) % K
    at = page.evaluate("""(k) => {
      const doc = Bokeh.documents[0], fig = doc.get_model_by_name("group-topics");
      const view = Bokeh.index[fig.id];
      view.el.scrollIntoView({ block: "center" });
      const box = view.el.getBoundingClientRect();
      const s = doc.get_model_by_name("group-topics-source").data;
      const x = view.frame.x_scale.compute(fig.x_range.synthetic(s.col[k]));
      const y = view.frame.y_scale.compute(fig.y_range.synthetic(s.row[k]));
      return { x: box.left + x, y: box.top + y }; }""", third)
    page.mouse.click(at["x"], at["y"])
    page.wait_for_function("(k) => window.topiclinkReport.state.topic === k", arg=third,
                           timeout=5000)
    assert page.locator("#topic-select").input_value() == str(third)
    page.wait_for_function(f"() => ({_GROUP_SELECTION})().length === {len(groups['groups'])}",
                           timeout=5000)
    assert page.evaluate(_GROUP_SELECTION) == column(third)
    assert box.locator(".note").inner_text().startswith(labels[third])


def check_header_links(page: Page) -> None:
    """Each link of the sticky header scrolls its section's heading into view below the
    header, not under it."""
    for link in page.locator("header nav a").all():
        href = link.get_attribute("href")
        link.click()
        page.wait_for_timeout(50)
        header, heading = page.evaluate("""(h) => [
          document.querySelector("header").getBoundingClientRect().bottom,
          document.querySelector(h + " h2").getBoundingClientRect().top]""", href)
        assert heading >= header - 1, (href, header, heading)


def save_screenshot(page: Page, name: str) -> None:
    """A full-page screenshot (reduced to 128 colours when Pillow is there)."""
    folder = Path(SCREENSHOTS or ".")
    folder.mkdir(parents=True, exist_ok=True)
    page.evaluate("() => window.scrollTo(0, 0)")
    png = page.screenshot(full_page=True)
    try:
        from PIL import Image

        image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=128)
        out = io.BytesIO()
        image.save(out, "PNG", optimize=True)
        png = out.getvalue()
    except ImportError:
        pass
    (folder / f"{name.replace('+', '-')}.png").write_bytes(png)


# ---------------------------------------------------------------------- the test
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_the_report_in_a_real_browser(browser: Browser, fitted: Callable[[str], Any],
                                      data: dict[str, Any], name: str,
                                      tmp_path: Path) -> None:
    report = build_report(fitted(name), inputs=family_inputs(name, data))
    path = report.save(tmp_path / "report.html")
    context = browser.new_context(viewport=VIEWPORT, offline=True)
    try:
        page, watch = open_report(context, path)
        check_views(page, name)
        views = FAMILIES[name]
        if "topics" in views:
            check_topics(page)
        if "documents" in views:
            check_documents(page, views)
        if "entities" in views:
            check_entities(page)
        if name in GROUPED:
            check_groups(page)
        check_header_links(page)
        assert not watch.problems, watch.problems
        assert not watch.outside, f"the page fetched {watch.outside}"
        if SCREENSHOTS:
            save_screenshot(page, name)
    finally:
        context.close()


def test_a_page_that_fetches_is_caught(browser: Browser, tmp_path: Path) -> None:
    """The watch itself: a page that loads a remote script and logs an error is caught
    (the request refused, the error recorded)."""
    path = tmp_path / "bad.html"
    path.write_text('<!DOCTYPE html><html><head><script src="https://example.org/x.js">'
                    '</script></head><body><script>console.error("boom");'
                    "window.topiclinkReport = {ready: Promise.resolve(true)};</script>"
                    "</body></html>", encoding="utf-8")
    context = browser.new_context(viewport=VIEWPORT, offline=True)
    try:
        _, watch = open_report(context, path)
    finally:
        context.close()
    assert "https://example.org/x.js" in watch.outside
    assert any("boom" in p for p in watch.problems)
