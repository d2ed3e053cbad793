"""``to_pyldavis(model, corpus)``: the keyword arguments of ``pyLDAvis.prepare`` for any
topic model (LDA, gRTM, Var-RTM, LDA + Regression, gSLDA / MedLDA, vSLDA, LMV, DMR, KTM).

pyLDAvis (``pip install 'topiclink[viz]'``) is not needed to build them::

    import pyLDAvis
    vis = pyLDAvis.prepare(**to_pyldavis(model, corpus))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus, as_corpus

__all__ = ["to_pyldavis", "PYLDAVIS_KEYS"]

#: the arguments of ``pyLDAvis.prepare`` this returns
PYLDAVIS_KEYS = ("topic_term_dists", "doc_topic_dists", "doc_lengths", "vocab",
                 "term_frequency")


def _doc_topics(model: Any, corpus: Corpus, doc_topic: Any) -> np.ndarray:
    if doc_topic is not None:
        theta = np.asarray(doc_topic, dtype=np.float64)
    elif corpus.n_docs == np.shape(model.doc_topic_)[0]:
        theta = np.asarray(model.doc_topic_, dtype=np.float64)
    else:
        theta = np.asarray(model.transform(corpus), dtype=np.float64)
    if theta.shape != (corpus.n_docs, np.shape(model.components_)[0]):
        raise ValueError(f"to_pyldavis: doc_topic must be ({corpus.n_docs}, "
                         f"{np.shape(model.components_)[0]}), got {theta.shape}")
    return theta / theta.sum(axis=1, keepdims=True)


def to_pyldavis(model: Any, corpus: Any, *, doc_topic: Any = None) -> dict[str, Any]:
    """``pyLDAvis.prepare``'s keyword arguments for a fitted topic model and a corpus.

    Parameters
    ----------
    model : fitted topic model (``components_``, ``doc_topic_``, ``vocabulary_``)
    corpus : Corpus (or document-term matrix over the model's vocabulary)
        The documents shown.  With as many documents as the model's training set they are
        taken to be the training documents, in order, and ``doc_topic_`` is used; other
        documents are inferred with ``model.transform`` (DMR and KTM: their mean prior).
        Words are matched to the model's vocabulary by name.
    doc_topic : array (n_docs, K), optional
        The documents' topic proportions, instead of the above.

    Returns
    -------
    dict with ``topic_term_dists`` (K, V'), ``doc_topic_dists`` (n_docs, K),
    ``doc_lengths`` (n_docs,), ``vocab`` (V' str) and ``term_frequency`` (V',): the terms
    V' of the model's vocabulary that occur in ``corpus`` (pyLDAvis divides by the
    frequencies), each topic renormalised over them; every row sums to 1.
    """
    if not hasattr(model, "components_") or not hasattr(model, "vocabulary_"):
        raise TypeError(f"to_pyldavis: {type(model).__name__} is not a fitted topic model "
                        "(no components_ / vocabulary_)")
    vocab = np.asarray(model.vocabulary_).astype(str)
    if isinstance(corpus, Corpus):
        if not np.array_equal(np.asarray(corpus.vocabulary).astype(str), vocab):
            corpus, _ = corpus.with_vocabulary(vocab)
    else:
        corpus = as_corpus(corpus)
        if corpus.n_words != vocab.size:
            raise ValueError(f"to_pyldavis: the matrix has {corpus.n_words} columns, the "
                             f"model {vocab.size} words")
    theta = _doc_topics(model, corpus, doc_topic)
    frequency = np.asarray(corpus.counts.sum(axis=0), dtype=np.int64).ravel()
    keep = np.flatnonzero(frequency > 0)
    if keep.size == 0:
        raise ValueError("to_pyldavis: the corpus has no word of the model's vocabulary")
    phi = np.asarray(model.components_, dtype=np.float64)[:, keep]
    phi = phi / phi.sum(axis=1, keepdims=True)
    return {"topic_term_dists": phi, "doc_topic_dists": theta,
            "doc_lengths": np.asarray(corpus.doc_lengths, dtype=np.int64),
            "vocab": vocab[keep].tolist(), "term_frequency": frequency[keep]}
