"""One contract for every registered estimator, discovered (never listed by hand).

Each estimator class found by :func:`topiclink.registered_estimators` -- the library's,
and the throwaway Dirichlet-multinomial mixture of ``tests/examples`` added by one
inference module and one estimator module -- is checked for: scikit-learn's constructor
checks, clone / get / set params, the not-fitted error, same seed -> same result,
``n_jobs`` invariance where the class promises it, save/load -> equal predictions,
save(full=True)/load/resume, interrupted-and-resumed == uninterrupted, bad-input errors,
empty documents in ``transform``, and a signature that follows the glossary of
parameters (``topiclink.parameters``).  What ``fit`` needs is read from ``fit_requires``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.utils import estimator_checks

import tests.examples.dmm.estimator  # noqa: F401  (registers the throwaway estimator)
import topiclink
from topiclink.data import Corpus, DataError
from topiclink.data.tensor import RelationalTensor
from topiclink.datasets import make_bpbfm_data, make_rtm_data
from topiclink.estimators.capabilities import (
    ClassifierCapability,
    EntityFactorsMixin,
    LinkPredictionMixin,
    TopicsMixin,
)
from topiclink.inference.engine import State

ESTIMATORS = topiclink.registered_estimators()
NAMES = sorted(ESTIMATORS)


def make(name: str, **overrides):
    """A small, fast configuration: 3 topics, a few iterations, a fixed seed (and no
    early stopping, so that interrupted and uninterrupted runs have the same length)."""
    cls = ESTIMATORS[name]
    params = cls._get_param_names()
    kwargs = {"n_topics": 3, "max_iter": 6, "random_state": 2}
    if "tol" in params:
        kwargs["tol"] = 0.0
    if "negative_ratio" in params:
        kwargs["negative_ratio"] = 0.1
    return cls(**{k: v for k, v in {**kwargs, **overrides}.items() if k in params})


@pytest.fixture(scope="module")
def data():
    (corpus, links), _ = make_rtm_data(n_docs=60, n_words=80, n_topics=3, doc_length=30,
                                       random_state=9)
    labels = np.arange(corpus.n_docs) % 2
    tensor, _ = make_bpbfm_data(30, 3, 3, random_state=9, density=0.05)
    features = np.random.default_rng(9).random((corpus.n_docs, 3))
    return {"X": corpus, "links": links, "y": labels, "tensor": tensor, "features": features}


def fit(est, data, X=None, **kwargs):
    """Fit with what the class declares it needs."""
    needs = type(est).fit_requires
    if "tensor" in needs:
        return est.fit(data["tensor"] if X is None else X, **kwargs)
    unsupported = set(needs) - {"X", "links", "y", "features"}
    if unsupported:
        pytest.skip(f"no contract data for {sorted(unsupported)} yet")
    X = data["X"] if X is None else X
    if "features" in needs:
        kwargs["features"] = data["features"]
    if "links" in needs:
        kwargs["links"] = data["links"]
        if getattr(type(est), "directed_links", False):
            from topiclink.data import Links

            lk = data["links"]
            kwargs["links"] = Links.from_pairs(lk.pairs, lk.n_docs, directed=True)
    if "y" in needs:
        return est.fit(X, data["y"], **kwargs)
    return est.fit(X, **kwargs)


def predictions(est, new) -> dict[str, np.ndarray]:
    out = {}
    if isinstance(est, TopicsMixin):
        out["transform"] = est.transform(new)
    if isinstance(est, LinkPredictionMixin):
        out["link_scores"] = est.link_scores(new)
    if isinstance(est, ClassifierCapability):
        out["decision_function"] = np.asarray(est.decision_function(new))
        out["predict"] = np.asarray(est.predict(new))
    if isinstance(est, EntityFactorsMixin):
        out["predict_proba"] = est.predict_proba([0, 1, 2], [0, 1, 2], [3, 4, 5])
        out["score_tails"] = est.score_tails(1, 2)
    return out


def fitted_arrays(est) -> dict[str, np.ndarray]:
    arrays = {name: np.asarray(getattr(est, name)) for name in est._saved_arrays}
    state = getattr(est, "state_", None)
    if isinstance(state, State):
        for f in dataclasses.fields(state):
            value = getattr(state, f.name)
            if isinstance(value, np.ndarray):
                arrays[f"state_.{f.name}"] = value
    return arrays


def assert_same(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for key in a:
        if np.asarray(a[key]).dtype.kind in "fc":
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)
        else:
            assert np.array_equal(a[key], b[key]), key


def test_discovery_finds_every_family_and_the_exercise():
    assert {"LDA", "RelationalTopicModel", "SupervisedTopicModel", "VariationalRTM",
            "VariationalSLDA", "DirichletMultinomialMixture"} <= set(NAMES)
    table = topiclink.estimators.paper_models()
    assert table["Gibbs-gMMRTM"][0] is ESTIMATORS["RelationalTopicModel"]
    assert table["GSDMM"][0] is ESTIMATORS["DirichletMultinomialMixture"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("check", ["check_parameters_default_constructible",
                                   "check_no_attributes_set_in_init",
                                   "check_get_params_invariance", "check_set_params",
                                   "check_estimator_repr",
                                   "check_do_not_raise_errors_in_init_or_set_params"])
def test_scikit_learn_constructor_checks(name, check):
    getattr(estimator_checks, check)(name, ESTIMATORS[name]())


@pytest.mark.parametrize("name", NAMES)
def test_clone_params_and_not_fitted(name, data):
    est = make(name)
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    assert twin.set_params(max_iter=3) is twin and twin.max_iter == 3
    with pytest.raises(NotFittedError, match="not fitted"):
        est.transform(data["X"]) if isinstance(est, TopicsMixin) else est.save("x.npz")
    with pytest.raises(TypeError):
        type(est)(3, 4)                      # keyword-only after n_topics


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_result_and_persistence(name, data, tmp_path):
    new = data["X"].subset([1, 2, 3])
    a = fit(make(name), data)
    b = fit(make(name), data)
    assert_same(fitted_arrays(a), fitted_arrays(b))
    before = predictions(a, new)
    assert_same(before, predictions(b, new))
    loaded = topiclink.load(a.save(tmp_path / "m.npz"))
    assert type(loaded) is type(a)
    assert_same({k: np.asarray(getattr(a, k)) for k in a._saved_arrays},
                {k: np.asarray(getattr(loaded, k)) for k in a._saved_arrays})
    assert_same(before, predictions(loaded, new))
    assert loaded.random_state_ == a.random_state_ == 2
    assert isinstance(a.summary(), str)


@pytest.mark.parametrize("name", NAMES)
def test_resumed_equals_uninterrupted(name, data, tmp_path):
    """6 iterations = 3 + 3, in memory and through save(full=True) + load, draw for draw."""
    whole = fit(make(name, max_iter=6), data)
    half = fit(make(name, max_iter=3), data)
    saved = half.save(tmp_path / "half.npz", full=True)
    fit(half, data, resume=True)
    assert half.n_iter_ == 6
    assert_same(fitted_arrays(whole), fitted_arrays(half))
    loaded = topiclink.load(saved)
    fit(loaded.set_params(max_iter=3), data, resume=True)
    assert_same(fitted_arrays(whole), fitted_arrays(loaded))
    trace = whole.trace_["log_likelihood"]
    np.testing.assert_array_equal(trace[np.isfinite(trace)][-1:],
                                  loaded.trace_["log_likelihood"][-1:])


@pytest.mark.parametrize("name", NAMES)
def test_resume_refuses_other_data_and_unfitted_models(name, data):
    est = make(name)
    with pytest.raises(ValueError, match="nothing to resume"):
        fit(est, data, resume=True)
    fit(est, data)
    other = Corpus(data["X"].counts[:, ::-1].tocsr())
    if "tensor" in type(est).fit_requires:
        t = data["tensor"]
        other = RelationalTensor(t.tails, t.relations, t.heads, t.values, t.n_entities,
                                 t.n_relations)
    with pytest.raises(ValueError, match="data of the first fit"):
        fit(est, data, X=other, resume=True)


@pytest.mark.parametrize("name", [n for n in NAMES if "n_jobs" in
                                  ESTIMATORS[n]._get_param_names()])
def test_n_jobs_never_changes_the_result(name, data):
    assert ESTIMATORS[name].n_jobs_invariant
    one = fit(make(name, n_jobs=1), data)
    two = fit(make(name, n_jobs=2), data)
    assert_same(fitted_arrays(one), fitted_arrays(two))


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_is_a_one_line_error(name, data):
    if "tensor" in ESTIMATORS[name].fit_requires:
        pytest.skip("documents' bad input; tensors: the bad-input tests of "
                    "tests/families/bpbfm/")
    counts = data["X"].counts.toarray()
    counts[4] = 0
    if ESTIMATORS[name].allows_empty_documents:
        est = fit(make(name), data, X=Corpus(sp.csr_matrix(counts)))
        np.testing.assert_allclose(est.doc_topic_[4], est.alpha_ / est.alpha_.sum())
    else:
        with pytest.raises(DataError, match="document 4 .* is empty"):
            fit(make(name), data, X=Corpus(sp.csr_matrix(counts)))
    V = data["X"].n_words
    with pytest.raises(DataError, match="no documents"):
        fit(make(name), data, X=Corpus(sp.csr_matrix((0, V))))
    with pytest.raises(DataError, match="no words"):
        fit(make(name), data, X=Corpus(sp.csr_matrix((data["X"].n_docs, V))))
    with pytest.raises(ValueError, match="more than this machine"):
        fit(make(name, n_topics=10**9), data)
    for bad in ({"n_topics": 1}, {"max_iter": True}, {"max_iter": 0}, {"n_topics": 2.5}):
        with pytest.raises(ValueError, match=f"{name}: {next(iter(bad))} must be") as info:
            fit(make(name, **bad), data)
        assert "\n" not in str(info.value)
    fitted = fit(make(name), data)
    with pytest.raises(ValueError, match="columns"):
        fitted.transform(np.ones((2, data["X"].n_words + 1)))


@pytest.mark.parametrize("name", [n for n in NAMES if issubclass(ESTIMATORS[n], TopicsMixin)])
def test_empty_documents_in_transform_get_the_prior_mean(name, data):
    est = fit(make(name), data)
    counts = data["X"].counts[:3].toarray()
    counts[1] = 0
    theta = est.transform(Corpus(sp.csr_matrix(counts)))
    assert theta.shape == (3, 3)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0)
    alpha = getattr(est, "alpha_", None)
    if alpha is not None:
        np.testing.assert_allclose(theta[1], alpha / alpha.sum())
    assert np.all(np.isfinite(theta))


@pytest.mark.parametrize("name", NAMES)
def test_classifier_tags(name):
    est = ESTIMATORS[name]()
    assert is_classifier(est) == issubclass(ESTIMATORS[name], ClassifierCapability)


def test_evaluate_every_scores_the_fit_in_progress(data):
    """EvaluateEvery sees the current estimates, on a first fit too (it used to raise
    NotFittedError, and on a refit to score the previous fit)."""
    from topiclink.callbacks import EvaluateEvery

    held = data["X"].subset(np.arange(40, 60))
    cb = EvaluateEvery(lambda m: {"iterations": m.n_iter_, "score": m.score(held)}, every=5)
    est = topiclink.LDA(3, max_iter=10, random_state=1, callbacks=[cb]).fit(data["X"])
    assert [it for it, _ in cb.history] == [5, 10]
    assert [r["iterations"] for _, r in cb.history] == [5, 10]
    assert cb.history[0][1]["score"] != cb.history[1][1]["score"]
    assert cb.history[1][1]["score"] == est.score(held)


def test_pipeline_on_raw_text():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    texts = ["graph neural citation network", "topic model of words and documents",
             "citation links between papers", "words in topics", "papers cite papers",
             "latent topics of text documents"] * 4
    pipe = make_pipeline(CountVectorizer(), topiclink.LDA(2, max_iter=20, random_state=0))
    theta = pipe.fit_transform(texts)
    assert theta.shape == (len(texts), 2)
    new = pipe.transform(["citation graph of papers", "zzz qqq"])    # 2nd: no known word
    np.testing.assert_allclose(new.sum(axis=1), 1.0)
    np.testing.assert_allclose(new[1], 0.5)


def test_cross_val_score_stratifies_the_supervised_models(data):
    from sklearn.model_selection import cross_val_score

    X = data["X"].counts
    y = np.repeat(["a", "b"], X.shape[0] // 2)
    for name in ("SupervisedTopicModel", "VariationalSLDA"):
        scores = cross_val_score(make(name, max_iter=5), X, y, cv=3)
        assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))


def test_a_parameter_that_is_not_json_is_saved_with_its_codec(data, tmp_path):
    """A GP kernel (what KTM needs) is stored as JSON by a declared codec, never pickled."""
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    from topiclink.estimators.param_codecs import SklearnKernelCodec

    class KernelLDA(topiclink.LDA):
        _param_codecs = {"kernel": SklearnKernelCodec()}

        def __init__(self, n_topics=10, *, kernel=None, max_iter=200, random_state=None):
            super().__init__(n_topics, max_iter=max_iter, random_state=random_state)
            self.kernel = kernel

    kernel = ConstantKernel(2.0) * RBF(length_scale=[1.5, 3.0]) + WhiteKernel(0.1)
    est = KernelLDA(3, kernel=kernel, max_iter=2, random_state=0).fit(data["X"])
    loaded = topiclink.load(est.save(tmp_path / "k.npz"))
    assert repr(loaded.kernel) == repr(kernel)
    np.testing.assert_allclose(loaded.kernel.theta, kernel.theta)
    plain = topiclink.LDA(3, max_iter=2, random_state=0).fit(data["X"])
    plain.doc_topic_prior = object()
    with pytest.raises(TypeError, match="declare a codec"):
        plain.save(tmp_path / "bad.npz")


@pytest.mark.parametrize("seed", [np.int64(7), np.random.default_rng(3), None])
def test_the_seed_actually_used_is_recorded(seed, data, tmp_path):
    est = topiclink.LDA(3, max_iter=2, random_state=seed).fit(data["X"])
    assert isinstance(est.random_state_, int)
    again = topiclink.load(est.save(tmp_path / "s.npz"))
    assert again.random_state == est.random_state_
    refit = clone(again).fit(data["X"])
    np.testing.assert_array_equal(refit.components_, est.components_)


@pytest.mark.parametrize("name", [n for n in NAMES if issubclass(ESTIMATORS[n], TopicsMixin)])
def test_dataframe_columns_are_matched_by_name(name, data):
    import pandas as pd

    X = data["X"]
    frame = pd.DataFrame(X.counts.toarray(), columns=[str(w) for w in X.vocabulary],
                         index=X.doc_ids)
    est = fit(make(name), data, X=frame)
    new = frame.iloc[:4]
    np.testing.assert_array_equal(est.transform(new), est.transform(new[new.columns[::-1]]))
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        est.top_words(-1)


def test_pipeline_with_texts_the_vectorizer_leaves_empty():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.pipeline import make_pipeline

    texts = ["graph citation network", "topic model words", "a", "citation papers words",
             "topics of text", "the of"] * 3
    pipe = make_pipeline(CountVectorizer(), topiclink.LDA(2, max_iter=10, random_state=0))
    theta = pipe.fit_transform(texts)
    np.testing.assert_allclose(theta[2], 0.5)          # "a" has no token the vectorizer keeps


def test_relational_model_in_a_pipeline(data):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    pipe = make_pipeline(FunctionTransformer(lambda X: X.counts, accept_sparse=True),
                         make("RelationalTopicModel"))
    pipe.fit(data["X"], relationaltopicmodel__links=data["links"])
    assert pipe[-1].weights_.shape == (3, 3)


@pytest.mark.parametrize("name", [n for n in NAMES if issubclass(ESTIMATORS[n], TopicsMixin)])
def test_a_document_gets_the_same_topics_in_any_batch(name, data):
    est = fit(make(name), data)
    X = data["X"]
    whole = est.transform(X.subset(np.arange(10)))
    for i in (0, 7):
        np.testing.assert_array_equal(est.transform(X.subset([i])), whole[[i]])
    np.testing.assert_array_equal(est.transform(X.subset([7, 0]))[::-1], whole[[0, 7]])


def test_evaluate_every_zero_records_the_last_iteration_only(data):
    est = topiclink.LDA(3, max_iter=5, evaluate_every=0, random_state=0).fit(data["X"])
    ll = est.trace_["log_likelihood"]
    assert np.all(np.isnan(ll[:-1])) and np.isfinite(ll[-1])


# ---------------------------------------------------------------------- the glossary
#: glossary parameters whose forms an estimator narrows (or widens), and why
NARROWED = {
    ("DMR", "doc_topic_prior"): "a scalar: the intercepts start at log alpha",
    ("DMR", "optimize_every"): ">= 1: lambda is what the model is for",
    ("DMR", "sampler"): "'gibbs' or 'mh' ('warp' reads one prior for all documents; "
                        "no 'auto': Gibbs was ahead by time at K = 1000)",
    ("RelationalTopicModel", "sampler"): "no 'warp': its word phase has no link "
                                         "correction",
    ("SupervisedTopicModel", "sampler"): "no 'warp': its word phase has no label "
                                         "correction",
    ("DirichletMultinomialMixture", "doc_topic_prior"): "a scalar (one cluster per doc)",
    ("KernelTopicModel", "n_topics"): ">= 3 (the logistic-normal GP prior)",
    ("LDARegression", "doc_topic_prior"): "None or a scalar",
    ("VisibilityTopicModel", "doc_topic_prior"): "None or a scalar (default 1/K)",
    ("VisibilityTopicModel", "tol"): "None: the paper's tolerance of each inference",
}

#: the parameters outside the glossary, per estimator: a new name is added here on purpose
#: (or, when several families share its meaning, to the glossary)
FAMILY_PARAMETERS = {
    "BilinearPoissonFactorModel": {"n_dictionary", "binary", "priors", "self_pairs",
                                   "n_chains"},
    "BilinearPoissonFactorModelEM": {"binary", "prior_rate", "n_chains"},
    "DegreeCorrectedPoissonFactorModel": {"binary", "prior_rate", "degree_prior",
                                          "n_chains"},
    "PatternPoissonFactorModel": {"binary", "prior_rate", "patterns", "pattern_prior",
                                  "min_support", "max_patterns", "max_constant_rules",
                                  "n_chains"},
    "DMR": {"sigma", "intercept_sigma"},
    "DirichletMultinomialMixture": set(),
    "KernelTopicModel": {"kernel", "tau", "fit_tau", "n_inner", "min_precision",
                         "n_inducing", "hyperprior_scale"},
    "LDA": set(),
    "LDARegression": {"C"},
    "RelationalTopicModel": {"weights", "approx", "augmentation", "directed"},
    "SupervisedTopicModel": set(),
    "VariationalRTM": {"topic_inference"},
    "VariationalSLDA": {"e_step_tol"},
    "VisibilityTopicModel": {"visibility", "blockmodel_prior", "visibility_prior",
                             "stopping", "min_sweeps", "tol_window", "n0"},
}


def documented_parameters(cls) -> set[str]:
    """The names of the class docstring's Parameters section (``a, b : float`` gives
    both; an entry may have no type)."""
    import inspect

    lines = inspect.cleandoc(cls.__doc__ or "").splitlines()
    names: set[str] = set()
    inside = False
    for i, line in enumerate(lines):
        underline = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line and not line[0].isspace() and underline and set(underline) == {"-"}:
            inside = line.strip() == "Parameters"
            continue
        if inside and line and not line[0].isspace() and not line.startswith("-"):
            names.update(n.strip() for n in line.split(" : ")[0].split(","))
    return names


def _forms(forms) -> str:
    return " or ".join(form.describe() for form in forms)


def glossary_problems(cls) -> list[str]:
    """How ``cls``'s signature departs from the glossary (empty: it follows it)."""
    from topiclink.parameters import ALIASES, GLOSSARY

    params = cls._get_param_names()
    declared = cls.parameter_constraints()
    documented = documented_parameters(cls)
    own = FAMILY_PARAMETERS.get(cls.__name__, set())
    problems = []
    for p in params:
        entry = GLOSSARY.get(p)
        if p in ALIASES:
            problems.append(f"{p}: another name of the glossary's {ALIASES[p]}")
        elif entry is None:
            if p not in own:
                problems.append(f"{p}: neither in the glossary nor in FAMILY_PARAMETERS"
                                f"[{cls.__name__!r}] (use the glossary's name where the "
                                "meaning is one of its entries)")
            continue
        if entry is None:
            continue
        if p not in documented:
            problems.append(f"{p}: not in the docstring's Parameters section")
        if p not in declared:
            problems.append(f"{p}: no constraint declared (shared({p!r}))")
        elif entry.forms is not None and _forms(declared[p]) != entry.describe() \
                and (cls.__name__, p) not in NARROWED:
            problems.append(f"{p}: accepts {_forms(declared[p])}, the glossary "
                            f"{entry.describe()} (or list the narrowing in NARROWED)")
    for p in sorted(own - set(params)):
        problems.append(f"{p}: listed in FAMILY_PARAMETERS but not a parameter")
    return problems


@pytest.mark.parametrize("name", NAMES)
def test_signature_follows_the_glossary(name):
    assert name in FAMILY_PARAMETERS, f"add {name}'s own parameters to FAMILY_PARAMETERS"
    assert glossary_problems(ESTIMATORS[name]) == []


def test_the_lists_of_exceptions_are_current():
    from topiclink.parameters import GLOSSARY, HOMONYMS

    for (name, p), _why in NARROWED.items():
        declared = ESTIMATORS[name].parameter_constraints()[p]
        assert _forms(declared) != GLOSSARY[p].describe(), f"{name}.{p} is no narrowing"
    for p, users in HOMONYMS.items():
        for name in users:
            assert p in ESTIMATORS[name]._get_param_names(), (name, p)
    assert set(FAMILY_PARAMETERS) <= set(NAMES)


def test_the_glossary_check_catches_drift():
    """A throwaway estimator (a leading underscore: never registered) with an alias of
    a glossary name, a glossary parameter undocumented and with other forms, and a name
    of its own nobody listed."""
    from topiclink.data.checks import Integer

    class _Drifted(topiclink.LDA):
        """LDA with drifted names.

        Parameters
        ----------
        n_components : int
            K.
        smoothing : float
        """

        _parameter_constraints = {"max_iter": [Integer(2)]}

        def __init__(self, n_components=10, *, max_iter=5, n_iter=3, smoothing=0.1):
            self.n_components = n_components
            self.max_iter = max_iter
            self.n_iter = n_iter
            self.smoothing = smoothing

    assert "_Drifted" not in topiclink.registered_estimators()
    problems = glossary_problems(_Drifted)
    assert problems == [
        "max_iter: not in the docstring's Parameters section",
        "max_iter: accepts an integer >= 2, the glossary an integer >= 1 (or list the "
        "narrowing in NARROWED)",
        "n_components: another name of the glossary's n_topics",
        "n_iter: another name of the glossary's max_iter",
        "smoothing: neither in the glossary nor in FAMILY_PARAMETERS['_Drifted'] (use the "
        "glossary's name where the meaning is one of its entries)"], problems
    assert documented_parameters(ESTIMATORS["BilinearPoissonFactorModel"]) >= {
        "step_a2", "step_v", "priors", "random_state", "callbacks"}
