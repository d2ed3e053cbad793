"""The LMV paper's Cora protocol (Tan, Chan & Zheng 2016, Sec. 6.1-6.2) as a function.

For every fold of a k-fold split over documents (test documents removed with all their
links), every K, every eta and every model: fit on the training documents and the
*directed* citations among them, then rank all training documents for every test
document by the score of "the test document cites it" (``link_scores(..., direction=
"out")``) and take the predictive rank of the training documents it truly cites
(:func:`topiclink.metrics.link_rank`; random guessing gives ``(n_train + 1) / 2``).
CPU time of the fit (``time.process_time`` of the process that fits) and its wall time
are recorded.  Rows: one per (model, K, eta, fold), run by
:func:`topiclink.experiments.runner.run_grid` with seeds from (fold, K), so the models and
the two values of eta of one (fold, K) share their seed.

Models are the paper's names: LMV, LMVS (stochastic LMV, Algorithm 2), PLLDA, RTM (our
Var-RTM: :data:`ALIASES`, in this protocol only), LDA+Reg, plus any link model the runner
knows (e.g. Gibbs-gRTM, not in the paper).  The same priors for all models as in the
paper (S5): alpha = 1/K, a symmetric Dirichlet(eta) on the topics, every Beta prior (1, 1).
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.data.splits import Fold, kfold_documents
from topiclink.experiments.registry import (
    Choice,
    ProtocolSpec,
    Session,
    documents,
    option,
    register_protocol,
    shared,
)
from topiclink.experiments.runner import (
    Cell,
    build_model,
    fit_model,
    grid,
    model_fit_requires,
    model_names,
    model_params,
    run_grid,
    write_csv,
)
from topiclink.metrics import link_rank

__all__ = ["ALIASES", "MODEL_NAMES", "LMVSettings", "resolve_model", "available_models",
           "check_models", "fit_and_rank", "shared_start", "run_lmv_experiment", "summarise",
           "paper_findings", "write_lmv_outputs", "LMVOptions", "load_directed", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper's models (and Gibbs-gRTM, which the paper does not run)
MODEL_NAMES = ("LMV", "LMVS", "PLLDA", "RTM", "LDA+Reg", "Gibbs-gRTM")

#: paper name -> the runner's name, in this protocol only ("RTM" is Chang & Blei's
#: variational RTM, our Var-RTM; not a global registry change)
ALIASES: dict[str, str] = {"RTM": "Var-RTM"}

#: the paper's Cora claims (Sec. 6.2), and the tolerances fixed here, before any run
PAPER_IMPROVEMENT = (0.60, 0.76)    # LMV over random at eta = 0.5, over K
PAPER_OVER_BASELINES = 0.30         # LMV over RTM, PLLDA, LDA+Reg at eta = 0.5
LMVS_CLOSE = 0.10                   # "close": |rank LMVS - rank LMV| <= 10 % of LMV's
PLATEAU = 0.05                      # "stabilises": every K >= 9 within 5 % of the best


def resolve_model(name: str) -> str:
    """The runner's name of a paper name (``"RTM"`` -> ``"Var-RTM"``; others unchanged)."""
    return ALIASES.get(name, name)


def available_models() -> list[str]:
    """Every name this protocol can run now: link models of the runner and the aliases."""
    known = [n for n in model_names() if "links" in model_fit_requires(n)]
    return [*(a for a, n in ALIASES.items() if n in known), *known]


def check_models(models: Sequence[str]) -> list[str]:
    """The names, checked (ValueError naming the known ones for an unknown name, e.g. a
    model whose estimator is not written yet)."""
    names = [str(m) for m in models]
    if not names:
        raise ValueError("no model given")
    known = available_models()
    for name in names:
        if name not in known:
            raise ValueError(f"model {name!r} is not available; known link models: "
                             f"{', '.join(known)}")
    return names


def accepts_param(name: str, param: str) -> bool:
    accepted = model_params(name)
    return accepted is None or param in accepted


@dataclass
class LMVSettings:
    """Hyper-parameters of the protocol (paper S4-S5).

    ``doc_topic_prior`` None is the paper's 1/K.  ``max_iter`` None: the batch models
    (LMV, PLLDA, RTM, LDA+Reg) run up to ``batch_max_iter`` = 2000 iterations, so that
    they stop by the paper's rule (relative change of the bound < 1e-5; at the models'
    own cap of 100 every batch Cora fit stopped before it), and a fit that still hits the
    cap says so (``converged`` False in its row); the others keep their defaults.
    ``lmvs`` are the stochastic LMV's settings on Cora (minibatch 200, step size
    A1 / (s_w + m/M + A2)^v with A1 = 1, A2 = 5, v = 0.501, eps = 0.05 on the relative
    change of diag(B) over a sweep, the library's "window" rule, at most 500 sweeps),
    passed to "LMVS" only.  ``rtm``: the RTM baseline as the paper's (variational topics
    under the same Dir(eta) prior as the other models, not MAP topics; tol 1e-5 as every
    batch model).  ``shared_start``: every model that accepts ``init_topics`` (LMV, LMVS,
    PLLDA, RTM, LDA+Reg; not Gibbs-gRTM) starts from one fitted LDA per (fold, K, eta)
    (:func:`shared_start`), as the paper starts LMV, RTM and PLLDA from the same LDA.  ``n_jobs``
    (threads of one fit) is 1 so that CPU times compare models, not thread counts.
    ``model_params`` adds or overrides constructor parameters per (paper) model name.
    """

    doc_topic_prior: float | None = None
    max_iter: int | None = None
    batch_max_iter: int = 2000
    n_jobs: int = 1
    lmvs: dict[str, Any] = field(default_factory=lambda: {
        "batch_size": 200, "step_a1": 1.0, "step_a2": 5.0, "step_v": 0.501, "tol": 0.05,
        "max_iter": 500})
    rtm: dict[str, Any] = field(default_factory=lambda: {
        "topic_inference": "variational", "tol": 1e-5})
    shared_start: bool = True
    start_iter: int = 100
    start_restarts: int = 5
    model_params: dict[str, dict[str, Any]] = field(default_factory=dict)

    def start(self, name: str) -> bool:
        """Whether paper model ``name`` starts from the cell's shared LDA."""
        return self.shared_start and accepts_param(resolve_model(name), "init_topics")

    def params(self, name: str, K: int, eta: float, seed: int
               ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(required, optional) constructor parameters of paper model ``name``."""
        est = resolve_model(name)
        required: dict[str, Any] = {"n_topics": int(K), "topic_word_prior": float(eta),
                                    "random_state": int(seed)}
        if name == "LMVS":
            required.update(self.lmvs)
        if name == "RTM":
            required.update(self.rtm)
        required.update(self.model_params.get(name, {}))
        optional: dict[str, Any] = {
            "doc_topic_prior": (1.0 / K if self.doc_topic_prior is None
                                else float(self.doc_topic_prior)),
            "n_jobs": self.n_jobs, "evaluate_every": 0}
        if self.max_iter is not None:
            optional["max_iter"] = int(self.max_iter)
            required.pop("max_iter", None)
        elif name in ("LMV", "PLLDA", "RTM", "LDA+Reg"):
            optional["max_iter"] = int(self.batch_max_iter)
        if accepts_param(est, "c") and model_params(est) is not None:
            from topiclink.experiments import default_c

            optional["c"] = default_c(est)
        return required, optional


def fit_and_rank(name: str, required: dict[str, Any], optional: dict[str, Any],
                 train_corpus: Corpus, train_links: Links, test_corpus: Corpus,
                 test_out: Any) -> tuple[Any, dict[str, Any]]:
    """Fit paper model ``name`` and rank the training documents the test documents cite.

    Returns the fitted model and: predictive_rank, random_rank ((n_train + 1) / 2),
    improvement (1 - rank / random), cpu_seconds (``time.process_time`` of the fit, all
    threads of this process), wall_seconds, test_seconds, n_iter, converged and
    stop_reason (models that record them; a ``max_iter`` stop is in the row, not
    warned), n_queries (test documents citing at least one training document).
    """
    model = build_model(resolve_model(name), required, optional)
    with warnings.catch_warnings():
        # the row records converged / stop_reason; the warning is logged instead
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _fit_and_rank(model, train_corpus, train_links, test_corpus, test_out)


def _fit_and_rank(model: Any, train_corpus: Corpus, train_links: Links, test_corpus: Corpus,
                  test_out: Any) -> tuple[Any, dict[str, Any]]:
    c0, w0 = time.process_time(), time.perf_counter()
    fit_model(model, train_corpus, links=train_links)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    t0 = time.perf_counter()
    scores = model.link_scores(test_corpus, direction="out")
    rank = link_rank(scores, test_out)
    n_train = train_corpus.n_docs
    random_rank = (n_train + 1) / 2
    n_iter = getattr(model, "n_iter_", None)
    return model, {
        "predictive_rank": rank, "random_rank": random_rank,
        "improvement": 1.0 - rank / random_rank,
        "cpu_seconds": cpu, "wall_seconds": wall,
        "test_seconds": time.perf_counter() - t0,
        "n_iter": np.nan if n_iter is None else int(n_iter),
        "converged": getattr(model, "converged_", np.nan),
        "stop_reason": getattr(model, "stop_reason_", ""),
        "n_train": n_train,
        "n_queries": int((np.asarray(test_out.sum(axis=1)).ravel() > 0).sum()),
    }


def shared_start(corpus: Corpus, K: int, eta: float, alpha: float, seed: int, *,
                 n_iter: int = 100, restarts: int = 5) -> np.ndarray:
    """The topic-word counts (K, V) of the fitted LDA every model of one cell starts from
    (:func:`topiclink.families.lmv.algorithm.start_lda`, Dir(alpha), Dir(eta), seeded by the
    cell's seed).  Cached per process for the last key, so the models of a cell reuse it;
    the same numbers in any worker (deterministic in the seed)."""
    from topiclink.families.lmv.algorithm import start_lda

    key = (corpus.n_docs, corpus.n_words, corpus.n_tokens, int(K), float(eta), float(alpha),
           int(seed), int(n_iter), int(restarts))
    if _START.get("key") != key:
        _, nwk = start_lda(corpus.counts, K, alpha, eta, np.random.default_rng(int(seed)),
                           n_iter=n_iter, restarts=restarts)
        _START.clear()
        _START.update(key=key, nwk=nwk)
    return _START["nwk"]


_START: dict[str, Any] = {}


def _run_cell(cell: Cell, context: tuple[Fold, LMVSettings]) -> dict[str, Any]:
    fold, settings = context
    name, K, eta = cell["model"], int(cell["K"]), float(cell["eta"])
    required, optional = settings.params(name, K, eta, cell.seed)
    if settings.start(name):
        alpha = 1.0 / K if settings.doc_topic_prior is None else float(
            settings.doc_topic_prior)
        required["init_topics"] = shared_start(
            fold.train_corpus, K, eta, alpha, cell.seed, n_iter=settings.start_iter,
            restarts=settings.start_restarts)
    _, row = fit_and_rank(name, required, optional, fold.train_corpus, fold.train_links,
                          fold.test_corpus, fold.test_out)
    logger.info("%s K=%d eta=%g fold %d: predictive rank %.1f (random %.1f), CPU %.1f s",
                name, K, eta, fold.fold, row["predictive_rank"], row["random_rank"],
                row["cpu_seconds"])
    return {"model": name, "estimator": resolve_model(name), "K": K, "eta": eta,
            "fold": fold.fold, **row}


def _fold_of(cell: Cell, context: tuple[list[Fold], LMVSettings]
             ) -> tuple[Fold, LMVSettings]:
    folds, settings = context
    return folds[cell["fold"]], settings


def _as_data(dataset: Any) -> tuple[str, Corpus, Links]:
    """(name, corpus, directed links) of a Dataset, a registered name or (corpus, links)."""
    if isinstance(dataset, str):
        from topiclink.datasets import load_dataset

        dataset = load_dataset(dataset, directed=True)
    if isinstance(dataset, tuple):
        corpus, links = dataset
        name = getattr(corpus, "name", "data")
    else:
        corpus, links, name = dataset.corpus, dataset.links, dataset.name
    if corpus is None or links is None:
        raise ValueError(f"dataset {name!r} has no documents with links")
    if not links.directed:
        raise ValueError(f"dataset {name!r} has undirected links; the LMV protocol needs "
                         "directed citations (load it with directed=True)")
    return str(name), corpus, links


def run_lmv_experiment(dataset: Any, *, folds: int = 5,
                       topics: Iterable[int] = (5, 7, 9, 11, 13),
                       etas: Iterable[float] = (0.1, 0.5),
                       models: Sequence[str] = MODEL_NAMES, workers: int = 1,
                       seed: int = 0, max_iter: int | None = None,
                       out: str | Path | None = None,
                       settings: LMVSettings | None = None,
                       only_folds: Sequence[int] | None = None,
                       on_row: Callable[[dict[str, Any]], None] | None = None
                       ) -> pd.DataFrame:
    """Run the protocol; one row per (model, K, eta, fold).

    Parameters
    ----------
    dataset : Dataset, registered name (loaded with ``directed=True``) or (corpus, links)
        Directed citations (``i -> j``: i cites j).
    folds : int
        k of the k-fold split over documents (from ``seed``).
    topics, etas : values of K and of the topic-word prior eta.
    models : paper names (:data:`MODEL_NAMES`; any link model the runner knows).
    workers : fits run at once in separate processes (rows do not depend on it).
    seed : the run's seed (folds, and every cell's seed from its fold and K).
    max_iter : overrides every model's iteration limit (None: their defaults).
    out : folder; when given, ``lmv_results.csv`` is rewritten after every row and the
        summary, findings and figures are written at the end (:func:`write_lmv_outputs`).
    settings : :class:`LMVSettings` (``max_iter`` given here wins).
    only_folds : run only these fold indices.

    Columns: model (the paper's name), estimator, K, eta, fold, predictive_rank,
    random_rank, improvement, cpu_seconds, wall_seconds, test_seconds, n_iter, converged,
    stop_reason, n_train, n_queries.
    """
    names = check_models(models)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    settings = settings or LMVSettings()
    if max_iter is not None:
        settings.max_iter = int(max_iter)
    ds_name, corpus, links = _as_data(dataset)
    all_folds = kfold_documents(corpus, links, n_folds=folds, random_state=seed)
    chosen = list(range(len(all_folds))) if only_folds is None else [int(f) for f in only_folds]
    for f in chosen:
        if not 0 <= f < len(all_folds):
            raise ValueError(f"fold {f} is not in [0, {len(all_folds)})")
    cells = grid({"fold": chosen, "K": [int(k) for k in topics],
                  "eta": [float(e) for e in etas], "model": names})
    out_dir = None if out is None else Path(out)
    table = run_grid(cells, _run_cell, (all_folds, settings), base_seed=seed,
                     seed_axes=("fold", "K"), workers=workers, on_row=on_row,
                     csv_path=None if out_dir is None else out_dir / "lmv_results.csv",
                     context_of=_fold_of)
    table.attrs["dataset"] = ds_name
    if out_dir is not None:
        write_lmv_outputs(table, out_dir, title=ds_name)
    return table


# ---------------------------------------------------------------------- summary
SUMMARY_METRICS = ("predictive_rank", "improvement", "cpu_seconds", "wall_seconds",
                   "n_iter")


def summarise(table: pd.DataFrame, metrics: Sequence[str] = SUMMARY_METRICS
              ) -> pd.DataFrame:
    """Mean and standard deviation over folds for every (model, K, eta), with the random
    rank and the number of folds."""
    metrics = [m for m in metrics if m in table.columns]
    keys = ["model", "K", "eta"]
    agg = table.groupby(keys, sort=False)[metrics].agg(["mean", "std"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    agg["random_rank"] = table.groupby(keys, sort=False)["random_rank"].mean()
    agg["folds"] = table.groupby(keys, sort=False)["fold"].nunique()
    return agg.reset_index().sort_values(["eta", "model", "K"], kind="stable",
                                         ignore_index=True)


def _at(summary: pd.DataFrame, model: str, eta: float) -> pd.DataFrame:
    s = summary[(summary["model"] == model) & np.isclose(summary["eta"], eta)]
    return s.sort_values("K")


def paper_findings(summary: pd.DataFrame, eta: float = 0.5) -> list[str]:
    """The paper's Cora claims, each with our numbers and whether they agree.

    Claims (Sec. 6.2, at eta = 0.5 unless said): LMV is 60-76 % better than random;
    LMV is more than 30 % better than RTM, PLLDA and LDA+Reg (1 - rank_LMV / rank_other,
    averaged over K); LMVS is close to LMV (within 10 % of its rank, a tolerance fixed
    here) at less CPU time; LMV's rank stabilises around K = 9-11 (every K >= 9 within
    5 % of the best K >= 9, and no K < 9 better); except RTM, every model predicts
    better at eta = 0.5 than at 0.1.  A claim whose models or eta were not run says so.
    """
    lines: list[str] = []
    lmv = _at(summary, "LMV", eta)
    # 1. improvement over random
    if lmv.empty:
        lines.append(f"LMV 60-76 % better than random (eta={eta:g}): NOT CHECKED (LMV at "
                     f"eta={eta:g} not run)")
    else:
        imp = lmv["improvement_mean"].to_numpy()
        lo, hi = PAPER_IMPROVEMENT
        per_k = ", ".join(f"K={k}: {v:.1%}" for k, v in zip(lmv["K"], imp, strict=True))
        if imp.min() >= lo and imp.max() <= hi:
            verdict = "AGREES"
        elif imp.max() >= lo and imp.min() <= hi:
            verdict = "PARTLY (our range overlaps the paper's)"
        else:
            verdict = ("DISAGREES (ours higher)" if imp.min() > hi
                       else "DISAGREES (ours lower)")
        lines.append(f"LMV 60-76 % better than random (eta={eta:g}): {verdict}; ours "
                     f"{imp.min():.1%}-{imp.max():.1%} ({per_k})")
    # 2. > 30 % over the baselines
    for other in ("RTM", "PLLDA", "LDA+Reg"):
        b = _at(summary, other, eta)
        m = lmv.merge(b, on="K", suffixes=("", "_o")) if not lmv.empty else lmv
        if lmv.empty or b.empty or m.empty:
            lines.append(f"LMV > 30 % better than {other} (eta={eta:g}): NOT CHECKED "
                         f"({other if b.empty else 'LMV'} not run)")
            continue
        gain = 1.0 - m["predictive_rank_mean"] / m["predictive_rank_mean_o"]
        verdict = "AGREES" if gain.mean() > PAPER_OVER_BASELINES else "DISAGREES"
        per_k = ", ".join(f"K={k}: {g:.1%}" for k, g in zip(m["K"], gain, strict=True))
        lines.append(f"LMV > 30 % better than {other} (eta={eta:g}): {verdict}; ours "
                     f"{gain.mean():.1%} on average over K ({per_k})")
    # 3. LMVS close to LMV at less CPU (every eta run)
    rows = []
    for e in sorted(summary["eta"].unique()):
        a, s = _at(summary, "LMV", e), _at(summary, "LMVS", e)
        if not a.empty and not s.empty:
            rows.append(a.merge(s, on="K", suffixes=("", "_s")).assign(eta=e))
    if not rows:
        lines.append("LMVS close to LMV at less CPU: NOT CHECKED (LMV and LMVS not both run)")
    else:
        m = pd.concat(rows)
        rel = (m["predictive_rank_mean_s"] - m["predictive_rank_mean"]).abs() \
            / m["predictive_rank_mean"]
        close = rel <= LMVS_CLOSE
        faster = m["cpu_seconds_mean_s"] < m["cpu_seconds_mean"]
        verdict = ("AGREES" if close.all() and faster.all() else
                   "PARTLY" if (close | faster).any() else "DISAGREES")
        lines.append(
            f"LMVS close to LMV (rank within {LMVS_CLOSE:.0%}) at less CPU: {verdict}; "
            f"close in {int(close.sum())}/{len(m)} (K, eta) cells (largest difference "
            f"{rel.max():.1%}), less CPU in {int(faster.sum())}/{len(m)} (CPU ratio "
            f"LMVS/LMV {float((m['cpu_seconds_mean_s'] / m['cpu_seconds_mean']).min()):.2f}-"
            f"{float((m['cpu_seconds_mean_s'] / m['cpu_seconds_mean']).max()):.2f})")
    # 4. stabilises around K = 9-11
    if lmv.empty or not (lmv["K"] >= 9).any():
        lines.append(f"LMV stabilises around K=9-11 (eta={eta:g}): NOT CHECKED (needs LMV "
                     f"at K >= 9)")
    else:
        ranks = dict(zip(lmv["K"], lmv["predictive_rank_mean"], strict=True))
        high = {k: r for k, r in ranks.items() if k >= 9}
        low = {k: r for k, r in ranks.items() if k < 9}
        best_high = min(high.values())
        plateau = all(r <= best_high * (1 + PLATEAU) for r in high.values())
        no_low_better = all(r >= best_high for r in low.values())
        verdict = "AGREES" if plateau and no_low_better else "DISAGREES"
        lines.append(
            f"LMV stabilises around K=9-11 (eta={eta:g}): {verdict}; ranks "
            + ", ".join(f"K={k}: {r:.1f}" for k, r in ranks.items())
            + f" (K >= 9 within {PLATEAU:.0%} of their best: {plateau}; no K < 9 better: "
              f"{no_low_better}; best K {min(ranks, key=ranks.get)})")
    # 5. eta = 0.5 better than 0.1 except for RTM
    etas = sorted(summary["eta"].unique())
    if 0.1 in etas and 0.5 in etas:
        for model in summary["model"].unique():
            a, b = _at(summary, model, 0.5), _at(summary, model, 0.1)
            m = a.merge(b, on="K", suffixes=("", "_01"))
            if m.empty:
                continue
            r5, r1 = m["predictive_rank_mean"].mean(), m["predictive_rank_mean_01"].mean()
            expect = model == "RTM"
            said = ("not better at eta=0.5 (paper: RTM is the exception)" if expect
                    else "better at eta=0.5 than at 0.1")
            ok = (r5 >= r1) if expect else (r5 < r1)
            lines.append(f"{model} {said}: {'AGREES' if ok else 'DISAGREES'}; mean rank "
                         f"{r5:.1f} at eta=0.5, {r1:.1f} at eta=0.1")
    return lines


def write_lmv_outputs(table: pd.DataFrame, out: str | Path, title: str = "") -> dict[str, Path]:
    """Write lmv_results.csv, lmv_summary.csv, lmv_findings.md and the figures
    (predictive rank and CPU time against K, one panel per eta) into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"results": write_csv(table, out / "lmv_results.csv")}
    summary = summarise(table)
    paths["summary"] = write_csv(summary, out / "lmv_summary.csv")
    lines = paper_findings(summary)
    text = "# LMV protocol" + (f" on {title}" if title else "") + ": the paper's claims\n\n"
    text += "\n".join(f"- {line}" for line in lines) + "\n"
    path = out / "lmv_findings.md"
    path.write_text(text)
    paths["findings"] = path
    from topiclink.plotting.experiments import plot_metric_panels, save_figure

    for metric in ("predictive_rank", "cpu_seconds"):
        fig = plot_metric_panels(table, metric, panel="eta", reference="random_rank"
                                 if metric == "predictive_rank" else None)
        if title:
            fig.suptitle(title)
        paths[metric] = save_figure(fig, out / f"lmv_{metric}.png")
    return paths


# ---------------------------------------------------------------------- the command
@dataclass
class LMVOptions:
    """The options of ``topiclink experiment lmv`` (:data:`SPEC`; split by time, the
    hep-th protocol of :mod:`topiclink.families.lmv.protocol_kdd` runs them)."""

    dataset: str | None = shared("dataset")
    data: Path | None = shared("data")
    folds: int = option(5, help="Number of folds over documents.")
    only_folds: str | None = shared("only_folds")
    topics: str = option("5,7,9,11,13", help="Values of K, comma-separated.")
    eta: str = option("0.1,0.5", "--eta", help="Topic-word priors eta, comma-separated.")
    models: str = option("LMV,LMVS,PLLDA,RTM,LDA+Reg,Gibbs-gRTM",
                         help="Comma-separated paper names: LMV, LMVS, PLLDA, RTM (= "
                         "Var-RTM), LDA+Reg, Gibbs-gRTM (or any link model's paper name).")
    max_iter: int | None = option(None, "--max-iter", help="Iteration limit of every model "
                                  "(default: each model's own).")
    seed: int = option(0)
    workers: int = shared("workers", 1)
    out: Path | None = option(None, "--out", "-o", help="Output folder (created when "
                              "missing) for lmv_results.csv, lmv_summary.csv, "
                              "lmv_findings.md and lmv_*.png; without it the summary and "
                              "findings are only printed.")
    force: bool = shared("force", False)
    verbose: bool = shared("verbose", True)
    protocol: str = option(
        "kfold", help="kfold (the paper's Cora protocol, Sec. 6) or kdd (the hep-th split "
        "of Sec. 7.2: --dataset hepth; models LMVS(t), LMVS, PLLDA, RTM, Gibbs-gRTM; "
        "default --topics 10,15,20,25,30 and --eta 0.5,0.1,0.01; --folds ignored).")
    n_jobs: int = option(1, "--n-jobs", help="Threads of one fit (--protocol kdd: the pair "
                         "blocks of LMVS / PLLDA minibatches; -1: all cores).")
    split: str | None = option(
        None, "--split", help="kfold: random folds over documents (the Cora protocol); "
        "time: train on the documents before --cutoff and the citations among them, test "
        "on the later documents citing them (the hep-th protocol; models LMVS(t), LMVS, "
        "PLLDA, RTM, Gibbs-gRTM).  Default: kfold; time with --protocol kdd.",
        show_default=False)
    cutoff: str | None = option(
        None, "--cutoff", help="--split time: documents before this time train; written "
        "as the --time-column is, as an ISO date (2002-01) or a fractional year (2002.0).  "
        "Default with --dataset hepth: 2002-01 (the paper's).", show_default=False)
    source: Any = documents()


def _choose(o: LMVOptions, ui: Session) -> Choice | None:
    """The split decides the protocol: by time, the hep-th one (``lmv-kdd``)."""
    ui.check(o.protocol in ("kfold", "kdd"),
             f"--protocol must be kfold or kdd, got {o.protocol!r}")
    split_kind = o.split if o.split is not None else ("time" if o.protocol == "kdd"
                                                      else "kfold")
    ui.check(split_kind in ("kfold", "time"), f"--split must be kfold or time, got {o.split!r}")
    ui.check(o.cutoff is None or split_kind == "time", "--cutoff needs --split time")
    if o.protocol == "kdd":
        ui.check(o.source is None, "--protocol kdd is the hep-th protocol (--dataset hepth); "
                 "for your own --documents give --split time --cutoff DATE")
        ui.check(split_kind == "time", "--protocol kdd splits by time; drop --split kfold")
    if o.source is not None:
        ui.check(o.dataset is None and o.data is None, "give either --documents or "
                 "--dataset / --data, not both")
        o.source.check(requires=("X", "links"))
    return Choice("lmv-kdd") if split_kind == "time" else None


@dataclass
class _Plan:
    options: LMVOptions
    names: list[str]
    topics: list[int]
    etas: list[float]
    folds: list[int] | None


def _check(o: LMVOptions, ui: Session) -> _Plan:
    """Every option of the Cora protocol and the output folder, before any data."""
    ui.check(o.n_jobs == 1, "--n-jobs applies to --protocol kdd (the Cora protocol's fits "
             "run one thread each; use --workers)")
    names = ui.names(o.models, available_models())
    k_values = ui.int_list(o.topics, "--topics", minimum=2)
    ui.check_model_size(max(k_values))
    etas = ui.float_list(o.eta, "--eta", positive=True)
    ui.check(o.folds >= 2, f"--folds must be >= 2, got {o.folds}")
    chosen = (ui.int_list(o.only_folds, "--only-folds", 0, o.folds - 1)
              if o.only_folds is not None else None)
    ui.check(o.max_iter is None or o.max_iter >= 1,
             f"--max-iter must be >= 1, got {o.max_iter}")
    ui.check(o.workers >= 1, f"--workers must be >= 1, got {o.workers}")
    if o.out is not None:
        ui.check_out(o.out, "lmv", o.force)
    return _Plan(o, names, k_values, etas, chosen)


def load_directed(dataset: str | None, data: Path | None, default: str,
                  ui: Session) -> Any:
    """The dataset with its links read as directed citations (i -> j: i cites j)."""
    from topiclink.datasets import load_dataset

    ui.check_input_paths(data)
    name = dataset if dataset is not None else (None if data is not None else default)
    try:
        with ui.errors():
            ds = load_dataset(name, data_dir=data, directed=True)
    except TypeError:  # a loader without a `directed` option
        ds = ui.load_data(dataset, data, default=default)
    if ds.corpus is None or ds.links is None:
        raise ui.fail(f"dataset {ds.name!r} has no documents with links")
    if not ds.links.directed:
        raise ui.fail(f"dataset {ds.name!r} has undirected links; the LMV protocol needs "
                      "directed citations")
    return ds


def _load(plan: _Plan, ui: Session, data: Any) -> Any:
    o = plan.options
    if data is not None:
        ds = data
    elif o.source is not None:
        ds = o.source.load()
        if ds.links is None or not ds.links.directed:
            raise ui.fail("the LMV protocol needs directed citations: give --edge-direction "
                          "source-cites-target or target-cites-source")
    else:
        ds = load_directed(o.dataset, o.data, "cora-rlda", ui)
    ui.check_model_size(max(plan.topics), ds.corpus.n_docs, ds.corpus.n_words,
                        what=f" on {ds.corpus.n_docs} documents x {ds.corpus.n_words} words")
    ui.echo(f"{ds.name}: {ds.corpus.n_docs} documents, {ds.links.n_links} directed links")
    return ds


def _run(plan: _Plan, ds: Any, ui: Session) -> pd.DataFrame:
    o = plan.options

    def show(row: dict) -> None:
        ui.echo(f"{row['model']:>10s} K={row['K']:<3d} eta={row['eta']:<4g} fold "
                f"{row['fold']}: predictive rank {row['predictive_rank']:7.1f} (random "
                f"{row['random_rank']:.1f})  CPU {row['cpu_seconds']:.1f} s")

    return run_lmv_experiment(ds, folds=o.folds, topics=plan.topics, etas=plan.etas,
                              models=plan.names, workers=o.workers, seed=o.seed,
                              max_iter=o.max_iter, out=o.out, on_row=show,
                              only_folds=plan.folds)


def _report(plan: _Plan, ds: Any, table: pd.DataFrame, ui: Session) -> None:
    """The summary and the paper's claims printed (the files are written by the run)."""
    out = plan.options.out
    summary = summarise(table)
    ui.echo_table(summary)
    ui.echo("\nthe paper's claims:")
    for line in paper_findings(summary):
        ui.echo(f"  {line}")
    if out is not None:
        ui.echo(f"results: {out / 'lmv_results.csv'}, summary, findings and figures in "
                f"{out}/")


SPEC = register_protocol(ProtocolSpec(
    name="lmv", options=LMVOptions, choose=_choose, check=_check, load=_load, run=_run,
    report=_report,
    help="The LMV paper's Cora protocol (default data: cora-rlda, directed citations): "
         "predictive rank and CPU time against K, per eta, over folds; ``--protocol "
         "kdd``: the hep-th protocol (Sec. 7.2, Figure 7); your own ``--documents`` and "
         "``--edges`` with either split (``--split time --cutoff DATE`` with "
         "``--time-column``)."))
