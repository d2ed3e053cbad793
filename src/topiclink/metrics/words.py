"""Word-prediction metrics: predictive word rank."""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from scipy.stats import rankdata

from topiclink.metrics._validate import real_matrix, refuse_complex

__all__ = ["word_rank", "word_rank_per_doc"]


def _word_rank_per_doc(func: str, word_probs: ArrayLike, counts: ArrayLike | sp.sparray
                       | sp.spmatrix, weighting: str) -> NDArray[np.float64]:
    if weighting not in ("token", "type"):
        raise ValueError(f"{func}: weighting must be 'token' or 'type', got {weighting!r}")
    refuse_complex(func, "word_probs", word_probs)
    refuse_complex(func, "counts", counts)
    probs = real_matrix(func, "word_probs", word_probs, "n_docs, V")
    if sp.issparse(counts):
        csr = sp.csr_array(counts, dtype=np.float64)
    else:
        dense = np.asarray(counts)
        if dense.ndim != 2:
            raise ValueError(f"{func}: counts must be 2-D (n_docs, V), got {dense.ndim}-D")
        csr = sp.csr_array(dense.astype(np.float64))
    if csr.shape != probs.shape:
        raise ValueError(f"{func}: word_probs has shape {probs.shape} but counts has shape "
                         f"{csr.shape}")
    csr.sum_duplicates()
    if csr.nnz and not (np.isfinite(csr.data).all() and (csr.data >= 0).all()):
        raise ValueError(f"{func}: counts must be finite and >= 0")
    csr.eliminate_zeros()
    ranks = rankdata(-probs, method="average", axis=1)  # rank 1 = most probable word
    rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
    cols = csr.indices
    weights = csr.data if weighting == "token" else np.ones_like(csr.data)
    if weights.size:
        # a weighted mean is scale-free: scaling by the largest count avoids overflow
        weights = weights / weights.max()
    n_docs = csr.shape[0]
    total = np.bincount(rows, weights=weights, minlength=n_docs)
    rank_sum = np.bincount(rows, weights=weights * ranks[rows, cols], minlength=n_docs)
    out = np.full(n_docs, np.nan)
    has = total > 0
    out[has] = rank_sum[has] / total[has]
    return out


def word_rank_per_doc(word_probs: ArrayLike, counts: ArrayLike | sp.sparray | sp.spmatrix,
                      weighting: Literal["token", "type"] = "token") -> NDArray[np.float64]:
    """Mean rank of each document's observed words under its predicted word distribution.

    With :math:`\\mathrm{rank}_d(w)` the rank of word :math:`w` when the vocabulary is sorted
    by descending ``word_probs[d]`` (rank 1 = most probable, tied words share their average
    rank) and :math:`n_{dw}` the count of :math:`w` in document :math:`d`:

    * ``weighting="token"``: :math:`r_d = \\sum_w n_{dw}\\,\\mathrm{rank}_d(w) /
      \\sum_w n_{dw}` -- every occurrence counts, so frequent words weigh more;
    * ``weighting="type"``: :math:`r_d = \\frac{1}{|W_d|}\\sum_{w \\in W_d}
      \\mathrm{rank}_d(w)` over the distinct words :math:`W_d = \\{w : n_{dw} > 0\\}`.

    Parameters
    ----------
    word_probs : array_like of float, shape (n_docs, V)
        Predicted word distributions (any scores: only their order matters).
    counts : scipy sparse matrix or array_like, shape (n_docs, V)
        True word counts (CSR preferred), finite and >= 0.
    weighting : {"token", "type"}, default "token"
        Occurrence-weighted or distinct-word average.

    Returns
    -------
    ndarray of float64, shape (n_docs,)
        :math:`r_d`, NaN for documents without words.
    """
    return _word_rank_per_doc("word_rank_per_doc", word_probs, counts, weighting)


def word_rank(word_probs: ArrayLike, counts: ArrayLike | sp.sparray | sp.spmatrix,
              weighting: Literal["token", "type"] = "token") -> float:
    """Predictive word rank: mean over documents of the mean rank of their words.

    .. math::

        \\mathrm{WR} = \\frac{1}{|D^+|} \\sum_{d \\in D^+} r_d,
        \\qquad D^+ = \\{d : \\textstyle\\sum_w n_{dw} > 0\\},

    with :math:`r_d` from :func:`word_rank_per_doc` (token-weighted by default: each
    occurrence of a word counts once). Lower is better; a uniform random ranking gives
    :math:`(V + 1)/2`.

    Parameters
    ----------
    word_probs : array_like of float, shape (n_docs, V)
        Predicted word distributions, higher = more likely.
    counts : scipy sparse matrix or array_like, shape (n_docs, V)
        True word counts.
    weighting : {"token", "type"}, default "token"
        See :func:`word_rank_per_doc`.

    Returns
    -------
    float
        The predictive word rank.

    Raises
    ------
    ValueError
        On shape mismatch, NaN probabilities, negative counts, or when no document has a
        word.
    """
    per_doc = _word_rank_per_doc("word_rank", word_probs, counts, weighting)
    has = ~np.isnan(per_doc)
    if not has.any():
        raise ValueError("word_rank: counts has no non-zero entry, so no document can be ranked")
    return float(np.mean(per_doc[has]))
