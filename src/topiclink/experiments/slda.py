"""The gSLDA / Gibbs MedLDA protocol (Zhu et al. 2013, 2014) as a function.

Binary task: 20 Newsgroups alt.atheism vs talk.religion.misc (bydate split); multiclass:
all 20 groups.  For every K, c and run: fit on the training split, predict the test split,
report accuracy, training time, time per iteration and test time.  Baselines in the same
run: LDA + a linear SVM on the topic proportions ("gLDA+SVM"), tomotopy's SLDAModel
with a binary response where tomotopy is installed, and variational logistic sLDA
("vSLDA", :class:`~topiclink.models.var_slda.VariationalSLDA`, binary task only) for the
paper's claim that the Gibbs samplers train an order of magnitude faster than
variational sLDA.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from topiclink.data.corpus import Corpus
from topiclink.datasets.base import Dataset
from topiclink.models.lda import LDA
from topiclink.models.slda import SupervisedTopicModel
from topiclink.models.var_slda import VariationalSLDA

__all__ = ["SLDATask", "C_MODELS", "MODEL_NAMES", "prepare_task", "run_slda_experiment"]

logger = logging.getLogger(__name__)

MODEL_NAMES = ("gSLDA", "gMedLDA", "LDA+SVM", "tomotopy-SLDA", "vSLDA")
#: models with a regularisation constant c (one row per value of ``c_values``)
C_MODELS = ("gSLDA", "gMedLDA", "vSLDA")
BINARY_GROUPS = ("alt.atheism", "talk.religion.misc")


@dataclass
class SLDATask:
    """Train and test documents with labels (vocabulary restricted to training words)."""

    name: str
    train: Corpus
    y_train: np.ndarray
    test: Corpus
    y_test: np.ndarray
    label_names: np.ndarray


def _restrict_vocabulary(train: Corpus, test: Corpus) -> tuple[Corpus, Corpus]:
    """Keep the words that occur in the training documents (others cannot be learned)."""
    used = np.flatnonzero(np.asarray(train.counts.sum(axis=0)).ravel() > 0)
    def cut(c: Corpus) -> Corpus:
        return Corpus(c.counts[:, used], vocabulary=c.vocabulary[used], doc_ids=c.doc_ids,
                      titles=c.titles, metadata=c.metadata, name=c.name)
    return cut(train), cut(test)


def prepare_task(ds: Dataset, task: str = "binary", test_size: float = 0.2,
                 random_state: int = 0) -> SLDATask:
    """The binary or multiclass task of a labelled dataset.

    20 Newsgroups: its bydate test split; binary = alt.atheism vs talk.religion.misc.
    A dataset without a test split (e.g. Poliblog) is split at random (``test_size``).
    Empty documents (after restricting the vocabulary) are dropped with a logged count.
    """
    if ds.corpus is None or ds.labels is None:
        raise ValueError(f"dataset {ds.name!r} has no labelled documents")
    names = np.asarray(ds.label_names) if ds.label_names is not None else \
        np.unique(ds.labels).astype(str)
    if ds.test is not None and ds.test.corpus is not None:
        train, y_train = ds.corpus, np.asarray(ds.labels)
        test, y_test = ds.test.corpus, np.asarray(ds.test.labels)
    else:
        rng = np.random.default_rng(random_state)
        order = rng.permutation(ds.corpus.n_docs)
        n_test = int(np.ceil(test_size * ds.corpus.n_docs))
        te, tr = np.sort(order[:n_test]), np.sort(order[n_test:])
        train, y_train = ds.corpus.subset(tr), np.asarray(ds.labels)[tr]
        test, y_test = ds.corpus.subset(te), np.asarray(ds.labels)[te]
    if task == "binary":
        if names.size > 2:
            wanted = [int(np.flatnonzero(names == g)[0]) for g in BINARY_GROUPS
                      if g in names]
            if len(wanted) != 2:
                raise ValueError(f"binary task needs the groups {BINARY_GROUPS}")
            keep_tr, keep_te = np.isin(y_train, wanted), np.isin(y_test, wanted)
            train, y_train = train.subset(np.flatnonzero(keep_tr)), y_train[keep_tr]
            test, y_test = test.subset(np.flatnonzero(keep_te)), y_test[keep_te]
            y_train = (y_train == wanted[1]).astype(int)
            y_test = (y_test == wanted[1]).astype(int)
            names = np.asarray(BINARY_GROUPS)
    elif task != "multiclass":
        raise ValueError(f"task must be 'binary' or 'multiclass', got {task!r}")
    train, test = _restrict_vocabulary(train, test)
    for part in ("train", "test"):
        corpus = train if part == "train" else test
        keep = corpus.doc_lengths > 0
        if not keep.all():
            logger.info("%s: dropped %d documents without training words", part,
                        int((~keep).sum()))
            if part == "train":
                train, y_train = train.subset(np.flatnonzero(keep)), y_train[keep]
            else:
                test, y_test = test.subset(np.flatnonzero(keep)), y_test[keep]
    return SLDATask(f"{ds.name}-{task}", train, y_train, test, y_test, names)


def _tomotopy_slda(task: SLDATask, K: int, n_iter: int, alpha: float, beta: float,
                   seed: int) -> tuple[np.ndarray, float, float]:
    import tomotopy as tp

    vocab = task.train.vocabulary

    def words(corpus: Corpus, d: int) -> list[str]:
        row = corpus.counts[d]
        return np.repeat(vocab[row.indices], row.data).tolist()

    model = tp.SLDAModel(k=K, vars=["b"], alpha=alpha, eta=beta, seed=seed)
    for d in range(task.train.n_docs):
        model.add_doc(words(task.train, d), y=[float(task.y_train[d])])
    t0 = time.perf_counter()
    model.train(n_iter, workers=1)
    train_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    docs = [model.make_doc(words(task.test, d)) for d in range(task.test.n_docs)]
    model.infer(docs, workers=1)
    scores = np.asarray([model.estimate(doc)[0] for doc in docs])
    return (scores > 0.5).astype(int), train_s, time.perf_counter() - t0


def _fit_one(task: SLDATask, name: str, K: int, c: float, run: int, max_iter: int,
             alpha: float, beta: float, n_jobs: int, random_state: int
             ) -> dict[str, Any] | None:
    """Fit one configuration on the training split and score it on the test split (one row
    of :func:`run_slda_experiment`; ``None`` where the model cannot run on this task)."""
    from sklearn.svm import LinearSVC

    n_classes = np.unique(task.y_train).size
    seed = random_state + 1000 * run + int(K)
    t0 = time.perf_counter()
    n_iter = max_iter
    if name in ("gSLDA", "gMedLDA", "vSLDA"):
        model: SupervisedTopicModel | VariationalSLDA
        if name == "vSLDA":
            model = VariationalSLDA(n_topics=int(K), c=float(c), doc_topic_prior=alpha,
                                    topic_word_prior=beta, max_iter=max_iter,
                                    random_state=seed)
        else:
            model = SupervisedTopicModel(
                n_topics=int(K), loss="logistic" if name == "gSLDA" else "hinge",
                c=float(c), doc_topic_prior=alpha, topic_word_prior=beta,
                max_iter=max_iter, evaluate_every=0, n_jobs=n_jobs, random_state=seed)
        model.fit(task.train, task.y_train)
        train_s = time.perf_counter() - t0
        n_iter = model.n_iter_
        t1 = time.perf_counter()
        pred = model.predict(task.test)
        test_s = time.perf_counter() - t1
    elif name == "LDA+SVM":
        lda = LDA(n_topics=int(K), doc_topic_prior=alpha, topic_word_prior=beta,
                  max_iter=max_iter, evaluate_every=0, random_state=seed)
        lda.fit(task.train)
        n_iter = lda.n_iter_
        svm = LinearSVC(C=1.0).fit(lda.doc_topic_, task.y_train)
        train_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        pred = svm.predict(lda.transform(task.test))
        test_s = time.perf_counter() - t1
    else:
        if n_classes != 2:
            return None
        try:
            pred, train_s, test_s = _tomotopy_slda(task, int(K), max_iter, alpha, beta, seed)
        except ImportError:
            logger.warning("tomotopy is not installed; skipping its SLDA")
            return None
    row = {"model": name, "K": int(K), "c": float(c), "run": run,
           "accuracy": float(np.mean(pred == task.y_test)),
           "train_seconds": train_s, "n_iter": int(n_iter),
           "seconds_per_iteration": train_s / max(int(n_iter), 1),
           "test_seconds": test_s, "n_train": task.train.n_docs, "n_test": task.test.n_docs}
    logger.info("%s K=%d c=%g run %d: accuracy %.3f, %.1f s", name, K, c, run,
                row["accuracy"], train_s)
    return row


def run_slda_experiment(task: SLDATask, models: Sequence[str],
                        topics: Iterable[int] = (5, 10, 15, 20, 25, 30),
                        c_values: Iterable[float] = (1.0, 25.0), n_runs: int = 1,
                        max_iter: int = 200, alpha: float = 0.1, beta: float = 0.01,
                        n_jobs: int = 1, random_state: int = 0,
                        on_row: Callable[[dict[str, Any]], None] | None = None,
                        workers: int = 1) -> pd.DataFrame:
    """One row per (model, K, c, run): accuracy, train/test seconds, iterations run
    (``n_iter``) and seconds per iteration.

    ``max_iter`` is the number of Gibbs iterations (gSLDA, gMedLDA, LDA, tomotopy) and the
    cap on vSLDA's EM iterations, which stop earlier on the relative tolerance of
    :class:`VariationalSLDA` (default 1e-4).  ``seconds_per_iteration`` is
    ``train_seconds / n_iter`` (for LDA+SVM it includes the SVM).  vSLDA is binary only:
    on a multiclass task it is skipped with a warning.

    ``n_jobs`` is the number of processes of one multiclass fit (one-vs-all classes);
    ``workers`` runs that many configurations at once in separate processes (each
    configuration's seed depends only on K and the run, so the rows are the same for any
    ``workers``; only the timings feel the shared machine).  Rows come back in the order of
    the sequential loop.
    """
    for name in models:
        if name not in MODEL_NAMES:
            raise ValueError(f"unknown model {name!r}; known: {', '.join(MODEL_NAMES)}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    n_classes = np.unique(task.y_train).size
    if "vSLDA" in models and n_classes != 2:
        logger.warning("vSLDA is binary only; skipping it on this %d-class task", n_classes)
        models = [m for m in models if m != "vSLDA"]
    c_values = [float(c) for c in c_values]
    configs = [(name, int(K), c, run) for run in range(n_runs) for K in topics
               for name in models
               for c in (c_values if name in C_MODELS else (float("nan"),))]
    fixed = dict(max_iter=max_iter, alpha=alpha, beta=beta, n_jobs=n_jobs,
                 random_state=random_state)
    if workers == 1:
        results = (_fit_one(task, *cfg, **fixed) for cfg in configs)
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=workers, return_as="generator")(
            delayed(_fit_one)(task, *cfg, **fixed) for cfg in configs)
    rows: list[dict[str, Any]] = []
    for row in results:
        if row is None:
            continue
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return pd.DataFrame(rows)
