"""The LMV paper's simulation study (Tan, Chan & Zheng 2016, supplement S7), read from
``papers/lmv_simulation.toml``.

Design (the file's ``[split]``): K = 6 topics over V = 100 words (Dirichlet(0.1)), theta
~ Dir(0.05), tau ~ Beta(1, 1), 100 words per document, D = 3000 documents (the first
2000 train, the other 1000 test) and the true B of
:func:`~topiclink.datasets.synthetic.paper_blockmodel`; 20 replicates that share the
topics, B and tau (theta, words and links are drawn anew:
``make_lmv_data(topic_word=..., visibility=...)``).  Every model is fitted on the
training documents and the citations among them with the generating hyper-parameters as
priors and the file's settings; as in the paper, the models of one replicate that take
``init_topics`` start from the same fitted LDA
(:func:`topiclink_reproductions.lmv.shared_start`).

Per (replicate, model): the estimated blockmodel after matching the estimated topics to
the true ones (Hungarian matching on the topic-word distributions; B's rows and columns
permuted; tau is per document so unaffected), the Pearson correlation of the estimated
visibilities of the training documents with the truth, the predictive rank of the test
documents' citations into the training documents, CPU and wall time of the fit.
:func:`table_s1` sets our blockmodel estimates beside the paper's Table S1
(:data:`PAPER_TABLE_S1`, the published numbers), :func:`model_summary` gives Figure S4's
numbers and :func:`findings` the file's claims, checked by
:mod:`topiclink_reproductions.claims` on the results stacked with
:func:`blockmodel_entries`.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.datasets.synthetic import make_lmv_data, paper_blockmodel
from topiclink.experiments.registry import (
    ProtocolSpec,
    Session,
    option,
    register_protocol,
    shared,
)
from topiclink.experiments.runner import Cell, CSVRows, cell_seed, grid, run_grid, write_csv
from topiclink_reproductions.claims import check_claims, claim_lines
from topiclink_reproductions.lmv import (
    available_models,
    check_models,
    echo_claims,
    echo_rows,
    fit_and_rank,
    shared_start,
)
from topiclink_reproductions.paper_models import PaperModels, accepts
from topiclink_reproductions.spec import PaperSpec, load_paper

__all__ = ["PAPER", "PAPER_TABLE_S1", "SIM_MODELS", "Design", "SimulationResult",
           "match_topics", "run_lmv_simulation", "table_s1", "zero_entries",
           "blockmodel_entries", "model_summary", "findings", "format_table_s1",
           "write_simulation_outputs", "SimulationOptions", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper file: design, models and their settings, claims
PAPER: PaperSpec = load_paper("lmv_simulation")
SIM_MODELS: tuple[str, ...] = PAPER.model_names
#: models with a blockmodel (and, of them, those with visibilities)
BLOCK_MODELS = ("LMV", "LMVS", "PLLDA")
VISIBILITY_MODELS = ("LMV", "LMVS")
#: the paper: every estimate of a zero entry of B is below this (the file's claims)
PAPER_ZERO_MAX: float = next(c.high for c in PAPER.claims if c.metric == "zero_max")

#: The paper's Table S1 (supplement S7), the published reference, NOT our results:
#: (s, r) 1-based (row = citing topic), true value, and mean, sd over 20 data sets of
#: the posterior mean estimates for LMV (Algorithm 1), LMVS (Algorithm 2) and PLLDA.
PAPER_TABLE_S1: tuple[tuple[int, int, float, dict[str, tuple[float, float]]], ...] = (
    (1, 1, 0.30, {"LMV": (0.298, 0.005), "LMVS": (0.279, 0.007), "PLLDA": (0.146, 0.004)}),
    (2, 2, 0.30, {"LMV": (0.299, 0.004), "LMVS": (0.278, 0.006), "PLLDA": (0.147, 0.003)}),
    (3, 3, 0.30, {"LMV": (0.297, 0.005), "LMVS": (0.278, 0.007), "PLLDA": (0.147, 0.005)}),
    (4, 4, 0.20, {"LMV": (0.200, 0.004), "LMVS": (0.187, 0.004), "PLLDA": (0.098, 0.003)}),
    (5, 5, 0.20, {"LMV": (0.203, 0.004), "LMVS": (0.187, 0.006), "PLLDA": (0.099, 0.003)}),
    (6, 6, 0.20, {"LMV": (0.201, 0.004), "LMVS": (0.187, 0.003), "PLLDA": (0.097, 0.003)}),
    (2, 5, 0.05, {"LMV": (0.049, 0.001), "LMVS": (0.049, 0.003), "PLLDA": (0.024, 0.001)}),
    (3, 4, 0.05, {"LMV": (0.048, 0.001), "LMVS": (0.049, 0.002), "PLLDA": (0.023, 0.001)}),
    (4, 1, 0.04, {"LMV": (0.039, 0.001), "LMVS": (0.039, 0.002), "PLLDA": (0.019, 0.001)}),
    (5, 2, 0.04, {"LMV": (0.039, 0.001), "LMVS": (0.039, 0.002), "PLLDA": (0.019, 0.001)}),
    (1, 6, 0.03, {"LMV": (0.030, 0.001), "LMVS": (0.030, 0.001), "PLLDA": (0.014, 0.001)}),
    (6, 3, 0.03, {"LMV": (0.029, 0.001), "LMVS": (0.029, 0.001), "PLLDA": (0.014, 0.001)}),
    (1, 3, 0.02, {"LMV": (0.020, 0.001), "LMVS": (0.020, 0.001), "PLLDA": (0.010, 0.000)}),
    (4, 6, 0.02, {"LMV": (0.020, 0.001), "LMVS": (0.021, 0.001), "PLLDA": (0.010, 0.000)}),
    (6, 1, 0.02, {"LMV": (0.020, 0.001), "LMVS": (0.020, 0.001), "PLLDA": (0.010, 0.001)}),
)
#: the paper: every estimate of a zero entry of B is below this (all three models)


def match_topics(true_topics: np.ndarray, estimated_topics: np.ndarray) -> np.ndarray:
    """The estimated topic matched to each true topic (Hungarian matching).

    Rows of both are normalised to distributions; the cost of pairing true topic k with
    estimated topic j is their L1 distance; :func:`scipy.optimize.linear_sum_assignment`
    gives the one-to-one matching of least total cost.

    Returns
    -------
    perm : ndarray of int64, shape (K,)
        ``estimated_topics[perm[k]]`` is matched to ``true_topics[k]``; a blockmodel is
        aligned to the truth as ``B[np.ix_(perm, perm)]``.
    """
    t = np.asarray(true_topics, dtype=np.float64)
    e = np.asarray(estimated_topics, dtype=np.float64)
    if t.ndim != 2 or t.shape != e.shape:
        raise ValueError(f"topics must have the same (K, V) shape, got {t.shape} and "
                         f"{e.shape}")
    t = t / t.sum(axis=1, keepdims=True)
    e = e / e.sum(axis=1, keepdims=True)
    cost = np.abs(t[:, None, :] - e[None, :, :]).sum(axis=2)
    rows, cols = linear_sum_assignment(cost)
    perm = np.empty(t.shape[0], dtype=np.int64)
    perm[rows] = cols
    return perm




@dataclass(frozen=True)
class Design:
    """The simulated data (the paper file's ``[split]``; :meth:`of` shrinks it)."""

    n_docs: int
    n_train: int
    n_words: int
    n_topics: int
    doc_length: int
    doc_topic_prior: float
    topic_word_prior: float
    visibility_prior: tuple[float, float]

    @classmethod
    def of(cls, paper: PaperSpec = PAPER, **overrides: Any) -> Design:
        """The file's design with ``overrides`` (e.g. ``n_docs=160``), checked."""
        values = {f.name: overrides.get(f.name, paper.split.get(f.name))
                  for f in dataclasses.fields(cls)}
        missing = [k for k, v in values.items() if v is None]
        if missing:
            raise ValueError(f"{paper.source}: [split] has no {missing[0]!r}")
        design = cls(**{**values, "visibility_prior": tuple(values["visibility_prior"])})
        if not 2 <= design.n_train <= design.n_docs - 1:
            raise ValueError(f"n_train must be in [2, n_docs - 1], got {design.n_train} of "
                             f"{design.n_docs}")
        return design

    def params(self, models: PaperModels, name: str, seed: int
               ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """(runner name, required, optional) constructor parameters: the generating
        priors and the file's settings (LMVS's minibatch at most the training
        documents)."""
        est, required, optional = models.params(
            name, {"n_topics": self.n_topics, "topic_word_prior": self.topic_word_prior,
                   "random_state": int(seed)},
            {"doc_topic_prior": self.doc_topic_prior,
             "visibility_prior": self.visibility_prior})
        if "batch_size" in required:
            required["batch_size"] = min(int(required["batch_size"]), self.n_train)
        return est, required, optional


@dataclass
class _Replicate:
    train_corpus: Corpus
    train_links: Links
    test_corpus: Corpus
    test_out: sp.csr_matrix
    topic_word: np.ndarray
    visibility: np.ndarray      # true tau of the training documents
    blockmodel: np.ndarray


@dataclass
class SimulationResult:
    """What :func:`run_lmv_simulation` returns.

    table : one row per (replicate, model): predictive_rank, random_rank, improvement,
        cpu_seconds, wall_seconds, n_iter, topic_l1 (mean L1 distance of matched topics),
        visibility_corr, and ``B_s_r`` (1-based; matched) for the blockmodel models.
    visibility : long table (model, replicate, doc, true, estimate) of the scatter
        replicate (0).
    truth_blockmodel : the true B; truth_visibility: the true tau of the training docs.
    design : the simulated data's :class:`Design`.
    """

    table: pd.DataFrame
    visibility: pd.DataFrame
    truth_blockmodel: np.ndarray
    truth_visibility: np.ndarray
    design: Design


def _split(corpus: Corpus, links: Links, n_train: int
           ) -> tuple[Corpus, Links, Corpus, sp.csr_matrix]:
    """The first ``n_train`` documents train, the rest test (as the paper)."""
    D = corpus.n_docs
    train, test = np.arange(n_train), np.arange(n_train, D)
    out = sp.csr_matrix(links.between(test, train), shape=(test.size, train.size))
    return corpus.subset(train), links.subgraph(train), corpus.subset(test), out


class _Data:
    """The replicates' data, drawn on demand in the parent process (shared truth)."""

    def __init__(self, design: Design, seed: int) -> None:
        self.design = design
        self.seed = seed
        _, truth = make_lmv_data(**self._sizes(), topic_word_prior=design.topic_word_prior,
                                 visibility_prior=design.visibility_prior,
                                 random_state=cell_seed(seed, {"role": "truth"}))
        self.topic_word = truth.topic_word
        self.visibility = truth.visibility
        self.blockmodel = truth.blockmodel
        self.cache: dict[int, _Replicate] = {}

    def _sizes(self) -> dict[str, Any]:
        d = self.design
        return {"n_docs": d.n_docs, "n_words": d.n_words, "n_topics": d.n_topics,
                "doc_length": d.doc_length, "doc_topic_prior": d.doc_topic_prior}

    def replicate(self, r: int) -> _Replicate:
        if r not in self.cache:
            (corpus, links), truth = make_lmv_data(
                **self._sizes(), topic_word=self.topic_word, visibility=self.visibility,
                random_state=cell_seed(self.seed, {"role": "data", "replicate": r}))
            n = self.design.n_train
            tr_c, tr_l, te_c, te_out = _split(corpus, links, n)
            self.cache = {r: _Replicate(tr_c, tr_l, te_c, te_out, truth.topic_word,
                                        truth.visibility[:n], truth.blockmodel)}
        return self.cache[r]


def _run_cell(cell: Cell, context: tuple[_Replicate, Design, PaperModels, int]
              ) -> dict[str, Any]:
    rep, design, models, scatter = context
    name, r = cell["model"], int(cell["replicate"])
    est, required, optional = design.params(models, name, cell.seed)
    start = models.group("start")
    if start and accepts(est, "init_topics"):
        required["init_topics"] = shared_start(
            rep.train_corpus, design.n_topics, design.topic_word_prior,
            design.doc_topic_prior, cell.seed, **start)
    model, row = fit_and_rank(est, required, optional, rep.train_corpus, rep.train_links,
                              rep.test_corpus, rep.test_out)
    out: dict[str, Any] = {"model": name, "estimator": est, "replicate": r, **row}
    comps = getattr(model, "components_", None)
    perm = None
    if comps is not None and np.shape(comps) == rep.topic_word.shape:
        perm = match_topics(rep.topic_word, comps)
        est_topics = np.asarray(comps, float)[perm]
        est_topics = est_topics / est_topics.sum(axis=1, keepdims=True)
        out["topic_l1"] = float(np.abs(est_topics - rep.topic_word).sum(axis=1).mean())
    B = getattr(model, "blockmodel_", None)
    if B is not None and perm is not None:
        Bm = np.asarray(B, float)[np.ix_(perm, perm)]
        K = Bm.shape[0]
        for s in range(K):
            for t in range(K):
                out[f"B_{s + 1}_{t + 1}"] = float(Bm[s, t])
    tau = getattr(model, "visibility_", None)
    if tau is not None and name in VISIBILITY_MODELS:
        tau = np.asarray(tau, float)
        out["visibility_corr"] = float(np.corrcoef(tau, rep.visibility)[0, 1])
        if r == scatter:
            out["_visibility"] = tau.tolist()
    logger.info("replicate %d %s: predictive rank %.1f, CPU %.1f s", r, name,
                out["predictive_rank"], out["cpu_seconds"])
    return out


def run_lmv_simulation(replicates: int = PAPER.split.get("replicates", 20), *,
                       workers: int = 1, seed: int = 0,
                       models: Sequence[str] = SIM_MODELS, n_docs: int | None = None,
                       n_train: int | None = None, doc_length: int | None = None,
                       max_iter: int | None = None,
                       settings: PaperModels | None = None,
                       out: str | Path | None = None,
                       on_row: Callable[[dict[str, Any]], None] | None = None
                       ) -> SimulationResult:
    """Run the simulation study; see the module docstring.

    ``n_docs`` / ``n_train`` / ``doc_length`` shrink the design (None: the paper
    file's; tests, smoke runs); ``max_iter`` overrides every model's iteration limit;
    ``settings`` the models' settings (default: ``PaperModels.of(PAPER)``).  The truth
    (topics, tau) comes from ``seed``; each replicate's data and the models' seeds from
    (seed, replicate), so the models of one replicate see the same data and the rows do
    not depend on ``workers``.  With ``out``, ``lmv_sim_results.csv`` is rewritten after
    every row and every output of :func:`write_simulation_outputs` is written at the end.
    """
    names = check_models(models)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if isinstance(replicates, bool) or not isinstance(replicates, int) or replicates < 1:
        raise ValueError(f"replicates must be >= 1, got {replicates}")
    sizes = {"n_docs": n_docs, "n_train": n_train, "doc_length": doc_length}
    design = Design.of(PAPER, **{k: int(v) for k, v in sizes.items() if v is not None})
    settings = settings or PaperModels.of(PAPER)
    if max_iter is not None:        # the caller's settings are left as they are
        settings = dataclasses.replace(settings, max_iter=int(max_iter))
    data = _Data(design, seed)
    scatter = 0

    def context_of(cell: Cell, _: Any) -> tuple[_Replicate, Design, PaperModels, int]:
        return data.replicate(int(cell["replicate"])), design, settings, scatter

    out_dir = None if out is None else Path(out)
    sink = CSVRows(None if out_dir is None else out_dir / "lmv_sim_results.csv")
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)

    def row_done(row: dict[str, Any]) -> None:
        sink.add({k: v for k, v in row.items() if k != "_visibility"})
        if on_row is not None:
            on_row(row)

    cells = grid({"replicate": list(range(replicates)), "model": names})
    raw = run_grid(cells, _run_cell, None, base_seed=seed, seed_axes=PAPER.seed_axes,
                   workers=workers, on_row=row_done, context_of=context_of)
    vis_rows = []
    if "_visibility" in raw:
        truth_tau = data.visibility[: design.n_train]
        for _, row in raw[raw["_visibility"].notna()].iterrows():
            vis_rows.append(pd.DataFrame({
                "model": row["model"], "replicate": row["replicate"],
                "doc": np.arange(design.n_train), "true": truth_tau,
                "estimate": np.asarray(row["_visibility"], float)}))
        raw = raw.drop(columns="_visibility")
    visibility = (pd.concat(vis_rows, ignore_index=True) if vis_rows else
                  pd.DataFrame(columns=["model", "replicate", "doc", "true", "estimate"]))
    result = SimulationResult(raw, visibility, data.blockmodel,
                              data.visibility[: design.n_train], design)
    if out_dir is not None:
        write_simulation_outputs(result, out_dir)
    return result


# ---------------------------------------------------------------------- tables
def table_s1(table: pd.DataFrame) -> pd.DataFrame:
    """Table S1 side by side: for each nonzero true B entry, the paper's mean and sd and
    ours (over replicates) for LMV, LMVS and PLLDA (NaN where a model was not run)."""
    rows = []
    for s, r, true, paper in PAPER_TABLE_S1:
        row: dict[str, Any] = {"entry": f"B[{s},{r}]", "true": true}
        col = f"B_{s}_{r}"
        for model in BLOCK_MODELS:
            pm, psd = paper[model]
            ours = table.loc[table["model"] == model, col] if col in table else pd.Series([])
            ours = ours.dropna()
            row[f"paper_{model}_mean"] = pm
            row[f"paper_{model}_sd"] = psd
            row[f"ours_{model}_mean"] = float(ours.mean()) if len(ours) else np.nan
            row[f"ours_{model}_sd"] = float(ours.std()) if len(ours) > 1 else np.nan
        rows.append(row)
    return pd.DataFrame(rows)


def zero_entries(table: pd.DataFrame, truth: np.ndarray | None = None) -> pd.DataFrame:
    """Per blockmodel model: the largest estimate of a zero entry of the true B over all
    replicates (the paper: all below 0.0022), and which entry."""
    B = paper_blockmodel() if truth is None else np.asarray(truth)
    zeros = [(s + 1, r + 1) for s in range(B.shape[0]) for r in range(B.shape[1])
             if B[s, r] == 0]
    rows = []
    for model in BLOCK_MODELS:
        t = table[table["model"] == model]
        cols = [f"B_{s}_{r}" for s, r in zeros if f"B_{s}_{r}" in t]
        if t.empty or not cols:
            continue
        values = t[cols].to_numpy(float)
        i, j = np.unravel_index(np.nanargmax(values), values.shape)
        rows.append({"model": model, "max_zero_entry": float(values[i, j]),
                     "entry": cols[j].replace("B_", "B[").replace("_", ",") + "]",
                     "paper_bound": PAPER_ZERO_MAX})
    return pd.DataFrame(rows)


def model_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Figure S4's numbers and the visibility correlation: mean and sd over replicates
    per model."""
    metrics = [m for m in ("predictive_rank", "improvement", "cpu_seconds", "wall_seconds",
                           "n_iter", "topic_l1", "visibility_corr") if m in table]
    agg = table.groupby("model", sort=False)[metrics].agg(["mean", "std"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    if "visibility_corr" in table:
        agg["visibility_corr_min"] = table.groupby("model", sort=False)[
            "visibility_corr"].min()
    agg["random_rank"] = table.groupby("model", sort=False)["random_rank"].mean()
    agg["replicates"] = table.groupby("model", sort=False)["replicate"].nunique()
    return agg.reset_index()


def format_table_s1(s1: pd.DataFrame) -> str:
    """Table S1 as text: 'paper mean +- sd | ours mean +- sd' per model."""
    def pm(m: float, sd: float) -> str:
        if np.isnan(m):
            return "—"
        return f"{m:.3f} ± {sd:.3f}" if not np.isnan(sd) else f"{m:.3f}"

    header = f"{'entry':8s} {'true':>5s}" + "".join(
        f" | {m + ' paper':>15s} {m + ' ours':>15s}" for m in BLOCK_MODELS)
    lines = [header, "-" * len(header)]
    for _, row in s1.iterrows():
        line = f"{row['entry']:8s} {row['true']:5.2f}"
        for m in BLOCK_MODELS:
            line += (f" | {pm(row[f'paper_{m}_mean'], row[f'paper_{m}_sd']):>15s} "
                     f"{pm(row[f'ours_{m}_mean'], row[f'ours_{m}_sd']):>15s}")
        lines.append(line)
    return "\n".join(lines)


# ---------------------------------------------------------------------- claims
def blockmodel_entries(table: pd.DataFrame, truth: np.ndarray | None = None) -> pd.DataFrame:
    """One row per (blockmodel model, entry of B) with the columns the paper file's claims
    read: for a nonzero entry (Table S1) ``paper_z`` (|our mean - the paper's| / the
    paper's sd), ``truth_ratio`` (our mean / true) and ``lmv_gap`` (|our mean - LMV's|
    / true); for a zero entry ``zero_max`` (the largest estimate over the replicates)."""
    B = paper_blockmodel() if truth is None else np.asarray(truth)
    s1 = table_s1(table)
    rows: list[dict[str, Any]] = []
    for model in BLOCK_MODELS:
        if f"ours_{model}_mean" not in s1 or s1[f"ours_{model}_mean"].isna().all():
            continue
        ours, true = s1[f"ours_{model}_mean"], s1["true"]
        z = (ours - s1[f"paper_{model}_mean"]).abs() / s1[f"paper_{model}_sd"]
        gap = (ours - s1["ours_LMV_mean"]).abs() / true
        for i, entry in enumerate(s1["entry"]):
            rows.append({"model": model, "entry": entry, "true": float(true[i]),
                         "paper_z": float(z[i]), "truth_ratio": float(ours[i] / true[i]),
                         "lmv_gap": float(gap[i])})
        t = table[table["model"] == model]
        for s, r in zip(*np.nonzero(B == 0), strict=True):
            col = f"B_{s + 1}_{r + 1}"
            if col in t:
                rows.append({"model": model, "entry": f"B[{s + 1},{r + 1}]", "true": 0.0,
                             "zero_max": float(t[col].max())})
    return pd.DataFrame(rows)


def findings(result: SimulationResult) -> list[str]:
    """A line on the run, then the paper file's claims (``claim: VERDICT; our numbers``),
    checked on the results stacked with :func:`blockmodel_entries`."""
    table, d = result.table, result.design
    stacked = pd.concat([table, blockmodel_entries(table, result.truth_blockmodel)],
                        ignore_index=True)
    head = (f"{table['replicate'].nunique()} replicate(s), {d.n_train} training / "
            f"{d.n_docs - d.n_train} test documents; mean true visibility of the training "
            f"documents {float(np.mean(result.truth_visibility)):.3f}")
    return [head, *claim_lines(check_claims(stacked, PAPER.claims), PAPER.claims)]


def write_simulation_outputs(result: SimulationResult, out: str | Path) -> dict[str, Path]:
    """CSVs (results, Table S1, zero entries, model summary, visibility of the scatter
    replicate), figures (Figure S4 bars, tau scatter) and findings.md into ``out``."""
    from topiclink.plotting.experiments import (
        plot_estimate_vs_truth,
        plot_model_bars,
        save_figure,
    )

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = result.table
    s1 = table_s1(table)
    z = zero_entries(table, result.truth_blockmodel)
    ms = model_summary(table)
    paths = {
        "results": write_csv(table, out / "lmv_sim_results.csv"),
        "table_s1": write_csv(s1, out / "lmv_sim_table_s1.csv"),
        "zero_entries": write_csv(z, out / "lmv_sim_zero_entries.csv"),
        "models": write_csv(ms, out / "lmv_sim_models.csv"),
        "visibility": write_csv(result.visibility, out / "lmv_sim_visibility.csv"),
    }
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    plot_model_bars(table, "predictive_rank", ax=axes[0])
    axes[0].axhline(table["random_rank"].mean(), color="grey", ls="--", label="random")
    axes[0].legend(fontsize=8)
    axes[0].set_title("predictive rank")
    plot_model_bars(table, "cpu_seconds", ax=axes[1])
    axes[1].set_title("CPU time")
    fig.suptitle(f"Figure S4: {table['replicate'].nunique()} simulated data sets")
    paths["figure_s4"] = save_figure(fig, out / "lmv_sim_figure_s4.png")
    vis = result.visibility
    if not vis.empty:
        models = list(dict.fromkeys(vis["model"]))
        fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 4.5),
                                 squeeze=False)
        for ax, model in zip(axes[0], models, strict=True):
            v = vis[vis["model"] == model]
            plot_estimate_vs_truth(v["true"], v["estimate"], ax=ax,
                                   label="posterior mean visibility")
            ax.set_xlabel("true visibility")
            ax.set_title(f"{model}, replicate {int(v['replicate'].iloc[0])}")
        paths["visibility_figure"] = save_figure(fig, out / "lmv_sim_visibility.png")
    text = ["# LMV simulation study (supplement S7): the paper's checks", ""]
    text += [f"- {line}" for line in findings(result)]
    text += ["", "## Table S1 (paper = the published numbers; ours = this run)", "",
             "```", format_table_s1(s1), "```", ""]
    path = out / "findings.md"
    path.write_text("\n".join(text))
    paths["findings"] = path
    return paths



@dataclass
class SimulationOptions:
    """The options of ``topiclink experiment lmv-simulation`` (:data:`SPEC`); the
    defaults are the paper file's."""

    replicates: int = option(PAPER.split.get("replicates"),
                             help="Simulated data sets (paper: 20).")
    models: str = option(",".join(SIM_MODELS), help="Comma-separated paper names: "
                         "LMV, LMVS, PLLDA, RTM (= Var-RTM), LDA+Reg.")
    n_docs: int = option(PAPER.split.get("n_docs"), "--n-docs",
                         help="Documents per data set (paper: 3000).")
    n_train: int = option(PAPER.split.get("n_train"), "--n-train", help="The first N "
                          "documents train, the rest test (paper: 2000).")
    doc_length: int = option(PAPER.split.get("doc_length"), "--doc-length",
                             help="Words per document (paper: 100).")
    max_iter: int | None = option(None, "--max-iter", help="Iteration limit of every model "
                                  "(default: each model's own).")
    seed: int = option(0)
    workers: int = shared("workers", 1)
    out: Path | None = option(None, "--out", "-o", help="Output folder (created when "
                              "missing) for lmv_sim_*.csv, lmv_sim_*.png and findings.md; "
                              "without it Table S1 and the checks are only printed.")
    force: bool = shared("force", False)
    verbose: bool = shared("verbose", True)




# ---------------------------------------------------------------------- the command
def _check(o: SimulationOptions, ui: Session) -> dict[str, Any]:
    """Every option and the output folder: the keyword arguments of
    :func:`run_lmv_simulation`."""
    ui.check(o.replicates >= 1, f"--replicates must be >= 1, got {o.replicates}")
    ui.check(o.n_docs >= 3, f"--n-docs must be >= 3, got {o.n_docs}")
    ui.check(2 <= o.n_train < o.n_docs, f"--n-train must be in [2, --n-docs), got {o.n_train}")
    ui.check(o.doc_length >= 1, f"--doc-length must be >= 1, got {o.doc_length}")
    ui.check(o.max_iter is None or o.max_iter >= 1,
             f"--max-iter must be >= 1, got {o.max_iter}")
    ui.check(o.workers >= 1, f"--workers must be >= 1, got {o.workers}")
    if o.out is not None:
        ui.check_out(o.out, "lmv_sim", o.force)
        if (o.out / "findings.md").is_file() and not o.force:
            raise ui.fail(f"{o.out} already holds findings.md; give --force to replace it "
                          "or another --out")
    return {"replicates": o.replicates, "models": ui.names(o.models, available_models()),
            "n_docs": o.n_docs, "n_train": o.n_train, "doc_length": o.doc_length,
            "max_iter": o.max_iter, "workers": o.workers, "seed": o.seed, "out": o.out}


#: a row as the command prints it
ROW = ("replicate {replicate:<3d} {model:>8s}: predictive rank {predictive_rank:7.1f} "
       "(random {random_rank:.1f})  CPU {cpu_seconds:.1f} s")


def _report(out: Path | None, result: SimulationResult, ui: Session) -> None:
    """Table S1, the zero entries, Figure S4's numbers and the paper's claims printed
    (the files are written by the run)."""
    table = result.table
    ui.echo("\nTable S1 (paper = published; ours = this run):")
    ui.echo(format_table_s1(table_s1(table)))
    z = zero_entries(table, result.truth_blockmodel)
    if not z.empty:
        ui.echo("\nlargest estimate of a zero entry of B:")
        ui.echo_table(z)
    ui.echo("\nper model (Figure S4), mean and sd over replicates:")
    ui.echo_table(model_summary(table))
    echo_claims(ui, findings(result))
    if out is not None:
        ui.echo(f"results: {out / 'lmv_sim_results.csv'}, Table S1, findings.md and "
                f"figures in {out}/")


#: the plan is the keyword arguments of the run; nothing to load (the replicates' data
#: are drawn in the run)
SPEC = register_protocol(ProtocolSpec(
    name="lmv-simulation", options=SimulationOptions, check=_check,
    load=lambda plan, ui, data: None,
    run=lambda plan, data, ui: run_lmv_simulation(**plan, on_row=echo_rows(ui, ROW)),
    report=lambda plan, data, result, ui: _report(plan["out"], result, ui),
    help=PAPER.title + "."))
