"""Dirichlet-multinomial regression (DMR) as an engine algorithm (state + step).

Mimno & McCallum (UAI 2008), ``docs/design/ktm.md`` ("DMR baseline").  Document d's
topic proportions have a Dirichlet prior whose parameters depend on its features x_d::

    alpha_dk = exp(lambda_k0 + x_d^T lambda_k),   lambda_kf ~ N(0, sigma_f^2)

(``sigma_0``, the intercept's prior scale, is separate and larger).  The topics z are
sampled by the collapsed Gibbs LDA sweep with document d's prior alpha_d (the token kernel
of :mod:`topiclink.topics.kernels.lda`, which accepts a (D, K) prior); after the burn-in,
every ``optimize_every`` sweeps lambda is set by L-BFGS to the maximum of the
Dirichlet-multinomial likelihood of the document-topic counts n_dk plus the Gaussian
prior (the paper's stochastic EM)::

    L(lambda) = sum_d [ lgamma(A_d) - lgamma(N_d + A_d)
                        + sum_k (lgamma(n_dk + alpha_dk) - lgamma(alpha_dk)) ]
                - sum_{k,f} lambda_kf^2 / (2 sigma_f^2),        A_d = sum_k alpha_dk

    dL/dlambda_kf = sum_d x_df alpha_dk [psi(A_d) - psi(N_d + A_d)
                                         + psi(n_dk + alpha_dk) - psi(alpha_dk)]
                    - lambda_kf / sigma_f^2                      (x_d0 = 1)

Numerics: the linear predictor ``x_d^T lambda_k`` is clipped to [-ETA_MAX, ETA_MAX]
(alpha within about 1e-17 .. 2e17) so that a wild L-BFGS trial point cannot overflow; the
gradient is that of the clipped function (zero where clipped).

``scheme="partition"`` / ``"adlda"`` sweep z over ``n_shards`` shards as LDA
does (:class:`topiclink.topics.lda.ShardedTokenSampler`; AD-LDA is the
:class:`~topiclink.topics.adlda.ADLDAShards` iteration), each shard with its rows of
alpha; on a Dask executor the shards' ndk is gathered to the driver when lambda is optimised (and
when the objective is evaluated), and the new alpha rows go out with the next sweep.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import digamma, gammaln

from topiclink.execution import Executor
from topiclink.inference.engine import State, check_topic_counts, fingerprint
from topiclink.random import kernel_state, spawn
from topiclink.topics.kernels import lda as kernels
from topiclink.topics.kernels import lda_mh
from topiclink.topics.lda import (
    MH_STEPS,
    SHARDED,
    ShardedTokenSampler,
    TokenData,
    TokenIndex,
    init_topics,
)

__all__ = ["DMRData", "DMRState", "DMRGibbs", "dmr_objective", "doc_priors", "ETA_MAX"]

#: bound of the linear predictor log alpha_dk (see the module docstring)
ETA_MAX = 40.0


@dataclass
class DMRData:
    """Tokens sorted by document and the design matrix (D, 1 + F): column 0 is ones (the
    intercept), columns 1.. the features."""

    tokens: TokenData
    design: np.ndarray      # float64 (D, 1 + F)

    @property
    def n_tokens(self) -> int:
        return self.tokens.n_tokens

    def fingerprint(self) -> str:
        return fingerprint(self.tokens.words, self.tokens.offsets,
                           np.array([self.tokens.n_words]), self.design)


@dataclass(kw_only=True)
class DMRState(State):
    """Topics of every token, the counts, lambda and the kernel's xoshiro state."""

    z: np.ndarray            # int32 (N,)
    ndk: np.ndarray          # int32 (D, K)
    nwk: np.ndarray          # int32 (V, K)
    nk: np.ndarray           # int32 (K,)
    lam: np.ndarray          # float64 (1 + F, K): row 0 the intercepts lambda_k0
    kernel_rng: np.ndarray   # uint64 (n_shards, 4) (1 row: the sequential sampler)


@dataclass
class DMRWorkspace:
    """What :class:`DMRGibbs` derives from a state (its
    :attr:`~topiclink.inference.engine.State.workspace`; never saved): the documents'
    priors with the lambda and design they were computed from, and the word order of the
    tokens for the Metropolis-Hastings sweep."""

    alpha: np.ndarray | None = None
    lam: np.ndarray | None = None
    design: np.ndarray | None = None
    index: TokenIndex | None = None


def doc_priors(design: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """alpha (D, K) = exp(clip(design @ lam)), C-contiguous float64."""
    eta = np.clip(design @ lam, -ETA_MAX, ETA_MAX)
    return np.ascontiguousarray(np.exp(eta))


def dmr_objective(lam: np.ndarray, design: np.ndarray, ndk: np.ndarray,
                  inv_var: np.ndarray) -> tuple[float, np.ndarray]:
    """L(lambda) and its gradient (module docstring), vectorised over documents.

    Parameters
    ----------
    lam : (1 + F, K) regression weights (row 0: intercepts)
    design : (D, 1 + F) features with a leading column of ones
    ndk : (D, K) document-topic counts
    inv_var : (1 + F,) prior precisions 1 / sigma_f^2 (entry 0: the intercept's)

    Returns
    -------
    value : float; gradient : (1 + F, K)
    """
    eta = design @ lam
    inside = np.abs(eta) <= ETA_MAX
    alpha = np.exp(np.clip(eta, -ETA_MAX, ETA_MAX))
    n = ndk.astype(np.float64)
    total = alpha.sum(axis=1)
    n_d = n.sum(axis=1)
    value = float(np.sum(gammaln(total) - gammaln(n_d + total))
                  + np.sum(gammaln(n + alpha) - gammaln(alpha))
                  - 0.5 * np.sum(inv_var[:, None] * lam * lam))
    g = (digamma(total) - digamma(n_d + total))[:, None] + digamma(n + alpha) \
        - digamma(alpha)
    grad = design.T @ np.where(inside, alpha * g, 0.0) - inv_var[:, None] * lam
    return value, grad


class DMRGibbs(ShardedTokenSampler):
    """DMR by collapsed Gibbs for z and L-BFGS for lambda (stochastic EM); the sharded
    sweeps of z are those of LDA (a :class:`~topiclink.topics.lda.ShardedTokenSampler`).

    Parameters
    ----------
    n_topics : K
    beta : symmetric Dirichlet prior of the topics
    sigma : prior standard deviation of the feature weights lambda_kf (f >= 1)
    intercept_sigma : prior standard deviation of the intercepts lambda_k0
    initial_alpha : alpha of every document before the first optimisation
        (lambda_k0 = log initial_alpha, feature weights 0)
    optimize_every : lambda is optimised after sweep t when t >= burn_in and
        t % optimize_every == 0 (t counted over the whole chain, from 1)
    burn_in : sweeps before the first optimisation
    lbfgs_iter : L-BFGS iterations per optimisation (warm-started from the current
        lambda; 15 gave the held-out perplexity of 100 on SOTU, 10 seeds, in a sixth of
        the optimiser time: benchmarks/dmr_vs_tomotopy.py)
    scheme, n_shards, executor, n_threads : as
        :class:`~topiclink.topics.lda.CollapsedGibbsLDA` (``"exact"``: the sequential
        sampler)
    sampler : "gibbs" or "mh" (:func:`~topiclink.topics.kernels.lda_mh.sweep_mh` with the
        documents' priors alpha_d; the sequential scheme only)
    """

    name = "DMR"
    state_class = DMRState

    def __init__(self, n_topics: int, beta: float, sigma: float, intercept_sigma: float,
                 initial_alpha: float, optimize_every: int, burn_in: int,
                 lbfgs_iter: int = 15, scheme: str = "exact", n_shards: int = 1,
                 executor: Executor | None = None, n_threads: int = 1,
                 init: str = "random", sampler: str = "gibbs") -> None:
        if sampler not in ("gibbs", "mh"):
            raise ValueError(f"sampler must be 'gibbs' or 'mh', got {sampler!r}")
        if sampler == "mh" and scheme != "exact":
            raise ValueError(f"sampler='mh' runs the sequential chain: use scheme='exact' "
                             f"(or sampler='gibbs'), not {scheme!r}")
        self.sampler = sampler
        self.init_kind = init
        self.n_topics = int(n_topics)
        self.beta = float(beta)
        self.sigma = float(sigma)
        self.intercept_sigma = float(intercept_sigma)
        self.initial_alpha = float(initial_alpha)
        self.optimize_every = int(optimize_every)
        self.burn_in = int(burn_in)
        self.lbfgs_iter = int(lbfgs_iter)
        self.scheme = scheme
        super().__init__(int(n_shards) if scheme in SHARDED else 1, executor, int(n_threads))

    def fingerprint(self, data: DMRData) -> str:
        return data.fingerprint()

    def inv_var(self, n_rows: int) -> np.ndarray:
        """Prior precisions (1 + F,): the intercept's, then the features'."""
        out = np.full(n_rows, 1.0 / self.sigma ** 2)
        out[0] = 1.0 / self.intercept_sigma ** 2
        return out

    def init(self, data: DMRData, rng: np.random.Generator) -> DMRState:
        # the same streams as CollapsedGibbsLDA.init: with lambda fixed at its start DMR
        # is, draw for draw, LDA with doc_topic_prior = initial_alpha
        init_rng, chain_rng = spawn(rng, 2)
        z, ndk, nwk, nk = init_topics(data.tokens, self.n_topics, init_rng,
                                      init=self.init_kind)
        lam = np.zeros((data.design.shape[1], self.n_topics))
        lam[0] = np.log(self.initial_alpha)
        return DMRState(z=z, ndk=ndk, nwk=nwk, nk=nk, lam=lam,
                        kernel_rng=kernel_state(chain_rng, self.n_shards),
                        data_fingerprint=self.fingerprint(data))

    def check_values(self, state: DMRState, data: DMRData) -> None:
        check_topic_counts(state.z, state.ndk, state.nwk, state.nk, data.tokens.docs,
                           data.tokens.words)

    def alpha(self, state: DMRState, data: DMRData) -> np.ndarray:
        """The documents' priors exp(design lambda) (D, K), kept in the state's
        workspace until lambda or the data change (D K exponentials an iteration saved
        between optimisations: a third of the "mh" sweep's cost at K = 1000,
        benchmarks/token_family_sweeps.py)."""
        ws = self._workspace(state)
        if ws.alpha is None or ws.design is not data.design or not np.array_equal(
                ws.lam, state.lam):
            ws.alpha = doc_priors(data.design, state.lam)
            ws.lam = state.lam.copy()
            ws.design = data.design
        return ws.alpha

    @staticmethod
    def _workspace(state: DMRState) -> DMRWorkspace:
        if not isinstance(state.workspace, DMRWorkspace):
            state.workspace = DMRWorkspace()
        return state.workspace

    def due(self, iteration: int) -> bool:
        """Whether lambda is optimised after sweep ``iteration`` (counted from 1)."""
        return iteration >= self.burn_in and iteration % self.optimize_every == 0

    def optimize(self, state: DMRState, data: DMRData) -> tuple[float, float]:
        """Set ``state.lam`` to the L-BFGS maximum of L given the current counts; returns
        L before and after."""
        design, ndk = data.design, state.ndk
        inv_var = self.inv_var(design.shape[1])
        shape = state.lam.shape

        def negative(flat: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = dmr_objective(flat.reshape(shape), design, ndk, inv_var)
            return -value, -grad.ravel()

        before = -negative(state.lam.ravel())[0]
        result = minimize(negative, state.lam.ravel(), jac=True, method="L-BFGS-B",
                          options={"maxiter": self.lbfgs_iter, "ftol": 1e-12,
                                   "gtol": 1e-5})
        after = -float(result.fun)
        if np.all(np.isfinite(result.x)) and after >= before:
            state.lam[...] = result.x.reshape(shape)
        else:                                   # never accept a worse point
            after = before
        return before, after

    def token_index(self, state: DMRState, tokens: TokenData) -> TokenIndex:
        """The word order of the tokens (the Metropolis-Hastings word proposal), kept in
        the state's workspace (rebuilt for other data or a replaced z, never saved)."""
        ws = self._workspace(state)
        if ws.index is None or not ws.index.fits(state, tokens):
            ws.index = TokenIndex(tokens, state.z, *lda_mh.word_index(tokens.words,
                                                                      tokens.n_words))
        return ws.index

    def token_data(self, data: DMRData) -> TokenData:
        return data.tokens

    def adlda_alpha(self, state: DMRState, data: DMRData) -> np.ndarray:
        return self.alpha(state, data)

    def step(self, state: DMRState, data: DMRData) -> dict[str, float]:
        if self.scheme in SHARDED:
            info = self.sharded_step(state, data)
        elif self.sampler == "mh":
            tok = data.tokens
            ix = self.token_index(state, tok)
            lda_mh.sweep_mh(tok.words, tok.offsets, state.z, state.ndk, state.nwk, state.nk,
                            self.alpha(state, data), self.beta, state.kernel_rng[0], ix.ptr,
                            ix.pos, MH_STEPS["mh"])
            info = {}
        else:
            tok = data.tokens
            kernels.sweep(tok.words, tok.offsets, state.z, state.ndk, state.nwk, state.nk,
                          self.alpha(state, data), self.beta, state.kernel_rng[0])
            info = {}
        if self.due(state.iteration + 1):
            self.sync(state, ("ndk",))
            before, after = self.optimize(state, data)
            info.update(lambda_objective_before=before, lambda_objective=after)
        return info

    def objective(self, state: DMRState, data: DMRData) -> float:
        """Collapsed log p(w, z | alpha(lambda), beta) per token."""
        self.sync(state, ("ndk",))
        return kernels.log_joint(state.ndk, state.nwk, state.nk, self.alpha(state, data),
                                 self.beta) / data.n_tokens
