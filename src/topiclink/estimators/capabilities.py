"""Capabilities: one contract each, shared by every estimator that has it.

- :class:`TopicsMixin`: ``components_`` (K x V, rows sum to 1), ``vocabulary_``,
  ``top_words``, ``summary``, and one ``transform`` = the *expected topic proportions*
  E[theta_d] of new documents (smoothed by the prior, so an empty document gets the prior
  mean); ``fit_transform``; held-out ``score`` / ``perplexity`` by document completion;
  raw texts wherever documents are taken once the model has its text analyser
  (``set_analyzer`` / ``analyzer_``, saved in the model file; ``count_texts``).
- :class:`LinkPredictionMixin`: ``link_scores`` / ``predict_link_proba(X_new=None,
  targets=None, *, direction="either")``, ``suggest_links``, ``predict_words_from_links``.
- :class:`ClassifierCapability`: scikit-learn classifier tags, ``predict``,
  ``predict_proba``, ``decision_function``, ``score`` (accuracy).
- :class:`EntityFactorsMixin`: multi-relational models over entities (no vocabulary):
  ``embedding_``, ``predict_proba(heads, relations, tails)``, ``score_tails``,
  ``score_heads``.

A subclass supplies a few hooks (named in each mixin) and inherits the verbs, so sibling
estimators cannot disagree on a signature.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import ClassifierMixin

from topiclink.data.analyzer import TextAnalyzer
from topiclink.data.checks import DataError, check_memory
from topiclink.data.corpus import Corpus, as_corpus
from topiclink.data.shards import ShardSet
from topiclink.random import RandomState, as_generator, spawn
from topiclink.topics.fixed_topics import completion_split

__all__ = ["TopicsMixin", "LinkPredictionMixin", "ScoresAreProbabilitiesMixin", "training_ids",
           "ClassifierCapability", "EntityFactorsMixin", "DIRECTIONS", "is_texts"]

logger = logging.getLogger(__name__)

DIRECTIONS = ("out", "in", "either")

#: full-size (n_query, n_targets) float arrays a link score computation holds at its peak
#: (each direction's scores, their combination and its temporaries)
_SCORE_COPIES = {"out": 2, "in": 2, "either": 5}

_SCORE_ADVICE = ("use suggest_links (the top links of each query, scored in blocks of "
                 "rows) or score fewer queries or targets at a time")


def inference_memory(corpus: Corpus, n_topics: int) -> int:
    """Bytes that inferring the topic proportions of ``corpus`` (topics fixed) allocates:
    the token arrays (words, offsets, per-token state), the (D, K) proportions with
    their running sums and a (V, K) copy of the topics.  Checked before any of it is
    allocated (:func:`~topiclink.data.checks.check_memory`)."""
    D, V, N = corpus.n_docs, corpus.n_words, corpus.n_tokens
    return 8 * int(n_topics) * (3 * D + 2 * V) + 24 * N


class TopicsMixin:
    """Topics over a vocabulary.

    Hook: ``_doc_topics(corpus, rng) -> (n_docs, K)`` expected topic proportions of
    documents over the model's vocabulary (topics fixed).
    """

    @property
    def n_topics_(self) -> int:
        self._check_fitted()
        return int(np.shape(self.components_)[-2])

    def set_analyzer(self, analyzer: TextAnalyzer) -> Any:
        """Attach the fitted :class:`~topiclink.data.analyzer.TextAnalyzer` that counted
        the training texts (e.g. ``linked_corpus(...).analyzer``); returns self.

        The model then takes raw texts wherever it takes documents (``transform(texts)``,
        ``suggest_links(texts)``...), analysed exactly as the training texts were
        (stop words, stemming), and :meth:`save` stores the analyser in the model file.
        One-line DataError when the analyser is unfitted or lacks words of the model.
        """
        self._check_fitted()
        if not isinstance(analyzer, TextAnalyzer):
            raise TypeError(f"set_analyzer takes a fitted TextAnalyzer, got "
                            f"{type(analyzer).__name__}")
        analyzer.check_covers(self.vocabulary_)
        self.analyzer_ = analyzer
        return self

    def count_texts(self, texts: Sequence[str]) -> Corpus:
        """Raw texts -> counts over the model's vocabulary, with the model's analyser.

        Terms outside the vocabulary are not counted; their number is logged (INFO) and
        left in ``analyzer_.last_unknown_``.  A model without an analyser
        (one fitted on counts) raises a one-line TypeError: count the texts the way its
        training texts were counted (e.g. :func:`topiclink.data.io.corpus_from_texts` with
        ``vocabulary=model.vocabulary_``).
        """
        self._check_fitted()
        analyzer = getattr(self, "analyzer_", None)
        if analyzer is None:
            raise TypeError(f"this {type(self).__name__} has no text analyser, so it cannot "
                            "take raw texts: pass counts (a Corpus), or attach the analyser "
                            "that counted its training texts with set_analyzer()")
        counts = analyzer.transform(texts)
        unknown = int(analyzer.last_unknown_)
        if unknown:
            total = unknown + int(counts.sum())
            logger.info("%d of %d terms of %d texts are not in the model's vocabulary "
                        "(not counted)", unknown, total, counts.shape[0])
        corpus, _ = Corpus(counts, vocabulary=analyzer.vocabulary_).with_vocabulary(
            self.vocabulary_)
        return corpus

    def _as_model_corpus(self, X: Any) -> Corpus:
        """New documents over the fitted vocabulary: raw texts through the model's
        analyser (:meth:`count_texts`); a Corpus is mapped word by word (unknown words
        dropped, their token count logged); a matrix must have V columns."""
        if is_texts(X):
            return self.count_texts(X if isinstance(X, str) else list(X))
        corpus = as_corpus(X)
        n_words = len(self.vocabulary_)
        if isinstance(X, Corpus | pd.DataFrame):
            # words are matched by name (a DataFrame's columns), whatever their order
            corpus, dropped = corpus.with_vocabulary(self.vocabulary_)
            if dropped:
                logger.info("dropped %d tokens of words outside the model's vocabulary",
                            dropped)
        elif corpus.n_words != n_words:
            raise ValueError(f"X has {corpus.n_words} columns but the model was fitted on "
                             f"{n_words} words")
        return corpus

    def _doc_topics(self, corpus: Corpus, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def _model_corpora(self, X: Any) -> Iterator[Corpus]:
        """``X`` as corpora over the fitted vocabulary: one, or a
        :class:`~topiclink.data.shards.ShardSet`'s shards one at a time (a corpus larger
        than memory is predicted shard by shard)."""
        if isinstance(X, ShardSet):
            for part in X.corpora():
                yield self._as_model_corpus(part)
        else:
            yield self._as_model_corpus(X)

    def transform(self, X: Any) -> np.ndarray:
        """Expected topic proportions E[theta] (n_docs, K) of documents, topics fixed.

        Smoothed by the prior: a document without known words gets the prior mean.  ``X``
        may be a :class:`~topiclink.data.shards.ShardSet` (read shard by shard; the same
        rows as for the corpus in memory: each document's chain has a stream of its own,
        seeded from one draw and its words).
        """
        self._check_fitted()
        rng = self._prediction_generator()
        parts = []
        K = self.n_topics_
        if isinstance(X, ShardSet):           # the result, and its copy by vstack
            check_memory(16 * X.n_docs * K, f"transform: the ShardSet's {X.n_docs} "
                         f"documents x {K} topics", "transform its shards one at a time "
                         "(ShardSet.corpora())")
        for corpus in self._model_corpora(X):
            check_memory(inference_memory(corpus, K), f"transform: {corpus.n_docs} "
                         f"documents x {K} topics", "transform fewer documents at a time, "
                         "or a ShardSet (inferred shard by shard)")
            empty = corpus.empty_documents()
            if empty.size:
                logger.info("%d of %d documents have no known words; they get the prior "
                            "mean", empty.size, corpus.n_docs)
            # every part draws the seed the whole corpus would have drawn
            parts.append(self._doc_topics(corpus, copy.deepcopy(rng)))
        return parts[0] if len(parts) == 1 else np.vstack(parts)

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """Fit, then return the training documents' topic proportions ``doc_topic_``."""
        return self.fit(X, y, **fit_params).doc_topic_

    def top_words(self, n: int = 10, *, by: str = "term-score") -> list[list[str]]:
        """The ``n`` top words of every topic, best first: by term-score (default: a
        topic's probability of the word against its geometric mean over the topics, so
        words frequent everywhere -- "paper", "states", "united" -- give way to the words
        that set the topic apart; Blei & Lafferty 2009, the LMV paper's labels), by
        probability (``by="probability"``), or as R's ``stm`` labels them: FREX
        (``by="frex"``, frequent *and* exclusive) or lift (``by="lift"``, against the
        word's corpus frequency; :mod:`topiclink.estimators.topic_display`)."""
        from topiclink.estimators.topic_display import top_word_indices

        self._check_fitted()
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"top_words: n must be an integer >= 1, got {n!r}")
        order = top_word_indices(np.asarray(self.components_), n, by,
                                 weights=getattr(self, "topic_weights_", None))
        return [[str(self.vocabulary_[j]) for j in row] for row in order]

    def summary(self, n_words: int = 8, *, by: str = "term-score") -> str:
        """A readable multi-line description of the fitted model (topics labelled by
        ``by``: term-score or probability, see :meth:`top_words`)."""
        self._check_fitted()
        comps = np.asarray(self.components_)
        lines = [f"{type(self).__name__}: {comps.shape[0]} topics, {comps.shape[1]} words, "
                 f"{getattr(self, 'n_iter_', '?')} iterations"]
        trace = getattr(self, "trace_", None)
        if trace is not None and "log_likelihood" in trace:
            ll = np.asarray(trace["log_likelihood"])
            ll = ll[np.isfinite(ll)]
            if ll.size:
                lines.append(f"log-likelihood per token: first {ll[0]:.4f}, last {ll[-1]:.4f}")
        weight = getattr(self, "topic_weights_", None)
        for k, words in enumerate(self.top_words(n_words, by=by)):
            share = f" ({100 * weight[k]:4.1f}%)" if weight is not None else ""
            lines.append(f"  topic {k:2d}{share}: {' '.join(words)}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ held-out fit
    def log_likelihood_completion(self, X: Any, fraction: float = 0.5,
                                  random_state: RandomState = None) -> tuple[float, int]:
        """Held-out log-likelihood by document completion and the held-out token count.

        Each document's tokens are split at random: theta is inferred from the observed
        part, and ``sum log sum_k theta_dk phi_kw`` is evaluated on the held-out part
        (Wallach et al. 2009).
        """
        return self._completion_loglik(X, fraction, random_state, self._doc_topics)

    def _completion_loglik(self, X: Any, fraction: float, random_state: RandomState,
                           doc_topics: Any) -> tuple[float, int]:
        """:meth:`log_likelihood_completion` with ``doc_topics(corpus, rng)`` inferring
        the observed parts' proportions (row i of the corpus: document i of ``X``)."""
        from topiclink.topics.kernels.lda import token_log_likelihood

        self._check_fitted()
        if isinstance(fraction, bool) or not isinstance(fraction, int | float | np.number) \
                or not 0.0 < float(fraction) < 1.0:
            raise ValueError(f"fraction (of each document's tokens held out) must be in "
                             f"(0, 1), got {fraction!r}")
        rng = (self._prediction_generator() if random_state is None
               else as_generator(random_state))
        split_rng, infer_rng = spawn(rng, 2)
        phi_wk = np.ascontiguousarray(np.asarray(self.components_).T)
        ll, n = 0.0, 0
        # a ShardSet shard by shard: the split's draws continue from shard to shard and
        # every shard infers with the seed the whole corpus would have drawn
        for corpus in self._model_corpora(X):
            # the two halves of the split (CSR) and the inference of the observed one
            check_memory(inference_memory(corpus, phi_wk.shape[1]) + 32 * corpus.n_tokens,
                         f"log_likelihood_completion: {corpus.n_docs} documents x "
                         f"{phi_wk.shape[1]} topics", "score fewer documents at a time, or "
                         "a ShardSet (scored shard by shard)")
            observed, held = completion_split(corpus, split_rng, fraction)
            theta = doc_topics(observed, copy.deepcopy(infer_rng))
            tok = held.tokens()
            ll += float(token_log_likelihood(tok.words, tok.offsets, theta, phi_wk))
            n += int(tok.words.size)
        return ll, n

    def perplexity(self, X: Any, fraction: float = 0.5,
                   random_state: RandomState = None) -> float:
        """Held-out perplexity by document completion, ``exp(-loglik / n_heldout_tokens)``."""
        from topiclink.metrics import perplexity

        ll, n = self.log_likelihood_completion(X, fraction, random_state)
        return float(perplexity(ll, n))

    def score(self, X: Any, y: Any = None, **kwargs: Any) -> float:
        """Held-out log-likelihood per token by document completion (higher is better)."""
        ll, n = self.log_likelihood_completion(X)
        return ll / max(n, 1)


def training_ids(corpus: Any) -> np.ndarray:
    """The training documents' ids as the model keeps them: integers stay integers (int64)
    and text stays text, so ``suggest_links`` gives back the ids the user gave (the data
    layer accepts only integer or text ids)."""
    ids = np.asarray(corpus.doc_ids)
    return ids.astype(np.int64) if ids.dtype.kind in "iu" else ids.astype(str)


class LinkPredictionMixin:
    """Scores and suggestions of links between (new) documents and the training documents.

    Hooks: ``train_zbar_`` (n_train, K) of the training documents; ``_query_topics(
    corpus) -> (n, K)`` what the link function uses for new documents;
    ``_scores_from_topics(zq, targets, direction)``; ``_probabilities(scores)`` (raise
    when the loss has no probabilities); ``_words_from_links(out, into, n_tokens, rng)``
    (``n_tokens`` checked: None, a number or one per new document, see
    ``_n_tokens_whole`` / ``_n_tokens_per_document``).
    """

    #: n_tokens must be a whole number of tokens (a sampler draws that many)
    _n_tokens_whole: bool = False
    #: n_tokens may be one length per new document (else one for all)
    _n_tokens_per_document: bool = True

    def _check_fit_links(self, y: Any, links: Any) -> None:
        """``fit(X, links=...)``: the links are keyword-only (a Pipeline passes ``y``
        positionally) and required."""
        if y is not None:
            raise TypeError(f"{type(self).__name__}.fit takes the links as a keyword: "
                            "fit(X, links=...)")
        if links is None:
            raise DataError(f"{type(self).__name__}.fit needs links: a Links object, an "
                            "(n, 2) edge array, a scipy adjacency matrix or a networkx graph")

    @classmethod
    def _check_loaded(cls, where: str, arrays: dict[str, np.ndarray]) -> None:
        super()._check_loaded(where, arrays)  # type: ignore[misc]
        titles, ids = arrays.get("train_titles_"), arrays.get("train_doc_ids_")
        if titles is not None and ids is not None and titles.size not in (0, ids.size):
            raise ValueError(f"{where}: {titles.size} training titles for {ids.size} "
                             "training documents")

    def _targets(self, targets: Any, name: str = "targets") -> np.ndarray:
        n_train = np.shape(self.train_zbar_)[0]
        if targets is None:
            return np.arange(n_train)
        t = np.asarray(targets)
        if t.dtype == bool:
            if t.shape != (n_train,):
                raise ValueError(f"a boolean {name} mask needs {n_train} entries (one per "
                                 f"training document), got shape {t.shape}")
            return np.flatnonzero(t)
        t = t.ravel() if t.ndim == 0 else t
        if t.ndim != 1 or (t.size and t.dtype.kind not in "iu"):
            raise ValueError(f"{name} must be a 1-D array of training-document positions or "
                             "a boolean mask")
        if t.size and (t.min() < 0 or t.max() >= n_train):
            bad = int(t[(t < 0) | (t >= n_train)][0])
            raise DataError(f"{name}: training document {bad} is not in [0, {n_train})")
        return t.astype(np.int64)

    def link_scores(self, X_new: Any = None, targets: Any = None, *,
                    direction: str = "either", queries: Any = None) -> np.ndarray:
        """Link scores (n_query, n_targets) between query documents and training documents.

        Parameters
        ----------
        X_new : Corpus or document-term matrix, optional
            Query documents, known by their words.  None: the training documents are the
            queries (then ``targets`` or ``queries`` is required, to avoid a D x D matrix
            by accident).
        targets : positions (n_targets,) or boolean mask (n_train,), optional
            Training documents to score against (default all).
        direction : ``"out"`` query -> training (the query cites), ``"in"`` training ->
            query, ``"either"`` a link in at least one direction.
        queries : positions (n_query,) or boolean mask (n_train,), optional
            With ``X_new=None``: the training documents scored as queries (default all).

        The (n_query, n_targets) matrix and its temporaries must fit in memory: checked
        before anything is computed (one-line DataError naming the sizes; the top links
        of each query need far less, see :meth:`suggest_links`).
        """
        return self._link_scores(X_new, targets, direction, queries, "link_scores")

    def _link_scores(self, X_new: Any, targets: Any, direction: str, queries: Any,
                     call: str, copies: int = 0) -> np.ndarray:
        """:meth:`link_scores` for ``call`` (named in the memory check, which counts
        ``copies`` more (n_query, n_targets) arrays)."""
        self._check_fitted()
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
        if X_new is None:
            if targets is None and queries is None:
                raise ValueError("link_scores: give X_new, targets or queries (scoring every "
                                 "training pair would build a D x D matrix)")
            zq = np.asarray(self.train_zbar_)
            if queries is not None:
                zq = zq[self._targets(queries, "queries")]
            t = self._targets(targets)
            self._check_score_memory(call, zq.shape[0], t.size, direction,
                                     extra=8.0 * copies * zq.shape[0] * t.size)
        else:
            if queries is not None:
                raise ValueError("link_scores: queries picks training documents; it cannot "
                                 "be given with X_new")
            corpus = self._as_model_corpus(X_new)
            t = self._targets(targets)
            self._check_score_memory(call, corpus.n_docs, t.size, direction, corpus,
                                     extra=8.0 * copies * corpus.n_docs * t.size)
            zq = self._query_topics(corpus)
        return self._scores_from_topics(zq, t, direction)

    def _check_score_memory(self, call: str, n_query: int, n_targets: int, direction: str,
                            corpus: Corpus | None = None, extra: float = 0.0,
                            advice: str = _SCORE_ADVICE, block: int | None = None) -> None:
        """Refuse (one-line DataError naming ``call``, the sizes and ``advice``) scores of
        ``n_query`` x ``n_targets`` pairs (``block`` queries at a time: None, all) that do
        not fit in memory, with the inference of the queries' topics (``corpus``) and
        ``extra`` bytes."""
        K = int(np.shape(self.train_zbar_)[1])
        rows = n_query if block is None else block
        need = 8.0 * rows * n_targets * _SCORE_COPIES[direction] + extra
        if corpus is not None:
            need += inference_memory(corpus, K)
        check_memory(need, f"{call}: {n_query} queries x {n_targets} training documents "
                     f"(direction {direction!r}"
                     + (f", {block} queries a block)" if block is not None else ")"), advice)

    def predict_link_proba(self, X_new: Any = None, targets: Any = None, *,
                           direction: str = "either") -> np.ndarray:
        """Link probabilities (n_query, n_targets); arguments as :meth:`link_scores`."""
        return self._probabilities(self._link_scores(X_new, targets, direction, None,
                                                     "predict_link_proba", copies=1))

    def suggest_links(self, X_new: Any, top: int = 10, *, direction: str = "either",
                      block_size: int | None = None) -> pd.DataFrame:
        """The ``top`` training documents most likely linked to each new document.

        Returns a tidy DataFrame: query, rank (1 = best), target (training position),
        doc_id, title (where the training data had titles) and score.  Ranked by score,
        ties by training position (a stable sort of each query's scores).

        The scores are computed ``block_size`` queries at a time (default: about 4
        million scores, 32 MiB, a block) and only each query's ``top`` are kept, so the
        (n_new, n_train) matrix of :meth:`link_scores` is never built; the result is the
        same.  What is needed (a block, the queries' topics, the table) is checked against
        the available memory first (one-line DataError).
        """
        from topiclink.metrics.chunked import default_chunk_size

        if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
            raise ValueError(f"suggest_links: top must be an integer >= 1, got {top!r}")
        if block_size is not None and (isinstance(block_size, bool) or not isinstance(
                block_size, int | np.integer) or block_size < 1):
            raise ValueError(f"suggest_links: block_size must be an integer >= 1 (queries "
                             f"scored at a time) or None, got {block_size!r}")
        self._check_fitted()
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
        corpus = self._as_model_corpus(X_new)
        n_query, n_train = corpus.n_docs, int(np.shape(self.train_zbar_)[0])
        top = int(min(top, n_train))
        block = int(min(block_size or default_chunk_size(n_train), max(n_query, 1)))
        # a block of scores (and its sort), the queries' topics, the table (~ 128 B a row)
        self._check_score_memory(
            "suggest_links", n_query, n_train, direction, corpus,
            extra=8.0 * block * n_train + 128.0 * n_query * top, block=block,
            advice="give a smaller block_size, a smaller top or fewer documents at a time")
        zq = self._query_topics(corpus)
        everyone = np.arange(n_train)
        order = np.empty((n_query, top), dtype=np.int64)
        best = np.empty((n_query, top))
        for start in range(0, n_query, block):
            scores = self._scores_from_topics(zq[start:start + block], everyone, direction)
            chosen = np.argsort(-scores, axis=1, kind="stable")[:, :top]
            order[start:start + block] = chosen
            best[start:start + block] = np.take_along_axis(scores, chosen, axis=1)
            del scores
        ids = np.asarray(self.train_doc_ids_)
        titles = getattr(self, "train_titles_", None)
        targets = order.ravel()
        doc_id = ids[targets] if ids.dtype.kind in "iu" else ids[targets].astype(object)
        title = (np.asarray(titles).astype(str)[targets].astype(object)
                 if titles is not None and len(titles) else np.full(targets.size, "", object))
        return pd.DataFrame({"query": np.repeat(np.arange(n_query, dtype=np.int64), top),
                             "rank": np.tile(np.arange(1, top + 1, dtype=np.int64), n_query),
                             "target": targets, "doc_id": doc_id, "title": title,
                             "score": best.ravel()})

    def predict_words_from_links(self, links_out: Any, links_in: Any = None, *,
                                 n_tokens: float | np.ndarray | None = None,
                                 random_state: RandomState = None) -> np.ndarray:
        """Word distributions (n_new, V) of new documents known only by their links.

        ``links_out`` (n_new, n_train): nonzero where the new document cites (links to) a
        training document; ``links_in``: where a training document cites the new one
        (models of undirected links use the union).  ``n_tokens``: the length N of each
        new document, a number > 0 or (where the model allows it) one per new document;
        None: the mean training length.  A model whose sampler draws tokens takes a whole
        number; 0, negative, non-finite or non-numeric lengths are refused (one line).
        The topic proportions are inferred from the link term alone, then
        ``p(w) = sum_k thetahat_k phihat_kw``.
        """
        self._check_fitted()
        n_train = np.shape(self.train_zbar_)[0]
        out = _link_indicator(links_out, "links_out", n_train)
        into = (_link_indicator(links_in, "links_in", n_train) if links_in is not None
                else sp.csr_matrix(out.shape, dtype=bool))
        if into.shape != out.shape:
            raise ValueError(f"links_in has shape {into.shape}, links_out {out.shape}: they "
                             "must be the same")
        n_tokens = check_n_tokens(n_tokens, out.shape[0], whole=self._n_tokens_whole,
                                  per_document=self._n_tokens_per_document)
        # the (n_new, V) result and its product, the (n_new, K) proportions and sums, a
        # sampler's tokens (n_tokens per document) and the links' pairs
        n_new, V, K = out.shape[0], len(self.vocabulary_), int(np.shape(self.train_zbar_)[1])
        length = float(np.max(n_tokens)) if n_tokens is not None and np.size(n_tokens) else \
            float(getattr(self, "mean_doc_length_", 0.0) or 0.0)
        check_memory(8.0 * n_new * (2 * V + 4 * K) + 24.0 * n_new * length
                     + 64.0 * (out.nnz + into.nnz),
                     f"predict_words_from_links: {n_new} new documents x {V} words",
                     "pass fewer new documents (rows of links_out) at a time")
        rng = (self._prediction_generator() if random_state is None
               else as_generator(random_state))
        return self._words_from_links(out, into, n_tokens, rng)


def check_n_tokens(n_tokens: Any, n_new: int, *, whole: bool = False,
                   per_document: bool = True) -> float | np.ndarray | None:
    """``n_tokens`` of :meth:`LinkPredictionMixin.predict_words_from_links`: None (the
    default length), one number > 0 (a float), or -- with ``per_document`` -- a 1-D
    array of ``n_new`` numbers > 0; whole numbers when ``whole``.  One-line ValueError
    naming ``n_tokens`` otherwise (0 is refused: a document of no tokens has no word
    distribution to predict; None asks for the default)."""
    if n_tokens is None:
        return None
    expected = ("a number > 0" if not whole else "a whole number >= 1") + (
        f" or one per new document ({n_new})" if per_document else
        " (this model takes one length for every new document)")
    if isinstance(n_tokens, str | bytes | bool | np.bool_):
        raise ValueError(f"n_tokens must be {expected}, got {n_tokens!r}")
    try:
        values = np.asarray(n_tokens)
    except (TypeError, ValueError):
        raise ValueError(f"n_tokens must be {expected}") from None
    if values.dtype.kind not in "iuf":
        raise ValueError(f"n_tokens must be {expected}, got {n_tokens!r}")
    if values.ndim != 0 and not per_document:
        raise ValueError(f"n_tokens must be {expected}, got an array of shape "
                         f"{values.shape}")
    if values.ndim > 1 or (values.ndim == 1 and values.shape[0] != n_new):
        raise ValueError(f"n_tokens has shape {values.shape}: give one number, or one per "
                         f"new document ({n_new},)")
    values = values.astype(np.float64)
    bad = ~np.isfinite(values) | (values <= 0)
    if whole:
        bad |= values != np.round(values)
    if np.any(bad):
        first = values.ravel()[int(np.flatnonzero(np.ravel(bad))[0])]
        at = "" if values.ndim == 0 else f" (document {int(np.flatnonzero(bad)[0])})"
        raise ValueError(f"n_tokens must be {expected}, got {first:g}{at}"
                         + ("; None gives the mean training length" if first == 0 else ""))
    return float(values) if values.ndim == 0 else values


def is_texts(X: Any) -> bool:
    """Whether ``X`` is raw text: one string (refused by :meth:`TextAnalyzer.transform`
    with a clear message), or a non-empty list, tuple, Series or array of strings."""
    if isinstance(X, str):
        return True
    if isinstance(X, pd.Series | np.ndarray):
        X = X.tolist() if X.ndim == 1 else None
    return isinstance(X, list | tuple) and len(X) > 0 and all(isinstance(t, str) for t in X)


def _link_indicator(links: Any, name: str, n_train: int) -> sp.csr_matrix:
    """A (n_new, n_train) 0/1 matrix of links as boolean CSR (one-line errors)."""
    if sp.issparse(links):
        M = sp.csr_matrix(links)
        values = M.data
    else:
        try:
            values = np.asarray(links, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a numeric (n_new, {n_train}) matrix") from None
        if values.ndim != 2:
            raise ValueError(f"{name} must be a 2-D (n_new, {n_train}) matrix, got "
                             f"{values.ndim} dimensions")
        M = sp.csr_matrix(values)
    if M.shape[1] != n_train:
        raise ValueError(f"{name} must have shape (n_new, {n_train}), got {M.shape}")
    if values.dtype.kind not in "biuf" or not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must hold finite numbers (nonzero = linked)")
    return (M != 0).tocsr()



class ScoresAreProbabilitiesMixin:
    """For link models whose scores are already probabilities (LMV's eq. 6.1, a logistic
    regression): ``_probabilities`` clips to [0, 1], and a document known only by its
    links gets the word distribution of theta = alpha + the summed topic proportions of
    the training documents it cites and is cited by."""

    def _probabilities(self, scores: np.ndarray) -> np.ndarray:
        return np.clip(scores, 0.0, 1.0)

    def _words_from_links(self, out: Any, into: Any, n_tokens: Any,
                          rng: np.random.Generator) -> np.ndarray:
        """theta = alpha + the linked documents' proportions; ``p(w)`` does not depend on
        the length N of the new document, so ``n_tokens`` (checked by the caller) is not
        used."""
        linked = (out + into).astype(np.float64)
        theta = np.asarray(linked @ np.asarray(self.train_zbar_)) + np.asarray(self.alpha_)
        theta /= theta.sum(axis=1, keepdims=True)
        return theta @ np.asarray(self.components_)

class ClassifierCapability(ClassifierMixin):
    """Document classification (scikit-learn classifier tags: ``is_classifier`` is True,
    ``cross_val_score`` stratifies).

    Hooks: ``classes_``; ``decision_function(X)`` ((n,) when binary, else (n, n_classes));
    ``_probabilities(scores)`` (raise when the loss has no probabilities).
    """

    @classmethod
    def _check_loaded(cls, where: str, arrays: dict[str, np.ndarray]) -> None:
        super()._check_loaded(where, arrays)  # type: ignore[misc]
        classes, coef = arrays.get("classes_"), arrays.get("coef_")
        if classes is None or coef is None:
            return
        if classes.ndim != 1 or classes.size < 2 or np.unique(classes).size != classes.size:
            raise ValueError(f"{where}: classes_ must list at least 2 distinct labels")
        expected = 1 if classes.size == 2 else classes.size
        if coef.shape[0] != expected:
            raise ValueError(f"{where}: coef_ has {coef.shape[0]} classifiers for "
                             f"{classes.size} classes (expected {expected})")

    def predict(self, X: Any) -> np.ndarray:
        """The label of each document (arg-max decision value; sign when binary)."""
        scores = self.decision_function(X)
        classes = np.asarray(self.classes_)
        if classes.size == 2:
            return classes[(np.asarray(scores) > 0).astype(int)]
        return classes[np.argmax(scores, axis=1)]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities (n_docs, n_classes), columns in ``classes_`` order."""
        return self._probabilities(self.decision_function(X))

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)``."""
        predicted = self.predict(X)
        y = np.asarray(y)
        if y.shape != predicted.shape:
            raise ValueError(f"y has shape {y.shape} for {predicted.shape[0]} documents")
        return super().score(X, y, sample_weight) if sample_weight is not None else \
            float(np.mean(predicted == y))

    def _probabilities(self, scores: np.ndarray) -> np.ndarray:
        p = 0.5 * (1.0 + np.tanh(0.5 * np.asarray(scores)))
        if np.asarray(self.classes_).size == 2:
            return np.column_stack([1.0 - p, p])
        return p / p.sum(axis=1, keepdims=True)


class EntityFactorsMixin:
    """Latent factors of entities in a multi-relational tensor (no vocabulary).

    Contract: ``embedding_`` (n_entities, K), ``entity_names_``, ``relation_names_``;
    ``predict_proba(heads, relations, tails)`` -> (n,) probabilities of the triples;
    ``score_tails(head, relation)`` / ``score_heads(relation, tail)`` -> a score per
    entity; ``score_tails_batch(heads, relations)`` / ``score_heads_batch(relations,
    tails)`` -> a row of scores per query; ``suggest_tails`` / ``suggest_heads`` -> the
    top entities of one query as a table; ``model_indices(tensor)`` -> a tensor's triples
    as the model's indices (matched by name).  Hooks: ``_triple_proba(h, r, t)``,
    ``_scores(h, r, t, axis)`` and, optionally, ``_score_rows(a, r, axis)`` (a batch of
    queries at once; the default calls ``_scores`` once per query).
    """

    #: whether ``score_tails`` / ``score_heads`` give the triples' probabilities (those of
    #: ``predict_proba``; BPBFM: the mean over the kept samples of 1 - exp(-rate)), so the
    #: suggestions have a probability column
    _scores_are_probabilities: bool = True

    @staticmethod
    def _lookup(values: Any, names: np.ndarray) -> tuple[np.ndarray, list, bool]:
        """(indices with -1 where unknown or out of range, the given values as Python
        objects, whether they were integer indices)."""
        arr = np.atleast_1d(np.asarray(values))
        given = arr.ravel().tolist()
        if arr.dtype.kind in "iu":
            idx = arr.ravel().astype(np.int64)
            return np.where((idx >= 0) & (idx < names.size), idx, -1), given, True
        lookup = {str(n): i for i, n in enumerate(names.tolist())}
        return (np.array([lookup.get(str(v), -1) for v in given], dtype=np.int64), given,
                False)

    @staticmethod
    def _unknown(what: str, value: Any, integer: bool, names: np.ndarray,
                 label: str | None = None) -> str:
        """``unknown tail 'zz' (...)`` or ``tail index 99 is not in [0, N)``; ``label``
        replaces ``what`` after "unknown" (e.g. "name")."""
        if integer:
            return f"{what} index {value!r} is not in [0, {names.size})"
        import difflib

        plural = "relations" if what.startswith("relation") else "entities"
        close = difflib.get_close_matches(str(value), [str(n) for n in names.tolist()], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return (f"unknown {label or what} {value!r} (not one of the model's {names.size} "
                f"{plural}; names are matched as str){hint}")

    def _entity_index(self, values: Any, names: np.ndarray, what: str) -> np.ndarray:
        idx, given, integer = self._lookup(values, names)
        bad = np.flatnonzero(idx < 0)
        if bad.size:
            raise DataError(f"{what}: " + self._unknown(what, given[bad[0]], integer, names,
                                                        "name"))
        return idx

    def predict_proba(self, heads: Any, relations: Any, tails: Any) -> np.ndarray:
        """Probabilities (n,) of the triples ``(heads[i], relations[i], tails[i])``, given
        by name or by index; an unknown name or an index out of range raises a one-line
        DataError naming the first bad triple, e.g. ``triple 3 ('a', 'likes', 'zz'):
        unknown tail 'zz' (...)``."""
        return self._triple_proba(*self._triple_indices(heads, relations, tails))

    def _triple_indices(self, heads: Any, relations: Any, tails: Any
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Indices of the triples given by name or index (the checks of
        :meth:`predict_proba`)."""
        self._check_fitted()
        entities = np.asarray(self.entity_names_)
        parts = {"head": (heads, entities), "relation": (relations, np.asarray(
            self.relation_names_)), "tail": (tails, entities)}
        found = {what: self._lookup(v, names) for what, (v, names) in parts.items()}
        sizes = {what: f[0].size for what, f in found.items()}
        if len(set(sizes.values())) > 1:
            raise ValueError(f"heads, relations and tails must have the same length, got "
                             f"{sizes['head']}, {sizes['relation']} and {sizes['tail']}")
        bad = np.zeros(sizes["head"], dtype=bool)
        for idx, _, _ in found.values():
            bad |= idx < 0
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            triple = tuple(f[1][k] for f in found.values())
            what = next(w for w, f in found.items() if f[0][k] < 0)
            idx, given, integer = found[what]
            more = f"; {int(bad.sum())} bad triples in all" if bad.sum() > 1 else ""
            raise DataError(f"triple {k} {triple!r}: "
                            f"{self._unknown(what, given[k], integer, parts[what][1])}"
                            f"{more}")
        h, r, t = (f[0] for f in found.values())
        return h, r, t

    def _one_index(self, value: Any, names: np.ndarray, what: str) -> np.ndarray:
        """The index (shape (1,)) of exactly one entity or relation: an empty list or
        several values are a one-line ValueError (scoring takes one query)."""
        n = int(np.size(value)) if not isinstance(value, str | bytes) else 1
        if n != 1:
            raise ValueError(f"{what}: expected one name or index, got {n} values")
        return self._entity_index(value, names, what)

    def score_tails(self, head: Any, relation: Any) -> np.ndarray:
        """A score for every entity as the tail of (head, relation, ?): one head and one
        relation (a name or an index each; an empty or longer list is a ValueError)."""
        self._check_fitted()
        h = self._one_index(head, np.asarray(self.entity_names_), "head")
        r = self._one_index(relation, np.asarray(self.relation_names_), "relation")
        return self._scores(h, r, None, "tail")

    def score_heads(self, relation: Any, tail: Any) -> np.ndarray:
        """A score for every entity as the head of (?, relation, tail) (one relation and
        one tail, as :meth:`score_tails`)."""
        self._check_fitted()
        r = self._one_index(relation, np.asarray(self.relation_names_), "relation")
        t = self._one_index(tail, np.asarray(self.entity_names_), "tail")
        return self._scores(None, r, t, "head")

    def suggest_tails(self, head: Any, relation: Any, top: int = 10, *,
                      exclude: Any = None) -> pd.DataFrame:
        """The ``top`` entities most likely the tail of (head, relation, ?), best first.

        Returns a tidy DataFrame: rank (1 = best), entity (the model's index), name,
        score (that of :meth:`score_tails`) and, where the scores are the triples'
        probabilities (every BPBFM model: the :meth:`predict_proba` of the triple),
        probability.  Ranked by score, ties by entity index (a stable sort).

        ``head`` and ``relation`` are a name or an index each (an unknown name is a
        one-line DataError).  ``exclude``: known triples left out of the suggestions
        (the filtered setting), a :class:`~topiclink.data.tensor.RelationalTensor`
        (matched by name where it names its entities and relations) or ``(heads,
        relations, tails)`` arrays of names or indices; a triple naming an entity or
        relation the model does not have cannot be suggested and is ignored.  Default
        None: every entity is a candidate.
        """
        self._check_top(top, "suggest_tails")
        h = self._one_index(head, np.asarray(self.entity_names_), "head")
        r = self._one_index(relation, np.asarray(self.relation_names_), "relation")
        scores = self._scores(h, r, None, "tail")
        return self._suggestions(scores, int(h[0]), int(r[0]), "tail", top, exclude)

    def suggest_heads(self, relation: Any, tail: Any, top: int = 10, *,
                      exclude: Any = None) -> pd.DataFrame:
        """The ``top`` entities most likely the head of (?, relation, tail), best first:
        the table of :meth:`suggest_tails`, scored by :meth:`score_heads` (``exclude``
        leaves out the heads of its triples with this relation and tail)."""
        self._check_top(top, "suggest_heads")
        r = self._one_index(relation, np.asarray(self.relation_names_), "relation")
        t = self._one_index(tail, np.asarray(self.entity_names_), "tail")
        scores = self._scores(None, r, t, "head")
        return self._suggestions(scores, int(t[0]), int(r[0]), "head", top, exclude)

    def _check_top(self, top: Any, call: str) -> None:
        self._check_fitted()
        if isinstance(top, bool) or not isinstance(top, int | np.integer) or top < 1:
            raise ValueError(f"{call}: top must be an integer >= 1, got {top!r}")

    def _suggestions(self, scores: np.ndarray, given: int, r: int, axis: str, top: int,
                     exclude: Any) -> pd.DataFrame:
        """The table of :meth:`suggest_tails` (``axis="tail"``, ``given`` the head) or
        :meth:`suggest_heads` (``"head"``, ``given`` the tail) from the query's scores."""
        names = np.asarray(self.entity_names_)
        candidate = np.ones(names.size, dtype=bool)
        if exclude is not None:
            h, rel, t = self._known_triples(exclude, f"suggest_{axis}s")
            own, other = (h, t) if axis == "tail" else (t, h)
            candidate[other[(own == given) & (rel == r)]] = False
        pool = np.flatnonzero(candidate)
        chosen = pool[np.argsort(-scores[pool], kind="stable")[:int(top)]]
        table = {"rank": np.arange(1, chosen.size + 1, dtype=np.int64), "entity": chosen,
                 "name": names[chosen].astype(str).astype(object),
                 "score": scores[chosen]}
        if self._scores_are_probabilities:
            table["probability"] = scores[chosen]
        return pd.DataFrame(table)

    def _known_triples(self, exclude: Any, call: str
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``exclude`` of :meth:`suggest_tails` as the model's indices (triples the model
        cannot name dropped; an index out of range is a one-line DataError)."""
        from topiclink.data.tensor import RelationalTensor

        if isinstance(exclude, RelationalTensor):
            h, r, t = self.model_indices(exclude)
            keep = (h >= 0) & (r >= 0) & (t >= 0)
            return h[keep], r[keep], t[keep]
        if not isinstance(exclude, tuple | list) or len(exclude) != 3:
            raise TypeError(f"{call}: exclude must be a RelationalTensor or (heads, "
                            f"relations, tails) arrays, got {type(exclude).__name__}"
                            + ("" if not isinstance(exclude, np.ndarray) else
                               " (an (n, 3) array of triples: pass tuple(array.T))"))
        entities = np.asarray(self.entity_names_)
        parts = zip(("head", "relation", "tail"), exclude,
                    (entities, np.asarray(self.relation_names_), entities), strict=True)
        found = []
        for what, values, names in parts:
            idx, given, integer = self._lookup(values, names)
            if integer and (idx < 0).any():
                bad = given[int(np.flatnonzero(idx < 0)[0])]
                raise DataError(f"{call}: exclude: {self._unknown(what, bad, True, names)}")
            found.append(idx)
        if len({f.size for f in found}) > 1:
            raise ValueError(f"{call}: the heads, relations and tails of exclude must have "
                             f"the same length, got {', '.join(str(f.size) for f in found)}")
        keep = (found[0] >= 0) & (found[1] >= 0) & (found[2] >= 0)
        return found[0][keep], found[1][keep], found[2][keep]

    def model_indices(self, tensor: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The triples of ``tensor`` (its entries of value > 0) as the model's indices
        ``(heads, relations, tails)``, int64: entities and relations are matched by name
        where the tensor names them (else the tensor's indices are the model's); -1
        where the model has no such entity or relation."""
        self._check_fitted()
        keep = np.asarray(tensor.values) > 0
        out = []
        for idx, names, size, model_names in (
                (tensor.heads, tensor.entity_names, tensor.n_entities, self.entity_names_),
                (tensor.relations, tensor.relation_names, tensor.n_relations,
                 self.relation_names_),
                (tensor.tails, tensor.entity_names, tensor.n_entities, self.entity_names_)):
            model_names = np.asarray(model_names).astype(str)
            if names is None:
                mapping = np.arange(int(size), dtype=np.int64)
                mapping[mapping >= model_names.size] = -1
            else:
                lookup = {n: i for i, n in enumerate(model_names.tolist())}
                mapping = np.array([lookup.get(n, -1) for n in
                                    np.asarray(names).astype(str).tolist()], dtype=np.int64)
            out.append(mapping[np.asarray(idx, dtype=np.int64)[keep]])
        return out[0], out[1], out[2]

    def _queries(self, entities: Any, relations: Any, what: str
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Indices of a batch of (entity, relation) queries (names or indices; one-line
        errors as :meth:`predict_proba`'s)."""
        a = self._entity_index(entities, np.asarray(self.entity_names_), what)
        r = self._entity_index(relations, np.asarray(self.relation_names_), "relation")
        if a.size != r.size:
            raise ValueError(f"{what}s and relations must have the same length, got "
                             f"{a.size} and {r.size}")
        return a, r

    def score_tails_batch(self, heads: Any, relations: Any) -> np.ndarray:
        """Scores of every entity as the tail of each query ``(heads[i], relations[i],
        ?)``: an (n_queries, n_entities) array whose row i is ``score_tails(heads[i],
        relations[i])`` (up to rounding: a model may score a batch with one matrix
        product).  Heads and relations are names or indices, of the same length."""
        self._check_fitted()
        h, r = self._queries(heads, relations, "head")
        self._check_batch_memory("score_tails_batch", h.size)
        return self._score_rows(h, r, "tail")

    def score_heads_batch(self, relations: Any, tails: Any) -> np.ndarray:
        """Scores of every entity as the head of each query ``(?, relations[i],
        tails[i])``: (n_queries, n_entities), row i as ``score_heads(relations[i],
        tails[i])`` (see :meth:`score_tails_batch`)."""
        self._check_fitted()
        t, r = self._queries(tails, relations, "tail")
        self._check_batch_memory("score_heads_batch", t.size)
        return self._score_rows(t, r, "head")

    def _check_batch_memory(self, call: str, n: int) -> None:
        """Refuse (one-line DataError naming ``call`` and the sizes) a batch whose scores
        do not fit in memory: two (n, n_entities) float arrays and the queries' (K, K)
        relation matrices."""
        N, K = np.shape(self.embedding_)[0], np.shape(self.embedding_)[-1]
        check_memory(16.0 * n * N + 8.0 * n * K * K, f"{call}: {n} queries x {N} entities",
                     "score fewer queries at a time")

    def _score_rows(self, a: np.ndarray, r: np.ndarray, axis: str) -> np.ndarray:
        """Hook: the (n, n_entities) scores of the queries (entity ``a[i]``, relation
        ``r[i]``), ``a`` the head (``axis="tail"``) or the tail (``"head"``).  Default: one
        :meth:`_scores` call per query."""
        out = np.empty((a.size, np.asarray(self.entity_names_).size))
        for i in range(a.size):
            one, rel = a[i:i + 1], r[i:i + 1]
            out[i] = (self._scores(one, rel, None, "tail") if axis == "tail"
                      else self._scores(None, rel, one, "head"))
        return out
