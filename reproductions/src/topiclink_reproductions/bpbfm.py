"""The BPBFM paper's knowledge-graph protocols (Hu, Rai & Carin 2016), read from
``papers/bpbfm.toml`` (the grid, the models, the chain's settings and the claims).

Two protocols, one row per (protocol, model, K, fold), run by
:func:`topiclink.experiments.runner.run_grid` (seeds from protocol, fold and K, so the
models of one cell share their seed):

``paper``
    RESCAL's protocol, which the paper follows: the full tensor is the union of the
    train, valid and test triples; each fold holds out an independent random 10 % of *all*
    entries, ones and zeros alike (:func:`~topiclink.data.splits.holdout_tensor_entries`,
    seeded from the run's seed and the fold index only, so a fold's entries do not depend
    on which other folds, models or K run); the model is fitted on the rest and scored by
    the areas under the ROC and precision-recall curves (average precision) of
    ``predict_proba`` over the held-out entries (label: the entry is a true triple).

``kg``
    What knowledge-graph users expect: fit on the train triples alone (every other cell,
    the valid and test triples included, is a zero to the model, as it is to a user who
    trains on ``train.txt``: :func:`kg_task`), then for every test triple (h, r, t) rank
    t among all entities by ``score_tails(h, r)`` (tail prediction) and h by
    ``score_heads(r, t)`` (head prediction) in the *filtered* setting (every other entity
    forming a true triple of train, valid or test is removed from the ranking); ties at
    the mean rank of the tied group (:func:`~topiclink.metrics.ranking.filtered_ranks`).
    MRR and Hits@1/3/10 for head, tail and both.  The split is the data set's, so a
    "fold" here is a repetition with another seed.

Models are runner names whose ``fit`` takes a tensor (``BPBFM-1``, ``BPBFM-2``, and any
other registered one with ``predict_proba`` / ``score_tails`` / ``score_heads``, e.g. an
online variant or a peer model).  In the first chosen fold of the paper protocol the
held-out AUC is also recorded every few iterations against the wall time of the fit
(:class:`HeldoutTrajectory`, from the sampler's current state: :func:`current_proba`), to
compare batch and online inference.  The claims of the paper file are checked on the
summary by :mod:`topiclink_reproductions.claims` (:func:`findings`).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.metrics import average_precision_score, roc_auc_score

from topiclink.data.checks import available_memory
from topiclink.data.splits import holdout_tensor_entries
from topiclink.data.tensor import RelationalTensor
from topiclink.experiments.registry import (
    ProtocolSpec,
    Session,
    option,
    register_protocol,
    shared,
)
from topiclink.experiments.runner import (
    Cell,
    CSVRows,
    build_model,
    cell_seed,
    fit_model,
    grid,
    model_class,
    model_fit_requires,
    model_names,
    model_params,
    run_grid,
    write_csv,
)
from topiclink.metrics.ranking import filtered_ranks, metrics_by_side
from topiclink_reproductions.claims import check_claims, claim_lines
from topiclink_reproductions.spec import PaperSpec, load_paper

__all__ = ["PAPER", "MODEL_NAMES", "KG_MODEL_NAMES", "KG_FOLDS", "PROTOCOLS",
           "BPBFMSettings", "PaperFold", "KGTask",
           "tensor_model_names", "check_models", "union_tensor", "paper_folds", "kg_task",
           "current_proba", "HeldoutTrajectory", "evaluate_paper", "evaluate_kg", "kg_chunk",
           "kg_ranks", "peak_rss_mb", "check_paper_protocol",
           "run_bpbfm_experiment", "summarise", "summary_text", "findings", "write_bpbfm_outputs",
           "BPBFMOptions", "SPEC"]

logger = logging.getLogger(__name__)

#: the paper file: protocols, grid, models, the chain's settings, claims
PAPER: PaperSpec = load_paper("bpbfm")
#: the paper's models (the protocols also run any other tensor model of the runner)
MODEL_NAMES: tuple[str, ...] = PAPER.model_names
#: the kg protocol's default models: MAP-EM, faster and better than the Gibbs chains on
#: every graph measured (docs/results-knowledge-graphs.md): with observable patterns (the
#: best on UMLS, Nations and WN18RR) and degree-corrected (the best on FB15k-237); and its
#: default folds: one, as the data set's split is fixed (more folds repeat the fit with
#: other seeds)
KG_MODEL_NAMES: tuple[str, ...] = ("BPBFM-PAT-EM", "BPBFM-DC-EM")
KG_FOLDS = 1
PROTOCOLS: tuple[str, ...] = tuple(PAPER.split.get("protocols"))
#: keyword of the number of latent factors, first one a model accepts (the glossary's
#: n_topics; the others for models from outside topiclink, e.g. scikit-learn's n_components)
K_PARAMS = ("n_topics", "embedding_dim", "n_factors", "rank", "n_components")
#: Hits@k reported
HITS_AT = (1, 3, 10)

PAPER_METRICS = ("auc_roc", "auc_pr")
KG_METRICS = ("mrr", *(f"hits_at_{k}" for k in HITS_AT),
              *(f"{m}_{side}" for side in ("head", "tail")
                for m in ("mrr", *(f"hits_at_{k}" for k in HITS_AT))))
COST_METRICS = ("fit_seconds", "test_seconds", "n_parameters", "n_active_factors",
                "peak_rss_mb")


# ---------------------------------------------------------------------- models
def _has_ranking(name: str) -> bool:
    cls = model_class(name)
    if cls is None:              # a protocol-local factory: trusted
        return True
    return all(callable(getattr(cls, m, None))
               for m in ("predict_proba", "score_tails", "score_heads"))


def tensor_model_names() -> list[str]:
    """Every runner name the protocols can run: ``fit`` takes a tensor and the model
    scores triples (``predict_proba``, ``score_tails``, ``score_heads``)."""
    return [n for n in model_names()
            if "tensor" in model_fit_requires(n) and _has_ranking(n)]


def check_models(models: Sequence[str]) -> list[str]:
    """The names, checked (ValueError naming the known tensor models otherwise)."""
    names = [str(m) for m in models]
    if not names:
        raise ValueError("no model given")
    known = tensor_model_names()
    for name in names:
        if name not in known:
            raise ValueError(f"model {name!r} is not available; known tensor models: "
                             f"{', '.join(known)}")
    return names


def _k_param(name: str) -> str:
    accepted = model_params(name)
    if accepted is None:
        return K_PARAMS[0]
    for p in K_PARAMS:
        if p in accepted:
            return p
    raise ValueError(f"model {name!r} has no parameter for the number of factors (one of "
                     f"{', '.join(K_PARAMS)})")


def _paper_models() -> dict[str, dict[str, Any]]:
    return {name: dict(spec.settings) for name, spec in PAPER.models.items()}


@dataclass
class BPBFMSettings:
    """Settings of the protocols; the defaults are the paper file's.

    ``max_iter`` / ``burn_in`` / ``thinning`` are the Gibbs chain's (passed to every model
    that accepts them), as ``n_jobs`` (the threads of one fit; 1: timings compare models,
    not thread counts) and ``verbose`` (``[settings]``).  ``holdout_fraction`` is the paper
    protocol's held-out share of all entries, ``trajectory_every``: record the held-out
    AUC every this many iterations in the first fold of the paper protocol (0: never)
    (``[split]``).  ``model_params`` per model name: its own constructor parameters (the
    file's ``[models.NAME]``), added or overriding.
    """

    max_iter: int = PAPER.settings["max_iter"]
    burn_in: int = PAPER.settings["burn_in"]
    thinning: int = PAPER.settings["thinning"]
    n_jobs: int = PAPER.settings["n_jobs"]
    verbose: bool = PAPER.settings["verbose"]
    holdout_fraction: float = PAPER.split.get("holdout_fraction")
    trajectory_every: int = PAPER.split.get("trajectory_every")
    model_params: dict[str, dict[str, Any]] = field(default_factory=_paper_models)

    def params(self, name: str, K: int, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """(required, optional) constructor parameters of model ``name``."""
        required: dict[str, Any] = {_k_param(name): int(K)}
        required.update(self.model_params.get(name, {}))
        optional: dict[str, Any] = {
            "random_state": int(seed), "max_iter": int(self.max_iter),
            "burn_in": int(self.burn_in), "thinning": int(self.thinning),
            "n_jobs": self.n_jobs, "verbose": self.verbose}
        return required, optional


# ---------------------------------------------------------------------- data
def _keys(h: np.ndarray, r: np.ndarray, t: np.ndarray, n_entities: int) -> np.ndarray:
    E = np.int64(n_entities)
    return (np.asarray(r, np.int64) * E + np.asarray(h, np.int64)) * E \
        + np.asarray(t, np.int64)


def _check_splits(splits: Mapping[str, RelationalTensor]) -> RelationalTensor:
    if "train" not in splits:
        raise ValueError(f"the data set has no train split (splits: {', '.join(splits)})")
    train = splits["train"]
    for name, part in splits.items():
        if (part.n_entities, part.n_relations) != (train.n_entities, train.n_relations):
            raise ValueError(f"split {name!r} has {part.n_entities} entities and "
                             f"{part.n_relations} relations, train {train.n_entities} and "
                             f"{train.n_relations}: the splits must share one numbering")
    return train


def union_tensor(splits: Mapping[str, RelationalTensor]) -> RelationalTensor:
    """The tensor of every triple of every split (a triple in several splits once, with
    its largest value), nothing unobserved."""
    train = _check_splits(splits)
    parts = list(splits.values())
    h = np.concatenate([p.heads for p in parts])
    r = np.concatenate([p.relations for p in parts])
    t = np.concatenate([p.tails for p in parts])
    v = np.concatenate([p.values for p in parts])
    key = _keys(h, r, t, train.n_entities)
    order = np.lexsort((-v, key))            # per key, the largest value first
    _, first = np.unique(key[order], return_index=True)
    keep = np.sort(order[first])
    return RelationalTensor(h[keep], r[keep], t[keep], v[keep], train.n_entities,
                            train.n_relations, train.entity_names, train.relation_names)


@dataclass
class PaperFold:
    """One fold of the paper protocol: the training tensor and the held-out entries."""

    fold: int
    train: RelationalTensor
    entries: np.ndarray        # (m, 3) head, relation, tail
    labels: np.ndarray         # (m,) bool: a true triple


def paper_folds(full: RelationalTensor, folds: Iterable[int], fraction: float = 0.1,
                seed: int = 0) -> dict[int, PaperFold]:
    """Independent random held-out draws, one per fold index: ``fraction`` of all entries
    (ones and zeros), seeded by :func:`~topiclink.experiments.runner.cell_seed` of
    ``seed`` and the fold index only."""
    out = {}
    for f in folds:
        rs = cell_seed(seed, {"fold": int(f)}, ("fold",))
        train, entries, values = holdout_tensor_entries(full, fraction, random_state=rs)
        out[int(f)] = PaperFold(int(f), train, entries.astype(np.int64), values > 0)
    return out


@dataclass
class KGTask:
    """The kg protocol's data: the training tensor (the train triples; every other cell a
    zero), the test triples and every known true triple (for the filter) as sparse
    indicator matrices ``tails_of[r * N + h, t]`` and ``heads_of[r * N + t, h]``."""

    train: RelationalTensor
    test: np.ndarray           # (n, 3) head, relation, tail
    tails_of: sp.csr_array
    heads_of: sp.csr_array

    @property
    def n_entities(self) -> int:
        return int(self.train.n_entities)


def kg_task(splits: Mapping[str, RelationalTensor]) -> KGTask:
    """Train on ``splits["train"]`` alone (every other cell a zero, as a user training on
    ``train.txt`` has it); test on ``splits["test"]``; filter with the triples of every
    split.

    The valid and test cells are *not* marked missing: that would tell a model exactly
    where the answers are (a held-out cell is imputed, or never drawn as a negative,
    instead of counting as a zero).  Measured with the PyKEEN peers on Nations: RESCAL's
    filtered MRR rose to 0.92 when the answer cells were excluded from its negatives.
    """
    train = _check_splits(splits)
    if "test" not in splits or splits["test"].n_entries == 0:
        raise ValueError("the kg protocol needs a test split of triples (test.txt)")
    test = splits["test"]
    train_tensor = train
    full = union_tensor(splits)
    N, R = int(train.n_entities), int(train.n_relations)
    ones = np.ones(full.n_entries, dtype=bool)
    tails_of = sp.csr_array((ones, (full.relations.astype(np.int64) * N + full.heads,
                                    full.tails)), shape=(R * N, N))
    heads_of = sp.csr_array((ones, (full.relations.astype(np.int64) * N + full.tails,
                                    full.heads)), shape=(R * N, N))
    triples = np.column_stack([test.heads, test.relations, test.tails]).astype(np.int64)
    return KGTask(train_tensor, triples, tails_of, heads_of)


# ---------------------------------------------------------------------- trajectory
def current_proba(model: Any, h: np.ndarray, r: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``1 - exp(-u_h^T Lambda^r u_t)`` from the model's *current* sampler state.

    ``model.state_`` has ``U`` (N, K) and ``G``: Lambda itself (R, K, K) when ``eta`` is
    empty (BPBFM-1), else the dictionary (M, K, K) with ``Lambda^r = sum_m eta[m, r]
    G[m]`` (BPBFM-2).  AttributeError for a model without such a state.
    """
    state = model.state_
    U = np.asarray(state.U, dtype=np.float64)
    G = np.asarray(state.G, dtype=np.float64)
    eta = getattr(state, "eta", None)
    if eta is not None and np.size(eta):
        L = np.einsum("mr,mkl->rkl", np.asarray(eta, dtype=np.float64), G)
    else:
        L = G
    h, r, t = (np.asarray(x, dtype=np.int64) for x in (h, r, t))
    rate = np.empty(h.size)
    order = np.argsort(r, kind="stable")
    bounds = np.flatnonzero(np.diff(r[order])) + 1
    for idx in np.split(order, bounds):
        if idx.size:
            rel = int(r[idx[0]])
            rate[idx] = np.einsum("nk,nk->n", U[h[idx]] @ L[rel], U[t[idx]])
    return -np.expm1(-rate)


def _aucs(labels: np.ndarray, proba: np.ndarray) -> tuple[float, float]:
    if labels.all() or not labels.any():
        return float("nan"), float("nan")
    return (float(roc_auc_score(labels, proba)),
            float(average_precision_score(labels, proba)))


class HeldoutTrajectory:
    """Callback: the held-out AUC-ROC / AUC-PR from the current state
    (:func:`current_proba`) every ``every`` iterations, against the wall time of the fit
    since :meth:`start` (the evaluation's own time excluded).  ``history``: a list of
    dicts (iteration, seconds, auc_roc, auc_pr).  A model without a sampler state is
    skipped (logged once)."""

    def __init__(self, entries: np.ndarray, labels: np.ndarray, every: int = 10) -> None:
        self.entries = np.asarray(entries, dtype=np.int64)
        self.labels = np.asarray(labels, dtype=bool)
        self.every = int(every)
        self.history: list[dict[str, float]] = []
        self.eval_seconds = 0.0
        self._t0: float | None = None

    def start(self) -> None:
        self._t0 = time.perf_counter()
        self.eval_seconds = 0.0

    def on_iteration(self, model: Any, iteration: int, info: dict) -> bool:
        if self.every <= 0 or (iteration + 1) % self.every:
            return False
        now = time.perf_counter()
        if self._t0 is None:
            self._t0 = now
        try:
            proba = current_proba(model, self.entries[:, 0], self.entries[:, 1],
                                  self.entries[:, 2])
        except AttributeError:
            logger.info("%s has no sampler state (U, G); no AUC trajectory",
                        type(model).__name__)
            self.every = 0
            return False
        roc, pr = _aucs(self.labels, proba)
        self.history.append({"iteration": iteration + 1,
                             "seconds": now - self._t0 - self.eval_seconds,
                             "auc_roc": roc, "auc_pr": pr})
        self.eval_seconds += time.perf_counter() - now
        return False


# ---------------------------------------------------------------------- evaluation
def evaluate_paper(model: Any, fold: PaperFold) -> dict[str, float]:
    """AUC-ROC and AUC-PR of ``predict_proba`` over a fold's held-out entries."""
    e = fold.entries
    proba = np.asarray(model.predict_proba(e[:, 0], e[:, 1], e[:, 2]), dtype=np.float64)
    roc, pr = _aucs(fold.labels, proba)
    return {"auc_roc": roc, "auc_pr": pr, "n_heldout": int(e.shape[0]),
            "n_heldout_true": int(fold.labels.sum())}


def _score_matrix(model: Any, queries: np.ndarray, side: str) -> np.ndarray:
    """Scores of every entity for each (a, r) query (tail: a = head; head: a = tail), one
    row per query.  A model with ``score_tails_batch`` / ``score_heads_batch`` scores the
    distinct queries at once (BPBFM: one matrix product a sample); others are called once
    per distinct query."""
    queries = np.asarray(queries, dtype=np.int64).reshape(-1, 2)
    uniq, inverse = np.unique(queries, axis=0, return_inverse=True)
    inverse = np.ravel(inverse)
    batch = getattr(model, "score_tails_batch" if side == "tail" else "score_heads_batch",
                    None)
    if callable(batch):
        a, r = uniq[:, 0], uniq[:, 1]
        scores = np.asarray(batch(a, r) if side == "tail" else batch(r, a),
                            dtype=np.float64)
    else:
        rows = []
        for a, r in uniq:
            s = model.score_tails(int(a), int(r)) if side == "tail" \
                else model.score_heads(int(r), int(a))
            rows.append(np.asarray(s, dtype=np.float64).ravel())
        scores = np.stack(rows) if rows else np.zeros((0, 0))
    if uniq.shape[0] == queries.shape[0] and np.array_equal(inverse,
                                                            np.arange(inverse.size)):
        return scores
    return scores[inverse]


#: bytes of one (queries, entities) float64 block of scores in :func:`evaluate_kg` (the
#: chunk of queries is sized to it; about three such blocks are alive at once).  Small
#: enough for the allocator to reuse the blocks of the previous chunk (larger ones are
#: mapped afresh and page-faulted every chunk: 576-query blocks of FB15k-237 scored 1.6x
#: slower per query than 144-query ones, single thread)
SCORE_BLOCK_BYTES = 16 * 2 ** 20
#: most queries in one block
MAX_CHUNK = 4096


def kg_chunk(n_entities: int, chunk: int | None = None) -> int:
    """Queries scored at once: ``chunk``, or (None) as many as fit in
    :data:`SCORE_BLOCK_BYTES` (at most :data:`MAX_CHUNK`; FB15k-237's 14,541 entities:
    144)."""
    if chunk is None:
        return int(max(1, min(MAX_CHUNK, SCORE_BLOCK_BYTES // (8 * max(int(n_entities), 1)))))
    if isinstance(chunk, bool) or not isinstance(chunk, int | np.integer) or chunk < 1:
        raise ValueError(f"chunk must be an integer >= 1 or None, got {chunk!r}")
    return int(chunk)


def kg_ranks(model: Any, task: KGTask, side: str, chunk: int | None = None) -> np.ndarray:
    """Filtered ranks of the test triples' tails (``side="tail"``) or heads (``"head"``)
    in the test order, among all entities (ties at the mean rank).

    Bounded memory: the triples are taken ``chunk`` at a time (sorted by relation, then
    entity, so that the triples sharing a query are scored together), each chunk's scores
    are one
    (chunk, N) block and its filter the rows of the known-answer CSR matrix of the task
    (no E x E x R array, no score matrix of all queries).
    """
    if side not in ("head", "tail"):
        raise ValueError(f"side must be 'head' or 'tail', got {side!r}")
    N = task.n_entities
    size = kg_chunk(N, chunk)
    h, r, t = (np.ascontiguousarray(c) for c in task.test.T)
    given, answer = (h, t) if side == "tail" else (t, h)
    known = task.tails_of if side == "tail" else task.heads_of
    rows = r * N + given
    # relation-major: a chunk holds few relations, so a rule model builds each
    # relation's rule rows once for many queries (FB15k-237, 6,495 rules: 3x faster)
    order = np.argsort(rows, kind="stable")
    ranks = np.empty(rows.size)
    for lo in range(0, rows.size, size):
        idx = order[lo:lo + size]
        scores = _score_matrix(model, np.column_stack([given[idx], r[idx]]), side)
        ranks[idx] = filtered_ranks(scores, answer[idx], known[rows[idx]])
    return ranks


def evaluate_kg(model: Any, task: KGTask, chunk: int | None = None) -> dict[str, float]:
    """Filtered MRR and Hits@1/3/10 (head, tail and both) over the test triples, every
    entity a candidate, scored ``chunk`` queries at a time (None: :func:`kg_chunk`, a
    block of about 16 MiB; see :func:`kg_ranks`)."""
    ranks = {side: kg_ranks(model, task, side, chunk) for side in ("head", "tail")}
    out = metrics_by_side(ranks, HITS_AT)
    out["n_test"] = int(task.test.shape[0])
    return out


def peak_rss_mb() -> float:
    """This process's peak resident memory so far in MiB (``getrusage`` ``ru_maxrss``;
    NaN where the ``resource`` module is missing)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return float("nan")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(peak) / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)


#: bytes per held-out entry of the paper protocol, at least: its (h, r, t) and value, the
#: draw's keys and ranks, the training tensor's ``missing`` rows, the sampler's copy and
#: the predicted probabilities
PAPER_BYTES_PER_ENTRY = 160


def check_paper_protocol(full: RelationalTensor, fraction: float, name: str = "data"
                         ) -> None:
    """Refuse (one-line ValueError) the paper protocol where its held-out entries, a
    ``fraction`` of *all* E x E x R cells, cannot fit in memory (FB15k-237: 5.0e9 of
    5.0e10 cells); the kg protocol is sparse and runs there."""
    E, R = int(full.n_entities), int(full.n_relations)
    cells = E * E * R
    m = round(float(fraction) * cells)
    need = m * PAPER_BYTES_PER_ENTRY
    have = available_memory()
    if need > have:
        raise ValueError(
            f"the paper protocol holds out {fraction:g} of all {E} x {E} x {R} = "
            f"{cells:.3g} entries of {name!r} ({m:.3g} entries, each imputed every "
            f"sweep): about {need / 2 ** 30:.3g} GiB, more than the {have / 2 ** 30:.3g} GiB "
            f"available; use the kg protocol (--protocol kg: the data set's test triples, "
            f"sparse)")


# ---------------------------------------------------------------------- the grid
_WARMED: set[str] = set()


def _warm_up(name: str, train: RelationalTensor, settings: BPBFMSettings) -> None:
    """Once per process and model: a two-iteration fit, so that compiling the kernels
    (numba) is not counted in the first cell's fit time or AUC trajectory."""
    accepted = model_params(name)
    if name in _WARMED or accepted is None or "max_iter" not in accepted:
        return
    _WARMED.add(name)
    required, optional = settings.params(name, 2, 0)
    optional.update(max_iter=2, burn_in=0, thinning=1)
    fit_model(build_model(name, required, optional), tensor=train)


def _run_cell(cell: Cell, context: tuple[Any, BPBFMSettings, bool]) -> dict[str, Any]:
    data, settings, trajectory = context
    protocol, name, K = cell["protocol"], cell["model"], int(cell["K"])
    required, optional = settings.params(name, K, cell.seed)
    recorder = None
    if protocol == "paper" and trajectory and settings.trajectory_every > 0:
        accepted = model_params(name)
        if accepted is None or "callbacks" in accepted:
            recorder = HeldoutTrajectory(data.entries, data.labels, settings.trajectory_every)
            optional["callbacks"] = [recorder]
    model = build_model(name, required, optional)
    _warm_up(name, data.train, settings)
    if recorder is not None:
        recorder.start()
    c0, w0 = time.process_time(), time.perf_counter()
    fit_model(model, tensor=data.train)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    extra = recorder.eval_seconds if recorder is not None else 0.0
    t0 = time.perf_counter()
    metrics = evaluate_paper(model, data) if protocol == "paper" else evaluate_kg(model, data)
    test_seconds = time.perf_counter() - t0
    peak = peak_rss_mb()
    n_iter = getattr(model, "n_iter_", None)
    row: dict[str, Any] = {
        "protocol": protocol, "model": name, "K": K, "fold": int(cell["fold"]),
        "seed": int(cell.seed), **metrics,
        "fit_seconds": wall - extra, "cpu_seconds": cpu - extra, "test_seconds": test_seconds,
        "n_iter": np.nan if n_iter is None else int(n_iter),
        "n_parameters": _int_or_nan(getattr(model, "n_parameters_", None)),
        "n_active_factors": _int_or_nan(getattr(model, "n_active_factors_", None)),
        "peak_rss_mb": peak,
    }
    if recorder is not None and recorder.history:
        row["trajectory"] = [{"model": name, "K": K, "fold": row["fold"], **h}
                             for h in recorder.history]
    if protocol == "paper":
        logger.info("%s K=%d fold %d: AUC-ROC %.4f AUC-PR %.4f, %.1f s", name, K,
                    row["fold"], row["auc_roc"], row["auc_pr"], row["fit_seconds"])
    else:
        logger.info("%s K=%d run %d: MRR %.4f Hits@10 %.4f, fit %.1f s, evaluation %.1f "
                    "s, peak RSS %.0f MiB", name, K, row["fold"], row["mrr"],
                    row["hits_at_10"], row["fit_seconds"], test_seconds, peak)
    return row


def _int_or_nan(value: Any) -> float | int:
    return np.nan if value is None else int(value)


def _context_of(cell: Cell, context: tuple[dict[int, PaperFold], KGTask | None,
                                           BPBFMSettings, int | None]
                ) -> tuple[Any, BPBFMSettings, bool]:
    """A cell's data only (a worker is sent its fold, not every fold)."""
    folds, task, settings, first = context
    if cell["protocol"] == "paper":
        return folds[cell["fold"]], settings, cell["fold"] == first
    return task, settings, False


def run_bpbfm_experiment(dataset: Any, *, models: Sequence[str] = MODEL_NAMES,
                         topics: Iterable[int] = PAPER.axis("K"),
                         protocols: Sequence[str] = PROTOCOLS,
                         folds: int = PAPER.split.get("folds"),
                         only_folds: Sequence[int] | None = None, workers: int = 1,
                         seed: int = 0, settings: BPBFMSettings | None = None,
                         kg_models: Sequence[str] | None = None,
                         kg_folds: int | None = None,
                         out: str | Path | None = None,
                         on_row: Callable[[dict[str, Any]], None] | None = None
                         ) -> pd.DataFrame:
    """Run the protocols; one row per (protocol, model, K, fold).

    Parameters
    ----------
    dataset : a Dataset with ``tensor`` = {"train", "valid", "test"} RelationalTensors
        (shared numbering), a registered name (e.g. "nations", "umls"), or such a dict.
    models : runner names of tensor models (:func:`tensor_model_names`).
    topics : values of K.
    protocols : "paper" and/or "kg" (module docstring).
    folds : folds of the paper protocol (independent 10 % draws); in the kg protocol the
        fold index is a repetition (another seed) on the data set's split.
    only_folds : run only these fold indices.
    kg_models, kg_folds : the kg protocol's own models and folds (default: ``models`` and
        ``folds``; the command line's defaults are :data:`KG_MODEL_NAMES` and
        :data:`KG_FOLDS`).
    workers : fits run at once in separate processes (rows do not depend on it).
    seed : the run's seed (held-out draws; each cell's seed from protocol, fold and K).
    settings : :class:`BPBFMSettings`.
    out : folder; ``bpbfm_results.csv`` is rewritten after every row, and
        ``bpbfm_trajectory.csv``, the summary and the figures are written at the end
        (:func:`write_bpbfm_outputs`).

    Columns: protocol, model, K, fold, seed; paper: auc_roc, auc_pr, n_heldout,
    n_heldout_true; kg: mrr, hits_at_1/3/10 (both sides), the same with suffix _head and
    _tail, n_test; fit_seconds (wall time of ``fit``, the trajectory's evaluations
    excluded), cpu_seconds, test_seconds (wall time of the evaluation), n_iter,
    n_parameters, n_active_factors, peak_rss_mb (the process's peak resident memory after
    the cell's evaluation, :func:`peak_rss_mb`: a high-water mark since the process
    started, so it covers earlier cells of the same process too).

    Raises ValueError (one line) before fitting anything when the paper protocol's
    held-out entries cannot fit in memory (:func:`check_paper_protocol`; e.g. FB15k-237).
    ``table.attrs["trajectory"]`` holds the AUC-against-time table (model, K, fold,
    iteration, seconds, auc_roc, auc_pr).
    """
    names = check_models(models)
    protocols = [str(p) for p in protocols]
    for p in protocols:
        if p not in PROTOCOLS:
            raise ValueError(f"unknown protocol {p!r}; known: {', '.join(PROTOCOLS)}")
    if not protocols:
        raise ValueError("no protocol given")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    kg_folds = folds if kg_folds is None else kg_folds
    kg_names = names if kg_models is None else check_models(kg_models)
    for n in (folds, kg_folds):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"folds must be >= 1, got {n}")
    settings = settings or BPBFMSettings()
    ds_name, splits = _as_splits(dataset)
    chosen_of = {}
    for protocol, n in (("paper", folds), ("kg", kg_folds)):
        chosen_of[protocol] = (list(range(n)) if only_folds is None
                               else [int(f) for f in only_folds])
        for f in chosen_of[protocol] if protocol in protocols else []:
            if not 0 <= f < n:
                raise ValueError(f"fold {f} is not in [0, {n}) of the {protocol} protocol"
                                 + ("; give --folds, or --protocol paper" if protocol == "kg"
                                    else ""))
    chosen = chosen_of["paper"]
    paper: dict[int, PaperFold] = {}
    if "paper" in protocols:
        full = union_tensor(splits)
        check_paper_protocol(full, settings.holdout_fraction, ds_name)
        paper = paper_folds(full, chosen, settings.holdout_fraction, seed)
    task = kg_task(splits) if "kg" in protocols else None
    first = min(chosen) if chosen else None
    cells = [cell for protocol in protocols for cell in grid(
        {"protocol": [protocol], "fold": chosen_of[protocol], "K": [int(k) for k in topics],
         "model": names if protocol == "paper" else kg_names})]
    out_dir = None if out is None else Path(out)
    sink = CSVRows(None if out_dir is None else out_dir / "bpbfm_results.csv")
    trajectory: list[dict[str, Any]] = []

    def collect(row: dict[str, Any]) -> None:
        trajectory.extend(row.pop("trajectory", None) or [])
        sink.add(row)
        if on_row is not None:
            on_row(row)

    run_grid(cells, _run_cell, (paper, task, settings, first), base_seed=seed,
             seed_axes=PAPER.seed_axes, workers=workers, on_row=collect,
             context_of=_context_of)
    table = sink.frame()
    table.attrs["dataset"] = ds_name
    table.attrs["trajectory"] = pd.DataFrame(
        trajectory, columns=["model", "K", "fold", "iteration", "seconds", "auc_roc",
                             "auc_pr"])
    if out_dir is not None:
        write_bpbfm_outputs(table, out_dir, title=ds_name)
    return table


def _as_splits(dataset: Any) -> tuple[str, dict[str, RelationalTensor]]:
    if isinstance(dataset, str):
        from topiclink.datasets import load_dataset

        dataset = load_dataset(dataset)
    if isinstance(dataset, Mapping):
        return "data", dict(dataset)
    tensor, name = getattr(dataset, "tensor", None), str(getattr(dataset, "name", "data"))
    if isinstance(tensor, RelationalTensor):
        tensor = {"train": tensor}
    if not isinstance(tensor, Mapping) or not tensor:
        raise ValueError(f"dataset {name!r} has no tensor of triples")
    return name, dict(tensor)


# ---------------------------------------------------------------------- summary
def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over folds for every (protocol, model, K), with the
    number of folds."""
    keys = ["protocol", "model", "K"]
    metrics = [m for m in (*PAPER_METRICS, *KG_METRICS, *COST_METRICS) if m in table]
    agg = table.groupby(keys, sort=False)[metrics].agg(["mean", "std"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    agg["folds"] = table.groupby(keys, sort=False)["fold"].nunique()
    return agg.reset_index().dropna(axis=1, how="all")


def summary_text(table: pd.DataFrame) -> str:
    """The summary as readable tables, one per protocol: mean ± sd over folds."""
    parts = []
    shown = {"paper": ("auc_roc", "auc_pr", "fit_seconds", "n_active_factors"),
             "kg": ("mrr", "hits_at_1", "hits_at_3", "hits_at_10", "mrr_head", "mrr_tail",
                    "fit_seconds", "test_seconds", "n_active_factors")}
    for protocol in [p for p in PROTOCOLS if p in set(table["protocol"])]:
        part = table[table["protocol"] == protocol]
        cols = [c for c in shown[protocol] if c in part]
        rows = []
        for (model, K), g in part.groupby(["model", "K"], sort=False):
            row = {"model": model, "K": K, "folds": g["fold"].nunique()}
            for c in cols:
                digits = 1 if c in ("fit_seconds", "test_seconds", "n_active_factors") \
                    else 3
                mean, sd = g[c].mean(), g[c].std()
                row[c] = (f"{mean:.{digits}f}" if not np.isfinite(sd)
                          else f"{mean:.{digits}f} ± {sd:.{digits}f}")
            rows.append(row)
        title = ("paper protocol (10 % of all entries held out): AUC, mean ± sd over folds"
                 if protocol == "paper" else
                 "kg protocol (test triples, filtered, ties at the mean rank): mean ± sd "
                 "over runs")
        parts.append(title + "\n" + pd.DataFrame(rows).to_string(index=False))
    return "\n\n".join(parts)


def findings(table: pd.DataFrame) -> list[str]:
    """The paper file's claims on the summary, one line each (``claim: VERDICT; our
    numbers``)."""
    return claim_lines(check_claims(summarise(table), PAPER.claims), PAPER.claims)


def write_bpbfm_outputs(table: pd.DataFrame, out: str | Path, title: str = ""
                        ) -> dict[str, Path]:
    """Write bpbfm_results.csv, bpbfm_trajectory.csv, bpbfm_summary.csv/.txt,
    bpbfm_findings.md and the figures (metrics against K; held-out AUC against the
    fit's wall time) into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"results": write_csv(table, out / "bpbfm_results.csv")}
    traj = table.attrs.get("trajectory")
    if traj is None:
        traj = pd.DataFrame(columns=["model", "K", "fold", "iteration", "seconds",
                                     "auc_roc", "auc_pr"])
    paths["trajectory"] = write_csv(traj, out / "bpbfm_trajectory.csv")
    if table.empty:
        return paths
    paths["summary"] = write_csv(summarise(table), out / "bpbfm_summary.csv")
    text = (f"{title}\n\n" if title else "") + summary_text(table) + "\n"
    (out / "bpbfm_summary.txt").write_text(text)
    paths["summary_text"] = out / "bpbfm_summary.txt"
    lines = "\n".join(f"- {line}" for line in findings(table))
    (out / "bpbfm_findings.md").write_text(f"# BPBFM protocols{': ' + title if title else ''}"
                                           f": the paper's claims\n\n{lines}\n")
    paths["findings"] = out / "bpbfm_findings.md"

    import matplotlib.pyplot as plt  # falls back to Agg when there is no display

    from topiclink.plotting.experiments import plot_metric_vs_topics, save_figure

    labels = {"auc_roc": "held-out AUC-ROC", "auc_pr": "held-out AUC-PR",
              "mrr": "filtered MRR", "hits_at_10": "filtered Hits@10",
              "fit_seconds": "wall time of the fit (s)"}
    figures = {"paper": ("auc_roc", "auc_pr", "fit_seconds"),
               "kg": ("mrr", "hits_at_10")}
    for protocol, metrics in figures.items():
        part = table[table["protocol"] == protocol]
        for metric in metrics:
            if part.empty or metric not in part or part[metric].isna().all():
                continue
            fig, ax = plt.subplots(figsize=(5.5, 4))
            plot_metric_vs_topics(part, metric, ax=ax)
            ax.set_xlabel("number of factors K")
            ax.set_ylabel(labels[metric])
            ax.set_title(f"{title + ': ' if title else ''}{labels[metric]} ({protocol})")
            key = f"{protocol}_{metric}" if metric == "fit_seconds" else metric
            paths[key] = save_figure(fig, out / f"bpbfm_{key}.png")
    if not traj.empty:
        Ks = sorted(traj["K"].unique())
        fig, axes = plt.subplots(1, len(Ks), figsize=(5 * len(Ks), 4), squeeze=False,
                                 sharey=True)
        for ax, K in zip(axes[0], Ks, strict=True):
            part = traj[traj["K"] == K]
            for model, g in part.groupby("model", sort=False):
                g = g.sort_values("iteration")
                ax.plot(g["seconds"], g["auc_roc"], marker=".", label=str(model))
            ax.set_xlabel("wall time of the fit (s)")
            ax.set_title(f"K = {K} (fold {int(part['fold'].iloc[0])})")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
        axes[0][0].set_ylabel("held-out AUC-ROC (current sample)")
        if title:
            fig.suptitle(title)
        paths["auc_vs_time"] = save_figure(fig, out / "bpbfm_auc_vs_time.png")
    return paths


# ---------------------------------------------------------------------- the command
@dataclass
class BPBFMOptions:
    """The options of ``topiclink experiment bpbfm`` (:data:`SPEC`); the defaults are
    the paper file's."""

    dataset: str | None = shared("dataset")
    data: Path | None = shared("data")
    protocol: str = option(
        "both", help="paper (RESCAL's: 10 % of all entries held out per fold, AUC-ROC and "
        "AUC-PR; refused where those entries do not fit in memory, e.g. FB15k-237), kg "
        "(the data set's test triples, filtered MRR and Hits@1/3/10 for head and tail "
        "prediction, ties at the mean rank; sparse, in bounded memory) or both.")
    folds: int | None = option(None, help="Folds of the paper protocol (independent "
                               f"random 10 % draws; default {PAPER.split.get('folds')}, the "
                               "paper's); in the kg protocol each fold is a repetition "
                               f"with another seed (default {KG_FOLDS}: the data set's "
                               "split is fixed).")
    only_folds: str | None = shared("only_folds")
    topics: str = option(PAPER.joined(PAPER.axis("K")),
                         help="Values of K (latent factors), comma-separated.")
    models: str | None = option(None, help="Comma-separated tensor model names: BPBFM-1, "
                                "BPBFM-2, BPBFM-1-scaled, BPBFM-1-online, BPBFM-1-EM, "
                                "BPBFM-DC-EM, ... (RESCAL, DistMult, ComplEx with "
                                f"topiclink[bench]); default {','.join(MODEL_NAMES)} "
                                f"(the paper's) for the paper protocol, "
                                f"{','.join(KG_MODEL_NAMES)} for kg.")
    iterations: int = option(PAPER.settings["max_iter"], "--iterations", "-n",
                             help="Gibbs sweeps of the Gibbs models; at most this many "
                             "iterations of the EM models (they stop earlier at their "
                             "tolerance).")
    burn_in: int | None = option(None, "--burn-in", help="Iterations before samples are "
                                 "kept for prediction (default: half of --iterations).")
    thinning: int = option(PAPER.settings["thinning"],
                           help="Keep every this many samples after burn-in.")
    fraction: float = option(PAPER.split.get("holdout_fraction"), help="Share of all "
                             "entries held out per fold (paper protocol; the paper: 0.1).")
    trajectory_every: int = option(
        PAPER.split.get("trajectory_every"), "--trajectory-every", help="Record the "
        "held-out AUC every this many iterations in the first fold of the paper protocol "
        "(AUC against wall time); 0: never.")
    n_jobs: int = option(PAPER.settings["n_jobs"], help="Threads of one fit.")
    seed: int = option(0)
    workers: int = shared("workers", 1)
    out: Path = option(Path("bpbfm-experiment"), "--out", "-o", help="Output folder "
                       "(created when missing) for the bpbfm_*.csv tables, "
                       "bpbfm_summary.txt and bpbfm_*.png figures; results already there "
                       "are refused unless --force.")
    force: bool = shared("force", False)
    verbose: bool = shared("verbose", True)


def _check(o: BPBFMOptions, ui: Session) -> dict[str, Any]:
    """Every option and the output folder, before any data is read: the keyword
    arguments of :func:`run_bpbfm_experiment`."""
    from topiclink_reproductions.peers.pykeen import register_pykeen_peers

    register_pykeen_peers()     # RESCAL, DistMult, ComplEx where PyKEEN is installed
    known = tensor_model_names()
    names = ui.names(o.models or ",".join(MODEL_NAMES), known)
    kg_names = names if o.models else ui.names(",".join(KG_MODEL_NAMES), known)
    folds = PAPER.split.get("folds") if o.folds is None else o.folds
    kg_folds = KG_FOLDS if o.folds is None else o.folds
    ui.check(o.protocol in (*PROTOCOLS, "both"),
             f"--protocol must be paper, kg or both, got {o.protocol!r}")
    k_values = ui.int_list(o.topics, "--topics", minimum=2)
    ui.check_model_size(max(k_values))
    ui.check(folds >= 1, f"--folds must be >= 1, got {folds}")
    protocols = list(PROTOCOLS) if o.protocol == "both" else [o.protocol]
    most = max(folds if p == "paper" else kg_folds for p in protocols)
    chosen = (ui.int_list(o.only_folds, "--only-folds", 0, most - 1)
              if o.only_folds is not None else None)
    ui.check(o.iterations >= 1, f"--iterations must be >= 1, got {o.iterations}")
    burn_in = o.iterations // 2 if o.burn_in is None else o.burn_in
    ui.check(0 <= burn_in < o.iterations,
             f"--burn-in must be in [0, --iterations), got {burn_in}")
    ui.check(o.thinning >= 1, f"--thinning must be >= 1, got {o.thinning}")
    ui.check(0 < o.fraction < 1, f"--fraction must be in (0, 1), got {o.fraction:g}")
    ui.check(o.trajectory_every >= 0,
             f"--trajectory-every must be >= 0, got {o.trajectory_every}")
    ui.check(o.n_jobs != 0, "--n-jobs must be an integer other than 0 (-1: all cores), got 0")
    ui.check(o.workers >= 1, f"--workers must be >= 1, got {o.workers}")
    ui.check_input_paths(o.data)
    ui.check_out(o.out, "bpbfm", o.force)
    settings = BPBFMSettings(max_iter=o.iterations, burn_in=burn_in, thinning=o.thinning,
                             n_jobs=o.n_jobs, holdout_fraction=o.fraction,
                             trajectory_every=o.trajectory_every)
    return {"models": names, "topics": k_values, "folds": folds, "only_folds": chosen,
            "kg_models": kg_names, "kg_folds": kg_folds, "protocols": protocols,
            "workers": o.workers, "seed": o.seed, "settings": settings, "out": o.out}


def _load(o: BPBFMOptions, plan: dict[str, Any], ui: Session) -> Any:
    """The data set's triples; the paper protocol refused at scale before the output
    folder is made."""
    ds = ui.load_data(o.dataset, o.data, default=PAPER.dataset)
    if ds.tensor is None:
        raise ui.fail(f"dataset {ds.name!r} has no tensor of triples")
    splits = ds.tensor if isinstance(ds.tensor, dict) else {"train": ds.tensor}
    train = splits.get("train")
    if train is not None:
        ui.echo(f"{ds.name}: {train.n_entities} entities, {train.n_relations} relations, "
                + ", ".join(f"{len(splits[s].heads)} {s}" for s in splits) + " triples")
    if "paper" in plan["protocols"]:
        check_paper_protocol(union_tensor(splits), o.fraction, ds.name)
    o.out.mkdir(parents=True, exist_ok=True)
    return ds


def _echo_row(ui: Session) -> Callable[[dict[str, Any]], None]:
    def show(row: dict[str, Any]) -> None:
        if row["protocol"] == "paper":
            what = f"AUC-ROC {row['auc_roc']:.4f}  AUC-PR {row['auc_pr']:.4f}"
        else:
            what = (f"MRR {row['mrr']:.4f}  Hits@1 {row['hits_at_1']:.3f}  Hits@3 "
                    f"{row['hits_at_3']:.3f}  Hits@10 {row['hits_at_10']:.3f}")
        ui.echo(f"{row['protocol']:>5s} {row['model']:>10s} K={row['K']:<3d} fold "
                f"{row['fold']}: {what}  fit {row['fit_seconds']:.1f} s  evaluation "
                f"{row['test_seconds']:.1f} s  peak RSS {row['peak_rss_mb']:.0f} MiB")

    return show


def _report(out: Path, table: pd.DataFrame, ui: Session) -> None:
    """The summary and the paper's claims printed (the files are written by the run)."""
    ui.echo("")
    ui.echo(summary_text(table))
    ui.echo("\nthe paper's claims:")
    for line in findings(table):
        ui.echo(f"  {line}")
    ui.echo(f"results: {out / 'bpbfm_results.csv'}, trajectory, summary, findings and "
            f"figures in {out}/")


#: the plan is (options, keyword arguments of the run)
SPEC = register_protocol(ProtocolSpec(
    name="bpbfm", options=BPBFMOptions,
    check=lambda o, ui: (o, _check(o, ui)),
    load=lambda plan, ui, data: _load(*plan, ui),
    run=lambda plan, ds, ui: run_bpbfm_experiment(ds, **plan[1], on_row=_echo_row(ui)),
    report=lambda plan, ds, table, ui: _report(plan[0].out, table, ui),
    help=f"{PAPER.title} (default data: {PAPER.dataset})."))
