"""The pure pieces of approximate distributed Gibbs sweeps (AD-LDA, Newman et al. 2009)
over fixed document shards: the local step :func:`sweep_shard`, written once, which runs
wherever an executor runs it, and a shard's tokens (:func:`shard_tokens`).

One shard's sweep: the shard sweeps its tokens with
:func:`topiclink.topics.kernels.lda.sweep_range` against its own copy of the word-topic counts
taken at the start of the sweep and with its own xoshiro row, and reports its count
changes (:func:`~topiclink.execution.count_delta`).  The iteration around it (the split
into shards, the counts every shard reads, the merge of the changes in shard order, the
write back) is :class:`topiclink.topics.adlda.ADLDAShards`, a
:class:`~topiclink.inference.sharded.ShardedAlgorithm`.  This module imports no more than
the kernels and the executor layer: a Dask worker imports it to run :func:`sweep_shard`
(with a :class:`~topiclink.data.shards.ShardSet` it reads its shards' tokens from the
shard files, cached per worker process).

:func:`word_topic_counts` counts the word-topic table of a ShardSet's topics on the Dask
workers from the shard files (:func:`count_shard_words`): the driver never reads the
words.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from topiclink.execution import count_delta
from topiclink.execution.dask import resolve_client
from topiclink.topics.kernels import lda as kernels

__all__ = ["sweep_shard", "shard_tokens", "padded_copy", "count_shard_words",
           "word_topic_counts"]


@functools.lru_cache(maxsize=64)
def _shard_file(path: str, n_tokens: int, n_docs: int, sha256: str) -> dict:
    """A shard file's tokens (read once per process: the worker keeps them)."""
    from topiclink.data.shards import load_shard

    words, offsets, _ = load_shard(path, n_tokens, n_docs, sha256)
    return {"words": words, "offsets": offsets, "vocab": np.unique(words).astype(np.int32)}


def shard_tokens(static: dict | tuple) -> dict:
    """A shard's ``words``, ``offsets`` (local, from 0) and ``vocab`` (its distinct words,
    int32): the static data itself, or read from its shard file (``static``: the
    :meth:`~topiclink.data.shards.ShardSet.task_arguments` of the shard)."""
    return static if isinstance(static, dict) else _shard_file(*static)


def padded_copy(a: np.ndarray) -> np.ndarray:
    """A copy of the small hot array ``a`` with 64 bytes of padding on both sides, so that
    no other thread's data shares its cache lines (false sharing)."""
    pad = max(1, 64 // a.itemsize)
    buf = np.zeros(a.size + 2 * pad, dtype=a.dtype)
    out = buf[pad:pad + a.size]
    out[:] = a
    return out


def sweep_shard(state: tuple, shared: tuple, alpha: np.ndarray, static: dict | tuple
                ) -> tuple[tuple, tuple]:
    """One AD-LDA sweep of one shard.

    ``state``: the shard's ``(z, ndk, rng row)``; ``shared``: ``(nwk, nk, beta,
    in_place)`` with the counts at the start of the sweep (read only); ``alpha``: (K,),
    (1, K) or the shard's rows (D_s, K).  With ``in_place`` (an in-process executor) the
    state's arrays are updated where they are and the report is the shard's whole count
    tables ``(None, nwk, nk)`` (the driver subtracts the start: cheaper in memory than
    picking rows); otherwise (a shipping executor, which may replay the round) the
    function is pure and the report is ``(word ids, their nwk changes (compact), nk
    change)``.
    """
    nwk0, nk0, beta, in_place = shared
    tokens = shard_tokens(static)
    words, offsets = tokens["words"], tokens["offsets"]
    z, ndk, rng = state if in_place else (state[0].copy(), state[1].copy(), state[2].copy())
    nwk, nk = nwk0.copy(), padded_copy(nk0)
    kernels.sweep_range(words, offsets, 0, offsets.shape[0] - 1, z, ndk, nwk, nk, alpha,
                        float(beta), rng)
    if in_place:
        return (z, ndk, rng), (None, nwk, nk)
    rows, changes = count_delta(nwk, nwk0, tokens["vocab"])
    return (z, ndk, rng), (rows, changes, nk - nk0)


def count_shard_words(path: str, n_tokens: int, n_docs: int, sha256: str, z: np.ndarray,
                      n_topics: int) -> tuple[np.ndarray, np.ndarray]:
    """``(vocab, rows)``: the shard's word-topic counts, for its distinct words only (runs
    on a worker; ``z`` the shard's topics)."""
    from topiclink.data.shards import load_shard

    words, _, _ = load_shard(path, n_tokens, n_docs, sha256)
    vocab, inverse = np.unique(words, return_inverse=True)
    rows = np.bincount(inverse.astype(np.int64) * n_topics + z,
                       minlength=vocab.size * n_topics).reshape(vocab.size, n_topics)
    return vocab.astype(np.int32), rows.astype(np.int32)


def word_topic_counts(shards: Any, z: np.ndarray, n_topics: int, client: Any = None
                      ) -> np.ndarray:
    """int32 (V, K) word-topic counts of the topics ``z`` of a
    :class:`~topiclink.data.shards.ShardSet`, counted by the Dask workers from the shard
    files (:func:`count_shard_words`) and summed here, one shard's rows at a time.

    ``client``: a ``distributed.Client``, a scheduler address or None (the current
    client): the ``client_arg`` of the run's :class:`~topiclink.execution.DaskExecutor`.
    """
    client, owned = resolve_client(client)
    try:
        nwk = np.zeros((shards.n_words, n_topics), dtype=np.int32)
        offsets = [0]
        for s in shards.shards:
            offsets.append(offsets[-1] + s.n_tokens)
        futures = [client.submit(count_shard_words, *shards.task_arguments(i),
                                 z[offsets[i]:offsets[i + 1]], int(n_topics), pure=False)
                   for i in range(shards.n_shards)]
        for future in futures:          # one shard's rows at a time on the driver
            vocab, rows = future.result()
            nwk[vocab] += rows
            future.release()
        return nwk
    finally:
        if owned:
            client.close()
