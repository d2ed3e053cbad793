"""Tiny fitted models of every family and the data their reports attach, shared by the
report tests (``test_report.py``: the page's content; ``test_report_browser.py``: the page
in a real browser)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

import topiclink as tl
from topiclink.data import Links
from topiclink.datasets import make_bpbfm_data, make_rtm_data
from topiclink.report import ReportInputs

__all__ = ["FAMILIES", "GROUPED", "PRESIDENTS", "make_report_data", "fit_family", "family_inputs"]

FAMILIES: dict[str, set[str]] = {  # name -> the views its report has besides the summary
    "LDA": {"topics", "documents"},
    "gRTM": {"topics", "documents", "relational"},
    "Var-RTM": {"topics", "documents", "relational"},
    "LDA+Reg": {"topics", "documents", "relational"},
    "gSLDA": {"topics", "documents", "supervised"},
    "MedLDA-ova": {"topics", "documents", "supervised"},
    "vSLDA": {"topics", "documents", "supervised"},
    "LMV": {"topics", "documents", "relational", "visibility"},
    "LMVS": {"topics", "documents", "relational", "visibility"},
    "PLLDA": {"topics", "documents", "relational", "visibility"},
    "BPBFM": {"entities"},
    "KTM": {"topics", "documents", "covariate"},
    "DMR": {"topics", "documents", "covariate"},
}


#: the families whose reports group the documents by "president" (and band the years)
GROUPED = ("KTM", "DMR")

#: the fixture's "presidents", one per five years from 1990
PRESIDENTS = ("Adams", "Baker", "Clark", "Davis")


def make_report_data() -> dict[str, Any]:
    """40 titled documents of 3 topics with their links (undirected and directed), binary
    and 3-class labels, features, a year column (1990-2009) with the sitting "president"
    of each year (four of five years each), and a 25-entity, 3-relation tensor."""
    (corpus, links), _ = make_rtm_data(n_docs=40, n_words=60, n_topics=3, doc_length=30,
                                       random_state=9)
    titles = np.array([f"paper {i} about {'graphs' if i % 2 else 'strings'}"
                       for i in range(corpus.n_docs)])
    corpus = tl.Corpus(corpus.counts, vocabulary=corpus.vocabulary, titles=titles)
    tensor, _ = make_bpbfm_data(25, 3, 3, random_state=9, density=0.08)
    year = 1990 + np.arange(corpus.n_docs) % 20
    return {"corpus": corpus, "links": links,
            "directed": Links.from_pairs(links.pairs, links.n_docs, directed=True),
            "y2": np.arange(corpus.n_docs) % 2, "y3": np.arange(corpus.n_docs) % 3,
            "features": np.random.default_rng(9).random((corpus.n_docs, 2)),
            "frame": pd.DataFrame({"year": year}),
            "year": year, "president": np.array(PRESIDENTS)[(year - 1990) // 5],
            "tensor": tensor}


def fit_family(name: str, d: dict[str, Any]) -> Any:
    """The family ``name`` (a key of :data:`FAMILIES`) fitted briefly on ``d``."""
    kw = {"max_iter": 4, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "LDA":
            return tl.LDA(3, **kw).fit(d["corpus"])
        if name == "gRTM":
            return tl.RelationalTopicModel(3, negative_ratio=0.1, **kw).fit(
                d["corpus"], links=d["links"])
        if name == "Var-RTM":
            return tl.VariationalRTM(3, **kw).fit(d["corpus"], links=d["links"])
        if name == "LDA+Reg":
            return tl.LDARegression(3, **kw).fit(d["corpus"], links=d["links"])
        if name == "gSLDA":
            return tl.SupervisedTopicModel(3, **kw).fit(d["corpus"], d["y2"])
        if name == "MedLDA-ova":
            return tl.SupervisedTopicModel(3, loss="hinge", **kw).fit(d["corpus"], d["y3"])
        if name == "vSLDA":
            return tl.VariationalSLDA(3, **kw).fit(d["corpus"], d["y2"])
        if name == "LMV":
            return tl.VisibilityTopicModel(3, **kw).fit(d["corpus"], links=d["directed"])
        if name == "LMVS":
            return tl.VisibilityTopicModel(3, inference="stochastic", batch_size=20,
                                           **kw).fit(d["corpus"], links=d["directed"])
        if name == "PLLDA":
            return tl.VisibilityTopicModel(3, visibility=False, **kw).fit(
                d["corpus"], links=d["directed"])
        if name == "BPBFM":
            return tl.BilinearPoissonFactorModel(3, max_iter=12, burn_in=4, thinning=2,
                                                 random_state=0).fit(d["tensor"])
        if name == "KTM":
            return tl.KernelTopicModel(3, max_iter=2, random_state=0).fit(
                d["corpus"], features=d["features"])
        if name == "DMR":
            return tl.DMR(3, max_iter=12, burn_in=4, optimize_every=4, random_state=0).fit(
                d["corpus"], features=d["frame"])
    raise KeyError(name)


def family_inputs(name: str, d: dict[str, Any]) -> ReportInputs:
    """The data the report of family ``name`` attaches (corpus, links, labels, tensor;
    KTM and DMR: the year as covariate, the documents grouped by "president")."""
    inputs = ReportInputs(corpus=None if name == "BPBFM" else d["corpus"])
    if name in ("gRTM", "Var-RTM", "LDA+Reg"):
        inputs.links = d["links"]
    if name in ("LMV", "LMVS", "PLLDA"):
        inputs.links = d["directed"]
    if name in ("gSLDA", "vSLDA"):
        inputs.labels = d["y2"]
    if name == "MedLDA-ova":
        inputs.labels = d["y3"]
    if name == "BPBFM":
        inputs.tensor = d["tensor"]
    if name in GROUPED:
        inputs.covariate, inputs.covariate_name = d["year"].astype(float), "year"
        inputs.groups, inputs.group_name = d["president"], "president"
    return inputs
