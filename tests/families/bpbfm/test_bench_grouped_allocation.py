"""benchmarks/bpbfm_grouped_allocation_probe.py: the grouped allocation it times must draw
from the same law as the production kernel, or its speed-up means nothing.  Per relation
the expected allocation of the latent counts to the cells (k1, k2) is ``Lambda^r *
S_lam[r]`` and to the entities' factors ``U * S_u``, with EM's E-step statistics
(:func:`topiclink.families.bpbfm.em.estep`: ``w_e = 1 / (1 - exp(-rate_e))`` is the mean
of the zero-truncated count over the rate).  The mean of many sweeps is checked against
them within 5 standard errors, with the ones grouped by head and by tail, and the
production kernel against the same figures."""

from __future__ import annotations

import numpy as np
import pytest

from tests.benchmark_module import benchmark_module
from topiclink.data.tensor import RelationalTensor
from topiclink.families.bpbfm import em as em_module
from topiclink.families.bpbfm.algorithm import BPBFMData

SWEEPS = 3000


@pytest.fixture(scope="module")
def bench():
    with benchmark_module("bpbfm_grouped_allocation_probe") as module:
        yield module


def _case():
    rng = np.random.default_rng(5)
    N, R, K = 5, 2, 3
    x = rng.random((R, N, N)) < 0.35
    r, h, t = np.nonzero(x)
    data = BPBFMData.from_tensor(RelationalTensor(h, r, t, np.ones(h.size), N, R), True)
    U = rng.gamma(1.0, 1.0, (N, K))
    L = rng.gamma(1.0, 0.6, (R, K, K))
    return data, U, L


def _check_mean(draws, expected):
    mean = draws.mean(axis=0)
    se = np.sqrt(np.maximum(draws.var(axis=0), 1e-12) / draws.shape[0])
    z = np.abs(mean - expected) / se
    assert np.all(z < 5.0), (z.max(), mean, expected)


@pytest.mark.parametrize("side", ["head", "tail"])
def test_grouped_allocation_has_the_expected_means(bench, side, monkeypatch):
    monkeypatch.setattr(em_module, "GROUP_SIDE", side)
    data, U, L = _case()
    _, S_lam, S_u = em_module.estep(U, L, data, True, True)
    cells, ents = [], []
    for s in range(SWEEPS):
        n_ent, x_cells, total = bench.grouped_sweep(data, U, L, s)
        assert total == n_ent.sum() // 2 == x_cells.sum()
        cells.append(x_cells)
        ents.append(n_ent)
    _check_mean(np.array(cells, dtype=float), L * S_lam)
    _check_mean(np.array(ents, dtype=float), U * S_u)


def test_the_production_kernel_has_the_same_means(bench):
    data, U, L = _case()
    _, S_lam, S_u = em_module.estep(U, L, data, True, True)
    cells, ents = [], []
    for s in range(SWEEPS):
        n_ent, x_cells, _ = bench.production_sweep(data, U, L, s)
        cells.append(x_cells)
        ents.append(n_ent)
    _check_mean(np.array(cells, dtype=float), L * S_lam)
    _check_mean(np.array(ents, dtype=float), U * S_u)
