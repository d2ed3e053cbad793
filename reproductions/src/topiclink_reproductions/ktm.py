"""The kernel topic model paper's State-of-the-Union protocol (Hennig et al. 2012, sec. 4.1).

Its settings, models and claims are data (``papers/ktm.toml``, :data:`PAPER`); this module
holds what data cannot say: the features of each model and the fitting recipes.

One document per address (1790-2011 by default, as in the paper), K = 10, the
``vocabulary`` most frequent terms after stop words (the paper: V = 5000), a seeded split
of the addresses into training and test documents.  Models, all in the same run:

* ``LDA``  -- plain collapsed Gibbs LDA (alpha 0.1, beta 0.01);
* ``DMR``  -- Dirichlet-multinomial regression on 100 Gaussian radial basis functions of
  the year (evenly spaced over the first..last year, width 5 years) plus one indicator per
  president (the paper: 44 speakers; our data has 41 presidents up to 2011, 42 to 2020);
* ``GDMR`` -- tomotopy's ``GDMRModel`` (year numeric, Legendre degree
  :attr:`KTMSettings.gdmr_degree`; president categorical), where tomotopy is installed;
* ``KTM``  -- :class:`topiclink.families.ktm.estimator.KernelTopicModel` with
  :class:`topiclink.families.ktm.gp.kernels.SOTUKernel` (rational quadratic in the year plus a
  speaker constant) on ``[year, speaker_code]``, where that module imports.

Measured per model: the training perplexity ``exp(-sum n_dw log(theta_d . phi_w) / N)`` of
the current point estimates against iteration (every ``evaluate_every`` iterations; the
paper's Fig. 6, whose one number is KTM ending about 12 % below DMR), the perplexity the
sampler itself reports (the collapsed joint ``p(w, z)`` per token: LDA/DMR's trace,
tomotopy's ``perplexity``), seconds per iteration, and the held-out perplexity by
document completion on the test addresses, computed by *our* estimator for every model
(:func:`topiclink.topics.completion.completion_log_likelihood`, same split and seed for all: each
test document's prior from its year and president, half its tokens observed).  For GDMR
its topics are rebuilt from tomotopy's topic-word counts over our vocabulary
(``(n_kw + eta) / (n_k + V eta)``) and each test document's prior is
``exp(tdf(year, president)) + alpha_epsilon`` (checked: tomotopy's own document topic
distributions are ``(n_dk + alpha_dk) / (N_d + sum alpha_d)`` with exactly this prior).
Finally the topics-over-time picture (the paper's Fig. 5): the prior mean topic
proportions predicted for every year with the sitting president, stacked.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.corpus import Corpus
from topiclink.experiments.registry import (
    Choice,
    ProtocolSpec,
    Session,
    option,
    register_protocol,
    shared,
)
from topiclink.topics.completion import completion_perplexity, training_perplexity
from topiclink_reproductions.claims import check_claims, claim_lines
from topiclink_reproductions.spec import load_paper
from topiclink_reproductions.steps import finish_check, read_dataset

__all__ = ["MODEL_NAMES", "PAPER", "KTMSettings", "SOTUData", "ModelRun",
           "KTMResult", "prepare_sotu", "sitting_presidents", "available_models",
           "run_ktm_experiment", "summary_text", "write_ktm_outputs", "top_word_labels",
           "KTMOptions", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper's protocol as data (``papers/ktm.toml``)
PAPER = load_paper("ktm")
MODEL_NAMES = PAPER.model_names
_S, _SPLIT = PAPER.settings, PAPER.split
#: the graph protocol's (``--kernel graph``) defaults of the shared options
_GRAPH = load_paper("ktm_graph")


@dataclass
class KTMSettings:
    """Settings of the protocol (defaults: ``papers/ktm.toml``).

    ``first_year``/``last_year`` select the addresses (the paper's corpus ends in 2011) and
    span the RBF centres and the topics-over-time picture.  ``alpha`` (the initial /
    symmetric document-topic prior) and ``beta`` are shared by all models.  DMR and GDMR
    optimise their regression weights every ``optimize_every`` sweeps after ``burn_in``.
    ``gdmr_degree`` is the degree of tomotopy's Legendre polynomial of the year (tomotopy
    fits one polynomial per president: its categorical metadata selects a separate
    coefficient vector).  ``ktm_max_iter`` None gives KTM ``max_iter`` outer iterations;
    ``ktm_params`` are passed to its constructor.
    """

    n_topics: int = _S["n_topics"]
    vocabulary: int = _S["vocabulary"]
    first_year: int = _S["first_year"]
    last_year: int = _S["last_year"]
    max_iter: int = _S["max_iter"]
    test_fraction: float = _SPLIT.get("test_fraction")
    completion_fraction: float = _SPLIT.get("completion_fraction")
    evaluate_every: int = _S["evaluate_every"]
    alpha: float = _S["alpha"]
    beta: float = _S["beta"]
    n_centers: int = _S["n_centers"]
    rbf_width: float = _S["rbf_width"]
    optimize_every: int = _S["optimize_every"]
    burn_in: int = _S["burn_in"]
    gdmr_degree: int = PAPER.model_settings("GDMR")["degree"]
    ktm_max_iter: int | None = None
    ktm_params: dict[str, Any] = field(default_factory=dict)


@dataclass
class SOTUData:
    """The addresses, their metadata and the split."""

    corpus: Corpus
    years: np.ndarray          # int (D,)
    presidents: np.ndarray     # str (D,)
    speaker_names: np.ndarray  # str (S,), sorted: speaker code = position
    train: np.ndarray          # int positions
    test: np.ndarray
    settings: KTMSettings

    @property
    def speaker_codes(self) -> np.ndarray:
        return np.searchsorted(self.speaker_names, self.presidents)

    def dmr_features(self, years: Any, presidents: Any) -> np.ndarray:
        """100 RBFs of the year + one indicator per president (every president of the
        data, so a president seen only in test documents gets a column without data)."""
        from topiclink.families.ktm.gp.features import one_hot, radial_basis_features

        s = self.settings
        rbf = radial_basis_features(np.asarray(years, dtype=float), n_centers=s.n_centers,
                                    low=s.first_year, high=s.last_year, width=s.rbf_width)
        ind, _ = one_hot(np.asarray(presidents, dtype=str), names=self.speaker_names)
        return np.hstack([rbf, ind])

    def ktm_features(self, years: Any, presidents: Any) -> np.ndarray:
        """``[[year, speaker_code]]`` (the input of SOTUKernel)."""
        codes = np.searchsorted(self.speaker_names, np.asarray(presidents, dtype=str))
        return np.column_stack([np.asarray(years, dtype=float), codes.astype(float)])

    def part(self, index: np.ndarray) -> Corpus:
        return self.corpus.subset(index)


def _top_terms(corpus: Corpus, n: int) -> Corpus:
    """The corpus over its ``n`` most frequent words (ties: vocabulary order)."""
    totals = np.asarray(corpus.counts.sum(axis=0)).ravel()
    if n >= totals.size:
        keep = np.flatnonzero(totals > 0)
    else:
        keep = np.sort(np.argsort(-totals, kind="stable")[:n])
    vocab = None if corpus.vocabulary is None else np.asarray(corpus.vocabulary)[keep]
    return Corpus(sp.csr_matrix(corpus.counts[:, keep]), vocabulary=vocab,
                  doc_ids=corpus.doc_ids, titles=corpus.titles, metadata=corpus.metadata,
                  name=corpus.name)


def prepare_sotu(data: Any = "sotu", settings: KTMSettings | None = None,
                 seed: int = 0) -> SOTUData:
    """Addresses of ``first_year..last_year`` over the ``vocabulary`` most frequent terms
    (counted over those addresses), and a seeded split (``test_fraction`` of them).

    ``data``: a registered name, a Dataset or a Corpus whose ``metadata`` has columns
    ``year`` and ``president``.
    """
    settings = settings or KTMSettings()
    if isinstance(data, str):
        from topiclink.datasets import load_dataset

        data = load_dataset(data)
    corpus = data if isinstance(data, Corpus) else getattr(data, "corpus", None)
    if corpus is None:
        raise ValueError("the data set has no documents")
    meta = corpus.metadata
    if meta is None or not {"year", "president"} <= set(meta.columns):
        raise ValueError("the documents need metadata columns 'year' and 'president' "
                         "(e.g. the sotu data set)")
    years = meta["year"].to_numpy(dtype=np.int64)
    keep = np.flatnonzero((years >= settings.first_year) & (years <= settings.last_year))
    if keep.size < 4:
        raise ValueError(f"only {keep.size} documents in {settings.first_year}-"
                         f"{settings.last_year}")
    corpus = _top_terms(corpus.subset(keep), int(settings.vocabulary))
    lengths = np.asarray(corpus.counts.sum(axis=1)).ravel()
    if (lengths == 0).any():
        corpus = corpus.subset(np.flatnonzero(lengths > 0))
        logger.info("dropped %d addresses without any of the kept terms",
                    int((lengths == 0).sum()))
    meta = corpus.metadata
    years = meta["year"].to_numpy(dtype=np.int64)
    presidents = meta["president"].astype(str).to_numpy()
    D = corpus.n_docs
    if not 0.0 < settings.test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in (0, 1), got {settings.test_fraction}")
    n_test = min(max(1, int(round(settings.test_fraction * D))), D - 1)
    perm = np.random.default_rng(seed).permutation(D)
    return SOTUData(corpus=corpus, years=years, presidents=presidents,
                    speaker_names=np.unique(presidents), train=np.sort(perm[n_test:]),
                    test=np.sort(perm[:n_test]), settings=settings)


def sitting_presidents(years: Any, presidents: Any, first: int, last: int
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Every year ``first..last`` and its sitting president: the author of that year's
    last address in document order (a transition year has two), else the previous
    year's president (the first address's before any address)."""
    y = np.asarray(years, dtype=np.int64)
    p = np.asarray(presidents, dtype=str)
    order = np.argsort(y, kind="stable")
    by_year: dict[int, str] = {}
    for i in order:
        by_year[int(y[i])] = str(p[i])
    grid = np.arange(int(first), int(last) + 1)
    out: list[str] = []
    current = str(p[order[0]])
    for year in grid:
        current = by_year.get(int(year), current)
        out.append(current)
    return grid, np.asarray(out)


# ---------------------------------------------------------------------- the models
@dataclass
class ModelRun:
    """One fitted model: its trajectory rows and summary numbers."""

    model: str
    trajectory: list[dict[str, Any]]
    seconds_per_iteration: float
    fit_seconds: float
    n_iter: int
    final_train_perplexity: float
    heldout_perplexity: float
    topics: np.ndarray | None = None                 # (K, V)
    predict: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    note: str = ""


def _train_counts(data: SOTUData) -> tuple[Corpus, Corpus]:
    return data.part(data.train), data.part(data.test)


def _gibbs_trajectory(model: Any, history: list[tuple[int, dict[str, float]]]
                      ) -> list[dict[str, Any]]:
    trace = getattr(model, "trace_", {}) or {}
    ll = np.asarray(trace.get("log_likelihood", []), dtype=float)
    rows = []
    for it, values in history:
        native = float(np.exp(-ll[it - 1])) if it - 1 < ll.size and np.isfinite(
            ll[it - 1]) else float("nan")
        rows.append({"iteration": int(it), "train_perplexity": values["train_perplexity"],
                     "native_perplexity": native})
    return rows


def _fit_ours(name: str, model: Any, data: SOTUData, fit_kwargs: dict[str, Any],
              test_kwargs: dict[str, Any], seed: int) -> ModelRun:
    from topiclink.callbacks import EvaluateEvery

    s = data.settings
    train, test = _train_counts(data)
    every = max(1, int(s.evaluate_every))
    cb = EvaluateEvery(lambda m: {"train_perplexity": training_perplexity(
        train, m.doc_topic_, m.components_)}, every=every)
    model.set_params(callbacks=[cb])
    t0 = time.perf_counter()
    model.fit(train, **fit_kwargs)
    wall = time.perf_counter() - t0
    seconds = np.asarray(model.trace_.get("seconds", []), dtype=float)
    final = training_perplexity(train, model.doc_topic_, model.components_)
    history = list(cb.history)
    if not history or history[-1][0] != model.n_iter_:
        history.append((int(model.n_iter_), {"train_perplexity": final}))
    heldout = float(model.perplexity(test, fraction=s.completion_fraction,
                                     random_state=seed, **test_kwargs))
    return ModelRun(name, _gibbs_trajectory(model, history),
                    float(seconds.mean()) if seconds.size else wall / max(model.n_iter_, 1),
                    wall, int(model.n_iter_), final, heldout,
                    topics=np.asarray(model.components_))


def fit_lda(data: SOTUData, seed: int) -> ModelRun:
    from topiclink.estimators import LDA

    s = data.settings
    model = LDA(s.n_topics, doc_topic_prior=s.alpha, topic_word_prior=s.beta,
                max_iter=s.max_iter, random_state=seed)
    return _fit_ours("LDA", model, data, {}, {}, seed)


def fit_dmr(data: SOTUData, seed: int) -> ModelRun:
    from topiclink.estimators import DMR

    s = data.settings
    model = DMR(s.n_topics, doc_topic_prior=s.alpha, topic_word_prior=s.beta,
                optimize_every=s.optimize_every, burn_in=min(s.burn_in, s.max_iter - 1),
                max_iter=s.max_iter, random_state=seed)
    tr, te = data.train, data.test
    run = _fit_ours("DMR", model, data,
                    {"features": data.dmr_features(data.years[tr], data.presidents[tr])},
                    {"features": data.dmr_features(data.years[te], data.presidents[te])},
                    seed)
    run.predict = lambda years, pres: model.predict_topics(data.dmr_features(years, pres))
    run.note = (f"{s.n_centers} RBFs of the year (width {s.rbf_width:g}) + "
                f"{data.speaker_names.size} president indicators")
    return run


def fit_gdmr(data: SOTUData, seed: int) -> ModelRun:
    """tomotopy's GDMR (:class:`~topiclink_reproductions.peers.tomotopy.TomotopyGDMR`:
    year numeric, president categorical), trained in chunks of ``evaluate_every``
    iterations; scored by our estimators (module docstring)."""
    from topiclink_reproductions.peers.tomotopy import TomotopyGDMR

    s = data.settings
    train, test = _train_counts(data)
    mdl = TomotopyGDMR(s.n_topics, s.gdmr_degree, s.alpha, s.beta,
                       burn_in=min(s.burn_in, s.max_iter - 1),
                       optimize_every=s.optimize_every, random_state=seed)
    mdl.add_documents(train, data.years[data.train], data.presidents[data.train])
    every = max(1, int(s.evaluate_every))
    rows: list[dict[str, Any]] = []
    seconds = 0.0
    done = 0
    while done < s.max_iter:
        step = min(every, s.max_iter - done)
        seconds += mdl.train(step)
        done += step
        rows.append({"iteration": done,
                     "train_perplexity": training_perplexity(train, mdl.doc_topic(),
                                                             mdl.topics()),
                     "native_perplexity": mdl.perplexity})
    phi = mdl.topics()
    te = data.test
    unseen = sorted(set(data.presidents[te].tolist()) - mdl.labels)
    heldout = completion_perplexity(test, phi, mdl.prior(data.years[te], data.presidents[te]),
                                    fraction=s.completion_fraction, random_state=seed)
    run = ModelRun("GDMR", rows, seconds / max(done, 1), seconds, done,
                   rows[-1]["train_perplexity"], heldout, topics=phi)

    def predict(years_: np.ndarray, pres_: np.ndarray) -> np.ndarray:
        a = mdl.prior(np.asarray(years_), np.asarray(pres_))
        return a / a.sum(axis=1, keepdims=True)

    run.predict = predict
    run.note = (f"tomotopy {mdl.version} GDMRModel, Legendre degree {s.gdmr_degree}, "
                f"{len(mdl.labels)} presidents" + (f"; test presidents without training "
                                                   f"addresses (mean prior): {unseen}"
                                                   if unseen else ""))
    return run


def _accepts(fn: Any, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD
                                 for p in params.values())


def _ktm_class() -> Any:
    from topiclink.families.ktm.estimator import KernelTopicModel

    return KernelTopicModel


def fit_ktm(data: SOTUData, seed: int) -> ModelRun:
    """KernelTopicModel with SOTUKernel on [year, speaker_code]."""
    from topiclink.families.ktm.gp.kernels import SOTUKernel

    cls = _ktm_class()
    s = data.settings
    train, test = _train_counts(data)
    n_iter = int(s.ktm_max_iter or s.max_iter)
    params: dict[str, Any] = {"n_topics": s.n_topics, "kernel": SOTUKernel(),
                              "max_iter": n_iter}
    if _accepts(cls.__init__, "random_state"):
        params["random_state"] = seed
    paper = dict(PAPER.model_settings("KTM"))
    if not paper.pop("hyperprior", True):
        paper["hyperprior_scale"] = None             # maximum evidence, as the paper
    params.update({k: v for k, v in paper.items() if _accepts(cls.__init__, k)})
    params.update(s.ktm_params)
    model = cls(**params)
    tr, te = data.train, data.test
    t0 = time.perf_counter()
    model.fit(train, features=data.ktm_features(data.years[tr], data.presidents[tr]))
    wall = time.perf_counter() - t0
    trace = getattr(model, "trace_", {}) or {}
    # KTM records the training log-likelihood per token; perplexity = exp(-that)
    perp = np.exp(-np.asarray(trace.get("log_likelihood", []), dtype=float))
    n_done = int(getattr(model, "n_iter_", perp.size or n_iter))
    rows = [{"iteration": i + 1, "train_perplexity": float(v),
             "native_perplexity": float(v)} for i, v in enumerate(perp)]
    final = float(perp[-1]) if perp.size else float("nan")
    if hasattr(model, "doc_topic_") and hasattr(model, "components_"):
        final = training_perplexity(train, model.doc_topic_, model.components_)
    kwargs: dict[str, Any] = {"features": data.ktm_features(data.years[te],
                                                            data.presidents[te])}
    if _accepts(model.perplexity, "fraction"):
        kwargs["fraction"] = s.completion_fraction
    if _accepts(model.perplexity, "random_state"):
        kwargs["random_state"] = seed
    heldout = float(model.perplexity(test, **kwargs))
    seconds = np.asarray(trace.get("seconds", []), dtype=float)
    run = ModelRun("KTM", rows,
                   float(seconds.mean()) if seconds.size else wall / max(n_done, 1),
                   wall, n_done, final, heldout,
                   topics=np.asarray(getattr(model, "components_", np.empty((0, 0)))))
    run.predict = lambda years, pres: np.asarray(
        model.predict_topics(data.ktm_features(years, pres)))
    run.note = f"kernel {getattr(model, 'kernel_', model.kernel)!r}"
    return run


FITTERS: dict[str, Callable[[SOTUData, int], ModelRun]] = {
    "LDA": fit_lda, "DMR": fit_dmr, "GDMR": fit_gdmr, "KTM": fit_ktm}


def _why_unavailable(name: str) -> str | None:
    """None when model ``name`` can run, else why not."""
    if name == "GDMR":
        try:
            import tomotopy  # noqa: F401
        except ImportError:
            return "tomotopy is not installed (pip install tomotopy)"
    if name == "KTM":
        try:
            _ktm_class()
            from topiclink.families.ktm.gp.kernels import SOTUKernel  # noqa: F401
        except Exception as exc:  # noqa: BLE001  (a module being written may fail anyhow)
            return (f"topiclink.families.ktm.estimator.KernelTopicModel does not import yet "
                    f"({exc!r})")
    return None


def available_models() -> list[str]:
    """The models of :data:`MODEL_NAMES` that can run here."""
    return [m for m in MODEL_NAMES if _why_unavailable(m) is None]


@dataclass
class KTMResult:
    trajectory: pd.DataFrame     # model, iteration, train_perplexity, native_perplexity
    summary: pd.DataFrame        # one row per model
    over_time: dict[str, pd.DataFrame]   # model -> year, president, topic_0..K-1
    labels: dict[str, list[str]]         # model -> legend labels
    skipped: dict[str, str]
    data: SOTUData


def top_word_labels(topics: np.ndarray, vocabulary: Any, n_words: int = 4,
                    by: str = "term-score") -> list[str]:
    """``"k: w1 w2 w3 w4"`` per topic (its top words by term-score, or by probability)."""
    from topiclink.estimators.topic_display import top_word_indices

    vocab = np.asarray(vocabulary, dtype=str)
    order = top_word_indices(np.asarray(topics), n_words, by, "top_word_labels")
    return [f"{k}: " + " ".join(vocab[order[k]]) for k in range(order.shape[0])]


def run_ktm_experiment(data: Any = "sotu", models: Sequence[str] | None = None,
                       settings: KTMSettings | None = None, seed: int = 0,
                       out: str | Path | None = None,
                       on_model: Callable[[ModelRun], None] | None = None) -> KTMResult:
    """Run the protocol (module docstring) on ``data`` (a name, Dataset, Corpus or a
    prepared :class:`SOTUData`).  ``models`` None: every available model; a named model
    that cannot run here (tomotopy missing, KTM not importable) is skipped with a logged
    message, an unknown name raises.  With ``out``, writes :func:`write_ktm_outputs`."""
    settings = settings or KTMSettings()
    names = list(MODEL_NAMES) if models is None else [str(m) for m in models]
    for name in names:
        if name not in MODEL_NAMES:
            raise ValueError(f"unknown model {name!r}; known: {', '.join(MODEL_NAMES)}")
    if not names:
        raise ValueError("no model given")
    prepared = data if isinstance(data, SOTUData) else prepare_sotu(data, settings, seed)
    s = prepared.settings
    logger.info("%d addresses %d-%d (%d training, %d test), %d words, %d presidents",
                prepared.corpus.n_docs, s.first_year, s.last_year, prepared.train.size,
                prepared.test.size, prepared.corpus.n_words, prepared.speaker_names.size)
    runs: list[ModelRun] = []
    skipped: dict[str, str] = {}
    for name in names:
        why = _why_unavailable(name)
        if why is not None:
            logger.warning("skipping %s: %s", name, why)
            skipped[name] = why
            continue
        logger.info("fitting %s", name)
        run = FITTERS[name](prepared, seed)
        runs.append(run)
        if on_model is not None:
            on_model(run)
    if not runs:
        raise ValueError("no model could run: " + "; ".join(f"{k}: {v}"
                                                            for k, v in skipped.items()))
    trajectory = pd.DataFrame([{"model": r.model, **row} for r in runs
                               for row in r.trajectory],
                              columns=["model", "iteration", "train_perplexity",
                                       "native_perplexity"])
    summary = pd.DataFrame([{
        "model": r.model, "K": s.n_topics, "n_words": prepared.corpus.n_words,
        "n_train": prepared.train.size, "n_test": prepared.test.size,
        "n_iter": r.n_iter, "final_train_perplexity": r.final_train_perplexity,
        "heldout_perplexity": r.heldout_perplexity,
        "seconds_per_iteration": r.seconds_per_iteration, "fit_seconds": r.fit_seconds,
        "note": r.note} for r in runs])
    grid, sitting = sitting_presidents(prepared.years, prepared.presidents, s.first_year,
                                       s.last_year)
    over_time: dict[str, pd.DataFrame] = {}
    labels: dict[str, list[str]] = {}
    for r in runs:
        if r.predict is None:
            continue
        props = np.asarray(r.predict(grid, sitting), dtype=float)
        frame = pd.DataFrame(props, columns=[f"topic_{k}" for k in range(props.shape[1])])
        frame.insert(0, "president", sitting)
        frame.insert(0, "year", grid)
        over_time[r.model] = frame
        labels[r.model] = (top_word_labels(r.topics, prepared.corpus.vocabulary)
                           if r.topics is not None and r.topics.size
                           else [f"topic {k}" for k in range(props.shape[1])])
    result = KTMResult(trajectory, summary, over_time, labels, skipped, prepared)
    if out is not None:
        write_ktm_outputs(result, out)
    return result


def _ratio(summary: pd.DataFrame, a: str, b: str, col: str) -> float | None:
    t = summary.set_index("model")
    if a in t.index and b in t.index:
        return float(t.loc[a, col] / t.loc[b, col])
    return None


def summary_text(result: KTMResult) -> str:
    """The numbers per model and the paper's claims (``papers/ktm.toml``: KTM / DMR final
    training perplexity about 0.88) with their verdicts, or why they are not checked."""
    d, s = result.data, result.data.settings
    lines = [f"State of the Union {s.first_year}-{s.last_year}: {d.corpus.n_docs} addresses "
             f"({d.train.size} training, {d.test.size} test, seed split), "
             f"{d.corpus.n_words} words, {d.speaker_names.size} presidents (the paper: 44 "
             f"speaker indicators), K = {s.n_topics}",
             "training perplexity = exp(-sum n_dw log(theta_d . phi_w) / N) of the point "
             "estimates; held-out = document completion on the test addresses (our "
             f"estimator for every model, {s.completion_fraction:g} of each document's "
             "tokens held out, prior from year and president)", ""]
    for r in result.summary.itertuples():
        lines.append(f"{r.model:>5s}: training perplexity {r.final_train_perplexity:8.1f}  "
                     f"held-out {r.heldout_perplexity:8.1f}  {r.seconds_per_iteration:.4f} "
                     f"s/iteration ({r.n_iter} iterations)"
                     + (f"  [{r.note}]" if r.note else ""))
    for name, why in result.skipped.items():
        lines.append(f"{name:>5s}: skipped ({why})")
    lines.append("")
    lines += [f"paper's claim, {line}" for line in claim_lines(
        check_claims(result.summary, PAPER.claims), PAPER.claims)]
    for a, b in (("DMR", "LDA"), ("GDMR", "DMR")):
        tr = _ratio(result.summary, a, b, "final_train_perplexity")
        if tr is not None:
            he = _ratio(result.summary, a, b, "heldout_perplexity")
            lines.append(f"{a} / {b}: training {tr:.3f}, held-out {he:.3f}")
    return "\n".join(lines)


def write_ktm_outputs(result: KTMResult, out: str | Path) -> dict[str, Path]:
    """ktm_trajectory.csv, ktm_summary.csv, ktm_summary.txt, ktm_perplexity.png,
    ktm_topics_over_time_<model>.csv/.png in ``out``."""
    import matplotlib.pyplot as plt

    from topiclink.experiments.runner import write_csv
    from topiclink.plotting.experiments import plot_metric_vs_iteration, save_figure
    from topiclink.plotting.topics import plot_topics_over_time

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    s = result.data.settings
    paths = {"trajectory": write_csv(result.trajectory, out / "ktm_trajectory.csv"),
             "summary": write_csv(result.summary, out / "ktm_summary.csv")}
    text = out / "ktm_summary.txt"
    text.write_text(summary_text(result) + "\n")
    paths["summary_text"] = text
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    plot_metric_vs_iteration(result.trajectory, "train_perplexity", ax=axes[0])
    axes[0].set_title("training perplexity of the estimates (paper Fig. 6)")
    plot_metric_vs_iteration(result.trajectory, "native_perplexity", ax=axes[1])
    axes[1].set_title("perplexity each sampler reports (collapsed joint)")
    paths["perplexity"] = save_figure(fig, out / "ktm_perplexity.png")
    for model, frame in result.over_time.items():
        paths[f"over_time_{model}_csv"] = write_csv(
            frame, out / f"ktm_topics_over_time_{model}.csv")
        props = frame[[c for c in frame.columns if c.startswith("topic_")]].to_numpy()
        ax = plot_topics_over_time(frame["year"].to_numpy(), props, result.labels[model])
        ax.set_title(f"{model}: prior topic proportions by year, sitting president "
                     f"(paper Fig. 5), K = {s.n_topics}")
        paths[f"over_time_{model}"] = save_figure(
            ax.figure, out / f"ktm_topics_over_time_{model}.png")
    return paths


# ---------------------------------------------------------------------- the command
@dataclass
class KTMOptions:
    """The options of ``topiclink experiment ktm`` (:data:`SPEC`; with ``--kernel
    graph`` the protocol of :mod:`topiclink_reproductions.ktm_graph` runs them)."""

    dataset: str | None = shared("dataset")
    data: Path | None = shared("data")
    topics: int = option(_S["n_topics"], "--topics", help="K (the paper: 10).")
    vocabulary: int = option(_S["vocabulary"], help="Keep the most frequent terms after stop words "
                             "(the paper: 5000).")
    iterations: int = option(_S["max_iter"], "--iterations", "-n",
                             help="Gibbs sweeps (KTM: outer iterations).")
    models: str | None = option(None, help="Comma-separated: LDA, DMR, GDMR (tomotopy), KTM "
                                "(default: all that are available here).")
    test_fraction: float = option(_SPLIT.get("test_fraction"), "--test-fraction",
                                  help="Share of the addresses held out (seeded split).")
    last_year: int = option(_S["last_year"], "--last-year", help="Use the addresses up to "
                            "this year (the paper's corpus ends in 2011).")
    evaluate_every: int = option(_S["evaluate_every"], "--evaluate-every",
                                 help="Training perplexity every this many iterations.")
    kernel: str | None = option(
        None, "--kernel", help="sotu: the State-of-the-Union protocol (year and "
        "president); graph: topics on a graph, a connected subgraph of a linked corpus "
        "with the shortest-path kernel, against LDA and a constant-kernel KTM (default: "
        "graph for a data set with links, else sotu; graph without --dataset/--data: "
        "cora).")
    subgraph_size: int = option(_GRAPH.split.get("n_docs"), "--subgraph-size",
                                help="--kernel graph: documents in the BFS ball (the "
                                "paper: 318).")
    optimize_every: int | None = option(
        _GRAPH.settings["optimize_every"], "--optimize-every", help="--kernel graph: "
        "iterations between the KTMs' maximisations of the kernel hyper-parameters and "
        "tau; 0 (the default): keep the start values (amplitude 1, median-heuristic "
        "length scale, tau 1); on 3 of 4 Cora subgraphs the maximisation ran the graph "
        "kernel to its bounds (benchmarks/ktm_graph_seeds.py).")
    seed: int = option(0)
    out: Path = option(Path("ktm-experiment"), "--out", "-o", help="Output folder (created "
                       "when missing) for ktm_*.csv, ktm_summary.txt and ktm_*.png; "
                       "results already there are refused unless --force.")
    force: bool = shared("force", False)
    verbose: bool = shared("verbose", True)


def _choose(o: KTMOptions, ui: Session) -> Choice | None:
    """``--kernel graph``, or a data set with links and no ``--kernel``: the graph
    protocol (``ktm-graph``); the data are read here when they decide."""
    if o.kernel is not None and o.kernel not in ("sotu", "graph"):
        raise ui.fail(f"--kernel must be sotu or graph, got {o.kernel!r}")
    if o.kernel == "graph" or (o.kernel is None and (o.dataset is not None
                                                     or o.data is not None)):
        ds = ui.load_data(o.dataset, o.data, default=_GRAPH.dataset)
        if o.kernel == "graph" or (o.kernel is None and ds.links is not None):
            return Choice("ktm-graph", ds)
        return Choice("ktm", ds)
    return None


@dataclass
class _Plan:
    options: KTMOptions
    names: list[str]
    settings: KTMSettings


def _check(o: KTMOptions, ui: Session) -> _Plan:
    """Every option of the State-of-the-Union protocol and the output folder."""
    if o.models is None:
        names = available_models()
        skipped = [m for m in MODEL_NAMES if m not in names]
        if skipped:
            ui.echo(f"not available here, skipped: {', '.join(skipped)}")
    else:
        names = ui.names(o.models, MODEL_NAMES)
    ui.check(o.topics >= 3, f"--topics must be >= 3, got {o.topics}")
    ui.check_model_size(o.topics)
    ui.check(o.vocabulary >= 2, f"--vocabulary must be >= 2, got {o.vocabulary}")
    ui.check(o.iterations >= 1, f"--iterations must be >= 1, got {o.iterations}")
    ui.check(0 < o.test_fraction < 1,
             f"--test-fraction must be in (0, 1), got {o.test_fraction:g}")
    ui.check(o.evaluate_every >= 1, f"--evaluate-every must be >= 1, got {o.evaluate_every}")
    finish_check(o, ui, "ktm")
    settings = KTMSettings(n_topics=o.topics, vocabulary=o.vocabulary, max_iter=o.iterations,
                           test_fraction=o.test_fraction, last_year=o.last_year,
                           evaluate_every=o.evaluate_every,
                           burn_in=min(_S["burn_in"], max(o.iterations // 4, 0)))
    return _Plan(o, names, settings)


def _load(plan: _Plan, ui: Session, data: Any) -> SOTUData:
    o, settings = plan.options, plan.settings
    ds = read_dataset(PAPER, o, ui, data)
    prepared = prepare_sotu(ds, settings, o.seed)
    ui.echo(f"{ds.name}: {prepared.corpus.n_docs} addresses {settings.first_year}-"
            f"{o.last_year} ({prepared.train.size} training, {prepared.test.size} test), "
            f"{prepared.corpus.n_words} words, {prepared.speaker_names.size} presidents")
    return prepared


def _run(plan: _Plan, prepared: SOTUData, ui: Session) -> KTMResult:
    def show(run: ModelRun) -> None:
        ui.echo(f"{run.model:>5s}: training perplexity {run.final_train_perplexity:.1f}  "
                f"held-out {run.heldout_perplexity:.1f}  "
                f"{run.seconds_per_iteration:.4f} s/iteration")

    return run_ktm_experiment(prepared, plan.names, seed=plan.options.seed,
                              out=plan.options.out, on_model=show)


def _cells(plan: _Plan, prepared: SOTUData) -> list[dict[str, Any]]:
    """The fits of the run, for ``--plan`` (the run fits outside ``run_grid``): one per
    model that can run here."""
    s = prepared.settings
    return [{"model": name, "K": s.n_topics, "iterations": s.max_iter}
            for name in plan.names if _why_unavailable(name) is None]


def _report(plan: _Plan, prepared: SOTUData, result: KTMResult, ui: Session) -> None:
    """The summary printed (the files are written by the run)."""
    out = plan.options.out
    ui.echo("")
    ui.echo(summary_text(result))
    ui.echo(f"results: {out / 'ktm_trajectory.csv'}, summary and figures in {out}/")


SPEC = register_protocol(ProtocolSpec(
    name="ktm", options=KTMOptions, choose=_choose, check=_check, load=_load, run=_run,
    report=_report, cells=_cells,
    help="The kernel topic model paper's experiments.  --kernel sotu (default data: "
         "sotu): training perplexity against iteration, held-out perplexity by document "
         "completion, time per iteration, topics over time (LDA, DMR, tomotopy GDMR, "
         "KTM).  --kernel graph (default data: cora): held-out perplexity of KTM with the "
         "shortest-path kernel vs LDA vs KTM with a constant kernel on a connected "
         "subgraph, and the subgraph coloured by dominant topic."))
