"""API cases: estimator parameters, training inputs (documents, links, labels), prediction
verbs, containers and metrics."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from tests.fuzz.harness import Case

MODELS = ("LDA", "RelationalTopicModel", "SupervisedTopicModel", "VariationalRTM",
          "VariationalSLDA", "VisibilityTopicModel")
BAD_VALUES: list[tuple[str, Any]] = [
    ("true", True), ("minus1", -1), ("zero", 0), ("half", 0.5), ("text", "x"),
    ("none", None), ("nan", float("nan")), ("inf", float("inf")), ("list", [1, 2]),
    ("dict", {}), ("huge", 10**30), ("neg_float", -2.5), ("complex", 1j),
    ("array", np.ones(2)), ("npint", np.int64(-3)),
]


@functools.cache
def data() -> dict[str, Any]:
    from topiclink.datasets import make_rtm_data

    (corpus, links), _ = make_rtm_data(n_docs=40, n_words=30, n_topics=3, doc_length=15,
                                       random_state=3)
    return {"X": corpus, "links": links, "y": np.arange(corpus.n_docs) % 2}


def estimator(name: str, **kwargs: Any) -> Any:
    import topiclink

    base = {"n_topics": 3, "max_iter": 3, "random_state": 0}
    cls = getattr(topiclink, name)
    if "negative_ratio" in cls._get_param_names():
        base["negative_ratio"] = 0.1
    return cls(**{**base, **kwargs})


DEFAULT = object()


def fit(est: Any, X: Any = DEFAULT, links: Any = DEFAULT, y: Any = DEFAULT) -> Any:
    d = data()
    X = d["X"] if X is DEFAULT else X
    needs = type(est).fit_requires
    if "links" in needs:
        if links is DEFAULT:
            links = d["links"]
            if getattr(type(est), "directed_links", False):
                from topiclink.data import Links

                links = Links.from_pairs(links.pairs, links.n_docs, directed=True)
        return est.fit(X, links=links)
    if "y" in needs:
        return est.fit(X, d["y"] if y is DEFAULT else y)
    return est.fit(X)


@functools.cache
def fitted(name: str) -> Any:
    return fit(estimator(name))


def _accepted_by_constraints(name: str, param: str, value: Any) -> bool:
    import topiclink

    forms = getattr(topiclink, name).parameter_constraints().get(param, [])
    return any(form.accepts(value) for form in forms)


def parameter_cases() -> list[Case]:
    import topiclink

    out = []
    for name in MODELS:
        cls = getattr(topiclink, name)
        for param in sorted(cls.parameter_constraints()):
            for label, value in BAD_VALUES:
                if _accepted_by_constraints(name, param, value):
                    continue            # a legal value: covered by the model tests
                out.append(Case(f"param/{name}/{param}/{label}", "api",
                                lambda n=name, p=param, v=value: fit(estimator(n, **{p: v}))))
    return out


def _counts() -> np.ndarray:
    return data()["X"].counts.toarray()


def _bad_documents() -> list[tuple[str, Any, str]]:
    c = _counts()
    nan = c.astype(float)
    nan[1, 2] = np.nan
    inf = c.astype(float)
    inf[0, 0] = np.inf
    neg = c.copy()
    neg[3, 1] = -1
    frac = c.astype(float)
    frac[2, 2] = 0.5
    big = c.astype(np.int64)
    big[0, 0] = 2**40
    obj = c.astype(object)
    frame = pd.DataFrame(c, columns=[f"w{i}" for i in range(c.shape[1])])
    frame_text = frame.astype(str)
    return [
        ("none", None, "error"), ("string", "some text", "error"), ("int", 5, "error"),
        ("ragged", [[1, 2], [3]], "error"), ("3d", c[None], "error"),
        ("1d", c[0], "error"), ("nan", nan, "error"), ("inf", inf, "error"),
        ("negative", neg, "error"), ("fraction", frac, "error"),
        ("too_big", big, "error"), ("object", obj, "error"),
        ("no_docs", np.zeros((0, c.shape[1])), "error"), ("no_words", np.zeros((5, 0)),
                                                           "error"),
        ("all_empty", np.zeros_like(c), "error"), ("dict", {"a": 1}, "error"),
        ("frame_text", frame_text, "error"),
        ("sparse_negative", sp.csr_matrix(neg), "error"),
        ("sparse_nan", sp.csr_matrix(nan), "error"),
        ("bool", c > 0, "accept"), ("frame", frame, "accept"),
        ("coo", sp.coo_matrix(c), "accept"), ("float_counts", c.astype(float), "accept"),
    ]


def document_cases() -> list[Case]:
    out = []
    for name in MODELS:
        for label, X, expect in _bad_documents():
            out.append(Case(f"fit-X/{name}/{label}", "api",
                            lambda n=name, x=X: fit(estimator(n), X=x), expect))
    return out


def link_cases() -> list[Case]:
    D = data()["X"].n_docs
    bad = [
        ("none", None, "error"), ("self", np.array([[0, 0], [1, 2]]), "error"),
        ("out_of_range", np.array([[0, 1], [2, D]]), "error"),
        ("negative", np.array([[0, 1], [-1, 2]]), "error"),
        ("float", np.array([[0.5, 1.0]]), "error"), ("nan", np.array([[np.nan, 1]]), "error"),
        ("one_column", np.array([1, 2, 3]), "error"), ("three_columns", np.ones((3, 3), int),
                                                        "error"),
        ("adjacency_wrong_shape", sp.csr_matrix((D + 1, D + 1)), "error"),
        ("text", "links", "error"), ("unknown_ids", np.array([["a", "b"]]), "error"),
        ("self_links_in_adjacency", sp.eye(D, format="csr"), "error"),
        ("bool_adjacency", sp.csr_matrix(np.triu(np.random.default_rng(0).random((D, D))
                                                 < 0.1, k=1)), "accept"),
        ("duplicates", np.array([[0, 1], [0, 1], [2, 3]]), "error"),
    ]
    out = []
    for name in ("RelationalTopicModel", "VariationalRTM", "VisibilityTopicModel"):
        for label, links, expect in bad:
            out.append(Case(f"fit-links/{name}/{label}", "api",
                            lambda n=name, lk=links: fit(estimator(n), links=lk), expect))
        out.append(Case(f"fit-links/{name}/positional", "api",
                        lambda n=name: estimator(n).fit(data()["X"], data()["links"])))
    return out


def label_cases() -> list[Case]:
    D = data()["X"].n_docs
    bad = [
        ("none", None, "error"), ("short", np.zeros(D - 1), "error"),
        ("single_class", np.zeros(D), "error"), ("nan", np.r_[np.nan, np.arange(D - 1) % 2],
                                                 "error"),
        ("2d", np.zeros((D, 2)), "error"), ("text", "labels", "error"),
        ("strings", np.where(np.arange(D) % 2, "pos", "neg"), "accept"),
    ]
    out = []
    for name in ("SupervisedTopicModel", "VariationalSLDA"):
        for label, y, expect in bad:
            out.append(Case(f"fit-y/{name}/{label}", "api",
                            lambda n=name, yy=y: fit(estimator(n), y=yy), expect))
    out.append(Case("fit-y/VariationalSLDA/three_classes", "api",
                    lambda: fit(estimator("VariationalSLDA"), y=np.arange(D) % 3)))
    return out


def _query_variants() -> list[tuple[str, Any, str]]:
    c = _counts()[:4]
    frame = pd.DataFrame(c, columns=[str(w) for w in data()["X"].vocabulary])
    return [
        ("wrong_columns", np.ones((2, c.shape[1] + 1)), "error"), ("nan", np.full(c.shape,
                                                                                   np.nan),
                                                                   "error"),
        ("negative", -c, "error"), ("1d", c[0], "error"), ("text", "a document", "error"),
        ("none", None, "error"), ("empty_batch", np.zeros((0, c.shape[1])), "accept"),
        ("empty_doc", np.zeros((1, c.shape[1])), "accept"),
        ("frame_unknown_columns", frame.rename(columns=lambda s: s + "_x"), "accept"),
        ("frame_reordered", frame[frame.columns[::-1]], "accept"),
    ]


def prediction_cases() -> list[Case]:
    out = []
    for name in MODELS:
        for label, X, expect in _query_variants():
            out.append(Case(f"transform/{name}/{label}", "api",
                            lambda n=name, x=X: fitted(n).transform(x), expect))
        for label, n_top in (("minus1", -1), ("zero", 0), ("float", 1.5), ("text", "3")):
            out.append(Case(f"top_words/{name}/{label}", "api",
                            lambda n=name, t=n_top: fitted(n).top_words(t)))
        for label, frac in (("zero", 0.0), ("one", 1.0), ("negative", -0.5), ("nan", np.nan),
                            ("text", "half")):
            out.append(Case(f"perplexity/{name}/{label}", "api",
                            lambda n=name, f=frac: fitted(n).perplexity(data()["X"], f)))
    D = data()["X"].n_docs
    new = data()["X"].subset([0, 1])
    for name in ("RelationalTopicModel", "VariationalRTM", "VisibilityTopicModel"):
        targets = [("out_of_range", [D]), ("negative", [-1]), ("float", [0.5]),
                   ("mask_short", np.ones(D - 1, bool)), ("text", ["a"]), ("2d", [[0, 1]])]
        for label, t in targets:
            out.append(Case(f"link_scores/{name}/targets_{label}", "api",
                            lambda n=name, tt=t: fitted(n).link_scores(new, targets=tt)))
        mask = np.zeros(D, bool)
        mask[[3, 5]] = True
        out.append(Case(
            f"link_scores/{name}/targets_mask", "api",
            lambda n=name, m=mask: fitted(n).link_scores(new, targets=m), "accept",
            lambda r, n=name: np.array_equal(r, fitted(n).link_scores(new, targets=[3, 5]))))
        for label, kwargs in (("direction", {"direction": "up"}),
                              ("no_query_no_targets", {"X_new": None})):
            out.append(Case(f"link_scores/{name}/{label}", "api",
                            lambda n=name, k=kwargs: fitted(n).link_scores(**k)))
        for label, top in (("minus1", -1), ("zero", 0), ("float", 2.5)):
            out.append(Case(f"suggest_links/{name}/{label}", "api",
                            lambda n=name, t=top: fitted(n).suggest_links(new, top=t)))
        for label, links_out in (("wrong_shape", np.ones((2, D + 1))), ("text", "x"),
                                 ("3d", np.ones((1, 2, D))), ("nan", np.full((1, D), np.nan))):
            out.append(Case(f"words_from_links/{name}/{label}", "api",
                            lambda n=name, lo=links_out: fitted(n).predict_words_from_links(lo)))
    for name in ("SupervisedTopicModel", "VariationalSLDA"):
        for label, X, expect in _query_variants():
            out.append(Case(f"decision_function/{name}/{label}", "api",
                            lambda n=name, x=X: fitted(n).decision_function(x), expect))
        out.append(Case(f"score/{name}/wrong_length", "api",
                        lambda n=name: fitted(n).score(new, [0, 1, 0])))
    return out


def unfitted_cases() -> list[Case]:
    out = []
    verbs = {"transform": lambda m: m.transform(np.ones((1, 30))),
             "save": lambda m: m.save("never.npz"), "summary": lambda m: m.summary(),
             "top_words": lambda m: m.top_words(3)}
    for name in MODELS:
        for verb, call in verbs.items():
            out.append(Case(f"unfitted/{name}/{verb}", "api",
                            lambda n=name, f=call: f(estimator(n))))
    return out


def resume_cases() -> list[Case]:
    out = []
    for name in MODELS:
        out.append(Case(f"resume/{name}/unfitted", "api",
                        lambda n=name: _resume_unfitted(n)))
    return out


def _resume_unfitted(name: str) -> Any:
    return _resume_data(estimator(name))


def _resume_data(est: Any) -> Any:
    needs = type(est).fit_requires
    d = data()
    if "links" in needs:
        return est.fit(d["X"], links=d["links"], resume=True)
    if "y" in needs:
        return est.fit(d["X"], d["y"], resume=True)
    return est.fit(d["X"], resume=True)


def container_cases() -> list[Case]:
    from topiclink.data import Corpus, Links

    c = _counts()
    out = []
    for label, X, expect in _bad_documents():
        if label in ("bool", "frame", "coo", "float_counts", "no_docs", "all_empty",
                     "no_words"):
            continue
        out.append(Case(f"Corpus/{label}", "api", lambda x=X: Corpus(x), expect))
    pairs = [("self", [[0, 0]]), ("negative", [[-1, 2]]), ("out_of_range", [[0, 99]]),
             ("float", [[0.5, 1]]), ("one_column", [1, 2]), ("nan", [[np.nan, 1]]),
             ("text", "x"), ("none", None)]
    for label, p in pairs:
        out.append(Case(f"Links/{label}", "api",
                        lambda pp=p: Links.from_pairs(np.asarray(pp), c.shape[0])))
    return out


def metric_cases() -> list[Case]:
    from topiclink import metrics

    s = np.random.default_rng(0).random((3, 5))
    truth = np.zeros((3, 5), bool)
    truth[0, 1] = truth[2, 3] = True
    bad = [("shape", s[:, :4], truth), ("nan", np.where(s > 0.5, np.nan, s), truth),
           ("empty", np.zeros((0, 5)), truth[:0]), ("no_positives", s, np.zeros_like(truth)),
           ("text", "x", truth), ("1d", s[0], truth[0])]
    out = []
    for label, scores, t in bad:
        for metric in ("link_auc", "link_rank"):
            out.append(Case(f"metric/{metric}/{label}", "api",
                            lambda m=metric, sc=scores, tt=t: getattr(metrics, m)(sc, tt)))
    out.append(Case("metric/accuracy/length", "api", lambda: metrics.accuracy([1, 0], [1])))
    out.append(Case("metric/accuracy/empty", "api", lambda: metrics.accuracy([], [])))
    out.append(Case("metric/perplexity/no_tokens", "api", lambda: metrics.perplexity(-3.0, 0)))
    out.append(Case("metric/perplexity/positive_loglik", "api",
                    lambda: metrics.perplexity(5.0, 10)))
    out.append(Case("metric/word_rank/shape", "api",
                    lambda: metrics.word_rank(np.ones((2, 3)) / 3, np.ones((2, 4)))))
    return out


#: n_tokens of predict_words_from_links: (label, value, expect per model kind) with the
#: kinds "sampled" (RTM: one whole number for every new document) and "real" (any N > 0,
#: or one per new document); two new documents are asked for
N_TOKENS: list[tuple[str, Any, str, str]] = [
    ("minus5", -5, "error", "error"), ("zero", 0, "error", "error"),
    ("minus_half", -0.5, "error", "error"), ("nan", float("nan"), "error", "error"),
    ("inf", float("inf"), "error", "error"), ("text", "many", "error", "error"),
    ("numeric_text", "20", "error", "error"), ("true", True, "error", "error"),
    ("complex", 3 + 0j, "error", "error"), ("dict", {}, "error", "error"),
    ("wrong_length", [1, 2, 3], "error", "error"), ("one_short", [5], "error", "error"),
    ("2d", [[5, 5]], "error", "error"), ("per_doc_zero", [5, 0], "error", "error"),
    ("per_doc_nan", [5, float("nan")], "error", "error"),
    ("fraction", 2.5, "error", "accept"), ("per_doc", [5, 9], "error", "accept"),
    ("np_per_doc", np.array([5.0, 9.0]), "error", "accept"),
    ("twenty", 20, "accept", "accept"), ("np_int", np.int64(7), "accept", "accept"),
    ("whole_float", 20.0, "accept", "accept"), ("none", None, "accept", "accept"),
]


def words_from_links_cases() -> list[Case]:
    """Every link model's ``predict_words_from_links`` fed each form of ``n_tokens``."""
    D = data()["X"].n_docs
    links_out = np.zeros((2, D))
    links_out[0, 1] = links_out[1, 3] = 1

    def distributions(r: Any) -> bool:
        r = np.asarray(r)
        return r.shape == (2, data()["X"].n_words) and bool(
            np.all(np.isfinite(r)) and np.allclose(r.sum(axis=1), 1.0))

    out = []
    for name in ("RelationalTopicModel", "VariationalRTM", "VisibilityTopicModel"):
        sampled = name == "RelationalTopicModel"
        for label, value, expect_sampled, expect_real in N_TOKENS:
            expect = expect_sampled if sampled else expect_real
            out.append(Case(f"words_from_links/{name}/n_tokens_{label}", "api",
                            lambda n=name, v=value: fitted(n).predict_words_from_links(
                                links_out, n_tokens=v), expect,
                            distributions if expect == "accept" else None))
    return out


def text_cases() -> list[Case]:
    """``corpus_from_texts``: anything that is not a text vectorizer instance."""
    from sklearn.feature_extraction.text import CountVectorizer

    from topiclink.data.io import corpus_from_texts

    texts = ["graph node word", "topic word model", "node graph topic"]
    bad = {"int": 5, "text": "count", "none_like": object(), "dict": {"min_df": 1},
           "class": CountVectorizer, "list": [CountVectorizer()], "fitted_elsewhere_fn":
           CountVectorizer().fit_transform}
    out = [Case(f"corpus_from_texts/vectorizer_{label}", "api",
                lambda v=v: corpus_from_texts(texts, vectorizer=v))
           for label, v in bad.items()]
    out.append(Case("corpus_from_texts/vectorizer_count", "api",
                    lambda: corpus_from_texts(texts, vectorizer=CountVectorizer()), "accept",
                    lambda c: c.n_docs == 3))
    fitted_vectorizer = CountVectorizer().fit(texts)
    out.append(Case("corpus_from_texts/vectorizer_fitted", "api",
                    lambda: corpus_from_texts(texts, vectorizer=fitted_vectorizer), "accept",
                    lambda c: list(c.vocabulary) == list(
                        fitted_vectorizer.get_feature_names_out())))
    return out


def cases() -> list[Case]:
    return (parameter_cases() + document_cases() + link_cases() + label_cases()
            + prediction_cases() + unfitted_cases() + resume_cases() + container_cases()
            + metric_cases() + words_from_links_cases() + text_cases())
