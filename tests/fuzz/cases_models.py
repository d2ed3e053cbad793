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
    from topiclink.estimators.base import registered_estimators

    return [n for n, c in registered_estimators().items()
            if c.__module__.startswith("topiclink.")]


def estimator(name: str, **kwargs: Any) -> Any:
    from topiclink.estimators.base import registered_estimators

    cls = registered_estimators()[name]
    params = cls._get_param_names()
    base: dict[str, Any] = {"max_iter": 3, "random_state": 0}
    if "n_topics" in params:
        base["n_topics"] = 3
    if "tensor" in cls.fit_requires:        # the Gibbs model's samples; EM has none
        base.update({"n_topics": 2, **{k: 1 for k in ("burn_in", "thinning")
                                         if k in params}})
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
                + stream_cases() + kernel_feature_cases() + more_feature_cases()
                + shard_count_cases() + time_text_cases() + tensor_name_cases()
                + repeat_stream_cases() + dask_argument_cases())
    if area == "cli":
        return dask_cli_cases()
    if area == "model-files":
        return file_cases() + scalar_type_cases() + kernel_file_cases() + encoding_cases()
    return []


# ---------------------------------------------------------------------- api (more)
def _kernel_fit(kernel: Any, **kwargs: Any) -> Any:
    return fit(estimator("KernelTopicModel", kernel=kernel, **kwargs))


def kernel_feature_cases() -> list[Case]:
    """KTM kernels against the features (2 columns): dimensions, bounds and columns that
    disagree with them, for each kernel kind, fitted with and without the evidence
    maximisation (whose optimiser reads the bounds)."""
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, RationalQuadratic

    from topiclink.families.ktm.gp.kernels import (
        CategoricalKernel,
        OnColumns,
        ShortestPathKernel,
    )

    bad: dict[str, Any] = {
        "rbf_aniso_3": RBF([1.0, 1.0, 1.0]),
        "rbf_aniso_1_of_3": OnColumns(RBF([1.0, 2.0, 3.0]), [0]),
        "sp_aniso_3": ShortestPathKernel([1.0, 1.0, 1.0]),
        "product_aniso": ConstantKernel(1.0) * RBF([1.0, 1.0, 1.0, 1.0]),
        "rbf_bounds_reversed": RBF(1.0, length_scale_bounds=(5.0, 1.0)),
        "rq_alpha_bounds_reversed": RationalQuadratic(1.0, 1.0, alpha_bounds=(10.0, 0.1)),
        "constant_bounds_reversed": ConstantKernel(1.0, (2.0, 0.5)) * RBF(1.0),
        "categorical_bounds_reversed": CategoricalKernel(0.5, rho_bounds=(0.9, 0.1)),
        "rbf_outside_bounds": RBF(10.0, length_scale_bounds=(1e-2, 1.0)),
        "aniso_outside_bounds": RBF([1.0, 50.0], length_scale_bounds=(1e-2, 10.0)),
        "columns_out_of_range": OnColumns(RBF(1.0), [2]),
        "columns_negative_out": OnColumns(RBF(1.0), [-3]),
        "columns_fraction": OnColumns(RBF(1.0), [0.5]),
        "columns_text": OnColumns(RBF(1.0), ["a"]),
        "columns_empty": OnColumns(RBF(1.0), []),
        "columns_bool": OnColumns(RBF(1.0), [True]),
    }
    good: dict[str, Any] = {
        "columns_np_float": OnColumns(RBF(1.0), [np.float64(1.0)]),
        "columns_whole_floats": OnColumns(RBF([1.0, 2.0]), np.array([0.0, 1.0])),
        "rbf_aniso_2": RBF([1.0, 2.0]),
        "fixed_outside_bounds": RBF(10.0, length_scale_bounds="fixed"),
    }
    out = []
    for every in (0, 1):
        for label, k in bad.items():
            out.append(Case(f"kernel-features/optimize{every}/{label}", "api",
                            lambda k=k, e=every: _kernel_fit(k, optimize_every=e)))
        for label, k in good.items():
            out.append(Case(f"kernel-features/optimize{every}/{label}", "api",
                            lambda k=k, e=every: _kernel_fit(k, optimize_every=e), "accept",
                            _finite))
    return out


def _object_sparse(values: np.ndarray) -> Any:
    """An object-dtype CSR matrix (scipy builds one only from its three arrays)."""
    import scipy.sparse as sp

    m = sp.csr_matrix(values)
    return sp.csr_matrix((m.data.astype(object), m.indices, m.indptr), shape=m.shape)


def more_feature_cases() -> list[Case]:
    """Features without columns, as object or complex sparse matrices, as DataFrames whose
    column names repeat (also once read as text)."""
    import scipy.sparse as sp

    f = data()["features"]
    D = f.shape[0]
    three = np.column_stack([f, f[:, 0] * 2 + 1])
    # (value, DMR, KTM): DMR without features is its intercepts alone (LDA with a fitted
    # asymmetric prior); a kernel needs a feature; KTM reads a DataFrame's numbers only
    forms = {"no_columns": (np.zeros((D, 0)), "accept", "error"),
             "object_sparse": (_object_sparse(f), "error", "error"),
             "complex_sparse": (sp.csr_matrix(f + 1j), "error", "error"),
             "frame_duplicate_names": (pd.DataFrame(f, columns=["a", "a"]), "error", "any"),
             "frame_duplicate_as_text": (pd.DataFrame(three, columns=[1, "1", "b"]),
                                         "error", "any")}
    out = []
    for name, col in (("DMR", 0), ("KernelTopicModel", 1)):
        for label, (value, *expect) in forms.items():
            out.append(Case(f"features/{name}/{label}", "api",
                            lambda n=name, v=value: fit(estimator(n), features=v),
                            expect[col]))
    out.append(Case("features/DMR/predict_object_sparse", "api",
                    lambda: fitted("DMR").predict_alpha(_object_sparse(f))))
    out.append(Case("features/DMR/predict_frame_duplicate_names", "api",
                    lambda: _frame_dmr().predict_alpha(pd.DataFrame(
                        {"a": f[:, 0], "b": f[:, 1]}).rename(columns={"b": "a"}))))
    return out


@functools.cache
def _frame_dmr() -> Any:
    """A DMR fitted on a DataFrame (a numeric and a categorical column): it keeps a
    ``feature_encoding_``."""
    f = data()["features"]
    frame = pd.DataFrame({"a": f[:, 0], "g": np.where(f[:, 1] > 0, "x", "y")})
    return fit(estimator("DMR"), features=frame)


def shard_count_cases() -> list[Case]:
    """Every estimator with a sharded scheme: more shards than documents, no shards,
    a shard count of the wrong type."""
    from topiclink.estimators.base import registered_estimators
    from topiclink.execution import Shards

    D = data()["X"].n_docs
    out = []
    for name in names():
        cls = registered_estimators()[name]
        for scheme in getattr(cls, "_sharded_schemes", ()) or ():
            for label, n in (("docs_plus_10", D + 10), ("docs_plus_1", D + 1)):
                out.append(Case(f"shards/{name}/{scheme}/{label}", "api",
                                lambda n_=name, s=scheme, k=n: fit(estimator(
                                    n_, scheme=Shards(s, k)))))
            for label, n in (("zero", 0), ("minus1", -1), ("float", 2.0), ("text", "2"),
                             ("true", True)):
                out.append(Case(f"shards/{name}/{scheme}/Shards_{label}", "api",
                                lambda n_=name, s=scheme, k=n: fit(estimator(
                                    n_, scheme=Shards(s, k)))))
            out.append(Case(f"shards/{name}/{scheme}/two", "api",
                            lambda n_=name, s=scheme: fit(estimator(n_, scheme=Shards(s, 2))),
                            "accept", lambda m, n_=name: type(m).__name__ == n_))
    return out


def time_text_cases() -> list[Case]:
    """Publication times as text: numeric text that parses exactly is a number; digits
    alone (YYMM-like codes) and any other text are refused."""
    t = data()["time"]

    def texts(fmt: Any) -> np.ndarray:
        return np.array([fmt(v) for v in t], dtype=object)

    good = {"decimal": texts(lambda v: f"{v:.6f}"), "padded": texts(lambda v: f" {v:.3f} "),
            "signed": texts(lambda v: f"{v - 1:+.4f}"), "exponent": texts(lambda v: f"{v:e}"),
            "str_array": np.array([f"{v:.5f}" for v in t]),
            "mixed_with_numbers": np.array([*t[:-1].tolist(), f"{t[-1]:.3f}"], dtype=object)}
    bad = {"trailing_x": texts(lambda v: f"{v:.3f}x"), "comma": texts(lambda v: f"{v:.3f}"
                                                                     .replace(".", ",")),
           "nan_text": np.array(["nan"] * t.size), "inf_text": np.array(["inf"] * t.size),
           "overflow": np.array(["1e400"] * t.size), "hex": np.array(["0x10"] * t.size),
           "blank": np.array([" "] * t.size), "digits_only": texts(lambda v: str(int(v * 9))),
           "two_points": texts(lambda v: f"{v:.3f}.1")}
    out = [Case(f"publication_time/text_{label}", "api", lambda v=v: _fit_timed(v), "accept",
                lambda m: m.n_iter_ >= 1) for label, v in good.items()]
    out += [Case(f"publication_time/text_{label}", "api", lambda v=v: _fit_timed(v))
            for label, v in bad.items()]
    d = data()
    for timed in (False, True):
        times = t if timed else None
        for label, value in (("capitalised", "Keep"), ("none", None), ("one", 1),
                             ("bogus", "ignore"), ("list", ["drop"])):
            out.append(Case(f"newer_citations/timed{int(timed)}/{label}", "api",
                            lambda v=value, tt=times: estimator(
                                "VisibilityTopicModel", max_iter=1).fit(
                                d["X"], links=d["links"], publication_time=tt,
                                newer_citations=v)))
        for value in ("drop", "keep"):
            out.append(Case(f"newer_citations/timed{int(timed)}/{value}", "api",
                            lambda v=value, tt=times: estimator(
                                "VisibilityTopicModel", max_iter=1).fit(
                                d["X"], links=d["links"], publication_time=tt,
                                newer_citations=v), "accept", lambda m: m.n_iter_ >= 1))
    return out


def tensor_name_cases() -> list[Case]:
    """Entity and relation names: repeated, empty, blank; an entry both listed and held
    out (documented: unobserved, its value kept)."""
    t = data()["tensor"]
    E, R = t.n_entities, t.n_relations
    ents = [f"e{i}" for i in range(E)]
    rels = [f"r{i}" for i in range(R)]
    bad = {"entity_all_same": {"entity_names": ["e"] * E},
           "entity_repeat_last": {"entity_names": ents[:-1] + [ents[0]]},
           "entity_empty": {"entity_names": [""] + ents[1:]},
           "entity_blank": {"entity_names": ents[:-1] + ["  "]},
           "entity_repeat_as_text": {"entity_names": [1, "1"] + ents[2:]},
           "relation_same": {"relation_names": ["r"] * R},
           "relation_empty": {"relation_names": rels[:-1] + [""]}}
    out = [Case(f"tensor/names_{label}", "api", lambda c=change: _tensor(**c))
           for label, change in bad.items()]
    out.append(Case("tensor/names_good", "api", lambda: _tensor(entity_names=ents,
                                                                relation_names=rels),
                    "accept", lambda r: list(r.entity_names) == ents))
    entry = np.array([[t.heads[0], t.relations[0], t.tails[0]]])
    out.append(Case("tensor/listed_and_missing", "api", lambda: _tensor(missing=entry),
                    "accept", lambda r: not r.observed_mask(*entry.T)[0]
                    and r.n_entries == t.n_entries))
    return out


def repeat_stream_cases() -> list[Case]:
    """LMVS ``partial_fit`` given documents it was trained on again: by their counts
    (no ids), by their ids, in the fitted model and in one saved and loaded; a document
    with the same words under a new id is added on purpose."""
    import topiclink
    from topiclink.data import Corpus

    d = data()
    X = d["X"]

    @functools.cache
    def trained() -> Any:
        m = estimator("VisibilityTopicModel", inference="stochastic", max_iter=1)
        return m.fit(X.subset(np.arange(38)), links=_among(np.asarray(d["links"].pairs), 38))

    def model(loaded: bool) -> Any:
        if not loaded:
            import copy

            return copy.deepcopy(trained())
        path = trained().save(folder() / "lmvs-stream.npz", full=True)
        return topiclink.load(path)

    def chunk(rows: list[int], ids: Any = None) -> Any:
        c = X.subset(rows)
        return Corpus(c.counts, vocabulary=c.vocabulary, doc_ids=ids)

    forms = {"counts_again": (lambda: chunk([3, 38]), "error"),
             "counts_again_matrix": (lambda: X.counts[[38, 5]].toarray(), "error"),
             "id_again": (lambda: X.subset([38, 7]), "error"),
             "same_words_new_id": (lambda: chunk([3, 38], ids=["copy-3", "new-38"]),
                                   "accept"),
             "new_documents": (lambda: chunk([38, 39]), "accept")}
    out = []
    for loaded in (False, True):
        for label, (make, expect) in forms.items():
            out.append(Case(f"stream/LMVS/loaded{int(loaded)}/{label}", "api",
                            lambda mk=make, ld=loaded: model(ld).partial_fit(mk()), expect,
                            (lambda m: m.doc_topic_.shape[0] == 40) if expect == "accept"
                            else None))
    return out


# ---------------------------------------------------------------------- model files (more)
def _attribute(name: str, new: Any) -> Any:
    return lambda h, a: ({**h, "attributes": {**h["attributes"], name: new}}, a)


def scalar_type_cases() -> list[Case]:
    """Every saved scalar attribute of every estimator replaced by a value of another
    type: text where a number is expected, a number or a bool where text is, a list; a
    JSON attribute by text that is not JSON."""
    from tests.fuzz.cases_files import members

    out = []
    for name in names():
        cls = type(fitted(name))
        header, _ = members(saved(name))
        for attr in sorted(header["attributes"]):
            spec = cls._scalar_spec(attr)
            forms: dict[str, tuple[Any, str]] = {
                "text": ("5", "accept" if spec == "text" else "error"),
                "word": ("many", "accept" if spec == "text" else "error"),
                "true": (True, "accept" if spec == "bool" else "error"),
                "list": ([1], "error"), "object": ({"a": 1}, "error"),
                "number": (3, "accept" if spec in ("count", "finite", "nonnegative",
                                                    "positive") else "error")}
            if spec == "json":
                forms.update(not_json=("{not json", "error"), word=("many", "error"),
                             text=("5", "any"))
            for label, (new, expect) in forms.items():
                out.append(Case(f"file-scalar-types/{name}/{label}-{attr}", "model-files",
                                lambda n=name, a=attr, v=new, lb=label: _load_edited(
                                    n, f"type-{lb}-{a}", _attribute(a, v)), expect))
    return out


def _kernel_params(kernel: Any) -> Any:
    from topiclink.families.ktm.estimator import KernelTopicModel

    codec = KernelTopicModel._param_codecs["kernel"]
    encoded = None if kernel is None else codec.encode(kernel)

    def edit(h: dict, a: dict) -> tuple[dict, dict]:
        schemas = dict(h.get("param_schemas") or {})
        if kernel is None:
            schemas.pop("kernel", None)
        else:
            schemas["kernel"] = codec.schema
        return {**h, "params": {**h["params"], "kernel": encoded},
                "param_schemas": schemas}, a
    return edit


def kernel_file_cases() -> list[Case]:
    """A saved KTM whose ``kernel`` parameter was edited (another kernel, wrong
    dimensions, reversed bounds, a start outside its bounds, garbage) or whose
    ``kernel_theta_`` / ``tau_`` was."""
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from topiclink.families.ktm.estimator import default_kernel
    from topiclink.families.ktm.gp.kernels import OnColumns

    edits: dict[str, tuple[Any, str]] = {
        "kernel-fewer-parameters": (_kernel_params(RBF(1.0)), "error"),
        "kernel-aniso-3": (_kernel_params(ConstantKernel(1.0) * RBF([1.0, 1.0, 1.0])),
                           "error"),
        "kernel-bounds-reversed": (_kernel_params(ConstantKernel(1.0, (5.0, 1.0)) * RBF(
            1.0) * RBF(1.0)), "error"),
        "kernel-outside-bounds": (_kernel_params(ConstantKernel(1e6) * RBF(1.0) * RBF(1.0)),
                                  "error"),
        "kernel-columns-out": (_kernel_params(ConstantKernel(1.0) * OnColumns(
            RBF([1.0, 1.0]), [3, 4])), "error"),
        "kernel-garbage": (lambda h, a: ({**h, "params": {**h["params"], "kernel": [1, 2]}},
                                         a), "error"),
        "kernel-schema-garbage": (lambda h, a: ({**h, "params": {**h["params"], "kernel": {
            "module": "os", "kernel": "system"}}, "param_schemas": {
                **(h.get("param_schemas") or {}), "kernel": "sklearn-kernel/1"}}, a),
            "error"),
        "theta-short": (lambda h, a: (h, {**a, "kernel_theta_": a["kernel_theta_"][:-1]}),
                        "error"),
        "tau-text": (_attribute("tau_", "0.5"), "error"),
        "tau-negative": (_attribute("tau_", -0.5), "error"),
        "tau-bool": (_attribute("tau_", True), "error"),
        "kernel-default-spelled-out": (_kernel_params(default_kernel()), "accept"),
    }
    return [Case(f"file-kernel/KernelTopicModel/{label}", "model-files",
                 lambda e=edit, lb=label: _load_edited("KernelTopicModel", f"k-{lb}", e),
                 expect, (lambda m: type(m).__name__ == "KernelTopicModel")
                 if expect == "accept" else None)
            for label, (edit, expect) in edits.items()]


def encoding_cases() -> list[Case]:
    """A saved DMR (fitted on a DataFrame) whose ``feature_encoding_`` was edited: not
    JSON, JSON of the wrong shape, a column of an unknown kind, a zero scale, names that
    are not ``feature_names_``."""
    import json

    import topiclink
    from tests.fuzz.cases_files import members as read
    from tests.fuzz.cases_files import write

    path = folder() / "DMR-frame.npz"

    def load_with(text: Any) -> Any:
        if not path.exists():
            _frame_dmr().save(path)
        header, arrays = read(path)
        header = {**header, "attributes": {**header["attributes"],
                                           "feature_encoding_": text}}
        return topiclink.load(write(folder() / "DMR-frame-edited.npz", header, arrays))

    def spec() -> dict:
        if not path.exists():
            _frame_dmr().save(path)
        return json.loads(read(path)[0]["attributes"]["feature_encoding_"])

    def edited(change: Any) -> Any:
        s = spec()
        change(s)
        return load_with(json.dumps(s))

    def set_in(k: int, **kw: Any) -> Any:
        return lambda s: s["columns"][k].update(kw)

    bad = {"not_json": lambda: load_with("{not json"),
           "json_list": lambda: load_with("[1, 2]"),
           "json_number": lambda: load_with("3"),
           "columns_text": lambda: load_with(json.dumps({"columns": "a"})),
           "column_not_object": lambda: edited(lambda s: s["columns"].append(5)),
           "kind_unknown": lambda: edited(set_in(0, kind="ordinal")),
           "scale_zero": lambda: edited(set_in(0, scale=0.0)),
           "center_text": lambda: edited(set_in(0, center="x")),
           "levels_numbers": lambda: edited(set_in(1, levels=[1, 2])),
           "name_changed": lambda: edited(set_in(0, name="renamed")),
           "level_added": lambda: edited(lambda s: s["columns"][1]["levels"].append("z")),
           "column_dropped": lambda: edited(lambda s: s["columns"].pop())}
    out = [Case(f"file-encoding/DMR/{label}", "model-files", f) for label, f in bad.items()]
    out.append(Case("file-encoding/DMR/valid", "model-files", lambda: edited(lambda s: None),
                    "accept", lambda m: m.feature_encoding_ is not None))
    return out


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
    from topiclink.execution import Shards

    return [Case(f"memory/{name}/{scheme}-n_shards", "api",
                 lambda n=name, s=scheme: fit(estimator(n, scheme=Shards(s, 10**9))))
            for name in ("LDA", "DMR") for scheme in ("partition", "adlda")]


# ---------------------------------------------------------------------- Dask arguments
#: scheduler addresses of the wrong form (each refused before any connection is tried)
BAD_SCHEDULERS = {"spaces": "not an address", "no-port": "tcp://127.0.0.1",
                  "bare-host": "localhost", "protocol": "http://h:80", "port0": "tcp://h:0",
                  "port-huge": "tcp://h:99999", "port-text": "h:port", "no-host": "tcp://:8786",
                  "empty": "", "path": "tcp://h/x:1"}
#: values that are no Dask client (given to the Dask executor itself)
BAD_CLIENTS = {"int": 5, "float": 5.0, "bool": True, "list": [1], "dict": {}}


def dask_argument_cases() -> list[Case]:
    """Every estimator with an ``executor``: a scheduler address of the wrong form; the
    executor itself (:class:`~topiclink.execution.DaskExecutor`, ``resolve_executor``): a
    client that is none."""
    from topiclink.estimators.base import registered_estimators

    out = []
    for name in names():
        cls = registered_estimators()[name]
        if "executor" in cls._get_param_names():
            for label, address in BAD_SCHEDULERS.items():
                out.append(Case(f"dask/{name}/executor-{label}", "api",
                                lambda n=name, a=address: fit(estimator(n, executor=a))))

    def executor(value: Any) -> Any:
        from topiclink.execution import DaskExecutor

        return DaskExecutor(value)

    def resolved(value: Any) -> Any:
        from topiclink.execution import resolve_executor

        return resolve_executor(value)

    for label, value in {**BAD_SCHEDULERS, **BAD_CLIENTS}.items():
        out.append(Case(f"dask/DaskExecutor/{label}", "api", lambda v=value: executor(v)))
    for label, value in BAD_SCHEDULERS.items():
        out.append(Case(f"dask/resolve_executor/{label}", "api", lambda v=value: resolved(v)))
    return out


def dask_cli_cases() -> list[Case]:
    """``--scheduler`` of the wrong form on every command that has it: one line naming
    ``--scheduler`` and the form, before any data is read or a connection is tried."""
    from tests.fuzz.cases_cli import FIT_DATA, cli_case, command_tree

    out = []
    for path, cmd in command_tree():
        if not any("--scheduler" in p.opts for p in cmd.params):
            continue
        for label, address in BAD_SCHEDULERS.items():
            out.append(cli_case(f"cli/{'-'.join(path)}/scheduler-{label}",
                                [*path, *FIT_DATA, "--scheduler", address, "-k", "2"],
                                must_say=("--scheduler", "tcp://host:port")))
    return out
