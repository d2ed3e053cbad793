"""Augment-and-collapse Gibbs for supervised LDA (gSLDA, Gibbs MedLDA) as an engine
algorithm, binary or one-vs-all.

Zhu, Zheng & Zhang (ACL 2013) and Zhu, Chen, Perkins & Zhang (JMLR 2014).  The label of
document d enters through omega_d = eta^T zbar_d with the regularised pseudo-likelihood
psi(y_d) = exp(c y_d omega_d) / (1 + exp(omega_d))^c (logistic) or exp(-2c max(0, l -
ytil_d omega_d)) (hinge).  After augmentation (:mod:`topiclink.inference.augment`) each
label is one "pair" of the relational Z kernel whose neighbour vector is eta, so the Z step
is :func:`topiclink.kernels.rtm.sweep_relational` (exact, O(K) per token) and eta is drawn
from its Gaussian conditional: precision I/nu^2 + sum_d b_d zbar_d zbar_d^T, mean
P^{-1} sum_d a_d zbar_d.

One-vs-all trains one binary chain per class; the chains are stacked along the first axis
of every state array and each has its own streams, so running the classes on ``n_threads``
threads never changes them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from topiclink.execution import Executor, ThreadExecutor, padded_rows
from topiclink.inference.augment import augment, initial_coefficients, pseudo_loglik
from topiclink.inference.engine import Algorithm, State, check_topic_counts, fingerprint
from topiclink.inference.lda import TokenData, init_topics
from topiclink.inference.weights import draw_weights
from topiclink.kernels import lda as lda_kernels
from topiclink.kernels import rtm as rtm_kernels
from topiclink.random import kernel_state, spawn

__all__ = ["SupervisedData", "SupervisedState", "SupervisedGibbs"]


@dataclass
class SupervisedData:
    """Documents and one binary target per chain: ``targets[m, d]`` in {0, 1}."""

    tokens: TokenData
    targets: np.ndarray     # int8 (n_chains, D)

    def fingerprint(self) -> str:
        return fingerprint(self.tokens.words, self.tokens.offsets, self.targets)


@dataclass(kw_only=True)
class SupervisedState(State):
    """The stacked chains: ``z[m]``, ``ndk[m]``, ... belong to binary classifier m."""

    z: np.ndarray            # int32 (M, N)
    ndk: np.ndarray          # int32 (M, D, K)
    nwk: np.ndarray          # int32 (M, V, K)
    nk: np.ndarray           # int32 (M, K)
    eta: np.ndarray          # (M, K)
    a: np.ndarray            # (M, D)
    b: np.ndarray            # (M, D)
    kernel_rng: np.ndarray   # uint64 (M * n_shards, 4): chain-major
    eta_rngs: list[np.random.Generator]
    aug_rngs: list[np.random.Generator]     # M * n_shards, chain-major


class SupervisedGibbs(Algorithm):
    """gSLDA / Gibbs MedLDA chains; ``seeds`` gives one SeedSequence per chain."""

    state_class = SupervisedState
    #: kernel / augmentation streams per chain: row ``m * n_shards + s`` of ``kernel_rng``
    #: and of ``aug_rngs`` is shard s of chain m (1 here; the Dask version,
    #: :class:`topiclink.inference.slda_dask.DaskSupervisedGibbs`, has one per shard)
    n_shards: int = 1

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float, *, loss: str, c: float,
                 hinge_cost: float, weight_prior_var: float,
                 seeds: list[np.random.SeedSequence] | None = None, n_threads: int = 1,
                 name: str = "gSLDA") -> None:
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = float(beta)
        self.loss = loss
        self.c = float(c)
        self.hinge_cost = float(hinge_cost)
        self.weight_prior_var = float(weight_prior_var)
        self.seeds = seeds
        self.n_threads = max(1, int(n_threads))
        self.name = name
        self._pool: Executor | None = None
        self._ws: tuple[SupervisedData, dict[str, np.ndarray]] | None = None

    def fingerprint(self, data: SupervisedData) -> str:
        return data.fingerprint()

    def init(self, data: SupervisedData, rng: np.random.Generator) -> SupervisedState:
        """One chain per target row.  With ``seeds`` (the estimator's per-class seed
        sequences) ``rng`` is not used, so that each class's chain depends on its seed
        alone."""
        M = data.targets.shape[0]
        seeds = self.seeds if self.seeds is not None else rng.bit_generator.seed_seq.spawn(M)
        S = int(self.n_shards)
        parts = []
        for m in range(M):
            init_rng, chain_rng, eta_rng, aug_rng = spawn(np.random.default_rng(seeds[m]), 4)
            z, ndk, nwk, nk = init_topics(data.tokens, self.n_topics, init_rng)
            yf = data.targets[m].astype(np.float64)
            a, b = initial_coefficients(self.loss, yf, np.full(yf.size, self.c),
                                        self.hinge_cost)
            # S shards: S kernel rows and S augmentation streams (one shard: the chain's own)
            parts.append((z, ndk, nwk, nk, kernel_state(chain_rng, S), eta_rng,
                          [aug_rng] if S == 1 else spawn(aug_rng, S),
                          np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))
        return SupervisedState(
            z=np.stack([p[0] for p in parts]), ndk=np.stack([p[1] for p in parts]),
            nwk=np.stack([p[2] for p in parts]), nk=np.stack([p[3] for p in parts]),
            kernel_rng=np.concatenate([p[4] for p in parts]), eta=np.zeros((M, self.n_topics)),
            a=np.stack([p[7] for p in parts]), b=np.stack([p[8] for p in parts]),
            eta_rngs=[p[5] for p in parts], aug_rngs=[g for p in parts for g in p[6]],
            data_fingerprint=self.fingerprint(data))

    def check_values(self, state: SupervisedState, data: SupervisedData) -> None:
        tok = data.tokens
        for m in range(state.z.shape[0]):
            check_topic_counts(state.z[m], state.ndk[m], state.nwk[m], state.nk[m], tok.docs,
                               tok.words)
        if np.any(state.b <= 0):
            raise ValueError("state: augmentation coefficients b must be > 0")

    @contextlib.contextmanager
    def session(self, state: SupervisedState, data: SupervisedData) -> Iterator[None]:
        """A thread pool over the chains for the whole run (one-vs-all only)."""
        M = state.z.shape[0]
        if self.n_threads <= 1 or M <= 1:
            yield
            return
        with ThreadExecutor(min(self.n_threads, M), name="topiclink-slda") as pool:
            self._pool = pool
            try:
                yield
            finally:
                self._pool = None

    def _workspace(self, data: SupervisedData) -> dict[str, np.ndarray]:
        """The fixed arrays of the label "pairs" (every document has one out-pair to the
        virtual node D, whose vector is eta), built once per data."""
        if self._ws is None or self._ws[0] is not data:
            D, K = data.tokens.n_docs, self.n_topics
            self._ws = (data, {
                "zeros_U": np.zeros((K, K)), "Vz": np.zeros((D + 1, K)),
                "out_ptr": np.arange(D + 1, dtype=np.int64),
                "out_nbr": np.full(D, D, dtype=np.int64),
                "in_ptr": np.zeros(D + 1, dtype=np.int64), "in_nbr": np.zeros(0, np.int64),
                "in_ab": np.zeros(0), "cs": np.full(D, self.c)})
        return self._ws[1]

    def step(self, state: SupervisedState, data: SupervisedData) -> dict[str, float]:
        M = state.z.shape[0]
        self._workspace(data)
        if self._pool is not None:
            # the chains' RNG states and topic totals on cache lines of their own while
            # threads advance them (adjacent small rows would be shared: false sharing)
            rngs, nks = padded_rows(state.kernel_rng), padded_rows(state.nk)
            infos = self._pool.map(
                lambda m: self.step_chain(state, data, m, rngs[m], nks[m]), range(M))
            state.kernel_rng[:] = rngs
            state.nk[:] = nks
        else:
            infos = [self.step_chain(state, data, m) for m in range(M)]
        return infos[0]

    def step_chain(self, state: SupervisedState, data: SupervisedData, m: int,
                   rng_row: np.ndarray | None = None, nk_row: np.ndarray | None = None
                   ) -> dict[str, float]:
        """One iteration of chain ``m``: eta | z, then z | eta, then lambda | z, eta
        (``rng_row`` / ``nk_row``: stand-ins for ``state.kernel_rng[m]`` / ``state.nk[m]``
        that the caller copies back)."""
        rng_row = state.kernel_rng[m] if rng_row is None else rng_row
        nk_row = state.nk[m] if nk_row is None else nk_row
        tok = data.tokens
        D, K = tok.n_docs, self.n_topics
        lengths = tok.lengths
        ndk, a, b = state.ndk[m], state.a[m], state.b[m]
        yf = data.targets[m].astype(np.float64)
        ws = self._workspace(data)
        cs = ws["cs"]
        t0 = time.perf_counter()
        zbar = ndk / lengths[:, None]
        P = zbar.T @ (b[:, None] * zbar)
        P[np.diag_indices_from(P)] += 1.0 / self.weight_prior_var
        eta = draw_weights(state.eta_rngs[m], P, zbar.T @ a)
        state.eta[m] = eta
        t1 = time.perf_counter()
        # every document has one out-pair to the virtual node D, whose vector is eta (the
        # other rows of Uz stay zero; each chain has its own Uz)
        Uz = np.zeros((D + 1, K))
        Uz[D] = eta
        rtm_kernels.sweep_relational(
            tok.words, tok.offsets, state.z[m], ndk, state.nwk[m], nk_row, self.alpha,
            self.beta, rng_row, ws["zeros_U"], Uz, ws["Vz"], ws["out_ptr"],
            ws["out_nbr"], a, b, ws["in_ptr"], ws["in_nbr"], ws["in_ab"], ws["in_ab"], False)
        t2 = time.perf_counter()
        omega = (ndk / lengths[:, None]) @ eta
        state.a[m], state.b[m] = augment(state.aug_rngs[m], self.loss, omega, yf, cs,
                                         self.hinge_cost)
        t3 = time.perf_counter()
        return {"seconds_weights": t1 - t0, "seconds_z": t2 - t1, "seconds_lambda": t3 - t2,
                "label_loglik": pseudo_loglik(self.loss, omega, yf, cs, self.hinge_cost),
                "train_accuracy": float(np.mean((omega > 0) == (yf > 0.5)))}

    def sync(self, state: SupervisedState, parts: tuple[str, ...] = (),
             chains: tuple[int, ...] | None = None) -> None:
        """Make ``parts`` of the state current (a no-op here: the Dask version keeps them
        on its workers between reads)."""

    def objective(self, state: SupervisedState, data: SupervisedData) -> float:
        """The first chain's word log joint per token."""
        return lda_kernels.log_joint(state.ndk[0], state.nwk[0], state.nk[0], self.alpha,
                                     self.beta) / data.tokens.n_tokens

    def averaged(self, state: SupervisedState, data: SupervisedData) -> dict[str, np.ndarray]:
        return {"eta": state.eta, "nwk": state.nwk}
