"""A fitted model's report: :func:`build_report` -> :class:`Report` (the view data and
the self-contained HTML page), written with :meth:`Report.save` or shown inline in
Jupyter (``_repr_html_``: the page in a sandboxed ``<iframe srcdoc>``, so that its ids
and script do not meet the notebook's)."""

from __future__ import annotations

import dataclasses
import os
import time
from html import escape
from pathlib import Path
from typing import Any

from topiclink.data.corpus import Corpus
from topiclink.data.links import as_links
from topiclink.persistence import atomic_write
from topiclink.report.data import Limits, report_data
from topiclink.report.html import render_html
from topiclink.report.inputs import ReportInputs, group_from_metadata, time_from_metadata

__all__ = ["Report", "build_report"]


class Report:
    """The report of a fitted model.

    Attributes
    ----------
    data : dict
        The view data (JSON-able; what the page embeds).
    html : str
        The page: one self-contained HTML document that opens offline.
    seconds : float
        Time taken to build it.
    """

    def __init__(self, data: dict[str, Any], html: str, seconds: float) -> None:
        self.data = data
        self.html = html
        self.seconds = seconds

    @property
    def size_bytes(self) -> int:
        """Size of the page in bytes (UTF-8)."""
        return len(self.html.encode("utf-8"))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the page to ``path`` (atomically); returns the path."""
        return atomic_write(Path(path), self.html.encode("utf-8"), what="report")

    def _repr_html_(self) -> str:
        return (f'<iframe srcdoc="{escape(self.html, quote=True)}" style="width: 100%; '
                'height: 820px; border: 1px solid #ddd;" sandbox="allow-scripts '
                'allow-popups"></iframe>')

    def __repr__(self) -> str:
        views = ", ".join(self.data["views"])
        return (f"<topiclink Report of {self.data['model']['name']}: {views}; "
                f"{self.size_bytes / 1e6:.1f} MB>")


def build_report(model: Any, corpus: Corpus | None = None, *, links: Any = None,
                 labels: Any = None, inputs: ReportInputs | None = None,
                 group_column: str | bool | None = None, limits: Limits | None = None,
                 title: str | None = None) -> Report:
    """The report of a fitted model (every family; see :mod:`topiclink.report`).

    Parameters
    ----------
    model : fitted topiclink estimator (or a loaded model file)
    corpus : Corpus, optional
        The training documents in the model's order (search by words, document lengths,
        misclassified documents of a classifier).
    links : Links, (n, 2) array of positions, SciPy adjacency or networkx graph, optional
        Links among the training documents (true links marked, the network, citation
        counts).
    labels : array (n_docs,), optional
        The training documents' labels (a classifier's misclassified documents).
    inputs : ReportInputs, optional
        Everything at once, with held-out documents, a covariate or a tensor (e.g. from
        :func:`~topiclink.report.inputs.inputs_from_dataset`); ``corpus``, ``links`` and
        ``labels`` given too replace its members.
    group_column : str or False, optional
        The corpus's metadata column that groups the documents (e.g. ``"president"``):
        each group's mean topic mix, and the covariate's axis banded by group.  By default
        the grouping of ``inputs``, else ``president`` when the metadata has it; False:
        none.  A one-line DataError lists the columns when there is no such column.
    limits : Limits, optional
        Caps on what is embedded (defaults keep a 25,000-document page to a few MB).
    title : str, optional
        The page's title (default "topiclink report: <paper name>").
    """
    import numpy as np

    t0 = time.perf_counter()
    inputs = dataclasses.replace(inputs) if inputs is not None else ReportInputs()
    if corpus is not None:
        inputs.corpus = corpus
    if links is not None:
        n_docs = int(np.shape(getattr(model, "doc_topic_", np.zeros((0, 0))))[0])
        inputs.links = as_links(links, n_docs, doc_ids=getattr(corpus, "doc_ids", None))
    if labels is not None:
        inputs.labels = np.asarray(labels)
    if inputs.covariate is None:            # e.g. the year in the corpus's metadata
        inputs.covariate, inputs.covariate_name = time_from_metadata(inputs.corpus)
    if group_column is False:
        inputs.groups, inputs.group_name = None, None
    elif group_column is not None or inputs.groups is None:
        found, name = group_from_metadata(inputs.corpus, group_column)
        if found is not None:
            inputs.groups, inputs.group_name = found, name
    data = report_data(model, inputs, limits)
    html = render_html(data, title)
    return Report(data, html, time.perf_counter() - t0)
