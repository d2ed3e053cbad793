"""Fixed-seed outputs of every estimator, recorded before the engine refactor (issue 9).

``python tests/golden/record.py`` writes ``tests/golden/fixed_seed_outputs.npz``
(``--add-state`` only adds missing keys, keeping every recorded array);
``tests/test_golden.py`` refits every configuration and compares: integer outputs and
BLAS-free floats bit for bit, BLAS-dependent floats to a tolerance (see there).  The
configurations cover each code path: sequential and AD-LDA LDA, the four Gibbs relational
variants (full/diagonal, logistic/hinge, exact/approx) with one and two
threads, binary and multiclass gSLDA/MedLDA, and both variational baselines.

The recorder only uses constructor keywords and verbs that exist before and after the
refactor, so the same file checks the new code.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "fixed_seed_outputs.npz"


def datasets() -> dict[str, Any]:
    from topiclink.datasets import make_rtm_data, make_slda_data

    (corpus, links), _ = make_rtm_data(n_docs=50, n_words=60, n_topics=3, doc_length=25,
                                       random_state=11)
    (scorpus, y), _ = make_slda_data(n_docs=60, n_words=60, n_topics=3, doc_length=25,
                                     random_state=12)
    y3 = np.arange(scorpus.n_docs) % 3
    return {"corpus": corpus, "links": links, "scorpus": scorpus, "y": y, "y3": y3}


def configurations() -> dict[str, tuple[str, dict[str, Any], str]]:
    """name -> (class name, constructor keywords, which data)."""
    rtm = {"n_topics": 3, "max_iter": 12, "negative_ratio": 0.2, "random_state": 5,
           "evaluate_every": 1}
    return {
        "lda": ("LDA", {"n_topics": 3, "max_iter": 15, "random_state": 3}, "words"),
        "lda_alpha": ("LDA", {"n_topics": 4, "max_iter": 10, "random_state": 4,
                              "doc_topic_prior": [0.2, 0.3, 0.1, 0.5]}, "words"),
        # recorded with the pre-refactor API, where n_jobs=2 meant AD-LDA over 2 chunks;
        # n_jobs no longer changes a chain: the same sampler is scheme="adlda" (2 shards;
        # parallel="adlda", n_shards=2 until 0.2.0)
        "lda_adlda2": ("LDA", {"n_topics": 3, "max_iter": 10, "random_state": 3,
                               "scheme": "adlda", "executor": 2}, "words"),
        "grtm": ("RelationalTopicModel", {**rtm, "c": 2.0}, "links"),
        "grtm_threads": ("RelationalTopicModel", {**rtm, "c": 2.0, "n_jobs": 2}, "links"),
        "grtm_avg": ("RelationalTopicModel", {**rtm, "n_average": 4}, "links"),
        "rtm_diag": ("RelationalTopicModel", {**rtm, "weights": "diagonal"}, "links"),
        "gmmrtm": ("RelationalTopicModel", {**rtm, "loss": "hinge", "c": 2.0}, "links"),
        "approx_grtm": ("RelationalTopicModel", {**rtm, "approx": True}, "links"),
        "mmrtm_diag_threads": ("RelationalTopicModel", {**rtm, "loss": "hinge",
                                                        "weights": "diagonal", "n_jobs": 2},
                               "links"),
        "gslda": ("SupervisedTopicModel", {"n_topics": 3, "max_iter": 12, "c": 4.0,
                                           "random_state": 6, "evaluate_every": 1}, "labels"),
        "medlda": ("SupervisedTopicModel", {"n_topics": 3, "max_iter": 12, "c": 4.0,
                                            "loss": "hinge", "random_state": 6,
                                            "n_average": 3}, "labels"),
        "gslda_multiclass": ("SupervisedTopicModel", {"n_topics": 3, "max_iter": 8,
                                                      "c": 4.0, "random_state": 7},
                             "labels3"),
        "varrtm": ("VariationalRTM", {"n_topics": 3, "max_iter": 10, "random_state": 8},
                   "links"),
        "varrtm_var": ("VariationalRTM", {"n_topics": 3, "max_iter": 10, "random_state": 8,
                                          "topic_inference": "variational", "tol": 0.0},
                       "links"),
        "vslda": ("VariationalSLDA", {"n_topics": 3, "max_iter": 8, "c": 4.0,
                                      "random_state": 9}, "labels"),
    }


def fit_one(name: str, data: dict[str, Any]) -> dict[str, np.ndarray]:
    import topiclink

    cls_name, kwargs, kind = configurations()[name]
    est = getattr(topiclink, cls_name)(**kwargs)
    if kind == "words":
        est.fit(data["corpus"])
        new = data["corpus"].subset([0, 1, 2])
    elif kind == "links":
        est.fit(data["corpus"], links=data["links"])
        new = data["corpus"].subset([0, 1, 2])
    else:
        y = data["y"] if kind == "labels" else data["y3"]
        est.fit(data["scorpus"], y)
        new = data["scorpus"].subset([0, 1, 2])
    if cls_name in ("VariationalRTM", "VariationalSLDA"):
        # transform was phibar = E_q[zbar] for the variational models before issue 9; it is
        # now E_q[theta] (the TopicsMixin contract) and the same phibar is topic_features
        transformed = est.topic_features(new)
    else:
        transformed = est.transform(new)
    out = {"components_": est.components_, "doc_topic_": est.doc_topic_,
           "transform": transformed,
           "log_likelihood": np.asarray(est.trace_["log_likelihood"])}
    for attr in ("weights_", "coef_", "train_zbar_", "zbar_", "intercept_"):
        if hasattr(est, attr):
            out[attr] = np.asarray(getattr(est, attr))
    if kind == "links":
        out["link_scores"] = est.link_scores(new)
    if kind.startswith("labels"):
        out["decision_function"] = est.decision_function(new)
    for key in ("link_loglik", "label_loglik", "link_log_likelihood", "train_accuracy"):
        if key in est.trace_:
            out[f"trace_{key}"] = np.asarray(est.trace_[key])
    out.update(integer_state(est))
    return out


def integer_state(est: Any) -> dict[str, np.ndarray]:
    """Every integer array of the final sampler state (topic assignments, counts, pair
    indexes, the kernels' xoshiro states): the chain itself, compared exactly."""
    import dataclasses

    state = est.state_
    return {f"state_{f.name}": getattr(state, f.name) for f in dataclasses.fields(state)
            if isinstance(getattr(state, f.name), np.ndarray)
            and getattr(state, f.name).dtype.kind in "iub"}


def add_integer_state() -> dict[str, np.ndarray]:
    """The recorded arrays plus the integer state of every configuration, leaving every
    recorded array as it was (they were added after issue 22, on a machine whose outputs
    matched the recording)."""
    with np.load(OUTPUT, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    data = datasets()
    for name in configurations():
        for key, value in fit_one(name, data).items():
            arrays.setdefault(f"{name}/{key}", np.asarray(value))
    return arrays


def record() -> dict[str, np.ndarray]:
    data = datasets()
    arrays: dict[str, np.ndarray] = {}
    for name in configurations():
        for key, value in fit_one(name, data).items():
            arrays[f"{name}/{key}"] = np.asarray(value)
    return arrays


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1] / "src"))
    arrays = add_integer_state() if "--add-state" in sys.argv else record()
    np.savez_compressed(OUTPUT, **arrays)
    print(f"wrote {len(arrays)} arrays to {OUTPUT}")
