"""Geweke (2004) joint-distribution test of the gSLDA Gibbs sampler (logistic loss, c = 1).

Model (``docs/design/slda.md``), tiny so that both simulators are cheap: D = 5 documents
of 3, 4, 3, 4, 3 tokens, V = 4 words, K = 2 topics, alpha = (0.7, 0.7), beta = 0.5,
eta ~ N(0, nu^2 I_K) with nu^2 = 1, and one binary label per document,
y_d ~ Bernoulli(sigmoid(omega_d)), omega_d = eta^T zbar_d -- the logistic loss with c = 1,
the only setting whose label term is a proper likelihood.  (With c != 1 or the hinge loss
the label term is an unnormalised pseudo-likelihood psi(y | omega); the sampler then
targets a joint whose (eta, z) marginal is the prior tilted by prod_d sum_y psi(y | omega_d),
which the marginal-conditional simulator below cannot draw from directly.)

With Polya-Gamma augmentation (c = 1) the augmented joint is

    p(eta) p(z) p(w | z) prod_d 2^{-1} exp((y_d - 1/2) omega_d - lambda_d omega_d^2 / 2)
                                PG(lambda_d | 1, 0),

whose lambda-marginal is the model above and in which y_d and lambda_d are independent
given omega_d (y ~ Bernoulli(sigmoid(omega)), lambda ~ PG(1, omega)).

Marginal-conditional simulator: eta, theta, phi, z, w, y drawn from the generative model.

Successive-conditional simulator.  The chain is a :class:`SupervisedState` with one binary
chain, built by the production :meth:`SupervisedGibbs.init` (loss="logistic", c = 1, one
thread) and then overwritten in place by one exact draw from the joint (z and its counts,
w, eta, y, lambda).  One iteration (every step leaves p(eta, z, w, y, lambda) invariant;
the state is recorded after step 5):

1-3. one call of :meth:`SupervisedGibbs.step` -- the iteration ``SupervisedTopicModel.fit``
   runs: eta | z, y, lambda (Gaussian, precision I/nu^2 + sum_d b_d zbar_d zbar_d^T,
   linear term sum_d a_d zbar_d), z | w, y, eta, lambda (the exact relational Z sweep with
   one out-pair per document to a virtual node whose vector is eta), lambda | z, eta, y
   (PG(1, omega_d), written into state.a, state.b);
4. w | z (, eta, y, lambda)    -- an exact draw from the collapsed p(w | z) by
   :func:`topiclink.diagnostics.geweke.redraw_words` (phi_k ~ Dir(beta) afresh,
   w_n ~ phi_{z_n}; w enters the joint only through p(w | z)), written in place into the
   data's word array and state.nwk, which the algorithm reads;
5. (y, lambda) | z, eta, w     -- y_d ~ Bernoulli(sigmoid(omega_d)) written in place into
   the data's targets, then lambda redrawn by the production ``augment`` given the new y,
   so that (a, b) = (y - 1/2, lambda) match the new labels before the next eta step
   (written in place into state.a, state.b).  (For c = 1, y and lambda are independent
   given omega, so the draw of step 3 would stay valid; what must not go stale is
   a = y - 1/2.  Step 3's draw is never used -- it is part of the production step.)

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

from topiclink.diagnostics.geweke import (
    categorical_draws,
    empirical_topic_proportions,
    format_zscores,
    geweke_zscores,
    redraw_words,
)
from topiclink.families.slda.algorithm import SupervisedData, SupervisedGibbs, SupervisedState
from topiclink.relational.augment import augment
from topiclink.relational.kernels import rtm as rtm_kernels
from topiclink.relational.kernels import rtm_mh
from topiclink.topics.kernels import lda as lda_kernels
from topiclink.topics.lda import TokenData

K = 2
V = 4
LENGTHS = np.array([3, 4, 3, 4, 3], dtype=np.int64)
D = LENGTHS.size
N_TOKENS = int(LENGTHS.sum())
ALPHA = np.full(K, 0.7)
BETA = 0.5
NU2 = 1.0
C = 1.0
OFFSETS = np.concatenate([[0], np.cumsum(LENGTHS)]).astype(np.int64)
TOKEN_DOC = np.repeat(np.arange(D), LENGTHS)

# twice the gRTM test's sizes: with one label per document of 3-4 tokens the Z step's label
# term is weak, and at 20_000 / 40_000 the broken sampler below was caught by 5 of 6 seeds
# only (max |z| from +3.9 to +7.0)
N_MC = 40_000
N_SC = 80_000
SEED = 20130804
# 11 test functions, fixed before running.  Bonferroni: |z| > 4 has two-sided normal
# probability 6.3e-5, so a correct sampler fails with probability <= 11 * 6.3e-5 = 7.0e-4
# (<= 2.4e-3 even if the 49-degree-of-freedom batch-means standard error made each score
# t_49-distributed).  The seed is fixed, so the outcome is deterministic anyway.
THRESHOLD = 4.0


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _zbar(z: np.ndarray) -> np.ndarray:
    """(R, N) topic assignments -> (R, D, K) empirical topic proportions."""
    return empirical_topic_proportions(z, OFFSETS, K)


def g_values(eta: np.ndarray, z: np.ndarray, w: np.ndarray, y: np.ndarray
             ) -> dict[str, np.ndarray]:
    """g(state) for R states: eta (R, K), z and w (R, N), y (R, D)."""
    zbar = _zbar(z)
    omega = np.einsum("rdk,rk->rd", zbar, eta)
    y = y.astype(np.float64)
    return {
        "eta_0": eta[:, 0],
        "eta_1": eta[:, 1],
        "eta_0^2": eta[:, 0] ** 2,
        "eta_0*eta_1": eta[:, 0] * eta[:, 1],
        "mean y": y.mean(axis=1),
        "mean omega": omega.mean(axis=1),
        "mean y*omega": (y * omega).mean(axis=1),
        "frac z=0": (z == 0).mean(axis=1),
        "sum zbar^2": (zbar**2).sum(axis=(1, 2)),
        "z0=z1 & w0=w1": ((z[:, 0] == z[:, 1]) & (w[:, 0] == w[:, 1])).astype(np.float64),
        # labels of documents with similar topic proportions agree (through the shared eta)
        "[y0=y1] * zbar0.zbar1": (y[:, 0] == y[:, 1]) * (zbar[:, 0] * zbar[:, 1]).sum(axis=1),
    }


def marginal_conditional(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Test functions at ``n`` independent draws from the generative model."""
    eta = rng.normal(0.0, np.sqrt(NU2), size=(n, K))
    theta = rng.dirichlet(ALPHA, size=(n, D))
    phi = rng.dirichlet(np.full(V, BETA), size=(n, K))
    z = categorical_draws(rng, theta[:, TOKEN_DOC])
    w = categorical_draws(rng, phi[np.arange(n)[:, None], z])
    omega = np.einsum("rdk,rk->rd", _zbar(z), eta)
    y = rng.random(omega.shape) < _sigmoid(omega)
    return g_values(eta, z, w, y)


@contextlib.contextmanager
def z_sweep_with_b_scaled(scale: float, sampler: str = "gibbs") -> Iterator[None]:
    """Break the production Z step on purpose: its sweep kernel sees b = ``scale`` * lambda
    (the eta step and the lambda draws are untouched)."""
    module, name = ((rtm_kernels, "sweep_relational") if sampler == "gibbs"
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


def initial_state(rng: np.random.Generator, algorithm: SupervisedGibbs
                  ) -> tuple[SupervisedState, SupervisedData]:
    """The production ``init`` (one chain), overwritten in place by one exact draw from
    the joint (z, w, eta, y, lambda)."""
    theta = rng.dirichlet(ALPHA, size=D)
    phi = rng.dirichlet(np.full(V, BETA), size=K)
    z = categorical_draws(rng, theta[TOKEN_DOC]).astype(np.int32)
    w = categorical_draws(rng, phi[z]).astype(np.int32)
    tokens = TokenData(w, TOKEN_DOC.astype(np.int32), OFFSETS, D, V)
    data = SupervisedData(tokens, np.zeros((1, D), np.int8))
    state = algorithm.init(data, rng)
    state.z[0] = z
    for counts in (state.ndk, state.nwk, state.nk):
        counts[:] = 0
    lda_kernels.init_counts(tokens.words, tokens.docs, state.z[0], state.ndk[0],
                            state.nwk[0], state.nk[0])
    state.eta[0] = rng.normal(0.0, np.sqrt(NU2), size=K)
    omega = (state.ndk[0] / tokens.lengths[:, None]) @ state.eta[0]
    data.targets[0] = rng.random(D) < _sigmoid(omega)
    state.a[0], state.b[0] = augment(rng, "logistic", omega,
                                     data.targets[0].astype(np.float64), np.full(D, C))
    return state, data


def successive_conditional(rng: np.random.Generator, n_iter: int, b_scale: float = 1.0,
                           prior_var_scale: float = 1.0, sampler: str = "gibbs"
                           ) -> dict[str, np.ndarray]:
    """Test functions along ``n_iter`` iterations of the chain of the module docstring
    (``sampler``: the production Z step's kernel).

    ``b_scale`` != 1 breaks the Z step on purpose (the sweep sees b = b_scale * lambda);
    ``prior_var_scale`` != 1 breaks the eta step (prior variance nu^2 * prior_var_scale).
    """
    algorithm = SupervisedGibbs(K, ALPHA, BETA, loss="logistic", c=C, hinge_cost=1.0,
                                weight_prior_var=NU2 * prior_var_scale, n_threads=1,
                                sampler=sampler)
    state, data = initial_state(rng, algorithm)
    tokens = data.tokens
    lengths = tokens.lengths[:, None]
    cs = np.full(D, C)

    rec_eta = np.empty((n_iter, K))
    rec_z = np.empty((n_iter, N_TOKENS), np.int32)
    rec_w = np.empty((n_iter, N_TOKENS), np.int32)
    rec_y = np.empty((n_iter, D), np.int8)
    broken = (z_sweep_with_b_scaled(b_scale, sampler) if b_scale != 1.0
              else contextlib.nullcontext())
    with broken:
        for t in range(n_iter):
            # 1-3. eta | z, y, lambda; z | w, y, eta, lambda; lambda | z, eta, y
            algorithm.step(state, data)
            # 4. w | z: phi ~ Dir(beta) afresh, w_n ~ phi_{z_n}; nwk rebuilt
            redraw_words(rng, state.z[0], tokens.words, state.nwk[0], BETA)
            # 5. y | z, eta, then lambda | z, eta, y
            omega = (state.ndk[0] / lengths) @ state.eta[0]
            data.targets[0] = rng.random(D) < _sigmoid(omega)
            state.a[0], state.b[0] = augment(rng, "logistic", omega,
                                             data.targets[0].astype(np.float64), cs)
            rec_eta[t] = state.eta[0]
            rec_z[t] = state.z[0]
            rec_w[t] = tokens.words
            rec_y[t] = data.targets[0]
    return g_values(rec_eta, rec_z, rec_w, rec_y)


def run_geweke(seed: int = SEED, n_mc: int = N_MC, n_sc: int = N_SC, sampler: str = "gibbs",
               **broken: float) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    mc = marginal_conditional(rng, n_mc)
    sc = successive_conditional(rng, n_sc, sampler=sampler, **broken)
    return geweke_zscores(mc, sc)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["gibbs", "mh"])
def test_gslda_sampler_passes_geweke(sampler: str) -> None:
    """The production step with the exact Gibbs Z sweep, and with the Metropolis-Hastings
    one (label factor as the acceptance correction)."""
    t0 = time.perf_counter()
    z = run_geweke(sampler=sampler)
    report = format_zscores(z, THRESHOLD)
    print(f"\nGeweke z-scores, correct sampler ({time.perf_counter() - t0:.1f} s):\n{report}")
    bad = {k: v for k, v in z.items() if not abs(v) < THRESHOLD}
    assert not bad, f"Geweke test failed (|z| >= {THRESHOLD}):\n{report}"


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["gibbs", "mh"])
def test_geweke_detects_a_broken_z_step(sampler: str) -> None:
    """The same test with the production Z sweep's quadratic coefficient doubled
    (b = 2 lambda).

    At seed 20130804 and these sample sizes: "sum zbar^2" z = +7.6 (the broken sweep pulls
    omega_d towards 0, i.e. zbar_d towards mixed proportions), "mean y*omega" z = +2.5;
    with the Metropolis-Hastings sweep +6.2 and +2.4 (its correct run: all |z| < 1.1).
    (The hand-built copy of the iteration that this test used before it called the
    production step gave "sum zbar^2" z = +8.9, +10.3, +6.0, +6.3, +7.9, +6.8 at seeds
    20130804, 1, 2, 3, 4, 5 and "mean y*omega" z = +1.6 to +3.7; a broken eta step, prior
    variance 2 nu^2 via ``prior_var_scale=2``, was caught with far more margin: "eta_0^2"
    z = -75, -74 at seeds 20130804, 1.)
    """
    t0 = time.perf_counter()
    z = run_geweke(b_scale=2.0, sampler=sampler)
    report = format_zscores(z, THRESHOLD)
    print(f"\nGeweke z-scores, Z step with b doubled ({time.perf_counter() - t0:.1f} s):"
          f"\n{report}")
    assert max(abs(v) for v in z.values()) > THRESHOLD, report
