"""Dropping documents while keeping links and labels consistent."""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from topiclink.data.checks import DataError
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links

__all__ = ["drop_empty_documents"]

logger = logging.getLogger(__name__)


def drop_empty_documents(corpus: Corpus, links: Links | None = None,
                         labels: np.ndarray | None = None
                         ) -> tuple[Corpus, Links | None, np.ndarray | None, np.ndarray]:
    """Remove documents without tokens, re-indexing links and labels to match.

    Links touching a dropped document are removed too; both counts are logged.  ``links``
    must cover the corpus's documents and ``labels`` have one entry per document (a
    one-line :class:`DataError` names both lengths otherwise).

    Returns
    -------
    corpus, links, labels : the reduced data (``None`` stays ``None``)
    kept : ndarray of int64, positions of the kept documents in the input
    """
    if not isinstance(corpus, Corpus):
        raise TypeError(f"drop_empty_documents: corpus must be a Corpus, got "
                        f"{type(corpus).__name__}")
    if links is not None:
        if not isinstance(links, Links):
            raise TypeError(f"drop_empty_documents: links must be Links, got "
                            f"{type(links).__name__}")
        if links.n_docs != corpus.n_docs:
            raise DataError(f"drop_empty_documents: links cover {links.n_docs} documents, "
                            f"the corpus has {corpus.n_docs}")
    if labels is not None:
        if sp.issparse(labels) or isinstance(labels, str | bytes | dict | set):
            raise DataError(f"drop_empty_documents: labels must be a sequence of "
                            f"{corpus.n_docs} labels, got {type(labels).__name__}")
        labels = np.asarray(labels)
        if labels.ndim == 0 or labels.shape[0] != corpus.n_docs:
            n = labels.shape[0] if labels.ndim else 0
            raise DataError(f"drop_empty_documents: labels has {n} entries for "
                            f"{corpus.n_docs} documents")
    reduced, kept = corpus.drop_empty()
    if kept.size == corpus.n_docs:
        return corpus, links, labels, kept
    new_links = None
    if links is not None:
        new_links = links.subgraph(kept)
        lost = links.n_links - new_links.n_links
        if lost:
            logger.info("dropped %d links that touched empty documents", lost)
    new_labels = None if labels is None else labels[kept]
    return reduced, new_links, new_labels, kept
