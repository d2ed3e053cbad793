"""Knowledge graphs at equal training time: BPBFM (batch and online Gibbs, MAP-EM, with
observable patterns) against PyKEEN's RESCAL, DistMult, ComplEx, RotatE and TuckER, accuracy
against training time (written for FB15k-237, issue 24; ``--dataset`` wn18rr, umls or
nations, ``--clock cpu`` and ``--test-at-checkpoints`` for issue 43's runs at equal CPU time).

Data and metric: FB15k-237 as distributed (``load_dataset("fb15k-237")``: 272,115 train,
17,535 valid, 20,466 test triples, 14,541 entities, 237 relations), loaded once; every
model is fitted on the train triples alone and scored by our own code
(:func:`topiclink_reproductions.bpbfm.evaluate_kg`): filtered MRR and Hits@1/3/10, head and
tail prediction, every one of the 14,541 entities a candidate, filter = train + valid +
test, ties at the mean rank, 144 queries scored at a time.

Budget: each model trains for ``--budget-seconds`` of wall time (the same for all).  The
training clock counts everything of the fit (building the model and its data, the
optimiser steps or Gibbs sweeps) except the evaluations, which pause it and are timed
apart; the numba kernels are compiled before the clock starts (a 2-sweep K = 2 fit).  At
checkpoints ``budget / 2^k`` (k = ``--checkpoints`` - 1, ..., 0: a log-spaced curve) the
model is scored on a fixed random subsample of ``--valid-queries`` valid triples (head and
tail: twice as many rankings); at the end of the budget on the full test set.  The check
runs after every optimiser step (PyKEEN) or Gibbs sweep (BPBFM), so a checkpoint is taken
at the first step boundary past it and the budget is overrun by at most one step.

Each model runs in its own forked process (one at a time, after the data is loaded), so
its peak RSS (``getrusage``) is its own plus the loaded data (``rss_at_start_mb``) and no
state (torch threads, numba, allocator) carries over to the next model.

BPBFM: ``BPBFM-1`` / ``BPBFM-2`` (M = 10) batch Gibbs, ``BPBFM-1-online`` /
``BPBFM-2-online`` the online sampler (Bayesian conditional density filtering, minibatches
of ``--online-batch-size`` training triples, step ``rho_t = (t + 1)^-0.51``: the
estimator's defaults), ``BPBFM-1-EM`` the MAP-EM fit (``BilinearPoissonFactorModelEM``, its
``prior_rate`` and ``tol``; scored with its latest iterate, and it stops
early when the tol rule fires), one row per K of ``--topics``.  The score of a triple is the
posterior mean of ``1 - exp(-u_h^T Lambda^r u_t)`` over the kept samples of the second half
of the chain so far (the first half is burn-in: with an open-ended budget the burn-in is
not known in advance); samples are kept every ``thin``-th sweep, ``thin`` doubling
whenever more than ``--max-samples`` are held (the memory and the evaluation's cost stay
bounded).  The same rule for online and batch.

PyKEEN peers (:class:`topiclink_reproductions.peers.pykeen.KGEmbeddingPeer`, the wrapping of
``benchmarks/bpbfm_vs_pykeen.py``): sLCWA training (uniform head-or-tail corruption,
negatives that are training triples filtered out), Adam, the hyper-parameters of
:data:`FB15K237_PEERS`: the published FB15k-237 settings (LibKGE's, Ruffinelli et al.
ICLR 2020; RotatE's and TuckER's papers) scaled to a CPU budget of minutes (smaller
dimensions and fewer negatives: the published runs train for hours on a GPU).  One
torch thread by default (``--threads``), like BPBFM.

Published test figures (MRR / Hits@10, filtered) are printed beside each peer (LibKGE ICLR
2020: RESCAL 0.356 / 0.541, DistMult 0.343 / 0.531, ComplEx 0.348 / 0.536; Sun et al.
2019: RotatE 0.338 / 0.533; Balazevic et al. 2019: TuckER 0.358 / 0.544); BPBFM has no
published FB15k-237 figure.

Outputs: ``benchmarks/results/kg_fb15k237_vs_pykeen.json`` (rewritten after every model)
and ``.png`` (valid MRR against training wall time, log x, one line per model; final test
MRR as a star; published test MRRs as ticks on the right).  Needs PyKEEN and torch for the
peers (``pip install "topiclink[bench]"``).  Run it single-threaded::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python benchmarks/kg_fb15k237_vs_pykeen.py --budget-seconds 600 --topics 20,50

Other graphs (issue 43): ``--dataset wn18rr`` (peers: :data:`WN18RR_PEERS`, anchors
:data:`PUBLISHED_WN18RR`), ``umls``, ``nations`` (:data:`SMALL_PEERS`); outputs
``kg_<dataset>_vs_pykeen.json/.png``.  ``--clock cpu`` makes the budget the process's CPU
seconds (one thread each: what a model was given, whatever else the machine ran);
``--test-at-checkpoints`` scores the test triples at every checkpoint too.  The
``BPBFM-PAT-EM-inverse`` / ``-paths`` / ``-paths3`` rows (1-hop; 1- and 2-hop; 1-, 2-
and 3-hop rules; ``-C<n>`` adds n constant rules per relation, side and kind) fit until
the tol rule or the budget, scored at each checkpoint by the published model
(:func:`run_patterns`).  ``--append`` adds rows to an earlier run's file.

``--quick``: a smoke test (5 s budgets, 200 valid and 500 test triples, K = 5, three
checkpoints, written to ``kg_fb15k237_vs_pykeen_quick.json/.png``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import multiprocessing as mp
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np


def _sibling(name: str) -> Any:
    """A sibling benchmark module loaded from its file, without putting this folder on
    ``sys.path`` (a benchmark named like a package, as benchmarks/distributed.py was, would
    shadow it in every Dask worker process started afterwards, e.g. by the test suite)."""
    path = Path(__file__).resolve().parent / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_topiclink_bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_cpu = _sibling("bpbfm_fb15k237_probe")._cpu        # the sibling benchmarks' helpers
_clean = _sibling("bpbfm_vs_pykeen")._clean

RESULTS = Path(__file__).resolve().parent / "results"
OURS = ("BPBFM-1", "BPBFM-1-online", "BPBFM-2", "BPBFM-2-online", "BPBFM-1-EM",
        "BPBFM-DC-EM", "BPBFM-PAT-EM-inverse", "BPBFM-PAT-EM-paths", "BPBFM-PAT-EM-paths3")
#: the patterns option of each BPBFM-PAT-EM row; a ``-C<n>`` suffix adds
#: ``max_constant_rules=n`` (e.g. ``BPBFM-PAT-EM-paths-C30``; :func:`pattern_row`)
PATTERN_ROWS = {"BPBFM-PAT-EM-inverse": "inverse", "BPBFM-PAT-EM-paths": "paths",
                "BPBFM-PAT-EM-paths3": "paths3"}


def pattern_row(name: str) -> dict[str, Any] | None:
    """The PatternPoissonFactorModel parameters of a BPBFM-PAT-EM row name (None: not
    one): ``patterns`` from :data:`PATTERN_ROWS`, ``max_constant_rules`` from a
    ``-C<n>`` suffix (0 without)."""
    base, _, suffix = name.rpartition("-C")
    if base in PATTERN_ROWS and suffix.isdigit():
        return {"patterns": PATTERN_ROWS[base], "max_constant_rules": int(suffix)}
    if name in PATTERN_ROWS:
        return {"patterns": PATTERN_ROWS[name], "max_constant_rules": 0}
    return None
PEERS = ("RESCAL", "DistMult", "ComplEx", "RotatE", "TuckER")
DEFAULT_MODELS = ("BPBFM-1", "BPBFM-1-online", "BPBFM-1-EM", *PEERS)

#: published filtered test MRR / Hits@10 on FB15k-237 (the issue's anchors, and the same
#: tables' DistMult and RotatE)
PUBLISHED: dict[str, dict[str, Any]] = {
    "RESCAL": {"mrr": 0.356, "hits_at_10": 0.541,
               "source": "LibKGE, Ruffinelli et al., ICLR 2020 (1vsAll/KvsAll, tuned)"},
    "DistMult": {"mrr": 0.343, "hits_at_10": 0.531,
                 "source": "LibKGE, Ruffinelli et al., ICLR 2020"},
    "ComplEx": {"mrr": 0.348, "hits_at_10": 0.536,
                "source": "LibKGE, Ruffinelli et al., ICLR 2020"},
    "RotatE": {"mrr": 0.338, "hits_at_10": 0.533,
               "source": "Sun et al., ICLR 2019 (d = 1000, 256 adversarial negatives)"},
    "TuckER": {"mrr": 0.358, "hits_at_10": 0.544,
               "source": "Balazevic et al., EMNLP 2019 (d_e = d_r = 200, 1-N scoring)"},
}

#: The peers' settings on FB15k-237 (sLCWA, Adam).  Published settings, scaled to a CPU
#: budget of minutes: LibKGE's best RESCAL / DistMult / ComplEx use d = 128 and 1vsAll or
#: KvsAll training for hundreds of GPU epochs; RotatE (Sun et al.) d = 1000, 256
#: self-adversarial negatives, margin 9, temperature 1; TuckER (Balazevic et al.) d = 200,
#: dropouts 0.3/0.4/0.5, batch normalisation, 1-N scoring.  Here: DistMult, ComplEx,
#: RotatE d = 128 (complex for ComplEx and RotatE), RESCAL and TuckER d = 32 (an sLCWA
#: step costs d^2 (RESCAL: a d x d matrix gathered per scored triple) or d^3 (TuckER) per
#: triple: one thread needed 400 s per epoch of RESCAL at d = 64 with 10 negatives and
#: 1000 s of TuckER); 4 negatives per positive (PyKEEN's default is 1; with 32, one epoch
#: of ComplEx / RotatE took 340 / 250 s on one thread: the budget buys epochs, not
#: negatives); RotatE with its own loss; TuckER with PyKEEN's dropouts and batch
#: normalisation; learning rate 0.01 (above the published 0.0005-0.001: the budget is
#: a few epochs), batches of 1024; L2 weight 1e-3 on the batch's embeddings (RESCAL,
#: DistMult, ComplEx; the peers' default).  Not tuned on FB15k-237.
FB15K237_PEERS: dict[str, dict[str, Any]] = {
    "RESCAL": {"embedding_dim": 32, "learning_rate": 0.01, "batch_size": 1024,
               "num_negatives": 4, "regularization": 1e-3},
    "DistMult": {"embedding_dim": 128, "learning_rate": 0.01, "batch_size": 1024,
                 "num_negatives": 4, "regularization": 1e-3},
    "ComplEx": {"embedding_dim": 128, "learning_rate": 0.01, "batch_size": 1024,
                "num_negatives": 4, "regularization": 1e-3},
    "RotatE": {"embedding_dim": 128, "learning_rate": 0.01, "batch_size": 1024,
               "num_negatives": 4, "regularization": 0.0, "loss": "NSSALoss",
               "loss_kwargs": {"margin": 9.0, "adversarial_temperature": 1.0}},
    "TuckER": {"embedding_dim": 32, "learning_rate": 0.01, "batch_size": 1024,
               "num_negatives": 4, "regularization": 0.0},
}

#: published filtered test MRR / Hits@10 on WN18RR (LibKGE, Ruffinelli et al., ICLR 2020,
#: tuned on GPU; RotatE: Sun et al., ICLR 2019)
PUBLISHED_WN18RR: dict[str, dict[str, Any]] = {
    "RESCAL": {"mrr": 0.467, "hits_at_10": 0.517,
               "source": "LibKGE, Ruffinelli et al., ICLR 2020 (tuned)"},
    "DistMult": {"mrr": 0.452, "hits_at_10": 0.530,
                 "source": "LibKGE, Ruffinelli et al., ICLR 2020"},
    "ComplEx": {"mrr": 0.475, "hits_at_10": 0.547,
                "source": "LibKGE, Ruffinelli et al., ICLR 2020"},
    "RotatE": {"mrr": 0.476, "hits_at_10": 0.571,
               "source": "Sun et al., ICLR 2019 (d = 500, 1024 adversarial negatives)"},
}

#: WN18RR: the FB15k-237 settings (the same scaling to a CPU budget), with RotatE's
#: published WN18RR margin (6) and adversarial temperature (0.5).  Not tuned on WN18RR.
WN18RR_PEERS: dict[str, dict[str, Any]] = {
    **FB15K237_PEERS,
    "RotatE": {**FB15K237_PEERS["RotatE"],
               "loss_kwargs": {"margin": 6.0, "adversarial_temperature": 0.5}},
}

#: UMLS and Nations (135 and 14 entities): batches of 256 (1024 is a third of UMLS's
#: training triples, all of Nations'), otherwise the FB15k-237 settings; no published
#: figure on these splits' test triples under this filter is used as an anchor.
SMALL_PEERS: dict[str, dict[str, Any]] = {
    name: {**settings, "batch_size": 256} for name, settings in FB15K237_PEERS.items()}

#: per data set: (peer settings, published figures, the name in the outputs' stem)
DATASETS: dict[str, tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], str]] = {
    "fb15k-237": (FB15K237_PEERS, PUBLISHED, "fb15k237"),
    "wn18rr": (WN18RR_PEERS, PUBLISHED_WN18RR, "wn18rr"),
    "umls": (SMALL_PEERS, {}, "umls"),
    "nations": (SMALL_PEERS, {}, "nations"),
}


# ---------------------------------------------------------------------- bookkeeping
def checkpoint_times(budget: float, n: int) -> list[float]:
    """``n`` log-spaced checkpoints ending at the budget: ``budget / 2^k``, k = n-1..0."""
    if budget <= 0 or n < 1:
        raise ValueError(f"budget must be > 0 and n >= 1, got {budget}, {n}")
    return [float(budget) / 2 ** k for k in range(int(n) - 1, -1, -1)]


class BudgetClock:
    """The training clock of one model: wall (and process CPU) seconds since
    :meth:`start`, the evaluations (:meth:`paused`) excluded; checkpoints in training
    seconds, the last one the budget.

    :meth:`tick` (after every step or sweep) reads the clock once and says whether a
    checkpoint has been passed since the last tick (several passed at once count once)
    and whether the budget is spent; the clock then stops (:attr:`train_seconds` frozen).
    """

    def __init__(self, budget: float, checkpoints: list[float],
                 timer: Callable[[], float] = time.perf_counter,
                 cpu_timer: Callable[[], float] = time.process_time) -> None:
        self.budget = float(budget)
        self.checkpoints = sorted(float(c) for c in checkpoints if c <= budget)
        if not self.checkpoints or self.checkpoints[-1] != self.budget:
            self.checkpoints.append(self.budget)
        self._timer, self._cpu = timer, cpu_timer
        self._next = 0
        self._w0: float | None = None
        self._c0 = 0.0
        self.eval_seconds = 0.0
        self.eval_cpu_seconds = 0.0
        self.n_evaluations = 0
        self.stopped_at: tuple[float, float] | None = None

    def start(self) -> None:
        self._w0, self._c0 = self._timer(), self._cpu()

    def finish(self) -> None:
        """Stop the clock before the budget (a fit that converged)."""
        if self.stopped_at is None and self._w0 is not None:
            self.stopped_at = (self.train_seconds, self.train_cpu_seconds)

    @property
    def train_seconds(self) -> float:
        if self.stopped_at is not None:
            return self.stopped_at[0]
        if self._w0 is None:
            return 0.0
        return self._timer() - self._w0 - self.eval_seconds

    @property
    def train_cpu_seconds(self) -> float:
        if self.stopped_at is not None:
            return self.stopped_at[1]
        if self._w0 is None:
            return 0.0
        return self._cpu() - self._c0 - self.eval_cpu_seconds

    def tick(self) -> tuple[bool, bool]:
        """(evaluate now, stop now)."""
        if self._w0 is None:
            raise RuntimeError("BudgetClock.tick before start")
        if self.stopped_at is not None:
            return False, True
        now = self.train_seconds
        due = False
        while self._next < len(self.checkpoints) and now >= self.checkpoints[self._next]:
            self._next += 1
            due = True
        stop = now >= self.budget
        if stop:
            self.stopped_at = (now, self.train_cpu_seconds)
        return due, stop

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Time spent inside does not count as training (an evaluation)."""
        w, c = self._timer(), self._cpu()
        try:
            yield
        finally:
            self.eval_seconds += self._timer() - w
            self.eval_cpu_seconds += self._cpu() - c
            self.n_evaluations += 1


def curve_point(seconds: float, metrics: dict[str, float], **extra: Any) -> dict[str, Any]:
    """One point of a model's curve: training seconds, valid MRR / Hits@1/3/10."""
    return {"seconds": float(seconds), "valid_mrr": float(metrics["mrr"]),
            **{f"valid_hits_at_{k}": float(metrics[f"hits_at_{k}"]) for k in (1, 3, 10)},
            **{k: _clean(v) for k, v in extra.items()}}


def budget_clock(args: argparse.Namespace) -> BudgetClock:
    """The budget's clock: process CPU seconds (``--clock cpu``; its ``train_cpu_seconds``
    then reads wall seconds) or wall seconds."""
    times = checkpoint_times(args.budget_seconds, args.checkpoints)
    if getattr(args, "clock", "wall") == "cpu":
        return BudgetClock(args.budget_seconds, times, timer=time.process_time,
                           cpu_timer=time.perf_counter)
    return BudgetClock(args.budget_seconds, times)


def checkpoint_scores(scorer: Any, tasks: dict[str, Any], args: argparse.Namespace
                      ) -> tuple[dict[str, float], dict[str, float]]:
    """The valid metrics of a checkpoint and, with ``--test-at-checkpoints``, the test
    MRR / Hits@1/10, head and tail (``test_`` keys of the curve point)."""
    from topiclink_reproductions.bpbfm import evaluate_kg

    valid = evaluate_kg(scorer, tasks["valid"])
    if not getattr(args, "test_at_checkpoints", False):
        return valid, {}
    test = evaluate_kg(scorer, tasks["test"])
    return valid, {f"test_{k}": float(v) for k, v in _metrics(test).items()}


# ---------------------------------------------------------------------- BPBFM's samples
def state_factors(state: Any) -> tuple[np.ndarray, np.ndarray]:
    """(U, Lambda) of a BPBFM sampler state, copied: ``Lambda = G`` (BPBFM-1: ``eta``
    empty) or ``sum_m eta[m, r] G[m]`` (BPBFM-2); as
    :func:`topiclink_reproductions.bpbfm.current_proba` reads a state."""
    U = np.array(state.U, dtype=np.float64)
    if not hasattr(state, "G"):                  # MAP-EM: U and Lambda themselves
        return U, np.array(state.L, dtype=np.float64)
    G = np.asarray(state.G, dtype=np.float64)
    eta = getattr(state, "eta", None)
    if eta is not None and np.size(eta):
        return U, np.einsum("mr,mkl->rkl", np.asarray(eta, dtype=np.float64), G)
    return U, G.copy()


class ChainSamples:
    """Thinned samples (U, Lambda) of a running chain, at most ``max_samples``: a sample
    every ``thin``-th sweep, ``thin`` doubling (and the samples off the new grid dropped)
    whenever more are held.  :meth:`window` is what the score averages at sweep n: the
    samples of sweeps > n / 2 (the first half is burn-in), at least the latest one."""

    def __init__(self, max_samples: int = 16) -> None:
        if max_samples < 2:
            raise ValueError(f"max_samples must be >= 2, got {max_samples}")
        self.max_samples = int(max_samples)
        self.thin = 1
        self.items: list[tuple[int, np.ndarray, np.ndarray]] = []

    def offer(self, sweep: int, state: Any) -> bool:
        """Keep the state of ``sweep`` (1-based) if it is on the grid; True if kept."""
        if sweep % self.thin:
            return False
        self.items.append((int(sweep), *state_factors(state)))
        while len(self.items) > self.max_samples:
            self.thin *= 2
            self.items = [it for it in self.items if it[0] % self.thin == 0]
        return True

    def window(self, sweep: int) -> list[tuple[int, np.ndarray, np.ndarray]]:
        kept = [it for it in self.items if it[0] > sweep // 2]
        return kept or self.items[-1:]


class EstimateScorer:
    """``score_tails_batch`` / ``score_heads_batch`` of the mean probability over MAP-EM
    estimates: fitted models (finished restarts, their own ``_score_rows``) or, while
    none has finished, the running fit's current state (tied: U, Lambda; degree-
    corrected: also V and the degrees), read in place."""

    def __init__(self, models: list[Any], state: Any = None) -> None:
        from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel

        if state is not None:
            m = BilinearPoissonFactorModel(int(state.U.shape[1]))
            m.embedding_ = state.U
            m.samples_embedding_ = state.U[None]
            m.samples_relation_matrices_ = state.L[None]
            if hasattr(state, "V"):                  # degree-corrected
                m.samples_tail_embedding_ = state.V[None]
                m.samples_head_degrees_ = state.A[None]
                m.samples_tail_degrees_ = state.B[None]
            models = [m]
        if not models:
            raise ValueError("no estimate to score with")
        self.models = models
        self.n_samples = len(models)
        self.sweeps = [int(getattr(m, "n_iter_", 0)) for m in models]

    def _mean(self, a: np.ndarray, r: np.ndarray, axis: str) -> np.ndarray:
        out = self.models[0]._score_rows(a, r, axis)
        for m in self.models[1:]:
            out += m._score_rows(a, r, axis)
        return out / len(self.models)

    def score_tails_batch(self, heads: np.ndarray, relations: np.ndarray) -> np.ndarray:
        return self._mean(heads, relations, "tail")

    def score_heads_batch(self, relations: np.ndarray, tails: np.ndarray) -> np.ndarray:
        return self._mean(tails, relations, "head")


class SampleScorer:
    """``score_tails_batch`` / ``score_heads_batch`` of the posterior mean over samples
    (U, Lambda): BPBFM's own batch scoring (``_score_rows``) on the given samples."""

    def __init__(self, samples: list[tuple[int, np.ndarray, np.ndarray]]) -> None:
        from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel

        if not samples:
            raise ValueError("no sample to score with")
        self.n_samples = len(samples)
        self.sweeps = [s[0] for s in samples]
        m = BilinearPoissonFactorModel(int(samples[0][1].shape[1]))
        m.samples_embedding_ = np.stack([s[1] for s in samples])
        m.samples_relation_matrices_ = np.stack([s[2] for s in samples])
        m.embedding_ = samples[-1][1]
        self._model = m

    def score_tails_batch(self, heads: np.ndarray, relations: np.ndarray) -> np.ndarray:
        return self._model._score_rows(heads, relations, "tail")

    def score_heads_batch(self, relations: np.ndarray, tails: np.ndarray) -> np.ndarray:
        return self._model._score_rows(tails, relations, "head")


# ---------------------------------------------------------------------- one model
def _rss_now_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return float(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _metrics(metrics: dict[str, float]) -> dict[str, float]:
    keep = ("mrr", "hits_at_1", "hits_at_3", "hits_at_10")
    return {f"{k}{s}": float(metrics[f"{k}{s}"]) for s in ("", "_head", "_tail") for k in keep}


def run_bpbfm(name: str, K: int, tasks: dict[str, Any], args: argparse.Namespace
              ) -> dict[str, Any]:
    """Train one BPBFM variant for the budget; its row (curve, final test metrics)."""
    from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
    from topiclink.families.bpbfm.estimator_base import chain_seed
    from topiclink.families.bpbfm.estimator_em import (
        BilinearPoissonFactorModelEM,
        DegreeCorrectedPoissonFactorModel,
    )
    from topiclink_reproductions.bpbfm import evaluate_kg

    train, test = tasks["train"], tasks["test"]
    em = name.endswith("EM")
    cls: type = (DegreeCorrectedPoissonFactorModel if name == "BPBFM-DC-EM"
                 else BilinearPoissonFactorModelEM if em else BilinearPoissonFactorModel)
    params: dict[str, Any] = {} if em else {
        "n_dictionary": 10 if name.startswith("BPBFM-2") else None,
        "inference": "online" if name.endswith("online") else "batch",
        "batch_size": int(args.online_batch_size), "thinning": 1, "evaluate_every": 0,
        "n_jobs": int(args.threads)}
    # what the results record (as before the EM fits had classes of their own)
    described = {**params, "estimator": cls.__name__} if not em else {
        "estimator": cls.__name__, "inference": "em",
        "degree_corrected": name == "BPBFM-DC-EM"}
    restart_iterations = int(args.em_restart_iterations) if em else 0
    cls(2, **params, max_iter=2, **({} if em else {"burn_in": 0}),
        random_state=0).fit(train.train)                                 # numba: compile
    clock = budget_clock(args)
    chain = ChainSamples(args.max_samples)
    # MAP-EM: the finished restarts (fitted models) average their probabilities; while
    # none has finished, the running fit's latest iterate scores alone
    finished: list[Any] = []
    curve: list[dict[str, Any]] = []
    done = {"sweeps": 0}

    def scorer_now(model: Any, sweep: int) -> Any:
        if em:
            return EstimateScorer(finished) if finished else EstimateScorer(
                [], model.state_)
        return SampleScorer(chain.window(sweep))

    class Watch:
        def on_iteration(self, model: Any, iteration: int, info: dict) -> bool:
            sweep = iteration + 1
            if not em:
                chain.offer(sweep, model.state_)
            due, stop = clock.tick()
            if due:
                with clock.paused():
                    scorer = scorer_now(model, sweep)
                    m, at_test = checkpoint_scores(scorer, tasks, args)
                total = done["sweeps"] + sweep
                curve.append(curve_point(clock.train_seconds, m, sweeps=total,
                                         samples=scorer.n_samples,
                                         eval_seconds=clock.eval_seconds, **at_test))
                _say(f"{name} K={K}: {clock.train_seconds:7.1f} s, sweep {total}, "
                     f"{scorer.n_samples} samples: valid MRR {m['mrr']:.4f}")
            return stop

    never = 10 ** 8
    rss0 = _rss_now_mb()
    clock.start()
    restart = 0
    sweep_seconds: list[float] = []      # every fit's, all the restarts'
    while True:            # one fit, or EM restarts of restart_iterations each
        seed = args.seed if restart == 0 else chain_seed(args.seed, restart)
        extra = ({"max_iter": restart_iterations, "tol": 0.0} if restart_iterations
                 else {"max_iter": never})
        model = cls(K, **params, **({} if em else {"burn_in": never}), random_state=seed,
                    callbacks=[Watch()], **extra)
        model.fit(train.train)
        done["sweeps"] += int(model.n_iter_)
        sweep_seconds.extend(np.asarray(model.trace_["seconds"], dtype=float).tolist())
        if not restart_iterations or clock.stopped_at is not None:
            break
        if hasattr(model, "state_"):
            del model.state_           # scoring reads the published estimate alone
        finished.append(model)
        restart += 1
    sweeps = done["sweeps"]
    if clock.stopped_at is None:            # converged (tol) before the budget
        clock.finish()
        with clock.paused():
            m, at_test = checkpoint_scores(scorer_now(model, int(model.n_iter_)), tasks,
                                           args)
        curve.append(curve_point(clock.train_seconds, m, sweeps=sweeps,
                                 eval_seconds=clock.eval_seconds, converged=True,
                                 **at_test))
    w0, c0 = time.perf_counter(), time.process_time()
    scorer = scorer_now(model, int(model.n_iter_))
    final = evaluate_kg(scorer, test)
    test_s, test_cpu = time.perf_counter() - w0, time.process_time() - c0
    seconds = np.asarray(sweep_seconds, dtype=float)
    n_entries = int(np.count_nonzero(np.asarray(train.train.values) > 0))
    row: dict[str, Any] = {
        "model": name, "K": int(K), "kind": "BPBFM",
        "hyper_parameters": {**{k: v for k, v in described.items() if k != "n_jobs"},
                             "n_topics": int(K), "step_a2": getattr(model, "step_a2", None),
                             "step_v": getattr(model, "step_v", None),
                             "priors": "the estimator's defaults",
                             "max_samples": int(args.max_samples),
                             "final_thinning": chain.thin},
        **_common(clock, rss0, test_s, test_cpu, args),
        "sweeps": sweeps,
        "seconds_per_sweep_median": float(np.median(seconds)) if seconds.size else None,
        "em_restarts_finished": len(finished) if restart_iterations else None,
        "cpu_seconds_per_sweep": clock.train_cpu_seconds / max(sweeps, 1),
        "kept_samples_final": scorer.n_samples,
        "samples_sweeps_final": scorer.sweeps,
        "curve": curve, "test": {**_metrics(final), "n_test": int(final["n_test"])},
        "published": None,
    }
    if params.get("inference") == "online":
        per = math.ceil(n_entries / int(args.online_batch_size))
        row["minibatches_per_sweep"] = per
        if seconds.size:
            row["seconds_per_minibatch_median"] = float(np.median(seconds)) / per
    return row


def run_patterns(name: str, K: int, tasks: dict[str, Any], args: argparse.Namespace
                 ) -> dict[str, Any]:
    """Fit BPBFM-1 with observable patterns (MAP-EM) until its tol rule or the budget ends;
    its row.  At a checkpoint the fit stops (a callback), the published model is scored
    (its rules included) and the fit resumes: the same iterates as one uninterrupted
    fit, since EM draws nothing after its start."""
    from topiclink.datasets import make_bpbfm_data
    from topiclink.families.bpbfm.estimator_patterns import PatternPoissonFactorModel
    from topiclink_reproductions.bpbfm import evaluate_kg

    train, test = tasks["train"], tasks["test"]
    params = pattern_row(name)
    kind = params["patterns"]
    tr = train.train
    small, _ = make_bpbfm_data(20, 2, 2, random_state=0, density=0.1)
    PatternPoissonFactorModel(2, max_iter=2, patterns=kind, min_support=1,
                              random_state=0).fit(small)                # numba: compile
    clock = budget_clock(args)
    curve: list[dict[str, Any]] = []
    flags = {"due": False}

    class Watch:
        def on_iteration(self, model: Any, iteration: int, info: dict) -> bool:
            due, stop = clock.tick()
            flags["due"] = due
            return due or stop

    model = PatternPoissonFactorModel(K, max_iter=10 ** 8, **params,
                                      random_state=args.seed, callbacks=[Watch()])
    rss0 = _rss_now_mb()
    clock.start()
    model.fit(tr)
    while True:
        if not flags["due"] and clock.stopped_at is None:
            clock.finish()                      # converged (tol) before the budget
            flags["due"] = True
        if flags["due"]:
            with clock.paused():
                m, at_test = checkpoint_scores(EstimateScorer([model]), tasks, args)
            curve.append(curve_point(clock.train_seconds, m, sweeps=int(model.n_iter_),
                                     eval_seconds=clock.eval_seconds, **at_test))
            _say(f"{name} K={K}: {clock.train_seconds:7.1f} s, iteration "
                 f"{model.n_iter_}: valid MRR {m['mrr']:.4f}")
        if clock.stopped_at is not None:
            break
        flags["due"] = False
        model.fit(tr, resume=True)
    w0, c0 = time.perf_counter(), time.process_time()
    final = evaluate_kg(EstimateScorer([model]), test)
    test_s, test_cpu = time.perf_counter() - w0, time.process_time() - c0
    return {
        "model": name, "K": int(K), "kind": "BPBFM",
        "hyper_parameters": {"estimator": type(model).__name__, "inference": "em",
                             **params, "n_topics": int(K),
                             "n_rules": int(np.size(model.pattern_weights_)),
                             "priors": "the estimator's defaults"},
        **_common(clock, rss0, test_s, test_cpu, args),
        "sweeps": int(model.n_iter_), "converged": bool(clock.train_seconds
                                                        < clock.budget),
        "curve": curve, "test": {**_metrics(final), "n_test": int(final["n_test"])},
        "published": None,
    }


def run_peer(name: str, tasks: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Train one PyKEEN peer for the budget; its row."""
    import pykeen
    import torch

    from topiclink.data.tensor import RelationalTensor
    from topiclink_reproductions.bpbfm import evaluate_kg
    from topiclink_reproductions.peers.pykeen import KGEmbeddingPeer

    train, test = tasks["train"], tasks["test"]
    torch.set_num_threads(int(args.threads))
    settings = dict(DATASETS[args.dataset][0][name])
    clock = budget_clock(args)
    curve: list[dict[str, Any]] = []
    n_pos = int(np.count_nonzero(np.asarray(train.train.values) > 0))
    per_epoch = math.ceil(n_pos / int(settings["batch_size"]))

    def on_batch(peer: KGEmbeddingPeer) -> bool:
        due, stop = clock.tick()
        if due:
            with clock.paused():
                m, at_test = checkpoint_scores(peer, tasks, args)
            curve.append(curve_point(clock.train_seconds, m,
                                     epochs=peer.n_batches_ / per_epoch,
                                     eval_seconds=clock.eval_seconds, **at_test))
            _say(f"{name}: {clock.train_seconds:7.1f} s, epoch "
                 f"{peer.n_batches_ / per_epoch:.2f}: valid MRR {m['mrr']:.4f}")
        return stop

    # warm-up, not timed: the first Adam imports torch._dynamo (5 s here), the first
    # batches and scores load more of torch; 512 triples, one epoch, the same model
    tr = train.train
    small = RelationalTensor(tr.heads[:512], tr.relations[:512], tr.tails[:512],
                             np.ones(512), tr.n_entities, tr.n_relations)
    warm = KGEmbeddingPeer(name, num_epochs=1, n_jobs=int(args.threads), random_state=0,
                           **{**settings, "embedding_dim": 8, "batch_size": 128})
    warm.fit(small)
    warm.score_tails_batch(small.heads[:4], small.relations[:4])
    warm.score_heads_batch(small.relations[:4], small.tails[:4])
    del warm
    peer = KGEmbeddingPeer(name, num_epochs=10 ** 6, n_jobs=int(args.threads),
                           random_state=args.seed, **settings)
    rss0 = _rss_now_mb()
    clock.start()
    peer.fit(train.train, on_batch=on_batch)
    w0, c0 = time.perf_counter(), time.process_time()
    final = evaluate_kg(peer, test)
    test_s, test_cpu = time.perf_counter() - w0, time.process_time() - c0
    epochs = float(peer.epochs_)
    return {
        "model": name, "K": int(settings["embedding_dim"]), "kind": "PyKEEN",
        "hyper_parameters": {**settings, "training": "sLCWA", "optimizer": "Adam",
                             "loss": peer._setting("loss"),
                             "n_parameters": int(peer.n_parameters_)},
        **_common(clock, rss0, test_s, test_cpu, args),
        "epochs": epochs, "optimizer_steps": int(peer.n_batches_),
        "seconds_per_epoch": clock.train_seconds / epochs if epochs else None,
        "cpu_seconds_per_epoch": clock.train_cpu_seconds / epochs if epochs else None,
        "epoch_losses": [float(x) for x in peer.losses_],
        "curve": curve, "test": {**_metrics(final), "n_test": int(final["n_test"])},
        "published": DATASETS[args.dataset][1].get(name),
        "versions": {"pykeen": pykeen.get_version(), "torch": torch.__version__},
    }


def _common(clock: BudgetClock, rss0: float, test_s: float, test_cpu: float,
            args: argparse.Namespace) -> dict[str, Any]:
    from topiclink_reproductions.bpbfm import peak_rss_mb

    cpu = getattr(args, "clock", "wall") == "cpu"
    wall_s, cpu_s = ((clock.train_cpu_seconds, clock.train_seconds) if cpu
                     else (clock.train_seconds, clock.train_cpu_seconds))
    return {"budget_seconds": float(args.budget_seconds),
            "budget_clock": "cpu" if cpu else "wall",
            "train_seconds": clock.train_seconds, "train_wall_seconds": wall_s,
            "train_cpu_seconds": cpu_s,
            "valid_eval_seconds": clock.eval_seconds,
            "valid_eval_cpu_seconds": clock.eval_cpu_seconds,
            "n_valid_evaluations": clock.n_evaluations,
            "test_eval_seconds": test_s, "test_eval_cpu_seconds": test_cpu,
            "threads": int(args.threads), "rss_at_start_mb": rss0,
            "peak_rss_mb": peak_rss_mb()}


def _say(text: str) -> None:
    print(text, flush=True)


def _child(conn: Any, job: tuple[str, int | None], tasks: dict[str, Any],
           args: argparse.Namespace) -> None:
    from threadpoolctl import threadpool_limits

    name, K = job
    try:
        with threadpool_limits(limits=int(args.threads)):
            row = (run_patterns(name, int(K), tasks, args) if pattern_row(name)
                   else run_bpbfm(name, int(K), tasks, args) if name in OURS  # type: ignore[arg-type]
                   else run_peer(name, tasks, args))
    except BaseException:  # noqa: BLE001 - reported in the row, the run goes on
        row = {"model": name, "K": K, "error": traceback.format_exc()}
    conn.send(row)
    conn.close()


def run_isolated(job: tuple[str, int | None], tasks: dict[str, Any],
                 args: argparse.Namespace) -> dict[str, Any]:
    """One model in a forked process (the data shared, nothing carried over)."""
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, job, tasks, args))
    w0 = time.perf_counter()
    proc.start()
    child.close()
    try:
        row = parent.recv()
    except EOFError:
        row = {"model": job[0], "K": job[1],
               "error": f"the process died (exit code {proc.exitcode})"}
    proc.join()
    row["process_wall_seconds"] = time.perf_counter() - w0
    return row


# ---------------------------------------------------------------------- outputs
def online_vs_batch(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per BPBFM variant and K with both inferences: per-sweep costs, the valid MRR at
    the last checkpoint, and the training seconds online needed to reach batch's last
    valid MRR (None: not within the budget) and batch online's."""
    out = []
    by = {(r["model"], r.get("K")): r for r in rows if "error" not in r}
    for (name, K), batch in by.items():
        online = by.get((f"{name}-online", K))
        if not name.startswith("BPBFM") or name.endswith("online") or online is None:
            continue
        if not batch["curve"] or not online["curve"]:
            continue

        def first_reach(curve: list[dict[str, Any]], level: float) -> float | None:
            return next((p["seconds"] for p in curve if p["valid_mrr"] >= level), None)

        b_last, o_last = batch["curve"][-1]["valid_mrr"], online["curve"][-1]["valid_mrr"]
        out.append({
            "model": name, "K": K,
            "batch_seconds_per_sweep": batch.get("seconds_per_sweep_median"),
            "online_seconds_per_sweep": online.get("seconds_per_sweep_median"),
            "online_minibatches_per_sweep": online.get("minibatches_per_sweep"),
            "batch_sweeps": batch.get("sweeps"), "online_sweeps": online.get("sweeps"),
            "batch_last_valid_mrr": b_last, "online_last_valid_mrr": o_last,
            "online_seconds_to_batch_last": first_reach(online["curve"], b_last),
            "batch_seconds_to_online_last": first_reach(batch["curve"], o_last),
            "batch_test_mrr": batch["test"]["mrr"], "online_test_mrr": online["test"]["mrr"],
        })
    return out


def _jsonable(value: Any) -> Any:
    """numpy scalars as Python numbers, NaN as None, all the way down."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return _clean(value)


def early_stopped(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row's checkpoint of best validation MRR (early stopping on the validation
    triples, as PyKEEN's ``EarlyStopper``; the same rule for every model) with its test
    scores: rows whose curves hold test scores (``--test-at-checkpoints``) only."""
    out = []
    for r in rows:
        curve = [p for p in r.get("curve") or [] if "test_mrr" in p]
        if "error" in r or not curve:
            continue
        best = max(curve, key=lambda p: p["valid_mrr"])
        out.append({"model": r["model"], "K": r.get("K"), "seconds": best["seconds"],
                    "checkpoint": curve.index(best), "valid_mrr": best["valid_mrr"],
                    **{k: v for k, v in best.items() if k.startswith("test_")}})
    return out


def write_results(result: dict[str, Any], path: Path) -> None:
    """The JSON, atomically (a partial run stays readable)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(_jsonable(result), indent=1, default=str) + "\n")
    tmp.replace(path)


def plot_curves(result: dict[str, Any], path: Path) -> Path:
    """Valid MRR against training wall time (log x), one line per model; each model's
    final test MRR as a star at its training time; published test MRRs as ticks on the
    right, in the model's colour."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in result["rows"] if "error" not in r and r.get("curve")]
    fig, ax = plt.subplots(figsize=(8, 6.5))
    right = max([float(r["budget_seconds"]) for r in rows] or [1.0])
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    anchors = []
    for i, row in enumerate(rows):
        c = colours[i % len(colours)]
        xs = [p["seconds"] for p in row["curve"]]
        ys = [p["valid_mrr"] for p in row["curve"]]
        label = row["model"] + (f" K={row['K']}" if row["kind"] == "BPBFM" else "")
        style = "--" if row["model"].endswith("online") else "-"
        ax.plot(xs, ys, style, marker="o", ms=3, color=c,
                label=f"{label}: test MRR {row['test']['mrr']:.3f}")
        ax.plot([row["train_seconds"]], [row["test"]["mrr"]], marker="*", ms=10, color=c)
        pub = row.get("published")
        if pub:
            ax.plot([right * 1.35, right * 1.75], [pub["mrr"]] * 2, color=c, lw=2.5)
            anchors.append((float(pub["mrr"]), f"{row['model']} {pub['mrr']:.3f}", c))
    label_y = -1.0
    for mrr, text, c in sorted(anchors):      # labels spread apart, ticks where they are
        label_y = max(mrr, label_y + 0.012)
        ax.annotate(text, (right * 1.8, label_y), fontsize=7, va="center", color=c)
    if anchors:
        ax.set_ylim(top=max(ax.get_ylim()[1], label_y + 0.02))
    ax.set_xscale("log")
    ax.set_xlim(left=None, right=right * 4)
    ax.axvline(right, color="0.7", lw=0.8, ls=":")
    clock = result.get("args", {}).get("clock", "wall")
    ax.set_xlabel(f"training {'CPU' if clock == 'cpu' else 'wall'} time (s, evaluation "
                  "excluded; log scale)")
    ax.set_ylabel("filtered MRR (curve: valid subsample; star: full test)")
    n_valid = result.get("protocol", {}).get("valid_queries")
    ax.set_title(f"{result.get('dataset', 'fb15k-237')}, {right:g} s budget per model"
                 + (f", valid curve on {n_valid} triples" if n_valid else "")
                 + "\nticks on the right: published test MRR (GPU, converged)",
                 fontsize=9)
    ax.grid(alpha=0.3, which="both")
    # below the axes: a model that converges in seconds has its star at the upper left
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def summary_table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'model':>16s} {'K/d':>4s} {'train s':>8s} {'steps':>9s} {'s/step':>7s} "
            f"{'valid MRR':>9s} {'test MRR':>8s} {'H@1':>6s} {'H@3':>6s} {'H@10':>6s} "
            f"{'head':>6s} {'tail':>6s} {'eval s':>7s} {'RSS MB':>7s}  published")
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['model']:>16s} {r.get('K') or '':>4} ERROR "
                         + r["error"].strip().splitlines()[-1])
            continue
        t = r["test"]
        steps = (f"{r['sweeps']} sw" if "sweeps" in r else f"{r['epochs']:.2f} ep")
        per = r.get("seconds_per_sweep_median") or r.get("seconds_per_epoch") or float("nan")
        valid = r["curve"][-1]["valid_mrr"] if r["curve"] else float("nan")
        pub = r.get("published")
        lines.append(
            f"{r['model']:>16s} {r['K']:>4d} {r['train_seconds']:8.1f} {steps:>9s} "
            f"{per:7.2f} {valid:9.4f} {t['mrr']:8.4f} {t['hits_at_1']:6.3f} "
            f"{t['hits_at_3']:6.3f} {t['hits_at_10']:6.3f} {t['mrr_head']:6.3f} "
            f"{t['mrr_tail']:6.3f} {r['valid_eval_seconds'] + r['test_eval_seconds']:7.1f} "
            f"{r['peak_rss_mb']:7.0f}  "
            + (f"{pub['mrr']:.3f} / {pub['hits_at_10']:.3f}" if pub else "-"))
    return "\n".join(lines)


# ---------------------------------------------------------------------- main
def jobs_of(models: list[str], topics: list[int]) -> list[tuple[str, int | None]]:
    """(model, K) per row: BPBFM once per K, a peer once."""
    out: list[tuple[str, int | None]] = []
    for m in models:
        if m in OURS or pattern_row(m):
            out += [(m, int(k)) for k in topics]
        elif m in PEERS:
            out.append((m, None))
        else:
            raise SystemExit(f"unknown model {m!r}; known: {', '.join(OURS + PEERS)}")
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", choices=sorted(DATASETS), default="fb15k-237",
                    help="the graph (load_dataset's name; its train / valid / test split)")
    ap.add_argument("--budget-seconds", type=float, default=600.0,
                    help="training time of every model (evaluations excluded)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="the budget in wall seconds or in the process's CPU seconds")
    ap.add_argument("--test-at-checkpoints", action="store_true",
                    help="also score the test triples at every checkpoint")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help=f"of {', '.join(OURS + PEERS)}")
    ap.add_argument("--topics", default="20,50", help="K of the BPBFM rows")
    ap.add_argument("--threads", type=int, default=1, help="torch / numba / BLAS threads")
    ap.add_argument("--checkpoints", type=int, default=7,
                    help="valid evaluations at budget / 2^k, k = n-1 .. 0")
    ap.add_argument("--valid-queries", type=int, default=2000,
                    help="valid triples of the curve (a fixed random subsample; 0: all)")
    ap.add_argument("--test-queries", type=int, default=0,
                    help="test triples of the final evaluation (0: all 20,466)")
    ap.add_argument("--max-samples", type=int, default=16,
                    help="BPBFM samples held (thinning doubles beyond)")
    ap.add_argument("--online-batch-size", type=int, default=4096)
    ap.add_argument("--em-restart-iterations", type=int, default=0,
                    help="MAP-EM rows: restarts of this many iterations each until the "
                         "budget ends, scored by their mean probability (the finished "
                         "ones; a restart cut by the budget is not used); 0: one fit, "
                         "its tol rule")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="smoke test: 5 s budgets, 200 valid / 500 test triples, K = 5")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--append", action="store_true",
                    help="add the rows to an existing --out of the same protocol")
    ap.add_argument("--figure", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.quick:      # the smoke test's values, where not given
        for name, value in (("budget_seconds", 5.0), ("valid_queries", 200),
                            ("test_queries", 500), ("checkpoints", 3), ("topics", "5")):
            if getattr(args, name) == ap.get_default(name):
                setattr(args, name, value)
    stem = f"kg_{DATASETS[args.dataset][2]}_vs_pykeen" + ("_quick" if args.quick else "")
    args.out = args.out or RESULTS / f"{stem}.json"
    args.figure = args.figure or args.out.with_suffix(".png")
    return args


def appended_to(earlier: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """``--append``: the earlier run's results, to which this run's rows are added; refused
    (SystemExit) unless the data set, budget, clock, checkpoints and queries are the
    same.  Each run's command is kept in ``commands``."""
    keys = ("dataset", "budget_seconds", "clock", "checkpoints", "valid_queries",
            "test_queries", "test_at_checkpoints", "seed", "threads")
    differ = [k for k in keys if earlier.get("args", {}).get(k) != now["args"].get(k)]
    if differ or earlier.get("dataset") != now.get("dataset"):
        raise SystemExit(f"--append: {', '.join(differ) or 'dataset'} differ from the "
                         "earlier run's; write to another --out")
    out = dict(earlier)
    out["commands"] = [*earlier.get("commands", [earlier.get("command")]), now["command"]]
    return out


def _subsample(triples: np.ndarray, n: int, seed: int) -> np.ndarray:
    if n <= 0 or n >= len(triples):
        return triples
    idx = np.sort(np.random.default_rng(seed).choice(len(triples), size=n, replace=False))
    return triples[idx]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    from topiclink.datasets import load_dataset
    from topiclink_reproductions.bpbfm import kg_task

    models = [m for m in args.models.split(",") if m]
    jobs = jobs_of(models, [int(k) for k in args.topics.split(",") if k])
    t_start = time.perf_counter()
    ds = load_dataset(args.dataset)
    test_task = kg_task(ds.tensor)
    valid = ds.tensor["valid"]
    valid_triples = np.column_stack([valid.heads, valid.relations, valid.tails]
                                    ).astype(np.int64)
    tasks = {"train": test_task,
             "valid": replace(test_task, test=_subsample(valid_triples, args.valid_queries,
                                                         args.seed + 1)),
             "test": replace(test_task, test=_subsample(test_task.test, args.test_queries,
                                                        args.seed + 2))}
    result: dict[str, Any] = {
        "benchmark": "kg_fb15k237_vs_pykeen", "dataset": args.dataset,
        "what": (__doc__ or "").split("\n\n")[0].replace("\n", " "),
        "protocol": {
            "data": {s: int(t.n_entries) for s, t in ds.tensor.items()},
            "n_entities": int(test_task.n_entities),
            "n_relations": int(test_task.train.n_relations),
            "metric": "filtered MRR, Hits@1/3/10, head and tail, every entity a candidate, "
                      "filter train+valid+test, ties at the mean rank "
                      "(topiclink_reproductions.bpbfm.evaluate_kg)",
            "budget_seconds": float(args.budget_seconds),
            "checkpoints_seconds": checkpoint_times(args.budget_seconds, args.checkpoints),
            "valid_queries": int(len(tasks["valid"].test)),
            "test_queries": int(len(tasks["test"].test)),
            "training_clock": f"{args.clock} seconds of the fit, evaluations excluded (paused), "
                              "numba compilation excluded (a warm-up fit first); a "
                              "checkpoint at the first step / sweep boundary past it",
            "bpbfm_scores": "posterior mean of 1 - exp(-rate) over the kept samples of "
                            "the chain's second half (thinning doubles past "
                            f"{args.max_samples} samples)",
            "peers": DATASETS[args.dataset][0], "published": DATASETS[args.dataset][1],
        },
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "machine": {"cpu": _cpu(), "cpu_count": os.cpu_count(),
                    "python": platform.python_version(), "platform": platform.platform(),
                    "load_average_at_start": list(os.getloadavg())},
        "command": " ".join(["python", "benchmarks/kg_fb15k237_vs_pykeen.py",
                             *(sys.argv[1:] if argv is None else argv)]),
        "load_seconds": time.perf_counter() - t_start,
        "rows": [],
    }
    if args.append and args.out.is_file():
        result = appended_to(json.loads(args.out.read_text()), result)
    _say(f"{args.dataset} loaded in {result['load_seconds']:.1f} s; {len(jobs)} models, "
         f"{args.budget_seconds:g} s each")
    for job in jobs:
        row = run_isolated(job, tasks, args)
        result["rows"].append(row)
        if "error" in row:
            _say(f"{job[0]}: ERROR\n{row['error']}")
        else:
            _say(f"{row['model']} K={row['K']}: test MRR {row['test']['mrr']:.4f} "
                 f"Hits@10 {row['test']['hits_at_10']:.4f} after {row['train_seconds']:.1f} "
                 f"s of training; evaluations {row['valid_eval_seconds']:.1f} + "
                 f"{row['test_eval_seconds']:.1f} s")
        result["online_vs_batch"] = online_vs_batch(result["rows"])
        result["early_stopped"] = early_stopped(result["rows"])
        write_results(result, args.out)
    result["machine"]["load_average_at_end"] = list(os.getloadavg())
    result["total_wall_seconds"] = time.perf_counter() - t_start
    write_results(result, args.out)
    plot_curves(result, args.figure)
    _say("\n" + summary_table(result["rows"]))
    _say(f"written {args.out} and {args.figure} in {result['total_wall_seconds']:.0f} s")
    return result


if __name__ == "__main__":
    main()
