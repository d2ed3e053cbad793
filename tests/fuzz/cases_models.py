"""Estimator cases over EVERY registered estimator: parameters that blow memory, fit inputs
(tensors, features, publication times, complex / text / NaN), divergent fits, streams
(``partial_fit`` ids), and model files whose saved arrays or scalars are perturbed (each
saved array of each estimator: shifted, scaled, NaN, negated; header sizes edited).

``cases(area)`` gives the cases of the ``"api"`` and ``"model-files"`` areas
(:func:`tests.fuzz.harness.all_cases` adds them to the other modules' cases).
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tests.fuzz.harness import Case

HUGE_K = 10**7


@functools.cache
def data() -> dict[str, Any]:
    from topiclink.data import Links
    from topiclink.datasets import make_bpbfm_data, make_lmv_data

    (corpus, links), truth = make_lmv_data(n_docs=40, n_topics=6, publication_time=True,
                                           random_state=0)
    tensor, _ = make_bpbfm_data(n_entities=15, n_relations=2, n_topics=2,
                                random_state=0)
    rng = np.random.default_rng(0)
    return {"X": corpus, "links": Links.from_pairs(np.asarray(links.pairs), corpus.n_docs,
                                                   directed=True),
            "time": np.asarray(truth.publication_time, dtype=float),
            "y": np.arange(corpus.n_docs) % 2, "tensor": tensor,
            "features": rng.normal(size=(corpus.n_docs, 2))}


def names() -> list[str]:
    from topiclink.models.base import registered_estimators

    return [n for n, c in registered_estimators().items()
            if c.__module__.startswith("topiclink.")]


def estimator(name: str, **kwargs: Any) -> Any:
    from topiclink.models.base import registered_estimators

    cls = registered_estimators()[name]
    params = cls._get_param_names()
    base: dict[str, Any] = {"max_iter": 3, "random_state": 0}
    if "n_topics" in params:
        base["n_topics"] = 3
    if "tensor" in cls.fit_requires:
        base.update(n_topics=2, burn_in=1, thinning=1)
    if "negative_ratio" in params:
        base["negative_ratio"] = 0.1
    if "optimize_every" in params and name == "KernelTopicModel":
        base["optimize_every"] = 0
    return cls(**{**base, **kwargs})


def fit(est: Any, **inputs: Any) -> Any:
    d = {**data(), **inputs}
    needs = type(est).fit_requires
    if "tensor" in needs:
        return est.fit(d["tensor"])
    kwargs = {k: d[k] for k in ("links", "features") if k in needs}
    if "y" in needs:
        return est.fit(d["X"], d["y"], **kwargs)
    return est.fit(d["X"], **kwargs)


@functools.cache
def fitted(name: str) -> Any:
    return fit(estimator(name))


# ---------------------------------------------------------------------- api
def _finite(model: Any) -> bool:
    return all(np.all(np.isfinite(getattr(model, n))) for n in model._saved_arrays
               if getattr(model, n).dtype.kind == "f")


def memory_cases() -> list[Case]:
    out = []
    for name in names():
        size = "n_topics"
        out.append(Case(f"memory/{name}/{size}", "api",
                        lambda n=name, s=size: fit(estimator(n, **{s: HUGE_K}))))
    out.append(Case("memory/BilinearPoissonFactorModel/n_dictionary", "api",
                    lambda: fit(estimator("BilinearPoissonFactorModel", n_dictionary=10**9))))
    out.append(Case("memory/BilinearPoissonFactorModel/max_samples", "api",
                    lambda: fit(estimator("BilinearPoissonFactorModel", max_samples=10**9)),
                    "accept", _finite))
    return out


def _tensor(**change: Any) -> Any:
    from topiclink.data.tensor import RelationalTensor

    t = data()["tensor"]
    fields = dict(heads=t.heads, relations=t.relations, tails=t.tails, values=t.values,
                  n_entities=t.n_entities, n_relations=t.n_relations)
    return RelationalTensor(**{**fields, **change})


def tensor_cases() -> list[Case]:
    t = data()["tensor"]
    nan_heads = t.heads.astype(float)
    nan_heads[1] = np.nan
    bad = {"nan_head": dict(heads=nan_heads), "frac_tail": dict(tails=t.tails + 0.5),
           "text_relation": dict(relations=t.relations.astype(str)),
           "negative_head": dict(heads=np.r_[-1, t.heads[1:]]), "complex_values": dict(
               values=t.values + 1j), "object_values": dict(values=np.array(
                   ["x"] * t.values.size, dtype=object)),
           "float_size": dict(n_entities=float(t.n_entities)),
           "huge_size": dict(n_entities=10**12), "short_tails": dict(tails=t.tails[:-1])}
    out = [Case(f"tensor/{label}", "api", lambda c=change: _tensor(**c))
           for label, change in bad.items()]

    def reassigned() -> Any:
        t2 = _tensor()
        t2.heads = nan_heads
        return estimator("BilinearPoissonFactorModel").fit(t2)

    out.append(Case("tensor/reassigned_nan_head_fit", "api", reassigned))
    out.append(Case("score_tails/empty", "api",
                    lambda: fitted("BilinearPoissonFactorModel").score_tails([], "0")))
    out.append(Case("score_tails/two_heads", "api",
                    lambda: fitted("BilinearPoissonFactorModel").score_tails([0, 1], 0)))
    out.append(Case("score_heads/one", "api",
                    lambda: fitted("BilinearPoissonFactorModel").score_heads(0, 1), "accept",
                    lambda r: r.shape == (data()["tensor"].n_entities,)))
    return out


def feature_cases() -> list[Case]:
    f = data()["features"]
    obj = f.astype(object)
    obj[3, 1] = "x"
    bad = {"complex": f + 1j, "text": f.astype(str), "object_text": obj,
           "nan": np.where(np.arange(f.size).reshape(f.shape) == 5, np.nan, f),
           "dates": np.full(f.shape, np.datetime64("2000-01-01")),
           "complex_frame": pd.DataFrame({"a": f[:, 0] + 1j})}
    out = []
    for name in ("DMR", "KernelTopicModel"):
        for label, value in bad.items():
            if label == "complex_frame" and name == "KernelTopicModel":
                continue
            out.append(Case(f"features/{name}/{label}", "api",
                            lambda n=name, v=value: fit(estimator(n), features=v)))
        out.append(Case(f"features/{name}/object_numbers", "api",
                        lambda n=name: fit(estimator(n), features=f.astype(object)),
                        "accept"))
    return out


def kernel_cases() -> list[Case]:
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from topiclink.families.ktm.gp.kernels import CategoricalKernel, SOTUKernel

    kernels = {"rbf_text": RBF("x"), "product_text": ConstantKernel(1.0) * RBF([1, "a"]),
               "sotu_text": SOTUKernel(length_scale="5"), "rho_negative":
               CategoricalKernel(rho=-1.0), "bounds_text": RBF(1.0, length_scale_bounds=(
                   "a", 2)), "nan": RBF(float("nan"))}
    return [Case(f"kernel/{label}", "api",
                 lambda k=k: fit(estimator("KernelTopicModel", kernel=k)))
            for label, k in kernels.items()]


def time_cases() -> list[Case]:
    t = data()["time"]
    dates = np.datetime64("1990-01-01") + np.round(t * 1000).astype("timedelta64[D]")
    variants = {
        "complex": (t + 1j, "error"), "yymm_text": (np.array([f"{i:04d}" for i in
                                                              range(t.size)]), "error"),
        "one_x": (np.array([*t[:-1], "x"], dtype=object), "error"),
        "bools": (t > 0.5, "error"), "none": (np.array([None] * t.size), "error"),
        "mixed": (np.array([*t[:-1], "1990-01-01"], dtype=object), "error"),
        "bad_date": (np.array(["1990-13-45"] * t.size), "error"),
        "short": (t[:-1], "error"), "2d": (t[:, None], "error"),
        "iso_text": (dates.astype(str), "accept"), "datetime64": (dates, "accept"),
        "timestamps": (pd.to_datetime(dates).to_series(), "accept"),
        "numbers": (t, "accept"),
    }
    return [Case(f"publication_time/{label}", "api", lambda v=v: _fit_timed(v), expect)
            for label, (v, expect) in variants.items()]


def _fit_timed(times: Any) -> Any:
    d = data()
    return estimator("VisibilityTopicModel", max_iter=1).fit(
        d["X"], links=d["links"], publication_time=times, newer_citations="drop")


def divergence_cases() -> list[Case]:
    d = data()
    out = []
    for label, kwargs in (("step_a1_huge", {"step_a1": 1e6}),
                          ("step_a2_tiny", {"step_a2": 1e-9, "step_v": 1.0})):
        out.append(Case(f"diverge/LMVS/{label}", "api", lambda k=kwargs: estimator(
            "VisibilityTopicModel", inference="stochastic", tol=0.0, **k).fit(
                d["X"], links=d["links"]), "any", _finite))
    out.append(Case("diverge/BPBFM-online/step_a2_tiny", "api", lambda: estimator(
        "BilinearPoissonFactorModel", inference="online", step_a2=1e-9).fit(d["tensor"]),
        "any", _finite))
    return out


def stream_cases() -> list[Case]:
    d = data()
    X = d["X"]

    def lmvs(ids: Any) -> Any:
        from topiclink.data import Corpus

        m = estimator("VisibilityTopicModel", inference="stochastic", max_iter=1)
        m.fit(X.subset(np.arange(38)), links=_among(np.asarray(d["links"].pairs), 38))
        chunk = X.subset([38, 39])
        chunk = Corpus(chunk.counts, vocabulary=chunk.vocabulary, doc_ids=ids)
        return m.partial_fit(chunk)

    def keeps(m: Any) -> bool:
        return list(m.train_doc_ids_[-2:]) == ["new-a", "new-b"]

    out = [Case("stream/LMVS/new_ids", "api", lambda: lmvs(["new-a", "new-b"]), "accept",
                keeps),
           Case("stream/LMVS/clashing_ids", "api", lambda: lmvs([0, 39])),
           Case("stream/LMVS/clashing_text_ids", "api", lambda: lmvs(["5", "new"]))]

    def bpbfm(grow: int = 0) -> Any:
        from topiclink.data.tensor import RelationalTensor

        t = d["tensor"]
        m = estimator("BilinearPoissonFactorModel", inference="online")
        named = RelationalTensor(t.heads, t.relations, t.tails, t.values, t.n_entities,
                                 t.n_relations,
                                 np.array([f"e{i}" for i in range(t.n_entities)]),
                                 np.array([f"r{i}" for i in range(t.n_relations)]))
        m.partial_fit(named)
        chunk = RelationalTensor([0, 1], [0, 0], [2, t.n_entities - 1 + grow], [1.0, 1.0],
                                 t.n_entities + grow, t.n_relations)
        return m.partial_fit(chunk)

    out.append(Case("stream/BPBFM/unnamed_chunk_by_index", "api", lambda: bpbfm(),
                    "accept", lambda m: m.embedding_.shape[0] == data()["tensor"].n_entities))
    out.append(Case("stream/BPBFM/unnamed_chunk_beyond", "api", lambda: bpbfm(3)))
    return out


def _among(pairs: np.ndarray, n: int) -> np.ndarray:
    return pairs[(pairs < n).all(axis=1)]


# ---------------------------------------------------------------------- model files
@functools.cache
def folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="topiclink-fuzz-models-"))


@functools.cache
def saved(name: str) -> Path:
    return fitted(name).save(folder() / f"{name}.npz")


def _load_edited(name: str, key: str, edit: Any) -> Any:
    import topiclink
    from tests.fuzz.cases_files import members, write

    header, arrays = members(saved(name))
    header, arrays = edit(header, arrays)
    return topiclink.load(write(folder() / f"{name}-{key}.npz", header, arrays))


#: what each value check refuses among the perturbations (shift +5, x50, NaN, -x-1)
_REFUSES = {
    "shift": ("probability", "simplex", "colsimplex", "nonpositive"),
    "scale": ("simplex", "colsimplex"),
    "nan": ("finite", "positive", "nonnegative", "nonpositive", "probability", "simplex",
            "colsimplex"),
    "negate": ("positive", "nonnegative", "probability", "simplex", "colsimplex"),
}
_PERTURB = {"shift": lambda v: v + 5.0, "scale": lambda v: v * 50.0,
            "nan": lambda v: np.where(np.arange(v.size).reshape(v.shape) == 0, np.nan, v),
            "negate": lambda v: -v - 1.0}


def _expect(check: str | None, kind: str, value: np.ndarray) -> str:
    if check in _REFUSES[kind]:
        return "error"
    if kind == "scale" and check == "probability" and value.size and value.max() > 0.02:
        return "error"
    return "any"


def file_cases() -> list[Case]:
    from tests.fuzz.cases_files import members

    out = []
    for name in names():
        cls = type(fitted(name))
        header, arrays = members(saved(name))
        for member, value in sorted(arrays.items()):
            if "/" in member or value.dtype.kind != "f" or not value.size:
                continue
            check = cls._array_specs[member].check
            for kind, f in _PERTURB.items():
                out.append(Case(f"file-values/{name}/{kind}-{member}", "model-files",
                                lambda n=name, m=member, k=kind, g=f: _load_edited(
                                    n, f"{k}-{m}", lambda h, a: (h, {**a, m: g(a[m])})),
                                _expect(check, kind, value)))
        for attr, value in sorted(header["attributes"].items()):
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue
            for label, new in (("nan", float("nan")), ("minus1", -1)):
                expect = "error" if label == "nan" or cls._scalar_specs.get(
                    attr, "count" if attr.startswith("n_") else "finite") != "finite" \
                    else "any"
                out.append(Case(f"file-scalars/{name}/{label}-{attr}", "model-files",
                                lambda n=name, a=attr, v=new: _load_edited(
                                    n, f"attr-{a}", lambda h, ar: (
                                        {**h, "attributes": {**h["attributes"], a: v}}, ar)),
                                expect))
        for size in ("n_topics", "n_dictionary"):
            if size in header["params"]:
                new = 5 if header["params"][size] is None else header["params"][size] + 1
                out.append(Case(f"file-sizes/{name}/{size}-edited", "model-files",
                                lambda n=name, s=size, v=new: _load_edited(
                                    n, f"size-{s}", lambda h, a: (
                                        {**h, "params": {**h["params"], s: v}}, a))))
        out.append(Case(f"file-values/{name}/valid", "model-files",
                        lambda n=name: _load_edited(n, "valid", lambda h, a: (h, a)),
                        "accept", lambda m, n=name: type(m).__name__ == n))
    return out


def cases(area: str) -> list[Case]:
    if area == "api":
        return (memory_cases() + shard_cases() + label_cases() + tensor_cases()
                + feature_cases() + kernel_cases() + time_cases() + divergence_cases()
                + stream_cases())
    if area == "model-files":
        return file_cases()
    return []


def label_cases() -> list[Case]:
    """Labels: complex, missing inside an object array, numbers mixed with text."""
    D = data()["X"].n_docs
    bad = {"complex": np.arange(D) % 2 + 0j,
           "object_none": np.array([None] + [1] * (D - 1), dtype=object),
           "object_nan": np.array([float("nan")] + [1] * (D - 1), dtype=object),
           "mixed": np.array(["a", 1] * (D // 2), dtype=object)}
    return [Case(f"fit-y/{name}/{label}", "api",
                 lambda n=name, y=y: fit(estimator(n), y=y))
            for name in ("SupervisedTopicModel", "VariationalSLDA")
            for label, y in bad.items()]


def shard_cases() -> list[Case]:
    """Sharded samplers: a shard count that alone cannot fit in memory."""
    return [Case(f"memory/{name}/{parallel}-n_shards", "api",
                 lambda n=name, p=parallel: fit(estimator(n, parallel=p, n_shards=10**9)))
            for name in ("LDA", "DMR") for parallel in ("partition", "adlda")]
