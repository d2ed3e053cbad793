"""Dropping documents while keeping links and labels consistent."""

from __future__ import annotations

import logging

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.data.links import Links

__all__ = ["drop_empty_documents"]

logger = logging.getLogger(__name__)


def drop_empty_documents(corpus: Corpus, links: Links | None = None,
                         labels: np.ndarray | None = None
                         ) -> tuple[Corpus, Links | None, np.ndarray | None, np.ndarray]:
    """Remove documents without tokens, re-indexing links and labels to match.

    Links touching a dropped document are removed too; both counts are logged.

    Returns
    -------
    corpus, links, labels : the reduced data (``None`` stays ``None``)
    kept : ndarray of int64, positions of the kept documents in the input
    """
    reduced, kept = corpus.drop_empty()
    if kept.size == corpus.n_docs:
        return corpus, links, labels, kept
    new_links = None
    if links is not None:
        new_links = links.subgraph(kept)
        lost = links.n_links - new_links.n_links
        if lost:
            logger.info("dropped %d links that touched empty documents", lost)
    new_labels = None if labels is None else np.asarray(labels)[kept]
    return reduced, new_links, new_labels, kept
