"""The supervised view of gSLDA / MedLDA / one-vs-all / vSLDA: the decision weight of
every topic for every class, and the training documents the model misclassifies."""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus

__all__ = ["decision_weights", "supervised_view"]


def decision_weights(model: Any) -> tuple[np.ndarray, list[str]]:
    """(n_classifiers, K) weights eta and the name of each classifier's row ("class c" for
    one-vs-all, "classes[1] vs classes[0]" when binary)."""
    coef = np.atleast_2d(np.asarray(model.coef_, dtype=np.float64))
    classes = [str(c) for c in np.asarray(model.classes_).tolist()]
    if len(classes) == 2 and coef.shape[0] == 1:
        return coef, [f"{classes[1]} (vs {classes[0]})"]
    return coef, [f"{c} (vs the rest)" for c in classes[:coef.shape[0]]]


def supervised_view(model: Any, corpus: Corpus | None, labels: np.ndarray | None, *,
                    max_docs: int = 5000, max_listed: int = 200, seed: int = 0
                    ) -> dict[str, Any]:
    """The supervised view's data (JSON-able); the misclassified documents are predicted
    when the documents and their labels are attached (at most ``max_docs``, drawn at
    random)."""
    coef, rows = decision_weights(model)
    view: dict[str, Any] = {
        "weights": np.round(coef, 4).tolist(), "rows": rows,
        "classes": [str(c) for c in np.asarray(model.classes_).tolist()],
        "misclassified": None, "accuracy": None, "n_predicted": 0,
    }
    if corpus is None or labels is None:
        view["note"] = ("the model file holds neither the documents nor their labels: "
                        "attach the data (--dataset or --data) to list the misclassified "
                        "documents")
        return view
    D = corpus.n_docs
    docs = np.arange(D) if D <= max_docs else np.sort(
        np.random.default_rng(seed).choice(D, max_docs, replace=False))
    part = corpus if docs.size == D else corpus.subset(docs)
    predicted = np.asarray(model.predict(part))
    truth = np.asarray(labels)[docs]
    wrong = np.flatnonzero(predicted.astype(str) != truth.astype(str))
    view["accuracy"] = float(1.0 - wrong.size / max(docs.size, 1))
    view["n_predicted"] = int(docs.size)
    view["n_misclassified"] = int(wrong.size)
    listed = wrong[:max_listed]
    view["misclassified"] = [[int(docs[i]), str(truth[i]), str(predicted[i])] for i in listed]
    view["note"] = (f"predicted the {docs.size} training documents" if docs.size == D else
                    f"predicted {docs.size} training documents drawn at random of {D}")
    if wrong.size > max_listed:
        view["note"] += f"; the first {max_listed} of {wrong.size} misclassified are listed"
    return view
