"""Model selection for knowledge graphs on the validation triples, PyKEEN's HPO pipeline in
miniature: every candidate configuration is fitted on the training triples and ranked by
its filtered MRR on the validation triples, within a CPU budget; only the chosen one is
scored on the test triples, once.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sklearn.base import clone

from topiclink.datasets.base import Dataset
from topiclink.experiments.evaluation import evaluate_triples

__all__ = ["KGSelection", "candidate_grid", "select_kg_model"]

logger = logging.getLogger(__name__)


def candidate_grid(estimators: Mapping[str, Any], grid: Mapping[str, Sequence[Any]] | None
                   = None) -> list[tuple[str, Any]]:
    """``(label, unfitted estimator)`` for every estimator x every combination of
    ``grid`` (parameter -> values; a parameter an estimator does not take is left out of
    its combinations), labelled ``"name k=v ..."``."""
    grid = dict(grid or {})
    out: list[tuple[str, Any]] = []
    for name, est in estimators.items():
        accepted = set(est.get_params(deep=False))
        keys = [k for k in grid if k in accepted]
        for values in itertools.product(*(grid[k] for k in keys)):
            params = dict(zip(keys, values, strict=True))
            label = " ".join([name, *(f"{k}={v}" for k, v in params.items())])
            out.append((label, clone(est).set_params(**params)))
    if not out:
        raise ValueError("no candidate to select from: give at least one estimator")
    return out


@dataclass
class KGSelection:
    """What :func:`select_kg_model` found: ``table`` (one row per candidate: label,
    validation MRR / Hits@1 / Hits@10, fit seconds, status ``fitted`` or ``skipped``
    (budget)), ``best_label`` and ``best_model`` (fitted), and ``test`` (the chosen
    model's :func:`~topiclink.experiments.evaluation.evaluate_triples` table on the test
    triples; None without test triples)."""

    table: pd.DataFrame
    best_label: str
    best_model: Any
    test: pd.DataFrame | None

    def test_mrr(self) -> float | None:
        """The chosen model's pooled test MRR (None without test triples)."""
        if self.test is None:
            return None
        row = self.test[(self.test["metric"] == "mrr") & (self.test["queries"] == "both")]
        return float(row["value"].iloc[0])


def _pooled(table: pd.DataFrame, metric: str) -> float:
    row = table[(table["metric"] == metric) & (table["queries"] == "both")]
    return float(row["value"].iloc[0])


def select_kg_model(ds: Dataset, candidates: Sequence[tuple[str, Any]], *,
                    budget_seconds: float | None = None, test: bool = True) -> KGSelection:
    """Fit each candidate on ``ds.tensor["train"]``, rank by pooled filtered MRR on
    ``ds.tensor["valid"]`` (ties: the earlier candidate), and score the best once on the
    test triples.

    Parameters
    ----------
    ds : a dataset with train and valid triples (``load_dataset("wn18rr")``, a user's
        ``train.txt`` / ``valid.txt`` / ``test.txt`` folder)
    candidates : ``(label, unfitted estimator)`` pairs, e.g. from :func:`candidate_grid`;
        tried in this order
    budget_seconds : CPU budget of the fits and validations together (process time): once
        spent, the remaining candidates are skipped (counted in one log line and marked
        in the table); the first candidate always runs.  None: no budget
    test : score the chosen model on the test triples (when ``ds`` has them)

    Returns
    -------
    KGSelection
    """
    tensors = ds.tensor or {}
    for split in ("train", "valid"):
        if split not in tensors or tensors[split].n_entries == 0:
            raise ValueError(f"dataset {ds.name!r} has no {split} triples: model selection "
                             f"needs train and valid splits (its splits: "
                             f"{', '.join(tensors) or 'none'})")
    if budget_seconds is not None and not budget_seconds > 0:
        raise ValueError(f"budget_seconds must be > 0, got {budget_seconds}")
    labels = [str(label) for label, _ in candidates]
    if len(set(labels)) != len(labels):
        raise ValueError("candidate labels must be distinct")
    rows: list[dict[str, Any]] = []
    best: tuple[float, str, Any] | None = None
    spent = 0.0
    for label, estimator in candidates:
        if budget_seconds is not None and rows and spent >= budget_seconds:
            rows.append({"candidate": label, "status": "skipped"})
            continue
        t0 = time.process_time()
        model = clone(estimator).fit(tensors["train"])
        fit_s = time.process_time() - t0
        valid = evaluate_triples(model, ds, "valid")
        spent += time.process_time() - t0
        mrr = _pooled(valid, "mrr")
        rows.append({"candidate": label, "status": "fitted", "valid_mrr": mrr,
                     "valid_hits_at_1": _pooled(valid, "hits_at_1"),
                     "valid_hits_at_10": _pooled(valid, "hits_at_10"),
                     "valid_mrr_head": float(valid[(valid["metric"] == "mrr")
                                                   & (valid["queries"] == "head")]
                                             ["value"].iloc[0]),
                     "valid_mrr_tail": float(valid[(valid["metric"] == "mrr")
                                                   & (valid["queries"] == "tail")]
                                             ["value"].iloc[0]),
                     "fit_seconds": fit_s})
        logger.info("%s: valid MRR %.4f (%.1f s)", label, mrr, fit_s)
        if best is None or mrr > best[0]:
            best = (mrr, label, model)
    skipped = sum(r["status"] == "skipped" for r in rows)
    if skipped:
        logger.warning("%d of %d candidates skipped: the budget of %.0f s was spent",
                       skipped, len(rows), budget_seconds)
    assert best is not None
    table = pd.DataFrame(rows, columns=["candidate", "status", "valid_mrr", "valid_hits_at_1",
                                        "valid_hits_at_10", "valid_mrr_head",
                                        "valid_mrr_tail", "fit_seconds"])
    has_test = "test" in tensors and tensors["test"].n_entries > 0
    scored = evaluate_triples(best[2], ds, "test") if test and has_test else None
    return KGSelection(table, best[1], best[2], scored)
