"""WarpLDA's two phases on threads: document shards x vocabulary blocks, as
:mod:`topiclink.topics.partition` does for Gibbs.

The sequential kernel (:func:`topiclink.topics.kernels.lda_warp.sweep_warp`) visits the
tokens word by word (document proposals, accepted with the word's counts ``C_w``), then
document by document (word proposals, accepted with ``C_d``).  A proposal reads the
topic of a random token of the same document (word phase) or of the same word (document
phase), so a phase can run on several threads at once when no two of them touch the
same document or the same word: with P workers the documents are split into P shards
and the vocabulary into P blocks, both balanced by token count, and each phase of the
sweep becomes P sub-phases; in sub-phase s worker i visits the tokens of cell
(shard i, block (i + s) mod P), in word order in the word phase and in document order
in the document phase.  Every token of worker i's documents and of its words is then
either its own or not moved by anyone during the sub-phase, so the counts ``C_d``,
``C_w`` and the proposals it reads are exact; what lags is the topic totals ``n_k``,
which each worker reads from a private copy taken at the start of the sub-phase and
which are added up at its end (Yan, Xu & Qi 2009; the same and only approximation as
the Gibbs partition scheme).  With P = 1 the sweep is the sequential kernel's, draw for
draw.

The result depends only on the seed and P (worker i always uses stream i), never on the
number of threads running the workers.  A word's tokens stay in one block, so a word
holding more than a block's share of the tokens bounds the speed-up (the Gibbs scheme's
hot-word split needs a private copy of a count row, which WarpLDA's proposals, read
from the other workers' tokens, cannot share); the sweeper logs the largest cell's share
of its sub-phase.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from topiclink.execution import padded_rows
from topiclink.execution.shards import balanced_chunks
from topiclink.topics.kernels import lda_mh, lda_warp
from topiclink.topics.partition import word_blocks
from topiclink.topics.threaded import ThreadedSweeper

__all__ = ["Cells", "WarpPartitionSweeper", "cell_lists"]

logger = logging.getLogger(__name__)


class Cells(NamedTuple):
    """The cells (shard i, block b), numbered ``i * P + b``, with boundaries ``bounds``
    (P^2 + 1,) into both token lists: ``slots`` (word-order slots j, ascending within a
    cell, so word by word; ``slot_words`` their words) and ``positions`` (document-order
    positions i, ascending within a cell, so document by document).  Shard i holds the
    documents ``doc_bounds[i]:doc_bounds[i + 1]``, block b the words
    ``word_bounds[b]:word_bounds[b + 1]``."""

    slots: np.ndarray
    slot_words: np.ndarray
    positions: np.ndarray
    bounds: np.ndarray
    doc_bounds: np.ndarray
    word_bounds: np.ndarray


def cell_lists(words: np.ndarray, offsets: np.ndarray, n_words: int, n_shards: int,
               pos: np.ndarray) -> Cells:
    """The :class:`Cells` of ``n_shards`` document shards and as many word blocks (both
    balanced by token count); ``pos`` maps slots to positions
    (:func:`~topiclink.topics.kernels.lda_warp.word_order`)."""
    P = int(n_shards)
    n_docs = offsets.shape[0] - 1
    doc_bounds = balanced_chunks(offsets, P)
    doc_bounds = np.concatenate([doc_bounds, np.full(P + 1 - doc_bounds.size, n_docs)])
    shard_of_doc = np.repeat(np.arange(P), np.diff(doc_bounds))
    block_of_word = word_blocks(words, n_words, P)        # non-decreasing in the word id
    word_bounds = np.searchsorted(block_of_word, np.arange(P + 1), side="left")
    docs = np.repeat(np.arange(n_docs), np.diff(offsets))
    cell = shard_of_doc[docs] * P + block_of_word[words]
    positions = np.argsort(cell, kind="stable")
    slots = np.argsort(cell[pos], kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=P * P))])
    return Cells(slots, np.ascontiguousarray(words[pos[slots]]), positions,
                 bounds.astype(np.int64), doc_bounds.astype(np.int64),
                 word_bounds.astype(np.int64))


class WarpPartitionSweeper(ThreadedSweeper):
    """Partitioned WarpLDA sweeps over ``len(states)`` workers on ``n_threads`` threads.

    Parameters
    ----------
    words, docs : int32 (N,) the tokens' words and documents, sorted by document
    offsets : int64 (D + 1,) document boundaries
    n_words : V
    states : uint64 (P, 4) one xoshiro stream per worker
    n_threads : threads running the P workers of a sub-phase (never changes the chain)
    ptr, pos, slot, docs_w : the word order (:func:`~topiclink.topics.kernels.lda_warp.word_order`)
    zw : int32 (N,) the assignments in word order (kept equal to ``z[pos]``)
    n_mh : Metropolis-Hastings steps per token and phase
    """

    def __init__(self, words: np.ndarray, docs: np.ndarray, offsets: np.ndarray,
                 n_words: int, states: np.ndarray, n_threads: int, ptr: np.ndarray,
                 pos: np.ndarray, slot: np.ndarray, docs_w: np.ndarray, zw: np.ndarray,
                 n_mh: int) -> None:
        P = int(states.shape[0])
        super().__init__(states, min(int(n_threads), P))
        self.n_shards = P
        self.n_words = int(n_words)
        self.docs = docs
        self.ptr, self.pos, self.slot, self.docs_w, self.zw = ptr, pos, slot, docs_w, zw
        self.n_mh = int(n_mh)
        self.cells = cell_lists(words, offsets, n_words, P, pos)
        if P > 1 and words.size:
            sizes = np.diff(self.cells.bounds).reshape(P, P)
            worst = sum(sizes[np.arange(P), (np.arange(P) + s) % P].max() for s in range(P))
            logger.debug("warp partition: P = %d, the sub-phases' largest cells sum to "
                         "%.2fx an even split's", P, worst * P / words.size)

    def sweep(self, words: np.ndarray, offsets: np.ndarray, z: np.ndarray, ndk: np.ndarray,
              nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray, beta: float) -> None:
        """One sweep: the word phase's P sub-phases, ``ndk`` brought up to date (one
        pass per shard), the document phase's P sub-phases, ``nwk`` brought up to date
        (one pass per block); updates ``z``, ``zw``, ``ndk``, ``nwk`` and ``nk`` in
        place.  ``alpha``: one prior for all documents, (K,) or (1, K)."""
        P = self.n_shards
        K = nk.shape[0]
        cells = self.cells
        alpha = np.ascontiguousarray(np.reshape(alpha, -1)[:K], dtype=np.float64)
        a_prob = np.empty(K)
        a_alias = np.empty(K, np.int64)
        a_total = lda_mh.build_alias(alpha, a_prob, a_alias, np.empty(K, np.int64),
                                     np.empty(K, np.int64))
        rng_rows = padded_rows(self.states)
        z_start = z.copy()

        def word_cell(i: int, cell: int, local: np.ndarray) -> None:
            lda_warp.warp_word_cell(cells.slots, cells.slot_words, cells.bounds[cell],
                                    cells.bounds[cell + 1], offsets, z, self.zw, nwk,
                                    local, a_prob, a_alias, a_total, beta, self.n_words,
                                    rng_rows[i], self.pos, self.docs_w, self.n_mh)

        def doc_cell(i: int, cell: int, local: np.ndarray) -> None:
            lda_warp.warp_doc_cell(cells.positions, cells.bounds[cell],
                                   cells.bounds[cell + 1], words, self.docs, z, self.zw,
                                   ndk, local, alpha, beta, self.n_words, rng_rows[i],
                                   self.ptr, self.slot, self.n_mh)

        self._phase(word_cell, nk)
        zw_mid = self.zw.copy()
        self.run_all(lambda i: lda_warp.refresh_doc_rows(
            offsets, cells.doc_bounds[i], cells.doc_bounds[i + 1], z_start, z, ndk), P)
        self._phase(doc_cell, nk)
        self.run_all(lambda b: lda_warp.refresh_word_rows(
            self.ptr, cells.word_bounds[b], cells.word_bounds[b + 1], zw_mid, self.zw,
            nwk), P)
        self.states[:] = rng_rows

    def _phase(self, cell_kernel: Callable[[int, int, np.ndarray], None],
               nk: np.ndarray) -> None:
        """The P sub-phases of one phase: in sub-phase s worker i runs ``cell_kernel``
        on cell (i, (i + s) mod P) against its copy of ``nk``; the copies' changes are
        added up after each sub-phase."""
        P = self.n_shards
        for shift in range(P):
            start = nk.copy()
            local = padded_rows(np.tile(start, (P, 1)))
            self.run_all(lambda i, shift=shift, local=local: cell_kernel(
                i, i * P + (i + shift) % P, local[i]), P)
            nk[:] = start + (local - start).sum(axis=0).astype(nk.dtype)
