/* Runs a report page's script (report.js) under a minimal DOM stand-in, without a
 * browser or Bokeh, and drives window.topiclinkReport; prints a JSON summary.
 * Usage: node report_smoke.js PAGE.html  (called by tests/test_report.py). */
"use strict";
const fs = require("fs");
const html = fs.readFileSync(process.argv[2], "utf8");

class Node_ {
  constructor(tag) {
    this.tagName = tag; this.children = []; this.attrs = {}; this.listeners = {};
    this.value = ""; this._text = ""; this.className = "";
    const self = this;
    this.classList = { toggle(name, on) { self.attrs["class-" + name] = Boolean(on); } };
  }
  get firstChild() { return this.children[0] || null; }
  appendChild(child) { this.children.push(child); child.parentNode = this; return child; }
  removeChild(child) { this.children.splice(this.children.indexOf(child), 1); return child; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; }
  addEventListener(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); }
  closest() { return null; }
  set textContent(v) { this._text = String(v); this.children = []; }
  get textContent() {
    return this._text + this.children.map((c) => c.textContent).join("");
  }
}

const ids = {};
for (const m of html.matchAll(/<(\w+)[^>]*\sid="([^"]+)"/g)) ids[m[2]] = new Node_(m[1]);
const dataMatch = html.match(/<script type="application\/json" id="topiclink-data">([\s\S]*?)<\/script>/);
ids["topiclink-data"].textContent = dataMatch[1];
const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
const page = scripts.find((s) => s.includes("window.topiclinkReport"));

global.window = global;
global.document = {
  getElementById: (id) => ids[id] || null,
  createElement: (tag) => new Node_(tag),
  createTextNode: (text) => { const n = new Node_("#text"); n._text = String(text); return n; },
  querySelectorAll: () => [],
  addEventListener: () => {},
};
eval(page);  // eslint-disable-line no-eval

const api = window.topiclinkReport;
const out = { views: Object.keys(api.data.views) };
const T = api.data.views.topics, D = api.data.views.documents, E = api.data.views.entities;
if (T) {
  out.initialTopic = api.state.topic;
  out.selectTopic = api.selectTopic(T.n_topics - 1);
  out.badTopic = api.selectTopic(T.n_topics + 5);
  out.setLambda = api.setLambda(1.0);
  out.relevanceAt1 = api.relevance(T.n_topics - 1, 1.0).map((r) => r.word);
  out.relevanceAt0 = api.relevance(T.n_topics - 1, 0.0).map((r) => r.word);
  out.lambdaLabel = ids["lambda-value"].textContent;
  out.wordsShown = ids["topic-words"].children.length;
}
if (D) {
  out.searchAll = api.search("").length;
  const first = D.titles ? D.titles[0] : D.ids[0];
  out.searchFirst = api.search(String(first).split(" ")[0]).length;
  out.selectDocument = api.selectDocument(0);
  out.nearest = api.nearest(0, 5);
  out.detail = ids["doc-detail"].textContent.slice(0, 400);
  out.suggestions = ids["doc-suggestions"] ? ids["doc-suggestions"].textContent : null;
  out.badDocument = api.selectDocument(D.n_docs + 3);
}
const C = api.data.views.covariate;
if (T && C && C.groups) {
  out.groupTopic = api.state.topic;
  out.groupShares = api.groupShares(api.state.topic).map((r) => r.group);
  out.groupText = ids["group-topic"].textContent;
}
if (E) {
  out.selectRelation = api.selectRelation(E.relations.length - 1);
  out.selectQuery = api.selectQuery(E.queries.heads[0], E.queries.relations[0]);
  out.tails = ids["tails"].textContent;
}
api.ready.then((done) => { out.ready = done; console.log(JSON.stringify(out)); });
