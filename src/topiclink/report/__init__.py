"""Reports of fitted models: one self-contained HTML page per model, for every family.

:func:`build_report` (``build_report(model, corpus)``; ``topiclink report MODEL.npz`` on
the command line) gives a :class:`Report`, shown inline by Jupyter: the view data
(:func:`report_data`, plain JSON-able) and a page that opens offline (BokehJS and the
page's script inlined; nothing fetched).  The views follow the
model's capabilities:

- topics (every topic model): term-score labels, prevalence, top words with the pyLDAvis
  relevance slider, the topic map (classical MDS of Jensen-Shannon distances);
- documents: search by title, id or words, a document's topic mix, its nearest documents;
- relational (gRTM, Var-RTM, LDA + Regression, LMV): the link matrix, suggested links with
  the true links marked, held-out precision@k, the network by dominant topic;
- visibility (LMV / PLLDA): visibility ranking with citation counts, who cites whom;
- supervised (gSLDA, MedLDA, one-vs-all, vSLDA): decision weights, misclassified documents;
- entities (BPBFM): relation matrices, entities per factor, predicted tails with intervals;
- covariate (KTM, DMR, or an attached covariate): topic prevalence over it (time).

:func:`to_pyldavis` gives the keyword arguments of ``pyLDAvis.prepare``.
"""

from topiclink.report.build import Report, build_report
from topiclink.report.data import Limits, report_data
from topiclink.report.inputs import ReportInputs, inputs_from_dataset
from topiclink.report.pyldavis import to_pyldavis

__all__ = ["Limits", "Report", "ReportInputs", "build_report", "inputs_from_dataset",
           "report_data", "to_pyldavis"]
