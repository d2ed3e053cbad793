"""The LMV model (topic-adjusted visibility): a directed citation network with the truth.

Tan, Chan & Zheng (2016), "Topic-adjusted visibility metric for scientific articles",
Annals of Applied Statistics; ``docs/design/lmv.md``.  :func:`make_lmv_data` draws the
supplement's simulation design (S7) by default and :func:`paper_blockmodel` is its B.
"""

from __future__ import annotations

import logging
import numbers
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from topiclink.data.checks import check_n_topics
from topiclink.data.corpus import Corpus
from topiclink.data.links import Links
from topiclink.datasets.synthetic._common import DocLength, check_int, check_prior, doc_lengths
from topiclink.datasets.synthetic.lda import LDATruth
from topiclink.random import RandomState, as_generator

__all__ = ["LMVTruth", "make_lmv_data", "paper_blockmodel"]

logger = logging.getLogger(__name__)

_BLOCK_ROWS = 256


def paper_blockmodel() -> np.ndarray:
    """The true blockmodel B of the paper's simulation (supplement S7, Figure S3), K = 6.

    Diagonal 0.3, 0.3, 0.3, 0.2, 0.2, 0.2; off-diagonal (1-based, row = citing topic s,
    column = cited topic r) ``B[2,5] = B[3,4] = 0.05``, ``B[4,1] = B[5,2] = 0.04``,
    ``B[1,6] = B[6,3] = 0.03``, ``B[1,3] = B[4,6] = B[6,1] = 0.02``, all others 0.

    Returns
    -------
    B : ndarray of float64, shape (6, 6)
        0-based storage (``B[0, 2]`` is the paper's ``B[1,3]``); a new array each call.
    """
    B = np.diag([0.3, 0.3, 0.3, 0.2, 0.2, 0.2])
    for (s, r), value in {(2, 5): 0.05, (3, 4): 0.05, (4, 1): 0.04, (5, 2): 0.04,
                          (1, 6): 0.03, (6, 3): 0.03, (1, 3): 0.02, (4, 6): 0.02,
                          (6, 1): 0.02}.items():
        B[s - 1, r - 1] = value
    return B


@dataclass(frozen=True, eq=False, kw_only=True)
class LMVTruth(LDATruth):
    """The parameters that generated a :func:`make_lmv_data` network.

    Attributes (besides those of :class:`~topiclink.datasets.synthetic.lda.LDATruth`:
    ``topic_word`` (K, V), ``doc_topic`` (D, K), ``assignments``, ``zbar``, the priors)
    ----------
    visibility : ndarray of float64, shape (D,)
        tau, the visibility of every document.
    effective_visibility : ndarray of float64, shape (D,)
        The visibility actually used for the links: ``visibility`` itself unless
        ``visibility_age_effect != 0`` (see :func:`make_lmv_data` for the formula).
    blockmodel : ndarray of float64, shape (K, K)
        B; ``B[s, r]`` for citing topic s and cited topic r.
    publication_time : ndarray of float64, shape (D,), or None
    visibility_prior : ndarray of float64, shape (2,)
        (g0, h0) of tau ~ Beta(g0, h0) (used only when tau was drawn).
    visibility_age_effect : float
    n_pairs : int
        Ordered pairs that could link: ``D (D - 1)``, minus the pairs whose cited
        document is newer than the citing one when there are publication times.
    expected_n_links : float
        ``sum`` of :meth:`link_proba` over those pairs.
    link_count_variance : float
        ``sum p (1 - p)`` over those pairs: the variance of the number of links.

    No D x D quantity is stored; :meth:`link_proba` gives the probability for given pairs.
    """

    visibility: np.ndarray
    effective_visibility: np.ndarray
    blockmodel: np.ndarray
    publication_time: np.ndarray | None = None
    visibility_prior: np.ndarray
    visibility_age_effect: float = 0.0
    n_pairs: int = 0
    expected_n_links: float = 0.0
    link_count_variance: float = 0.0

    def link_proba(self, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """``P(sources[n] cites targets[n]) = tau_t theta_s^T B theta_t`` (tau effective).

        0 for a self-pair and, with publication times, for a pair whose cited document
        is newer than the citing one.
        """
        s = np.asarray(sources, dtype=np.int64)
        t = np.asarray(targets, dtype=np.int64)
        p = np.einsum("nk,kl,nl->n", self.doc_topic[s], self.blockmodel, self.doc_topic[t])
        p *= self.effective_visibility[t]
        ok = s != t
        if self.publication_time is not None:
            ok &= self.publication_time[t] <= self.publication_time[s]
        return np.where(ok, p, 0.0)


# ---------------------------------------------------------------------- checks
def _check_blockmodel(blockmodel: object, K: int) -> np.ndarray:
    if blockmodel is None:
        if K != 6:
            raise ValueError(f"blockmodel is required when n_topics != 6 (the default is the "
                             f"paper's 6 x 6 B), got n_topics={K}")
        return paper_blockmodel()
    B = np.array(blockmodel, dtype=np.float64)
    if B.shape != (K, K):
        raise ValueError(f"blockmodel must have shape ({K}, {K}), got {B.shape}")
    if not (np.isfinite(B).all() and (B >= 0).all() and (B <= 1).all()):
        raise ValueError("blockmodel entries must be probabilities in [0, 1]")
    return B


def _check_topic_word(topic_word: object, K: int, V: int) -> np.ndarray:
    phi = np.array(topic_word, dtype=np.float64)
    if phi.shape != (K, V):
        raise ValueError(f"topic_word must have shape (n_topics, n_words) = ({K}, {V}), "
                         f"got {phi.shape}")
    if not (np.isfinite(phi).all() and (phi >= 0).all()):
        raise ValueError("topic_word must be finite and >= 0")
    if not np.allclose(phi.sum(axis=1), 1.0, rtol=0, atol=1e-6):
        raise ValueError("topic_word rows must sum to 1")
    return phi / phi.sum(axis=1, keepdims=True)


def _check_visibility(visibility: object, D: int) -> np.ndarray:
    tau = np.array(visibility, dtype=np.float64)
    if tau.shape != (D,):
        raise ValueError(f"visibility must have shape ({D},) (one value per document), "
                         f"got {tau.shape}")
    if not (np.isfinite(tau).all() and (tau >= 0).all() and (tau <= 1).all()):
        raise ValueError("visibility entries must be in [0, 1]")
    return tau


def _check_beta_prior(value: object, name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64) if not isinstance(value, str) else np.array([])
    if arr.shape != (2,) or not (np.isfinite(arr).all() and (arr > 0).all()):
        raise ValueError(f"{name} must be a pair (g0, h0) of finite values > 0, got {value!r}")
    return arr


def _wants_times(publication_time: object) -> bool:
    if publication_time is None or isinstance(publication_time, bool | np.bool_):
        return bool(publication_time)
    return True


def _check_times(publication_time: object, D: int,
                 rng: np.random.Generator) -> np.ndarray | None:
    if not _wants_times(publication_time):
        return None
    if isinstance(publication_time, bool | np.bool_):
        return rng.permutation(D).astype(np.float64)
    try:
        t = np.array(publication_time, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("publication_time must be a bool or one number per document") from None
    if t.shape != (D,):
        raise ValueError(f"publication_time must be a bool or have shape ({D},), "
                         f"got shape {t.shape}")
    if not np.isfinite(t).all():
        raise ValueError("publication_time must be finite")
    return t


def _age_visibility(tau: np.ndarray, times: np.ndarray | None, effect: float) -> np.ndarray:
    """``tau_eff`` of :func:`make_lmv_data` (the age formula)."""
    if effect == 0.0:
        return tau.copy()
    assert times is not None
    span = float(times.max() - times.min())
    age = (times.max() - times) / span if span > 0 else np.zeros_like(times)
    if effect > 0:
        return tau * np.exp(-effect * age)
    return tau * np.exp(effect * (1.0 - age))


# ---------------------------------------------------------------------- drawing
def _draw_words(rng: np.random.Generator, phi: np.ndarray, theta: np.ndarray,
                lengths: np.ndarray, name: str,
                metadata: pd.DataFrame | None) -> tuple[Corpus, np.ndarray, np.ndarray]:
    """Words of LDA given phi and theta: the corpus, z aligned with ``tokens()``, zbar."""
    D, K = theta.shape
    V = phi.shape[1]
    ndk = rng.multinomial(lengths, theta).astype(np.int64)                # (D, K)
    docs = np.repeat(np.arange(D, dtype=np.int64), lengths)
    z = np.repeat(np.tile(np.arange(K, dtype=np.int64), D), ndk.ravel())  # doc-major
    words = np.empty(z.size, dtype=np.int64)
    for k in range(K):
        mask = z == k
        words[mask] = rng.choice(V, size=int(mask.sum()), p=phi[k])
    order = np.lexsort((z, words, docs))
    docs, words, z = docs[order], words[order], z[order]
    counts = sp.csr_matrix((np.ones(z.size, dtype=np.int32), (docs, words)), shape=(D, V))
    corpus = Corpus(counts, metadata=metadata, name=name)
    if not np.array_equal(corpus.tokens().words, words):  # pragma: no cover - invariant
        raise AssertionError("token order of the synthetic corpus is not Corpus.tokens()")
    return corpus, z.astype(np.int32), ndk / lengths[:, None]


def _row_blocks(n: int, block: int = _BLOCK_ROWS) -> Iterator[tuple[int, int]]:
    for start in range(0, n, block):
        yield start, min(start + block, n)


def make_lmv_data(n_docs: int = 3000, n_words: int = 100, n_topics: int = 6,
                  doc_length: DocLength = 100, blockmodel: np.ndarray | None = None,
                  doc_topic_prior: float | np.ndarray = 0.05,
                  topic_word_prior: float | np.ndarray = 0.1,
                  visibility_prior: tuple[float, float] = (1.0, 1.0),
                  publication_time: bool | np.ndarray = False,
                  visibility_age_effect: float = 0.0,
                  topic_word: np.ndarray | None = None,
                  visibility: np.ndarray | None = None,
                  random_state: RandomState = None) -> tuple[tuple[Corpus, Links], LMVTruth]:
    """Draw a directed citation network from the LMV model (topic-adjusted visibility).

    The generative process (Tan, Chan & Zheng 2016; ``docs/design/lmv.md``), documents
    d = 1..D, topics k = 1..K, V words::

        beta_k  ~ Dir(eta)                 (topic_word, unless given)
        theta_d ~ Dir(alpha)               (doc_topic)
        z_dn ~ Mult(theta_d), w_dn ~ Mult(beta_{z_dn}),  n = 1..N_d      (LDA words)
        tau_d   ~ Beta(g0, h0)             (visibility, unless given)
        for every ordered pair d != d' (d cites d'):
            s_dd' ~ Mult(theta_d), r_dd' ~ Mult(theta_d'),
            y_dd' ~ Bernoulli(tau_d' B[s_dd', r_dd'])

    **Marginal draw (exact).**  Given theta and tau, the pairs' (s, r) are independent
    across pairs, so the y_dd' are independent with
    ``P(y_dd' = 1) = sum_{s,r} theta_ds theta_d'r tau_d' B_sr = tau_d' theta_d^T B theta_d'``.
    The topic pairs (s, r) are not returned, so drawing each y_dd' directly from this
    marginal Bernoulli gives exactly the same joint distribution of everything returned.
    The probabilities are computed and the links drawn in blocks of 256 citing documents:
    memory O(256 D), never D x D (nor D x D x K x K); D = 3000 takes about a second.

    The defaults are the supplement's simulation (S7): K = 6 topics over V = 100 words,
    eta = 0.1, alpha = 0.05, tau ~ Beta(1, 1), 100 words per document, D = 3000 and the B
    of :func:`paper_blockmodel`.  The paper's 20 replicates share topics, B and tau:
    pass ``topic_word=truth.topic_word, visibility=truth.visibility`` of a first draw and
    a different ``random_state`` (theta, words and links are drawn anew).

    **Publication times (LMV(t)).**  With ``publication_time``, a pair whose cited
    document d' is strictly newer than the citing d (``t_d' > t_d``) cannot link (in
    LMV(t) it carries no likelihood term).  ``visibility_age_effect = c`` then makes the
    visibility depend on age: with ``a_d = (max_t - t_d) / (max_t - min_t)`` in [0, 1]
    (0 = newest, 1 = oldest; 0 for all if every time is equal)::

        tau_eff_d = tau_d * exp(-c * a_d)          if c >= 0 (older documents less visible)
        tau_eff_d = tau_d * exp(c * (1 - a_d))     if c < 0  (newer documents less visible)

    so ``tau_eff <= tau <= 1``, and the links use ``tau_eff`` in place of tau.

    Parameters
    ----------
    n_docs, n_words, n_topics : int
        D (>= 2), V (>= 2), K (>= 2).
    doc_length : int or (int, int)
        N_d, as in :func:`make_lda_data`.
    blockmodel : ndarray of shape (K, K), optional
        B with entries in [0, 1]; row = citing topic.  Default :func:`paper_blockmodel`
        (then K must be 6).
    doc_topic_prior, topic_word_prior : float or array
        alpha (K,) and eta (V,).  ``topic_word_prior`` is unused when ``topic_word`` is
        given.
    visibility_prior : (float, float)
        (g0, h0); unused when ``visibility`` is given.
    publication_time : bool or array of shape (D,)
        ``True`` draws the times as a random permutation of 0, ..., D - 1 (document
        order is not time order); an array gives them.  ``False``: no times, every
        ordered pair d != d' can link.
    visibility_age_effect : float
        c above; non-zero needs publication times.
    topic_word : ndarray of shape (K, V), optional
        Fixed topics (rows on the simplex) instead of drawing them.
    visibility : ndarray of shape (D,), optional
        Fixed visibilities in [0, 1] instead of drawing them.
    random_state : None, int, SeedSequence or Generator

    Returns
    -------
    (corpus, links) : (Corpus, Links)
        ``links.directed`` is True, no self-links, links in row-major (citing, cited)
        order.  With publication times ``corpus.metadata["publication_time"]`` holds them.
    truth : LMVTruth
        ``topic_word``, ``doc_topic``, ``visibility``, ``effective_visibility``,
        ``blockmodel``, ``publication_time`` (or None), ``expected_n_links``.  Nothing of
        size D^2.
    """
    D = check_int(n_docs, "n_docs", 2)
    V = check_int(n_words, "n_words", 2)
    K = check_n_topics(n_topics)
    B = _check_blockmodel(blockmodel, K)
    alpha = check_prior(doc_topic_prior, K, "doc_topic_prior")
    eta = check_prior(topic_word_prior, V, "topic_word_prior")
    gh = _check_beta_prior(visibility_prior, "visibility_prior")
    phi_fixed = None if topic_word is None else _check_topic_word(topic_word, K, V)
    tau_fixed = None if visibility is None else _check_visibility(visibility, D)
    if (isinstance(visibility_age_effect, bool)
            or not isinstance(visibility_age_effect, numbers.Real)
            or not np.isfinite(visibility_age_effect)):
        raise ValueError(f"visibility_age_effect must be a finite number, "
                         f"got {visibility_age_effect!r}")
    effect = float(visibility_age_effect)
    if effect != 0.0 and not _wants_times(publication_time):
        raise ValueError("visibility_age_effect != 0 needs publication_time")

    rng = as_generator(random_state)
    lengths = doc_lengths(doc_length, D, rng)
    if phi_fixed is None:
        phi = rng.dirichlet(eta, size=K)
        phi /= phi.sum(axis=1, keepdims=True)
    else:
        phi = phi_fixed
    theta = rng.dirichlet(alpha, size=D)
    theta /= theta.sum(axis=1, keepdims=True)
    tau = rng.beta(gh[0], gh[1], size=D) if tau_fixed is None else tau_fixed
    times = _check_times(publication_time, D, rng)
    tau_eff = _age_visibility(tau, times, effect)
    metadata = None if times is None else pd.DataFrame({"publication_time": times})
    corpus, z, zbar = _draw_words(rng, phi, theta, lengths, "synthetic-lmv", metadata)

    right = (B @ theta.T) * tau_eff[None, :]                                 # (K, D)
    sources: list[np.ndarray] = []
    targets: list[np.ndarray] = []
    expected = variance = 0.0
    n_pairs = 0
    for start, stop in _row_blocks(D):
        p = theta[start:stop] @ right                                        # (b, D)
        rows = np.arange(start, stop)
        p[rows - start, rows] = 0.0
        if times is not None:
            p[times[None, :] > times[start:stop, None]] = 0.0
            n_pairs += int((times[None, :] <= times[start:stop, None]).sum()) - (stop - start)
        else:
            n_pairs += (stop - start) * (D - 1)
        expected += float(p.sum())
        variance += float(p.sum() - np.einsum("ij,ij->", p, p))
        i, j = np.nonzero(rng.random(p.shape) < p)
        sources.append(i + start)
        targets.append(j)
    pairs = np.column_stack([np.concatenate(sources), np.concatenate(targets)])
    links = Links.from_pairs(pairs, D, directed=True, source_name="make_lmv_data")
    logger.info("make_lmv_data: %d directed links over %d documents (expected %.1f, "
                "%d possible pairs)", links.n_links, D, expected, n_pairs)
    truth = LMVTruth(topic_word=phi, doc_topic=theta, assignments=z, zbar=zbar,
                     doc_topic_prior=alpha, topic_word_prior=eta, visibility=tau,
                     effective_visibility=tau_eff, blockmodel=B, publication_time=times,
                     visibility_prior=gh, visibility_age_effect=effect, n_pairs=n_pairs,
                     expected_n_links=expected, link_count_variance=variance)
    return (corpus, links), truth
