"""Dask helpers of the sharded samplers: the counts of a ShardSet counted by the workers
from the shard files (:func:`word_topic_counts`) and a shard file read by a worker
(:func:`load_shard_task`).  The gRTM sampler's shards run on the executor layer too
(:mod:`topiclink.families.rtm.shards`): its own recovery helpers are gone.

The AD-LDA sweeps that lived here (``DaskSweeper``) run on the executor layer now:
:class:`topiclink.inference.adlda.ADLDAShards` -- one sweep, written once, on the
calling thread, on threads or on a Dask cluster (:class:`~topiclink.execution.
DaskExecutor`, whose kept shard states, recovery points and replay after a lost worker
replace this module's); ``topiclink.distributed.DaskSweeper`` still resolves to its
raw-array adapter for one release.  The connection and fault handling
(:class:`~topiclink.execution.dask.DaskConnection`, :class:`WorkerLostError`,
:class:`SchedulerLostError`) are re-exported from :mod:`topiclink.execution.dask`.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from topiclink.execution.dask import (  # noqa: F401 - re-exported for one release
    MAX_RECOVERIES,
    NO_CLIENT,
    SCHEDULER_TIMEOUT,
    DaskConnection,
    SchedulerLostError,
    WorkerLostError,
    connect_client,
    resolve_client,
)
from topiclink.execution.shards import compact_dtype  # noqa: F401 - re-exported

__all__ = ["DaskConnection", "resolve_client", "connect_client", "compact_dtype",
           "load_shard_task", "count_shard_words", "word_topic_counts",
           "WorkerLostError", "SchedulerLostError", "SCHEDULER_TIMEOUT", "MAX_RECOVERIES"]

logger = logging.getLogger(__name__)

def load_shard_task(path: str, n_tokens: int, n_docs: int, sha256: str) -> dict:
    """The ``shard`` argument of :func:`sweep_shard` read from a shard file (runs on a
    worker: the tokens never pass through the driver)."""
    from topiclink.data.shards import load_shard

    words, offsets, _ = load_shard(path, n_tokens, n_docs, sha256)
    return {"words": words, "offsets": offsets, "vocab": np.unique(words).astype(np.int32)}


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
    files (:func:`count_shard_words`) and summed here: the driver never reads the words."""
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
