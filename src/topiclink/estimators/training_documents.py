"""What a link model keeps of its training documents (the ``LINK_ARRAYS`` of
:mod:`topiclink.estimators.schema`): the link scores and suggestions name them."""

from __future__ import annotations

from typing import Any

import numpy as np

from topiclink.data.corpus import Corpus
from topiclink.estimators.capabilities import training_ids

__all__ = ["publish_training_documents"]


def publish_training_documents(model: Any, corpus: Corpus) -> None:
    """Set ``model``'s ``vocabulary_``, ``train_doc_ids_`` and ``train_titles_`` (empty
    when the corpus has no titles) from its training ``corpus``."""
    model.vocabulary_ = np.asarray(corpus.vocabulary, dtype=str)
    model.train_doc_ids_ = training_ids(corpus)
    model.train_titles_ = (np.asarray(corpus.titles, dtype=str) if corpus.titles is not None
                           else np.zeros(0, dtype=str))
