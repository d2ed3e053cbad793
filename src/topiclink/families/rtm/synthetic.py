"""The generalized relational topic model (gRTM): a linked corpus with planted weights."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from topiclink.data.checks import check_n_topics
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.datasets.synthetic._common import DocLength, check_int
from topiclink.datasets.synthetic.lda import LDATruth, draw_lda
from topiclink.random import RandomState, as_generator

__all__ = ["RTM_BACKGROUND", "RTM_DIAGONAL", "RTM_NEXT_TOPIC", "RTMTruth", "make_rtm_data",
           "planted_rtm_weights"]

logger = logging.getLogger(__name__)

#: Defaults of :func:`planted_rtm_weights` (logits): same topic, "next" topic, all others.
RTM_DIAGONAL = -0.5
RTM_NEXT_TOPIC = -2.0
RTM_BACKGROUND = -6.0

_BLOCK_ROWS = 256
#: make_rtm_data(method="auto") draws the links densely up to this many documents
_DENSE_MAX_DOCS = 5_000
#: pairs sampled to solve the n_links shift on the sparse path
_SHIFT_SAMPLES = 1 << 21


@dataclass(frozen=True, eq=False, kw_only=True)
class RTMTruth(LDATruth):
    """The parameters that generated a :func:`make_rtm_data` network.

    Attributes
    ----------
    weights : ndarray of float64, shape (K, K)
        U actually used: symmetric ``(U + U^T) / 2`` for undirected links, and including
        the constant shift when ``n_links`` was given.
    directed : bool
    loss : str
        ``"logistic"``.
    expected_n_links : float
        ``sum_{pairs} sigmoid(zbar_i^T U zbar_j)`` over the pairs that could link (ordered
        pairs ``i != j`` if directed, ``i < j`` otherwise).
    shift : float
        Constant added to every entry of the requested U to hit ``n_links`` (0 if not).

    No D x D quantity is stored; :meth:`link_proba` gives ``p_ij`` for given pairs.
    """

    weights: np.ndarray
    directed: bool = True
    loss: str = "logistic"
    expected_n_links: float = 0.0
    shift: float = 0.0

    def link_logit(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``omega_ij = zbar_i^T U zbar_j`` for the pairs ``(rows[n], cols[n])``."""
        zi = self.zbar[np.asarray(rows)]
        zj = self.zbar[np.asarray(cols)]
        return np.einsum("nk,kl,nl->n", zi, self.weights, zj)

    def link_proba(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``p_ij = sigmoid(zbar_i^T U zbar_j)`` for the pairs ``(rows[n], cols[n])``."""
        return expit(self.link_logit(rows, cols))


def planted_rtm_weights(n_topics: int, diagonal: float = RTM_DIAGONAL,
                        next_topic: float = RTM_NEXT_TOPIC,
                        background: float = RTM_BACKGROUND) -> np.ndarray:
    """The default planted weight matrix U of :func:`make_rtm_data`.

    ``U[k, k] = diagonal``, ``U[k, (k + 1) % K] = next_topic`` and ``background``
    elsewhere: documents about the same topic link most, documents about topic k cite
    documents about topic k + 1 less often (a directed, off-diagonal structure that a
    diagonal RTM cannot express), all other pairs rarely.

    The gRTM discriminant ``omega_ij = zbar_i^T U zbar_j`` has no intercept, and since
    zbar_i, zbar_j are on the simplex omega is a weighted average of the entries of U.
    Pairs sharing their dominant topic are ~1/K of all pairs, so a positive diagonal
    (link probability > 1/2 for them) would make the density >~ 10% at K = 5; to keep it
    at a few percent the diagonal is only high *relative to* the background.  The
    defaults (-0.5, -2, -6) are logits of 0.38, 0.12 and 0.0025.  With the other
    defaults of :func:`make_rtm_data` (K = 5, alpha = 0.1, 80 tokens, D = 300) about 5%
    of ordered pairs link (undirected: 4%); grouped by dominant topics the link rates
    are about 0.16 for (k, k), 0.07 for (k, k+1) and 0.007 for the rest (mixed zbar
    dilute the planted values).

    Returns
    -------
    U : ndarray of float64, shape (K, K)
    """
    K = check_n_topics(n_topics)
    U = np.full((K, K), float(background))
    idx = np.arange(K)
    U[idx, (idx + 1) % K] = float(next_topic)
    U[idx, idx] = float(diagonal)
    return U


def _check_weights(weights: object, K: int) -> np.ndarray:
    if weights is None:
        return planted_rtm_weights(K)
    U = np.asarray(weights, dtype=np.float64)
    if U.ndim == 1 and U.shape == (K,):
        U = np.diag(U)
    if U.shape != (K, K):
        raise ValueError(f"weights must have shape ({K}, {K}) (or ({K},) for a diagonal U), "
                         f"got {U.shape}")
    if not np.isfinite(U).all():
        raise ValueError("weights must be finite")
    return U.copy()


def _row_blocks(n: int, block: int = _BLOCK_ROWS) -> Iterator[tuple[int, int]]:
    for start in range(0, n, block):
        yield start, min(start + block, n)


def _pair_mask(start: int, stop: int, n: int, directed: bool) -> np.ndarray:
    """Which pairs (i, j), i in [start, stop), can link: i != j, or i < j if undirected."""
    i = np.arange(start, stop)[:, None]
    j = np.arange(n)[None, :]
    return (i != j) if directed else (i < j)


def _expected_links(zbar: np.ndarray, U: np.ndarray, directed: bool,
                    shift: float = 0.0) -> tuple[float, float]:
    """``sum_pairs p_ij`` and ``sum_pairs p_ij (1 - p_ij)``, ``p_ij = sigmoid(omega_ij +
    shift)``, block by block (no D x D array).

    Sums over all (i, j), then removes the i = j terms; undirected (U symmetric, so
    p_ij = p_ji) halves the result to count the pairs i < j once.
    """
    D = zbar.shape[0]
    right = U @ zbar.T                                                      # (K, D)
    total = square = 0.0
    for start, stop in _row_blocks(D):
        p = zbar[start:stop] @ right
        p += shift
        expit(p, out=p)
        total += float(p.sum())
        square += float(np.einsum("ij,ij->", p, p))
    p_self = expit(np.einsum("ik,kl,il->i", zbar, U, zbar) + shift)
    total -= float(p_self.sum())
    square -= float(p_self @ p_self)
    slope = total - square
    if not directed:
        total, slope = total / 2, slope / 2
    return total, slope


def _solve_shift(zbar: np.ndarray, U: np.ndarray, directed: bool, n_links: int,
                 n_pairs: int) -> float:
    """The constant c with ``sum_pairs sigmoid(omega_ij + c) = n_links``.

    Safeguarded Newton (the sum is increasing in c, its derivative is
    ``sum p (1 - p)``); the bracket follows from ``min U <= omega_ij <= max U``.
    """
    target = float(logit(n_links / n_pairs))
    lo, hi = target - float(U.max()), target - float(U.min())
    c = 0.0 if lo <= 0.0 <= hi else (lo + hi) / 2
    for _ in range(100):
        total, slope = _expected_links(zbar, U, directed, c)
        f = total - n_links
        if abs(f) <= 1e-9 * n_links:
            break
        if f > 0:
            hi = c
        else:
            lo = c
        step = c - f / slope if slope > 0 else np.nan
        c = step if lo < step < hi else (lo + hi) / 2
    return c


def _solve_shift_sampled(omega: np.ndarray, n_links: int, n_pairs: int) -> float:
    """The constant c with ``n_pairs * mean(sigmoid(omega_s + c)) = n_links`` over a
    uniform sample ``omega_s`` of the pairs' logits (safeguarded Newton, as
    :func:`_solve_shift`)."""
    target = n_links / n_pairs
    lo = float(logit(target) - omega.max())
    hi = float(logit(target) - omega.min())
    c = 0.0 if lo <= 0.0 <= hi else (lo + hi) / 2
    for _ in range(100):
        p = expit(omega + c)
        f = float(p.mean()) - target
        if abs(f) <= 1e-12 * target:
            break
        if f > 0:
            hi = c
        else:
            lo = c
        slope = float(np.mean(p * (1.0 - p)))
        step = c - f / slope if slope > 0 else np.nan
        c = step if lo < step < hi else (lo + hi) / 2
    return c


def _sparse_links(rng: np.random.Generator, zbar: np.ndarray, U: np.ndarray,
                  directed: bool, n_links: int | None, n_pairs: int
                  ) -> tuple[np.ndarray, np.ndarray, float, float]:
    """make_rtm_data's thinning path: (sources, targets, expected links, shift)."""
    from topiclink.families.rtm.synthetic_links import pair_logit_sample, thinned_links
    from topiclink.random import kernel_state

    state = kernel_state(rng)[0]
    shift = 0.0
    if n_links is not None:
        sample = pair_logit_sample(zbar, zbar @ U, directed, _SHIFT_SAMPLES, state)
        shift = _solve_shift_sampled(sample, n_links, n_pairs)
        U = U + shift
    src, dst, expected, _ = thinned_links(zbar, np.ascontiguousarray(zbar @ U), directed,
                                          state)
    return src, dst, float(expected), shift


def _dense_links(rng: np.random.Generator, zbar: np.ndarray, U: np.ndarray,
                 directed: bool) -> tuple[np.ndarray, float]:
    """make_rtm_data's blocked dense path: (pairs, expected number of links)."""
    D = zbar.shape[0]
    right = U @ zbar.T                                                      # (K, D)
    sources: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    expected = 0.0
    for start, stop in _row_blocks(D):
        p = expit(zbar[start:stop] @ right)                                 # (B, D)
        p[~_pair_mask(start, stop, D, directed)] = 0.0
        expected += float(p.sum())
        i, j = np.nonzero(rng.random(p.shape) < p)
        sources.append(i + start)
        targets.append(j)
    return np.column_stack([np.concatenate(sources), np.concatenate(targets)]), expected


def make_rtm_data(n_docs: int = 300, n_words: int = 500, n_topics: int = 5,
                  doc_length: DocLength = 80, weights: np.ndarray | None = None,
                  loss: str = "logistic", directed: bool = True, n_links: int | None = None,
                  doc_topic_prior: float | np.ndarray = 0.1,
                  topic_word_prior: float | np.ndarray = 0.01,
                  random_state: RandomState = None, method: str = "auto"
                  ) -> tuple[tuple[Corpus, Links], RTMTruth]:
    """Draw a linked corpus from the generalized relational topic model (gRTM).

    Words as in :func:`make_lda_data`; then for every pair that can link (ordered pairs
    ``i != j`` if ``directed``, else ``i < j``)::

        omega_ij = zbar_i^T U zbar_j,      y_ij ~ Bernoulli(sigmoid(omega_ij))

    (Chen et al., "Discriminative Relational Topic Models", TPAMI 2015, the logistic
    likelihood; ``docs/design/grtm.md``).  Undirected links use the symmetrised
    ``(U + U^T) / 2``.  The probabilities are computed and the links drawn in blocks of
    256 rows, so memory is O(256 D), never D x D.

    Parameters
    ----------
    n_docs, n_words, n_topics : int
        D (>= 2), V, K.
    doc_length : int or (int, int)
        As in :func:`make_lda_data`.
    weights : ndarray of shape (K, K) or (K,), optional
        U (a length-K vector means ``diag(eta)``, the Gibbs-RTM case).  Default
        :func:`planted_rtm_weights`: ``U[k, k] = -0.5``, ``U[k, (k+1) % K] = -2``,
        ``-6`` elsewhere, about 5% of ordered pairs linked with the other defaults.
    loss : {"logistic"}
        Only the logistic likelihood is generative; hinge-loss models are fitted to
        data drawn from it.
    directed : bool
    n_links : int, optional
        Target *expected* number of links.  A constant c is added to every entry of U
        (an intercept, since ``zbar_i^T (U + c 11^T) zbar_j = omega_ij + c``) so that
        ``sum_pairs p_ij = n_links``; the drawn count fluctuates around it with standard
        deviation below ``sqrt(n_links)``.  The shifted U is the truth.
    doc_topic_prior, topic_word_prior : float or array
        alpha and beta of the word model.
    random_state : None, int, SeedSequence or Generator
    method : {"auto", "dense", "sparse"}, default "auto"
        How the links are drawn (same distribution, different random streams):
        "dense" evaluates every pair's probability in blocks of rows (O(D^2 K) time;
        the seeds' outputs of earlier versions); "sparse" draws them by thinning
        (candidates at rate ``q_i = sigmoid(max_l (U^T zbar_i)_l)`` by geometric skips,
        kept with probability ``p_ij / q_i``: O(D K + #candidates K)), solves the
        ``n_links`` shift on the logits of 2^21 uniformly sampled pairs (so the expected
        count is ``n_links`` up to that sample's error, ~0.1-0.5%), and reports
        ``expected_n_links`` as the Horvitz-Thompson estimate ``sum p_ij / q_i`` over the
        candidates (unbiased).  "auto": "dense" up to 5,000 documents, else "sparse"
        (100k documents and 1M links take seconds).

    Returns
    -------
    (corpus, links) : (Corpus, Links)
        ``links.directed == directed``; links in row-major pair order.
    truth : RTMTruth
        ``topic_word`` (K, V), ``doc_topic`` (D, K), ``assignments``, ``zbar`` (D, K),
        ``weights`` U (K, K) as used, ``expected_n_links``.  Nothing of size D^2.
    """
    if loss != "logistic":
        raise ValueError(f"loss must be 'logistic' (the only generative link likelihood), "
                         f"got {loss!r}")
    D = check_int(n_docs, "n_docs", 2)
    K = check_n_topics(n_topics)
    U = _check_weights(weights, K)
    directed = bool(directed)
    if not directed:
        U = (U + U.T) / 2
    n_pairs = D * (D - 1) if directed else D * (D - 1) // 2
    if n_links is not None:
        n_links = check_int(n_links, "n_links", 1)
        if n_links >= n_pairs:
            raise ValueError(f"n_links must be < {n_pairs} (the number of pairs), "
                             f"got {n_links}")
    if method not in ("auto", "dense", "sparse"):
        raise ValueError(f"method must be 'auto', 'dense' or 'sparse', got {method!r}")
    sparse = method == "sparse" or (method == "auto" and D > _DENSE_MAX_DOCS)
    rng = as_generator(random_state)
    corpus, lda = draw_lda(rng, D, n_words, K, doc_length, doc_topic_prior,
                           topic_word_prior, name="synthetic-rtm")
    zbar = lda.zbar

    shift = 0.0
    if sparse:
        src, dst, expected, shift = _sparse_links(rng, zbar, U, directed, n_links, n_pairs)
        U = U + shift
        pairs = np.column_stack([src, dst])
    elif n_links is not None:
        shift = _solve_shift(zbar, U, directed, n_links, n_pairs)
        U = U + shift

    if not sparse:
        pairs, expected = _dense_links(rng, zbar, U, directed)
    links = Links.from_pairs(pairs, D, directed=directed, source_name="make_rtm_data")
    logger.info("make_rtm_data: %d %s links over %d documents (density %.4f, expected %.1f)",
                links.n_links, "directed" if directed else "undirected", D,
                links.n_links / n_pairs, expected)
    truth = RTMTruth(topic_word=lda.topic_word, doc_topic=lda.doc_topic,
                     assignments=lda.assignments, zbar=zbar,
                     doc_topic_prior=lda.doc_topic_prior,
                     topic_word_prior=lda.topic_word_prior, weights=U, directed=directed,
                     loss=loss, expected_n_links=expected, shift=shift)
    return (corpus, links), truth
