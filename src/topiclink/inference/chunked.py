"""Approximate distributed Gibbs sweeps (AD-LDA, Newman et al. 2009) on a thread pool.

The documents are split into fixed chunks balanced by token count.  Each chunk is swept
by :func:`topiclink.kernels.lda.sweep_range` (which releases the GIL) against its own copy
of the word-topic counts taken at the start of the sweep and with its own RNG stream;
afterwards the count changes of all chunks are added up.  The result depends only on the
seed and the number of chunks, never on how many threads ran them.
"""

from __future__ import annotations

import numpy as np

from topiclink.execution import padded_rows
from topiclink.inference.threaded import ThreadedSweeper
from topiclink.kernels import lda as kernels

__all__ = ["ChunkedSweeper"]


class ChunkedSweeper(ThreadedSweeper):
    """Run AD-LDA sweeps over ``len(states)`` document chunks with ``n_threads`` threads."""

    def __init__(self, offsets: np.ndarray, states: np.ndarray, n_threads: int) -> None:
        super().__init__(states, n_threads)
        self.chunks = kernels.balanced_chunks(offsets, states.shape[0])

    def sweep(self, words: np.ndarray, offsets: np.ndarray, z: np.ndarray, ndk: np.ndarray,
              nwk: np.ndarray, nk: np.ndarray, alpha: np.ndarray, beta: float) -> None:
        """One AD-LDA sweep; updates ``z``, ``ndk``, ``nwk`` and ``nk`` in place."""
        n_chunks = self.chunks.size - 1
        # the chunks' n_k copies and RNG states on cache lines of their own
        nk_rows = padded_rows(np.tile(nk, (n_chunks, 1)))
        local = [(nwk.copy(), nk_rows[c]) for c in range(n_chunks)]
        rng_rows = padded_rows(self.states)

        def run(c: int) -> None:
            kernels.sweep_range(words, offsets, int(self.chunks[c]), int(self.chunks[c + 1]),
                                z, ndk, local[c][0], local[c][1], alpha, beta, rng_rows[c])

        self.run_all(run, n_chunks)
        self.states[:] = rng_rows
        base_w = nwk.copy()
        base_k = nk.copy()
        for c in range(n_chunks):
            nwk += local[c][0] - base_w
            nk += local[c][1] - base_k
