"""``topiclink demo``: relational topic models on the bundled Cora corpus, no download.

Gibbs-gRTM (full weight matrix, logistic loss) and the Var-RTM baseline are trained on
90% of the 2410 Cora abstracts of the R ``lda`` package; for the held-out 10% the demo
reports link AUC and link rank (rank of the truly linked training papers among all of
them) against a random ranking, prints link suggestions with titles for one held-out
paper, and writes the weight-matrix figure.  With an output folder it ends by writing the
gRTM's HTML report (``demo_report.html``: topics, documents, suggested links, held-out
precision@k, the network; :mod:`topiclink.report`) and how to open it.

A last section fits LMV (topic-adjusted visibility, :class:`VisibilityTopicModel`) to the
directed citations among the 400 most connected Cora papers (K = 5, a few seconds),
prints its summary and the most visible papers, and writes the blockmodel heat map and
the visibility-against-citations scatter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["run_demo"]


def run_demo(topics: int = 15, iterations: int = 150, c: float = 4.0, seed: int = 0,
             out: Path | None = Path("."), verbose: bool = False,
             echo: Callable[[str], None] = print) -> dict[str, float]:
    """Run the demo; returns the figures it printed (for tests)."""
    from topiclink.data.splits import train_test_split_documents
    from topiclink.datasets import load_bundled_cora
    from topiclink.estimators.base import make_paper_model
    from topiclink.metrics import link_auc, link_rank

    t_start = time.perf_counter()
    ds = load_bundled_cora()
    fold = train_test_split_documents(ds.corpus, ds.links, test_size=0.1, random_state=seed)
    echo(f"Cora (R lda package, bundled): {ds.corpus.n_docs} abstracts with titles, "
         f"{ds.corpus.n_words} words, {ds.links.n_links} citation links (undirected)")
    echo(f"training on {fold.n_train} papers and {fold.train_links.n_links} links; "
         f"{fold.n_test} held-out papers have {fold.n_test_links} links to training papers\n")

    grtm = make_paper_model("Gibbs-gRTM", n_topics=topics, c=c, doc_topic_prior=0.5,
                            negative_ratio=0.01, max_iter=iterations, n_average=10,
                            evaluate_every=0, n_jobs=-1, random_state=seed, verbose=verbose)
    t0 = time.perf_counter()
    grtm.fit(fold.train_corpus, links=fold.train_links)
    grtm_s = time.perf_counter() - t0
    var = make_paper_model("Var-RTM", n_topics=topics, random_state=seed)
    t0 = time.perf_counter()
    var.fit(fold.train_corpus, links=fold.train_links)
    var_s = time.perf_counter() - t0

    rng = np.random.default_rng(seed)
    results = {
        "Gibbs-gRTM": (grtm.link_scores(fold.test_corpus), grtm_s),
        "Var-RTM": (var.link_scores(fold.test_corpus), var_s),
        "random": (rng.random((fold.n_test, fold.n_train)), 0.0),
    }
    echo(f"{'model':<12s} {'link AUC':>9s} {'link rank':>10s} {'train s':>8s}")
    figures: dict[str, float] = {}
    for name, (scores, seconds) in results.items():
        auc = link_auc(scores, fold.test_links)["roc_auc"]
        rank = link_rank(scores, fold.test_links)
        figures[f"{name}_auc"] = auc
        figures[f"{name}_link_rank"] = rank
        echo(f"{name:<12s} {auc:9.3f} {rank:10.1f} {seconds:8.1f}")
    echo(f"(link rank: mean rank of the truly linked training papers among {fold.n_train}; "
         f"random = {(fold.n_train + 1) / 2:.0f})\n")

    echo(grtm.summary(n_words=6))
    # link suggestions for the held-out paper with the most links to training papers
    degree = np.asarray(fold.test_links.sum(axis=1)).ravel()
    q = int(np.argmax(degree))
    truth = set(fold.test_links[q].indices.tolist())
    query_title = ds.corpus.titles[fold.test_index[q]]
    table = grtm.suggest_links(fold.test_corpus.subset([q]), top=8)
    echo(f"\nsuggested citations for the held-out paper \"{query_title}\" "
         f"({len(truth)} true links; * marks one):")
    for row in table.itertuples():
        mark = "*" if row.target in truth else " "
        echo(f"  {row.rank}. {mark} {row.title[:90]}")
    figures["suggestion_hits"] = float(sum(t in truth for t in table["target"]))
    if out is not None:
        from topiclink.plotting import plot_weight_matrix

        out.mkdir(parents=True, exist_ok=True)
        ax = plot_weight_matrix(grtm, n_words=3)
        path = out / "demo_weights.png"
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
        echo(f"\nweight matrix with top words: {path}")
    figures.update(_visibility_section(seed=seed, out=out, verbose=verbose, echo=echo))
    if out is not None:
        figures.update(_report_section(grtm, fold, out, echo))
    figures["seconds"] = time.perf_counter() - t_start
    echo(f"demo finished in {figures['seconds']:.1f} s")
    return figures


def _report_section(grtm: Any, fold: Any, out: Path, echo: Callable[[str], None]
                    ) -> dict[str, float]:
    """The gRTM's HTML report (with its training documents, links and the held-out
    papers) written to ``out/demo_report.html``; skipped with a note without bokeh."""
    try:
        from topiclink.report import ReportInputs, build_report

        report = build_report(grtm, inputs=ReportInputs(
            corpus=fold.train_corpus, links=fold.train_links, held_out=fold.test_corpus,
            held_out_links=fold.test_links, source="data: bundled Cora, training split"),
            title="topiclink demo: Gibbs-gRTM on Cora")
    except ImportError as exc:
        echo(f"\nreport skipped: {exc}")
        return {}
    path = report.save(out / "demo_report.html")
    echo(f"\nreport of the gRTM ({report.size_bytes / 1e6:.1f} MB, {report.seconds:.1f} s): "
         f"{path}\nopen it in a browser, no network needed: {path.resolve().as_uri()}")
    return {"report_seconds": report.seconds, "report_mb": report.size_bytes / 1e6}


def _visibility_section(seed: int, out: Path | None, verbose: bool,
                        echo: Callable[[str], None], n_docs: int = 400, topics: int = 5,
                        iterations: int = 30) -> dict[str, float]:
    """LMV on the directed citations among the ``n_docs`` most connected Cora papers."""
    from topiclink.datasets import load_bundled_cora
    from topiclink.estimators import VisibilityTopicModel

    ds = load_bundled_cora(directed=True)  # j -> i: j cites i
    cites = ds.links
    degree = cites.degrees()
    keep = np.sort(np.argsort(-degree, kind="stable")[:n_docs])
    corpus, links = ds.corpus.subset(keep), cites.subgraph(keep)
    echo(f"\ntopic-adjusted visibility (LMV, Tan, Chan & Zheng 2016) on the {corpus.n_docs} "
         f"most connected papers and their {links.n_links} directed citations, K = {topics}:")
    # tol 1e-4: a demo's tolerance (the default 1e-5, the paper's, takes ~175 iterations
    # on a subset this small); lmv.stop_reason_ says which rule ended the fit
    lmv = VisibilityTopicModel(topics, max_iter=iterations, tol=1e-4, random_state=seed,
                               verbose=verbose)
    t0 = time.perf_counter()
    lmv.fit(corpus, links=links)
    lmv_s = time.perf_counter() - t0
    echo(lmv.summary(n_words=6))
    cited = np.bincount(links.target, minlength=corpus.n_docs)
    tau = np.asarray(lmv.visibility_)
    echo("most visible papers (visibility, times cited here):")
    for d in np.argsort(-tau, kind="stable")[:3]:
        echo(f"  {tau[d]:.2f}  {int(cited[d]):3d}  {str(corpus.titles[d])[:80]}")
    echo(f"(LMV fitted in {lmv_s:.1f} s; {lmv.stop_reason_})")
    if out is not None:
        import matplotlib.pyplot as plt

        from topiclink.plotting import plot_blockmodel, plot_visibility_vs_citations

        out.mkdir(parents=True, exist_ok=True)
        for name, plot in (("demo_blockmodel.png", lambda: plot_blockmodel(lmv, n_words=3)),
                           ("demo_visibility.png",
                            lambda: plot_visibility_vs_citations(lmv, links))):
            ax = plot()
            path = out / name
            ax.figure.savefig(path, dpi=120, bbox_inches="tight")
            plt.close(ax.figure)
            echo(f"{'blockmodel heat map' if 'block' in name else 'visibility scatter'}: "
                 f"{path}")
    return {"LMV_seconds": lmv_s, "LMV_max_visibility": float(tau.max())}
