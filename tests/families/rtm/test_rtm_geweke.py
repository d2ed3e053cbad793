"""Geweke (2004) joint-distribution test of the gRTM Gibbs sampler (Gibbs-gRTM, exact Z step).

Model (``docs/design/grtm.md``), tiny so that both simulators are cheap: D = 4 documents
of 3, 4, 3, 4 tokens, V = 4 words, K = 2 topics, alpha = (0.7, 0.7), beta = 0.5, full
U ~ N(0, nu^2 I_{K x K}) with nu^2 = 1, the fixed set I of all 12 ordered pairs of the 4
documents, and y_ij ~ Bernoulli(sigmoid(omega_ij)), omega_ij = zbar_i^T U zbar_j, for every
(i, j) in I -- the logistic loss with c = 1, the only setting whose link term is a proper
likelihood.  (With c != 1 or the hinge loss the link term is an unnormalised
pseudo-likelihood psi(y | omega); the sampler then targets a joint whose (U, z) marginal is
the prior tilted by prod_ij sum_y psi(y | omega_ij), which the marginal-conditional
simulator below cannot draw from without rejection or importance sampling.)

With Polya-Gamma augmentation (c = 1) the augmented joint is

    p(U) p(z) p(w | z) prod_ij 2^{-1} exp((y_ij - 1/2) omega_ij - lambda_ij omega_ij^2 / 2)
                                 PG(lambda_ij | 1, 0),

whose lambda-marginal is the model above and in which y_ij and lambda_ij are independent
given omega_ij (y ~ Bernoulli(sigmoid(omega)), lambda ~ PG(1, omega)).

Marginal-conditional simulator: U, theta, phi, z, w, y drawn from the generative model.

Successive-conditional simulator.  The chain is a :class:`RelationalState` built by the
production :meth:`RelationalGibbs.init` (loss="logistic", c = 1, full U, approx=False, one
thread) on the links of all 12 ordered pairs with ``negative_ratio=0``, so that its
training pairs are exactly I, ordered by their later endpoint as ``training_pairs`` orders
them; its topics, counts, words, U, labels and (a, b) are then overwritten in place by one
exact draw from the joint.  One iteration (every step leaves p(U, z, w, y, lambda)
invariant; the state is recorded after step 5):

1-3. one call of :meth:`RelationalGibbs.step` -- the iteration ``RelationalTopicModel.fit``
   runs: U | z, y, lambda (Gaussian), z | w, y, U, lambda (the exact relational Z sweep
   with the pairs' (a, b)), lambda | z, U, y (PG(1, omega_ij), written into state.a, b);
4. w | z (, U, y, lambda)      -- an exact draw from the collapsed p(w | z) by
   :func:`topiclink.diagnostics.geweke.redraw_words` (phi_k ~ Dir(beta) afresh,
   w_n ~ phi_{z_n}; w enters the joint only through p(w | z)), written in place into the
   data's word array and state.nwk, which the algorithm reads;
5. (y, lambda) | z, U, w       -- y_ij ~ Bernoulli(sigmoid(omega_ij)) written in place into
   state.pair_y (the algorithm's pair set and augmenter hold references to it), then lambda
   redrawn by the production ``augment`` given the new y, so that (a, b) = (y - 1/2,
   lambda) match the new labels before the next U step (written in place into state.a,
   state.b).  (For c = 1, y and lambda are independent given omega, so the draw of step 3
   would stay valid; what must not go stale is a = y - 1/2.  Step 3's draw is never used
   -- it is part of the production step.)

The test runs with both samplers of step 3's lambda draws (``augmentation="reference"``,
the ``polyagamma`` package per chunk, and ``"numba"``, the all-pairs Numba kernel).

Only steps 4 and 5, which are outside the sampler (the data are fixed in a fit), are done
by this test.  The means of the test functions under the two simulators are compared with
:func:`topiclink.diagnostics.geweke.geweke_zscores` (batch means for the chain).
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Iterator
from unittest import mock

import numpy as np
import pytest

from topiclink.data.links import Links
from topiclink.diagnostics.geweke import (
    categorical_draws,
    empirical_topic_proportions,
    format_zscores,
    geweke_zscores,
    redraw_words,
)
from topiclink.families.rtm.algorithm import RelationalData, RelationalGibbs, RelationalState
from topiclink.parameters import Negatives
from topiclink.relational.augment import augment
from topiclink.relational.kernels import rtm as rtm_kernels
from topiclink.relational.kernels import rtm_mh
from topiclink.relational.weights import pair_omega
from topiclink.topics.kernels import lda as lda_kernels
from topiclink.topics.lda import TokenData

K = 2
V = 4
LENGTHS = np.array([3, 4, 3, 4], dtype=np.int64)
D = LENGTHS.size
N_TOKENS = int(LENGTHS.sum())
ALPHA = np.full(K, 0.7)
BETA = 0.5
NU2 = 1.0
C = 1.0
OFFSETS = np.concatenate([[0], np.cumsum(LENGTHS)]).astype(np.int64)
TOKEN_DOC = np.repeat(np.arange(D), LENGTHS)
# all ordered pairs (i, j), i != j: every document is the source of 3 and the target of 3
ALL_PAIRS = np.argwhere(~np.eye(D, dtype=bool)).astype(np.int64)
# ... in the sampler's order, by the later endpoint (stable): (0, 1), (1, 0), (0, 2), ...
_BY_LATER = np.argsort(ALL_PAIRS.max(axis=1), kind="stable")
SOURCE, TARGET = ALL_PAIRS[_BY_LATER, 0], ALL_PAIRS[_BY_LATER, 1]
N_PAIRS = SOURCE.size

N_MC = 20_000
N_SC = 40_000
SEED = 20040601
# 12 test functions, fixed before running.  Bonferroni: |z| > 4 has two-sided normal
# probability 6.3e-5, so a correct sampler fails with probability <= 12 * 6.3e-5 = 7.6e-4
# (<= 2.6e-3 even if the 49-degree-of-freedom batch-means standard error made each score
# t_49-distributed).  The seed is fixed, so the outcome is deterministic anyway.
THRESHOLD = 4.0


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _zbar(z: np.ndarray) -> np.ndarray:
    """(R, N) topic assignments -> (R, D, K) empirical topic proportions."""
    return empirical_topic_proportions(z, OFFSETS, K)


def g_values(U: np.ndarray, z: np.ndarray, w: np.ndarray, y: np.ndarray
             ) -> dict[str, np.ndarray]:
    """g(state) for R states: U (R, K, K), z and w (R, N), y (R, |I|) in the order
    (SOURCE, TARGET)."""
    zbar = _zbar(z)
    omega = np.einsum("rpk,rkl,rpl->rp", zbar[:, SOURCE], U, zbar[:, TARGET])
    y = y.astype(np.float64)
    return {
        "U[0,0]": U[:, 0, 0],
        "U[0,1]": U[:, 0, 1],
        "U[0,0]^2": U[:, 0, 0] ** 2,
        "U[0,1]*U[1,0]": U[:, 0, 1] * U[:, 1, 0],
        "mean y": y.mean(axis=1),
        "mean omega": omega.mean(axis=1),
        "mean y*omega": (y * omega).mean(axis=1),
        "frac z=0": (z == 0).mean(axis=1),
        "sum zbar^2": (zbar**2).sum(axis=(1, 2)),
        "frac w=0 & z=0": ((w == 0) & (z == 0)).mean(axis=1),
        # pair 0 is (0, 1)
        "y01 * zbar0.zbar1": y[:, 0] * (zbar[:, 0] * zbar[:, 1]).sum(axis=1),
        "z0=z1 & w0=w1": ((z[:, 0] == z[:, 1]) & (w[:, 0] == w[:, 1])).astype(np.float64),
    }


def marginal_conditional(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Test functions at ``n`` independent draws from the generative model."""
    U = rng.normal(0.0, np.sqrt(NU2), size=(n, K, K))
    theta = rng.dirichlet(ALPHA, size=(n, D))
    phi = rng.dirichlet(np.full(V, BETA), size=(n, K))
    z = categorical_draws(rng, theta[:, TOKEN_DOC])
    w = categorical_draws(rng, phi[np.arange(n)[:, None], z])
    zbar = _zbar(z)
    omega = np.einsum("rpk,rkl,rpl->rp", zbar[:, SOURCE], U, zbar[:, TARGET])
    y = rng.random(omega.shape) < _sigmoid(omega)
    return g_values(U, z, w, y)


@contextlib.contextmanager
def z_sweep_with_b_scaled(scale: float, sampler: str = "gibbs") -> Iterator[None]:
    """Break the production Z step on purpose: its sweep kernel sees b = ``scale`` * lambda
    (the U step and the lambda draws are untouched)."""
    module, name = ((rtm_kernels, "sweep_relational_range") if sampler == "gibbs"
                    else (rtm_mh, "sweep_relational_mh_range"))
    kernel = getattr(module, name)
    signature = inspect.signature(kernel.py_func)

    def broken(*args: object, **kwargs: object) -> None:
        bound = signature.bind(*args, **kwargs)
        for name in ("out_b", "in_b"):
            bound.arguments[name] = scale * bound.arguments[name]
        kernel(*bound.args, **bound.kwargs)

    with mock.patch.object(module, name, broken):
        yield


def initial_state(rng: np.random.Generator, algorithm: RelationalGibbs
                  ) -> tuple[RelationalState, RelationalData]:
    """The production ``init`` on the pairs I, overwritten in place by one exact draw from
    the joint (z, w, U, y, lambda)."""
    theta = rng.dirichlet(ALPHA, size=D)
    phi = rng.dirichlet(np.full(V, BETA), size=K)
    z = categorical_draws(rng, theta[TOKEN_DOC]).astype(np.int32)
    w = categorical_draws(rng, phi[z]).astype(np.int32)
    tokens = TokenData(w, TOKEN_DOC.astype(np.int32), OFFSETS, D, V)
    data = RelationalData(tokens, Links.from_pairs(ALL_PAIRS, D, directed=True))
    state = algorithm.init(data, rng)
    assert np.array_equal(state.pair_source, SOURCE)
    assert np.array_equal(state.pair_target, TARGET)
    assert np.all(state.pair_c == C)
    state.z[:] = z
    for counts in (state.ndk, state.nwk, state.nk):
        counts[:] = 0
    lda_kernels.init_counts(tokens.words, tokens.docs, state.z, state.ndk, state.nwk,
                            state.nk)
    state.U = rng.normal(0.0, np.sqrt(NU2), size=(K, K))
    omega = pair_omega(state.ndk / tokens.lengths[:, None], state.U, SOURCE, TARGET)
    state.pair_y[:] = rng.random(N_PAIRS) < _sigmoid(omega)
    state.a[:], state.b[:] = augment(rng, "logistic", omega, state.pair_y.astype(np.float64),
                                     state.pair_c)
    return state, data


def successive_conditional(rng: np.random.Generator, n_iter: int, b_scale: float = 1.0,
                           approx: bool = False, augmentation: str = "reference",
                           sampler: str = "gibbs") -> dict[str, np.ndarray]:
    """Test functions along ``n_iter`` iterations of the chain of the module docstring.

    ``b_scale`` != 1 or ``approx`` break the Z step on purpose (the sweep sees
    b = b_scale * lambda, or uses the paper's approximate link term).  ``augmentation``
    picks the production step's lambda sampler ("reference": the polyagamma package per
    chunk; "numba": :func:`topiclink.relational.kernels.augment.augment_pair_chunks`);
    ``sampler`` the Z step's kernel.
    """
    algorithm = RelationalGibbs(K, ALPHA, BETA, loss="logistic", full=True, approx=approx,
                                c=C, hinge_cost=1.0, weight_prior_var=NU2,
                                negatives=Negatives(ratio=0.0, weight=C), n_threads=1,
                                augmentation=augmentation, sampler=sampler)
    state, data = initial_state(rng, algorithm)
    tokens = data.tokens
    lengths = tokens.lengths[:, None]

    rec_U = np.empty((n_iter, K, K))
    rec_z = np.empty((n_iter, N_TOKENS), np.int32)
    rec_w = np.empty((n_iter, N_TOKENS), np.int32)
    rec_y = np.empty((n_iter, N_PAIRS), np.int8)
    broken = (z_sweep_with_b_scaled(b_scale, sampler) if b_scale != 1.0
              else contextlib.nullcontext())
    with broken:
        for t in range(n_iter):
            # 1-3. U | z, y, lambda; z | w, y, U, lambda; lambda | z, U, y
            algorithm.step(state, data)
            # 4. w | z: phi ~ Dir(beta) afresh, w_n ~ phi_{z_n}; nwk rebuilt
            redraw_words(rng, state.z, tokens.words, state.nwk, BETA)
            # 5. y | z, U, then lambda | z, U, y
            omega = pair_omega(state.ndk / lengths, state.U, SOURCE, TARGET)
            state.pair_y[:] = rng.random(N_PAIRS) < _sigmoid(omega)
            state.a[:], state.b[:] = augment(rng, "logistic", omega,
                                             state.pair_y.astype(np.float64), state.pair_c)
            rec_U[t] = state.U
            rec_z[t] = state.z
            rec_w[t] = tokens.words
            rec_y[t] = state.pair_y
    return g_values(rec_U, rec_z, rec_w, rec_y)


def run_geweke(seed: int = SEED, n_mc: int = N_MC, n_sc: int = N_SC, **broken: object
               ) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    mc = marginal_conditional(rng, n_mc)
    sc = successive_conditional(rng, n_sc, **broken)
    return geweke_zscores(mc, sc)


@pytest.mark.slow
@pytest.mark.parametrize(("augmentation", "sampler"),
                         [("reference", "gibbs"), ("numba", "gibbs"), ("numba", "mh")])
def test_grtm_sampler_passes_geweke(augmentation: str, sampler: str) -> None:
    """The production step with the exact Gibbs Z sweep and with the Metropolis-Hastings
    one (the link factor as its acceptance correction, full U)."""
    t0 = time.perf_counter()
    z = run_geweke(augmentation=augmentation, sampler=sampler)
    report = format_zscores(z, THRESHOLD)
    print(f"\nGeweke z-scores, correct sampler ({time.perf_counter() - t0:.1f} s):\n{report}")
    bad = {k: v for k, v in z.items() if not abs(v) < THRESHOLD}
    assert not bad, f"Geweke test failed (|z| >= {THRESHOLD}):\n{report}"


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["gibbs", "mh"])
def test_geweke_detects_a_broken_z_step(sampler: str) -> None:
    """The same test with the production Z sweep's quadratic coefficient doubled
    (b = 2 lambda).

    At seed 20040601 and these sample sizes: "sum zbar^2" z = +20.8, "mean y*omega" z =
    +6.2, "z0=z1 & w0=w1" z = +4.1.  (The hand-built copy of the iteration that this test
    used before it called the production step gave "sum zbar^2" z = +20.5, +20.8, +19.1,
    +18.5 and "mean y*omega" z = +7.2, +6.2, +6.7, +7.0 at seeds 20040601, 1, 2, 3; the
    paper's approximate Z step, ``approx=True``, was caught too but with less margin, "sum
    zbar^2" z from -4.3 to -7.1 over six seeds, so it is not the one asserted here.)
    With the Metropolis-Hastings sweep: "sum zbar^2" z = +21.9, "mean y*omega" +8.0 (its
    correct run, augmentation "numba": all |z| < 1.8).
    """
    t0 = time.perf_counter()
    z = run_geweke(b_scale=2.0, sampler=sampler)
    report = format_zscores(z, THRESHOLD)
    print(f"\nGeweke z-scores, Z step with b doubled ({time.perf_counter() - t0:.1f} s):"
          f"\n{report}")
    assert max(abs(v) for v in z.values()) > THRESHOLD, report
