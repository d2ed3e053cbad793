"""How much faster could BPBFM-1's Gibbs sweep be with the entries grouped like MAP-EM's
E-step?  A timing probe for the next step of issue 24, not the sampler.

The production kernel (:func:`topiclink.families.bpbfm.kernels.sweep_entries`) spends
O(K^2) per entry: the rate ``u_i^T Lambda^r u_j`` and, for an entry with a latent count,
the cumulative weights of its K^2 cells.  Grouped by the entity a relation's entries share
on one side (:func:`topiclink.families.bpbfm.em.relation_groups`), with ``M = Lambda^r``
when grouped by tail and ``M = Lambda^r^T`` when grouped by head:

- ``P = U[group entities] M^T`` once per relation (BLAS): ``P_g = M u_g``;
- per entry (other entity o): the rate ``u_o . P_g`` (O(K)), the latent count, and per
  unit of it the factor of o, ``k_o ~ u_o,k P_g,k`` (O(K)), then the factor of g given it,
  ``k_g ~ M[k_o, k] u_g,k`` (O(K)).  ``(k1, k2) = (k_o, k_g)`` by tail, ``(k_g, k_o)`` by
  head: the same joint law over the K^2 cells as the production kernel's one draw.

It draws from other random numbers than the production kernel, so a sampler built on it
would change every fixed-seed Gibbs output; the test
``tests/families/bpbfm/test_bench_grouped_allocation.py`` checks the law.  Run::

    OPENBLAS_NUM_THREADS=1 NUMBA_NUM_THREADS=1 python \\
        benchmarks/bpbfm_grouped_allocation_probe.py --topics 20,50,100
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from numba import njit

from topiclink.families.bpbfm import kernels
from topiclink.families.bpbfm.algorithm import BPBFMData
from topiclink.families.bpbfm.em import relation_groups
from topiclink.kernels.counts import zero_truncated_poisson_draw
from topiclink.kernels.rng import seed_state, uniform


@njit(cache=True)
def _search(cum: np.ndarray, n: int, target: float) -> int:
    lo, hi = 0, n - 1
    while lo < hi:                     # smallest index with cum > target
        mid = (lo + hi) >> 1
        if cum[mid] > target:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def grouped_allocation(other: np.ndarray, group: np.ndarray, entities: np.ndarray,
                       by_head: bool, U: np.ndarray, P: np.ndarray, M: np.ndarray,
                       state: np.ndarray, n_ent: np.ndarray, x_cells_r: np.ndarray) -> int:
    """Latent counts of one relation's ones (binary data) and their allocation,
    accumulated into ``n_ent`` (N, K) and ``x_cells_r`` (K, K); the total count."""
    K = U.shape[1]
    cum_o = np.empty(K)
    cum_g = np.empty(K)
    total = 0
    for e in range(other.shape[0]):
        o = other[e]
        g = group[e]
        ent = entities[g]
        acc = 0.0
        for k in range(K):
            acc += U[o, k] * P[g, k]
            cum_o[k] = acc
        x = zero_truncated_poisson_draw(acc, state)
        total += x
        for _ in range(x):
            ko = _search(cum_o, K, uniform(state) * acc)
            acc_g = 0.0
            for k in range(K):
                acc_g += M[ko, k] * U[ent, k]
                cum_g[k] = acc_g
            kg = _search(cum_g, K, uniform(state) * acc_g)
            n_ent[o, ko] += 1
            n_ent[ent, kg] += 1
            if by_head:
                x_cells_r[kg, ko] += 1
            else:
                x_cells_r[ko, kg] += 1
    return total


def grouped_sweep(data: BPBFMData, U: np.ndarray, L: np.ndarray, seed: int
                  ) -> tuple[np.ndarray, np.ndarray, int]:
    """(n_ent, x_cells, total count) of one allocation sweep over the ones."""
    N, K = U.shape
    n_ent = np.zeros((N, K), np.int64)
    x_cells = np.zeros(L.shape, np.int64)
    state = np.zeros(4, dtype=np.uint64)
    seed_state(np.uint64(seed), state)
    total = 0
    for r, g in enumerate(relation_groups(data)):
        if g.entities.size == 0:
            continue
        M = np.ascontiguousarray(L[r].T if g.by_head else L[r])
        P = U[g.entities] @ M.T
        total += grouped_allocation(g.other, g.group, g.entities, g.by_head, U, P, M,
                                    state, n_ent, x_cells[r])
    return n_ent, x_cells, total


def production_sweep(data: BPBFMData, U: np.ndarray, L: np.ndarray, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray, int]:
    """The production kernel on the same ones (one chunk, one stream)."""
    N, K = U.shape
    R = L.shape[0]
    n_ent = np.zeros((N, K), np.int64)
    x_cells = np.zeros(L.shape, np.int64)
    state = np.zeros(4, dtype=np.uint64)
    seed_state(np.uint64(seed), state)
    total = kernels.sweep_entries(
        data.heads, data.rels, data.tails, data.kinds, data.values, 0, data.n_observed,
        U, L, L, np.arange(R + 1, dtype=np.int64), np.arange(R, dtype=np.int64),
        np.ones(R), False, state, n_ent, x_cells, np.zeros((0, 0), np.int64))
    return n_ent, x_cells, int(total)


def main() -> None:
    from topiclink.datasets import load_dataset

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default="20,50,100")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    data = BPBFMData.from_tensor(load_dataset("fb15k-237").tensor["train"], True)
    rng = np.random.default_rng(0)
    for K in (int(k) for k in args.topics.split(",")):
        U = rng.dirichlet(np.ones(data.n_entities), K).T.copy()     # columns sum to 1
        L = rng.gamma(1.0, 50.0, (data.n_relations, K, K))
        grouped_sweep(data, U, L, 0)                              # compile, build groups
        production_sweep(data, U, L)
        times: dict[str, list[float]] = {"grouped": [], "production": []}
        for rep in range(args.repeats):
            t0 = time.perf_counter()
            grouped_sweep(data, U, L, rep)
            times["grouped"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            production_sweep(data, U, L, rep)
            times["production"].append(time.perf_counter() - t0)
        med = {k: float(np.median(v)) for k, v in times.items()}
        print(json.dumps({"K": K, "ones": int(data.n_observed), **med,
                          "speedup": med["production"] / med["grouped"]}), flush=True)


if __name__ == "__main__":
    main()
