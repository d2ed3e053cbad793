/* topiclink report: the page's glue (no library; Bokeh draws the figures).
 *
 * Reads the view data from <script id="topiclink-data">, fills the tables and lists,
 * and exposes window.topiclinkReport:
 *   selectTopic(k), setLambda(x), relevance(k, lambda), selectDocument(d), search(text),
 *   nearest(d, n), selectRelation(r), selectQuery(head, relation), groupShares(k),
 *   data, state, ready.
 */
(function () {
  "use strict";

  const data = JSON.parse(document.getElementById("topiclink-data").textContent);
  const views = data.views;
  const T = views.topics || null;
  const D = views.documents || null;
  const R = views.relational || null;
  const E = views.entities || null;
  const G = views.covariate && views.covariate.groups ? views.covariate.groups : null;
  const state = { topic: null, doc: null, lambda: T ? T.lambda : 0.6, relation: null,
                  query: null };

  const byId = (id) => document.getElementById(id);

  function el(tag, props, children) {
    const node = document.createElement(tag);
    if (props) {
      for (const key of Object.keys(props)) {
        if (key === "text") node.textContent = props[key];
        else if (key === "cls") node.className = props[key];
        else if (key === "style") node.setAttribute("style", props[key]);
        else node.setAttribute(key, props[key]);
      }
    }
    for (const child of children || []) {
      if (child !== null && child !== undefined) {
        node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
      }
    }
    return node;
  }

  function clear(node) {
    while (node && node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function fmt(x, digits) {
    return Number(x).toFixed(digits === undefined ? 3 : digits);
  }

  function isIndex(i, n) {
    return Number.isInteger(i) && i >= 0 && i < n;
  }

  /* ---------------------------------------------------------------- Bokeh models */
  function bokehModel(name) {
    const B = window.Bokeh;
    if (!B || !B.documents) return null;
    for (const doc of B.documents) {
      const model = doc.get_model_by_name(name);
      if (model) return model;
    }
    return null;
  }

  function selectGlyph(sourceName, index) {
    const source = bokehModel(sourceName);
    if (!source) return;
    const now = source.selected.indices;
    if (index === null) {
      if (now.length) source.selected.indices = [];
    } else if (now.length !== 1 || now[0] !== index) {
      source.selected.indices = [index];
    }
  }

  /* ---------------------------------------------------------------- topics */
  function topicLabel(k) {
    return T ? T.labels[k] : "topic " + k;
  }

  function relevance(k, lambda) {
    if (!T || !isIndex(k, T.n_topics)) return [];
    const lam = lambda === undefined ? state.lambda : Number(lambda);
    const words = T.topic_words[k];
    const logp = T.topic_log_p[k];
    const rows = [];
    for (let i = 0; i < words.length; i++) {
      const w = words[i];
      const lift = logp[i] - T.log_p_word[w];
      rows.push({ word: T.words[w], relevance: lam * logp[i] + (1 - lam) * lift,
                  p: Math.exp(logp[i]), overall: Math.exp(T.log_p_word[w]), lift: lift });
    }
    rows.sort((a, b) => b.relevance - a.relevance);
    return rows.slice(0, T.n_relevant);
  }

  function barRow(label, parts, value, onClick) {
    const track = el("div", { cls: "bar-track" });
    for (const part of parts) {
      track.appendChild(el("div", { cls: "bar " + part.cls,
                                    style: "width:" + Math.max(0, Math.min(100, part.width))
                                      .toFixed(1) + "%" }));
    }
    const row = el("div", { cls: "bar-row" + (onClick ? " clickable" : "") },
                   [el("div", { cls: "bar-label", text: label, title: label }), track,
                    el("div", { cls: "bar-value", text: value })]);
    if (onClick) row.addEventListener("click", onClick);
    return row;
  }

  function renderTopicWords() {
    const box = clear(byId("topic-words"));
    if (!box || state.topic === null) return;
    const rows = relevance(state.topic, state.lambda);
    let top = 1e-300;
    for (const r of rows) top = Math.max(top, r.p, r.overall);
    box.appendChild(el("p", { cls: "note", text: topicLabel(state.topic) + " (" +
      fmt(100 * T.prevalence[state.topic], 1) + "% of the corpus): red p(w|k), blue p(w)" }));
    for (const r of rows) {
      box.appendChild(barRow(r.word, [{ cls: "overall", width: 100 * r.overall / top },
                                      { cls: "topic", width: 100 * r.p / top }],
                             fmt(r.relevance, 2)));
    }
  }

  function renderTopicTable() {
    const box = byId("topic-table");
    if (!box || !T) return;
    const table = el("table", { cls: "topics" }, [el("tr", null, [
      el("th", { text: "topic" }), el("th", { text: "share" }),
      el("th", { text: "top words (term-score)" })])]);
    for (let k = 0; k < T.n_topics; k++) {
      const row = el("tr", { cls: "topic-row", "data-topic": String(k) }, [
        el("td", { text: T.labels[k] }), el("td", { text: fmt(100 * T.prevalence[k], 1) + "%" }),
        el("td", { text: T.term_score_words[k].join(" ") })]);
      table.appendChild(row);
    }
    box.appendChild(table);
  }

  /* ---------------------------------------------------------------- groups (e.g. presidents) */
  function groupShares(k) {
    if (!G || !T || !isIndex(Number(k), T.n_topics)) return [];
    k = Number(k);
    const rows = G.groups.map((name, i) => ({ group: name, index: i, share: G.shares[i][k],
                                              first: G.first ? G.first[i] : null,
                                              last: G.last ? G.last[i] : null }));
    rows.sort((a, b) => b.share - a.share || a.index - b.index);
    return rows;
  }

  function span(row) {
    if (row.first === null || row.first === undefined) return "";
    return row.first === row.last ? " (" + row.first + ")" :
      " (" + row.first + "\u2013" + row.last + ")";
  }

  function renderGroupTopic(k) {
    const box = clear(byId("group-topic"));
    if (!box || !G) return;
    const rows = groupShares(k);
    box.appendChild(el("p", { cls: "note", text: topicLabel(k) + ": mean share by " +
      G.name + ", highest first" }));
    const top = rows.length ? Math.max(rows[0].share, 1e-12) : 1;
    for (const row of rows.slice(0, 15)) {
      box.appendChild(barRow(row.group + span(row), [{ cls: "topic",
                                                       width: 100 * row.share / top }],
                             fmt(100 * row.share, 1) + "%"));
    }
  }

  /* the chosen topic's column of the group-by-topic heat map selected (the rest dimmed) */
  function highlightGroupTopic(k) {
    if (!G || !T) return;
    const source = bokehModel("group-topics-source");
    if (!source) return;
    const want = G.groups.map((_, i) => i * T.n_topics + k);
    const now = source.selected.indices;
    if (now.length !== want.length || now.some((v, j) => v !== want[j])) {
      source.selected.indices = want;
    }
  }

  function selectTopic(k) {
    k = Number(k);
    if (!T || !isIndex(k, T.n_topics)) return false;
    if (state.topic === k) {
      highlightGroupTopic(k);         /* a tap on a single cell: select the whole column */
      return true;
    }
    state.topic = k;
    const select = byId("topic-select");
    if (select) select.value = String(k);
    for (const row of document.querySelectorAll("tr.topic-row")) {
      row.classList.toggle("selected", Number(row.getAttribute("data-topic")) === k);
    }
    renderTopicWords();
    renderGroupTopic(k);
    selectGlyph("topic-map-source", k);
    highlightGroupTopic(k);
    return true;
  }

  function setLambda(x) {
    const lam = Math.max(0, Math.min(1, Number(x)));
    if (!Number.isFinite(lam)) return false;
    state.lambda = lam;
    const slider = byId("lambda-slider");
    if (slider && Number(slider.value) !== lam) slider.value = String(lam);
    const label = byId("lambda-value");
    if (label) label.textContent = fmt(lam, 2);
    renderTopicWords();
    return true;
  }

  /* ---------------------------------------------------------------- documents */
  let searchText = null;
  let dense = null;
  let norms = null;

  function docName(d) {
    const title = D.titles ? D.titles[d] : "";
    return title ? title : "document " + D.ids[d];
  }

  function search(text) {
    if (!D) return [];
    if (searchText === null) {
      searchText = new Array(D.n_docs);
      for (let d = 0; d < D.n_docs; d++) {
        searchText[d] = ((D.titles ? D.titles[d] : "") + " " + D.ids[d] + " " +
                         (D.keywords ? D.keywords[d].join(" ") : "")).toLowerCase();
      }
    }
    const tokens = String(text || "").toLowerCase().split(/\s+/).filter((t) => t.length);
    const found = [];
    for (let d = 0; d < D.n_docs; d++) {
      if (tokens.every((t) => searchText[d].indexOf(t) >= 0)) found.push(d);
    }
    return found;
  }

  function renderResults(found) {
    const box = clear(byId("doc-results"));
    const count = byId("doc-count");
    if (count) count.textContent = found.length + " documents" +
      (found.length > 50 ? " (first 50 shown)" : "");
    if (!box) return;
    const list = el("ul", { cls: "docs" });
    for (const d of found.slice(0, 50)) {
      list.appendChild(el("li", { cls: "doc-link", "data-doc": String(d), text: docName(d) +
        (D.keywords ? " \u2014 " + D.keywords[d].join(" ") : "") }));
    }
    box.appendChild(list);
  }

  function mixOf(d) {
    const flat = D.theta[d];
    const out = [];
    for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
    return out;
  }

  function buildDense() {
    const K = T.n_topics;
    dense = new Float32Array(D.n_docs * K);
    norms = new Float32Array(D.n_docs);
    for (let d = 0; d < D.n_docs; d++) {
      let s = 0;
      for (const [k, p] of mixOf(d)) {
        dense[d * K + k] = p;
        s += p * p;
      }
      norms[d] = Math.sqrt(s) || 1;
    }
  }

  function nearest(d, n) {
    if (!D || !T || !isIndex(Number(d), D.n_docs)) return [];
    d = Number(d);
    n = n === undefined ? 10 : n;
    if (dense === null) buildDense();
    const K = T.n_topics;
    const mix = mixOf(d);
    const best = [];
    for (let j = 0; j < D.n_docs; j++) {
      if (j === d) continue;
      let s = 0;
      for (const [k, p] of mix) s += p * dense[j * K + k];
      const cos = s / (norms[d] * norms[j]);
      if (best.length < n || cos > best[best.length - 1][1]) {
        best.push([j, cos]);
        best.sort((a, b) => b[1] - a[1]);
        if (best.length > n) best.pop();
      }
    }
    return best;
  }

  let suggestionIndex = null;
  let neighbourSets = null;

  function renderSuggestions(d) {
    const box = clear(byId("doc-suggestions"));
    if (!box || !R) return;
    if (suggestionIndex === null) {
      suggestionIndex = new Map();
      R.suggestions.queries.forEach((q, i) => suggestionIndex.set(q, i));
    }
    const truth = R.neighbours ? new Set(R.neighbours[d]) : null;
    box.appendChild(el("p", { text: "for: " + docName(d) + (truth ? " (" + truth.size +
      " true links; \u2713 marks one)" : " (true links unknown: no links attached)") }));
    const i = suggestionIndex.get(d);
    if (i === undefined) {
      box.appendChild(el("p", { cls: "note", text: "no suggestions precomputed for this " +
        "document" }));
      return;
    }
    const list = el("ol", { cls: "docs" });
    R.suggestions.targets[i].forEach((t, rank) => {
      const hit = truth && truth.has(t);
      list.appendChild(el("li", { cls: "doc-link", "data-doc": String(t) }, [
        el("span", { cls: "true-link", text: hit ? "\u2713 " : "" }),
        docName(t) + "  (score " + Number(R.suggestions.scores[i][rank]).toPrecision(3) +
          ")"]));
    });
    box.appendChild(list);
  }

  function renderDocument(d) {
    const box = clear(byId("doc-detail"));
    if (!box) return;
    box.appendChild(el("h3", { text: docName(d) }));
    box.appendChild(el("p", { cls: "note", text: "id " + D.ids[d] +
      (D.lengths ? ", " + D.lengths[d] + " words" : "") }));
    if (D.keywords) {
      box.appendChild(el("p", { cls: "keywords", text: D.keywords[d].join(" ") }));
    }
    const row = el("div", { cls: "row" });
    const mixBox = el("div", { cls: "col" }, [el("h3", { text: "topic mix" })]);
    for (const [k, p] of mixOf(d)) {
      mixBox.appendChild(barRow(topicLabel(k), [{ cls: "topic", width: 100 * p }],
                                fmt(100 * p, 1) + "%", () => selectTopic(k)));
    }
    const near = el("div", { cls: "col" }, [el("h3", {
      text: "nearest documents (cosine of the topic mixes)" })]);
    const list = el("ol", { cls: "docs" });
    for (const [j, cos] of nearest(d, 10)) {
      list.appendChild(el("li", { cls: "doc-link", "data-doc": String(j),
                                   text: docName(j) + "  (" + fmt(cos, 3) + ")" }));
    }
    near.appendChild(list);
    row.appendChild(mixBox);
    row.appendChild(near);
    box.appendChild(row);
  }

  /* the header is sticky: a link to a section scrolls it below the header, not under it */
  function fitHeader() {
    const header = byId("report-header");
    const root = document.documentElement;
    if (!header || !root || !root.style || !header.offsetHeight) return;
    root.style.scrollPaddingTop = (header.offsetHeight + 8) + "px";
  }

  function selectDocument(d) {
    d = Number(d);
    if (!D || !isIndex(d, D.n_docs)) return false;
    if (state.doc === d) return true;
    state.doc = d;
    const chosen = byId("chosen");
    if (chosen) chosen.textContent = "chosen document: " + docName(d);
    fitHeader();
    renderDocument(d);
    renderSuggestions(d);
    for (const row of document.querySelectorAll("tr.doc-row")) {
      row.classList.toggle("selected", Number(row.getAttribute("data-doc")) === d);
    }
    if (R && R.network) {
      const at = R.network.nodes.indexOf(d);
      selectGlyph("network-source", at >= 0 ? at : null);
    }
    const V = views.visibility;
    if (V && V.points && V.cited) {
      const at = V.points.indexOf(d);
      selectGlyph("visibility-scatter-source", at >= 0 ? at : null);
    }
    return true;
  }

  /* ---------------------------------------------------------------- entities */
  let queryIndex = null;

  function selectRelation(r) {
    r = Number(r);
    if (!E || !isIndex(r, E.relations.length)) return false;
    state.relation = r;
    const select = byId("relation-select");
    if (select) select.value = String(r);
    const source = bokehModel("relation-matrix-source");
    if (source) {
      const values = [].concat.apply([], E.matrices[r]);
      const copy = {};
      for (const key of Object.keys(source.data)) copy[key] = source.data[key];
      copy.value = values;
      source.data = copy;
      const mapper = bokehModel("relation-matrix-mapper");
      if (mapper) {
        mapper.low = Math.min.apply(null, values);
        mapper.high = Math.max(Math.max.apply(null, values), mapper.low + 1e-12);
      }
      const fig = bokehModel("relation-matrix");
      if (fig && fig.title) fig.title.text = "relation matrix of " + E.relations[r];
    }
    return true;
  }

  function selectQuery(head, relation) {
    if (!E) return false;
    const nR = E.relations.length;
    if (queryIndex === null) {
      queryIndex = new Map();
      E.queries.heads.forEach((h, i) => queryIndex.set(h * nR + E.queries.relations[i], i));
    }
    let h = Number.isInteger(head) ? head : E.entities.indexOf(String(head));
    const r = Number.isInteger(relation) ? relation : E.relations.indexOf(String(relation));
    const box = clear(byId("tails"));
    if (!isIndex(h, E.entities.length) || !isIndex(r, nR)) {
      if (box) box.appendChild(el("p", { cls: "note", text: "unknown head or relation" }));
      return false;
    }
    state.query = [h, r];
    const i = queryIndex.get(h * nR + r);
    if (!box) return i !== undefined;
    if (i === undefined) {
      box.appendChild(el("p", { cls: "note", text: "no tails precomputed for (" +
        E.entities[h] + ", " + E.relations[r] + ")" }));
      return false;
    }
    const q = E.queries;
    const table = el("table", null, [el("tr", null, [
      el("th", { text: "tail" }), el("th", { text: "probability" }),
      el("th", { text: "90% interval" }), el("th", { text: q.true ? "observed" : "" })])]);
    q.tails[i].forEach((t, rank) => {
      const iv = q.interval ? fmt(q.interval[i][rank][0]) + " \u2013 " +
        fmt(q.interval[i][rank][1]) : "\u2013";
      table.appendChild(el("tr", null, [
        el("td", { text: E.entities[t] }), el("td", { text: fmt(q.mean[i][rank]) }),
        el("td", { text: iv }),
        el("td", { cls: "true-link", text: q.true && q.true[i][rank] ? "\u2713" : "" })]));
    });
    box.appendChild(el("p", { text: "(" + E.entities[h] + ", " + E.relations[r] + ", ?)" }));
    box.appendChild(table);
    return true;
  }

  /* ---------------------------------------------------------------- set-up */
  function setUp() {
    if (T) {
      const select = byId("topic-select");
      if (select) {
        for (let k = 0; k < T.n_topics; k++) {
          select.appendChild(el("option", { value: String(k), text: T.labels[k] }));
        }
        select.addEventListener("change", () => selectTopic(Number(select.value)));
      }
      const slider = byId("lambda-slider");
      if (slider) {
        slider.value = String(state.lambda);
        slider.addEventListener("input", () => setLambda(Number(slider.value)));
      }
      renderTopicTable();
      let first = 0;
      for (let k = 1; k < T.n_topics; k++) if (T.prevalence[k] > T.prevalence[first]) first = k;
      selectTopic(first);
      setLambda(state.lambda);
    }
    if (D) {
      const input = byId("doc-search");
      if (input) input.addEventListener("input", () => renderResults(search(input.value)));
      renderResults(search(""));
    }
    if (E) {
      const relSelect = byId("relation-select");
      const querySelect = byId("query-relation");
      E.relations.forEach((name, r) => {
        if (relSelect) relSelect.appendChild(el("option", { value: String(r), text: name }));
        if (querySelect) querySelect.appendChild(el("option", { value: String(r), text: name }));
      });
      if (relSelect) relSelect.addEventListener("change", () => selectRelation(relSelect.value));
      const heads = Array.from(new Set(E.queries.heads));
      const list = byId("head-list");
      if (list) for (const h of heads) list.appendChild(el("option", { value: E.entities[h] }));
      const headInput = byId("head-input");
      const update = () => selectQuery(headInput.value, Number(querySelect.value));
      if (headInput && querySelect) {
        headInput.addEventListener("change", update);
        querySelect.addEventListener("change", update);
        if (E.queries.heads.length) {
          headInput.value = E.entities[E.queries.heads[0]];
          querySelect.value = String(E.queries.relations[0]);
          selectQuery(E.queries.heads[0], E.queries.relations[0]);
        }
      }
      state.relation = 0;
    }
    fitHeader();
    if (window.addEventListener) window.addEventListener("resize", fitHeader);
    document.addEventListener("click", (event) => {
      const target = event.target;
      if (!target || !target.closest) return;
      const docNode = target.closest("[data-doc]");
      if (docNode) {
        selectDocument(Number(docNode.getAttribute("data-doc")));
        return;
      }
      const topicNode = target.closest("[data-topic]");
      if (topicNode) selectTopic(Number(topicNode.getAttribute("data-topic")));
    });
  }

  /* resolves once Bokeh has embedded and drawn the figures (or after 15 s without them):
   * every figure has its root view, and every Bokeh document says it is idle (its roots
   * rendered once; a root view alone only means the figure is being built) */
  function bokehDrawn(wanted) {
    const B = window.Bokeh;
    if (!B || !B.index || !B.documents || !B.documents.length) return false;
    if (Object.keys(B.index).length < wanted) return false;
    return B.documents.every((doc) => doc.is_idle !== false);
  }

  const ready = new Promise((resolve) => {
    const started = Date.now();
    const wanted = document.querySelectorAll("[data-root-id]").length;
    (function poll() {
      const done = !wanted || bokehDrawn(wanted);
      if (done || Date.now() - started > 15000) {
        if (E && state.relation !== null) selectRelation(state.relation);
        if (T && state.topic !== null) {
          selectGlyph("topic-map-source", state.topic);
          highlightGroupTopic(state.topic);
        }
        resolve(Boolean(done));
      } else {
        setTimeout(poll, 50);
      }
    })();
  });

  setUp();
  window.topiclinkReport = { data: data, state: state, ready: ready, selectTopic: selectTopic,
                             setLambda: setLambda, relevance: relevance,
                             selectDocument: selectDocument, search: search,
                             nearest: nearest, selectRelation: selectRelation,
                             selectQuery: selectQuery, groupShares: groupShares };
})();
