"""FB15k-237, kg protocol: what limits BPBFM-1 by MAP-EM (issue 24)?  Five questions,
each answered by the valid filtered MRR (2,000 valid triples, the fixed subsample of
``benchmarks/kg_fb15k237_vs_pykeen.py``; head and tail, every entity a candidate):

- ``restarts``: EM lands on one of many modes.  Fit ``--seeds`` restarts (seeds 0, 1, ...)
  of ``--iterations`` iterations each and rank with the average of their probabilities
  (what ``BilinearPoissonFactorModelEM(n_chains=...)`` does): the MRR of each restart alone
  and of the average of the first 1, 2, ... restarts.
- ``prior``: the rate b of the Gamma(1, b) prior on every entry of U and Lambda
  (``prior_rate``, default 5), one restart per value of ``--rates``.
- ``untied``: the same likelihood with separate head and tail factors, rate
  ``u_i^T Lambda^r v_j`` (U for heads, V for tails: twice the entity parameters), fitted
  by exact block ECM (Lambda, U, V, each after a fresh E-step; with untied factors every
  block's M-step is exact), against the tied model of the library at the same K and
  iterations.  Not a library option: this script is the whole implementation.
- ``degree``: relation-specific degrees.  The rate ``u_i^T Lambda^r u_j`` makes entity i's
  share of relation r's heads (or tails) what its factors say; FB15k-237's relations
  have heads and tails of their own.  Scale it by per-(relation, entity) factors,
  ``a_ri b_rj u_i^T Lambda^r u_j``, ``a, b ~ Gamma(1 + alpha, rate alpha)`` (mode 1),
  and fit them after the tied fit, with (U, Lambda) held: each one's latent count taken
  as 1, a and b are the exact conditional maximisers ``a_ri = (n_ri + alpha) / (u_i^T
  Lambda^r sum_j b_rj u_j + alpha)`` (n_ri: the ones with head i in relation r) and the
  same for b, alternated ``--alternations`` times from b = 1 (coordinate ascent on the
  Poisson posterior of (a, b): it never decreases).  A plug-in on top of the fitted
  model, not a joint fit; one row per ``--alphas`` value.
- ``degree_joint``: the same degree factors fitted jointly with untied factors, rate
  ``a_ri b_rj u_i^T Lambda^r v_j``, by exact block ECM (blocks Lambda, U, V, A, B; the
  first ``--alphas`` value).

One thread; the E-step is :func:`topiclink.families.bpbfm.em.estep`'s (BLAS per
relation).  Run it as::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bpbfm_fb15k237_em_limits.py \\
        --questions restarts,prior,untied --topics 200 --iterations 25 \\
        --out benchmarks/results/bpbfm_fb15k237_em_limits.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from topiclink.datasets import load_dataset
from topiclink.families.bpbfm.algorithm import BPBFMData
from topiclink.families.bpbfm.em import EPS, OnesByRelation, normalised
from topiclink.families.bpbfm.estimator_em import BilinearPoissonFactorModelEM
from topiclink_reproductions.bpbfm import KGTask, evaluate_kg, kg_task


def _sibling(name: str) -> Any:
    """A sibling benchmark loaded from its file (this folder never goes on sys.path)."""
    path = Path(__file__).resolve().parent / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_topiclink_bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fb = _sibling("kg_fb15k237_vs_pykeen")      # the valid subsample and the sample scorer


@njit(cache=True)
def add_rows(target: np.ndarray, index: np.ndarray, rows: np.ndarray) -> None:
    """``target[index[e]] += rows[e]`` for every e, in order (``numpy.add.at``, faster)."""
    for e in range(index.shape[0]):
        for k in range(rows.shape[1]):
            target[index[e], k] += rows[e, k]


def tasks(seed: int = 0, valid_queries: int = 2000) -> tuple[KGTask, KGTask]:
    """(train task, valid task): the benchmark's valid subsample (its seed + 1)."""
    ds = load_dataset("fb15k-237")
    task = kg_task(ds.tensor)
    v = ds.tensor["valid"]
    triples = np.column_stack([v.heads, v.relations, v.tails]).astype(np.int64)
    return task, replace(task, test=fb._subsample(triples, valid_queries, seed + 1))


def fit_tied(task: KGTask, K: int, iterations: int, rate: float, seed: int
             ) -> tuple[np.ndarray, np.ndarray, float]:
    """(U, Lambda) normalised as the estimator publishes them, and the fit's seconds."""
    t0 = time.perf_counter()
    m = BilinearPoissonFactorModelEM(K, max_iter=iterations, tol=0.0, prior_rate=rate,
                                     random_state=seed).fit(task.train)
    U, L = normalised(m.state_.U, m.state_.L)
    return U, L, time.perf_counter() - t0


def restarts(task: KGTask, valid: KGTask, K: int, iterations: int, seeds: int,
             rate: float) -> list[dict[str, Any]]:
    samples: list[tuple[int, np.ndarray, np.ndarray]] = []
    rows = []
    for s in range(seeds):
        U, L, seconds = fit_tied(task, K, iterations, rate, s)
        samples.append((s, U, L))
        rows.append({"seed": s, "fit_seconds": seconds,
                     "valid_mrr": evaluate_kg(fb.SampleScorer(samples[-1:]), valid)["mrr"],
                     "valid_mrr_averaged": evaluate_kg(fb.SampleScorer(samples),
                                                       valid)["mrr"]})
        print(json.dumps({"restarts": rows[-1]}), flush=True)
    return rows


def prior(task: KGTask, valid: KGTask, K: int, iterations: int, rates: list[float]
          ) -> list[dict[str, Any]]:
    rows = []
    for rate in rates:
        U, L, seconds = fit_tied(task, K, iterations, rate, 0)
        rows.append({"em_prior_rate": rate, "fit_seconds": seconds,
                     "valid_mrr": evaluate_kg(fb.SampleScorer([(0, U, L)]), valid)["mrr"]})
        print(json.dumps({"prior": rows[-1]}), flush=True)
    return rows


class DegreeScorer:
    """Scores ``1 - exp(-a_rh b_rt u_h^T Lambda^r v_t)`` of every candidate
    (``evaluate_kg``'s batch interface); ``A``, ``B`` (R, N) the head and tail degree
    factors, ``V`` the tail factors (default: ``U``, tied)."""

    def __init__(self, U: np.ndarray, L: np.ndarray, A: np.ndarray, B: np.ndarray,
                 V: np.ndarray | None = None) -> None:
        self.U, self.L, self.A, self.B = U, L, A, B
        self.V = U if V is None else V

    def score_tails_batch(self, heads: np.ndarray, relations: np.ndarray) -> np.ndarray:
        q = np.einsum("bk,bkl->bl", self.U[heads], self.L[relations])
        rate = (q @ self.V.T) * self.B[relations] * self.A[relations, heads][:, None]
        return -np.expm1(-rate)

    def score_heads_batch(self, relations: np.ndarray, tails: np.ndarray) -> np.ndarray:
        p = np.einsum("bl,bkl->bk", self.V[tails], self.L[relations])
        rate = (p @ self.U.T) * self.A[relations] * self.B[relations, tails][:, None]
        return -np.expm1(-rate)


def degree_counts(tensor: Any) -> tuple[np.ndarray, np.ndarray]:
    """(n_head (R, N), n_tail (R, N)): the nonzero entries with head (tail) i in relation r."""
    N, R = int(tensor.n_entities), int(tensor.n_relations)
    nz = np.asarray(tensor.values) > 0
    r = np.asarray(tensor.relations)[nz].astype(np.int64)
    n_head = np.bincount(r * N + np.asarray(tensor.heads)[nz], minlength=R * N)
    n_tail = np.bincount(r * N + np.asarray(tensor.tails)[nz], minlength=R * N)
    return n_head.reshape(R, N).astype(float), n_tail.reshape(R, N).astype(float)


def degree_factors(n_head: np.ndarray, n_tail: np.ndarray, U: np.ndarray, L: np.ndarray,
                   alpha: float, alternations: int) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) (R, N) by ``alternations`` rounds of the conditional maximisers (module
    docstring, ``degree``), from B = 1."""
    B = np.ones_like(n_tail)
    A = np.ones_like(n_head)
    for _ in range(alternations):
        s_b = B @ U                                        # (R, K): sum_j b_rj u_j
        A = (n_head + alpha) / (np.einsum("rkl,rl->rk", L, s_b) @ U.T + alpha)
        s_a = A @ U                                        # (R, K): sum_i a_ri u_i
        B = (n_tail + alpha) / (np.einsum("rk,rkl->rl", s_a, L) @ U.T + alpha)
    return A, B


def degree(task: KGTask, valid: KGTask, K: int, iterations: int, rate: float,
           alphas: list[float], alternations: list[int]) -> dict[str, Any]:
    """The tied fit's valid MRR, then with degree factors for each alpha and number of
    alternations."""
    U, L, seconds = fit_tied(task, K, iterations, rate, 0)
    n_head, n_tail = degree_counts(task.train)
    keys = ("mrr", "mrr_head", "mrr_tail", "hits_at_10")
    base = evaluate_kg(DegreeScorer(U, L, np.ones_like(n_head), np.ones_like(n_tail)),
                       valid)
    out: dict[str, Any] = {"K": K, "iterations": iterations, "fit_seconds": seconds,
                           "tied": {k: float(base[k]) for k in keys}, "rows": []}
    print(json.dumps({"degree": out["tied"]}), flush=True)
    for alpha in alphas:
        for n_alt in alternations:
            t0 = time.perf_counter()
            A, B = degree_factors(n_head, n_tail, U, L, alpha, n_alt)
            extra = time.perf_counter() - t0
            m = evaluate_kg(DegreeScorer(U, L, A, B), valid)
            out["rows"].append({"alpha": alpha, "alternations": n_alt,
                                "degree_seconds": extra, **{k: float(m[k]) for k in keys}})
            print(json.dumps({"degree": out["rows"][-1]}), flush=True)
    return out


class UntiedScorer:
    """Scores ``1 - exp(-u_h^T Lambda^r v_t)`` of every candidate, a batch of queries at
    once (``evaluate_kg``'s batch interface)."""

    def __init__(self, U: np.ndarray, V: np.ndarray, L: np.ndarray) -> None:
        self.U, self.V, self.L = U, V, L

    def score_tails_batch(self, heads: np.ndarray, relations: np.ndarray) -> np.ndarray:
        q = np.einsum("bk,bkl->bl", self.U[heads], self.L[relations])
        return -np.expm1(-(q @ self.V.T))

    def score_heads_batch(self, relations: np.ndarray, tails: np.ndarray) -> np.ndarray:
        p = np.einsum("bl,bkl->bk", self.V[tails], self.L[relations])
        return -np.expm1(-(p @ self.U.T))


def untied_estep(ones: OnesByRelation, U: np.ndarray, V: np.ndarray, L: np.ndarray,
                 block: str, A: np.ndarray | None = None, B: np.ndarray | None = None
                 ) -> np.ndarray:
    """The E-step statistic of ``block`` ("L", "U", "V"; with degree factors ``A``, ``B``
    (R, N) also "A", "B") over the ones (binary data): ``S_L[r] = sum w u_h v_t^T``,
    ``S_U[h] += w Lambda^r v_t``, ``S_V[t] += w Lambda^r^T u_h``, ``w = 1 / (1 -
    exp(-rate))``; with degree factors the rate is ``c lam``, ``c = a_rh b_rt``, ``w = c /
    (1 - exp(-c lam))``, and ``S_A[r, h]`` / ``S_B[r, t]`` sum the expected latent counts
    ``w lam``."""
    K = U.shape[1]
    if block == "L":
        S = np.zeros_like(L)
    elif block in ("A", "B"):
        S = np.zeros((L.shape[0], U.shape[0]))
    else:
        S = np.zeros_like(U)
    size = max(1, (2 ** 21) // K)
    for r in range(L.shape[0]):
        for lo in range(int(ones.ptr[r]), int(ones.ptr[r + 1]), size):
            hi = min(lo + size, int(ones.ptr[r + 1]))
            h, t = ones.heads[lo:hi], ones.tails[lo:hi]
            Uh, Vt = U[h], V[t]
            LV = Vt @ L[r].T
            lam = np.einsum("ek,ek->e", Uh, LV)
            if A is None:
                w = 1.0 / -np.expm1(-lam)
            else:
                c = A[r, h] * B[r, t]
                w = c / -np.expm1(-c * lam)
            if block == "L":
                S[r] += (Uh * w[:, None]).T @ Vt
            elif block == "U":
                add_rows(S, h, LV * w[:, None])
            elif block == "V":
                add_rows(S, t, (Uh @ L[r]) * w[:, None])
            else:
                np.add.at(S[r], h if block == "A" else t, w * lam)
    return S


def untied_block(ones: OnesByRelation, U: np.ndarray, V: np.ndarray, L: np.ndarray,
                 rate: float, block: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(U, V, Lambda) after the exact M-step of ``block`` given the others:
    ``x <- (x S + EPS) / (D + b)`` with the block's exposure D, the sum over every cell
    of the other factors' part of the rate: ``D_L = (sum_i u_i)(sum_j v_j)^T``, ``D_U =
    sum_r Lambda^r sum_j v_j``, ``D_V = sum_r Lambda^r^T sum_i u_i``."""
    S = untied_estep(ones, U, V, L, block)
    if block == "L":
        return U, V, (L * S + EPS) / (np.outer(U.sum(0), V.sum(0))[None] + rate)
    if block == "U":
        return (U * S + EPS) / (np.einsum("rkl,l->k", L, V.sum(0)) + rate), V, L
    return U, (V * S + EPS) / (np.einsum("rkl,k->l", L, U.sum(0)) + rate), L


def untied_start(task: KGTask, K: int
                 ) -> tuple[OnesByRelation, np.ndarray, np.ndarray, np.ndarray]:
    """(the ones by relation, U, V, Lambda): the untied fits' start, seed 0."""
    data = BPBFMData.from_tensor(task.train, True)
    rng = np.random.default_rng(0)
    N, R = data.n_entities, data.n_relations
    U, V = rng.gamma(1.0, 1.0, (N, K)), rng.gamma(1.0, 1.0, (N, K))
    return OnesByRelation.of(data), U, V, rng.gamma(1.0, 0.1, (R, K, K))


def ecm_curve(name: str, iteration: Callable[[], Any], iterations: int, valid: KGTask,
              every: int) -> list[dict[str, Any]]:
    """Run ``iteration()`` (one ECM cycle; returns the scorer of the new state)
    ``iterations`` times; the valid MRR every ``every`` iterations and at the end, the
    evaluations off the clock."""
    curve = []
    t0 = time.perf_counter()
    for it in range(1, iterations + 1):
        scorer = iteration()
        if it % every == 0 or it == iterations:
            seconds = time.perf_counter() - t0
            m = evaluate_kg(scorer, valid)
            curve.append({"iteration": it, "fit_seconds": seconds,
                          **{k: float(m[k]) for k in ("mrr", "mrr_head", "mrr_tail")}})
            print(json.dumps({name: curve[-1]}), flush=True)
            t0 += time.perf_counter() - t0 - seconds       # evaluation off the clock
    return curve


def untied(task: KGTask, valid: KGTask, K: int, iterations: int, rate: float,
           every: int = 5) -> dict[str, Any]:
    """Block ECM of the untied model (module docstring); the valid MRR every ``every``
    iterations, then the tied model's at the same K and iterations."""
    ones, U, V, L = untied_start(task, K)

    def iteration() -> UntiedScorer:
        nonlocal U, V, L
        for block in ("L", "U", "V"):
            U, V, L = untied_block(ones, U, V, L, rate, block)
        return UntiedScorer(U, V, L)

    curve = ecm_curve("untied", iteration, iterations, valid, every)
    Ut, Lt, seconds = fit_tied(task, K, iterations, rate, 0)
    m = evaluate_kg(fb.SampleScorer([(0, Ut, Lt)]), valid)
    tied = {"iteration": iterations, "fit_seconds": seconds,
            **{k: float(m[k]) for k in ("mrr", "mrr_head", "mrr_tail")}}
    print(json.dumps({"tied": tied}), flush=True)
    return {"untied_curve": curve, "tied_final": tied}


def degree_block(ones: OnesByRelation, U: np.ndarray, V: np.ndarray, L: np.ndarray,
                 A: np.ndarray, B: np.ndarray, rate: float, alpha: float, block: str
                 ) -> tuple[np.ndarray, ...]:
    """(U, V, Lambda, A, B) after the exact M-step of ``block`` of the untied model with
    degree factors, rate ``a_ri b_rj u_i^T Lambda^r v_j`` (module docstring, ``degree``):
    with ``s_a[r] = sum_i a_ri u_i`` and ``s_b[r] = sum_j b_rj v_j`` the exposures are
    ``D_L[r] = s_a[r] s_b[r]^T``, ``D_U = A^T (Lambda^r s_b[r])_r``, ``D_V = B^T
    (Lambda^r^T s_a[r])_r``, ``D_A[r, i] = u_i^T Lambda^r s_b[r]``, ``D_B[r, j] =
    s_a[r]^T Lambda^r v_j``; ``a <- (S_A + alpha) / (D_A + alpha)`` (prior Gamma(1 +
    alpha, alpha)), the factors as :func:`untied_block`."""
    S = untied_estep(ones, U, V, L, block, A, B)
    s_a, s_b = A @ U, B @ V                                   # (R, K)
    if block == "L":
        D = s_a[:, :, None] * s_b[:, None, :]
        return U, V, (L * S + EPS) / (D + rate), A, B
    if block in ("U", "A"):
        Q = np.einsum("rkl,rl->rk", L, s_b)
        if block == "U":
            return (U * S + EPS) / (A.T @ Q + rate), V, L, A, B
        return U, V, L, (S + alpha) / (Q @ U.T + alpha), B
    Q = np.einsum("rk,rkl->rl", s_a, L)
    if block == "V":
        return U, (V * S + EPS) / (B.T @ Q + rate), L, A, B
    return U, V, L, A, (S + alpha) / (Q @ V.T + alpha)


def degree_joint(task: KGTask, valid: KGTask, K: int, iterations: int, rate: float,
                 alpha: float, every: int = 5) -> dict[str, Any]:
    """Block ECM of the untied model with degree factors fitted jointly (blocks L, U, V,
    A, B), from the untied model's start; the valid MRR every ``every`` iterations."""
    ones, U, V, L = untied_start(task, K)
    A, B = np.ones((L.shape[0], U.shape[0])), np.ones((L.shape[0], U.shape[0]))

    def iteration() -> DegreeScorer:
        nonlocal U, V, L, A, B
        for block in ("L", "U", "V", "A", "B"):
            U, V, L, A, B = degree_block(ones, U, V, L, A, B, rate, alpha, block)
        return DegreeScorer(U, L, A, B, V)

    return {"K": K, "alpha": alpha,
            "curve": ecm_curve("degree_joint", iteration, iterations, valid, every)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", default="restarts,prior,untied")
    ap.add_argument("--topics", type=int, default=200)
    ap.add_argument("--iterations", type=int, default=25)
    ap.add_argument("--seeds", type=int, default=4, help="restarts")
    ap.add_argument("--rates", default="0.5,5,50", help="prior_rate values (the Gamma(1, b) prior)")
    ap.add_argument("--rate", type=float, default=5.0, help="prior rate of the others")
    ap.add_argument("--alphas", default="0.5,2,10", help="degree prior alpha values")
    ap.add_argument("--alternations", default="1,5", help="degree: rounds of (a, b)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    task, valid = tasks()
    result: dict[str, Any] = {
        "benchmark": "bpbfm_fb15k237_em_limits", "args": {**vars(args), "out": str(args.out)},
        "machine": {"cpu": fb._cpu(), "cpu_count": os.cpu_count(),
                    "python": platform.python_version(),
                    "load_average_at_start": list(os.getloadavg())},
        "valid_queries": int(len(valid.test))}
    questions = [q for q in args.questions.split(",") if q]
    if "restarts" in questions:
        result["restarts"] = restarts(task, valid, args.topics, args.iterations, args.seeds,
                                      args.rate)
    if "prior" in questions:
        result["prior"] = prior(task, valid, args.topics, args.iterations,
                                [float(x) for x in args.rates.split(",")])
    if "untied" in questions:
        result["untied"] = untied(task, valid, args.topics, args.iterations, args.rate)
    if "degree_joint" in questions:
        result["degree_joint"] = degree_joint(task, valid, args.topics, args.iterations,
                                              args.rate,
                                              float(args.alphas.split(",")[0]))
    if "degree" in questions:
        result["degree"] = degree(task, valid, args.topics, args.iterations, args.rate,
                                  [float(x) for x in args.alphas.split(",")],
                                  [int(x) for x in args.alternations.split(",")])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(args.out)
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
