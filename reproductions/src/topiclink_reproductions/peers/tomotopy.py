"""tomotopy's models as peers of topiclink's: sLDA with one binary response
(:class:`TomotopySLDA`, the sLDA protocol's ``tomotopy-SLDA``) and g-DMR
(:class:`TomotopyGDMR`, the KTM protocol's ``GDMR``).

tomotopy is imported when a model is built (an ImportError there when it is missing),
never when this module is.  Both take topiclink's :class:`~topiclink.data.corpus.Corpus`
and give back what topiclink's evaluation needs: predictions, or topics over topiclink's
vocabulary and the prior of a new document.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np

from topiclink.data.corpus import Corpus

__all__ = ["TomotopyGDMR", "TomotopySLDA", "tomotopy_words"]


def tomotopy_words(corpus: Corpus, d: int) -> list[str]:
    """Document ``d`` of ``corpus`` as tomotopy's list of tokens (each word repeated by
    its count)."""
    counts = corpus.counts
    lo, hi = counts.indptr[d], counts.indptr[d + 1]
    vocab = np.asarray(corpus.vocabulary, dtype=str)
    return np.repeat(vocab[counts.indices[lo:hi]], counts.data[lo:hi]).tolist()


class TomotopySLDA:
    """tomotopy's ``SLDAModel`` with one binary response, as a fit/predict model.

    ``fit_seconds_`` is the time of ``train`` alone (adding the documents excluded).
    """

    fit_requires: ClassVar[tuple[str, ...]] = ("X", "y")

    def __init__(self, n_topics: int = 10, max_iter: int = 200, doc_topic_prior: float = 0.1,
                 topic_word_prior: float = 0.01, random_state: int = 0) -> None:
        import tomotopy  # noqa: F401  (ImportError here when tomotopy is missing)

        self.n_topics = n_topics
        self.max_iter = max_iter
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.random_state = random_state

    def fit(self, X: Corpus, y: Any) -> TomotopySLDA:
        """Add the documents with their response ``y`` (0/1) and train."""
        import tomotopy as tp

        y = np.asarray(y)
        self.model_ = tp.SLDAModel(k=int(self.n_topics), vars=["b"],
                                   alpha=float(self.doc_topic_prior),
                                   eta=float(self.topic_word_prior),
                                   seed=int(self.random_state) % 2**31)
        for d in range(X.n_docs):
            self.model_.add_doc(tomotopy_words(X, d), y=[float(y[d])])
        t0 = time.perf_counter()
        self.model_.train(int(self.max_iter), workers=1)
        self.fit_seconds_ = time.perf_counter() - t0
        self.vocabulary_ = X.vocabulary
        self.n_iter_ = int(self.max_iter)
        return self

    def predict(self, X: Corpus) -> np.ndarray:
        """The class (0/1) of each document: its estimated response above 0.5."""
        docs = [self.model_.make_doc(tomotopy_words(X, d)) for d in range(X.n_docs)]
        self.model_.infer(docs, workers=1)
        scores = np.asarray([self.model_.estimate(doc)[0] for doc in docs])
        return (scores > 0.5).astype(int)


class TomotopyGDMR:
    """tomotopy's ``GDMRModel``: one numeric feature (a Legendre polynomial of degree
    ``degree``) and one categorical feature, trained in steps.

    Its topics are rebuilt over topiclink's vocabulary from tomotopy's topic-word counts,
    ``(n_kw + beta) / (n_k + V beta)`` (:meth:`topics`), and a document's prior is
    ``exp(tdf(x, label)) + alpha_epsilon`` (:meth:`prior`; tomotopy's own document topic
    distributions are ``(n_dk + alpha_dk) / (N_d + sum alpha_d)`` with this prior).
    tomotopy 0.14's ``metadata_range`` argument crashes the interpreter (segmentation
    fault), so the numeric range is the training documents' (tomotopy's default).
    """

    def __init__(self, n_topics: int, degree: int, doc_topic_prior: float,
                 topic_word_prior: float, burn_in: int, optimize_every: int,
                 random_state: int) -> None:
        import tomotopy as tp

        self.version = tp.__version__
        self.n_topics = int(n_topics)
        self.beta = float(topic_word_prior)
        self.model_ = tp.GDMRModel(k=self.n_topics, degrees=[int(degree)],
                                   alpha=float(doc_topic_prior), eta=self.beta,
                                   seed=int(random_state))
        self.model_.burn_in = int(burn_in)
        self.model_.optim_interval = int(optimize_every)

    def add_documents(self, corpus: Corpus, numeric: Any, labels: Any) -> None:
        """Add every document of ``corpus`` with its numeric feature and its label."""
        self.vocabulary = np.asarray(corpus.vocabulary, dtype=str)
        for d, (x, label) in enumerate(zip(numeric, labels, strict=True)):
            words = tomotopy_words(corpus, d)
            if not words:
                raise ValueError("GDMR: a training document has no words")
            self.model_.add_doc(words, numeric_metadata=[float(x)], metadata=str(label))
        self.model_.train(0, workers=1)          # initialise (not an iteration)

    def train(self, steps: int) -> float:
        """``steps`` more iterations; returns their seconds."""
        t0 = time.perf_counter()
        self.model_.train(int(steps), workers=1)
        return time.perf_counter() - t0

    @property
    def perplexity(self) -> float:
        """The perplexity tomotopy reports (its collapsed joint per token)."""
        return float(self.model_.perplexity)

    @property
    def labels(self) -> set[str]:
        """The categorical values seen in training."""
        return set(self.model_.metadata_dict)

    def topics(self) -> np.ndarray:
        """(K, V) topic-word probabilities over the training corpus's vocabulary."""
        mdl, K, V = self.model_, self.n_topics, self.vocabulary.size
        index = {w: j for j, w in enumerate(self.vocabulary.tolist())}
        cols = np.array([index[w] for w in mdl.used_vocabs], dtype=np.int64)
        raw = np.array([mdl.get_topic_word_dist(k, normalize=False) for k in range(K)])
        n = np.zeros((K, V))
        n[:, cols] = np.maximum(raw - mdl.eta, 0.0)
        return (n + self.beta) / (n.sum(axis=1, keepdims=True) + V * self.beta)

    def doc_topic(self) -> np.ndarray:
        """(D, K) topic proportions of the training documents, in the order added."""
        return np.array([d.get_topic_dist() for d in list(self.model_.docs)], dtype=float)

    def prior(self, numeric: Any, labels: Any) -> np.ndarray:
        """(n, K) Dirichlet prior of new documents; a label without training documents
        gets the mean over the known labels."""
        mdl, eps = self.model_, float(self.model_.alpha_epsilon)
        known = sorted(self.labels)

        def one(x: float, label: str) -> np.ndarray:
            return np.exp(np.asarray(mdl.tdf([x], metadata=label, normalize=False))) + eps

        out = np.empty((len(numeric), self.n_topics))
        for i, (x, label) in enumerate(zip(numeric, labels, strict=True)):
            out[i] = (one(float(x), str(label)) if str(label) in known
                      else np.mean([one(float(x), q) for q in known], axis=0))
        return out
