"""BPBFM-1 / BPBFM-2 against PyKEEN's RESCAL, DistMult and ComplEx, same data, same run.

Our models: ``BPBFM-1`` / ``BPBFM-2`` (the paper's Gibbs samplers, the defaults),
``BPBFM-1-scaled`` (Gibbs with ``self_pairs="scaled"`` and ``beta=0.1``, the variant the
user guide's accuracy diagnosis found best on folds 0-2) and ``BPBFM-1-EM`` (MAP-EM,
``--topics-em``).

Two protocols per data set (UMLS, Nations), both from :mod:`topiclink_reproductions.bpbfm`:

* paper (RESCAL's and the BPBFM paper's): the full tensor is the union of the train, valid
  and test triples; each fold holds out an independent random 10 % of *all* entries, ones
  and zeros alike (``holdout_tensor_entries`` seeded from the fold index only); every model
  is fitted on the same remaining tensor (the held-out entries are ``missing``: BPBFM
  imputes them, the peers never sample them as negatives: without that, 200 epochs of 10
  negatives per positive memorise every cell and Nations' held-out AUC-ROC of RESCAL /
  ComplEx falls from 0.87 / 0.95 to 0.65 / 0.78) and scored by sklearn's
  ``roc_auc_score`` / ``average_precision_score`` of ``predict_proba`` on the same
  held-out entries;
* kg: fit on the data set's train triples alone (every other cell a zero for BPBFM; the
  peers sample negatives from every corruption but the training triples, PyKEEN's usual
  setting), filtered MRR and Hits@1/3/10 over the test triples, head and tail
  prediction, ties at the mean rank (``topiclink.metrics.ranking.filtered_ranks``); a
  "fold" is a repetition with another seed.  Marking the valid and test cells unobserved
  would point every model to the answers.

Calibration (issue 24, item 5; paper protocol only).  Every paper row also records, on
the fold's held-out entries, the expected calibration error (``ece``:
:func:`topiclink.metrics.expected_calibration_error`, 10 equal-width bins of [0, 1]),
``mean_proba``, the base rate ``observed`` and the 10-bin ``reliability`` table (bin
``lower`` / ``upper`` / ``count`` / ``mean_proba`` / ``observed``, rounded to 6 decimals) of
the probability a user reads off each model:

* BPBFM (Gibbs: BPBFM-1, BPBFM-2; MAP-EM: BPBFM-1-EM): ``predict_proba`` of the entry,
  the probability AUC-ROC / AUC-PR are computed from (Gibbs: the mean over the kept
  samples of ``1 - exp(-u_h^T Lambda^r u_t)``; EM: that of the MAP estimate);
* PyKEEN peers: ``predict_proba``, i.e. the logistic sigmoid of the peer's raw score
  (``decision_function``, the logit its ``BCEWithLogitsLoss`` trained), as a user would
  read it.

``ece_platt`` (with ``mean_proba_platt`` and ``reliability_platt``) is the fairer
variant, symmetric for both kinds: Platt scaling, a 1-D logistic regression of the label
on a raw score (sklearn ``LogisticRegression``, C = 1e6, i.e. practically unpenalised),
fitted on a seeded random 10 % of the fold's *training* entries (ones and zeros as the
training tensor has them, uniformly among all its observed cells, never a held-out one;
one draw per fold, shared by every model: ``holdout_tensor_entries`` of the training
tensor, seed ``cell_seed(seed, {fold, "platt"})``), then applied to the held-out
entries' raw scores.  Raw score: the peer's ``decision_function``; BPBFM's
``logit(predict_proba)`` (probability clipped to [1e-15, 1 - 1e-15]).  The map is fitted
on entries the model was trained on: in-sample, a model's training ones score higher
than held-out ones do, so for a model that fits its training cells much better than it
predicts, the map is too steep: it corrects the scale, not overfitting, and can raise the
ECE (Nations ``--quick``, fold 0: ComplEx 0.053 -> 0.118, RESCAL 0.095 -> 0.138).
``platt`` in the row holds the fitted slope, intercept and the sample's size.  Read the
ECE beside AUC-PR: with UMLS's held-out base rate of 0.8 % nearly every entry is in the
first bin, [0, 0.1), and a constant prediction at the base rate has an ECE of about 0.

The figure (``--figure``, default the JSON's path with ``.png``): one column per data set;
top, the reliability diagram pooled over folds (per bin: mean predicted probability
against observed frequency of the held-out entries, one line per model, the diagonal for
reference; legend: mean ECE and ECE after Platt over folds); bottom, the held-out entries
per bin.  The figure's bins are *not* the ECE's: they are 1 unit wide in logit
(``FIGURE_LOGIT_EDGES``: (-inf, -12), [-12, -11), ..., [12, inf)) and both axes are
logit-scaled, as UMLS's base rate is 0.8 % and equal-width bins put almost every entry in
[0, 0.1).  They are fixed, not quantiles, so that folds (and resumed sessions) pool; each
row stores its per-bin counts, ones and mean probability (``reliability_fine``).  Bins with
no held-out one (or only ones) or fewer than 5 entries have no point on the top panel.

Trained to convergence (``--peer-training converged``; kg protocol only; default
``fixed``: the peers a fixed ``--epochs``, BPBFM a fixed ``--iterations``).  Every model
trains with early stopping on the *validation* triples' filtered MRR, our metric code
(:func:`~topiclink_reproductions.bpbfm.evaluate_kg`: head and tail, ties at the mean rank)
with the filter train + valid (the test triples never enter training or selection; PyKEEN's
``EarlyStopper`` filters so too, but ranks with its own evaluator and reloads the best
weights only when patience runs out, so it is not used):
:class:`~topiclink_reproductions.validation_stopping.ValidationStopper` evaluates every
``--check-epochs`` epochs (peers) / ``--check-iterations`` (``--check-iterations-em``)
iterations (BPBFM Gibbs, EM), stops after
``--patience`` evaluations without a relative improvement of more than
``--relative-delta``, or at the cap (``--max-epochs`` / ``--max-iterations``, flagged
``cap_hit``), and the model of the best validation evaluation is the one scored on the
test triples (peers: its weights restored; BPBFM: the fitted estimator as it was then, the
Gibbs chain advanced by ``fit(resume=True)`` in chunks, which continues the same chain).
One setting per model family is chosen on the validation MRR of the first listed fold
(the tuning fold) and reused on the others: the peers' Adam learning rate
(``--learning-rates``; everything else as ``PEER_DEFAULTS``, untuned), BPBFM-1's and
BPBFM-1-scaled's K (``--topics-grid``, burn-in ``--burn-in``, thinning 5, the last 50
samples kept) and BPBFM-1-EM's K (``--topics-em-grid``).  Each row records the setting,
the epochs / iterations trained, the best validation MRR and its step, the validation
curve (step, MRR, training seconds), whether the cap was hit, the training seconds
(validation excluded) and the tuning fold's candidates.  ``verdict`` in each data set's kg
part names the BPBFM variant with the best mean validation MRR (chosen without the test
triples) and the peer with the best mean *test* MRR, and says whether the former's test
MRR is at least the latter's.  Figure: validation MRR against training seconds.

Resumable: the JSON is rewritten atomically (a temporary file, then a rename) after
every row; ``--resume`` loads it and skips every (protocol, data set, fold, model) row it
holds, so a 10-fold run can span sessions (refused, in one line naming the setting, when
the file was written with other settings).  ``--resume`` without the file starts afresh.

Needs the bench extra (``pip install "topiclink[bench]"``: PyKEEN and torch) for the peers.

    python benchmarks/bpbfm_vs_pykeen.py [--datasets umls,nations] [--folds 0,1,2]
        [--models BPBFM-1,BPBFM-2,BPBFM-1-EM,RESCAL,DistMult,ComplEx] [--protocols paper,kg]
        [--topics 20] [--topics-em 40] [--iterations 300] [--burn-in 150] [--epochs 200]
        [--out FILE] [--figure FILE] [--resume] [--quick]
        [--peer-training fixed|converged] [--check-epochs 10] [--patience 10]
        [--max-epochs 1000] [--learning-rates 0.001,0.01,0.1] [--check-iterations 25]
        [--check-iterations-em 10] [--max-iterations 2000] [--topics-grid 20,40,80]
        [--topics-em-grid 20,40,80,160] [--relative-delta 0.002]
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

from topiclink.datasets import load_dataset

PEERS = ("RESCAL", "DistMult", "ComplEx")
OURS = ("BPBFM-1", "BPBFM-2", "BPBFM-1-EM", "BPBFM-1-scaled")
METRICS = {"paper": ("auc_roc", "auc_pr", "ece", "ece_platt"),
           "kg": ("mrr", "hits_at_1", "hits_at_3", "hits_at_10", "mrr_head", "mrr_tail")}
#: the arguments a row's numbers depend on: ``--resume`` refuses a file written with others
SETTINGS = ("topics", "topics_em", "iterations", "burn_in", "epochs", "fraction", "seed",
            "peer_training")
#: the further arguments of ``--peer-training converged``
CONVERGED_SETTINGS = ("check_epochs", "patience", "max_epochs", "relative_delta",
                      "learning_rates", "check_iterations", "check_iterations_em",
                      "max_iterations", "topics_grid", "topics_em_grid")
#: a file written before an argument existed ran with its default
LEGACY_DEFAULTS = {"peer_training": "fixed"}
#: calibration: ECE bins, Platt's training sample and penalty, the figure's logit bins
N_BINS = 10
PLATT_FRACTION = 0.1
PLATT_C = 1e6
FIGURE_LOGIT_EDGES = tuple(float(x) for x in range(-12, 13))
CALIBRATION = {"n_bins": N_BINS, "platt_fraction": PLATT_FRACTION, "platt_C": PLATT_C,
               "figure_logit_edges": list(FIGURE_LOGIT_EDGES)}
_CLIP = 1e-15


def _clean(value):
    if isinstance(value, float | np.floating):
        value = float(value)
        return None if value != value else value
    if isinstance(value, np.integer):
        return int(value)
    return value


def _build(name: str, args: argparse.Namespace, seed: int, protocol: str = "paper"):
    from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel
    from topiclink.families.bpbfm.estimator_em import BilinearPoissonFactorModelEM
    from topiclink.families.bpbfm.priors import BPBFMPriors
    from topiclink_reproductions.peers.pykeen import KGEmbeddingPeer

    if name == "BPBFM-1-EM":   # MAP-EM: no burn-in, tol-stopped
        return BilinearPoissonFactorModelEM(
            n_topics=args.topics_em, max_iter=500, random_state=seed)
    if name == "BPBFM-1-scaled":   # the guide's diagnosis: scaled self-pairs, beta 0.1
        return BilinearPoissonFactorModel(
            n_topics=args.topics, self_pairs="scaled", priors=BPBFMPriors(beta=0.1),
            max_iter=args.iterations, burn_in=args.burn_in, random_state=seed, n_jobs=1)
    if name in OURS:
        return BilinearPoissonFactorModel(
            n_topics=args.topics, n_dictionary=None if name == "BPBFM-1" else 10,
            max_iter=args.iterations, burn_in=args.burn_in, random_state=seed, n_jobs=1)
    # paper: the held-out cells are random (label-free), so the peers, like BPBFM, leave
    # them out of training (never sampled as negatives); kg: they are the test triples,
    # so the peers sample negatives as PyKEEN users do (training triples filtered only)
    return KGEmbeddingPeer(name, num_epochs=args.epochs, random_state=seed, n_jobs=1,
                           exclude_missing=protocol == "paper")


def _fit(model, tensor) -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    model.fit(tensor)
    return time.perf_counter() - w0, time.process_time() - c0


def _summary(rows: list[dict], keys: tuple[str, ...]) -> dict:
    out = {}
    for key in (*keys, "fit_seconds"):
        vals = np.array([r[key] for r in rows if r.get(key) is not None], dtype=float)
        if vals.size:
            out[key] = {"mean": float(vals.mean()),
                        "sd": float(vals.std(ddof=1)) if vals.size > 1 else None,
                        "per_fold": [float(v) for v in vals]}
    return out


# ---------------------------------------------------------------------- calibration
def _expit(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=np.float64)))


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), _CLIP, 1.0 - _CLIP)
    return np.log(p) - np.log1p(-p)


def raw_scores(model: Any, entries: np.ndarray) -> np.ndarray:
    """The score Platt scaling reads: a peer's ``decision_function`` (its logit), else
    ``logit(predict_proba)`` (BPBFM; probability clipped to [1e-15, 1 - 1e-15])."""
    h, r, t = np.asarray(entries, dtype=np.int64).T
    if hasattr(model, "decision_function"):
        return np.asarray(model.decision_function(h, r, t), dtype=np.float64)
    return _logit(model.predict_proba(h, r, t))


def platt_scaling(scores: np.ndarray, labels: np.ndarray, C: float = PLATT_C
                  ) -> tuple[float, float]:
    """(slope, intercept) of the logistic regression of the 0/1 ``labels`` on the 1-D
    ``scores`` (sklearn ``LogisticRegression``, L2 penalty ``1 / C``: C = 1e6 is
    practically none); ``platt_apply`` maps scores to probabilities with it.  ValueError
    when the labels hold one class only."""
    from sklearn.linear_model import LogisticRegression

    x = np.asarray(scores, dtype=np.float64).reshape(-1, 1)
    y = np.asarray(labels).astype(bool).ravel()
    if x.shape[0] != y.size:
        raise ValueError(f"{x.shape[0]} scores for {y.size} labels")
    if y.all() or not y.any():
        raise ValueError("Platt scaling needs both ones and zeros among the labels")
    fit = LogisticRegression(C=C, max_iter=1000).fit(x, y)
    return float(fit.coef_[0, 0]), float(fit.intercept_[0])


def platt_apply(scores: np.ndarray, slope: float, intercept: float) -> np.ndarray:
    """``sigmoid(slope * score + intercept)``."""
    return _expit(slope * np.asarray(scores, dtype=np.float64) + intercept)


def platt_sample(train, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded uniform ``fraction`` of the observed (not ``missing``) cells of the
    training tensor, ones and zeros alike: (m, 3) entries and their 0/1 labels."""
    from topiclink.data.splits import holdout_tensor_entries

    _, entries, values = holdout_tensor_entries(train, fraction, random_state=seed)
    return entries.astype(np.int64), values > 0


def _fine_bins(labels: np.ndarray, proba: np.ndarray) -> dict[str, list]:
    """Per-bin counts, ones and mean probability over ``FIGURE_LOGIT_EDGES`` (nonempty
    bins only; bin i is [edge[i - 1], edge[i]), bin 0 below the first edge)."""
    which = np.searchsorted(np.asarray(FIGURE_LOGIT_EDGES), _logit(proba), side="right")
    n = len(FIGURE_LOGIT_EDGES) + 1
    count = np.bincount(which, minlength=n)
    ones = np.bincount(which, weights=labels.astype(float), minlength=n)
    sum_p = np.bincount(which, weights=proba, minlength=n)
    keep = np.flatnonzero(count)
    return {"bin": keep.tolist(), "count": count[keep].tolist(),
            "ones": np.rint(ones[keep]).astype(int).tolist(),
            "mean_proba": [float(f"{v:.8g}") for v in sum_p[keep] / count[keep]]}


def _table(labels: np.ndarray, proba: np.ndarray) -> list[dict]:
    from topiclink.metrics import reliability_table

    table = reliability_table(labels, proba, N_BINS)
    cols = ["lower", "upper", "count", "mean_proba", "observed"]
    return [{k: (int(v) if k == "count" else round(float(v), 6)) for k, v in rec.items()}
            for rec in table[cols].to_dict(orient="records")]


def calibration_fields(labels: np.ndarray, proba: np.ndarray,
                       platt_proba: np.ndarray | None = None) -> dict[str, Any]:
    """The row's calibration fields from the held-out labels and probabilities (and the
    Platt-scaled ones: ``ece_platt``, ``mean_proba_platt``, ``reliability_platt``)."""
    from topiclink.metrics import expected_calibration_error

    y = np.asarray(labels).astype(bool).ravel()
    p = np.asarray(proba, dtype=np.float64).ravel()
    out: dict[str, Any] = {
        "ece": expected_calibration_error(y, p, N_BINS), "mean_proba": float(p.mean()),
        "observed": float(y.mean()), "reliability": _table(y, p),
        "reliability_fine": _fine_bins(y, p)}
    if platt_proba is None:
        out.update(ece_platt=None, mean_proba_platt=None, reliability_platt=None)
    else:
        q = np.asarray(platt_proba, dtype=np.float64).ravel()
        out.update(ece_platt=expected_calibration_error(y, q, N_BINS),
                   mean_proba_platt=float(q.mean()), reliability_platt=_table(y, q))
    return out


def evaluate_calibration(model: Any, fold, sample: tuple[np.ndarray, np.ndarray]
                         ) -> dict[str, Any]:
    """:func:`calibration_fields` of a fitted model on a paper fold's held-out entries,
    Platt scaling fitted on ``sample`` (entries, labels) of the fold's training cells."""
    e = fold.entries
    proba = np.asarray(model.predict_proba(e[:, 0], e[:, 1], e[:, 2]), dtype=np.float64)
    entries, labels = sample
    try:
        slope, intercept = platt_scaling(raw_scores(model, entries), labels)
    except ValueError:
        platt, q = None, None
    else:
        platt = {"slope": slope, "intercept": intercept, "n": int(labels.size),
                 "n_true": int(labels.sum())}
        q = platt_apply(raw_scores(model, e), slope, intercept)
    return {**calibration_fields(fold.labels, proba, q), "platt": platt}


# ---------------------------------------------------------------------- resume
def _settings(args: argparse.Namespace) -> dict[str, Any]:
    keys = SETTINGS + (CONVERGED_SETTINGS if args.peer_training == "converged" else ())
    return {k: getattr(args, k) for k in keys}


def load_resume(path: Path, args: argparse.Namespace) -> dict | None:
    """The result JSON to go on with (None: no such file); SystemExit, one line naming
    the first differing setting, when it was written with other settings."""
    if not path.exists():
        return None
    try:
        result = json.loads(path.read_text())
    except ValueError as exc:
        raise SystemExit(f"--resume: {path} is not JSON ({exc})") from exc
    if result.get("benchmark") != "bpbfm_vs_pykeen":
        raise SystemExit(f"--resume: {path} is not a bpbfm_vs_pykeen result")
    old = result.get("args", {})
    for key, value in _settings(args).items():
        was = old.get(key, LEGACY_DEFAULTS.get(key))
        if was != value:
            raise SystemExit(f"--resume: {path} has {key}={was!r}, this run "
                             f"{value!r}; same settings or another --out")
    if result.get("calibration") != CALIBRATION:
        raise SystemExit(f"--resume: {path} has calibration={result.get('calibration')!r}, "
                         f"this run {CALIBRATION!r}; another --out")
    return result


def done_rows(result: dict) -> set[tuple[str, str, int, str]]:
    """(protocol, data set, fold, model) of every row a result holds."""
    out = set()
    for ds_name, entry in result.get("datasets", {}).items():
        for protocol, part in entry.get("protocols", {}).items():
            for name, res in part.get("models", {}).items():
                out.update((protocol, ds_name, int(r["fold"]), name) for r in res["per_fold"])
    return out


def write_json(result: dict, path: Path) -> None:
    """Atomically: a temporary file beside ``path``, then a rename."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2, default=_clean) + "\n")
    tmp.replace(path)


# ---------------------------------------------------------------------- converged
def _floats(text: str) -> list[float]:
    return [float(x) for x in str(text).split(",") if x.strip()]


def _ints(text: str) -> list[int]:
    return [int(x) for x in str(text).split(",") if x.strip()]


def candidate_settings(name: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The settings chosen among on the tuning fold's validation MRR: a peer's learning
    rate, BPBFM's K (``n_topics``)."""
    if name in PEERS:
        return [{"learning_rate": lr} for lr in _floats(args.learning_rates)]
    grid = args.topics_em_grid if name == "BPBFM-1-EM" else args.topics_grid
    return [{"n_topics": k} for k in _ints(grid)]


def valid_task(splits: dict):
    """The validation triples as a kg task: filter train + valid (never the test
    triples), the training tensor the train split's."""
    from topiclink_reproductions.bpbfm import kg_task

    return kg_task({"train": splits["train"], "test": splits["valid"]})


def _stopper(name: str, args: argparse.Namespace):
    from topiclink_reproductions.validation_stopping import ValidationStopper

    if name in PEERS:
        return ValidationStopper(args.check_epochs, args.patience, args.max_epochs,
                                 args.relative_delta)
    every = args.check_iterations_em if name == "BPBFM-1-EM" else args.check_iterations
    return ValidationStopper(every, args.patience, args.max_iterations, args.relative_delta)


def fit_converged(name: str, setting: dict[str, Any], args: argparse.Namespace, seed: int,
                  train, vtask) -> tuple[Any, Any, dict[str, float]]:
    """(model at its best validation evaluation, its stopper, timings) of one model
    trained to convergence (module docstring).  Timings: ``train_seconds`` (wall time of
    training alone), ``fit_wall_seconds`` / ``fit_cpu_seconds`` (validation included)."""
    from topiclink_reproductions.bpbfm import evaluate_kg
    from topiclink_reproductions.validation_stopping import train_in_steps

    stopper = _stopper(name, args)
    c0, w0 = time.process_time(), time.perf_counter()
    if name in PEERS:
        from topiclink_reproductions.peers.pykeen import KGEmbeddingPeer

        peer = KGEmbeddingPeer(name, num_epochs=args.max_epochs, random_state=seed,
                               n_jobs=1, exclude_missing=False, **setting)
        n_ones = int((np.asarray(train.values) > 0).sum())
        per_epoch = max(1, -(-n_ones // int(peer.batch_size)))

        def evaluate() -> float:
            return float(evaluate_kg(peer, vtask)["mrr"])

        def on_batch(p) -> bool:
            if p.n_batches_ % per_epoch:
                return False
            return stopper.observe(p.n_batches_ // per_epoch, evaluate, p.snapshot_weights,
                                   time.perf_counter() - p.fit_started_
                                   - stopper.eval_seconds)

        peer.fit(train, on_batch=on_batch)
        train_seconds = peer.fit_seconds_ - stopper.eval_seconds   # validation inside
        stopper.finish(int(round(peer.epochs_)), evaluate, peer.snapshot_weights,
                       train_seconds)
        peer.restore_weights(stopper.best_snapshot)
        model = peer
    else:
        model = _build(name, args, seed, "kg")
        if "n_topics" in setting:
            model.set_params(n_topics=int(setting["n_topics"]))

        def advance(step: int, n: int) -> int:
            before = int(getattr(model, "n_iter_", 0)) if step else 0
            model.set_params(max_iter=int(n))
            model.fit(train, resume=step > 0)
            return int(model.n_iter_) - before

        def evaluate() -> float:
            return float(evaluate_kg(model, vtask)["mrr"])

        train_in_steps(stopper, advance, evaluate, lambda: copy.deepcopy(model))
        model = stopper.best_snapshot
        train_seconds = float(stopper.train_seconds or 0.0)
    timings = {"train_seconds": train_seconds,
               "fit_wall_seconds": time.perf_counter() - w0,
               "fit_cpu_seconds": time.process_time() - c0}
    return model, stopper, timings


def converged_record(name: str, setting: dict[str, Any], seed: int, model, stopper,
                     timings: dict[str, float], metrics: dict[str, Any]) -> dict[str, Any]:
    """One trained-to-convergence model's fields: its setting, the stopper's summary
    (``steps`` trained, ``best_step``, ``valid_mrr``, ``curve``, ``cap_hit``,
    ``stopped_by``), timings and test metrics."""
    summ = stopper.summary()
    return {"setting": dict(setting), "seed": seed,
            "step_unit": "epoch" if name in PEERS else "iteration",
            **{k: _clean(v) for k, v in metrics.items()},
            "valid_mrr": summ.pop("best_valid"), **summ,
            "valid_eval_seconds": summ.pop("eval_seconds"), **timings,
            "fit_seconds": timings["train_seconds"],
            "n_parameters": _clean(getattr(model, "n_parameters_", None))}


def _candidate_brief(rec: dict[str, Any]) -> dict[str, Any]:
    keep = ("setting", "valid_mrr", "best_step", "steps", "stopped_by", "cap_hit",
            "train_seconds", "fit_wall_seconds", "mrr", "hits_at_10", "curve")
    return {k: rec.get(k) for k in keep}


def run_converged_fold(name: str, fold: int, seed: int, args: argparse.Namespace, train,
                       vtask, task, tuning: dict[str, Any] | None,
                       save: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The row of ``name`` on one fold, and its tuning record.  Without ``tuning`` (the
    tuning fold) every candidate setting is trained and the best on validation kept
    (candidates already in ``tuning_partial`` are not retrained: resume), ``save(tuning)``
    after each; with it, its chosen setting alone is trained."""
    from topiclink_reproductions.bpbfm import evaluate_kg

    if tuning is not None and tuning.get("selected") is not None:
        setting = tuning["selected"]
        model, stopper, timings = fit_converged(name, setting, args, seed, train, vtask)
        t0 = time.perf_counter()
        metrics = evaluate_kg(model, task)
        row = converged_record(name, setting, seed, model, stopper, timings, metrics)
        row.update(fold=fold, test_seconds=time.perf_counter() - t0)
        return row, tuning
    tuning = dict(tuning or {"fold": fold, "seed": seed, "candidates": []})
    done = {json.dumps(c["setting"], sort_keys=True): c for c in tuning["candidates"]}
    for setting in candidate_settings(name, args):
        key = json.dumps(setting, sort_keys=True)
        if key in done:
            continue
        model, stopper, timings = fit_converged(name, setting, args, seed, train, vtask)
        t0 = time.perf_counter()
        metrics = evaluate_kg(model, task)   # recorded; never read by the selection
        rec = converged_record(name, setting, seed, model, stopper, timings, metrics)
        rec.update(fold=fold, test_seconds=time.perf_counter() - t0)
        done[key] = rec
        tuning["candidates"] = list(done.values())
        if save is not None:
            save(tuning)
        print(f"    {name} fold {fold} candidate {setting}: valid MRR {rec['valid_mrr']:.4f} "
              f"at {rec['step_unit']} {rec['best_step']} of {rec['steps']} "
              f"({rec['stopped_by']}), train {rec['train_seconds']:.1f} s", flush=True)
    best = max(tuning["candidates"], key=lambda c: (c["valid_mrr"] is not None,
                                                      c["valid_mrr"] or 0.0))
    tuning["selected"] = best["setting"]
    tuning["selected_by"] = "best validation filtered MRR (train + valid filter)"
    tuning["tuning_train_seconds"] = float(sum(c["train_seconds"]
                                               for c in tuning["candidates"]))
    row = {k: v for k, v in best.items()}
    row["candidates"] = [_candidate_brief(c) for c in tuning["candidates"]]
    tuning["candidates"] = [_candidate_brief(c) for c in tuning["candidates"]]
    return row, tuning


def run_converged_dataset(ds_name: str, splits: dict, task, entry: dict, folds: list[int],
                          models: list[str], args: argparse.Namespace, todo: set,
                          n_session: int, write: Any, warmed: set) -> None:
    """The converged kg rows of one data set (module docstring), ``write()`` after each
    row and each tuning candidate; the first of ``folds`` is the tuning fold."""
    from topiclink_reproductions.bpbfm import cell_seed

    vtask = valid_task(splits)
    train = splits["train"]
    part = entry["protocols"].setdefault("kg", {"models": {}})
    for name in models:
        res = part["models"].setdefault(name, {"per_fold": []})
        for fold in folds:
            if ("kg", fold, name) not in todo:
                continue
            seed = cell_seed(args.seed, {"protocol": "kg", "fold": fold, "K": 0},
                             ("protocol", "fold", "K"))
            if name in OURS and name not in warmed:   # numba compilation
                warm = _build(name, args, 0)
                no_burn_in = {"burn_in": 0} if "burn_in" in warm.get_params() else {}
                warm.set_params(max_iter=2, **no_burn_in)
                warm.fit(train)
                warmed.add(name)
            tuning = res.get("tuning")
            if tuning is None or tuning.get("selected") is None:
                tuning_fold = folds[0] if tuning is None else tuning["fold"]
                if fold != tuning_fold:
                    raise SystemExit(f"{ds_name} {name}: no setting chosen yet; fold "
                                     f"{tuning_fold} (the first fold listed) is the tuning "
                                     f"fold, and fold {fold} needs its choice")

                def save(t: dict, res: dict = res) -> None:
                    res["tuning"] = t
                    write()

                row, tuning = run_converged_fold(name, fold, seed, args, train, vtask, task,
                                                 tuning, save)
            else:
                row, tuning = run_converged_fold(name, fold, seed, args, train, vtask, task,
                                                 tuning)
            row.update(fold=fold, seed=seed, session=n_session)
            res["tuning"] = tuning
            res["per_fold"] = sorted([*res["per_fold"], row], key=lambda r: r["fold"])
            res["n_parameters"] = row.get("n_parameters")
            res["summary"] = _summary(res["per_fold"], CONVERGED_METRICS)
            part["verdict"] = verdict(part)
            print(f"{ds_name:>8s}    kg fold {fold} {name:>14s} {row['setting']}: test MRR "
                  f"{row['mrr']:.4f} H@10 {row['hits_at_10']:.4f}  valid MRR "
                  f"{row['valid_mrr']:.4f} at {row['step_unit']} {row['best_step']} of "
                  f"{row['steps']} ({row['stopped_by']})  train {row['train_seconds']:.1f} s",
                  flush=True)
            write()


CONVERGED_METRICS = (*METRICS["kg"], "valid_mrr", "steps", "best_step", "train_seconds",
                     "fit_wall_seconds")


def verdict(part: dict[str, Any]) -> dict[str, Any] | None:
    """BPBFM (the variant with the best mean *validation* MRR over folds) against the
    peer with the best mean *test* MRR: whether BPBFM's test MRR is at least the peer's,
    with the per-fold paired differences (folds both have)."""
    models = part.get("models", {})

    def mean(name: str, key: str) -> float | None:
        s = models[name]["summary"].get(key)
        return None if s is None else s["mean"]

    ours = [m for m in models if m in OURS and mean(m, "valid_mrr") is not None]
    peers = [m for m in models if m in PEERS and mean(m, "mrr") is not None]
    if not ours or not peers:
        return None
    b = max(ours, key=lambda m: mean(m, "valid_mrr"))
    p = max(peers, key=lambda m: mean(m, "mrr"))
    by_fold = {r["fold"]: r["mrr"] for r in models[p]["per_fold"]}
    diffs = [r["mrr"] - by_fold[r["fold"]] for r in models[b]["per_fold"]
             if r["fold"] in by_fold]
    return {"bpbfm": b, "bpbfm_chosen_by": "best mean validation MRR among BPBFM variants",
            "best_peer": p, "best_peer_chosen_by": "best mean test MRR among the peers",
            "bpbfm_test_mrr": mean(b, "mrr"), "best_peer_test_mrr": mean(p, "mrr"),
            "bpbfm_test_hits_at_10": mean(b, "hits_at_10"),
            "best_peer_test_hits_at_10": mean(p, "hits_at_10"),
            "paired_mrr_differences": diffs,
            "folds_bpbfm_ahead": int(sum(d >= 0 for d in diffs)),
            "bpbfm_at_least_best_peer": bool(mean(b, "mrr") >= mean(p, "mrr"))}


def convergence_figure(result: dict, path: Path) -> Path | None:
    """Validation MRR against training seconds (validation excluded), one panel per data
    set, every row's curve (the chosen setting), the best point marked."""
    panels = [(ds, e["protocols"]["kg"]["models"]) for ds, e in result["datasets"].items()
              if e.get("protocols", {}).get("kg", {}).get("models")]
    if not panels:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (ds, models) in zip(axes[0], panels, strict=True):
        for i, (name, res) in enumerate(models.items()):
            c = colours[i % len(colours)]
            for j, row in enumerate(res["per_fold"]):
                pts = [(q["seconds"], q["value"]) for q in row.get("curve") or []
                       if q.get("seconds") is not None and q["seconds"] > 0]
                if not pts:
                    continue
                x, y = zip(*pts, strict=True)
                ax.plot(x, y, color=c, lw=1, alpha=0.8,
                        label=f"{name} {row.get('setting')}" if j == 0 else None)
                k = max(range(len(y)), key=y.__getitem__)
                ax.plot([x[k]], [y[k]], marker="o", ms=4, color=c)
        ax.set_xscale("log")
        ax.set_xlabel("training seconds (validation excluded; one thread)")
        ax.set_ylabel("validation filtered MRR (filter train + valid)")
        ax.set_title(f"{ds}: curves of every fold, best evaluation marked", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="umls,nations")
    ap.add_argument("--folds", default=",".join(map(str, range(10))),
                    help="fold indices (paper: independent 10 %% draws; kg: repetitions)")
    ap.add_argument("--models", default=",".join(OURS + PEERS))
    ap.add_argument("--protocols", default=None,
                    help="paper,kg (default); --peer-training converged: kg only")
    ap.add_argument("--topics", type=int, default=20, help="K of BPBFM")
    ap.add_argument("--topics-em", type=int, default=40, help="K of BPBFM-1-EM")
    ap.add_argument("--iterations", type=int, default=300, help="BPBFM Gibbs iterations")
    ap.add_argument("--burn-in", type=int, default=150)
    ap.add_argument("--epochs", type=int, default=200, help="PyKEEN training epochs")
    ap.add_argument("--fraction", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="one fold, nations, 60 Gibbs iterations (burn-in 30), 40 epochs")
    ap.add_argument("--peer-training", choices=("fixed", "converged"), default="fixed",
                    help="fixed: --epochs / --iterations; converged: early stopping on the "
                         "validation MRR, one setting per model chosen on the first fold")
    ap.add_argument("--check-epochs", type=int, default=10,
                    help="converged: validation every this many epochs (peers)")
    ap.add_argument("--max-epochs", type=int, default=1000, help="converged: the peers' cap")
    ap.add_argument("--check-iterations", type=int, default=25,
                    help="converged: validation every this many iterations (BPBFM)")
    ap.add_argument("--check-iterations-em", type=int, default=10,
                    help="converged: validation every this many iterations (BPBFM-1-EM)")
    ap.add_argument("--max-iterations", type=int, default=2000,
                    help="converged: BPBFM's cap (Gibbs and EM iterations)")
    ap.add_argument("--patience", type=int, default=10,
                    help="converged: evaluations without improvement before stopping")
    ap.add_argument("--relative-delta", type=float, default=0.002,
                    help="converged: an improvement is more than this, relative")
    ap.add_argument("--learning-rates", default="0.001,0.01,0.1",
                    help="converged: the peers' Adam learning rates chosen among")
    ap.add_argument("--topics-grid", default="20,40,80",
                    help="converged: K of BPBFM-1 / BPBFM-1-scaled chosen among")
    ap.add_argument("--topics-em-grid", default="20,40,80,160",
                    help="converged: K of BPBFM-1-EM chosen among")
    ap.add_argument("--out", type=Path, default=None,
                    help="default results/bpbfm_vs_pykeen.json (converged: "
                         "results/bpbfm_kg_converged_vs_pykeen.json)")
    ap.add_argument("--figure", type=Path, default=None,
                    help="reliability diagrams (default: --out with .png)")
    ap.add_argument("--resume", action="store_true",
                    help="go on with --out: skip the (protocol, data set, fold, model) rows "
                         "it holds (same settings, else refused)")
    args = ap.parse_args(argv)
    converged = args.peer_training == "converged"
    if args.protocols is None:
        args.protocols = "kg" if converged else "paper,kg"
    if converged and args.protocols != "kg":
        raise SystemExit("--peer-training converged: the kg protocol only (--protocols kg); "
                         "the paper protocol has no validation split")
    if args.out is None:
        args.out = Path(__file__).parent / "results" / (
            "bpbfm_kg_converged_vs_pykeen.json" if converged else "bpbfm_vs_pykeen.json")
    if args.quick:
        args.datasets, args.folds = "nations", "0"
        args.iterations, args.burn_in, args.epochs = 60, 30, 40
        if converged:
            args.max_epochs, args.check_epochs, args.max_iterations = 40, 10, 100
            args.patience = 3
            args.learning_rates, args.topics_grid, args.topics_em_grid = "0.01", "10", "10"
    if args.figure is None:
        args.figure = args.out.with_suffix(".png")
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("pykeen").setLevel(logging.ERROR)

    import topiclink
    from topiclink_reproductions.bpbfm import (
        cell_seed,
        evaluate_kg,
        evaluate_paper,
        kg_task,
        paper_folds,
        union_tensor,
    )
    from topiclink_reproductions.peers.pykeen import PEER_DEFAULTS, register_pykeen_peers

    datasets = [d for d in args.datasets.split(",") if d]
    folds = [int(f) for f in args.folds.split(",") if f != ""]
    models = [m for m in args.models.split(",") if m]
    protocols = [p for p in args.protocols.split(",") if p]
    for m in models:
        if m not in OURS + PEERS:
            raise SystemExit(f"unknown model {m!r}; known: {', '.join(OURS + PEERS)}")
    versions: dict[str, Any] = {"topiclink_version": topiclink.__version__,
                                "pykeen_version": None, "torch_version": None}
    if any(m in PEERS for m in models):
        import pykeen
        import torch

        register_pykeen_peers()
        versions.update(pykeen_version=pykeen.get_version(), torch_version=torch.__version__)

    previous = load_resume(args.out, args) if args.resume else None
    done = done_rows(previous) if previous is not None else set()
    session = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "datasets": datasets,
               "folds": folds, "models": models, "protocols": protocols,
               "skipped_rows": 0, "load_average_at_start": list(os.getloadavg()), **versions}
    if previous is not None:
        result = previous
        result["args"] = {k: (str(v) if isinstance(v, Path) else v)
                          for k, v in vars(args).items()}
    else:
        result = {
            "benchmark": "bpbfm_vs_pykeen",
            "protocol": {
                "paper": f"union of train+valid+test; per fold {args.fraction:g} of all "
                         "entries held out (holdout_tensor_entries, seed from the fold only); "
                         "AUC-ROC and AUC-PR (sklearn) of predict_proba on the same held-out "
                         "entries",
                "kg": "train triples (valid+test missing); filtered MRR, Hits@1/3/10 over "
                      "the test triples, head and tail, ties at the mean rank; a fold is a "
                      "repetition with another seed",
                "BPBFM": f"K = {args.topics}, {args.iterations} Gibbs iterations, burn-in "
                         f"{args.burn_in}, thinning 5, one thread; BPBFM-2 with M = 10; "
                         f"BPBFM-1-EM: BilinearPoissonFactorModelEM, K = {args.topics_em}, tol "
                         "1e-5, at most 500 iterations, prior_rate 5",
                **({"converged": (
                    f"kg only; early stopping on the validation filtered MRR (filter "
                    f"train + valid, our metric code), every {args.check_epochs} epochs "
                    f"(peers) / {args.check_iterations} iterations (BPBFM Gibbs) / "
                    f"{args.check_iterations_em} (BPBFM-1-EM), patience "
                    f"{args.patience} evaluations, relative delta {args.relative_delta:g}, "
                    f"caps {args.max_epochs} epochs / {args.max_iterations} iterations; the "
                    "model of the best validation evaluation is scored on test (peers: "
                    "best weights restored; BPBFM: the estimator as it was then); per model "
                    "one setting chosen on the first fold's validation MRR and reused: "
                    f"peers' learning rate in {args.learning_rates}, BPBFM-1 / -scaled K in "
                    f"{args.topics_grid} (burn-in {args.burn_in}, thinning 5, the last 50 "
                    f"samples), BPBFM-1-EM K in {args.topics_em_grid}; nothing else tuned")}
                   if converged else {}),
                "peers": f"PyKEEN sLCWA, BCEWithLogits, Adam, {args.epochs} epochs, batch "
                         "512, 10 negatives per positive (training triples filtered; "
                         "held-out entries too in paper, not in kg), one torch thread; "
                         + "; ".join(f"{m}: {v}" for m, v in PEER_DEFAULTS.items()),
                "fit_seconds": "wall time of fit (PyKEEN: the training loop; BPBFM: the "
                               "chain, numba compilation excluded by a warm-up fit)",
                "calibration": f"paper rows: ECE ({N_BINS} equal-width bins) of "
                               "predict_proba on the held-out entries (BPBFM: posterior "
                               "mean / MAP probability; peers: sigmoid of the score); "
                               "ece_platt: after Platt scaling (logistic regression, C = "
                               f"{PLATT_C:g}, of the label on the raw score: peers' logit, "
                               f"BPBFM's logit(p)) fitted on a seeded {PLATT_FRACTION:g} "
                               "of the fold's training cells",
            },
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "calibration": CALIBRATION,
            **versions,
            "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                        "platform": platform.platform(), "processor": platform.processor(),
                        "load_average_at_start": list(os.getloadavg())},
            "datasets": {},
        }
    result.setdefault("sessions", []).append(session)
    n_session = len(result["sessions"]) - 1
    args.out.parent.mkdir(parents=True, exist_ok=True)

    warmed = set()
    for ds_name in datasets:
        todo = {(p, f, m) for p in protocols for f in folds for m in models
                if (p, ds_name, f, m) not in done}
        session["skipped_rows"] += len(protocols) * len(folds) * len(models) - len(todo)
        if not todo:
            continue
        ds = load_dataset(ds_name)
        splits = ds.tensor
        train = splits["train"]
        entry = result["datasets"].setdefault(ds_name, {
            "n_entities": int(train.n_entities), "n_relations": int(train.n_relations),
            "n_triples": {s: int(t.n_entries) for s, t in splits.items()},
            "protocols": {}})
        data = {}
        if "paper" in protocols:
            data["paper"] = paper_folds(union_tensor(splits), folds, args.fraction, args.seed)
        if "kg" in protocols:
            data["kg"] = kg_task(splits)
        if converged:
            run_converged_dataset(ds_name, splits, data["kg"], entry, folds, models, args,
                                  todo, n_session, lambda: write_json(result, args.out),
                                  warmed)
            continue
        for protocol in protocols:
            part = entry["protocols"].setdefault(protocol, {"models": {}})
            rows: dict[str, list[dict]] = {
                m: list(part["models"].get(m, {}).get("per_fold", [])) for m in models}
            for fold in folds:
                if not any((protocol, fold, m) in todo for m in models):
                    continue
                seed = cell_seed(args.seed, {"protocol": protocol, "fold": fold, "K": 0},
                                 ("protocol", "fold", "K"))
                fdata = data[protocol][fold] if protocol == "paper" else data[protocol]
                sample = None
                if protocol == "paper":
                    sample = platt_sample(fdata.train, PLATT_FRACTION, cell_seed(
                        args.seed, {"fold": fold, "platt": 1}, ("fold", "platt")))
                for name in models:
                    if (protocol, fold, name) not in todo:
                        continue
                    if name in OURS and name not in warmed:   # numba compilation
                        warm = _build(name, args, 0)
                        no_burn_in = {"burn_in": 0} if "burn_in" in warm.get_params() else {}
                        warm.set_params(max_iter=2, **no_burn_in)
                        warm.fit(fdata.train)
                        warmed.add(name)
                    model = _build(name, args, seed, protocol)
                    wall, cpu = _fit(model, fdata.train)
                    fit_seconds = getattr(model, "fit_seconds_", wall)
                    t0 = time.perf_counter()
                    metrics = (evaluate_paper(model, fdata) if protocol == "paper"
                               else evaluate_kg(model, fdata))
                    test_seconds = time.perf_counter() - t0
                    calib: dict[str, Any] = {}
                    if protocol == "paper":
                        t0 = time.perf_counter()
                        calib = evaluate_calibration(model, fdata, sample)
                        calib["calibration_seconds"] = time.perf_counter() - t0
                    row = {"fold": fold, "seed": seed,
                           **{k: _clean(v) for k, v in metrics.items()},
                           **calib,
                           "fit_seconds": fit_seconds, "fit_wall_seconds": wall,
                           "fit_cpu_seconds": cpu, "test_seconds": test_seconds,
                           "n_parameters": _clean(getattr(model, "n_parameters_", None)),
                           "session": n_session}
                    rows[name].append(row)
                    rows[name].sort(key=lambda r: r["fold"])
                    shown = "  ".join(f"{k} {row[k]:.4f}" if row.get(k) is not None
                                      else f"{k} -" for k in METRICS[protocol][:4])
                    print(f"{ds_name:>8s} {protocol:>5s} fold {fold} {name:>10s}: {shown}  "
                          f"fit {fit_seconds:.1f} s", flush=True)
                    part["models"][name] = {
                        "n_parameters": row["n_parameters"],
                        "summary": _summary(rows[name], METRICS[protocol]),
                        "per_fold": rows[name]}
                    write_json(result, args.out)
    session["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    session["load_average_at_end"] = list(os.getloadavg())
    result["machine"]["load_average_at_end"] = list(os.getloadavg())
    write_json(result, args.out)
    figure = (convergence_figure(result, args.figure) if converged
              else reliability_figure(result, args.figure))
    print()
    print(table(result))
    print(f"written {args.out}" + (f" and {figure}" if figure else ""))
    return result


def table(result: dict) -> str:
    """The results as text: mean ± sd over folds per data set, protocol and model."""
    lines = []
    converged = result.get("args", {}).get("peer_training") == "converged"
    for ds_name, entry in result["datasets"].items():
        for protocol, part in entry["protocols"].items():
            if converged:
                lines.extend(_converged_table(ds_name, part))
                continue
            cols = (*METRICS[protocol][:4], "fit_seconds")
            lines.append(f"{ds_name} / {protocol}")
            lines.append(f"{'model':>10s}  {'folds':>5s}  "
                         + "  ".join(f"{c:>15s}" for c in cols) + f"  {'params':>8s}")
            for name, res in part["models"].items():
                cells = []
                for c in cols:
                    s = res["summary"].get(c)
                    if s is None:
                        cells.append(f"{'-':>15s}")
                        continue
                    d = 1 if c == "fit_seconds" else 4 if c.startswith("ece") else 3
                    sd = "" if s["sd"] is None else f" ± {s['sd']:.{d}f}"
                    cells.append(f"{s['mean']:.{d}f}{sd}".rjust(15))
                n = len(res["per_fold"])
                lines.append(f"{name:>10s}  {n:>5d}  " + "  ".join(cells)
                             + f"  {res['n_parameters'] or 0:>8d}")
            lines.append("")
    return "\n".join(lines)


def _converged_table(ds_name: str, part: dict) -> list[str]:
    cols = ("mrr", "hits_at_1", "hits_at_10", "valid_mrr", "steps", "train_seconds")
    lines = [f"{ds_name} / kg, trained to convergence (mean ± sd over folds)",
             f"{'model':>14s}  {'folds':>5s}  " + "  ".join(f"{c:>15s}" for c in cols)
             + "  setting"]
    for name, res in part["models"].items():
        if not res.get("per_fold"):
            continue
        cells = []
        for c in cols:
            s = res["summary"].get(c)
            d = 0 if c == "steps" else 1 if c == "train_seconds" else 3
            sd = "" if s is None or s["sd"] is None else f" ± {s['sd']:.{d}f}"
            cells.append(("-" if s is None else f"{s['mean']:.{d}f}{sd}").rjust(15))
        setting = (res.get("tuning") or {}).get("selected")
        lines.append(f"{name:>14s}  {len(res['per_fold']):>5d}  " + "  ".join(cells)
                     + f"  {setting}")
    v = part.get("verdict")
    if v:
        lines.append(f"verdict: {v['bpbfm']} (chosen on valid) test MRR "
                     f"{v['bpbfm_test_mrr']:.3f} vs best peer {v['best_peer']} "
                     f"{v['best_peer_test_mrr']:.3f}: at least the best peer: "
                     f"{v['bpbfm_at_least_best_peer']} (ahead on {v['folds_bpbfm_ahead']} of "
                     f"{len(v['paired_mrr_differences'])} folds)")
    lines.append("")
    return lines


# ---------------------------------------------------------------------- figure
def pooled_fine_bins(rows: list[dict]) -> dict[str, np.ndarray] | None:
    """The rows' ``reliability_fine`` bins pooled: bin, count, ones, mean probability."""
    n = len(FIGURE_LOGIT_EDGES) + 1
    count, ones, sum_p = np.zeros(n), np.zeros(n), np.zeros(n)
    seen = False
    for r in rows:
        fine = r.get("reliability_fine")
        if not fine:
            continue
        seen = True
        b = np.asarray(fine["bin"], dtype=int)
        c = np.asarray(fine["count"], dtype=float)
        count[b] += c
        ones[b] += np.asarray(fine["ones"], dtype=float)
        sum_p[b] += c * np.asarray(fine["mean_proba"], dtype=float)
    if not seen:
        return None
    keep = np.flatnonzero(count)
    return {"bin": keep, "count": count[keep], "ones": ones[keep],
            "mean_proba": sum_p[keep] / count[keep]}


def reliability_figure(result: dict, path: Path) -> Path | None:
    """Reliability diagrams of the paper protocol (module docstring), one column per data
    set; None (nothing written) without a paper row with calibration fields."""
    panels = []
    for ds_name, entry in result.get("datasets", {}).items():
        models = entry.get("protocols", {}).get("paper", {}).get("models", {})
        lines = {m: pooled_fine_bins(res["per_fold"]) for m, res in models.items()}
        lines = {m: v for m, v in lines.items() if v is not None}
        if lines:
            panels.append((ds_name, models, lines))
    if not panels:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(panels), figsize=(5.2 * len(panels), 7.5),
                             squeeze=False, gridspec_kw={"height_ratios": [3, 1.3]},
                             sharex="col")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    floor = 1e-8

    def span(values: list[np.ndarray]) -> tuple[float, float]:
        """The values' range widened by half a logit unit, within [1e-8, 1 - 1e-8]."""
        v = _logit(np.clip(np.concatenate(values), floor, 1 - floor))
        return float(_expit(v.min() - 0.5)), float(_expit(v.max() + 0.5))

    for j, (ds_name, models, lines) in enumerate(panels):
        top, bottom = axes[0, j], axes[1, j]
        xs = [v["mean_proba"] for v in lines.values()]
        ys = [v["ones"] / v["count"] for v in lines.values()]
        ys = [y[(y > 0) & (y < 1)] for y in ys]
        lo, hi = span([*xs, *ys])          # one range for both: the diagonal at 45 deg
        top.plot([lo, hi], [lo, hi], color="0.6", lw=1, ls="--", label="perfect")
        base, n_folds = [], 0
        for i, (name, pooled) in enumerate(lines.items()):
            c = colours[i % len(colours)]
            summ = models[name]["summary"]
            n_folds = max(n_folds, len(models[name]["per_fold"]))
            ece = summ.get("ece", {}).get("mean")
            platt = summ.get("ece_platt", {}).get("mean")
            label = name + (f": ECE {ece:.4f}" if ece is not None else "") \
                + (f" / {platt:.4f}" if platt is not None else "")
            obs = pooled["ones"] / pooled["count"]
            ok = (pooled["count"] >= 5) & (obs > 0) & (obs < 1)
            x = np.clip(pooled["mean_proba"], floor, 1 - floor)
            top.plot(x[ok], obs[ok], marker="o", ms=3.5, lw=1.3, color=c, label=label)
            bottom.plot(x, pooled["count"], marker=".", lw=1, color=c)
            base.append(pooled["ones"].sum() / pooled["count"].sum())
        if base:
            top.axhline(float(np.mean(base)), color="0.8", lw=0.8, ls=":")
        for ax in (top, bottom):
            ax.set_xscale("logit")
            ax.set_xlim(lo, hi)
            ax.grid(alpha=0.3, which="major")
        top.set_yscale("logit")
        top.set_ylim(lo, hi)
        bottom.set_yscale("log")
        top.set_title(f"{ds_name}: held-out entries of {n_folds} fold(s) pooled, bins 1 "
                      "logit wide\nlegend: mean ECE over folds (10 equal bins), as read / "
                      "after Platt; dotted: base rate", fontsize=8)
        top.set_ylabel("observed frequency of true triples")
        bottom.set_ylabel("held-out entries per bin")
        bottom.set_xlabel("predicted probability (BPBFM: predict_proba; peers: sigmoid)")
        top.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


if __name__ == "__main__":
    main()
