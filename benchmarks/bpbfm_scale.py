"""BPBFM scaling: Gibbs sweep time and memory against the number of ones, not N^2 R.

Knowledge graphs drawn from the model (``make_bpbfm_data``, BPBFM-1 by default, K = 10,
planted blocks, binary) are fitted by the batch Gibbs sampler
(:class:`topiclink.families.bpbfm.algorithm.BPBFMGibbs`, driven directly: ``init`` then ``step``)
and, when the estimator offers it, by online conditional density filtering
(:class:`topiclink.families.bpbfm.online.BPBFMOnline`, ``minibatch_step``).  Measured:

1. **batch seconds per sweep against #ones** at the ``--sizes`` (default "paper":
   10k entities / 100 relations / 0.5M ones, 50k / 300 / 2M, 100k / 500 / 5M), with the
   log-log slope of seconds against #ones (expected ~1), and at a *fixed* number of ones
   (``--fixed-ones``, default 1M) for every pair of ``--fixed-entities`` x
   ``--fixed-relations`` (default 10k, 100k x 100, 500): growing N and R at fixed #ones
   should barely change the sweep time (the sampler touches the ones, plus O(N K) for
   U's Dirichlet draws and O(R K^2) for the matrices; the dense tensor has N^2 R cells),
   and at a fixed size (``--fixed-size``, default 100k x 500) for ``--fixed-size-ones``
   (1M, 2M, 5M; sizes already measured are reused).  What does grow with N at fixed #ones
   is the cost *per one*: each one reads the rows u_i, u_j and updates the count rows of
   i and j, random accesses that stay in cache while the (N, K) arrays are small (10k
   entities: 0.8 MB each) and go to main memory beyond (100k: 8 MB) -- a bounded
   constant factor, not a power of N;
2. **peak memory** of each size: drawing the data, and the fit (data layout, state and
   the sweeps), each as the tracemalloc peak (numpy's allocations, exact whatever the
   allocator keeps mapped; the fit is traced on a separate untimed pass of one sweep) and
   as the peak RSS above the RSS before it (a lower bound: freed memory the allocator
   kept is reused without raising the RSS), against the dense N x N x R tensor (8 bytes
   a cell as float64, 1 byte as bool);
3. **online seconds per minibatch step** (``--methods batch,online``) at the same sizes
   (and the fixed-#ones and fixed-size series) for each ``--batch-sizes`` (expected flat
   in #ones, linear in the batch size; BPBFM-1 redraws the matrices of the relations a
   minibatch touches, so a step also costs O(min(R, batch) K^2)).  When
   ``BilinearPoissonFactorModel(inference="online", batch_size=...)`` is not accepted yet
   (or ``topiclink.families.bpbfm.online`` is missing or fails on a tiny problem) this part
   is skipped with a message and the JSON has no online entries (only the reason);
4. **held-out AUC against wall time** at ``--auc-size`` (default 20k entities, 100
   relations, 1M ones).  Held out: ``holdout_tensor_entries`` with the fraction that gives
   ``--auc-zeros`` (50k) uniformly drawn cells, *plus* ``--auc-ones-fraction`` (5%) of the
   ones (``tensor.hold_out``).  The uniform draw alone is useless for AUC at this density
   (1M ones among 4e10 cells: ~1 one among 50k cells), so the ones are sampled separately;
   AUC-ROC does not depend on the class ratio, so this stratified set estimates the AUC of
   a random one against a random zero.  (Holding out 5% of the ones but ~1e-6 of the zeros
   is informative missingness the sampler ignores: the fitted rates are ~5% low, which
   does not change the ranking.)  Every held-out cell is imputed by the sampler each sweep
   and costs like a one.  AUC (sklearn ``roc_auc_score``) of the current sample's
   ``1 - exp(-u_h^T Lambda^r u_t)`` after every sweep against the elapsed sweep time
   (evaluation excluded), the AUC of the mean probability over the second half of the
   sweeps, and the truth's AUC (``truth.proba``) as the ceiling.

**Protocol.**  Every measurement runs in its own subprocess, one at a time: it warms the
Numba kernels up on a tiny problem (compilation or cache load excluded), resets the peak
RSS counter (``/proc/self/clear_refs``; else ``ru_maxrss`` deltas, a lower bound, and the
JSON says so), draws the data (seed ``--seed``), resets again, builds ``BPBFMData``, runs
``--warmup`` untimed sweeps (recorded) and ``--sweeps`` timed ones on ``--n-jobs``
threads.  Seconds per sweep = median of the timed sweeps (the minimum is recorded too);
the kernel part (latent counts and allocation, ``BPBFMGibbs.counts``) is timed separately.
Then (unless ``--no-interleave``) one more subprocess holds *every* batch size at once and
interleaves their sweeps (``--sweeps`` rounds, one sweep of each size per round in a random
order): on a shared machine whose load drifts over minutes (the JSON records the load
average) only these interleaved times are comparable across sizes, so the slopes and
ratios of the summary's ``interleaved_*`` entries and the figure use them.

    python benchmarks/bpbfm_scale.py                    # paper sizes, batch only (~4 min)
    python benchmarks/bpbfm_scale.py --quick            # tiny sizes (< 30 s), smoke test
    # the committed results/bpbfm_scale.json (6 min on one free core of a 2-core machine):
    python benchmarks/bpbfm_scale.py --methods batch,online --sweeps 10 --steps 40
    python benchmarks/bpbfm_scale.py --entities 5000,20000 --relations 50,100 \\
        --ones 200000,1000000 --no-fixed --no-auc --out /tmp/x.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from memory_probes import reset_peak, status_kb

SIZES = {
    "paper": [(10_000, 100, 500_000), (50_000, 300, 2_000_000), (100_000, 500, 5_000_000)],
    "small": [(2_000, 20, 50_000), (5_000, 50, 200_000), (10_000, 100, 500_000)],
    "quick": [(300, 5, 4_000), (600, 10, 12_000), (1_000, 15, 30_000)],
}
QUICK_FIXED = (8_000, [600, 1_200], [5, 10])
QUICK_AUC = (800, 10, 20_000)


# ---------------------------------------------------------------------- memory probes
_status_kb, _reset_peak = status_kb, reset_peak


class _Peak:
    """Peak RSS (MiB) of a phase above the RSS at its start."""

    def __init__(self) -> None:
        self.exact = _reset_peak()
        self.rss0 = _status_kb("VmRSS") if self.exact else None
        self.max0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def mib(self) -> float:
        if self.exact:
            return (_status_kb("VmHWM") - self.rss0) / 1024.0
        return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - self.max0) / 1024.0

    @property
    def method(self) -> str:
        if self.exact:
            return "VmHWM - VmRSS at the phase start (peak reset via /proc/self/clear_refs)"
        return "ru_maxrss delta (lower bound: the high-water mark was not reset)"


def _nbytes(*arrays: np.ndarray) -> float:
    return sum(int(np.asarray(a).nbytes) for a in arrays) / 2**20


# ---------------------------------------------------------------------- data
def draw(spec: dict):
    from topiclink.families.bpbfm.synthetic import make_bpbfm_data

    model = int(spec.get("model", 1))
    return make_bpbfm_data(spec["n_entities"], spec["n_relations"], spec["k"], model=model,
                           n_dictionary=spec.get("n_dictionary") if model == 2 else None,
                           n_ones=float(spec["n_ones"]), binary=True,
                           random_state=spec["seed"])


def _gibbs(spec: dict):
    """BPBFMGibbs whose ``counts`` (the kernel part of a sweep) is timed."""
    from topiclink.families.bpbfm.algorithm import BPBFMGibbs

    class TimedGibbs(BPBFMGibbs):
        counts_s: list[float]

        def counts(self, state, data):  # noqa: ANN001, ANN202
            t0 = time.perf_counter()
            out = super().counts(state, data)
            self.counts_s.append(time.perf_counter() - t0)
            return out

    m = spec.get("n_dictionary") if int(spec.get("model", 1)) == 2 else None
    alg = TimedGibbs(spec["k"], m, n_threads=spec["n_jobs"])
    alg.counts_s = []
    return alg


def _online(spec: dict, batch_size: int):
    from topiclink.families.bpbfm.online import BPBFMOnline

    m = spec.get("n_dictionary") if int(spec.get("model", 1)) == 2 else None
    return BPBFMOnline(spec["k"], m, batch_size=batch_size,
                       n_threads=max(1, int(spec["n_jobs"])))


def _warm_up(spec: dict, online: bool) -> None:
    """Compile (or load from cache) every kernel on a tiny problem."""
    from topiclink.data.splits import holdout_tensor_entries
    from topiclink.families.bpbfm.algorithm import BPBFMData
    from topiclink.families.bpbfm.kernels import entry_rates

    tiny = dict(spec, n_entities=60, n_relations=3, n_ones=600, seed=spec["seed"] + 1)
    tensor, _ = draw(tiny)
    train, held, _ = holdout_tensor_entries(tensor, 0.01, random_state=1)
    data = BPBFMData.from_tensor(train, True)
    alg = _gibbs(spec)
    state = alg.init(data, np.random.default_rng(1))
    for _ in range(2):
        alg.step(state, data)
    h, r, t = (np.ascontiguousarray(held[:, c], dtype=np.int32) for c in range(3))
    entry_rates(h, r, t, state.U, alg.relation_matrices(state))
    if online:
        on = _online(spec, 64)
        st = on.init(data, np.random.default_rng(1))
        for _ in range(2):
            on.minibatch_step(st, data, np.arange(64), on.schedule(st.updates))
            st.updates += 1


def _size_facts(tensor, truth, spec: dict) -> dict:
    N, R = spec["n_entities"], spec["n_relations"]
    cells = float(N) * N * R
    return {"n_entities": N, "n_relations": R, "n_components": spec["k"],
            "model": int(spec.get("model", 1)), "target_n_ones": spec["n_ones"],
            "n_ones": int(tensor.n_entries), "expected_n_ones": float(truth.expected_n_ones),
            "n_cells": cells, "density": tensor.n_entries / cells,
            "dense_float64_gib": 8.0 * cells / 2**30, "dense_bool_gib": cells / 2**30}


# ---------------------------------------------------------------------- children
def child_batch(spec: dict) -> dict:
    from topiclink.families.bpbfm.algorithm import BPBFMData, n_chunks_for

    _warm_up(spec, online=False)
    peak = _Peak()
    tracemalloc.start()
    t0 = time.perf_counter()
    tensor, truth = draw(spec)
    gen_s = time.perf_counter() - t0
    gen_traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    gen_mib = peak.mib()
    out = _size_facts(tensor, truth, spec)
    tensor_mib = _nbytes(tensor.heads, tensor.relations, tensor.tails, tensor.values)
    del truth
    peak = _Peak()
    alg = _gibbs(spec)
    t0 = time.perf_counter()
    data = BPBFMData.from_tensor(tensor, True)
    state = alg.init(data, np.random.default_rng(spec["seed"]))
    setup_s = time.perf_counter() - t0
    seconds, latent = [], []
    for _ in range(spec["warmup"] + spec["sweeps"]):
        t0 = time.perf_counter()
        info = alg.step(state, data)
        seconds.append(time.perf_counter() - t0)
        latent.append(float(info.get("latent_count", np.nan)))
    fit_mib = peak.mib()
    kern = alg.counts_s[spec["warmup"]:] if len(alg.counts_s) == len(seconds) else []
    process_mib = (_status_kb("VmHWM") or 0) / 1024.0
    # the same fit once more (one sweep) with tracemalloc on: numpy's allocations, exact
    # whatever the allocator keeps mapped (the timed sweeps above ran without it)
    del data, state
    tracemalloc.start()
    data2 = BPBFMData.from_tensor(tensor, True)
    state2 = alg.init(data2, np.random.default_rng(spec["seed"]))
    alg.step(state2, data2)
    fit_traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    data, state = data2, state2
    timed = seconds[spec["warmup"]:]
    per = float(np.median(timed))
    out.update({
        "method": "batch", "n_jobs": spec["n_jobs"], "n_chunks": n_chunks_for(data.n_entries),
        "generate_s": gen_s, "setup_s": setup_s, "warmup_sweeps_s": seconds[:spec["warmup"]],
        "sweep_seconds": timed, "per_sweep_s": per, "min_sweep_s": float(np.min(timed)),
        "kernel_s": float(np.median(kern)) if kern else None,
        "rest_s": float(np.median(np.subtract(timed, kern))) if kern else None,
        "ns_per_one": 1e9 * per / out["n_ones"],
        "latent_count_per_sweep": latent[-1],
        "peak_traced_generate_mib": gen_traced, "peak_traced_fit_mib": fit_traced,
        "peak_traced_method": "tracemalloc peak (numpy/Python allocations; the fit: "
                              "BPBFMData + init + one sweep, tensor already allocated)",
        "peak_rss_generate_mib": gen_mib, "peak_rss_fit_mib": fit_mib,
        "process_peak_rss_fit_mib": process_mib, "peak_rss_method": peak.method,
        "tensor_mib": tensor_mib,
        "sampler_data_mib": _nbytes(data.heads, data.rels, data.tails, data.kinds,
                                    data.values),
        "state_mib": _nbytes(state.U, state.G, state.eta, state.d, state.eps),
    })
    out["peak_fit_over_dense_float64"] = max(fit_traced, fit_mib) / (
        1024.0 * out["dense_float64_gib"])
    return out


def child_interleaved(spec: dict) -> dict:
    """Every size in one process, sweeps interleaved: round after round, one sweep of each
    size in a fresh random order, so a change of the machine's load hits all sizes alike
    (the ratios and slopes are what this part is for)."""
    from topiclink.families.bpbfm.algorithm import BPBFMData

    _warm_up(spec, online=False)
    runs = []
    for n, r, ones in spec["keys"]:
        tensor, _ = draw(dict(spec, n_entities=n, n_relations=r, n_ones=ones))
        data = BPBFMData.from_tensor(tensor, True)
        del tensor
        alg = _gibbs(spec)
        state = alg.init(data, np.random.default_rng(spec["seed"]))
        for _ in range(spec["warmup"]):
            alg.step(state, data)
        runs.append((alg, state, data, []))
    order_rng = np.random.default_rng(spec["seed"] + 3)
    for _ in range(spec["sweeps"]):
        for i in order_rng.permutation(len(runs)):
            alg, state, data, seconds = runs[i]
            t0 = time.perf_counter()
            alg.step(state, data)
            seconds.append(time.perf_counter() - t0)
    return {"keys": spec["keys"], "n_ones": [int(run[2].n_observed) for run in runs],
            "seconds": [run[3] for run in runs]}


def child_online(spec: dict) -> dict:
    from topiclink.families.bpbfm.algorithm import BPBFMData

    _warm_up(spec, online=True)
    t0 = time.perf_counter()
    tensor, truth = draw(spec)
    gen_s = time.perf_counter() - t0
    out = _size_facts(tensor, truth, spec)
    del truth
    data = BPBFMData.from_tensor(tensor, True)
    rows = []
    for bs in spec["batch_sizes"]:
        peak = _Peak()
        alg = _online(spec, bs)
        state = alg.init(data, np.random.default_rng(spec["seed"]))
        rng = np.random.default_rng(spec["seed"] + 7)
        seconds = []
        for s in range(spec["warmup_steps"] + spec["steps"]):
            batch = np.sort(rng.choice(data.n_entries, size=min(bs, data.n_entries),
                                       replace=False))
            rho = alg.schedule(state.updates)
            t0 = time.perf_counter()
            alg.minibatch_step(state, data, batch, rho)
            dt = time.perf_counter() - t0
            state.updates += 1
            if s >= spec["warmup_steps"]:
                seconds.append(dt)
        per = float(np.median(seconds))
        rows.append({"batch_size": bs, "step_seconds": seconds, "per_step_s": per,
                     "min_step_s": float(np.min(seconds)),
                     "us_per_entry": 1e6 * per / min(bs, data.n_entries),
                     "peak_rss_mib": peak.mib(), "peak_rss_method": peak.method})
    out.update({"method": "online", "generate_s": gen_s, "by_batch_size": rows})
    return out


def _auc_data(spec: dict):
    """Train tensor, held-out (h, r, t) int32 arrays, labels, truth."""
    from topiclink.data.splits import holdout_tensor_entries

    tensor, truth = draw(spec)
    N, R = spec["n_entities"], spec["n_relations"]
    cells = float(N) * N * R
    frac = min(0.5, spec["auc_zeros"] / cells)
    train, held_u, vals_u = holdout_tensor_entries(tensor, frac,
                                                   random_state=spec["seed"] + 11)
    rng = np.random.default_rng(spec["seed"] + 12)
    n1 = max(1, int(round(spec["auc_ones_fraction"] * tensor.n_entries)))
    pick = np.sort(rng.choice(tensor.n_entries, size=n1, replace=False))
    ones = np.column_stack([tensor.heads[pick], tensor.relations[pick],
                            tensor.tails[pick]]).astype(np.int64)

    def key(e: np.ndarray) -> np.ndarray:
        return (e[:, 1] * N + e[:, 0]) * N + e[:, 2]

    ones = ones[~np.isin(key(ones), key(held_u))]
    train = train.hold_out(ones)
    held = np.concatenate([held_u, ones])
    labels = np.concatenate([vals_u > 0, np.ones(len(ones), dtype=bool)])
    hrt = tuple(np.ascontiguousarray(held[:, c], dtype=np.int32) for c in range(3))
    info = {"heldout_uniform_cells": len(held_u), "heldout_uniform_fraction": frac,
            "heldout_uniform_ones": int((vals_u > 0).sum()), "heldout_sampled_ones": len(ones),
            "heldout_positives": int(labels.sum()), "heldout_negatives": int((~labels).sum())}
    return tensor, train, hrt, labels, truth, info


def child_auc(spec: dict) -> dict:
    from sklearn.metrics import roc_auc_score

    from topiclink.families.bpbfm.algorithm import BPBFMData
    from topiclink.families.bpbfm.kernels import entry_rates
    from topiclink.inference.online import minibatches

    online = spec["method"] == "online"
    _warm_up(spec, online=online)
    tensor, train, (h, r, t), labels, truth, info = _auc_data(spec)
    out = _size_facts(tensor, truth, spec)
    out.update(info)
    out["truth_auc"] = float(roc_auc_score(labels, truth.proba(h, r, t)))
    data = BPBFMData.from_tensor(train, True)
    out["n_imputed_per_sweep"] = int(data.n_missing)
    alg = _online(spec, spec["auc_batch_size"]) if online else _gibbs(spec)
    state = alg.init(data, np.random.default_rng(spec["seed"]))

    def proba() -> np.ndarray:
        L = np.ascontiguousarray(alg.relation_matrices(state))
        return -np.expm1(-entry_rates(h, r, t, np.ascontiguousarray(state.U), L))

    elapsed, eval_s = 0.0, 0.0
    times, aucs, probas = [], [], []
    queue: list[np.ndarray] = []
    for _ in range(spec["auc_sweeps"]):
        t0 = time.perf_counter()
        if online:      # a quarter sweep of minibatches (as the driver draws them)
            if not queue:
                queue = minibatches(data.n_entries, alg.batch_size, state.batch_rng)
                per_round = -(-len(queue) // 4)
            for b in queue[:per_round]:
                alg.minibatch_step(state, data, b, alg.schedule(state.updates))
                state.updates += 1
            del queue[:per_round]
            if not queue:
                alg.refresh_totals(state)
        else:
            alg.step(state, data)
        elapsed += time.perf_counter() - t0
        t0 = time.perf_counter()
        p = proba()
        aucs.append(float(roc_auc_score(labels, p)))
        times.append(elapsed)
        probas.append(p.astype(np.float32))
        eval_s += time.perf_counter() - t0
        if spec.get("time_budget_s") and elapsed > spec["time_budget_s"]:
            break
    n_mean = len(probas) - len(probas) // 2
    mean_p = np.mean(probas[len(probas) // 2:], axis=0, dtype=np.float64)
    out.update({"method": spec["method"], "n_jobs": spec["n_jobs"],
                "round": "quarter sweep of minibatches" if online else "sweep",
                "batch_size": spec["auc_batch_size"] if online else None,
                "seconds": times, "auc": aucs, "final_auc": aucs[-1],
                "mean_proba_auc": float(roc_auc_score(labels, mean_p)),
                "mean_over_rounds": n_mean, "evaluation_s": eval_s})
    return out


CHILDREN = {"batch": child_batch, "online": child_online, "auc": child_auc,
            "interleaved": child_interleaved}


def run_child(kind: str, spec: dict, in_process: bool = False) -> dict:
    if in_process:                  # --quick: no interpreter start-up per measurement
        try:
            return json.loads(json.dumps(CHILDREN[kind](spec)))
        except Exception as exc:  # noqa: BLE001 (recorded like a failed subprocess)
            return {"n_entities": spec.get("n_entities"),
                    "n_relations": spec.get("n_relations"),
                    "target_n_ones": spec.get("n_ones"), "method": kind,
                    "error": [f"{type(exc).__name__}: {exc}"]}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps([kind, spec])]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"n_entities": spec.get("n_entities"), "n_relations": spec.get("n_relations"),
                "target_n_ones": spec.get("n_ones"), "method": kind,
                "error": proc.stderr.strip().splitlines()[-5:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- online check
def online_unavailable(k: int) -> str | None:
    """None when the estimator accepts ``inference="online"`` and the algorithm runs on a
    tiny problem; else the reason."""
    try:
        from topiclink.families.bpbfm.estimator import BilinearPoissonFactorModel

        BilinearPoissonFactorModel(k, inference="online", batch_size=64)._validate_params()
    except Exception as exc:  # noqa: BLE001 (any failure means: not available yet)
        return f"BilinearPoissonFactorModel(inference='online') raised {type(exc).__name__}: {exc}"
    try:
        _warm_up({"k": k, "seed": 0, "n_jobs": 1}, online=True)
    except Exception as exc:  # noqa: BLE001
        return f"topiclink.families.bpbfm.online failed: {type(exc).__name__}: {exc}"
    return None


# ---------------------------------------------------------------------- summary
def loglog_slope(x: list[float], y: list[float]) -> float | None:
    if len(x) < 2 or len(set(x)) < 2:
        return None
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _t(r: dict) -> float:
    """Seconds per sweep: the interleaved measurement when there is one."""
    return r.get("interleaved_per_sweep_s", r["per_sweep_s"])


def plot(result: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    sc = [r for r in result["batch"]["scaling"] if "per_sweep_s" in r]
    if sc:
        a1.loglog([r["n_ones"] for r in sc], [_t(r) for r in sc], "o-",
                  label="batch sweep (scaling sizes)")
        x0, y0 = sc[0]["n_ones"], _t(sc[0])
        xs = np.array([r["n_ones"] for r in sc], dtype=float)
        a1.loglog(xs, y0 * xs / x0, "k:", lw=1, label="slope 1")
    fs = [r for r in result["batch"].get("fixed_size", []) if "per_sweep_s" in r]
    if fs:
        a1.loglog([r["n_ones"] for r in fs], [_t(r) for r in fs], "d-",
                  mfc="none", label=f"batch sweep, fixed N={_short(fs[0]['n_entities'])} "
                                    f"R={fs[0]['n_relations']}")
    fx = [r for r in result["batch"]["fixed_ones"] if "per_sweep_s" in r]
    if fx:
        a1.loglog([r["n_ones"] for r in fx], [_t(r) for r in fx], "s",
                  mfc="none", label="batch sweep, fixed #ones")
        for r in fx:
            a1.annotate(f"N={_short(r['n_entities'])} R={r['n_relations']}",
                        (r["n_ones"], _t(r)), fontsize=7,
                        xytext=(4, 0), textcoords="offset points")
    on = [r for r in result.get("online", {}).get("scaling", []) if "by_batch_size" in r]
    if on:
        for j, bs in enumerate(b["batch_size"] for b in on[0]["by_batch_size"]):
            a1.loglog([r["n_ones"] for r in on],
                      [r["by_batch_size"][j]["per_step_s"] for r in on], "^--",
                      label=f"online step, batch {bs}")
    a1.set_xlabel("#ones")
    a1.set_ylabel("seconds")
    a1.set_title("seconds per sweep (interleaved) / online step vs #ones")
    a1.legend(fontsize=7)
    auc = result.get("auc", {})
    for name, style in (("batch", "o-"), ("online", "^-")):
        r = auc.get(name)
        if r and "auc" in r:
            a2.plot(r["seconds"], r["auc"], style, ms=3, label=f"{name} (current sample)")
    truth = next((auc[n]["truth_auc"] for n in ("batch", "online")
                  if "truth_auc" in auc.get(n, {})), None)
    if truth is not None:
        a2.axhline(truth, color="k", ls="--", lw=1, label=f"truth {truth:.3f}")
    a2.set_xlabel("seconds (sweeps only)")
    a2.set_ylabel("held-out AUC-ROC")
    sz = auc.get("size")
    if sz:
        a2.set_title(f"AUC vs time (N={sz[0]}, R={sz[1]}, {sz[2]:.0f} ones)")
    a2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _short(n: int) -> str:
    return f"{n / 1000:g}k" if n >= 1000 else str(n)


def _ints(s: str) -> list[int]:
    return [int(float(x)) for x in s.split(",") if x.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", choices=sorted(SIZES), default="paper",
                    help="preset (entities, relations, ones) triples")
    ap.add_argument("--entities", help="comma list (with --relations, --ones: replaces "
                                       "--sizes)")
    ap.add_argument("--relations")
    ap.add_argument("--ones")
    ap.add_argument("--fixed-ones", type=float, default=1_000_000)
    ap.add_argument("--fixed-entities", default="10000,100000")
    ap.add_argument("--fixed-relations", default="100,500")
    ap.add_argument("--no-fixed", action="store_true", help="skip the fixed-#ones part")
    ap.add_argument("--fixed-size", default="100000,500",
                    help="entities,relations of the #ones series at a fixed size")
    ap.add_argument("--fixed-size-ones", default="1000000,2000000,5000000",
                    help="#ones of that series ('' to skip)")
    ap.add_argument("--no-interleave", action="store_true",
                    help="skip the interleaved timing of all batch sizes in one process")
    ap.add_argument("--k", type=int, default=10, help="K (data and fit)")
    ap.add_argument("--model", type=int, choices=(1, 2), default=1)
    ap.add_argument("--n-dictionary", type=int, default=None, help="M (model 2)")
    ap.add_argument("--sweeps", type=int, default=5, help="timed sweeps per size")
    ap.add_argument("--warmup", type=int, default=1, help="untimed sweeps before them")
    ap.add_argument("--methods", default="batch", help="comma list: batch, online")
    ap.add_argument("--batch-sizes", default="1000,10000,100000",
                    help="online minibatch sizes (entries)")
    ap.add_argument("--steps", type=int, default=20, help="timed online steps per size")
    ap.add_argument("--auc-size", default="20000,100,1000000",
                    help="entities,relations,ones of the AUC run")
    ap.add_argument("--auc-sweeps", type=int, default=200,
                    help="sweeps (online: quarter sweeps) of the AUC run")
    ap.add_argument("--auc-zeros", type=float, default=50_000,
                    help="uniformly held-out cells (holdout_tensor_entries)")
    ap.add_argument("--auc-ones-fraction", type=float, default=0.05)
    ap.add_argument("--auc-batch-size", type=int, default=10_000, help="online AUC run")
    ap.add_argument("--no-auc", action="store_true")
    ap.add_argument("--n-jobs", type=int, default=1, help="threads of the sampler")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true",
                    help="tiny sizes, measurements in this process (< 30 s): smoke test")
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).parent / "results" / "bpbfm_scale.json")
    ap.add_argument("--figure", type=Path, default=None,
                    help="default: --out with .png")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, spec = json.loads(args.child)
        print(json.dumps(CHILDREN[kind](spec)))
        return

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods or set(methods) - {"batch", "online"}:
        ap.error(f"--methods: batch and/or online, got {args.methods!r}")
    explicit = [args.entities, args.relations, args.ones]
    if any(explicit):
        if not all(explicit):
            ap.error("--entities, --relations and --ones go together")
        lists = [_ints(x) for x in explicit]
        if len({len(x) for x in lists}) != 1:
            ap.error("--entities, --relations and --ones need the same length")
        sizes = list(zip(*lists, strict=True))
    else:
        sizes = SIZES["quick" if args.quick else args.sizes]
    fixed_size = tuple(_ints(args.fixed_size))
    fixed_size_ones = _ints(args.fixed_size_ones)
    if args.quick:
        fixed_size, fixed_size_ones = (1_000, 15), [10_000, 30_000]
        fixed_ones, fixed_n, fixed_r = QUICK_FIXED
        auc_size = QUICK_AUC
        args.auc_zeros, args.auc_sweeps, args.steps, args.sweeps = 2_000, 8, 5, 3
        args.batch_sizes = "200,1000"
        args.auc_batch_size = 1_000
    else:
        fixed_ones = int(args.fixed_ones)
        fixed_n, fixed_r = _ints(args.fixed_entities), _ints(args.fixed_relations)
        auc_size = tuple(_ints(args.auc_size))
    batch_sizes = _ints(args.batch_sizes)
    base = {"k": args.k, "model": args.model, "n_dictionary": args.n_dictionary,
            "seed": args.seed, "n_jobs": args.n_jobs, "sweeps": args.sweeps,
            "warmup": args.warmup}

    import numba
    import sklearn

    import topiclink

    t_start = time.perf_counter()
    mem_available = _meminfo_gib("MemAvailable")
    load_start = os.getloadavg()
    result: dict = {"benchmark": "bpbfm_scale"}
    skip_online = None
    if "online" in methods:
        skip_online = online_unavailable(args.k)
        if skip_online:
            print(f"online: SKIPPED ({skip_online}); the JSON has no online entries",
                  flush=True)
            methods.remove("online")

    def size_spec(n: int, r: int, ones: int) -> dict:
        return dict(base, n_entities=int(n), n_relations=int(r), n_ones=int(ones))

    batch: dict = {"scaling": [], "fixed_ones": [], "fixed_size": []}
    online: dict = {"scaling": []}
    if "batch" in methods:
        for n, r, ones in sizes:
            row = run_child("batch", size_spec(n, r, ones), args.quick)
            batch["scaling"].append(row)
            _print_batch("scaling", row)
        if not args.no_fixed:
            for n in fixed_n:
                for r in fixed_r:
                    row = run_child("batch", size_spec(n, r, fixed_ones), args.quick)
                    batch["fixed_ones"].append(row)
                    _print_batch("fixed #ones", row)
            done = {(r.get("n_entities"), r.get("n_relations"), r.get("target_n_ones")): r
                    for r in batch["scaling"] + batch["fixed_ones"]}
            for ones in fixed_size_ones:
                key = (fixed_size[0], fixed_size[1], int(ones))
                row = done.get(key) or run_child("batch", size_spec(*key), args.quick)
                batch["fixed_size"].append(row)
                _print_batch("fixed N, R", row)
    if "batch" in methods and not args.no_interleave:
        rows = batch["scaling"] + batch["fixed_ones"] + batch["fixed_size"]
        keys = sorted({(r["n_entities"], r["n_relations"], r["target_n_ones"])
                       for r in rows if "per_sweep_s" in r})
        inter = run_child("interleaved", dict(base, keys=[list(k) for k in keys]),
                          args.quick)
        if "error" in inter:
            print(f"interleaved timing FAILED: {inter['error']}", flush=True)
        else:
            by_key = {tuple(k): sec for k, sec in zip(inter["keys"], inter["seconds"],
                                                      strict=True)}
            for r in rows:
                sec = by_key.get((r.get("n_entities"), r.get("n_relations"),
                                  r.get("target_n_ones")))
                if sec and "interleaved_sweep_seconds" not in r:
                    r["interleaved_sweep_seconds"] = sec
                    r["interleaved_per_sweep_s"] = float(np.median(sec))
                    r["interleaved_min_sweep_s"] = float(np.min(sec))
            for k, sec in zip(inter["keys"], inter["seconds"], strict=True):
                print(f"interleaved  N={k[0]:7d} R={k[1]:4d} ones={k[2]:8d}  "
                      f"{np.median(sec):7.3f} s/sweep (min {np.min(sec):.3f}, "
                      f"{1e9 * np.median(sec) / k[2]:.0f} ns/one)", flush=True)

    if "online" in methods:
        grid = [("scaling", (n, r, ones)) for n, r, ones in sizes]
        if not args.no_fixed:
            grid += [("fixed_ones", (n, r, fixed_ones)) for n in fixed_n for r in fixed_r]
            grid += [("fixed_size", (*fixed_size, ones)) for ones in fixed_size_ones]
        measured: dict = {}
        for part, key in grid:
            key = tuple(int(x) for x in key)
            if key not in measured:
                spec = dict(size_spec(*key), batch_sizes=batch_sizes, steps=args.steps,
                            warmup_steps=2)
                measured[key] = run_child("online", spec, args.quick)
                _print_online(part, measured[key])
            online.setdefault(part, []).append(measured[key])

    auc: dict = {}
    if not args.no_auc:
        auc["size"] = list(auc_size)
        for method in methods:
            spec = dict(size_spec(*auc_size), method=method, auc_sweeps=args.auc_sweeps,
                        auc_zeros=args.auc_zeros, auc_ones_fraction=args.auc_ones_fraction,
                        auc_batch_size=args.auc_batch_size)
            if method == "online" and "batch" in auc and "seconds" in auc["batch"]:
                spec["time_budget_s"] = auc["batch"]["seconds"][-1]
            row = run_child("auc", spec, args.quick)
            auc[method] = row
            if "error" in row:
                print(f"AUC {method}: FAILED {row['error']}", flush=True)
                continue
            print(f"AUC {method} (N={auc_size[0]}, R={auc_size[1]}, {row['n_ones']} ones, "
                  f"{row['heldout_positives']} held-out ones + {row['heldout_negatives']} "
                  f"zeros, {row['n_imputed_per_sweep']} imputed/sweep): truth "
                  f"{row['truth_auc']:.4f}", flush=True)
            for s, a in zip(row["seconds"], row["auc"], strict=True):
                print(f"    {s:8.2f} s  AUC {a:.4f}", flush=True)
            print(f"    mean-probability AUC (last {row['mean_over_rounds']} rounds) "
                  f"{row['mean_proba_auc']:.4f}", flush=True)

    sc = [r for r in batch["scaling"] if "per_sweep_s" in r]
    fx = [r for r in batch["fixed_ones"] if "per_sweep_s" in r]
    summary: dict = {
        "batch_slope_seconds_vs_ones": loglog_slope([r["n_ones"] for r in sc],
                                                    [r["per_sweep_s"] for r in sc]),
        "batch_slope_kernel_seconds_vs_ones": loglog_slope(
            [r["n_ones"] for r in sc if r["kernel_s"]], [r["kernel_s"] for r in sc
                                                          if r["kernel_s"]]),
        "batch_slope_peak_fit_memory_vs_ones": loglog_slope(
            [r["n_ones"] for r in sc], [r["peak_traced_fit_mib"] for r in sc]),
    }
    isc = [r for r in sc if "interleaved_per_sweep_s" in r]
    ifs = [r for r in batch["fixed_size"] if "interleaved_per_sweep_s" in r]
    ifx = [r for r in fx if "interleaved_per_sweep_s" in r]
    summary["interleaved_slope_seconds_vs_ones"] = loglog_slope(
        [r["n_ones"] for r in isc], [r["interleaved_per_sweep_s"] for r in isc])
    summary["interleaved_slope_seconds_vs_ones_at_fixed_size"] = loglog_slope(
        [r["n_ones"] for r in ifs], [r["interleaved_per_sweep_s"] for r in ifs])
    if ifx:
        summary["interleaved_fixed_ones_seconds"] = {
            f"N={r['n_entities']},R={r['n_relations']}": r["interleaved_per_sweep_s"]
            for r in ifx}
    fs = [r for r in batch["fixed_size"] if "per_sweep_s" in r]
    summary["batch_slope_seconds_vs_ones_at_fixed_size"] = loglog_slope(
        [r["n_ones"] for r in fs], [r["per_sweep_s"] for r in fs])
    summary["batch_slope_min_seconds_vs_ones_at_fixed_size"] = loglog_slope(
        [r["n_ones"] for r in fs], [r["min_sweep_s"] for r in fs])
    summary["batch_slope_min_seconds_vs_ones"] = loglog_slope(
        [r["n_ones"] for r in sc], [r["min_sweep_s"] for r in sc])
    summary["batch_ns_per_one"] = {
        f"N={r['n_entities']},R={r['n_relations']},ones={r['n_ones']}": r["ns_per_one"]
        for r in sc + fx + fs}
    if fx:
        lo = min(fx, key=lambda r: (r["n_entities"], r["n_relations"]))
        hi = max(fx, key=lambda r: (r["n_entities"], r["n_relations"]))
        summary["fixed_ones_time_ratio_largest_vs_smallest"] = (
            hi["per_sweep_s"] / lo["per_sweep_s"])
        summary["fixed_ones_cells_ratio_largest_vs_smallest"] = hi["n_cells"] / lo["n_cells"]
        summary["fixed_ones_time_range_s"] = [min(r["per_sweep_s"] for r in fx),
                                              max(r["per_sweep_s"] for r in fx)]
    on_rows = [r for r in online["scaling"] if "by_batch_size" in r]
    on_fs = [r for r in online.get("fixed_size", []) if "by_batch_size" in r]
    on_fx = [r for r in online.get("fixed_ones", []) if "by_batch_size" in r]
    if on_fs:
        summary["online_slope_step_seconds_vs_ones_at_fixed_size"] = {
            str(b["batch_size"]): loglog_slope(
                [r["n_ones"] for r in on_fs],
                [r["by_batch_size"][j]["per_step_s"] for r in on_fs])
            for j, b in enumerate(on_fs[0]["by_batch_size"])}
    if on_fx:
        summary["online_fixed_ones_step_seconds"] = {
            f"N={r['n_entities']},R={r['n_relations']}": {
                str(b["batch_size"]): b["per_step_s"] for b in r["by_batch_size"]}
            for r in on_fx}
    if on_rows:
        summary["online_slope_step_seconds_vs_ones"] = {
            str(b["batch_size"]): loglog_slope(
                [r["n_ones"] for r in on_rows],
                [r["by_batch_size"][j]["per_step_s"] for r in on_rows])
            for j, b in enumerate(on_rows[0]["by_batch_size"])}
        summary["online_slope_step_seconds_vs_batch_size"] = {
            str(r["n_ones"]): loglog_slope([b["batch_size"] for b in r["by_batch_size"]],
                                           [b["per_step_s"] for b in r["by_batch_size"]])
            for r in on_rows}
    print("summary: " + json.dumps(summary), flush=True)

    try:
        numba_threads = int(numba.get_num_threads())
    except Exception:  # noqa: BLE001
        numba_threads = None
    result.update({
        "data": {
            "generator": "topiclink.families.bpbfm.synthetic.make_bpbfm_data (planted blocks:"
                         " dirichlet_a=(1, 0.02), active_fraction=0.5, one off-diagonal "
                         "block, background 0.01, gamma_shape 10; binary; n_ones sets the "
                         "expected number of ones)",
            "model": f"BPBFM-{args.model}", "n_components": args.k,
            "n_dictionary": args.n_dictionary, "seed": args.seed,
        },
        "protocol": (
            f"each measurement in its own subprocess (one at a time); Numba warm-up on a "
            f"60-entity problem first; batch: BPBFMGibbs driven directly (init, step), "
            f"{args.warmup} untimed + {args.sweeps} timed sweeps, per-sweep = median of "
            f"the timed sweeps, kernel_s = BPBFMGibbs.counts (latent counts + allocation), "
            f"rest_s = U, shrinkage, matrices; n_jobs={args.n_jobs}; peak memory of drawing"
            f" the data and of the fit (BPBFMData + init + sweeps; the tensor already in "
            f"memory): tracemalloc peak (numpy allocations; the fit traced on a separate "
            f"untimed pass of one sweep) and peak RSS above the RSS at the phase start "
            f"(a lower bound when the allocator reuses freed memory); dense reference "
            f"N^2 R cells at 8 bytes (float64) and 1 byte (bool). Online: "
            f"BPBFMOnline.minibatch_step on uniformly drawn entries, 2 untimed + "
            f"{args.steps} timed steps per batch size. AUC: held-out = uniform cells "
            f"(holdout_tensor_entries) + a sample of the ones, imputed every sweep; AUC of "
            f"the current sample after every sweep (online: every quarter sweep of "
            f"minibatches) against the summed sweep time (evaluation excluded)"),
        "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
                    if k != "child"},
        "batch": batch,
    })
    if on_rows or online["scaling"]:
        result["online"] = online
    if skip_online:
        result["online_skipped"] = skip_online
    result["auc"] = auc
    result["summary"] = summary
    result["total_seconds"] = time.perf_counter() - t_start
    result["topiclink_version"] = topiclink.__version__
    result["machine"] = {
        "python": platform.python_version(), "cpu_count": os.cpu_count(),
        "platform": platform.platform(), "numpy": np.__version__,
        "numba": numba.__version__, "sklearn": sklearn.__version__,
        "numba_threads": numba_threads, "n_jobs": args.n_jobs,
        "mem_total_gib": _meminfo_gib("MemTotal"), "mem_available_gib_at_start": mem_available,
        "load_average_start": list(load_start), "load_average_end": list(os.getloadavg()),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    fig = args.figure or args.out.with_suffix(".png")
    try:
        plot(result, fig)
        print(f"figure {fig}")
    except Exception as exc:  # noqa: BLE001 (the JSON is the result; the figure is extra)
        print(f"figure not written: {type(exc).__name__}: {exc}")
    print(f"written {args.out} ({result['total_seconds']:.0f} s)")


def _meminfo_gib(field: str) -> float | None:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        return None
    return None


def _print_online(part: str, r: dict) -> None:
    if "error" in r:
        print(f"online {part}: N={r['n_entities']} R={r['n_relations']} FAILED {r['error']}",
              flush=True)
        return
    for b in r["by_batch_size"]:
        print(f"online {part:10s} N={r['n_entities']:7d} R={r['n_relations']:4d} "
              f"ones={r['n_ones']:8d} batch {b['batch_size']:6d}: "
              f"{b['per_step_s'] * 1e3:8.2f} ms/step (min {b['min_step_s'] * 1e3:.2f}, "
              f"{b['us_per_entry']:.2f} us/entry)", flush=True)


def _print_batch(part: str, r: dict) -> None:
    if "error" in r:
        print(f"{part}: N={r['n_entities']} R={r['n_relations']} FAILED {r['error']}",
              flush=True)
        return
    kern = f"kernel {r['kernel_s']:.2f} s" if r.get("kernel_s") is not None else ""
    print(f"{part:12s} N={r['n_entities']:7d} R={r['n_relations']:4d} ones={r['n_ones']:8d}"
          f"  {r['per_sweep_s']:7.3f} s/sweep ({kern}, {r['ns_per_one']:.0f} ns/one)  gen "
          f"{r['generate_s']:.1f} s  peak gen {r['peak_traced_generate_mib']:.0f} MiB traced / "
          f"{r['peak_rss_generate_mib']:.0f} RSS, fit {r['peak_traced_fit_mib']:.0f} traced / "
          f"{r['peak_rss_fit_mib']:.0f} RSS (process {r['process_peak_rss_fit_mib']:.0f}) "
          f"vs dense {r['dense_float64_gib']:.3g} GiB", flush=True)


if __name__ == "__main__":
    main()
