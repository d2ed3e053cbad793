"""Size and build time of ``topiclink report`` pages.

Cases:

- ``cora``: Gibbs-gRTM, K = 15, fitted (``--iterations``) on the 90% training split of
  the bundled Cora (2,169 of 2,410 abstracts, as ``topiclink demo``), reported with its
  training documents and links and the 241 held-out papers (precision@k);
- ``synthetic-25k``: a gRTM model file of 25,000 documents, K = 50, V = 20,000, with
  ~100,000 links and a corpus of 100 tokens per document, its arrays drawn at random (no
  fit: only the report is measured); the network is capped at 2,000 nodes, the suggested
  links at 20M scored pairs (the 800 most connected documents).

Reported per case: page size (MB), the part that is BokehJS, the embedded view data,
the build time (data + page) and the time to save.  The page opens offline.  With
``--browser`` (Playwright and the system's Chromium, ``/usr/bin/chromium``) each saved
page is also opened headless from disk, every outside request refused, and timed from
navigation to ``topiclinkReport.ready`` (Bokeh has drawn every figure), median of
``--loads`` loads in fresh pages; console errors are counted.

    python benchmarks/report_size.py                 # ~1-2 min on 2 cores
    python benchmarks/report_size.py --iterations 20 --out /tmp/report_size.json
    python benchmarks/report_size.py --browser      # + load time in headless Chromium
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import re
import tempfile
import time
from pathlib import Path

import numpy as np

from topiclink.data import Corpus, Links
from topiclink.estimators import RelationalTopicModel
from topiclink.report import ReportInputs, build_report


def _cpu() -> str:
    """The CPU's name, from the sibling benchmark's helper (loaded from its file: this
    folder stays off ``sys.path``, where a benchmark named like a package would shadow it)."""
    path = Path(__file__).resolve().parent / "bpbfm_fb15k237_probe.py"
    spec = importlib.util.spec_from_file_location("_topiclink_bench_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._cpu()


def _synthetic_grtm(n_docs: int, n_topics: int, n_words: int, seed: int = 0
                    ) -> tuple[RelationalTopicModel, Corpus, Links]:
    """A gRTM with random arrays, its corpus and links (saved and loaded: a valid file)."""
    rng = np.random.default_rng(seed)
    K, V, D = n_topics, n_words, n_docs
    phi = rng.dirichlet(np.full(V, 0.05), size=K)
    theta = rng.dirichlet(np.full(K, 0.1), size=D)
    dominant = theta.argmax(axis=1)
    # tokens: 100 per document from its dominant topic's words
    cum = np.cumsum(phi, axis=1)
    rows, cols = [], []
    for k in range(K):
        docs = np.flatnonzero(dominant == k)
        words = np.minimum(np.searchsorted(cum[k], rng.random((docs.size, 100))), V - 1)
        rows.append(np.repeat(docs, 100))
        cols.append(words.ravel())
    import scipy.sparse as sp

    counts = sp.csr_matrix((np.ones(D * 100, dtype=np.int32),
                            (np.concatenate(rows), np.concatenate(cols))), shape=(D, V))
    vocab = np.array([f"term{j}" for j in range(V)])
    titles = np.array([f"synthetic document {d} on topic {dominant[d]}" for d in range(D)])
    corpus = Corpus(counts, vocabulary=vocab, titles=titles)
    # links: 4 per document, 80% to a document of the same dominant topic
    by_topic = [np.flatnonzero(dominant == k) for k in range(K)]
    source = np.repeat(np.arange(D), 4)
    same = rng.random(source.size) < 0.8
    target = rng.integers(0, D, size=source.size)
    for k in range(K):
        pick = same & (dominant[source] == k)
        target[pick] = rng.choice(by_topic[k], size=int(pick.sum()))
    keep = source != target
    links = Links.from_pairs(np.column_stack([source[keep], target[keep]]), D,
                             directed=False, duplicates="drop")
    model = RelationalTopicModel(K, random_state=seed)
    model.components_ = phi
    model.doc_topic_ = theta
    model.train_zbar_ = theta
    model.weights_ = np.diag(rng.uniform(5, 20, K)) + rng.normal(0, 0.5, (K, K))
    model.topic_weights_ = theta.mean(axis=0)
    model.vocabulary_ = vocab
    model.alpha_ = np.full(K, 0.1)
    model.train_doc_ids_ = np.arange(D)
    model.train_titles_ = titles
    model.n_iter_, model.n_pairs_, model.n_negatives_ = 1, links.n_links, 0
    model.directed_, model.mean_doc_length_, model.random_state_ = False, 100.0, seed
    with tempfile.TemporaryDirectory() as tmp:
        from topiclink import load

        model = load(model.save(Path(tmp) / "synthetic.npz"))
    return model, corpus, links


def _cora(iterations: int) -> tuple[RelationalTopicModel, ReportInputs]:
    from topiclink.data.splits import train_test_split_documents
    from topiclink.datasets import load_bundled_cora
    from topiclink.estimators.base import make_paper_model

    ds = load_bundled_cora()
    fold = train_test_split_documents(ds.corpus, ds.links, test_size=0.1, random_state=0)
    model = make_paper_model("Gibbs-gRTM", n_topics=15, c=4.0, doc_topic_prior=0.5,
                             negative_ratio=0.01, max_iter=iterations, n_average=10,
                             evaluate_every=0, random_state=0)
    model.fit(fold.train_corpus, links=fold.train_links)
    return model, ReportInputs(corpus=fold.train_corpus, links=fold.train_links,
                               held_out=fold.test_corpus, held_out_links=fold.test_links)


def _measure(model: RelationalTopicModel, inputs: ReportInputs, out: Path) -> dict:
    t0 = time.perf_counter()
    report = build_report(model, inputs=inputs)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    report.save(out)
    saved = time.perf_counter() - t0
    html = report.html
    from bokeh.resources import Resources

    library = Resources(mode="inline", components=["bokeh"]).render_js()
    data = re.search(r'id="topiclink-data">(.*?)</script>', html, re.S).group(1)
    return {"documents": int(np.shape(model.doc_topic_)[0]),
            "topics": int(np.shape(model.components_)[0]),
            "page_mb": round(report.size_bytes / 1e6, 2),
            "bokehjs_mb": round(len(library.encode()) / 1e6, 2),
            "view_data_mb": round(len(data.encode()) / 1e6, 2),
            "build_seconds": round(built, 2), "data_seconds": report.data["build_seconds"],
            "save_seconds": round(saved, 3), "views": list(report.data["views"]),
            "offline": not re.search(r"<(script|link|img|iframe)[^>]*(src|href)=[\"']?https?:",
                                     html)}


CHROMIUM = Path("/usr/bin/chromium")


def browser_load(path: Path, loads: int) -> dict:
    """Median seconds from navigation to ``topiclinkReport.ready`` over ``loads`` fresh
    pages of headless Chromium (offline: requests other than file:/data: refused)."""
    from playwright.sync_api import sync_playwright

    times, errors = [], 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        for _ in range(loads):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.route("**/*", lambda route: route.continue_()
                          if route.request.url.startswith(("file:", "data:"))
                          else route.abort())
            page = context.new_page()
            console: list[str] = []
            page.on("console", lambda m, seen=console: seen.append(m.type))
            page.on("pageerror", lambda e, seen=console: seen.append("error"))
            t0 = time.perf_counter()
            page.goto(path.as_uri(), wait_until="load")
            ready = page.evaluate("() => window.topiclinkReport.ready")
            times.append(time.perf_counter() - t0)
            errors += sum(kind == "error" for kind in console) + (ready is not True)
            context.close()
        browser.close()
    return {"browser_load_seconds": round(float(np.median(times)), 2),
            "browser_load_seconds_all": [round(s, 2) for s in times],
            "browser_console_errors": errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent / "results" / "report_size.json")
    parser.add_argument("--browser", action="store_true",
                        help="also time the pages' load in headless Chromium")
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args()
    results = {"python": platform.python_version(), "machine": platform.machine(),
               "cpu": _cpu(), "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        model, inputs = _cora(args.iterations)
        build_report(model, inputs=inputs)          # warm-up (imports, Numba)
        results["cases"]["cora"] = _measure(model, inputs, Path(tmp) / "cora.html")
        if args.browser:
            results["cases"]["cora"].update(browser_load(Path(tmp) / "cora.html", args.loads))
        print("cora", results["cases"]["cora"])
        model, corpus, links = _synthetic_grtm(25_000, 50, 20_000)
        results["cases"]["synthetic-25k"] = _measure(
            model, ReportInputs(corpus=corpus, links=links), Path(tmp) / "s25k.html")
        if args.browser:
            results["cases"]["synthetic-25k"].update(
                browser_load(Path(tmp) / "s25k.html", args.loads))
        print("synthetic-25k", results["cases"]["synthetic-25k"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
