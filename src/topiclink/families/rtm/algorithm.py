"""Augment-and-collapse Gibbs for the discriminative relational topic models (gRTM family)
as an engine algorithm (state + step).

Chen, Zhu, Xia & Zhang, "Discriminative Relational Topic Models", TPAMI 2015.  Each
iteration (``docs/design/grtm.md``):

1. U from its Gaussian conditional (:mod:`topiclink.relational.weights`, eq. 13);
2. every token from the exact O(K) relational conditional
   (:func:`topiclink.relational.kernels.rtm.sweep_relational_range`, eq. 14; the "Approx" variant
   computes the link term once per document);
3. every pair's augmentation variable, as soon as both its documents are swept
   (:mod:`topiclink.relational.pipeline`): lambda_ij ~ PG(c_ij, omega_ij) for the logistic
   loss (eq. 12), 1/lambda_ij ~ IG(1/(c|zeta_ij|), 1), zeta_ij = l - ytil_ij omega_ij, for
   the hinge loss -- by the ``polyagamma`` package / NumPy per chunk of pairs
   (``augmentation="reference"``) or all in Numba (``"numba"``,
   :mod:`topiclink.relational.kernels.augment`).

The pairs' draws come from fixed chunks with their own streams, so the chain is the same
for any number of threads.  Everything needed to continue (pairs, topics, counts, U, the
augmentation coefficients, every stream) is in :class:`RelationalState`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from topiclink.data.links import Links
from topiclink.execution import Executor, helper_thread
from topiclink.inference.engine import Algorithm, State, check_topic_counts, fingerprint
from topiclink.parameters import Negatives
from topiclink.random import kernel_state, spawn
from topiclink.relational.augment import ChunkedAugmenter, initial_coefficients, pseudo_loglik
from topiclink.relational.kernels import augment as augment_kernels
from topiclink.relational.kernels import rtm as rtm_kernels
from topiclink.relational.kernels import rtm_mh
from topiclink.relational.negatives import draw_negatives
from topiclink.relational.pairs import PairSet
from topiclink.relational.pipeline import BlockPipeline, PipelineLayout, pipeline_layout
from topiclink.relational.weights import draw_weights, weight_posterior
from topiclink.topics.kernels import lda as lda_kernels
from topiclink.topics.kernels.lda_mh import word_index
from topiclink.topics.lda import MH_STEPS, TokenData, init_topics

__all__ = ["RelationalData", "RelationalState", "RelationalGibbs", "GibbsWorkspace",
           "training_pairs", "AUGMENTATION_SAMPLERS"]

#: the samplers of the pairs' augmentation variables (see :class:`RelationalGibbs`)
AUGMENTATION_SAMPLERS = ("reference", "numba")
#: guard of |zeta| in the hinge augmentation (as :func:`sample_hinge_augmentation`)
HINGE_EPS = 1e-8


@dataclass
class RelationalData:
    """Documents (tokens) and the links among them."""

    tokens: TokenData
    links: Links

    def fingerprint(self) -> str:
        return fingerprint(self.tokens.words, self.tokens.offsets,
                           np.asarray(self.links.pairs, dtype=np.int64),
                           np.array([int(self.links.directed)]))


@dataclass(kw_only=True)
class RelationalState(State):
    """The chain: training pairs (drawn once), topics and counts, U, the pairs' Gaussian
    coefficients (a, b) and discriminants, and every random stream."""

    pair_source: np.ndarray      # int64 (P,), in the order of the later endpoint
    pair_target: np.ndarray      # int64 (P,)
    pair_y: np.ndarray           # int8 (P,)
    pair_c: np.ndarray           # float64 (P,)
    n_negatives: int
    z: np.ndarray
    ndk: np.ndarray
    nwk: np.ndarray
    nk: np.ndarray
    U: np.ndarray                # (K, K)
    a: np.ndarray                # (P,)
    b: np.ndarray                # (P,)
    omega: np.ndarray            # (P,) discriminants of the last iteration
    kernel_rng: np.ndarray       # uint64 (1, 4): the Z sweep
    weight_rng: np.random.Generator
    aug_rngs: list[np.random.Generator]


def training_pairs(links: Links, negatives: Negatives, c: float,
                   rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Positive pairs plus negatives, ordered by their later endpoint so that the pairs
    each block of the Z sweep completes are consecutive (:mod:`.pipeline`).

    Negatives (:func:`topiclink.relational.negatives.draw_negatives`): with
    ``negatives.per_link`` None, ``negatives.ratio`` of all unobserved pairs
    (:meth:`Links.sample_negatives`; both orientations for undirected links); else
    document i draws about ``per_link`` times its positive training pairs as a source
    (O(#negatives)), each negative one ordered pair, never mirrored.  Positive pairs have
    c, negatives ``negatives.weight``; positive undirected links enter in both
    orientations.

    Returns source, target, y (int8), c (float64) and the number of negatives.
    """
    pos = links.pairs.astype(np.int64)
    neg, mirror_negatives = draw_negatives(links, negatives, rng)
    if not links.directed:
        pos = np.concatenate([pos, pos[:, ::-1]])
    if mirror_negatives:
        neg = np.concatenate([neg, neg[:, ::-1]])
    src = np.concatenate([pos[:, 0], neg[:, 0]])
    dst = np.concatenate([pos[:, 1], neg[:, 1]])
    y = np.concatenate([np.ones(len(pos), np.int8), np.zeros(len(neg), np.int8)])
    cs = np.where(y == 1, float(c), float(negatives.weight))
    order = np.argsort(np.maximum(src, dst), kind="stable")
    return src[order], dst[order], y[order], cs[order], int(len(neg))


@dataclass
class GibbsWorkspace:
    """What :meth:`RelationalGibbs.attach` derives from a state's pairs and the data: the
    state's workspace (:attr:`~topiclink.inference.engine.State.workspace`), rebuilt,
    never saved.

    ``pairs``: the training pairs with their per-document indexes; ``layout``: the
    document blocks and the chunks of pairs each completes; ``augmenter``: the chunks'
    (a, b) draws on the state's streams; ``pipeline`` / ``group_pipeline``: the block
    pipelines of the reference and Numba augmentation (``groups``: the chunk ranges of
    each Numba call, ``chunk_bounds`` the chunks' first pairs); ``lengths`` /
    ``inv_length``: the documents' token counts and their inverses; ``loglik_parts``: each
    chunk's pseudo log-likelihood, written by the draws; ``word_ptr`` / ``word_pos``: the
    positions of each word's tokens (the Metropolis-Hastings sweep's word proposal; empty
    for Gibbs).
    """

    pairs: PairSet
    layout: PipelineLayout
    augmenter: ChunkedAugmenter
    pipeline: BlockPipeline
    chunk_bounds: np.ndarray
    groups: list[tuple[int, int]]
    group_pipeline: BlockPipeline
    lengths: np.ndarray
    inv_length: np.ndarray
    loglik_parts: np.ndarray
    word_ptr: np.ndarray
    word_pos: np.ndarray


class RelationalGibbs(Algorithm):
    """The gRTM family's sampler; see the module docstring.

    Parameters
    ----------
    n_topics, alpha, beta : K, the Dirichlet priors (alpha (K,) or (D, K))
    loss : "logistic" | "hinge"; full : full U (else diagonal); approx : the Approx Z step
    c, hinge_cost, weight_prior_var : as the estimator's parameters
    negatives : the negative training pairs (:class:`~topiclink.parameters.Negatives`: the
        estimator's ``negative_ratio``, ``negatives_per_link``, ``c_neg``)
    augmentation : "reference" (the ``polyagamma`` package / NumPy's ``wald``, one Python
        call per chunk of pairs, each chunk with its NumPy stream) or "numba" (every pair's
        discriminant, draw and (a, b) in Numba, :func:`topiclink.relational.kernels.augment.
        augment_pair_chunks`: one call per pipeline block with threads, one per iteration
        without; chunk streams seeded from one 64-bit draw of the Z sweep's stream per
        iteration).  Both never depend on the number of threads; they give different
        chains.
    n_threads : threads (pipelined draws, weight moments, BLAS); never changes the chain
    sampler : "gibbs" (the exact O(K) conditional) or "mh" (exact Metropolis-Hastings with
        O(1) proposals and the link factor as the correction,
        :func:`~topiclink.relational.kernels.rtm_mh.sweep_relational_mh_range`; not with
        ``approx``)
    n_mh : Metropolis-Hastings steps per token (None: :data:`~topiclink.topics.lda.
        MH_STEPS` of ``"mh"``)
    """

    state_class = RelationalState

    def __init__(self, n_topics: int, alpha: np.ndarray, beta: float, *, loss: str,
                 full: bool, approx: bool, c: float, hinge_cost: float,
                 weight_prior_var: float, negatives: Negatives, n_threads: int = 1,
                 name: str = "gRTM", augmentation: str = "reference",
                 sampler: str = "gibbs", n_mh: int | None = None) -> None:
        if augmentation not in AUGMENTATION_SAMPLERS:
            raise ValueError(f"augmentation must be one of {AUGMENTATION_SAMPLERS}, got "
                             f"{augmentation!r}")
        if sampler not in ("gibbs", "mh"):
            raise ValueError(f"sampler must be 'gibbs' or 'mh', got {sampler!r}")
        if sampler == "mh" and approx:
            raise ValueError("sampler='mh' is exact: it has no approx variant")
        self.sampler = sampler
        self.n_mh = (MH_STEPS["mh"] if n_mh is None else int(n_mh)) if sampler == "mh" else 0
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = float(beta)
        self.loss = loss
        self.full = bool(full)
        self.approx = bool(approx)
        self.c = float(c)
        self.hinge_cost = float(hinge_cost)
        self.weight_prior_var = float(weight_prior_var)
        self.negatives = negatives
        self.augmentation = augmentation
        self.n_threads = max(1, int(n_threads))
        self.blas_threads = self.n_threads
        self.name = name
        self._weight_pool: Executor | None = None

    # ------------------------------------------------------------------ set-up
    def fingerprint(self, data: RelationalData) -> str:
        return data.fingerprint()

    def init(self, data: RelationalData, rng: np.random.Generator) -> RelationalState:
        init_rng, pair_rng, chain_rng, weight_rng, aug_rng = spawn(rng, 5)
        src, dst, y, cs, n_neg = training_pairs(data.links, self.negatives, self.c, pair_rng)
        if src.size == 0:
            raise ValueError("no training pairs: give at least one link or negative_ratio > 0")
        z, ndk, nwk, nk = init_topics(data.tokens, self.n_topics, init_rng)
        a, b = (np.array(v, dtype=np.float64) for v in initial_coefficients(
            self.loss, y, cs, self.hinge_cost))
        kernel_rng, aug_rngs = self._streams(data, src, dst, chain_rng, aug_rng)
        state = RelationalState(
            pair_source=src, pair_target=dst, pair_y=y, pair_c=cs, n_negatives=n_neg,
            z=z, ndk=ndk, nwk=nwk, nk=nk, U=np.zeros((self.n_topics, self.n_topics)),
            a=a, b=b, omega=np.zeros(src.size), kernel_rng=kernel_rng,
            weight_rng=weight_rng, aug_rngs=aug_rngs,
            data_fingerprint=self.fingerprint(data))
        self.attach(state, data)
        return state

    def _streams(self, data: RelationalData, src: np.ndarray, dst: np.ndarray,
                 chain_rng: np.random.Generator, aug_rng: np.random.Generator
                 ) -> tuple[np.ndarray, list[np.random.Generator]]:
        """The Z sweep's xoshiro state(s) and the augmentation streams: one sweep stream
        and one stream per chunk of pairs (a hook: the Dask sampler has one of each per
        shard)."""
        layout = self._layout(data, src, dst)
        return kernel_state(chain_rng), spawn(aug_rng, len(layout.chunks))

    def _layout(self, data: RelationalData, src: np.ndarray, dst: np.ndarray):  # noqa: ANN202
        # blocks of documents of about equal sweep work (tokens + pair visits x topics
        # touched); the pairs each block completes are drawn while later blocks are swept
        D = data.tokens.n_docs
        lengths = data.tokens.lengths
        visits = np.bincount(src, minlength=D) + np.bincount(dst, minlength=D)
        return pipeline_layout(lengths + visits * np.minimum(lengths, self.n_topics), src, dst)

    def check_values(self, state: RelationalState, data: RelationalData) -> None:
        tok = data.tokens
        check_topic_counts(state.z, state.ndk, state.nwk, state.nk, tok.docs, tok.words)
        P, D = state.pair_source.size, tok.n_docs
        for name in ("pair_target", "pair_y", "pair_c", "a", "b", "omega"):
            if getattr(state, name).shape != (P,):
                raise ValueError(f"state: {name} has {getattr(state, name).size} entries "
                                 f"for {P} pairs")
        for ids in (state.pair_source, state.pair_target):
            if P and (ids.min() < 0 or ids.max() >= D):
                raise ValueError(f"state: pair documents outside [0, {D})")
        if np.any((state.pair_y != 0) & (state.pair_y != 1)) or np.any(state.pair_c <= 0):
            raise ValueError("state: pair labels must be 0/1 and their constants > 0")
        if np.any(state.b <= 0):
            raise ValueError("state: augmentation coefficients b must be > 0")

    def attach(self, state: RelationalState, data: RelationalData) -> None:
        """The state's :class:`GibbsWorkspace` (built once per state and run)."""
        if isinstance(state.workspace, GibbsWorkspace):
            return
        pairs = PairSet(state.pair_source, state.pair_target, state.pair_y, state.pair_c,
                        data.tokens.n_docs)
        layout = self._layout(data, state.pair_source, state.pair_target)
        augmenter = ChunkedAugmenter(None, self.loss, pairs.y, pairs.c, self.hinge_cost,
                                     bounds=layout.chunks, generators=state.aug_rngs)
        lengths = data.tokens.lengths
        # the Numba draws: one call per block's chunks (threads) or per iteration
        bounds = np.array([lo for lo, _ in layout.chunks] + [layout.chunks[-1][1]]
                          if layout.chunks else [0], dtype=np.int64)
        threaded = self.n_threads > 1
        groups: list[tuple[int, int]] = []
        group_of_block: list[list[int]] = []
        for ids in layout.block_chunks:
            if ids and threaded:
                group_of_block.append([len(groups)])
                groups.append((min(ids), max(ids) + 1))
            else:
                group_of_block.append([])
        if not threaded and layout.chunks:
            group_of_block[-1] = [0]
            groups.append((0, len(layout.chunks)))
        word_ptr, word_pos = (word_index(data.tokens.words, data.tokens.n_words)
                              if self.n_mh else (np.zeros(1, np.int64), np.zeros(0, np.int64)))
        state.workspace = GibbsWorkspace(
            pairs=pairs, layout=layout, augmenter=augmenter,
            pipeline=BlockPipeline(layout.block_chunks, threaded=threaded),
            chunk_bounds=bounds, groups=groups,
            group_pipeline=BlockPipeline(group_of_block, threaded=threaded),
            lengths=lengths, inv_length=1.0 / lengths,
            loglik_parts=np.zeros(len(layout.chunks)), word_ptr=word_ptr, word_pos=word_pos)

    @contextlib.contextmanager
    def session(self, state: RelationalState, data: RelationalData) -> Iterator[None]:
        if self.n_threads <= 1:
            yield
            return
        # one helper thread computes part of the weight moments while this one does the rest
        with helper_thread("topiclink-weights") as pool:
            self._weight_pool = pool
            try:
                yield
            finally:
                self._weight_pool = None

    # ------------------------------------------------------------------ one iteration
    def step(self, state: RelationalState, data: RelationalData) -> dict[str, float]:
        self.attach(state, data)
        ws: GibbsWorkspace = state.workspace
        pairs, layout, lengths = ws.pairs, ws.layout, ws.lengths
        tok = data.tokens
        a, b = state.a, state.b
        t0 = time.perf_counter()
        zbar = self.draw_U(state, pairs, lengths)
        U = state.U
        t1 = time.perf_counter()
        if self.n_mh and not self.full:          # diagonal U: O(D K), not a product
            Uz = zbar * np.diag(U)
            Vz = Uz.copy()
        else:
            Uz = zbar @ U.T
            Vz = zbar @ U
        # the sweep reads this iteration's (a, b) by document; new draws go to a, b
        a_out, b_out = pairs.by_source(a), pairs.by_source(b)
        a_in, b_in = pairs.by_target(a), pairs.by_target(b)
        ndk, inv_length = state.ndk, ws.inv_length
        augmenter, loglik_parts = ws.augmenter, ws.loglik_parts

        refresh = rtm_mh.REFRESH_FULL if self.full else rtm_mh.REFRESH_DIAGONAL

        def sweep_block(block: int) -> None:
            if self.n_mh:
                rtm_mh.sweep_relational_mh_range(
                    tok.words, tok.offsets, state.z, ndk, state.nwk, state.nk, self.alpha,
                    self.beta, state.kernel_rng[0], ws.word_ptr, ws.word_pos, U, Uz, Vz,
                    pairs.out.ptr, pairs.out.nbr, a_out, b_out, pairs.into.ptr,
                    pairs.into.nbr, a_in, b_in, self.n_mh, refresh,
                    layout.doc_edges[block], layout.doc_edges[block + 1])
                return
            rtm_kernels.sweep_relational_range(
                tok.words, tok.offsets, state.z, ndk, state.nwk, state.nk, self.alpha,
                self.beta, state.kernel_rng[0], U, Uz, Vz, pairs.out.ptr, pairs.out.nbr,
                a_out, b_out, pairs.into.ptr, pairs.into.nbr, a_in, b_in, self.approx,
                layout.doc_edges[block], layout.doc_edges[block + 1])

        def draw_chunk(i: int) -> None:
            # both endpoints swept: Uz[j] = U zbar_j is fresh, omega_ij = zbar_i . Uz[j]
            lo, hi = layout.chunks[i]
            omega = rtm_kernels.pair_dots(ndk, Uz, pairs.source[lo:hi], pairs.target[lo:hi],
                                          inv_length)
            state.omega[lo:hi] = omega
            augmenter.draw_chunk(i, omega, a, b)
            loglik_parts[i] = (hi - lo) * pseudo_loglik(
                self.loss, omega, pairs.y[lo:hi], pairs.c[lo:hi], self.hinge_cost)

        if self.augmentation == "numba":
            base_seed = np.uint64(augment_kernels.draw_seed(state.kernel_rng[0]))
            loss_code = (augment_kernels.LOSS_LOGISTIC if self.loss == "logistic"
                         else augment_kernels.LOSS_HINGE)
            bounds, groups = ws.chunk_bounds, ws.groups

            def draw_group(g: int) -> None:
                lo, hi = groups[g]
                augment_kernels.augment_pair_chunks(
                    loss_code, lo, hi, bounds, base_seed, ndk, Uz, pairs.source,
                    pairs.target, inv_length, pairs.y, pairs.c, self.hinge_cost,
                    HINGE_EPS, state.omega, a, b, loglik_parts)

            seconds_z, seconds_lambda = ws.group_pipeline.run(sweep_block, draw_group)
        else:
            seconds_z, seconds_lambda = ws.pipeline.run(sweep_block, draw_chunk)
        return {"seconds_weights": t1 - t0, "seconds_z": seconds_z,
                "seconds_lambda": seconds_lambda,
                "link_loglik": float(loglik_parts.sum()) / pairs.n_pairs}

    def draw_U(self, state: RelationalState, pairs: PairSet, lengths: np.ndarray
               ) -> np.ndarray:
        """Step 1: ``state.U`` from its Gaussian conditional given the topic proportions and
        the pairs' (a, b) (eq. 13); returns zbar (D, K)."""
        K = self.n_topics
        zbar = state.ndk / lengths[:, None]
        P, s = weight_posterior(zbar, pairs.source, pairs.target, state.a, state.b,
                                self.weight_prior_var, self.full,
                                (pairs.out.ptr, pairs.out.nbr, pairs.out.order),
                                executor=self._weight_pool)
        eta = draw_weights(state.weight_rng, P, s)
        state.U = eta.reshape(K, K) if self.full else np.diag(eta)
        return zbar

    def objective(self, state: RelationalState, data: RelationalData) -> float:
        """The word part's collapsed log joint per token."""
        return lda_kernels.log_joint(state.ndk, state.nwk, state.nk, self.alpha,
                                     self.beta) / data.tokens.n_tokens

    def averaged(self, state: RelationalState, data: RelationalData) -> dict[str, np.ndarray]:
        return {"U": state.U, "nwk": state.nwk}

    def pairs(self, state: RelationalState, data: RelationalData) -> PairSet:
        """The training pairs with their per-document indexes."""
        self.attach(state, data)
        return state.workspace.pairs
