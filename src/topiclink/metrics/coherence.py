"""Topic coherence: normalised pointwise mutual information (NPMI) of top words."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from topiclink.metrics._validate import refuse_complex

__all__ = ["npmi_coherence"]

#: gensim's ``EPSILON`` (``gensim.topic_coherence.direct_confirmation_measure``), added to
#: the joint probability in the log ratio and in its normalisation
GENSIM_EPSILON = 1e-12

#: the conventions of :func:`npmi_coherence` (the first is the default)
CONVENTIONS = ("exact", "gensim")

# Topics are processed in chunks whose union of top words has at most this many entries,
# bounding the dense co-document-frequency block at 2048^2 floats (32 MiB).
_MAX_UNION = 2048


def _npmi_from_counts(co: NDArray[np.float64], n_docs: int) -> NDArray[np.float64]:
    """NPMI matrix from a co-document-frequency matrix ``co`` (document frequencies on the
    diagonal): :math:`\\log(p_{ij}/(p_i p_j)) / (-\\log p_{ij})`, -1 where
    :math:`p_{ij} = 0` and 1 where :math:`p_{ij} = 1`."""
    p_joint = co / n_docs
    p_word = np.diag(p_joint)
    npmi = np.full(co.shape, -1.0)
    ok = (p_joint > 0) & (p_joint < 1)
    denom = np.outer(p_word, p_word)
    npmi[ok] = np.log(p_joint[ok] / denom[ok]) / -np.log(p_joint[ok])
    npmi[p_joint >= 1] = 1.0
    return npmi


def _npmi_gensim(co: NDArray[np.float64], n_docs: int) -> NDArray[np.float64]:
    """NPMI as gensim's ``log_ratio_measure(normalize=True)`` computes it, operation for
    operation: ``log((p_ij + eps) / (p_i p_j)) / -log(p_ij + eps)``, ``eps`` =
    :data:`GENSIM_EPSILON` (a word absent from the reference corpus divides by zero: inf
    or NaN, as in gensim)."""
    num_docs = float(n_docs)
    p_joint = co / num_docs
    p_word = np.diag(co) / num_docs
    with np.errstate(divide="ignore", invalid="ignore"):
        numerator = np.log((p_joint + GENSIM_EPSILON) / np.outer(p_word, p_word))
        return numerator / -np.log(p_joint + GENSIM_EPSILON)


def npmi_coherence(topic_word: ArrayLike, counts: ArrayLike | sp.sparray | sp.spmatrix,
                   top_n: int = 10, *, convention: str = "exact") -> NDArray[np.float64]:
    """NPMI coherence of each topic's ``top_n`` words under document co-occurrence.

    With :math:`D` reference documents, :math:`p(w) = D(w)/D` and
    :math:`p(w_i, w_j) = D(w_i, w_j)/D` the fractions of documents containing :math:`w` and
    both words,

    .. math::

        \\mathrm{NPMI}(w_i, w_j) = \\frac{\\log \\frac{p(w_i, w_j)}{p(w_i)\\,p(w_j)}}
        {-\\log p(w_i, w_j)} \\in [-1, 1],
        \\qquad C_k = \\binom{n}{2}^{-1} \\sum_{i < j \\le n} \\mathrm{NPMI}(w^k_i, w^k_j),

    over the :math:`n` = ``top_n`` most probable words :math:`w^k_1, \\dots, w^k_n` of topic
    :math:`k` (ties broken towards the lower word index). Pairs that never co-occur
    (:math:`p(w_i, w_j) = 0`, including words absent from the reference corpus) score -1;
    pairs present in every document (:math:`p(w_i, w_j) = 1`) score 1, the limit for
    words that always co-occur. The co-document frequencies come from one sparse product
    :math:`B_U^\\top B_U` of the binarised counts restricted to the top words.

    ``convention="gensim"`` gives instead the numbers of gensim's
    ``CoherenceModel(coherence="c_npmi", texts=..., window_size=W)`` when ``W`` is at least
    the longest reference document (gensim 4.4, read in
    ``gensim/topic_coherence/{segmentation,probability_estimation,
    direct_confirmation_measure}.py``): a document shorter than its sliding window is one
    window (``utils.iter_windows(..., ignore_below_size=False)``), so every document,
    empty ones included, is one "virtual document" and :math:`p` are the same document
    frequencies; ``s_one_one`` segments each topic into its ordered pairs
    :math:`(w_i, w_j), i \\ne j` (the mean over them is the mean over unordered pairs,
    NPMI being symmetric), and ``log_ratio_measure(normalize=True)`` scores each

    .. math::

        \\frac{\\log \\frac{p(w_i, w_j) + \\epsilon}{p(w_i)\\,p(w_j)}}
        {-\\log (p(w_i, w_j) + \\epsilon)}, \\qquad \\epsilon = 10^{-12}

    (:data:`GENSIM_EPSILON`): a pair that never co-occurs scores about
    :math:`-1 + \\log(1/(p_i p_j)) / \\log 10^{12}` rather than -1, and a pair present in
    every document scores -1 (:math:`\\log(1+\\epsilon) / -\\log(1+\\epsilon)`), not 1.
    A bag of words has no token order, so gensim's shorter windows (its default
    ``window_size=10``) cannot be reproduced from ``counts``.

    Parameters
    ----------
    topic_word : array_like of float, shape (n_topics, V)
        Topic-word weights (e.g. :math:`\\phi`); only each row's order matters.
    counts : scipy sparse matrix or array_like, shape (n_docs, V)
        Reference document-term counts (CSR preferred), binarised as ``counts > 0``.
    top_n : int, default 10
        Number of top words per topic, ``2 <= top_n <= V``.
    convention : "exact" or "gensim", default "exact"
        ``"exact"``: the formula above (-1 for pairs that never co-occur, 1 for pairs in
        every document); ``"gensim"``: gensim's ``c_npmi`` with whole-document windows.

    Returns
    -------
    ndarray of float64, shape (n_topics,)
        :math:`C_k` for each topic.
    """
    func = "npmi_coherence"
    refuse_complex(func, "topic_word", topic_word)
    refuse_complex(func, "counts", counts)
    try:
        phi = np.asarray(topic_word, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{func}: topic_word must be a 2-D array of real numbers") from None
    if phi.ndim != 2 or phi.size == 0:
        raise ValueError(f"{func}: topic_word must be a non-empty 2-D array, got shape "
                         f"{phi.shape}")
    if np.isnan(phi).any():
        raise ValueError(f"{func}: topic_word contains NaN")
    if sp.issparse(counts):
        csc = sp.csc_array(counts)
    else:
        dense = np.asarray(counts)
        if dense.ndim != 2:
            raise ValueError(f"{func}: counts must be 2-D (n_docs, V), got {dense.ndim}-D")
        csc = sp.csc_array(dense)
    n_docs, vocab = csc.shape
    if vocab != phi.shape[1]:
        raise ValueError(f"{func}: topic_word has {phi.shape[1]} columns but counts has "
                         f"{vocab}")
    if n_docs == 0:
        raise ValueError(f"{func}: counts has no documents")
    if csc.nnz and (np.asarray(csc.data) < 0).any():
        raise ValueError(f"{func}: counts must be >= 0")
    if isinstance(top_n, bool) or not isinstance(top_n, numbers.Integral):
        raise ValueError(f"{func}: top_n must be an integer, got {top_n!r}")
    if not 2 <= top_n <= vocab:
        raise ValueError(f"{func}: top_n must be between 2 and V = {vocab}, got {top_n}")
    if convention not in CONVENTIONS:
        raise ValueError(f"{func}: convention must be one of {', '.join(CONVENTIONS)}, "
                         f"got {convention!r}")
    score = _npmi_gensim if convention == "gensim" else _npmi_from_counts
    n = int(top_n)
    binary = csc.astype(bool).astype(np.float64)
    top = np.argsort(-phi, axis=1, kind="stable")[:, :n]
    iu, ju = np.triu_indices(n, k=1)
    out = np.empty(phi.shape[0])
    chunk = max(1, _MAX_UNION // n)
    for start in range(0, phi.shape[0], chunk):
        top_c = top[start:start + chunk]
        union = np.unique(top_c)
        pos = np.searchsorted(union, top_c)  # (chunk, n) positions within union
        block = binary[:, union]
        co = (block.T @ block).toarray()  # co-document frequencies, df on the diagonal
        npmi = score(co, n_docs)
        pairs = npmi[pos[:, iu], pos[:, ju]]  # (chunk, n(n-1)/2)
        out[start:start + chunk] = pairs.mean(axis=1)
    return out
