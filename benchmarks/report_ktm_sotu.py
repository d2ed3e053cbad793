"""The report of a KTM on the State of the Union: size and build time without and with the
sitting-president view, and screenshots of the page.

Fits :class:`~topiclink.KernelTopicModel` (K = 10, the paper's SOTU kernel of the year and
the president, ``--iterations`` outer iterations) on every address of 1790-2011 over the
5,000 most frequent terms (:func:`topiclink_reproductions.ktm.prepare_sotu`), then builds
its report with ``build_report(model, corpus)``: the corpus's metadata has ``year`` (the
covariate) and ``president`` (chosen automatically as the grouping), and once more with
``group_column=False`` (the page as it was before the president view).  Writes both pages'
size (MB) and build time as JSON and, with ``--screenshots DIR``, a full-page screenshot
of the page and one of its "Topics over the covariate" section (headless Debian
Chromium driven by Playwright, network cut off, as ``tests/test_report_browser.py``).

    python benchmarks/report_ktm_sotu.py --screenshots benchmarks/results/report_screenshots/real
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import tempfile
import time
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"


def _png(raw: bytes) -> bytes:
    """Reduced to 128 colours when Pillow is there."""
    try:
        from PIL import Image
    except ImportError:
        return raw
    image = Image.open(io.BytesIO(raw)).convert("RGB").quantize(colors=128)
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()


def screenshots(page_path: Path, folder: Path, stem: str) -> list[str]:
    """``<stem>.png`` (the full page) and ``<stem>_presidents.png`` (the covariate
    section); fails on a console error or warning or an outside request."""
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    folder.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 800}, offline=True)
        context.route("**/*", lambda route: route.continue_()
                      if route.request.url.startswith(("file:", "data:"))
                      else (problems.append(route.request.url), route.abort()))
        page = context.new_page()
        page.on("console", lambda m: problems.append(f"{m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.goto(page_path.as_uri(), wait_until="load")
        if page.evaluate("() => window.topiclinkReport.ready") is not True:
            problems.append("Bokeh never drew")
        page.evaluate("() => window.scrollTo(0, 0)")
        (folder / f"{stem}.png").write_bytes(_png(page.screenshot(full_page=True)))
        page.evaluate("() => { document.getElementById('report-header').style.display = "
                      "'none'; }")                    # the sticky header off the section
        section = page.locator("#view-covariate")
        section.scroll_into_view_if_needed()
        (folder / f"{stem}_presidents.png").write_bytes(_png(section.screenshot()))
        context.close()
        browser.close()
    if problems:
        raise RuntimeError(f"the page had problems: {problems}")
    return [f"{stem}.png", f"{stem}_presidents.png"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--screenshots", type=Path, default=None)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "report_ktm_sotu.json")
    args = ap.parse_args()

    import topiclink
    from topiclink import KernelTopicModel
    from topiclink.families.ktm.gp.kernels import SOTUKernel
    from topiclink.report import build_report
    from topiclink_reproductions.ktm import KTMSettings, prepare_sotu

    data = prepare_sotu("sotu", KTMSettings(), seed=args.seed)
    model = KernelTopicModel(10, kernel=SOTUKernel(), max_iter=args.iterations,
                             random_state=args.seed)
    t0 = time.perf_counter()
    model.fit(data.corpus, features=data.ktm_features(data.years, data.presidents))
    fit_seconds = time.perf_counter() - t0
    pages = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case, kwargs in (("without_groups", {"group_column": False}),
                             ("with_presidents", {})):
            report = build_report(model, data.corpus, **kwargs)
            path = report.save(Path(tmp) / f"{case}.html")
            cov = report.data["views"]["covariate"]
            pages[case] = {"page_mb": round(report.size_bytes / 1e6, 3),
                           "build_seconds": round(report.seconds, 2),
                           "views": list(report.data["views"]),
                           "groups": None if cov["groups"] is None else {
                               "column": cov["groups"]["name"],
                               "n_groups": len(cov["groups"]["groups"]),
                               "n_bands": len(cov["groups"]["bands"]["start"])}}
            print(case, pages[case])
            if case == "with_presidents" and args.screenshots is not None:
                pages[case]["screenshots"] = screenshots(path, args.screenshots, "ktm_sotu")
    result = {
        "benchmark": "report_ktm_sotu",
        "protocol": (f"KernelTopicModel K = 10, SOTUKernel (year, president), "
                     f"{args.iterations} outer iterations, seed {args.seed}, on every "
                     f"address of 1790-2011 ({data.corpus.n_docs} documents, "
                     f"{data.corpus.n_words} terms); report = build_report(model, corpus) (year "
                     "and president read from the corpus's metadata), and the same with "
                     "group_column=False"),
        "n_docs": int(data.corpus.n_docs), "n_words": int(data.corpus.n_words),
        "fit_seconds": round(fit_seconds, 1), "pages": pages,
        "topiclink_version": topiclink.__version__,
        "machine": {"python": platform.python_version(), "machine": platform.machine()},
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
