"""Geweke joint-distribution test of the BPBFM-2 batch Gibbs sampler (dictionary model).

The BPBFM-1 test lives in ``tests/families/bpbfm/test_bpbfm.py``; this one covers what BPBFM-2 adds:
the dictionary G^m, the weights eta_mr (``Lambda^r = sum_m eta_mr G^m``), the effective
exposure ``theta_eff^m = sum_r eta_mr`` in the G and shrinkage updates, and the (R, M)
allocation counts of the eta update, on binary and on count data.  Simulators in
``tests/families/bpbfm/bpbfm_geweke.py``.

Set-up (fixed before running): N = 4 entities, R = 3 relations, K = 2, M = 2, every cell
observed, priors a = 0.5, gamma0 = 2, c0 = 0.5, e0 = f0 = beta = h0 = q0 = 1; 20 000
marginal-conditional draws against 20 000 production Gibbs steps with a data
regeneration every 5 steps; 25 test functions (U, log d, log eps, G/(1+G), eta/(1+eta),
Lambda/(1+Lambda), the data total and data x parameter interactions).

Thresholds.  Binary data as the BPBFM-1 test: |z| < 3.5 for every function with the
exact conditionals (seed 3); max |z| > 5 for the broken sender-only U (seed 3).

Count data need more than one seed.  With the grouped sweep (``kernels.sweep_groups``),
the exact sampler's max |z| over the 25 functions exceeded 3.5 at 10 of seeds 0-29 and 5
at 3 of them (2: 5.17, 11: 6.24, 23: 5.92), mostly the data x U interactions; the
per-entry kernel before it did the same (8 and 3 of 30: 13: 5.33, 26: 5.48, 29: 7.52).
So one seed at 3.5 fails a correct sampler a third of the time: the spectral variance
of those heavy-tailed functions is underestimated, for either kernel, and the old seed
(4) passed by luck (it gives 4.62 now).  The counts test therefore takes the median over
seeds 0, 1, 2 of the max |z|: below 5 for the exact sampler (a false alarm needs two of
three seeds above 5, about 3 % at the measured 10 % per seed), above 5 for the printed
row-only d conditional, which exceeded 5 at every one of seeds 0-9 (5.24-14.59; binary
sender-only U: 5.49-10.35).

Recorded max |z| with the grouped sweep: exact, binary (seed 3) below 3.5; exact,
counts (seeds 0, 1, 2): 1.95, 2.18, 5.17; row-only d, counts (seeds 0, 1, 2): 14.59,
5.67, 7.00; sender-only U, binary (seed 3): 7.63.  Sender-only U on counts is the weakest
broken case (2.66-9.96 over seeds 0-9), so it is not one of the failing cases here.
"""

from __future__ import annotations

import numpy as np
import pytest

from .bpbfm_geweke import GewekeSetup, geweke

N_ITER = 20_000
INNER = 5


def _run(binary: bool, seed: int, **flags) -> dict[str, float]:
    return geweke(GewekeSetup(N=4, R=3, K=2, M=2, binary=binary), seed, N_ITER, INNER,
                  **flags)


#: the seeds of the count-data tests (the median of their max |z| is tested)
COUNT_SEEDS = (0, 1, 2)


def _max_abs(z: dict[str, float]) -> float:
    return max(abs(v) for v in z.values())


@pytest.mark.slow
def test_geweke_bpbfm2_exact_conditionals_pass_binary():
    z = _run(True, 3)
    assert len(z) == 25 and {"eta", "G01", "log d0", "log eps", "U00", "data"} <= set(z)
    assert _max_abs(z) < 3.5, z


@pytest.mark.slow
def test_geweke_bpbfm2_exact_conditionals_pass_counts():
    worst = [_max_abs(_run(False, seed)) for seed in COUNT_SEEDS]
    assert np.median(worst) < 5, worst


@pytest.mark.slow
def test_geweke_bpbfm2_broken_sender_only_u_fails_binary():
    z = _run(True, 3, u_counts="sender")
    assert _max_abs(z) > 5, z


@pytest.mark.slow
def test_geweke_bpbfm2_broken_row_only_d_fails_counts():
    worst = [_max_abs(_run(False, seed, d_conditional="rows")) for seed in COUNT_SEEDS]
    assert np.median(worst) > 5, worst
