"""Augment-and-collapse Gibbs for supervised LDA (gSLDA, Gibbs MedLDA) as an engine
algorithm, binary or one-vs-all.

Zhu, Zheng & Zhang (ACL 2013) and Zhu, Chen, Perkins & Zhang (JMLR 2014).  The label of
document d enters through omega_d = eta^T zbar_d with the regularised pseudo-likelihood
psi(y_d) = exp(c y_d omega_d) / (1 + exp(omega_d))^c (logistic) or exp(-2c max(0, l -
ytil_d omega_d)) (hinge).  After augmentation (:mod:`topiclink.relational.augment`) each
label is one "pair" of the relational Z kernel whose neighbour vector is eta, so the Z step
is :func:`topiclink.relational.kernels.rtm.sweep_relational` (exact, O(K) per token) and
eta is drawn
from its Gaussian conditional: precision I/nu^2 + sum_d b_d zbar_d zbar_d^T, mean
P^{-1} sum_d a_d zbar_d.

One-vs-all trains one binary chain per class; the chains are stacked along the first axis
of every state array and each has its own streams.

One iteration of chain m, written once, wherever it runs (:class:`SupervisedGibbs`):

1. global (here): eta ~ N(P^{-1} s, P^{-1}) with P = I / nu^2 + sum_s P_s and s = sum_s s_s
   (Zhu et al. 2013, the Gaussian conditional of eta), the shards' statistics
   ``P_s = sum_{d in s} b_d zbar_d zbar_d^T`` and ``s_s = sum_{d in s} a_d zbar_d`` added
   in shard order (:func:`shard_statistics`; reported by the shards at the end of the
   previous iteration, computed from the state for the first one of a run);
2. local, per document shard s (:func:`shard_step`, pure): z | eta sweeps the shard's
   tokens with the label term (:func:`~topiclink.relational.kernels.rtm.sweep_relational`, one
   virtual pair per document whose neighbour vector is eta) against private copies of nwk
   and nk taken at the start of the iteration (AD-LDA, Newman et al. 2009), then
   lambda | z, eta draws the augmentation of its documents with its own stream; it reports
   its count changes (:func:`~topiclink.execution.count_delta`), its (P_s, s_s) and its
   label figures;
3. merge (here, in shard order): the count changes are added (integer sums, exact).

The shards are ``n_shards`` contiguous token-balanced ranges of documents
(:func:`~topiclink.execution.balanced_chunks`), each with its own kernel row and
augmentation stream (row ``m * n_shards + s``): the statistical scheme, fixed by
``n_shards``.  With one shard the single shard sweeps against the current counts, which
is the exact sequential chain.  Where the shards run is the ``executor`` (the calling
thread, threads, a Dask cluster): the shards' z, ndk, a, b and streams stay with them
between iterations (:meth:`~topiclink.execution.Executor.keep`) and the chain never
depends on it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from topiclink.execution import Executor, balanced_chunks, count_delta
from topiclink.inference.engine import State, check_topic_counts, fingerprint
from topiclink.inference.sharded import ShardedAlgorithm
from topiclink.random import kernel_state, spawn
from topiclink.relational.augment import augment, initial_coefficients, pseudo_loglik
from topiclink.relational.kernels import rtm as rtm_kernels
from topiclink.relational.kernels import rtm_mh
from topiclink.relational.kernels.weights import label_moments
from topiclink.relational.weights import draw_weights
from topiclink.topics.kernels import lda as lda_kernels
from topiclink.topics.kernels.lda_mh import word_index
from topiclink.topics.lda import MH_STEPS, TokenData, init_topics

__all__ = ["SupervisedData", "SupervisedState", "SupervisedGibbs", "shard_statistics",
           "shard_step", "shard_statics"]

#: the executor key of the shards' kept states
_KEPT = "slda.shards"


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


#: from this many topics on the eta statistics are summed over each document's nonzero
#: topics (:func:`~topiclink.relational.kernels.weights.label_moments`, O(nnz_d^2) a
#: document) instead of the dense product (O(K^2) a document; BLAS): at K = 1000 on
#: benchmarks/token_family_sweeps.py's corpus (125 tokens a document) about 0.2 s a call
#: became about 0.08 s (a profile of the "mh" fit, 5 calls).  Below it the dense product,
#: whose sums (and so the goldens) are unchanged.
SPARSE_STATISTICS_TOPICS = 64


def shard_statistics(ndk: np.ndarray, lengths: np.ndarray, a: np.ndarray, b: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The eta sufficient statistics of a shard's documents (Zhu et al. 2013, the Gaussian
    conditional of eta): ``P_s = sum_d b_d zbar_d zbar_d^T`` (K x K, without the prior)
    and ``s_s = sum_d a_d zbar_d`` (K,), zbar_d = ndk_d / N_d."""
    if ndk.shape[1] >= SPARSE_STATISTICS_TOPICS:
        return label_moments(np.ascontiguousarray(ndk), np.asarray(lengths, np.float64),
                             np.ascontiguousarray(a, np.float64),
                             np.ascontiguousarray(b, np.float64))
    zbar = ndk / lengths[:, None]
    return zbar.T @ (b[:, None] * zbar), zbar.T @ a


def shard_statics(data: SupervisedData, chunks: np.ndarray, word_positions: bool = False
                  ) -> list[dict[str, np.ndarray]]:
    """Per shard, what its steps read and never change: its ``words``, ``offsets`` (local,
    from 0), ``vocab`` (its distinct words, int32), ``lengths`` (float64) and ``targets``
    ((M, D_s) int8); with ``word_positions`` (the Metropolis-Hastings sweep) also
    ``word_ptr`` / ``word_pos``, the positions of each word's tokens
    (:func:`~topiclink.topics.kernels.lda_mh.word_index`)."""
    tok = data.tokens
    out = []
    for s in range(chunks.size - 1):
        d0, d1 = int(chunks[s]), int(chunks[s + 1])
        lo, hi = int(tok.offsets[d0]), int(tok.offsets[d1])
        words = tok.words[lo:hi]
        out.append({"words": words, "offsets": tok.offsets[d0:d1 + 1] - lo,
                    "vocab": np.unique(words).astype(np.int32),
                    "lengths": tok.lengths[d0:d1], "targets": data.targets[:, d0:d1]})
        if word_positions:
            out[-1]["word_ptr"], out[-1]["word_pos"] = word_index(words, tok.n_words)
    return out


def shard_step(prev: tuple, shared: tuple, m: int, static: dict) -> tuple[tuple, tuple]:
    """Steps 2 and 3 of one iteration of chain ``m`` on one shard (pure: runs wherever the
    executor runs it).

    ``prev``: the shard's ``(z, ndk, kernel rng row, a, b, augmentation generator)``
    (not modified); ``shared``: ``(per chain (nwk, nk, eta) at the start of the
    iteration, alpha, (beta, loss, c, hinge_cost))`` (read only); ``static``:
    :func:`shard_statics`.  Returns the new shard state and the report ``(word ids, their
    nwk changes, nk change, P_s, s_s, label log-likelihood sum, correct labels)``.
    """
    chains, alpha, (beta, loss, c, hinge_cost, n_mh) = shared
    base_w, base_k, eta = chains[m]
    words, offsets, lengths = static["words"], static["offsets"], static["lengths"]
    z, ndk, rng = prev[0].copy(), prev[1].copy(), prev[2].copy()
    a, b = prev[3], prev[4]
    gen = copy.deepcopy(prev[5])
    nwk, nk = base_w.copy(), base_k.copy()
    D, K = lengths.shape[0], eta.shape[0]
    # every document has one out-pair to a virtual node whose vector is eta
    empty_f, empty_i = np.zeros(0), np.zeros(0, dtype=np.int64)
    if n_mh:        # the node is row 0 of a one-row table, never refreshed
        rtm_mh.sweep_relational_mh_range(
            words, offsets, z, ndk, nwk, nk, alpha, beta, rng, static["word_ptr"],
            static["word_pos"], np.zeros((1, 1)), eta[None, :].copy(), np.zeros((1, K)),
            np.arange(D + 1, dtype=np.int64), np.zeros(D, np.int64), a, b,
            np.zeros(D + 1, dtype=np.int64), empty_i, empty_f, empty_f, n_mh,
            rtm_mh.REFRESH_NONE, 0, D)
    else:           # the node is row D; the documents' rows are never read (no refresh)
        Uz = np.zeros((D + 1, K))
        Uz[D] = eta
        rtm_kernels.sweep_relational(
            words, offsets, z, ndk, nwk, nk, alpha, beta, rng, np.zeros((K, K)), Uz,
            np.zeros((D + 1, K)), np.arange(D + 1, dtype=np.int64), np.full(D, D, np.int64),
            a, b, np.zeros(D + 1, dtype=np.int64), empty_i, empty_f, empty_f, False, False)
    yf = static["targets"][m].astype(np.float64)
    cs = np.full(D, c)
    omega = (ndk / lengths[:, None]) @ eta
    a_new, b_new = augment(gen, loss, omega, yf, cs, hinge_cost)
    P_s, s_s = shard_statistics(ndk, lengths, a_new, b_new)
    rows, changes = count_delta(nwk, base_w, static["vocab"])
    loglik = pseudo_loglik(loss, omega, yf, cs, hinge_cost) * D if D else 0.0
    correct = int(np.sum((omega > 0) == (yf > 0.5)))
    return ((z, ndk, rng, a_new, b_new, gen),
            (rows, changes, nk - base_k, P_s, s_s, loglik, correct))


class SupervisedGibbs(ShardedAlgorithm):
    """gSLDA / Gibbs MedLDA chains; ``seeds`` gives one SeedSequence per chain.

    A :class:`~topiclink.inference.sharded.ShardedAlgorithm`: the global step draws every
    chain's eta from the shards' reduced statistics, the local step
    (:func:`shard_step`) runs z | eta and lambda | z, eta on each (chain, shard), and the
    count changes are merged in shard order.

    Parameters
    ----------
    n_shards : document shards (the scheme: 1 is the exact sequential chain; more is
        AD-LDA across shards, each with its own streams)
    executor : where the shards run (None: ``n_threads`` threads of this process, the
        calling thread for 1; an :class:`~topiclink.execution.Executor`, e.g. a
        :class:`~topiclink.execution.DaskExecutor`, borrowed); never changes the chain
    sampler : ``"gibbs"`` (the exact O(K) conditional) or ``"mh"`` (exact
        Metropolis-Hastings with O(1) proposals and the label factor as the correction;
        one shard only: its word proposal reads the whole corpus's assignments)
    n_mh : Metropolis-Hastings steps per token (None: :data:`~topiclink.topics.lda.
        MH_STEPS` of ``"mh"``)
    """

    state_class = SupervisedState
    local = staticmethod(shard_step)
    kept_key = _KEPT
    global_seconds_key = "seconds_weights"
    local_seconds_key = "seconds_shards"

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float, *, loss: str, c: float,
                 hinge_cost: float, weight_prior_var: float,
                 seeds: list[np.random.SeedSequence] | None = None, n_threads: int = 1,
                 n_shards: int = 1, executor: Executor | None = None,
                 name: str = "gSLDA", sampler: str = "gibbs", n_mh: int | None = None
                 ) -> None:
        if sampler not in ("gibbs", "mh"):
            raise ValueError(f"sampler must be 'gibbs' or 'mh', got {sampler!r}")
        if sampler == "mh" and n_shards != 1:
            raise ValueError("sampler='mh' runs the sequential chain (one shard): use "
                             "scheme='exact' or sampler='gibbs'")
        super().__init__(n_shards, executor, n_threads)
        self.sampler = sampler
        self.n_mh = (MH_STEPS["mh"] if n_mh is None else int(n_mh)) if sampler == "mh" else 0
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = float(beta)
        self.loss = loss
        self.c = float(c)
        self.hinge_cost = float(hinge_cost)
        self.weight_prior_var = float(weight_prior_var)
        self.seeds = seeds
        self.name = name
        self.n_rounds = 0
        self._chunks: np.ndarray | None = None
        self._stats: list[list[tuple[np.ndarray, np.ndarray]]] | None = None

    def fingerprint(self, data: SupervisedData) -> str:
        return data.fingerprint()

    def _check_shards(self, data: SupervisedData) -> None:
        if self.n_shards > data.tokens.n_docs:
            raise ValueError(f"n_shards ({self.n_shards}) exceeds the number of documents "
                             f"({data.tokens.n_docs})")

    def init(self, data: SupervisedData, rng: np.random.Generator) -> SupervisedState:
        """One chain per target row, ``n_shards`` kernel rows and augmentation streams per
        chain (spawned from the chain's streams).  With ``seeds`` (the estimator's
        per-class seed sequences) ``rng`` is not used, so that each class's chain depends
        on its seed alone."""
        self._check_shards(data)
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
        if state.kernel_rng.shape[0] != state.z.shape[0] * self.n_shards:
            raise ValueError(f"state: {state.kernel_rng.shape[0]} kernel streams for "
                             f"{state.z.shape[0]} chains of {self.n_shards} shards "
                             f"(n_shards must be the one the state was made with)")

    # ------------------------------------------------------------------ the pieces
    def n_tasks(self, state: SupervisedState) -> int:
        return state.z.shape[0] * self.n_shards

    def split(self, state: SupervisedState, data: SupervisedData) -> tuple[list, list]:
        """Every (chain, shard)'s part of the state and its static data; the first
        iteration's eta statistics come from the (complete) state."""
        self._check_shards(data)
        M, S, tok = state.z.shape[0], self.n_shards, data.tokens
        chunks = balanced_chunks(tok.offsets, S)
        statics = shard_statics(data, chunks, word_positions=self.n_mh > 0)
        states, stats = [], []
        for m in range(M):
            row = []
            for s in range(S):
                d0, d1 = int(chunks[s]), int(chunks[s + 1])
                lo, hi = int(tok.offsets[d0]), int(tok.offsets[d1])
                states.append((state.z[m, lo:hi].copy(), state.ndk[m, d0:d1].copy(),
                               state.kernel_rng[m * S + s].copy(), state.a[m, d0:d1].copy(),
                               state.b[m, d0:d1].copy(),
                               copy.deepcopy(state.aug_rngs[m * S + s])))
                row.append(shard_statistics(state.ndk[m, d0:d1], tok.lengths[d0:d1],
                                            state.a[m, d0:d1], state.b[m, d0:d1]))
            stats.append(row)
        self._chunks, self._stats = chunks, stats
        return states, [statics[s] for _ in range(M) for s in range(S)]

    def global_step(self, state: SupervisedState, data: SupervisedData) -> dict[str, float]:
        """Step 1 of every chain: eta | z, lambda from the shards' reduced statistics."""
        assert self._stats is not None
        for m in range(state.z.shape[0]):
            P = self._stats[m][0][0].copy()
            s_lin = self._stats[m][0][1].copy()
            for P_s, s_s in self._stats[m][1:]:
                P += P_s
                s_lin += s_s
            P[np.diag_indices_from(P)] += 1.0 / self.weight_prior_var
            state.eta[m] = draw_weights(state.eta_rngs[m], P, s_lin)
        return {}

    def shared(self, state: SupervisedState, data: SupervisedData) -> tuple:
        # copies: an executor may keep ``shared`` to replay the round (a lost worker)
        M = state.z.shape[0]
        return (tuple((state.nwk[m].copy(), state.nk[m].copy(), state.eta[m].copy())
                      for m in range(M)),
                np.asarray(self.alpha, dtype=np.float64),
                (self.beta, self.loss, self.c, self.hinge_cost, self.n_mh))

    def args(self, state: SupervisedState, data: SupervisedData) -> list[int]:
        return [m for m in range(state.z.shape[0]) for _ in range(self.n_shards)]

    def merge(self, state: SupervisedState, data: SupervisedData, reports: list
              ) -> dict[str, float]:
        """Step 3: every chain's count changes and statistics, in shard order; the first
        chain's figures."""
        assert self._stats is not None
        M, S, D = state.z.shape[0], self.n_shards, data.tokens.n_docs
        infos = []
        for m in range(M):
            loglik, correct = 0.0, 0
            for s in range(S):
                rows, changes, dnk, P_s, s_s, ll_s, correct_s = reports[m * S + s]
                state.nwk[m][rows] += changes
                state.nk[m] += dnk
                self._stats[m][s] = (P_s, s_s)
                loglik += ll_s
                correct += correct_s
            infos.append({"label_loglik": loglik / D, "train_accuracy": correct / D})
        self.n_rounds += 1
        return infos[0]

    def write_back(self, state: SupervisedState, data: SupervisedData,
                   shard_states: list) -> None:
        """The shards' current z, ndk, a, b and streams into ``state``."""
        assert self._chunks is not None
        S, offsets = self.n_shards, data.tokens.offsets
        for i, (z, ndk, rng, a, b, gen) in enumerate(shard_states):
            m, s = divmod(i, S)
            d0, d1 = int(self._chunks[s]), int(self._chunks[s + 1])
            lo, hi = int(offsets[d0]), int(offsets[d1])
            state.z[m, lo:hi] = z
            state.ndk[m, d0:d1] = ndk
            state.kernel_rng[m * S + s] = rng
            state.a[m, d0:d1] = a
            state.b[m, d0:d1] = b
            state.aug_rngs[m * S + s] = copy.deepcopy(gen)

    def sync(self, state: SupervisedState, parts: tuple[str, ...] = (),
             chains: tuple[int, ...] | None = None) -> None:
        """Write the shards' current state into ``state`` (``parts`` / ``chains`` are
        accepted for callers that need less: everything is written)."""
        super().sync(state)

    def objective(self, state: SupervisedState, data: SupervisedData) -> float:
        """The first chain's word log joint per token (the shards written back first)."""
        self.sync(state)
        return lda_kernels.log_joint(state.ndk[0], state.nwk[0], state.nk[0], self.alpha,
                                     self.beta) / data.tokens.n_tokens

    def averaged(self, state: SupervisedState, data: SupervisedData) -> dict[str, np.ndarray]:
        return {"eta": state.eta, "nwk": state.nwk}
