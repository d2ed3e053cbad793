"""Negative pairs for the relational models, drawn document by document."""

from __future__ import annotations

import numpy as np

from topiclink.data.links import Links
from topiclink.parameters import Negatives
from topiclink.random import RandomState, as_generator, kernel_state
from topiclink.relational.kernels.negatives import sample_per_document

__all__ = ["negatives_per_document", "draw_negatives"]


def negatives_per_document(links: Links, per_link: float,
                           random_state: RandomState = None) -> np.ndarray:
    """Negatives drawn document by document, in proportion to each one's links.

    Document i draws ``m_i = max(1, floor(per_link * p_i + 1/2))`` ordered pairs
    ``(i, j)`` (``m_i = 0`` for a document with no link at all), where ``p_i`` is its
    number of positive pairs as a source: its out-degree when directed, its degree when
    undirected (both orientations of an undirected link are training pairs).  The
    ``j`` are distinct, ``j != i``, uniform among the documents with no link ``(i, j)``
    (undirected: not linked to i), and at most all of them.  Cost O(#negatives +
    #links): rejection against a hash set of i's links
    (:mod:`topiclink.relational.kernels.negatives`), never the D^2 complement; seeded by
    ``random_state``.

    Returns
    -------
    pairs : ndarray of int64, shape (sum m_i, 2)
        Ordered pairs, sorted by source.  For undirected links the pair (i, j) is one
        orientation (the other documents' draws supply the reverse ones).
    """
    if isinstance(per_link, bool | np.bool_) or not isinstance(
            per_link, int | float | np.integer | np.floating):
        raise ValueError(f"per_link must be a number > 0, got {type(per_link).__name__}")
    if not (np.isfinite(per_link) and per_link > 0):
        raise ValueError(f"per_link must be finite and > 0, got {per_link}")
    D = links.n_docs
    A = links.adjacency()
    ptr = A.indptr.astype(np.int64)
    nbr = A.indices.astype(np.int64)
    positives = np.diff(ptr)
    counts = np.floor(float(per_link) * positives + 0.5).astype(np.int64)
    counts[links.degrees() > 0] = np.maximum(counts[links.degrees() > 0], 1)
    counts = np.minimum(counts, np.maximum(D - 1 - positives, 0))
    state = kernel_state(as_generator(random_state))[0]
    src, dst = sample_per_document(D, ptr, nbr, counts, state)
    return np.column_stack([src, dst])


def draw_negatives(links: Links, negatives: Negatives,
                   rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """The negative pairs of a :class:`~topiclink.parameters.Negatives` config: with
    ``per_link`` None, ``ratio`` of all unobserved pairs (:meth:`Links.sample_negatives`),
    else :func:`negatives_per_document`.  Returns the pairs (int64, (n, 2)) and whether
    each stands for both orientations (the ratio draw of undirected links: the caller
    mirrors them) or one."""
    if negatives.per_link is not None:
        pairs = negatives_per_document(links, negatives.per_link, random_state=rng)
        return pairs.astype(np.int64), False
    if negatives.ratio > 0:
        pairs = links.sample_negatives(ratio=negatives.ratio, random_state=rng)
        return pairs.astype(np.int64), not links.directed
    return np.zeros((0, 2), np.int64), False
