"""Geweke joint-distribution simulators of the BPBFM batch Gibbs sampler, shared helpers.

Generalises the BPBFM-1 helpers of ``tests/families/bpbfm/test_bpbfm.py`` to either model (BPBFM-1:
``M = None``; BPBFM-2: a dictionary of M matrices with weights eta) and either data kind
(binary ones through the Bernoulli-Poisson link, or Poisson counts).  Every cell of the
tiny tensor is observed (no held-out entries), so the exposure is exactly 1.

The successive-conditional simulator runs the production :meth:`BPBFMGibbs.step` and
redraws the data every ``inner`` steps (see ``G_INNER`` in ``tests/families/bpbfm/test_bpbfm.py``
for
why more than one step per regeneration: a sampler that drops part of a statistic can
still be invariant when the data are thrown away after each step).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from topiclink.diagnostics.geweke import geweke_zscores
from topiclink.families.bpbfm import kernels as kernels
from topiclink.families.bpbfm.algorithm import BPBFMData, BPBFMGibbs


@dataclass(frozen=True)
class GewekeSetup:
    """A tiny BPBFM and its priors (names as :class:`BPBFMGibbs`)."""

    N: int = 4
    R: int = 3
    K: int = 2
    M: int | None = 2
    binary: bool = True
    priors: dict = field(default_factory=lambda: {
        "a": 0.5, "gamma0": 2.0, "c0": 0.5, "e0": 1.0, "f0": 1.0, "beta": 1.0,
        "h0": 1.0, "q0": 1.0})

    @property
    def n_matrices(self) -> int:
        return self.R if self.M is None else self.M


@dataclass
class Draws:
    """Parameters of T draws (the leading axis), stacked."""

    U: np.ndarray        # (T, N, K)
    G: np.ndarray        # (T, M', K, K)
    eta: np.ndarray      # (T, M, R) or (T, 0, 0)
    d: np.ndarray        # (T, M', K)
    eps: np.ndarray      # (T, M')

    def __getitem__(self, i: int) -> Draws:
        return Draws(*(getattr(self, k)[i:i + 1] for k in ("U", "G", "eta", "d", "eps")))


def relation_matrices(s: GewekeSetup, p: Draws) -> np.ndarray:
    """Lambda (T, R, K, K)."""
    if s.M is None:
        return p.G
    return np.einsum("tmr,tmkl->trkl", p.eta, p.G)


def prior_draw(s: GewekeSetup, rng: np.random.Generator, T: int = 1) -> Draws:
    """``T`` independent draws of every parameter from its prior."""
    q, K, Mp = s.priors, s.K, s.n_matrices
    d = rng.gamma(q["gamma0"] / K, 1 / q["c0"], size=(T, Mp, K))
    eps = rng.gamma(q["e0"], 1 / q["f0"], size=(T, Mp))
    S = d[..., :, None] * d[..., None, :]
    S[..., np.arange(K), np.arange(K)] = eps[..., None] * d
    G = rng.gamma(S) / q["beta"]
    eta = (np.zeros((T, 0, 0)) if s.M is None
           else rng.gamma(q["h0"], 1 / q["q0"], size=(T, s.M, s.R)))
    U = rng.dirichlet(np.full(s.N, q["a"]), size=(T, K)).transpose(0, 2, 1)
    return Draws(U, G, eta, d, eps)


def draw_data(s: GewekeSetup, rng: np.random.Generator, p: Draws) -> np.ndarray:
    """The tensors (T, R, N, N), ones (0/1) or counts, given the parameters."""
    rate = np.einsum("tik,trkl,tjl->trij", p.U, relation_matrices(s, p), p.U)
    if s.binary:
        return (rng.random(rate.shape) < -np.expm1(-rate)).astype(np.float64)
    return rng.poisson(rate).astype(np.float64)


def as_data(s: GewekeSetup, Y: np.ndarray) -> BPBFMData:
    """One fully observed tensor ``Y`` (R, N, N) as the kernel reads it."""
    r, h, t = np.nonzero(Y)
    kind = kernels.KIND_ONE if s.binary else kernels.KIND_COUNT
    return BPBFMData(h.astype(np.int32), r.astype(np.int32), t.astype(np.int32),
                     np.full(r.size, kind, np.int8), Y[r, h, t].astype(np.float64),
                     s.N, s.R, s.binary, r.size)


def statistics(s: GewekeSetup, p: Draws, Y: np.ndarray) -> dict[str, np.ndarray]:
    """Functions of (parameters, data), one value per draw: U, d, eps, G (as G/(1+G),
    bounded), eta and Lambda (BPBFM-2), the total of the data and data-parameter
    interactions (senders, receivers)."""
    U, ld = p.U, np.log(p.d)
    g = p.G / (1 + p.G)
    out = {"U00": U[:, 0, 0], "U00^2": U[:, 0, 0] ** 2,
           "log d0": ld[..., 0].mean(1), "log d1": ld[..., 1].mean(1),
           "log d0^2": (ld[..., 0] ** 2).mean(1), "log eps": np.log(p.eps).mean(1),
           "G00": g[:, :, 0, 0].mean(1), "G01": g[:, :, 0, 1].mean(1),
           "G10": g[:, :, 1, 0].mean(1), "G0_00": g[:, 0, 0, 0], "G0_01": g[:, 0, 0, 1]}
    if s.M is not None:
        e = p.eta / (1 + p.eta)
        L = relation_matrices(s, p)
        out.update({"eta": e.mean((1, 2)), "eta00": e[:, 0, 0],
                    "eta^2": (e ** 2).mean((1, 2)), "eta0-eta1": (e[:, 0] - e[:, 1]).mean(1),
                    "Lambda/(1+Lambda)": (L / (1 + L)).mean((1, 2, 3)),
                    "eta*data": np.einsum("tr,trij->t", p.eta[:, 0], Y)})
    u0, u2 = U[..., 0], (U ** 2).sum(-1)
    out.update({"data": Y.sum((1, 2, 3)), "send0": np.einsum("ti,trij->t", u0, Y),
                "recv0": np.einsum("tj,trij->t", u0, Y),
                "sendrecv": np.einsum("ti,tj,trij->t", u0, u0, Y),
                "conc": (U ** 2).sum((1, 2)), "send2": np.einsum("ti,trij->t", u2, Y),
                "recv2": np.einsum("tj,trij->t", u2, Y),
                "match": np.einsum("tik,tjk,trij->t", U, U, Y)})
    return out


def geweke(s: GewekeSetup, seed: int, n_iter: int, inner: int,
           algorithm: BPBFMGibbs | None = None, n_batches: int = 50,
           **flags) -> dict[str, float]:
    """z-scores of :func:`statistics`: ``n_iter`` marginal-conditional draws against
    ``n_iter`` steps of ``algorithm`` (default the production sampler with ``flags``) with
    a data regeneration every ``inner`` steps."""
    rng = np.random.default_rng(seed)
    prior = prior_draw(s, rng, n_iter)
    mc = statistics(s, prior, draw_data(s, rng, prior))
    if algorithm is None:
        algorithm = BPBFMGibbs(s.K, s.M, **s.priors, **flags)
    p = prior_draw(s, rng)
    Y = draw_data(s, rng, p)[0]
    data = as_data(s, Y)
    state = algorithm.init(data, rng)
    state.U, state.G, state.eta, state.d, state.eps = p.U[0], p.G[0], p.eta[0], p.d[0], \
        p.eps[0]
    names = ("U", "G", "eta", "d", "eps")
    chain = {k: [] for k in names}
    ys = []
    for it in range(n_iter):
        algorithm.step(state, data)                 # the production step
        for k in names:
            chain[k].append(np.array(getattr(state, k)))
        if (it + 1) % inner == 0:
            Y = draw_data(s, rng, Draws(*(getattr(state, k)[None] for k in names)))[0]
            data = as_data(s, Y)
        ys.append(Y)
    sc = statistics(s, Draws(*(np.stack(chain[k]) for k in names)), np.stack(ys))
    return geweke_zscores(mc, sc, n_batches=n_batches)
