"""Partitioned parallel Gibbs sweeps: documents x vocabulary blocks, no copies of the
word-topic counts.

With P shards the documents are split into P shards balanced by token count and the
vocabulary into P blocks balanced by token count (Yan, Xu & Qi 2009, "Parallel inference
for latent Dirichlet allocation on graphics processing units"; tomotopy's "partition"
scheme).  A sweep has P phases; in phase s worker i samples the tokens of document shard
i whose words lie in block (i + s) mod P.  Within a phase the workers touch disjoint rows
of the document-topic counts and disjoint rows of the word-topic counts, so they share
nothing but the topic totals n_k: each worker samples against a private copy taken at the
start of the phase, and the copies' changes are added up at its end.  The only
approximation is therefore that n_k (one of the V + D + 1 count vectors a token reads)
lags the other workers by at most one phase; with P = 1 the sweep is the exact sequential
sampler, draw for draw.

*Hot words.*  A word's tokens must stay in one block (its count row is written by one
worker at a time), so a word holding more tokens than a block should bounds the speed-up:
a Zipf vocabulary whose top word holds 12 % of the tokens gives 16 workers at most
1 / 0.12 = 8x, and cells of (shard, block) twice the mean (measured: 16 threads ran 2.3-6x
faster than one, tomotopy's partition scheme alike).  Words with more than
N / (HOT_SHARE P^2) tokens (a quarter of a (shard, block) cell's share) are therefore
treated like n_k: their tokens are dealt round-robin to the P blocks of their shard, each
worker samples them (after its block's own words, in a second loop: no per-token branch)
against a private copy of their count rows taken at the start of the phase, and the
copies' changes are added up at its end.  Hot words' counts lag by at most
one phase, as n_k's do; with P = 1 there are none.

The result depends only on the seed and P (worker i always uses stream i), never on the
number of threads running the workers.  Costs beyond the token kernel: one stable sort of
the tokens when the sweeper is built (kept for the whole fit), P small copies of n_k and
of the hot rows per phase; nothing of size V x K is copied, unlike AD-LDA
(:mod:`topiclink.topics.chunked`).
"""

from __future__ import annotations

import numpy as np

from topiclink.execution import padded_rows
from topiclink.execution.shards import balanced_chunks
from topiclink.topics.kernels import lda as kernels
from topiclink.topics.threaded import ThreadedSweeper

__all__ = ["HOT_SHARE", "PartitionSweeper", "hot_words", "word_blocks"]

#: a word is hot when it holds more than 1 / (HOT_SHARE P^2) of the tokens (a quarter of
#: one (shard, block) cell)
HOT_SHARE = 4


def word_blocks(words: np.ndarray, n_words: int, n_blocks: int) -> np.ndarray:
    """Block (0..n_blocks-1) of every word id: contiguous id ranges holding near-equal
    numbers of tokens (a word's tokens are never split)."""
    freq = np.bincount(words, minlength=n_words).astype(np.float64)
    cum = np.cumsum(freq)
    cuts = np.searchsorted(cum, np.linspace(0.0, cum[-1] if cum.size else 0.0,
                                            n_blocks + 1)[1:-1], side="left")
    return np.searchsorted(cuts, np.arange(n_words), side="right").astype(np.int64)


def hot_words(words: np.ndarray, n_words: int, n_shards: int) -> np.ndarray:
    """Ids of the words too frequent for one block of ``n_shards`` (more than
    N / (HOT_SHARE P^2) tokens), most frequent first; none when P = 1."""
    if n_shards <= 1 or words.size == 0:
        return np.zeros(0, dtype=np.int64)
    freq = np.bincount(words, minlength=n_words)
    hot = np.flatnonzero(freq > words.size / (HOT_SHARE * n_shards * n_shards))
    return hot[np.argsort(-freq[hot], kind="stable")].astype(np.int64)


class PartitionSweeper(ThreadedSweeper):
    """Partitioned sweeps over ``len(states)`` shards with ``n_threads`` threads.

    Parameters
    ----------
    words : int32 (N,) tokens sorted by document
    offsets : int64 (D + 1,) document boundaries
    n_words : V
    states : uint64 (P, 4) one xoshiro stream per worker
    n_threads : threads running the P workers of a phase (never changes the chain)
    """

    def __init__(self, words: np.ndarray, offsets: np.ndarray, n_words: int,
                 states: np.ndarray, n_threads: int) -> None:
        P = int(states.shape[0])
        super().__init__(states, min(int(n_threads), P))
        self.n_shards = P
        n_docs = offsets.shape[0] - 1
        lengths = np.diff(offsets)
        docs = np.repeat(np.arange(n_docs, dtype=np.int32), lengths)
        chunks = balanced_chunks(offsets, P)
        shard_of_doc = np.repeat(np.arange(chunks.size - 1), np.diff(chunks))
        self.n_words = int(n_words)
        self.hot_ids = hot_words(words, n_words, P)
        hot_of_word = np.full(n_words, -1, dtype=np.int32)
        hot_of_word[self.hot_ids] = np.arange(self.hot_ids.size, dtype=np.int32)
        token_hot = hot_of_word[words]
        is_hot = token_hot >= 0
        # the other words: P contiguous id blocks balanced by their tokens
        block_of_word = word_blocks(words[~is_hot], n_words, P)
        block = block_of_word[words]
        # a hot word's tokens: dealt round-robin to the P blocks of their shard
        shard = shard_of_doc[docs]
        hot_shard = shard[is_hot]
        rank = np.arange(hot_shard.size) - np.searchsorted(hot_shard, hot_shard)
        block[is_hot] = (rank + hot_shard) % P
        # each cell: its other tokens, then its hot tokens (each part in corpus order,
        # grouped by document; stable sort); a hot token's word is its hot row h
        key = (shard * P + block) * 2 + is_hot
        self.index = np.argsort(key, kind="stable").astype(np.int64)
        coded = np.where(is_hot, token_hot, words).astype(np.int32)
        self.words = np.ascontiguousarray(coded[self.index])
        self.docs = np.ascontiguousarray(docs[self.index])
        counts = np.bincount(key, minlength=2 * P * P)
        self.bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def block_range(self, shard: int, block: int) -> tuple[int, int]:
        """Token range of (document shard, word block) in the permuted list (its hot
        tokens last: :meth:`hot_range`)."""
        b = 2 * (shard * self.n_shards + block)
        return int(self.bounds[b]), int(self.bounds[b + 2])

    def hot_range(self, shard: int, block: int) -> tuple[int, int]:
        """The cell's hot tokens: their ``words`` entries are rows of the hot-word copy."""
        b = 2 * (shard * self.n_shards + block) + 1
        return int(self.bounds[b]), int(self.bounds[b + 1])

    def sweep(self, words: np.ndarray, offsets: np.ndarray, z: np.ndarray, ndk: np.ndarray,
              nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray, beta: float) -> None:
        """One partitioned sweep; updates ``z``, ``ndk``, ``nwk`` and ``nk`` in place.
        ``words`` and ``offsets`` (the corpus the sweeper was built on) are accepted for
        the sweep interface the token samplers call."""
        P = self.n_shards
        K = nk.shape[0]
        H = self.hot_ids.size
        # each worker's n_k copy, hot rows and RNG state on cache lines of their own
        rng_rows = padded_rows(self.states)
        hot_flat = padded_rows(np.zeros((P, H * K), dtype=nwk.dtype))
        hot_local = [hot_flat[i].reshape(H, K) for i in range(P)]
        for phase in range(P):
            start = nk.copy()
            local = padded_rows(np.tile(start, (P, 1)))
            hot_start = nwk[self.hot_ids]
            hot_flat[:] = hot_start.reshape(-1)

            def run(i: int, phase: int = phase, local: np.ndarray = local) -> None:
                block = (i + phase) % P
                lo, hi = self.block_range(i, block)
                mid, _ = self.hot_range(i, block)
                V = self.n_words
                # the block's own words against nwk, then the hot words against this
                # worker's copy of their rows (two loops: no per-token branch)
                if mid > lo:
                    kernels.sweep_block(self.words, self.docs, self.index, lo, mid, z, ndk,
                                        nwk, local[i], alpha, beta, rng_rows[i], V)
                if hi > mid:
                    kernels.sweep_block(self.words, self.docs, self.index, mid, hi, z, ndk,
                                        hot_local[i], local[i], alpha, beta, rng_rows[i], V)

            self.run_all(run, P)
            nk[:] = start + (local - start).sum(axis=0).astype(nk.dtype)
            if H:
                change = (hot_flat - hot_start.reshape(-1)).sum(axis=0)
                nwk[self.hot_ids] = hot_start + change.reshape(H, K).astype(nwk.dtype)
        self.states[:] = rng_rows
